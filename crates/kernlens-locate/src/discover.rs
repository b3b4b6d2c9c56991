//! Discovery of installed framework packages without running Python (locate.md "Search roots: Sources, in this order"):
//! site directories are found from environment values handed in by the
//! caller, and `.pth` files are read as data, never executed.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The packages discovery looks for. Anything else (`torch`, `triton`)
/// must come from an explicit root: a whole site directory would drag in
/// every dependency.
pub const FRAMEWORK_PACKAGES: &[&str] = &[
    "aiter",
    "aiter_meta",
    "sglang",
    "sgl_kernel",
    "vllm",
    "atom",
    "xfuser",
    "flydsl",
    "triton_kernels",
];

/// Site directories below a system prefix, tried in this order; `python3*`
/// matches any directory entry starting with `python3`.
const SYSTEM_SITE_PATTERNS: &[&str] = &[
    "usr/local/lib/python3*/site-packages",
    "usr/local/lib/python3*/dist-packages",
    "usr/lib/python3/dist-packages",
    "opt/venv/lib/python3*/site-packages",
    "opt/conda/lib/python3*/site-packages",
];

/// What discovery may look at, captured from the process at the CLI edge (or
/// built from a temp dir in tests): the library itself reads no environment.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DiscoveryEnv {
    /// Environment values by name; `VIRTUAL_ENV`, `CONDA_PREFIX` and
    /// `PYTHONPATH` are used.
    pub vars: HashMap<String, String>,
    /// The `PATH` entries, in order.
    pub path_dirs: Vec<PathBuf>,
    /// The home directory (for `~/.local/lib/python3*/site-packages`).
    pub home: Option<PathBuf>,
    /// Prefixes under which the fixed system site directories are tried
    /// (`/` in a real process; a temp dir or nothing in tests).
    pub system_prefixes: Vec<PathBuf>,
}

impl DiscoveryEnv {
    /// An environment with nothing in it: discovery finds nothing.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Captures the real process environment: `VIRTUAL_ENV`, `CONDA_PREFIX`,
    /// `PYTHONPATH`, `PATH` and `HOME`, with `/` as the system prefix. Meant
    /// for a program's edge (the CLI); libraries should receive a value.
    pub fn from_process() -> Self {
        let mut vars = HashMap::new();
        for key in ["VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH"] {
            if let Some(value) = std::env::var_os(key) {
                vars.insert(key.to_owned(), value.to_string_lossy().into_owned());
            }
        }
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        DiscoveryEnv {
            vars,
            path_dirs,
            home: std::env::var_os("HOME").map(PathBuf::from),
            system_prefixes: vec![PathBuf::from("/")],
        }
    }

    /// Sets one environment value (builder style, for tests and embedders).
    pub fn var(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(key.into(), value.into());
        self
    }

    /// The same environment with these `PATH` entries.
    pub fn with_path_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.path_dirs = dirs;
        self
    }

    /// The same environment with this home directory.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The same environment trying the fixed system site directories under these prefixes.
    pub fn with_system_prefixes(mut self, prefixes: Vec<PathBuf>) -> Self {
        self.system_prefixes = prefixes;
        self
    }
}

/// A package directory found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub path: PathBuf,
    pub package: &'static str,
}

/// The site directories of locate.md "Search roots: Sources, in this order", in order (duplicates are harmless: roots
/// are de-duplicated later).
pub(crate) fn site_dirs(env: &DiscoveryEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = env.vars.get(var).filter(|v| !v.is_empty()) {
            out.extend(expand(
                &Path::new(prefix).join("lib/python3*/site-packages"),
            ));
        }
    }
    if let Some(bin) = first_python(&env.path_dirs) {
        // A real interpreter's sibling lib/; a shell shim (pyenv) has none.
        if let Some(prefix) = bin.parent().and_then(Path::parent) {
            out.extend(expand(&prefix.join("lib/python3*/site-packages")));
        }
    }
    for prefix in &env.system_prefixes {
        for pattern in SYSTEM_SITE_PATTERNS {
            out.extend(expand(&prefix.join(pattern)));
        }
    }
    if let Some(home) = &env.home {
        out.extend(expand(&home.join(".local/lib/python3*/site-packages")));
    }
    if let Some(pp) = env.vars.get("PYTHONPATH") {
        for entry in pp.split(':') {
            let p = Path::new(entry);
            if p.is_absolute() && p.is_dir() {
                out.push(p.to_path_buf());
            }
        }
    }
    out
}

/// The first `python3`, then `python`, on `PATH`, with symlinks followed.
/// The file is only resolved, never run.
fn first_python(path_dirs: &[PathBuf]) -> Option<PathBuf> {
    for exe in ["python3", "python"] {
        for dir in path_dirs {
            let candidate = dir.join(exe);
            if candidate.is_file() {
                return fs::canonicalize(&candidate).ok();
            }
        }
    }
    None
}

/// Expands one `python3*` component (at most one per pattern) to the
/// existing directories, sorted by name.
fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut base = PathBuf::new();
    let mut comps = pattern.components();
    for comp in comps.by_ref() {
        let text = comp.as_os_str().to_string_lossy();
        if let Some(stem) = text.strip_suffix('*') {
            let stem = stem.to_owned();
            let rest: PathBuf = comps.collect();
            let Ok(entries) = fs::read_dir(&base) else {
                return Vec::new();
            };
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&stem))
                .collect();
            names.sort();
            return names
                .into_iter()
                .map(|n| base.join(n).join(&rest))
                .filter(|p| p.is_dir())
                .collect();
        }
        base.push(comp);
    }
    if base.is_dir() {
        vec![base]
    } else {
        Vec::new()
    }
}

/// Framework packages inside one site directory: `S/<pkg>` directories,
/// then `D/<pkg>` for each directory line `D` of every `*.pth` file.
pub(crate) fn packages_in(site: &Path) -> Vec<Found> {
    let mut out = Vec::new();
    for &package in FRAMEWORK_PACKAGES {
        let p = site.join(package);
        if p.is_dir() {
            out.push(Found { path: p, package });
        }
    }
    let mut pth: Vec<PathBuf> = match fs::read_dir(site) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "pth") && p.is_file())
            .collect(),
        Err(_) => return out,
    };
    pth.sort();
    for file in pth {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim();
            // `import` lines are code that `site` would run: never executed here.
            if line.is_empty() || line.starts_with('#') || line.starts_with("import") {
                continue;
            }
            let dir = if Path::new(line).is_absolute() {
                PathBuf::from(line)
            } else {
                site.join(line)
            };
            for &package in FRAMEWORK_PACKAGES {
                let p = dir.join(package);
                if p.is_dir() {
                    out.push(Found { path: p, package });
                }
            }
        }
    }
    out
}

/// Every framework package reachable from `env`, in discovery order.
pub(crate) fn discover(env: &DiscoveryEnv) -> Vec<Found> {
    site_dirs(env).iter().flat_map(|s| packages_in(s)).collect()
}
