//! Windows (issue 15 item 5): a relative `+START:+END` window gives the very document of the
//! absolute window it names (the trace's start read from the same trace's JSON), in µs or
//! with `ms`/`s` suffixes; the human output states the scope, the start and why `auto` fell
//! back; `triage --window` windows like summary; bad windows are usage errors in µs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/cli.rs"]
mod cli;
use cli::{fixture, json_of, run, stdout_of};
use std::path::Path;

/// µs text with three decimals → exact ns (the shortest float text of a ns-derived µs value
/// at trace magnitudes keeps all three decimals).
fn us_text_to_ns(text: &str) -> i128 {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac = format!("{frac:0<3}");
    whole.parse::<i128>().unwrap() * 1000 + frac[..3].parse::<i128>().unwrap()
}

fn ns_to_us_text(ns: i128) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

#[test]
fn a_relative_window_gives_the_document_of_the_absolute_window_it_names() {
    for name in ["eager.json.gz", "train.json.gz", "graph.json.gz"] {
        let trace = fixture(name);
        let t = trace.to_str().unwrap();
        let whole = json_of(&["summary", t]);
        let start = us_text_to_ns(&whole["trace_start_us"].to_string());
        let absolute = format!(
            "{}:{}",
            ns_to_us_text(start + 1_000_000),
            ns_to_us_text(start + 6_500_000)
        );
        let by_absolute = json_of(&["summary", t, "--top", "0", "--window", &absolute]);
        assert_eq!(by_absolute["aggregation_scope"], "explicit_window");
        assert!(
            by_absolute["attribution"]["kernel_count"].as_u64().unwrap() > 0,
            "{name}"
        );
        for relative in [
            "+1000:+6500",
            "+1ms:+6.5ms",
            "+0.001s:+0.0065s",
            "+1000us:+6.5ms",
        ] {
            let by_relative = json_of(&["summary", t, "--top", "0", "--window", relative]);
            assert_eq!(by_relative, by_absolute, "{name}: {relative} vs {absolute}");
        }
        // The same through triage, with a root so the launcher observer rides along (the
        // start must not move with it).
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
        let triage = json_of(&[
            "triage",
            t,
            "--root",
            src.to_str().unwrap(),
            "--no-discover",
            "--window",
            "+1ms:+6.5ms",
        ]);
        assert_eq!(
            triage["summary"]["trace_start_us"], whole["trace_start_us"],
            "{name}"
        );
        assert_eq!(triage["summary"]["window"], by_absolute["window"], "{name}");
        assert_eq!(
            triage["summary"]["timeline"], by_absolute["timeline"],
            "{name}"
        );
    }
}

#[test]
fn the_table_states_the_start_and_the_scope() {
    let trace = fixture("eager.json.gz");
    let t = trace.to_str().unwrap();
    let whole = json_of(&["summary", t]);
    let start = whole["trace_start_us"].as_f64().unwrap();
    let text = stdout_of(&["summary", t]);
    assert!(
        text.contains(&format!("start        {start:.3} us")),
        "{text}"
    );
    assert!(text.contains("scope        whole trace\n"), "{text}");
    let text = stdout_of(&["summary", t, "--window", "+1ms:+10ms"]);
    assert!(
        text.contains("explicit window")
            && text.contains("= +1.000:+10.000 ms from the start (9.000 ms)"),
        "{text}"
    );
}

#[test]
fn auto_says_what_it_chose_or_why_it_fell_back() {
    let train = fixture("train.json.gz");
    let chosen = stdout_of(&["summary", train.to_str().unwrap(), "--window", "auto"]);
    assert!(
        chosen.contains("scope        steady window: step "),
        "{chosen}"
    );
    let graph = fixture("graph_many.json.gz");
    let fell_back = stdout_of(&["summary", graph.to_str().unwrap(), "--window", "auto"]);
    assert!(
        fell_back.contains("scope        whole trace: no ")
            && fell_back.contains("fell back to the full trace"),
        "{fell_back}"
    );
    let triage = stdout_of(&[
        "triage",
        graph.to_str().unwrap(),
        "--no-discover",
        "--window",
        "auto",
    ]);
    assert!(triage.contains("fell back to the full trace"), "{triage}");
}

#[test]
fn bad_windows_are_usage_errors_that_speak_us() {
    let trace = fixture("eager.json.gz");
    let t = trace.to_str().unwrap();
    for (window, says) in [
        ("5000:1000", "1000 us < 5000 us"),
        ("+5ms:+1ms", "ends before it starts"),
        ("+1ms:5000", "each starting with '+'"),
        ("+1h:+2h", "is not a time offset"),
    ] {
        for command in ["summary", "triage"] {
            let (code, _, stderr) = run(&[command, t, "--window", window]);
            assert_eq!(code, Some(2), "{command} {window}: {stderr}");
            assert!(stderr.contains(says), "{command} {window}: {stderr}");
            assert!(!stderr.contains(" ns"), "{command} {window}: {stderr}");
        }
    }
}
