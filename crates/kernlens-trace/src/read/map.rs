//! A plain trace mapped into memory for the region workers, guarded against the file
//! shrinking while it is read.
//!
//! Why a map: the workers' `pread` copies cost a fifth of a summary's CPU on a graph
//! trace (the kernel's `_copy_to_iter` and page-cache look-ups), where reading the mapped
//! pages costs a third of that in page faults (PERFORMANCE.md, "Session 12").
//!
//! Why guarded: touching a page of a file mapping past the file's end raises SIGBUS, which
//! kills the process by default; another process truncating the trace while it is read
//! did that to the reader before `pread` replaced the map. So the first [`Map`] installs a
//! SIGBUS handler for the process: a fault inside a live map puts zero-filled pages over
//! the rest of that map and records the fault's offset, and the faulting access reads
//! zeros. A zero byte is not valid JSON where an event is, so the scan of that region ends
//! in errors, never in wrong values; the reading thread, seeing the recorded fault or the
//! file's new length before it folds the region ([`Map::sound_below`], read/parallel.rs),
//! reads it again with `pread` up to where the file ends and reports the shrink as a stream
//! error. Any other SIGBUS (a fault at another address, or a signal sent with `kill`) goes
//! to the action installed before (Rust's own handler, a host's, or the default).
//!
//! Where the guard cannot be had (no free entry, `mmap` or `sigaction` refused, an empty
//! file, another handler installed over ours since, SIGBUS blocked on the calling thread,
//! whose mask the read's threads inherit) there is no map and the workers read with
//! `pread` as before.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// How many maps may be live at once in the process (readers on other threads each hold
/// one); past it a read copies with `pread`.
const ENTRIES: usize = 64;

/// The mapped pages below this many bytes behind the fold are handed back once they add up
/// to it, so the mapped pages a read holds stay bounded (as the copied buffers were)
/// instead of growing with the file.
const RELEASE_STEP: u64 = 8 << 20;

/// One live map, as the signal handler sees it: written by the owning thread, read by the
/// handler on any thread (atomics only: a handler may take no lock).
struct Entry {
    /// Odd while `start` and `len` change (a map made or dropped): the handler takes the
    /// two as one only when this is even and the same before and after (a sequence lock),
    /// so a fault is never matched against half of one map and half of the next.
    seq: AtomicUsize,
    start: AtomicUsize,
    len: AtomicUsize,
    /// The lowest offset of a page that faulted (`u64::MAX`: none).
    fault: AtomicU64,
}

impl Entry {
    const fn free() -> Entry {
        Entry {
            seq: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            fault: AtomicU64::new(u64::MAX),
        }
    }

    /// The map this entry holds, read as one: `(start, len)`, None when free or changing.
    fn snapshot(&self) -> Option<(usize, usize)> {
        let before = self.seq.load(Ordering::Acquire);
        let start = self.start.load(Ordering::Acquire);
        let len = self.len.load(Ordering::Acquire);
        let after = self.seq.load(Ordering::Acquire);
        (before == after && before.is_multiple_of(2) && start != 0).then_some((start, len))
    }
}

static LIVE: [Entry; ENTRIES] = [const { Entry::free() }; ENTRIES];
/// Whether the handler went in (tried once per process).
static INSTALLED: OnceLock<bool> = OnceLock::new();
/// The SIGBUS action before ours (null: the default), for faults outside our maps.
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(ptr::null_mut());
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// A read-only private map of a whole file, registered with the guard.
pub(crate) struct Map {
    ptr: *mut libc::c_void,
    len: usize,
    entry: &'static Entry,
    /// Pages below this offset were handed back ([`Map::release_below`]).
    released: AtomicU64,
}

// SAFETY: the map is a range of address space owned by this value and only read through
// it; what changes its bytes (another process writing the file, the handler's zero pages,
// `madvise`) does so through the kernel, never through a Rust reference.
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    /// Maps `file` (`len` bytes), or None where the guard or the map cannot be had: the
    /// handler could not be installed or was replaced since by one that does not pass
    /// SIGBUS on to it, or this thread blocks SIGBUS (the threads of the read inherit its
    /// mask, and the kernel kills a thread that faults with SIGBUS blocked).
    pub(crate) fn new(file: &File, len: u64) -> Option<Map> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if !install() || !guarded() {
            return None;
        }
        let entry = LIVE.iter().find(|e| {
            e.len
                .compare_exchange(0, len, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        entry.seq.fetch_add(1, Ordering::AcqRel);
        // SAFETY: a fresh read-only private mapping of an open file; the kernel picks
        // the address.
        let ptr = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            entry.seq.fetch_add(1, Ordering::AcqRel);
            entry.len.store(0, Ordering::Release);
            return None;
        }
        entry.fault.store(u64::MAX, Ordering::Release);
        entry.start.store(ptr as usize, Ordering::Release);
        entry.seq.fetch_add(1, Ordering::AcqRel);
        Some(Map {
            ptr,
            len,
            entry,
            released: AtomicU64::new(0),
        })
    }

    /// The mapped bytes.
    ///
    /// They are the file's as the kernel has them at each access: another process that
    /// writes the file changes them (as it would change what a later `pread` returns), and
    /// a shrink turns the pages past the new end into zeros; every reader treats them as
    /// untrusted input, and [`Map::sound_below`] says where they can be trusted.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `ptr` for as long as `self` lives (unmapped in
        // `drop`); every page either maps the file or, after a fault, zeros. The bytes may
        // change under this reference (a writer of the file, the handler's zero pages), as
        // for any map of a file another process can write (memmap2 makes its constructor
        // unsafe for that reason): a `u8` has no invalid values, and no code here relies on
        // the bytes staying the same after it read them, only on positions inside `len`.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Where the mapped bytes stop being the file's, when that is below `end`: the first
    /// page that faulted, or the file's length now when it shrank below `end`. None when
    /// every byte below `end` was read from the file.
    pub(crate) fn sound_below(&self, file: &File, end: u64) -> Option<u64> {
        let fault = self.entry.fault.load(Ordering::Acquire);
        // A shrink to the middle of a page leaves that page mapped with zeros past the
        // new end, and no fault: the length says it.
        let now = file.metadata().map_or(0, |m| m.len());
        let cut = fault.min(now);
        (cut < end).then_some(cut)
    }

    /// Hands back the mapped pages below `offset` (already folded), in steps of
    /// [`RELEASE_STEP`]: the next access would fault them in again from the page cache,
    /// so this never changes what is read.
    pub(crate) fn release_below(&self, offset: u64) {
        let page = PAGE.load(Ordering::Relaxed) as u64;
        let done = self.released.load(Ordering::Relaxed);
        let upto = (offset.min(self.len as u64) / page) * page;
        if upto < done + RELEASE_STEP {
            return;
        }
        // SAFETY: a page-aligned range inside the map; dropping the pages of a read-only
        // private file mapping only makes the next access fault them in again.
        unsafe {
            libc::madvise(
                self.ptr.cast::<u8>().add(done as usize).cast(),
                (upto - done) as usize,
                libc::MADV_DONTNEED,
            );
        }
        self.released.store(upto, Ordering::Relaxed);
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        self.entry.seq.fetch_add(1, Ordering::AcqRel);
        self.entry.start.store(0, Ordering::Release);
        // SAFETY: the range mapped in `new`, no longer borrowed (`bytes` borrows `self`).
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
        self.entry.fault.store(u64::MAX, Ordering::Release);
        self.entry.seq.fetch_add(1, Ordering::AcqRel);
        // Freed last: another map may claim the entry from here on.
        self.entry.len.store(0, Ordering::Release);
    }
}

/// The handler as `sigaction` takes it.
fn handler() -> usize {
    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = on_sigbus;
    f as usize
}

/// Installs the handler once per process; whether that worked.
fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        // SAFETY: plain libc calls on zeroed, then filled, C structs.
        unsafe {
            let size = libc::sysconf(libc::_SC_PAGESIZE);
            if size > 0 {
                PAGE.store(size as usize, Ordering::Relaxed);
            }
            // The action before ours is kept before ours goes in, so a SIGBUS in between
            // finds it (and is passed on to it).
            let old: *mut libc::sigaction = Box::into_raw(Box::new(std::mem::zeroed()));
            if libc::sigaction(libc::SIGBUS, ptr::null(), old) != 0 {
                drop(Box::from_raw(old));
                return false;
            }
            PREVIOUS.store(old, Ordering::Release);
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler();
            // On the thread's alternate stack where it has one (as Rust's own handler
            // runs), so a handler before ours that needs it still has it.
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(libc::SIGBUS, &new, ptr::null_mut()) == 0
        }
    })
}

/// Whether a SIGBUS on this thread (and the threads it starts) would reach the handler
/// now: it is still the process's action, and this thread does not block SIGBUS.
fn guarded() -> bool {
    // SAFETY: queries only, into zeroed C structs.
    unsafe {
        let mut now: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, ptr::null(), &mut now) != 0
            || now.sa_sigaction != handler()
        {
            return false;
        }
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, ptr::null(), &mut mask) == 0
            && libc::sigismember(&mask, libc::SIGBUS) == 0
    }
}

/// The SIGBUS handler: zeros for a fault inside a live map, the previous action otherwise.
/// Async-signal-safe: atomics and system calls only, and `errno` left as it was found.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: `errno` is this thread's; the kernel passes a valid `siginfo_t` to an
    // SA_SIGINFO handler.
    let (errno, code, addr) = unsafe {
        let errno = *libc::__errno_location();
        (errno, (*info).si_code, (*info).si_addr() as usize)
    };
    // A fault the kernel raised (a signal sent by `kill` has a code of 0 or less, and no
    // address) inside one of our maps: zeros from the faulting page on.
    if !(code > 0 && mend(addr)) {
        pass_on(sig, info, ctx, code);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Does with a SIGBUS that is not ours what the action before ours would have done.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void, code: i32) {
    let previous = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `previous` was filled by `sigaction` and is never freed; calling the
    // previous handler the way it was installed is what the kernel would have done.
    unsafe {
        let (action, flags) = if previous.is_null() {
            (libc::SIG_DFL, 0)
        } else {
            ((*previous).sa_sigaction, (*previous).sa_flags)
        };
        if action == libc::SIG_IGN && code <= 0 {
            // A sent SIGBUS the process ignored before: still ignored.
        } else if action == libc::SIG_DFL || action == libc::SIG_IGN {
            // The default action (a fault cannot be ignored: the access would fault again
            // for ever): put it back and deliver the signal again. A fault does so by
            // itself when the access runs again; a sent signal is raised anew.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(libc::SIGBUS, &dfl, ptr::null_mut());
            if code <= 0 {
                libc::raise(sig);
            }
        } else if flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(action);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(action);
            f(sig);
        }
    }
}

/// Puts zero pages over a live map from the page holding `addr` to its end, recording the
/// offset: whether `addr` was in one and the zeros went in.
fn mend(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    for e in &LIVE {
        let Some((start, len)) = e.snapshot() else {
            continue;
        };
        if addr < start || addr - start >= len {
            continue;
        }
        let at = (addr & !(page - 1)).max(start);
        // Recorded before the zeros go in: a thread that reads them finds the record
        // when the reading thread checks before its fold.
        e.fault.fetch_min((at - start) as u64, Ordering::AcqRel);
        // SAFETY: replaces pages of a live map (its user is the thread that faulted on
        // it, so it is not dropped meanwhile), from the faulting page to its end, with
        // fresh zero pages at the same addresses.
        let zeros = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                start + len - at,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        return zeros != libc::MAP_FAILED;
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut t = tempfile::NamedTempFile::new().unwrap();
        t.write_all(bytes).unwrap();
        t.flush().unwrap();
        let f = File::open(t.path()).unwrap();
        (t, f)
    }

    /// The map holds the file's bytes, and nothing is unsound while the file is whole.
    #[test]
    fn a_map_reads_the_files_bytes() {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (_t, f) = file_of(&bytes);
        let m = Map::new(&f, bytes.len() as u64).unwrap();
        assert_eq!(m.bytes(), &bytes[..]);
        assert_eq!(m.sound_below(&f, bytes.len() as u64), None);
    }

    /// A file truncated after it was mapped: reading the pages past its new end raises
    /// SIGBUS, which the guard turns into zeros and a recorded offset (without the guard
    /// this test process dies), and the bytes before the cut are still the file's.
    #[test]
    fn a_shrink_while_mapped_reads_zeros_and_is_recorded() {
        assert!(install());
        let page = PAGE.load(Ordering::Relaxed);
        let bytes: Vec<u8> = (0..(page * 16) as u32)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let (t, f) = file_of(&bytes);
        let m = Map::new(&f, bytes.len() as u64).unwrap();
        let keep = page * 5 + 100;
        t.as_file().set_len(keep as u64).unwrap();
        let seen = m.bytes().to_vec();
        assert_eq!(&seen[..keep], &bytes[..keep]);
        // The tail of the last page is zeroed by the kernel; the pages after it fault.
        assert!(seen[keep..].iter().all(|&b| b == 0));
        assert_eq!(m.entry.fault.load(Ordering::Acquire), (page * 6) as u64);
        assert_eq!(m.sound_below(&f, bytes.len() as u64), Some(keep as u64));
        assert_eq!(m.sound_below(&f, keep as u64), None);
    }

    /// A thread that blocks SIGBUS gets no map (a fault with the signal blocked kills the
    /// process whatever the handler), and the same thread gets one again once it does not.
    #[test]
    fn no_map_where_sigbus_is_blocked() {
        let (_t, f) = file_of(b"[]");
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: this test's own thread's mask, set and put back.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, libc::SIGBUS);
                    libc::pthread_sigmask(libc::SIG_BLOCK, &set, ptr::null_mut());
                    assert!(Map::new(&f, 2).is_none());
                    libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, ptr::null_mut());
                }
                assert!(Map::new(&f, 2).is_some());
            });
        });
    }

    /// Handing pages back never changes what is read.
    #[test]
    fn released_pages_read_the_same() {
        let bytes: Vec<u8> = (0..(3 * RELEASE_STEP as usize / 2) as u32)
            .map(|i| (i % 253) as u8)
            .collect();
        let (_t, f) = file_of(&bytes);
        let m = Map::new(&f, bytes.len() as u64).unwrap();
        assert_eq!(m.bytes(), &bytes[..]);
        m.release_below(RELEASE_STEP + 12345);
        let page = PAGE.load(Ordering::Relaxed) as u64;
        assert_eq!(
            m.released.load(Ordering::Relaxed),
            (RELEASE_STEP + 12345) / page * page
        );
        assert_eq!(m.bytes(), &bytes[..]);
    }

    /// Entries are reused once their maps are gone.
    #[test]
    fn more_maps_than_entries_over_time() {
        let (_t, f) = file_of(b"[]");
        for _ in 0..3 * ENTRIES {
            let m = Map::new(&f, 2).unwrap();
            assert_eq!(m.bytes(), b"[]");
        }
    }
}
