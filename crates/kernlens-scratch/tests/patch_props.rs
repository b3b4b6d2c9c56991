//! Laws of the patch writer, with `git apply` as the oracle: for any two texts (any mix of
//! repeated lines, CRLF endings, a missing final newline), the unified hunks we write turn the
//! first into the second. Skips when the git CLI is not installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_scratch::patch::{base85, unified_hunks};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(prop_oneof!["a", "b", "c", "dd", "", "x y", "é"], 0..30),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf, final_newline)| {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut s = lines.join(eol);
            if final_newline && !s.is_empty() {
                s.push_str(eol);
            }
            s.into_bytes()
        })
}

fn decode85(text: &[u8]) -> Vec<u8> {
    const A: &[u8] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
    let mut out = Vec::new();
    for group in text.chunks(5) {
        let mut acc: u64 = 0;
        for &c in group {
            acc = acc * 85 + A.iter().position(|&a| a == c).unwrap() as u64;
        }
        out.extend_from_slice(&(acc as u32).to_be_bytes());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn unified_hunks_applied_by_git_reproduce_the_new_text(old in text(), new in text()) {
        prop_assume!(old != new);
        if !git_available() {
            return Ok(());
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), &old).unwrap();
        let mut patch = b"diff --git a/f b/f\n".to_vec();
        patch.extend_from_slice(b"--- a/f\n+++ b/f\n");
        unified_hunks(&old, &new, &mut patch);
        std::fs::write(tmp.path().join("p"), &patch).unwrap();
        let out = std::process::Command::new("git")
            .args(["apply", "p"])
            .current_dir(tmp.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        prop_assert!(out.status.success(), "git apply: {}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&patch));
        prop_assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), new);
    }

    #[test]
    fn base85_groups_decode_back(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut decoded = decode85(&base85(&data));
        decoded.truncate(data.len());
        prop_assert_eq!(decoded, data);
    }
}
