//! The region buffers of a plain read, reused in a sliding window.
//!
//! Why: the workers used to read and scan regions in batches, and a batch's buffers were
//! reused by the next batch only once every region of it was folded. At each batch end
//! a worker idled while the other finished its last region and the reading thread folded
//! it: on two pinned cores a graph read kept the cores ~85% busy (PERFORMANCE.md, "Session 10").
//! Here region `i` takes buffer `i % n` as soon as region `i - n`, the last one to use
//! it, is folded, so a worker waits only when the fold is `n` regions behind.
//!
//! Soundness: a region's result borrows its buffer's bytes until the reading thread has
//! folded it, and a folder cannot keep them past [`Folder::apply`](super::region::Folder)
//! (its `Out<'_>` is higher-ranked). [`Gate`] counts the regions folded (their results
//! dropped); a worker hands out buffer `i % n` only after that count passes `i - n`, and
//! every earlier region of that buffer is below `i - n`. So no two regions' uses of a
//! buffer overlap.

use std::cell::UnsafeCell;
use std::sync::{Condvar, Mutex, PoisonError};

/// `n` buffers, each lent to one region at a time.
pub(crate) struct Slots {
    cells: Vec<UnsafeCell<Vec<u8>>>,
}

// SAFETY: a buffer is reached only through the pointer `Slots::lend` gives, whose contract
// (one region at a time, ordered by `Gate`'s lock) gives each buffer one user at a time.
unsafe impl Sync for Slots {}

impl Slots {
    /// `n` empty buffers (grown by their first read).
    pub(crate) fn new(n: usize) -> Slots {
        Slots {
            cells: (0..n.max(1)).map(|_| UnsafeCell::new(Vec::new())).collect(),
        }
    }

    /// How many buffers there are: the window's width.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// Region `i`'s buffer, to be made a `&mut` by its one user.
    ///
    /// Dereference it only after [`Gate::wait_turn`]`(i, self.len())` returned true, once
    /// per region, with everything borrowed from the buffer by region `i - len` (its
    /// previous user) dropped before [`Gate::folded_one`] counted that region.
    pub(crate) fn lend(&self, i: usize) -> *mut Vec<u8> {
        self.cells[i % self.cells.len()].get()
    }
}

/// How many regions the reading thread has folded, and whether the read stopped early.
pub(crate) struct Gate {
    state: Mutex<(usize, bool)>,
    moved: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Gate {
        Gate {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
        }
    }

    /// Waits until region `i` may take its buffer, one of `n` (region `i - n` is folded):
    /// true then, false when the read stopped early (the region is not to be read).
    pub(crate) fn wait_turn(&self, i: usize, n: usize) -> bool {
        // A poisoned lock means the reading thread panicked: the count is still right.
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !s.1 && s.0 + n <= i {
            s = self.moved.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        !s.1
    }

    /// The reading thread folded the next region and dropped its result.
    pub(crate) fn folded_one(&self) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.0 += 1;
        drop(s);
        self.moved.notify_all();
    }

    /// The read stopped: no worker is to take another buffer.
    pub(crate) fn stop(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.moved.notify_all();
    }

    /// A guard that stops the read if the thread holding it panics. Why: the reading
    /// thread waits for the panicked worker's region, and the other workers for the fold,
    /// so without it they would wait for ever; stopped, they drop their senders, the
    /// reading thread's wait ends, and the scope passes the panic on.
    pub(crate) fn stop_on_panic(&self) -> StopOnPanic<'_> {
        StopOnPanic(self)
    }
}

/// See [`Gate::stop_on_panic`].
pub(crate) struct StopOnPanic<'g>(&'g Gate);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Region `i` of a window of `n` gets its buffer only once `i - n + 1` regions are
    /// folded (the buffer's previous user is `i - n`), and at once when that is so.
    #[test]
    fn a_region_waits_for_its_buffers_last_user_to_be_folded() {
        let gate = Gate::new();
        let (n, i) = (3, 7);
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = tx.send(gate.wait_turn(i, n));
            });
            // Regions 0..=3 folded: region 4 (= i - n) is not, so the worker still waits.
            for _ in 0..4 {
                gate.folded_one();
            }
            assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
            gate.folded_one();
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true));
        });
        // Regions inside the first window never wait.
        assert!(Gate::new().wait_turn(n - 1, n));
    }

    /// A read that stops early releases every waiting worker, telling it not to read.
    #[test]
    fn a_stopped_read_releases_waiting_workers_without_a_buffer() {
        let gate = Gate::new();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            for i in [10, 11] {
                let tx = tx.clone();
                let gate = &gate;
                s.spawn(move || {
                    let _ = tx.send(gate.wait_turn(i, 2));
                });
            }
            assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
            gate.stop();
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(false));
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(false));
        });
    }

    /// A worker that panics stops the read: a worker waiting for its turn is released
    /// instead of waiting for a fold that will never come.
    #[test]
    fn a_panicking_worker_releases_the_others() {
        let gate = Gate::new();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let gate = &gate;
            s.spawn(move || {
                let _ = tx.send(gate.wait_turn(5, 2));
            });
            let panicked = s
                .spawn(move || {
                    let _guard = gate.stop_on_panic();
                    panic!("a worker's bug");
                })
                .join();
            assert!(panicked.is_err());
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(false));
        });
        // Dropped without a panic, the guard leaves the read running.
        let gate = Gate::new();
        drop(gate.stop_on_panic());
        gate.folded_one();
        assert!(gate.wait_turn(1, 1));
    }

    /// Region `i` lends buffer `i % n`: a window's buffers are reused in turn.
    #[test]
    fn regions_take_the_buffers_in_turn() {
        let slots = Slots::new(3);
        for i in 0..9 {
            // SAFETY: one region at a time on this thread; nothing borrowed is kept.
            let b = unsafe { &mut *slots.lend(i) };
            b.push(i as u8);
        }
        // SAFETY: as above.
        let got: Vec<Vec<u8>> = (0..3)
            .map(|k| unsafe { (*slots.lend(k)).clone() })
            .collect();
        assert_eq!(got, [vec![0, 3, 6], vec![1, 4, 7], vec![2, 5, 8]]);
    }
}
