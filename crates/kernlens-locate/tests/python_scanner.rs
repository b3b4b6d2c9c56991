//! The Python scanner's acceptance cases (locate.md "Source kind: The Python scanner", P1–P12), checked
//! through `scan_python` and, for the kind outcome, `source_kind_for` on a
//! real file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kernlens_locate::{KindContext, SourceKind, scan_python, source_kind_for};

fn kind_of(text: &str, name: &str) -> SourceKind {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.py");
    std::fs::write(&path, text).unwrap();
    source_kind_for(name, Some(&path), &KindContext::default())
}

fn triton_def_line(text: &str, name: &str) -> Option<usize> {
    scan_python(text)
        .defs
        .iter()
        .find(|d| d.name == name && d.triton)
        .map(|d| d.line)
}

#[test]
fn jit_decorated_def_is_triton_at_its_def_line() {
    let t = "@triton.jit\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(2));
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Triton);
}

#[test]
fn autotune_with_multiline_arguments_is_triton() {
    let t = "@triton.autotune(configs=[cfg(1),\n    cfg(2)],\n    key=[\"M\"])\n@triton.jit\ndef k_fwd(\n    x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(5));
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Triton);
}

#[test]
fn heuristics_with_a_lambda_is_triton() {
    let t = "@triton.heuristics({\"E\": lambda a: a[\"n\"] % 2 == 0})\n@triton.jit\ndef k_fwd(x):\n    pass\n";
    assert!(triton_def_line(t, "k_fwd").is_some());
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Triton);
}

#[test]
fn bare_jit_after_from_triton_import_is_triton() {
    let t = "from triton import jit\n@jit\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(3));
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Triton);
}

#[test]
fn def_inside_a_docstring_is_not_a_def() {
    let t = "\"\"\"\n@triton.jit\ndef k_fwd(x):\n\"\"\"\n";
    assert!(scan_python(t).defs.is_empty());
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Python);
}

#[test]
fn commented_decorator_leaves_a_plain_def() {
    let t = "# @triton.jit\ndef k_fwd(x):\n    pass\n";
    let s = scan_python(t);
    assert_eq!(s.defs.len(), 1);
    assert!(!s.defs[0].triton);
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Python);
}

#[test]
fn method_in_a_class_is_triton() {
    let t = "class K:\n    @triton.jit\n    def k_fwd(self):\n        pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(3));
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Triton);
}

#[test]
fn blank_and_comment_lines_between_decorator_and_def_keep_it() {
    let t = "@triton.jit(do_not_specialize=[\"n\"])\n\n# note\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(4));
}

#[test]
fn torch_jit_script_is_not_triton() {
    let t = "@torch.jit.script\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), None);
    assert_eq!(kind_of(t, "k_fwd"), SourceKind::Python);
}

#[test]
fn odd_fstring_breaks_one_line_only() {
    let t = "s = f\"{d[\"a\"]}\"\n@triton.jit\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), Some(3));
}

#[test]
fn segment_run_matches_a_specialised_name() {
    let t = "@triton.jit\ndef _gemm_a16_w16_kernel(x):\n    pass\n";
    assert_eq!(
        kind_of(t, "_gemm_a16_w16_kernel_BLOCK_SIZE_M_32"),
        SourceKind::Triton
    );
}

#[test]
fn a_files_other_triton_defs_are_never_assumed_to_be_the_kernel() {
    let t = "@triton.jit\ndef _first_kernel(x):\n    pass\n\n@triton.jit\ndef _second_kernel(x):\n    pass\n";
    assert_eq!(kind_of(t, "_absent_kernel"), SourceKind::Python);
}

#[test]
fn triton_heuristics_module_decorator_is_not_triton() {
    let t = "@triton_heuristics.pointwise(size_hints=[16])\ndef k_fwd(x):\n    pass\n";
    assert_eq!(triton_def_line(t, "k_fwd"), None);
}

#[test]
fn column_zero_assignments_count_but_comparisons_and_keywords_do_not() {
    let t = "k_fwd = make(1)\nk_ann: int = 3\nk_cmp == 4\nf(k_kw=5)\n    k_ind = 6\n";
    let names: Vec<String> = scan_python(t)
        .assignments
        .iter()
        .map(|a| a.name.clone())
        .collect();
    assert_eq!(names, ["k_fwd", "k_ann"]);
}

#[test]
fn enclosing_def_spans_its_indented_body() {
    let t = "def outer(a):\n    x = 1\n\n    def inner():\n        return f\"name_{a}\"\n    return inner\n\ny = 2\n";
    let s = scan_python(t);
    assert_eq!(s.enclosing_def(5).map(|d| d.name.as_str()), Some("inner"));
    assert_eq!(s.enclosing_def(6).map(|d| d.name.as_str()), Some("outer"));
    assert_eq!(s.enclosing_def(8), None);
    let f = s.strings.iter().find(|x| x.fstring).unwrap();
    assert_eq!(&t[f.start..f.end], "name_{a}");
}

/// A lone CR ends a line, as Python reads it (found by fuzzing: the scanner used to drop
/// it and join `ab` and `cd` into a def name that is not in the file).
#[test]
fn a_lone_carriage_return_ends_the_line() {
    let syms = scan_python("def ab\rcd(x):\n    pass\n");
    assert!(
        syms.defs.iter().all(|d| d.name != "abcd"),
        "{:?}",
        syms.defs
    );
    let syms = scan_python("x = 1\r@triton.jit\rdef k(x):\r    pass\r");
    let d = syms.defs.iter().find(|d| d.name == "k").unwrap();
    assert_eq!((d.line, d.triton), (3, true));
    // CRLF keeps working as one line end.
    let syms = scan_python("x = 1\r\n@triton.jit\r\ndef k(x):\r\n    pass\r\n");
    assert_eq!(
        syms.defs
            .iter()
            .find(|d| d.name == "k")
            .map(|d| (d.line, d.triton)),
        Some((3, true))
    );
}
