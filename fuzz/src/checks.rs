//! What must hold for any input, one function per fuzz target.
//!
//! Each check takes raw fuzzer bytes and panics (through `assert!`) when a law is broken, so
//! libFuzzer records the input as a crash. The main package's `tests/fuzz_replay.rs` includes
//! this file with `#[path]` and calls the same functions on the committed inputs, which is why
//! it only uses crates the main package already depends on.

use std::io::{Cursor, Write as _};
use std::path::Path;
use std::process::Command;

use kernlens_ident::{
    KeyMemo, clean_name, is_mangled, keys, native_key, parse_source_ref, python_key,
};
use kernlens_locate::{LocateOptions, Locator, scan_python};
use kernlens_scratch::export::{ExportRequest, export};
use kernlens_scratch::location::LocationRequest;
use kernlens_scratch::patch::unified_hunks;
use kernlens_scratch::prepare::{PrepareRequest, prepare};
use kernlens_trace::{Analysis, Limits, Options, TraceSource, WindowMode, analyze, graph_coverage};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The trace reader on arbitrary bytes: plain in place, plain streamed and gzip agree, content
/// is never an `Err`, and no more events come back than the input has closing braces.
pub fn trace_reader(data: &[u8]) {
    check_trace(data);
}

/// The `trace_reader` check, returning how many events the in-place read recovered.
pub fn trace_reader_events(data: &[u8]) -> u64 {
    check_trace(data)
}

/// The reader's fast paths (learned shapes, the structural index) read an event as the
/// cursor does: `A 0x00 B`, a shape learned from `A` reading `B`.
pub fn trace_fast_paths(data: &[u8]) {
    kernlens_trace::fuzzing::fast_paths_agree(data);
}

/// The event parser core: the bytes are the inside of a `traceEvents` array.
pub fn trace_event(data: &[u8]) {
    let mut doc = b"{\"traceEvents\":[".to_vec();
    doc.extend_from_slice(data);
    doc.extend_from_slice(b"]}");
    check_trace(&doc);
}

/// The analysis, or `None` when the input is no trace at all (`NotATrace`, the one error
/// content may give); any other error is a failure.
fn run_trace(source: &TraceSource, opts: &Options, what: &str) -> Option<Analysis> {
    match analyze(source, opts) {
        Ok(a) => Some(a),
        Err(kernlens_trace::TraceError::NotATrace { .. }) => None,
        Err(e) => panic!("{what}: bad content must be recovered, not an Err: {e}"),
    }
}

fn check_trace(data: &[u8]) -> u64 {
    let mut opts = Options::default();
    opts.threads = Some(1);
    let Some(plain) = run_trace(
        &TraceSource::from_bytes("fuzz.json", data.to_vec()),
        &opts,
        "in place",
    ) else {
        // Every way of reading it agrees that it is no trace.
        let streamed = TraceSource::from_reader("fuzz.json", Cursor::new(data.to_vec()));
        assert!(
            run_trace(&streamed, &opts, "streamed").is_none(),
            "streamed read found a trace"
        );
        if !data.starts_with(&GZIP_MAGIC) {
            let gz = TraceSource::from_bytes("fuzz.json", gzip(data));
            assert!(
                run_trace(&gz, &opts, "gzip").is_none(),
                "gzip read found a trace"
            );
        }
        let coverage = graph_coverage(
            &TraceSource::from_bytes("fuzz.json", data.to_vec()),
            &Limits::default(),
        );
        assert!(
            matches!(coverage, Err(kernlens_trace::TraceError::NotATrace { .. })),
            "graph_coverage disagrees with analyze on a non-trace"
        );
        return 0;
    };
    // Every complete object ends in a `}` of the (decompressed) input.
    let decompressed = if data.starts_with(&GZIP_MAGIC) {
        gunzip_lossy(data)
    } else {
        data.to_vec()
    };
    let closers = decompressed.iter().filter(|&&b| b == b'}').count() as u64;
    assert!(
        plain.event_total <= closers,
        "{} events recovered from an input with {closers} closing braces",
        plain.event_total
    );
    assert!(
        plain.stream_errors.len() <= 1000,
        "stream errors are capped at 1000"
    );
    let plain_json = plain.to_json().to_string();

    let streamed = run_trace(
        &TraceSource::from_reader("fuzz.json", Cursor::new(data.to_vec())),
        &opts,
        "streamed",
    )
    .unwrap_or_else(|| panic!("the streamed read found no trace"));
    assert_eq!(
        streamed.to_json().to_string(),
        plain_json,
        "in place and streamed reads differ"
    );

    if !data.starts_with(&GZIP_MAGIC) {
        let gz = gzip(data);
        let zipped = run_trace(&TraceSource::from_bytes("fuzz.json", gz), &opts, "gzip")
            .unwrap_or_else(|| panic!("the gzip read found no trace"));
        assert_eq!(
            zipped.to_json().to_string(),
            plain_json,
            "plain and gzip reads differ"
        );
    }

    let coverage = match graph_coverage(
        &TraceSource::from_bytes("fuzz.json", data.to_vec()),
        &Limits::default(),
    ) {
        Ok(c) => c,
        Err(e) => panic!("graph_coverage: bad content must be recovered, not an Err: {e}"),
    };
    assert_eq!(
        serde_json::to_value(&coverage.graph).ok(),
        plain.to_json().get("graph").cloned(),
        "graph_coverage disagrees with analyze"
    );
    assert_eq!(coverage.stream_errors, plain.stream_errors);

    // Tight limits and the steady-window search: still no panic, still no invented events.
    let mut tight = Options::default();
    tight.threads = Some(1);
    tight.limits = Limits::new(
        data.len() / 2,
        64 + usize::from(data.first().copied().unwrap_or(0)),
    );
    tight.window = WindowMode::steady(Default::default());
    tight.emit_launches = true;
    tight.top_k = 0;
    let bounded = run_trace(
        &TraceSource::from_bytes("fuzz.json", data.to_vec()),
        &tight,
        "tight limits",
    )
    .unwrap_or_else(|| panic!("tight limits found no trace"));
    assert!(bounded.event_total <= plain.event_total.max(closers));
    assert!(bounded.launches().count() as u64 <= bounded.event_total);
    plain.event_total
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

/// What a gzip stream decompresses to, up to the first error (the reader keeps that much too).
fn gunzip_lossy(data: &[u8]) -> Vec<u8> {
    use std::io::Read as _;
    let mut out = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(data);
    let mut buf = [0u8; 8192];
    loop {
        match dec.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// Kernel keys on arbitrary UTF-8 (ident.md "Properties" P1, P2, P3, P5, P8, P9).
pub fn ident_keys(data: &[u8]) {
    if let Ok(name) = std::str::from_utf8(data) {
        check_keys(name);
    }
}

/// Letters a mangled Itanium name is made of, so the demangler sees deep, plausible input.
const MANGLED_ALPHABET: &[u8] =
    b"_ZNEIJLSTXYCDPRKVOFvbcdfhijlmstxyz0123456789DF16DpDvSaSsStSoSiSd.$A";

/// Kernel keys on `_Z` plus bytes mapped onto the mangled-name alphabet.
pub fn ident_mangled(data: &[u8]) {
    let mut name = String::from("_Z");
    name.extend(
        data.iter()
            .map(|&b| {
                if MANGLED_ALPHABET.contains(&b) {
                    b
                } else {
                    MANGLED_ALPHABET[usize::from(b) % MANGLED_ALPHABET.len()]
                }
            })
            .map(char::from),
    );
    check_keys(&name);
    check_keys(&format!("_{name}"));
}

fn check_keys(name: &str) {
    let native = native_key(name);
    let python = python_key(name);
    assert_eq!(
        native_key(&native),
        native,
        "native key not idempotent (P1) for {name:?}"
    );
    assert_eq!(
        python_key(&python),
        python,
        "python key not idempotent (P1) for {name:?}"
    );
    let both = keys(name);
    assert_eq!(
        both.native, native,
        "keys().native differs from native_key for {name:?}"
    );
    assert_eq!(
        both.python, python,
        "keys().python differs from python_key for {name:?}"
    );
    let mut memo = KeyMemo::new();
    assert_eq!(memo.get(name), &both, "memo differs (P8)");
    assert_eq!(memo.get(name), &both, "memo hit differs (P8)");
    // P9 as ident's own tests read it: a later round can strip an unmangled name down to a
    // mangled token (`.\v_Z1_` -> `_Z1_`), which only the native track demangles.
    if !is_mangled(clean_name(name)) && !is_mangled(&python) {
        assert_eq!(
            python, native,
            "tracks disagree on an unmangled name (P9): {name:?}"
        );
    }
    if name.trim().is_empty() {
        return;
    }
    assert!(
        !native.is_empty() && !python.is_empty(),
        "empty key (P5) for {name:?}"
    );
    // P2 (a launch-API word in front) and P3 (code-object and synthetic suffixes).
    for decorated in [
        format!("cudaLaunchKernel->{name}"),
        format!("{name}.kd"),
        format!("{name} (Synthetic Op)"),
    ] {
        assert_eq!(
            native_key(&decorated),
            native,
            "decoration changed the native key: {decorated:?}"
        );
        assert_eq!(
            python_key(&decorated),
            python,
            "decoration changed the python key: {decorated:?}"
        );
    }
}

/// `parse_source_ref` on arbitrary UTF-8: a parsed path is a piece of the input, path-shaped,
/// and its line is written in the input.
pub fn source_ref(data: &[u8]) {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    match parse_source_ref(value) {
        Ok(r) => {
            assert!(!r.path.is_empty(), "empty path from {value:?}");
            assert!(
                value.contains(r.path.as_str()),
                "path {:?} not in {value:?}",
                r.path
            );
            assert!(kernlens_ident::is_path_shaped(&r.path));
            if let Some(line) = r.line {
                assert!(
                    value.contains(&line.to_string()),
                    "line {line} not in {value:?}"
                );
            }
            if let Some(f) = &r.function {
                assert!(!f.is_empty() && value.contains(f.as_str()));
            }
        }
        Err(kernlens_ident::RefRejection::Empty) => assert!(value.trim().is_empty()),
        Err(_) => assert!(!value.trim().is_empty()),
    }
}

/// The locate Python scanner: every def, assignment and string it reports lies inside the text,
/// and locating the defs' names in a tree holding only this file finds this file or nothing.
pub fn locate_python(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = line_count(data);
    let symbols = scan_python(text);
    for d in &symbols.defs {
        assert!(
            !d.name.is_empty() && text.contains(d.name.as_str()),
            "def {:?} not in text",
            d.name
        );
        assert!(
            1 <= d.line && d.line <= d.end_line && d.end_line <= lines,
            "def lines {d:?} of {lines}"
        );
    }
    for a in &symbols.assignments {
        assert!(
            text.contains(a.name.as_str()) && 1 <= a.line && a.line <= lines,
            "{a:?}"
        );
    }
    for s in &symbols.strings {
        assert!(
            s.start <= s.end && s.end <= data.len() && 1 <= s.line && s.line <= lines,
            "{s:?}"
        );
    }
    let mut names: Vec<String> = symbols
        .defs
        .iter()
        .take(4)
        .map(|d| d.name.clone())
        .collect();
    names.extend(identifiers(data, 2));
    locate_in_one_file("k.py", data, &names);
}

/// The C++/CUDA definition scanner, through the locator on a tree holding one `.cu` file.
pub fn locate_cxx(data: &[u8]) {
    let names = identifiers(data, 4);
    locate_in_one_file("k.cu", data, &names);
}

/// Lines as Python counts them: `\n`, `\r\n` and a lone `\r` each end one.
fn line_count(data: &[u8]) -> usize {
    let lone_cr = data
        .windows(2)
        .filter(|w| w[0] == b'\r' && w[1] != b'\n')
        .count()
        + usize::from(data.last() == Some(&b'\r'));
    data.iter().filter(|&&b| b == b'\n').count() + lone_cr + 1
}

/// Up to `n` distinct identifiers of at least 4 characters, in order of appearance.
fn identifiers(data: &[u8], n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < data.len() && out.len() < n {
        if data[i].is_ascii_alphabetic() || data[i] == b'_' {
            let start = i;
            while i < data.len() && (data[i].is_ascii_alphanumeric() || data[i] == b'_') {
                i += 1;
            }
            let word = String::from_utf8_lossy(&data[start..i]).into_owned();
            if word.len() >= 4 && !out.contains(&word) {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

fn locate_in_one_file(file: &str, data: &[u8], names: &[String]) {
    let Ok(dir) = tempfile::tempdir() else { return };
    let pkg = dir.path().join("pkg");
    if std::fs::create_dir_all(&pkg).is_err() || std::fs::write(pkg.join(file), data).is_err() {
        return;
    }
    let mut locator = match Locator::builder().root(dir.path()).threads(1).build() {
        Ok(l) => l,
        Err(e) => panic!("a readable root must build a locator: {e}"),
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let lines = line_count(data);
    for r in locator.locate_many(&refs, &LocateOptions::default()) {
        assert_eq!(
            r.found,
            r.path.is_some(),
            "found disagrees with path: {r:?}"
        );
        for p in r.path.iter().chain(r.candidates.iter().map(|c| &c.path)) {
            assert!(
                p.ends_with(Path::new("pkg").join(file)),
                "invented path {p:?}"
            );
        }
        if let Some(line) = r.line {
            assert!(
                1 <= line && line <= lines,
                "line {line} of a {lines}-line file: {r:?}"
            );
        }
    }
}

/// Splits fuzzer bytes into an old and a new file content. The first byte picks the mode: two
/// independent texts, or a text and a line-level edit of it (the case diffs meet in practice).
pub fn old_and_new(data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let Some((&mode, rest)) = data.split_first() else {
        return (Vec::new(), Vec::new());
    };
    let cut = rest.iter().position(|&b| b == 0xff).unwrap_or(rest.len());
    let (old, tail) = (&rest[..cut], rest.get(cut + 1..).unwrap_or(&[]));
    if mode & 1 == 0 {
        return (old.to_vec(), tail.to_vec());
    }
    let mut lines: Vec<Vec<u8>> = old
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for &op in tail {
        let at = usize::from(op / 4) % (lines.len() + 1);
        match op % 4 {
            0 if at < lines.len() => {
                lines.remove(at);
            }
            1 if at < lines.len() => {
                let copy = lines[at].clone();
                lines.insert(at, copy);
            }
            2 => lines.insert(at, format!("edit {op}\n").into_bytes()),
            _ => {
                if let Some(l) = lines.get_mut(at) {
                    if l.ends_with(b"\n") {
                        l.pop();
                    } else {
                        l.push(b'\n');
                    }
                }
            }
        }
    }
    (old.to_vec(), lines.concat())
}

/// The unified hunks of the patch writer, applied by a strict reader of the format written here,
/// turn the old text into the new one, and their headers count what they hold.
pub fn scratch_hunks(data: &[u8]) {
    let (old, new) = old_and_new(data);
    let mut patch = Vec::new();
    unified_hunks(&old, &new, &mut patch);
    if old == new {
        assert!(patch.is_empty(), "hunks for identical texts");
    }
    match apply_hunks(&old, &patch) {
        Ok(applied) => assert!(
            applied == new,
            "hunks do not rebuild the new text:\n{}",
            String::from_utf8_lossy(&patch)
        ),
        Err(why) => panic!(
            "malformed hunks ({why}):\n{}",
            String::from_utf8_lossy(&patch)
        ),
    }
}

fn parse_range(text: &str) -> Option<(usize, usize)> {
    match text.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((text.parse().ok()?, 1)),
    }
}

/// Applies unified hunks strictly: context and removed lines must match, counts must agree.
fn apply_hunks(old: &[u8], patch: &[u8]) -> Result<Vec<u8>, String> {
    let old_lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let mut lines: Vec<&[u8]> = patch.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out: Vec<u8> = Vec::new();
    let mut out_lines = 0usize;
    let mut pos = 0usize;
    let mut i = 0;
    while i < lines.len() {
        let header = std::str::from_utf8(lines[i]).map_err(|_| "header not UTF-8")?;
        let inner = header
            .strip_prefix("@@ -")
            .and_then(|h| h.strip_suffix(" @@"))
            .ok_or_else(|| format!("expected a hunk header, got {header:?}"))?;
        let (o, n) = inner.split_once(" +").ok_or("no new range")?;
        let (o_start, o_count) = parse_range(o).ok_or("bad old range")?;
        let (n_start, n_count) = parse_range(n).ok_or("bad new range")?;
        let o_from = if o_count == 0 { o_start } else { o_start - 1 };
        let n_from = if n_count == 0 { n_start } else { n_start - 1 };
        if o_from < pos || o_from > old_lines.len() {
            return Err(format!(
                "hunk at old line {o_start} overlaps or is out of range"
            ));
        }
        for l in &old_lines[pos..o_from] {
            out.extend_from_slice(l);
            out_lines += 1;
        }
        if out_lines != n_from {
            return Err(format!("new start {n_start} but {out_lines} lines written"));
        }
        pos = o_from;
        let (mut seen_old, mut seen_new) = (0, 0);
        i += 1;
        while i < lines.len() && !lines[i].starts_with(b"@@ ") {
            let (sign, body) = lines[i].split_first().ok_or("empty hunk line")?;
            let no_newline = lines
                .get(i + 1)
                .is_some_and(|l| *l == b"\\ No newline at end of file");
            let mut content = body.to_vec();
            if !no_newline {
                content.push(b'\n');
            }
            match sign {
                b' ' | b'-' => {
                    if old_lines.get(pos) != Some(&content.as_slice()) {
                        return Err(format!("line {} of the old text does not match", pos + 1));
                    }
                    pos += 1;
                    seen_old += 1;
                    if *sign == b' ' {
                        out.extend_from_slice(&content);
                        out_lines += 1;
                        seen_new += 1;
                    }
                }
                b'+' => {
                    out.extend_from_slice(&content);
                    out_lines += 1;
                    seen_new += 1;
                }
                other => return Err(format!("unknown hunk line sign {:?}", char::from(*other))),
            }
            i += if no_newline { 2 } else { 1 };
        }
        if (seen_old, seen_new) != (o_count, n_count) {
            return Err(format!(
                "header counts {o_count},{n_count} but hunk holds {seen_old},{seen_new}"
            ));
        }
    }
    for l in &old_lines[pos..] {
        out.extend_from_slice(l);
    }
    Ok(out)
}

/// The whole export path on arbitrary file contents: prepare a package whose kernel holds the
/// old bytes, write the new bytes, export, and (when the git CLI is installed) `git apply` the
/// patch on a pristine copy, which must then hold the new bytes.
pub fn scratch_export(data: &[u8]) {
    let (old, new) = old_and_new(data);
    let Ok(tmp) = tempfile::tempdir() else { return };
    let pkg = tmp.path().join("site/mypkg");
    let pristine = tmp.path().join("pristine/mypkg");
    for dir in [&pkg, &pristine] {
        let ok = std::fs::create_dir_all(dir).is_ok()
            && std::fs::write(dir.join("__init__.py"), b"").is_ok()
            && std::fs::write(dir.join("kernel.py"), &old).is_ok();
        if !ok {
            return;
        }
    }
    let request = PrepareRequest::new(
        pkg.join("kernel.py"),
        LocationRequest::new(tmp.path().join("out")),
    );
    let ws = match prepare(&request) {
        Ok(ws) => ws,
        Err(e) => panic!("prepare of a plain package failed: {e}"),
    };
    if std::fs::write(&ws.kernel_path, &new).is_err() {
        return;
    }
    let out_dir = tmp.path().join("export");
    // Links planted where the export writes (issue 14): the export must replace them, never
    // write through them, so the victim keeps its bytes whatever the input.
    let victim = tmp.path().join("victim");
    let planted = std::fs::create_dir_all(&out_dir).is_ok()
        && std::fs::write(&victim, b"not kernlens's").is_ok()
        && std::os::unix::fs::symlink(&victim, out_dir.join("scratch.patch")).is_ok()
        && std::os::unix::fs::symlink(&victim, out_dir.join("export.json")).is_ok();
    if !planted {
        return;
    }
    let report = export(&ws, &ExportRequest::new(None, Some(out_dir.clone())));
    let victim_bytes = std::fs::read(&victim).unwrap_or_default();
    assert!(
        victim_bytes == b"not kernlens's",
        "export wrote through a link planted in its output directory"
    );
    if old == new {
        assert!(report.is_err() || report.is_ok_and(|r| r.changes.is_empty()));
        return;
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => panic!("export of a changed kernel failed: {e}"),
    };
    for name in ["scratch.patch", "export.json"] {
        let is_file = std::fs::symlink_metadata(out_dir.join(name)).is_ok_and(|m| m.is_file());
        assert!(is_file, "{name} in the export is not a regular file");
    }
    assert_eq!(
        report.changes.len(),
        1,
        "one file changed: {:?}",
        report.changes
    );
    let copied = std::fs::read(out_dir.join("files/mypkg/kernel.py")).unwrap_or_default();
    assert!(copied == new, "files/ copy differs from the new kernel");
    if !git_available() {
        return;
    }
    let applied = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(out_dir.join("scratch.patch"))
        .current_dir(tmp.path().join("pristine"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output();
    let applied = match applied {
        Ok(o) => o,
        Err(e) => panic!("cannot run git apply: {e}"),
    };
    let patch = std::fs::read(out_dir.join("scratch.patch")).unwrap_or_default();
    assert!(
        applied.status.success(),
        "git apply refused the patch: {}\n{}",
        String::from_utf8_lossy(&applied.stderr),
        String::from_utf8_lossy(&patch)
    );
    let result = std::fs::read(pristine.join("kernel.py")).unwrap_or_default();
    assert!(
        result == new,
        "git apply did not rebuild the new kernel:\n{}",
        String::from_utf8_lossy(&patch)
    );
}

/// Whether the git CLI runs here.
pub fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Files of a `trace_ranks` input: `data` split at 0x00 into at most 8 parts, each
/// `NAME 0x01 CONTENT` (no 0x01: the whole part is the content of `f<i>.json`). A name keeps
/// only `[A-Za-z0-9_.-]` and `/` (one directory level, for sidecar folders), is at most 64
/// bytes, and gets `.json` unless it already ends in `.json` or `.json.gz`.
pub fn rank_files(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    data.split(|&b| b == 0)
        .take(8)
        .enumerate()
        .map(|(i, part)| {
            let (name, content) = match part.iter().position(|&b| b == 1) {
                Some(at) => (&part[..at], &part[at + 1..]),
                None => (&b""[..], part),
            };
            let mut name: String = name
                .iter()
                .map(|&b| b as char)
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
                .take(64)
                .collect();
            // One directory level at most, and nothing that climbs out or hides.
            let parts: Vec<&str> = name
                .split('/')
                .filter(|p| !p.is_empty() && !p.starts_with('.'))
                .collect();
            name = parts[parts.len().saturating_sub(2)..].join("/");
            if name.is_empty() {
                name = format!("f{i}");
            }
            let lower = name.to_ascii_lowercase();
            if !(lower.ends_with(".json") || lower.ends_with(".json.gz")) {
                name.push_str(".json");
            }
            (name, content.to_vec())
        })
        .collect()
}

/// The rank tag as trace.md "Input resolution: Directory selection" words it (`rank[_-]?(\d+)`, case-insensitive, first match,
/// on the file name), written independently of the reader: the digits, as text.
fn reference_rank_tag(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let b = lower.as_bytes();
    (0..b.len()).find_map(|i| {
        let rest = b.get(i..)?.strip_prefix(b"rank")?;
        let rest = match rest {
            [b'_' | b'-', d, ..] if d.is_ascii_digit() => &rest[1..],
            _ => rest,
        };
        let digits: String = rest
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .map(|&c| c as char)
            .collect();
        (!digits.is_empty()).then_some(digits)
    })
}

/// All-ranks mode on a directory built from the bytes (see [`rank_files`]): every rank-tagged
/// file is an entry (a tag too large for a number is a failed entry naming it), ranks ascend
/// without repeats, an entry that failed for its content really has no trace array or no
/// kernel, and the spread is exactly min / median / max over the entries that succeeded.
pub fn trace_ranks(data: &[u8]) {
    let Ok(tmp) = tempfile::tempdir() else { return };
    let mut written: Vec<(String, std::path::PathBuf)> = Vec::new();
    for (name, content) in rank_files(data) {
        let path = tmp.path().join(&name);
        let ok = path
            .parent()
            .is_none_or(|p| std::fs::create_dir_all(p).is_ok())
            && std::fs::write(&path, &content).is_ok();
        if ok && !written.iter().any(|(n, _)| *n == name) {
            written.push((name, path));
        }
    }
    // A name may have become a directory after it was written as a file.
    written.retain(|(_, p)| p.is_file());
    if written.is_empty() {
        return;
    }
    let base = |name: &str| name.rsplit('/').next().unwrap_or(name).to_string();
    let sidecar = |name: &str| {
        let file = base(name).to_ascii_lowercase();
        let dir_sidecar = name.rsplit_once('/').is_some_and(|(d, _)| {
            let d = d.to_ascii_lowercase();
            d == "capture_traces" || d.starts_with("graph_capture")
        });
        dir_sidecar
            || file.contains("graph_capture")
            || file
                .strip_prefix("bs_")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    let opts = Options::default();
    let report = match kernlens_trace::analyze_all_ranks(tmp.path(), &opts) {
        Ok(r) => r,
        // Without an eligible tagged file the one file of "Directory selection" is analysed,
        // and that selection skips files whose start shows they are not traces (an empty file,
        // a JSON object without `traceEvents`; since issue 20). So a directory of such files
        // has no candidate at all. A tagged rank file is never skipped: it is always an entry.
        Err(kernlens_trace::TraceError::NoUsableTrace { .. })
            if !written.iter().any(|(n, _)| {
                !sidecar(n)
                    && !base(n).starts_with("merged-")
                    && reference_rank_tag(&base(n)).is_some()
            }) =>
        {
            return;
        }
        Err(e) => panic!("all-ranks over {} files failed: {e}", written.len()),
    };
    let eligible: Vec<(&String, Option<String>)> = written
        .iter()
        .filter(|(n, _)| !sidecar(n) && !base(n).starts_with("merged-"))
        .map(|(n, _)| (n, reference_rank_tag(&base(n))))
        .collect();
    let entry_of = |name: &str| {
        report
            .ranks
            .iter()
            .filter(|e| e.trace_file == tmp.path().join(name).display().to_string())
            .collect::<Vec<_>>()
    };
    let any_tag = eligible.iter().any(|(_, t)| t.is_some());
    if any_tag {
        for (name, tag) in &eligible {
            let Some(digits) = tag else { continue };
            match digits.parse::<u64>() {
                Ok(rank) => assert!(
                    report.ranks.iter().any(|e| e.rank == Some(rank)),
                    "rank {rank} of {name} has no entry"
                ),
                Err(_) => {
                    let entries = entry_of(name);
                    assert!(
                        entries.len() == 1
                            && entries[0].rank.is_none()
                            && entries[0]
                                .result
                                .as_ref()
                                .is_err_and(|e| e.to_string().contains(digits.as_str())),
                        "{name}: a too-large rank tag must be one failed entry naming it"
                    );
                }
            }
        }
    } else {
        // No eligible file is tagged: the one file trace.md "Input resolution: Directory selection" chooses (which may be a tagged
        // `merged-*` file or sidecar, whose rank it then reports).
        assert_eq!(
            report.ranks.len(),
            1,
            "no rank tag: the one file directory selection picks"
        );
    }
    // Numbered entries ascend without repeats, and the untagged failures come last.
    let numbered: Vec<u64> = report.ranks.iter().filter_map(|e| e.rank).collect();
    assert!(numbered.windows(2).all(|w| w[0] < w[1]), "{numbered:?}");
    if any_tag {
        let first_none = report.ranks.iter().position(|e| e.rank.is_none());
        if let Some(at) = first_none {
            assert!(report.ranks[at..].iter().all(|e| e.rank.is_none()));
            assert!(report.ranks[at..].iter().all(|e| e.result.is_err()));
        }
    }
    // A content failure is a real one: the file read alone has no array or no kernel.
    for e in &report.ranks {
        let Err(err) = &e.result else { continue };
        if !matches!(err, kernlens_trace::TraceError::Unusable { .. }) {
            continue;
        }
        let alone = TraceSource::open(&e.trace_file).and_then(|s| analyze(&s, &opts));
        let Ok(alone) = alone else { continue };
        let no_array = alone.stream_errors.iter().any(|m| {
            m.starts_with("traceEvents array not found")
                || m.starts_with("traceEvents value is not an array")
                || m.starts_with("traceEvents array opener not found")
                || m.starts_with("traceEvents prefix exceeds")
        });
        assert!(
            no_array || (alone.attribution.kernel_count == 0 && alone.timeline.memcpy_us == 0.0),
            "{}: failed ({err}) but reads as a usable trace",
            e.trace_file
        );
    }
    // The spread is over the successes only.
    let ok: Vec<(Option<u64>, f64)> = report
        .ranks
        .iter()
        .filter_map(|e| {
            e.result
                .as_ref()
                .ok()
                .map(|a| (e.rank, a.timeline.busy_pct))
        })
        .collect();
    match &report.spread {
        None => assert!(ok.is_empty(), "successes but no spread"),
        Some(s) => {
            assert!(!ok.is_empty(), "a spread without a success");
            let mut values: Vec<f64> = ok.iter().map(|x| x.1).collect();
            values.sort_by(f64::total_cmp);
            let n = values.len();
            let median = if n % 2 == 1 {
                values[n / 2]
            } else {
                (values[n / 2 - 1] + values[n / 2]) / 2.0
            };
            assert_eq!(s.min.to_bits(), values[0].to_bits());
            assert_eq!(s.max.to_bits(), values[n - 1].to_bits());
            assert_eq!(s.median.to_bits(), median.to_bits());
            let first_with = |v: f64| {
                ok.iter()
                    .find(|x| x.1.to_bits() == v.to_bits())
                    .map(|x| x.0)
            };
            assert_eq!(Some(s.min_rank), first_with(s.min));
            assert_eq!(Some(s.max_rank), first_with(s.max));
        }
    }
    let doc = report.to_json();
    let listed = doc["ranks"].as_array().map_or(0, Vec::len);
    let failed = doc["failed"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, ok.len());
    assert_eq!(listed + failed, report.ranks.len());
    assert_eq!(doc["rank_count"].as_u64(), Some(report.ranks.len() as u64));
}
