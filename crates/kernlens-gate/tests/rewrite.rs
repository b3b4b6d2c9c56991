//! The rewrite-route eligibility policy (gate.md "Rewrite-route eligibility policy"; scenarios 36–45).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kernlens_gate::rewrite::{
    BudgetSource, DEFAULT_ATTEMPT_BUDGET_MINUTES, DeclineReason, Eligibility, REQUIRED_MINUTES,
    RewriteRequest, RewriteVerdict, SourceKind, evaluate_rewrite_route,
};
use serde_json::json;

fn triton() -> RewriteRequest {
    RewriteRequest::new("my_kernel", SourceKind::Triton)
}

fn declined(reason: DeclineReason) -> Eligibility {
    Eligibility::Declined(reason)
}

#[test]
fn opt_in_floors_a_60_minute_default_to_75() {
    let verdict = evaluate_rewrite_route(&triton().with_default_budget(60).with_opted_in(true));
    assert_eq!(verdict.eligibility, Eligibility::Eligible);
    assert_eq!(verdict.effective_budget_minutes, 75);
    assert_eq!(verdict.budget_source, BudgetSource::DefaultFloored);
}

#[test]
fn a_60_minute_default_without_opt_in_is_insufficient_but_the_shipped_default_is_not() {
    let verdict = evaluate_rewrite_route(&triton().with_default_budget(60));
    assert_eq!(
        verdict.eligibility,
        declined(DeclineReason::BudgetInsufficient)
    );
    assert_eq!(verdict.effective_budget_minutes, 60);
    assert_eq!(verdict.budget_source, BudgetSource::Default);

    assert_eq!(DEFAULT_ATTEMPT_BUDGET_MINUTES, 90);
    let shipped = evaluate_rewrite_route(&triton());
    assert_eq!(shipped.eligibility, Eligibility::Eligible);
    assert_eq!(shipped.effective_budget_minutes, 90);
    assert_eq!(shipped.budget_source, BudgetSource::Default);
}

#[test]
fn explicit_budget_wins_downward_over_opt_in() {
    let verdict =
        evaluate_rewrite_route(&triton().with_explicit_budget(Some(30)).with_opted_in(true));
    assert_eq!(
        verdict.eligibility,
        declined(DeclineReason::BudgetInsufficient)
    );
    assert_eq!(verdict.effective_budget_minutes, 30);
    assert_eq!(verdict.budget_source, BudgetSource::Explicit);
}

#[test]
fn explicit_budget_is_not_capped_upward() {
    let request = RewriteRequest::new("k", SourceKind::Cuda).with_explicit_budget(Some(120));
    let verdict = evaluate_rewrite_route(&request);
    assert_eq!(verdict.eligibility, Eligibility::Eligible);
    assert_eq!(verdict.effective_budget_minutes, 120);
    assert_eq!(verdict.budget_source, BudgetSource::Explicit);
}

#[test]
fn required_minutes_is_the_exact_boundary() {
    assert_eq!(REQUIRED_MINUTES, 75);
    let at = evaluate_rewrite_route(&triton().with_explicit_budget(Some(75)));
    assert_eq!(at.eligibility, Eligibility::Eligible);
    let below = evaluate_rewrite_route(&triton().with_explicit_budget(Some(74)));
    assert_eq!(
        below.eligibility,
        declined(DeclineReason::BudgetInsufficient)
    );
}

#[test]
fn opt_in_floor_only_raises() {
    let verdict = evaluate_rewrite_route(&triton().with_opted_in(true));
    assert_eq!(verdict.effective_budget_minutes, 90);
    assert_eq!(verdict.budget_source, BudgetSource::Default);
}

#[test]
fn flydsl_source_is_declined_before_the_budget_is_checked() {
    let request = RewriteRequest::new("k", SourceKind::FlyDsl).with_explicit_budget(Some(10));
    let verdict = evaluate_rewrite_route(&request);
    assert_eq!(
        verdict.eligibility,
        declined(DeclineReason::AlreadyFlydslSource)
    );
}

#[test]
fn non_portable_sources_are_declined_whatever_the_budget() {
    for source in [
        SourceKind::Python,
        SourceKind::Unknown,
        SourceKind::VendorBinary,
        SourceKind::RuntimeGenerated,
    ] {
        let request = RewriteRequest::new("k", source).with_explicit_budget(Some(600));
        let verdict = evaluate_rewrite_route(&request);
        assert_eq!(
            verdict.eligibility,
            declined(DeclineReason::NonPortableLanguage),
            "{source:?}"
        );
    }
    for source in [
        SourceKind::Triton,
        SourceKind::Cuda,
        SourceKind::Hip,
        SourceKind::Cpp,
    ] {
        let verdict = evaluate_rewrite_route(&RewriteRequest::new("k", source));
        assert!(verdict.eligible(), "{source:?}");
    }
}

#[test]
fn resolve_prefers_flydsl_then_kernel_kind_then_language() {
    assert_eq!(SourceKind::resolve("python", "triton"), SourceKind::Triton);
    assert_eq!(
        SourceKind::resolve("cpp", "FlyDSL-kernel"),
        SourceKind::FlyDsl
    );
    assert_eq!(SourceKind::resolve("", ""), SourceKind::Unknown);
    assert_eq!(SourceKind::resolve("cu", ""), SourceKind::Cuda);
    assert_eq!(SourceKind::resolve("C++", "mystery"), SourceKind::Cpp);
    assert_eq!(
        SourceKind::resolve("py", "jit"),
        SourceKind::RuntimeGenerated
    );
    assert_eq!(
        SourceKind::resolve("Vendor-Binary", ""),
        SourceKind::VendorBinary
    );
}

#[test]
fn every_locate_kind_label_round_trips_through_resolve_and_serde() {
    let labels = [
        "triton",
        "cuda",
        "hip",
        "cpp",
        "flydsl",
        "python",
        "vendor_binary",
        "runtime_generated",
        "unknown",
    ];
    for label in labels {
        let kind = SourceKind::resolve("", label);
        assert_eq!(kind.as_str(), label);
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(label));
    }
}

#[test]
fn render_states_the_verdict_budget_and_needs() {
    let declined = evaluate_rewrite_route(&triton().with_default_budget(60));
    assert_eq!(
        declined.render(),
        "flydsl_rewrite my_kernel: declined: budget_insufficient (budget 60 min, default; needs 75 = 60 producer + 15 apply-back)"
    );
    let eligible = evaluate_rewrite_route(&triton().with_default_budget(60).with_opted_in(true));
    assert_eq!(
        eligible.render(),
        "flydsl_rewrite my_kernel: eligible (budget 75 min, default_floored; needs 75)"
    );
}

#[test]
fn verdict_json_has_the_route_shape() {
    let declined = evaluate_rewrite_route(&triton().with_default_budget(60));
    assert_eq!(
        serde_json::to_string(&declined).unwrap(),
        r#"{"route":"flydsl_rewrite","candidate":"my_kernel","source":"triton","eligible":false,"reason":"budget_insufficient","effective_budget_minutes":60,"budget_source":"default","required_minutes":75}"#
    );
    let eligible = evaluate_rewrite_route(&triton());
    let value = serde_json::to_value(&eligible).unwrap();
    assert_eq!(value["eligible"], json!(true));
    assert_eq!(value["reason"], json!(null));
}

/// A planning report for one attempt, as a caller of the policy would build
/// it: the verdict is a required field, so it cannot be planned and dropped.
#[derive(serde::Serialize)]
struct AttemptPlan {
    candidate: String,
    rewrite_route: RewriteVerdict,
}

impl AttemptPlan {
    fn new(request: &RewriteRequest) -> Self {
        AttemptPlan {
            candidate: request.candidate.clone(),
            rewrite_route: evaluate_rewrite_route(request),
        }
    }

    fn text(&self) -> String {
        format!(
            "attempt {}\n  {}",
            self.candidate,
            self.rewrite_route.render()
        )
    }
}

#[test]
fn planning_report_carries_the_verdict_in_json_and_text() {
    for request in [
        triton().with_default_budget(60),
        triton().with_default_budget(60).with_opted_in(true),
    ] {
        let plan = AttemptPlan::new(&request);
        let value = serde_json::to_value(&plan).unwrap();
        assert_eq!(value["rewrite_route"]["route"], json!("flydsl_rewrite"));
        assert_eq!(
            value["rewrite_route"]["eligible"],
            json!(plan.rewrite_route.eligible())
        );
        assert!(plan.text().contains(&plan.rewrite_route.render()));
    }
}
