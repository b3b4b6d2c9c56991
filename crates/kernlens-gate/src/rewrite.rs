//! The rewrite-route eligibility policy (gate.md "Rewrite-route eligibility policy"): may a kernel attempt
//! take the FlyDSL rewrite route (port the kernel, then apply it back)?
//!
//! The verdict is `#[must_use]` and is meant to be rendered by every report
//! about the attempt, eligible or declined: the original computed it and
//! dropped it, so opting in looked as if the route had run.
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use kernlens_gate::rewrite::{evaluate_rewrite_route, RewriteRequest, SourceKind};
//! #[deny(unused_must_use)]
//! fn plan() {
//!     evaluate_rewrite_route(&RewriteRequest::new("k", SourceKind::Triton));
//! }
//! ```
//!
//! ```
//! # #![deny(unused_must_use)]
//! use kernlens_gate::rewrite::{evaluate_rewrite_route, RewriteRequest, SourceKind};
//! #[deny(unused_must_use)]
//! fn plan() -> String {
//!     evaluate_rewrite_route(&RewriteRequest::new("k", SourceKind::Triton)).render()
//! }
//! assert!(plan().contains("eligible"));
//! ```

use serde::{Serialize, Serializer};

/// Minutes the FlyDSL producer needs to port a kernel.
pub const PRODUCER_MINUTES: u32 = 60;
/// Minutes reserved for applying the port back into the framework.
pub const APPLY_BACK_RESERVE_MINUTES: u32 = 15;
/// Minutes the whole route needs.
pub const REQUIRED_MINUTES: u32 = PRODUCER_MINUTES + APPLY_BACK_RESERVE_MINUTES;
/// Per-attempt budget when none is configured. The original shipped 60,
/// which silently declined every candidate.
pub const DEFAULT_ATTEMPT_BUDGET_MINUTES: u32 = 90;
/// The route's name in reports.
pub const ROUTE_NAME: &str = "flydsl_rewrite";

pub use kernlens_ident::SourceKind;

/// Whether the route can port this kind at all.
fn portable(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::Triton | SourceKind::Cuda | SourceKind::Hip | SourceKind::Cpp
    )
}

/// One attempt asking for the rewrite route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RewriteRequest {
    /// The kernel or operation, for rendering.
    pub candidate: String,
    /// What the kernel's source is written in.
    pub source: SourceKind,
    /// A budget set for this attempt; wins over everything, both ways.
    pub explicit_budget_minutes: Option<u32>,
    /// The configured per-attempt budget.
    pub default_budget_minutes: u32,
    /// The operator asked for the route; floors the default at the route's needs.
    pub operator_opted_in: bool,
}

impl RewriteRequest {
    /// A request with the shipped default budget, no explicit budget and no opt-in.
    pub fn new(candidate: impl Into<String>, source: SourceKind) -> Self {
        RewriteRequest {
            candidate: candidate.into(),
            source,
            explicit_budget_minutes: None,
            default_budget_minutes: DEFAULT_ATTEMPT_BUDGET_MINUTES,
            operator_opted_in: false,
        }
    }

    /// The same request with an explicit budget (or none).
    pub fn with_explicit_budget(mut self, minutes: Option<u32>) -> Self {
        self.explicit_budget_minutes = minutes;
        self
    }

    /// The same request with another configured default budget.
    pub fn with_default_budget(mut self, minutes: u32) -> Self {
        self.default_budget_minutes = minutes;
        self
    }

    /// The same request with the operator's opt-in set or cleared.
    pub fn with_opted_in(mut self, opted_in: bool) -> Self {
        self.operator_opted_in = opted_in;
        self
    }
}

/// Why the route was declined. A declined attempt stays on its normal route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeclineReason {
    /// The kernel is already FlyDSL.
    AlreadyFlydslSource,
    /// The source cannot be ported (Python, unknown, vendor binary, JIT).
    NonPortableLanguage,
    /// The effective budget is below [`REQUIRED_MINUTES`].
    BudgetInsufficient,
}

impl DeclineReason {
    /// The snake_case reason used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            DeclineReason::AlreadyFlydslSource => "already_flydsl_source",
            DeclineReason::NonPortableLanguage => "non_portable_language",
            DeclineReason::BudgetInsufficient => "budget_insufficient",
        }
    }
}

/// Whether the attempt may take the route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Eligibility {
    /// It may.
    Eligible,
    /// It may not, for this reason.
    Declined(DeclineReason),
}

/// Where the effective budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetSource {
    /// The attempt's explicit budget, used as given.
    Explicit,
    /// The configured default.
    Default,
    /// The default, raised to [`REQUIRED_MINUTES`] by the operator's opt-in.
    DefaultFloored,
}

impl BudgetSource {
    /// The snake_case label used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetSource::Explicit => "explicit",
            BudgetSource::Default => "default",
            BudgetSource::DefaultFloored => "default_floored",
        }
    }
}

/// The policy's answer for one attempt. Hand it back to the caller and render
/// it in every report about the attempt, eligible or declined.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a rewrite-route verdict must be returned and rendered, eligible or declined"]
#[non_exhaustive]
pub struct RewriteVerdict {
    /// The kernel or operation.
    pub candidate: String,
    /// Its source kind.
    pub source: SourceKind,
    /// Eligible, or declined with a reason.
    pub eligibility: Eligibility,
    /// The budget the decision used.
    pub effective_budget_minutes: u32,
    /// Where that budget came from.
    pub budget_source: BudgetSource,
    /// What the route needs ([`REQUIRED_MINUTES`]).
    pub required_minutes: u32,
}

impl RewriteVerdict {
    /// Whether the route may run.
    pub fn eligible(&self) -> bool {
        self.eligibility == Eligibility::Eligible
    }

    /// The decline reason, if declined.
    pub fn reason(&self) -> Option<DeclineReason> {
        match self.eligibility {
            Eligibility::Eligible => None,
            Eligibility::Declined(reason) => Some(reason),
        }
    }

    /// One line, e.g. `flydsl_rewrite my_kernel: declined: budget_insufficient
    /// (budget 60 min, default; needs 75 = 60 producer + 15 apply-back)`.
    pub fn render(&self) -> String {
        let budget = self.effective_budget_minutes;
        let source = self.budget_source.as_str();
        let needs = self.required_minutes;
        match self.reason() {
            None => format!(
                "{ROUTE_NAME} {}: eligible (budget {budget} min, {source}; needs {needs})",
                self.candidate
            ),
            Some(reason) => format!(
                "{ROUTE_NAME} {}: declined: {} (budget {budget} min, {source}; needs {needs} = \
                 {PRODUCER_MINUTES} producer + {APPLY_BACK_RESERVE_MINUTES} apply-back)",
                self.candidate,
                reason.as_str()
            ),
        }
    }
}

#[derive(Serialize)]
struct VerdictJson<'a> {
    route: &'static str,
    candidate: &'a str,
    source: SourceKind,
    eligible: bool,
    reason: Option<DeclineReason>,
    effective_budget_minutes: u32,
    budget_source: BudgetSource,
    required_minutes: u32,
}

impl Serialize for RewriteVerdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        VerdictJson {
            route: ROUTE_NAME,
            candidate: &self.candidate,
            source: self.source,
            eligible: self.eligible(),
            reason: self.reason(),
            effective_budget_minutes: self.effective_budget_minutes,
            budget_source: self.budget_source,
            required_minutes: self.required_minutes,
        }
        .serialize(serializer)
    }
}

/// Decide whether `request` may take the rewrite route. The first failing
/// check wins: already FlyDSL, then a non-portable source, then a budget
/// below [`REQUIRED_MINUTES`].
#[must_use = "a rewrite-route verdict must be returned and rendered, eligible or declined"]
pub fn evaluate_rewrite_route(request: &RewriteRequest) -> RewriteVerdict {
    let (effective_budget_minutes, budget_source) = effective_budget(request);
    let eligibility = if request.source == SourceKind::FlyDsl {
        Eligibility::Declined(DeclineReason::AlreadyFlydslSource)
    } else if !portable(request.source) {
        Eligibility::Declined(DeclineReason::NonPortableLanguage)
    } else if effective_budget_minutes < REQUIRED_MINUTES {
        Eligibility::Declined(DeclineReason::BudgetInsufficient)
    } else {
        Eligibility::Eligible
    };
    RewriteVerdict {
        candidate: request.candidate.clone(),
        source: request.source,
        eligibility,
        effective_budget_minutes,
        budget_source,
        required_minutes: REQUIRED_MINUTES,
    }
}

fn effective_budget(request: &RewriteRequest) -> (u32, BudgetSource) {
    if let Some(explicit) = request.explicit_budget_minutes {
        return (explicit, BudgetSource::Explicit);
    }
    let default = request.default_budget_minutes;
    // The opt-in only raises: a default lowered for another reason must not
    // switch the route off in silence once the operator asked for it.
    if request.operator_opted_in && default < REQUIRED_MINUTES {
        (REQUIRED_MINUTES, BudgetSource::DefaultFloored)
    } else {
        (default, BudgetSource::Default)
    }
}
