//! What a session's summary is made of (docs/architecture.md, "The
//! conversation as it is read back"): a timeline of its latest turns as a
//! teacher reads them, the trend of the student's answers and the concepts
//! the session taught.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::TutorAction;

/// How the student's answers are going lately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    Improving,
    Steady,
    Declining,
}

/// One turn of a session (or a card answered between turns), as a
/// teacher reads it: never the student's words or an expected answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// The session's turn it belongs to, from 1 (a card answered after
    /// turn 3 is in turn 3).
    pub turn: u32,
    pub at: DateTime<Utc>,
    /// What the student did: the routing category their message was read
    /// as (`attempt_answer`, `stuck`), a button or card event
    /// (`request_drill`, `exam_answer`, `drill_graded`).
    pub step: String,
    /// The tutor's move, when it replied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<TutorAction>,
    /// The unit the turn was about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    pub outcome: TimelineOutcome,
}

/// What came of a turn, most telling first: a grade, else help asked
/// for, else what the tutor gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimelineOutcome {
    /// An answer graded right.
    Right,
    /// An answer graded nearly right.
    Close,
    /// An answer graded wrong.
    Wrong,
    /// An answer the session marks itself (an exam's, a survey's): its
    /// marks are the session's to show.
    Answered,
    Skipped,
    /// The student ended the session (or its questions) early.
    Ended,
    /// The session was left idle past its time and closed as abandoned.
    Abandoned,
    /// Help asked for: a hint, "I'm stuck", a memo opened.
    Hint,
    /// The tutor asked a question (or answered one).
    Question,
    /// The tutor explained with a concept card.
    ConceptCard,
    /// The tutor set a practice item.
    Drill,
    /// The tutor offered an exam question.
    ExamQuestion,
    /// The safety response stood in for tutoring.
    Safety,
}

/// A concept the session taught, in the order it was met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConceptTaught {
    pub unit_id: String,
    pub title: String,
}
