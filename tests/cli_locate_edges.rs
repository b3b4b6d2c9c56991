//! `kernlens locate` and `triage` on inputs at the edges of what a real tree
//! and trace hold, through the built binary: file names that are not UTF-8
//! (written lossily with their bytes beside them), and a hot kernel whose name
//! is 200 KB long (planned and searched in bounded time and memory).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn kernlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .output()
        .unwrap()
}

/// `kernlens locate --root ROOT --no-discover ARGS...`; the root may be any
/// OS path, UTF-8 or not.
fn locate(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .arg("locate")
        .arg("--root")
        .arg(root)
        .arg("--no-discover")
        .args(args)
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
#[test]
fn non_utf8_paths_are_written_lossily_with_their_bytes_in_hex() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    // A directory and a file whose names are Latin-1, not UTF-8.
    let dir = root.join(std::ffi::OsStr::from_bytes(b"pkg_\xe9t\xe9"));
    std::fs::create_dir(&dir).unwrap();
    let bad = dir.join(std::ffi::OsStr::from_bytes(b"k\xff.py"));
    std::fs::write(
        &bad,
        "import triton\n\n@triton.jit\ndef _edge_path_kernel(x):\n    pass\n",
    )
    .unwrap();
    // A UTF-8 file that only mentions the kernel: a second candidate.
    std::fs::write(root.join("use.py"), "from x import _edge_path_kernel\n").unwrap();
    let doc = json(&locate(&root, &["--json", "_edge_path_kernel"]));
    let r = &doc["results"][0];
    assert_eq!(r["found"], true, "{r}");
    let want_hex = hex(&bad.clone().into_os_string().into_vec());
    assert_eq!(r["path"], Value::from(bad.to_string_lossy().into_owned()));
    assert!(r["path"].as_str().unwrap().contains('\u{fffd}'));
    assert_eq!(r["path_bytes"], Value::from(want_hex.clone()));
    // The key sits right after `path`, where a reader of the schema looks.
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    let at = keys.iter().position(|k| *k == "path").unwrap();
    assert_eq!(keys[at + 1], "path_bytes");
    let candidates = r["candidates"].as_array().unwrap();
    let winner = candidates
        .iter()
        .find(|c| c["path_bytes"] == want_hex.as_str())
        .expect("the winner is among the candidates with its bytes");
    assert_eq!(winner["path"], r["path"]);
    // UTF-8 paths carry no bytes field.
    let utf8 = candidates
        .iter()
        .find(|c| c["path"] == root.join("use.py").to_str().unwrap());
    if let Some(c) = utf8 {
        assert!(c.get("path_bytes").is_none(), "{c}");
    }
    assert!(doc["roots"][0].get("path_bytes").is_none());
    // The table output does not fail either.
    let out = locate(&root, &["_edge_path_kernel"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("k\u{fffd}.py"));
}

#[cfg(unix)]
#[test]
fn a_non_utf8_root_is_written_lossily_with_its_bytes() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp
        .path()
        .canonicalize()
        .unwrap()
        .join(std::ffi::OsStr::from_bytes(b"r\xfeot"));
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("k.py"), "def _edge_root_kernel():\n    pass\n").unwrap();
    let doc = json(&locate(&root, &["--json", "_edge_root_kernel"]));
    assert_eq!(
        doc["roots"][0]["path_bytes"],
        Value::from(hex(&root.clone().into_os_string().into_vec()))
    );
    let r = &doc["results"][0];
    assert_eq!(r["found"], true, "{r}");
    assert_eq!(
        r["path_bytes"],
        Value::from(hex(&root.join("k.py").into_os_string().into_vec()))
    );
}

/// The bundled eager trace with its hottest kernel renamed to `name`, gzipped
/// into `dir`.
fn trace_with_hot_kernel_named(dir: &Path, name: &str) -> PathBuf {
    use std::io::{Read, Write};
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gz = std::fs::read(repo.join("fixtures/traces/eager.json.gz")).unwrap();
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..])
        .read_to_end(&mut text)
        .unwrap();
    let mut trace: Value = serde_json::from_slice(&text).unwrap();
    let events = trace["traceEvents"].as_array_mut().unwrap();
    // Total device time per kernel name: the hottest one is renamed
    // everywhere it occurs, so it stays the hottest row.
    let mut totals: std::collections::HashMap<String, f64> = Default::default();
    for e in events.iter().filter(|e| e["cat"] == "kernel") {
        *totals
            .entry(e["name"].as_str().unwrap().to_owned())
            .or_default() += e["dur"].as_f64().unwrap();
    }
    let hottest = totals
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(n, _)| n.clone())
        .unwrap();
    for e in events.iter_mut().filter(|e| e["name"] == hottest.as_str()) {
        e["name"] = Value::from(name);
    }
    let path = dir.join("long_name.json.gz");
    let file = std::fs::File::create(&path).unwrap();
    let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    enc.write_all(&serde_json::to_vec(&trace).unwrap()).unwrap();
    enc.finish().unwrap();
    path
}

#[test]
fn triage_of_a_trace_whose_hot_kernel_has_a_200kb_name_finds_its_def() {
    let tmp = tempfile::tempdir().unwrap();
    // A Triton-style name of 100k one-letter segments: 200 KB, the shape an
    // f-string-built name takes when it runs away.
    let name = format!(
        "_fused{}",
        (0..100_000)
            .map(|i| ['_', char::from(b'a' + (i % 26) as u8)])
            .flat_map(|p| p.into_iter())
            .collect::<String>()
    );
    assert!(name.len() > 200_000);
    let root = tmp.path().join("src");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(
        root.join("long.py"),
        format!("import triton\n\n@triton.jit\ndef {name}(x):\n    pass\n"),
    )
    .unwrap();
    let trace = trace_with_hot_kernel_named(tmp.path(), &name);
    let t = Instant::now();
    let out = kernlens(&[
        "triage",
        trace.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--no-discover",
        "--no-gate",
        "--json",
    ]);
    let took = t.elapsed();
    let doc = json(&out);
    // Loose: quadratic planning alone took minutes in a debug build.
    assert!(took < Duration::from_secs(60), "triage took {took:?}");
    let group = doc["task_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["operation"] == name.as_str())
        .expect("the renamed kernel is a hot row");
    let source = &group["source"];
    assert_eq!(source["found"], true);
    assert_eq!(source["line"], 4);
    assert!(
        source["path"]
            .as_str()
            .is_some_and(|p| Path::new(p).ends_with("src/long.py")),
        "the 200 KB kernel resolves to its def"
    );
}

#[cfg(unix)]
#[test]
fn triage_json_writes_a_non_utf8_source_path_lossily_with_its_bytes() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("src");
    // The defining file sits in a directory whose name is Latin-1, not UTF-8.
    let dir = root.join(std::ffi::OsStr::from_bytes(b"pkg_\xe9"));
    std::fs::create_dir_all(&dir).unwrap();
    let name = "_latin_tree_scale_kernel";
    let def = dir.join("k.py");
    std::fs::write(
        &def,
        format!("import triton\n\n@triton.jit\ndef {name}(x):\n    pass\n"),
    )
    .unwrap();
    let trace = trace_with_hot_kernel_named(tmp.path(), name);
    let out = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .arg("triage")
        .arg(&trace)
        .arg("--root")
        .arg(&root)
        .args(["--no-discover", "--no-gate", "--json"])
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .output()
        .unwrap();
    let doc = json(&out);
    let group = doc["task_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["operation"] == name)
        .expect("the renamed kernel is a hot row");
    let source = &group["source"];
    assert_eq!(source["found"], true);
    assert_eq!(
        source["path"].as_str(),
        Some(def.to_string_lossy().as_ref())
    );
    assert_eq!(
        source["path_bytes"].as_str(),
        Some(hex(&def.clone().into_os_string().into_vec()).as_str())
    );
}
