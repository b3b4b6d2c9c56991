//! The page: one HTML document with the timeline inline, tables whose shares are CSS
//! bars, the gate verdict and the trace's warnings. Nothing is fetched: styles and the
//! small script are inline, and every figure is text, so the page reads the same with
//! scripts off.

use std::fmt::Write as _;

use kernlens_gate::{Decision, GateReport, Severity, WarningCode};
use kernlens_trace::{Analysis, Scope, WindowStatus};

use crate::baseline::{Baseline, BaselineStatus};
use crate::escape::text;
use crate::lanes::Lanes;
use crate::svg::{duration, timeline_svg};

/// One task group of a triage, as the page lists it (plain text, so this crate needs
/// nothing of the triage pipeline).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TaskGroupRow {
    /// `tg001`, …
    pub id: String,
    /// The primary kernel's name.
    pub operation: String,
    /// Kernel names in the group.
    pub kernel_count: usize,
    /// Share of all kernel time, 0–1.
    pub share: f64,
    /// Launches.
    pub calls: u64,
    /// Σ GPU time, µs.
    pub total_us: f64,
    /// The primary kernel's category.
    pub category: String,
    /// The source kind (`triton`, `vendor_binary`, …).
    pub kind: String,
    /// `path:line`, or `not found (reason)`.
    pub source: String,
    /// `eligible`, or `declined: reason`.
    pub route: String,
}

/// A page to render: an analysis, its lanes, and what else is known.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    analysis: &'a Analysis,
    lanes: &'a Lanes,
    gate: Option<&'a GateReport>,
    groups: Option<&'a [TaskGroupRow]>,
    suppressed: usize,
    baseline: Option<&'a Baseline>,
    title: Option<String>,
}

const PAGE_STYLE: &str = "\
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1d232b;--muted:#5a6573;--line:#d6dbe1;\
--bar:#7a8aa6;--warn-bg:#fff4e0;--warn-fg:#7a4b00;--bad-bg:#fde7e7;--bad-fg:#8a1c1c;\
--ok-bg:#e5f6ec;--ok-fg:#17603a}\
@media (prefers-color-scheme:dark){:root{--bg:#14181d;--fg:#e4e8ee;--muted:#9aa5b3;\
--line:#313843;--bar:#8d9bb5;--warn-bg:#3a2c12;--warn-fg:#ffd28a;--bad-bg:#3d1a1a;\
--bad-fg:#ffb3b3;--ok-bg:#15331f;--ok-fg:#9be3b7}}\
body{margin:0;padding:16px 24px;background:var(--bg);color:var(--fg);\
font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif}\
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px}\
.meta{color:var(--muted);margin:0 0 10px}.meta code{font-size:12px}\
.banner{padding:10px 14px;border-radius:6px;margin:10px 0;font-weight:600}\
.banner.bad{background:var(--bad-bg);color:var(--bad-fg);border:2px solid var(--bad-fg)}\
.banner.warn{background:var(--warn-bg);color:var(--warn-fg)}\
.banner.note{font-weight:400;color:var(--muted);padding:0;margin:4px 0}\
.banner.ok{background:var(--ok-bg);color:var(--ok-fg)}\
.banner p{margin:4px 0 0;font-weight:400}\
.figs{display:flex;flex-wrap:wrap;gap:8px 28px;margin:6px 0}.figs b{font-size:18px}\
.tl-wrap{overflow-x:auto;border:1px solid var(--line);border-radius:6px;padding:4px;position:relative}\
.tl-wrap svg{width:100%;height:auto;display:block}\
.tl-wrap.zoomed svg{width:300%}\
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:6px 0;color:var(--muted);font-size:12px;padding:0;list-style:none}\
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:5px}\
table{border-collapse:collapse;width:100%;font-size:13px}\
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}\
th{color:var(--muted);font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
td.name{word-break:break-all;max-width:60ch}\
.share{display:flex;align-items:center;gap:6px;min-width:160px}\
.share span.bar{display:inline-block;height:10px;background:var(--bar);border-radius:2px;min-width:1px}\
.share span.bar.slower{background:var(--bad-fg)}.share span.bar.faster{background:var(--ok-fg)}\
.share span.pct{font-variant-numeric:tabular-nums;white-space:nowrap}\
#kl-tip{position:absolute;pointer-events:none;background:var(--fg);color:var(--bg);\
padding:3px 6px;border-radius:4px;font-size:12px;display:none;white-space:nowrap}\
button{font:inherit;font-size:12px}footer{margin-top:24px;color:var(--muted);font-size:12px}";

/// Hover shows the time under the pointer; the button widens the timeline threefold.
/// Everything it shows is also in the page as text.
const SCRIPT: &str = "(function(){var w=document.querySelector('.tl-wrap');if(!w)return;\
var s=w.querySelector('svg'),tip=document.getElementById('kl-tip'),b=document.getElementById('kl-zoom');\
if(b){b.hidden=false;b.onclick=function(){w.classList.toggle('zoomed');}}\
var a=+s.dataset.startNs,e=+s.dataset.endNs,px=+s.dataset.plotX,pw=+s.dataset.plotW,vb=s.viewBox.baseVal;\
function f(ns){return ns>=1e6?(ns/1e6).toFixed(3)+' ms':(ns/1e3).toFixed(1)+' µs';}\
s.addEventListener('mousemove',function(ev){var r=s.getBoundingClientRect();\
var x=(ev.clientX-r.left)/r.width*vb.width;if(!(x>=px)||x>px+pw){tip.style.display='none';return;}\
var t=(x-px)/pw*(e-a);var g=ev.target.closest?ev.target.closest('g.lane'):null;\
tip.textContent='t = '+f(t)+(g?' · '+g.querySelector('text').textContent+' busy '+(+g.dataset.busyPct).toFixed(2)+'%':'');\
tip.style.display='block';var wr=w.getBoundingClientRect();tip.style.left=(ev.clientX-wr.left+w.scrollLeft+12)+'px';\
tip.style.top=(ev.clientY-wr.top+12)+'px';});\
s.addEventListener('mouseleave',function(){tip.style.display='none';});})();";

fn pct(v: f64) -> String {
    format!("{v:.2}%")
}

/// A share as a bar and its number; `fraction` is 0–1.
fn share_cell(fraction: f64) -> String {
    let p = (fraction * 100.0).clamp(0.0, 100.0);
    format!(
        r#"<td><div class="share"><span class="bar" style="width:{:.1}%" role="presentation"></span><span class="pct">{:.1}%</span></div></td>"#,
        p, p
    )
}

/// `value` with its sign always shown, a true minus sign for negatives; zero is `0`
/// with no sign, so an unchanged row reads as such.
fn signed(value: f64, decimals: usize) -> String {
    let shown = format!("{:.*}", decimals, value.abs());
    if shown.chars().all(|c| c == '0' || c == '.') {
        shown
    } else if value < 0.0 {
        format!("\u{2212}{shown}")
    } else {
        format!("+{shown}")
    }
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

impl<'a> Page<'a> {
    /// A page of `analysis`, with the lanes recorded during the same read.
    pub fn new(analysis: &'a Analysis, lanes: &'a Lanes) -> Self {
        Page {
            analysis,
            lanes,
            gate: None,
            groups: None,
            suppressed: 0,
            baseline: None,
            title: None,
        }
    }

    /// The same page with the gate's verdict.
    pub fn with_gate(mut self, gate: &'a GateReport) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The same page with a triage's task groups, and how many hot rows a suppressing
    /// gate held back (the groups are then empty).
    pub fn with_task_groups(mut self, groups: &'a [TaskGroupRow], suppressed: usize) -> Self {
        self.groups = Some(groups);
        self.suppressed = suppressed;
        self
    }

    /// The same page with a "Change since baseline" section: each group's time in a
    /// baseline trace and now.
    pub fn with_baseline(mut self, baseline: &'a Baseline) -> Self {
        self.baseline = Some(baseline);
        self
    }

    /// The same page under another title (default: the trace's file name).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The whole HTML document.
    pub fn render(&self) -> String {
        let a = self.analysis;
        let mut o = String::with_capacity(256 * 1024);
        let title = self.title.clone().unwrap_or_else(|| {
            let file = a.trace_file.rsplit('/').next().unwrap_or(&a.trace_file);
            format!("kernlens report: {file}")
        });
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\
             <meta name=\"color-scheme\" content=\"light dark\"/>\
             <title>{}</title><style>{PAGE_STYLE}</style></head><body>",
            text(&title)
        );
        let _ = write!(o, "<header><h1>{}</h1>", text(&title));
        let scope = match a.scope {
            Scope::SteadyState => "steady-state window",
            Scope::ExplicitWindow => "explicit window",
            _ => "whole trace",
        };
        let _ = write!(
            o,
            "<p class=\"meta\">trace <code>{}</code> · {} events · scope: {scope}",
            text(&a.trace_file),
            a.event_total
        );
        if let Some(rank) = a.analyzed_rank {
            let _ = write!(o, " · rank {rank} of {}", a.rank_count);
        }
        o.push_str("</p></header><main>");
        self.banners(&mut o);
        self.figures(&mut o);
        self.timeline(&mut o);
        self.categories(&mut o);
        self.devices(&mut o);
        self.gate_section(&mut o);
        self.groups_section(&mut o);
        self.baseline_section(&mut o);
        self.kernels(&mut o);
        self.ops(&mut o);
        self.problems(&mut o);
        let _ = write!(
            o,
            "</main><footer>Made by kernlens {} from one read of the trace; the timeline is \
             binned to {} columns, so this page's size does not depend on the trace's.</footer>\
             <script>{SCRIPT}</script></body></html>",
            env!("CARGO_PKG_VERSION"),
            self.lanes.edges.len()
        );
        o.push('\n');
        o
    }

    /// What makes the figures untrustworthy comes first, where it cannot be missed.
    fn banners(&self, o: &mut String) {
        let a = self.analysis;
        let g = &a.graph;
        if g.under_recorded {
            let cov = g
                .coverage
                .map_or_else(|| "unknown".to_owned(), |c| format!("{:.1}%", c * 100.0));
            let _ = write!(
                o,
                "<div class=\"banner bad\" role=\"alert\" id=\"under-recorded\">CUDA/HIP graph replays \
                 are under-recorded: only {} of {} launches have recorded kernels (coverage {cov}).\
                 <p>The profiler dropped most replays, so the idle time below is not trustworthy: \
                 the GPU ran kernels this trace does not show.</p></div>",
                g.launches_with_kernels, g.launches
            );
        }
        if a.window_status == WindowStatus::NoRepeatingWindowFellBackToFullTrace {
            o.push_str(
                "<div class=\"banner warn\">A steady window was asked for but no step repeats \
                 often enough; the figures cover the whole trace.</div>",
            );
        }
    }

    fn figures(&self, o: &mut String) {
        let t = &self.analysis.timeline;
        let _ = write!(
            o,
            "<section class=\"figs\" aria-label=\"headline figures\">\
             <div>GPU busy <b>{}</b></div><div>idle <b>{}</b></div>\
             <div>span <b>{}</b></div><div>kernel time <b>{}</b></div>",
            pct(t.busy_pct),
            pct(t.idle_pct),
            text(&duration(t.total_us * 1000.0)),
            text(&duration(t.kernel_sum_us * 1000.0)),
        );
        if let Some(g) = self.gate {
            let _ = write!(o, "<div>gate <b>{}</b></div>", text(g.decision.as_str()));
        }
        o.push_str("</section>");
    }

    fn timeline(&self, o: &mut String) {
        let l = self.lanes;
        let _ = write!(
            o,
            "<section class=\"kl-tl\" aria-labelledby=\"h-timeline\"><h2 id=\"h-timeline\">Timeline</h2>\
             <p class=\"meta\">{} stream lane(s) and the pooled lane over {}; one column is {}.",
            l.streams.len(),
            text(&duration((l.edges.end() - l.edges.start()) as f64)),
            text(&duration(
                (l.edges.end() - l.edges.start()) as f64 / l.edges.len() as f64
            )),
        );
        if let Some(w) = &l.window {
            let _ = write!(
                o,
                " Shaded: the {} from {} to {} (the figures' scope).",
                text(&w.label),
                text(&duration((w.start_ns - l.edges.start()) as f64)),
                text(&duration((w.end_ns - l.edges.start()) as f64)),
            );
        }
        if l.graph_launches > 0 {
            let _ = write!(o, " {} graph launch(es).", l.graph_launches);
        }
        o.push_str(
            " <button type=\"button\" id=\"kl-zoom\" hidden=\"hidden\">zoom ×3</button></p>\
             <ul class=\"legend\" aria-label=\"legend\">\
             <li><i style=\"background:var(--kl-compute,#2f6fdb)\"></i>computation</li>\
             <li><i style=\"background:var(--kl-comm,#e8871e)\"></i>communication</li>\
             <li><i style=\"background:var(--kl-memcpy,#2a9d63)\"></i>memcpy / memset</li>\
             <li><i style=\"background:var(--kl-idle,#eceff3);outline:1px solid var(--line)\"></i>idle</li>\
             <li><i style=\"background:var(--kl-overlap,#c0392b)\"></i>communication overlapping computation</li>\
             <li><i style=\"background:var(--kl-graph,#7b3fb8)\"></i>graph replay kernels</li>\
             <li><i style=\"background:var(--kl-window,#f2c200);opacity:.5\"></i>window</li></ul>\
             <div class=\"tl-wrap\">",
        );
        o.push_str(&timeline_svg(l, false));
        o.push_str("<div id=\"kl-tip\" role=\"status\"></div></div></section>");
    }

    fn categories(&self, o: &mut String) {
        let t = &self.analysis.timeline;
        let c = &t.categories;
        let total = t.total_us;
        let frac = |v: f64| if total > 0.0 { v / total } else { 0.0 };
        o.push_str(
            "<section aria-labelledby=\"h-cat\"><h2 id=\"h-cat\">Where the time went</h2>\
             <table><thead><tr><th>category</th><th>ms</th><th>share of the span</th></tr></thead><tbody>",
        );
        for (name, v) in [
            ("computation", c.computation_us),
            ("communication", c.communication_us),
            ("exposed communication", c.exposed_communication_us),
            ("memcpy (not under a kernel)", c.memcpy_us),
            ("idle", c.idle_us),
        ] {
            let _ = write!(
                o,
                "<tr><td>{name}</td><td class=\"n\">{}</td>{}</tr>",
                ms(v),
                share_cell(frac(v))
            );
        }
        o.push_str("</tbody></table></section>");
    }

    fn devices(&self, o: &mut String) {
        let t = &self.analysis.timeline;
        o.push_str(
            "<section aria-labelledby=\"h-dev\"><h2 id=\"h-dev\">Busy per device</h2>\
             <table id=\"devices\"><thead><tr><th>device</th><th>kernels</th><th>busy ms</th>\
             <th>busy</th></tr></thead><tbody>",
        );
        for d in &t.per_device {
            let name = d
                .device
                .map_or_else(|| "unknown".to_owned(), |d| format!("GPU {d}"));
            // The lanes' own measure of the device, beside the analysis' figure.
            let lane = self.lanes.devices.iter().find(|l| l.device == d.device);
            let _ = write!(
                o,
                "<tr data-device=\"{}\" data-busy-pct=\"{:.4}\" data-lane-kernel-union-ns=\"{}\" \
                 data-lane-busy-pct=\"{:.4}\"><td>{name}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td>{}</tr>",
                d.device.map_or_else(String::new, |d| d.to_string()),
                d.busy_pct,
                lane.map_or(0, |l| l.scope.kernel_union_ns),
                lane.map_or(0.0, |l| l.busy_pct(self.lanes.scope_total_ns)),
                d.kernel_count,
                ms(d.busy_us),
                share_cell(d.busy_pct / 100.0),
            );
        }
        o.push_str("</tbody></table></section>");
    }

    fn gate_section(&self, o: &mut String) {
        let Some(g) = self.gate else { return };
        let class = if g.decision == Decision::Suppress {
            "bad"
        } else {
            "ok"
        };
        let unknown = || "unknown".to_owned();
        let _ = write!(
            o,
            "<section aria-labelledby=\"h-gate\"><h2 id=\"h-gate\">Gate verdict</h2>\
             <div class=\"banner {class}\" id=\"gate\" data-decision=\"{}\">{}: idle {} \
             (threshold {}), compute {} (minimum {})</div>",
            g.decision.as_str(),
            text(g.decision.as_str()),
            g.idle_pct.map_or_else(unknown, pct),
            pct(g.threshold_pct),
            g.compute_pct.map_or_else(unknown, pct),
            pct(g.min_compute_pct),
        );
        if !g.warnings.is_empty() {
            o.push_str("<ul id=\"gate-warnings\">");
            for w in &g.warnings {
                let level = if w.severity == Severity::Info {
                    "info"
                } else {
                    "warning"
                };
                let strong = w.code == WarningCode::GraphUnderRecorded;
                let _ = write!(
                    o,
                    "<li data-code=\"{}\">{}{level}: <code>{}</code>: {}{}</li>",
                    w.code.as_str(),
                    if strong { "<strong>" } else { "" },
                    w.code.as_str(),
                    text(&w.message),
                    if strong { "</strong>" } else { "" },
                );
            }
            o.push_str("</ul>");
        }
        o.push_str("</section>");
    }

    fn groups_section(&self, o: &mut String) {
        let Some(groups) = self.groups else { return };
        o.push_str("<section aria-labelledby=\"h-tg\"><h2 id=\"h-tg\">Task groups</h2>");
        if self.suppressed > 0 {
            let _ = write!(
                o,
                "<p>The gate held back all {} hot kernel row(s): this workload is limited by the \
                 host or by waiting, not by its kernels.</p></section>",
                self.suppressed
            );
            return;
        }
        o.push_str(
            "<table id=\"task-groups\"><thead><tr><th>id</th><th>share</th><th>calls</th>\
             <th>category</th><th>kind</th><th>source</th><th>route</th><th>operation</th>\
             </tr></thead><tbody>",
        );
        for g in groups {
            let more = if g.kernel_count > 1 {
                format!(" (+{} more)", g.kernel_count - 1)
            } else {
                String::new()
            };
            let _ = write!(
                o,
                "<tr><td>{}</td>{}<td class=\"n\">{}</td><td>{}</td><td>{}</td>\
                 <td class=\"name\">{}</td><td>{}</td><td class=\"name\">{}{more}</td></tr>",
                text(&g.id),
                share_cell(g.share),
                g.calls,
                text(&g.category),
                text(&g.kind),
                text(&g.source),
                text(&g.route),
                text(&g.operation),
            );
        }
        o.push_str("</tbody></table></section>");
    }

    fn baseline_section(&self, o: &mut String) {
        let Some(b) = self.baseline else { return };
        let _ = write!(
            o,
            "<section aria-labelledby=\"h-base\"><h2 id=\"h-base\">Change since baseline</h2>\
             <p class=\"meta\">baseline <code>{}</code></p><p id=\"baseline-headline\">{}</p>",
            text(&b.trace_file),
            text(&b.headline),
        );
        if !b.warnings.is_empty() {
            o.push_str("<ul id=\"baseline-warnings\">");
            for w in &b.warnings {
                let _ = write!(o, "<li>warning: {}</li>", text(w));
            }
            o.push_str("</ul>");
        }
        // Bars are scaled to the largest change shown, so the biggest mover is full width.
        let largest = b
            .rows
            .iter()
            .map(|r| (r.after_us - r.before_us).abs())
            .fold(0.0_f64, f64::max);
        o.push_str(
            "<table id=\"baseline\"><thead><tr><th>id</th><th>status</th><th>before ms</th>\
             <th>now ms</th><th>Δ ms</th><th>Δ %</th><th>operation</th></tr></thead><tbody>",
        );
        for r in &b.rows {
            let delta = r.after_us - r.before_us;
            let width = if largest > 0.0 {
                delta.abs() / largest * 100.0
            } else {
                0.0
            };
            let (class, label) = if delta > 0.0 {
                ("slower", "slower")
            } else if delta < 0.0 {
                ("faster", "faster")
            } else {
                ("same", "unchanged")
            };
            let pct = match (r.status, r.delta_pct) {
                (BaselineStatus::Matched, Some(p)) => signed(p, 1) + "%",
                (BaselineStatus::Added, _) => "new".to_owned(),
                (BaselineStatus::Removed, _) => "gone".to_owned(),
                _ => "-".to_owned(),
            };
            let _ = write!(
                o,
                "<tr data-status=\"{status}\" data-delta-us=\"{delta:.3}\"><td>{}</td>\
                 <td>{status}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td><div class=\"share\"><span class=\"bar {class}\" style=\"width:{width:.1}%\" \
                 role=\"presentation\"></span><span class=\"pct\">{}</span></div></td>\
                 <td class=\"n\" title=\"{label}\">{}</td><td class=\"name\">{}</td></tr>",
                text(&r.id),
                ms(r.before_us),
                ms(r.after_us),
                signed(delta / 1000.0, 3),
                text(&pct),
                text(&r.operation),
                status = r.status.as_str(),
            );
        }
        o.push_str("</tbody></table>");
        if b.not_shown > 0 {
            let _ = write!(
                o,
                "<p class=\"meta\">… and {} more group(s) with smaller changes (see \
                 <code>kernlens diff</code>).</p>",
                b.not_shown
            );
        }
        o.push_str("</section>");
    }

    fn kernels(&self, o: &mut String) {
        let a = self.analysis;
        o.push_str(
            "<section aria-labelledby=\"h-k\"><h2 id=\"h-k\">Top kernels</h2>\
             <table id=\"kernels\"><thead><tr><th>kernel</th><th>calls</th><th>ms</th>\
             <th>share of kernel time</th><th>op</th></tr></thead><tbody>",
        );
        for k in &a.kernels {
            let _ = write!(
                o,
                "<tr><td class=\"name\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{}\
                 <td class=\"name\">{}</td></tr>",
                text(&k.name),
                k.calls,
                ms(k.total_us),
                share_cell(k.share),
                text(&k.op_name),
            );
        }
        o.push_str("</tbody></table></section>");
    }

    fn ops(&self, o: &mut String) {
        let a = self.analysis;
        o.push_str(
            "<section aria-labelledby=\"h-o\"><h2 id=\"h-o\">Top ops</h2>\
             <table id=\"ops\"><thead><tr><th>op</th><th>kernels</th><th>ms</th>\
             <th>share of kernel time</th></tr></thead><tbody>",
        );
        for r in &a.ops {
            let _ = write!(
                o,
                "<tr><td class=\"name\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{}</tr>",
                text(&r.name),
                r.calls,
                ms(r.total_us),
                share_cell(r.share),
            );
        }
        o.push_str("</tbody></table></section>");
    }

    fn problems(&self, o: &mut String) {
        let a = self.analysis;
        if a.stream_errors.is_empty() && a.stream_overlap.is_none() {
            return;
        }
        o.push_str("<section aria-labelledby=\"h-p\"><h2 id=\"h-p\">Trace problems</h2><ul>");
        if let Some(s) = &a.stream_overlap {
            let _ = write!(
                o,
                "<li>{}: a stream's recorded durations overlap by {} ({:.1}% of its device \
                 time); worst event <code>{}</code></li>",
                text(&s.severity),
                text(&duration(s.excess_us * 1000.0)),
                s.excess_share * 100.0,
                text(&s.worst_event),
            );
        }
        const SHOWN: usize = 20;
        for e in a.stream_errors.iter().take(SHOWN) {
            let _ = write!(o, "<li>recovered: {}</li>", text(e));
        }
        if a.stream_errors.len() > SHOWN {
            let _ = write!(
                o,
                "<li>… and {} more (see <code>kernlens summary</code>)</li>",
                a.stream_errors.len() - SHOWN
            );
        }
        o.push_str("</ul></section>");
    }
}

/// The standalone timeline: the SVG document alone, with its own styles.
pub fn render_svg(lanes: &Lanes) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&timeline_svg(lanes, true));
    s.push('\n');
    s
}
