//! Attribution (trace.md "Attribution chain") and the kernel and op rows (trace.md "Rows").

use crate::collect::{Cpu, Gpu, GpuKind, GpuRec, Launches, Meta, NONE};
use crate::gpu::GpuRecs;
use crate::intern::StrInterner;
use crate::intern::{Map, Set};
use crate::options::TimeWindow;
use crate::report::{Attribution, KernelRow, OpRow, pct, ratio, us};

/// Where a kernel's time is booked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Bucket {
    /// A named op (interned name id).
    Op(u32),
    Graph,
    Unlinked,
}

/// A kept kernel's resolution: its bucket and the External id it linked through.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    pub(crate) bucket: Bucket,
    /// Meta id of the linked External id, or [`NONE`].
    pub(crate) meta: u32,
}

/// Resolves a kernel with correlation `corr` through `corr → External id → op`.
pub(crate) fn resolve(
    launches: &Launches,
    cpu: &Cpu,
    names: &StrInterner,
    graph: &Set<i64>,
    corr: Option<i64>,
) -> Resolved {
    let info = corr
        .and_then(|k| launches.external(k))
        .and_then(|x| cpu.op(x));
    let meta = info.map_or(NONE, |i| i.meta);
    let bucket = match info {
        Some(i) if !names.get(i.name).is_empty() => Bucket::Op(i.name),
        _ if corr.is_some_and(|k| graph.contains(&k)) => Bucket::Graph,
        _ => Bucket::Unlinked,
    };
    Resolved { bucket, meta }
}

/// The kept kernels of a read: the kernel records whose start lies in the window, in
/// file order (the rows' first-seen rules read them so), with the resolution of each.
pub(crate) struct Kept<'a, R> {
    recs: &'a GpuRecs,
    window: Option<TimeWindow>,
    resolve: R,
}

impl<'a, R: Fn(Option<i64>) -> Resolved> Kept<'a, R> {
    /// `resolve` maps a kernel's correlation to its resolution ([`resolve`] over a read's
    /// records); it is asked once per run of kernels sharing a correlation.
    pub(crate) fn new(recs: &'a GpuRecs, window: Option<TimeWindow>, resolve: R) -> Self {
        Kept {
            recs,
            window,
            resolve,
        }
    }

    #[inline(always)]
    fn keeps(&self, r: &GpuRec) -> bool {
        r.kind == GpuKind::Kernel && self.window.is_none_or(|w| w.contains(r.ts))
    }

    /// Each kept kernel with its resolution.
    pub(crate) fn resolved(&self) -> impl Iterator<Item = (GpuRec, Resolved)> + '_ {
        // A replay's kernels share one correlation: resolve each run of them once.
        let mut last: Option<(Option<i64>, Resolved)> = None;
        self.recs
            .iter()
            .filter(|r| self.keeps(r))
            .map(move |r| match last {
                Some((k, res)) if k == r.corr() => (r, res),
                _ => {
                    let res = (self.resolve)(r.corr());
                    last = Some((r.corr(), res));
                    (r, res)
                }
            })
    }
}

struct KernelAcc {
    name: u32,
    calls: u64,
    ns: i64,
    /// Shortest and longest launch, ns.
    min: i64,
    max: i64,
    /// Some launch was in the `(graph)` or `(unlinked)` bucket.
    unbucketed: bool,
    /// Attributed ns per op, with the first launch's meta, in first-seen order.
    ops: Vec<(u32, i64, u32)>,
    /// ns per (shapes, dtypes) signature, first-seen order.
    sigs: Vec<(u32, i64)>,
    geometry: u32,
}

#[derive(Default)]
struct OpAcc {
    calls: u64,
    ns: i64,
}

/// A bucket's slot among the op accumulators.
fn bucket_slot(b: Bucket) -> usize {
    match b {
        Bucket::Graph => 0,
        Bucket::Unlinked => 1,
        Bucket::Op(id) => id as usize + 2,
    }
}

/// Orders rows by total descending, first-seen on ties, and keeps `top_k` (0 = all).
fn rank<T>(mut rows: Vec<(i64, T)>, top_k: usize) -> Vec<T> {
    // A stable sort keeps first-seen order among equal totals.
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    if top_k > 0 {
        rows.truncate(top_k);
    }
    rows.into_iter().map(|(_, t)| t).collect()
}

/// What every kernel of a run (kernels in file order sharing a correlation) books alike,
/// worked out once at the run's first kernel: a graph replay's kernels come in runs of
/// dozens.
#[derive(Clone, Copy)]
struct Run {
    corr: Option<i64>,
    /// The run's slot among the op accumulators.
    slot: usize,
    /// The op the run is attributed to, or [`NONE`].
    op: u32,
    meta: u32,
    /// The backfill signature the run's kernels add to, or [`NONE`].
    sig: u32,
    unbucketed: bool,
}

/// The backfill signatures: meta ids with an integer shape map to distinct
/// `(shapes, dtypes)` pairs, numbered in first-seen order.
struct Sigs<'a> {
    cpu: &'a Cpu,
    /// Per meta id: its signature, [`NONE`], or [`Sigs::UNSEEN`].
    of_meta: Vec<u32>,
    ids: Map<(&'a [Vec<i64>], &'a [String]), u32>,
    list: Vec<&'a Meta>,
}

impl<'a> Sigs<'a> {
    const UNSEEN: u32 = NONE - 1;

    /// The signature of meta `meta`, looked up once per meta id.
    fn of(&mut self, meta: u32) -> u32 {
        let i = meta as usize;
        if self.of_meta.len() <= i {
            self.of_meta.resize(i + 1, Self::UNSEEN);
        }
        if self.of_meta[i] == Self::UNSEEN {
            let list = &mut self.list;
            self.of_meta[i] = match self.cpu.meta(meta) {
                Some(m) if m.shapes.iter().any(|s| !s.is_empty()) => {
                    *self.ids.entry((&m.shapes, &m.dtypes)).or_insert_with(|| {
                        list.push(m);
                        (list.len() - 1) as u32
                    })
                }
                _ => NONE,
            };
        }
        self.of_meta[i]
    }
}

/// Adds `ns` to the total (`sum`) of the entry `is` picks in a first-seen list, or appends
/// `new()` when there is none.
#[inline]
fn add_to<T>(
    list: &mut Vec<T>,
    is: impl Fn(&T) -> bool,
    ns: i64,
    sum: impl Fn(&mut T) -> &mut i64,
    new: impl FnOnce() -> T,
) {
    match list.iter_mut().find(|e| is(e)) {
        Some(e) => {
            let total = sum(e);
            *total = total.saturating_add(ns);
        }
        None => list.push(new()),
    }
}

/// Rows and attribution over the kept kernels.
pub(crate) fn rows<R: Fn(Option<i64>) -> Resolved>(
    names: &StrInterner,
    cpu: &Cpu,
    gpu: &Gpu,
    kept: &Kept<'_, R>,
    top_k: usize,
) -> (Attribution, Vec<KernelRow>, Vec<OpRow>) {
    // Accumulators in first-seen order, found through a slot per name id (ids are dense,
    // interned in order; ops have two more slots, for the graph and unlinked buckets).
    let mut kernels: Vec<KernelAcc> = Vec::new();
    let mut kernel_of_name: Vec<u32> = vec![NONE; names.len()];
    let mut op_order: Vec<Bucket> = Vec::new();
    let mut ops: Vec<OpAcc> = Vec::new();
    let mut sigs = Sigs {
        cpu,
        of_meta: Vec::new(),
        ids: Map::default(),
        list: Vec::new(),
    };
    let mut run: Option<Run> = None;
    for r in kept.recs.iter() {
        if !kept.keeps(&r) {
            continue;
        }
        let corr = r.corr();
        let run = match run {
            Some(run) if run.corr == corr => run,
            _ => {
                let res = (kept.resolve)(corr);
                let slot = bucket_slot(res.bucket);
                if ops.len() <= slot {
                    ops.resize_with(slot + 1, OpAcc::default);
                }
                // A bucket is seen first at a run's first kernel.
                if ops[slot].calls == 0 {
                    op_order.push(res.bucket);
                }
                let sig = match res.bucket {
                    Bucket::Op(_) | Bucket::Graph if res.meta != NONE => sigs.of(res.meta),
                    _ => NONE,
                };
                let new = Run {
                    corr,
                    slot,
                    op: match res.bucket {
                        Bucket::Op(id) => id,
                        _ => NONE,
                    },
                    meta: res.meta,
                    sig,
                    unbucketed: !matches!(res.bucket, Bucket::Op(_)),
                };
                run = Some(new);
                new
            }
        };
        let dur = r.dur;
        let Some(op) = ops.get_mut(run.slot) else {
            continue;
        };
        op.calls += 1;
        op.ns = op.ns.saturating_add(dur);
        let name = r.name as usize;
        let at = match kernel_of_name.get(name) {
            Some(&at) if at != NONE => at as usize,
            _ => {
                if kernel_of_name.len() <= name {
                    kernel_of_name.resize(name + 1, NONE);
                }
                kernel_of_name[name] = kernels.len() as u32;
                kernels.push(KernelAcc {
                    name: r.name,
                    calls: 0,
                    ns: 0,
                    min: i64::MAX,
                    max: i64::MIN,
                    unbucketed: false,
                    ops: Vec::new(),
                    sigs: Vec::new(),
                    geometry: NONE,
                });
                kernels.len() - 1
            }
        };
        let Some(k) = kernels.get_mut(at) else {
            continue;
        };
        k.calls += 1;
        k.ns = k.ns.saturating_add(dur);
        k.min = k.min.min(dur);
        k.max = k.max.max(dur);
        k.unbucketed |= run.unbucketed;
        if k.geometry == NONE {
            k.geometry = r.geometry;
        }
        if run.op != NONE {
            add_to(
                &mut k.ops,
                |o| o.0 == run.op,
                dur,
                |o| &mut o.1,
                || (run.op, dur, run.meta),
            );
        }
        if run.sig != NONE {
            add_to(
                &mut k.sigs,
                |s| s.0 == run.sig,
                dur,
                |s| &mut s.1,
                || (run.sig, dur),
            );
        }
    }
    // Every kept kernel is booked in exactly one bucket, so the bucket totals are the
    // attribution's; durations are never negative (trace.md "Times"), so the saturating
    // sums of per-bucket saturating sums equal the per-kernel ones.
    let slot_of = |b: Bucket| ops.get(bucket_slot(b));
    let (graph, unlinked) = (slot_of(Bucket::Graph), slot_of(Bucket::Unlinked));
    let (n_graph, ns_graph) = graph.map_or((0, 0), |o| (o.calls, o.ns));
    let (n_unlinked, ns_unlinked) = unlinked.map_or((0, 0), |o| (o.calls, o.ns));
    let (n_attr, ns_attr) = ops.iter().skip(2).fold((0u64, 0i64), |(n, ns), o| {
        (n + o.calls, ns.saturating_add(o.ns))
    });
    let ns_all = ns_attr.saturating_add(ns_graph).saturating_add(ns_unlinked);
    let sig_list = sigs.list;
    let attribution = Attribution {
        kernel_count: n_attr + n_graph + n_unlinked,
        attributed_kernels: n_attr,
        unlinked_kernels: n_unlinked,
        graph_attributed_kernels: n_graph,
        attributed_pct: pct(ns_attr, ns_all),
        attributed_us: us(ns_attr),
        unlinked_us: us(ns_unlinked),
        graph_attributed_us: us(ns_graph),
    };
    let kernel_rows = kernels
        .iter()
        .map(|k| {
            // Majority op: most ns, first seen on ties (max_by keeps the last max, so reverse).
            let major = k.ops.iter().filter(|o| o.1 > 0).rev().max_by_key(|o| o.1);
            let meta = major.and_then(|m| cpu.meta(m.2));
            let best_sig = k
                .sigs
                .iter()
                .rev()
                .max_by_key(|s| s.1)
                .and_then(|s| sig_list.get(s.0 as usize));
            let (grid, block) = gpu.geometry(k.geometry).copied().unwrap_or((None, None));
            (
                k.ns,
                KernelRow {
                    name: names.get(k.name).to_string(),
                    calls: k.calls,
                    total_us: us(k.ns),
                    min_us: us(k.min),
                    max_us: us(k.max),
                    share: ratio(k.ns, ns_all),
                    op_count: k.ops.len() + usize::from(k.unbucketed),
                    op_name: major
                        .map(|m| names.get(m.0).to_string())
                        .unwrap_or_default(),
                    grid,
                    block,
                    op_shapes: meta.map(|m| m.shapes.clone()).unwrap_or_default(),
                    op_dtypes: meta.map(|m| m.dtypes.clone()).unwrap_or_default(),
                    op_kernel_file: meta.map(|m| m.kernel_file.clone()).unwrap_or_default(),
                    op_kernel_backend: meta.map(|m| m.kernel_backend.clone()).unwrap_or_default(),
                    backfill_shapes: best_sig.map(|m| m.shapes.clone()).unwrap_or_default(),
                    backfill_dtypes: best_sig.map(|m| m.dtypes.clone()).unwrap_or_default(),
                    backfill_ambiguous: k.sigs.len() > 1,
                    total_ns: k.ns,
                },
            )
        })
        .collect();
    let op_rows = op_order
        .iter()
        .filter_map(|&b| ops.get(bucket_slot(b)).map(|o| (b, o)))
        .map(|(b, o)| {
            let name = match b {
                Bucket::Op(id) => names.get(id).to_string(),
                Bucket::Graph => "(graph)".to_string(),
                Bucket::Unlinked => "(unlinked)".to_string(),
            };
            (
                o.ns,
                OpRow {
                    name,
                    calls: o.calls,
                    total_us: us(o.ns),
                    share: ratio(o.ns, ns_all),
                    total_ns: o.ns,
                },
            )
        })
        .collect();
    (attribution, rank(kernel_rows, top_k), rank(op_rows, top_k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rows' definition (trace.md "Rows"), kernel by kernel with a resolution each and
    /// plain maps: what the sweep over runs must equal. Metas are left out (the CPU side
    /// here has none).
    fn by_definition(
        names: &StrInterner,
        recs: &[GpuRec],
        window: Option<TimeWindow>,
        resolve: impl Fn(Option<i64>) -> Resolved,
        top_k: usize,
    ) -> (Attribution, Vec<KernelRow>, Vec<OpRow>) {
        let kept: Vec<(GpuRec, Bucket)> = recs
            .iter()
            .filter(|r| r.kind == GpuKind::Kernel && window.is_none_or(|w| w.contains(r.ts)))
            .map(|r| (*r, resolve(r.corr()).bucket))
            .collect();
        let sum = |keep: &dyn Fn(&(GpuRec, Bucket)) -> bool| {
            let of: Vec<&(GpuRec, Bucket)> = kept.iter().filter(|k| keep(k)).collect();
            (
                of.len() as u64,
                of.iter().fold(0i64, |t, (r, _)| t.saturating_add(r.dur)),
            )
        };
        let (n_attr, ns_attr) = sum(&|k| matches!(k.1, Bucket::Op(_)));
        let (n_graph, ns_graph) = sum(&|k| k.1 == Bucket::Graph);
        let (n_unlinked, ns_unlinked) = sum(&|k| k.1 == Bucket::Unlinked);
        let (_, ns_all) = sum(&|_| true);
        let mut kernel_names: Vec<u32> = Vec::new();
        let mut buckets: Vec<Bucket> = Vec::new();
        for (r, b) in &kept {
            if !kernel_names.contains(&r.name) {
                kernel_names.push(r.name);
            }
            if !buckets.contains(b) {
                buckets.push(*b);
            }
        }
        let kernels = kernel_names
            .iter()
            .map(|&name| {
                let of: Vec<&(GpuRec, Bucket)> = kept.iter().filter(|k| k.0.name == name).collect();
                let ns = of.iter().fold(0i64, |t, (r, _)| t.saturating_add(r.dur));
                let mut op_ns: Vec<(u32, i64)> = Vec::new();
                for (r, b) in &of {
                    if let Bucket::Op(op) = b {
                        match op_ns.iter_mut().find(|o| o.0 == *op) {
                            Some(o) => o.1 = o.1.saturating_add(r.dur),
                            None => op_ns.push((*op, r.dur)),
                        }
                    }
                }
                let unbucketed = of.iter().any(|k| !matches!(k.1, Bucket::Op(_)));
                let major = op_ns.iter().filter(|o| o.1 > 0).rev().max_by_key(|o| o.1);
                let row = KernelRow {
                    name: names.get(name).to_string(),
                    calls: of.len() as u64,
                    total_us: us(ns),
                    min_us: us(of.iter().map(|k| k.0.dur).min().unwrap_or(0)),
                    max_us: us(of.iter().map(|k| k.0.dur).max().unwrap_or(0)),
                    share: ratio(ns, ns_all),
                    op_count: op_ns.len() + usize::from(unbucketed),
                    op_name: major
                        .map(|m| names.get(m.0).to_string())
                        .unwrap_or_default(),
                    grid: None,
                    block: None,
                    op_shapes: Vec::new(),
                    op_dtypes: Vec::new(),
                    op_kernel_file: String::new(),
                    op_kernel_backend: String::new(),
                    backfill_shapes: Vec::new(),
                    backfill_dtypes: Vec::new(),
                    backfill_ambiguous: false,
                    total_ns: ns,
                };
                (ns, row)
            })
            .collect();
        let ops = buckets
            .iter()
            .map(|&b| {
                let (calls, ns) = sum(&|k| k.1 == b);
                let name = match b {
                    Bucket::Op(id) => names.get(id).to_string(),
                    Bucket::Graph => "(graph)".to_string(),
                    Bucket::Unlinked => "(unlinked)".to_string(),
                };
                let row = OpRow {
                    name,
                    calls,
                    total_us: us(ns),
                    share: ratio(ns, ns_all),
                    total_ns: ns,
                };
                (ns, row)
            })
            .collect();
        let attribution = Attribution {
            kernel_count: n_attr + n_graph + n_unlinked,
            attributed_kernels: n_attr,
            unlinked_kernels: n_unlinked,
            graph_attributed_kernels: n_graph,
            attributed_pct: pct(ns_attr, ns_all),
            attributed_us: us(ns_attr),
            unlinked_us: us(ns_unlinked),
            graph_attributed_us: us(ns_graph),
        };
        (attribution, rank(kernels, top_k), rank(ops, top_k))
    }

    proptest! {
        /// The sweep, which resolves a run of kernels sharing a correlation once and books
        /// the attribution from the bucket totals, equals the rows' definition: any mix of
        /// kernels and copies, correlations (runs, repeats, none), buckets, windows and
        /// durations up to ones whose sums saturate.
        #[test]
        fn rows_over_runs_equal_the_definition(
            raw in prop::collection::vec(
                (0i64..200, prop_oneof![4 => 0i64..50, 1 => Just(i64::MAX / 3)], prop::option::weighted(0.9, 0i64..6), 0u32..5, prop::bool::weighted(0.85)),
                0..60,
            ),
            // corr → bucket: an op (name id 5..8), the graph bucket or unlinked.
            table in prop::collection::vec(0u32..5, 6),
            window in prop::option::of((0i64..150, 0i64..150)),
            top_k in 0usize..4,
        ) {
            let mut names = StrInterner::default();
            for n in ["k0", "k1", "k2", "k3", "k4", "op5", "op6", "op7"] {
                names.intern(n);
            }
            let recs: Vec<GpuRec> = raw
                .iter()
                .map(|&(ts, dur, corr, name, kernel)| {
                    let kind = if kernel { GpuKind::Kernel } else { GpuKind::Memcpy };
                    GpuRec::new(ts, dur, corr, Some(0), name, 0, NONE, kind)
                })
                .collect();
            let mut store = GpuRecs::default();
            for r in &recs {
                store.push(*r);
            }
            let window = window.map(|(s, len)| TimeWindow::clamped(s, s + len));
            let resolve = |corr: Option<i64>| {
                let bucket = match corr.and_then(|k| table.get(k as usize)) {
                    Some(&t @ 0..=2) => Bucket::Op(5 + t),
                    Some(3) => Bucket::Graph,
                    _ => Bucket::Unlinked,
                };
                Resolved { bucket, meta: NONE }
            };
            let (cpu, gpu) = (Cpu::default(), Gpu::default());
            let kept = Kept::new(&store, window, resolve);
            prop_assert_eq!(
                rows(&names, &cpu, &gpu, &kept, top_k),
                by_definition(&names, &recs, window, resolve, top_k)
            );
        }
    }
}
