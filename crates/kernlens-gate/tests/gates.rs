//! Thresholds, warnings, the idle gate with its graph guard, the low-compute
//! gate and their combination (gate.md, "Thresholds" to "Warnings" and "JSON shapes"; scenarios 1–14).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;

use kernlens_gate::{
    CoverageFacts, Decision, GateError, GateInputs, GateReport, Severity, ThresholdProblem,
    Thresholds, Verdict, WarningCode, compute_gate, evaluate, idle_gate, parse_pct, pct_from_cell,
};
use serde_json::{Value, json};

/// A probe that counts its calls and answers `answer`.
struct CountingProbe {
    calls: Cell<u32>,
    answer: Result<CoverageFacts, GateError>,
}

impl CountingProbe {
    fn new(answer: Result<CoverageFacts, GateError>) -> Self {
        CountingProbe {
            calls: Cell::new(0),
            answer,
        }
    }

    fn probe(&self) -> impl FnOnce() -> Result<CoverageFacts, GateError> + '_ {
        || {
            self.calls.set(self.calls.get() + 1);
            self.answer.clone()
        }
    }
}

fn under_recorded() -> CoverageFacts {
    CoverageFacts::new(8, 1, Some(0.125), 12, true)
}

fn fully_recorded() -> CoverageFacts {
    CoverageFacts::new(4, 4, Some(1.0), 16, false)
}

fn no_graphs() -> CoverageFacts {
    CoverageFacts::new(0, 0, None, 0, false)
}

fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    }
}

fn num(value: &Value) -> f64 {
    value.as_f64().unwrap()
}

// --- gate.md "Thresholds" thresholds (scenarios 1, 2) ---

#[test]
fn idle_threshold_env_values_parse_or_fall_back_to_80() {
    let idle = |raw: Option<&str>| Thresholds::from_env_values(raw, None).idle_pct;
    assert_eq!(idle(None), 80.0);
    assert_eq!(idle(Some("42.5")), 42.5);
    assert_eq!(idle(Some(" 35.5 ")), 35.5);
    assert_eq!(idle(Some("0")), 0.0);
    assert_eq!(idle(Some("100")), 100.0);
    for bad in [
        "not-a-number",
        "-5",
        "",
        "inf",
        "-inf",
        "NaN",
        "   ",
        "150",
        "100.001",
        "30%",
        "abc",
    ] {
        assert_eq!(idle(Some(bad)), 80.0, "value {bad:?}");
    }
}

#[test]
fn min_compute_env_values_parse_or_fall_back_to_10() {
    let min = |raw: Option<&str>| Thresholds::from_env_values(None, raw).min_compute_pct;
    assert_eq!(min(None), 10.0);
    assert_eq!(min(Some("20")), 20.0);
    assert_eq!(min(Some("0")), 0.0);
    assert_eq!(min(Some("nope")), 10.0);
    assert_eq!(min(Some("-1")), 10.0);
    assert_eq!(min(Some("101")), 10.0);
}

#[test]
fn checked_lookup_names_each_unusable_variable_and_the_default_used() {
    let pairs = [
        ("KERNLENS_IDLE_THRESHOLD_PCT", "150"),
        ("KERNLENS_MIN_COMPUTE_PCT", "30%"),
    ];
    let (thresholds, fallbacks) = Thresholds::from_lookup_checked(lookup(&pairs));
    assert_eq!(thresholds, Thresholds::default());
    let lines: Vec<String> = fallbacks.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "KERNLENS_IDLE_THRESHOLD_PCT=\"150\" ignored (150 is outside 0..=100); using the default 80",
            "KERNLENS_MIN_COMPUTE_PCT=\"30%\" ignored (not a number); using the default 10",
        ]
    );
    assert_eq!(fallbacks[0].problem, ThresholdProblem::OutOfRange(150.0));
}

#[test]
fn checked_lookup_is_silent_for_unset_blank_and_valid_values() {
    let pairs = [
        ("KERNLENS_IDLE_THRESHOLD_PCT", "  "),
        ("KERNLENS_MIN_COMPUTE_PCT", "100"),
    ];
    let (thresholds, fallbacks) = Thresholds::from_lookup_checked(lookup(&pairs));
    assert!(fallbacks.is_empty(), "{fallbacks:?}");
    assert_eq!(
        (thresholds.idle_pct, thresholds.min_compute_pct),
        (80.0, 100.0)
    );
    assert!(Thresholds::from_lookup_checked(|_| None).1.is_empty());
}

#[test]
fn parse_pct_accepts_exactly_the_finite_numbers_from_0_to_100() {
    assert_eq!(parse_pct(" 0 "), Ok(0.0));
    assert_eq!(parse_pct("100"), Ok(100.0));
    assert_eq!(parse_pct("1e1"), Ok(10.0));
    assert_eq!(parse_pct("-0.5"), Err(ThresholdProblem::OutOfRange(-0.5)));
    assert_eq!(parse_pct("150"), Err(ThresholdProblem::OutOfRange(150.0)));
    for bad in ["abc", "30%", "", "inf", "NaN", "1,5"] {
        assert_eq!(parse_pct(bad), Err(ThresholdProblem::NotANumber), "{bad:?}");
    }
}

#[test]
fn lookup_reads_the_kernlens_variables_at_call_time() {
    let pairs = [
        ("KERNLENS_IDLE_THRESHOLD_PCT", "99.99"),
        ("KERNLENS_MIN_COMPUTE_PCT", " 0 "),
    ];
    let thresholds = Thresholds::from_lookup(lookup(&pairs));
    assert_eq!(thresholds.idle_pct, 99.99);
    assert_eq!(thresholds.min_compute_pct, 0.0);
    assert_eq!(Thresholds::from_lookup(|_| None), Thresholds::default());
}

#[test]
fn thresholds_new_applies_the_env_validation() {
    assert_eq!(Thresholds::new(-1.0, f64::NAN), Thresholds::default());
    assert_eq!(Thresholds::new(f64::INFINITY, 5.0).idle_pct, 80.0);
    assert_eq!(Thresholds::new(150.0, 100.5), Thresholds::default());
    let custom = Thresholds::new(70.0, 0.0);
    assert_eq!((custom.idle_pct, custom.min_compute_pct), (70.0, 0.0));
}

// --- gate.md "Warnings" warnings (scenarios 3, 4) ---

#[test]
fn high_idle_warning_formats_two_decimals_and_keeps_raw_fields() {
    let verdict = idle_gate(Some(91.234), 80.0, || Ok(fully_recorded()));
    let warning = verdict.warning(WarningCode::HighGpuIdlePct).unwrap();
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.message.contains("GPU was idle 91.23%"),
        "{}",
        warning.message
    );
    assert!(warning.message.contains("80.00%"));
    assert!(warning.message.contains("parameter optimization"));
    assert_eq!(num(warning.field("idle_pct").unwrap()), 91.234);
    assert_eq!(num(warning.field("threshold_pct").unwrap()), 80.0);
    assert!(warning.field("source").is_none(), "no source was given");

    let verdict = idle_gate(Some(42.567), 20.0, || Ok(no_graphs()));
    let message = &verdict.warnings[0].message;
    assert!(
        message.contains("42.57%") && message.contains("20.00%"),
        "{message}"
    );
}

#[test]
fn low_compute_warning_names_exposed_communication_when_known() {
    let verdict = compute_gate(Some(3.994), Some(95.991), 10.0);
    let warning = verdict.warning(WarningCode::LowGpuComputePct).unwrap();
    assert!(
        warning
            .message
            .contains("Only 3.99% of trace wall time is compute")
    );
    assert!(warning.message.contains("95.99%"));
    assert!(warning.message.contains("spin-waiting collective"));
    assert_eq!(num(warning.field("exposed_comm_pct").unwrap()), 95.991);
    assert_eq!(num(warning.field("compute_pct").unwrap()), 3.994);
    assert_eq!(num(warning.field("threshold_pct").unwrap()), 10.0);

    let verdict = compute_gate(Some(3.994), None, 10.0);
    let warning = verdict.warning(WarningCode::LowGpuComputePct).unwrap();
    assert!(warning.field("exposed_comm_pct").is_none());
    assert!(!warning.message.contains("Exposed communication"));
    assert!(warning.message.contains("spin-waiting collective"));
}

#[test]
fn warnings_name_their_source_only_when_given() {
    let inputs = GateInputs::new(Some(95.0), Some(1.0), None).with_source("run/trace.json.gz");
    let verdict = evaluate(&inputs, &Thresholds::default(), || Ok(no_graphs()));
    for code in [WarningCode::HighGpuIdlePct, WarningCode::LowGpuComputePct] {
        let warning = verdict.warning(code).unwrap();
        assert_eq!(warning.field("source"), Some(&json!("run/trace.json.gz")));
    }
}

// --- gate.md "High-idle gate with graph guard" idle gate (scenarios 5–9) ---

#[test]
fn idle_at_or_below_threshold_or_unknown_passes_without_probing() {
    for idle in [Some(10.0), Some(80.0), None, Some(f64::NAN)] {
        let probe = CountingProbe::new(Ok(under_recorded()));
        let verdict = idle_gate(idle, 80.0, probe.probe());
        assert_eq!(verdict.decision, Decision::Pass, "idle {idle:?}");
        assert!(verdict.warnings.is_empty());
        assert_eq!(probe.calls.get(), 0, "idle {idle:?} must not probe");
    }
}

#[test]
fn under_recorded_graph_trace_passes_with_one_warning() {
    let probe = CountingProbe::new(Ok(under_recorded()));
    let verdict = idle_gate(Some(95.0), 80.0, probe.probe());
    assert_eq!(probe.calls.get(), 1);
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.codes(), [WarningCode::GraphUnderRecorded]);
    let warning = &verdict.warnings[0];
    assert_eq!(warning.field("launches"), Some(&json!(8)));
    assert_eq!(warning.field("launches_with_kernels"), Some(&json!(1)));
    assert_eq!(warning.field("coverage"), Some(&json!(0.125)));
    assert_eq!(warning.field("idle_pct"), Some(&json!(95.0)));
    assert_eq!(warning.field("threshold_pct"), Some(&json!(80.0)));
    assert!(warning.message.contains("1 of 8"), "{}", warning.message);
    assert!(warning.message.contains("95.00%"));
    assert!(warning.message.contains("unreliable"));
    assert!(warning.message.contains("coverage 0.12") || warning.message.contains("coverage 0.13"));
}

#[test]
fn high_idle_without_graph_launches_suppresses() {
    let probe = CountingProbe::new(Ok(no_graphs()));
    let verdict = idle_gate(Some(95.0), 80.0, probe.probe());
    assert_eq!(probe.calls.get(), 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::HighGpuIdlePct]);
}

#[test]
fn fully_recorded_idle_graph_trace_still_suppresses() {
    let probe = CountingProbe::new(Ok(fully_recorded()));
    let verdict = idle_gate(Some(95.0), 80.0, probe.probe());
    assert_eq!(probe.calls.get(), 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::HighGpuIdlePct]);
}

#[test]
fn probe_failure_fails_open_to_the_plain_gate_with_a_diagnostic() {
    let probe = CountingProbe::new(Err(GateError::ProbeFailed {
        reason: "no usable trace file at /nowhere/t.json".to_owned(),
    }));
    let verdict = idle_gate(Some(95.0), 80.0, probe.probe());
    assert_eq!(probe.calls.get(), 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::GraphProbeFailed]
    );
    let diagnostic = &verdict.warnings[1];
    assert_eq!(diagnostic.severity, Severity::Info);
    assert_eq!(
        diagnostic.field("reason"),
        Some(&json!("no usable trace file at /nowhere/t.json"))
    );
    assert!(diagnostic.message.starts_with(
        "graph coverage probe failed (no usable trace file at /nowhere/t.json); the plain idle gate was applied"
    ));
}

#[test]
fn split_chunk_refusal_fails_open_with_its_reason() {
    let verdict = idle_gate(Some(99.0), 80.0, || {
        Err(GateError::SplitChunk {
            path: "chunk.json".to_owned(),
        })
    });
    assert_eq!(verdict.decision, Decision::Suppress);
    let reason = verdict.warnings[1]
        .field("reason")
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        reason.contains("chunk.json") && reason.contains("split chunk"),
        "{reason}"
    );
}

#[test]
fn zero_idle_threshold_gates_any_idle_above_zero() {
    assert_eq!(
        idle_gate(Some(0.0), 0.0, || Ok(no_graphs())).decision,
        Decision::Pass
    );
    assert_eq!(
        idle_gate(Some(0.001), 0.0, || Ok(no_graphs())).decision,
        Decision::Suppress
    );
}

// --- gate.md "Low-compute gate" low-compute gate (scenario 11) ---

#[test]
fn low_compute_gate_is_strict_and_passes_unknown_compute() {
    assert_eq!(
        compute_gate(Some(3.99), Some(95.99), 10.0).decision,
        Decision::Suppress
    );
    assert_eq!(
        compute_gate(Some(99.3), None, 10.0).decision,
        Decision::Pass
    );
    assert_eq!(
        compute_gate(None, Some(50.0), 10.0).decision,
        Decision::Pass
    );
    assert_eq!(
        compute_gate(Some(f64::NAN), None, 10.0).decision,
        Decision::Pass
    );
    let at_threshold = compute_gate(Some(10.0), None, 10.0);
    assert_eq!(at_threshold.decision, Decision::Pass);
    assert!(at_threshold.warnings.is_empty());
    assert_eq!(compute_gate(Some(0.0), None, 0.0).decision, Decision::Pass);
}

#[test]
fn report_cells_map_unreadable_values_to_none_never_zero() {
    assert_eq!(pct_from_cell(Some("3.99%")), Some(3.99));
    assert_eq!(pct_from_cell(Some(" 12.5 ")), Some(12.5));
    assert_eq!(pct_from_cell(Some("0")), Some(0.0));
    for cell in [
        None,
        Some(""),
        Some("  "),
        Some("%"),
        Some("n/a"),
        Some("inf"),
        Some("1.2.3"),
    ] {
        assert_eq!(pct_from_cell(cell), None, "cell {cell:?}");
    }
}

// --- gate.md "Combined evaluation" combination (scenarios 12–14) ---

fn evaluate_counting(
    idle: Option<f64>,
    compute: Option<f64>,
    answer: Result<CoverageFacts, GateError>,
) -> (Verdict, u32) {
    let probe = CountingProbe::new(answer);
    let inputs = GateInputs::new(idle, compute, Some(95.99));
    let verdict = evaluate(&inputs, &Thresholds::default(), probe.probe());
    (verdict, probe.calls.get())
}

#[test]
fn under_recorded_skips_the_low_compute_gate() {
    let (verdict, calls) = evaluate_counting(Some(95.0), Some(3.99), Ok(under_recorded()));
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.codes(), [WarningCode::GraphUnderRecorded]);
}

#[test]
fn both_gates_fire_together_in_order() {
    let (verdict, _) = evaluate_counting(Some(95.0), Some(3.99), Ok(fully_recorded()));
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::LowGpuComputePct]
    );
}

#[test]
fn probe_failure_diagnostic_sits_between_idle_and_compute_warnings() {
    let failure = Err(GateError::ProbeFailed {
        reason: "boom".to_owned(),
    });
    let (verdict, _) = evaluate_counting(Some(95.0), Some(3.99), failure);
    assert_eq!(
        verdict.codes(),
        [
            WarningCode::HighGpuIdlePct,
            WarningCode::GraphProbeFailed,
            WarningCode::LowGpuComputePct
        ]
    );
}

#[test]
fn low_compute_alone_suppresses_below_the_idle_threshold_without_probing() {
    let (verdict, calls) = evaluate_counting(Some(50.0), Some(5.0), Ok(under_recorded()));
    assert_eq!(calls, 0);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::LowGpuComputePct]);
}

#[test]
fn unknown_inputs_pass_without_warnings() {
    let (verdict, calls) = evaluate_counting(None, None, Ok(under_recorded()));
    assert_eq!(calls, 0);
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(verdict.warnings.is_empty());
}

// --- gate.md "JSON shapes" JSON ---

#[test]
fn gate_document_has_the_schema_keys_in_order_and_flat_warnings() {
    let inputs = GateInputs::new(Some(91.234), None, None).with_source("run/trace.json.gz");
    let thresholds = Thresholds::default();
    let verdict = evaluate(&inputs, &thresholds, || Ok(no_graphs()));
    let report = GateReport::new(&inputs, &thresholds, verdict);
    let text = serde_json::to_string(&report.document()).unwrap();
    let prefix = r#"{"schema":"kernlens.gate/1","decision":"suppress","idle_pct":91.234,"threshold_pct":80.0,"compute_pct":null,"min_compute_pct":10.0,"exposed_comm_pct":null,"warnings":[{"code":"high_gpu_idle_pct","severity":"warning","message":"GPU was idle 91.23% of trace wall time (threshold 80.00%)"#;
    assert!(text.starts_with(prefix), "{text}");
    assert!(
        text.ends_with(
            r#","idle_pct":91.234,"threshold_pct":80.0,"source":"run/trace.json.gz"}]}"#
        ),
        "{text}"
    );
    // Without the schema tag (how triage embeds it) the rest is unchanged.
    let embedded = serde_json::to_string(&report).unwrap();
    assert_eq!(
        format!(r#"{{"schema":"kernlens.gate/1",{}"#, &embedded[1..]),
        text
    );
}

#[test]
fn probe_failed_warning_serialises_as_info_with_reason() {
    let verdict = idle_gate(Some(95.0), 80.0, || {
        Err(GateError::ProbeFailed {
            reason: "disk on fire".to_owned(),
        })
    });
    let value = serde_json::to_value(&verdict.warnings[1]).unwrap();
    assert_eq!(value["code"], "graph_probe_failed");
    assert_eq!(value["severity"], "info");
    assert_eq!(value["reason"], "disk on fire");
}

mod laws {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The probe runs iff idle is known and strictly above the threshold.
        #[test]
        fn probe_runs_only_above_threshold(idle in proptest::option::of(-10.0f64..200.0), thr in 0.0f64..100.0) {
            let probe = CountingProbe::new(Ok(fully_recorded()));
            let verdict = idle_gate(idle, thr, probe.probe());
            let above = idle.is_some_and(|idle| idle > thr);
            prop_assert_eq!(probe.calls.get(), u32::from(above));
            prop_assert_eq!(verdict.suppressed(), above);
        }

        /// Any text yields a usable threshold: a finite percentage in 0..=100.
        #[test]
        fn any_env_text_gives_a_valid_threshold(text in ".{0,12}") {
            let thresholds = Thresholds::from_env_values(Some(&text), Some(&text));
            prop_assert!((0.0..=100.0).contains(&thresholds.idle_pct));
            prop_assert!((0.0..=100.0).contains(&thresholds.min_compute_pct));
        }

        /// A checked lookup reports a fallback exactly when a non-blank value is unusable.
        #[test]
        fn a_fallback_is_reported_iff_a_set_value_is_rejected(text in ".{0,12}") {
            let (_, fallbacks) = Thresholds::from_lookup_checked(|_| Some(text.clone()));
            let rejected = !text.trim().is_empty() && parse_pct(&text).is_err();
            prop_assert_eq!(fallbacks.len(), if rejected { 2 } else { 0 });
        }

        /// Combining never passes what either gate alone suppresses, unless
        /// the graph guard found the idle figure unreliable.
        #[test]
        fn combined_suppresses_iff_a_gate_does(idle in 0.0f64..100.0, compute in 0.0f64..100.0, under in any::<bool>()) {
            let cov = if under { under_recorded() } else { fully_recorded() };
            let inputs = GateInputs::new(Some(idle), Some(compute), None);
            let thresholds = Thresholds::default();
            let combined = evaluate(&inputs, &thresholds, || Ok(cov));
            let idle_alone = idle_gate(Some(idle), 80.0, || Ok(cov));
            let compute_alone = compute_gate(Some(compute), None, 10.0);
            let guard_fired = idle > 80.0 && under;
            let expected = !guard_fired && (idle_alone.suppressed() || compute_alone.suppressed());
            prop_assert_eq!(combined.suppressed(), expected);
        }
    }
}
