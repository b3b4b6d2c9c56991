//! Progress (issue 15 item 2) through a real pseudo-terminal: `script` from util-linux runs
//! the built binary with a terminal as its standard error. A plain and a gzip trace over
//! 64 MB decoded are made in a temp dir from the bundled eager capture with the repository's
//! trace scaler (nothing big is committed). The bar counts decoded bytes for both, so the two
//! show the same total, and so does split's one bar over its two reads; nothing is drawn with `--json`, with `--csv`, for a small trace, or
//! when standard error is not a terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_kernlens");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
}

/// A plain trace over 64 MiB (30 shifted copies of the eager capture, 74.7 MB) and its gzip.
fn big_traces(dir: &Path) -> (PathBuf, PathBuf) {
    let mut src = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(fixture("eager.json.gz")).unwrap()),
        &mut src,
    )
    .unwrap();
    let mut text = Vec::new();
    kernlens_xtask::scale(&src, &mut text, 30, 1_000_000).unwrap();
    assert!(text.len() as u64 > 64 * 1024 * 1024, "{} bytes", text.len());
    let plain = dir.join("big.json");
    std::fs::write(&plain, &text).unwrap();
    let gzip = dir.join("big.json.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gzip).unwrap(),
        flate2::Compression::fast(),
    );
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    (plain, gzip)
}

/// Runs kernlens under a pseudo-terminal (standard output and error both on it); returns
/// what the terminal received.
fn on_terminal(args: &[&str]) -> String {
    let command = std::iter::once(EXE)
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("`script` (util-linux) runs the CLI under a pseudo-terminal for this test");
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The total of the last bar drawn for `file`: `reading FILE [...] DONE/TOTAL ...`.
fn bar_total(terminal: &str, file: &Path) -> String {
    let head = format!("reading {}", file.display());
    let last = terminal
        .split(['\r', '\n'])
        .rfind(|line| line.contains(&head))
        .unwrap_or_else(|| panic!("no progress bar for {}: {terminal:?}", file.display()));
    // `DONE UNIT/TOTAL UNIT PCT% ELAPSED` after the bar.
    let after_bar = &last[last.rfind(']').unwrap() + 1..];
    let total = &after_bar[after_bar.find('/').unwrap() + 1..];
    total
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_terminal_gets_a_bar_in_decoded_bytes_for_plain_and_gzip_traces_over_64_mb() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, gzip) = big_traces(dir.path());
    let p = plain.to_str().unwrap();
    let g = gzip.to_str().unwrap();

    let plain_total = bar_total(&on_terminal(&["summary", p, "--top", "1"]), &plain);
    let gzip_total = bar_total(&on_terminal(&["summary", g, "--top", "1"]), &gzip);
    // 74 653 910 decoded bytes; the gzip file is about 8 MB, so a bar on stored bytes
    // would end near 8 MiB.
    assert_eq!(plain_total, "71.20 MiB");
    assert_eq!(gzip_total, plain_total);
    // gate reads whole traces too.
    assert_eq!(bar_total(&on_terminal(&["gate", g]), &gzip), plain_total);

    // split reads the trace twice: one bar over both reads, still in decoded bytes.
    let chunk = dir.path().join("chunk.json");
    let c = chunk.to_str().unwrap();
    let split = ["split", g, "--window", "+0:+10000", "-o", c];
    assert_eq!(bar_total(&on_terminal(&split), &gzip), plain_total);
    assert!(chunk.exists());

    // Machine output never carries progress, terminal or not.
    for args in [
        &["summary", g, "--json"][..],
        &["summary", g, "--csv", "kernels"][..],
        &["gate", g, "--json"][..],
        &[&split[..], &["--json"]].concat()[..],
    ] {
        let terminal = on_terminal(args);
        assert!(!terminal.contains("reading "), "{args:?}: {terminal:?}");
    }

    // Standard error a pipe: nothing on it.
    let out = Command::new(EXE)
        .args(["summary", g, "--top", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_source_search_shows_a_spinner_on_a_terminal_and_none_with_json() {
    let eager = fixture("eager.json.gz");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    let args = [
        "triage",
        eager.to_str().unwrap(),
        "--root",
        src.to_str().unwrap(),
        "--no-discover",
    ];
    let terminal = on_terminal(&args);
    assert!(
        terminal.contains("searching 1 source root(s) for 6 kernel(s)"),
        "{terminal:?}"
    );
    let terminal = on_terminal(&[&args[..], &["--json"]].concat());
    assert!(!terminal.contains("searching"), "{terminal:?}");
    let names = [
        "locate",
        "_fused_scale_bias_kernel",
        "--root",
        src.to_str().unwrap(),
        "--no-discover",
    ];
    let terminal = on_terminal(&names);
    assert!(
        terminal.contains("searching 1 source root(s) for 1 kernel(s)"),
        "{terminal:?}"
    );
    let terminal = on_terminal(&[&names[..], &["--csv"]].concat());
    assert!(!terminal.contains("searching"), "{terminal:?}");
}

#[test]
fn a_small_trace_draws_no_bar_on_a_terminal() {
    let eager = fixture("eager.json.gz");
    let terminal = on_terminal(&["summary", eager.to_str().unwrap(), "--top", "1"]);
    assert!(!terminal.contains("reading "), "{terminal:?}");
    assert!(terminal.contains("timeline"), "{terminal:?}");
}
