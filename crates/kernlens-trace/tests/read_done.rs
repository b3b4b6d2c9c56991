//! `EventObserver::read_done`: called once, after the read's last event and before the
//! analysis is returned; not called when the read fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kernlens_trace::{EventObserver, ObservedEvent, Options, TraceSource, analyze_observed};

#[derive(Default)]
struct Log {
    events: usize,
    /// The events seen when `read_done` came, once per call.
    done_after: Vec<usize>,
}

impl EventObserver for Log {
    fn observe(&mut self, _: &ObservedEvent<'_>) {
        self.events += 1;
    }

    fn read_done(&mut self) {
        self.done_after.push(self.events);
    }
}

#[test]
fn read_done_comes_once_after_the_last_event() {
    let trace = br#"{"traceEvents":[
      {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":0,"dur":5},
      {"ph":"X","cat":"gpu_memcpy","name":"m","pid":0,"tid":8,"ts":1,"dur":5},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1}
    ]}"#;
    let source = TraceSource::from_bytes("t.json", trace.to_vec());
    let mut log = Log::default();
    analyze_observed(&source, &Options::default(), &mut log).unwrap();
    assert_eq!(log.events, 3);
    assert_eq!(log.done_after, [3]);
}

#[test]
fn a_failed_read_says_nothing_is_done() {
    let source = TraceSource::from_bytes("t.json", b"hello, not a trace".to_vec());
    let mut log = Log::default();
    assert!(analyze_observed(&source, &Options::default(), &mut log).is_err());
    assert!(log.done_after.is_empty());
}
