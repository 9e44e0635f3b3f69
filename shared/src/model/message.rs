//! Conversation items and the interactive cards the apps render (seed 004 `TutorMessage`).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    pub created_at: DateTime<Utc>,
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
