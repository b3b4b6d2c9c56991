//! Identity keys K1–K7 (ident.md "Acceptance scenarios: Identity keys") and source references F1–F4 (ident.md "Acceptance scenarios: Source references").

use std::collections::BTreeMap;

use kernlens_ident::{
    KeyTrack, OperatorIdentity, PathContext, RefRejection, canonical_source_path, is_path_shaped,
    parse_source_ref, track_for,
};
use proptest::prelude::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn ctx() -> PathContext {
    PathContext::new().with_base_dir("/")
}

#[test]
fn native_identity_key_is_sorted_compact_json() {
    let id = OperatorIdentity::build(
        KeyTrack::Native,
        "/repo/operator.cu",
        "aiter::fused_operator<float>",
        "fused_operator",
        &ctx(),
    );
    assert_eq!(
        id.key(),
        r#"{"function":"fused_operator","operation":"aiter::fused_operator","source_kind":"native","source_path":"/repo/operator.cu","version":1}"#
    );
}

#[test]
fn py_identity_uses_the_python_key_and_the_raw_function() {
    let id = OperatorIdentity::build(
        KeyTrack::Py,
        "/repo/operator.py",
        "hipModuleLaunchKernel->fused_operator<float> (Synthetic Op)",
        "forward",
        &ctx(),
    );
    assert_eq!(
        id.key(),
        r#"{"function":"forward","operation":"fused_operator","source_kind":"py","source_path":"/repo/operator.py","version":1}"#
    );
}

#[test]
fn spellings_of_one_kernel_share_one_identity_key() {
    let keys: Vec<String> = [
        "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0EEEvPKT_",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi512ELi16ELb1ELb0EEEvPKT_",
    ]
    .iter()
    .map(|op| {
        OperatorIdentity::build(
            KeyTrack::Native,
            "/repo/csrc/rmsnorm_quant.cu",
            op,
            "add_rmsnorm_quant_kernel",
            &ctx(),
        )
        .key()
    })
    .collect();
    assert_eq!(keys[0], keys[1]);
    assert_eq!(keys[1], keys[2]);
    assert!(keys[0].contains(r#""operation":"aiter::add_rmsnorm_quant_kernel""#));
}

#[test]
fn empty_function_is_left_out() {
    let id = OperatorIdentity::build(KeyTrack::Native, "/repo/k.cu", "k", "  ", &ctx());
    assert_eq!(id.function, None);
    assert!(id.key().starts_with(r#"{"operation":"#), "{}", id.key());
}

#[test]
fn non_ascii_is_raw_and_quotes_are_escaped() {
    let id = OperatorIdentity::build(
        KeyTrack::Py,
        "/repo/caf\u{e9}/k.py",
        "say \"hi\"",
        "f",
        &ctx(),
    );
    let key = id.key();
    assert!(key.contains("/repo/caf\u{e9}/k.py"), "{key}");
    assert!(key.contains(r#""operation":"say \"hi\"""#), "{key}");
}

#[test]
fn symlinked_directories_canonicalise_to_one_path() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("real"))?;
    std::fs::write(dir.path().join("real/k.cu"), "__global__ void k() {}\n")?;
    std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link"))?;
    let paths = PathContext::new().with_base_dir(dir.path());
    let via_link = canonical_source_path("link/k.cu", &paths);
    let direct = canonical_source_path("real/k.cu", &paths);
    assert_eq!(via_link, direct);
    // A file that does not exist yet still resolves through the link.
    assert_eq!(
        canonical_source_path("link/sub/../new.cu", &paths),
        canonical_source_path("real/new.cu", &paths)
    );
    let a = OperatorIdentity::build(KeyTrack::Native, "link/k.cu", "k", "", &paths);
    let b = OperatorIdentity::build(KeyTrack::Native, "real/k.cu", "k", "", &paths);
    assert_eq!(a.key(), b.key());
    Ok(())
}

#[test]
fn canonical_path_expands_home_only_when_given() {
    let with_home = PathContext::new()
        .with_base_dir("/base")
        .with_home_dir("/home/me");
    assert_eq!(
        canonical_source_path("~/x/k.cu", &with_home),
        "/home/me/x/k.cu"
    );
    assert_eq!(canonical_source_path("~/x/k.cu", &ctx()), "/~/x/k.cu");
    assert_eq!(canonical_source_path("   ", &ctx()), "");
    assert_eq!(
        canonical_source_path(
            "a/./b/../c.py",
            &PathContext::new().with_base_dir("/nonexistent-kl")
        ),
        "/nonexistent-kl/a/c.py"
    );
}

#[test]
fn track_follows_the_extension_then_the_name_shape() {
    for path in [
        "kern.cu",
        "a/b/kern.cuh",
        "x.hip",
        "y.cpp",
        "Z.CU",
        "k.cc",
        "k.cxx",
        "k.c",
        "k.hh",
    ] {
        assert_eq!(track_for(Some(path), "k"), KeyTrack::Native, "{path}");
    }
    for path in ["model.py", "wrapper.pyi", "notes.txt"] {
        assert_eq!(track_for(Some(path), "aiter::x"), KeyTrack::Py, "{path}");
    }
    assert_eq!(track_for(None, "aiter::x"), KeyTrack::Native);
    assert_eq!(track_for(None, "_Z3fooPf"), KeyTrack::Native);
    assert_eq!(track_for(None, "_fused_scale_bias_kernel"), KeyTrack::Py);
    assert_eq!(track_for(Some("n/a"), "aiter::x"), KeyTrack::Native);
    assert_eq!(track_for(Some(""), "plain"), KeyTrack::Py);
}

proptest! {
    #[test]
    fn identity_key_is_byte_identical_to_serde_json_sorted_map(
        operation in "\\PC*|[\\x00-\\x1f\"\\\\é]{0,8}",
        function in "\\PC{0,12}",
        path in "/[a-z\"\\\\é\\x01]{1,10}",
    ) {
        let id = OperatorIdentity::build(KeyTrack::Py, &path, &operation, &function, &ctx());
        let mut map = BTreeMap::new();
        if let Some(f) = &id.function {
            map.insert("function", serde_json::Value::from(f.clone()));
        }
        map.insert("operation", id.operation.clone().into());
        map.insert("source_kind", "py".into());
        map.insert("source_path", id.source_path.clone().into());
        map.insert("version", 1.into());
        prop_assert_eq!(id.key(), serde_json::to_string(&map).unwrap_or_default());
    }
}

#[test]
fn call_form_gives_path_line_and_function() -> TestResult {
    let r = parse_source_ref("aiter/rmsnorm.py(42): rms_norm")?;
    assert_eq!(r.path, "aiter/rmsnorm.py");
    assert_eq!(r.line, Some(42));
    assert_eq!(r.function.as_deref(), Some("rms_norm"));
    let bare = parse_source_ref("csrc/rmsnorm.cu(120)")?;
    assert_eq!(
        (bare.path.as_str(), bare.line, bare.function),
        ("csrc/rmsnorm.cu", Some(120), None)
    );
    Ok(())
}

#[test]
fn anchor_and_colon_forms_give_the_line() -> TestResult {
    for value in ["csrc/k.cu#L7", "csrc/k.cu:7"] {
        let r = parse_source_ref(value)?;
        assert_eq!(
            (r.path.as_str(), r.line, r.function.as_deref()),
            ("csrc/k.cu", Some(7), None),
            "{value}"
        );
    }
    Ok(())
}

#[test]
fn placeholders_in_any_case_and_spacing_are_rejected() {
    for value in [
        "-",
        "\u{2014}",
        "\u{2013}",
        "N/A",
        "None",
        "Not  Found",
        "NOT_FOUND",
        "notfound",
        "null",
        "TBD",
        " unknown ",
    ] {
        assert!(
            matches!(parse_source_ref(value), Err(RefRejection::Placeholder(_))),
            "{value:?}: {:?}",
            parse_source_ref(value)
        );
    }
    assert_eq!(parse_source_ref("  "), Err(RefRejection::Empty));
}

#[test]
fn vendor_labels_are_not_path_shaped_and_bare_files_are() -> TestResult {
    for value in [
        "AITER (vendor)",
        "Triton (vendor)",
        "<unresolved>",
        "k.cuda",
        "notes.txt",
    ] {
        assert!(
            matches!(parse_source_ref(value), Err(RefRejection::NotPathShaped(_))),
            "{value:?}"
        );
    }
    assert_eq!(parse_source_ref("kernel.py")?.path, "kernel.py");
    assert_eq!(parse_source_ref(r"C:\src\k.cu")?.path, r"C:\src\k.cu");
    assert!(is_path_shaped("stubs/ops.pyi"));
    let message = parse_source_ref("Triton (vendor)")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(message.contains("'Triton (vendor)'"), "{message}");
    Ok(())
}
