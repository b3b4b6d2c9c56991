//! `kernlens split` and `kernlens summary --all-ranks` through the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/trace_files.rs"]
mod trace_files;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use trace_files::fixture;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn split_writes_a_chunk_that_summary_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("steady.json.gz");
    let o = run(&[
        "split",
        fixture("compiled_ro.json.gz").to_str().unwrap(),
        "--window",
        "auto",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["schema"], "kernlens.split/1");
    assert_eq!(report["events_written"], 157);
    let s = run(&["summary", out.to_str().unwrap(), "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(doc["attribution"]["kernel_count"], 34);
    assert_eq!(doc["provenance"]["source_graph"]["launches"], 8);
}

#[test]
fn split_without_a_steady_window_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none.json");
    let o = run(&[
        "split",
        fixture("eager.json.gz").to_str().unwrap(),
        "--window",
        "annotation",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("kernlens: cannot split") && err.contains("no repeating step window"),
        "{err}"
    );
    assert!(!out.exists(), "no half-written output");
    assert_eq!(
        run(&["split", "x.json", "--window", "none", "-o", "y.json"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn all_ranks_reports_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(fixture("graph.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
    let o = run(&["summary", dir.path().to_str().unwrap(), "--all-ranks"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("busy% spread: min 25.78 (rank 0), median 59.67, max 93.56 (rank 1)"),
        "{text}"
    );
    let j = run(&[
        "summary",
        dir.path().to_str().unwrap(),
        "--all-ranks",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(doc["schema"], "kernlens.ranks/1");
    assert_eq!(doc["rank_count"], 2);
}

// --- Output safety (issue 14 item 1; docs/design/cli.md "Output safety") ---
//
// Each test works in a temp dir with two folders: `outside/` holds what kernlens must never
// change (the input trace, a link's target), `sandbox/` is where `-o` points. Every file of
// `outside/` is compared byte for byte before and after the run.

/// A temp dir with `outside/` (holding a copy of `trace` as `outside/<trace>` and the text
/// file `outside/victim.txt`) and an empty `sandbox/`.
struct Sandbox {
    _tmp: tempfile::TempDir,
    outside: PathBuf,
    sandbox: PathBuf,
}

impl Sandbox {
    fn new(trace: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        let sandbox = tmp.path().join("sandbox");
        std::fs::create_dir(&outside).unwrap();
        std::fs::create_dir(&sandbox).unwrap();
        std::fs::copy(fixture(trace), outside.join(trace)).unwrap();
        std::fs::write(outside.join("victim.txt"), "a file kernlens does not own\n").unwrap();
        Sandbox {
            _tmp: tmp,
            outside,
            sandbox,
        }
    }

    fn input(&self, trace: &str) -> String {
        self.outside.join(trace).display().to_string()
    }

    fn out(&self, name: &str) -> PathBuf {
        self.sandbox.join(name)
    }

    /// `kernlens split outside/<trace> --window auto -o <out> EXTRA...`.
    fn split_auto(&self, trace: &str, out: &Path, extra: &[&str]) -> Output {
        let input = self.input(trace);
        let mut args = vec![
            "split",
            input.as_str(),
            "--window",
            "auto",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    }
}

/// Every entry of a directory with its bytes (a symlink as `-> target`), sorted by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display()).into_bytes()
            } else {
                std::fs::read(&path).unwrap()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    all.sort();
    all
}

fn stderr_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn split_onto_its_own_input_is_refused_and_the_input_is_untouched() {
    let s = Sandbox::new("train.json.gz");
    let input = s.input("train.json.gz");
    // The output as the input itself, a symlink to it and a hard link to it (in the sandbox),
    // and the input named through a symlink with the real file as output.
    let soft = s.out("soft.json.gz");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    let hard = s.out("hard.json.gz");
    std::fs::hard_link(&input, &hard).unwrap();
    let before_outside = snapshot(&s.outside);
    let before_sandbox = snapshot(&s.sandbox);
    let soft_str = soft.display().to_string();
    let hard_str = hard.display().to_string();
    for (from, to) in [
        (input.as_str(), input.as_str()),
        (input.as_str(), soft_str.as_str()),
        (input.as_str(), hard_str.as_str()),
        (soft_str.as_str(), input.as_str()),
    ] {
        for window in ["auto", "0:1"] {
            let o = run(&["split", from, "--window", window, "-o", to]);
            assert_eq!(o.status.code(), Some(1), "{from} -> {to}");
            let err = stderr_line(&o);
            assert!(
                err.starts_with("kernlens: cannot split") && err.contains("is the input"),
                "{err}"
            );
            assert!(o.stdout.is_empty());
        }
    }
    assert_eq!(snapshot(&s.outside), before_outside);
    assert_eq!(snapshot(&s.sandbox), before_sandbox);
}

#[test]
fn a_failed_split_leaves_an_existing_output_byte_identical() {
    let s = Sandbox::new("eager.json.gz");
    let out = s.out("chunk.json");
    std::fs::write(&out, "an earlier chunk\n").unwrap();
    let before_outside = snapshot(&s.outside);
    let before_sandbox = snapshot(&s.sandbox);
    // The eager fixture has no repeating window, so `auto` fails after the first pass.
    let o = s.split_auto("eager.json.gz", &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr_line(&o).contains("no repeating step window"));
    assert_eq!(
        snapshot(&s.sandbox),
        before_sandbox,
        "no temp file left either"
    );
    assert_eq!(snapshot(&s.outside), before_outside);
}

#[test]
fn a_failed_split_through_a_symlink_keeps_the_link_and_its_target() {
    let s = Sandbox::new("eager.json.gz");
    let link = s.out("chunk.json");
    std::os::unix::fs::symlink(s.outside.join("victim.txt"), &link).unwrap();
    let before_outside = snapshot(&s.outside);
    let before_sandbox = snapshot(&s.sandbox);
    let o = s.split_auto("eager.json.gz", &link, &[]);
    assert_eq!(o.status.code(), Some(1));
    stderr_line(&o);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(snapshot(&s.sandbox), before_sandbox);
    assert_eq!(snapshot(&s.outside), before_outside);
}

#[test]
fn a_split_onto_a_symlink_replaces_the_link_not_its_target() {
    let s = Sandbox::new("train.json.gz");
    let link = s.out("chunk.json.gz");
    std::os::unix::fs::symlink(s.outside.join("victim.txt"), &link).unwrap();
    let before_outside = snapshot(&s.outside);
    let o = s.split_auto("train.json.gz", &link, &["--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(snapshot(&s.outside), before_outside);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    let names: Vec<String> = snapshot(&s.sandbox).into_iter().map(|e| e.0).collect();
    assert_eq!(names, ["chunk.json.gz"], "no temp file left");
    let doc: serde_json::Value =
        serde_json::from_slice(&run(&["summary", link.to_str().unwrap(), "--json"]).stdout)
            .unwrap();
    assert_eq!(doc["provenance"]["source_file"], "train.json.gz");
}

#[test]
fn a_split_over_an_existing_file_replaces_it_whole_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let s = Sandbox::new("train.json.gz");
    let out = s.out("chunk.json");
    std::fs::write(&out, "x".repeat(1 << 20)).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before_outside = snapshot(&s.outside);
    let o = s.split_auto("train.json.gz", &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    let chunk: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(chunk["kernlens"]["schema"], "kernlens.chunk/1");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(snapshot(&s.sandbox).len(), 1);
    assert_eq!(snapshot(&s.outside), before_outside);
}

#[test]
fn a_split_into_a_directory_or_a_missing_one_fails_with_one_line() {
    let s = Sandbox::new("train.json.gz");
    let before_outside = snapshot(&s.outside);
    for out in [s.sandbox.clone(), s.out("no/such/dir/chunk.json")] {
        let o = s.split_auto("train.json.gz", &out, &[]);
        assert_eq!(o.status.code(), Some(1), "{}", out.display());
        let err = stderr_line(&o);
        assert!(err.starts_with("kernlens: cannot split"), "{err}");
    }
    assert!(snapshot(&s.sandbox).is_empty());
    assert_eq!(snapshot(&s.outside), before_outside);
}

// --- All-ranks truth and provenance validity (issue 14 item 4; docs/design/trace.md) ---

fn summary_json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn all_ranks_lists_an_unusable_rank_under_failed_and_keeps_it_out_of_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(fixture("train.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
    // A JSON file with no trace array, and a rank number no u64 holds.
    std::fs::write(dir.path().join("rank_2.json"), r#"{"schemaVersion": 1}"#).unwrap();
    let big = dir.path().join("w_rank99999999999999999999.json");
    std::fs::copy(fixture("eager.json.gz"), &big).unwrap();
    let d = dir.path().to_str().unwrap();
    let before = snapshot(dir.path());
    let doc = summary_json(&["summary", d, "--all-ranks", "--json"]);
    assert_eq!(doc["rank_count"], 4);
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 2);
    let failed = doc["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0]["rank"], 2);
    let err0 = failed[0]["error"].as_str().unwrap();
    assert!(err0.contains("no traceEvents array"), "{err0}");
    assert_eq!(failed[1]["rank"], serde_json::Value::Null);
    assert_eq!(failed[1]["trace_file"], big.display().to_string());
    let err1 = failed[1]["error"].as_str().unwrap();
    assert!(err1.contains("rank99999999999999999999"), "{err1}");
    // The spread is over ranks 0 (eager, 25.78% busy) and 1 (train, 15.84%) only: no 0%
    // rank 2 at the bottom.
    let spread = &doc["spread"]["busy_pct"];
    assert_eq!(spread["min_rank"], 1);
    assert!(
        (spread["min"].as_f64().unwrap() - 15.84).abs() < 0.01,
        "{spread}"
    );
    assert_eq!(spread["max_rank"], 0);
    assert!(
        (spread["max"].as_f64().unwrap() - 25.78).abs() < 0.01,
        "{spread}"
    );
    let text = run(&["summary", d, "--all-ranks"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("     2 failed: "), "{text}");
    assert!(text.contains("     - failed: rank tag"), "{text}");
    assert!(
        text.contains("busy% spread: min 15.84 (rank 1), median 20.81, max 25.78 (rank 0)"),
        "{text}"
    );
    // --strict: a failed rank is a structural problem, as its stream error used to be.
    let strict = run(&["summary", d, "--all-ranks", "--strict"]);
    assert_eq!(strict.status.code(), Some(3));
    // Reading never writes: the rank directory is as it was, byte for byte.
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn all_ranks_lists_ranks_without_gpu_events_under_failed_and_keeps_them_out_of_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    // A trace array that is empty, and one holding only a CPU op: readable, but with no GPU
    // event there is no busy% to put in the spread (it used to enter it as a 0% rank).
    std::fs::write(dir.path().join("rank_1.json"), r#"{"traceEvents": []}"#).unwrap();
    std::fs::write(
        dir.path().join("rank_2.json"),
        r#"{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":5}]}"#,
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let before = snapshot(dir.path());
    let doc = summary_json(&["summary", d, "--all-ranks", "--json"]);
    assert_eq!(doc["rank_count"], 3);
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 1);
    let failed = doc["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    for (entry, rank) in failed.iter().zip([1, 2]) {
        assert_eq!(entry["rank"], rank);
        let err = entry["error"].as_str().unwrap();
        assert!(err.contains("no GPU events"), "{err}");
    }
    let spread = &doc["spread"]["busy_pct"];
    assert_eq!(
        (&spread["min_rank"], &spread["max_rank"]),
        (&0.into(), &0.into())
    );
    assert!(
        (spread["min"].as_f64().unwrap() - 25.78).abs() < 0.01,
        "{spread}"
    );
    let text = run(&["summary", d, "--all-ranks"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("     1 failed: "), "{text}");
    assert!(
        text.contains("busy% spread: min 25.78 (rank 0), median 25.78, max 25.78 (rank 0)"),
        "{text}"
    );
    assert_eq!(snapshot(dir.path()), before);
}

/// The eager fixture with `"kernlens": <member>` inserted as its first top-level member.
fn eager_with_member(dir: &Path, member: &str) -> PathBuf {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(fixture("eager.json.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let at = text.find('{').unwrap() + 1;
    text.insert_str(at, &format!("\"kernlens\": {member},"));
    let path = dir.join("eager_member.json");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_kernlens_member_that_is_not_provenance_is_ignored_with_a_stream_error() {
    let dir = tempfile::tempdir().unwrap();
    for (member, why) in [
        ("{}", "no schema"),
        (
            r#"{"schema":"kernlens.chunk/1","source_graph":{"launches":0}}"#,
            "no source_file",
        ),
    ] {
        let path = eager_with_member(dir.path(), member);
        let p = path.to_str().unwrap();
        let before = snapshot(dir.path());
        let doc = summary_json(&["summary", p, "--json"]);
        assert_eq!(doc["provenance"], serde_json::Value::Null, "{member}");
        let errors = doc["stream_errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e = errors[0].as_str().unwrap();
        assert!(
            e.starts_with("kernlens member ignored") && e.contains(why),
            "{e}"
        );
        assert_eq!(doc["attribution"]["kernel_count"], 352);
        // The gate reads it as the plain trace it is: no "split chunk" refusal.
        let gate = run(&["gate", p, "--json", "--idle-threshold", "70"]);
        let gate: serde_json::Value = serde_json::from_slice(&gate.stdout).unwrap();
        let codes: Vec<&str> = gate["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap())
            .collect();
        assert!(
            !codes.contains(&"graph_probe_failed"),
            "{member}: {codes:?}"
        );
        assert_eq!(gate["decision"], "suppress");
        // --strict sees the ignored member as a structural problem.
        assert_eq!(run(&["summary", p, "--strict"]).status.code(), Some(3));
        assert_eq!(snapshot(dir.path()), before);
    }
}
