//! How the human tables look, once for every subcommand: the unit policy (durations in ms
//! with three decimals, percentages and shares as `12.34%`), aligned columns, and the short
//! kernel names a table shows by default (the JSON and CSV keep the full names).

use std::collections::HashMap;

/// Mean time per call in µs; 0 for a row without calls (tables and CSV alike).
pub fn per_call(total_us: f64, calls: u64) -> f64 {
    if calls > 0 {
        total_us / calls as f64
    } else {
        0.0
    }
}

/// A duration given in µs (the unit of the JSON), as a table shows it: ms, three decimals.
pub fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A percentage (0..=100) as a table shows it.
pub fn pct(value: f64) -> String {
    format!("{value:.2}%")
}

/// A share or fraction (0..=1) as a table shows it: the same format as [`pct`].
pub fn share(value: f64) -> String {
    pct(value * 100.0)
}

/// `s` cut to `max` characters with a trailing `…`; `None` keeps it whole (`--wide`).
pub fn cut(s: &str, max: Option<usize>) -> String {
    match max {
        Some(max) if s.chars().count() > max => {
            let mut head: String = s.chars().take(max.saturating_sub(1)).collect();
            head.push('…');
            head
        }
        _ => s.to_owned(),
    }
}

/// Readable, distinct short names for kernel rows: ident's native key (demangled, without
/// template arguments or parameters, `(anonymous namespace)::` dropped), shortened to `max`
/// characters from the left (`…::kernel`: the function name is the part that tells), with
/// `#1`, `#2`, … in row order where several rows share one key (template instances of one
/// kernel), so no two rows read the same.
pub fn short_names<'a>(names: impl IntoIterator<Item = &'a str>, max: usize) -> Vec<String> {
    let keys: Vec<String> = names
        .into_iter()
        .map(|name| {
            let key = kernlens_ident::keys(name)
                .native
                .replace("(anonymous namespace)::", "");
            let key = if key.is_empty() { name.to_owned() } else { key };
            shorten_qualified(&key, max)
        })
        .collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for key in &keys {
        *count.entry(key.as_str()).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    keys.iter()
        .map(|key| {
            if count.get(key.as_str()).copied().unwrap_or(0) > 1 {
                let n = seen.entry(key.as_str()).or_default();
                *n += 1;
                format!("{key} #{n}")
            } else {
                key.clone()
            }
        })
        .collect()
}

/// A qualified name within `max` characters: leading `ns::` segments give way to `…::`
/// first, then the tail is cut.
fn shorten_qualified(key: &str, max: usize) -> String {
    if key.chars().count() <= max {
        return key.to_owned();
    }
    let mut rest = key;
    while let Some((_, tail)) = rest.split_once("::") {
        rest = tail;
        if rest.chars().count() + 3 <= max {
            return format!("…::{rest}");
        }
    }
    cut(key, Some(max))
}

/// The op a kernel row names: its majority op, `-` for none, and `(+N ops)` when its time
/// came from more than one (`op_count` counts the graph and unlinked buckets too).
pub fn op_cell(op_name: &str, op_count: usize) -> String {
    let op = if op_name.is_empty() { "-" } else { op_name };
    match op_count {
        0 | 1 => op.to_owned(),
        2 => format!("{op} (+1 op)"),
        n => format!("{op} (+{} ops)", n - 1),
    }
}

/// Aligned columns: numbers right-aligned, text left-aligned, two spaces between columns,
/// trailing blanks trimmed.
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names; `right[i]` right-aligns column `i`.
    pub fn new(header: &[&str], right: &[bool]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            right: right.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds one row (as many cells as columns).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, the header first.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                let width = widths.get(i).copied().unwrap_or(0);
                let pad = width.saturating_sub(cell.chars().count());
                if i > 0 {
                    line.push_str("  ");
                }
                if self.right.get(i).copied().unwrap_or(false) {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sharing_a_key_get_distinct_numbered_names() {
        let names = short_names(
            [
                "void at::native::elementwise_kernel_manual_unroll<128, 8, A>(int, B)",
                "void at::native::elementwise_kernel_manual_unroll<128, 4, C>(int, D)",
                "triton_poi_fused_gelu_view_2",
            ],
            60,
        );
        assert_eq!(
            names,
            [
                "at::native::elementwise_kernel_manual_unroll #1",
                "at::native::elementwise_kernel_manual_unroll #2",
                "triton_poi_fused_gelu_view_2",
            ]
        );
    }

    #[test]
    fn long_qualified_names_keep_their_function_name() {
        let names = short_names(
            [
                "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<A>(B)",
                "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<C>(D)",
            ],
            30,
        );
        assert_eq!(
            names,
            [
                "…::multi_tensor_apply_kernel #1",
                "…::multi_tensor_apply_kernel #2"
            ]
        );
    }

    #[test]
    fn the_op_cell_says_when_time_came_from_several_ops() {
        assert_eq!(op_cell("aten::mm", 1), "aten::mm");
        assert_eq!(op_cell("aten::mm", 3), "aten::mm (+2 ops)");
        assert_eq!(op_cell("aten::mm", 2), "aten::mm (+1 op)");
        assert_eq!(op_cell("", 1), "-");
    }

    #[test]
    fn one_unit_policy() {
        assert_eq!(ms(20_686_194.534), "20686.195");
        assert_eq!(share(0.123_456), "12.35%");
        assert_eq!(pct(12.345_6), "12.35%");
    }
}
