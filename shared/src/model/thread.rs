//! Threads (conversations) and the session state every turn is rebuilt from.
//!
//! A thread's mode is fixed at creation. All state lives here, so any
//! stateless function can pick up the conversation: no server keeps a
//! session in memory between turns.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The policy's loop over the course DAG.
    #[default]
    Guided,
    /// A study plan for one unit.
    TeachMe,
    /// Student-led questions with direct answers.
    ClarifyDoubts,
    /// A fixed set of questions, scored at the end.
    Exam,
    /// A sequence of problems with scaffolding and teach-back.
    ProblemSet,
    /// A questionnaire from the content bundle, asked in order with skip
    /// logic; nothing is scored.
    Survey,
}

impl Mode {
    pub const ALL: [Mode; 6] = [
        Mode::Guided,
        Mode::TeachMe,
        Mode::ClarifyDoubts,
        Mode::Exam,
        Mode::ProblemSet,
        Mode::Survey,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Guided => "guided",
            Mode::TeachMe => "teach_me",
            Mode::ClarifyDoubts => "clarify_doubts",
            Mode::Exam => "exam",
            Mode::ProblemSet => "problem_set",
            Mode::Survey => "survey",
        }
    }

    /// Whether the mode's sessions end when left without a message (a
    /// problem set, after its time to live). The store keeps such threads,
    /// while active, in an index by last activity, so that a scheduled
    /// sweep finds the idle ones without reading every thread.
    pub fn expires_when_idle(self) -> bool {
        matches!(self, Mode::ProblemSet)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    #[default]
    Active,
    Paused,
    Completed,
}

/// A conversation's metadata and state. Messages are stored separately.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub thread_id: String,
    pub student_id: String,
    pub course_id: String,
    pub mode: Mode,
    pub status: ThreadStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Unit chosen at creation (teach_me, clarify_doubts, exam scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// What the conversation is about: the goal, else the student's first
    /// message (see [`Thread::note_messages`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The latest message, shortened, for thread listings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// When the student last paused the thread (while it is paused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<DateTime<Utc>>,
    /// When the thread was completed: ended by the student or finished by its mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    pub session: SessionState,
}

/// Longest title and preview kept, in characters.
const TITLE_CHARS: usize = 80;
const PREVIEW_CHARS: usize = 140;

impl Thread {
    /// Keeps the title and preview up to date with `appended` messages.
    pub fn note_messages(&mut self, appended: &[super::message::TutorMessage]) {
        if self.title.is_none() {
            self.title = self
                .goal
                .as_deref()
                .or_else(|| {
                    appended
                        .iter()
                        .find(|m| m.role == super::message::Role::Student && m.is_conversation())
                        .map(|m| m.text.as_str())
                })
                .and_then(|t| shorten(t, TITLE_CHARS));
        }
        if let Some(latest) = appended
            .iter()
            .rev()
            .find_map(|m| shorten(&m.text, PREVIEW_CHARS))
        {
            self.preview = Some(latest);
        }
    }
}

/// `text` on one line, cut at a word boundary to at most `max` characters
/// (with an ellipsis); `None` when it is blank.
fn shorten(text: &str, max: usize) -> Option<String> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= max {
        return Some(line);
    }
    let cut: String = line.chars().take(max - 1).collect();
    let kept = match cut.rfind(' ') {
        Some(space) if space > max / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    Some(format!("{}…", kept.trim_end_matches([',', '.', ';', ':'])))
}

/// Everything a turn needs besides the snapshot and the content bundle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionState {
    pub turn_count: u32,
    /// Routing category of the previous student message.
    pub last_category: Option<String>,
    pub pending_question: Option<PendingQuestion>,
    pub scaffolding: Scaffolding,
    pub teach_back: TeachBack,
    pub off_topic_count: u32,
    /// Drill tokens already graded once (their replay keys, newest last,
    /// bounded); only a first attempt is evidence.
    pub graded_drills: Vec<String>,
    /// Code grades of recent answers, oldest first (bounded): the pacing trend.
    pub recent_outcomes: Vec<super::grade::GradeOutcome>,
    pub concepts_discussed: Vec<String>,
    /// What the thread's mode keeps of its own.
    pub mode_state: ModeState,
    /// The last problem an integration sent over the webhook: it is not
    /// asked again once answered.
    pub last_problem: Option<String>,
    /// What became of the conversation's recent cards (newest last,
    /// bounded), so a conversation read back shows each card as it was left.
    /// Not written while empty, so a thread without any reads as it did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub card_states: Vec<RecordedCardState>,
    /// Messages the safety gate flagged in this conversation, by category.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub safety_flags: BTreeMap<String, u32>,
    /// Steps of `irt.request_step` the student asked practice to move by:
    /// positive is harder, negative easier.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub difficulty_shift: i8,
    /// Exam cards shown in this thread, oldest first (bounded): only a
    /// question shown here can be submitted, once per showing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exam_cards: Vec<ShownExamCard>,
    /// What was answered and learned in this conversation, unit by unit:
    /// the thread's own summary is built from it, not from the course record.
    #[serde(skip_serializing_if = "ThreadLearning::is_empty")]
    pub learning: ThreadLearning,
    /// First answers to drill cards graded since the last turn, oldest
    /// first (bounded): the next turn reads them as the student's answers
    /// (a lesson's step counts them), then clears them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub card_grades: Vec<super::grade::GradeOutcome>,
    /// Who the student said they are, copied at creation from the request
    /// and their saved profile.
    #[serde(skip_serializing_if = "super::profile::Personalization::is_default")]
    pub personalization: super::profile::Personalization,
    /// The session's latest turns, oldest first (bounded): the summary's
    /// timeline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<super::session_summary::TimelineEntry>,
}

/// A conversation's own record of work, in the order units were met.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ThreadLearning {
    pub units: Vec<UnitLearning>,
}

impl ThreadLearning {
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}

/// One unit's work in one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UnitLearning {
    pub unit_id: String,
    /// Tutor replies about the unit.
    pub replies: u32,
    /// Answers right with no wrong try or help before them.
    pub right_first_time: u32,
    /// Answers right after a wrong try or help: learned here.
    pub learned: u32,
    pub wrong_answers: u32,
    /// A wrong answer not yet followed by a right one.
    pub not_yet_right: bool,
    /// Hints, concept cards and "I'm stuck" turns.
    pub help: u32,
    /// Help given since the last answer: the next right answer was helped.
    pub helped_since_answer: bool,
    /// The unit's mistake tags seen, first occurrence first.
    pub mistake_tags: Vec<String>,
}

fn is_zero(shift: &i8) -> bool {
    *shift == 0
}

/// The state of the card in message `message_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedCardState {
    pub message_id: String,
    pub state: super::message::CardState,
}

/// An exam card the tutor showed, and whether it has been answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShownExamCard {
    pub question_id: String,
    pub shown_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<DateTime<Utc>>,
}

/// What a thread's mode keeps between turns, beside the session state
/// every mode shares: each mode that needs state has its variant here,
/// created by the mode's `start` and updated by its `apply`. A thread
/// stored before modes kept state of their own reads as guided.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ModeState {
    /// The guided loop keeps its progress in the student's snapshot.
    #[default]
    Guided,
    /// A study plan and its steps' statuses.
    TeachMe(StudyPlan),
    /// A student-led question session: whether it has been closed, and the
    /// student's earlier sessions it builds on.
    ClarifyDoubts(ClarifySession),
    /// The questions chosen at creation, their expected answers (kept
    /// server-side) and the student's answers.
    Exam(ExamSession),
    /// The problems to work through and where the student is.
    ProblemSet(ProblemSetState),
    /// The survey being answered: where the student is and the answers.
    Survey(SurveySession),
}

/// A survey in progress or finished. The questions live in the content
/// bundle; the session keeps the path taken and the answers given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SurveySession {
    pub survey_id: String,
    /// The question on screen; `None` once the survey is finished.
    pub current_question_id: Option<String>,
    /// Answers in the order given (a skipped optional question has none).
    pub answers: Vec<SurveyAnswer>,
    /// Optional questions the student chose to skip.
    pub skipped: Vec<String>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// When the survey stops taking answers (its time limit, counted
    /// from the start); `None` when it has no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<DateTime<Utc>>,
    /// It ended at its time limit, with what was answered by then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

/// One answer: the question, and the answer as stored (a choice's option
/// id, a scale's number, free text as written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurveyAnswer {
    pub question_id: String,
    pub value: String,
    pub answered_at: DateTime<Utc>,
}

/// What a clarify_doubts session keeps besides the concepts discussed
/// (which every mode records in [`SessionState::concepts_discussed`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClarifySession {
    /// Questions answered so far.
    pub questions_answered: u32,
    /// The student or the tutor closed the session: every later message
    /// gets a short reply pointing to another mode.
    pub complete: bool,
    /// The student's latest earlier question sessions on the course,
    /// newest first, attached when the thread was created.
    pub past_discussions: Vec<PastDiscussion>,
}

/// One earlier question session, as the context remembers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PastDiscussion {
    pub thread_id: String,
    pub created_at: DateTime<Utc>,
    pub concepts: Vec<String>,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Explain,
    Check,
    Practice,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Blocked,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepProgress {
    pub questions_asked: u32,
    pub questions_correct: u32,
    pub attempts: u32,
    /// The step's idea has been put in front of the student (an explain
    /// step's card).
    #[serde(default)]
    pub taught: bool,
}

/// One step of a teach_me study plan, kept like a to-do list item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    pub step_id: String,
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<String>,
    pub status: StepStatus,
    pub progress: StepProgress,
}

/// A study plan step as a unit's author writes it (a unit file's
/// `study_plan`): a lesson of that unit starts from it, and the offline
/// planner uses it as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthoredStep {
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    #[serde(default)]
    pub success_criteria: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudyPlan {
    /// The unit the lesson teaches.
    #[serde(default)]
    pub unit_id: String,
    pub steps: Vec<PlanStep>,
    pub plan_version: u32,
    pub replan_count: u32,
    pub max_replans: u32,
    /// Turns taken after the plan was completed (extension).
    #[serde(default)]
    pub extension_turns: u32,
    /// Every rewrite of the plan, oldest first.
    #[serde(default)]
    pub replans: Vec<ReplanRecord>,
    /// The pacing of the last reply: the evaluator reads it before this
    /// turn's pacing is known, so a turn's preview and its update agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pacing: Option<super::signals::PacingDirective>,
}

/// Why and when a study plan was rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplanRecord {
    /// The session turn whose answer triggered it.
    pub turn: u32,
    pub reason: String,
}

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
        tier: super::tier::ExamTier,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, TutorMessage};

    fn said(role: Role, text: &str) -> TutorMessage {
        TutorMessage {
            id: text.into(),
            thread_id: "t".into(),
            role,
            text: text.into(),
            latex: None,
            card: None,
            card_state: None,
            event: None,
            safety: None,
            created_at: DateTime::<Utc>::UNIX_EPOCH,
        }
    }

    fn thread(goal: Option<&str>) -> Thread {
        Thread {
            thread_id: "t".into(),
            student_id: "s".into(),
            course_id: "c".into(),
            mode: Mode::Guided,
            status: ThreadStatus::Active,
            goal: goal.map(str::to_owned),
            unit_id: None,
            created_at: DateTime::<Utc>::UNIX_EPOCH,
            updated_at: DateTime::<Utc>::UNIX_EPOCH,
            title: None,
            preview: None,
            paused_at: None,
            ended_at: None,
            session: SessionState::default(),
        }
    }

    #[test]
    fn the_first_student_message_titles_a_thread_and_the_latest_message_previews_it() {
        let mut t = thread(None);
        t.note_messages(&[said(Role::Assistant, "Welcome!")]);
        assert_eq!(t.title, None);
        assert_eq!(t.preview.as_deref(), Some("Welcome!"));
        t.note_messages(&[
            said(Role::Student, "  how do I\nadd fractions? "),
            said(Role::Assistant, "Let's look at the denominators."),
        ]);
        assert_eq!(t.title.as_deref(), Some("how do I add fractions?"));
        assert_eq!(
            t.preview.as_deref(),
            Some("Let's look at the denominators.")
        );
        t.note_messages(&[said(Role::Student, "what about 1/2 + 1/3?")]);
        assert_eq!(t.title.as_deref(), Some("how do I add fractions?"), "kept");
    }

    #[test]
    fn a_goal_titles_a_thread_and_long_text_is_cut_at_a_word() {
        let mut t = thread(Some("ratios for my test on Friday"));
        t.note_messages(&[said(Role::Student, "hi")]);
        assert_eq!(t.title.as_deref(), Some("ratios for my test on Friday"));
        let long = "word ".repeat(60);
        t.note_messages(&[said(Role::Assistant, &long)]);
        let preview = t.preview.unwrap();
        assert!(preview.ends_with("word…"), "{preview}");
        assert!(preview.chars().count() <= PREVIEW_CHARS);
        assert_eq!(shorten("   ", 10), None);
    }
}
