//! The guided mode: the policy's loop over the course graph. Socratic
//! questions, concept cards when the student is stuck, practice drills
//! generated from the focus unit's blueprints, exam blocks when the student
//! is ready. Its progress lives in the student's snapshot, which every turn
//! updates, so it keeps no state of its own in the session.

use crate::content::Workflow;
use crate::engine::interpret::mapping::event_unit;
use crate::engine::mastery::irt;
use crate::engine::modes::{
    ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start, StartError, Started, study_plan,
    welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::practice::drill::{self, IssuedDrill};
use crate::engine::session::scaffolding;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{ClientEvent, LlmTutorResponse, Mode, SessionState, StudentIntent, TutorAction};

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
        read: &Interpreted,
        policy: PolicyOutcome,
    ) -> ModePlan {
        let mut policy = policy;
        answer_an_ambiguous_question(turn, read, &mut policy);
        let practice = practice_item(turn, read, &policy, &event.client_event, None, false);
        ModePlan {
            policy,
            practice,
            block: ModeBlock::default(),
            category: None,
            judging: None,
            reply: None,
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

/// A question whose words belong to several units equally ("what does
/// simplify mean?": fractions, adding fractions, expressions) is answered
/// about the first of them in teaching order, the most basic meaning,
/// rather than about whatever the student was last working on.
fn answer_an_ambiguous_question(
    turn: &ModeTurn<'_>,
    read: &Interpreted,
    policy: &mut PolicyOutcome,
) {
    let asks = read
        .interpretation
        .as_ref()
        .is_some_and(|i| i.classification.intent == StudentIntent::Question);
    if !asks || !policy.trace.ambiguous_mapping {
        return;
    }
    let Some(top) = read.mapped_units.first().map(|m| m.confidence) else {
        return;
    };
    let course = turn.rt.course();
    let tied: Vec<&str> = read
        .mapped_units
        .iter()
        .filter(|m| (m.confidence - top).abs() < 1e-9)
        .map(|m| m.unit_id.as_str())
        .collect();
    let Some(first) = course.order.iter().find(|u| tied.contains(&u.as_str())) else {
        return;
    };
    let p = &mut policy.policy;
    p.primary_target_unit_id = first.clone();
    if !p.scoped_unit_ids.contains(first) {
        p.scoped_unit_ids.insert(0, first.clone());
    }
}

/// A blueprint item for the unit a drill would target, when drills are
/// allowed: the button's unit if in scope, else the policy's focus. With a
/// `topic` (a lesson step's), from the unit's blueprints closest to it.
/// `easier` lowers its difficulty by the step a student's "easier" asks for.
pub(super) fn practice_item(
    turn: &ModeTurn<'_>,
    read: &Interpreted,
    policy: &PolicyOutcome,
    event: &ClientEvent,
    topic: Option<&str>,
    easier: bool,
) -> Option<IssuedDrill> {
    let (rt, state, env) = (turn.rt, turn.state, turn.env);
    let p = &policy.policy;
    // A question is answered, and a problem the student brought is worked,
    // before anything is practised: such a turn offers no item (the next
    // turn can), so the content stays whole rather than hiding an item's
    // answer, and the student meets one problem at a time.
    let answers_a_question = rt
        .workflow()
        .category(&read.category)
        .is_some_and(|c| c.detect.intents.contains(&StudentIntent::Question));
    let answers_the_student = answers_a_question || read.own_problem.is_some();
    if !p.allows(TutorAction::DrillCard) || answers_the_student {
        return None;
    }
    // "Next" on a drill card names the card's unit, but a prerequisite the
    // policy turned to comes first.
    let continuing =
        matches!(event, ClientEvent::DrillContinue { .. }) && p.prereq_blocking_unit_id.is_some();
    let unit_id = event_unit(event)
        .filter(|u| !continuing && p.scoped_unit_ids.iter().any(|s| s == u))
        .unwrap_or(&p.focus_unit_id);
    let unit = rt.course().unit(unit_id)?;
    if unit.blueprints.is_empty() {
        return None;
    }
    let candidates: Vec<usize> = match topic {
        Some(topic) => {
            let skills: Vec<String> = unit
                .blueprints
                .iter()
                .map(|id| {
                    rt.bundle
                        .blueprints
                        .get(id)
                        .map(|b| format!("{} {}", b.domain, b.skill_statement))
                        .unwrap_or_default()
                })
                .collect();
            study_plan::closest_skills(topic, &skills)
        }
        None => (0..unit.blueprints.len()).collect(),
    };
    let pick = candidates[(env.seed % candidates.len() as u64) as usize];
    let (blueprint, fingerprint) = rt.blueprint(&unit.blueprints[pick])?;
    let ability = state
        .snapshot
        .unit_progress
        .get(unit_id)
        .and_then(|p| p.ability);
    let mut target = requested_difficulty(
        irt::target_difficulty(ability, &rt.workflow().irt),
        rt.workflow(),
        &state.thread.session,
        &read.category,
    );
    let step = rt.workflow().irt.request_step;
    if easier && step.is_finite() {
        target = (target - step).clamp(0.0, 1.0);
    }
    let themes = state.thread.session.personalization.theme_names();
    drill::issue_generated(
        drill::DrillRequest {
            blueprint,
            fingerprint,
            target_difficulty: target,
            seed: env.seed,
            themes: &themes,
        },
        unit_id,
        &state.thread.thread_id,
        env.now,
        env.token_keys,
    )
    .ok()
}

/// `difficulty` moved by the steps the student asked for, this turn's
/// request included: "harder" is answered with the very next item.
fn requested_difficulty(
    difficulty: f64,
    workflow: &Workflow,
    session: &SessionState,
    category: &str,
) -> f64 {
    let mut preview = session.clone();
    if let Some(c) = workflow.category(category) {
        scaffolding::apply_category(
            &mut preview,
            c,
            scaffolding::ScaffoldingContext { answer: None },
        );
    }
    let step = workflow.irt.request_step;
    if !step.is_finite() {
        return difficulty;
    }
    (difficulty + f64::from(preview.difficulty_shift) * step).clamp(0.0, 1.0)
}
