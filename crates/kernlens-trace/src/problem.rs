//! The problems a read meets and recovers from, and their `stream_errors` texts
//! (trace.md "Element loop"; the messages are part of the contract).

/// A structural problem met while reading the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    ArrayNotFound,
    PrefixExceeds(usize),
    OpenerNotFound,
    NotAnArray,
    Unterminated,
    NotAnObject,
    Truncated,
    Exceeds(usize),
    Malformed(String),
    Input {
        kind: &'static str,
        detail: String,
    },
    /// A top-level `kernlens` member that is not a well-formed chunk provenance.
    Provenance(String),
}

impl Problem {
    /// The `stream_errors` text; `n` is the number of events yielded before it.
    pub(crate) fn message(&self, n: u64) -> String {
        match self {
            Problem::ArrayNotFound => "traceEvents array not found".into(),
            Problem::PrefixExceeds(max) => format!("traceEvents prefix exceeds {max} characters"),
            Problem::OpenerNotFound => "traceEvents array opener not found".into(),
            Problem::NotAnArray => "traceEvents value is not an array".into(),
            Problem::Unterminated => format!("traceEvents array unterminated after {n} event(s)"),
            Problem::NotAnObject => {
                format!("traceEvents element malformed after {n} event(s): expected an object")
            }
            Problem::Truncated => {
                format!("traceEvents object truncated after {n} event(s): unterminated object")
            }
            Problem::Exceeds(max) => {
                format!("traceEvents object exceeds {max} characters after {n} event(s)")
            }
            Problem::Malformed(detail) => {
                format!("traceEvents object malformed after {n} event(s): {detail}")
            }
            Problem::Input { kind, detail } => format!("trace input error: {kind}: {detail}"),
            Problem::Provenance(why) => {
                format!("kernlens member ignored (not a split chunk's provenance): {why}")
            }
        }
    }
}

/// The kept `stream_errors`: at most [`ErrorLog::CAP`] entries, the last one summarising the rest.
#[derive(Debug, Default)]
pub(crate) struct ErrorLog {
    messages: Vec<String>,
    total: u64,
    /// A `trace input error` was recorded (reading failed, so a missing array may be the
    /// damage rather than the content).
    input: bool,
}

impl ErrorLog {
    pub(crate) const CAP: usize = 1000;

    pub(crate) fn push(&mut self, problem: &Problem, n: u64) {
        self.total += 1;
        self.input |= matches!(problem, Problem::Input { .. });
        if self.messages.len() < Self::CAP {
            self.messages.push(problem.message(n));
        }
    }

    /// Whether a `trace input error` was recorded.
    pub(crate) fn has_input_problem(&self) -> bool {
        self.input
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        if self.total > Self::CAP as u64 {
            self.messages.truncate(Self::CAP - 1);
            let omitted = self.total - (Self::CAP as u64 - 1);
            self.messages
                .push(format!("{omitted} further stream errors omitted"));
        }
        self.messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_log_caps_at_a_thousand() {
        let mut log = ErrorLog::default();
        for _ in 0..1500 {
            log.push(&Problem::NotAnObject, 0);
        }
        let m = log.finish();
        assert_eq!(m.len(), 1000);
        assert_eq!(m[999], "501 further stream errors omitted");
    }
}
