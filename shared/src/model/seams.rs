//! The seams between the turn pipeline and the LLM calls: what each call is
//! given, what it returns, and the traits the pipeline is handed. Two kinds
//! of implementation live in `crate::llm`: one provider call per request, and
//! a deterministic offline one (the local default and the fallback).
//!
//! Inputs are built so that a correct answer cannot reach the tutor's
//! prompt: a pending question travels without its expected answer, an exam
//! item as metadata only and a practice item as its prompt and question.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::api::ClientEvent;
use super::llm::{
    LlmDrillGrade, LlmExamEvaluation, LlmSafetyVerdict, LlmSessionSummary, LlmStudyPlan,
    LlmTutorResponse, StudentIntent,
};
use super::message::Role;
use super::policy::{TutorAction, TutorPolicy};
use super::profile::Personalization;
use super::signals::{PacingDirective, StudentStyle};
use super::snapshot::MappedUnit;
use super::thread::{AuthoredStep, Mode, PendingQuestion, QuestionPhase, StepKind};
use super::tier::{ExamTier, MasteryTier};

/// Why an LLM call produced no usable reply. Every variant is final for the
/// call that returned it: retries already happened inside the provider
/// where they could help, and invalid output is never retried (asking again
/// costs time and money and may fail the same way) — the pipeline falls
/// back to the deterministic path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("the model refused: {0}")]
    Refused(String),
    #[error("the reply was cut off by the output token limit")]
    Truncated,
    #[error("the reply is not valid: {0}")]
    InvalidOutput(String),
    #[error("rate limited by the provider")]
    RateLimited { retry_after: Option<Duration> },
    #[error("the provider is unavailable: {0}")]
    Unavailable(String),
    #[error("the call did not finish before its deadline")]
    Timeout,
    #[error("the provider refused the credentials: {0}")]
    Auth(String),
    #[error("the provider rejected the request: {0}")]
    BadRequest(String),
    /// The call's input cannot produce a reply: a prompt template needs a
    /// value it was not given, the prompt cannot fit the token budget, or no
    /// allowed action can be carried out with the material given.
    #[error("the call cannot be made: {0}")]
    InvalidInput(String),
}

impl LlmError {
    /// A stable name for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Refused(_) => "refused",
            LlmError::Truncated => "truncated",
            LlmError::InvalidOutput(_) => "invalid_output",
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::Unavailable(_) => "unavailable",
            LlmError::Timeout => "timeout",
            LlmError::Auth(_) => "auth",
            LlmError::BadRequest(_) => "bad_request",
            LlmError::InvalidInput(_) => "invalid_input",
        }
    }
}

/// What one call cost, for the turn log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallUsage {
    /// `offline` for the deterministic implementations.
    pub provider: String,
    pub model: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Wall time of the call, including retries; zero offline (no clock).
    pub latency_ms: u64,
    /// HTTP attempts made; zero offline.
    pub attempts: u32,
}

impl CallUsage {
    pub fn offline() -> Self {
        CallUsage {
            provider: "offline".into(),
            model: "offline".into(),
            ..CallUsage::default()
        }
    }

    /// A reply the session's mode wrote itself: no model was called.
    pub fn scripted() -> Self {
        CallUsage {
            provider: "mode".into(),
            model: "scripted".into(),
            ..CallUsage::default()
        }
    }
}

/// A reply and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply<T> {
    pub value: T,
    pub usage: CallUsage,
}

// ---------------------------------------------------------------------------
// The tutor call
// ---------------------------------------------------------------------------

/// Everything the tutor needs to decide one turn: the policy, the student's
/// state, the retrieved content and the dynamic signals (pacing, style).
/// Built by the pipeline after the policy and retrieval steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TutorTurnInput {
    pub course: CourseBrief,
    pub mode: Mode,
    pub policy: TutorPolicy,
    pub context: TutorContext,
    pub category: CategoryCue,
    /// The question the student is working on, without its answer.
    pub question: Option<QuestionState>,
    pub pacing: PacingDirective,
    pub style: StudentStyle,
    pub personalization: Personalization,
    /// Most recent last, already cut to the workflow's `history_messages`.
    pub history: Vec<HistoryMessage>,
    pub student: StudentInput,
    /// How code read the message (lexical unit mapping, offline intent).
    pub reading: CodeReading,
    /// Varies the offline tutor's phrasing; the same seed gives the same reply.
    pub seed: u64,
    /// The lesson step this reply teaches, in a mode that follows a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<LessonBrief>,
    /// Where a question session is, in clarify_doubts mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarify: Option<ClarifyBrief>,
    /// The problem being worked on, in a problem set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<ProblemBrief>,
}

/// A question session as the prompt's mode block describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClarifyBrief {
    /// Concepts answered earlier in this session, first asked first.
    pub concepts_discussed: Vec<String>,
    /// The student's earlier sessions, one line each, newest first.
    pub past_discussions: Vec<String>,
    /// This reply closes the session with a recap.
    pub closing: bool,
    /// The session was closed before this message.
    pub complete: bool,
}

/// Where a problem set is, for the prompt's mode block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProblemBrief {
    /// From 1.
    pub number: u32,
    pub total: u32,
    /// The problem's text (never its answer).
    pub text: String,
    /// A hint the mode shows after the reply this turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The first this many messages of `history` belong to earlier
    /// problems (hybrid memory keeps a few for continuity).
    #[serde(default)]
    pub earlier_messages: u32,
    /// The problem is done and the next one (or the end of the set) is
    /// shown after this reply.
    #[serde(default)]
    pub finishing: bool,
}

/// Where a planned lesson is, for the prompt's mode block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonBrief {
    /// The step this reply works on, from 1; absent once the plan is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<LessonStep>,
    pub steps_total: u32,
    pub steps_completed: u32,
    /// The plan is complete: the lesson is in its extension.
    pub complete: bool,
    /// The extension is over: reply to what the student said and close.
    pub closing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonStep {
    pub number: u32,
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CourseBrief {
    pub title: String,
    /// Who the course is for, e.g. "ages 12-15".
    pub audience: String,
}

/// The CONTEXT message of the prompt: the content retrieved for this turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TutorContext {
    pub unit_anchors: Vec<UnitAnchor>,
    /// Ranked, most relevant first; the prompt drops from the end when over budget.
    pub unit_content_chunks: Vec<ContentChunk>,
    /// Already filtered by scope, desired tier and lockouts; metadata only.
    pub exam_candidates: Vec<ExamCandidate>,
    #[serde(rename = "snapshotLiteForLLM")]
    pub snapshot_lite: SnapshotLiteForLlm,
    pub client_event: ClientEvent,
    /// A practice item generated by the server; a drill card must present it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub practice_item: Option<PracticeItem>,
}

/// A scoped unit: what it is about and what a concept card is built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitAnchor {
    pub unit_id: String,
    pub title: String,
    pub anchor_text: String,
    pub key_ideas: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worked_example: Option<ExampleBrief>,
}

/// An authored worked example (a solved example, not a pending item).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExampleBrief {
    pub problem: String,
    pub steps: Vec<String>,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentChunk {
    pub unit_id: String,
    pub chunk_id: String,
    pub section: String,
    pub text: String,
    /// A worked example: it reads whole or not at all (its opening
    /// sentences set a problem and stop short of the answer).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worked_example: bool,
}

/// An exam question the tutor may suggest: never its stem, options, answer or memo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamCandidate {
    pub question_id: String,
    pub unit_ids: Vec<String>,
    pub difficulty_tier: ExamTier,
    pub tags: Vec<String>,
}

/// The little of the student's snapshot the tutor prompt shows: the focus,
/// the units in progress and what to revisit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotLiteForLlm {
    pub focus_unit_id: String,
    pub focus_mastery_tier: MasteryTier,
    pub units_in_progress: Vec<String>,
    pub revisit: RevisitBrief,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisitBrief {
    pub locked_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_eligible_at: Option<DateTime<Utc>>,
}

/// A practice item as the student sees it. Its answer stays with the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PracticeItem {
    pub unit_id: String,
    pub prompt: String,
    pub question_latex: String,
    /// Choices of a multiple-choice item, in display order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
}

/// The routing category of the message and the values its guidance
/// template is rendered with (`PromptRole::CategoryGuidance`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryCue {
    /// A category id of the workflow.
    pub id: String,
    /// Which attempt at the pending question this message is (1 for the first).
    pub attempt: u32,
    /// The phase this reply acts in, after counting this message.
    pub phase: QuestionPhase,
    pub scaffold_depth: u32,
    pub unit_title: String,
    /// Known misconceptions of the unit, as tutor notes.
    pub misconceptions: Vec<String>,
    /// What code established about this message that the reply must say:
    /// the check of a worked answer the student asked about, or what became
    /// of a request to move on. Empty when there is nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code_note: String,
    /// A problem the student brought ("what is 47 + 38?"), which becomes
    /// their question to try; empty when they brought none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub own_problem: String,
    /// The first step of `own_problem` with its own numbers, asked as a
    /// question; never its answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub own_problem_step: String,
}

/// A pending question without its expected answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionState {
    pub text: String,
    pub unit_id: String,
    pub concept: String,
    pub phase: QuestionPhase,
    pub wrong_attempts: u32,
    pub hints_used: u32,
    pub previous_answers: Vec<String>,
    /// What the item's own solution offers this turn; never its answer.
    #[serde(default, skip_serializing_if = "ItemHelp::is_empty")]
    pub help: ItemHelp,
}

/// Help built from the pending item's own solution, with its numbers: what
/// a hint, an explanation or a change of strategy is made of. The step
/// that works out the answer is always left open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemHelp {
    /// Every step, in order, the last left open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// The next step the student has not shown, as a smaller question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
    /// The question shown another way (number line, area model, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub representation: Option<String>,
    /// What went wrong, when the student's answer is a known mistake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
}

impl ItemHelp {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
            && self.next_step.is_none()
            && self.representation.is_none()
            && self.mistake.is_none()
    }
}

impl From<&PendingQuestion> for QuestionState {
    fn from(q: &PendingQuestion) -> Self {
        QuestionState {
            text: q.text.clone(),
            unit_id: q.unit_id.clone(),
            concept: q.concept.clone(),
            phase: q.phase,
            wrong_attempts: q.wrong_attempts,
            hints_used: q.hints_used,
            previous_answers: q.previous_answers.clone(),
            help: ItemHelp::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryMessage {
    pub role: Role,
    pub text: String,
}

/// The STUDENT_INPUT message of the prompt: what the student sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentInput {
    pub message_text: Option<String>,
    pub message_latex: Option<String>,
    pub voice_transcript: Option<String>,
}

impl StudentInput {
    /// Everything the student said this turn, in one line per part.
    pub fn said(&self) -> Option<String> {
        let parts: Vec<&str> = [
            &self.message_text,
            &self.message_latex,
            &self.voice_transcript,
        ]
        .into_iter()
        .flatten()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }
}

/// What code made of the message before any LLM call (the interpret stage,
/// docs/architecture.md "The turn").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeReading {
    pub mapped_units: Vec<MappedUnit>,
    pub intent: StudentIntent,
}

/// "Decide this turn": one structured tutor reply for the pipeline to
/// validate against the policy.
#[async_trait]
pub trait Tutor: Send + Sync {
    async fn decide(&self, input: &TutorTurnInput) -> Result<Reply<LlmTutorResponse>, LlmError>;
    /// [`decide`](Self::decide), telling `sink` the reply's `tutor_text` as
    /// it is written. The reply returned is still the one to validate: what
    /// `sink` heard is a preview of it, not a promise.
    async fn decide_streaming(
        &self,
        input: &TutorTurnInput,
        sink: &dyn TextSink,
    ) -> Result<Reply<LlmTutorResponse>, LlmError> {
        let _ = sink;
        self.decide(input).await
    }
}

/// Where a streamed reply's student-facing text goes, piece by piece.
pub trait TextSink: Send + Sync {
    fn text(&self, piece: &str);
}

/// The tutor the pipeline falls back on when the reply is invalid or
/// missing. Deterministic and synchronous: the pure engine calls it, so it
/// does no I/O.
pub trait FallbackTutor {
    /// Its own choice of reply to `input`.
    fn reply(&self, input: &TutorTurnInput) -> Result<LlmTutorResponse, LlmError>;
    /// The reply for `action`: the fallback action, or one the student asked for.
    fn reply_with(
        &self,
        input: &TutorTurnInput,
        action: TutorAction,
    ) -> Result<LlmTutorResponse, LlmError>;
}

// ---------------------------------------------------------------------------
// The other calls
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SafetyInput {
    pub message: String,
}

/// The optional safety call's outcome. The rule-based gate always runs first.
#[derive(Debug, Clone, PartialEq)]
pub enum SafetyOutcome {
    /// No model was asked: the rule-based gate's decision stands.
    NoVerdict,
    Judged(LlmSafetyVerdict),
}

#[async_trait]
pub trait SafetyJudge: Send + Sync {
    async fn judge(&self, input: &SafetyInput) -> Result<Reply<SafetyOutcome>, LlmError>;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MistakeTagBrief {
    pub id: String,
    pub description: String,
}

/// A drill answer to grade after the student submitted it (so the expected
/// answer may be shown to the grader).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DrillGradingInput {
    pub unit_title: String,
    pub prompt: String,
    pub question: String,
    pub expected_answer: String,
    pub student_answer: String,
    /// The unit's fixed list; a returned tag must be one of these.
    pub mistake_tags: Vec<MistakeTagBrief>,
}

/// A model's judgement, or none: code grading then decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement<T> {
    CannotJudge,
    Judged(T),
}

#[async_trait]
pub trait DrillGrader: Send + Sync {
    async fn grade(
        &self,
        input: &DrillGradingInput,
    ) -> Result<Reply<Judgement<LlmDrillGrade>>, LlmError>;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamEvaluationInput {
    pub question: String,
    pub expected_answer: String,
    /// The points an answer must make; empty when there are none.
    pub rubric: Vec<crate::model::RubricPoint>,
    pub student_answer: String,
}

#[async_trait]
pub trait ExamEvaluator: Send + Sync {
    async fn evaluate(
        &self,
        input: &ExamEvaluationInput,
    ) -> Result<Reply<Judgement<LlmExamEvaluation>>, LlmError>;
}

/// A study plan request for one teach_me unit, initial or replan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannerInput {
    pub unit_title: String,
    pub unit_anchor: String,
    pub key_ideas: Vec<String>,
    /// The unit's authored plan, which the offline planner uses as is.
    pub authored_plan: Option<Vec<AuthoredStep>>,
    /// The workflow's default step kinds (teach_me `default_plan`).
    pub default_plan: Vec<StepKind>,
    pub student_profile: String,
    /// The plan being replaced, as step titles; empty for a first plan.
    pub previous_plan: Vec<String>,
    pub replan_reason: Option<String>,
    pub max_steps: u32,
}

#[async_trait]
pub trait Planner: Send + Sync {
    async fn plan(&self, input: &PlannerInput) -> Result<Reply<LlmStudyPlan>, LlmError>;
}

/// What a session summary is made from: the conversation and its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryInput {
    pub course_title: String,
    pub transcript: Vec<HistoryMessage>,
    pub stats: SessionStats,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    pub mode: Mode,
    /// Turns in this conversation.
    pub turns: u32,
    /// Answers graded in this conversation (a repeat counts only when it
    /// puts a wrong answer right).
    pub questions_answered: u32,
    /// Right with no wrong try or help first.
    pub questions_correct: u32,
    /// Right after a wrong try or help: learned in this conversation.
    pub questions_learned: u32,
    pub steps_completed: u32,
    pub steps_total: u32,
    pub units: Vec<UnitStat>,
    /// Misconceptions seen this session, in words a student understands.
    pub misconceptions_seen: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitStat {
    pub title: String,
    pub mastery_tier: MasteryTier,
    pub answered: u32,
    pub correct: u32,
    pub learned: u32,
    /// A wrong answer not yet put right.
    pub not_yet_right: bool,
    /// Hints, concept cards and "I'm stuck" turns.
    pub help: u32,
}

#[async_trait]
pub trait Summarizer: Send + Sync {
    async fn summarize(&self, input: &SummaryInput) -> Result<Reply<LlmSessionSummary>, LlmError>;
}
