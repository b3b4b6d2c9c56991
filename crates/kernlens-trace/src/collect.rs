//! The sequential fold: parsed events (in file order) become compact records, link maps
//! and interned names. Nothing here looks at an event twice.

use crate::event::{Cat, Dim3, Event, IdRaw, IdVal, normalize_dtypes, normalize_shapes};
use crate::gpu::GpuRecs;
use crate::intern::{Interner, Map, Set, StrInterner};
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

/// Everything the pass keeps.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) event_total: u64,
    /// The earliest `ts` of a complete (`ph: X`) event folded by name (CPU ops, runtime
    /// calls, annotations); GPU records are in `gpu`. The origin of relative windows.
    pub(crate) first_complete_ts: Option<i64>,
    pub(crate) names: StrInterner,
    pub(crate) links: Map<i64, i64>,
    pub(crate) launch_at: Map<i64, LaunchAt>,
    pub(crate) runtime_graph: Set<i64>,
    pub(crate) driver_graph: Set<i64>,
    pub(crate) ops: Map<i64, OpInfo>,
    pub(crate) metas: Interner<Meta>,
    /// Meta ids by the raw text of their four fields: most ops repeat their shapes, so
    /// the normalisation runs once per distinct text, not once per op.
    meta_by_raw: Map<Box<[u8]>, u32>,
    raw_key: Vec<u8>,
    pub(crate) gpu: GpuRecs,
    pub(crate) gpu_annotations: Vec<Span>,
    pub(crate) cpu_steps: Vec<Span>,
    pub(crate) cpu_spans: Vec<Span>,
    pub(crate) streams: Interner<(IdVal<'static>, IdVal<'static>)>,
    pub(crate) pids: Interner<IdVal<'static>>,
    pub(crate) geometries: Interner<(Option<Dim3>, Option<Dim3>)>,
}

/// The meta id of an op's `args` (trace.md "Event classification (one pass)": empty fields omitted, no meta when all are empty).
fn meta_id(o: &mut Collected, args: &crate::event::Args<'_>) -> u32 {
    let file = args.kernel_file.filter(|f| !f.raw.is_empty());
    // The backend counts only beside a kernel file.
    let backend = file.and(args.kernel_backend);
    let parts: [&[u8]; 4] = [
        args.input_dims.unwrap_or_default(),
        args.input_type.unwrap_or_default(),
        file.map_or(&[][..], |f| f.raw),
        backend.map_or(&[][..], |b| b.raw),
    ];
    o.raw_key.clear();
    for p in parts {
        o.raw_key.extend_from_slice(&(p.len() as u64).to_le_bytes());
        o.raw_key.extend_from_slice(p);
    }
    if let Some(&id) = o.meta_by_raw.get(&o.raw_key[..]) {
        return id;
    }
    let meta = Meta {
        shapes: args.input_dims.map(normalize_shapes).unwrap_or_default(),
        dtypes: args.input_type.map(normalize_dtypes).unwrap_or_default(),
        kernel_file: file.map(|f| f.decode().into_owned()).unwrap_or_default(),
        kernel_backend: backend.map(|b| b.decode().into_owned()).unwrap_or_default(),
    };
    let id = if meta == Meta::default() {
        NONE
    } else {
        o.metas.intern(meta)
    };
    o.meta_by_raw.insert(o.raw_key.as_slice().into(), id);
    id
}

/// Folds events into [`Collected`]. What the read serves beside the fold (an observer, a
/// progress sink) is held by the reader (`read::Feed`), not here.
#[derive(Default)]
pub(crate) struct Collector {
    pub(crate) out: Collected,
}

/// Whether `name` is `ProfilerStep#<digits>`.
pub(crate) fn is_profiler_step(name: &[u8]) -> bool {
    name.strip_prefix(b"ProfilerStep#")
        .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
}

impl Collector {
    /// Counts an event analysis does not use.
    pub(crate) fn skip(&mut self) {
        self.out.event_total += 1;
    }

    pub(crate) fn fold(&mut self, ev: Event<'_>) {
        self.fold_named(ev, NO_NAME, &mut Lazy::new(&[]));
    }

    /// Folds a GPU record the reader digested: its name, stream and geometry are the
    /// region's numbers, resolved here in file order.
    pub(crate) fn fold_gpu(&mut self, rec: GpuRec, d: &mut Resolve<'_, '_>) {
        let o = &mut self.out;
        o.event_total += 1;
        let geometry = d
            .geometries
            .resolve(rec.geometry, |key| o.geometries.intern(*key))
            .unwrap_or(NONE);
        let name = d.names.name(rec.name, &EMPTY, &mut o.names);
        let stream = d
            .streams
            .resolve(rec.stream, |(pid, tid)| {
                o.streams
                    .intern((pid.decode().into_owned(), tid.decode().into_owned()))
            })
            .unwrap_or(NONE);
        o.gpu.push(GpuRec {
            name,
            stream,
            geometry,
            ..rec
        });
    }

    /// Folds an event whose name the reader numbered (`name_id` in `names`).
    pub(crate) fn fold_named(
        &mut self,
        ev: Event<'_>,
        name_id: u32,
        names: &mut RegionNames<'_, '_>,
    ) {
        let o = &mut self.out;
        let mut name_of = |o: &mut Collected| names.name(name_id, &ev.name, &mut o.names);
        o.event_total += 1;
        // Only the categories analysis itself reads: Python frames (an observer's), flows
        // and others (split's) would move the start with who is listening.
        if ev.ph_x && !matches!(ev.cat, Cat::PythonFunction | Cat::Flow | Cat::Other) {
            o.first_complete_ts = Some(o.first_complete_ts.map_or(ev.ts, |t| t.min(ev.ts)));
        }
        // Name tests run on the raw bytes unless escapes make the text differ.
        let name_bytes: std::borrow::Cow<'_, [u8]> = if ev.name.escaped {
            std::borrow::Cow::Owned(ev.name.decode().into_owned().into_bytes())
        } else {
            std::borrow::Cow::Borrowed(ev.name.raw)
        };
        match ev.cat {
            Cat::Runtime | Cat::Driver => {
                let Some(corr) = ev.args.correlation else {
                    return;
                };
                if let Some(ext) = ev.args.external_id {
                    o.links.insert(corr, ext);
                }
                let pid = o.pids.intern(ev.pid.decode().into_owned());
                o.launch_at.insert(corr, LaunchAt { ts: ev.ts, pid });
                if memchr::memmem::find(&name_bytes, b"GraphLaunch").is_some() {
                    if ev.cat == Cat::Runtime {
                        o.runtime_graph.insert(corr);
                    } else {
                        o.driver_graph.insert(corr);
                    }
                }
            }
            Cat::CpuOp => {
                let step = ev.ph_x && is_profiler_step(&name_bytes);
                if let Some(ext) = ev.args.external_id {
                    let name = name_of(o);
                    let meta = |o: &mut Collected| meta_id(o, &ev.args);
                    match o.ops.get_mut(&ext) {
                        Some(info) => info.name = name,
                        None => {
                            let meta = meta(o);
                            o.ops.insert(ext, OpInfo { name, meta });
                        }
                    }
                }
                // Spans that can twin a GPU annotation (trace.md "Annotation coverage check") are kept; namespaced ATen
                // ops (`aten::mm`) never do, and keeping every op span would make memory
                // grow with the CPU side of the trace.
                let annotation_like = memchr::memmem::find(&name_bytes, b"::").is_none();
                if ev.ph_x && (step || annotation_like) {
                    let pid = o.pids.intern(ev.pid.decode().into_owned());
                    let span = Span {
                        name: name_of(o),
                        ts: ev.ts,
                        dur: ev.dur,
                        pid,
                    };
                    if step {
                        o.cpu_steps.push(span);
                    }
                    o.cpu_spans.push(span);
                }
            }
            Cat::UserAnnotation => {
                let pid = o.pids.intern(ev.pid.decode().into_owned());
                let span = Span {
                    name: name_of(o),
                    ts: ev.ts,
                    dur: ev.dur,
                    pid,
                };
                if is_profiler_step(&name_bytes) {
                    o.cpu_steps.push(span);
                }
                o.cpu_spans.push(span);
            }
            Cat::GpuUserAnnotation => {
                let name = name_of(o);
                o.gpu_annotations.push(Span {
                    name,
                    ts: ev.ts,
                    dur: ev.dur,
                    pid: NONE,
                });
            }
            Cat::Kernel | Cat::Memcpy | Cat::Memset => {
                let kind = if ev.cat == Cat::Kernel {
                    GpuKind::Kernel
                } else {
                    GpuKind::Memcpy
                };
                let device = ev.args.device.or(ev.pid.as_int());
                let geometry = if ev.args.grid.is_some() || ev.args.block.is_some() {
                    o.geometries.intern((ev.args.grid, ev.args.block))
                } else {
                    NONE
                };
                let name = name_of(o);
                let stream = o
                    .streams
                    .intern((ev.pid.decode().into_owned(), ev.tid.decode().into_owned()));
                o.gpu.push(GpuRec::new(
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
            Cat::PythonFunction | Cat::Flow | Cat::Other => {}
        }
    }
}

/// A name the reader did not number.
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

/// One region's numbered keys (names, streams, geometries) and their interned ids,
/// resolved on first use so that ids are still given in order of first sight.
pub(crate) struct Lazy<'r, K> {
    keys: &'r [K],
    ids: Vec<u32>,
}

/// A region's numbered names.
pub(crate) type RegionNames<'r, 'a> = Lazy<'r, &'a [u8]>;

impl<'r, K> Lazy<'r, K> {
    pub(crate) fn new(keys: &'r [K]) -> Self {
        Lazy {
            keys,
            ids: vec![NONE; keys.len()],
        }
    }

    /// The id of number `n`, interned by `intern` the first time; None for a number the
    /// region did not give.
    fn resolve(&mut self, n: u32, intern: impl FnOnce(&K) -> u32) -> Option<u32> {
        let (slot, key) = (self.ids.get_mut(n as usize)?, self.keys.get(n as usize)?);
        if *slot == NONE {
            *slot = intern(key);
        }
        Some(*slot)
    }
}

impl Lazy<'_, &[u8]> {
    /// The interned id of a name the reader numbered `n`, or of `name` itself when it
    /// did not (escaped names, the streaming path).
    fn name(&mut self, n: u32, name: &RawStr<'_>, interner: &mut StrInterner) -> u32 {
        let numbered = self.resolve(n, |&raw| {
            interner.intern_raw(&RawStr {
                raw,
                escaped: false,
            })
        });
        numbered.unwrap_or_else(|| interner.intern_raw(name))
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
    geometries: Interner<(Option<Dim3>, Option<Dim3>)>,
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
            self.geometries.intern((ev.args.grid, ev.args.block))
        } else {
            NONE
        };
        let stream = self.streams.intern((ev.pid, ev.tid));
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
    pub(crate) names: &'r mut RegionNames<'r, 'a>,
    streams: Lazy<'r, (IdRaw<'a>, IdRaw<'a>)>,
    geometries: Lazy<'r, (Option<Dim3>, Option<Dim3>)>,
}

impl<'r, 'a> Resolve<'r, 'a> {
    pub(crate) fn new(names: &'r mut RegionNames<'r, 'a>, d: &'r Digest<'a>) -> Self {
        Resolve {
            names,
            streams: Lazy::new(d.streams.values()),
            geometries: Lazy::new(d.geometries.values()),
        }
    }
}
