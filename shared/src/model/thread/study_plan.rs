//! A teach_me session's study plan: its steps and how far each got.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Explain,
    Check,
    Practice,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Blocked,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepProgress {
    pub questions_asked: u32,
    pub questions_correct: u32,
    pub attempts: u32,
    /// The step's idea has been put in front of the student (an explain
    /// step's card).
    #[serde(default)]
    pub taught: bool,
}

/// One step of a teach_me study plan, kept like a to-do list item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    pub step_id: String,
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<String>,
    pub status: StepStatus,
    pub progress: StepProgress,
}

/// A study plan step as a unit's author writes it (a unit file's
/// `study_plan`): a lesson of that unit starts from it, and the offline
/// planner uses it as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthoredStep {
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default)]
    pub success_criteria: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudyPlan {
    /// The unit the lesson teaches.
    #[serde(default)]
    pub unit_id: String,
    pub steps: Vec<PlanStep>,
    pub plan_version: u32,
    pub replan_count: u32,
    pub max_replans: u32,
    /// Turns taken after the plan was completed (extension).
    #[serde(default)]
    pub extension_turns: u32,
    /// Every rewrite of the plan, oldest first.
    #[serde(default)]
    pub replans: Vec<ReplanRecord>,
    /// The pacing of the last reply: the evaluator reads it before this
    /// turn's pacing is known, so a turn's preview and its update agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pacing: Option<crate::model::signals::PacingDirective>,
}

/// Why and when a study plan was rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplanRecord {
    /// The session turn whose answer triggered it.
    pub turn: u32,
    pub reason: String,
}
