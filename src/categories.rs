//! Kernel time per kernel category (ident's [`Category`]) over every kernel row of an
//! analysis: the categories table of `kernlens summary` (and its `--csv categories`), and the
//! Python package's `Summary.categories_df()`.

use kernlens_ident::{Category, classify};
use kernlens_trace::KernelRow;

/// One kernel category's part of the kernel time (all kernels, not only the top rows).
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CategoryRow {
    /// ident's category.
    pub category: Category,
    /// Distinct kernel names in it.
    pub kernels: usize,
    /// Σ launches.
    pub calls: u64,
    /// Σ GPU time, µs.
    pub total_us: f64,
    /// Σ GPU time, ns.
    #[serde(skip)]
    total_ns: i64,
    /// Its share of all kernel time, 0–1.
    pub share: f64,
}

/// The kernel time per ident category, largest first (ties in order of first appearance).
pub fn categories(kernels: &[KernelRow]) -> Vec<CategoryRow> {
    let mut rows: Vec<CategoryRow> = Vec::new();
    for k in kernels {
        let category = classify(&k.name);
        let row = match rows.iter_mut().position(|r| r.category == category) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(CategoryRow {
                    category,
                    kernels: 0,
                    calls: 0,
                    total_us: 0.0,
                    total_ns: 0,
                    share: 0.0,
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        };
        row.kernels += 1;
        row.calls += k.calls;
        row.total_ns = row.total_ns.saturating_add(k.total_ns);
        row.share += k.share;
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.total_ns));
    for row in &mut rows {
        // From exact ns, as the reader converts its own totals.
        row.total_us = row.total_ns as f64 / 1000.0;
    }
    rows
}
