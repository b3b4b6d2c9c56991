//! Search roots: explicit, from the `KERNLENS_SOURCE_ROOTS` value, and
//! discovered; normalised and de-duplicated (locate.md "Search roots").

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::discover::{self, DiscoveryEnv, FRAMEWORK_PACKAGES};
use crate::error::LocateError;
use crate::kind::has_runtime_marker;

/// Where a search root came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RootOrigin {
    /// Given to the builder (`--root`).
    Explicit,
    /// From the `KERNLENS_SOURCE_ROOTS` value.
    Env,
    /// Found by package discovery; the package name.
    Discovered(String),
}

/// One directory that is searched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SearchRoot {
    /// The canonical directory (JSON: lossy text, with `path_bytes` when it
    /// is not valid UTF-8).
    #[serde(flatten, serialize_with = "crate::path_json::required_path_with_bytes")]
    pub path: PathBuf,
    /// Where it came from (the first occurrence wins for duplicates).
    pub origin: RootOrigin,
    /// False when the path lies in a runtime-generated cache (locate.md "Source kind" rule 2):
    /// sources there are regenerated, not maintained.
    pub reusable: bool,
}

/// A root entry that was dropped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RootWarning {
    /// The entry as given.
    pub entry: String,
    /// Why it was dropped.
    pub message: String,
}

/// The inputs of root resolution, kept so `refresh()` can resolve again.
#[derive(Debug, Clone, Default)]
pub(crate) struct RootConfig {
    pub explicit: Vec<PathBuf>,
    pub env_value: Option<String>,
    pub discovery: Option<DiscoveryEnv>,
}

struct Candidate {
    given: String,
    path: PathBuf,
    origin: RootOrigin,
}

/// Resolves the configured sources into the final, ordered root set.
pub(crate) fn resolve(
    config: &RootConfig,
) -> Result<(Vec<SearchRoot>, Vec<RootWarning>), LocateError> {
    let mut warnings = Vec::new();
    let mut candidates = Vec::new();
    for p in &config.explicit {
        candidates.push(Candidate {
            given: p.display().to_string(),
            path: p.clone(),
            origin: RootOrigin::Explicit,
        });
    }
    if let Some(value) = &config.env_value {
        for entry in value.split(':') {
            if entry.is_empty() {
                continue;
            }
            if !Path::new(entry).is_absolute() {
                warnings.push(RootWarning {
                    entry: entry.to_owned(),
                    message: format!(
                        "KERNLENS_SOURCE_ROOTS entry '{entry}' is relative and was dropped"
                    ),
                });
                continue;
            }
            candidates.push(Candidate {
                given: entry.to_owned(),
                path: PathBuf::from(entry),
                origin: RootOrigin::Env,
            });
        }
    }
    if let Some(env) = &config.discovery {
        for found in discover::discover(env) {
            candidates.push(Candidate {
                given: found.path.display().to_string(),
                path: found.path,
                origin: RootOrigin::Discovered(found.package.to_owned()),
            });
        }
    }
    let mut roots: Vec<SearchRoot> = Vec::new();
    for c in candidates {
        let canonical = match std::fs::canonicalize(&c.path) {
            Ok(p) if p.is_dir() => p,
            Ok(_) => {
                warnings.push(RootWarning {
                    message: format!("search root '{}' is not a directory", c.given),
                    entry: c.given,
                });
                continue;
            }
            Err(e) => {
                warnings.push(RootWarning {
                    message: format!("search root '{}' was dropped: {e}", c.given),
                    entry: c.given,
                });
                continue;
            }
        };
        if roots.iter().any(|r| r.path == canonical) {
            continue;
        }
        let reusable = !has_runtime_marker(&format!("{}/", canonical.display()));
        roots.push(SearchRoot {
            path: canonical,
            origin: c.origin,
            reusable,
        });
    }
    if roots.is_empty() {
        return Err(LocateError::NoSearchRoots {
            considered: considered(config),
        });
    }
    Ok((roots, warnings))
}

/// One phrase per source for the `NoSearchRoots` message.
fn considered(config: &RootConfig) -> Vec<String> {
    let explicit = if config.explicit.is_empty() {
        "no --root given".to_owned()
    } else {
        format!(
            "--root {} not usable",
            config
                .explicit
                .iter()
                .map(|p| format!("'{}'", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let env = match config.env_value.as_deref() {
        None => "KERNLENS_SOURCE_ROOTS unset".to_owned(),
        Some(v) if v.split(':').all(str::is_empty) => "KERNLENS_SOURCE_ROOTS empty".to_owned(),
        Some(v) => format!("KERNLENS_SOURCE_ROOTS '{v}' gave no directory"),
    };
    let discovery = if config.discovery.is_some() {
        format!("discovery found none of {}", FRAMEWORK_PACKAGES.join(", "))
    } else {
        "discovery off".to_owned()
    };
    vec![explicit, env, discovery]
}
