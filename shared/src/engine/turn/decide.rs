//! Step 10 of the turn: the tutor's reply checked against the policy. An
//! invalid or failed reply is replaced by the fallback tutor's reply for the
//! fallback action; the model is never asked a second time. The checks
//! themselves are `engine::reply`'s: `fallback` validates the reply
//! against the policy and writes the fallback, `answer_guard` keeps
//! pending answers out of the reply and the tutor's input.

use serde_json::json;

use super::ReplyOrigin;
use crate::content::Workflow;
use crate::engine::reply::answer_guard::{self, PendingAnswer};
use crate::engine::reply::fallback::{self, ValidationContext, Verdict, Violation};
use crate::engine::turn_data::Plan;
use crate::model::{
    ClientEvent, FallbackTutor, LlmError, LlmTutorResponse, Reply, TutorAction, UnderstandingSignal,
};

/// The reply a turn goes on with, and how it was obtained.
pub struct Decision {
    pub reply: LlmTutorResponse,
    pub origin: ReplyOrigin,
    pub verdict: Verdict,
    /// The provider's reply or error, for the log.
    pub llm: serde_json::Value,
    /// A rule outside validation that changed the reply.
    pub override_rule: Option<&'static str>,
}

/// The reply to go on with: the tutor's own when it passes validation
/// (`valid_origin` says whether a model or the offline tutor wrote it),
/// else `fallback`'s reply for the fallback action.
pub fn decide(
    workflow: &Workflow,
    plan: &Plan,
    result: &Result<Reply<LlmTutorResponse>, LlmError>,
    event: &ClientEvent,
    fallback: &dyn FallbackTutor,
    valid_origin: ReplyOrigin,
) -> Decision {
    let policy = &plan.policy.policy;
    let context = ValidationContext::new(&plan.policy, workflow);
    let (verdict, llm) = match result {
        Ok(reply) => (
            fallback::validate_reply(&reply.value, policy, &context),
            json!({
                "provider": reply.usage.provider,
                "model": reply.usage.model,
                "inputTokens": reply.usage.input_tokens,
                "outputTokens": reply.usage.output_tokens,
                "latencyMs": reply.usage.latency_ms,
                "attempts": reply.usage.attempts,
            }),
        ),
        Err(e) => (
            Verdict::Fallback(fallback::fallback(
                policy,
                vec![Violation::UnparseableReply],
            )),
            json!({ "error": e.kind(), "detail": e.to_string() }),
        ),
    };
    let (mut reply, mut origin) = match (&verdict, result) {
        (Verdict::Valid, Ok(reply)) => (reply.value.clone(), valid_origin),
        (Verdict::Fallback(f), _) => (
            fallback
                .reply_with(&plan.input, f.action)
                .or_else(|_| fallback.reply(&plan.input))
                .unwrap_or_else(|_| last_resort(plan, &workflow.sanitize.fallback_text)),
            ReplyOrigin::Fallback,
        ),
        (Verdict::Valid, Err(_)) => unreachable!("an error is never valid"),
    };
    // "Try a drill" asks for a drill: honour it when the policy allows one.
    let mut override_rule = None;
    if matches!(event, ClientEvent::RequestDrill { .. })
        && reply.action != TutorAction::DrillCard
        && policy.allows(TutorAction::DrillCard)
        && plan.practice.is_some()
        && let Ok(drill) = fallback.reply_with(&plan.input, TutorAction::DrillCard)
    {
        reply = drill;
        origin = ReplyOrigin::Fallback;
        override_rule = Some("client_requested_drill");
    }
    // No reply states an answer before it is graded: a reply that does is
    // replaced, and so is a fallback reply that does.
    let mut verdict = verdict;
    if let Some(owner) = leak(plan, &reply) {
        let violation = Violation::RevealsPendingAnswer { owner };
        let action = match &mut verdict {
            Verdict::Fallback(f) => {
                f.violations.push(violation);
                f.action
            }
            Verdict::Valid => {
                let f = fallback::fallback(policy, vec![violation]);
                let action = f.action;
                verdict = Verdict::Fallback(f);
                action
            }
        };
        reply = fallback
            .reply_with(&plan.input, action)
            .ok()
            .filter(|r| leak(plan, r).is_none())
            .unwrap_or_else(|| last_resort(plan, &workflow.sanitize.fallback_text));
        origin = ReplyOrigin::Fallback;
        override_rule = None;
    }
    Decision {
        reply,
        origin,
        verdict,
        llm,
        override_rule,
    }
}

/// Whose answer `reply` gives away, if it does: one pending this turn, an
/// exam question the reply may show, or the answer of the reply's own drill.
fn leak(plan: &Plan, reply: &LlmTutorResponse) -> Option<String> {
    let own = reply.drill_card.as_ref().and_then(|d| {
        PendingAnswer::new(
            "the reply's drill",
            &format!("{} {}", d.prompt, d.question_latex),
            d.expected_answer.as_deref()?,
        )
    });
    let shown_practice = plan
        .practice_answer
        .as_ref()
        .filter(|_| reply.drill_card.is_some());
    let guarded: Vec<&PendingAnswer> = plan
        .pending_answers
        .iter()
        .chain(&plan.exam_answers)
        .chain(shown_practice)
        .chain(own.as_ref())
        .collect();
    // The server's practice item, when there is one, is the drill shown.
    let own_drill = plan.practice.is_none();
    answer_guard::leak_in(reply, own_drill, guarded.iter().copied()).map(|p| p.owner.clone())
}

/// A Socratic reply on the focus with the workflow's neutral line: valid
/// under any policy, for when even the fallback tutor has nothing to say.
fn last_resort(plan: &Plan, text: &str) -> LlmTutorResponse {
    LlmTutorResponse::said(
        plan.policy.policy.focus_unit_id.clone(),
        text.to_owned(),
        plan.input.reading.intent,
        UnderstandingSignal::Uncertain,
    )
}
