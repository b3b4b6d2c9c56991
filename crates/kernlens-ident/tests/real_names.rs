//! Real kernel names from the bundled H200 captures (fixtures/traces): scenarios
//! R1–R18 (ident.md "Acceptance scenarios: Real names from the H200 fixtures"), the reviewed key table of every distinct kernel name
//! (fixtures/kernel_keys.tsv), and idempotence over every name of every trace. The
//! third-party traces' names are checked against the table in public_traces.rs.

mod support;

use std::collections::BTreeSet;

use kernlens_ident::{
    Category, VendorLib, classify, is_runtime_api_name, keys, native_key, python_key, vendor_of,
};
use support::{
    H200_TRACES, assert_table_lists_kernel_names_of, fixture, kernel_names, read_events, table,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Distinct kernel names of the H200 fixtures except `graph_many` (whose six
/// names are those of `graph`), in first-seen order.
fn h200_names() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut seen = BTreeSet::new();
    let mut names = Vec::new();
    for file in H200_TRACES.iter().filter(|f| !f.starts_with("graph_many")) {
        for name in kernel_names(&fixture(file))? {
            if seen.insert(name.clone()) {
                names.push(name);
            }
        }
    }
    Ok(names)
}

fn find<'a>(names: &'a [String], prefix: &str) -> Result<&'a str, String> {
    names
        .iter()
        .find(|n| n.starts_with(prefix))
        .map(String::as_str)
        .ok_or_else(|| format!("no kernel name starting {prefix:?} in the H200 fixtures"))
}

#[track_caller]
fn assert_real(name: &str, key: &str, category: Category, vendor: Option<VendorLib>) {
    assert_eq!(native_key(name), key, "native_key({name:?})");
    assert_eq!(python_key(name), key, "python_key({name:?})");
    assert_eq!(classify(name), category, "classify({name:?})");
    assert_eq!(vendor_of(name), vendor, "vendor_of({name:?})");
}

const NVJET: &str = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT";

#[test]
fn vendor_kernels_keep_their_names() -> TestResult {
    let names = h200_names()?;
    assert_real(
        find(&names, NVJET)?,
        NVJET,
        Category::Gemm,
        Some(VendorLib::Cublas),
    );
    let cudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0";
    assert_real(
        find(&names, cudnn)?,
        cudnn,
        Category::Attention,
        Some(VendorLib::Cudnn),
    );
    Ok(())
}

#[test]
fn profiler_demangled_aten_kernels_key_to_their_template() -> TestResult {
    let names = h200_names()?;
    let layer_norm = find(
        &names,
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, false>(int, float,",
    )?;
    assert_real(
        layer_norm,
        "at::native::(anonymous namespace)::vectorized_layer_norm_kernel",
        Category::Norm,
        None,
    );
    let add = find(
        &names,
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>,",
    )?;
    assert_real(
        add,
        "at::native::vectorized_elementwise_kernel",
        Category::Elementwise,
        None,
    );
    let gelu = find(
        &names,
        "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(",
    )?;
    assert!(gelu.contains("{lambda()#2}") && gelu.contains("operator()() const"));
    assert_real(
        gelu,
        "at::native::vectorized_elementwise_kernel",
        Category::Elementwise,
        None,
    );
    let apply = find(
        &names,
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<",
    )?;
    assert_real(
        apply,
        "at::native::(anonymous namespace)::multi_tensor_apply_kernel",
        Category::Elementwise,
        None,
    );
    Ok(())
}

#[test]
fn triton_and_inductor_kernels_keep_their_suffixes() -> TestResult {
    let names = h200_names()?;
    for (name, category) in [
        ("_fused_scale_bias_kernel", Category::Elementwise),
        ("triton_poi_fused_gelu_view_2", Category::Elementwise),
        ("triton_poi_fused_add_mul_view_6", Category::Elementwise),
        ("triton_per_fused_native_layer_norm_0", Category::Norm),
        (
            "triton_per_fused_add_native_layer_norm_view_1",
            Category::Norm,
        ),
        (
            "triton_per_fused_add_mul_native_layer_norm_view_3",
            Category::Norm,
        ),
        (
            "triton_per_fused_add_mul_native_layer_norm_view_4",
            Category::Norm,
        ),
        (
            "triton_per_fused_add_mul_native_layer_norm_view_5",
            Category::Norm,
        ),
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} is not in the H200 fixtures"
        );
        assert_real(name, name, category, None);
    }
    Ok(())
}

#[test]
fn decorated_spellings_key_like_the_plain_names() -> TestResult {
    let names = h200_names()?;
    assert_real(
        &format!("cudaGraphLaunch->{NVJET}"),
        NVJET,
        Category::Gemm,
        Some(VendorLib::Cublas),
    );
    assert_real(
        "hipModuleLaunchKernel->_fused_scale_bias_kernel (Synthetic Op)",
        "_fused_scale_bias_kernel",
        Category::Elementwise,
        None,
    );
    assert_real(
        "cudaGraphLaunch->triton_poi_fused_gelu_view_2 (Synthetic Op)",
        "triton_poi_fused_gelu_view_2",
        Category::Elementwise,
        None,
    );
    let add = find(
        &names,
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>,",
    )?;
    assert_real(
        &format!("cudaLaunchKernel->{add}"),
        "at::native::vectorized_elementwise_kernel",
        Category::Elementwise,
        None,
    );
    Ok(())
}

#[test]
fn memset_rows_are_memcpy_and_keep_their_tag() -> TestResult {
    let memsets: BTreeSet<String> = read_events(&fixture("eager.json.gz"))?
        .into_iter()
        .filter(|e| e.cat.as_deref() == Some("gpu_memset"))
        .filter_map(|e| e.name)
        .collect();
    assert!(memsets.contains("Memset (Device)"), "{memsets:?}");
    for name in memsets
        .iter()
        .map(String::as_str)
        .chain(["Memset (Unknown)"])
    {
        assert_real(name, name, Category::Memcpy, None);
    }
    Ok(())
}

#[test]
fn launch_events_of_the_fixtures_are_runtime_api_names() -> TestResult {
    let mut launches = BTreeSet::new();
    for file in ["eager.json.gz", "graph.json.gz"] {
        for event in read_events(&fixture(file))? {
            if matches!(event.cat.as_deref(), Some("cuda_runtime" | "cuda_driver"))
                && let Some(name) = event.name
                && name.contains("aunch")
            {
                launches.insert(name);
            }
        }
    }
    for name in ["cuLaunchKernelEx", "cudaLaunchKernel", "cudaGraphLaunch"] {
        assert!(launches.contains(name), "{name} not among {launches:?}");
    }
    for name in launches
        .iter()
        .map(String::as_str)
        .chain(["cuLaunchKernel"])
    {
        assert!(is_runtime_api_name(name), "{name}");
    }
    assert!(!is_runtime_api_name(NVJET));
    Ok(())
}

#[test]
fn every_distinct_trace_kernel_name_keys_as_the_reviewed_table() -> TestResult {
    let rows = table()?;
    assert!(rows.len() >= 250, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for (native, python, name) in &rows {
        let k = keys(name);
        if (&k.native, &k.python) != (native, python) {
            wrong.push(format!(
                "{name}\n  expected {native} | {python}\n  got      {} | {}",
                k.native, k.python
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} names keyed differently:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    Ok(())
}

#[test]
fn the_table_lists_every_kernel_name_of_the_own_captures() -> TestResult {
    let files: Vec<std::path::PathBuf> = H200_TRACES
        .iter()
        .filter(|f| !f.starts_with("graph_many"))
        .map(|f| fixture(f))
        .collect();
    assert_table_lists_kernel_names_of(&files)
}

#[test]
fn every_trace_name_keys_idempotently_with_or_without_decorations() -> TestResult {
    for (_, _, name) in table()? {
        for spelling in [
            name.clone(),
            format!("hipGraphLaunch->hipModuleLaunchKernel->{name}"),
            format!("{name} (Synthetic Op)"),
            format!("cudaGraphLaunch->{name}.kd"),
        ] {
            let k = keys(&spelling);
            assert_eq!(k.native, native_key(&name), "native key of {spelling:?}");
            assert_eq!(k.python, python_key(&name), "python key of {spelling:?}");
            assert_eq!(
                native_key(&k.native),
                k.native,
                "native key of {spelling:?} is not idempotent"
            );
            assert_eq!(
                python_key(&k.python),
                k.python,
                "python key of {spelling:?} is not idempotent"
            );
        }
    }
    Ok(())
}
