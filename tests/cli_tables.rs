//! The human tables (issue 15 item 3), checked against the JSON of the same run: per-call
//! avg/min/max and % of wall in ms with three decimals, the category breakdown, distinct short
//! names by default and full names with `--wide`, the op column saying when a kernel's time
//! came from several ops, and one share format across summary, triage and gate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::Path;

#[path = "support/cli.rs"]
mod cli;
use cli::{fixture, stdout_of};

/// The rows of the table whose header line starts with `first` (cells split on 2+ spaces).
fn table_rows(text: &str, first: &str) -> Vec<Vec<String>> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(first));
    lines.next().expect("the table's header");
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            l.trim()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

#[test]
fn kernel_rows_show_per_call_avg_min_max_and_wall_share_as_the_json_has_them() {
    let trace = fixture("train.json.gz");
    let trace = trace.to_str().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["summary", trace, "--top", "5", "--json"])).unwrap();
    let text = stdout_of(&["summary", trace, "--top", "5"]);
    let rows = table_rows(&text, "SHARE   WALL  CALLS  TOTAL_MS  AVG_MS");
    let kernels = json["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), kernels.len());
    let wall_us = json["timeline"]["total_us"].as_f64().unwrap();
    for (row, k) in rows.iter().zip(kernels) {
        let total = k["total_us"].as_f64().unwrap();
        let calls = k["calls"].as_u64().unwrap();
        assert_eq!(
            row[0],
            format!("{:.2}%", k["share"].as_f64().unwrap() * 100.0)
        );
        assert_eq!(row[1], format!("{:.2}%", total / wall_us * 100.0));
        assert_eq!(row[2], calls.to_string());
        assert_eq!(row[3], ms(total));
        assert_eq!(row[4], ms(total / calls as f64));
        assert_eq!(row[5], ms(k["min_us"].as_f64().unwrap()));
        assert_eq!(row[6], ms(k["max_us"].as_f64().unwrap()));
        assert!(k["min_us"].as_f64() <= k["max_us"].as_f64());
    }
}

#[test]
fn short_names_are_distinct_and_wide_shows_the_full_names() {
    let trace = fixture("train.json.gz");
    let trace = trace.to_str().unwrap();
    let header = "SHARE   WALL  CALLS  TOTAL_MS  AVG_MS  MIN_MS";
    let short = table_rows(&stdout_of(&["summary", trace, "--top", "0"]), header);
    let names: Vec<&str> = short.iter().map(|r| r.last().unwrap().as_str()).collect();
    assert_eq!(names.len(), 31);
    assert_eq!(
        names.iter().collect::<HashSet<_>>().len(),
        names.len(),
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.chars().count() <= 60), "{names:?}");
    assert!(names.contains(&"at::native::multi_tensor_apply_kernel #1"));

    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["summary", trace, "--top", "0", "--json"])).unwrap();
    let wide = stdout_of(&["summary", trace, "--top", "0", "--wide"]);
    for k in json["kernels"].as_array().unwrap() {
        let name = k["name"].as_str().unwrap();
        assert!(
            wide.lines().any(|l| l.ends_with(name)),
            "{name} not whole in --wide"
        );
    }
}

#[test]
fn the_op_column_says_when_a_kernel_ran_under_several_ops() {
    let trace = fixture("train.json.gz");
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "summary",
        trace.to_str().unwrap(),
        "--top",
        "0",
        "--json",
    ]))
    .unwrap();
    let several: Vec<&serde_json::Value> = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["op_count"].as_u64().unwrap() > 1)
        .collect();
    assert_eq!(several.len(), 1);
    assert_eq!(several[0]["op_name"], "aten::add");
    let text = stdout_of(&["summary", trace.to_str().unwrap(), "--top", "0"]);
    assert!(text.contains("aten::add (+1 op)"), "{text}");
}

#[test]
fn the_category_breakdown_covers_all_kernel_time_whatever_top_shows() {
    let trace = fixture("eager.json.gz");
    let text = stdout_of(&["summary", trace.to_str().unwrap(), "--top", "1"]);
    let rows = table_rows(&text, "SHARE    WALL  CALLS  KERNELS");
    let categories: Vec<&str> = rows.iter().map(|r| r[5].as_str()).collect();
    assert_eq!(categories, ["gemm", "elementwise", "norm", "attention"]);
    let calls: u64 = rows.iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!(calls, 352);
    // The time breakdown sits under it, in ms.
    assert!(text.contains("idle"), "{text}");
    assert!(text.contains("exposed communication"), "{text}");
}

#[test]
fn summary_triage_and_gate_share_one_unit_and_share_format() {
    let trace = fixture("eager.json.gz");
    let trace = trace.to_str().unwrap();
    let summary = stdout_of(&["summary", trace]);
    let triage = stdout_of(&["triage", trace, "--no-discover", "--no-gate"]);
    let gate = stdout_of(&["gate", trace]);
    assert!(summary.contains("total 28.987 ms"), "{summary}");
    assert!(triage.contains("timeline  28.987 ms"), "{triage}");
    assert!(summary.contains("idle 74.22%"), "{summary}");
    assert!(triage.contains("idle 74.22%"), "{triage}");
    assert!(gate.contains("idle       74.22%"), "{gate}");
    // The hottest group's share reads as the summary's hottest kernel share.
    assert!(
        summary.contains("62.31%") && triage.contains("62.31%"),
        "{triage}"
    );
    assert!(!gate.contains(") ("), "{gate}");
}

#[test]
fn a_vendor_kernel_reads_vendor_binary_in_locate_and_triage_alike() {
    let name = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT";
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    let src = src.to_str().unwrap();
    let locate = stdout_of(&["locate", name, "--root", src, "--no-discover"]);
    let row = locate.lines().find(|l| l.ends_with(name)).unwrap();
    assert!(row.contains("not found (vendor_binary)"), "{row}");
    let trace = fixture("eager.json.gz");
    let triage = stdout_of(&[
        "triage",
        trace.to_str().unwrap(),
        "--root",
        src,
        "--no-discover",
    ]);
    let row = triage.lines().find(|l| l.ends_with(name)).unwrap();
    assert!(row.contains("not found (vendor_binary)"), "{row}");
}
