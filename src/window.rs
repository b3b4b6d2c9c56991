//! Window specs as the CLI's `--window` and the Python package's `window=` take them
//! (summary, triage, split, diff, report): `none`, the steady modes, an absolute
//! `START_US:END_US` (trace timestamps, µs) or a relative `+START:+END` (offsets from the
//! trace's first event: µs by default, or with an `us`, `ms` or `s` suffix). Every bad value,
//! a reversed window and a length past i64 ns are refused with a message that speaks µs
//! (the CLI's usage errors, exit 2).

use kernlens_trace::{StepSource, TimeWindow, WindowMode};

const CHOICES: &str = "use auto, none, annotation, cpu-steps, START_US:END_US or +START:+END \
                       (offsets from the trace's first event; us, ms or s suffix)";

/// Maps a `--window` value onto the library's window mode.
pub fn window_mode(spec: &str) -> Result<WindowMode, String> {
    Ok(match spec {
        "none" => WindowMode::Full,
        "auto" => WindowMode::steady(StepSource::Auto),
        "annotation" => WindowMode::steady(StepSource::Annotation),
        "cpu-steps" => WindowMode::steady(StepSource::CpuSteps),
        range if range.trim_start().starts_with('+') => WindowMode::Relative(relative(range)?),
        range => WindowMode::Explicit(absolute(range)?),
    })
}

fn absolute(range: &str) -> Result<TimeWindow, String> {
    let window = TimeWindow::parse_us(range).map_err(|e| {
        // The reader's reversed-window error speaks ns; the flag takes µs.
        match range.split_once(':') {
            Some((a, b)) if TimeWindow::parse_us(&format!("{b}:{a}")).is_ok() => {
                reversed(range, a.trim(), b.trim(), "us")
            }
            _ => format!("{e}; {CHOICES}"),
        }
    })?;
    // A length past i64 ns (about 292 years) would wrap in the window arithmetic.
    if window.end_ns().checked_sub(window.start_ns()).is_none() {
        return Err(format!(
            "the window '{range}' is longer than 9223372036854775807 ns; \
             give START_US:END_US within the trace"
        ));
    }
    Ok(window)
}

fn reversed(range: &str, start: &str, end: &str, unit: &str) -> String {
    format!(
        "the window '{range}' ends before it starts ({end} {unit} < {start} {unit}); \
         give START:END with START <= END"
    )
}

fn relative(range: &str) -> Result<TimeWindow, String> {
    let bad = |why: &str| format!("invalid relative window '{range}': {why}; {CHOICES}");
    let (a, b) = range
        .split_once(':')
        .ok_or_else(|| bad("no ':' between START and END"))?;
    let offset = |side: &str| -> Result<i64, String> {
        let side = side.trim();
        let text = side
            .strip_prefix('+')
            .ok_or_else(|| bad("both ends are offsets, each starting with '+'"))?;
        offset_ns(text).ok_or_else(|| bad(&format!("'{side}' is not a time offset")))
    };
    let (start, end) = (offset(a)?, offset(b)?);
    if end < start {
        return Err(reversed(range, a.trim(), b.trim(), "from the start"));
    }
    TimeWindow::new(start, end).map_err(|e| bad(&e.to_string()))
}

/// A non-negative decimal with an optional unit (`us` the default, `ms`, `s`) as whole ns;
/// digits below a ns are dropped. `None` for anything else or past i64 ns.
fn offset_ns(text: &str) -> Option<i64> {
    let (number, unit_ns): (&str, i128) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1_000_000)
    } else if let Some(n) = text.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        (text, 1_000)
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        || whole.len() + fraction.len() > 30
    {
        return None;
    }
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = 10i128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    i64::try_from(digits.checked_mul(unit_ns)? / scale).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ns(spec: &str) -> (i64, i64) {
        match window_mode(spec) {
            Ok(WindowMode::Relative(w)) => (w.start_ns(), w.end_ns()),
            other => panic!("{spec}: {other:?}"),
        }
    }

    #[test]
    fn relative_offsets_take_us_by_default_and_ms_or_s_suffixes() {
        assert_eq!(ns("+1000:+5000"), (1_000_000, 5_000_000));
        assert_eq!(ns("+1ms:+5ms"), (1_000_000, 5_000_000));
        assert_eq!(ns("+0.001s:+0.005s"), (1_000_000, 5_000_000));
        assert_eq!(ns("+1000us:+0.005s"), (1_000_000, 5_000_000));
        assert_eq!(ns("+0.0015:+2.5"), (1, 2_500));
    }

    #[test]
    fn bad_relative_and_reversed_windows_are_refused_in_us() {
        for spec in [
            "+1:5",
            "+x:+2",
            "+-1:+2",
            "+:+2",
            "+1e3:+2",
            "+99999999999999999s:+1",
        ] {
            assert!(window_mode(spec).is_err(), "{spec}");
        }
        let reversed = window_mode("5000:1000").unwrap_err();
        assert!(reversed.contains("1000 us < 5000 us"), "{reversed}");
        assert!(!reversed.contains("ns"), "{reversed}");
        let reversed = window_mode("+5ms:+1ms").unwrap_err();
        assert!(reversed.contains("ends before it starts"), "{reversed}");
    }
}
