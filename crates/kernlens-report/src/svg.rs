//! The timeline as one SVG element: a lane per stream under a pooled lane, each bin a
//! column whose stacked heights are the bin's compute, communication and memcpy
//! shares; the idle background shows through wherever a bin is not full.
//!
//! Equal neighbouring columns are drawn as one rectangle of a path, so the markup is
//! bounded by the bin count (at most [`crate::MAX_BINS`] runs per layer and lane)
//! whatever the trace's size.

use std::fmt::Write as _;

use crate::bins::Edges;
use crate::escape::text;
use crate::lanes::{Bin, Lane, Lanes};

/// Width of the label column, px.
const LABEL_W: f64 = 190.0;
/// Width of the plot, px (a bin is `PLOT_W / bins` wide).
pub(crate) const PLOT_W: f64 = 1000.0;
/// Height of a lane, px.
const LANE_H: f64 = 30.0;
/// Height of a marker strip (overlap, graph replays), px.
const STRIP_H: f64 = 5.0;
const GAP: f64 = 6.0;
/// Room for the window label and the time axis above the lanes.
const TOP: f64 = 40.0;

/// The page's colour scheme, shared by the standalone SVG and the HTML page; dark
/// colours follow the browser's preference.
pub(crate) const STYLE: &str = "\
.kl-tl{--kl-idle:#eceff3;--kl-compute:#2f6fdb;--kl-comm:#e8871e;--kl-memcpy:#2a9d63;\
--kl-overlap:#c0392b;--kl-graph:#7b3fb8;--kl-window:#f2c200;--kl-fg:#1d232b;--kl-muted:#5a6573;\
font-family:system-ui,-apple-system,'Segoe UI',sans-serif}\
@media (prefers-color-scheme:dark){.kl-tl{--kl-idle:#262c35;--kl-compute:#5b95f5;--kl-comm:#f3a54a;\
--kl-memcpy:#4cc38a;--kl-overlap:#ef6a5a;--kl-graph:#b48af0;--kl-window:#ffd84d;--kl-fg:#e4e8ee;\
--kl-muted:#9aa5b3}}\
.kl-tl .idle{fill:var(--kl-idle)}.kl-tl .compute{fill:var(--kl-compute)}\
.kl-tl .comm{fill:var(--kl-comm)}.kl-tl .memcpy{fill:var(--kl-memcpy)}\
.kl-tl .overlap{fill:var(--kl-overlap)}.kl-tl .graph{fill:var(--kl-graph)}\
.kl-tl .window{fill:var(--kl-window);fill-opacity:.16;stroke:var(--kl-window);stroke-width:1.5;\
stroke-dasharray:5 3}\
.kl-tl text{fill:var(--kl-fg);font-size:11px}.kl-tl .sub{fill:var(--kl-muted);font-size:10px}\
.kl-tl .axis{stroke:var(--kl-muted);stroke-width:1}";

/// A number for markup: at most two decimals, no trailing zeros.
fn num(v: f64) -> String {
    let mut s = format!("{v:.2}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    if s == "-0" { "0".to_owned() } else { s }
}

/// A duration for people: ns, µs, ms or s with three significant figures.
pub(crate) fn duration(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// Where time `t` lies on the plot, px from the left edge of the SVG.
fn x_of(edges: &Edges, t: i64) -> f64 {
    let span = (edges.end() - edges.start()).max(1) as f64;
    LABEL_W + (t.saturating_sub(edges.start())) as f64 / span * PLOT_W
}

/// One layer of a lane: a path of rectangles, one per run of equal columns.
struct Layer {
    class: &'static str,
    d: String,
    runs: usize,
}

fn layer(
    class: &'static str,
    edges: &Edges,
    top: f64,
    height: f64,
    columns: impl Iterator<Item = (f64, f64)>,
) -> Layer {
    // Columns are (offset from the bottom, height) in px, quantised to half pixels so
    // that neighbours with nearly equal shares merge.
    let n = edges.len();
    let bin_w = PLOT_W / n as f64;
    let q = |v: f64| (v * 2.0).round() / 2.0;
    let mut d = String::new();
    let mut runs = 0;
    let mut run: Option<(usize, f64, f64)> = None;
    let mut close = |d: &mut String, from: usize, to: usize, off: f64, h: f64| {
        if h <= 0.0 {
            return;
        }
        let x = LABEL_W + from as f64 * bin_w;
        let w = (to - from) as f64 * bin_w;
        let y = top + height - off - h;
        let _ = write!(
            d,
            "M{} {}h{}v{}h-{}z",
            num(x),
            num(y),
            num(w),
            num(h),
            num(w)
        );
        runs += 1;
    };
    for (i, (off, h)) in columns.enumerate() {
        let (off, h) = (q(off), q(h));
        match run {
            Some((_, o, hh)) if o == off && hh == h => {}
            Some((from, o, hh)) => {
                close(&mut d, from, i, o, hh);
                run = Some((i, off, h));
            }
            None => run = Some((i, off, h)),
        }
    }
    if let Some((from, o, hh)) = run {
        close(&mut d, from, n, o, hh);
    }
    Layer { class, d, runs }
}

fn frac(part: i64, width: i64) -> f64 {
    if width <= 0 {
        0.0
    } else {
        (part as f64 / width as f64).clamp(0.0, 1.0)
    }
}

/// The stacked layers of a lane: compute at the bottom, communication above it, memcpy
/// on top, each as tall as its share of the bin (the stack is capped at the lane).
fn lane_layers(edges: &Edges, lane: &Lane, top: f64) -> Vec<Layer> {
    let widths: Vec<i64> = (0..edges.len()).map(|i| edges.width(i)).collect();
    let col = |b: &Bin, i: usize| {
        let w = widths.get(i).copied().unwrap_or(1);
        let c = frac(b.compute_ns, w) * LANE_H;
        let m = frac(b.comm_ns, w) * LANE_H;
        let y = frac(b.memcpy_ns, w) * LANE_H;
        let comm_h = m.min(LANE_H - c).max(0.0);
        let memcpy_h = y.min(LANE_H - c - comm_h).max(0.0);
        [(0.0, c), (c, comm_h), (c + comm_h, memcpy_h)]
    };
    let cols: Vec<[(f64, f64); 3]> = lane
        .bins
        .iter()
        .enumerate()
        .map(|(i, b)| col(b, i))
        .collect();
    ["compute", "comm", "memcpy"]
        .into_iter()
        .enumerate()
        .map(|(k, class)| layer(class, edges, top, LANE_H, cols.iter().map(|c| c[k])))
        .collect()
}

fn strip(
    edges: &Edges,
    lane: &Lane,
    top: f64,
    class: &'static str,
    pick: fn(&Bin) -> i64,
) -> Layer {
    let cols = lane.bins.iter().enumerate().map(|(i, b)| {
        let h = if pick(b) > 0 {
            // Any share is visible: at least a third of the strip.
            (frac(pick(b), edges.width(i)) * STRIP_H).max(STRIP_H / 3.0)
        } else {
            0.0
        };
        (0.0, h)
    });
    layer(class, edges, top, STRIP_H, cols)
}

fn push_layer(out: &mut String, l: &Layer) {
    if l.runs > 0 {
        let _ = write!(
            out,
            r#"<path class="{}" data-runs="{}" d="{}"/>"#,
            l.class, l.runs, l.d
        );
    }
}

/// A step of 1, 2 or 5 × 10^k ns giving about `target` ticks over `span`.
fn tick_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(1.0);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

/// Renders the timeline; `standalone` gives the SVG namespace for a file of its own
/// (inline in HTML it is implied).
pub fn timeline_svg(lanes: &Lanes, standalone: bool) -> String {
    let edges = &lanes.edges;
    let total = lanes.scope_total_ns;
    let mut rows: Vec<(&Lane, &'static str)> = vec![(&lanes.pooled, "pooled")];
    rows.extend(lanes.streams.iter().map(|l| (l, "stream")));
    // Heights first: a lane, then its strips.
    let strips = |l: &Lane| {
        let overlap = l.bins.iter().any(|b| b.comm_ns > 0);
        (overlap, l.has_graph)
    };
    let mut height = TOP;
    for (l, _) in &rows {
        let (o, g) = strips(l);
        height += LANE_H + GAP + (o as u8 as f64 + g as u8 as f64) * (STRIP_H + 2.0);
    }
    height += 4.0;
    let width = LABEL_W + PLOT_W + 10.0;
    let mut out = String::with_capacity(64 * 1024);
    let xmlns = if standalone {
        r#" xmlns="http://www.w3.org/2000/svg""#
    } else {
        ""
    };
    let _ = write!(
        out,
        r#"<svg{xmlns} class="kl-tl" id="kl-timeline" role="img" aria-labelledby="kl-tl-title kl-tl-desc" viewBox="0 0 {} {}" width="{}" height="{}" preserveAspectRatio="xMinYMin meet" data-start-ns="{}" data-end-ns="{}" data-bins="{}" data-plot-x="{}" data-plot-w="{}">"#,
        num(width),
        num(height),
        num(width),
        num(height),
        edges.start(),
        edges.end(),
        edges.len(),
        num(LABEL_W),
        num(PLOT_W),
    );
    let _ = write!(
        out,
        r#"<title id="kl-tl-title">GPU timeline: {} lane(s) over {}</title><desc id="kl-tl-desc">Each column is {} of trace time; its coloured height is the share of that time the lane was busy with computation (blue), communication (orange) or memory copies (green); the grey background is idle time. Red strips mark communication overlapping computation, purple strips CUDA/HIP graph replays.</desc>"#,
        rows.len(),
        text(&duration((edges.end() - edges.start()) as f64)),
        text(&duration(
            (edges.end() - edges.start()) as f64 / edges.len() as f64
        )),
    );
    let _ = write!(out, "<style>{STYLE}</style>");
    // The time axis: ticks relative to the first recorded GPU event.
    let span = (edges.end() - edges.start()) as f64;
    let step = tick_step(span, 8.0);
    let _ = write!(out, r#"<g class="ticks">"#);
    let mut t = 0.0;
    while t <= span + 0.5 {
        let x = LABEL_W + t / span.max(1.0) * PLOT_W;
        let _ = write!(
            out,
            r#"<line class="axis" x1="{x}" y1="{}" x2="{x}" y2="{}"/><text class="sub" x="{x}" y="{}" text-anchor="middle">{}</text>"#,
            num(TOP - 8.0),
            num(TOP - 2.0),
            num(TOP - 11.0),
            if t == 0.0 {
                "0".to_owned()
            } else {
                text(&duration(t))
            },
            x = num(x),
        );
        t += step;
    }
    let _ = write!(out, "</g>");
    let mut y = TOP;
    for (lane, kind) in &rows {
        let (overlap, graph) = strips(lane);
        let busy = lane.busy_pct(total);
        let device = lane.device.map_or_else(String::new, |d| d.to_string());
        let _ = write!(
            out,
            r#"<g class="lane" data-kind="{kind}" data-device="{device}" data-bins="{}" data-busy-ns="{}" data-kernel-union-ns="{}" data-busy-pct="{:.4}">"#,
            lane.bins.len(),
            lane.scope.busy_ns,
            lane.scope.kernel_union_ns,
            busy,
        );
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><text class="sub" x="{}" y="{}" text-anchor="end">busy {:.2}% · {} kernels</text>"#,
            num(LABEL_W - 8.0),
            num(y + 12.0),
            text(&lane.label),
            num(LABEL_W - 8.0),
            num(y + 24.0),
            busy,
            lane.scope.kernel_count,
        );
        let _ = write!(
            out,
            r#"<rect class="idle" x="{}" y="{}" width="{}" height="{}"><title>{}: busy {:.2}% of {} in scope</title></rect>"#,
            num(LABEL_W),
            num(y),
            num(PLOT_W),
            num(LANE_H),
            text(&lane.label),
            busy,
            text(&duration(total as f64)),
        );
        for l in lane_layers(edges, lane, y) {
            push_layer(&mut out, &l);
        }
        y += LANE_H + 2.0;
        if overlap {
            let l = strip(edges, lane, y, "overlap", |b| b.overlap_ns);
            let _ = write!(
                out,
                r#"<g class="strip" data-strip="overlap"><title>{}: communication overlapping computation</title>"#,
                text(&lane.label)
            );
            push_layer(&mut out, &l);
            out.push_str("</g>");
            y += STRIP_H + 2.0;
        }
        if graph {
            let l = strip(edges, lane, y, "graph", |b| b.graph_ns);
            let _ = write!(
                out,
                r#"<g class="strip" data-strip="graph"><title>{}: kernels of CUDA/HIP graph replays</title>"#,
                text(&lane.label)
            );
            push_layer(&mut out, &l);
            out.push_str("</g>");
            y += STRIP_H + 2.0;
        }
        y += GAP - 2.0;
        out.push_str("</g>");
    }
    if let Some(w) = &lanes.window {
        let x0 = x_of(edges, w.start_ns).clamp(LABEL_W, LABEL_W + PLOT_W);
        let x1 = x_of(edges, w.end_ns).clamp(LABEL_W, LABEL_W + PLOT_W);
        // A window narrower than a pixel stays visible.
        let wpx = (x1 - x0).max(2.0);
        let _ = write!(
            out,
            r#"<g class="window-mark" data-start-ns="{}" data-end-ns="{}"><rect class="window" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect><text x="{}" y="{}">{}</text></g>"#,
            w.start_ns,
            w.end_ns,
            num(x0),
            num(TOP - 6.0),
            num(wpx),
            num(y - TOP + 6.0),
            text(&w.label),
            num(x0.clamp(LABEL_W, LABEL_W + PLOT_W - 300.0)),
            num(12.0),
            text(&w.label),
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.25), "1.25");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(-0.001), "0");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(1_000_000.0, 8.0), 200_000.0);
        assert_eq!(tick_step(37.0, 8.0), 5.0);
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(1_500_000.0), "1.50 ms");
        assert_eq!(duration(250.0), "250 ns");
        assert_eq!(duration(12_300.0), "12.3 µs");
    }
}
