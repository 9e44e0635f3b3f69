//! Threads (conversations) and the session state every turn is rebuilt from.
//!
//! A thread's mode is fixed at creation. All state lives here, so any
//! stateless function can pick up the conversation: no server keeps a
//! session in memory between turns.
//!
//! This file holds the thread, the session state and what each mode keeps
//! ([`ModeState`]); the larger parts of that state have files of their own:
//! the pending question (`question`), a study plan (`study_plan`), an exam
//! (`exam`) and a problem set (`problem_set`).

mod exam;
mod problem_set;
mod question;
mod study_plan;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use self::exam::*;
pub use self::problem_set::*;
pub use self::question::*;
pub use self::study_plan::*;

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
