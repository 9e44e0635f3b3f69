//! The turn as pure functions, the same for every mode (docs/architecture.md,
//! "The turn"); what a mode does differently comes from
//! [`crate::engine::modes`].
//!
//! [`interpret`] reads the message: the safety gate, code grading,
//! classification and unit mapping, and names the exam questions whose
//! lockout statuses the policy will read. [`plan_interpreted`] runs the
//! rest of what comes before the one LLM call: the policy, the mode's plan
//! (allowed actions, the item to ask), retrieval and the composed tutor
//! input. [`apply`] runs every step after it: the session's transitions,
//! evidence, the new pending question, the cards, the messages and the
//! mode's own update. All take state as read at one moment, so on a version
//! conflict the caller re-reads and runs them again with the same LLM reply:
//! the reply is an input and is never requested twice.
//!
//! The types and entry points are here; each step has its own file:
//! `interpret` (reading the message, then planning), `compose` (the
//! tutor's input), `apply`, `cards` (the cards a reply shows), `questions`
//! (what a turn leaves pending) and `runtime` (the per-course cache).

pub(crate) mod apply;
mod cards;
mod compose;
pub(crate) mod interpret;
mod questions;
mod runtime;

pub use apply::{apply, record_ability, remember_drill};
pub use cards::exam_card;
pub use interpret::{interpret, plan_interpreted};
pub use runtime::CourseRuntime;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::engine::exam::exam_judge::{JudgeRequest, Judging, Verdict};
use crate::engine::exam::lockout::LockoutSource;
use crate::engine::interpret::classify::Interpretation;
use crate::engine::interpret::student_math;
use crate::engine::mastery::evidence::EvidenceEffect;
use crate::engine::modes::{self, ModeTurn, SessionMode};
use crate::engine::policy::{PolicyError, PolicyOutcome};
use crate::engine::practice::drill::IssuedDrill;
use crate::engine::practice::drill_grade::DrillVerdict;
use crate::engine::practice::drill_token::TokenKeys;
use crate::engine::practice::item_help;
use crate::engine::reply::answer_guard::PendingAnswer;
use crate::engine::safety::SafetyHit;
use crate::model::{
    ClientEvent, LlmTutorResponse, MappedUnit, OutboundEvent, Personalization, StudentInput,
    StudentSnapshot, Thread, TutorMessage, TutorTurnInput,
};

/// The category of a question about maths outside the course.
pub(crate) const BEYOND_COURSE: &str = "beyond_course";

/// What the student sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnEvent {
    pub message_text: Option<String>,
    pub message_latex: Option<String>,
    pub client_event: ClientEvent,
}

impl TurnEvent {
    fn student_input(&self) -> StudentInput {
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
    /// What the student wrote this turn, if anything.
    pub said: Option<String>,
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
    /// fetches them between [`interpret`] and [`plan_interpreted`].
    pub exam_questions: Vec<String>,
}

/// Everything decided before the LLM call.
pub struct Plan {
    /// What the student wrote this turn, if anything.
    pub said: Option<String>,
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
    /// the evaluation call on `judging.request`, and [`judged`] hands its
    /// verdict back before `apply`. Until then (and when the call fails)
    /// the offline judge's verdict stands, with the reply written for it.
    pub judging: Option<Judging>,
    /// What the pending item's own solution offers this turn (also in
    /// `input.question`), with what the step it offers works out to.
    pub item_help: item_help::TurnHelp,
}

impl Plan {
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

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("the tutor's reply targets unit `{0}`, which is not in the course")]
    UnknownUnit(String),
}

/// The mode that runs `thread`.
fn mode_of(thread: &Thread) -> &'static dyn SessionMode {
    modes::for_mode(thread.mode)
}

/// Steps 5 to 9 at once, for a caller that holds every lockout status.
pub fn plan(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    event: &TurnEvent,
    env: &TurnEnv<'_>,
) -> Result<Plan, TurnError> {
    let read = interpret(rt, state, event, env.now, env.turn_id)?;
    plan_interpreted(rt, state, event, read, env)
}

/// The evaluation call's verdict on the answer `plan` asked to be judged,
/// handed back before `apply`: the mode writes its reply again with it.
/// A verdict on another request (the state moved on after a version
/// conflict) is not this answer's, and changes nothing.
pub fn judged(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    plan: &mut Plan,
    request: &JudgeRequest,
    verdict: Verdict,
    env: &TurnEnv<'_>,
) {
    let Some(judging) = plan.judging.as_mut().filter(|j| j.request == *request) else {
        return;
    };
    judging.verdict = verdict.clone();
    let turn = ModeTurn { rt, state, env };
    if let Some(reply) = mode_of(state.thread).judged(&turn, plan, &verdict) {
        plan.scripted = Some(reply);
    }
}

/// How the reply that [`apply`] uses was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOrigin {
    /// The configured model's reply passed validation.
    Llm,
    /// The offline tutor (the configured provider).
    Offline,
    /// The deterministic fallback replaced an invalid or failed reply.
    Fallback,
}

/// The outcome of one turn, ready to commit.
pub struct Applied {
    pub thread: Thread,
    pub snapshot: StudentSnapshot,
    /// New messages, in order: the student's (if they wrote something), then the tutor's.
    pub messages: Vec<TutorMessage>,
    pub drill_evidence: Option<EvidenceEffect>,
    /// Notifications the mode raised, sent once the turn is committed.
    pub events: Vec<OutboundEvent>,
}
