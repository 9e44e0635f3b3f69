//! Request and response bodies of the HTTP API (camelCase; requests reject
//! unknown fields so a typo is an error, not a silently ignored field).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::grade::GradeOutcome;
use super::message::{ExamOption, SupportType, TutorMessage};
use super::thread::{
    AnswerFormat, Difficulty, ExamEnd, ExamFeedbackMode, ExamQuestionStatus, ExamSelection,
    MasterySignal, Mode, ProblemStatus, ProgressionAction, QuestionPhase, QuestionResult,
    ReplanRecord, SessionEnd, StepKind, StepStatus, ThreadStatus,
};
use super::tier::{ExamTier, MasteryTier};

/// `POST /threads`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateThreadRequest {
    pub course_id: String,
    #[serde(default)]
    pub mode: Mode,
    /// What the student wants to learn, in their words.
    #[serde(default)]
    pub goal: Option<String>,
    /// Unit to work on (teach_me, clarify_doubts, exam scope).
    #[serde(default)]
    pub unit_id: Option<String>,
    /// problem_set: the problems to work through (5 to 10), in order.
    #[serde(default)]
    pub problems: Option<Vec<ProblemInput>>,
    /// Exam mode: the units it covers (instead of `unitId`, or with it).
    #[serde(default)]
    pub units: Option<Vec<String>>,
    /// problem_set: one of the course's problem sets instead of `problems`.
    #[serde(default)]
    pub problem_set_id: Option<String>,
    /// Survey mode: the survey to answer (`workflows/surveys/<id>.yaml`).
    #[serde(default)]
    pub survey_id: Option<String>,
    /// Exam mode: how many questions (1 to 30; the workflow's default).
    #[serde(default)]
    pub question_count: Option<u32>,
    /// Exam mode: marked after each answer, or only at the end.
    #[serde(default)]
    pub feedback: Option<ExamFeedbackMode>,
    /// Exam mode: questions fixed at creation, or chosen one at a time to
    /// match the student's ability.
    #[serde(default)]
    pub selection: Option<ExamSelection>,
    /// Exam mode: the exam ends with what was answered after this long.
    #[serde(default)]
    pub time_limit_minutes: Option<u32>,
    /// Who the student is, for this thread: fields left out come from the
    /// student's saved profile (`PUT /me/profile`).
    #[serde(default, deserialize_with = "super::profile::profile_object")]
    pub student: Option<super::profile::StudentProfile>,
}

/// A problem supplied by the caller for a problem set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProblemInput {
    pub id: String,
    pub text: String,
    /// Checked by code: a number, fraction, expression or equation.
    pub correct_answer: String,
    /// The course unit the problem practises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    /// Hints, given one at a time when the student needs help; they must
    /// not state the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
}

/// Button presses and card events that accompany (or replace) a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum ClientEvent {
    #[default]
    None,
    RequestDrill {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit_id: Option<String>,
    },
    DrillContinue {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_result: Option<DrillResult>,
    },
    ExamContinue {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<ExamResult>,
    },
    IAmStuck {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit_id: Option<String>,
    },
    /// Exam mode: `messageText` answers question `questionNumber`; an answer
    /// to a question already answered (another tab) is not counted.
    ExamAnswer { question_number: u32 },
    /// Exam mode: skip the question on screen (scored 0).
    ExamSkip {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question_number: Option<u32>,
    },
    /// Exam mode: end the exam now; unanswered questions score 0.
    ExamEnd,
    /// Survey mode: `messageText` answers question `questionId` (an
    /// option's id or label, a number on the scale, or free text).
    SurveyAnswer { question_id: String },
    /// Survey mode: pass on optional question `questionId`.
    SurveySkip { question_id: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DrillResult {
    Correct,
    Incorrect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExamResult {
    Passed,
    Locked,
}

/// `POST /threads/{threadId}/turn`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnRequest {
    /// Optional; when present it must be the thread's course.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub course_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_latex: Option<String>,
    #[serde(default)]
    pub client_event: ClientEvent,
    /// A client-chosen id that makes a retried turn idempotent
    /// (the `Idempotency-Key` header does the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_turn_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnResponse {
    pub turn_id: String,
    pub messages: Vec<TutorMessage>,
    pub snapshot_lite: SnapshotLite,
    pub state: ThreadStateView,
    /// How the policy decided this turn: only when the server runs with
    /// `debug.enabled` and the caller's token is in the staff group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<TurnDebug>,
}

/// A turn's policy trace, for the web page's debug drawer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnDebug {
    /// The turn log's policy chain: mapped units, the policy (focus,
    /// blocker, scope, allowed actions, exam readiness), the top candidate
    /// units with their scores, the chosen action and its validation.
    pub trace: serde_json::Value,
    /// The mastery tier of the focus and of every unit in scope.
    pub unit_tiers: Vec<UnitTier>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitTier {
    pub unit_id: String,
    pub title: String,
    pub mastery_tier: MasteryTier,
}

/// `POST /threads` reply: the new thread, its welcome and state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateThreadResponse {
    pub thread_id: String,
    pub mode: Mode,
    pub messages: Vec<TutorMessage>,
    pub snapshot_lite: SnapshotLite,
    pub state: ThreadStateView,
}

/// `POST /threads/{threadId}/drill/grade`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DrillGradeRequest {
    pub drill_token: String,
    pub student_answer: String,
    /// How long the student took, for ability estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_time_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DrillGradeResponse {
    pub result: GradeOutcome,
    pub is_correct: bool,
    pub feedback_text: String,
    /// One tag from the unit's fixed mistake list, when wrong.
    pub common_mistake_tag: Option<String>,
    /// Revealed only once the attempt has been graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct_answer: Option<String>,
    /// False for a repeat attempt on an already graded drill (not evidence).
    pub counted: bool,
    pub snapshot_lite: SnapshotLite,
}

/// `POST /threads/{threadId}/exam/mcq-submit`. Correctness is decided on the
/// server from the question bank: the client never says whether it was right.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McqSubmitRequest {
    pub question_id: String,
    /// The chosen option's id (`A`, `B`, ...).
    pub selected_option: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub course_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty_tier: Option<ExamTier>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McqSubmitResponse {
    pub question_id: String,
    pub unit_id: String,
    pub tier: ExamTier,
    pub is_correct: bool,
    pub feedback_text: String,
    /// When the question can be attempted again (after a failure).
    pub locked_until: Option<DateTime<Utc>>,
    pub mastery_tier: MasteryTier,
    pub snapshot_lite: SnapshotLite,
}

/// `POST /threads/{threadId}/exam/support-viewed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SupportViewedRequest {
    pub question_id: String,
    pub support_type: SupportType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub course_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupportViewedResponse {
    pub question_id: String,
    pub locked_until: Option<DateTime<Utc>>,
    /// The worked solution, for a memo view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_url: Option<String>,
    pub snapshot_lite: SnapshotLite,
}

/// Small UI summary so apps need no DAG logic: the focus unit, a
/// prerequisite to work on first, what to revisit and how many units are at
/// each tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotLite {
    pub focus: FocusSummary,
    pub prereq_nudge: Option<UnitRef>,
    pub revisit: RevisitSummary,
    pub progress: ProgressSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FocusSummary {
    pub unit_id: String,
    pub title: String,
    pub mastery_tier: MasteryTier,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitRef {
    pub unit_id: String,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisitSummary {
    pub locked_count: u32,
    pub next_eligible_at: Option<DateTime<Utc>>,
    pub next_question_id: Option<String>,
}

/// Units per mastery tier, and the course's unit count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressSummary {
    pub bronze: u32,
    pub silver: u32,
    pub gold: u32,
    pub total: u32,
}

/// What a client may see of a thread's state: never an expected answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStateView {
    pub thread_id: String,
    pub course_id: String,
    pub mode: Mode,
    pub status: ThreadStatus,
    pub turn_count: u32,
    pub is_complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_question: Option<PendingQuestionView>,
    pub scaffolding_active: bool,
    pub teach_back_active: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_plan: Option<StudyPlanView>,
    /// Concepts the session has discussed, first asked first (a question
    /// session's answers; empty in modes that track none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concepts_discussed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam_progress: Option<ExamProgressView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_set: Option<ProblemSetView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub survey: Option<SurveyView>,
    /// The session's latest turns (at most 30), oldest first: what the
    /// student did, what the tutor did and what came of it.
    pub timeline: Vec<super::session_summary::TimelineEntry>,
    /// The trend of the session's graded answers (steady until there are
    /// a few).
    pub trend: super::session_summary::Trend,
    /// The units the session worked on, in the order it met them.
    pub concepts_taught: Vec<super::session_summary::ConceptTaught>,
}

/// A survey thread: the question on screen (to render its choices or
/// scale) and the answers given so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyView {
    pub survey_id: String,
    pub title: String,
    /// The question on screen; absent once the survey is finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<SurveyQuestionView>,
    pub answers: Vec<SurveyAnswerView>,
    pub finished: bool,
    /// When the survey started: with `endsAt`, how much time is used.
    pub started_at: DateTime<Utc>,
    /// When the survey stops taking answers, if it has a time limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<DateTime<Utc>>,
    /// The survey ended at its time limit, with what was answered by then.
    #[serde(default)]
    pub timed_out: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyQuestionView {
    pub question_id: String,
    /// 1-based position in the survey as written (skips jump ahead).
    pub number: u32,
    pub total: u32,
    pub kind: SurveyQuestionKind,
    pub prompt: String,
    pub required: bool,
    /// A choice question's options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SurveyOptionView>,
    /// A scale question's range and end labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<SurveyScaleView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SurveyQuestionKind {
    Choice,
    Scale,
    FreeText,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyOptionView {
    pub id: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyScaleView {
    pub min: u32,
    pub max: u32,
    pub min_label: String,
    pub max_label: String,
}

/// An answer as the student gave it, with the question it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyAnswerView {
    pub question_id: String,
    pub prompt: String,
    /// As stored: an option id, a number, or the text written.
    pub value: String,
    /// As read: the option's label, the number with the scale's words, or
    /// the text.
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestionView {
    pub text: String,
    pub phase: QuestionPhase,
    pub wrong_attempts: u32,
}

/// A teach_me thread's study plan as the student sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StudyPlanView {
    pub unit_id: String,
    pub steps: Vec<PlanStepView>,
    /// The step being worked on; absent once the plan is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step_id: Option<String>,
    pub steps_completed: u32,
    pub replans_used: u32,
    pub max_replans: u32,
    /// Why the plan was rewritten, oldest first.
    pub replans: Vec<ReplanRecord>,
    pub complete: bool,
    /// Turns taken after the plan completed.
    pub extension_turns: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanStepView {
    pub step_id: String,
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<String>,
    pub status: StepStatus,
    pub questions_asked: u32,
    pub questions_correct: u32,
    pub attempts: u32,
}

/// An exam thread's progress: the question on screen (never its answer)
/// and, unless feedback is deferred and the exam still running, the marks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamProgressView {
    /// 1-based number of the question on screen; absent once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_question: Option<u32>,
    pub total_questions: u32,
    pub answered: u32,
    pub skipped: u32,
    pub feedback: ExamFeedbackMode,
    pub selection: ExamSelection,
    pub started_at: DateTime<Utc>,
    /// When the time limit ends the exam, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<DateTime<Utc>>,
    pub finished: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<ExamEnd>,
    /// The question on screen, to answer or resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<ExamQuestionView>,
    /// Hidden (absent) while a deferred-feedback exam is running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct_so_far: Option<u32>,
    /// The questions marked so far: after each answer with immediate
    /// feedback, all at once at the end with deferred feedback.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ExamQuestionResultView>,
}

/// An exam question as the student sees it before answering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamQuestionView {
    pub number: u32,
    pub unit_id: String,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub question_latex: String,
    pub format: AnswerFormat,
    /// Choices with their letters, for the `choice` format.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<ExamOption>,
    pub difficulty: Difficulty,
}

/// One marked exam question: only once it may be revealed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamQuestionResultView {
    pub number: u32,
    pub unit_id: String,
    pub prompt: String,
    pub difficulty: Difficulty,
    pub status: ExamQuestionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student_answer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<QuestionResult>,
    pub credit: f64,
    pub correct_answer: String,
    pub explanation: String,
    /// The known mistake the answer comes from, in the unit's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
    /// A written answer's marker's words on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Who marked a written answer: the evaluation model, or the rubric's
    /// terms (offline, or when the model's call failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_by: Option<crate::model::JudgedBy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemSetView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_id: Option<String>,
    /// From 0; equals `problemsTotal` once every problem is done.
    pub current_problem_index: u32,
    pub problems_total: u32,
    /// Solved or skipped.
    pub problems_completed: u32,
    pub last_action: ProgressionAction,
    pub problems: Vec<ProblemView>,
    /// Why the session ended; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<SessionEnd>,
}

/// A problem of a problem set as the student sees it: never its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemView {
    pub problem_id: String,
    pub text: String,
    pub status: ProblemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<MasterySignal>,
    pub attempts: u32,
    pub hints_used: u32,
}

/// An exam's report, once it is over: the score, every question with its
/// correct answer and explanation, and where to go next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamReportView {
    pub ended: ExamEnd,
    /// Credit earned: 1 per right answer, the partial credit per close one.
    pub score: f64,
    /// The number of questions the exam had.
    pub max_score: u32,
    pub percentage: f64,
    pub answered: u32,
    pub skipped: u32,
    /// Never reached (ended early, or time ran out).
    pub unanswered: u32,
    pub time_used_seconds: i64,
    pub questions: Vec<ExamQuestionResultView>,
    pub by_unit: Vec<ExamBreakdownLine>,
    pub by_difficulty: Vec<ExamBreakdownLine>,
    /// Units answered well.
    pub strengths: Vec<String>,
    /// Units and mistakes to look at again.
    pub to_review: Vec<String>,
    /// Units to work on next: the ones to review, then what the strong ones lead to.
    pub next_units: Vec<UnitRef>,
    /// The ability estimate the exam reached (IRT-lite, 0 to 1).
    pub ability: AbilityEstimate,
}

/// Score over a group of questions (a unit, or a difficulty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExamBreakdownLine {
    /// The unit's id, or the difficulty (`easy`, `medium`, `hard`).
    pub key: String,
    pub title: String,
    pub score: f64,
    pub questions: u32,
    pub percentage: f64,
}

/// An ability estimate with its uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbilityEstimate {
    pub estimate: f64,
    /// One standard error, on the same 0-to-1 scale.
    pub standard_error: f64,
}
