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
//! The entry points and what a turn returns are here; what the steps pass
//! between them and hand the mode is in [`crate::engine::turn_data`], and
//! the per-course cache in [`crate::engine::runtime`]. Each step has its
//! own file: `interpret` (reading the message, then planning), `compose`
//! (the tutor's input), `apply`, `cards` (the cards a reply shows) and
//! `questions` (what a turn leaves pending).

pub(crate) mod apply;
mod cards;
mod compose;
mod decide;
mod interpret;
mod questions;
#[cfg(test)]
mod tests;

pub use apply::{apply, remember_drill};
pub use cards::exam_card;
pub use decide::{Decision, decide};
pub use interpret::{interpret, plan_interpreted};

use serde::Serialize;

use crate::engine::exam::judge::{JudgeRequest, WrittenMark};
use crate::engine::mastery::evidence::EvidenceEffect;
use crate::engine::modes::{self, ModeTurn, SessionMode};
use crate::engine::policy::PolicyError;
use crate::engine::runtime::CourseRuntime;
use crate::engine::turn_data::{Plan, TurnEnv, TurnEvent, TurnState};
use crate::model::{OutboundEvent, StudentSnapshot, Thread, TutorMessage};

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
    verdict: WrittenMark,
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
