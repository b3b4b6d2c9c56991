//! The "Change since baseline" section's input: plain rows, so this crate needs nothing
//! of the diff (the facade fills them from its `DiffReport` or a triage's baseline).

/// How a row relates to the baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BaselineStatus {
    /// Present on both sides.
    #[default]
    Matched,
    /// Only in the trace the page is of.
    Added,
    /// Only in the baseline.
    Removed,
}

impl BaselineStatus {
    /// `matched`, `added` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineStatus::Matched => "matched",
            BaselineStatus::Added => "added",
            BaselineStatus::Removed => "removed",
        }
    }
}

/// One group's time in the baseline and now.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct BaselineRow {
    /// The group's id (`g001`, `tg001`, …).
    pub id: String,
    /// The group's operation.
    pub operation: String,
    /// Matched, added or removed.
    pub status: BaselineStatus,
    /// GPU time in the baseline, µs (0 when added).
    pub before_us: f64,
    /// GPU time now, µs (0 when removed).
    pub after_us: f64,
    /// The change in percent of the baseline (`None` when there was nothing before).
    pub delta_pct: Option<f64>,
}

/// What the page shows of a comparison with a baseline trace.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Baseline {
    /// The baseline trace as resolved.
    pub trace_file: String,
    /// One line: kernel time's change and the top gain.
    pub headline: String,
    /// What may make the comparison misleading, one message each.
    pub warnings: Vec<String>,
    /// The rows shown, in the order given (largest change first).
    pub rows: Vec<BaselineRow>,
    /// Groups compared but not shown (beyond the rows).
    pub not_shown: usize,
}

impl Baseline {
    /// A comparison with `trace_file`, its headline and no rows yet.
    pub fn new(trace_file: impl Into<String>, headline: impl Into<String>) -> Self {
        Baseline {
            trace_file: trace_file.into(),
            headline: headline.into(),
            ..Baseline::default()
        }
    }

    /// The same comparison with its warnings.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    /// The same comparison with its rows and how many groups were left out.
    pub fn with_rows(mut self, rows: Vec<BaselineRow>, not_shown: usize) -> Self {
        self.rows = rows;
        self.not_shown = not_shown;
        self
    }
}
