//! The structured replies of the LLM calls, validated before use: the tutor's
//! reply and the safety, drill grading, exam evaluation,
//! planner and summary replies. snake_case: this is the contract the model
//! sees. The JSON schema each provider is given is derived from these types,
//! so their `///` docs are written for the model (developer notes use `//`);
//! [`CheckReply`] adds the value checks a schema cannot express everywhere.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::TutorAction;
use super::thread::{QuestionResult, StepKind};
use super::tier::ExamTier;

/// Longest free text accepted in any reply field, in characters.
pub const MAX_REPLY_TEXT_CHARS: usize = 4000;
/// Longest identifier (unit id, question id, tag) accepted in a reply.
pub const MAX_REPLY_ID_CHARS: usize = 200;
/// Most entries accepted in any list of a reply.
pub const MAX_REPLY_LIST: usize = 10;

/// Value checks a reply must pass before it is used. The schema fixes the
/// shape; providers differ in which constraints they enforce, so ranges and
/// sizes are checked here for every provider alike.
pub trait CheckReply {
    fn check(&self) -> Result<(), String>;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmTutorResponse {
    /// Units of POLICY.scopedUnitIds the student's message is about.
    #[schemars(length(max = 10))]
    pub mapped_units: Vec<LlmMappedUnit>,
    pub action: TutorAction,
    pub target_unit_id: String,
    /// What the tutor says to the student.
    pub tutor_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concept_card: Option<LlmConceptCard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drill_card: Option<LlmDrillCard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam_suggestion: Option<LlmExamSuggestion>,
    /// The one question tutor_text asks the student to answer, with the
    /// answer you expect; null when it asks nothing to answer.
    // The question the reply asks and its expected answer: the server keeps
    // the expected answer and grades the next message against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_asked: Option<LlmQuestionAsked>,
    /// True when the student has shown what this step needs and the lesson
    /// may move on to the next step.
    // Whether to move on, as a yes/no: the mode decides which step is next.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub advance: bool,
    pub turn_analysis: LlmTurnAnalysis,
}

impl LlmTutorResponse {
    /// A reply that only says `text` about `target`, written by the server
    /// (a mode's scripted step, the last-resort line) rather than a model.
    pub fn said(
        target: String,
        text: String,
        intent: StudentIntent,
        signal: UnderstandingSignal,
    ) -> Self {
        LlmTutorResponse {
            mapped_units: Vec::new(),
            action: TutorAction::SocraticQuestion,
            target_unit_id: target,
            tutor_text: text,
            concept_card: None,
            drill_card: None,
            exam_suggestion: None,
            question_asked: None,
            advance: false,
            turn_analysis: LlmTurnAnalysis {
                student_intent: intent,
                understanding_signal: signal,
                suggested_prereq_units: Vec::new(),
                answer_text: None,
                answer_correct: None,
                misconceptions_detected: Vec::new(),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmQuestionAsked {
    /// The question as tutor_text asks it.
    pub text: String,
    /// The answer you expect (a number, expression or short phrase); the
    /// student never sees it. Null when the question has no single answer
    /// ("why does that work?").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmMappedUnit {
    pub unit_id: String,
    /// Confidence, from 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmConceptCard {
    /// At most three short ideas.
    #[schemars(length(min = 1, max = 3))]
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
    #[schemars(length(max = 10))]
    pub steps_latex: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmDrillCard {
    pub prompt: String,
    pub question_latex: String,
    /// Your intended answer; the student never sees it.
    // Kept in the signed drill token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmExamSuggestion {
    pub question_id: String,
    /// Must equal POLICY.desiredExamTier.
    // The exam bank's camelCase spelling `difficultyTier` is read too.
    #[serde(alias = "difficultyTier")]
    pub difficulty_tier: ExamTier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmTurnAnalysis {
    pub student_intent: StudentIntent,
    pub understanding_signal: UnderstandingSignal,
    #[schemars(length(max = 10))]
    pub suggested_prereq_units: Vec<String>,
    /// Exactly what the student answered, copied, when the message is an
    /// answer; otherwise null.
    // What was SAID, not what was meant: code grades it, not the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_text: Option<String>,
    /// When the message answers the question being worked on: whether the
    /// answer is right as you read it; otherwise null.
    // Used only where code cannot grade the answer itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_correct: Option<bool>,
    /// Misconceptions the message shows, named as in
    /// CATEGORY.misconceptions or the unit's mistake tags.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = 10))]
    pub misconceptions_detected: Vec<String>,
}

/// An optional field sent as `null` (strict schemas make every field
/// required and the optional ones nullable) reads as its default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// What the student is doing with this message.
// The guided policy's five intents (solve, explain, check, stuck, unknown)
// plus the readings the routing categories and the other modes need.
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

// The optional safety LLM's reading of one student message; the rule-based
// gate always runs first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmSafetyVerdict {
    /// False when the message needs a safeguarding response instead of tutoring.
    pub safe: bool,
    #[serde(default)]
    pub category: Option<SafetyCategory>,
    /// One short sentence on why.
    // Logged, never shown to the student.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SafetyCategory {
    // The student themself, even when they speak of someone else too.
    SelfHarm,
    Abuse,
    // Someone else (a friend, a brother or sister) at risk of self-harm,
    // suicide or abuse, and not the student (prompts/safety.txt).
    SomeoneAtRisk,
    Violence,
    Sexual,
    PersonalDetails,
    Other,
}

// The drill grading LLM's verdict. Drills are graded on demand and never
// stored; only the evidence counters and mistake tags are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmDrillGrade {
    pub is_correct: bool,
    /// One or two encouraging sentences, without the full solution.
    pub feedback_text: String,
    /// One tag from the unit's fixed list, only when the answer is wrong.
    #[serde(default)]
    pub common_mistake_tag: Option<String>,
}

// The exam evaluation LLM's marking of one written exam answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmExamEvaluation {
    pub result: QuestionResult,
    /// One or two sentences of feedback; no teaching.
    pub feedback: String,
}

// The planner LLM's study plan for one teach_me unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmStudyPlan {
    #[schemars(length(min = 1, max = 10))]
    pub steps: Vec<LlmPlanStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmPlanStep {
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    /// How the tutor knows the step is done.
    pub success_criteria: String,
}

// The summary LLM's account of a session (`GET /threads/{id}/summary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmSessionSummary {
    /// One sentence on how the session went.
    pub headline: String,
    #[schemars(length(max = 10))]
    pub strengths: Vec<String>,
    #[schemars(length(max = 10))]
    pub to_review: Vec<String>,
    #[schemars(length(max = 10))]
    pub suggestions: Vec<String>,
}

fn text(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{field} is empty"));
    }
    let chars = value.chars().count();
    if chars > MAX_REPLY_TEXT_CHARS {
        return Err(format!(
            "{field} is {chars} characters (at most {MAX_REPLY_TEXT_CHARS})"
        ));
    }
    Ok(())
}

fn id(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{field} is empty"));
    }
    if value.chars().count() > MAX_REPLY_ID_CHARS {
        return Err(format!(
            "{field} is longer than {MAX_REPLY_ID_CHARS} characters"
        ));
    }
    Ok(())
}

fn list<T>(field: &str, items: &[T], min: usize, max: usize) -> Result<(), String> {
    if !(min..=max).contains(&items.len()) {
        return Err(format!(
            "{field} has {} entries (expected {min} to {max})",
            items.len()
        ));
    }
    Ok(())
}

fn texts(field: &str, items: &[String], min: usize, max: usize) -> Result<(), String> {
    list(field, items, min, max)?;
    items
        .iter()
        .enumerate()
        .try_for_each(|(i, t)| text(&format!("{field}[{i}]"), t))
}

impl CheckReply for LlmTutorResponse {
    fn check(&self) -> Result<(), String> {
        list("mapped_units", &self.mapped_units, 0, MAX_REPLY_LIST)?;
        for (i, unit) in self.mapped_units.iter().enumerate() {
            id(&format!("mapped_units[{i}].unit_id"), &unit.unit_id)?;
            if !(0.0..=1.0).contains(&unit.confidence) {
                return Err(format!(
                    "mapped_units[{i}].confidence {} is outside [0, 1]",
                    unit.confidence
                ));
            }
        }
        id("target_unit_id", &self.target_unit_id)?;
        text("tutor_text", &self.tutor_text)?;
        if let Some(card) = &self.concept_card {
            texts("concept_card.key_ideas", &card.key_ideas, 1, 3)?;
            if let Some(example) = &card.worked_example {
                text(
                    "concept_card.worked_example.problem_latex",
                    &example.problem_latex,
                )?;
                text(
                    "concept_card.worked_example.final_answer_latex",
                    &example.final_answer_latex,
                )?;
                if let Some(steps) = &example.steps_latex {
                    texts(
                        "concept_card.worked_example.steps_latex",
                        steps,
                        0,
                        MAX_REPLY_LIST,
                    )?;
                }
            }
        }
        if let Some(drill) = &self.drill_card {
            text("drill_card.prompt", &drill.prompt)?;
            text("drill_card.question_latex", &drill.question_latex)?;
            if let Some(answer) = &drill.expected_answer {
                text("drill_card.expected_answer", answer)?;
            }
        }
        if let Some(exam) = &self.exam_suggestion {
            id("exam_suggestion.question_id", &exam.question_id)?;
        }
        if let Some(question) = &self.question_asked {
            text("question_asked.text", &question.text)?;
            if let Some(answer) = &question.expected_answer {
                text("question_asked.expected_answer", answer)?;
            }
        }
        let analysis = &self.turn_analysis;
        list(
            "turn_analysis.suggested_prereq_units",
            &analysis.suggested_prereq_units,
            0,
            MAX_REPLY_LIST,
        )?;
        for (i, unit) in analysis.suggested_prereq_units.iter().enumerate() {
            id(&format!("turn_analysis.suggested_prereq_units[{i}]"), unit)?;
        }
        if let Some(answer) = &analysis.answer_text
            && answer.chars().count() > MAX_REPLY_TEXT_CHARS
        {
            return Err("turn_analysis.answer_text is too long".into());
        }
        list(
            "turn_analysis.misconceptions_detected",
            &analysis.misconceptions_detected,
            0,
            MAX_REPLY_LIST,
        )?;
        for (i, tag) in analysis.misconceptions_detected.iter().enumerate() {
            id(&format!("turn_analysis.misconceptions_detected[{i}]"), tag)?;
        }
        Ok(())
    }
}

impl CheckReply for LlmSafetyVerdict {
    fn check(&self) -> Result<(), String> {
        if self.safe && self.category.is_some() {
            return Err("a safe message has no safety category".into());
        }
        if self.reason.chars().count() > MAX_REPLY_TEXT_CHARS {
            return Err("reason is too long".into());
        }
        Ok(())
    }
}

impl CheckReply for LlmDrillGrade {
    fn check(&self) -> Result<(), String> {
        text("feedback_text", &self.feedback_text)?;
        match &self.common_mistake_tag {
            Some(_) if self.is_correct => Err("a correct answer has no common_mistake_tag".into()),
            Some(tag) => id("common_mistake_tag", tag),
            None => Ok(()),
        }
    }
}

impl CheckReply for LlmExamEvaluation {
    fn check(&self) -> Result<(), String> {
        text("feedback", &self.feedback)
    }
}

impl CheckReply for LlmStudyPlan {
    fn check(&self) -> Result<(), String> {
        list("steps", &self.steps, 1, MAX_REPLY_LIST)?;
        for (i, step) in self.steps.iter().enumerate() {
            text(&format!("steps[{i}].title"), &step.title)?;
            text(&format!("steps[{i}].concept"), &step.concept)?;
            text(
                &format!("steps[{i}].success_criteria"),
                &step.success_criteria,
            )?;
        }
        Ok(())
    }
}

impl CheckReply for LlmSessionSummary {
    fn check(&self) -> Result<(), String> {
        text("headline", &self.headline)?;
        texts("strengths", &self.strengths, 0, MAX_REPLY_LIST)?;
        texts("to_review", &self.to_review, 0, MAX_REPLY_LIST)?;
        texts("suggestions", &self.suggestions, 0, MAX_REPLY_LIST)
    }
}
