//! The pass driver (locate.md "Ranking and the pass driver: Passes and confidence"): primary, sub-window and prefix passes in order,
//! and the rendering of the winner into a result record.

use std::path::{Path, PathBuf};

use crate::evidence::proof_of;
use crate::keywords::KeywordPlan;
use crate::kind::{KindContext, source_kind_for};
use crate::launcher::resolve_frame_path;
use crate::locator::{LocateOptions, Locator};
use crate::rank::{Ranked, why_codes};
use crate::result::{Candidate, Confidence, LauncherReport, LocateResult, Method, NotFound};
use crate::shape::type_head;

/// The `reason` of a name whose only definition is a generic trampoline and
/// whose bound class is not in the tree.
pub const TRAMPOLINE_UNBOUND: &str = NotFound::TrampolineUnbound.as_str();

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
            return not_found(
                &plan.name,
                &[],
                Some(NotFound::Refused(refusal)),
                None,
                source_kind_for(&plan.name, None, kind_ctx),
            );
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
        // The first keyword whose best file only mentions the name; it answers
        // `mention_only` when no later keyword proves one.
        let mut mention: Option<(String, Vec<Ranked>)> = None;
        for (keywords, method) in passes {
            // A name the tree spells out (but only mentions) is not guessed at
            // through its segments; a composing site can still prove it.
            if method == Method::Subwindow && mention.is_some() {
                continue;
            }
            for kw in keywords {
                if tried.contains(kw) {
                    continue;
                }
                tried.push(kw.clone());
                let hits = self.hits_of(kw);
                if hits.is_empty() {
                    continue;
                }
                let ranked = self.rank(plan, kw, method, &hits, resolved.as_deref());
                let Some(best) = ranked.first() else { continue };
                if let Some(param) = best
                    .class
                    .trampoline
                    .filter(|_| method == Method::Definition)
                {
                    return self.through_trampoline(
                        plan,
                        kw,
                        param,
                        ranked,
                        tried,
                        launcher.as_ref(),
                        resolved.as_deref(),
                        kind_ctx,
                    );
                }
                if proof_of(best, method).is_some() {
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
                if method == Method::Prefix {
                    let renamed = self.rank_aliases(plan, kw, &hits, resolved.as_deref());
                    if !renamed.is_empty() {
                        return self.render(
                            plan,
                            kw,
                            method,
                            &renamed,
                            tried,
                            launcher.as_ref(),
                            resolved.as_deref(),
                            kind_ctx,
                        );
                    }
                }
                // Only the name's own spelling makes a mention: a sub-window's
                // or a prefix's hits are parts of other names.
                if mention.is_none() && method == Method::Definition {
                    mention = Some((kw.clone(), ranked));
                }
            }
        }
        if let Some((kw, ranked)) = mention {
            return self.render(
                plan,
                &kw,
                Method::Mention,
                &ranked,
                tried,
                launcher.as_ref(),
                resolved.as_deref(),
                kind_ctx,
            );
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
        let reason = report.as_ref().map(|_| NotFound::LauncherUnconfirmed);
        not_found(&plan.name, &tried, reason, report, kind)
    }

    /// Rule 2h: the best definition is a generic trampoline, so the kernel is
    /// the class the name binds to the trampoline's type parameter. Its class
    /// definition answers (the trampoline stays a candidate); without one the
    /// name is not found, reason `trampoline_unbound`.
    #[allow(clippy::too_many_arguments)]
    fn through_trampoline(
        &mut self,
        plan: &KeywordPlan,
        kw: &str,
        param: usize,
        trampolines: Vec<Ranked>,
        mut tried: Vec<String>,
        launcher: Option<&crate::launcher::Launcher>,
        resolved: Option<&Path>,
        kind_ctx: &KindContext,
    ) -> LocateResult {
        let bound = plan.template_args.get(param).and_then(|a| type_head(a));
        let mut ranked = Vec::new();
        if let Some(ty) = bound.as_deref() {
            tried.push(ty.to_owned());
            self.scan_extra(ty);
            let hits = self.hits_of(ty);
            ranked = self.rank_classes(ty, &hits, resolved);
        }
        let kw_used = bound.clone().filter(|_| !ranked.is_empty());
        ranked.extend(trampolines);
        match kw_used {
            Some(ty) => self.render(
                plan,
                &ty,
                Method::Definition,
                &ranked,
                tried,
                launcher,
                resolved,
                kind_ctx,
            ),
            None => {
                let mut r = self.render(
                    plan,
                    kw,
                    Method::Mention,
                    &ranked,
                    tried,
                    launcher,
                    resolved,
                    kind_ctx,
                );
                r.reason = Some(NotFound::TrampolineUnbound);
                r
            }
        }
    }

    /// The result record of one pass's ranking. A best file that proves
    /// nothing gives `found: false` with reason `mention_only`, its
    /// candidates kept for a reviewer.
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
                    line: Some(r.composed.map_or(r.class.line, |c| c.line)),
                    score: r.score.clone(),
                    why: why_codes(r, &f.path, kw),
                })
            })
            .collect();
        let best = &ranked[0];
        let report = launcher.map(|l| {
            let rank = ranked
                .iter()
                .position(|r| resolved.is_some() && r.canonical.as_deref() == resolved)
                .map(|p| p + 1);
            LauncherReport {
                path: l.path.clone(),
                resolved_path: resolved.map(Path::to_path_buf),
                line: l.line,
                function: l.function.clone(),
                launches: l.launches,
                distinct_frames: l.distinct_frames,
                corroborated: rank == Some(1),
                candidate_rank: rank,
            }
        });
        let corroborated = report.as_ref().is_some_and(|r| r.corroborated);
        let proof = if method == Method::Mention {
            None
        } else {
            proof_of(best, method)
        };
        let Some(mut confidence) = proof else {
            let kind = source_kind_for(&plan.name, None, kind_ctx);
            let mut r = not_found(
                &plan.name,
                &tried,
                Some(NotFound::MentionOnly),
                report,
                kind,
            );
            r.confidence = Confidence::Mention;
            r.method = Method::Mention;
            r.grep_method = Method::Mention;
            r.keyword = Some(kw.to_owned());
            r.candidates = candidates;
            return r;
        };
        let path = self.file(best.file).map(|f| f.path.clone());
        let mut line = Some(best.class.line);
        let mut function = best.class.function.clone();
        if let Some(c) = best.composed {
            line = Some(c.line);
            function = best.site_function.clone();
        }
        let mut final_method = method;
        if corroborated {
            final_method = Method::TracePythonStack;
            confidence = Confidence::Launcher;
        }
        let kind = source_kind_for(&plan.name, path.as_deref(), kind_ctx);
        let repo_root = path.as_deref().and_then(repo_root_of);
        LocateResult {
            name: plan.name.clone(),
            found: true,
            confidence,
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
    reason: Option<NotFound>,
    launcher: Option<LauncherReport>,
    kind: crate::kind::SourceKind,
) -> LocateResult {
    LocateResult {
        name: name.to_owned(),
        found: false,
        confidence: Confidence::None,
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
