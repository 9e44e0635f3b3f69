//! A problem_set session: its problems, each one's progress and
//! mastery signal, and the report it ends with.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::question::ExpectedAnswer;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProblemStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Skipped,
}

/// How a problem of a problem set went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MasterySignal {
    /// Right on the first attempt, with no help.
    Mastered,
    /// Right after wrong tries, hints or scaffolding.
    Learned,
    /// Wrong `struggling_attempts` times or more, not yet right.
    Struggling,
    /// Scaffolded deeper than `intervene_scaffold_depth`, not yet right.
    Stuck,
}

/// What a problem-set session does after a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProgressionAction {
    /// The problem is done: the next one is presented in the same reply.
    Advance,
    /// Stay on the problem.
    #[default]
    Continue,
    /// The student needs a person: the teacher is alerted.
    Intervene,
    /// The problem is left unsolved and the next one presented.
    Skip,
}

/// What happened on one problem, for progression and the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProblemProgress {
    /// Graded answers (right or wrong) to the problem itself.
    pub attempts: u32,
    pub wrong_attempts: u32,
    /// Replies that helped: hints and scaffolding steps.
    pub hints_used: u32,
    /// The problem's own hints shown so far (they are shown in order).
    pub hints_shown: u32,
    /// Deepest scaffolding reached.
    pub scaffold_depth: u32,
    /// The routing category of the first message about the problem.
    pub first_category: Option<String>,
    /// Routing categories seen, in first-seen order.
    pub categories: Vec<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Answered right (the teach-back may still be awaited).
    pub solved: bool,
    pub solved_at: Option<DateTime<Utc>>,
    /// The student explained their method after solving it.
    pub taught_back: bool,
    pub signal: Option<MasterySignal>,
    /// The teacher has been alerted about this problem.
    pub intervened: bool,
    /// The tutor has offered to skip this problem.
    pub skip_offered: bool,
}

/// A problem of a problem-set session, in the order they are worked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProblemEntry {
    pub problem_id: String,
    pub text: String,
    /// Kept server-side: never shown to the student.
    pub expected: ExpectedAnswer,
    /// The course unit the problem practises, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    /// Hints in the order they may be given (never stating the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    pub status: ProblemStatus,
    #[serde(default)]
    pub progress: ProblemProgress,
}

/// Why a problem-set session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionEnd {
    /// Every problem was solved or skipped.
    Completed,
    /// Left inactive past the session's time to live.
    Abandoned,
}

/// A problem-set session: the problems, where the student is, and the
/// report once it ends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProblemSetState {
    /// The course's set the problems came from, if any.
    pub set_id: Option<String>,
    pub title: Option<String>,
    pub problems: Vec<ProblemEntry>,
    /// Problems arrive one at a time from an integration: finishing the
    /// last one so far waits for the next instead of ending the session.
    pub open: bool,
    pub current_index: u32,
    pub last_action: ProgressionAction,
    /// The turn that moved on to the current problem: its messages and
    /// those before belong to earlier problems (hybrid memory).
    pub problem_turn: Option<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub ended: Option<SessionEnd>,
    pub report: Option<ProblemSetReport>,
}

/// The report a problem-set session ends with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemSetReport {
    pub ended: SessionEnd,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_id: Option<String>,
    pub problems_total: u32,
    /// Solved or skipped.
    pub problems_completed: u32,
    pub mastered: u32,
    pub learned: u32,
    pub struggling: u32,
    pub stuck: u32,
    pub skipped: u32,
    /// Right answers among graded answers, in [0, 1].
    pub accuracy: f64,
    /// Problems right on the first try, among those attempted, in [0, 1].
    pub mastery_rate: f64,
    pub time_on_task_seconds: u64,
    pub hints_used: u32,
    pub problems: Vec<ProblemReportLine>,
    /// What to practise next, most pressing first.
    pub suggested_focus: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemReportLine {
    pub problem_id: String,
    pub text: String,
    pub status: ProblemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<MasterySignal>,
    pub attempts: u32,
    pub hints_used: u32,
    pub scaffold_depth: u32,
    pub taught_back: bool,
    pub time_seconds: u64,
    pub categories: Vec<String>,
}
