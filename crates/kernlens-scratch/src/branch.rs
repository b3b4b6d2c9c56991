//! Branch names for scratch baselines, and the checks a caller-given branch must pass.

use crate::error::Error;
use crate::location::dash_outside;
use crate::policy::ScratchPolicy;

fn component(raw: &str, fallback: &str) -> String {
    let dashed = dash_outside(raw, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let cut: String = dashed.trim_matches('-').chars().take(48).collect();
    let cut = cut.trim_end_matches('-');
    if cut.is_empty() {
        fallback.to_owned()
    } else {
        cut.to_owned()
    }
}

/// `kernlens/<session>/<stem>-<12 lower-case hex>`, with each component sanitised to
/// `[A-Za-z0-9_-]`, cut at 48 characters, and falling back to `session` / `kernel` when empty.
pub fn branch_name(session: &str, kernel_stem: &str, rng: &mut fastrand::Rng) -> String {
    format!(
        "kernlens/{}/{}-{:012x}",
        component(session, "session"),
        component(kernel_stem, "kernel"),
        rng.u64(..) & 0xffff_ffff_ffff
    )
}

/// Why git itself refuses `short` as a branch name although `refs/heads/<short>` is a valid
/// ref: `HEAD` and `@` name the current commit, and a leading `-` reads as an option to every
/// git command that takes the branch.
fn git_refuses_as_branch(short: &str) -> Option<&'static str> {
    if short == "HEAD" {
        Some("'HEAD' names the current commit, not a branch")
    } else if short == "@" {
        Some("'@' is git's shorthand for HEAD")
    } else if short.starts_with('-') {
        Some("a branch name must not start with '-'")
    } else {
        None
    }
}

/// Check a caller-given branch: strip `refs/heads/`, refuse empty and protected names, names
/// git refuses as branches (`HEAD`, `@`, a leading `-`), and anything that is not a valid ref
/// name by git's ref-format rules (gix-validate). Returns the short name.
pub fn check_branch(branch: &str, policy: &ScratchPolicy) -> Result<String, Error> {
    let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    if short.is_empty() || policy.protected_branches.iter().any(|p| p == short) {
        return Err(Error::ProtectedBranch {
            name: short.to_owned(),
        });
    }
    if let Some(why) = git_refuses_as_branch(short) {
        return Err(Error::InvalidBranch {
            name: branch.to_owned(),
            why: why.to_owned(),
        });
    }
    let full = format!("refs/heads/{short}");
    if let Err(e) = gix::validate::reference::name(full.as_bytes().into()) {
        return Err(Error::InvalidBranch {
            name: branch.to_owned(),
            why: e.to_string(),
        });
    }
    Ok(short.to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn protected_and_empty_branches_are_refused() {
        let p = ScratchPolicy::default();
        for b in ["main", "master", "refs/heads/main", "", "refs/heads/"] {
            let err = check_branch(b, &p).unwrap_err();
            assert!(err.is_refusal(), "{b:?}");
        }
    }

    #[test]
    fn invalid_ref_names_are_invalid_branch() {
        let p = ScratchPolicy::default();
        for b in [
            "a..b",
            "x y",
            "x~1",
            "end.lock",
            "a//b",
            "-x:y",
            "HEAD",
            "refs/heads/HEAD",
            "@",
            "-x",
            "--force",
            "a@{1}",
            "a/.b",
            "a\\b",
        ] {
            assert!(
                matches!(check_branch(b, &p), Err(Error::InvalidBranch { .. })),
                "{b:?}"
            );
        }
        assert_eq!(
            check_branch("refs/heads/kernlens/s/k-1", &p).unwrap(),
            "kernlens/s/k-1"
        );
    }

    #[test]
    fn generated_names_have_the_documented_shape() {
        let mut rng = fastrand::Rng::with_seed(7);
        let name = branch_name("sess ion", "my.kernel", &mut rng);
        let (head, hex) = name.rsplit_once('-').unwrap();
        assert_eq!(head, "kernlens/sess-ion/my-kernel");
        assert_eq!(hex.len(), 12);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        let fallback = branch_name("///", "...", &mut rng);
        assert!(fallback.starts_with("kernlens/session/kernel-"));
    }

    proptest::proptest! {
        #[test]
        fn generated_names_always_validate_and_are_never_protected(session in ".{0,80}", stem in ".{0,80}", seed in 0u64..1000) {
            let mut rng = fastrand::Rng::with_seed(seed);
            let name = branch_name(&session, &stem, &mut rng);
            let checked = check_branch(&name, &ScratchPolicy::default());
            proptest::prop_assert!(checked.is_ok(), "{} -> {:?}", name, checked);
            let parts: Vec<&str> = name.split('/').collect();
            proptest::prop_assert!(parts[1].chars().count() <= 48);
        }
    }
}
