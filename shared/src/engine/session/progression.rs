//! What a session does after a turn, for an integration that drives a
//! sequence of problems: advance, carry on, or call a teacher.

use crate::content::Workflow;
use crate::engine::turn_data::Plan;
use crate::model::{GradeOutcome, ModeState, ProgressionAction, Thread};

/// Move on once the problem is answered right (after the teach-back, when
/// the workflow waits for it); call a teacher when scaffolding runs deep or
/// a safety rule asks for it; otherwise carry on. Only an integration
/// (`webhook`) is told to advance: the app's student moves on by talking.
pub fn progression(
    workflow: &Workflow,
    plan: &Plan,
    before: &Thread,
    after: &Thread,
    webhook: bool,
) -> ProgressionAction {
    let settings = &workflow.modes.problem_set;
    // A problem set decides for itself (see its mode), unless a safety
    // response stood in for the turn.
    if let ModeState::ProblemSet(state) = &after.session.mode_state {
        return if plan.safety.as_ref().is_some_and(|h| h.notify_teacher) {
            ProgressionAction::Intervene
        } else if plan.safety.as_ref().is_some_and(|h| h.pauses_tutoring()) {
            ProgressionAction::Continue
        } else {
            state.last_action
        };
    }
    if plan.safety.as_ref().is_some_and(|h| h.notify_teacher)
        || after.session.scaffolding.depth > settings.intervene_scaffold_depth
    {
        return ProgressionAction::Intervene;
    }
    if !webhook {
        return ProgressionAction::Continue;
    }
    let correct = plan
        .interpretation
        .as_ref()
        .and_then(|i| i.grade.as_ref())
        .is_some_and(|g| g.result == GradeOutcome::Correct);
    let waiting = settings.wait_for_teach_back && after.session.teach_back.awaiting_explanation;
    let explained = before.session.teach_back.awaiting_explanation
        && !after.session.teach_back.awaiting_explanation;
    if (correct && !waiting) || explained {
        ProgressionAction::Advance
    } else {
        ProgressionAction::Continue
    }
}
