//! The outcome of a gate.

use serde::Serialize;

use crate::warning::{Warning, WarningCode};

/// Whether hot kernels may go on to kernel rewriting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Hot kernels are kept.
    Pass,
    /// No hot kernel may be routed to rewriting; the warnings say why.
    Suppress,
}

impl Decision {
    /// `"pass"` or `"suppress"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Suppress => "suppress",
        }
    }
}

/// A decision with the warnings that explain it, in the order of gate.md "Combined evaluation".
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Verdict {
    /// Pass or suppress.
    pub decision: Decision,
    /// Why, in order.
    pub warnings: Vec<Warning>,
}

impl Verdict {
    pub(crate) fn pass() -> Self {
        Verdict {
            decision: Decision::Pass,
            warnings: Vec::new(),
        }
    }

    pub(crate) fn new(decision: Decision, warnings: Vec<Warning>) -> Self {
        Verdict { decision, warnings }
    }

    /// True when hot kernels must be held back.
    pub fn suppressed(&self) -> bool {
        self.decision == Decision::Suppress
    }

    /// The warning codes, in order.
    pub fn codes(&self) -> Vec<WarningCode> {
        self.warnings.iter().map(|warning| warning.code).collect()
    }

    /// The first warning with `code`, if any.
    pub fn warning(&self, code: WarningCode) -> Option<&Warning> {
        self.warnings.iter().find(|warning| warning.code == code)
    }
}
