//! Whether remembering pays: the hits among the tries, judged now and then.
//!
//! Why one type: the tails and the lists both remember what they read and compare the
//! next event with it. Where nothing repeats (a CPU op's tail ends in a counter), a miss
//! costs the hash, a failed compare and a copy, so each stops once its hits fall under a
//! share of its tries, judged over windows of tries so that a trace's changing mix is
//! judged afresh.

/// Tries and hits since the last judgement, and whether trying goes on.
#[derive(Debug, Clone, Copy)]
pub(super) struct HitRate {
    tries: u32,
    hits: u32,
    live: bool,
    /// Tries per judgement, and the share of hits (1 in `keep_ratio`) below which
    /// trying stops for good.
    judge_after: u32,
    keep_ratio: u32,
}

impl HitRate {
    pub(super) const fn new(judge_after: u32, keep_ratio: u32) -> HitRate {
        HitRate {
            tries: 0,
            hits: 0,
            live: true,
            judge_after,
            keep_ratio,
        }
    }

    /// Whether trying is still worth it.
    #[inline(always)]
    pub(super) fn live(&self) -> bool {
        self.live
    }

    #[inline(always)]
    pub(super) fn tried(&mut self) {
        self.tries = self.tries.saturating_add(1);
    }

    #[inline(always)]
    pub(super) fn hit(&mut self) {
        self.hits = self.hits.saturating_add(1);
    }

    /// Called on a miss before remembering what was read: false, and no more tries from
    /// then on, when the last window of tries had too few hits.
    #[inline]
    pub(super) fn keep_remembering(&mut self) -> bool {
        if self.tries >= self.judge_after {
            if self.hits.saturating_mul(self.keep_ratio) < self.tries {
                self.live = false;
                return false;
            }
            self.tries = 0;
            self.hits = 0;
        }
        true
    }

    /// Hits since the last judgement.
    #[cfg(test)]
    pub(super) fn hits(&self) -> u32 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trying_stops_below_the_share_and_goes_on_at_it() {
        // Two hits in a window of eight tries (1 in 4): kept where 1 in 4 is asked,
        // stopped where 1 in 3 is.
        for (ratio, kept) in [(4, true), (3, false)] {
            let mut h = HitRate::new(8, ratio);
            for i in 0..8 {
                h.tried();
                if i % 4 == 0 {
                    h.hit();
                }
            }
            assert_eq!(h.keep_remembering(), kept, "1 in {ratio}");
            assert_eq!(h.live(), kept);
        }
        // Before a window is full nothing is judged, however few the hits.
        let mut h = HitRate::new(8, 2);
        for _ in 0..7 {
            h.tried();
        }
        assert!(h.keep_remembering() && h.live());
    }
}
