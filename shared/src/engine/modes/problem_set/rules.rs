//! The progression rules: what one message says about the current
//! problem, the mastery signal and the session's next move that follow
//! from it ([`decide`], pure and table-tested), and the problem's progress
//! after it.

use chrono::{DateTime, Utc};

use super::concept_of;
use crate::content::Workflow;
use crate::content::workflow::{ProblemSetMode, Transition};
use crate::engine::session::scaffolding;
use crate::model::{
    GradeOutcome, MasterySignal, ProblemEntry, ProblemProgress, ProgressionAction, SessionState,
    StudentIntent,
};

/// What one message says about the current problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFacts {
    /// Code's grade of an answer to the problem itself.
    pub grade: Option<GradeOutcome>,
    /// The student says they are stuck (the category starts scaffolding).
    pub stuck: bool,
    /// The student answered a scaffolding step.
    pub scaffold_step: bool,
    /// Scaffolding depth once this message's transitions apply.
    pub scaffold_depth: u32,
    /// The student explains how they solved it (teach-back).
    pub explained: bool,
    /// The student asks something, or talks about something else.
    pub asks: bool,
    /// The student asks to skip the problem.
    pub skip: bool,
    /// Minutes since the problem was presented.
    pub minutes_on_problem: i64,
}

impl TurnFacts {
    /// The problem's next hint is shown when the student is stuck or
    /// working through smaller steps, or from their second wrong answer
    /// (the first is met with a question about their method).
    pub(super) fn hint_due(&self, progress: &ProblemProgress) -> bool {
        let wrong = matches!(self.grade, Some(GradeOutcome::Wrong | GradeOutcome::Close));
        self.stuck || self.scaffold_step || (wrong && progress.wrong_attempts >= 1)
    }
}

pub(super) fn facts(
    workflow: &Workflow,
    before: &SessionState,
    entry: &ProblemEntry,
    category: &str,
    intent: Option<StudentIntent>,
    grade: Option<GradeOutcome>,
    now: DateTime<Utc>,
) -> TurnFacts {
    let settings = &workflow.modes.problem_set;
    let on_problem = before
        .pending_question
        .as_ref()
        .is_some_and(|q| q.concept == concept_of(entry));
    let grade = grade.filter(|g| on_problem && *g != GradeOutcome::Unverifiable);
    let mut preview = before.clone();
    let found = workflow.category(category);
    if let Some(c) = found {
        scaffolding::apply_category(&mut preview, c, scaffolding::ScaffoldingContext::default());
    }
    let has = |t: Transition| found.is_some_and(|c| c.transitions.contains(&t));
    TurnFacts {
        grade,
        stuck: has(Transition::StartScaffolding),
        scaffold_step: has(Transition::DeepenScaffolding) && grade.is_none(),
        scaffold_depth: preview.scaffolding.depth,
        explained: found.is_some_and(|c| c.detect.teach_back == Some(true))
            && before.teach_back.awaiting_explanation,
        asks: matches!(
            intent,
            Some(StudentIntent::Question | StudentIntent::OffTopic)
        ) || has(Transition::CountOffTopic),
        skip: settings.skip_categories.iter().any(|c| c == category),
        minutes_on_problem: entry
            .progress
            .started_at
            .map_or(0, |t| (now - t).num_minutes()),
    }
}

/// A problem's mastery signal and what the session does, after one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemDecision {
    pub signal: Option<MasterySignal>,
    pub action: ProgressionAction,
    /// The problem is answered right with this message.
    pub solved_now: bool,
    /// The reply offers to skip the problem.
    pub offer_skip: bool,
}

/// The progression rules, given the problem's progress before this
/// message and what the message says:
/// - right on the first attempt with no help: mastered, ADVANCE;
/// - right after wrong tries, hints or scaffolding: learned, ADVANCE, or
///   when the workflow waits for the teach-back, CONTINUE until the next
///   message (an explanation, or anything but a question) and then ADVANCE;
/// - a request to skip: SKIP;
/// - scaffolded deeper than `intervene_scaffold_depth`: stuck, INTERVENE
///   (once per problem; the teacher is alerted);
/// - `struggling_attempts` wrong answers or more: struggling, CONTINUE;
/// - after `skip_offer_minutes` on the problem (or once stuck), the reply
///   offers to skip, once.
pub fn decide(
    progress: &ProblemProgress,
    facts: &TurnFacts,
    settings: &ProblemSetMode,
) -> ProblemDecision {
    let stay = |signal| ProblemDecision {
        signal,
        action: ProgressionAction::Continue,
        solved_now: false,
        offer_skip: false,
    };
    if progress.solved {
        return if facts.asks && !facts.explained {
            stay(progress.signal)
        } else {
            ProblemDecision {
                action: ProgressionAction::Advance,
                ..stay(progress.signal)
            }
        };
    }
    if facts.skip {
        return ProblemDecision {
            action: ProgressionAction::Skip,
            ..stay(progress.signal)
        };
    }
    if facts.grade == Some(GradeOutcome::Correct) {
        let helped = progress.attempts > 0
            || progress.wrong_attempts > 0
            || progress.hints_used > 0
            || progress.scaffold_depth > 0;
        let (signal, action) = if !helped {
            (MasterySignal::Mastered, ProgressionAction::Advance)
        } else if settings.wait_for_teach_back {
            (MasterySignal::Learned, ProgressionAction::Continue)
        } else {
            (MasterySignal::Learned, ProgressionAction::Advance)
        };
        return ProblemDecision {
            signal: Some(signal),
            action,
            solved_now: true,
            offer_skip: false,
        };
    }
    let wrong = progress.wrong_attempts
        + u32::from(matches!(
            facts.grade,
            Some(GradeOutcome::Wrong | GradeOutcome::Close)
        ));
    let depth = progress.scaffold_depth.max(facts.scaffold_depth);
    let signal = if depth > settings.intervene_scaffold_depth {
        Some(MasterySignal::Stuck)
    } else if wrong >= settings.struggling_attempts {
        Some(MasterySignal::Struggling)
    } else {
        progress.signal
    };
    if signal == Some(MasterySignal::Stuck) && !progress.intervened {
        return ProblemDecision {
            action: ProgressionAction::Intervene,
            ..stay(signal)
        };
    }
    let long = facts.minutes_on_problem >= i64::from(settings.skip_offer_minutes);
    ProblemDecision {
        offer_skip: !progress.skip_offered && (long || signal == Some(MasterySignal::Stuck)),
        ..stay(signal)
    }
}

/// The problem's progress after the message.
pub(super) fn record(
    progress: &mut ProblemProgress,
    facts: &TurnFacts,
    decision: &ProblemDecision,
    category: &str,
    hint_shown: bool,
    now: DateTime<Utc>,
) {
    if progress.first_category.is_none() {
        progress.first_category = Some(category.to_owned());
    }
    if !progress.categories.iter().any(|c| c == category) {
        progress.categories.push(category.to_owned());
    }
    if let Some(grade) = facts.grade {
        progress.attempts += 1;
        if grade != GradeOutcome::Correct {
            progress.wrong_attempts += 1;
        }
    }
    if facts.stuck || facts.scaffold_step || hint_shown {
        progress.hints_used += 1;
    }
    if hint_shown {
        progress.hints_shown += 1;
    }
    progress.scaffold_depth = progress.scaffold_depth.max(facts.scaffold_depth);
    if decision.solved_now {
        progress.solved = true;
        progress.solved_at = Some(now);
    }
    if progress.solved && facts.explained {
        progress.taught_back = true;
    }
    progress.signal = decision.signal;
}
