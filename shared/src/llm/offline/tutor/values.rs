//! The placeholder values a turn's phrases are filled with: the key idea
//! and the passage that answer the student, the worked example, the
//! pending question and its help, the student's own problem worked out.

use std::collections::BTreeMap;

use super::asking::{asked, overlaps_question, reasks};
use super::phrases::Picker;
use super::quoting::{as_sentence, content_words, first_sentences, without_repeats};
use super::turn::{anchor, said_before};
use crate::content::tutor_text::list_in_words;
use crate::engine::interpret::student_math;
use crate::engine::reply::answer_guard;
use crate::llm::offline::passage;
use crate::model::{ContentChunk, Role, TutorTurnInput, UnitAnchor};

/// The placeholder values this turn can fill.
pub(super) struct Values {
    pub(super) map: BTreeMap<&'static str, String>,
}

impl Values {
    pub(super) fn new(
        input: &TutorTurnInput,
        unit: &UnitAnchor,
        pick: &Picker,
        question: Option<&passage::Asked>,
    ) -> Self {
        let mut map = BTreeMap::new();
        map.insert("unit_title", unit.title.clone());
        if let Some(name) = &input.personalization.student_name {
            map.insert("student_name", name.clone());
        }
        let ideas: Vec<&String> = unit
            .key_ideas
            .iter()
            .filter(|i| !i.trim().is_empty())
            .collect();
        let answer = question.and_then(|q| answering(input, unit, &ideas, q));
        let (key_idea, explained) = match answer {
            Some(answer) => answer,
            None => {
                let key_idea = if ideas.is_empty() {
                    first_sentences(&unit.anchor_text, 1)
                } else {
                    let asked = input.student.said().unwrap_or_default();
                    closest_idea(&ideas, &asked)
                        .unwrap_or_else(|| ideas[pick.index("key_idea", ideas.len())])
                        .trim()
                        .to_owned()
                };
                // In a direct answer the passage follows the key idea: the
                // passage closest to it, without a sentence saying the same again.
                let explained = if input.clarify.is_some() {
                    without_repeats(&explanation_near(input, unit, &key_idea), &key_idea)
                } else {
                    explanation(input, unit)
                };
                (key_idea, explained)
            }
        };
        map.insert("key_idea", key_idea);
        map.insert("explanation", explained);
        if let Some(example) = unit
            .worked_example
            .as_ref()
            .filter(|e| !overlaps_question(input, &e.problem))
            .filter(|e| question.is_none_or(|q| passage::example_fits(q, e)))
            // An answer shows one instance: the lesson's, when it works
            // numbers itself, else the worked example.
            .filter(|_| {
                question.is_none() || !map.get("explanation").is_some_and(|e| works_numbers(e))
            })
        {
            map.insert("example_problem", example.problem.trim().to_owned());
            map.insert(
                "example_steps",
                example
                    .steps
                    .iter()
                    .map(|s| as_sentence(s))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            map.insert("example_answer", example.answer.trim().to_owned());
        } else if let Some(asked) = question
            && !map.get("explanation").is_some_and(|e| works_numbers(e))
        {
            // The worked example does another operation than the one
            // asked about: the lesson's own instance of it is shown instead.
            let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
            let about = map
                .get("key_idea")
                .map_or_else(|| asked.clone(), |idea| asked.and(idea));
            // Not a sentence the idea or its explanation already said.
            let said = ["key_idea", "explanation"]
                .iter()
                .filter_map(|k| map.get(k).map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            if let Some((problem, working)) = passage::instance(asked, &about, &chunks)
                .filter(|(problem, _)| !passage::repeats(problem, &said))
            {
                map.insert("example_problem", problem);
                map.insert("example_steps", working);
            }
        }
        if let Some(question) = &input.question {
            map.insert("question", asked(&question.text));
            if let Some(last) = question.previous_answers.last() {
                map.insert("previous_answer", last.trim().to_owned());
            }
            let help = &question.help;
            if !help.steps.is_empty() {
                let steps: Vec<String> = help.steps.iter().map(|s| as_sentence(s)).collect();
                map.insert("steps", steps.join(" "));
            }
            let item_help = [
                ("next_step", &help.next_step),
                ("representation", &help.representation),
                ("mistake", &help.mistake),
            ];
            // Help just given is not given again word for word.
            let last_said = input
                .history
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(|m| m.text.as_str())
                .unwrap_or_default();
            for (name, text) in item_help {
                if let Some(text) = text
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty() && !last_said.contains(t))
                {
                    // Another view of the question ends by asking it.
                    let text = if name == "representation" && !text.ends_with('?') {
                        format!("{} What do you get?", as_sentence(text))
                    } else {
                        text.to_owned()
                    };
                    map.insert(name, text);
                }
            }
        }
        map.insert("tier", input.policy.desired_exam_tier.as_str().to_owned());
        if let Some(item) = &input.context.practice_item {
            map.insert("drill_prompt", item.prompt.trim().to_owned());
        }
        if let Some(clarify) = &input.clarify {
            if !clarify.concepts_discussed.is_empty() {
                map.insert("concepts", list_in_words(&clarify.concepts_discussed));
            }
            let asked = input.student.said().unwrap_or_default();
            if clarify.complete && asked.contains('?') {
                let idea = map.get("key_idea").cloned().unwrap_or_default();
                map.insert("short_answer", idea);
            }
        }
        let own = input.category.own_problem.trim();
        if !own.is_empty()
            && let Some(steps) =
                student_math::student_problem(own).and_then(|p| student_math::solution_steps(&p))
        {
            map.insert("own_problem", own.to_owned());
            map.insert("solution_steps", steps.join(" "));
        }
        Values { map }
    }

    /// Readies this turn's values to put the pending problem another way,
    /// if the item has nothing new to say: its next step, if any, only asks
    /// the problem again ("Now put it together: what is (-3) × (-5)?"), and
    /// it has no other view of it left. The key idea is the one the problem
    /// is about, not one at random; the idea, the passage after it and the
    /// worked example each come only if they were not said before in this
    /// conversation, and the example only if it does the problem's
    /// operation (else the lesson's own instance of it). False, with the
    /// values untouched, when the item still has something to offer.
    pub(super) fn another_way(&mut self, input: &TutorTurnInput, unit: &UnitAnchor) -> bool {
        let Some(question) = &input.question else {
            return false;
        };
        let help = &question.help;
        let new_step = help
            .next_step
            .as_deref()
            .is_some_and(|step| !reasks(&question.text, step));
        if new_step || help.representation.is_some() {
            return false;
        }
        let map = &mut self.map;
        map.remove("next_step");
        let problem = passage::Asked::new(&question.text);
        let all: Vec<&String> = unit
            .key_ideas
            .iter()
            .filter(|i| !i.trim().is_empty())
            .collect();
        let unsaid: Vec<&String> = all
            .iter()
            .copied()
            .filter(|i| !said_before(input, i))
            .collect();
        // Every idea said already: the one the problem is about, once more.
        let ideas = if unsaid.is_empty() { all } else { unsaid };
        let idea = passage::key_idea(&problem, &ideas)
            .map(|(idea, _)| idea)
            .or_else(|| ideas.first().copied())
            .map(|idea| idea.trim().to_owned());
        let explained = idea
            .as_deref()
            .map(|idea| without_repeats(&explanation_near(input, unit, idea), idea))
            .map(|e| {
                passage::sentences(&e)
                    .into_iter()
                    .filter(|s| !said_before(input, s))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        match idea {
            Some(idea) => map.insert("key_idea", idea),
            None => map.remove("key_idea"),
        };
        // An empty passage would leave "Think of it like this:" hanging.
        if explained.is_empty() {
            map.remove("explanation");
        } else {
            map.insert("explanation", explained);
        }
        for key in ["example_problem", "example_steps", "example_answer"] {
            map.remove(key);
        }
        let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
        let example = unit
            .worked_example
            .as_ref()
            .filter(|e| !overlaps_question(input, &e.problem))
            .filter(|e| passage::example_fits(&problem, e))
            .map(|e| {
                let steps: Vec<String> = e.steps.iter().map(|s| as_sentence(s)).collect();
                (e.problem.trim().to_owned(), steps.join(" "))
            })
            .or_else(|| passage::instance(&problem, &problem, &chunks))
            .filter(|(problem, _)| !said_before(input, problem));
        if let Some((problem, steps)) = example {
            map.insert("example_problem", problem);
            map.insert("example_steps", steps);
        }
        true
    }

    /// For the prerequisite phrase: the unit the student wanted and the one
    /// they need first.
    pub(super) fn prerequisite(&self, input: &TutorTurnInput) -> BTreeMap<&'static str, String> {
        let mut map = BTreeMap::new();
        if let Some(blocker) = input
            .policy
            .prereq_blocking_unit_id
            .as_deref()
            .and_then(|b| anchor(input, b))
        {
            map.insert("prereq_title", blocker.title.clone());
        }
        if let Some(wanted) = anchor(input, &input.policy.primary_target_unit_id) {
            map.insert("unit_title", wanted.title.clone());
        }
        map
    }
}

/// The key idea and explanation that answer a question, from what in the
/// unit shares most with it: the best key idea followed by the lesson
/// sentences that answer it, or those sentences alone when no key idea
/// answers as well. `None` when nothing in the unit is about the question.
fn answering(
    input: &TutorTurnInput,
    unit: &UnitAnchor,
    ideas: &[&String],
    asked: &passage::Asked,
) -> Option<(String, String)> {
    let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
    let idea = passage::key_idea(asked, ideas);
    let lesson = passage::lesson_sentences(asked, &chunks);
    match (idea, lesson) {
        // The idea leads, and the lesson sentences that go with it and the
        // question explain it.
        (Some((idea, idea_score)), Some((_, lesson_score))) if lesson_score <= idea_score => {
            let idea = idea.trim().to_owned();
            let explained = passage::lesson_sentences(&asked.and(&idea), &chunks)
                .map(|(lesson, _)| first_sentences(&without_repeats(&lesson, &idea), 2))
                .unwrap_or_default();
            Some((idea, explained))
        }
        (_, Some((lesson, _))) => Some((first_sentences(&lesson, 2), String::new())),
        (Some((idea, _)), None) => Some((idea.trim().to_owned(), String::new())),
        // Nothing shares a word with the question, which named the unit
        // some other way ("what's BODMAS?"): the unit's first idea, which
        // says what it is about, and the lesson's opening.
        (None, None) => {
            let idea = ideas.first()?.trim().to_owned();
            let explained = chunks
                .first()
                .map(|c| first_sentences(&without_repeats(&c.text, &idea), 2))
                .unwrap_or_default();
            Some((idea, explained))
        }
    }
}

/// Whether a passage shows numbers at work (an instance of its idea).
fn works_numbers(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
}

/// The key idea that shares most words with what the student asked (the
/// first listed among equals; a "why" question prefers an idea that gives
/// a reason), or none when no idea shares a word with it.
fn closest_idea<'a>(ideas: &[&'a String], asked: &str) -> Option<&'a String> {
    let content = |text: &str| -> Vec<String> {
        text.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(|w| w.strip_suffix('s').unwrap_or(w).to_owned())
            .collect()
    };
    let wanted = content(asked);
    let opening = asked.trim_start().to_lowercase();
    let why = opening.starts_with("why");
    // "What is a percentage?" asks what the word means.
    let what = opening.starts_with("what is")
        || opening.starts_with("what's")
        || opening.starts_with("whats")
        || opening.starts_with("what are")
        || opening.starts_with("what does");
    let mut best: Option<(usize, &String)> = None;
    for idea in ideas {
        let words = content(idea);
        let mut score = wanted.iter().filter(|w| words.contains(w)).count() * 2;
        if score > 0 && why && (idea.contains(" so ") || idea.contains("because")) {
            score += 3;
        }
        if what && idea.contains(" means ") {
            score += 3;
        }
        if score > 0 && best.is_none_or(|(top, _)| score > top) {
            best = Some((score, idea));
        }
    }
    best.map(|(_, idea)| idea)
}

/// The opening of the best-ranked lesson passage about `unit` (a worked
/// example's opening would stop short of its answer), unless it works the
/// very problem the student is on or has a hidden answer in it (it would
/// read broken); else the unit's anchor.
fn explanation(input: &TutorTurnInput, unit: &UnitAnchor) -> String {
    input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit.unit_id && !c.worked_example)
        .map(|c| first_sentences(&c.text, 2))
        .find(|text| quotable(input, text))
        .unwrap_or_else(|| first_sentences(&unit.anchor_text, 2))
}

/// A worked example of the lesson not said before, whole: for a student
/// who has seen the unit's own example and asks for another.
pub(super) fn another_example(input: &TutorTurnInput, unit_id: &str) -> Option<String> {
    lesson_chunks(input, unit_id)
        .into_iter()
        .filter(|c| c.worked_example && quotable(input, &c.text))
        .map(|c| c.text.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|text| !said_before(input, &first_sentences(text, 1)))
}

/// Whether a passage may be quoted to the student: it says something,
/// does not work the pending problem and hides no answer.
fn quotable(input: &TutorTurnInput, text: &str) -> bool {
    !text.is_empty() && !overlaps_question(input, text) && !text.contains(answer_guard::MASK)
}

/// The opening of the retrieved lesson passage about `unit` that shares
/// most words with `idea` (the best-ranked among equals); else the anchor.
fn explanation_near(input: &TutorTurnInput, unit: &UnitAnchor, idea: &str) -> String {
    let topic = content_words(idea);
    let mut best: Option<(usize, String)> = None;
    for chunk in input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit.unit_id && !c.worked_example)
    {
        let text = first_sentences(&chunk.text, 2);
        if !quotable(input, &text) {
            continue;
        }
        let shared = content_words(&text).intersection(&topic).count();
        if best.as_ref().is_none_or(|(top, _)| shared > *top) {
            best = Some((shared, text));
        }
    }
    best.map_or_else(|| first_sentences(&unit.anchor_text, 2), |(_, t)| t)
}

/// The lesson chunks of `unit_id` that can be quoted without giving the
/// pending question away.
fn lesson_chunks<'i>(input: &'i TutorTurnInput, unit_id: &str) -> Vec<&'i ContentChunk> {
    input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit_id && !overlaps_question(input, &c.text))
        .collect()
}
