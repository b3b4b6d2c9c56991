//! Laws of the keyword plans and scanners on arbitrary input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kernlens_locate::{
    KindContext, LocateOptions, Locator, NameShape, core_of, cores_match, keywords_for,
    scan_python, source_kind_for,
};
use proptest::prelude::*;

proptest! {
    #[test]
    fn keyword_plans_respect_their_bounds(name in "\\PC{0,120}") {
        let plan = keywords_for(&name);
        prop_assert!(plan.primary.len() <= 3);
        prop_assert!(plan.subwindows.len() <= 6);
        prop_assert!(plan.prefixes.len() <= 8);
        // Only a C++ identifier keeps a trailing `_` (rule 2i).
        prop_assert!(plan.primary.iter().all(|k| k.chars().count() >= 5));
        prop_assert!(plan.primary.iter().all(|k| !k.ends_with('_') || plan.shape == NameShape::Cxx));
        prop_assert!(plan.subwindows.iter().chain(&plan.prefixes).all(|k| k.chars().count() >= 6));
        // Tried longest first.
        prop_assert!(plan.subwindows.windows(2).all(|w| w[0].len() >= w[1].len()));
        prop_assert!(plan.prefixes.windows(2).all(|w| w[0].len() > w[1].len()));
        // A refused name has nothing to search, and a searched one has something.
        prop_assert_eq!(plan.refusal.is_some(), plan.all().next().is_none());
    }

    #[test]
    fn kernel_like_names_give_prefixes_of_their_base(
        segs in proptest::collection::vec("[a-z][a-z0-9]{1,6}", 3..9)
    ) {
        let name = segs.join("_");
        let plan = keywords_for(&name);
        prop_assert_eq!(plan.primary.first(), Some(&name));
        for p in &plan.prefixes {
            prop_assert!(name.starts_with(p.as_str()));
        }
        for w in &plan.subwindows {
            prop_assert!(name.ends_with(w.as_str()) || name.contains(w.as_str()));
        }
    }

    #[test]
    fn python_scanner_is_total_and_lines_are_in_range(text in "\\PC{0,400}") {
        let s = scan_python(&text);
        let lines = text.split('\n').count().max(1);
        prop_assert!(s.defs.iter().all(|d| d.line >= 1 && d.line <= lines && d.end_line >= d.line));
        prop_assert!(s.strings.iter().all(|x| x.start <= x.end && x.end <= text.len()));
    }

    #[test]
    fn cores_match_is_symmetric(a in "[a-z_0-9]{0,20}", b in "[a-z_0-9]{0,20}") {
        prop_assert_eq!(cores_match(&core_of(&a), &core_of(&b)), cores_match(&core_of(&b), &core_of(&a)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any native or Python text in a real file gives an answer, never a panic,
    /// and every path it names is the file that was written.
    #[test]
    fn locating_in_arbitrary_files_never_invents_a_path(
        text in "[a-z_{}()<>;:*&#\"' \n/]{0,300}",
        ext in prop::sample::select(vec!["py", "cu", "cpp", "h"]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join(format!("some_probe_kernel.{ext}"));
        std::fs::write(&file, format!("{text}\nsome_probe_kernel\n{text}")).unwrap();
        let mut l = Locator::builder().root(&root).build().unwrap();
        let r = l.locate("some_probe_kernel", &LocateOptions::default());
        // Found or not (the probe may sit in a comment or only be mentioned),
        // every path named is the file written, and `found` means proven.
        prop_assert_eq!(r.found, r.confidence.proves());
        prop_assert_eq!(r.found, r.path.is_some());
        prop_assert!(r.path.iter().all(|p| p == &file));
        prop_assert!(r.candidates.iter().all(|c| c.path == file));
        prop_assert!(source_kind_for("some_probe_kernel", Some(&file), &KindContext::default())
            != kernlens_locate::SourceKind::Unknown);
    }
}

const TOKENS: &[&str] = &[
    "namespace",
    "ns",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ";",
    ",",
    ":",
    "::",
    "#define",
    "\\\n",
    "\n",
    "template",
    "typename",
    "K",
    "K{}",
    "__global__",
    "void",
    "extern",
    "\"C\"",
    "some_probe_kernel",
    "SOME_NS",
    "##",
    "=",
    "+=",
    "f\"",
    "\"",
    "'''",
    "#",
    "def",
    "class",
    "SomeProbe",
    "@triton.jit",
    "repr=",
    "[",
    "]",
    "_BLOCK_",
    "64",
    "async_compile.triton(",
    "struct",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Token soup shaped like the rules' inputs (namespaces, macros,
    /// templates, trampolines, composing sites, repr decorators, classes)
    /// never panics any rule, and every path named is the file written.
    #[test]
    fn rule_analyses_are_total_on_arbitrary_token_soup(
        tokens in proptest::collection::vec(prop::sample::select(TOKENS), 0..80),
        ext in prop::sample::select(vec!["py", "cu", "h"]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join(format!("probe.{ext}"));
        std::fs::write(&file, tokens.join(" ")).unwrap();
        let mut l = Locator::builder().root(&root).build().unwrap();
        let names = [
            "void ns::some_probe_kernel<K>(int)",
            "_ZN2ns17some_probe_kernelEv",
            "some_probe_kernel_BLOCK_64",
            "kernel_cutlass_kernel_probeSomeProbe_object_at__0",
            "some_probe_kernel",
        ];
        for r in l.locate_many(&names, &LocateOptions::default()) {
            prop_assert_eq!(r.found, r.confidence.proves());
            prop_assert!(r.path.iter().all(|p| p == &file));
            prop_assert!(r.candidates.iter().all(|c| c.path == file));
        }
    }
}
