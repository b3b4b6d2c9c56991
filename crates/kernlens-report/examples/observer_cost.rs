//! Where a report's time goes on a large trace: the plain analysis, the analysis with a
//! do-nothing observer (the reader's observed path), and with the lane recorder.
//!
//! `cargo run --release -p kernlens-report --example observer_cost -- TRACE [REPEATS]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use kernlens_report::{LaneOptions, LaneRecorder, Page};
use kernlens_trace::{EventObserver, ObservedEvent, Options, TraceSource};

struct Nothing(u64);

impl EventObserver for Nothing {
    fn observe(&mut self, _: &ObservedEvent<'_>) {
        self.0 += 1;
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a trace path");
    let repeats: usize = args.next().map_or(3, |r| r.parse().unwrap());
    let opts = Options::default();
    for _ in 0..repeats {
        let source = TraceSource::open(&path).unwrap();
        let t = Instant::now();
        let a = kernlens_trace::analyze(&source, &opts).unwrap();
        let plain = t.elapsed();

        let source = TraceSource::open(&path).unwrap();
        let t = Instant::now();
        let mut nothing = Nothing(0);
        kernlens_trace::analyze_observed(&source, &opts, &mut nothing).unwrap();
        let observed = t.elapsed();

        let source = TraceSource::open(&path).unwrap();
        let t = Instant::now();
        let mut recorder = LaneRecorder::new(LaneOptions::default());
        let b = kernlens_trace::analyze_observed(&source, &opts, &mut recorder).unwrap();
        let read = t.elapsed();
        let lanes = recorder.finish(&b);
        let binned = t.elapsed();
        let page = Page::new(&b, &lanes).render();
        let total = t.elapsed();
        println!(
            "plain {:.3}s  observed(no-op, {} events) {:.3}s  recorder read {:.3}s  +finish {:.3}s  +page {:.3}s ({} bytes, busy {} = {})",
            plain.as_secs_f64(),
            nothing.0,
            observed.as_secs_f64(),
            read.as_secs_f64(),
            (binned - read).as_secs_f64(),
            (total - binned).as_secs_f64(),
            page.len(),
            a.timeline.busy_ns,
            b.timeline.busy_ns,
        );
    }
}
