//! `kernlens scratch create|diff|release|sweep`: the scratch-workspace lifecycle.
//!
//! This is the edge: it reads the environment, the mount table and the password database's
//! home directories once and hands them to the library as values. Two hidden flags of `create`
//! replace those system files with files in the same format, which is how the tests drive these
//! paths through this binary without mounting anything or adding users: `--mount-table FILE`
//! for `/proc/self/mountinfo` (the network-filesystem path: relocation, ownership, sweeping) and
//! `--passwd FILE` for `/etc/passwd` (the guard against copying other users' homes).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use kernlens_scratch::document::{
    CreateDocument, DiffDocument, Refusal, ReleaseDocument, SweepDocument,
};
use kernlens_scratch::export::{ExportRequest, export};
use kernlens_scratch::location::{LocationRequest, ScratchEnv, passwd_homes};
use kernlens_scratch::mounts::MountTable;
use kernlens_scratch::owner::{OwnerMarker, SystemProbe};
use kernlens_scratch::prepare::{PrepareRequest, prepare, release};
use kernlens_scratch::sweep::{DEFAULT_GRACE, SweepOptions, sweep};
use kernlens_scratch::workspace::Workspace;
use serde_json::Value;

use super::{Env, Failure, Format};

/// Arguments of `kernlens scratch`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
    /// JSON: the kernlens.scratch/1 report instead of the table.
    #[command(flatten)]
    format: Format,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Copy the package holding the --source file into a git-tracked scratch worktree.
    Create {
        /// The kernel source file.
        #[arg(long)]
        source: PathBuf,
        /// The durable attempt directory `…/<session>/<attempt>`.
        #[arg(long)]
        output: PathBuf,
        /// Session name (default: the name of the output's parent).
        #[arg(long)]
        session: Option<String>,
        /// Attempt name (default: the name of the output directory).
        #[arg(long)]
        attempt: Option<String>,
        /// Baseline branch (default: kernlens/<session>/<stem>-<random hex>).
        #[arg(long)]
        branch: Option<String>,
        /// Copy this repository directory whole instead of the package.
        #[arg(long)]
        repo: Option<PathBuf>,
        /// The process that will use the worktree and owns the session (default: the process
        /// that ran this command). A relocated session is swept only after its owner exits.
        #[arg(long, value_name = "PID")]
        owner_pid: Option<u32>,
        /// Grace period for the sweep a relocated create runs: sessions whose marker is younger
        /// are kept even when their owner is gone (default: 86400, a day).
        #[arg(long, value_name = "SECONDS")]
        grace_secs: Option<u64>,
        /// Read this mount table instead of /proc/self/mountinfo (for tests and odd systems).
        #[arg(long, hide = true)]
        mount_table: Option<PathBuf>,
        /// Read the users' home directories from this file, in /etc/passwd's format, instead
        /// of /etc/passwd (for tests and odd systems).
        #[arg(long, hide = true)]
        passwd: Option<PathBuf>,
    },
    /// Mark a relocated scratch session done, so the next sweep removes it.
    Release {
        /// The scratch worktree, or the attempt directory given to `create --output`.
        scratch_dir: PathBuf,
    },
    /// Export what changed in a scratch worktree: per-file copies, a patch, export.json.
    Diff {
        /// The scratch worktree, or the attempt directory given to `create --output`.
        scratch_dir: PathBuf,
        /// Output directory (default: <output_dir>/optimized_versions).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Export this commit instead of the worktree.
        #[arg(long)]
        best: Option<String>,
    },
    /// Reclaim scratch sessions whose owner has died.
    Sweep {
        /// The local scratch root (default: from KERNLENS_LOCAL_SCRATCH_ROOT, XDG_CACHE_HOME or HOME).
        #[arg(long)]
        local_root: Option<PathBuf>,
        /// Keep sessions whose marker is younger than this even when their owner is gone
        /// (default: 86400, a day).
        #[arg(long, value_name = "SECONDS")]
        grace_secs: Option<u64>,
    },
}

fn sweep_options(grace_secs: Option<u64>) -> SweepOptions {
    SweepOptions::default().with_grace(grace_secs.map_or(DEFAULT_GRACE, Duration::from_secs))
}

/// The session owner: `--owner-pid` (which must run), else this command's caller. Warnings say
/// when the owner cannot be what the caller meant.
fn owner(owner_pid: Option<u32>) -> Result<(OwnerMarker, Vec<String>), Failure> {
    if let Some(pid) = owner_pid {
        let marker = OwnerMarker::of_pid(pid).ok_or_else(|| {
            Failure::new(
                "scratch create",
                format!("--owner-pid {pid}: no such running process"),
            )
        })?;
        return Ok((marker, Vec::new()));
    }
    match OwnerMarker::parent() {
        Some(parent) if parent.pid == 1 => Ok((
            parent,
            vec![
                "owner_is_init: this command's parent is pid 1, which never exits; the session stays until `kernlens scratch release`"
                    .to_owned(),
            ],
        )),
        Some(parent) => Ok((parent, Vec::new())),
        None => Ok((
            OwnerMarker::current(),
            vec![
                "owner_is_this_command: the parent process cannot be read; pass --owner-pid, or the session is swept once the grace period ends"
                    .to_owned(),
            ],
        )),
    }
}

/// Where scratch workspaces live, with the home directories of `--passwd FILE` when given (it
/// must be readable: an explicit database that silently reads as empty would lift the guard),
/// else of `/etc/passwd`.
fn scratch_env(env: &Env, passwd: Option<PathBuf>) -> Result<ScratchEnv, Failure> {
    let Some(path) = passwd else {
        return Ok(env.scratch());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::new(
            "scratch create",
            format!("cannot read --passwd '{}': {e}", path.display()),
        )
    })?;
    Ok(env.scratch().with_home_dirs(passwd_homes(&text)))
}

fn mount_table(explicit: Option<PathBuf>) -> MountTable {
    if let Some(path) = explicit {
        return MountTable::read(&path);
    }
    let info = MountTable::read(std::path::Path::new("/proc/self/mountinfo"));
    if info.mounts.is_empty() {
        MountTable::read(std::path::Path::new("/proc/mounts"))
    } else {
        info
    }
}

/// Writes the report: the library's document as JSON with `--json`, else the table `human`
/// renders from that document's fields (read, never edited).
fn print<T: serde::Serialize>(
    format: Format,
    doc: &T,
    human: fn(&Value) -> String,
) -> Result<(), Failure> {
    if format.is_json() {
        return format.write(doc, String::new).map(|_| ());
    }
    let value =
        serde_json::to_value(doc).map_err(|e| Failure::new("cannot encode the report", e))?;
    format.write(doc, || human(&value)).map(|_| ())
}

/// A JSON string or path field for a table cell (`-` when absent).
fn field(value: &Value, key: &str) -> String {
    match &value[key] {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    }
}

fn warnings_lines(value: &Value, out: &mut String) {
    for w in value["warnings"].as_array().into_iter().flatten() {
        out.push_str(&format!("warning   {}\n", w.as_str().unwrap_or_default()));
    }
}

/// The sweep's lists as `label  count` lines, each path under its label.
fn sweep_lines(sweep: &Value, out: &mut String) {
    let Some(map) = sweep.as_object() else { return };
    for (label, items) in map {
        let Some(items) = items.as_array() else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        out.push_str(&format!("{label:<13} {}\n", items.len()));
        for item in items {
            let text = item
                .as_str()
                .map_or_else(|| item.to_string(), str::to_owned);
            out.push_str(&format!("  {text}\n"));
        }
    }
}

fn create_table(v: &Value) -> String {
    if !v["refused"].is_null() {
        let r = &v["refused"];
        let what = [&r["path"], &r["name"], &r["message"]]
            .into_iter()
            .find_map(|x| x.as_str())
            .unwrap_or_default();
        return format!("refused   {} {what}\n", field(r, "reason"));
    }
    let mut o = String::new();
    for (label, key) in [
        ("worktree", "worktree"),
        ("kernel", "kernel_path"),
        ("session", "session"),
        ("attempt", "attempt"),
        ("branch", "branch"),
        ("base", "base_commit"),
        ("output", "output_dir"),
        ("relocated", "relocated"),
    ] {
        let value = if v[key].is_null() {
            field(&v["meta"], key)
        } else {
            field(v, key)
        };
        o.push_str(&format!("{label:<9} {value}\n"));
    }
    warnings_lines(v, &mut o);
    sweep_lines(&v["sweep"], &mut o);
    o
}

fn diff_table(v: &Value) -> String {
    let mut o = format!(
        "exported  {}\nbase      {}  best {}\npatch     {} bytes\n",
        field(v, "out_dir"),
        field(v, "base_commit"),
        field(v, "best"),
        field(v, "patch_bytes")
    );
    let changes = v["changes"].as_array().map_or(&[][..], Vec::as_slice);
    o.push_str(&format!("changes   {}\n", changes.len()));
    for c in changes {
        let binary = if c["binary"] == Value::Bool(true) {
            "  (binary)"
        } else {
            ""
        };
        o.push_str(&format!(
            "  {:<9} {}{binary}\n",
            field(c, "status"),
            field(c, "path")
        ));
    }
    for d in v["excluded_drift"].as_array().into_iter().flatten() {
        o.push_str(&format!(
            "excluded  {:<9} {} (copied, not in the patch)\n",
            field(d, "state"),
            field(d, "path")
        ));
    }
    warnings_lines(v, &mut o);
    o
}

fn release_table(v: &Value) -> String {
    if v["released"] == Value::Bool(true) {
        format!("released  {}\n", field(v, "session_dir"))
    } else {
        format!("not released: {}\n", field(v, "why"))
    }
}

fn sweep_table(v: &Value) -> String {
    let mut o = format!("swept     {}\n", field(v, "local_root"));
    let before = o.len();
    sweep_lines(v, &mut o);
    if o.len() == before {
        o.push_str("nothing to reclaim\n");
    }
    o
}

/// `scratch diff|release DIR`: the worktree itself, or the attempt directory given to
/// `create --output` when its `worktree` sits inside it.
fn open_workspace(dir: &Path, what: &str) -> Result<Workspace, Failure> {
    match Workspace::open(dir) {
        Ok(ws) => Ok(ws),
        Err(err) => {
            let inner = dir.join("worktree");
            if inner.join(".git").exists() {
                Workspace::open(&inner).map_err(|e| Failure::new(what, e))
            } else {
                Err(Failure::new(what, err))
            }
        }
    }
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let format = args.format;
    match args.action {
        Action::Create {
            source,
            output,
            session,
            attempt,
            branch,
            repo,
            owner_pid,
            grace_secs,
            mount_table: table,
            passwd,
        } => {
            let (owner, owner_warnings) = owner(owner_pid)?;
            let scratch_env = scratch_env(env, passwd)?;
            let mut location = LocationRequest::new(output);
            location.session = session;
            location.attempt = attempt;
            let mut request = PrepareRequest::new(source, location);
            request.branch = branch;
            request.repo_hint = repo;
            request.env = scratch_env;
            request.mounts = mount_table(table);
            request = request
                .with_owner(owner)
                .with_sweep(sweep_options(grace_secs));
            match prepare(&request) {
                Ok(mut ws) => {
                    ws.warnings.extend(owner_warnings);
                    print(format, &CreateDocument::created(&ws), create_table)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(err) if err.is_refusal() => {
                    print(
                        format,
                        &CreateDocument::refused(Refusal::of(&err)),
                        create_table,
                    )?;
                    eprintln!("kernlens: scratch create: {err}");
                    Ok(ExitCode::from(1))
                }
                Err(err) => Err(Failure::new("scratch create", err)),
            }
        }
        Action::Diff {
            scratch_dir,
            out,
            best,
        } => {
            let ws = open_workspace(&scratch_dir, "scratch diff")?;
            let report = export(&ws, &ExportRequest::new(best, out))
                .map_err(|e| Failure::new("scratch diff", e))?;
            print(format, &DiffDocument::new(&report), diff_table)?;
            Ok(ExitCode::SUCCESS)
        }
        Action::Release { scratch_dir } => {
            let ws = open_workspace(&scratch_dir, "scratch release")?;
            let session = release(&ws).map_err(|e| Failure::new("scratch release", e))?;
            print(
                format,
                &ReleaseDocument::new(session.as_deref()),
                release_table,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Action::Sweep {
            local_root,
            grace_secs,
        } => {
            let root = match local_root {
                Some(r) => r,
                None => env.scratch().local_root().0.ok_or_else(|| {
                    Failure::new(
                        "scratch sweep",
                        "no local scratch root: pass --local-root or set KERNLENS_LOCAL_SCRATCH_ROOT, XDG_CACHE_HOME or HOME",
                    )
                })?,
            };
            let report = sweep(&root, &sweep_options(grace_secs), &SystemProbe::new())
                .map_err(|e| Failure::new("scratch sweep", e))?;
            print(format, &SweepDocument::new(&report, &root), sweep_table)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
