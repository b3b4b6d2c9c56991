//! `ObservedEvent::name_id`: events with the same id have the same name, within a read and
//! across reads of one process, on real captures read on several threads (the numbers are
//! given by the fold, in file order, whatever region a worker read the event in).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;

use kernlens_trace::{EventObserver, ObservedEvent, Options, TraceSource, analyze_observed};

#[derive(Default)]
struct Ids {
    /// Per id, the name it came with.
    names: HashMap<u64, String>,
    numbered: usize,
    conflicts: Vec<(u64, String, String)>,
}

impl EventObserver for Ids {
    fn observe(&mut self, e: &ObservedEvent<'_>) {
        let Some(id) = e.name_id else {
            return;
        };
        self.numbered += 1;
        let seen = self.names.entry(id).or_insert_with(|| e.name.to_owned());
        if seen != e.name {
            self.conflicts.push((id, seen.clone(), e.name.to_owned()));
        }
    }
}

#[test]
fn equal_name_ids_are_equal_names_within_and_across_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces");
    let mut ids = Ids::default();
    let mut per_read = Vec::new();
    for trace in ["graph_many.json.gz", "eager.json.gz", "compiled.json.gz"] {
        let before = ids.numbered;
        let mut opts = Options::default();
        opts.threads = Some(3);
        let source = TraceSource::open(dir.join(trace)).unwrap();
        analyze_observed(&source, &opts, &mut ids).unwrap();
        per_read.push(ids.numbered - before);
    }
    assert!(
        ids.conflicts.is_empty(),
        "{:?}",
        &ids.conflicts[..3.min(ids.conflicts.len())]
    );
    // Every read numbered its kernels (so the law above was tested on each), and the
    // reads' ids are apart (the high half is the read's serial).
    assert!(per_read.iter().all(|&n| n > 0), "{per_read:?}");
    let serials: std::collections::BTreeSet<u64> = ids.names.keys().map(|id| id >> 32).collect();
    assert_eq!(serials.len(), 3, "{serials:?}");
}
