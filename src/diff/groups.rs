//! Kernel rows folded into operator identities, and the two sides matched by identity.
//!
//! A trace carries kernel names, not the files that define them (locate finds those, and
//! an inductor kernel's cache file is named for a hash of its code, so a rewrite moves
//! it). So the identity a diff matches on is ident's operator identity with no source
//! path: the operation key on the name's track (ident.md, "Choosing the track"). That
//! key already folds what changes between two captures of the same operator: launch
//! decorations (`cudaGraphLaunch->`, `(Synthetic Op)`, `.kd`), mangling, template
//! arguments and signatures; Triton names keep their suffixes, as ident keeps them.

use std::collections::HashMap;

use kernlens_ident::{Category, KeyMemo, KeyTrack, OperatorIdentity, PathContext, classify};
use kernlens_trace::{Analysis, KernelRow};

use super::report::{CountDelta, Delta, GroupDelta, GroupStatus};

/// One identity's kernels on one side.
#[derive(Debug, Clone)]
pub(crate) struct SideGroup {
    /// The identity's operation (its kernel key).
    pub operation: String,
    /// Category of the largest kernel.
    pub category: Category,
    /// Exact GPU time, ns.
    pub total_ns: i64,
    /// Launches.
    pub calls: u64,
    /// Σ of the rows' shares.
    pub share: f64,
    /// Kernel names with their ns, largest first.
    pub kernels: Vec<(String, i64)>,
}

/// The identity key and operation of one kernel name (ident's keys, no source path).
pub(crate) fn identity_of(name: &str, memo: &mut KeyMemo) -> (String, String) {
    let keys = memo.get(name);
    let track = if kernlens_ident::track_for(None, name) == KeyTrack::Native {
        KeyTrack::Native
    } else {
        KeyTrack::Py
    };
    let operation = match track {
        KeyTrack::Native => keys.native.clone(),
        _ => keys.python.clone(),
    };
    // `build` keys the operation again, which is a fixpoint for a key, so the
    // identity is exactly ident's for this name with an empty path and function.
    let identity = OperatorIdentity::build(track, "", &operation, "", &PathContext::new());
    (identity.key(), identity.operation)
}

/// The analysis' kernel rows folded by identity key, in first-seen order of the rows.
pub(crate) fn side_groups(analysis: &Analysis, memo: &mut KeyMemo) -> Vec<(String, SideGroup)> {
    let mut slot_of: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<(String, SideGroup)> = Vec::new();
    for row in &analysis.kernels {
        let (key, operation) = identity_of(&row.name, memo);
        let slot = *slot_of.entry(key.clone()).or_insert_with(|| {
            groups.push((
                key,
                SideGroup {
                    operation,
                    category: classify(&row.name),
                    total_ns: 0,
                    calls: 0,
                    share: 0.0,
                    kernels: Vec::new(),
                },
            ));
            groups.len() - 1
        });
        add_row(&mut groups[slot].1, row);
    }
    for (_, group) in &mut groups {
        // Stable: ties keep row order. The category follows the largest kernel.
        group.kernels.sort_by_key(|k| std::cmp::Reverse(k.1));
        if let Some((largest, _)) = group.kernels.first() {
            group.category = classify(largest);
        }
    }
    groups
}

fn add_row(group: &mut SideGroup, row: &KernelRow) {
    group.total_ns = group.total_ns.saturating_add(row.total_ns);
    group.calls = group.calls.saturating_add(row.calls);
    group.share += row.share;
    group.kernels.push((row.name.clone(), row.total_ns));
}

/// Both sides' groups matched by identity key, with each side's time divided by its
/// divisor, ordered by |Δ time| descending (ties: larger before time, then key) and
/// numbered `tg001`, `tg002`, ….
pub(crate) fn match_groups(
    before: Vec<(String, SideGroup)>,
    after: Vec<(String, SideGroup)>,
    divisors: (f64, f64),
) -> Vec<GroupDelta> {
    let mut after_of: HashMap<String, SideGroup> = after.iter().cloned().collect();
    let mut listed: Vec<GroupDelta> = Vec::with_capacity(before.len() + after.len());
    for (key, old) in before {
        let new = after_of.remove(&key);
        listed.push(delta(key, Some(old), new, divisors));
    }
    // Added groups in the after side's row order.
    for (key, _) in after {
        if let Some(new) = after_of.remove(&key) {
            listed.push(delta(key, None, Some(new), divisors));
        }
    }
    listed.sort_by(|a, b| {
        b.total_us
            .delta
            .abs()
            .total_cmp(&a.total_us.delta.abs())
            .then(b.total_us.before.total_cmp(&a.total_us.before))
            .then_with(|| a.identity_key.cmp(&b.identity_key))
    });
    for (n, group) in listed.iter_mut().enumerate() {
        group.id = format!("tg{:03}", n + 1);
    }
    listed
}

fn delta(
    key: String,
    before: Option<SideGroup>,
    after: Option<SideGroup>,
    (before_div, after_div): (f64, f64),
) -> GroupDelta {
    let status = match (&before, &after) {
        (Some(_), Some(_)) => GroupStatus::Matched,
        (None, _) => GroupStatus::Added,
        (_, None) => GroupStatus::Removed,
    };
    let us = |g: &Option<SideGroup>| g.as_ref().map_or(0.0, |g| g.total_ns as f64 / 1000.0);
    let calls = |g: &Option<SideGroup>| g.as_ref().map_or(0, |g| g.calls);
    let share = |g: &Option<SideGroup>| g.as_ref().map_or(0.0, |g| g.share);
    let avg = |g: &Option<SideGroup>| {
        g.as_ref()
            .filter(|g| g.calls > 0)
            .map_or(0.0, |g| g.total_ns as f64 / 1000.0 / g.calls as f64)
    };
    let names = |g: &Option<SideGroup>| {
        g.as_ref()
            .map(|g| g.kernels.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default()
    };
    // The operation and category of the side that has the group, the after side first
    // (it is what the user now runs).
    let shown = after.as_ref().or(before.as_ref());
    GroupDelta {
        id: String::new(),
        status,
        operation: shown.map(|g| g.operation.clone()).unwrap_or_default(),
        category: shown.map_or(Category::Other, |g| g.category),
        identity_key: key,
        total_us: Delta::new(us(&before) / before_div, us(&after) / after_div),
        calls: CountDelta::new(calls(&before), calls(&after)),
        avg_us: Delta::new(avg(&before), avg(&after)),
        share: Delta::new(share(&before), share(&after)),
        kernels_before: names(&before),
        kernels_after: names(&after),
    }
}
