//! Real names on real code (locate.md "Acceptance scenarios: Real H200 names and traces"): `gen_traces.py` and the
//! inductor sources behind the H200 fixtures, with launcher evidence read
//! from the real traces through kernlens-trace's observer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use kernlens_locate::{
    EventId, LauncherEvent, LauncherIndex, LauncherOptions, LocateOptions, Locator, Method,
    SourceKind,
};
use kernlens_trace::{EventObserver, ObservedEvent, Options, TraceId, TraceSource};

/// The project's own captures, bundled with the repository.
fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces")
        .canonicalize()
        .expect("fixtures/traces is part of the checkout")
}

/// The script that made the captures: the source root their Triton kernels live in.
fn src_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/src")
        .canonicalize()
        .expect("fixtures/src is part of the checkout")
}

/// An owned copy of one observed event: (cat, name, pid, tid, ts, dur, correlation).
type OwnedEvent = (String, String, EvId, EvId, i64, i64, Option<i64>);

#[derive(Default)]
struct Owned(Vec<OwnedEvent>);

#[derive(Clone)]
enum EvId {
    Int(i64),
    Str(String),
    Null,
}

impl EvId {
    fn borrow(&self) -> EventId<'_> {
        match self {
            EvId::Int(i) => EventId::Int(*i),
            EvId::Str(s) => EventId::Str(s),
            EvId::Null => EventId::Null,
        }
    }
}

impl EventObserver for Owned {
    fn observe(&mut self, e: &ObservedEvent<'_>) {
        let id = |t: TraceId<'_>| match t {
            TraceId::Int(i) => EvId::Int(i),
            TraceId::Str(s) => EvId::Str(s.to_owned()),
            _ => EvId::Null,
        };
        self.0.push((
            e.cat.to_owned(),
            e.name.to_owned(),
            id(e.pid),
            id(e.tid),
            e.ts_ns,
            e.dur_ns,
            e.correlation,
        ));
    }
}

fn index(trace: &str, opts: &LauncherOptions) -> LauncherIndex {
    let source = TraceSource::open(traces().join(trace)).unwrap();
    let mut events = Owned::default();
    kernlens_trace::analyze_observed(&source, &Options::default(), &mut events).unwrap();
    LauncherIndex::from_events(
        events.0.iter().map(|(c, n, p, t, ts, d, corr)| {
            LauncherEvent::new(c, n, p.borrow(), t.borrow(), *ts, *d, *corr)
        }),
        opts,
    )
}

fn kernel_names(idx: &LauncherIndex) -> Vec<String> {
    idx.entries().iter().map(|(n, _)| (*n).to_owned()).collect()
}

const NVJET: &str = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT";

#[test]
fn eager_launchers_are_the_user_frames() {
    let idx = index("eager.json.gz", &LauncherOptions::default());
    let l = idx.get("_fused_scale_bias_kernel").unwrap();
    assert_eq!(
        (l.path.as_str(), l.line, l.function.as_str()),
        ("gen_traces.py", 47, "fused_scale")
    );
    assert_eq!((l.launches, l.distinct_frames), (32, 1));
    let mut counts = Vec::new();
    for name in kernel_names(&idx) {
        if name == "_fused_scale_bias_kernel" {
            continue;
        }
        let l = idx.get(&name).unwrap();
        assert_eq!(
            (l.path.as_str(), l.line, l.function.as_str()),
            ("gen_traces.py", 62, "forward"),
            "{name}"
        );
        counts.push(l.launches);
    }
    counts.sort_unstable();
    assert_eq!(counts, [32, 32, 64, 64, 128]);
    assert_eq!(idx.get(NVJET).unwrap().launches, 128);
}

#[test]
fn compiled_launchers_are_the_inductor_call() {
    let idx = index("compiled.json.gz", &LauncherOptions::default());
    assert_eq!(idx.len(), 9);
    for (_, l) in idx.entries() {
        assert_eq!(
            l.path,
            "/tmp/inductor_cache/wd/cwd45vawkk2lzvn3kqrgcxhn3c6i3rtuqtnfyxzorccykir675em.py"
        );
        assert_eq!((l.line, l.function.as_str()), (697, "call"));
    }
}

#[test]
fn graph_replayed_kernels_have_no_evidence() {
    let idx = index("compiled_ro.json.gz", &LauncherOptions::default());
    let entries = idx.entries();
    assert_eq!(entries.len(), 1);
    let (name, l) = entries[0];
    assert!(name.contains("multi_tensor_apply_kernel"));
    assert!(
        l.path
            .ends_with("kn/ckn6giudbyibsix77hlvefqc2dih42u6jybnfgymrwi2vb4pd2gf.py")
    );
    assert_eq!((l.line, l.function.as_str(), l.launches), (941, "call", 8));
}

/// The builder as the reader's observer takes kernels it knows by their name number
/// (`EventObserver::observe_numbered`); built from the same events handed whole, the index
/// is the same, launch counts included, on every fixture with launchers and without.
#[test]
fn kernels_taken_by_number_give_the_index_of_whole_events() {
    for t in [
        "eager.json.gz",
        "compiled.json.gz",
        "compiled_ro.json.gz",
        "graph_many.json.gz",
    ] {
        let opts = LauncherOptions::default();
        let source = TraceSource::open(traces().join(t)).unwrap();
        let by_number = LauncherIndex::from_trace(&source, &opts).unwrap();
        let whole = index(t, &opts);
        assert_eq!(by_number.entries(), whole.entries(), "{t}");
    }
}

#[test]
fn graph_traces_without_frames_give_an_empty_index() {
    for t in ["graph.json.gz", "graph_many.json.gz"] {
        assert!(index(t, &LauncherOptions::default()).is_empty(), "{t}");
    }
}

#[test]
fn narrow_skip_prefixes_expose_the_triton_driver_frame() {
    let mut opts = LauncherOptions::default();
    opts.skip_prefixes = vec!["triton/runtime/".to_owned()];
    let idx = index("eager.json.gz", &opts);
    let l = idx.get("_fused_scale_bias_kernel").unwrap();
    assert_eq!(
        (l.path.as_str(), l.line, l.function.as_str()),
        ("triton/backends/nvidia/driver.py", 700, "__call__")
    );
}

#[test]
fn definition_corroborated_by_the_launcher() {
    let mut l = Locator::builder().root(src_root()).build().unwrap();
    let opts = LocateOptions::default()
        .with_launchers(index("eager.json.gz", &LauncherOptions::default()));
    let r = l.locate("_fused_scale_bias_kernel", &opts);
    assert!(r.path.as_ref().unwrap().ends_with("gen_traces.py"));
    assert_eq!(r.line, Some(39));
    assert_eq!(r.function.as_deref(), Some("_fused_scale_bias_kernel"));
    assert_eq!(r.kind, SourceKind::Triton);
    assert_eq!(r.method, Method::TracePythonStack);
    assert_eq!(r.grep_method, Method::Definition);
    let launcher = r.launcher.unwrap();
    assert_eq!(
        (launcher.line, launcher.function.as_str()),
        (47, "fused_scale")
    );
    assert!(launcher.corroborated);
}

#[test]
fn library_kernel_is_not_found_but_its_launcher_is_reported() {
    let mut l = Locator::builder().root(src_root()).build().unwrap();
    let idx = index("eager.json.gz", &LauncherOptions::default());
    let r3 = kernel_names(&idx)
        .into_iter()
        .find(|n| n.contains("vectorized_layer_norm_kernel"))
        .unwrap();
    let r = l.locate(&r3, &LocateOptions::default().with_launchers(idx));
    assert!(!r.found && r.path.is_none());
    assert_eq!(r.kind, SourceKind::Unknown);
    assert_eq!(r.reason.map(|r| r.as_str()), Some("launcher_unconfirmed"));
    let launcher = r.launcher.unwrap();
    assert_eq!((launcher.line, launcher.function.as_str()), (62, "forward"));
    assert!(!launcher.corroborated);
}

/// Extracts the inductor sources into `<tmp>/inductor_cache/` with `tar`.
fn inductor_cache() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inductor_cache");
    std::fs::create_dir(&dir).unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(traces().join("inductor_src.tar.gz"))
        .arg("-C")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let dir = dir.canonicalize().unwrap();
    (tmp, dir)
}

fn rel(p: &Path, root: &Path) -> String {
    p.strip_prefix(root).unwrap().display().to_string()
}

#[test]
fn standalone_kernel_file_beats_wrapper_assignments() {
    let (_tmp, root) = inductor_cache();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let r = l.locate("triton_poi_fused_gelu_view_2", &LocateOptions::default());
    assert_eq!(
        rel(r.path.as_ref().unwrap(), &root),
        "fn/cfn7gpwbrmninztpsshfnyzjxxmqs7sg53grzbdnxlkebugzkoj5.py"
    );
    assert_eq!(r.line, Some(18));
    assert_eq!(r.candidates[0].score.definition, 0);
    assert_eq!(r.kind, SourceKind::RuntimeGenerated);
    let rest: Vec<String> = r.candidates[1..]
        .iter()
        .map(|c| rel(&c.path, &root))
        .collect();
    assert_eq!(rest.len(), 2);
    assert!(rest[0].starts_with("kn/") && rest[1].starts_with("wd/"));
    assert!(
        r.candidates[1..]
            .iter()
            .all(|c| c.score.definition == 1 && c.why[0].starts_with("definition:assign@"))
    );
}

#[test]
fn launcher_breaks_ties_but_never_beats_a_stronger_definition() {
    let (_tmp, root) = inductor_cache();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let opts = LocateOptions::default()
        .with_launchers(index("compiled.json.gz", &LauncherOptions::default()));
    let r = l.locate("triton_poi_fused_gelu_view_2", &opts);
    assert!(rel(r.path.as_ref().unwrap(), &root).starts_with("fn/"));
    assert_eq!(r.method, Method::Definition);
    assert!(rel(&r.candidates[1].path, &root).starts_with("wd/"));
    assert!(r.candidates[1].why.contains(&"launcher_file".to_owned()));
    let launcher = r.launcher.unwrap();
    assert!(!launcher.corroborated);
    assert_eq!(launcher.candidate_rank, Some(2));
    // L5: the absolute frame path from the capture machine is re-rooted here.
    assert_eq!(
        launcher.resolved_path.unwrap(),
        root.join("wd/cwd45vawkk2lzvn3kqrgcxhn3c6i3rtuqtnfyxzorccykir675em.py")
    );
}

#[test]
fn each_inductor_kernel_is_found_in_its_standalone_file() {
    let (_tmp, root) = inductor_cache();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let cases = [
        ("triton_per_fused_native_layer_norm_0", "ud/"),
        ("triton_per_fused_add_native_layer_norm_view_1", "o2/"),
        ("triton_per_fused_add_mul_native_layer_norm_view_3", "nr/"),
        ("triton_per_fused_add_mul_native_layer_norm_view_4", "ij/"),
        ("triton_per_fused_add_mul_native_layer_norm_view_5", "yo/"),
        ("triton_poi_fused_add_mul_view_6", "ua/"),
    ];
    let names: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let rs = l.locate_many(&names, &LocateOptions::default());
    for ((name, dir), r) in cases.iter().zip(&rs) {
        assert!(
            rel(r.path.as_ref().unwrap(), &root).starts_with(dir),
            "{name}"
        );
        assert_eq!(r.line, Some(18), "{name}");
        assert_eq!(r.kind, SourceKind::RuntimeGenerated, "{name}");
    }
}

#[test]
fn vendor_kernel_is_not_found_and_labelled_vendor_binary() {
    let (_tmp, root) = inductor_cache();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let opts = LocateOptions::default()
        .with_launchers(index("compiled.json.gz", &LauncherOptions::default()));
    let r = l.locate(NVJET, &opts);
    assert!(!r.found);
    assert_eq!(r.kind, SourceKind::VendorBinary);
    // The launcher frame is still reported, but the reason is the vendor rule's (triage's).
    assert!(r.launcher.is_some());
    assert_eq!(r.reason.map(|r| r.as_str()), Some("vendor_binary"));
}

/// The builder fed by the reader's observer (which numbers kernel names, so it finds a
/// kernel by its number) builds the same index as one fed owned copies of the events
/// (no numbers, every name hashed): on every bundled capture, and with one builder fed
/// two reads in turn, whose numbers name different kernels (a number of one read must
/// never find another read's kernel).
#[test]
fn numbered_names_index_as_hashed_names_do_even_across_reads() {
    let opts = LauncherOptions::default();
    let owned = |trace: &str| {
        let source = TraceSource::open(traces().join(trace)).unwrap();
        let mut events = Owned::default();
        kernlens_trace::analyze_observed(&source, &Options::default(), &mut events).unwrap();
        events.0
    };
    let hashed = |events: &[OwnedEvent]| {
        LauncherIndex::from_events(
            events.iter().map(|(c, n, p, t, ts, d, corr)| {
                LauncherEvent::new(c, n, p.borrow(), t.borrow(), *ts, *d, *corr)
            }),
            &opts,
        )
    };
    let entries = |idx: &LauncherIndex| -> Vec<(String, kernlens_locate::Launcher)> {
        idx.entries()
            .into_iter()
            .map(|(n, l)| (n.to_owned(), l.clone()))
            .collect()
    };
    let traces_used = [
        "eager.json.gz",
        "compiled.json.gz",
        "graph.json.gz",
        "train.json.gz",
    ];
    for trace in traces_used {
        let source = TraceSource::open(traces().join(trace)).unwrap();
        let numbered = LauncherIndex::from_trace(&source, &opts).unwrap();
        assert_eq!(
            entries(&numbered),
            entries(&hashed(&owned(trace))),
            "{trace}"
        );
    }
    let (a, b) = ("compiled.json.gz", "eager.json.gz");
    let mut builder = kernlens_locate::LauncherIndexBuilder::new(opts.clone());
    for trace in [a, b] {
        let source = TraceSource::open(traces().join(trace)).unwrap();
        kernlens_trace::analyze_observed(&source, &Options::default(), &mut builder).unwrap();
    }
    let both: Vec<OwnedEvent> = owned(a).into_iter().chain(owned(b)).collect();
    let two_reads = builder.finish();
    assert!(!two_reads.is_empty());
    assert_eq!(entries(&two_reads), entries(&hashed(&both)));
}
