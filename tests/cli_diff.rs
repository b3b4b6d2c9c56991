//! `kernlens diff` and `triage --baseline` through the built binary on the bundled real
//! captures and the renamed-kernel pair (fixtures/diff/NOTE.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn renamed(side: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("fixtures/diff/renamed_{side}.json"))
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn table_leads_with_the_headline_and_lists_groups_by_change() {
    let out = run(&["diff", &renamed("before"), &renamed("after")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let mut lines = s.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kernel time \u{2212}16.8% (\u{2212}0.026 ms); top gain: tg001 scale_kernel \u{2212}40.0%"
    );
    assert!(
        s.contains("4 group(s): 4 matched, 0 added, 0 removed"),
        "{s}"
    );
    let header = s.lines().find(|l| l.starts_with("ID")).unwrap();
    for column in [
        "STATUS",
        "BEFORE ms",
        "AFTER ms",
        "Δ ms",
        "Δ %",
        "CALLS",
        "GROUP",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let first = s.lines().find(|l| l.starts_with("tg001")).unwrap();
    assert!(
        first.contains("0.040") && first.contains("0.024") && first.contains("\u{2212}40.0%"),
        "{first}"
    );
    assert!(
        first.contains("4 → 4") && first.ends_with("mylib::scale_kernel"),
        "{first}"
    );
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn eager_against_compiled_lists_fused_kernels_as_added() {
    let doc = json(&[
        "diff",
        &fixture("eager.json.gz"),
        &fixture("compiled.json.gz"),
        "--json",
    ]);
    assert_eq!(doc["schema"], "kernlens.diff/1");
    assert_eq!(
        (doc["added"].as_u64(), doc["removed"].as_u64()),
        (Some(7), Some(3))
    );
    let groups = doc["groups"].as_array().unwrap();
    let gemm = groups
        .iter()
        .find(|g| g["operation"] == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT")
        .unwrap();
    assert_eq!(gemm["status"], "matched");
    assert_eq!(gemm["calls"]["delta"], 0);
    assert!(
        groups
            .iter()
            .filter(|g| g["status"] == "added")
            .all(|g| g["operation"].as_str().unwrap().starts_with("triton_"))
    );
    // --top cuts the table only.
    let out = run(&[
        "diff",
        &fixture("eager.json.gz"),
        &fixture("compiled.json.gz"),
        "--top",
        "3",
    ]);
    let s = text(&out.stdout);
    assert_eq!(s.lines().filter(|l| l.starts_with("tg0")).count(), 3, "{s}");
    assert!(s.contains("… 9 more group(s); --top 0 shows all"), "{s}");
}

#[test]
fn a_trace_against_itself_prints_zero_changes() {
    let eager = fixture("eager.json.gz");
    let doc = json(&["diff", &eager, &eager, "--json"]);
    assert_eq!(doc["added"], 0);
    assert_eq!(doc["removed"], 0);
    for g in doc["groups"].as_array().unwrap() {
        assert_eq!(g["total_us"]["delta"], 0.0);
        assert_eq!(g["calls"]["delta"], 0);
    }
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0);
    assert!(
        doc["headline"]
            .as_str()
            .unwrap()
            .starts_with("kernel time 0.0% (0.000 ms)")
    );
}

#[test]
fn json_is_one_line_and_pretty_indents_it() {
    let args = ["diff", &renamed("before"), &renamed("after")];
    let compact = run(&[&args[..], &["--json"]].concat());
    assert_eq!(text(&compact.stdout).lines().count(), 1);
    let pretty = run(&[&args[..], &["--pretty"]].concat());
    assert!(text(&pretty.stdout).lines().count() > 50);
    let a: serde_json::Value = serde_json::from_slice(&compact.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&pretty.stdout).unwrap();
    assert_eq!(a, b);
}

#[test]
fn csv_has_one_quoted_row_per_group() {
    let out = run(&[
        "diff",
        &fixture("eager.json.gz"),
        &fixture("compiled.json.gz"),
        "--csv",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 1 + 12, "{s}");
    assert!(
        lines[0].starts_with("id,status,operation,category,before_us,after_us,delta_us,delta_pct")
    );
    // The identity key holds quotes and commas: RFC 4180 quotes the field, doubling quotes.
    let gemm = lines.iter().find(|l| l.contains(",nvjet_sm90")).unwrap();
    assert!(gemm.ends_with(
        r#","{""operation"":""nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"",""source_kind"":""py"",""source_path"":"""",""version"":1}""#
    ), "{gemm}");
    // An added group's percentage is empty (nothing before).
    let added = lines.iter().find(|l| l.contains(",added,")).unwrap();
    assert!(added.contains(",,0,"), "{added}");

    let both = run(&[
        "diff",
        &fixture("eager.json.gz"),
        &fixture("eager.json.gz"),
        "--csv",
        "--json",
    ]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn the_scalers_double_copy_shows_plus_100_percent_on_every_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut src = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(fixture("graph.json.gz")).unwrap())
        .read_to_end(&mut src)
        .unwrap();
    let doubled = dir.path().join("graph_x2.json");
    kernlens_xtask::scale(&src, &mut std::fs::File::create(&doubled).unwrap(), 2, 0).unwrap();
    let doc = json(&[
        "diff",
        &fixture("graph.json.gz"),
        doubled.to_str().unwrap(),
        "--json",
        "--normalize",
        "none",
    ]);
    let groups = doc["groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    for g in groups {
        assert_eq!(g["calls"]["delta_pct"], 100.0, "{g}");
        assert_eq!(g["total_us"]["delta_pct"], 100.0, "{g}");
    }
}

#[test]
fn windows_per_side_and_step_normalisation() {
    let compiled = fixture("compiled.json.gz");
    let doc = json(&["diff", &compiled, &compiled, "--window", "auto", "--json"]);
    assert_eq!(doc["normalization"]["applied"], "step");
    assert_eq!(doc["before"]["window_kind"], "steady");
    assert!(doc["headline"].as_str().unwrap().contains("ms/step)"));

    let mixed = json(&[
        "diff",
        &compiled,
        &compiled,
        "--window",
        "auto",
        "--before-window",
        "none",
        "--normalize",
        "step",
        "--json",
    ]);
    assert_eq!(mixed["before"]["window_kind"], "full");
    assert_eq!(mixed["after"]["window_kind"], "steady");
    assert_eq!(mixed["normalization"]["applied"], "none");
    let codes: Vec<&str> = mixed["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"window_kinds_differ") && codes.contains(&"step_unavailable"));

    // The warning is on the table too.
    let out = run(&["diff", &compiled, &compiled, "--before-window", "auto"]);
    assert!(text(&out.stdout).contains("warning   window_kinds_differ:"));
}

#[test]
fn usage_and_input_errors_have_their_exit_status() {
    let eager = fixture("eager.json.gz");
    let bad = run(&["diff", &eager, &eager, "--normalize", "daily"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("use auto, none, step or wall"));

    let missing = run(&["diff", &eager, "/nonexistent/after.json"]);
    assert_eq!(missing.status.code(), Some(1));
    let line = text(&missing.stderr);
    assert!(
        line.starts_with("kernlens: cannot open trace '/nonexistent/after.json': "),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1);

    let stdin_twice = run(&["diff", "-", "-"]);
    assert_eq!(stdin_twice.status.code(), Some(1));
    assert!(text(&stdin_twice.stderr).contains("cannot diff standard input against itself"));
}

#[test]
fn strict_exits_3_when_a_side_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let mut src = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(fixture("eager.json.gz")).unwrap())
        .read_to_end(&mut src)
        .unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &src[..src.len() / 2]).unwrap();
    let eager = fixture("eager.json.gz");
    let out = run(&["diff", &eager, cut.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stdout).contains("warning   stream_errors: the after trace had"));
    let lenient = run(&["diff", &eager, cut.to_str().unwrap()]);
    assert_eq!(lenient.status.code(), Some(0));
}

#[test]
fn a_closed_pipe_ends_diff_quietly() {
    for format in [None, Some("--json"), Some("--csv")] {
        let mut args = vec![
            "diff".to_owned(),
            fixture("eager.json.gz"),
            fixture("compiled.json.gz"),
        ];
        args.extend(format.map(str::to_owned));
        let mut child = Command::new(env!("CARGO_BIN_EXE_kernlens"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{format:?}: {}", text(&out.stderr));
    }
}

#[test]
fn triage_baseline_adds_each_groups_change() {
    let out = run(&[
        "triage",
        &fixture("compiled.json.gz"),
        "--baseline",
        &fixture("eager.json.gz"),
        "--no-discover",
        "--no-gate",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("baseline  "), "{s}");
    let header = s.lines().find(|l| l.starts_with("ID")).unwrap();
    assert!(
        header.contains("BASE ms") && header.contains("NOW ms") && header.contains("Δ %"),
        "{header}"
    );
    let gemm = s
        .lines()
        .find(|l| l.starts_with("tg") && l.contains("nvjet_sm90"))
        .unwrap();
    assert!(
        gemm.contains("4.611") && gemm.contains("4.590") && gemm.contains("\u{2212}0.5%"),
        "{gemm}"
    );
    let fused = s
        .lines()
        .find(|l| l.contains("triton_poi_fused_gelu_view_2"))
        .unwrap();
    assert!(fused.contains(" new "), "{fused}");

    // Against itself every group is unchanged, including the two elementwise instances
    // ident folds into one identity (each keeps its own baseline row).
    let eager = fixture("eager.json.gz");
    let doc = json(&[
        "triage",
        &eager,
        "--baseline",
        &eager,
        "--no-discover",
        "--json",
    ]);
    let groups = doc["baseline"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), doc["task_groups"].as_array().unwrap().len());
    for g in groups {
        assert_eq!(g["status"], "matched", "{g}");
        assert_eq!(g["total_us"]["delta"], 0.0, "{g}");
    }
    assert_eq!(
        doc["baseline"]["headline"],
        "kernel time 0.0% (0.000 ms); no group got faster"
    );

    // Without --baseline the document has no such member.
    let plain = json(&["triage", &eager, "--no-discover", "--json"]);
    assert!(plain.get("baseline").is_none());
}

#[test]
fn triage_baseline_matches_a_renamed_kernel() {
    let doc = json(&[
        "triage",
        &renamed("after"),
        "--baseline",
        &renamed("before"),
        "--no-discover",
        "--no-gate",
        "--json",
    ]);
    let groups = doc["task_groups"].as_array().unwrap();
    let baseline = doc["baseline"]["groups"].as_array().unwrap();
    let of = |needle: &str| {
        let id = groups
            .iter()
            .find(|g| g["operation"].as_str().unwrap().contains(needle))
            .unwrap()["id"]
            .clone();
        baseline.iter().find(|b| b["id"] == id).unwrap().clone()
    };
    assert_eq!(of("rms_norm_kernel")["total_us"]["delta_pct"], -25.0);
    assert_eq!(of("scale_kernel")["total_us"]["delta_pct"], -40.0);
    assert!(baseline.iter().all(|b| b["status"] == "matched"));
}
