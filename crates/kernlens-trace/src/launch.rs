//! Per-kernel launch records (trace.md "Launch records"), built lazily from the kept records.

use crate::collect::{Meta, NONE};
use crate::intern::{Interner, StrInterner};

/// One kept kernel launch. Strings borrow from the analysis; nothing is allocated per record.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LaunchRecord<'a> {
    /// Kernel name.
    pub name: &'a str,
    /// The op it was launched from; None for `(graph)` and `(unlinked)` kernels.
    pub op: Option<&'a str>,
    /// Start, ns.
    pub ts: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Correlation id.
    pub correlation: Option<i64>,
    /// `Input Dims` of the launching op (normalised).
    pub shapes: &'a [Vec<i64>],
    /// `Input type` of the launching op.
    pub dtypes: &'a [String],
    /// `kernel_file` of the launching op.
    pub kernel_file: &'a str,
    /// `kernel_backend` of the launching op.
    pub kernel_backend: &'a str,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct LaunchRec {
    pub(crate) name: u32,
    pub(crate) op: u32,
    pub(crate) meta: u32,
    pub(crate) ts: i64,
    pub(crate) dur: i64,
    pub(crate) corr: Option<i64>,
}

/// What the records borrow from.
#[derive(Debug, Default)]
pub(crate) struct LaunchStore {
    pub(crate) names: StrInterner,
    pub(crate) metas: Interner<Meta>,
    /// Sorted by `ts`, file order on ties.
    pub(crate) recs: Vec<LaunchRec>,
}

impl LaunchStore {
    pub(crate) fn record(&self, r: &LaunchRec) -> LaunchRecord<'_> {
        let meta = if r.meta == NONE {
            None
        } else {
            self.metas.get(r.meta)
        };
        LaunchRecord {
            name: self.names.get(r.name),
            op: (r.op != NONE).then(|| self.names.get(r.op)),
            ts: r.ts,
            dur: r.dur,
            correlation: r.corr,
            shapes: meta.map_or(&[], |m| &m.shapes),
            dtypes: meta.map_or(&[], |m| &m.dtypes),
            kernel_file: meta.map_or("", |m| &m.kernel_file),
            kernel_backend: meta.map_or("", |m| &m.kernel_backend),
        }
    }
}
