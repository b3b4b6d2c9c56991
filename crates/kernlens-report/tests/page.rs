//! The page and the SVG as documents: parsed as XML, their structure checked against
//! synthetic traces whose figures are known; and the binning's golden cases through the
//! recorder, on traces built here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kernlens_report::{
    Baseline, BaselineRow, BaselineStatus, LaneOptions, Lanes, MAX_BINS, Page, analyze_with_lanes,
    render_svg,
};
use kernlens_trace::{Analysis, Options, TimeWindow, TraceSource, WindowMode};

/// A kernel event: `(name, pid, tid, ts_us, dur_us, correlation)`.
type K<'a> = (&'a str, i64, i64, f64, f64, i64);

fn trace(kernels: &[K<'_>], extra: &[String]) -> Vec<u8> {
    let mut events: Vec<String> = kernels
        .iter()
        .map(|(name, pid, tid, ts, dur, corr)| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{"correlation":{corr},"device":{pid}}}}}"#
            )
        })
        .collect();
    events.extend(extra.iter().cloned());
    format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).into_bytes()
}

fn read(bytes: Vec<u8>, opts: &Options, bins: usize) -> (Analysis, Lanes) {
    let source = TraceSource::from_bytes("synthetic.json", bytes);
    analyze_with_lanes(&source, opts, LaneOptions::default().with_bins(bins)).unwrap()
}

fn parse_options() -> roxmltree::ParsingOptions {
    roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    }
}

fn lanes_of<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("lane"))
        .collect()
}

fn three_streams() -> Vec<u8> {
    trace(
        &[
            ("gemm", 0, 7, 0.0, 100.0, 1),
            ("gemm", 0, 7, 150.0, 100.0, 2),
            ("ncclAllReduce", 0, 9, 50.0, 120.0, 3),
            ("softmax", 1, 7, 10.0, 40.0, 4),
        ],
        &[],
    )
}

#[test]
fn svg_has_one_lane_per_stream_and_the_pooled_lane() {
    let (_, lanes) = read(three_streams(), &Options::default(), 500);
    let svg = render_svg(&lanes);
    let doc = roxmltree::Document::parse_with_options(&svg, parse_options()).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert_eq!(
        doc.root_element().tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    let lanes_drawn = lanes_of(&doc);
    let kinds: Vec<&str> = lanes_drawn
        .iter()
        .map(|g| g.attribute("data-kind").unwrap())
        .collect();
    assert_eq!(kinds, ["pooled", "stream", "stream", "stream"]);
    let devices: Vec<&str> = lanes_drawn
        .iter()
        .map(|g| g.attribute("data-device").unwrap())
        .collect();
    assert_eq!(devices, ["", "0", "0", "1"]);
    // Text labels name each lane, for readers and screen readers alike.
    let labels: Vec<String> = lanes_drawn
        .iter()
        .map(|g| g.descendants().find(|n| n.has_tag_name("text")).unwrap())
        .map(|t| t.text().unwrap().to_owned())
        .collect();
    assert_eq!(
        labels,
        [
            "all GPUs",
            "GPU 0 · stream 7",
            "GPU 0 · stream 9",
            "GPU 1 · stream 7"
        ]
    );
    assert!(doc.descendants().any(|n| n.has_tag_name("title")));
}

#[test]
fn no_lane_has_more_bins_than_the_limit() {
    // Ten thousand kernels, more than any lane's columns: the markup stays bounded.
    let kernels: Vec<K<'_>> = (0..10_000)
        .map(|i| ("k", 0, 7 + (i % 3), i as f64 * 3.0, 1.0 + (i % 5) as f64, i))
        .collect();
    for asked in [1, 300, MAX_BINS, 50_000] {
        let (_, lanes) = read(trace(&kernels, &[]), &Options::default(), asked);
        let svg = render_svg(&lanes);
        let doc = roxmltree::Document::parse_with_options(&svg, parse_options()).unwrap();
        let bins: usize = doc
            .root_element()
            .attribute("data-bins")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(bins, asked.min(MAX_BINS));
        for g in lanes_of(&doc) {
            assert_eq!(g.attribute("data-bins"), Some(bins.to_string().as_str()));
            for path in g.descendants().filter(|n| n.has_tag_name("path")) {
                let runs: usize = path.attribute("data-runs").unwrap().parse().unwrap();
                let rects = path.attribute("d").unwrap().matches('M').count();
                assert_eq!(runs, rects);
                assert!(runs <= bins, "{runs} runs for {bins} bins");
            }
        }
    }
}

#[test]
fn window_shading_is_drawn_only_when_a_window_is_chosen() {
    let marks = |svg: &str| {
        let doc = roxmltree::Document::parse_with_options(svg, parse_options()).unwrap();
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("window"))
            .count()
    };
    let (_, lanes) = read(three_streams(), &Options::default(), 200);
    assert_eq!(marks(&render_svg(&lanes)), 0);

    let mut opts = Options::default();
    opts.window = WindowMode::Explicit(TimeWindow::new(40_000, 160_000).unwrap());
    let (analysis, lanes) = read(three_streams(), &opts, 200);
    let svg = render_svg(&lanes);
    assert_eq!(marks(&svg), 1);
    assert!(svg.contains("explicit window"));
    // The lanes are measured over the window, by the summary's rule.
    assert_eq!(lanes.pooled.scope.busy_ns, analysis.timeline.busy_ns);
    assert_eq!(lanes.scope_total_ns, 120_000);
    let page = Page::new(&analysis, &lanes).render();
    assert!(page.contains("Shaded: the explicit window"));
}

#[test]
fn the_page_is_well_formed_and_fetches_nothing() {
    let extra = [r#"{"ph":"X","cat":"kernel","name":"evil<script>alert(1)</script>&","pid":0,"tid":7,"ts":400,"dur":5}"#.to_owned()];
    let (analysis, lanes) = read(
        trace(&[("gemm", 0, 7, 0.0, 100.0, 1)], &extra),
        &Options::default(),
        100,
    );
    let html = Page::new(&analysis, &lanes).render();
    let doc = roxmltree::Document::parse_with_options(&html, parse_options()).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "html");
    // The kernel name is text, not markup: one script element, the page's own.
    let scripts = doc
        .descendants()
        .filter(|n| n.has_tag_name("script"))
        .count();
    assert_eq!(scripts, 1);
    assert!(html.contains("evil&lt;script&gt;"));
    for n in doc.descendants().filter(|n| n.is_element()) {
        for a in n.attributes() {
            assert!(
                !(a.name() == "src" || a.name() == "href") || !a.value().contains(':'),
                "{} {}={}",
                n.tag_name().name(),
                a.name(),
                a.value()
            );
        }
        assert!(!n.has_tag_name("link") && !n.has_tag_name("img"));
    }
    assert!(!html.contains("http"), "no URL anywhere in the page");
    assert!(!html.contains("@import") && !html.contains("url("));
    // A legend, and colours for both schemes, chosen by the browser.
    assert!(
        doc.descendants()
            .any(|n| n.attribute("aria-label") == Some("legend"))
    );
    assert!(html.contains("prefers-color-scheme:dark"));
}

#[test]
fn communication_under_computation_is_marked_as_overlap() {
    let (_, lanes) = read(three_streams(), &Options::default(), 100);
    let overlap: i64 = lanes.pooled.bins.iter().map(|b| b.overlap_ns).sum();
    // ncclAllReduce [50, 170) µs under gemm [0, 100) and [150, 250): 50 + 20 µs.
    assert_eq!(overlap, 70_000);
    let svg = render_svg(&lanes);
    assert!(svg.contains(r#"data-strip="overlap""#));
}

#[test]
fn graph_replay_kernels_are_marked() {
    let launch = |corr: i64, ts: f64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":5,"tid":5,"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}}"#
        )
    };
    let bytes = trace(
        &[
            ("a", 0, 7, 10.0, 10.0, 100),
            ("b", 0, 7, 20.0, 10.0, 100),
            ("eager", 0, 7, 60.0, 10.0, 5),
        ],
        &[launch(100, 1.0), launch(200, 40.0)],
    );
    let (analysis, lanes) = read(bytes, &Options::default(), 100);
    assert_eq!(lanes.graph_launches, 2);
    assert_eq!(analysis.graph.launches, 2);
    let graph: i64 = lanes.pooled.bins.iter().map(|b| b.graph_ns).sum();
    assert_eq!(graph, 20_000);
    assert!(render_svg(&lanes).contains(r#"data-strip="graph""#));
}

#[test]
fn an_interval_spanning_bins_splits_exactly_across_them() {
    // Span [0, 1000) µs in 10 bins; the kernel [150, 420) µs covers parts of 5 bins.
    let bytes = trace(
        &[
            ("edge", 0, 7, 0.0, 1.0, 1),
            ("wide", 0, 7, 150.0, 270.0, 2),
            ("edge", 0, 7, 999.0, 1.0, 3),
        ],
        &[],
    );
    let (_, lanes) = read(bytes, &Options::default(), 10);
    let busy: Vec<i64> = lanes.streams[0].bins.iter().map(|b| b.busy_ns).collect();
    assert_eq!(
        busy,
        [1_000, 50_000, 100_000, 100_000, 20_000, 0, 0, 0, 0, 1_000]
    );
}

#[test]
fn sub_pixel_kernels_accumulate_in_their_bin() {
    // 500 kernels of 0.5 µs, 1 µs apart, then one at the end: 4 bins of 250 µs.
    let mut kernels: Vec<K<'_>> = (0..500).map(|i| ("tiny", 0, 7, i as f64, 0.5, i)).collect();
    kernels.push(("end", 0, 7, 999.0, 1.0, 999));
    let (analysis, lanes) = read(trace(&kernels, &[]), &Options::default(), 4);
    let busy: Vec<i64> = lanes.pooled.bins.iter().map(|b| b.busy_ns).collect();
    assert_eq!(busy, [125_000, 125_000, 0, 1_000]);
    assert_eq!(busy.iter().sum::<i64>(), analysis.timeline.busy_ns);
}

#[test]
fn a_saturated_lane_shows_exactly_zero_idle() {
    // Back-to-back and overlapping kernels over the whole span, at a width (997 µs over
    // 7 bins) where the bin edges are not round.
    let bytes = trace(
        &[
            ("a", 0, 7, 3.0, 400.0, 1),
            ("b", 0, 7, 403.0, 300.0, 2),
            ("c", 0, 7, 650.0, 350.0, 3),
        ],
        &[],
    );
    let (analysis, lanes) = read(bytes, &Options::default(), 7);
    assert_eq!(analysis.timeline.idle_pct, 0.0);
    let e = lanes.edges;
    for lane in std::iter::once(&lanes.pooled).chain(&lanes.streams) {
        for (i, b) in lane.bins.iter().enumerate() {
            assert_eq!(b.busy_ns, e.width(i), "bin {i} of {}", lane.label);
            assert_eq!(e.width(i) - b.busy_ns, 0);
        }
    }
    // Drawn: every column is full height, so no idle shows through.
    let svg = render_svg(&lanes);
    let doc = roxmltree::Document::parse_with_options(&svg, parse_options()).unwrap();
    let compute = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("compute"))
        .unwrap();
    assert_eq!(compute.attribute("data-runs"), Some("1"));
}

#[test]
fn page_size_does_not_grow_with_the_trace() {
    let sized = |n: i64| {
        let kernels: Vec<K<'_>> = (0..n)
            .map(|i| {
                (
                    "k",
                    0,
                    7 + (i % 4),
                    i as f64 * 2.0,
                    1.0 + (i % 7) as f64 * 0.1,
                    i,
                )
            })
            .collect();
        let (analysis, lanes) = read(trace(&kernels, &[]), &Options::default(), MAX_BINS);
        Page::new(&analysis, &lanes).render().len()
    };
    let (small, large) = (sized(20_000), sized(200_000));
    assert!(large < 2 * 1024 * 1024, "{large} bytes");
    // Ten times the events: the page grows by much less than that (denser columns).
    assert!(large < small * 2, "{small} -> {large} bytes");
}

#[test]
fn many_streams_of_ragged_columns_stay_under_two_megabytes() {
    // 40 streams whose every column differs from its neighbours: the worst markup.
    let kernels: Vec<K<'_>> = (0..40 * 2000)
        .map(|i| {
            let (stream, k) = (i % 40, i / 40);
            let dur = 0.1 + ((k * 7 + stream * 3) % 10) as f64 * 0.09;
            ("k", stream / 8, stream, k as f64, dur, i)
        })
        .collect();
    let comm: Vec<String> = (0..2000)
        .map(|k| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"ncclKernel","pid":0,"tid":0,"ts":{}.3,"dur":0.{}}}"#,
                k,
                1 + k % 8
            )
        })
        .collect();
    let (analysis, lanes) = read(trace(&kernels, &comm), &Options::default(), MAX_BINS);
    assert_eq!(lanes.streams.len(), 40);
    assert!(lanes.edges.len() * 41 <= kernlens_report::MAX_CELLS);
    let html = Page::new(&analysis, &lanes).render();
    eprintln!(
        "{} streams x {} bins: {} bytes",
        lanes.streams.len(),
        lanes.edges.len(),
        html.len()
    );
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
}

#[test]
fn an_empty_trace_gives_a_page_not_a_panic() {
    let (analysis, lanes) = read(br#"{"traceEvents":[]}"#.to_vec(), &Options::default(), 50);
    assert!(lanes.streams.is_empty());
    let html = Page::new(&analysis, &lanes).render();
    roxmltree::Document::parse_with_options(&html, parse_options()).unwrap();
}

#[test]
fn a_stream_of_copies_alone_gets_its_lane_and_copies_count_in_busy() {
    // Kernels on stream 7 (with a memset under one), device-to-host copies alone on 13.
    let copies = [
        r#"{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pinned)","pid":0,"tid":13,"ts":300,"dur":200,"args":{"correlation":10,"device":0}}"#.to_owned(),
        r#"{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":20,"dur":10,"args":{"correlation":11,"device":0}}"#.to_owned(),
    ];
    let bytes = trace(
        &[
            ("gemm", 0, 7, 0.0, 100.0, 1),
            ("gemm", 0, 7, 150.0, 100.0, 2),
        ],
        &copies,
    );
    let (analysis, lanes) = read(bytes, &Options::default(), 100);
    let labels: Vec<&str> = lanes.streams.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["GPU 0 · stream 7", "GPU 0 · stream 13"]);
    let copy = &lanes.streams[1];
    assert_eq!(copy.scope.busy_ns, 200_000);
    assert_eq!(copy.scope.kernel_count, 0);
    assert_eq!(copy.bins.iter().map(|b| b.memcpy_ns).sum::<i64>(), 200_000);
    // The memset lies under a kernel: the kernel stream's busy is its kernels' union.
    assert_eq!(lanes.streams[0].scope.busy_ns, 200_000);
    assert_eq!(lanes.pooled.scope.busy_ns, 400_000);
    assert_eq!(lanes.pooled.scope.busy_ns, analysis.timeline.busy_ns);
    let svg = render_svg(&lanes);
    assert!(!svg.contains("kernels busy"));
}

fn baseline_row(
    id: &str,
    operation: &str,
    status: BaselineStatus,
    before_us: f64,
    after_us: f64,
) -> BaselineRow {
    let mut row = BaselineRow::default();
    row.id = id.to_owned();
    row.operation = operation.to_owned();
    row.status = status;
    row.before_us = before_us;
    row.after_us = after_us;
    row.delta_pct = (before_us > 0.0).then(|| (after_us - before_us) / before_us * 100.0);
    row
}

#[test]
fn the_baseline_section_appears_only_with_a_baseline_and_escapes_its_text() {
    let (analysis, lanes) = read(three_streams(), &Options::default(), 200);
    let plain = Page::new(&analysis, &lanes).render();
    assert!(!plain.contains("Change since baseline"));
    assert!(!plain.contains("id=\"baseline\""));

    let baseline = Baseline::new("old<&>.json", "kernel time \u{2212}20.0% <fast>")
        .with_warnings(vec![
            "the \"before\" side's graphs are under-recorded".to_owned(),
        ])
        .with_rows(
            vec![
                baseline_row("g001", "gemm<float>", BaselineStatus::Matched, 200.0, 150.0),
                baseline_row("g002", "triton_fused", BaselineStatus::Added, 0.0, 30.0),
                baseline_row("g003", "softmax", BaselineStatus::Removed, 20.0, 0.0),
            ],
            4,
        );
    let html = Page::new(&analysis, &lanes)
        .with_baseline(&baseline)
        .render();
    // Still one well-formed document, with the trace's text escaped.
    let doc = roxmltree::Document::parse_with_options(&html, parse_options()).unwrap();
    assert!(html.contains("old&lt;&amp;&gt;.json"));
    assert!(html.contains("&lt;fast&gt;"));
    assert!(html.contains("gemm&lt;float&gt;"));
    let table = doc
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("id") == Some("baseline"))
        .unwrap();
    let rows: Vec<_> = table
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .collect();
    // The header and one row each.
    assert_eq!(rows.len(), 4);
    let statuses: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r.attribute("data-status").unwrap())
        .collect();
    assert_eq!(statuses, ["matched", "added", "removed"]);
    let cells = |r: &roxmltree::Node<'_, '_>| -> Vec<String> {
        r.children()
            .filter(|n| n.has_tag_name("td"))
            .map(|td| {
                td.descendants()
                    .filter(|n| n.is_text())
                    .map(|n| n.text().unwrap())
                    .collect::<String>()
            })
            .collect()
    };
    // Signed Δ (a true minus for a gain) and the bar scaled to the largest change.
    assert_eq!(
        cells(&rows[1]),
        [
            "g001",
            "matched",
            "0.200",
            "0.150",
            "\u{2212}0.050",
            "\u{2212}25.0%",
            "gemm<float>"
        ]
    );
    assert_eq!(cells(&rows[2])[4..6], ["+0.030", "new"]);
    assert_eq!(cells(&rows[3])[4..6], ["\u{2212}0.020", "gone"]);
    let widths: Vec<&str> = table
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("bar ")))
        .map(|n| n.attribute("style").unwrap())
        .collect();
    assert_eq!(widths, ["width:100.0%", "width:60.0%", "width:40.0%"]);
    assert!(html.contains("under-recorded"));
    assert!(html.contains("and 4 more group(s)"));
}

/// One device event for [`recorded_lanes_equal_a_direct_binning`]: `(pid, tid, start µs,
/// duration µs, name index, is a copy)`.
type Ev = (i64, i64, i64, i64, usize, bool);

/// Kernel names of one length and one ending, so that many share a slot of the
/// recorder's table of recent names; every fifth is communication.
fn pool_name(i: usize) -> String {
    let head = if i.is_multiple_of(5) {
        "ncclKernel"
    } else {
        "gemmKernel"
    };
    format!("{head}_{i:04}<float, 128>(Params)")
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever the file order, streams, devices and names, each lane's bins and
    /// figures are those of binning its events directly: sorted, merged, cut by the
    /// same edges (the recorder's table of names, its in-order streams and its merge of
    /// streams change no figure).
    #[test]
    fn recorded_lanes_equal_a_direct_binning(
        events in proptest::collection::vec(
            (0i64..2, proptest::prop_oneof![proptest::strategy::Just(7i64), proptest::strategy::Just(9i64)], 0i64..5_000, 0i64..300, 0usize..120, proptest::bool::weighted(0.2)),
            1..80,
        ),
        in_order in proptest::bool::ANY,
        bins in 1usize..60,
    ) {
        use kernlens_report::bins::{Edges, bin_union, union_len};
        use kernlens_trace::StreamId;
        use proptest::prelude::*;
        let mut events: Vec<Ev> = events;
        if in_order {
            events.sort_by_key(|e| (e.2, e.3));
        }
        // Kernels of correlations 0 and 3 (name index mod 7) belong to graph replays.
        let corr = |e: &Ev| (e.4 % 7) as i64;
        let mut json: Vec<String> = events
            .iter()
            .map(|&(pid, tid, ts, dur, name, copy)| {
                let corr = name % 7;
                let (cat, name) = if copy { ("gpu_memcpy", "Memcpy HtoD".to_owned()) } else { ("kernel", pool_name(name)) };
                format!(r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{"correlation":{corr}}}}}"#)
            })
            .collect();
        for c in [0, 3] {
            json.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":9,"tid":9,"ts":0,"dur":1,"args":{{"correlation":{c}}}}}"#));
        }
        let bytes = format!(r#"{{"traceEvents":[{}]}}"#, json.join(",")).into_bytes();
        let (_, lanes) = read(bytes, &Options::default(), bins);
        let lo = events.iter().map(|e| e.2 * 1000).min().unwrap();
        let hi = events.iter().map(|e| (e.2 + e.3) * 1000).max().unwrap();
        prop_assert_eq!(lanes.edges, Edges::new(lo, hi, bins));
        let edges = lanes.edges;
        // A lane's events: `keep` picks the streams; each column is a direct binning.
        let check = |lane: &kernlens_report::Lane, keep: &dyn Fn(&Ev) -> bool| -> Result<(), TestCaseError> {
            let mut mine: Vec<&Ev> = events.iter().filter(|e| keep(e)).collect();
            mine.sort_by_key(|e| (e.2, e.3));
            let column = |pick: &dyn Fn(&Ev) -> bool| {
                let ivs: Vec<(i64, i64)> = mine.iter().filter(|e| pick(e)).map(|e| (e.2 * 1000, (e.2 + e.3) * 1000)).collect();
                let mut out = vec![0; edges.len()];
                bin_union(&edges, &mut out, ivs.iter().copied());
                (out, union_len(ivs))
            };
            let comm = |e: &Ev| !e.5 && e.4.is_multiple_of(5);
            let (busy, busy_ns) = column(&|_| true);
            let (kernel, kernel_ns) = column(&|e| !e.5);
            let (compute, _) = column(&|e| !e.5 && !comm(e));
            let (comms, _) = column(&|e| comm(e));
            let (copies, _) = column(&|e| e.5);
            let (graph, _) = column(&|e| !e.5 && matches!(corr(e), 0 | 3));
            let got = |f: fn(&kernlens_report::Bin) -> i64| lane.bins.iter().map(f).collect::<Vec<i64>>();
            prop_assert_eq!(got(|b| b.busy_ns), busy);
            prop_assert_eq!(got(|b| b.compute_ns), compute.clone());
            prop_assert_eq!(got(|b| b.comm_ns), comms.clone());
            prop_assert_eq!(got(|b| b.memcpy_ns), copies);
            prop_assert_eq!(got(|b| b.graph_ns), graph);
            let overlap: Vec<i64> = (0..edges.len()).map(|i| (compute[i] + comms[i] - kernel[i]).max(0)).collect();
            prop_assert_eq!(got(|b| b.overlap_ns), overlap);
            prop_assert_eq!(lane.scope.busy_ns, busy_ns);
            prop_assert_eq!(lane.scope.kernel_union_ns, kernel_ns);
            prop_assert_eq!(lane.scope.kernel_count, mine.iter().filter(|e| !e.5).count() as u64);
            Ok(())
        };
        check(&lanes.pooled, &|_| true)?;
        for lane in &lanes.streams {
            let Some((StreamId::Int(pid), StreamId::Int(tid))) = lane.stream.clone() else {
                panic!("integer ids");
            };
            check(lane, &|e| e.0 == pid && e.1 == tid)?;
        }
        for lane in &lanes.devices {
            let device = lane.device.unwrap();
            check(lane, &|e| e.0 == device)?;
        }
    }
}

/// Forwards events but not the end of the read, as an observer written before
/// `read_done` existed would.
struct EventsOnly<'a>(&'a mut kernlens_report::LaneRecorder);

impl kernlens_trace::EventObserver for EventsOnly<'_> {
    fn observe(&mut self, event: &kernlens_trace::ObservedEvent<'_>) {
        self.0.observe(event);
    }
}

#[test]
fn lanes_are_the_same_whether_binned_beside_the_analysis_or_after_it() {
    use kernlens_report::LaneRecorder;
    let mut windowed = Options::default();
    windowed.window = WindowMode::Explicit(TimeWindow::new(40_000, 160_000).unwrap());
    for opts in [Options::default(), windowed] {
        let source = TraceSource::from_bytes("t.json", three_streams());
        // Told the read is done: binned on a thread while the analysis is built.
        let mut beside = LaneRecorder::new(LaneOptions::default().with_bins(50));
        let a = kernlens_trace::analyze_observed(&source, &opts, &mut beside).unwrap();
        // Never told: binned in `finish`.
        let mut after = LaneRecorder::new(LaneOptions::default().with_bins(50));
        let b =
            kernlens_trace::analyze_observed(&source, &opts, &mut EventsOnly(&mut after)).unwrap();
        let (beside, after) = (beside.finish(&a), after.finish(&b));
        assert_eq!(beside, after);
        assert_eq!(beside.streams.len(), 3);
        assert!(beside.pooled.scope.busy_ns > 0);
    }
}

/// Forwards whole events and events offered by their numbers, counting those taken.
struct Counting<'a>(&'a mut kernlens_report::LaneRecorder, usize);

impl kernlens_trace::EventObserver for Counting<'_> {
    fn observe(&mut self, event: &kernlens_trace::ObservedEvent<'_>) {
        self.0.observe(event);
    }

    fn observe_numbered(&mut self, event: &kernlens_trace::NumberedEvent) -> bool {
        let taken = self.0.observe_numbered(event);
        self.1 += usize::from(taken);
        taken
    }
}

/// A trace long enough to be read in several regions (so its device events are digested
/// and offered by their numbers): communication and compute kernels on two GPUs' streams,
/// with copies and memsets among them.
fn long_mixed_trace() -> Vec<u8> {
    let mut kernels = Vec::new();
    let mut extra = Vec::new();
    for i in 0..40_000i64 {
        let ts = i as f64 * 3.0;
        let (pid, tid) = (i % 2, 7 + (i / 2) % 3);
        let name = match i % 5 {
            0 => "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            1 | 3 => "void gemm_kernel<float, 128>(float const*, float*)",
            _ => "softmax_warp_forward",
        };
        if i % 7 == 0 {
            let cat = if i % 14 == 0 {
                "gpu_memcpy"
            } else {
                "gpu_memset"
            };
            extra.push(format!(
                r#"{{"ph":"X","cat":"{cat}","name":"Memcpy DtoD","pid":{pid},"tid":{tid},"ts":{ts},"dur":1.5,"args":{{"correlation":{i},"device":{pid}}}}}"#
            ));
        }
        kernels.push((name, pid, tid, ts, 2.0 + (i % 3) as f64, i));
    }
    trace(&kernels, &extra)
}

/// Device events recorded from their numbers (the lane by `track_id`, a kernel's kind by
/// `name_id`) give the lanes that whole events give: on a long synthetic trace with
/// communication kernels, and on real captures with several streams and copies.
#[test]
fn lanes_recorded_by_number_are_the_lanes_of_whole_events() {
    use kernlens_report::LaneRecorder;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces");
    let sources = ["graph_many.json.gz", "multistream.json.gz", "train.json.gz"]
        .map(|t| TraceSource::open(dir.join(t)).unwrap());
    let long = TraceSource::from_bytes("long.json", long_mixed_trace());
    for source in sources.iter().chain([&long]) {
        let t = source.file();
        let opts = Options::default();
        let mut numbered = LaneRecorder::new(LaneOptions::default());
        let mut counting = Counting(&mut numbered, 0);
        let a = kernlens_trace::analyze_observed(source, &opts, &mut counting).unwrap();
        let taken = counting.1;
        let mut whole = LaneRecorder::new(LaneOptions::default());
        let b =
            kernlens_trace::analyze_observed(source, &opts, &mut EventsOnly(&mut whole)).unwrap();
        assert!(taken > 0, "{t}: no event was taken by number");
        assert_eq!(numbered.finish(&a), whole.finish(&b), "{t}");
    }
}
