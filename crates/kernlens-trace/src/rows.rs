//! Attribution (trace.md "Attribution chain") and the kernel and op rows (trace.md "Rows").

use crate::collect::{Cpu, Gpu, GpuKind, GpuRec, Launches, Meta, NONE};
use crate::intern::StrInterner;
use crate::intern::{Map, Set};
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

/// Resolves one kernel through `corr → External id → op`.
pub(crate) fn resolve(
    launches: &Launches,
    cpu: &Cpu,
    names: &StrInterner,
    graph: &Set<i64>,
    r: &GpuRec,
) -> Resolved {
    let info = r
        .corr()
        .and_then(|k| launches.external(k))
        .and_then(|x| cpu.op(x));
    let meta = info.map_or(NONE, |i| i.meta);
    let bucket = match info {
        Some(i) if !names.get(i.name).is_empty() => Bucket::Op(i.name),
        _ if r.corr().is_some_and(|k| graph.contains(&k)) => Bucket::Graph,
        _ => Bucket::Unlinked,
    };
    Resolved { bucket, meta }
}

#[derive(Default)]
struct KernelAcc {
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

/// The slot of `i` in a dense accumulator vector, made with `new` the first time.
fn dense<T>(v: &mut Vec<Option<T>>, i: usize, new: impl FnOnce() -> T) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, || None);
    }
    v[i].get_or_insert_with(new)
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

/// Rows and attribution over the kept kernels (file order).
pub(crate) fn rows(
    names: &StrInterner,
    cpu: &Cpu,
    gpu: &Gpu,
    kept: impl Iterator<Item = (GpuRec, Resolved)>,
    top_k: usize,
) -> (Attribution, Vec<KernelRow>, Vec<OpRow>) {
    // Name ids are dense (interned in order), so the accumulators are vectors indexed
    // by id: one slot per name (ops: two more, for the graph and unlinked buckets).
    let mut kernel_order: Vec<u32> = Vec::new();
    let mut kernels: Vec<Option<KernelAcc>> = Vec::new();
    let mut op_order: Vec<Bucket> = Vec::new();
    let mut ops: Vec<Option<OpAcc>> = Vec::new();
    // Backfill signatures: meta ids with an integer shape map to (shapes, dtypes).
    let mut sig_of_meta: Map<u32, u32> = Map::default();
    let mut sigs: Map<(&[Vec<i64>], &[String]), u32> = Map::default();
    let mut sig_list: Vec<&Meta> = Vec::new();
    let (mut n_attr, mut n_graph, mut n_unlinked) = (0u64, 0u64, 0u64);
    let (mut ns_attr, mut ns_graph, mut ns_unlinked, mut ns_all) = (0i64, 0i64, 0i64, 0i64);
    for (r, res) in kept {
        if r.kind != GpuKind::Kernel {
            continue;
        }
        ns_all = ns_all.saturating_add(r.dur);
        match res.bucket {
            Bucket::Op(_) => (n_attr += 1, ns_attr = ns_attr.saturating_add(r.dur)),
            Bucket::Graph => (n_graph += 1, ns_graph = ns_graph.saturating_add(r.dur)),
            Bucket::Unlinked => (
                n_unlinked += 1,
                ns_unlinked = ns_unlinked.saturating_add(r.dur),
            ),
        };
        let op = dense(&mut ops, bucket_slot(res.bucket), || {
            op_order.push(res.bucket);
            OpAcc::default()
        });
        op.calls += 1;
        op.ns = op.ns.saturating_add(r.dur);
        let k = dense(&mut kernels, r.name as usize, || {
            kernel_order.push(r.name);
            KernelAcc {
                geometry: NONE,
                min: i64::MAX,
                max: i64::MIN,
                ..KernelAcc::default()
            }
        });
        k.calls += 1;
        k.ns = k.ns.saturating_add(r.dur);
        k.min = k.min.min(r.dur);
        k.max = k.max.max(r.dur);
        k.unbucketed |= !matches!(res.bucket, Bucket::Op(_));
        if k.geometry == NONE {
            k.geometry = r.geometry;
        }
        if let Bucket::Op(op) = res.bucket {
            match k.ops.iter_mut().find(|(o, _, _)| *o == op) {
                Some(entry) => entry.1 = entry.1.saturating_add(r.dur),
                None => k.ops.push((op, r.dur, res.meta)),
            }
        }
        if matches!(res.bucket, Bucket::Op(_) | Bucket::Graph) && res.meta != NONE {
            let sig = *sig_of_meta
                .entry(res.meta)
                .or_insert_with(|| match cpu.meta(res.meta) {
                    Some(m) if m.shapes.iter().any(|s| !s.is_empty()) => {
                        *sigs.entry((&m.shapes, &m.dtypes)).or_insert_with(|| {
                            sig_list.push(m);
                            (sig_list.len() - 1) as u32
                        })
                    }
                    _ => NONE,
                });
            if sig != NONE {
                match k.sigs.iter_mut().find(|(s, _)| *s == sig) {
                    Some(entry) => entry.1 = entry.1.saturating_add(r.dur),
                    None => k.sigs.push((sig, r.dur)),
                }
            }
        }
    }
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
    let kernel_rows = kernel_order
        .iter()
        .filter_map(|&id| kernels.get(id as usize)?.as_ref().map(|k| (id, k)))
        .map(|(id, k)| {
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
                    name: names.get(id).to_string(),
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
        .filter_map(|&b| ops.get(bucket_slot(b))?.as_ref().map(|o| (b, o)))
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
