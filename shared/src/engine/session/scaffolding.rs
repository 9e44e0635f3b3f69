//! Applying a routing category's state transitions (each category of the
//! workflow names the ones it makes): scaffolding on, deeper and off;
//! teach-back on and off; the off-topic count; and the question lifecycle's
//! own transitions. Also what happens
//! when the problem changes: fresh per-problem state and the hybrid memory
//! (docs/architecture.md, problem_set), which keeps the last few turns of
//! the previous problem.

use crate::content::workflow::{Category, Transition};
use crate::engine::session::lifecycle;
use crate::model::{PendingQuestion, Scaffolding, SessionState, TeachBack};

/// What the transitions may need from the turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScaffoldingContext<'a> {
    /// The student's answer, kept with a wrong attempt.
    pub answer: Option<&'a str>,
}

/// Applies `category`'s transitions in the order they are listed and
/// records it as the last category.
/// Steps a student can ask practice to move, either way.
const MAX_SHIFT: i8 = 2;

pub fn apply_category(state: &mut SessionState, category: &Category, context: ScaffoldingContext) {
    apply_transitions(state, &category.transitions, context);
    state.last_category = Some(category.id.clone());
}

pub fn apply_transitions(
    state: &mut SessionState,
    transitions: &[Transition],
    context: ScaffoldingContext,
) {
    for transition in transitions {
        apply(state, *transition, context);
    }
}

fn apply(state: &mut SessionState, transition: Transition, context: ScaffoldingContext) {
    match transition {
        Transition::ClearQuestion => {
            lifecycle::clear_question(state);
        }
        // While the problem is broken down, a wrong try is counted like any
        // other, and the scaffolding goes a step deeper beside it.
        Transition::RecordWrongAttempt => {
            lifecycle::record_wrong_attempt(state, context.answer.unwrap_or(""));
            if state.scaffolding.active {
                state.scaffolding.depth = state.scaffolding.depth.saturating_add(1);
            }
        }
        // Stuck again while scaffolding breaks the step down further, so
        // starting and deepening both go one level down.
        Transition::StartScaffolding | Transition::DeepenScaffolding => {
            let scaffolding = &mut state.scaffolding;
            scaffolding.depth = if scaffolding.active {
                scaffolding.depth.saturating_add(1)
            } else {
                1
            };
            scaffolding.active = true;
        }
        Transition::EndScaffolding => state.scaffolding = Scaffolding::default(),
        Transition::StartTeachBack => {
            state.teach_back = TeachBack {
                active: true,
                awaiting_explanation: true,
            };
        }
        Transition::EndTeachBack => state.teach_back = TeachBack::default(),
        Transition::CountOffTopic => {
            state.off_topic_count = state.off_topic_count.saturating_add(1)
        }
        Transition::ResetOffTopic => state.off_topic_count = 0,
        Transition::MoveOn => {
            lifecycle::clear_question(state);
        }
        Transition::Harder => state.difficulty_shift = (state.difficulty_shift + 1).min(MAX_SHIFT),
        Transition::Easier => state.difficulty_shift = (state.difficulty_shift - 1).max(-MAX_SHIFT),
        // Evidence, not session state: the turn retracts it from the snapshot.
        Transition::RetractGuess => {}
        // About the reply's question, which the turn then leaves untracked.
        Transition::InviteChoice => {}
    }
}

/// Records the tutor's scaffolding question (from its reply), while
/// scaffolding is on.
pub fn set_scaffold_question(state: &mut SessionState, question: &str) {
    if state.scaffolding.active {
        state.scaffolding.last_question = Some(question.trim().to_owned());
    }
}

/// Moving to another problem: its question becomes the pending
/// one, and attempts, scaffolding and teach-back start afresh.
pub fn start_problem(state: &mut SessionState, question: PendingQuestion) {
    state.pending_question = Some(question);
    state.scaffolding = Scaffolding::default();
    state.teach_back = TeachBack::default();
}

/// A turn in the tutor's memory, and whether it belongs to an earlier problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remembered<'a, T> {
    pub turn: &'a T,
    pub previous_problem: bool,
}

/// The hybrid memory: the current problem's turns, preceded by the
/// last `keep_previous` turns of the problems before it (marked as such),
/// then the oldest dropped to stay within `limit`. `turns` are oldest first.
pub fn hybrid_memory<'a, T>(
    turns: &'a [T],
    problem_of: impl Fn(&T) -> &str,
    current_problem: &str,
    keep_previous: usize,
    limit: usize,
) -> Vec<Remembered<'a, T>> {
    let current_from = turns
        .iter()
        .rposition(|t| problem_of(t) != current_problem)
        .map_or(0, |i| i + 1);
    let previous_from = current_from.saturating_sub(keep_previous);
    let remembered: Vec<Remembered<'a, T>> = turns[previous_from..]
        .iter()
        .enumerate()
        .map(|(k, turn)| Remembered {
            turn,
            previous_problem: previous_from + k < current_from,
        })
        .collect();
    let excess = remembered.len().saturating_sub(limit);
    remembered.into_iter().skip(excess).collect()
}
