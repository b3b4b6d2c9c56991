//! `kernlens ident`, run as the real binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn kernlens(args: &[&str], stdin: &[u8]) -> Result<Output, std::io::Error> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin)?;
    }
    child.wait_with_output()
}

fn json(output: &Output) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_slice(&output.stdout)
}

#[test]
fn json_lists_keys_demangling_category_and_vendor_per_name() -> TestResult {
    let out = kernlens(
        &[
            "ident",
            "--json",
            "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd",
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        ],
        b"",
    )?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out)?;
    assert_eq!(doc["schema"], "kernlens.ident/1");
    let results = doc["results"].as_array().ok_or("results is not an array")?;
    assert_eq!(results.len(), 2);
    let first = &results[0];
    assert_eq!(
        first["input"],
        "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd"
    );
    assert_eq!(first["native_key"], "aiter::add_rmsnorm_quant_kernel");
    assert_eq!(
        first["python_key"],
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv"
    );
    assert_eq!(
        first["demangled"],
        "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t>()"
    );
    assert_eq!(first["category"], "norm");
    assert_eq!(first["vendor"], serde_json::Value::Null);
    let second = &results[1];
    assert_eq!(second["demangled"], serde_json::Value::Null);
    assert_eq!(second["category"], "gemm");
    assert_eq!(second["vendor"], "cublas");
    let keys: Vec<&str> = first
        .as_object()
        .ok_or("result is not an object")?
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "input",
            "native_key",
            "python_key",
            "demangled",
            "category",
            "vendor"
        ]
    );
    Ok(())
}

#[test]
fn dash_reads_one_name_per_line_from_stdin() -> TestResult {
    let out = kernlens(
        &["ident", "--json", "-"],
        b"triton_poi_fused_gelu_view_2\r\n\n  \ncudaGraphLaunch->void foo_kernel<int>(int)\nbad\xffbyte\n",
    )?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out)?;
    let keys: Vec<&str> = doc["results"]
        .as_array()
        .ok_or("results is not an array")?
        .iter()
        .filter_map(|r| r["native_key"].as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "triton_poi_fused_gelu_view_2",
            "foo_kernel",
            "bad\u{fffd}byte"
        ]
    );
    Ok(())
}

#[test]
fn table_is_the_default_output() -> TestResult {
    let out = kernlens(
        &["ident", "cudaLaunchKernel->unsigned foo", "Memset (Device)"],
        b"",
    )?;
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout)?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("NATIVE KEY") && lines[0].ends_with("INPUT"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("foo ") && lines[1].ends_with("cudaLaunchKernel->unsigned foo"),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("memcpy"), "{}", lines[2]);
    Ok(())
}

#[test]
fn no_names_is_a_usage_error() -> TestResult {
    let out = kernlens(&["ident"], b"")?;
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    Ok(())
}
