//! Conversation items and the interactive cards the apps render.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::grade::GradeOutcome;
use super::tier::ExamTier;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Student,
    Assistant,
}

/// One item of a thread's timeline. Messages are stored append-only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TutorMessage {
    pub id: String,
    pub thread_id: String,
    pub role: Role,
    pub text: String,
    pub latex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<TutorCard>,
    /// What became of `card` since: filled in when a conversation is read
    /// back (`GET /threads/{threadId}`); absent while the card is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_state: Option<CardState>,
    /// Set on a student's action on a card (a drill answered, an exam
    /// question submitted, a memo opened): the timeline records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<TimelineEvent>,
    /// Set on a tutor message that answers a message the safety gate
    /// flagged, so an app can show the help resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<SafetyMark>,
    pub created_at: DateTime<Utc>,
}

impl TutorMessage {
    /// Part of the conversation the tutor reads back (events are not).
    pub fn is_conversation(&self) -> bool {
        self.event.is_none()
    }
}

/// A student's action on a card, as the timeline records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum TimelineEvent {
    /// A drill card's answer was checked.
    DrillGraded {
        /// The graded token's replay key (`engine::practice::drill_token::replay_key_of`).
        drill_key: String,
        unit_id: String,
        #[serde(flatten)]
        grade: DrillCardState,
        /// Whether it counted as evidence (only a first attempt does).
        counted: bool,
    },
    /// An exam card's answer was submitted.
    ExamSubmitted {
        question_id: String,
        unit_id: String,
        tier: ExamTier,
        selected_option: String,
        is_correct: bool,
        feedback_text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locked_until: Option<DateTime<Utc>>,
    },
    /// An exam card's memo or video was opened (which locks the question).
    SupportViewed {
        question_id: String,
        unit_id: String,
        support_type: SupportType,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locked_until: Option<DateTime<Utc>>,
    },
}

/// The supports an exam card offers besides its question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SupportType {
    Memo,
    Video,
}

/// A card as the student left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CardState {
    Drill(DrillCardState),
    Exam(ExamCardState),
}

/// A drill card's checked answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DrillCardState {
    pub answer: String,
    pub result: GradeOutcome,
    pub is_correct: bool,
    pub feedback_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct_answer: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExamCardStatus {
    /// Answered correctly.
    Passed,
    /// Answered wrongly: locked until `lockedUntil`, then on the revisit list.
    Failed,
    /// The memo or video was opened before answering: locked too.
    Locked,
}

/// An exam card's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamCardState {
    pub status: ExamCardStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_option: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked_until: Option<DateTime<Utc>>,
    /// The supports opened (memo, video), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supports_viewed: Vec<SupportType>,
    /// The worked solution, once the memo was opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
}

/// How the tutor answered a message the safety gate flagged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SafetyMark {
    /// The workflow's safety category, e.g. `self_harm`, `profanity`.
    pub category: String,
    /// The student was flagged repeatedly in this conversation, so the
    /// message also asks them to talk to a trusted adult.
    pub escalated: bool,
    /// The student's teachers are alerted (`intervention.needed`).
    pub alert: bool,
    /// No tutoring this turn; otherwise the tutor's reply follows the
    /// safety note in the same message.
    pub tutoring_paused: bool,
    /// Help lines for the student's region (also written in the text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub help_resources: Vec<HelpResource>,
}

/// A help line or service a student can reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HelpResource {
    pub name: String,
    /// How to reach it, e.g. "call 116 123" or "text SHOUT to 85258".
    #[serde(default)]
    pub contact: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// An interactive card in the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TutorCard {
    Concept(ConceptCard),
    Drill(DrillCard),
    Exam(ExamCard),
}

/// Key ideas and an optional worked example; shown when the student is stuck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConceptCard {
    pub unit_id: String,
    pub key_ideas: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worked_example: Option<WorkedExample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkedExample {
    pub problem_latex: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_latex: Vec<String>,
    pub final_answer_latex: String,
}

/// A generated practice question. Its answer is never sent: the signed
/// `drillToken` lets the server regenerate and grade it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DrillCard {
    pub unit_id: String,
    pub prompt: String,
    pub question_latex: String,
    /// Choices for a multiple-choice drill; absent for a typed answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drill_token: Option<String>,
}

/// An authored exam question from the course bank, graded on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamCard {
    pub unit_id: String,
    pub question_id: String,
    pub tier: ExamTier,
    pub stem: String,
    pub options: Vec<ExamOption>,
    pub has_memo: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_url: Option<String>,
    /// Set when the question cannot be attempted yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked_until: Option<DateTime<Utc>>,
}

/// One answer choice: a stable id (`A`, `B`, ...) and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamOption {
    pub id: String,
    pub text: String,
}
