//! The sort key (locate.md "Ranking and the pass driver: Sort key"): the score components of a candidate, their reason
//! codes, and the ordering of one keyword's hit files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kernlens_ident::SOURCE_EXTENSION_RANKS;

use crate::cache::FileHit;
use crate::compose::Composed;
use crate::cxx::{macro_like, object_macro_value, scope_matches};
use crate::definition::{Classified, FileAnalysis, HitKind, Query, class_definition_line};
use crate::keywords::KeywordPlan;
use crate::locator::Locator;
use crate::python::PySymbols;
use crate::result::{Method, Score};
use crate::scan::{FileEntry, FileState};
use crate::shape::NameShape;
use crate::triton_repr::{launch_aliases, repr_match};

/// One ranked candidate, before rendering.
pub(crate) struct Ranked {
    pub(crate) file: u32,
    pub(crate) class: Classified,
    pub(crate) score: Score,
    pub(crate) canonical: Option<PathBuf>,
    /// Prefix pass: the composing site whose template matches the name.
    pub(crate) composed: Option<Composed>,
    pub(crate) site_function: Option<String>,
}

impl Locator {
    /// The root path of a walked file.
    fn root_of(&self, entry: &FileEntry) -> PathBuf {
        self.roots
            .get(entry.root)
            .map(|r| r.path.clone())
            .unwrap_or_default()
    }

    /// A candidate with its locate.md "Ranking and the pass driver: Sort key" score (and canonical path, for the
    /// launcher check); prefix-pass fields left empty.
    fn ranked_entry(
        &self,
        file: u32,
        entry: &FileEntry,
        kw: &str,
        class: Classified,
        launcher_file: Option<&Path>,
    ) -> Ranked {
        let canonical = launcher_file.and_then(|_| std::fs::canonicalize(&entry.path).ok());
        let is_launcher = launcher_file.is_some_and(|l| canonical.as_deref() == Some(l));
        let score = base_score(
            &entry.path,
            &self.root_of(entry),
            entry.root,
            kw,
            &class,
            is_launcher,
        );
        Ranked {
            file,
            class,
            score,
            canonical,
            composed: None,
            site_function: None,
        }
    }

    /// Sorts candidates: literal characters (prefix pass) descending, then
    /// locate.md "Ranking and the pass driver: Sort key", then the path byte-wise.
    fn sort_ranked(&self, out: &mut [Ranked]) {
        let paths: HashMap<u32, PathBuf> = out
            .iter()
            .filter_map(|r| self.file(r.file).map(|f| (r.file, f.path.clone())))
            .collect();
        out.sort_by(|a, b| {
            let pa = paths.get(&a.file);
            let pb = paths.get(&b.file);
            b.score
                .prefix_chars
                .cmp(&a.score.prefix_chars)
                .then(sort_key(&a.score).cmp(&sort_key(&b.score)))
                .then(
                    pa.map(|p| p.as_os_str().as_encoded_bytes())
                        .cmp(&pb.map(|p| p.as_os_str().as_encoded_bytes())),
                )
        });
    }

    /// A hit file's bytes and analysis, when it is scannable.
    fn loaded(&mut self, id: u32) -> Option<(FileEntry, Arc<[u8]>, Arc<FileAnalysis>)> {
        let entry = self.file(id).cloned()?;
        if entry.state != FileState::Scannable {
            return None;
        }
        let bytes = self.bytes_of(id)?;
        let analysis = self.analysis_of(id, &bytes)?;
        Some((entry, bytes, analysis))
    }

    /// Ranks the hit files of one keyword (locate.md "Ranking and the pass driver: Sort key"; the prefix pass first by
    /// the literal characters of a whole-name template).
    pub(crate) fn rank(
        &mut self,
        plan: &KeywordPlan,
        kw: &str,
        method: Method,
        hits: &[FileHit],
        launcher_file: Option<&Path>,
    ) -> Vec<Ranked> {
        let composed_name = (method == Method::Prefix).then_some(plan.base.as_str());
        let query = Query {
            shape: plan.shape,
            qualifiers: plan.qualifiers.as_deref(),
            template_instance: plan.template_instance,
        };
        let mut out = Vec::new();
        for h in hits {
            let Some(entry) = self.file(h.file).cloned() else {
                continue;
            };
            if entry.state != FileState::Scannable {
                continue;
            }
            let Some(mut facts) = self.facts(h, kw, query, composed_name) else {
                continue;
            };
            if let (Some(d), Some(q)) = (facts.class.deferred.take(), query.qualifiers)
                && self
                    .resolved_scope(&d.scope)
                    .is_some_and(|s| scope_matches(&s, q))
            {
                facts.class = d.class;
            }
            let mut r = self.ranked_entry(h.file, &entry, kw, facts.class, launcher_file);
            if let Some(module) = plan.module_text.as_deref() {
                r.score.module = module_chars(&entry.path, &self.root_of(&entry), module);
            }
            if composed_name.is_some() {
                r.score.composing = Some(facts.composed.is_some());
                r.score.prefix_chars = Some(facts.composed.map_or(0, |c| c.literal_chars));
            }
            r.composed = facts.composed;
            r.site_function = facts.function_at_site;
            out.push(r);
        }
        if plan.shape == NameShape::Inductor {
            self.mark_benchmark_copies(kw, &mut out);
        }
        self.sort_ranked(&mut out);
        out
    }
}

impl Locator {
    /// A definition scope with its macro-like components replaced by their
    /// `#define` values (the macro's name scanned for on demand); `None`
    /// when one has no identifier value in the tree.
    fn resolved_scope(&mut self, scope: &[String]) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for c in scope {
            if !macro_like(c) {
                out.push(c.clone());
                continue;
            }
            let value = match self.cache.macro_values.get(c) {
                Some(v) => v.clone(),
                None => {
                    self.scan_extra(c);
                    let mut value = None;
                    // A `#define` spells the name as a whole identifier.
                    for h in self.hits_of(c).iter().filter(|h| h.evidence) {
                        let Some((_, _, analysis)) = self.loaded(h.file) else {
                            continue;
                        };
                        if let Some(v) = analysis
                            .native_text()
                            .and_then(|b| object_macro_value(b, c))
                        {
                            value = Some(v);
                            break;
                        }
                    }
                    self.cache.macro_values.insert(c.clone(), value.clone());
                    value
                }
            };
            out.extend(value?.split("::").map(str::to_owned));
        }
        Some(out)
    }

    /// Rule 2i, inductor caches: when a hit file's compiled-graph wrapper
    /// embeds the kernel's source (`async_compile.triton('kw', '''…''')`),
    /// the kernel modules whose text is not that source are benchmark copies.
    fn mark_benchmark_copies(&mut self, kw: &str, out: &mut [Ranked]) {
        let mut embedded: Vec<Vec<u8>> = Vec::new();
        for r in out.iter() {
            let Some((_, bytes, analysis)) = self.loaded(r.file) else {
                continue;
            };
            if let Some(symbols) = analysis.python() {
                embedded.extend(embedded_sources(symbols, &bytes, kw));
            }
        }
        if embedded.is_empty() {
            return;
        }
        let kernels: Vec<usize> = (0..out.len())
            .filter(|&i| out[i].class.kind.strength() == 2)
            .collect();
        let matching: Vec<bool> = kernels
            .iter()
            .map(|&i| {
                self.bytes_of(out[i].file)
                    .is_some_and(|b| embedded.iter().any(|e| e.trim_ascii() == b.trim_ascii()))
            })
            .collect();
        if matching.iter().any(|&m| m) {
            for (&i, &m) in kernels.iter().zip(&matching) {
                out[i].score.embedded = u8::from(!m);
            }
        }
    }

    /// Rule 2e, launch-site renames: the hit files of prefix keyword `kw`
    /// that launch `callee[grid](…, KEY="alias")` with the keyword as the
    /// alias make the callee's `repr=` def (renamable, composing the whole
    /// name from the alias) the definition. The callee is scanned on demand.
    pub(crate) fn rank_aliases(
        &mut self,
        plan: &KeywordPlan,
        kw: &str,
        hits: &[FileHit],
        launcher_file: Option<&Path>,
    ) -> Vec<Ranked> {
        let mut aliases: Vec<(String, String)> = Vec::new();
        for h in hits {
            // A renaming literal spells the keyword as a whole string.
            if !h.evidence {
                continue;
            }
            let Some((_, bytes, analysis)) = self.loaded(h.file) else {
                continue;
            };
            for a in analysis
                .python()
                .map(|s| launch_aliases(s, &bytes, kw))
                .unwrap_or_default()
            {
                if !aliases.contains(&a) {
                    aliases.push(a);
                }
            }
        }
        let mut out = Vec::new();
        for (callee, alias) in aliases {
            self.scan_extra(&callee);
            for h in self.hits_of(&callee) {
                let Some((entry, bytes, analysis)) = self.loaded(h.file) else {
                    continue;
                };
                let Some(symbols) = analysis.python() else {
                    continue;
                };
                let best = symbols
                    .defs
                    .iter()
                    .filter(|d| d.triton && d.name == callee)
                    .filter_map(|d| {
                        repr_match(symbols, &bytes, d, &plan.base, Some(&alias))
                            .map(|c| (d.line, c))
                    })
                    .max_by_key(|&(_, c)| c);
                let Some((line, chars)) = best else {
                    continue;
                };
                let class = Classified::definition(HitKind::TritonJit, line, &callee);
                let mut r = self.ranked_entry(h.file, &entry, kw, class, launcher_file);
                r.score.composing = Some(true);
                r.score.prefix_chars = Some(chars);
                r.composed = Some(Composed {
                    line,
                    literal_chars: chars,
                    by_repr: true,
                });
                r.site_function = Some(callee.clone());
                out.push(r);
            }
        }
        self.sort_ranked(&mut out);
        out
    }

    /// Rule 2h: the hit files of `ty` that define it as a class, as
    /// ordinary definitions ranked by locate.md "Ranking and the pass driver: Sort key".
    pub(crate) fn rank_classes(
        &mut self,
        ty: &str,
        hits: &[FileHit],
        launcher_file: Option<&Path>,
    ) -> Vec<Ranked> {
        let mut out = Vec::new();
        // A class definition spells the name as a whole identifier.
        for h in hits.iter().filter(|h| h.evidence) {
            let Some((entry, _, analysis)) = self.loaded(h.file) else {
                continue;
            };
            let Some(line) = class_definition_line(&analysis, ty) else {
                continue;
            };
            let class = Classified::definition(HitKind::Cxx, line, ty);
            out.push(self.ranked_entry(h.file, &entry, ty, class, launcher_file));
        }
        self.sort_ranked(&mut out);
        out
    }
}

type SortKey = (
    u8,
    u8,
    u8,
    std::cmp::Reverse<usize>,
    u8,
    u8,
    i32,
    u8,
    u8,
    usize,
    usize,
);

pub(crate) fn sort_key(s: &Score) -> SortKey {
    (
        s.definition,
        s.spelling,
        s.embedded,
        std::cmp::Reverse(s.module),
        s.launcher,
        s.stem,
        s.path_kind,
        s.reexport,
        s.extension,
        s.depth,
        s.root,
    )
}

/// Path penalties and bonuses of locate.md "Ranking and the pass driver: Sort key" component 4.
const PATH_KINDS: &[(&str, i32, &str)] = &[
    ("/csrc/", -3, "path:csrc(-3)"),
    ("/optimized_versions/", 5, "path:optimized_versions(+5)"),
    ("/site-packages/", 2, "path:site_packages(+2)"),
    ("/dist-packages/", 2, "path:site_packages(+2)"),
    ("/include/", 1, "path:include(+1)"),
    ("/pybind/", 2, "path:pybind(+2)"),
    ("/tests/", 3, "path:tests(+3)"),
    ("/test/", 3, "path:tests(+3)"),
];

/// The path kinds that apply, each reason code once (`/site-packages/` and
/// `/dist-packages/` share one, as do `/tests/` and `/test/`).
pub(crate) fn path_kinds(text: &str) -> Vec<(&'static str, i32)> {
    let mut out: Vec<(&'static str, i32)> = Vec::new();
    for (marker, value, code) in PATH_KINDS {
        if text.contains(marker) && !out.iter().any(|(c, _)| c == code) {
            out.push((code, *value));
        }
    }
    out
}

pub(crate) fn path_text(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

pub(crate) fn extension_rank(path: &Path) -> (u8, String) {
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy().to_ascii_lowercase()))
        .unwrap_or_default();
    // An extension outside ident's groups (`.rs` behind a feature) ranks last.
    let rank = SOURCE_EXTENSION_RANKS
        .iter()
        .position(|group| group.contains(&ext.as_str()))
        .unwrap_or(SOURCE_EXTENSION_RANKS.len().saturating_sub(1));
    (u8::try_from(rank).unwrap_or(u8::MAX), ext)
}

pub(crate) fn base_score(
    path: &Path,
    root: &Path,
    root_index: usize,
    kw: &str,
    class: &Classified,
    is_launcher: bool,
) -> Score {
    let text = path_text(path);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let kw_base = kw.rsplit("::").next().unwrap_or(kw).to_lowercase();
    let path_kind: i32 = path_kinds(&text).iter().map(|(_, v)| v).sum();
    let depth = path
        .strip_prefix(root)
        .map(|rel| path_text(rel).matches('/').count())
        .unwrap_or(0);
    Score {
        definition: 2 - class.kind.strength(),
        spelling: u8::from(!class.exact),
        embedded: 0,
        module: 0,
        launcher: u8::from(!is_launcher),
        stem: u8::from(!stem.contains(&kw_base)),
        path_kind,
        reexport: u8::from(path.file_name().is_some_and(|n| n == "__init__.py")),
        extension: extension_rank(path).0,
        depth,
        root: root_index,
        composing: None,
        prefix_chars: None,
    }
}

/// The sources a compiled graph's wrapper embeds for kernel `kw`: the
/// literal after `async_compile.triton('kw', `.
fn embedded_sources(symbols: &PySymbols, bytes: &[u8], kw: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, s) in symbols.strings.iter().enumerate() {
        if &bytes[s.start..s.end] != kw.as_bytes() {
            continue;
        }
        let head = bytes[..s.start.saturating_sub(1)].trim_ascii_end();
        if !head.ends_with(b"async_compile.triton(") {
            continue;
        }
        if let Some(src) = symbols.strings.get(i + 1) {
            out.push(bytes[src.start..src.end].to_vec());
        }
    }
    out
}

/// Rule 2f: how many trailing characters the file's path below its root,
/// as a module path with separators and `.py` dropped, shares with `module`
/// (the symbol's method-and-module text); `__init__.py` stands for its package.
fn module_chars(path: &Path, root: &Path, module: &str) -> usize {
    let Ok(rel) = path.strip_prefix(root) else {
        return 0;
    };
    let text = path_text(rel);
    let text = text.strip_suffix("/__init__.py").unwrap_or(&text);
    let dotless: String = text.trim_end_matches(".py").split('/').collect();
    dotless
        .bytes()
        .rev()
        .zip(module.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count()
}

pub(crate) fn why_codes(r: &Ranked, path: &Path, _kw: &str) -> Vec<String> {
    let mut why = vec![format!("{}@{}", r.class.kind.code(), r.class.line)];
    if r.score.launcher == 0 {
        why.push("launcher_file".to_owned());
    }
    if r.score.stem == 0 {
        why.push("stem_match".to_owned());
    }
    for (code, _) in path_kinds(&path_text(path)) {
        why.push(code.to_owned());
    }
    if r.score.reexport == 1 {
        why.push("reexport_init(+1)".to_owned());
    }
    let (rank, ext) = extension_rank(path);
    why.push(format!("ext:{ext}({rank})"));
    why.push(format!("depth:{}", r.score.depth));
    if r.score.module > 0 {
        why.push(format!("module_chars:{}", r.score.module));
    }
    if r.score.spelling == 1 {
        why.push("spelling:underscore_prefixed".to_owned());
    }
    if let Some(c) = r.composed {
        why.push(format!("composing_literal@{}", c.line));
    }
    if let Some(n) = r.score.prefix_chars {
        why.push(format!("prefix_chars:{n}"));
    }
    why
}
