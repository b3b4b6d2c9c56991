//! End-to-end scenarios on the built fixture trees (locate.md "Acceptance scenarios: End to end on built fixtures", locate.md "Acceptance scenarios: Kinds").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::copy_tree;

use kernlens_locate::{
    Confidence, KindContext, LocateOptions, LocateResult, Locator, Method, SourceKind,
    source_kind_for,
};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/locate")
        .join(rel)
        .canonicalize()
        .unwrap()
}

fn locate_in(root: &Path, names: &[&str]) -> Vec<LocateResult> {
    let mut l = Locator::builder().root(root).build().unwrap();
    l.locate_many(names, &LocateOptions::default())
}

/// The best candidate's path below `root` (a mention-only answer has no `path`).
fn best_candidate(r: &LocateResult, root: &Path) -> String {
    r.candidates
        .first()
        .map(|c| c.path.strip_prefix(root).unwrap().display().to_string())
        .unwrap_or_default()
}

/// A mention-only answer: not found, reason `mention_only`, evidence kept.
fn assert_mention_only(r: &LocateResult) {
    assert!(!r.found, "{}", r.name);
    assert_eq!(r.confidence, Confidence::Mention);
    assert_eq!(r.reason.map(|r| r.as_str()), Some("mention_only"));
    assert_eq!(r.method, Method::Mention);
    assert!(r.path.is_none());
    assert!(!r.candidates.is_empty());
}

fn rel(r: &LocateResult, root: &Path) -> String {
    r.path
        .as_ref()
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .unwrap_or_default()
}

const R3: &str = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, false>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
const R4: &str = "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
const R5: &str = "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
const R6: &str = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 2, 1, 1>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 2, 1, 1>, std::plus<float>, float)";

#[test]
fn defining_module_beats_the_reexporting_init() {
    let root = fixture("vllm_like");
    let r = &locate_in(&root, &["_mxfp8_linear_kernel"])[0];
    assert!(r.found);
    assert_eq!(r.confidence, Confidence::Definition);
    assert_eq!(rel(r, &root), "vllm/kernels/linear/mxfp8/rocm_native.py");
    assert_eq!(r.method, Method::Definition);
    assert_eq!(r.line, Some(7));
    assert_eq!(r.function.as_deref(), Some("_mxfp8_linear_kernel"));
    assert_eq!(r.kind, SourceKind::Triton);
    let paths: Vec<String> = r
        .candidates
        .iter()
        .map(|c| c.path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert_eq!(paths.len(), 3);
    let init = paths
        .iter()
        .position(|p| p == "vllm/kernels/linear/__init__.py")
        .unwrap();
    assert!(init > 0);
    assert!(r.candidates[0].why[0].starts_with("definition:triton_jit@7"));
}

#[test]
fn with_only_mentions_nothing_is_found_and_the_module_leads_the_candidates() {
    let root = fixture("mention_only");
    let r = &locate_in(&root, &["_mxfp8_linear_kernel"])[0];
    assert_mention_only(r);
    assert_eq!(best_candidate(r, &root), "pkg/dispatch.py");
    assert_eq!(r.kind, SourceKind::Unknown);
    assert_eq!(r.candidates[1].score.reexport, 1);
}

#[test]
fn without_the_definer_the_dispatching_mention_is_only_a_candidate() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&fixture("vllm_like"), tmp.path());
    std::fs::remove_file(tmp.path().join("vllm/kernels/linear/mxfp8/rocm_native.py")).unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let r = &locate_in(&root, &["_mxfp8_linear_kernel"])[0];
    assert_mention_only(r);
    assert_eq!(best_candidate(r, &root), "vllm/kernels/linear/dispatch.py");
}

#[test]
fn fstring_composer_is_found_by_a_template_matching_the_whole_name() {
    let root = fixture("aiter_like");
    let r = &locate_in(
        &root,
        &["mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256_pm1_swiglu_v32"],
    )[0];
    assert!(r.found);
    assert_eq!(
        rel(r, &root),
        "aiter/ops/flydsl/kernels/mixed_moe_gemm_2stage.py"
    );
    assert_eq!(r.method, Method::Prefix);
    assert_eq!(r.confidence, Confidence::Composed);
    assert_eq!(r.keyword.as_deref(), Some("mfma_moe1_silu_mul"));
    assert_eq!(r.candidates[0].score.composing, Some(true));
    // `mfma_moe1_silu_mul_a` `_w` `_` + `_t` `x` `x` + `_pm` + `_` `_v`:
    // the optional `_vscale_v…` is left out.
    assert_eq!(r.candidates[0].score.prefix_chars, Some(33));
    assert_eq!(r.function.as_deref(), Some("compile_moe_gemm"));
    assert_eq!(r.line, Some(9));
    assert_eq!(r.kind, SourceKind::FlyDsl);
    // Every keyword tried before the prefix pass answered is listed.
    assert!(r.keywords_tried.len() > 6);
}

#[test]
fn more_literal_characters_win_between_sibling_composers() {
    let root = fixture("aiter_like");
    let r = &locate_in(
        &root,
        &["mfma_moe2_afp8_wfp8_bf16_cshuffle_t32x128x256_vscale_v1_pm1"],
    )[0];
    assert_eq!(
        rel(r, &root),
        "aiter/ops/flydsl/kernels/mixed_moe_gemm_2stage.py"
    );
    assert_eq!(r.confidence, Confidence::Composed);
    // `mfma_moe2_a` `_w` `_` `_cshuffle` + `_t` `x` `x` + `_vscale_v` + `_pm`
    // over the sibling's `mfma_moe2_` `_` `_`.
    assert_eq!(r.candidates[0].score.prefix_chars, Some(39));
    assert_eq!(r.candidates[1].score.prefix_chars, Some(12));
    assert!(r.candidates[1].path.ends_with("moe_gemm_2stage.py"));
}

#[test]
fn profiler_wrapped_name_is_found_through_a_subwindow() {
    let root = fixture("vllm_like");
    let r = &locate_in(
        &root,
        &["sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel_427"],
    )[0];
    assert_eq!(rel(r, &root), "vllm/triton_utils/fused_moe.py");
    assert_eq!(r.method, Method::Subwindow);
    assert_eq!(r.keyword.as_deref(), Some("invoke_fused_moe_kernel"));
    assert_eq!(r.kind, SourceKind::Triton);
}

#[test]
fn only_launch_api_names_walk_nothing() {
    let mut l = Locator::builder()
        .root(fixture("vllm_like"))
        .build()
        .unwrap();
    let names = [
        "hipGraphLaunch",
        "hipModuleLaunchKernel",
        "hipLaunchKernel",
        "cudaLaunchKernel",
        "cudaGraphLaunch",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
    ];
    let rs = l.locate_many(&names, &LocateOptions::default());
    assert!(rs.iter().all(|r| !r.found
        && r.method == Method::NotFound
        && r.reason.map(|r| r.as_str()) == Some("runtime_api_name")));
    assert_eq!(l.stats().files_walked, 0);
    let r = l.locate(
        "hipModuleLaunchKernel->_gqa_sparse_decode_kernel (Synthetic Op)",
        &LocateOptions::default(),
    );
    assert!(r.found);
    assert!(l.stats().files_walked > 0);
}

#[test]
fn option_and_regex_lookalikes_are_matched_literally() {
    let root = fixture("danger");
    let rs = locate_in(&root, &["--danger_kernel", "a.b*[c]_kernel"]);
    // The file only mentions them (no definition can spell them), so each is
    // a mention-only candidate, found by literal text.
    for r in &rs {
        assert_mention_only(r);
        assert_eq!(best_candidate(r, &root), "literal_names.py");
    }
}

#[test]
fn global_kernels_with_templates_and_launch_bounds_are_definitions() {
    let root = fixture("aiter_like");
    let rs = locate_in(
        &root,
        &[
            "void aiter::cross_device_reduce_2stage<__hip_bfloat16, 8>(aiter::RankData*, aiter::RankSignals, aiter::Signal*, __hip_bfloat16*, int, int)",
            "void aiter::add_rmsnorm_quant_kernel<__hip_bfloat16, signed char, 256>(signed char*, __hip_bfloat16 const*, __hip_bfloat16 const*, float const*, float, int)",
            "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv",
        ],
    );
    assert_eq!(
        rel(&rs[0], &root),
        "aiter/csrc/include/custom_all_reduce.cuh"
    );
    assert_eq!(rs[0].method, Method::Definition);
    assert!(rs[0].candidates[0].why[0].starts_with("definition:cuda_global@"));
    assert_eq!(
        rs[0].line,
        Some(8),
        "the line of the name, after the launch bounds"
    );
    assert_eq!(rs[0].kind, SourceKind::Cuda);
    for r in &rs[1..] {
        assert_eq!(rel(r, &root), "aiter/csrc/kernels/rmsnorm_quant.cu");
        assert_eq!(r.method, Method::Definition);
        assert_eq!(r.line, Some(7));
        // The file includes hip/hip_runtime.h.
        assert_eq!(r.kind, SourceKind::Hip);
        assert!(
            r.candidates
                .iter()
                .all(|c| !c.path.to_string_lossy().contains("jit/build"))
        );
    }
}

#[test]
fn csrc_definition_wins_and_jinja_is_never_scanned() {
    let root = fixture("aiter_like");
    let r = &locate_in(&root, &["foo_kernel(float*, int)"])[0];
    assert_eq!(rel(r, &root), "aiter/csrc/kernels/foo_kernel.cc");
    assert_eq!(r.method, Method::Definition);
    assert_eq!(r.kind, SourceKind::Cpp);
    assert!(r.candidates[1].path.ends_with("aiter/ops/foo_kernel.py"));
    assert_eq!(r.candidates.len(), 2);
}

#[test]
fn cuda_tree_definitions_beat_calls_and_declarations() {
    let root = fixture("cuda_tree");
    let rs = locate_in(&root, &[R3, R4, R5, R6]);
    assert_eq!(rel(&rs[0], &root), "aten/native/cuda/layer_norm_kernel.cu");
    assert_eq!(rs[0].candidates[0].score.definition, 0);
    for r in &rs[1..3] {
        assert_eq!(rel(r, &root), "aten/native/cuda/CUDALoops.cuh");
        let others: Vec<_> = r.candidates[1..]
            .iter()
            .map(|c| c.score.definition)
            .collect();
        assert_eq!(
            others,
            [2, 2],
            "Loops.cu call and decls.h declaration are mentions"
        );
    }
    assert_eq!(rel(&rs[3], &root), "aten/native/cuda/MultiTensorApply.cuh");
    assert!(rs.iter().all(|r| r.kind == SourceKind::Cuda));
    assert!(rs.iter().all(|r| r.method == Method::Definition));
}

#[test]
fn every_source_extension_has_a_known_kind() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("pkg")).unwrap();
    for ext in kernlens_ident::SOURCE_EXTENSIONS {
        let p = tmp.path().join(format!("pkg/some_kernel{ext}"));
        std::fs::write(&p, "some_kernel\n").unwrap();
        let kind = source_kind_for("some_kernel", Some(&p), &KindContext::default());
        assert_ne!(kind, SourceKind::Unknown, "{ext}");
    }
    // Upper-case extensions are admitted by the walk too.
    std::fs::write(
        tmp.path().join("pkg/other_kernel.CU"),
        "__global__ void other_kernel(int n) {}\n",
    )
    .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let r = &locate_in(&root, &["other_kernel(int)"])[0];
    assert_eq!(rel(r, &root), "pkg/other_kernel.CU");
}

#[test]
fn locate_many_equals_single_calls_in_input_order() {
    let root = fixture("");
    let mut names: Vec<String> = [
        "_mxfp8_linear_kernel",
        "cross_device_reduce_2stage",
        "add_rmsnorm_quant_kernel",
        "foo_kernel",
        "fused_moe_kernel",
        "_gqa_sparse_decode_kernel",
        "hipGraphLaunch",
        "Memset (Device)",
        R3,
        R4,
        R6,
        "mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256_pm1_swiglu_v32",
        "mfma_moe2_afp8_wfp8_bf16_cshuffle_t32x128x256_vscale_v1_pm1",
        "definitely_absent_kernel_name",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut i = 0;
    while names.len() < 50 {
        names.push(format!("synthetic_absent_kernel_{i}_variant"));
        i += 1;
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut many = Locator::builder().root(&root).build().unwrap();
    let batch = many.locate_many(&refs, &LocateOptions::default());
    assert_eq!(batch.len(), 50);
    for (n, b) in refs.iter().zip(&batch) {
        let mut one = Locator::builder().root(&root).build().unwrap();
        let single = one.locate(n, &LocateOptions::default());
        assert_eq!(&single, b, "{n}");
        assert_eq!(&b.name, n);
    }
}

#[test]
fn second_call_is_served_from_memory_and_new_names_scan_without_walking() {
    let root = fixture("");
    let mut l = Locator::builder().root(&root).build().unwrap();
    let first = l.locate_many(
        &["_mxfp8_linear_kernel", "foo_kernel(float*, int)"],
        &LocateOptions::default(),
    );
    assert!(first.iter().all(|r| r.found));
    assert!(l.stats().files_walked > 0 && l.stats().bytes_read > 0);
    let again = l.locate_many(
        &["_mxfp8_linear_kernel", "foo_kernel(float*, int)"],
        &LocateOptions::default(),
    );
    assert_eq!(first, again);
    assert_eq!(l.stats().bytes_read, 0);
    assert_eq!(l.stats().files_walked, 0);
    assert_eq!(l.stats().cache_hits, l.stats().patterns);
    let new = l.locate(
        "_ZN5aiter26cross_device_reduce_2stageIDF16bLi8ELb0EEEv",
        &LocateOptions::default(),
    );
    assert!(new.found);
    assert_eq!(l.stats().files_walked, 0);
    assert!(l.stats().files_scanned > 0);
}

#[test]
fn changed_file_is_rescanned_for_cached_keywords() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("a.py"), "x = late_kernel_name\n").unwrap();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let r = l.locate("late_kernel_name", &LocateOptions::default());
    assert_eq!(r.method, Method::Mention);
    // A different size makes the change visible even within one mtime tick.
    std::fs::write(
        root.join("a.py"),
        "import triton\n\n@triton.jit\ndef late_kernel_name(x):\n    pass\n",
    )
    .unwrap();
    let r = l.locate("late_kernel_name", &LocateOptions::default());
    assert_eq!(r.method, Method::Definition);
    assert_eq!(r.line, Some(4));
    std::fs::remove_file(root.join("a.py")).unwrap();
    let r = l.locate("late_kernel_name", &LocateOptions::default());
    assert!(!r.found);
}

#[test]
fn kinds_of_the_classify_files() {
    let dir = fixture("classify");
    let ctx = KindContext::default();
    let k = |name: &str, file: &str| source_kind_for(name, Some(&dir.join(file)), &ctx);
    assert_eq!(k("moe_stage1", "c1_flyc_kernel.py"), SourceKind::FlyDsl);
    assert_eq!(k("moe_stage2", "c2_from_flydsl.py"), SourceKind::FlyDsl);
    assert_eq!(k("add", "c3_plain.py"), SourceKind::Python);
    assert_eq!(k("triton_kernel", "c4_triton_name.py"), SourceKind::Triton);
    assert_eq!(
        k("_ref_kernel", "c6_flydsl_with_ref.py"),
        SourceKind::FlyDsl
    );
    assert_eq!(k("_my_kernel", "c7_plain_def.py"), SourceKind::Python);
    assert_eq!(
        k("_absent_kernel", "c8_p12_two_defs.py"),
        SourceKind::Python
    );
    assert_eq!(
        k("some_cuda_kernel", "c9_mentions_flydsl.cu"),
        SourceKind::Cuda
    );
    assert_eq!(k("some_hip_kernel", "c9_hip_include.cu"), SourceKind::Hip);
    assert_eq!(k("some_cpp_kernel", "c9_plain.cpp"), SourceKind::Cpp);
}

#[test]
fn triton_through_a_framework_shim_is_triton() {
    let root = fixture("vllm_like");
    let r = &locate_in(
        &root,
        &["hipModuleLaunchKernel->_gqa_sparse_decode_kernel (Synthetic Op)"],
    )[0];
    assert_eq!(rel(r, &root), "vllm/attention/ops/gqa.py");
    assert_eq!(r.kind, SourceKind::Triton);
}

#[test]
fn kinds_without_a_path() {
    let ctx = KindContext::default();
    assert_eq!(
        source_kind_for("my_kernel", None, &ctx),
        SourceKind::Unknown
    );
    for n in [
        "pseudo_op::moe_flydsl_stage1",
        "pseudo_op::moe_flydsl_stage2",
        "pseudo_op::flydsl_custom_kernel",
    ] {
        assert_eq!(source_kind_for(n, None, &ctx), SourceKind::FlyDsl, "{n}");
    }
    assert_eq!(
        source_kind_for(
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
            None,
            &ctx
        ),
        SourceKind::VendorBinary
    );
    assert_eq!(
        source_kind_for(
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
            None,
            &ctx
        ),
        SourceKind::VendorBinary
    );
    assert_eq!(
        source_kind_for("triton_per_fused_native_layer_norm_0", None, &ctx),
        SourceKind::RuntimeGenerated
    );
}

#[test]
fn generated_names_under_a_reusable_root_are_triton_but_in_a_cache_are_generated() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "import triton\n\n@triton.jit\ndef triton_poi_fused_x_0(x):\n    pass\n";
    for dir in ["proj", "inductor_cache/ab"] {
        std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        std::fs::write(tmp.path().join(dir).join("k.py"), text).unwrap();
    }
    let proj = tmp.path().join("proj").canonicalize().unwrap();
    let r = &locate_in(&proj, &["triton_poi_fused_x_0"])[0];
    assert_eq!(r.kind, SourceKind::Triton);
    let cache = tmp.path().join("inductor_cache").canonicalize().unwrap();
    let mut l = Locator::builder().root(&cache).build().unwrap();
    assert!(!l.roots()[0].reusable);
    let r = l.locate("triton_poi_fused_x_0", &LocateOptions::default());
    assert_eq!(r.kind, SourceKind::RuntimeGenerated);
}

#[test]
fn fake_def_in_a_docstring_is_no_evidence() {
    let root = fixture("classify");
    // The only occurrence sits in a docstring: no evidence at all (rule 2a).
    let r = &locate_in(&root, &["k_fwd"])[0];
    assert!(!r.found);
    assert_eq!(r.confidence, Confidence::None);
    assert!(r.candidates.is_empty());
}

#[cfg(feature = "rust-gpu")]
#[test]
fn rust_gpu_kernels_are_definitions_when_enabled() {
    let root = fixture("rust_gpu");
    let mut off = Locator::builder().root(&root).build().unwrap();
    assert!(
        !off.locate("saxpy_cube_kernel", &LocateOptions::default())
            .found
    );
    let mut on = Locator::builder()
        .root(&root)
        .rust_kernels(true)
        .build()
        .unwrap();
    for (name, line) in [
        ("saxpy_cube_kernel", 6),
        ("scale_cuda_kernel", 11),
        ("add_spirv_kernel", 16),
    ] {
        let r = on.locate(name, &LocateOptions::default());
        assert_eq!(rel(&r, &root), "src/lib.rs", "{name}");
        assert_eq!(r.line, Some(line), "{name}");
        assert!(
            r.candidates[0].why[0].starts_with("definition:rust_kernel@"),
            "{name}"
        );
    }
    let r = on.locate("launch_saxpy", &LocateOptions::default());
    assert!(r.candidates[0].why[0].starts_with("definition:cxx@"));
}

/// A Python file that is not valid UTF-8 (Latin-1 bytes in a literal before
/// the composing site) is read at its own byte offsets: the site is found at
/// its line. Before, the scanner ran over a lossily decoded copy whose
/// offsets ran past the file's end, and ranking panicked slicing the file.
#[test]
fn a_python_file_that_is_not_utf8_is_read_at_its_own_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = b"LABEL = \"".to_vec();
    text.extend_from_slice(&[0xe9; 12]);
    text.extend_from_slice(b"\"\n\ndef launch(p):\n    name = f\"rms_norm_{p}_kernel\"\n");
    std::fs::write(tmp.path().join("ops.py"), &text).unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let r = &locate_in(&root, &["rms_norm_fwd_kernel"])[0];
    assert!(r.found, "{r:?}");
    assert_eq!(r.confidence, Confidence::Composed);
    assert_eq!(rel(r, &root), "ops.py");
    assert_eq!(r.line, Some(4));
    assert_eq!(r.function.as_deref(), Some("launch"));
}
