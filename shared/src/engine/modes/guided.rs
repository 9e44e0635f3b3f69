//! The guided mode: the policy's loop over the course graph. Socratic
//! questions, concept cards when the student is stuck, practice drills
//! generated from the focus unit's blueprints, exam blocks when the student
//! is ready. Its progress lives in the student's snapshot, which every turn
//! updates, so it keeps no state of its own in the session.

use crate::engine::drill::{self, IssuedDrill};
use crate::engine::irt;
use crate::engine::modes::{
    ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start, StartError, Started, welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::turn::{
    CourseRuntime, Interpreted, Plan, TurnEnv, TurnEvent, TurnState, event_unit,
};
use crate::model::{ClientEvent, LlmTutorResponse, Mode, SessionState, TutorAction};

/// The guided mode.
pub struct Guided;

impl SessionMode for Guided {
    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        Ok(Started {
            session: SessionState::default(),
            welcome: welcome(start, Mode::Guided)?,
        })
    }

    /// The policy as it is, and a practice item whenever it allows a drill.
    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        _read: &Interpreted,
        policy: PolicyOutcome,
    ) -> ModePlan {
        let practice = practice_item(turn.rt, turn.state, &policy, &event.client_event, turn.env);
        ModePlan {
            policy,
            practice,
            block: ModeBlock::default(),
            category: None,
        }
    }

    /// Nothing of its own: the shared updates carry the snapshot along the
    /// policy's focus.
    fn apply(
        &self,
        _turn: &ModeTurn<'_>,
        _plan: &Plan,
        _reply: &LlmTutorResponse,
        _outcome: &mut Outcome<'_>,
    ) {
    }
}

/// A blueprint item for the unit a drill would target, when drills are
/// allowed: the button's unit if in scope, else the policy's focus.
pub(super) fn practice_item(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    policy: &PolicyOutcome,
    event: &ClientEvent,
    env: &TurnEnv<'_>,
) -> Option<IssuedDrill> {
    let p = &policy.policy;
    if !p.allows(TutorAction::DrillCard) {
        return None;
    }
    let unit_id = event_unit(event)
        .filter(|u| p.scoped_unit_ids.iter().any(|s| s == u))
        .unwrap_or(&p.focus_unit_id);
    let unit = rt.course().unit(unit_id)?;
    if unit.blueprints.is_empty() {
        return None;
    }
    let blueprint_id = &unit.blueprints[(env.seed % unit.blueprints.len() as u64) as usize];
    let blueprint = rt.bundle.blueprints.get(blueprint_id)?;
    let ability = state
        .snapshot
        .unit_progress
        .get(unit_id)
        .and_then(|p| p.ability);
    let target = irt::target_difficulty(ability, &rt.workflow().irt);
    drill::issue_generated(
        blueprint,
        target,
        env.seed,
        unit_id,
        &state.thread.thread_id,
        env.now,
        env.drill_key,
    )
    .ok()
}
