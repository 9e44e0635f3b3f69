//! The teach_me mode: a structured lesson on one unit, following a study
//! plan of 3 to 5 steps.
//!
//! - `start` sets up the plan: the unit's authored plan, else the
//!   planner's (checked), else the workflow's default plan.
//! - `plan` reads the student's message as evidence for the current step
//!   (code's grade, or taking part), previews the step statuses after it,
//!   and lets this turn's reply teach the step that is then current: an
//!   explain step opens with the idea's card, a check or practice step asks
//!   a generated item code can grade — a check's from the unit's blueprint
//!   closest to its topic, an easier one after a reply paced SIMPLIFY. Once the plan is complete the lesson
//!   extends for a few turns, then closes.
//! - `apply` commits the same evaluation (after a reply paced ACCELERATE,
//!   a completed step skips a later one), keeps this reply's pacing for
//!   the next, and on completion says what was learned (or what needs
//!   another look) and marks the thread completed.

use std::collections::BTreeMap;

use crate::content::workflow::{Category, TeachMeMode};
use crate::content::{Unit, Workflow};
use crate::engine::interpret::classify::Interpretation;
use crate::engine::modes::guided::practice_item;
use crate::engine::modes::study_plan::{self, StepDraft, StepEvidence};
use crate::engine::modes::{
    ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start, StartCall, StartError, StartReply,
    Started, welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{
    ExamAvailability, GradeOutcome, LessonBrief, LessonStep, LlmTutorResponse, Mode, ModeState,
    PacingDirective, PlannerInput, Role, Scaffolding, SessionState, StepKind, StepStatus,
    StudentIntent, StudyPlan, ThreadStatus, TutorAction,
};

/// The teach_me mode.
pub struct TeachMe;

impl SessionMode for TeachMe {
    /// The planner is asked only when the unit has no usable authored plan.
    fn start_call(&self, start: &Start<'_>) -> Option<StartCall> {
        let unit = lesson_unit(start)?;
        if authored(unit).is_some() {
            return None;
        }
        let settings = &start.workflow.modes.teach_me;
        Some(StartCall::Plan(PlannerInput {
            unit_title: unit.title.clone(),
            unit_anchor: unit.anchor.trim().to_owned(),
            key_ideas: unit.key_ideas.clone(),
            authored_plan: None,
            default_plan: settings.default_plan.clone(),
            student_profile: start
                .goal
                .map(|g| format!("Their goal: {g}"))
                .unwrap_or_default(),
            previous_plan: Vec::new(),
            replan_reason: None,
            max_steps: study_plan::MAX_STEPS as u32,
        }))
    }

    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        let unit = lesson_unit(start)
            .ok_or_else(|| StartError("the course has no unit to teach".into()))?;
        let settings = &start.workflow.modes.teach_me;
        let planned = match start.prepared {
            Some(StartReply::Plan(Ok(reply))) => {
                let drafts: Vec<StepDraft> = reply.steps.iter().map(StepDraft::from).collect();
                match study_plan::check_drafts(&drafts, unit) {
                    Ok(()) => Some(drafts),
                    Err(problem) => {
                        tracing::warn!(unit = %unit.id, %problem, "planner reply rejected; using the default plan");
                        None
                    }
                }
            }
            _ => None,
        };
        let drafts = authored(unit)
            .or(planned)
            .unwrap_or_else(|| study_plan::default_drafts(unit, settings));
        let plan = study_plan::from_drafts(&drafts, unit, settings);
        Ok(Started {
            session: SessionState {
                mode_state: ModeState::TeachMe(plan),
                ..SessionState::default()
            },
            // The welcome names the unit taught, also when none was asked for.
            welcome: welcome(
                &Start {
                    unit: Some(unit),
                    ..*start
                },
                Mode::TeachMe,
            )?,
        })
    }

    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        read: &Interpreted,
        mut policy: PolicyOutcome,
    ) -> ModePlan {
        let Some(before) = study_plan_of(&turn.state.thread.session) else {
            return ModePlan {
                policy,
                practice: None,
                block: ModeBlock::default(),
                category: None,
                judging: None,
                reply: None,
            };
        };
        let workflow = turn.rt.workflow();
        let settings = &workflow.modes.teach_me;
        let unit = turn.rt.course().unit(&before.unit_id);
        let evidence = evidence(
            workflow,
            read.said.as_deref(),
            read.interpretation.as_ref(),
            &turn.state.thread.session.card_grades,
            current_kind(before),
            unit,
        );
        let number = turn.state.thread.session.turn_count + 1;
        let evaluated =
            study_plan::evaluate(before, evidence, before.last_pacing, settings, number);
        let after = evaluated.plan;

        let p = &mut policy.policy;
        if let Some(unit) = unit {
            p.focus_unit_id = unit.id.clone();
            p.primary_target_unit_id = unit.id.clone();
            p.scoped_unit_ids = vec![unit.id.clone()];
        }
        p.prereq_blocking_unit_id = None;
        p.exam_ready = false;
        p.exam_availability = ExamAvailability::None;
        p.exam_next_eligible_at = None;
        policy.exam.available_question_ids.clear();

        let stuck = evidence == StepEvidence::Stuck;
        // The question the student kept missing is dropped: the reply
        // answers as to a stuck student, not to one more wrong answer.
        let mut category = evaluated
            .simplified
            .then(|| settings.replan_category.clone());
        // A lesson is in front of the student: "I don't know" on it is
        // about the lesson, not the "where do I start?" of a student with
        // nothing in front of them, which the categories inviting a choice
        // of what to work on answer.
        let invites_choice = workflow
            .category(&read.category)
            .is_some_and(Category::invites_choice);
        if category.is_none() && stuck && invites_choice {
            category = Some(workflow.default_category.clone());
        }
        let closing =
            study_plan::is_complete(before) && before.extension_turns >= settings.extension_turns;
        match study_plan::current(&after).map(|i| &after.steps[i]) {
            Some(step) => {
                // An explain step's idea is put in front of the student
                // first, as a card; the policy allows cards only for a
                // student who needs one, and a new idea is such a moment.
                let (actions, card) = match step.kind {
                    StepKind::Explain if !step.progress.taught => {
                        (vec![TutorAction::ConceptCard], true)
                    }
                    // Its card is on screen already: a student stuck on it
                    // is told the idea another way, not shown it again.
                    StepKind::Explain => (vec![TutorAction::SocraticQuestion], stuck),
                    StepKind::Check | StepKind::Practice => {
                        let mut a = vec![TutorAction::DrillCard, TutorAction::SocraticQuestion];
                        if stuck {
                            a.push(TutorAction::ConceptCard);
                        }
                        (a, stuck)
                    }
                };
                p.allowed_actions = actions;
                p.stuck = card;
            }
            // The answer that completes the plan is celebrated, with what was
            // learned and a question; the extension's items come after.
            None if evaluated.completed_now => {
                p.allowed_actions = vec![TutorAction::SocraticQuestion];
                p.stuck = false;
            }
            None if closing => {
                p.allowed_actions = vec![TutorAction::SocraticQuestion];
                p.stuck = false;
                category = Some(settings.closing_category.clone());
            }
            None => {
                p.allowed_actions = vec![TutorAction::SocraticQuestion, TutorAction::DrillCard];
                p.stuck = stuck;
                if stuck {
                    p.allowed_actions.push(TutorAction::ConceptCard);
                }
            }
        }
        // A student the last reply was paced SIMPLIFY for, or whose step was
        // just made smaller, gets an easier item.
        let easier = before.last_pacing == Some(PacingDirective::Simplify) || evaluated.simplified;
        // A check's items are about what it checks; practice mixes the
        // unit's skills.
        let topic = study_plan::current(&after)
            .map(|i| &after.steps[i])
            .filter(|step| step.kind != StepKind::Practice)
            .map(|step| format!("{} {}", step.title, step.concept));
        let practice = practice_item(
            turn,
            read,
            &policy,
            &event.client_event,
            topic.as_deref(),
            easier,
        );
        ModePlan {
            policy,
            practice,
            block: ModeBlock {
                plan_complete: study_plan::is_complete(&after),
                lesson: Some(brief(&after, closing)),
                ..ModeBlock::default()
            },
            category,
            judging: None,
            reply: None,
        }
    }

    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    ) {
        let session = &outcome.thread.session;
        let Some(before) = study_plan_of(session) else {
            return;
        };
        let workflow = turn.rt.workflow();
        let settings = &workflow.modes.teach_me;
        let unit = turn.rt.course().unit(&before.unit_id);
        let evidence = evidence(
            workflow,
            plan.said.as_deref(),
            plan.interpretation.as_ref(),
            &turn.state.thread.session.card_grades,
            current_kind(before),
            unit,
        );
        let number = turn.state.thread.session.turn_count + 1;
        let evaluated =
            study_plan::evaluate(before, evidence, before.last_pacing, settings, number);
        let mut after = evaluated.plan;
        after.last_pacing = Some(plan.input.pacing);
        if study_plan::is_complete(before) {
            after.extension_turns = after.extension_turns.saturating_add(1);
        }
        if let Some(i) = study_plan::current(&after) {
            let progress = &mut after.steps[i].progress;
            match reply.action {
                TutorAction::DrillCard => progress.questions_asked += 1,
                TutorAction::ConceptCard => progress.taught = true,
                TutorAction::SocraticQuestion | TutorAction::ExamBlock => {}
            }
        }
        if evaluated.simplified {
            // Nothing is left to scaffold either: the step starts afresh.
            outcome.thread.session.pending_question = None;
            outcome.thread.session.scaffolding = Scaffolding::default();
        }
        if evaluated.completed_now {
            outcome.thread.status = ThreadStatus::Completed;
            if let Some(unit) = unit
                && let Some(text) = completion_text(turn, unit, &after)
                && let Some(last) = outcome
                    .messages
                    .iter_mut()
                    .rev()
                    .find(|m| m.role == Role::Assistant)
            {
                last.text = with_completion(&last.text, &text);
            }
        }
        outcome.thread.session.mode_state = ModeState::TeachMe(after);
    }
}

/// The unit a lesson is about: the one asked for, else the course's entry.
fn lesson_unit<'a>(start: &Start<'a>) -> Option<&'a Unit> {
    start
        .unit
        .or_else(|| start.course.unit(&start.course.entry_unit))
}

/// The unit's authored plan, when it is a usable one (validation reports
/// one that is not).
fn authored(unit: &Unit) -> Option<Vec<StepDraft>> {
    let drafts: Vec<StepDraft> = unit
        .study_plan
        .as_deref()?
        .iter()
        .map(StepDraft::from)
        .collect();
    study_plan::check_drafts(&drafts, unit)
        .ok()
        .map(|()| drafts)
}

pub(crate) fn study_plan_of(session: &SessionState) -> Option<&StudyPlan> {
    match &session.mode_state {
        ModeState::TeachMe(plan) => Some(plan),
        _ => None,
    }
}

fn current_kind(plan: &StudyPlan) -> Option<StepKind> {
    study_plan::current(plan).map(|i| plan.steps[i].kind)
}

/// What the message says about the current step, as code reads it: a
/// graded answer (in the chat, else the first drill card answered since
/// the last turn), being stuck, or taking part. Where the unit has no item
/// code can grade, taking part in a check is all there is to go on.
fn evidence(
    workflow: &Workflow,
    said: Option<&str>,
    interpretation: Option<&Interpretation>,
    card_grades: &[GradeOutcome],
    step: Option<StepKind>,
    unit: Option<&Unit>,
) -> StepEvidence {
    let graded = |outcome: GradeOutcome| match outcome {
        GradeOutcome::Correct => Some(StepEvidence::Correct),
        GradeOutcome::Wrong | GradeOutcome::Close => Some(StepEvidence::Wrong),
        GradeOutcome::Unverifiable => None,
    };
    let chat = interpretation
        .filter(|_| said.is_some())
        .and_then(|read| read.grade.as_ref())
        .and_then(|g| graded(g.result));
    let card = card_grades.iter().find_map(|o| graded(*o));
    if let Some(answer) = chat.or(card) {
        return answer;
    }
    let (Some(_), Some(read)) = (said, interpretation) else {
        return StepEvidence::Nothing;
    };
    if read.classification.intent == StudentIntent::Stuck {
        return StepEvidence::Stuck;
    }
    // A hello, an "ok" after a safety reply or how they feel about maths
    // is not taking part in the lesson: the step waits for them.
    if workflow
        .category(&read.classification.category)
        .is_some_and(Category::invites_choice)
    {
        return StepEvidence::Nothing;
    }
    match read.classification.intent {
        StudentIntent::OffTopic => StepEvidence::Nothing,
        // A question about an idea is answered on the step it is about:
        // the next idea's card would leave it unanswered.
        StudentIntent::Question if step == Some(StepKind::Explain) => StepEvidence::Nothing,
        StudentIntent::Answer
            if step.is_some_and(|k| k != StepKind::Explain)
                && unit.is_some_and(|u| u.blueprints.is_empty()) =>
        {
            StepEvidence::Correct
        }
        _ => StepEvidence::Engaged,
    }
}

/// Where the lesson is, for the prompt's mode block.
fn brief(plan: &StudyPlan, closing: bool) -> LessonBrief {
    let completed = plan
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Completed)
        .count() as u32;
    LessonBrief {
        step: study_plan::current(plan).map(|i| {
            let s = &plan.steps[i];
            LessonStep {
                number: i as u32 + 1,
                title: s.title.clone(),
                kind: s.kind,
                concept: s.concept.clone(),
                success_criteria: s.success_criteria.clone(),
            }
        }),
        steps_total: plan.steps.len() as u32,
        steps_completed: completed,
        complete: study_plan::is_complete(plan),
        closing,
    }
}

/// The reply with the completion message added: before its closing
/// question, if it ends with one, so the question stays the last word.
pub(super) fn with_completion(reply: &str, completion: &str) -> String {
    let reply = reply.trim_end();
    if reply.ends_with('?') {
        let start = reply
            .trim_end_matches('?')
            .rfind(['.', '!', '?'])
            .map_or(0, |i| i + 1);
        let (before, question) = reply.split_at(start);
        let before = before.trim_end();
        if before.is_empty() {
            return format!("{completion} {}", question.trim());
        }
        return format!("{before} {completion} {}", question.trim());
    }
    format!("{reply} {completion}")
}

/// The message that ends the plan: what was learned, from the workflow's
/// completion template, or when steps stayed blocked, what needs another
/// look, from its review template.
fn completion_text(turn: &ModeTurn<'_>, unit: &Unit, plan: &StudyPlan) -> Option<String> {
    let settings: &TeachMeMode = &turn.rt.workflow().modes.teach_me;
    let concepts = |status: StepStatus| -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for s in plan.steps.iter().filter(|s| s.status == status) {
            if !seen.contains(&s.concept) {
                seen.push(s.concept.clone());
            }
        }
        seen
    };
    let blocked = concepts(StepStatus::Blocked);
    let name = if blocked.is_empty() {
        &settings.completion_prompt
    } else {
        &settings.review_prompt
    };
    let template = turn.rt.bundle.prompts.get(name)?;
    let learned = concepts(StepStatus::Completed);
    let to_review = blocked.join("; ");
    let values = BTreeMap::from([
        ("unit_title", unit.title.clone()),
        ("learned", learned.join("; ")),
        ("to_review", capitalised(&to_review)),
    ]);
    template.render(&values).ok().map(|t| t.trim().to_owned())
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::with_completion;

    #[test]
    fn the_completion_comes_before_a_closing_question() {
        assert_eq!(
            with_completion("Spot on! How did you work it out?", "Lesson done."),
            "Spot on! Lesson done. How did you work it out?"
        );
        assert_eq!(
            with_completion("Well done.", "Lesson done."),
            "Well done. Lesson done."
        );
        assert_eq!(with_completion("Why?", "Lesson done."), "Lesson done. Why?");
    }
}
