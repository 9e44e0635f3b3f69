//! The tutor LLM's structured reply (seed 004 PF-3.6.5), validated against the
//! policy before use. snake_case: this is the prompt contract the model sees.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::TutorAction;
use super::tier::ExamTier;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmTutorResponse {
    pub mapped_units: Vec<LlmMappedUnit>,
    pub action: TutorAction,
    pub target_unit_id: String,
    pub tutor_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concept_card: Option<LlmConceptCard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drill_card: Option<LlmDrillCard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam_suggestion: Option<LlmExamSuggestion>,
    pub turn_analysis: LlmTurnAnalysis,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmMappedUnit {
    pub unit_id: String,
    /// Confidence in [0,1].
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmConceptCard {
    /// At most three short ideas.
    pub key_ideas: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worked_example: Option<LlmWorkedExample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmWorkedExample {
    pub problem_latex: String,
    pub final_answer_latex: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_latex: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmDrillCard {
    pub prompt: String,
    pub question_latex: String,
    /// The answer the LLM expects; kept in the signed drill token, never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmExamSuggestion {
    pub question_id: String,
    /// Seed 004 spells this field `difficultyTier`; both spellings are read.
    #[serde(alias = "difficultyTier")]
    pub difficulty_tier: ExamTier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmTurnAnalysis {
    pub student_intent: StudentIntent,
    pub understanding_signal: UnderstandingSignal,
    pub suggested_prereq_units: Vec<String>,
    /// What the student literally answered, when the message is an answer
    /// (seed 003: extract what was SAID, not what was meant). Code grades it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_text: Option<String>,
}

/// What the student is doing with this message. Seed 004's five intents plus
/// the readings seed 003's routing and seed 000's modes need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StudentIntent {
    /// Attempting an answer to the pending question.
    Answer,
    /// Wants to solve a problem of their own.
    Solve,
    /// Asking to have a concept explained.
    Question,
    /// Explaining their reasoning (teach-back).
    Explain,
    /// Asking whether their work is right.
    Check,
    Stuck,
    OffTopic,
    /// Wants to finish the session.
    Done,
    #[default]
    Unknown,
}

impl StudentIntent {
    pub fn as_str(self) -> &'static str {
        match self {
            StudentIntent::Answer => "answer",
            StudentIntent::Solve => "solve",
            StudentIntent::Question => "question",
            StudentIntent::Explain => "explain",
            StudentIntent::Check => "check",
            StudentIntent::Stuck => "stuck",
            StudentIntent::OffTopic => "off_topic",
            StudentIntent::Done => "done",
            StudentIntent::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnderstandingSignal {
    Confident,
    #[default]
    Uncertain,
    Confused,
}
