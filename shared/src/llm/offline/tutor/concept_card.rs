//! The concept card: the unit's key ideas, the lesson step's first, and
//! its worked example when it fits the policy's limits and the pace.

use super::asking::overlaps_question;
use super::quoting::content_words;
use crate::model::{
    LlmConceptCard, LlmWorkedExample, MAX_REPLY_LIST, PacingDirective, StepKind, TutorTurnInput,
    UnitAnchor,
};

/// The unit's key ideas, those sharing the most words with the lesson
/// step being taught first: a lesson's card leads with its step's idea.
fn lesson_order<'a>(input: &TutorTurnInput, ideas: &'a [String]) -> Vec<&'a str> {
    let ideas: Vec<&str> = ideas
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty())
        .collect();
    let Some(step) = input.lesson.as_ref().and_then(|l| l.step.as_ref()) else {
        return ideas;
    };
    // The concept says what the step is about; its title weighs less
    // ("One small idea: ..." shares words by chance).
    let concept = content_words(&step.concept);
    let title = content_words(&step.title);
    let mut scored: Vec<(usize, &str)> = ideas
        .iter()
        .map(|i| {
            let words = content_words(i);
            let score =
                2 * words.intersection(&concept).count() + words.intersection(&title).count();
            (score, *i)
        })
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    scored.into_iter().map(|(_, i)| i).collect()
}

/// How much a lesson's concept card holds, from the pacing: a student the
/// pacing SIMPLIFYs gets a smaller step (the step's one idea, with the
/// worked example to lean on); one racing ahead (ACCELERATE) the ideas
/// without the example they do not need. Outside a lesson, the policy's
/// limits alone.
fn card_size(input: &TutorTurnInput, max_ideas: u32) -> (usize, bool) {
    let max_ideas = usize::try_from(max_ideas.min(3)).unwrap_or(3);
    let in_lesson = input.lesson.as_ref().is_some_and(|l| l.step.is_some());
    match input.pacing {
        PacingDirective::Simplify if in_lesson => (1, true),
        _ if is_later_idea(input) => (1, false),
        PacingDirective::Accelerate if in_lesson => (max_ideas, false),
        _ => (max_ideas, true),
    }
}

/// Whether the lesson's step is an idea after its first: the unit's card,
/// with every idea and the worked example, was shown for the first one, so
/// this card holds the step's own idea.
pub(super) fn is_later_idea(input: &TutorTurnInput) -> bool {
    input
        .lesson
        .as_ref()
        .and_then(|l| l.step.as_ref())
        .is_some_and(|s| s.kind == StepKind::Explain && s.number > 1)
}

/// Key ideas, then the worked example if it still fits, within the
/// policy's word, idea and example limits and the lesson's pace.
pub(super) fn concept_card(
    input: &TutorTurnInput,
    unit: &UnitAnchor,
    max_ideas: u32,
) -> LlmConceptCard {
    let limits = &input.policy.constraints;
    let max_words = usize::try_from(limits.max_concept_words).unwrap_or(usize::MAX);
    let (max_ideas, with_example) = card_size(input, max_ideas);
    let mut key_ideas = Vec::new();
    let mut used = 0;
    for idea in lesson_order(input, &unit.key_ideas) {
        if key_ideas.len() == max_ideas || used + words(idea) > max_words {
            break;
        }
        used += words(idea);
        key_ideas.push(idea.to_owned());
    }
    let worked_example = unit
        .worked_example
        .as_ref()
        .filter(|_| with_example && limits.max_worked_examples > 0)
        .filter(|e| !overlaps_question(input, &e.problem))
        .filter(|e| {
            let example_words = words(&e.problem)
                + e.steps
                    .iter()
                    .take(MAX_REPLY_LIST)
                    .map(|s| words(s))
                    .sum::<usize>()
                + words(&e.answer);
            used + example_words <= max_words
        })
        .map(|e| LlmWorkedExample {
            problem_latex: e.problem.clone(),
            final_answer_latex: e.answer.clone(),
            steps_latex: Some(e.steps.iter().take(MAX_REPLY_LIST).cloned().collect()),
        });
    LlmConceptCard {
        key_ideas,
        worked_example,
    }
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}
