//! The sequential fold: parsed events (in file order) become compact records, link maps
//! and interned names. Nothing here looks at an event twice. The fold (`Collector`)
//! finishes into [`Collected`], which later stages only read, each through the group it
//! needs (`Gpu`, `Launches`, `Cpu`) and the names.

use crate::dense::DenseMap;
use crate::event::{Args, Cat, Dim3, Event, IdRaw, IdVal, normalize_dtypes, normalize_shapes};
use crate::gpu::GpuRecs;
use crate::intern::{Interner, Map, Set, StrInterner, bytes_key};
use crate::json::RawStr;

/// `u32::MAX` marks "none" in the compact id fields.
pub(crate) const NONE: u32 = u32::MAX;

/// Device activity kinds. Memsets count as memcpy everywhere (trace.md "Event classification (one pass)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GpuKind {
    Kernel,
    Memcpy,
}

/// One kernel, memcpy or memset: a few integers. Stored packed in [`GpuRecs`] (32 bytes
/// a record) and handed out as this, by value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GpuRec {
    pub(crate) ts: i64,
    pub(crate) dur: i64,
    corr_value: i64,
    device_value: i64,
    pub(crate) name: u32,
    /// Interned `(pid, tid)`.
    pub(crate) stream: u32,
    /// Interned `(grid, block)` of the event itself, or [`NONE`].
    pub(crate) geometry: u32,
    pub(crate) kind: GpuKind,
    has_corr: bool,
    has_device: bool,
}

impl GpuRec {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ts: i64,
        dur: i64,
        corr: Option<i64>,
        device: Option<i64>,
        name: u32,
        stream: u32,
        geometry: u32,
        kind: GpuKind,
    ) -> Self {
        GpuRec {
            ts,
            dur,
            corr_value: corr.unwrap_or(0),
            device_value: device.unwrap_or(0),
            name,
            stream,
            geometry,
            kind,
            has_corr: corr.is_some(),
            has_device: device.is_some(),
        }
    }

    /// `args.correlation`, when it was an integer.
    #[inline]
    pub(crate) fn corr(&self) -> Option<i64> {
        self.has_corr.then_some(self.corr_value)
    }

    /// The event's device (trace.md "Per device").
    #[inline]
    pub(crate) fn device(&self) -> Option<i64> {
        self.has_device.then_some(self.device_value)
    }
}

/// A kernel's launch geometry `(grid, block)` as a worker's map key, hashed as six
/// integers: the derived hash writes each array as a 24-byte string, which takes
/// foldhash's long-input path twice per kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry(Option<Dim3>, Option<Dim3>);

impl std::hash::Hash for Geometry {
    // Kept inline in the region workers' digest loop (out of line it cost ~1% of a
    // summary's instructions).
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // Which parts are present, then their values: equal keys write the same words.
        h.write_u8(u8::from(self.0.is_some()) | (u8::from(self.1.is_some()) << 1));
        for d in [&self.0, &self.1].into_iter().flatten() {
            for &x in d {
                h.write_i64(x);
            }
        }
    }
}

impl Geometry {
    /// A cheap key for [`Interner::intern_keyed`]: the six integers folded together.
    #[inline]
    fn key(&self) -> u64 {
        let mut k = 0u64;
        for d in [&self.0, &self.1].into_iter().flatten() {
            for &x in d {
                k = k.rotate_left(11) ^ x as u64;
            }
        }
        k
    }
}

/// Op meta recorded per External id (first seen wins).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Meta {
    pub(crate) shapes: Vec<Vec<i64>>,
    pub(crate) dtypes: Vec<String>,
    pub(crate) kernel_file: String,
    pub(crate) kernel_backend: String,
}

/// The op an External id names, and its meta.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpInfo {
    pub(crate) name: u32,
    pub(crate) meta: u32,
}

/// A named span (`ts`, `dur` in ns).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) name: u32,
    pub(crate) ts: i64,
    pub(crate) dur: i64,
    /// Interned pid for CPU spans, [`NONE`] for GPU ones.
    pub(crate) pid: u32,
}

/// Where and when a correlation was launched on the CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaunchAt {
    pub(crate) ts: i64,
    pub(crate) pid: u32,
}

/// What one read keeps, grouped by who reads it: the fold writes it, later stages only
/// read it (each takes the narrowest group it needs).
#[derive(Default)]
pub(crate) struct Collected {
    /// Every event read, analysed or not.
    pub(crate) event_total: u64,
    /// The earliest `ts` of a complete (`ph: X`) event folded by name (CPU ops, runtime
    /// calls, annotations); GPU records are in `gpu`. The origin of relative windows.
    pub(crate) first_complete_ts: Option<i64>,
    /// Kernel, op, annotation and span names; every `name` id indexes it.
    pub(crate) names: StrInterner,
    pub(crate) gpu: Gpu,
    pub(crate) launches: Launches,
    pub(crate) cpu: Cpu,
}

/// The GPU side: kernel and copy records with the streams and geometries their ids
/// index, and the GPU user annotations.
#[derive(Default)]
pub(crate) struct Gpu {
    recs: GpuRecs,
    streams: Interner<(IdVal<'static>, IdVal<'static>)>,
    geometries: Interner<(Option<Dim3>, Option<Dim3>)>,
    annotations: Vec<Span>,
}

impl Gpu {
    /// Every GPU record, in file order.
    pub(crate) fn recs(&self) -> &GpuRecs {
        &self.recs
    }

    /// How many streams the records' `stream` ids index.
    pub(crate) fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// The `(pid, tid)` of stream `id`.
    pub(crate) fn stream(&self, id: u32) -> Option<&(IdVal<'static>, IdVal<'static>)> {
        self.streams.get(id)
    }

    /// The `(grid, block)` of geometry `id`.
    pub(crate) fn geometry(&self, id: u32) -> Option<&(Option<Dim3>, Option<Dim3>)> {
        self.geometries.get(id)
    }

    /// The GPU user annotations, in file order.
    pub(crate) fn annotations(&self) -> &[Span] {
        &self.annotations
    }
}

/// A correlation's launch: the External id it links to, and where and when (the last
/// given of each).
#[derive(Debug, Clone, Copy)]
struct Launch {
    ext: Option<i64>,
    at: LaunchAt,
}

/// The CPU launches of GPU work, by correlation: the External id each links to, where and
/// when it was launched, and which were graph launches.
#[derive(Default)]
pub(crate) struct Launches {
    /// One map for both (a launch without an External id has only its place): one
    /// look-up per launch where two maps took two.
    by_corr: Map<i64, Launch>,
    runtime_graph: Set<i64>,
    driver_graph: Set<i64>,
}

impl Launches {
    /// The External id (CPU op) correlation `corr` links to.
    pub(crate) fn external(&self, corr: i64) -> Option<i64> {
        self.by_corr.get(&corr)?.ext
    }

    /// Where and when correlation `corr` was launched.
    pub(crate) fn at(&self, corr: i64) -> Option<&LaunchAt> {
        self.by_corr.get(&corr).map(|l| &l.at)
    }

    /// Correlations of runtime `…GraphLaunch` calls.
    pub(crate) fn runtime_graph(&self) -> &Set<i64> {
        &self.runtime_graph
    }

    /// Correlations of driver `…GraphLaunch` calls.
    pub(crate) fn driver_graph(&self) -> &Set<i64> {
        &self.driver_graph
    }

    /// Every `(correlation, External id)` link, in no order.
    #[cfg(test)]
    pub(crate) fn links(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.by_corr.iter().filter_map(|(&k, l)| Some((k, l.ext?)))
    }
}

/// The CPU side: ops by External id with their metas, and the spans that can mark steps.
#[derive(Default)]
pub(crate) struct Cpu {
    ops: DenseMap<OpInfo>,
    metas: Interner<Meta>,
    steps: Vec<Span>,
    spans: Vec<Span>,
}

impl Cpu {
    /// The op with External id `ext`.
    pub(crate) fn op(&self, ext: i64) -> Option<&OpInfo> {
        self.ops.get(ext)
    }

    /// How many ops were kept.
    #[cfg(test)]
    pub(crate) fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Meta `id` (shapes, dtypes, kernel file) of an op.
    pub(crate) fn meta(&self, id: u32) -> Option<&Meta> {
        self.metas.get(id)
    }

    /// The metas, owned (the launch records keep them past the read).
    pub(crate) fn into_metas(self) -> Interner<Meta> {
        self.metas
    }

    /// `ProfilerStep#N` spans (CPU ops and user annotations), in file order.
    pub(crate) fn steps(&self) -> &[Span] {
        &self.steps
    }

    /// CPU spans that can twin a GPU annotation, steps included, in file order.
    pub(crate) fn spans(&self) -> &[Span] {
        &self.spans
    }
}

/// Interned pids: only the fold numbers them (spans and launches carry the ids).
#[derive(Default)]
struct Pids {
    ids: Interner<IdVal<'static>>,
    /// The last integer pid interned, and its id.
    last: Option<(i64, u32)>,
}

/// The raw text of an op's four meta fields, empty ones left out (trace.md "Event
/// classification (one pass)"): what a region worker numbers, so that the fold looks
/// each distinct text up once per region instead of hashing it once per op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MetaText<'a> {
    dims: &'a [u8],
    types: &'a [u8],
    file: Option<RawStr<'a>>,
    backend: Option<RawStr<'a>>,
}

impl<'a> MetaText<'a> {
    /// The text of `args`' meta, or None when every field is empty (the op has no meta).
    pub(crate) fn of(args: &Args<'a>) -> Option<Self> {
        let file = args.kernel_file.filter(|f| !f.raw.is_empty());
        let text = MetaText {
            dims: args.input_dims.unwrap_or_default(),
            types: args.input_type.unwrap_or_default(),
            file,
            // The backend counts only beside a kernel file.
            backend: file.and(args.kernel_backend),
        };
        (!text.dims.is_empty() || !text.types.is_empty() || file.is_some()).then_some(text)
    }

    /// A cheap key for [`Interner::intern_keyed`]: the shapes' and types' texts keyed as
    /// bytes (the kernel file's length beside them). An eager step's ops cycle through
    /// a few dozen meta texts, so the last one alone (`intern_repeat`) mostly missed and
    /// hashed every byte of all four fields.
    #[inline]
    fn key(&self) -> u64 {
        let file = self.file.map_or(0, |f| f.raw.len() as u64);
        bytes_key(self.dims) ^ bytes_key(self.types).rotate_left(23) ^ file.rotate_left(47)
    }
}

/// Meta ids by the raw text of their four fields: most ops repeat their shapes, so the
/// normalisation runs once per distinct text, not once per op.
#[derive(Default)]
struct MetaIds {
    by_raw: Map<Box<[u8]>, u32>,
    /// The key being looked up (reused).
    raw_key: Vec<u8>,
}

/// The meta id of an op's meta text ([`NONE`] when all its fields normalise to empty).
fn meta_id(metas: &mut Interner<Meta>, o: &mut MetaIds, text: &MetaText<'_>) -> u32 {
    let parts: [&[u8]; 4] = [
        text.dims,
        text.types,
        text.file.map_or(&[][..], |f| f.raw),
        text.backend.map_or(&[][..], |b| b.raw),
    ];
    o.raw_key.clear();
    for p in parts {
        o.raw_key.extend_from_slice(&(p.len() as u64).to_le_bytes());
        o.raw_key.extend_from_slice(p);
    }
    if let Some(&id) = o.by_raw.get(&o.raw_key[..]) {
        return id;
    }
    let meta = Meta {
        shapes: normalize_shapes(text.dims),
        dtypes: normalize_dtypes(text.types),
        kernel_file: text
            .file
            .map(|f| f.decode().into_owned())
            .unwrap_or_default(),
        kernel_backend: text
            .backend
            .map(|b| b.decode().into_owned())
            .unwrap_or_default(),
    };
    let id = if meta == Meta::default() {
        NONE
    } else {
        metas.intern(meta)
    };
    o.by_raw.insert(o.raw_key.as_slice().into(), id);
    id
}

/// Folds events into [`Collected`]; what it needs only while folding (pid and meta
/// lookups) stays here. What the read serves beside the fold (an observer, a progress
/// sink) is held by the reader (`read::Feed`), not here.
#[derive(Default)]
pub(crate) struct Collector {
    out: Collected,
    pids: Pids,
    meta_ids: MetaIds,
    /// The big maps were sized for the whole input ([`Collector::presize`]).
    presized: bool,
}

/// The share of the input (1 in this) folded before the fold's maps are sized for the
/// whole of it: late enough that the count is a fair sample (an eager capture's first
/// megabytes hold twice its mean density of ops), early enough that the rehashes it saves
/// (each doubling rehashes every entry so far) are most of them.
const PRESIZE_AFTER: u64 = 8;

/// Whether `name` is `ProfilerStep#<digits>`.
pub(crate) fn is_profiler_step(name: &[u8]) -> bool {
    name.strip_prefix(b"ProfilerStep#")
        .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
}

/// Whether `name` holds `::` (a namespaced op such as `aten::mm`). Names are short, so a
/// byte loop beats setting up a substring search per event.
fn is_namespaced(name: &[u8]) -> bool {
    name.windows(2).any(|w| w == b"::")
}

impl Pids {
    /// The interned id of pid `pid`. Integer pids (the common case) skip the hash while
    /// they repeat: a trace's CPU events come in long runs from one process.
    fn id(&mut self, pid: &IdRaw<'_>) -> u32 {
        if let IdRaw::Int(p) = *pid {
            if let Some((last, id)) = self.last
                && last == p
            {
                return id;
            }
            let id = self.ids.intern(IdVal::Int(p));
            self.last = Some((p, id));
            return id;
        }
        self.ids.intern(pid.decode().into_owned())
    }
}

impl Collector {
    /// What the read kept, finished.
    pub(crate) fn finish(self) -> Collected {
        self.out
    }

    /// What the fold holds so far.
    #[cfg(test)]
    pub(crate) fn collected(&self) -> &Collected {
        &self.out
    }

    /// Sizes the maps that grow with the trace (launches by correlation, ops by External
    /// id) and the GPU records for the whole input, from their size when `done` of `total`
    /// bytes are read, once: growing them by doubling rehashed every entry again at each
    /// step (`reserve_rehash` was an eighth of the folding thread's instructions on an
    /// eager capture), and the folding thread is on the read's critical path. The records
    /// get their room on huge pages where the system gives them ([`GpuRecs::reserve_total`]).
    pub(crate) fn presize(&mut self, done: u64, total: Option<u64>) {
        let Some(total) = total else { return };
        if self.presized || done == 0 || done.saturating_mul(PRESIZE_AFTER) < total {
            return;
        }
        self.presized = true;
        let whole = |n: usize| (n as u128 * u128::from(total) / u128::from(done)) as usize;
        let l = &mut self.out.launches;
        l.by_corr
            .reserve(whole(l.by_corr.len()).saturating_sub(l.by_corr.len()));
        let ops = &mut self.out.cpu.ops;
        ops.reserve(whole(ops.len()).saturating_sub(ops.len()));
        // An eighth more than the estimate, so the records' one allocation (on huge
        // pages where the system gives them) is seldom outgrown.
        let gpu = &mut self.out.gpu.recs;
        gpu.reserve_total(whole(gpu.len()).saturating_add(whole(gpu.len()) / 8));
    }

    /// Events counted so far.
    pub(crate) fn event_total(&self) -> u64 {
        self.out.event_total
    }

    /// Sets the count of events read (a region's walk counts its events as it goes).
    pub(crate) fn set_event_total(&mut self, n: u64) {
        self.out.event_total = n;
    }

    /// Counts an event analysis does not use.
    pub(crate) fn skip(&mut self) {
        self.out.event_total += 1;
    }

    pub(crate) fn fold(&mut self, ev: Event<'_>) {
        self.fold_named(&ev, Numbers::NONE, &mut Resolve::empty());
    }

    /// Folds a GPU record the reader digested: its name, stream and geometry are the
    /// region's numbers, resolved here in file order. Gives the read's numbers for its name
    /// and its `(pid, tid)` ([`NONE`] where the stream could not be numbered).
    #[inline]
    pub(crate) fn fold_gpu(&mut self, rec: GpuRec, d: &mut Resolve<'_, '_>) -> (u32, u32) {
        let o = &mut self.out;
        o.event_total += 1;
        let geometry = d
            .geometries
            .resolve(rec.geometry, |&Geometry(grid, block)| {
                o.gpu.geometries.intern((grid, block))
            })
            .unwrap_or(NONE);
        let name = d.name(rec.name, &EMPTY, &mut o.names);
        let stream = d
            .streams
            .resolve(rec.stream, |(pid, tid)| {
                o.gpu
                    .streams
                    .intern((pid.decode().into_owned(), tid.decode().into_owned()))
            })
            .unwrap_or(NONE);
        o.gpu.recs.push(GpuRec {
            name,
            stream,
            geometry,
            ..rec
        });
        (name, stream)
    }

    /// Folds an event whose name (and meta text) the reader numbered (`n`, numbers of
    /// `keys`' region).
    pub(crate) fn fold_named(&mut self, ev: &Event<'_>, n: Numbers, keys: &mut Resolve<'_, '_>) {
        match ev.cat {
            Cat::Kernel | Cat::Memcpy | Cat::Memset => self.fold_gpu_event(ev, n, keys),
            // Only counted (an observer's Python frames, split's flows and others).
            Cat::PythonFunction | Cat::Flow | Cat::Other => self.out.event_total += 1,
            _ => {
                let flags = keys.name_flags(n.name);
                self.fold_brief(&Brief::whole(ev, n, flags), Some(ev), keys);
            }
        }
    }

    /// Folds a GPU event the reader did not digest (the streaming path, escaped names).
    fn fold_gpu_event(&mut self, ev: &Event<'_>, n: Numbers, keys: &mut Resolve<'_, '_>) {
        let o = &mut self.out;
        o.event_total += 1;
        if ev.ph_x {
            o.first_complete_ts = Some(o.first_complete_ts.map_or(ev.ts, |t| t.min(ev.ts)));
        }
        let kind = if ev.cat == Cat::Kernel {
            GpuKind::Kernel
        } else {
            GpuKind::Memcpy
        };
        let device = ev.args.device.or(ev.pid.as_int());
        let geometry = if ev.args.grid.is_some() || ev.args.block.is_some() {
            o.gpu.geometries.intern((ev.args.grid, ev.args.block))
        } else {
            NONE
        };
        let name = keys.name(n.name, &ev.name, &mut o.names);
        let stream = o
            .gpu
            .streams
            .intern((ev.pid.decode().into_owned(), ev.tid.decode().into_owned()));
        o.gpu.recs.push(GpuRec::new(
            ev.ts,
            ev.dur,
            ev.args.correlation,
            device,
            name,
            stream,
            geometry,
            kind,
        ));
    }

    /// Folds a kept event other than a GPU one: a [`Brief`] a region worker made, or one
    /// made here of `own`, the full event (whose text then stands in for the numbers the
    /// brief does not have).
    pub(crate) fn fold_brief(
        &mut self,
        b: &Brief,
        own: Option<&Event<'_>>,
        keys: &mut Resolve<'_, '_>,
    ) {
        let o = &mut self.out;
        o.event_total += 1;
        let ph_x = b.has(Brief::PH_X);
        // Only the categories analysis itself reads: Python frames (an observer's), flows
        // and others (split's) would move the start with who is listening.
        if ph_x && !matches!(b.cat, Cat::PythonFunction | Cat::Flow | Cat::Other) {
            o.first_complete_ts = Some(o.first_complete_ts.map_or(b.ts, |t| t.min(b.ts)));
        }
        let own_name = own.map_or(&EMPTY, |e| &e.name);
        let own_pid = own.map(|e| &e.pid);
        match b.cat {
            Cat::Runtime | Cat::Driver => {
                let Some(corr) = b.corr() else {
                    return;
                };
                let pid = keys.pid(b.pid, own_pid, &mut self.pids);
                let (ext, at) = (b.ext(), LaunchAt { ts: b.ts, pid });
                o.launches
                    .by_corr
                    .entry(corr)
                    .and_modify(|l| {
                        l.at = at;
                        // A later launch without an External id keeps the link.
                        l.ext = ext.or(l.ext);
                    })
                    .or_insert(Launch { ext, at });
                if b.has(Brief::GRAPH) {
                    if b.cat == Cat::Runtime {
                        o.launches.runtime_graph.insert(corr);
                    } else {
                        o.launches.driver_graph.insert(corr);
                    }
                }
            }
            Cat::CpuOp => {
                let step = ph_x && b.has(Brief::STEP);
                if let Some(ext) = b.ext() {
                    let name = keys.name(b.name, own_name, &mut o.names);
                    let (metas, meta_ids) = (&mut o.cpu.metas, &mut self.meta_ids);
                    o.cpu.ops.upsert(
                        ext,
                        |info| info.name = name,
                        || {
                            let args = own.map(|e| &e.args);
                            let meta = keys.meta(b.meta, args, metas, meta_ids);
                            OpInfo { name, meta }
                        },
                    );
                }
                // Spans that can twin a GPU annotation (trace.md "Annotation coverage check") are kept; namespaced ATen
                // ops (`aten::mm`) never do, and keeping every op span would make memory
                // grow with the CPU side of the trace.
                if ph_x && (step || !b.has(Brief::NAMESPACED)) {
                    let pid = keys.pid(b.pid, own_pid, &mut self.pids);
                    let span = Span {
                        name: keys.name(b.name, own_name, &mut o.names),
                        ts: b.ts,
                        dur: b.dur,
                        pid,
                    };
                    if step {
                        o.cpu.steps.push(span);
                    }
                    o.cpu.spans.push(span);
                }
            }
            Cat::UserAnnotation => {
                let pid = keys.pid(b.pid, own_pid, &mut self.pids);
                let span = Span {
                    name: keys.name(b.name, own_name, &mut o.names),
                    ts: b.ts,
                    dur: b.dur,
                    pid,
                };
                if b.has(Brief::STEP) {
                    o.cpu.steps.push(span);
                }
                o.cpu.spans.push(span);
            }
            Cat::GpuUserAnnotation => {
                let name = keys.name(b.name, own_name, &mut o.names);
                o.gpu.annotations.push(Span {
                    name,
                    ts: b.ts,
                    dur: b.dur,
                    pid: NONE,
                });
            }
            // GPU events are folded as records (`fold_gpu`, `fold_gpu_event`).
            Cat::Kernel
            | Cat::Memcpy
            | Cat::Memset
            | Cat::PythonFunction
            | Cat::Flow
            | Cat::Other => {}
        }
    }
}

/// A kept event other than a GPU one, as the fold reads it: the few fields
/// [`Collector::fold_brief`] uses of its category, its name's and meta text's numbers in
/// its region, and the tests on its name made by the region worker that read it. A full
/// [`Event`] is ~320 bytes of which the fold reads a few dozen, and an eager capture's
/// kept events are mostly ops and launches: folding these, the folding thread reads a
/// sixth of the bytes and tests no names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Brief {
    ts: i64,
    dur: i64,
    corr: i64,
    ext: i64,
    /// The name's and meta text's numbers ([`NO_NAME`]: the full event's own text).
    name: u32,
    meta: u32,
    /// The pid's number in its region ([`NO_NAME`]: the full event's own pid).
    pid: u32,
    cat: Cat,
    flags: u8,
}

impl Brief {
    const PH_X: u8 = 1;
    /// The name is `ProfilerStep#N`.
    pub(crate) const STEP: u8 = 1 << 1;
    /// The name holds `::`.
    const NAMESPACED: u8 = 1 << 2;
    /// A runtime or driver `…GraphLaunch` call.
    const GRAPH: u8 = 1 << 3;
    const HAS_CORR: u8 = 1 << 4;
    const HAS_EXT: u8 = 1 << 5;
    /// In a region's table of name tests: a name not tested yet.
    pub(crate) const UNTESTED: u8 = u8::MAX;

    /// Whether a region worker folds `ev` to a brief: the categories the fold keeps
    /// briefs of, their names numbered (an escaped one is not), and not a kind an observer
    /// is shown (it sees the full event, `Feed::observe`).
    #[inline]
    pub(crate) fn fits(ev: &Event<'_>, observed: bool) -> bool {
        match ev.cat {
            Cat::Runtime | Cat::Driver => !observed,
            Cat::CpuOp | Cat::UserAnnotation | Cat::GpuUserAnnotation => !ev.name.escaped,
            _ => false,
        }
    }

    /// The tests on a name that the fold reads ([`Brief::STEP`], [`Brief::NAMESPACED`],
    /// [`Brief::GRAPH`]), whatever the category (the fold asks each category only its
    /// own): a region worker makes them once per distinct name.
    pub(crate) fn name_flags(name: &[u8]) -> u8 {
        let mut flags = 0;
        for (flag, on) in [
            (Brief::STEP, is_profiler_step(name)),
            (Brief::NAMESPACED, is_namespaced(name)),
            (Brief::GRAPH, crate::graph::is_graph_launch(name)),
        ] {
            if on {
                flags |= flag;
            }
        }
        flags
    }

    /// The tests on `ev`'s name ([`Brief::name_flags`]), on the raw bytes unless escapes
    /// make the text differ.
    pub(crate) fn text_flags(ev: &Event<'_>) -> u8 {
        if ev.name.escaped {
            Brief::name_flags(ev.name.decode().as_bytes())
        } else {
            Brief::name_flags(ev.name.raw)
        }
    }

    /// The brief of a whole event the fold was handed, with the tests its region's
    /// worker made on its name (`known`), or made here.
    fn whole(ev: &Event<'_>, n: Numbers, known: Option<u8>) -> Brief {
        let flags = known.unwrap_or_else(|| Brief::text_flags(ev));
        Brief::of(ev, n, NO_NAME, flags)
    }

    /// The brief of `ev`, numbered `n` (and `pid`) in its region, its name's tests
    /// `name_flags`.
    #[inline]
    pub(crate) fn of(ev: &Event<'_>, n: Numbers, pid: u32, name_flags: u8) -> Brief {
        let mut flags = name_flags;
        for (flag, on) in [
            (Brief::PH_X, ev.ph_x),
            (Brief::HAS_CORR, ev.args.correlation.is_some()),
            (Brief::HAS_EXT, ev.args.external_id.is_some()),
        ] {
            if on {
                flags |= flag;
            }
        }
        Brief {
            ts: ev.ts,
            dur: ev.dur,
            corr: ev.args.correlation.unwrap_or(0),
            ext: ev.args.external_id.unwrap_or(0),
            name: n.name,
            meta: n.meta,
            pid,
            cat: ev.cat,
            flags,
        }
    }

    #[inline]
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// `args.correlation`, when it was an integer.
    fn corr(&self) -> Option<i64> {
        self.has(Brief::HAS_CORR).then_some(self.corr)
    }

    /// `args["External id"]`, when it was an integer.
    fn ext(&self) -> Option<i64> {
        self.has(Brief::HAS_EXT).then_some(self.ext)
    }
}

/// A name or meta text the reader did not number.
pub(crate) const NO_NAME: u32 = u32::MAX;

/// Whether the fold interns the names of events of this category.
pub(crate) fn names_interned(cat: Cat) -> bool {
    matches!(
        cat,
        Cat::Kernel
            | Cat::Memcpy
            | Cat::Memset
            | Cat::CpuOp
            | Cat::UserAnnotation
            | Cat::GpuUserAnnotation
    )
}

/// The numbers a region worker gave an event it did not digest: its name's and, for a
/// CPU op with an External id, its meta text's ([`NO_NAME`] where it gave none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Numbers {
    pub(crate) name: u32,
    pub(crate) meta: u32,
}

impl Numbers {
    /// No numbers: the fold interns the event's own text.
    pub(crate) const NONE: Numbers = Numbers {
        name: NO_NAME,
        meta: NO_NAME,
    };

    /// Numbers `ev`'s name and meta text in the region's interners.
    #[inline]
    pub(crate) fn give<'a>(
        ev: &Event<'a>,
        names: &mut Interner<&'a [u8]>,
        metas: &mut Interner<MetaText<'a>>,
    ) -> Numbers {
        // Launch names are numbered for the worker's name tests only: the fold never
        // interns them.
        let numbered = names_interned(ev.cat) || matches!(ev.cat, Cat::Runtime | Cat::Driver);
        let name = if ev.name.escaped || !numbered {
            NO_NAME
        } else {
            names.intern_keyed(ev.name.raw, bytes_key(ev.name.raw))
        };
        // Only an op with an External id has its meta looked up.
        let meta = match (ev.cat, ev.args.external_id) {
            (Cat::CpuOp, Some(_)) => {
                MetaText::of(&ev.args).map_or(NONE_META, |t| metas.intern_keyed(t, t.key()))
            }
            _ => NO_NAME,
        };
        Numbers { name, meta }
    }
}

/// The meta number of an op whose fields are all empty: it has no meta.
const NONE_META: u32 = u32::MAX - 1;

/// One region's numbered keys (names, streams, geometries, meta texts) and their interned
/// ids, resolved on first use so that ids are still given in order of first sight.
pub(crate) struct Lazy<'r, K> {
    keys: &'r [K],
    /// Per number: its id once resolved (an id may be [`NONE`]: a meta that is empty).
    ids: Vec<Option<u32>>,
}

impl<'r, K> Lazy<'r, K> {
    pub(crate) fn new(keys: &'r [K]) -> Self {
        Lazy {
            keys,
            ids: vec![None; keys.len()],
        }
    }

    /// The id of number `n`, interned by `intern` the first time; None for a number the
    /// region did not give. (Inline: the fold resolves three numbers per GPU record, and
    /// out of line each call cost more than its look-up.)
    #[inline]
    fn resolve(&mut self, n: u32, intern: impl FnOnce(&K) -> u32) -> Option<u32> {
        // `ids` is as long as `keys`: the key is looked up only on the first use.
        let slot = self.ids.get_mut(n as usize)?;
        if let Some(id) = *slot {
            return Some(id);
        }
        let id = intern(self.keys.get(n as usize)?);
        *slot = Some(id);
        Some(id)
    }
}

const EMPTY: RawStr<'static> = RawStr {
    raw: b"",
    escaped: false,
};

/// A region's GPU events digested by the worker that read it: records with the region's
/// own numbers for names, streams and geometries (hashing done in parallel, while the
/// bytes are in that core's cache), a fraction of the size of the events.
#[derive(Default)]
pub(crate) struct Digest<'a> {
    pub(crate) recs: Vec<GpuRec>,
    streams: Interner<(IdRaw<'a>, IdRaw<'a>)>,
    /// The last stream numbered whose pid and tid were both integers, and its number:
    /// a GPU event's stream is mostly the one before it, and two integer compares are a
    /// fraction of the interner's test of two `IdRaw`s (which may be strings).
    last_int_stream: Option<(i64, i64, u32)>,
    geometries: Interner<Geometry>,
    /// For an observed read, per record: whether it is a memset (the record's kind
    /// counts memsets as memcpy; the observer is told which it was).
    pub(crate) memsets: Option<Vec<bool>>,
}

impl<'a> Digest<'a> {
    /// A digest that also keeps what an observer needs beside the records.
    pub(crate) fn observed() -> Self {
        Digest {
            memsets: Some(Vec::new()),
            ..Digest::default()
        }
    }

    /// The `(pid, tid)` a region's stream number stands for.
    pub(crate) fn stream(&self, n: u32) -> Option<&(IdRaw<'a>, IdRaw<'a>)> {
        self.streams.values().get(n as usize)
    }

    /// The number of stream `(pid, tid)`: the interner's, found without it when the
    /// stream is the last integer one numbered.
    #[inline]
    fn stream_number(&mut self, pid: IdRaw<'a>, tid: IdRaw<'a>) -> u32 {
        let (IdRaw::Int(p), IdRaw::Int(t)) = (pid, tid) else {
            return self.streams.intern_repeat((pid, tid));
        };
        match self.last_int_stream {
            Some((lp, lt, n)) if (lp, lt) == (p, t) => n,
            _ => {
                let n = self.streams.intern_repeat((pid, tid));
                self.last_int_stream = Some((p, t, n));
                n
            }
        }
    }

    /// Digests a kept GPU event whose name the worker numbered `name`; false when it is
    /// not one to digest (the event is then folded whole).
    pub(crate) fn take(&mut self, ev: &Event<'a>, name: u32) -> bool {
        if !ev.cat.is_gpu() || name == NO_NAME {
            return false;
        }
        let kind = if ev.cat == Cat::Kernel {
            GpuKind::Kernel
        } else {
            GpuKind::Memcpy
        };
        let geometry = if ev.args.grid.is_some() || ev.args.block.is_some() {
            let g = Geometry(ev.args.grid, ev.args.block);
            self.geometries.intern_keyed(g, g.key())
        } else {
            NONE
        };
        let stream = self.stream_number(ev.pid, ev.tid);
        if let Some(memsets) = &mut self.memsets {
            memsets.push(ev.cat == Cat::Memset);
        }
        self.recs.push(GpuRec::new(
            ev.ts,
            ev.dur,
            ev.args.correlation,
            ev.args.device.or(ev.pid.as_int()),
            name,
            stream,
            geometry,
            kind,
        ));
        true
    }
}

/// What the fold needs to turn a region's numbers into interned ids.
pub(crate) struct Resolve<'r, 'a> {
    names: Lazy<'r, &'a [u8]>,
    metas: Lazy<'r, MetaText<'a>>,
    pids: Lazy<'r, IdRaw<'a>>,
    /// Per name number: the tests the worker made on it ([`Brief::UNTESTED`]: none).
    name_flags: &'r [u8],
    streams: Lazy<'r, (IdRaw<'a>, IdRaw<'a>)>,
    geometries: Lazy<'r, Geometry>,
}

impl<'r, 'a> Resolve<'r, 'a> {
    /// The resolver of a region's numbers: its names (and the tests on them), meta
    /// texts, pids and digest.
    pub(crate) fn new(
        names: &'r [&'a [u8]],
        name_flags: &'r [u8],
        metas: &'r [MetaText<'a>],
        pids: &'r [IdRaw<'a>],
        d: &'r Digest<'a>,
    ) -> Self {
        Resolve {
            names: Lazy::new(names),
            metas: Lazy::new(metas),
            pids: Lazy::new(pids),
            name_flags,
            streams: Lazy::new(d.streams.values()),
            geometries: Lazy::new(d.geometries.values()),
        }
    }

    /// A resolver with no numbers (the streaming path: every event's text is its own).
    pub(crate) fn empty() -> Self {
        Resolve {
            names: Lazy::new(&[]),
            metas: Lazy::new(&[]),
            pids: Lazy::new(&[]),
            name_flags: &[],
            streams: Lazy::new(&[]),
            geometries: Lazy::new(&[]),
        }
    }

    /// The interned id of a name the reader numbered `n`, or of `name` itself when it
    /// did not (escaped names, the streaming path).
    #[inline]
    fn name(&mut self, n: u32, name: &RawStr<'_>, interner: &mut StrInterner) -> u32 {
        let numbered = self.names.resolve(n, |&raw| {
            interner.intern_raw(&RawStr {
                raw,
                escaped: false,
            })
        });
        numbered.unwrap_or_else(|| interner.intern_raw(name))
    }

    /// The meta id of an op whose meta text the reader numbered `n`, or of `args`' own
    /// text when it did not.
    fn meta(
        &mut self,
        n: u32,
        args: Option<&Args<'_>>,
        metas: &mut Interner<Meta>,
        ids: &mut MetaIds,
    ) -> u32 {
        if n == NONE_META {
            return NONE;
        }
        let numbered = self.metas.resolve(n, |text| meta_id(metas, ids, text));
        numbered.unwrap_or_else(|| {
            args.and_then(MetaText::of)
                .map_or(NONE, |t| meta_id(metas, ids, &t))
        })
    }

    /// The tests the region's worker made on the name it numbered `n`, if it made them.
    fn name_flags(&self, n: u32) -> Option<u8> {
        let flags = *self.name_flags.get(usize::try_from(n).ok()?)?;
        (flags != Brief::UNTESTED).then_some(flags)
    }

    /// The interned id of a pid the reader numbered `n`, or of `pid` itself when it did
    /// not.
    #[inline]
    fn pid(&mut self, n: u32, pid: Option<&IdRaw<'_>>, pids: &mut Pids) -> u32 {
        let numbered = self.pids.resolve(n, |p| pids.id(p));
        numbered.unwrap_or_else(|| pids.id(pid.unwrap_or(&IdRaw::Null)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::hash::BuildHasher;

    fn raw(s: &str) -> RawStr<'_> {
        RawStr {
            raw: s.as_bytes(),
            escaped: false,
        }
    }

    #[test]
    fn an_op_whose_meta_fields_are_all_empty_has_no_meta_text() {
        let mut args = Args {
            input_dims: Some(b""),
            kernel_file: Some(raw("")),
            // A backend without a kernel file does not count.
            kernel_backend: Some(raw("triton")),
            ..Args::default()
        };
        assert_eq!(MetaText::of(&args), None);
        args.kernel_file = Some(raw("k.py"));
        let text = MetaText::of(&args).unwrap();
        assert_eq!(text.backend, Some(raw("triton")));
        args.kernel_file = None;
        args.input_type = Some(b"[\"float\"]");
        assert_eq!(MetaText::of(&args).unwrap().backend, None);
    }

    #[test]
    fn meta_ids_follow_the_text_whichever_path_looks_it_up() {
        let args = Args {
            input_dims: Some(b"[[2, 3], []]"),
            input_type: Some(b"[\"float\", \"\"]"),
            ..Args::default()
        };
        let text = MetaText::of(&args).unwrap();
        let (mut metas, mut ids) = (Interner::default(), MetaIds::default());
        let mut region = Resolve::empty();
        // A number the region gave, then the event's own text: one meta.
        let numbered = {
            let keys = [text];
            let mut r = Resolve {
                metas: Lazy::new(&keys),
                ..Resolve::empty()
            };
            r.meta(0, Some(&args), &mut metas, &mut ids)
        };
        let own = region.meta(NO_NAME, Some(&args), &mut metas, &mut ids);
        assert_eq!((numbered, own), (0, 0));
        assert_eq!(metas.values()[0].shapes, vec![vec![2, 3], vec![]]);
        assert_eq!(
            region.meta(NONE_META, Some(&args), &mut metas, &mut ids),
            NONE
        );
        // `Input Dims: []` alone normalises to nothing: no meta.
        let empty = Args {
            input_dims: Some(b"[]"),
            ..Args::default()
        };
        assert_eq!(
            region.meta(NO_NAME, Some(&empty), &mut metas, &mut ids),
            NONE
        );
    }

    /// What the fold reads per op or launch stays a sixth of a whole event.
    #[test]
    fn a_brief_is_48_bytes() {
        assert_eq!(std::mem::size_of::<Brief>(), 48);
    }

    /// A correlation launched again keeps the last place and time, and the last
    /// External id given: a later launch without one does not unlink it.
    #[test]
    fn a_relaunched_correlation_keeps_its_last_link_and_place() {
        let launch = |ts: i64, ext: Option<i64>| Event {
            cat: Cat::Runtime,
            ph_x: true,
            ph_m: false,
            id: None,
            name: raw("cudaLaunchKernel"),
            pid: IdRaw::Int(ts),
            tid: IdRaw::Int(1),
            ts,
            dur: 1,
            args: Args {
                correlation: Some(5),
                external_id: ext,
                ..Args::default()
            },
        };
        let mut c = Collector::default();
        let mut steps = [
            (10, Some(7), Some(7)),
            (20, None, Some(7)),
            (30, Some(9), Some(9)),
        ]
        .into_iter()
        .map(|(ts, ext, linked)| {
            c.fold(launch(ts, ext));
            let l = &c.collected().launches;
            (l.external(5), l.at(5).map(|a| a.ts), linked, ts)
        });
        assert!(steps.all(|(ext, at, linked, ts)| ext == linked && at == Some(ts)));
        assert_eq!(c.collected().launches.links().count(), 1);
    }

    /// The last-integer-stream shortcut never changes a stream's number: mixed integer,
    /// string and null ids, runs and returns all get what a plain interner gives.
    #[test]
    fn stream_numbers_are_the_interners_whatever_the_ids() {
        let ids = [
            IdRaw::Int(0),
            IdRaw::Int(7),
            IdRaw::Str(raw("7")),
            IdRaw::Null,
            IdRaw::Int(-1),
        ];
        let mut d = Digest::default();
        let mut plain = Interner::default();
        // Every pair, then every pair again in another order, with runs.
        let pairs: Vec<(IdRaw<'_>, IdRaw<'_>)> = (0..60)
            .map(|i| (ids[(i * 7 / 5) % 5], ids[(i * 3 + i / 9) % 5]))
            .chain((0..25).map(|i| (ids[i / 5], ids[i % 5])))
            .collect();
        for (p, t) in pairs {
            assert_eq!(d.stream_number(p, t), plain.intern((p, t)), "{p:?} {t:?}");
        }
        assert_eq!(d.streams.values(), plain.values());
    }

    #[test]
    fn equal_geometries_hash_equal_and_absent_parts_differ() {
        let h = crate::intern::Hasher::default();
        let a = Geometry(Some([1, 2, 3]), None);
        assert_eq!(h.hash_one(a), h.hash_one(Geometry(Some([1, 2, 3]), None)));
        assert_ne!(a, Geometry(None, Some([1, 2, 3])));
        let mut i = Interner::default();
        let ids = [a, Geometry(None, Some([1, 2, 3])), a].map(|g| i.intern_repeat(g));
        assert_eq!(ids, [0, 1, 0]);
    }
}
