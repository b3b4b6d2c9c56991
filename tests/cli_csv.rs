//! `--csv` (issue 15 item 4): each table parses with a CSV reader (RFC 4180: CRLF, quoted
//! fields for the commas of C++ names) and its rows and totals match the JSON document of
//! the same run. Runs the built binary on the bundled fixtures/traces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
#[path = "support/cli.rs"]
mod cli;
use cli::{fixture, json_of, run, stdout_of};
use std::path::Path;

/// The CSV's rows as header → value maps, read with the `csv` crate.
fn csv_of(args: &[&str]) -> Vec<HashMap<String, String>> {
    let text = stdout_of(args);
    assert!(text.ends_with("\r\n"), "RFC 4180 line ends: {text:?}");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            assert_eq!(r.len(), header.len());
            header
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

fn f(row: &HashMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key}: {:?}", row[key]))
}

/// Equal up to float text round trips (serde_json's parser is not always correctly rounded).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn summary_kernels_csv_rows_and_total_match_the_json() {
    let trace = fixture("train.json.gz");
    let t = trace.to_str().unwrap();
    let json = json_of(&["summary", t, "--top", "0"]);
    let rows = csv_of(&["summary", t, "--top", "0", "--csv", "kernels"]);
    let kernels = json["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), kernels.len());
    for (row, k) in rows.iter().zip(kernels) {
        // Full names, commas and all, survive the quoting.
        assert_eq!(row["name"], k["name"].as_str().unwrap());
        assert!(
            close(f(row, "total_us"), k["total_us"].as_f64().unwrap()),
            "total_us"
        );
        assert!(
            close(f(row, "min_us"), k["min_us"].as_f64().unwrap()),
            "min_us"
        );
        assert!(
            close(f(row, "max_us"), k["max_us"].as_f64().unwrap()),
            "max_us"
        );
        assert!(
            close(f(row, "share"), k["share"].as_f64().unwrap()),
            "share"
        );
        assert_eq!(row["calls"], k["calls"].to_string());
        assert_eq!(row["op_name"], k["op_name"].as_str().unwrap());
    }
    assert!(rows.iter().any(|r| r["name"].contains(',')));
    let total: f64 = rows.iter().map(|r| f(r, "total_us")).sum();
    let kernel_sum = json["timeline"]["kernel_sum_us"].as_f64().unwrap();
    assert!(close(total, kernel_sum), "{total} vs {kernel_sum}");
    let share: f64 = rows.iter().map(|r| f(r, "share")).sum();
    assert!(close(share, 1.0), "{share}");
}

#[test]
fn summary_ops_and_categories_csv_add_up_to_the_json_kernel_time() {
    let trace = fixture("eager.json.gz");
    let t = trace.to_str().unwrap();
    let json = json_of(&["summary", t, "--top", "0"]);
    let kernel_sum = json["timeline"]["kernel_sum_us"].as_f64().unwrap();

    let ops = csv_of(&["summary", t, "--top", "0", "--csv", "ops"]);
    assert_eq!(ops.len(), json["ops"].as_array().unwrap().len());
    let ops_total: f64 = ops.iter().map(|r| f(r, "total_us")).sum();
    assert!(close(ops_total, kernel_sum), "{ops_total} vs {kernel_sum}");

    // The categories cover every kernel even when --top shows one.
    let categories = csv_of(&["summary", t, "--top", "1", "--csv", "categories"]);
    let cat_total: f64 = categories.iter().map(|r| f(r, "total_us")).sum();
    assert!(close(cat_total, kernel_sum), "{cat_total} vs {kernel_sum}");
    let calls: u64 = categories
        .iter()
        .map(|r| r["calls"].parse::<u64>().unwrap())
        .sum();
    assert_eq!(calls, json["attribution"]["kernel_count"].as_u64().unwrap());
    assert_eq!(categories[0]["category"], "gemm");
}

#[test]
fn summary_ranks_csv_matches_the_ranks_json_and_needs_all_ranks() {
    let dir = tempfile::tempdir().unwrap();
    for (i, name) in ["eager.json.gz", "train.json.gz"].iter().enumerate() {
        std::fs::copy(fixture(name), dir.path().join(format!("rank{i}.json.gz"))).unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let json = json_of(&["summary", d, "--all-ranks"]);
    let rows = csv_of(&["summary", d, "--all-ranks", "--csv", "ranks"]);
    let ranks = json["ranks"].as_array().unwrap();
    assert_eq!(rows.len(), ranks.len());
    for (row, r) in rows.iter().zip(ranks) {
        assert_eq!(row["status"], "ok");
        assert!(close(
            f(row, "busy_pct"),
            r["timeline"]["busy_pct"].as_f64().unwrap()
        ));
    }
    // A table that is not per rank, or the ranks table of one file, is a usage error.
    let (code, _, stderr) = run(&["summary", d, "--all-ranks", "--csv", "kernels"]);
    assert_eq!(code, Some(2), "{stderr}");
    let eager = fixture("eager.json.gz");
    let (code, _, stderr) = run(&["summary", eager.to_str().unwrap(), "--csv", "ranks"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, _) = run(&[
        "summary",
        eager.to_str().unwrap(),
        "--csv",
        "kernels",
        "--json",
    ]);
    assert_eq!(code, Some(2));
}

#[test]
fn triage_csv_lists_the_task_groups_of_the_json() {
    let trace = fixture("eager.json.gz");
    let t = trace.to_str().unwrap();
    let args = ["triage", t, "--no-discover", "--no-gate", "--top", "0"];
    let json = json_of(&args);
    let rows = csv_of(&[&args[..], &["--csv"]].concat());
    let groups = json["task_groups"].as_array().unwrap();
    assert_eq!(rows.len(), groups.len());
    for (row, g) in rows.iter().zip(groups) {
        assert_eq!(row["id"], g["id"].as_str().unwrap());
        assert_eq!(row["operation"], g["operation"].as_str().unwrap());
        assert!(
            close(f(row, "total_us"), g["total_us"].as_f64().unwrap()),
            "total_us"
        );
        assert_eq!(row["kind"], g["source"]["kind"].as_str().unwrap());
        assert_eq!(row["reason"], g["source"]["reason"].as_str().unwrap_or(""));
    }
    let share: f64 = rows.iter().map(|r| f(r, "share")).sum();
    let json_share: f64 = groups.iter().map(|g| g["share"].as_f64().unwrap()).sum();
    assert!(close(share, json_share));
}

#[test]
fn locate_and_ident_csv_have_one_row_per_name_as_the_json() {
    let names = [
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "cudaLaunchKernel",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/src");
    let r = root.to_str().unwrap();
    let args = [&["locate"][..], &names, &["--root", r, "--no-discover"]].concat();
    let json = json_of(&args);
    let rows = csv_of(&[&args[..], &["--csv"]].concat());
    let results = json["results"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, res) in rows.iter().zip(results) {
        assert_eq!(row["name"], res["name"].as_str().unwrap());
        assert_eq!(row["found"], res["found"].to_string());
        assert_eq!(row["kind"], res["kind"].as_str().unwrap());
    }
    // The vendor kernel's reason is the word triage uses.
    assert_eq!(rows[0]["reason"], "vendor_binary");

    let name = "void at::native::foo<1, 2>(int, float)";
    let json = json_of(&["ident", name]);
    let rows = csv_of(&["ident", name, "--csv"]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["input"], name);
    assert_eq!(
        rows[0]["native_key"],
        json["results"][0]["native_key"].as_str().unwrap()
    );
}
