//! Acceptance scenarios I1–I38 of the spec (ident.md "Acceptance scenarios: Pipeline inputs from the study", ident.md "Acceptance scenarios: Further pipeline cases"): both keys of
//! every input, including where the key deliberately departs from the
//! original system's quirks.

use kernlens_ident::{
    DemangledBy, clean_name, demangle_full, is_mangled, keys, native_key, python_key,
};

#[track_caller]
fn assert_keys(input: &str, python: &str, native: &str) {
    assert_eq!(python_key(input), python, "python_key({input:?})");
    assert_eq!(native_key(input), native, "native_key({input:?})");
    let both = keys(input);
    assert_eq!(both.python, python, "keys({input:?}).python");
    assert_eq!(both.native, native, "keys({input:?}).native");
}

#[test]
fn graph_launched_code_object_symbol_is_demangled() {
    assert_keys(
        "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv",
        "aiter::add_rmsnorm_quant_kernel",
    );
}

#[test]
fn module_launch_decoration_goes() {
    assert_keys(
        "hipModuleLaunchKernel->_gqa_sparse_fwd_kernel",
        "_gqa_sparse_fwd_kernel",
        "_gqa_sparse_fwd_kernel",
    );
    assert_keys(
        "_gqa_sparse_fwd_kernel",
        "_gqa_sparse_fwd_kernel",
        "_gqa_sparse_fwd_kernel",
    );
}

#[test]
fn synthetic_op_tag_goes() {
    assert_keys(
        "hipModuleLaunchKernel->_mxfp8_grouped_gemm_kernel (Synthetic Op)",
        "_mxfp8_grouped_gemm_kernel",
        "_mxfp8_grouped_gemm_kernel",
    );
}

#[test]
fn padding_return_type_templates_and_tag_go() {
    assert_keys(
        "  void   bar_kernel<int, 4>  (Synthetic Op) ",
        "bar_kernel",
        "bar_kernel",
    );
}

#[test]
fn parameters_of_a_plain_name_go() {
    assert_keys(
        "cudaGraphLaunch->void foo_kernel<int>(int)",
        "foo_kernel",
        "foo_kernel",
    );
}

#[test]
fn return_word_before_a_mangled_name_goes() {
    assert_keys("hipGraphLaunch->void _Z3fooPf", "_Z3fooPf", "foo");
}

#[test]
fn linux_and_macos_prefixes_both_demangle() {
    assert_keys(
        "_Z14rmsnorm_kernelPf",
        "_Z14rmsnorm_kernelPf",
        "rmsnorm_kernel",
    );
    assert_keys(
        "__Z14rmsnorm_kernelPf",
        "__Z14rmsnorm_kernelPf",
        "rmsnorm_kernel",
    );
}

#[test]
fn template_instances_share_one_native_key() {
    for input in [
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0EEEvPKT_",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi512ELi16ELb1ELb0EEEvPKT_",
    ] {
        assert_keys(input, input, "aiter::add_rmsnorm_quant_kernel");
    }
}

#[test]
fn mangled_and_printed_template_agree() {
    assert_keys(
        "_ZN5aiter14fused_operatorIfEEv",
        "_ZN5aiter14fused_operatorIfEEv",
        "aiter::fused_operator",
    );
    assert_keys(
        "aiter::fused_operator<float>",
        "aiter::fused_operator",
        "aiter::fused_operator",
    );
}

#[test]
fn substitutions_and_nested_templates_demangle() {
    let input = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENSt5arrayIPcLm1EEEEEviT0_T1_";
    assert_keys(input, input, "at::native::vectorized_elementwise_kernel");
}

#[test]
fn global_anonymous_namespace_is_spelled_out() {
    assert_keys(
        "_ZN12_GLOBAL__N_16kernelEv",
        "_ZN12_GLOBAL__N_16kernelEv",
        "(anonymous namespace)::kernel",
    );
}

#[test]
fn template_arguments_go_and_names_stay_distinct() {
    assert_keys("rmsnorm_kernel<bf16>", "rmsnorm_kernel", "rmsnorm_kernel");
    assert_keys("rmsnorm_kernel<fp16>", "rmsnorm_kernel", "rmsnorm_kernel");
    assert_keys("foo<bar<baz>>", "foo", "foo");
    assert_keys("a<x>", "a", "a");
    assert_keys("b<x>", "b", "b");
}

#[test]
fn non_templates_and_tags_stay() {
    assert_keys("<all>", "<all>", "<all>");
    assert_keys(
        "vllm::rocm_unquantized_gemm",
        "vllm::rocm_unquantized_gemm",
        "vllm::rocm_unquantized_gemm",
    );
    assert_keys(
        "aiter::fmoe_g1u1 (prefill)",
        "aiter::fmoe_g1u1 (prefill)",
        "aiter::fmoe_g1u1 (prefill)",
    );
}

#[test]
fn every_launch_decoration_goes() {
    assert_keys(
        "hipGraphLaunch->hipModuleLaunchKernel->foo_kernel",
        "foo_kernel",
        "foo_kernel",
    );
}

#[test]
fn cold_clone_of_a_mangled_name() {
    assert_keys("_Z3fooi.cold", "_Z3fooi", "foo");
}

#[test]
fn clone_group_and_parameters_of_a_plain_name_go() {
    assert_keys("foo(int) [clone .cold]", "foo", "foo");
}

#[test]
fn multi_word_return_type_after_a_decoration() {
    assert_keys("cudaLaunchKernel->unsigned foo", "foo", "foo");
    assert_keys("unsigned long x", "x", "x");
}

#[test]
fn wrong_length_prefix_falls_back_to_the_raw_symbol() {
    let input = "_ZN5aiter18all_reduce_kernelIDF16bLi8EEEvv";
    assert_keys(input, input, input);
    assert_eq!(keys(input).demangled_by, DemangledBy::None);
}

#[test]
fn head_parser_reads_what_the_demangler_rejects() {
    let input = "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIN3c108BFloat16EfLb0EEEvifPKT_S7_S7_PT0_SA_PS4_";
    assert_keys(
        input,
        input,
        "at::native::(anonymous namespace)::vectorized_layer_norm_kernel",
    );
    assert_eq!(keys(input).demangled_by, DemangledBy::HeadParser);
    assert_eq!(demangle_full(input), None);
}

#[test]
fn nvcc_anonymous_namespace_is_spelled_out() {
    let input = "_ZN2at6native53_GLOBAL__N__d2d5a4a2_21_layer_norm_kernel_cu_8d1f28ff6kernelEv";
    assert_keys(input, input, "at::native::(anonymous namespace)::kernel");
}

#[test]
fn compiler_clone_suffixes_and_code_objects_go() {
    for input in [
        "_Z3fooi.isra.0",
        "_Z3fooi.constprop.0",
        "_Z3fooi.part.0",
        "_Z3fooi.intern.abc123.kd",
    ] {
        assert_keys(input, "_Z3fooi", "foo");
    }
    assert_keys("_ZN5aiter3fooE.kd", "_ZN5aiter3fooE", "aiter::foo");
}

#[test]
fn operator_less_with_template_list_and_return_type() {
    for input in [
        "foo::operator< <int>(int const&)",
        "bool foo::operator< <int>(int const&)",
    ] {
        assert_keys(input, "foo::operator<", "foo::operator<");
    }
}

#[test]
fn operator_names_survive_stripping() {
    assert_keys("foo::operator()(int)", "foo::operator()", "foo::operator()");
    assert_keys("foo::operator>>(int)", "foo::operator>>", "foo::operator>>");
    assert_keys("foo::operator->()", "foo::operator->", "foo::operator->");
}

const GELU_LAMBDA_KEY: &str = "at::native::GeluCUDAKernelImpl::{lambda()#2}::operator()";

#[test]
fn local_lambda_keeps_its_enclosing_function() {
    let input = "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const";
    assert_keys(input, GELU_LAMBDA_KEY, GELU_LAMBDA_KEY);
}

#[test]
fn mangled_local_lambda_matches_its_printed_form() {
    let input =
        "_ZZN2at6native18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEv";
    assert_eq!(native_key(input), GELU_LAMBDA_KEY);
    assert_eq!(python_key(input), input);
}

#[test]
fn arrows_without_a_following_name_stay() {
    for input in ["operator->", "hipGraphLaunch->", "x->"] {
        assert_keys(input, input, input);
    }
    assert_keys("a->b", "b", "b");
}

#[test]
fn demangled_text_that_is_itself_mangled_takes_two_rounds() {
    assert_keys("_ZN6_Z3fooE", "_ZN6_Z3fooE", "foo");
}

#[test]
fn memory_rows_are_tags_not_signatures() {
    for input in [
        "Memset (Device)",
        "Memcpy HtoD (Pageable -> Device)",
        "Memcpy DtoD (Device -> Device)",
    ] {
        assert_keys(input, input, input);
    }
}

#[test]
fn return_type_template_and_parameters_go() {
    assert_keys(
        "void rmsnorm_kernel<bf16>(float*)",
        "rmsnorm_kernel",
        "rmsnorm_kernel",
    );
}

#[test]
fn whitespace_only_is_the_only_empty_key() {
    assert_keys("   ", "", "");
    assert_keys("", "", "");
}

#[test]
fn truncated_mangled_name_is_still_mangled_and_head_parsed() {
    let input = "_ZN5aiter37dynamic_per_group_scaled_quant_kernelIDF16bDB8_Li32ELi128ELb0ELi64ELb0EEEvPT0_P\u{2026}";
    assert!(is_mangled(input));
    let k = keys(input);
    assert_eq!(k.native, "aiter::dynamic_per_group_scaled_quant_kernel");
    assert!(k.truncated);
    assert!(k.mangled);
    assert_eq!(k.python, input.trim_end_matches('\u{2026}'));
    // A cut template or parameter list goes with the marker.
    assert_eq!(
        native_key("void aiter::fused_kernel<int, fl..."),
        "aiter::fused_kernel"
    );
    assert_eq!(native_key("aiter::k(int, flo\u{2026}"), "aiter::k");
    // Without a marker an unterminated list stays.
    assert_eq!(
        native_key("aiter::fused_kernel<int, fl"),
        "aiter::fused_kernel<int, fl"
    );
}

#[test]
fn non_void_return_type_of_a_vllm_kernel_goes() {
    let input = "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)";
    assert_keys(
        input,
        "vllm::fused_add_rms_norm_kernel",
        "vllm::fused_add_rms_norm_kernel",
    );
}

#[test]
fn msvc_anonymous_namespace_is_respelled() {
    assert_keys(
        "`anonymous namespace'::kernel",
        "(anonymous namespace)::kernel",
        "(anonymous namespace)::kernel",
    );
}

#[test]
fn clean_name_keeps_templates_and_parameters() {
    assert_eq!(
        clean_name("hipGraphLaunch->void foo<int>(int) [clone .cold]"),
        "foo<int>(int)"
    );
    assert_eq!(clean_name("void a->b"), "b");
}

#[test]
fn demangled_by_records_the_method() {
    assert_eq!(
        keys("_Z14rmsnorm_kernelPf").demangled_by,
        DemangledBy::Demangler
    );
    assert_eq!(keys("rmsnorm_kernel").demangled_by, DemangledBy::None);
    assert!(!keys("rmsnorm_kernel").mangled);
}
