//! An exam-mode session: its questions, with their answers and marks,
//! and how it ended.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::question::ExpectedAnswer;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    Easy,
    Medium,
    Hard,
}

impl Difficulty {
    pub const ALL: [Difficulty; 3] = [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard];

    pub fn as_str(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuestionResult {
    Correct,
    Partial,
    Incorrect,
}

/// Whether exam answers are marked as they come or only at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExamFeedbackMode {
    #[default]
    Immediate,
    /// Proctored: nothing is revealed until the exam is finished.
    Deferred,
}

/// How an exam's questions are chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExamSelection {
    /// All questions chosen at creation, at the workflow's difficulty mix.
    #[default]
    Fixed,
    /// Each next question chosen to match the ability estimate so far.
    Adaptive,
}

/// How a question is answered on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerFormat {
    /// Pick one of the options (by its letter or its text).
    Choice,
    /// Type a number.
    Number,
    /// Type the answer (an expression, an equation, words).
    Text,
}

/// Where an exam question came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ExamItemSource {
    /// Generated from a unit's blueprint (answer computed).
    Blueprint {
        blueprint_id: String,
        seed: u64,
        target_difficulty: f64,
    },
    /// A question of the unit's exam bank.
    Bank {
        question_id: String,
        tier: crate::model::tier::ExamTier,
    },
}

/// What became of one exam question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExamQuestionStatus {
    /// Not answered yet (or never reached, once the exam is over).
    Unanswered,
    Answered,
    Skipped,
}

/// One question of an exam-mode session: chosen by the server, its answer
/// and explanation kept here and never sent before it may be revealed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamQuestion {
    /// 1-based position in the exam.
    pub number: u32,
    pub unit_id: String,
    /// The question as shown: words, then its maths.
    pub prompt: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub question_latex: String,
    pub format: AnswerFormat,
    /// Choices, for [`AnswerFormat::Choice`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    pub difficulty: Difficulty,
    /// The item's difficulty on the ability scale, in [0, 1].
    pub difficulty_value: f64,
    pub source: ExamItemSource,
    pub expected: ExpectedAnswer,
    /// The correct answer as a student should read it.
    pub correct_answer: String,
    /// The worked solution, shown once the question may be revealed.
    pub explanation: String,
    /// When the question was put in front of the student: one never
    /// reached (an exam ended early) is not shown, even in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_at: Option<DateTime<Utc>>,
    pub status: ExamQuestionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student_answer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<QuestionResult>,
    /// Credit earned: 1 right, the workflow's partial credit when close, 0.
    #[serde(default)]
    pub credit: f64,
    /// The known mistake a wrong answer comes from, in the unit's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_at: Option<DateTime<Utc>>,
    /// A written question's marking points (its expected answer is of
    /// kind `text`): what judges the answer, kept server-side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rubric: Vec<RubricPoint>,
    /// The judge's words on a written answer, shown once marks may be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Who marked a written answer (the evaluation call, or the offline
    /// judge when the call failed or was not configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_by: Option<JudgedBy>,
}

/// Who marked a written exam answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JudgedBy {
    /// The `exam_evaluation` call's model.
    Model,
    /// The offline judge: the rubric's terms and the model answer's words.
    Rubric,
}

/// One point a written exam answer must make, and the words that show it
/// was made (any one of them will do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricPoint {
    pub point: String,
    pub terms: Vec<String>,
}

/// How an exam ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExamEnd {
    /// Every question was answered or skipped.
    Completed,
    /// The student ended it; the rest score 0.
    EndedEarly,
    /// The time limit ran out; what was answered counts.
    TimeUp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamSession {
    /// The units the exam covers.
    pub unit_ids: Vec<String>,
    /// The questions chosen so far (all of them for a fixed exam).
    pub questions: Vec<ExamQuestion>,
    pub question_count: u32,
    /// 0-based index of the question on screen.
    pub current_index: u32,
    pub feedback_mode: ExamFeedbackMode,
    pub selection: ExamSelection,
    /// Randomness handed in at creation: later choices are reproducible.
    pub seed: u64,
    /// Bank questions the student was locked out of at creation: never asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locked_questions: Vec<String>,
    pub started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_minutes: Option<u32>,
    /// The ability estimate (IRT-lite, [0, 1]) the exam has reached.
    pub ability: f64,
    /// Sum of the items' information about the ability: its standard
    /// error is 1/sqrt(information).
    #[serde(default)]
    pub information: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<ExamEnd>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}

impl ExamSession {
    pub fn finished(&self) -> bool {
        self.ended.is_some()
    }
}
