//! Repeats: an event nobody keeps, read as one of the last two of its shape with other
//! digits.
//!
//! Why: a summary keeps no flow (`{"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts":
//! 5161116323696.891, "cat": "ac2g", "name": "ac2g", "bp": "e"}`), yet a graph capture is
//! 44% flows, and each was read slot by slot (~430 instructions) only to find where it
//! ends and that it is valid. Most such events are one of the last two of their shape
//! with other digits in their numbers and every other byte the same: compared sixteen
//! bytes at a time, digits allowed where it had digits, one is read in a few dozen
//! instructions. A match writes the ranges of the event's values as a slot-by-slot read
//! would (they lie where the remembered event's did), so a caller that decides on a
//! value of an event it does not keep (split's survey, a flow's id) reads it all the same.
//! (Tried for kept events too, a graph capture's memsets among them: the checks on every
//! kept event cost more than the few hits saved, PERFORMANCE.md "Session 13".)
//!
//! Soundness: a repeat is remembered from an event its shape read slot by slot (a shape
//! with a live tail has none: a tail's hit writes the ranges of its own roles only), with
//! each role's range, and records where the numbers with a role have digits (and which of
//! those open an integer part of two or more digits); a number without a role stays as it
//! was. An event whose bytes equal it everywhere else, with a digit at each of those
//! places (one from 1 to 9 where an integer part opens), is the same JSON text with other
//! digits in the same numbers: each is still a number of JSON's grammar (no sign, point
//! or exponent moved; no leading zero made), so the shape reads it with the same ranges
//! and the same end, and its category (in the fixed bytes) is the remembered one's.

use super::{Chunk, Found, ROLES, Role};

/// Longest event remembered, in bytes (a flow is ~110).
const REPEAT_MAX: usize = 256;
const CHUNKS: usize = REPEAT_MAX / 16;
/// Most integer parts of two digits or more in a remembered event (a flow has two).
const LEADS: usize = 8;
/// Tries per judgement, and the misses in one (1 in 8) above which a shape stops
/// remembering for good: a miss costs a failed compare, a slot-by-slot read and a copy
/// (~1,000 instructions), a hit saves ~250.
const JUDGE_AFTER: u32 = 64;
const MAX_MISSES: u32 = JUDGE_AFTER / 8;

/// Per 16 bytes of a remembered event: its bytes, 0xFF where a digit may stand instead,
/// and the bits of the bytes that are the event's (all but past its end).
#[derive(Clone, Copy, Default)]
struct Lane {
    bytes: Chunk,
    digit: Chunk,
    want: u32,
}

/// One remembered event.
#[derive(Clone, Copy)]
struct Entry {
    /// Its length; 0 when none is remembered.
    len: usize,
    lanes: [Lane; CHUNKS],
    /// From its start, the range of each of [`Repeat::roles`]' values.
    ranges: [(u8, u8); ROLES],
    /// Where an integer part of two digits or more opens: a digit from 1 to 9 there.
    leads: [u8; LEADS],
    lead_count: usize,
}

impl Entry {
    const EMPTY: Entry = Entry {
        len: 0,
        lanes: [Lane {
            bytes: Chunk([0; 16]),
            digit: Chunk([0; 16]),
            want: 0,
        }; CHUNKS],
        ranges: [(0, 0); ROLES],
        leads: [0; LEADS],
        lead_count: 0,
    };

    /// The end of the event at `start` when it is this one with other digits.
    #[inline(always)]
    fn read(&self, buf: &[u8], start: usize) -> Option<usize> {
        let n = self.len;
        if n == 0 {
            return None;
        }
        let w = buf.get(start..start + n.next_multiple_of(16))?;
        for (a, lane) in w.chunks_exact(16).zip(&self.lanes) {
            if lane_ok(a.try_into().ok()?, lane) & lane.want != lane.want {
                return None;
            }
        }
        let leads = self.leads.get(..self.lead_count)?;
        if leads
            .iter()
            .any(|&at| w.get(usize::from(at)) == Some(&b'0'))
        {
            return None;
        }
        Some(start + n)
    }

    /// Becomes `text`, an event at `start` its shape just read slot by slot (its roles'
    /// ranges in `found`); `nums` are the bits of the roles read as numbers. Stays empty
    /// when that fails.
    fn set(&mut self, text: &[u8], start: usize, found: &Found, roles: &[Role], nums: u32) {
        self.len = 0;
        let n = text.len();
        if n > REPEAT_MAX {
            return;
        }
        for (lane, bytes) in self.lanes.iter_mut().zip(text.chunks(16)) {
            lane.bytes = Chunk::of(bytes);
            lane.digit = Chunk::default();
            lane.want = (1u32 << bytes.len()) - 1;
        }
        self.lead_count = 0;
        for (&role, range) in roles.iter().zip(self.ranges.iter_mut()) {
            let (a, b) = found.range(role);
            let (from, end) = (a.wrapping_sub(start), b.wrapping_sub(start));
            let (Ok(f), Ok(e), Some(value)) =
                (u8::try_from(from), u8::try_from(end), text.get(from..end))
            else {
                return;
            };
            *range = (f, e);
            if nums & role.bit() == 0 {
                continue;
            }
            let sign = usize::from(value.first() == Some(&b'-'));
            let int_len = value[sign..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if int_len > 1 {
                // The first digit of an integer part of two or more stays 1 to 9.
                let (Some(lead), Ok(at)) = (
                    self.leads.get_mut(self.lead_count),
                    u8::try_from(from + sign),
                ) else {
                    return;
                };
                *lead = at;
                self.lead_count += 1;
            }
            for (i, c) in value.iter().enumerate() {
                let at = from + i;
                if let (true, Some(lane)) = (c.is_ascii_digit(), self.lanes.get_mut(at / 16)) {
                    lane.digit.0[at % 16] = 0xFF;
                }
            }
        }
        self.len = n;
    }
}

/// The last two distinct events of a shape that nobody kept (a graph capture's flows
/// alternate between a stream's and, now and then, a launching thread's).
pub(super) struct Repeat {
    entries: [Entry; 2],
    /// The roles the shape reads (a hit writes their ranges), and which are numbers.
    roles: Vec<Role>,
    nums: u32,
    tries: u32,
    misses: u32,
    /// Where the last try that matched neither entry was: a miss when the shape then
    /// reads the event there (an event the shape reads without a try, after a wrong
    /// prediction, is no miss of this).
    missed_at: Option<usize>,
    live: bool,
}

impl std::fmt::Debug for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repeat")
            .field("lens", &self.entries.map(|e| e.len))
            .field("tries", &self.tries)
            .field("misses", &self.misses)
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl Repeat {
    /// A repeat for a shape whose values have these roles (`nums`: the bits of those
    /// read as numbers).
    pub(super) fn new(roles: Vec<Role>, nums: u32) -> Repeat {
        Repeat {
            entries: [Entry::EMPTY; 2],
            roles,
            nums,
            tries: 0,
            misses: 0,
            missed_at: None,
            live: true,
        }
    }

    /// Tries since the misses were last judged.
    #[cfg(test)]
    pub(super) fn tries(&self) -> u32 {
        self.tries
    }

    /// Whether the event at `start`, just read by the shape and not kept, is to be
    /// remembered:
    /// when a try missed it, or when nothing is remembered yet, and remembering still
    /// pays. (An event the shape read without a try, after a wrong prediction, is not:
    /// remembering is a copy.)
    #[inline(always)]
    pub(super) fn wants(&self, start: usize) -> bool {
        self.live && (self.missed_at == Some(start) || self.entries[0].len == 0)
    }

    /// The end of the event at `start` when it is a remembered one with other digits
    /// (the one that matched last is tried first); its values' ranges are written to
    /// `found` when given (a caller that reads values of events it does not keep).
    #[inline(always)]
    pub(super) fn read(
        &mut self,
        buf: &[u8],
        start: usize,
        found: Option<&mut Found>,
    ) -> Option<usize> {
        if !self.live {
            return None;
        }
        self.tries = self.tries.saturating_add(1);
        let [first, second] = &mut self.entries;
        let end = match first.read(buf, start) {
            Some(end) => end,
            None => {
                let Some(end) = second.read(buf, start) else {
                    self.missed(start);
                    return None;
                };
                std::mem::swap(first, second);
                end
            }
        };
        if let Some(found) = found {
            for (&r, &(a, b)) in self.roles.iter().zip(&first.ranges) {
                found.from[r as usize] = start + usize::from(a);
                found.to[r as usize] = start + usize::from(b);
            }
            // Only a tail's hit sets these, and a shape with a live tail has no repeat.
            found.dims = None;
        }
        Some(end)
    }

    /// A try at `start` matched neither entry (the event may be of another shape, after a
    /// wrong prediction: a cost all the same). Judges the misses now and then.
    #[cold]
    fn missed(&mut self, start: usize) {
        self.missed_at = Some(start);
        self.misses = self.misses.saturating_add(1);
        if self.tries >= JUDGE_AFTER {
            self.live = self.misses <= MAX_MISSES;
            (self.tries, self.misses) = (0, 0);
        }
    }

    /// Remembers `text`, the event at `start` the shape just read slot by slot (its
    /// roles' ranges in `found`) and no entry matched ([`Repeat::wants`] it), in place of
    /// the entry that matched less lately.
    pub(super) fn remember(&mut self, text: &[u8], start: usize, found: &Found) {
        if !self.live {
            return;
        }
        self.missed_at = None;
        let [first, second] = &mut self.entries;
        std::mem::swap(first, second);
        first.set(text, start, found, &self.roles, self.nums);
    }
}

/// Bit `i` set where byte `i` of `a` is allowed: the remembered byte, or a digit where
/// one may stand.
#[inline(always)]
fn lane_ok(a: &[u8; 16], lane: &Lane) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is enabled at compile time (cfg above); the unaligned load reads
        // the 16 bytes of `a`, the aligned ones a lane's chunks (`Chunk` is 16-aligned).
        unsafe {
            let v = _mm_loadu_si128(a.as_ptr() as *const __m128i);
            let load = |c: &Chunk| _mm_load_si128(c.0.as_ptr() as *const __m128i);
            let same = _mm_cmpeq_epi8(v, load(&lane.bytes));
            // v + 0x50 moves '0'..='9' to -128..=-119, below every other byte (as
            // json::non_digit_mask does).
            let x = _mm_add_epi8(v, _mm_set1_epi8(0x50));
            let digit = _mm_cmplt_epi8(x, _mm_set1_epi8(-118));
            let ok = _mm_or_si128(same, _mm_and_si128(digit, load(&lane.digit)));
            _mm_movemask_epi8(ok) as u32
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        (0..16).fold(0, |m, i| {
            let c = a[i];
            let ok = c == lane.bytes.0[i] || (lane.digit.0[i] != 0 && c.is_ascii_digit());
            m | (u32::from(ok) << i)
        })
    }
}
