//! Keyword plans of locate.md "Acceptance scenarios: Keyword plans" (S1–S10c).

use kernlens_locate::{NameShape, Refusal, keywords_for};

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn launch_api_names_are_refused() {
    let plan = keywords_for("hipGraphLaunch");
    assert_eq!(plan.refusal, Some(Refusal::RuntimeApiName));
    assert!(plan.primary.is_empty());
}

#[test]
fn synthetic_op_launch_decoration_is_stripped_and_windows_and_prefixes_follow() {
    let plan = keywords_for("hipModuleLaunchKernel->_mxfp8_grouped_gemm_kernel (Synthetic Op)");
    assert_eq!(plan.refusal, None);
    assert_eq!(plan.primary, v(&["_mxfp8_grouped_gemm_kernel"]));
    assert_eq!(
        plan.subwindows,
        v(&[
            "mxfp8_grouped_gemm_kernel",
            "grouped_gemm_kernel",
            "gemm_kernel"
        ])
    );
    assert_eq!(plan.prefixes, v(&["mxfp8_grouped_gemm", "mxfp8_grouped"]));
}

#[test]
fn mangled_name_gives_the_demangled_base_without_junk_tokens() {
    let plan = keywords_for("_ZN5aiter26cross_device_reduce_2stageIDF16bLi8ELb0EEEv");
    assert_eq!(plan.primary, v(&["cross_device_reduce_2stage"]));
    // Rule 2d: a C++ name's segments belong to other functions, so nothing
    // is guessed from them.
    assert_eq!(plan.shape, NameShape::Cxx);
    assert_eq!(plan.qualifiers, Some(v(&["aiter"])));
    assert!(plan.subwindows.is_empty() && plan.prefixes.is_empty());
}

#[test]
fn demangled_and_inductor_names_plan_no_guesses_but_bare_ones_do() {
    let demangled = keywords_for(
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>(int, float*)",
    );
    assert_eq!(demangled.shape, NameShape::Cxx);
    assert_eq!(
        demangled.qualifiers,
        Some(v(&["at", "native", "(anonymous namespace)"]))
    );
    assert!(demangled.subwindows.is_empty() && demangled.prefixes.is_empty());
    let inductor = keywords_for("triton_poi_fused_add_mul_view_2");
    assert_eq!(inductor.shape, NameShape::Inductor);
    assert_eq!(inductor.primary, v(&["triton_poi_fused_add_mul_view_2"]));
    assert!(inductor.subwindows.is_empty() && inductor.prefixes.is_empty());
    let bare = keywords_for("my_fused_gemm_kernel_fwd");
    assert_eq!(bare.shape, NameShape::Bare);
    assert!(!bare.subwindows.is_empty() && !bare.prefixes.is_empty());
    let wrapped = keywords_for("sglang_profiler::a_b_c_kernel_7");
    assert_eq!(wrapped.shape, NameShape::Qualified);
    // A phase tag after a space is not a parameter list.
    assert_eq!(
        keywords_for("aiter::fmoe_g1u1 (prefill)").shape,
        NameShape::Qualified
    );
}

#[test]
fn a_cxx_names_trailing_underscore_is_one_spelling_tried_first() {
    let plan = keywords_for("void k_sml_<float>(float*, int)");
    assert_eq!(plan.primary, v(&["k_sml_", "k_sml"]));
    // A bare name keeps locate.md "Keywords: Primary keywords"'s strip.
    assert_eq!(keywords_for("py_kernel_").primary, v(&["py_kernel"]));
}

#[test]
fn profiler_wrapped_name_gives_six_subwindows_and_seven_prefixes() {
    let plan =
        keywords_for("sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel_427");
    assert_eq!(
        plan.primary,
        v(&["fused_moe_triton_kernels_invoke_fused_moe_kernel_427"])
    );
    assert_eq!(
        plan.subwindows,
        v(&[
            "fused_moe_triton_kernels_invoke_fused_moe_kernel",
            "moe_triton_kernels_invoke_fused_moe_kernel",
            "triton_kernels_invoke_fused_moe_kernel",
            "kernels_invoke_fused_moe_kernel",
            "invoke_fused_moe_kernel",
            "fused_moe_kernel",
        ])
    );
    assert_eq!(plan.prefixes.len(), 7);
    assert_eq!(
        plan.prefixes.first().map(String::as_str),
        Some("fused_moe_triton_kernels_invoke_fused_moe_kernel")
    );
    assert_eq!(plan.prefixes.last().map(String::as_str), Some("fused_moe"));
}

#[test]
fn fstring_built_name_keeps_the_eight_shortest_prefixes_longest_first() {
    let plan = keywords_for("mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256_pm1_swiglu_v32");
    assert_eq!(
        plan.primary,
        v(&["mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256_pm1_swiglu_v32"])
    );
    assert_eq!(plan.subwindows.len(), 6);
    assert_eq!(
        plan.prefixes,
        v(&[
            "mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256_pm1",
            "mfma_moe1_silu_mul_afp8_wfp8_bf16_t32x128x256",
            "mfma_moe1_silu_mul_afp8_wfp8_bf16",
            "mfma_moe1_silu_mul_afp8_wfp8",
            "mfma_moe1_silu_mul_afp8",
            "mfma_moe1_silu_mul",
            "mfma_moe1_silu",
            "mfma_moe1",
        ])
    );
}

#[test]
fn stage_two_name_has_six_windows_and_eight_prefixes() {
    let plan = keywords_for("mfma_moe2_afp8_wfp8_bf16_cshuffle_t32x128x256_vscale_v1_pm1");
    assert_eq!(plan.subwindows.len(), 6);
    assert_eq!(plan.prefixes.len(), 8);
    assert!(plan.prefixes[0].ends_with("_vscale_v1"));
    assert_eq!(
        &plan.prefixes[6..],
        &v(&["mfma_moe2_afp8", "mfma_moe2"])[..]
    );
}

#[test]
fn one_trailing_number_is_cut_for_windows_only() {
    let plan = keywords_for("_gemm_a16_w16_kernel_BLOCK_SIZE_M_32_BLOCK_SIZE_N_64");
    assert_eq!(
        plan.primary,
        v(&["_gemm_a16_w16_kernel_BLOCK_SIZE_M_32_BLOCK_SIZE_N_64"])
    );
    assert_eq!(
        plan.subwindows[0],
        "gemm_a16_w16_kernel_BLOCK_SIZE_M_32_BLOCK_SIZE_N"
    );
    assert_eq!(plan.prefixes.len(), 8);
    assert_eq!(
        &plan.prefixes[5..],
        &v(&["gemm_a16_w16_kernel", "gemm_a16_w16", "gemm_a16"])[..]
    );
}

#[test]
fn class_scope_gives_a_qualified_tail_first() {
    let plan = keywords_for("mori::EpDispatchCombineOp::dispatch");
    assert_eq!(
        plan.primary,
        v(&["EpDispatchCombineOp::dispatch", "dispatch"])
    );
    assert!(plan.subwindows.is_empty() && plan.prefixes.is_empty());
}

#[test]
fn a_namespace_alone_is_never_searched() {
    let plan = keywords_for("_ZN5aiter3fooE.kd");
    assert_eq!(plan.refusal, Some(Refusal::NoSearchableKeyword));
    assert!(plan.all().next().is_none());
}

#[test]
fn parameter_lists_and_return_types_never_reach_keywords() {
    let plan = keywords_for("void rmsnorm_kernel<bf16>(float*)");
    assert_eq!(plan.primary, v(&["rmsnorm_kernel"]));
    assert!(plan.subwindows.is_empty() && plan.prefixes.is_empty());
}

#[test]
fn phase_tag_is_cut_at_whitespace() {
    let plan = keywords_for("aiter::fmoe_g1u1 (prefill)");
    assert_eq!(plan.primary, v(&["fmoe_g1u1"]));
    assert!(plan.subwindows.is_empty() && plan.prefixes.is_empty());
}

#[test]
fn memset_rows_are_not_kernels() {
    assert_eq!(
        keywords_for("Memset (Device)").refusal,
        Some(Refusal::NotAKernel)
    );
    assert_eq!(
        keywords_for("Memcpy DtoD (Device -> Device)").refusal,
        Some(Refusal::NotAKernel)
    );
}

#[test]
fn every_launch_api_is_refused_but_a_decorated_kernel_is_not() {
    for n in [
        "hipGraphLaunch",
        "hipModuleLaunchKernel",
        "hipLaunchKernel",
        "cudaLaunchKernel",
        "cudaGraphLaunch",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
    ] {
        assert_eq!(
            keywords_for(n).refusal,
            Some(Refusal::RuntimeApiName),
            "{n}"
        );
    }
    let plan = keywords_for("hipModuleLaunchKernel->_k_fwd_kernel (Synthetic Op)");
    assert_eq!(plan.refusal, None);
    assert_eq!(plan.primary, v(&["_k_fwd_kernel"]));
}

#[test]
fn real_trace_names_key_to_their_base() {
    let r3 = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, false>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
    assert_eq!(
        keywords_for(r3).primary,
        v(&["vectorized_layer_norm_kernel"])
    );
    let i1 = "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd";
    assert_eq!(keywords_for(i1).primary, v(&["add_rmsnorm_quant_kernel"]));
}

#[test]
fn every_source_extension_has_exactly_one_rank_group() {
    use kernlens_ident::{SOURCE_EXTENSION_RANKS, SOURCE_EXTENSIONS};
    for ext in SOURCE_EXTENSIONS {
        let groups = SOURCE_EXTENSION_RANKS
            .iter()
            .filter(|g| g.contains(ext))
            .count();
        assert_eq!(groups, 1, "{ext}");
    }
    let ranked: usize = SOURCE_EXTENSION_RANKS.iter().map(|g| g.len()).sum();
    assert_eq!(ranked, SOURCE_EXTENSIONS.len());
}

/// Bytes of every keyword of a plan: what planning had to build and keep.
fn plan_bytes(plan: &kernlens_locate::KeywordPlan) -> usize {
    plan.all().map(str::len).sum::<usize>() + plan.base.len()
}

/// Plans `name` and checks the work stayed linear: a loose wall-clock bound
/// (quadratic planning took 15 s in release on the first name) and at most
/// one name's worth of text per keyword slot.
fn assert_plans_quickly(name: &str) -> kernlens_locate::KeywordPlan {
    let t = std::time::Instant::now();
    let plan = keywords_for(name);
    let took = t.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "planning a {}-byte name took {took:?}",
        name.len()
    );
    // 3 primary + 6 windows + 8 prefixes + the base, each at most the name.
    assert!(plan_bytes(&plan) <= 18 * name.len());
    plan
}

#[test]
fn a_100k_character_name_with_50k_segments_plans_in_linear_time() {
    let name: String = (0..50_000)
        .map(|i| char::from(b'a' + (i % 26) as u8).to_string())
        .collect::<Vec<_>>()
        .join("_");
    assert_eq!(name.len(), 99_999);
    let plan = assert_plans_quickly(&name);
    // `assert!` rather than `assert_eq!`: a failure must not print 100 KB.
    assert!(plan.primary == [name.as_str()]);
    // Windows drop leading segments, longest first; prefixes are the 8 shortest.
    let windows: Vec<&str> = (0..6).map(|i| &name[2 * i..]).collect();
    assert!(plan.subwindows == windows);
    assert_eq!(plan.prefixes.len(), 8);
    assert_eq!(plan.prefixes.last().map(String::as_str), Some("a_b_c_d"));
    assert_eq!(plan.prefixes.first().map(String::as_str), Some(&name[..21]));
}

#[test]
fn a_200kb_mangled_name_no_demangler_reads_plans_in_linear_time() {
    // 25k distinct length-prefixed identifiers: the token filter's duplicate
    // check must not compare each against all kept before it. Each ends in a
    // letter, so the next length prefix reads as one.
    let mut name = String::from("_ZN");
    let mut i = 0u32;
    while name.len() < 200_000 {
        let ident = format!("k{i:05}x");
        name.push_str(&format!("{}{ident}", ident.len()));
        i += 1;
    }
    // Unterminated nesting: the head parser refuses it too.
    name.push_str("Pv");
    let plan = assert_plans_quickly(&name);
    assert_eq!(plan.refusal, None);
    assert_eq!(plan.primary, v(&["k00000x", "k00001x", "k00002x"]));
}

#[test]
fn a_200kb_qualified_name_with_long_segments_plans_in_linear_time() {
    let segment = "fused_".repeat(8);
    let name = format!(
        "void ns::detail::{}kernel<int>(float*)",
        segment.repeat(200_000 / segment.len())
    );
    let plan = assert_plans_quickly(&name);
    assert_eq!(plan.refusal, None);
    // A C++-shaped name plans no sub-windows or prefixes (rule 2d).
    assert!(plan.subwindows.is_empty() && plan.prefixes.is_empty());
}

#[test]
fn a_200kb_bare_name_with_long_segments_plans_its_windows_in_linear_time() {
    let segment = "fused_".repeat(8);
    let name = format!("{}kernel", segment.repeat(200_000 / segment.len()));
    let plan = assert_plans_quickly(&name);
    assert_eq!(plan.refusal, None);
    assert_eq!(plan.subwindows.len(), 6);
    assert_eq!(plan.prefixes.len(), 8);
}
