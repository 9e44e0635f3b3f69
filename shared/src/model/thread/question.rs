//! A question the tutor asked and is waiting on: its expected answer,
//! kept server-side, and the help around it (scaffolding, teach-back).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a question's answer is checked by code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    #[default]
    Number,
    Expression,
    Equation,
    Mcq,
    /// Free text: not gradable by code, judged by the LLM's reading.
    Text,
}

/// The expected answer of a question, kept server-side only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedAnswer {
    pub kind: AnswerKind,
    pub value: String,
    /// Unit of measure the answer is in (`cm`, `kg`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Choices: the only answers that count for `mcq`; for the other kinds
    /// the options a student may also pick by letter or position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Wrong answers that known mistakes produce, shown as options or not:
    /// grading names the mistake a wrong answer comes from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mistakes: Vec<KnownMistake>,
}

/// A wrong answer and the mistake that produces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownMistake {
    /// Written like the expected answer's value (`75`, `x = 6`, `26 r 9`).
    pub value: String,
    /// How the mistake is made, e.g. `forgot_to_carry`.
    pub strategy: String,
    /// The unit's mistake tag it earns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
    /// A slip in the answer itself (one out, ten out): an answer this near
    /// the expected one is still `close`. Any other mistake is one of
    /// method, and makes a near answer `wrong`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slip: bool,
}

/// Escalation of a pending question after wrong answers: each wrong answer
/// moves it one phase on, from asked to a change of strategy.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum QuestionPhase {
    #[default]
    Asked,
    Probe,
    Hint,
    Explain,
    StrategyChange,
}

/// A question the tutor asked and is waiting on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    pub text: String,
    pub expected: Option<ExpectedAnswer>,
    pub unit_id: String,
    pub concept: String,
    pub wrong_attempts: u32,
    pub previous_answers: Vec<String>,
    pub hints_used: u32,
    pub phase: QuestionPhase,
    pub asked_at: DateTime<Utc>,
    /// The signed token of a drill, so an answer typed in the chat is graded
    /// (and counted as drill evidence) exactly like one sent to drill-grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drill_token: Option<String>,
}

impl PendingQuestion {
    /// Whether the tutor offered something rather than asked something
    /// ("Shall we look at Decimals…?", "What else would you like to
    /// know?"): a "no thanks" to it declines, it does not answer.
    pub fn is_offer(&self) -> bool {
        self.expected.is_none() && reads_as_offer(&self.text)
    }
}

/// Whether a question's words offer something.
pub fn reads_as_offer(question: &str) -> bool {
    const OFFERS: [&str; 5] = [
        "shall we",
        "would you like",
        "do you want",
        "want to",
        "what else",
    ];
    let lower = question.trim().to_lowercase();
    OFFERS.iter().any(|o| lower.starts_with(o))
}

/// Scaffolding: the problem broken into smaller questions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Scaffolding {
    pub active: bool,
    pub depth: u32,
    pub last_question: Option<String>,
    /// What the smaller step the tutor last offered works out to, so an
    /// answer to that step is progress rather than a wrong try at the problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_expects: Option<String>,
}

/// Teach-back: after a correct answer the student explains it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TeachBack {
    pub active: bool,
    pub awaiting_explanation: bool,
}
