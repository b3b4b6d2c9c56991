//! Replays every committed fuzz input (`fuzz/regressions/<target>/*`) and damaged copies of a
//! real trace through the same checks the libFuzzer targets run (`fuzz/src/checks.rs`), so the
//! fixes for what fuzzing found stay fixed on a stable toolchain, in the normal test suite.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../fuzz/src/checks.rs"]
mod checks;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

type Check = fn(&[u8]);

/// Every fuzz target, by its directory name under `fuzz/regressions/`.
const TARGETS: &[(&str, Check)] = &[
    ("trace_reader", checks::trace_reader),
    ("trace_event", checks::trace_event),
    ("trace_fast_paths", checks::trace_fast_paths),
    ("ident_keys", checks::ident_keys),
    ("ident_mangled", checks::ident_mangled),
    ("source_ref", checks::source_ref),
    ("locate_python", checks::locate_python),
    ("locate_cxx", checks::locate_cxx),
    ("scratch_hunks", checks::scratch_hunks),
    ("scratch_export", checks::scratch_export),
    ("trace_ranks", checks::trace_ranks),
];

fn regressions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = regressions().join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn replay(target: &str) -> usize {
    let check = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, check)| *check)
        .unwrap();
    let files = inputs(target);
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} broke a law", file.display());
    }
    files.len()
}

#[test]
fn every_regression_directory_is_a_known_target() {
    for entry in std::fs::read_dir(regressions()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/regressions/{name} names no fuzz target"
            );
        }
    }
}

#[test]
fn trace_reader_inputs_stay_fixed() {
    assert!(replay("trace_reader") > 0);
}

#[test]
fn trace_fast_paths_inputs_stay_fixed() {
    assert!(replay("trace_fast_paths") > 0);
}

#[test]
fn trace_event_inputs_stay_fixed() {
    assert!(replay("trace_event") > 0);
}

#[test]
fn ident_keys_inputs_stay_fixed() {
    assert!(replay("ident_keys") > 0);
}

#[test]
fn ident_mangled_inputs_stay_fixed() {
    assert!(replay("ident_mangled") > 0);
}

#[test]
fn source_ref_inputs_stay_fixed() {
    assert!(replay("source_ref") > 0);
}

#[test]
fn locate_python_inputs_stay_fixed() {
    assert!(replay("locate_python") > 0);
}

#[test]
fn locate_cxx_inputs_stay_fixed() {
    assert!(replay("locate_cxx") > 0);
}

#[test]
fn scratch_hunks_inputs_stay_fixed() {
    assert!(replay("scratch_hunks") > 0);
}

#[test]
fn scratch_export_inputs_stay_fixed_under_real_git_apply() {
    if !checks::git_available() {
        eprintln!("git CLI not installed: scratch_export inputs run without the git apply oracle");
    }
    assert!(replay("scratch_export") > 0);
}

fn eager_plain() -> Vec<u8> {
    let gz =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces/eager.json.gz"))
            .unwrap();
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(gz.as_slice())
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// The damaged traces of the reader's own tests (trace.md "Streaming reader and error semantics: Element loop", scenarios 13–20), rebuilt from
/// the first events of the real eager trace and run through the fuzz check: cut mid-object,
/// cut after a complete object, a malformed object, a bare number, gzip without its tail, gzip
/// with a broken header, bytes after the closing bracket.
#[test]
fn damaged_real_traces_pass_the_trace_reader_check() {
    let full = eager_plain();
    // The first ~40 events keep this quick in a debug build.
    let head_end = full
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"\n  }")
        .nth(40)
        .map(|(i, _)| i + 4)
        .unwrap();
    let mut head = full[..head_end].to_vec();
    head.extend_from_slice(b"\n]}");
    let mut damaged: Vec<(&str, Vec<u8>)> = vec![
        ("complete head", head.clone()),
        ("cut mid-object", head[..head_end - 20].to_vec()),
        ("cut after an object", head[..head_end].to_vec()),
        ("cut inside the prefix", head[..10].to_vec()),
        (
            "malformed object",
            String::from_utf8_lossy(&head)
                .replacen("\"ph\": \"X\"", "\"ph\": X  ", 3)
                .into_bytes(),
        ),
        (
            "bare number element",
            String::from_utf8_lossy(&head)
                .replacen("[\n  {", "[42,\n  {", 1)
                .into_bytes(),
        ),
        (
            "trailing garbage",
            [head.as_slice(), b"{{{\"".as_slice()].concat(),
        ),
    ];
    let gz = gzip(&head);
    damaged.push((
        "gzip without its last 32 bytes",
        gz[..gz.len() - 32].to_vec(),
    ));
    let mut bad_header = gz.clone();
    bad_header[3] = 0xff;
    bad_header[4..10].fill(0xee);
    damaged.push(("gzip with a broken header", bad_header));
    damaged.push(("gzip cut mid-stream", gz[..gz.len() / 2].to_vec()));
    let mut events = Vec::new();
    for (what, bytes) in &damaged {
        let outcome = std::panic::catch_unwind(|| checks::trace_reader_events(bytes));
        match outcome {
            Ok(n) => events.push((*what, n)),
            Err(_) => panic!("damaged trace '{what}' broke a law"),
        }
    }
    let count = |what: &str| events.iter().find(|(w, _)| *w == what).unwrap().1;
    let complete = count("complete head");
    assert!(complete >= 30, "{events:?}");
    assert_eq!(count("cut mid-object"), complete - 1, "{events:?}");
    assert_eq!(count("cut after an object"), complete, "{events:?}");
    assert_eq!(count("cut inside the prefix"), 0);
    assert_eq!(count("malformed object"), complete - 3, "{events:?}");
    assert_eq!(count("bare number element"), complete, "{events:?}");
    assert_eq!(count("trailing garbage"), complete, "{events:?}");
    assert_eq!(count("gzip with a broken header"), 0, "{events:?}");
    assert!(
        count("gzip without its last 32 bytes") <= complete,
        "{events:?}"
    );
    assert!(count("gzip cut mid-stream") < complete, "{events:?}");
}

#[test]
fn trace_ranks_inputs_stay_fixed() {
    assert!(replay("trace_ranks") > 0);
}
