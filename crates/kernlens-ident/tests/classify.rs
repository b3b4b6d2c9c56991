//! Category and vendor scenarios C1–C17 (ident.md "Acceptance scenarios: Category and vendor extras").

use kernlens_ident::{Category, VendorLib, classify, vendor_of};

#[track_caller]
fn assert_class(name: &str, category: Category, vendor: Option<VendorLib>) {
    assert_eq!(classify(name), category, "classify({name:?})");
    assert_eq!(vendor_of(name), vendor, "vendor_of({name:?})");
}

#[test]
fn gemm_and_norm_win_over_quantization() {
    assert_class("_mxfp8_grouped_gemm_kernel", Category::Gemm, None);
    assert_class("aiter::add_rmsnorm_quant_kernel", Category::Norm, None);
    assert_class(
        "dynamic_per_token_scaled_fp8_quant_kernel",
        Category::Quantization,
        None,
    );
}

#[test]
fn mangled_names_classify_by_their_native_key() {
    assert_class(
        "_ZN5aiter26cross_device_reduce_2stageIDF16bLi8ELb0EEEv",
        Category::Communication,
        None,
    );
}

#[test]
fn reduction_and_softmax() {
    assert_class(
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
        Category::Reduction,
        None,
    );
    assert_class(
        "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*)",
        Category::Softmax,
        None,
    );
    assert_class("cunn_SoftMaxForward", Category::Softmax, None);
}

#[test]
fn triton_and_python_kernels() {
    assert_class(
        "sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel_427",
        Category::Moe,
        None,
    );
    assert_class("triton_red_fused_sum_0", Category::Reduction, None);
    assert_class("triton_tem_fused_mm_0", Category::Gemm, None);
    assert_class("random_normal_kernel", Category::Other, None);
    assert_class("_gqa_sparse_decode_kernel", Category::Attention, None);
}

#[test]
fn vendor_libraries() {
    assert_class(
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_bf16_128x128_32x4_nn_align8>(Params)",
        Category::Gemm,
        Some(VendorLib::Cutlass),
    );
    assert_class(
        "Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0",
        Category::Gemm,
        Some(VendorLib::Hipblaslt),
    );
    assert_class(
        "ck_tile::kentry<ck_tile::FmhaFwdKernel<int>>",
        Category::Attention,
        Some(VendorLib::Ck),
    );
    assert_class(
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        Category::Communication,
        Some(VendorLib::Nccl),
    );
    assert_class(
        "rocblas_gemm_ex_kernel",
        Category::Gemm,
        Some(VendorLib::Rocblas),
    );
}

#[test]
fn cublas_patterns_cover_sass_and_architecture_kernels() {
    assert_eq!(
        vendor_of("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
        Some(VendorLib::Cublas)
    );
    assert_eq!(vendor_of("ampere_sgemm_128x64_nn"), Some(VendorLib::Cublas));
    assert_eq!(vendor_of("ampere_copy_kernel"), None);
    assert_eq!(vendor_of("sm_xmma_gemm"), None);
    assert_eq!(
        vendor_of("hipblasLtMatmul_kernel"),
        Some(VendorLib::Hipblaslt)
    );
    assert_eq!(vendor_of("hipblas_axpy"), Some(VendorLib::Hipblas));
    assert_eq!(vendor_of("rccl_kernel"), Some(VendorLib::Nccl));
    assert_eq!(
        vendor_of("void ck::kernel_gemm<int>(int)"),
        Some(VendorLib::Ck)
    );
}

#[test]
fn mangled_vendor_symbols_are_recognised_through_their_key() {
    assert_eq!(
        vendor_of("_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdIiEEEEvT0_"),
        Some(VendorLib::Ck)
    );
}

#[test]
fn memory_rows_are_memcpy() {
    assert_class("Memcpy HtoD (Pageable -> Device)", Category::Memcpy, None);
    assert_class("Memset (Device)", Category::Memcpy, None);
}

#[test]
fn category_labels_serialise_in_snake_case() -> Result<(), serde_json::Error> {
    assert_eq!(
        serde_json::to_string(&Category::Quantization)?,
        "\"quantization\""
    );
    assert_eq!(
        serde_json::to_string(&VendorLib::Hipblaslt)?,
        "\"hipblaslt\""
    );
    assert_eq!(Category::Elementwise.to_string(), "elementwise");
    Ok(())
}
