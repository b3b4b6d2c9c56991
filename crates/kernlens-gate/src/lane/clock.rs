//! Where the guard gets "now" from.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time, in seconds since the Unix epoch.
pub trait Clock {
    /// Seconds since the Unix epoch.
    fn now_unix(&self) -> f64;
}

/// The system wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix(&self) -> f64 {
        // A clock set before 1970 reads as 0.0, which the guard treats as unset.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |elapsed| elapsed.as_secs_f64())
    }
}

/// A clock that only moves when told to, so time-based rules are tested
/// without sleeping. It can be advanced through a shared reference.
#[derive(Debug, Default)]
pub struct ManualClock {
    bits: AtomicU64,
}

impl ManualClock {
    /// A clock reading `now_unix`.
    pub fn new(now_unix: f64) -> Self {
        ManualClock {
            bits: AtomicU64::new(now_unix.to_bits()),
        }
    }

    /// Set the reading.
    pub fn set(&self, now_unix: f64) {
        self.bits.store(now_unix.to_bits(), Ordering::Relaxed);
    }

    /// Move the reading forward by `seconds` (backward when negative).
    pub fn advance(&self, seconds: f64) {
        self.set(self.now_unix() + seconds);
    }
}

impl Clock for ManualClock {
    fn now_unix(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }
}
