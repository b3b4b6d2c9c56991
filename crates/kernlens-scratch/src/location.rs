//! Where a worktree goes: beside the durable output, or under a local scratch root when the
//! output sits on a network filesystem.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;
use crate::mounts::MountTable;
use crate::nofollow::{make_private, open_root, own_dir_at};
use crate::owner::{LivenessProbe, NsIdentity, OwnerMarker, RELEASED_FILE};
use crate::policy::ScratchPolicy;
use crate::sweep::{SweepOptions, SweepReport, sweep};

/// The environment values placement depends on, read once at the edge (the CLI) and handed in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScratchEnv {
    /// `KERNLENS_LOCAL_SCRATCH_ROOT`, as set.
    pub local_root_override: Option<String>,
    /// `XDG_CACHE_HOME`, as set.
    pub xdg_cache_home: Option<String>,
    /// `HOME`, as set.
    pub home: Option<PathBuf>,
    /// Every user's home directory (from the password database, read at the edge): a copy
    /// root that holds one of them is refused, so other users' files never enter a worktree.
    pub home_dirs: Vec<PathBuf>,
}

impl ScratchEnv {
    /// An environment from explicit values.
    pub fn new(
        local_root_override: Option<String>,
        xdg_cache_home: Option<String>,
        home: Option<PathBuf>,
    ) -> ScratchEnv {
        ScratchEnv {
            local_root_override,
            xdg_cache_home,
            home,
            home_dirs: Vec::new(),
        }
    }

    /// The same environment with `KERNLENS_LOCAL_SCRATCH_ROOT` as set (or unset).
    pub fn with_local_root_override(mut self, value: Option<String>) -> Self {
        self.local_root_override = value;
        self
    }

    /// The same environment with `XDG_CACHE_HOME` as set (or unset).
    pub fn with_xdg_cache_home(mut self, value: Option<String>) -> Self {
        self.xdg_cache_home = value;
        self
    }

    /// The same environment with `HOME` as set (or unset).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// Set the users' home directories (see [`passwd_homes`]).
    pub fn with_home_dirs(mut self, home_dirs: Vec<PathBuf>) -> Self {
        self.home_dirs = home_dirs;
        self
    }

    /// The local scratch root by the contract's order, with a warning for an ignored override.
    pub fn local_root(&self) -> (Option<PathBuf>, Vec<String>) {
        let mut warnings = Vec::new();
        if let Some(raw) = &self.local_root_override {
            let trimmed = raw.trim();
            if !trimmed.is_empty() {
                let expanded = match (trimmed.strip_prefix('~'), &self.home) {
                    (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                        PathBuf::from(format!("{}{rest}", home.display()))
                    }
                    _ => PathBuf::from(trimmed),
                };
                if expanded.is_absolute() {
                    return (Some(expanded), warnings);
                }
                warnings.push(format!(
                    "local_root_override_relative: ignoring KERNLENS_LOCAL_SCRATCH_ROOT '{trimmed}'"
                ));
            }
        }
        if let Some(xdg) = &self.xdg_cache_home {
            let p = Path::new(xdg.trim());
            if p.is_absolute() {
                return (Some(p.join("kernlens").join("scratch")), warnings);
            }
        }
        if let Some(home) = &self.home
            && !home.as_os_str().is_empty()
        {
            return (
                Some(home.join(".cache").join("kernlens").join("scratch")),
                warnings,
            );
        }
        (None, warnings)
    }
}

/// The home directories named in `/etc/passwd` text (field 6), absolute ones only and never
/// `/` (system accounts whose home is `/` would otherwise refuse every copy).
pub fn passwd_homes(passwd: &str) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = passwd
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split(':').nth(5))
        .map(|h| PathBuf::from(h.trim()))
        .filter(|h| h.is_absolute() && h.parent().is_some())
        .collect();
    homes.sort();
    homes.dedup();
    homes
}

/// Which attempt of which session wants a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocationRequest {
    /// The durable attempt directory `…/<session>/<attempt>`; it always stays where it is.
    pub output_dir: PathBuf,
    /// Session name; defaults to the name of `output_dir`'s parent.
    pub session: Option<String>,
    /// Attempt name; defaults to the name of `output_dir`.
    pub attempt: Option<String>,
}

impl LocationRequest {
    /// A request with default session and attempt names.
    pub fn new(output_dir: impl Into<PathBuf>) -> LocationRequest {
        LocationRequest {
            output_dir: output_dir.into(),
            session: None,
            attempt: None,
        }
    }

    /// Set the session name.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Set the attempt name.
    pub fn with_attempt(mut self, attempt: impl Into<String>) -> Self {
        self.attempt = Some(attempt.into());
        self
    }

    /// The sanitised session and attempt names.
    pub fn names(&self) -> Result<(String, String), Error> {
        let output =
            std::path::absolute(&self.output_dir).unwrap_or_else(|_| self.output_dir.clone());
        let from_path = |p: Option<&Path>| {
            p.and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let session_raw = self
            .session
            .clone()
            .unwrap_or_else(|| from_path(output.parent()));
        let attempt_raw = self
            .attempt
            .clone()
            .unwrap_or_else(|| from_path(Some(&output)));
        Ok((
            sanitize_name("session", &session_raw)?,
            sanitize_name("attempt", &attempt_raw)?,
        ))
    }
}

/// Characters outside `[A-Za-z0-9._-]` become `-`, runs of `-` collapse, and leading or trailing
/// `-` and `.` are trimmed. Empty, `.` and `..` are refused.
pub fn sanitize_name(what: &'static str, raw: &str) -> Result<String, Error> {
    let dashed = dash_outside(raw, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
    });
    let trimmed = dashed.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() || trimmed == "." || trimmed == ".." {
        return Err(Error::InvalidName {
            what,
            name: raw.to_owned(),
        });
    }
    Ok(trimmed.to_owned())
}

/// Replace every character that `allowed` rejects with `-`, collapsing runs of `-`.
pub(crate) fn dash_outside(raw: &str, allowed: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if allowed(c) { c } else { '-' };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    out
}

/// Where a worktree will be, decided without touching the disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScratchLocation {
    /// The worktree path (does not exist yet when planned for a new attempt).
    pub worktree: PathBuf,
    /// True when the worktree is under the local scratch root instead of beside the output.
    pub relocated: bool,
    /// `local_root/<session>` when relocated.
    pub session_dir: Option<PathBuf>,
    /// The local scratch root when relocated.
    pub local_root: Option<PathBuf>,
    /// The durable output directory (absolute).
    pub output_dir: PathBuf,
    /// Sanitised session name.
    pub session: String,
    /// Sanitised attempt name.
    pub attempt: String,
    /// Placement warnings such as `scratch_root_on_network_fs`.
    pub warnings: Vec<String>,
}

/// Decide where the worktree goes. Pure: it writes nothing.
pub fn plan_location(
    request: &LocationRequest,
    env: &ScratchEnv,
    mounts: &MountTable,
    policy: &ScratchPolicy,
) -> Result<ScratchLocation, Error> {
    let (session, attempt) = request.names()?;
    let output_dir =
        std::path::absolute(&request.output_dir).unwrap_or_else(|_| request.output_dir.clone());
    if !mounts.is_network_fs(&output_dir, policy) {
        return Ok(ScratchLocation {
            worktree: output_dir.join("worktree"),
            relocated: false,
            session_dir: None,
            local_root: None,
            output_dir,
            session,
            attempt,
            warnings: Vec::new(),
        });
    }
    let (root, mut warnings) = env.local_root();
    let Some(local_root) = root else {
        return Err(Error::NoScratchRoot { output_dir });
    };
    if mounts.is_network_fs(&local_root, policy) {
        warnings.push(format!(
            "scratch_root_on_network_fs: local scratch root '{}' is itself on a network filesystem",
            local_root.display()
        ));
    }
    let session_dir = local_root.join(&session);
    Ok(ScratchLocation {
        worktree: session_dir.join(&attempt).join("worktree"),
        relocated: true,
        session_dir: Some(session_dir),
        local_root: Some(local_root),
        output_dir,
        session,
        attempt,
        warnings,
    })
}

/// Who claims a location and how its sweep judges the other sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim {
    /// The process that will use the worktree, written to `.owner`.
    pub owner: OwnerMarker,
    /// Grace period and clock for the sweep (the claimed session is always spared).
    pub sweep: SweepOptions,
}

impl Claim {
    /// A claim for `owner` with the default sweep options.
    pub fn new(owner: OwnerMarker) -> Claim {
        Claim {
            owner,
            sweep: SweepOptions::default(),
        }
    }

    /// Sweep with these options (their `spare` is replaced by the claimed session).
    pub fn with_sweep(mut self, sweep: SweepOptions) -> Self {
        self.sweep = sweep;
        self
    }
}

/// Claim a relocated location: create the session directory (mode 0700; an existing one of ours
/// is made 0700, a symlink or another user's directory is refused), write the owner marker and
/// namespace record, clear an earlier release, and sweep the local root sparing this session.
/// A local location needs no claim and gets an empty report.
pub fn claim_location(
    location: &ScratchLocation,
    claim: &Claim,
    probe: &dyn LivenessProbe,
) -> Result<SweepReport, Error> {
    claim_location_open(location, claim, probe).map(|(_, report)| report)
}

/// [`claim_location`], also returning the open session directory (`None` for a local
/// location), so the caller builds below it without following a link swapped in since.
pub(crate) fn claim_location_open(
    location: &ScratchLocation,
    claim: &Claim,
    probe: &dyn LivenessProbe,
) -> Result<(Option<OwnedFd>, SweepReport), Error> {
    let (Some(session_dir), Some(local_root)) = (&location.session_dir, &location.local_root)
    else {
        return Ok((None, SweepReport::default()));
    };
    if !location.relocated {
        return Ok((None, SweepReport::default()));
    }
    let root_fd =
        open_root(local_root).map_err(|e| Error::io("create local root", local_root, e))?;
    let session_fd = own_dir_at(&root_fd, OsStr::new(&location.session))
        .map_err(|e| Error::io("create session directory", session_dir, e))?;
    make_private(&session_fd, session_dir)
        .map_err(|e| Error::io("claim session directory", session_dir, e))?;
    claim
        .owner
        .write_at(&session_fd)
        .map_err(|e| Error::io("write owner marker in", session_dir, e))?;
    NsIdentity::current()
        .write_at(&session_fd)
        .map_err(|e| Error::io("write namespace record in", session_dir, e))?;
    match rustix::fs::unlinkat(&session_fd, RELEASED_FILE, rustix::fs::AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(Error::io("clear release of", session_dir, e.into())),
    }
    let options = claim.sweep.clone().with_spare(location.session.clone());
    let report = sweep(local_root, &options, probe).map_err(|e| match e {
        io @ Error::Io { .. } => io,
        other => Error::io(
            "sweep",
            local_root,
            std::io::Error::other(other.to_string()),
        ),
    })?;
    Ok((Some(session_fd), report))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_sanitise_and_collapse() {
        assert_eq!(sanitize_name("session", "a b//c").unwrap(), "a-b-c");
        assert_eq!(sanitize_name("session", "--.x.--").unwrap(), "x");
    }

    #[test]
    fn names_that_sanitise_to_nothing_are_invalid() {
        for bad in ["", ".", "..", "---", "///", "é"] {
            assert!(matches!(
                sanitize_name("attempt", bad),
                Err(Error::InvalidName { .. })
            ));
        }
    }

    #[test]
    fn local_root_order_override_then_xdg_then_home() {
        let home = Some(PathBuf::from("/h"));
        let env = ScratchEnv::new(Some(" ~/s ".into()), Some("/x".into()), home.clone());
        assert_eq!(env.local_root().0, Some(PathBuf::from("/h/s")));
        let env = ScratchEnv::new(Some("rel".into()), Some("/x".into()), home.clone());
        let (root, warnings) = env.local_root();
        assert_eq!(root, Some(PathBuf::from("/x/kernlens/scratch")));
        assert_eq!(warnings.len(), 1);
        let env = ScratchEnv::new(None, Some("relative".into()), home);
        assert_eq!(
            env.local_root().0,
            Some(PathBuf::from("/h/.cache/kernlens/scratch"))
        );
        assert_eq!(ScratchEnv::default().local_root().0, None);
    }

    #[test]
    fn passwd_homes_are_absolute_and_never_the_filesystem_root() {
        let text = "root:x:0:0:root:/root:/bin/bash\n\
                    daemon:x:1:1::/:/usr/sbin/nologin\n\
                    # comment:x:2:2::/c:/bin/sh\n\
                    bob:x:1000:1000::/home/bob:/bin/sh\n\
                    odd:x:1001:1001::relative:/bin/sh\n\
                    short:x\n";
        assert_eq!(
            passwd_homes(text),
            vec![PathBuf::from("/home/bob"), PathBuf::from("/root")]
        );
    }
}
