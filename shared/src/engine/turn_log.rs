//! The record every turn leaves: the whole chain from the message to the
//! reply, so a teacher or developer can see why the tutor did what it did.

use serde::Serialize;
use serde_json::json;

use crate::engine::mastery::evidence::EvidenceEffect;
use crate::engine::turn::Decision;
use crate::engine::turn_data::Plan;
use crate::model::SafetyMark;

/// How long a turn's stages took, in milliseconds (to the microsecond), as
/// the caller measured them: everything up to the commit that stores the
/// log with the turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageTimings {
    /// Waiting for the thread's previous turn to finish.
    pub lease_wait_ms: f64,
    /// Reading the thread, the student's record and exam statuses.
    pub load_ms: f64,
    /// The policy, the mode's plan, retrieval and the tutor's input.
    pub plan_ms: f64,
    /// The tutor call, with the online safety checks beside it.
    pub llm_ms: f64,
    /// Validation, fallback and applying the reply to state.
    pub apply_ms: f64,
    /// From the request's arrival to the commit.
    pub until_commit_ms: f64,
    /// The commit attempt this log belongs to, from 1 (more after a
    /// version conflict).
    pub commit_attempt: usize,
}

impl StageTimings {
    /// `d` in milliseconds, to the microsecond.
    pub fn ms(d: std::time::Duration) -> f64 {
        d.as_micros() as f64 / 1000.0
    }
}

/// The tokens of the turn's tutor call: the provider's counts, or offline
/// the estimate of what the prompt and the reply would cost with a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenCount {
    pub prompt: u32,
    pub completion: u32,
    pub estimated: bool,
}

/// The policy chain of one turn: reading, policy, practice item, the reply
/// and how it was obtained (`decision` is `None` when no reply was asked for),
/// and how a flagged message was answered — with `alert`, the record of the
/// `intervention.needed` alert for the student's teachers; then what the
/// turn cost: its stage timings and tokens (`None` when no model was asked).
pub fn log_entry(
    plan: &Plan,
    decision: Option<&Decision>,
    drill: Option<&EvidenceEffect>,
    safety: Option<&SafetyMark>,
    timings: &StageTimings,
    tokens: Option<&TokenCount>,
) -> serde_json::Value {
    let p = &plan.policy.policy;
    let classification = plan.interpretation.as_ref().map(|i| &i.classification);
    let grade = plan.interpretation.as_ref().and_then(|i| i.grade.as_ref());
    json!({
        "category": plan.category,
        "intent": classification.map(|c| c.intent),
        "categoryRule": classification.map(|c| c.rule.clone()),
        "grade": grade.map(|g| json!({ "result": g.result, "tags": g.tags })),
        "safetyRule": plan.safety.as_ref().map(|h| h.rule_id.clone()),
        "safety": safety.map(|m| json!({
            "category": m.category,
            "source": plan.safety.as_ref().map(|h| h.source),
            "escalated": m.escalated,
            "tutoringPaused": m.tutoring_paused,
            "alert": m.alert.then_some("intervention.needed"),
        })),
        "mappedUnits": plan.mapped_units,
        "pacing": plan.input.pacing,
        "style": plan.input.style,
        "policy": {
            "focusUnitId": p.focus_unit_id,
            "primaryTargetUnitId": p.primary_target_unit_id,
            "prereqBlockingUnitId": p.prereq_blocking_unit_id,
            "scopedUnitIds": p.scoped_unit_ids,
            "allowedActions": p.allowed_actions,
            "stuck": p.stuck,
            "examReady": p.exam_ready,
            "desiredExamTier": p.desired_exam_tier,
            "examAvailability": p.exam_availability,
            "nextEligibleAt": p.exam_next_eligible_at,
            "trace": plan.policy.trace,
        },
        "topCandidates": plan.policy.candidates.iter().take(5).collect::<Vec<_>>(),
        "practiceItem": plan.practice.as_ref().map(|d| json!({
            "blueprintId": d.item.blueprint_id,
            "difficulty": d.item.difficulty,
            "scenario": d.item.scenario,
        })),
        "chatDrill": drill,
        "action": decision.map(|d| d.reply.action),
        "targetUnitId": decision.map(|d| d.reply.target_unit_id.clone()),
        "origin": decision.map(|d| d.origin),
        "validation": decision.map(|d| &d.verdict),
        "override": decision.and_then(|d| d.override_rule),
        "llm": decision.map(|d| &d.llm),
        "timings": timings,
        "tokens": tokens,
    })
}
