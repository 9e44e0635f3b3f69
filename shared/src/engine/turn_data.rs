//! What a turn passes between its steps and hands the thread's mode: what
//! the student sent ([`TurnEvent`]), the state as read at one moment
//! ([`TurnState`]), what the turn is computed from besides them
//! ([`TurnEnv`]), the message as code reads it ([`Interpreted`]) and
//! everything decided before the LLM call ([`Plan`]).
//!
//! Both the pipeline ([`crate::engine::turn`]) and the session modes
//! ([`crate::engine::modes`]) read these, so they live below both: the
//! pipeline calls the thread's mode, and no mode imports the pipeline.

use chrono::{DateTime, Duration, Utc};

use crate::engine::exam::judge::Judging;
use crate::engine::exam::lockout::LockoutSource;
use crate::engine::interpret::classify::Interpretation;
use crate::engine::interpret::student_math;
use crate::engine::policy::PolicyOutcome;
use crate::engine::practice::drill::IssuedDrill;
use crate::engine::practice::drill_grade::DrillVerdict;
use crate::engine::practice::drill_token::TokenKeys;
use crate::engine::practice::item_help;
use crate::engine::reply::answer_guard::PendingAnswer;
use crate::engine::safety::SafetyHit;
use crate::model::{
    ClientEvent, LlmTutorResponse, MappedUnit, Personalization, StudentInput, StudentSnapshot,
    Thread, TutorMessage, TutorTurnInput,
};

/// What the student sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnEvent {
    pub message_text: Option<String>,
    pub message_latex: Option<String>,
    pub client_event: ClientEvent,
}

impl TurnEvent {
    pub(crate) fn student_input(&self) -> StudentInput {
        StudentInput {
            message_text: self.message_text.clone(),
            message_latex: self.message_latex.clone(),
            voice_transcript: None,
        }
    }
}

/// What a turn is computed from besides state and content: time, ids and
/// randomness handed in, lockouts prefetched by the caller.
pub struct TurnEnv<'a> {
    pub now: DateTime<Utc>,
    pub turn_id: &'a str,
    pub seed: u64,
    pub token_keys: &'a TokenKeys,
    pub drill_ttl: Duration,
    pub lockouts: &'a (dyn LockoutSource + Sync),
    pub personalization: &'a Personalization,
    /// Whose help lines a safety reply shows (the deployment's region).
    pub safety_region: &'a str,
}

/// State as read at one moment.
#[derive(Clone, Copy)]
pub struct TurnState<'a> {
    pub thread: &'a Thread,
    /// Recent messages, oldest first.
    pub history: &'a [TutorMessage],
    pub snapshot: &'a StudentSnapshot,
}

/// A drill pending in the chat, answered there instead of with "Check".
#[derive(Debug, Clone, PartialEq)]
pub struct ChatDrill {
    pub verdict: DrillVerdict,
    pub unit_id: String,
    pub replay_key: String,
    pub difficulty: Option<f64>,
    pub first_attempt: bool,
}

/// Steps 5 and 6: what the student sent, as code reads it before the
/// policy and any LLM call.
pub struct Interpreted {
    /// What the student wrote this turn, if anything, as the turn reads
    /// it: a follow-up ("what about 1/3?") is the question it stands for.
    pub said: Option<String>,
    /// The student's own words, when they differ from `said`.
    pub written: Option<String>,
    /// The safety gate's verdict: its category's response pauses
    /// tutoring for this turn (nothing is graded or applied) or comes
    /// before the tutor's reply.
    pub safety: Option<SafetyHit>,
    pub interpretation: Option<Interpretation>,
    /// A problem the student brought as their own, worked out once here
    /// for every later step that asks.
    pub own_problem: Option<student_math::StudentProblem>,
    /// The maths topics outside the course the message asks about (indices
    /// into the workflow's `beyond_course`), when it names one more
    /// strongly than any unit of the course: one, or two set side by side.
    pub beyond_course: Vec<usize>,
    pub category: String,
    pub mapped_units: Vec<MappedUnit>,
    /// The exam questions whose lockout statuses planning reads: the caller
    /// fetches them between [`interpret`](crate::engine::turn::interpret()) and
    /// [`plan_interpreted`](crate::engine::turn::plan_interpreted).
    pub exam_questions: Vec<String>,
}

/// Everything decided before the LLM call.
pub struct Plan {
    /// What the student wrote this turn, if anything, as the turn read it
    /// (see [`Interpreted::said`]).
    pub said: Option<String>,
    /// The student's own words, when they differ from `said`: these are
    /// what the conversation records and what moderation reads.
    pub written: Option<String>,
    /// The safety gate's verdict: its category's response pauses
    /// tutoring for this turn (nothing is graded or applied) or comes
    /// before the tutor's reply.
    pub safety: Option<SafetyHit>,
    pub interpretation: Option<Interpretation>,
    pub category: String,
    pub mapped_units: Vec<MappedUnit>,
    pub policy: PolicyOutcome,
    pub practice: Option<IssuedDrill>,
    pub chat_drill: Option<ChatDrill>,
    /// The tutor's input, pending answers masked.
    pub input: TutorTurnInput,
    /// Answers the reply must not state (see `engine::reply::answer_guard`).
    pub pending_answers: Vec<PendingAnswer>,
    /// The practice item's answer: guarded only in a reply that shows the
    /// item (another reply may state the same number for other reasons).
    pub practice_answer: Option<PendingAnswer>,
    /// The answers of the exam questions the reply may show: not in the
    /// context, and never stated.
    pub exam_answers: Vec<PendingAnswer>,
    /// The reply the mode wrote itself: the turn makes no tutor call.
    pub scripted: Option<LlmTutorResponse>,
    /// A written exam answer this turn marks: the turn's one LLM call is
    /// the evaluation call on `judging.request`, and [`judged`](crate::engine::turn::judged) hands its
    /// verdict back before `apply`. Until then (and when the call fails)
    /// the offline judge's verdict stands, with the reply written for it.
    pub judging: Option<Judging>,
    /// What the pending item's own solution offers this turn (also in
    /// `input.question`), with what the step it offers works out to.
    pub item_help: item_help::TurnHelp,
}

impl Plan {
    /// What the student wrote, in their own words.
    pub fn student_words(&self) -> Option<&str> {
        self.written.as_deref().or(self.said.as_deref())
    }

    /// The turn's event as the plan read it: what the student wrote and
    /// the card event, for a mode that replays it in `apply`.
    pub fn event(&self) -> TurnEvent {
        TurnEvent {
            message_text: self.said.clone(),
            message_latex: None,
            client_event: self.input.context.client_event.clone(),
        }
    }
}
