//! The scratch.md "Performance goals" performance goals of scratch.md, measured (never asserted).
//!
//! Generates the reference tree (10,000 sources of ~6 KiB, `pkg/jit/` with 200 shared objects of
//! 10 MiB, 5,000 small objects under `pkg/jit/build/`, 200 `__pycache__` directories), then prints
//! a table, median of 5:
//! - `cp -a` of the package, and the anchor `git add -A && git commit` on that copy with the same
//!   exclude file;
//! - our whole `prepare` (copy + baseline) and its index step alone;
//!
//! It then runs criterion on `changes` after 3 edits (T3) and a sweep over 1,000 live sessions (T4).
//!
//! `KERNLENS_BENCH_SO_COUNT` scales the JIT output (default 200 x 10 MiB).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use kernlens_scratch::changes::changes;
use kernlens_scratch::location::LocationRequest;
use kernlens_scratch::owner::{OwnerMarker, SystemProbe};
use kernlens_scratch::prepare::{PrepareRequest, prepare};
use kernlens_scratch::sweep::{SweepOptions, sweep};

fn write(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        let _ = std::fs::create_dir_all(p);
    }
    if let Err(e) = std::fs::write(path, bytes) {
        panic!("cannot write {}: {e}", path.display());
    }
}

fn gen_reference_tree(root: &Path, so_count: usize) -> PathBuf {
    let pkg = root.join("site-packages/pkg");
    write(&pkg.join("__init__.py"), b"");
    let exts = ["py", "cu", "h"];
    let mut line = Vec::new();
    for i in 0..10_000usize {
        let dir = pkg.join(format!("mod{:03}", i % 250));
        if i < 250 {
            write(&dir.join("__init__.py"), b"");
        }
        line.clear();
        // ~6 KiB of distinct text per file.
        while line.len() < 6 * 1024 {
            line.extend_from_slice(
                format!("# file {i} line {} of generated source\n", line.len()).as_bytes(),
            );
        }
        write(&dir.join(format!("src{i}.{}", exts[i % 3])), &line);
    }
    let mut blob = vec![0u8; 10 << 20];
    for i in 0..so_count {
        blob[..8].copy_from_slice(&(i as u64).to_le_bytes());
        write(&pkg.join(format!("jit/lib{i}.so")), &blob);
    }
    for i in 0..5_000usize {
        write(
            &pkg.join(format!("jit/build/{:02}/obj{i}.o", i % 50)),
            format!("obj {i}").as_bytes(),
        );
    }
    for i in 0..200usize {
        write(
            &pkg.join(format!("mod{:03}/__pycache__/m.cpython-311.pyc", i)),
            b"\x00pyc",
        );
    }
    pkg.join("mod000/src0.py")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "a")
        .env("GIT_AUTHOR_EMAIL", "a@b")
        .env("GIT_COMMITTER_NAME", "a")
        .env("GIT_COMMITTER_EMAIL", "a@b")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} failed");
}

fn drop_caches_free(path: &Path) {
    let _ = std::fs::remove_dir_all(path);
}

fn main() {
    let so_count: usize = std::env::var("KERNLENS_BENCH_SO_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let tmp = tempfile::tempdir().expect("tempdir");
    let t0 = Instant::now();
    let source = gen_reference_tree(tmp.path(), so_count);
    let pkg = tmp.path().join("site-packages/pkg");
    eprintln!(
        "reference tree ({so_count} x 10 MiB .so) generated in {:.1?}",
        t0.elapsed()
    );
    let git_ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let (mut cp, mut anchor, mut create, mut index) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..5 {
        // Warm-cache copy, then the anchor on that copy with our exclude file.
        let copy = tmp.path().join(format!("cp{run}"));
        std::fs::create_dir_all(&copy).expect("mkdir");
        let t = Instant::now();
        let ok = Command::new("cp")
            .arg("-a")
            .arg(&pkg)
            .arg(&copy)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok);
        cp.push(t.elapsed());

        let out = tmp.path().join(format!("runs/s/a{run}"));
        let mut req = PrepareRequest::new(&source, LocationRequest::new(&out));
        req.branch = Some("kernlens/bench/k-000000000000".into());
        let t = Instant::now();
        let ws = prepare(&req).expect("prepare");
        create.push(t.elapsed());
        let stats = ws.baseline_stats.clone().expect("stats");
        index.push(Duration::from_secs_f64(stats.index_step_seconds));
        assert_eq!(stats.excluded_bytes_read, 0);

        if git_ok {
            git(&copy, &["init", "-q"]);
            std::fs::copy(
                ws.worktree.join(".git/info/exclude"),
                copy.join(".git/info/exclude"),
            )
            .expect("exclude");
            let t = Instant::now();
            git(&copy, &["add", "-A"]);
            git(&copy, &["commit", "-q", "-m", "x"]);
            anchor.push(t.elapsed());
        }
        drop_caches_free(&copy);
        if run < 4 {
            drop_caches_free(&out);
        }
    }
    let (cp, create, index) = (median(cp), median(create), median(index));
    println!("scratch performance goals, median of 5 (warm cache, local disk)");
    println!(
        "  cp -a package                      {:>9.3} s",
        cp.as_secs_f64()
    );
    println!(
        "  prepare (copy + baseline)          {:>9.3} s",
        create.as_secs_f64()
    );
    println!(
        "  index step (exclude → commit+refs) {:>9.3} s   goal < 1.0 s",
        index.as_secs_f64()
    );
    if !anchor.is_empty() {
        let anchor = median(anchor);
        println!(
            "  git add -A && git commit (anchor)  {:>9.3} s",
            anchor.as_secs_f64()
        );
        println!(
            "  index / anchor                     {:>9.2} x   goal <= 1.2",
            index.as_secs_f64() / anchor.as_secs_f64()
        );
        println!(
            "  prepare / (cp + anchor)            {:>9.2} x   goal <= 1.5 (1.0)",
            create.as_secs_f64() / (cp + anchor).as_secs_f64()
        );
    }

    let mut c = Criterion::default().configure_from_args().sample_size(20);
    // T3: the last workspace with 3 edited files.
    let ws = kernlens_scratch::workspace::Workspace::open(&tmp.path().join("runs/s/a4/worktree"))
        .expect("open");
    for rel in [
        "pkg/mod001/src1.cu",
        "pkg/mod002/src2.h",
        "pkg/mod003/src3.py",
    ] {
        let p = ws.worktree.join(rel);
        let mut text = std::fs::read(&p).expect("read");
        text.extend_from_slice(b"// edited\n");
        std::fs::write(&p, text).expect("write");
    }
    c.bench_function("T3 changes after 3 edits (10k files)", |b| {
        b.iter(|| {
            let found = changes(&ws, None).expect("changes");
            assert_eq!(found.len(), 3);
        })
    });
    // T4: 1,000 live sessions owned by this process.
    let local = tmp.path().join("local");
    for i in 0..1000 {
        let dir = local.join(format!("session-{i}"));
        std::fs::create_dir_all(dir.join("a/worktree")).expect("mkdir");
        OwnerMarker::current().write_to(&dir).expect("marker");
    }
    let probe = SystemProbe::new();
    c.bench_function("T4 sweep 1000 live sessions", |b| {
        b.iter(|| {
            let r = sweep(&local, &SweepOptions::default(), &probe).expect("sweep");
            assert_eq!(r.kept_alive.len(), 1000);
        })
    });
    c.final_summary();
}
