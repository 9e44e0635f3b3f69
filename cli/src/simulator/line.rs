//! What a step prints: one JSON line, built from the API's replies and the
//! stored turn log.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use tutorflow::model::{ClientEvent, GradeOutcome, MasteryTier, SnapshotLite};

/// One output line: the step, what happened, and the student's summary.
#[derive(Debug, Serialize)]
pub struct Line {
    pub step: usize,
    /// `path:line:column` of the step in the script.
    pub at: String,
    #[serde(rename = "do")]
    pub action: &'static str,
    #[serde(flatten)]
    pub outcome: StepOutcome,
}

impl Line {
    /// The line as JSON, for expectations to read.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What one step did, by the kind of step.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum StepOutcome {
    Turn(Box<TurnOutcome>),
    Drill(DrillOutcome),
    Exam(ExamOutcome),
    Memo(MemoOutcome),
    Wait(WaitOutcome),
    Lifecycle(LifecycleOutcome),
    Refused(RefusedOutcome),
}

/// A turn, with its policy chain from the stored turn log.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) said: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) event: Option<ClientEvent>,
    /// The units the message (and the previous turn's reading) mapped to.
    pub(super) mapped_units: Value,
    /// The routing category (absent when a safety rule answered).
    pub(super) category: Value,
    pub(super) action: Value,
    pub(super) card: Option<CardSummary>,
    /// `offline`, `llm` or `fallback`.
    pub(super) origin: Value,
    pub(super) validation: Value,
    #[serde(rename = "override", skip_serializing_if = "Value::is_null")]
    pub(super) override_rule: Value,
    #[serde(skip_serializing_if = "Value::is_null")]
    pub(super) safety_rule: Value,
    pub(super) policy: PolicySummary,
    /// Code grade of the answer to the pending question, if one was graded.
    pub(super) result: Value,
    /// For a drill answered in the chat: whether it was evidence, and its tag.
    pub(super) counted: Value,
    pub(super) mistake_tag: Value,
    /// The thread's state after the turn.
    pub(super) pending: bool,
    /// The pending question's lifecycle phase and wrong answers so far.
    pub(super) phase: Value,
    pub(super) wrong_attempts: Value,
    pub(super) scaffolding: bool,
    pub(super) teach_back: bool,
    /// The pacing directive the reply was written under.
    pub(super) pacing: Value,
    /// A lesson's study plan after the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) plan: Option<PlanSummary>,
    /// The thread's status after the turn (`active`, `paused`, `completed`).
    pub(super) status: tutorflow::model::ThreadStatus,
    /// How many concepts the session has discussed.
    pub(super) concepts: usize,
    /// A problem set after the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) problem_set: Option<ProblemSetSummary>,
    pub(super) tutor_text: String,
    pub(super) snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PlanSummary {
    /// The current step's kind; `none` once the plan is complete.
    pub(super) step: &'static str,
    pub(super) steps_completed: u32,
    pub(super) blocked: u32,
    pub(super) replans: u32,
    pub(super) complete: bool,
    pub(super) extension_turns: u32,
}

impl PlanSummary {
    pub(super) fn of(plan: &tutorflow::model::StudyPlanView) -> PlanSummary {
        use tutorflow::model::{StepKind, StepStatus};
        let step = plan
            .steps
            .iter()
            .find(|s| Some(&s.step_id) == plan.current_step_id.as_ref())
            .map_or("none", |s| match s.kind {
                StepKind::Explain => "explain",
                StepKind::Check => "check",
                StepKind::Practice => "practice",
            });
        PlanSummary {
            step,
            steps_completed: plan.steps_completed,
            blocked: plan
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Blocked)
                .count() as u32,
            replans: plan.replans_used,
            complete: plan.complete,
            extension_turns: plan.extension_turns,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProblemSetSummary {
    /// What the session did after the turn.
    pub(super) action: Value,
    /// The mastery signal of the problem this turn worked on (`none` yet).
    pub(super) signal: Value,
    /// The problem now being worked on, from 1 (past the last once done).
    pub(super) problem: u32,
    pub(super) completed: u32,
    /// `completed`, `abandoned` or `none` while the session runs.
    pub(super) ended: Value,
}

impl ProblemSetSummary {
    pub(super) fn of(
        view: &tutorflow::model::ProblemSetView,
        worked_on: usize,
    ) -> ProblemSetSummary {
        let word = |v: Value| match v {
            Value::Null => Value::from("none"),
            v => v,
        };
        ProblemSetSummary {
            action: json!(view.last_action),
            signal: word(json!(view.problems.get(worked_on).and_then(|p| p.signal))),
            problem: view.current_problem_index + 1,
            completed: view.problems_completed,
            ended: word(json!(view.ended)),
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PolicySummary {
    pub(super) focus: Value,
    pub(super) primary_target: Value,
    pub(super) blocker: Value,
    /// The desired exam tier.
    pub(super) tier: Value,
    pub(super) allowed_actions: Value,
    /// No confident mapping but a plausible one: only a clarifying question.
    pub(super) ambiguous: Value,
    pub(super) stuck: Value,
    pub(super) exam_ready: Value,
    pub(super) exam_availability: Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CardSummary {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) unit_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) question: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) question_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tier: Option<tutorflow::model::ExamTier>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrillOutcome {
    pub(super) answer: String,
    pub(super) result: GradeOutcome,
    pub(super) counted: bool,
    pub(super) mistake_tag: Option<String>,
    pub(super) feedback: String,
    pub(super) snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamOutcome {
    pub(super) question_id: String,
    pub(super) selected: String,
    /// `correct` or `wrong`.
    pub(super) result: GradeOutcome,
    /// The question's unit's tier after the answer.
    pub(super) unit_tier: MasteryTier,
    pub(super) locked: bool,
    pub(super) locked_until: Option<DateTime<Utc>>,
    pub(super) feedback: String,
    pub(super) snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoOutcome {
    pub(super) question_id: String,
    pub(super) locked: bool,
    pub(super) locked_until: Option<DateTime<Utc>>,
    pub(super) snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
pub struct WaitOutcome {
    pub(super) now: DateTime<Utc>,
}

/// A pause, resume or end: the thread's status after it and what the
/// session said (an ended one's summary).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleOutcome {
    pub(super) status: tutorflow::model::ThreadStatus,
    pub(super) paused_at: Option<DateTime<Utc>>,
    pub(super) ended_at: Option<DateTime<Utc>>,
    /// A problem set after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) problem_set: Option<ProblemSetSummary>,
    pub(super) tutor_text: String,
}

/// A step the API refused, as the step expected (`refused:`).
#[derive(Debug, Serialize)]
pub struct RefusedOutcome {
    pub(super) refused: Refusal,
}

#[derive(Debug, Serialize)]
pub(super) struct Refusal {
    pub(super) status: u16,
    pub(super) title: String,
    pub(super) detail: String,
}

/// Mapped units with confidences to three decimals: the previous turn's
/// reading is weighted, which leaves float noise nobody needs to read.
pub(super) fn rounded_confidences(mapped: &Value) -> Value {
    let mut mapped = mapped.clone();
    if let Some(units) = mapped.as_array_mut() {
        for unit in units {
            if let Some(c) = unit["confidence"].as_f64() {
                unit["confidence"] = json!((c * 1000.0).round() / 1000.0);
            }
        }
    }
    mapped
}
