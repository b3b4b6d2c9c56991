//! Who owns a scratch session directory, and whether that owner still runs.
//!
//! `<session_dir>/.owner` holds `<pid>:<starttime>`; `.owner.ns` adds the boot id and pid
//! namespace, so a container never judges another container's (or a previous boot's) pids.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::nofollow::{Durability, open_dir_nofollow, read_nofollow, write_atomic_at};

use serde::Serialize;

/// File name of the owner marker inside a session directory.
pub const OWNER_FILE: &str = ".owner";
/// File name of the namespace record beside the marker.
pub const OWNER_NS_FILE: &str = ".owner.ns";
/// File name of the release record: the owner said it is done, so a sweep may remove the
/// session whatever the owner's liveness and the grace period.
pub const RELEASED_FILE: &str = ".released";

/// A process identity that survives pid reuse: pid plus its kernel start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct OwnerMarker {
    /// Process id.
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat` (clock ticks since boot); 0 when it could not be read.
    pub starttime: u64,
}

/// Parse the start time (field 22) from `/proc/<pid>/stat` text, counting fields after the
/// *last* `)` so a process name holding spaces or `)` cannot shift it.
pub fn parse_stat_starttime(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at field 3 (state); starttime is field 22.
    after.split_ascii_whitespace().nth(22 - 3)?.parse().ok()
}

/// Start time of `pid` from `/proc`, or `None` when it cannot be read.
pub fn proc_starttime(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_starttime(&text)
}

impl OwnerMarker {
    /// A marker for process `pid` started at `starttime` (field 22 of `/proc/<pid>/stat`).
    pub fn new(pid: u32, starttime: u64) -> OwnerMarker {
        OwnerMarker { pid, starttime }
    }

    /// This process.
    pub fn current() -> OwnerMarker {
        let pid = std::process::id();
        OwnerMarker {
            pid,
            starttime: proc_starttime(pid).unwrap_or(0),
        }
    }

    /// The process `pid` with its current start time, or `None` when it does not run (its
    /// `/proc/<pid>/stat` cannot be read). Recording the start time is what keeps a later,
    /// unrelated process that reuses the pid from looking like the owner.
    pub fn of_pid(pid: u32) -> Option<OwnerMarker> {
        if pid == 0 {
            return None;
        }
        Some(OwnerMarker {
            pid,
            starttime: proc_starttime(pid)?,
        })
    }

    /// The parent of this process: the long-lived caller (a shell, an optimiser) of a
    /// short-lived `kernlens scratch create`. `None` when there is none or it cannot be read.
    pub fn parent() -> Option<OwnerMarker> {
        let ppid = rustix::process::getppid()?.as_raw_nonzero().get();
        OwnerMarker::of_pid(u32::try_from(ppid).ok()?)
    }

    /// Parse `<pid>:<starttime>` (surrounding whitespace allowed). Pid 0 is not an owner.
    pub fn parse(text: &str) -> Option<OwnerMarker> {
        let (pid, start) = text.trim().split_once(':')?;
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(pid) || !all_digits(start) {
            return None;
        }
        let pid: u32 = pid.parse().ok()?;
        if pid == 0 {
            return None;
        }
        Some(OwnerMarker {
            pid,
            starttime: start.parse().ok()?,
        })
    }

    /// Atomically write `dir/.owner` (temp file in `dir`, then rename) so a reader never sees a
    /// partial marker.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        write_marker(dir, OWNER_FILE, format!("{self}\n").as_bytes())
    }

    /// [`write_to`](Self::write_to) on an already-open session directory.
    pub(crate) fn write_at(&self, dir: &OwnedFd) -> std::io::Result<()> {
        write_marker_at(dir, OWNER_FILE, format!("{self}\n").as_bytes())
    }

    /// Read `dir/.owner`: `Ok(None)` when absent or unparsable, `Err` when unreadable.
    pub fn read_from(dir: &Path) -> std::io::Result<Option<OwnerMarker>> {
        match read_nofollow(&dir.join(OWNER_FILE)) {
            Ok(bytes) => Ok(std::str::from_utf8(&bytes)
                .ok()
                .and_then(OwnerMarker::parse)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl std::fmt::Display for OwnerMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.pid, self.starttime)
    }
}

/// Write `dir/name` atomically without following a link at `dir` or at `name`.
fn write_marker(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let fd = open_dir_nofollow(dir)?;
    write_marker_at(&fd, name, bytes)
}

fn write_marker_at(dir: &OwnedFd, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    // No fsync: after a crash the boot id differs and the marker is judged dead anyway.
    write_atomic_at(dir, OsStr::new(name), bytes, 0o600, Durability::NoSync)
}

/// Boot and pid-namespace identity of a process's view of pids.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct NsIdentity {
    /// `/proc/sys/kernel/random/boot_id`, trimmed.
    pub boot_id: Option<String>,
    /// Inode of `/proc/self/ns/pid`.
    pub pidns: Option<u64>,
}

impl NsIdentity {
    /// An identity from a boot id and a pid-namespace inode (either unknown as `None`).
    pub fn new(boot_id: Option<String>, pidns: Option<u64>) -> NsIdentity {
        NsIdentity { boot_id, pidns }
    }

    /// This process's boot id and pid namespace.
    pub fn current() -> NsIdentity {
        NsIdentity {
            boot_id: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty()),
            pidns: std::fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino()),
        }
    }

    /// `boot_id=<…>` and `pidns=<…>` lines; absent values are left out.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(b) = &self.boot_id {
            out.push_str(&format!("boot_id={b}\n"));
        }
        if let Some(p) = self.pidns {
            out.push_str(&format!("pidns={p}\n"));
        }
        out
    }

    /// Parse [`render`](Self::render)'s output; unknown lines are ignored.
    pub fn parse(text: &str) -> NsIdentity {
        let mut ns = NsIdentity::default();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("boot_id=") {
                ns.boot_id = Some(v.trim().to_owned()).filter(|s| !s.is_empty());
            } else if let Some(v) = line.strip_prefix("pidns=") {
                ns.pidns = v.trim().parse().ok();
            }
        }
        ns
    }

    /// Atomically write `dir/.owner.ns`.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        write_marker(dir, OWNER_NS_FILE, self.render().as_bytes())
    }

    /// [`write_to`](Self::write_to) on an already-open session directory.
    pub(crate) fn write_at(&self, dir: &OwnedFd) -> std::io::Result<()> {
        write_marker_at(dir, OWNER_NS_FILE, self.render().as_bytes())
    }
}

/// What `kill(pid, 0)` said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignalProbe {
    /// The process exists and we may signal it.
    Exists,
    /// ESRCH: no such process.
    NoSuchProcess,
    /// EPERM: it exists under another user.
    PermissionDenied,
    /// Any other failure.
    Other,
}

/// The system calls liveness needs, as a seam so tests can inject EPERM or other answers.
pub trait LivenessProbe {
    /// `kill(pid, 0)`.
    fn signal_zero(&self, pid: u32) -> SignalProbe;
    /// Current start time of `pid`, `None` when `/proc/<pid>/stat` is unreadable.
    fn starttime(&self, pid: u32) -> Option<u64>;
    /// The prober's own boot id and pid namespace.
    fn namespace(&self) -> NsIdentity;
}

/// The real probe: `kill(2)` and `/proc`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SystemProbe {
    ns: NsIdentity,
}

impl SystemProbe {
    /// Capture this process's namespace identity once.
    pub fn new() -> SystemProbe {
        SystemProbe {
            ns: NsIdentity::current(),
        }
    }
}

impl LivenessProbe for SystemProbe {
    fn signal_zero(&self, pid: u32) -> SignalProbe {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return SignalProbe::NoSuchProcess;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) => SignalProbe::Exists,
            Err(rustix::io::Errno::SRCH) => SignalProbe::NoSuchProcess,
            Err(rustix::io::Errno::PERM) => SignalProbe::PermissionDenied,
            Err(_) => SignalProbe::Other,
        }
    }

    fn starttime(&self, pid: u32) -> Option<u64> {
        proc_starttime(pid)
    }

    fn namespace(&self) -> NsIdentity {
        self.ns.clone()
    }
}

/// Whether a session directory's owner still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Liveness {
    /// The owner runs (or may: EPERM, unknown start time).
    Alive,
    /// The owner is provably gone; only this leads to deletion.
    Dead,
    /// The marker could not be judged (unreadable, or another pid namespace).
    Unknown,
    /// No (parsable) marker: not provably ours.
    Unowned,
}

/// Judge `dir`'s owner by the rules of the contract, first rule that applies.
pub fn liveness(dir: &Path, probe: &dyn LivenessProbe) -> Liveness {
    let marker = match OwnerMarker::read_from(dir) {
        Ok(Some(m)) => m,
        Ok(None) => {
            // Absent and unparsable both mean "not provably ours".
            return Liveness::Unowned;
        }
        Err(_) => return Liveness::Unknown,
    };
    if let Ok(bytes) = read_nofollow(&dir.join(OWNER_NS_FILE)) {
        let recorded = NsIdentity::parse(&String::from_utf8_lossy(&bytes));
        let here = probe.namespace();
        if let (Some(a), Some(b)) = (&recorded.boot_id, &here.boot_id)
            && a != b
        {
            return Liveness::Dead;
        }
        if let (Some(a), Some(b)) = (recorded.pidns, here.pidns)
            && a != b
        {
            return Liveness::Unknown;
        }
    }
    marker_liveness(marker, probe)
}

/// Rules 4 and 5: signal, then start time.
pub fn marker_liveness(marker: OwnerMarker, probe: &dyn LivenessProbe) -> Liveness {
    match probe.signal_zero(marker.pid) {
        SignalProbe::NoSuchProcess => return Liveness::Dead,
        SignalProbe::PermissionDenied => return Liveness::Alive,
        SignalProbe::Other => return Liveness::Unknown,
        SignalProbe::Exists => {}
    }
    if marker.starttime == 0 {
        return Liveness::Alive;
    }
    match probe.starttime(marker.pid) {
        None => Liveness::Alive,
        Some(now) if now == marker.starttime => Liveness::Alive,
        Some(_) => Liveness::Dead,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn starttime_counts_after_the_last_paren() {
        let mut fields: Vec<String> = (3..=30).map(|i| i.to_string()).collect();
        fields[0] = "S".into();
        let rest = fields.join(" ");
        let stat = format!("1234 (we ird) name)) {rest}");
        assert_eq!(parse_stat_starttime(&stat), Some(22));
        assert_eq!(parse_stat_starttime("1 (x) S 1 2"), None);
        assert_eq!(parse_stat_starttime("no paren"), None);
    }

    #[test]
    fn current_marker_has_a_real_starttime() {
        let m = OwnerMarker::current();
        assert_eq!(m.pid, std::process::id());
        assert!(m.starttime > 0);
    }

    #[test]
    fn marker_parse_rejects_garbage_and_pid_zero() {
        assert_eq!(
            OwnerMarker::parse("42:7\n"),
            Some(OwnerMarker {
                pid: 42,
                starttime: 7
            })
        );
        for bad in ["", "42", "0:5", "-1:5", "a:b", "42:7:8", "42: 7", "+4:1"] {
            assert_eq!(OwnerMarker::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ns_identity_round_trips() {
        let ns = NsIdentity {
            boot_id: Some("abc".into()),
            pidns: Some(4026531836),
        };
        assert_eq!(NsIdentity::parse(&ns.render()), ns);
    }

    proptest::proptest! {
        #[test]
        fn marker_round_trips(pid in 1u32.., start in proptest::prelude::any::<u64>()) {
            let m = OwnerMarker { pid, starttime: start };
            proptest::prop_assert_eq!(OwnerMarker::parse(&format!("{m}\n")), Some(m));
        }
    }
}
