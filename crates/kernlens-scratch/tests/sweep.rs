//! Placement and sweep scenarios (W2-W7, W12-W13 at the API level, Z1, Z3, Z6, Z7, Z9).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use kernlens_scratch::location::{Claim, LocationRequest, claim_location, plan_location};
use kernlens_scratch::mounts::MountTable;
use kernlens_scratch::owner::{LivenessProbe, NsIdentity, OwnerMarker, SignalProbe, SystemProbe};
use kernlens_scratch::policy::ScratchPolicy;
use kernlens_scratch::sweep::{SweepOptions, sweep};

/// Markers in these tests are written just now: judge them with no grace period.
fn no_grace() -> SweepOptions {
    SweepOptions::default().with_grace(std::time::Duration::ZERO)
}

/// A probe with fixed answers, for EPERM and namespace scenarios.
struct FixedProbe {
    signal: SignalProbe,
    starttime: Option<u64>,
    ns: NsIdentity,
}

impl LivenessProbe for FixedProbe {
    fn signal_zero(&self, _pid: u32) -> SignalProbe {
        self.signal
    }
    fn starttime(&self, _pid: u32) -> Option<u64> {
        self.starttime
    }
    fn namespace(&self) -> NsIdentity {
        self.ns.clone()
    }
}

fn session(root: &Path, name: &str, owner: Option<&str>) -> std::path::PathBuf {
    let dir = root.join(name);
    write(&dir.join("matmul/worktree/kernel.py"), "x = 1\n");
    if let Some(o) = owner {
        std::fs::write(dir.join(".owner"), o).unwrap();
    }
    dir
}

#[test]
fn local_mount_table_keeps_worktree_beside_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = output_dir(tmp.path(), "s", "a");
    let loc = plan_location(
        &LocationRequest::new(&out),
        &env(tmp.path()),
        &MountTable::parse("rootfs / ext4 rw 0 0\n"),
        &ScratchPolicy::default(),
    )
    .unwrap();
    assert_eq!(loc.worktree, out.join("worktree"));
    assert!(!loc.relocated);
    let report = claim_location(
        &loc,
        &Claim::new(OwnerMarker::current()).with_sweep(no_grace()),
        &SystemProbe::new(),
    )
    .unwrap();
    assert_eq!(report, Default::default());
    assert!(!tmp.path().join("local").exists());
}

#[test]
fn unreadable_mount_table_is_local() {
    let tmp = tempfile::tempdir().unwrap();
    let out = output_dir(tmp.path(), "s", "a");
    let table = MountTable::read(&tmp.path().join("no-such-mounts"));
    let loc = plan_location(
        &LocationRequest::new(&out),
        &env(tmp.path()),
        &table,
        &ScratchPolicy::default(),
    )
    .unwrap();
    assert_eq!(loc.worktree, out.join("worktree"));
}

#[test]
fn two_sessions_on_one_kernel_get_two_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = |s: &str| {
        plan_location(
            &LocationRequest::new(output_dir(tmp.path(), s, "matmul")),
            &env(tmp.path()),
            &mounts(tmp.path()),
            &ScratchPolicy::default(),
        )
        .unwrap()
    };
    assert_eq!(
        plan("session-a").worktree,
        tmp.path().join("local/session-a/matmul/worktree")
    );
    assert_eq!(
        plan("session-b").worktree,
        tmp.path().join("local/session-b/matmul/worktree")
    );
    assert!(plan("session-a").relocated);
}

#[test]
fn a_live_session_survives_a_later_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let live = session(&local, "session-live", None);
    OwnerMarker::current().write_to(&live).unwrap();
    let loc = plan_location(
        &LocationRequest::new(output_dir(tmp.path(), "session-new", "softmax")),
        &env(tmp.path()),
        &mounts(tmp.path()),
        &ScratchPolicy::default(),
    )
    .unwrap();
    let report = claim_location(
        &loc,
        &Claim::new(OwnerMarker::current()).with_sweep(no_grace()),
        &SystemProbe::new(),
    )
    .unwrap();
    assert!(live.join("matmul/worktree/kernel.py").exists());
    assert_eq!(
        report.kept_alive,
        vec![local.canonicalize().unwrap().join("session-live")]
    );
    let marker = OwnerMarker::read_from(&local.join("session-new"))
        .unwrap()
        .unwrap();
    assert_eq!(marker, OwnerMarker::current());
    assert!(local.join("session-new/.owner.ns").exists());
}

#[test]
fn unowned_kept_dead_removed_stranger_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    session(&local, "session-nomarker", None);
    session(&local, "session-dead", Some("4194303:0\n"));
    session(&local, "session-garbage", Some("not a marker\n"));
    write(&local.join("not-ours/notes.txt"), "mine\n");
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    let root = local.canonicalize().unwrap();
    assert_eq!(report.removed, vec![root.join("session-dead")]);
    assert_eq!(
        report.kept_unowned,
        vec![root.join("session-garbage"), root.join("session-nomarker")]
    );
    assert_eq!(report.kept_stranger, vec![root.join("not-ours")]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(!local.join("session-dead").exists());
    assert!(
        local
            .join("session-nomarker/matmul/worktree/kernel.py")
            .exists()
    );
    assert_eq!(
        std::fs::read_to_string(local.join("not-ours/notes.txt")).unwrap(),
        "mine\n"
    );
    let trash: Vec<_> = std::fs::read_dir(&local)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".trash-"))
        .collect();
    assert!(trash.is_empty());
}

#[test]
fn eperm_means_alive() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    session(&local, "session-other-user", Some("4242:0\n"));
    let probe = FixedProbe {
        signal: SignalProbe::PermissionDenied,
        starttime: None,
        ns: NsIdentity::default(),
    };
    let report = sweep(&local, &no_grace(), &probe).unwrap();
    assert_eq!(report.kept_alive.len(), 1);
    assert!(local.join("session-other-user/matmul/worktree").exists());
}

#[test]
fn a_reused_pid_with_another_starttime_is_dead_and_equal_starttime_alive() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    session(&local, "reused", Some("4242:100\n"));
    let alive = FixedProbe {
        signal: SignalProbe::Exists,
        starttime: Some(100),
        ns: NsIdentity::default(),
    };
    assert_eq!(
        sweep(&local, &no_grace(), &alive).unwrap().kept_alive.len(),
        1
    );
    let unreadable = FixedProbe {
        signal: SignalProbe::Exists,
        starttime: None,
        ns: NsIdentity::default(),
    };
    assert_eq!(
        sweep(&local, &no_grace(), &unreadable)
            .unwrap()
            .kept_alive
            .len(),
        1
    );
    let reused = FixedProbe {
        signal: SignalProbe::Exists,
        starttime: Some(999),
        ns: NsIdentity::default(),
    };
    assert_eq!(
        sweep(&local, &no_grace(), &reused).unwrap().removed.len(),
        1
    );
    assert!(!local.join("reused").exists());
}

#[test]
fn symlinks_under_the_root_are_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let outside = tmp.path().join("outside");
    write(&outside.join("precious.txt"), "keep me\n");
    std::fs::create_dir_all(&local).unwrap();
    std::os::unix::fs::symlink(&outside, local.join("evil")).unwrap();
    let dead = session(&local, "session-dead", Some("4194303:0\n"));
    std::os::unix::fs::symlink(&outside, dead.join("matmul/worktree/link-out")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("precious.txt"),
        dead.join("matmul/worktree/file-out"),
    )
    .unwrap();
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    assert_eq!(report.removed.len(), 1);
    assert_eq!(
        report.kept_stranger,
        vec![local.canonicalize().unwrap().join("evil")]
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("precious.txt")).unwrap(),
        "keep me\n"
    );
    assert!(
        std::fs::symlink_metadata(local.join("evil"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!dead.exists());
}

#[test]
fn an_interrupted_deletion_is_resumed_by_the_next_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    // What a sweep killed mid-deletion leaves: a renamed entry, partly emptied, marker last.
    let trash = local.join(".trash-session-x-999-123");
    write(&trash.join("matmul/worktree/left.py"), "x\n");
    std::fs::write(trash.join(".owner"), "4194303:0\n").unwrap();
    // A trash-looking directory without our marker and not empty is not ours to finish.
    write(&local.join(".trash-foreign/data.txt"), "x\n");
    // An empty trash entry (only the directory was left) is finished too.
    std::fs::create_dir_all(local.join(".trash-empty-1-2")).unwrap();
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    let root = local.canonicalize().unwrap();
    assert_eq!(
        report.resumed,
        vec![
            root.join(".trash-empty-1-2"),
            root.join(".trash-session-x-999-123")
        ]
    );
    assert_eq!(report.kept_stranger, vec![root.join(".trash-foreign")]);
    assert!(!trash.exists());
}

#[test]
fn the_spared_session_is_kept_even_when_its_marker_is_dead() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    session(&local, "mine", Some("4194303:0\n"));
    let report = sweep(&local, &no_grace().with_spare("mine"), &SystemProbe::new()).unwrap();
    assert_eq!(report.spared.len(), 1);
    assert!(report.removed.is_empty());
    assert!(local.join("mine/matmul/worktree").exists());
}

#[test]
fn concurrent_marker_rewrites_never_expose_a_partial_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    OwnerMarker::new(1, 1).write_to(&dir).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..10_000u64 {
                OwnerMarker::new(1 + (i % 4_000_000) as u32, i * 1_000_003)
                    .write_to(&dir)
                    .unwrap();
            }
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut reads = 0u64;
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let m = OwnerMarker::read_from(&dir).unwrap();
            assert!(m.is_some(), "a read saw a partial or missing marker");
            reads += 1;
        }
        assert!(reads > 0);
    });
}

#[test]
fn another_boot_is_dead_another_pid_namespace_is_unknown() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let me = OwnerMarker::current().to_string();
    let rebooted = session(&local, "rebooted", Some(&me));
    std::fs::write(
        rebooted.join(".owner.ns"),
        "boot_id=another-boot\npidns=1\n",
    )
    .unwrap();
    let here = NsIdentity::current();
    let contained = session(&local, "contained", Some(&me));
    std::fs::write(
        contained.join(".owner.ns"),
        format!(
            "boot_id={}\npidns={}\n",
            here.boot_id.clone().unwrap(),
            here.pidns.unwrap() + 1
        ),
    )
    .unwrap();
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    let root = local.canonicalize().unwrap();
    assert_eq!(report.removed, vec![root.join("rebooted")]);
    assert_eq!(report.kept_unknown, vec![root.join("contained")]);
}

#[test]
fn files_and_a_missing_root_are_harmless() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        sweep(&tmp.path().join("absent"), &no_grace(), &SystemProbe::new()).unwrap(),
        Default::default()
    );
    let local = tmp.path().join("local");
    write(&local.join("stray-file"), "x");
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    assert_eq!(report.kept_stranger.len(), 1);
    assert!(local.join("stray-file").exists());
}

#[test]
fn a_local_root_on_a_network_filesystem_is_used_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let root_on_nfs = tmp.path().join("sessions/cache");
    let env = kernlens_scratch::location::ScratchEnv::new(
        Some(root_on_nfs.display().to_string()),
        None,
        None,
    );
    let loc = plan_location(
        &LocationRequest::new(output_dir(tmp.path(), "s", "a")),
        &env,
        &mounts(tmp.path()),
        &ScratchPolicy::default(),
    )
    .unwrap();
    assert_eq!(loc.worktree, root_on_nfs.join("s/a/worktree"));
    assert!(
        loc.warnings
            .iter()
            .any(|w| w.starts_with("scratch_root_on_network_fs")),
        "{:?}",
        loc.warnings
    );
}

#[test]
fn network_output_without_any_root_is_no_scratch_root() {
    let tmp = tempfile::tempdir().unwrap();
    let err = plan_location(
        &LocationRequest::new(output_dir(tmp.path(), "s", "a")),
        &kernlens_scratch::location::ScratchEnv::default(),
        &mounts(tmp.path()),
        &ScratchPolicy::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, kernlens_scratch::Error::NoScratchRoot { .. }),
        "{err}"
    );
}

#[test]
fn a_marker_planted_as_a_symlink_is_not_ours_and_the_session_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let elsewhere = tmp.path().join("elsewhere-owner");
    std::fs::write(&elsewhere, "4194303:0\n").unwrap();
    let planted = session(&local, "planted", None);
    std::os::unix::fs::symlink(&elsewhere, planted.join(".owner")).unwrap();
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    assert_eq!(report.kept_unknown.len(), 1, "{report:?}");
    assert!(planted.join("matmul/worktree/kernel.py").exists());
}

#[test]
fn a_dead_session_younger_than_the_grace_period_is_kept_as_recent_and_removed_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    session(&local, "dead", Some("4194303:0\n"));
    let hour = std::time::Duration::from_secs(3600);
    let now = std::time::SystemTime::now();
    let options = SweepOptions::default().with_grace(hour).with_now(now);
    let report = sweep(&local, &options, &SystemProbe::new()).unwrap();
    let root = local.canonicalize().unwrap();
    assert_eq!(report.kept_recent, vec![root.join("dead")]);
    assert!(report.removed.is_empty());
    let later = options.with_now(now + 2 * hour);
    let report = sweep(&local, &later, &SystemProbe::new()).unwrap();
    assert_eq!(report.removed, vec![root.join("dead")]);
}

#[test]
fn a_release_record_without_an_owner_marker_makes_nothing_ours() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let dir = session(&local, "stray", None);
    std::fs::write(dir.join(".released"), "released_unix=0\n").unwrap();
    let report = sweep(&local, &no_grace(), &SystemProbe::new()).unwrap();
    assert_eq!(report.kept_unowned.len(), 1);
    assert!(dir.join("matmul/worktree/kernel.py").exists());
}

#[test]
fn a_local_root_that_is_a_file_is_an_error_not_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "x").unwrap();
    assert!(sweep(&file, &no_grace(), &SystemProbe::new()).is_err());
}
