//! The pass driver (§8.2): primary, sub-window and prefix passes in order,
//! and the rendering of the winner into a result record.

use std::path::{Path, PathBuf};

use crate::definition::HitKind;
use crate::evidence::MIN_PREFIX_CHARS;
use crate::keywords::KeywordPlan;
use crate::kind::{KindContext, source_kind_for};
use crate::launcher::resolve_frame_path;
use crate::locator::{LocateOptions, Locator};
use crate::rank::{Ranked, why_codes};
use crate::result::{Candidate, LauncherReport, LocateResult, Method};

/// Candidates reported per result.
const MAX_CANDIDATES: usize = 5;

impl Locator {
    pub(crate) fn run_passes(
        &mut self,
        plan: &KeywordPlan,
        opts: &LocateOptions,
        kind_ctx: &KindContext,
    ) -> LocateResult {
        if let Some(refusal) = plan.refusal {
            let mut r = not_found(
                &plan.name,
                &[],
                Some(refusal.as_str().to_owned()),
                None,
                source_kind_for(&plan.name, None, kind_ctx),
            );
            r.reason = Some(refusal.as_str().to_owned());
            return r;
        }
        let launcher = opts
            .launchers
            .as_ref()
            .and_then(|l| l.get(&plan.name))
            .cloned();
        let resolved = launcher.as_ref().and_then(|l| {
            resolve_frame_path(&l.path, &self.root_paths())
                .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        });
        let mut tried: Vec<String> = Vec::new();
        let passes: [(&[String], Method); 3] = [
            (&plan.primary, Method::Definition),
            (&plan.subwindows, Method::Subwindow),
            (&plan.prefixes, Method::Prefix),
        ];
        for (keywords, method) in passes {
            for kw in keywords {
                if tried.contains(kw) {
                    continue;
                }
                tried.push(kw.clone());
                let hits = self.hits_of(kw);
                if hits.is_empty() {
                    continue;
                }
                let prefix_base =
                    (method == Method::Prefix).then(|| plan.base.trim_start_matches('_'));
                let ranked = self.rank(kw, &hits, resolved.as_deref(), prefix_base);
                let Some(best) = ranked.first() else { continue };
                if method == Method::Prefix
                    && best.score.prefix_chars.unwrap_or(0) < MIN_PREFIX_CHARS
                {
                    continue;
                }
                let method = match method {
                    Method::Definition if best.class.kind == HitKind::Mention => Method::Mention,
                    m => m,
                };
                return self.render(
                    plan,
                    kw,
                    method,
                    &ranked,
                    tried,
                    launcher.as_ref(),
                    resolved.as_deref(),
                    kind_ctx,
                );
            }
        }
        let kind = source_kind_for(&plan.name, None, kind_ctx);
        let report = launcher.map(|l| LauncherReport {
            path: l.path.clone(),
            resolved_path: resolved.clone(),
            line: l.line,
            function: l.function.clone(),
            launches: l.launches,
            distinct_frames: l.distinct_frames,
            corroborated: false,
            candidate_rank: None,
        });
        let reason = report.as_ref().map(|_| "launcher_unconfirmed".to_owned());
        not_found(&plan.name, &tried, reason, report, kind)
    }

    #[allow(clippy::too_many_arguments)]
    fn render(
        &mut self,
        plan: &KeywordPlan,
        kw: &str,
        method: Method,
        ranked: &[Ranked],
        tried: Vec<String>,
        launcher: Option<&crate::launcher::Launcher>,
        resolved: Option<&Path>,
        kind_ctx: &KindContext,
    ) -> LocateResult {
        let candidates: Vec<Candidate> = ranked
            .iter()
            .take(MAX_CANDIDATES)
            .filter_map(|r| {
                let f = self.file(r.file)?;
                Some(Candidate {
                    path: f.path.clone(),
                    line: Some(r.composing_line.unwrap_or(r.class.line)),
                    score: r.score.clone(),
                    why: why_codes(r, &f.path, kw),
                })
            })
            .collect();
        let best = &ranked[0];
        let path = self.file(best.file).map(|f| f.path.clone());
        let mut line = Some(best.class.line);
        let mut function = best.class.function.clone();
        if method == Method::Prefix {
            line = best.prefix_line;
            function = best.prefix_function.clone();
        }
        let mut final_method = method;
        let report = launcher.map(|l| {
            let rank = ranked
                .iter()
                .position(|r| resolved.is_some() && r.canonical.as_deref() == resolved)
                .map(|p| p + 1);
            let corroborated = rank == Some(1);
            LauncherReport {
                path: l.path.clone(),
                resolved_path: resolved.map(Path::to_path_buf),
                line: l.line,
                function: l.function.clone(),
                launches: l.launches,
                distinct_frames: l.distinct_frames,
                corroborated,
                candidate_rank: rank,
            }
        });
        if let Some(r) = &report
            && r.corroborated
        {
            final_method = Method::TracePythonStack;
            if best.class.kind == HitKind::Mention && method != Method::Prefix {
                line = Some(r.line);
                function = Some(r.function.clone());
            }
        }
        let kind = source_kind_for(&plan.name, path.as_deref(), kind_ctx);
        let repo_root = path.as_deref().and_then(repo_root_of);
        LocateResult {
            name: plan.name.clone(),
            found: true,
            path,
            line,
            function,
            kind,
            method: final_method,
            grep_method: method,
            keyword: Some(kw.to_owned()),
            keywords_tried: tried,
            reason: None,
            repo_root,
            candidates,
            launcher: report,
        }
    }
}

pub(crate) fn not_found(
    name: &str,
    tried: &[String],
    reason: Option<String>,
    launcher: Option<LauncherReport>,
    kind: crate::kind::SourceKind,
) -> LocateResult {
    LocateResult {
        name: name.to_owned(),
        found: false,
        path: None,
        line: None,
        function: None,
        kind,
        method: Method::NotFound,
        grep_method: Method::NotFound,
        keyword: None,
        keywords_tried: tried.to_vec(),
        reason,
        repo_root: None,
        candidates: Vec::new(),
        launcher,
    }
}

pub(crate) fn repo_root_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
}
