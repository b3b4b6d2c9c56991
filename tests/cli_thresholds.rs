//! Threshold validation at the edge (issue 14 item 5; docs/design/cli.md "Threshold
//! validation"), through the built binary, for every command that takes the gate
//! thresholds (`gate` and `triage`): a flag outside 0..=100 or not a number is a usage
//! error (exit 2); an unusable environment value gives one warning line naming the
//! variable and the default used, and the run goes on with that default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const IDLE_ENV: &str = "KERNLENS_IDLE_THRESHOLD_PCT";
const MIN_COMPUTE_ENV: &str = "KERNLENS_MIN_COMPUTE_PCT";

/// The bundled eager trace: idle 74.22%, so an 80% threshold passes it.
fn eager() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces/eager.json.gz")
        .display()
        .to_string()
}

/// `kernlens <command> eager --json ARGS...` with only the given threshold variables set.
fn run(command: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let trace = eager();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernlens"));
    cmd.arg(command).arg(&trace).arg("--json");
    if command == "triage" {
        // A small fixed source tree: no package discovery walks the host.
        cmd.args(["--root", "fixtures/src", "--no-discover"]);
    }
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove(IDLE_ENV)
        .env_remove(MIN_COMPUTE_ENV);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

/// The gate block of either command's JSON document.
fn gate_block(command: &str, output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    if command == "triage" {
        doc["gate"].clone()
    } else {
        doc
    }
}

#[test]
fn threshold_flags_outside_0_to_100_or_not_numbers_are_usage_errors() {
    for command in ["gate", "triage"] {
        for flag in ["--idle-threshold", "--min-compute"] {
            for value in ["150", "100.5", "-3", "abc", "30%", "inf", "NaN", ""] {
                let output = run(command, &[flag, value], &[]);
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert_eq!(
                    output.status.code(),
                    Some(2),
                    "{command} {flag} {value:?}: {stderr}"
                );
                assert!(output.stdout.is_empty(), "{command} {flag} {value:?}");
                assert!(
                    stderr.contains("a percentage in 0..=100"),
                    "{command} {flag} {value:?}: {stderr}"
                );
            }
        }
    }
}

#[test]
fn threshold_flags_at_the_bounds_are_accepted() {
    for command in ["gate", "triage"] {
        let output = run(
            command,
            &["--idle-threshold", "100", "--min-compute", "0"],
            &[],
        );
        let gate = gate_block(command, &output);
        assert_eq!(gate["threshold_pct"], 100.0, "{command}");
        assert_eq!(gate["min_compute_pct"], 0.0, "{command}");
        assert!(output.stderr.is_empty(), "{command}");
    }
}

#[test]
fn unusable_env_values_warn_once_each_and_fall_back_to_the_default() {
    let cases = [
        (IDLE_ENV, "150", "150 is outside 0..=100", "80"),
        (IDLE_ENV, "abc", "not a number", "80"),
        (IDLE_ENV, "30%", "not a number", "80"),
        (MIN_COMPUTE_ENV, "-1", "-1 is outside 0..=100", "10"),
        (MIN_COMPUTE_ENV, "lots", "not a number", "10"),
    ];
    for command in ["gate", "triage"] {
        for (var, value, why, default) in cases {
            let output = run(command, &[], &[(var, value)]);
            let gate = gate_block(command, &output);
            assert_eq!(gate["threshold_pct"], 80.0, "{command} {var}={value}");
            assert_eq!(gate["min_compute_pct"], 10.0, "{command} {var}={value}");
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(
                stderr,
                format!(
                    "kernlens: warning: {var}=\"{value}\" ignored ({why}); using the default {default}\n"
                ),
                "{command}"
            );
        }
    }
}

#[test]
fn valid_env_values_apply_without_a_warning() {
    for command in ["gate", "triage"] {
        let output = run(
            command,
            &[],
            &[(IDLE_ENV, " 70 "), (MIN_COMPUTE_ENV, "100")],
        );
        let gate = gate_block(command, &output);
        assert_eq!(gate["threshold_pct"], 70.0, "{command}");
        assert_eq!(gate["min_compute_pct"], 100.0, "{command}");
        assert!(output.stderr.is_empty(), "{command}");
    }
}

#[test]
fn an_env_value_its_flag_overrides_is_not_consulted() {
    for command in ["gate", "triage"] {
        let output = run(
            command,
            &["--idle-threshold", "70"],
            &[(IDLE_ENV, "150"), (MIN_COMPUTE_ENV, "abc")],
        );
        let gate = gate_block(command, &output);
        assert_eq!(gate["threshold_pct"], 70.0, "{command}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        // Only the variable that still decides something is reported.
        assert_eq!(stderr.lines().count(), 1, "{command}: {stderr}");
        assert!(stderr.contains(MIN_COMPUTE_ENV), "{command}: {stderr}");
    }
}

#[test]
fn report_reads_the_env_values_through_the_same_check() {
    // `report` takes no threshold flags, but its gate verdict reads the same variables.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    let output = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(["report", &eager(), "-o", page.to_str().unwrap()])
        .env(IDLE_ENV, "150")
        .env(MIN_COMPUTE_ENV, "30%")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        format!(
            "kernlens: warning: {IDLE_ENV}=\"150\" ignored (150 is outside 0..=100); using the default 80\n\
             kernlens: warning: {MIN_COMPUTE_ENV}=\"30%\" ignored (not a number); using the default 10\n"
        )
    );
    // The page's verdict is the default thresholds' (80% idle passes the eager trace at 74.22%).
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("pass: idle 74.22% (threshold 80.00%), compute 25.53% (minimum 10.00%)"),
        "the page's gate line uses the defaults"
    );
}
