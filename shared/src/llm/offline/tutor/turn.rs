//! What the turn's input says about the reply to give: the unit it is
//! about, whether the student is on a problem or an idea, what they asked
//! for, and what the tutor said before.

use crate::content::tutor_text::FollowUp;
use crate::content::workflow::{BeyondCourse, Workflow};
use crate::model::{ExamCandidate, Role, StepKind, TutorTurnInput, UnitAnchor, reads_as_offer};

/// Whether the student is stuck on an idea rather than a problem: on a
/// lesson's explain step, or with nothing pending that has steps of its
/// own (a question like "Does that make sense?").
pub(super) fn explaining(input: &TutorTurnInput) -> bool {
    let on_idea = input
        .lesson
        .as_ref()
        .and_then(|l| l.step.as_ref())
        .is_some_and(|s| s.kind == StepKind::Explain);
    !has_item_help(input) && (on_idea || !on_a_problem(input))
}

/// Whether the pending question is a problem with steps of its own.
pub(super) fn on_a_problem(input: &TutorTurnInput) -> bool {
    input
        .question
        .as_ref()
        .is_some_and(|q| !q.help.steps.is_empty())
}

/// The pending question when it is an offer ("Shall we look at Decimals,
/// the nearest thing to it that we cover?"): asked again as it stands, not
/// as a problem to get back to.
pub(super) fn pending_offer(input: &TutorTurnInput) -> Option<&str> {
    let question = input.question.as_ref()?.text.trim();
    reads_as_offer(question).then_some(question)
}

/// Whether the pending item offers a step or another view of itself.
pub(super) fn has_item_help(input: &TutorTurnInput) -> bool {
    input
        .question
        .as_ref()
        .is_some_and(|q| q.help.next_step.is_some() || q.help.representation.is_some())
}

pub(super) fn anchor<'a>(input: &'a TutorTurnInput, unit_id: &str) -> Option<&'a UnitAnchor> {
    input
        .context
        .unit_anchors
        .iter()
        .find(|a| a.unit_id == unit_id)
}

fn in_scope(input: &TutorTurnInput, unit_id: &str) -> bool {
    input.policy.scoped_unit_ids.iter().any(|u| u == unit_id)
}

/// The unit a drill on the server's practice item targets.
pub(super) fn practice_target(input: &TutorTurnInput) -> Option<&str> {
    let item = input.context.practice_item.as_ref()?;
    (in_scope(input, &item.unit_id) && anchor(input, &item.unit_id).is_some())
        .then_some(item.unit_id.as_str())
}

/// The first candidate at the desired tier for the focus unit: exam
/// candidates belong to the focus, and an exam block targets it.
pub(super) fn exam_choice(input: &TutorTurnInput) -> Option<(&ExamCandidate, &str)> {
    let focus = input.policy.focus_unit_id.as_str();
    if !in_scope(input, focus) || anchor(input, focus).is_none() {
        return None;
    }
    input
        .context
        .exam_candidates
        .iter()
        .find(|c| {
            c.difficulty_tier == input.policy.desired_exam_tier
                && c.unit_ids.iter().any(|u| u == focus)
        })
        .map(|c| (c, focus))
}

/// The unit a reply is about: the blocking prerequisite, else the primary
/// target, else the focus, else any scoped unit the context describes.
/// Replies about the pending question stay on its unit.
pub(super) fn target_unit<'a>(input: &'a TutorTurnInput, follow_up: FollowUp) -> Option<&'a str> {
    let policy = &input.policy;
    let usable = |u: &&'a str| in_scope(input, u) && anchor(input, u).is_some();
    // A question that names another unit is answered about that unit
    // (the policy's target), not about the question being worked on.
    let names_a_unit = input
        .reading
        .mapped_units
        .first()
        .is_some_and(|m| m.unit_id == policy.primary_target_unit_id);
    let about_question = match follow_up {
        FollowUp::Retry | FollowUp::Scaffold | FollowUp::TeachBack => true,
        FollowUp::Clarify => !names_a_unit,
        _ => false,
    };
    let question_unit = input
        .question
        .as_ref()
        .filter(|_| about_question)
        .map(|q| q.unit_id.as_str());
    question_unit
        .into_iter()
        .chain(policy.prereq_blocking_unit_id.as_deref())
        .chain([
            policy.primary_target_unit_id.as_str(),
            policy.focus_unit_id.as_str(),
        ])
        .chain(policy.scoped_unit_ids.iter().map(String::as_str))
        .find(usable)
}

/// The topic beyond the course the student asked about just before this
/// message, when the tutor's last reply answered it: the student's last
/// message names it (the longest phrase of its `asks`, on whole words)
/// and nothing with steps of its own has been set since.
pub(super) fn beyond_just_answered<'a>(
    workflow: &'a Workflow,
    input: &TutorTurnInput,
) -> Option<&'a BeyondCourse> {
    if on_a_problem(input) || has_item_help(input) {
        return None;
    }
    let mut said = input.history.iter().rev();
    // The last reply is the tutor's, to the student's message before it.
    said.next().filter(|m| m.role == Role::Assistant)?;
    let asked = said.next().filter(|m| m.role == Role::Student)?;
    let asked = format!(
        " {} ",
        asked
            .text
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    );
    workflow
        .beyond_course
        .iter()
        .filter_map(|b| {
            b.asks
                .iter()
                .filter(|a| asked.contains(&format!(" {} ", a.to_lowercase().trim())))
                .map(|a| a.len())
                .max()
                .map(|len| (len, b))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, b)| b)
}

/// The prompt of a category that asks for what was said to be put
/// another way: what it tells a model to do, the offline tutor does too.
const ANOTHER_WAY_PROMPT: &str = "category_rephrase";

/// "Can you give me an example?", "example pls": a request for one, not a
/// question that says "for example".
pub(super) fn asks_for_an_example(said: &str) -> bool {
    let said = said.to_lowercase();
    let named = ["example", "exmaple", "exampel"]
        .iter()
        .any(|w| said.contains(w));
    named && !said.contains("for example") && !said.contains("for exmaple")
}

/// Whether the student asks for it to be put another way.
pub(super) fn asks_another_way(workflow: &Workflow, input: &TutorTurnInput) -> bool {
    workflow
        .category(&input.category.id)
        .is_some_and(|c| c.prompt == ANOTHER_WAY_PROMPT)
}

/// Whether the tutor said `text` anywhere in the conversation kept.
pub(super) fn said_before(input: &TutorTurnInput, text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && input
            .history
            .iter()
            .any(|m| m.role == Role::Assistant && m.text.contains(text))
}

/// Whether the tutor's last message contains `text`.
pub(super) fn said_last(input: &TutorTurnInput, text: &str) -> bool {
    input
        .history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .is_some_and(|m| !text.trim().is_empty() && m.text.contains(text.trim()))
}
