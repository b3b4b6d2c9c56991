//! `kernlens report` and `triage --html` through the built binary, on the bundled real
//! captures: the page's lanes and busy figures against `summary --json` for the same
//! scope, the SVG alone, and the output rules (atomic, never the input).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/trace_files.rs"]
mod trace_files;

use std::path::Path;
use std::process::{Command, Output};

use trace_files::fixture;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn xml(text: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, opts).unwrap()
}

fn attr<'a>(n: &roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    n.attribute(name)
        .unwrap_or_else(|| panic!("{} has no {name}", n.tag_name().name()))
}

fn num(n: &roxmltree::Node<'_, '_>, name: &str) -> f64 {
    attr(n, name).parse().unwrap()
}

/// The page of `trace` and the summary of the same scope.
fn page_and_summary(trace: &Path, window: &str) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let t = trace.to_str().unwrap();
    let o = run(&[
        "report",
        t,
        "--window",
        window,
        "-o",
        page.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("wrote "));
    let s = run(&["summary", t, "--window", window, "--json"]);
    ok(&s);
    (
        std::fs::read_to_string(&page).unwrap(),
        serde_json::from_slice(&s.stdout).unwrap(),
    )
}

/// The pooled lane and each device agree with the summary: busy% (the lanes' union of
/// kernels and copies) and the lanes' kernel union, measured from the recorded
/// intervals, to the nanosecond.
fn assert_agrees(html: &str, summary: &serde_json::Value) {
    let doc = xml(html);
    let tl = &summary["timeline"];
    let lanes: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("lane"))
        .collect();
    let pooled = &lanes[0];
    assert_eq!(attr(pooled, "data-kind"), "pooled");
    let busy_pct = tl["busy_pct"].as_f64().unwrap();
    assert!((num(pooled, "data-busy-pct") - busy_pct).abs() < 1e-3);
    let ku_ns = (tl["kernel_union_us"].as_f64().unwrap() * 1000.0).round();
    assert_eq!(num(pooled, "data-kernel-union-ns"), ku_ns);
    // One stream lane per stream, each on a device the summary lists.
    let devices: Vec<String> = tl["per_device"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d["device"]
                .as_i64()
                .map_or(String::new(), |d| d.to_string())
        })
        .collect();
    let streams: Vec<_> = lanes
        .iter()
        .filter(|g| attr(g, "data-kind") == "stream")
        .collect();
    assert!(!streams.is_empty());
    assert_eq!(streams.len() + 1, lanes.len());
    for s in &streams {
        assert!(devices.contains(&attr(s, "data-device").to_owned()));
    }
    let rows: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("data-device").is_some())
        .collect();
    assert_eq!(rows.len(), devices.len());
    for (row, d) in rows.iter().zip(tl["per_device"].as_array().unwrap()) {
        let want = d["busy_pct"].as_f64().unwrap();
        assert!((num(row, "data-busy-pct") - want).abs() < 1e-3);
        assert!((num(row, "data-lane-busy-pct") - want).abs() < 1e-3);
        let ku = (d["kernel_union_us"].as_f64().unwrap() * 1000.0).round();
        assert_eq!(num(row, "data-lane-kernel-union-ns"), ku);
    }
    // The headline figures are the summary's.
    assert!(html.contains(&format!("GPU busy <b>{busy_pct:.2}%</b>")));
}

#[test]
fn report_lanes_and_busy_agree_with_summary_on_graph_eager_and_multistream() {
    for name in ["graph.json.gz", "eager.json.gz", "multistream.json.gz"] {
        let (html, summary) = page_and_summary(&fixture(name), "none");
        assert_agrees(&html, &summary);
        assert!(
            !html.contains("class=\"window\""),
            "{name}: no window chosen"
        );
    }
}

/// Every stream that ran device work gets a lane, a stream of copies alone included:
/// multistream's copies (about 98 ms on their own stream) are drawn and counted in that
/// lane's busy.
#[test]
fn report_draws_a_lane_per_stream_including_the_copy_stream_on_multistream() {
    let path = fixture("multistream.json.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap()),
        &mut text,
    )
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Streams of device work in order of first sight, each with its intervals (ns).
    type Intervals = Vec<(i64, i64)>;
    let mut streams: Vec<((i64, i64), Intervals)> = Vec::new();
    for e in doc["traceEvents"].as_array().unwrap() {
        let cat = e["cat"].as_str().unwrap_or("");
        if !matches!(cat, "kernel" | "gpu_memcpy" | "gpu_memset") {
            continue;
        }
        let key = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let s = (e["ts"].as_f64().unwrap() * 1000.0).round() as i64;
        let iv = (s, s + (e["dur"].as_f64().unwrap() * 1000.0).round() as i64);
        match streams.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ivs)) => ivs.push(iv),
            None => streams.push((key, vec![iv])),
        }
    }
    assert_eq!(
        streams.len(),
        2,
        "kernels and memsets on one stream, copies on another"
    );
    let (html, summary) = page_and_summary(&path, "none");
    assert_agrees(&html, &summary);
    let page = xml(&html);
    let drawn: Vec<_> = page
        .descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("lane"))
        .filter(|g| attr(g, "data-kind") == "stream")
        .collect();
    assert_eq!(drawn.len(), streams.len());
    for (g, ((pid, tid), ivs)) in drawn.iter().zip(&mut streams) {
        let label = g.descendants().find(|n| n.has_tag_name("text")).unwrap();
        assert_eq!(
            label.text(),
            Some(format!("GPU {pid} · stream {tid}").as_str())
        );
        ivs.sort_unstable();
        let (mut union, mut end) = (0i64, i64::MIN);
        for &(s, e) in ivs.iter() {
            if e > end {
                union += e - s.max(end);
                end = e;
            }
        }
        // µs→ns rounding may differ by a nanosecond or so per event.
        let busy = num(g, "data-busy-ns");
        assert!(
            (busy - union as f64).abs() <= 2.0 * ivs.len() as f64,
            "stream {tid}: lane busy {busy} ns, union {union} ns"
        );
    }
    let copies = drawn
        .iter()
        .find(|g| num(g, "data-kernel-union-ns") == 0.0)
        .expect("a lane of copies alone");
    let copy_busy = num(copies, "data-busy-ns");
    assert!(copy_busy > 95e6, "the copy stream is busy {copy_busy} ns");
}

#[test]
fn report_of_a_steady_window_shades_it_and_measures_the_window() {
    let (html, summary) = page_and_summary(&fixture("compiled.json.gz"), "auto");
    assert_eq!(summary["aggregation_scope"], "steady_state");
    assert_agrees(&html, &summary);
    let doc = xml(&html);
    let mark = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("window-mark"))
        .expect("the window is shaded");
    let start = summary["window"]["start_us"].as_f64().unwrap() * 1000.0;
    assert_eq!(num(&mark, "data-start-ns"), start.round());
    assert!(html.contains("steady window: "));
}

#[test]
fn report_marks_graph_replays_and_warns_when_they_are_under_recorded() {
    let (html, summary) = page_and_summary(&fixture("graph.json.gz"), "none");
    assert_eq!(summary["graph"]["under_recorded"], false);
    assert!(html.contains(r#"data-strip="graph""#));
    assert!(!html.contains("id=\"under-recorded\""));
    let (html, _) = page_and_summary(&fixture("graph_under_recorded.json.gz"), "none");
    let doc = xml(&html);
    let banner = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("under-recorded"))
        .expect("an under-recorded banner");
    assert_eq!(banner.attribute("role"), Some("alert"));
    assert!(html.contains("only 10 of 40 launches"));
}

#[test]
fn report_svg_is_the_timeline_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.svg");
    let t = fixture("multistream.json.gz");
    ok(&run(&[
        "report",
        t.to_str().unwrap(),
        "--svg",
        "--bins",
        "2000",
        "-o",
        out.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&out).unwrap();
    let doc = xml(&text);
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("data-bins"), Some("2000"));
    assert!(!text.contains("<table"));
}

#[test]
fn report_refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("eager.json.gz");
    std::fs::copy(fixture("eager.json.gz"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let c = copy.to_str().unwrap();
    let o = run(&["report", c, "-o", c]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot write report"), "{err}");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // No temporary file is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn report_with_roots_lists_task_groups_and_rejects_a_window() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.html");
    let t = fixture("eager.json.gz");
    let (t, p, root) = (
        t.to_str().unwrap(),
        page.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    );
    ok(&run(&["report", t, "--root", root, "-o", p]));
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = xml(&html);
    let table = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("task-groups"))
        .expect("a task-group table");
    assert!(table.descendants().filter(|n| n.has_tag_name("tr")).count() > 1);
    assert!(
        html.contains("vendor_binary"),
        "nvjet kernels are vendor code"
    );
    let o = run(&["report", t, "--root", root, "--window", "auto", "-o", p]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn triage_html_writes_the_report_page_beside_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("triage.html");
    let t = fixture("graph.json.gz");
    let o = run(&[
        "triage",
        t.to_str().unwrap(),
        "--no-discover",
        "--root",
        dir.path().to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("task group"));
    let html = std::fs::read_to_string(&page).unwrap();
    let s = run(&["summary", t.to_str().unwrap(), "--json"]);
    assert_agrees(&html, &serde_json::from_slice(&s.stdout).unwrap());
    assert!(html.contains("id=\"task-groups\""));
    assert!(html.contains("id=\"gate\""));
}

/// The baseline table's rows of a page: `(status, Δ µs, operation)`.
fn baseline_rows(html: &str) -> Vec<(String, f64, String)> {
    let doc = xml(html);
    let table = doc
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("id") == Some("baseline"))
        .expect("the page has a baseline table");
    table
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("data-status").is_some())
        .map(|r| {
            let operation = r
                .children()
                .rfind(|n| n.has_tag_name("td"))
                .and_then(|td| td.text())
                .unwrap()
                .to_owned();
            (
                attr(&r, "data-status").to_owned(),
                num(&r, "data-delta-us"),
                operation,
            )
        })
        .collect()
}

fn report_with_baseline(trace: &Path, baseline: &Path, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let mut args = vec![
        "report",
        trace.to_str().unwrap(),
        "--baseline",
        baseline.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ];
    args.extend(extra);
    ok(&run(&args));
    std::fs::read_to_string(&page).unwrap()
}

#[test]
fn report_against_itself_shows_zero_change_on_every_group() {
    let eager = fixture("eager.json.gz");
    let html = report_with_baseline(&eager, &eager, &[]);
    assert!(html.contains("Change since baseline"));
    let rows = baseline_rows(&html);
    assert!(!rows.is_empty());
    for (status, delta, operation) in &rows {
        assert_eq!(status, "matched", "{operation}");
        assert_eq!(*delta, 0.0, "{operation}");
    }
    // The top kernels table is still cut to --top (10) although every row was compared.
    let doc = xml(&html);
    let kernels = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("kernels"))
        .unwrap();
    let kernel_rows = kernels
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .count();
    assert!(kernel_rows <= 11, "{kernel_rows} rows");
    // Without --baseline there is no such section.
    let (plain, _) = page_and_summary(&eager, "none");
    assert!(!plain.contains("Change since baseline"));
}

#[test]
fn report_of_compiled_against_eager_shows_fused_kernels_added_and_eager_ones_removed() {
    let eager = fixture("eager.json.gz");
    let compiled = fixture("compiled.json.gz");
    let html = report_with_baseline(&compiled, &eager, &["--top", "0"]);
    let rows = baseline_rows(&html);
    let diff = run(&[
        "diff",
        eager.to_str().unwrap(),
        compiled.to_str().unwrap(),
        "--json",
    ]);
    ok(&diff);
    let doc: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    let count = |status: &str| rows.iter().filter(|r| r.0 == status).count() as u64;
    // The same facts `kernlens diff` reports, and every group shown with --top 0.
    assert_eq!(count("added"), doc["added"].as_u64().unwrap());
    assert_eq!(count("removed"), doc["removed"].as_u64().unwrap());
    assert!(count("added") > 0 && count("removed") > 0);
    assert!(
        rows.iter()
            .filter(|r| r.0 == "added")
            .all(|r| r.2.starts_with("triton_") && r.1 > 0.0),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.0 == "removed" && r.2.contains("elementwise") && r.1 < 0.0),
        "{rows:?}"
    );
    let headline = doc["headline"].as_str().unwrap();
    assert!(html.contains(headline), "{headline}");
}

#[test]
fn triage_html_with_a_baseline_shows_each_groups_change() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("triage.html");
    let eager = fixture("eager.json.gz");
    let o = run(&[
        "triage",
        eager.to_str().unwrap(),
        "--no-discover",
        "--root",
        dir.path().to_str().unwrap(),
        "--baseline",
        eager.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    ok(&o);
    let html = std::fs::read_to_string(&page).unwrap();
    let rows = baseline_rows(&html);
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r.0 == "matched" && r.1 == 0.0),
        "{rows:?}"
    );
}
