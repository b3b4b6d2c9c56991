//! The precision rules (issue 21, rules 2a–2i; docs/design/locate.md) on the
//! synthetic cases under `fixtures/locate/rules/<rule>/<case>/`.
//!
//! Every case has two trees, `alpha/` and `beta/`, and is built twice: once
//! as written and once with the two directory names swapped. Path order
//! (root order, depth, byte-wise path) therefore cannot decide a case: the
//! expected file must win in both builds because of what it holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::copy_tree;

use kernlens_locate::{Confidence, LocateOptions, LocateResult, Locator};

fn case_dir(rule: &str, case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/locate/rules")
        .join(rule)
        .join(case)
}

/// What a case must answer.
enum Expect {
    /// Found, with this confidence, in this file (`alpha/…` or `beta/…`).
    Found(Confidence, &'static str),
    /// Not found, reason `mention_only`, this file the only candidate.
    MentionOnly(&'static str),
    /// Not found and no file is evidence at all.
    Nothing,
    /// Not found (any file may be a mention-only candidate).
    NotFound,
}

fn swap(rel: &str, swapped: bool) -> String {
    if !swapped {
        return rel.to_owned();
    }
    match rel.split_once('/') {
        Some(("alpha", rest)) => format!("beta/{rest}"),
        Some(("beta", rest)) => format!("alpha/{rest}"),
        _ => rel.to_owned(),
    }
}

fn rel(p: &Path, root: &Path) -> String {
    p.strip_prefix(root).unwrap().display().to_string()
}

/// Builds the case twice (as written, then with `alpha`/`beta` swapped) and
/// checks `name` against `expect` in both.
fn check(rule: &str, case: &str, name: &str, expect: Expect) {
    let dir = case_dir(rule, case);
    for swapped in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (a, b) = if swapped {
            ("beta", "alpha")
        } else {
            ("alpha", "beta")
        };
        copy_tree(&dir.join("alpha"), &root.join(a));
        copy_tree(&dir.join("beta"), &root.join(b));
        let mut l = Locator::builder().root(&root).build().unwrap();
        let r: LocateResult = l.locate(name, &LocateOptions::default());
        let ctx = format!("{rule}/{case} swapped={swapped}: {r:#?}");
        let cands: Vec<String> = r.candidates.iter().map(|c| rel(&c.path, &root)).collect();
        match &expect {
            Expect::Found(confidence, file) => {
                assert!(r.found, "{ctx}");
                assert_eq!(r.confidence, *confidence, "{ctx}");
                assert_eq!(
                    rel(r.path.as_ref().unwrap(), &root),
                    swap(file, swapped),
                    "{ctx}"
                );
            }
            Expect::MentionOnly(file) => {
                assert!(!r.found, "{ctx}");
                assert_eq!(r.reason.map(|r| r.as_str()), Some("mention_only"), "{ctx}");
                assert_eq!(cands, [swap(file, swapped)], "{ctx}");
            }
            Expect::NotFound => {
                assert!(!r.found, "{ctx}");
                assert!(r.path.is_none(), "{ctx}");
            }
            Expect::Nothing => {
                assert!(!r.found, "{ctx}");
                assert!(r.candidates.is_empty(), "{ctx}");
                assert_eq!(r.confidence, Confidence::None, "{ctx}");
            }
        }
    }
}

// Rule 2a: a hit counts only as a whole identifier; comments and
// docstrings are no evidence.

#[test]
fn a_name_inside_a_longer_identifier_is_no_evidence() {
    check(
        "2a_whole_identifier",
        "inside_longer_identifier",
        "foo_fwd",
        Expect::MentionOnly("beta/ops/dispatch.py"),
    );
}

#[test]
fn a_def_of_the_next_index_is_not_the_name() {
    check(
        "2a_whole_identifier",
        "index_suffix",
        "foo_kernel",
        Expect::Nothing,
    );
}

#[test]
fn comments_and_docstrings_are_no_evidence_but_a_string_is_a_mention() {
    check(
        "2a_whole_identifier",
        "comment_and_docstring",
        "bar_kernel",
        Expect::MentionOnly("beta/pkg/table.py"),
    );
}

// Rule 2b: the name's shape decides the language; a C++ name's qualifiers
// must match the definition's enclosing namespaces.

#[test]
fn a_mangled_name_is_defined_only_in_native_files() {
    check(
        "2b_language",
        "mangled_not_python",
        "_ZN5mylib12topk_gate_fwEPfi",
        Expect::Found(Confidence::Definition, "beta/csrc/kernels.cu"),
    );
}

#[test]
fn a_bare_name_is_defined_only_in_python() {
    check(
        "2b_language",
        "bare_not_native",
        "rms_gate_fw",
        Expect::Found(Confidence::Definition, "beta/pkg/ops.py"),
    );
}

#[test]
fn the_definitions_namespace_must_match_the_names_qualifiers() {
    check(
        "2b_language",
        "namespace_must_match",
        "void mylib::(anonymous namespace)::scale_rows<float>(float*, int)",
        Expect::Found(Confidence::Definition, "beta/b/kernels.cu"),
    );
    // The anonymous namespace is part of the scope: without it neither
    // definition is this kernel's.
    check(
        "2b_language",
        "namespace_must_match",
        "void mylib::scale_rows<float>(float*, int)",
        Expect::NotFound,
    );
}

#[test]
fn a_global_name_is_not_a_definition_inside_a_namespace() {
    check(
        "2b_language",
        "global_name_not_in_namespace",
        "scale_cols(float*, int)",
        Expect::Found(Confidence::Definition, "beta/b/k.cu"),
    );
}

// Rule 2c: a composing site's template must match the whole name; the
// literal characters matched rank the sites.

#[test]
fn an_error_message_starting_with_the_head_is_no_composing_site() {
    check(
        "2c_composed",
        "whole_name",
        "moe_gemm_a8w8_bf16_t64",
        Expect::Found(Confidence::Composed, "beta/k/build.py"),
    );
}

#[test]
fn augmented_assignments_extend_the_template() {
    check(
        "2c_composed",
        "augmented",
        "attn_fwd_h128_causal_v2",
        Expect::Found(Confidence::Composed, "alpha/x/attn.py"),
    );
    check(
        "2c_composed",
        "augmented",
        "attn_fwd_h128_v2",
        Expect::Found(Confidence::Composed, "alpha/x/attn.py"),
    );
}

#[test]
fn more_literal_characters_win_between_matching_templates() {
    check(
        "2c_composed",
        "more_literal_chars",
        "gemm_q_bf16_m128",
        Expect::Found(Confidence::Composed, "alpha/g/gen.py"),
    );
}

// Rule 2d: no sub-window or prefix guessing for C++ or inductor names.

#[test]
fn a_cxx_name_never_resolves_to_a_stub_sharing_its_last_segments() {
    check(
        "2d_no_guessing",
        "dispatch_stub",
        "void at::native::vectorized_gather_kernel<float>(int, float*)",
        Expect::Nothing,
    );
}

#[test]
fn an_inductor_index_is_part_of_the_identity() {
    check(
        "2d_no_guessing",
        "inductor_sibling",
        "triton_poi_fused_add_mul_2",
        Expect::Found(Confidence::Definition, "beta/c2/cxyz.py"),
    );
    check(
        "2d_no_guessing",
        "inductor_sibling",
        "triton_poi_fused_add_mul_3",
        Expect::Nothing,
    );
}

// Rule 2i: equal-strength definitions.

#[test]
fn the_exact_spelling_beats_the_underscore_prefixed_one() {
    check(
        "2i_equal_strength",
        "exact_before_underscored",
        "pack_rows_kernel",
        Expect::Found(Confidence::Definition, "beta/p/other.py"),
    );
}

#[test]
fn a_cxx_names_trailing_underscore_is_kept() {
    check(
        "2i_equal_strength",
        "trailing_underscore",
        "void k_sml_<float>(float*)",
        Expect::Found(Confidence::Definition, "beta/b/kern.cu"),
    );
}

// Rule 2e: Triton `repr=` names.

#[test]
fn a_suffixed_name_is_the_repr_def_not_a_plain_jit_twin() {
    check(
        "2e_triton_repr",
        "repr_keys",
        "_topk_kernel_M_64_K_8_BLOCK_128",
        Expect::Found(Confidence::Definition, "alpha/ops/topk.py"),
    );
}

#[test]
fn a_bare_name_is_never_the_def_whose_repr_always_suffixes() {
    check(
        "2e_triton_repr",
        "repr_keys",
        "_topk_kernel",
        Expect::Found(Confidence::Definition, "beta/ops/topk_kernel.py"),
    );
}

#[test]
fn the_key_list_picks_between_same_named_repr_defs() {
    check(
        "2e_triton_repr",
        "key_list",
        "_mm_kernel_SPLIT_K_4",
        Expect::Found(Confidence::Definition, "beta/k/mm_split.py"),
    );
    check(
        "2e_triton_repr",
        "key_list",
        "_mm_kernel_BLOCK_M_64_BLOCK_N_32",
        Expect::Found(Confidence::Definition, "alpha/k/mm_tiles.py"),
    );
}

// Rule 2h: generic trampolines.

#[test]
fn a_trampoline_answers_with_the_class_bound_to_its_type_parameter() {
    check(
        "2h_trampoline",
        "entry",
        "void lib::kentry<1, lib::FwdKernel<lib::Pipe<float> >, int>(int)",
        Expect::Found(Confidence::Definition, "beta/include/fwd_kernel.hpp"),
    );
}

#[test]
fn a_trampoline_whose_bound_class_is_absent_is_not_found() {
    check(
        "2h_trampoline",
        "entry",
        "void lib::kentry<1, lib::BwdKernel<float>, int>(int)",
        Expect::NotFound,
    );
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&case_dir("2h_trampoline", "entry"), dir.path());
    let mut l = Locator::builder().root(dir.path()).build().unwrap();
    let r = l.locate(
        "void lib::kentry<1, lib::BwdKernel<float>, int>(int)",
        &LocateOptions::default(),
    );
    assert_eq!(r.reason.map(|r| r.as_str()), Some("trampoline_unbound"));
    assert!(r.candidates[0].path.ends_with("alpha/include/entry.hpp"));
}

#[test]
fn a_kernel_calling_a_value_functor_is_not_a_trampoline() {
    check(
        "2h_trampoline",
        "entry",
        "void lib::apply_kernel<lib::AddOp>(int, lib::AddOp)",
        Expect::Found(Confidence::Definition, "alpha/include/entry.hpp"),
    );
}

// Rule 2f: CuTe-DSL symbols.

#[test]
fn a_cute_symbol_is_its_class_in_the_module_its_text_names() {
    // The module text ends `pkgnormkernelsrmsnorm`: beta's copy, not alpha's
    // older module, its lazy re-export or the C++ struct of the same name.
    check(
        "2f_cute_dsl",
        "class_and_module",
        "kernel_cutlass_kernel_pkgnormkernelsrmsnormRMSNormKernel_object_at__tensor000o11101213_0",
        Expect::Found(Confidence::Definition, "beta/pkg/norm/kernels/rmsnorm.py"),
    );
}

#[test]
fn a_subclass_inheriting_the_kernel_method_is_the_answer() {
    check(
        "2f_cute_dsl",
        "inherited",
        "kernel_cutlass_kernel_pkgattnfwd_sm120AttnFwdSm120_object_at__tensor000o1110_0",
        Expect::Found(Confidence::Definition, "beta/pkg/attn/fwd_sm120.py"),
    );
}

#[test]
fn a_template_instance_needs_a_template_definition_and_the_reverse() {
    check(
        "2i_equal_strength",
        "template_instance",
        "_Z15fused_bias_geluI6__halfEvPT_PKS1_ii",
        Expect::Found(Confidence::Definition, "beta/b/gelu.cu"),
    );
    check(
        "2i_equal_strength",
        "template_instance",
        "fused_bias_gelu(float*, float const*, int, int, int)",
        Expect::Found(Confidence::Definition, "alpha/a/fused_bias_gelu.cu"),
    );
}

// Rule 2g: macro-generated kernels.

#[test]
fn a_kernel_macros_invocation_with_the_spelling_is_a_kernel_definition() {
    check(
        "2g_macro_kernels",
        "define_kernel",
        "void attn::attn_fwd_kernel<attn::Traits<64>, true>(attn::Params)",
        Expect::Found(Confidence::Definition, "alpha/src/launch_template.h"),
    );
    // Its namespace still has to match.
    check(
        "2g_macro_kernels",
        "define_kernel",
        "void other::attn_fwd_kernel<other::Traits<64>, true>(other::Params)",
        Expect::NotFound,
    );
}

#[test]
fn a_launch_site_alias_makes_the_callee_the_definition() {
    check(
        "2e_triton_repr",
        "launch_site_rename",
        "_gemm_bf16_reduce_kernel_BLOCK_M_32_SPLIT_4",
        Expect::Found(Confidence::Definition, "alpha/ops/common/reduce.py"),
    );
}

#[test]
fn the_inductor_module_the_wrapper_embeds_beats_a_benchmark_copy() {
    check(
        "2i_equal_strength",
        "inductor_embedded",
        "triton_poi_fused_add_3",
        Expect::Found(Confidence::Definition, "beta/cr/creal.py"),
    );
}

#[test]
fn a_namespace_named_by_a_macro_is_resolved_through_its_define() {
    check(
        "2b_language",
        "macro_namespace",
        "scale_all(float*)",
        Expect::NotFound,
    );
    check(
        "2b_language",
        "macro_namespace",
        "kn::scale_all(float*)",
        Expect::Found(Confidence::Definition, "alpha/src/kern.cuh"),
    );
    check(
        "2b_language",
        "macro_namespace",
        "other::scale_all(float*)",
        Expect::Found(Confidence::Definition, "beta/src/scale_all.cu"),
    );
    check(
        "2b_language",
        "macro_namespace",
        "pytorch_kn::scale_all(float*)",
        Expect::NotFound,
    );
}

#[test]
fn a_bare_name_is_native_only_through_c_linkage() {
    check(
        "2b_language",
        "extern_c",
        "fused_attn_9f3a",
        Expect::Found(Confidence::Definition, "alpha/csrc/fused_attn_kernel.cu"),
    );
    check(
        "2b_language",
        "extern_c",
        "plain_c_kernel",
        Expect::Found(Confidence::Definition, "beta/csrc/block.cu"),
    );
}
