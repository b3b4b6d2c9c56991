//! Tails: the end of an event, remembered byte for byte and compared whole.
//!
//! Why: a kernel event's members after its correlation id (`registers per thread`,
//! `shared memory`, `blocks per SM`, `warps per SM`, `grid`, `block`, occupancy) are the
//! same bytes every time that kernel runs with that launch configuration, and a trace
//! runs a few dozen kernels a million times. Read slot by slot they are a dozen compares
//! and number scans, ~900 instructions an event; compared against the bytes of the last
//! such tail they are one `memcmp` of ~180 bytes.
//!
//! Soundness: a slot's outcome (its value's range, or a failure) depends only on the
//! bytes from its start to its value's end, and the closing compare only on the closing
//! bytes (see [`super::Slot::read_window`]: wider loads are masked). So when the bytes
//! from the first tail slot to the event's end equal, byte for byte, those of an event
//! the same shape read in full, reading them slot by slot would find the same ranges,
//! shifted by the distance between the two, and the same end: the entry's. A tail that
//! matches no entry is read slot by slot, as before, and then remembered.
//!
//! An entry is chosen by a hash of the event's name (length and two 8-byte loads), so a
//! kernel's tail is compared with that kernel's last one; two ways per set keep a
//! kernel's two launch configurations (a layer's forward and backward sizes) apart.
//! Where tails do not repeat (a CPU op's `Ev Idx` counts up), the tries stop after a
//! while: a miss costs the hash, a failed compare and a copy.

use super::hit_rate::HitRate;
use super::{Dims, Found, ROLES, Role, Slot};

/// Longest tail remembered, in bytes.
const TAIL_MAX: usize = 256;
/// Sets of entries (a power of two), and entries per set.
const SETS: usize = 64;
const WAYS: usize = 2;
/// Tries before the hit rate is judged, and the share of hits (1 in 8) below which a
/// shape stops trying: a hit saves ~10 times what a miss costs.
const RATE: HitRate = HitRate::new(64, 8);
/// Fewest slots a tail has: fewer save less than a miss costs.
const MIN_SLOTS: usize = 3;

/// One remembered tail: its bytes, and where each role's value lies in them.
#[derive(Clone)]
struct Entry {
    /// 0 when empty.
    len: u16,
    /// `(start, end)` of each of [`Tail::roles`]' values, from the tail's start.
    ranges: [(u16, u16); ROLES],
    /// The event's `grid` and `block` as read (when the tail holds them all).
    dims: Dims,
    bytes: [u8; TAIL_MAX],
}

const EMPTY: Entry = Entry {
    len: 0,
    ranges: [(0, 0); ROLES],
    dims: (None, None),
    bytes: [0; TAIL_MAX],
};

/// A shape's remembered tails.
pub(super) struct Tail {
    /// The first slot of the tail.
    pub(super) from_slot: usize,
    /// The roles of the tail's slots that are read (not [`Role::None`]), in order.
    roles: Vec<Role>,
    /// The shape reads a name before its tail: the hash takes it.
    keyed_by_name: bool,
    /// Every `grid`/`block` value of the shape is in the tail, so the tail's bytes settle
    /// them, and a hit gives them already read.
    holds_dims: bool,
    entries: Vec<Entry>,
    /// Per set, the way hit or filled last (the other one is replaced).
    recent: [u8; SETS],
    rate: HitRate,
}

impl std::fmt::Debug for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tail")
            .field("from_slot", &self.from_slot)
            .field("roles", &self.roles)
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

/// Whether a slot's value differs from one event to the next: times, ids, and members
/// named as counters (`Python id`, `Ev Idx`, `Record function id`). A tail starts after
/// the last of them. (`run` is the slot's fixed bytes, which end with its member name.)
fn varies(slot: &Slot, run: &[u8]) -> bool {
    if matches!(
        slot.role,
        Role::Ts | Role::Dur | Role::Id | Role::Correlation | Role::ExternalId
    ) {
        return true;
    }
    // The member name: the run is `..., "name": ` (spaces may follow the colon).
    let key = run
        .trim_ascii_end()
        .strip_suffix(b":")
        .map(<[u8]>::trim_ascii_end);
    let Some(key) = key.and_then(|k| k.strip_suffix(b"\"")) else {
        return false;
    };
    let name = key.rsplit(|&c| c == b'"').next().unwrap_or_default();
    let ends =
        |s: &[u8]| name.len() >= s.len() && name[name.len() - s.len()..].eq_ignore_ascii_case(s);
    ends(b"id") || ends(b"idx")
}

impl Tail {
    /// The tail of a shape with these slots, when it has one worth remembering.
    pub(super) fn of(slots: &[Slot], fixed: &[u8]) -> Option<Box<Tail>> {
        let run = |s: &Slot| {
            let at = s.at as usize;
            fixed.get(at..at + s.fixed as usize).unwrap_or_default()
        };
        let from_slot = slots.iter().rposition(|s| varies(s, run(s)))? + 1;
        let rest = slots.get(from_slot..)?;
        if rest.len() < MIN_SLOTS {
            return None;
        }
        let roles: Vec<Role> = rest
            .iter()
            .map(|s| s.role)
            .filter(|&r| r != Role::None)
            .collect();
        // A role read twice (not in a learned shape, whose members are distinct) would
        // leave the earlier range stale.
        if (1..roles.len()).any(|i| roles[..i].contains(&roles[i])) {
            return None;
        }
        let keyed_by_name = slots
            .get(..from_slot)
            .is_some_and(|head| head.iter().any(|s| s.role == Role::Name));
        let holds_dims = slots
            .get(..from_slot)
            .is_some_and(|head| head.iter().all(|s| !s.role.is_dim()));
        // A hit then gives `grid` and `block` already read ([`Found::dims`]), so nothing
        // reads their ranges: they are neither remembered nor written.
        let roles = if holds_dims {
            roles.into_iter().filter(|r| !r.is_dim()).collect()
        } else {
            roles
        };
        Some(Box::new(Tail {
            from_slot,
            roles,
            keyed_by_name,
            holds_dims,
            // Allocated when the first tail is remembered.
            entries: Vec::new(),
            recent: [0; SETS],
            rate: RATE,
        }))
    }

    /// Tails read by a remembered one since the hit rate was last judged.
    #[cfg(test)]
    pub(super) fn hits(&self) -> u32 {
        self.rate.hits()
    }

    /// Whether a hit gives the event's `grid` and `block` already read.
    #[inline(always)]
    pub(super) fn holds_dims(&self) -> bool {
        self.holds_dims
    }

    /// Whether tails are still worth trying.
    #[inline(always)]
    pub(super) fn live(&self) -> bool {
        self.rate.live()
    }

    /// The set for the event whose head was just read into `found` (its name's range).
    #[inline(always)]
    pub(super) fn set(&self, buf: &[u8], found: &Found) -> usize {
        if !self.keyed_by_name {
            return 0;
        }
        (name_hash(buf, found, 0) >> (64 - SETS.trailing_zeros())) as usize
    }

    /// The end of the event whose tail starts at `p`, when its bytes are a remembered
    /// tail of set `set`: the tail's roles' ranges are written to `found`.
    #[inline(always)]
    pub(super) fn find(
        &mut self,
        buf: &[u8],
        p: usize,
        set: usize,
        found: &mut Found,
    ) -> Option<usize> {
        self.rate.tried();
        for way in 0..WAYS {
            let Some(e) = self.entries.get(set * WAYS + way) else {
                continue;
            };
            let n = usize::from(e.len);
            // `memcmp` (glibc's, with wide loads) measured cheaper than a 16-byte loop here.
            if n == 0 || buf.get(p..p + n) != e.bytes.get(..n) {
                continue;
            }
            for (&r, &(a, b)) in self.roles.iter().zip(&e.ranges) {
                found.from[r as usize] = p + usize::from(a);
                found.to[r as usize] = p + usize::from(b);
            }
            self.rate.hit();
            if self.holds_dims {
                found.dims = Some(e.dims);
            }
            if let Some(recent) = self.recent.get_mut(set) {
                *recent = way as u8;
            }
            return Some(p + n);
        }
        None
    }

    /// Remembers the tail `buf[p..end]` just read slot by slot (its roles' ranges in
    /// `found`), in set `set`; judges the hit rate now and then.
    #[inline]
    pub(super) fn remember(&mut self, buf: &[u8], p: usize, end: usize, set: usize, found: &Found) {
        if !self.rate.keep_remembering() {
            return;
        }
        let n = end.wrapping_sub(p);
        let (Some(bytes), Some(recent)) = (buf.get(p..end), self.recent.get_mut(set)) else {
            return;
        };
        if n > TAIL_MAX {
            return;
        }
        if self.entries.is_empty() {
            self.entries = vec![EMPTY; SETS * WAYS];
        }
        let way = if *recent == 0 { 1 } else { 0 };
        *recent = way as u8;
        let Some(e) = self.entries.get_mut(set * WAYS + way) else {
            return;
        };
        for (&r, range) in self.roles.iter().zip(e.ranges.iter_mut()) {
            let (a, b) = found.range(r);
            // Inside the tail (the slots just wrote them from `p` on), so under TAIL_MAX.
            *range = (a.wrapping_sub(p) as u16, b.wrapping_sub(p) as u16);
        }
        if let Some(to) = e.bytes.get_mut(..n) {
            to.copy_from_slice(bytes);
            e.len = n as u16;
            // Shape::read sets them before remembering, when the tail holds them.
            e.dims = found.dims.unwrap_or((None, None));
        }
    }
}

/// A hash of the name `found` holds (of an earlier event when this one has none, which
/// only makes a worse key), mixed with `salt`: its length and two 8-byte loads, the last
/// 8 bytes (a signature's parameters) and 8 from the middle (template arguments); a name
/// under 16 bytes is hashed by its length and first 8. High bits are the best mixed.
#[inline(always)]
pub(super) fn name_hash(buf: &[u8], found: &Found, salt: u64) -> u64 {
    let (from, to) = found.range(Role::Name);
    let len = to.wrapping_sub(from);
    let load = |at: usize| {
        buf.get(at..at.wrapping_add(8))
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let h = if len >= 16 {
        load(to - 8) ^ load(from + len / 2 - 8).rotate_left(29)
    } else {
        load(from)
    } ^ len as u64
        ^ salt.rotate_left(43);
    h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
