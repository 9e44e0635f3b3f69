//! The help a pending item offers this turn, built from its own solution:
//! the next step the student has not shown, all the steps for an
//! explanation, the question shown another way, and what is wrong with an
//! answer that is a known mistake. The offline tutor says these; an LLM
//! gets them in its context. Unit-level ideas are only what is left when
//! the item has nothing more to offer.
//!
//! Each piece of help given (a step or another way to see the question)
//! is counted on the question (`hints_used`), so the next one moves down
//! the ladder instead of repeating it: steps not yet shown, then the
//! representations. Nothing here ever holds the answer.

use crate::content::course::MistakeTag;
use crate::content::workflow::GradingSettings;
use crate::engine::grading::{Grade, SlipTag};
use crate::engine::practice::solution::{self, HintStep, Solution};
use crate::engine::reply::answer_guard::PendingAnswer;
use crate::model::{GradeOutcome, ItemHelp, PendingQuestion, QuestionPhase};

/// What the tutor may use this turn, and what the step it offers works
/// out to (kept server-side, to recognise an answer to that step).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnHelp {
    pub help: ItemHelp,
    pub step_expects: Option<String>,
    /// The question's `hints_used` once this help is given: rungs the
    /// student did on their own are passed, not offered again.
    pub hints_used_after: u32,
}

/// What an equal but unsimplified answer (6/9, 6:4) is missing, when the
/// question asks for the simplest form.
const NOT_YET_SIMPLEST: &str = "That's equal to the answer, but it isn't in its simplest form yet: is there a number that still divides into both parts?";

/// The help `question` offers after its `hints_used` pieces of help so
/// far. `solution` is the item's, when it has one; `said` is this turn's
/// message and `grade` its grade, whose known mistake is explained in the
/// unit's words (`unit_tags`).
pub fn for_question(
    solution: Option<&Solution>,
    question: &PendingQuestion,
    said: Option<&str>,
    grade: Option<&Grade>,
    unit_tags: &[MistakeTag],
    settings: &GradingSettings,
) -> TurnHelp {
    let near = grade.filter(|g| matches!(g.result, GradeOutcome::Wrong | GradeOutcome::Close));
    let mistake = near
        .and_then(|g| g.mistake.as_ref())
        .and_then(|m| solution::explanation_of(m, unit_tags))
        .map(|e| e.explain)
        .or_else(|| {
            near.filter(|g| g.tags.contains(&SlipTag::Unsimplified))
                .map(|_| NOT_YET_SIMPLEST.to_owned())
        });
    let Some(solution) = solution else {
        return TurnHelp {
            help: ItemHelp {
                mistake,
                ..ItemHelp::default()
            },
            step_expects: None,
            hints_used_after: question.hints_used.saturating_add(1),
        };
    };
    // A step whose result happens to be the answer is only shown open.
    let guard = question
        .expected
        .as_ref()
        .and_then(|e| PendingAnswer::for_expected("pending item", &question.text, e));
    let leaks = |text: &str| guard.as_ref().is_some_and(|g| g.found_in(text));
    let steps = solution
        .open_steps()
        .map(|s| {
            if leaks(&s.tell) {
                s.ask.clone()
            } else {
                s.tell.clone()
            }
        })
        .filter(|s| !leaks(s))
        .collect();
    // The ladder: the hint steps, then the step that works out the answer,
    // asked open, each followed by its smaller question where it has one.
    // Each piece of help given moves one rung down; a rung whose step the
    // student has already done on their own is passed.
    let mut steps_in_order: Vec<_> = solution.hints();
    if let Some(last) = solution.open_steps().last()
        && !steps_in_order.contains(&last)
    {
        steps_in_order.push(last);
    }
    let ladder: Vec<(&HintStep, &str)> = steps_in_order
        .into_iter()
        .flat_map(|h| {
            std::iter::once((h, h.ask.as_str())).chain(h.smaller.as_deref().map(|s| (h, s)))
        })
        .collect();
    // A step's result given now counts as much as one given before.
    let answers: Vec<String> = question
        .previous_answers
        .iter()
        .cloned()
        .chain(said.map(str::to_owned))
        .collect();
    let done = solution.done(&answers, settings);
    let given = question.hints_used as usize;
    let step = ladder
        .iter()
        .enumerate()
        .skip(given)
        .find(|(_, (h, ask))| !done.contains(h) && !leaks(ask));
    let hints_used_after = step.map_or(given + 1, |(rung, _)| rung + 1);
    let step = step.map(|(_, rung)| *rung);
    let representations: Vec<&str> = solution
        .representations()
        .iter()
        .map(|r| r.text.as_str())
        .filter(|t| !leaks(t))
        .collect();
    // The other ways to see the question come once the steps are used up;
    // a change of strategy may reach for the next one before then.
    let representation = representations
        .get(given.saturating_sub(ladder.len()))
        .filter(|_| step.is_none() || question.phase == QuestionPhase::StrategyChange)
        .map(|t| (*t).to_owned());
    TurnHelp {
        help: ItemHelp {
            steps,
            next_step: step.map(|(_, ask)| ask.to_owned()),
            representation,
            mistake,
        },
        step_expects: step.and_then(|(h, _)| h.expects.clone()),
        hints_used_after: u32::try_from(hints_used_after).unwrap_or(u32::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::blueprint::Blueprint;
    use crate::engine::practice::drill_grade;
    use crate::engine::practice::generate::{Item, generate};

    fn item(blueprint: &str, seed: u64) -> Item {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../workflows/blueprints")
            .join(format!("{blueprint}.yaml"));
        let yaml = std::fs::read_to_string(&path).expect("the blueprint file");
        let blueprint: Blueprint = serde_yaml::from_str(&yaml).expect("a blueprint");
        generate(&blueprint, 0.5, seed).expect("an item")
    }

    fn pending(item: &Item) -> PendingQuestion {
        PendingQuestion {
            text: item.stem.clone(),
            expected: Some(drill_grade::expected_answer(item)),
            unit_id: String::new(),
            concept: String::new(),
            wrong_attempts: 0,
            previous_answers: Vec::new(),
            hints_used: 0,
            phase: QuestionPhase::Asked,
            asked_at: chrono::DateTime::UNIX_EPOCH,
            drill_token: None,
        }
    }

    #[test]
    fn help_moves_down_the_ladder_and_never_states_the_answer() {
        let settings = GradingSettings::default();
        for blueprint in ["sub-borrow", "eq-two-step", "frac-add-unlike", "add-2digit"] {
            for seed in 0..20 {
                let item = item(blueprint, seed);
                let solution = Solution::of_item(&item);
                let mut question = pending(&item);
                let guard = PendingAnswer::for_expected(
                    "item",
                    &question.text,
                    question.expected.as_ref().unwrap(),
                )
                .unwrap();
                let mut seen = Vec::new();
                for used in 0..4 {
                    question.hints_used = used;
                    let turn = for_question(Some(&solution), &question, None, None, &[], &settings);
                    let help = turn.help;
                    assert!(!help.steps.is_empty(), "{blueprint} {seed}: no steps");
                    for text in help.steps.iter().chain(&help.next_step) {
                        assert!(!guard.found_in(text), "{blueprint} {seed}: {text}");
                    }
                    let offered = help.next_step.clone().or(help.representation.clone());
                    if let Some(offered) = offered {
                        assert!(
                            !seen.contains(&offered),
                            "{blueprint} {seed}: `{offered}` offered twice"
                        );
                        seen.push(offered);
                    }
                }
                assert!(!seen.is_empty(), "{blueprint} {seed}: nothing to offer");
            }
        }
    }

    #[test]
    fn a_step_the_student_has_done_is_skipped() {
        let settings = GradingSettings::default();
        let item = item("eq-two-step", 3);
        let solution = Solution::of_item(&item);
        let mut question = pending(&item);
        let first = for_question(Some(&solution), &question, None, None, &[], &settings);
        let expects = first.step_expects.expect("the first step has a value");
        question.previous_answers.push(expects);
        let next = for_question(Some(&solution), &question, None, None, &[], &settings);
        assert_ne!(next.help.next_step, first.help.next_step);
    }

    #[test]
    fn a_step_done_after_it_was_offered_leads_to_the_step_after_it() {
        let settings = GradingSettings::default();
        for seed in 0..10 {
            let item = item("eq-two-step", seed);
            let solution = Solution::of_item(&item);
            let mut question = pending(&item);
            let first = for_question(Some(&solution), &question, None, None, &[], &settings);
            question.hints_used = 1;
            question
                .previous_answers
                .push(first.step_expects.clone().unwrap());
            let next = for_question(Some(&solution), &question, None, None, &[], &settings);
            let last = solution.open_steps().last().unwrap();
            assert_eq!(next.help.next_step.as_ref(), Some(&last.ask), "seed {seed}");
        }
    }

    #[test]
    fn an_own_problem_is_helped_step_by_step_without_its_answer() {
        use crate::engine::interpret::student_math::{own_solution, student_problem};
        let settings = GradingSettings::default();
        for message in [
            "2x + 3 = 11",
            "3x - 5 = 10",
            "1/2 + 1/3",
            "47 + 38",
            "72 - 38",
            "3/4 of 20",
            "20% of 50",
            "12 x 3",
            "0.75 as a fraction",
            "40% as a fraction",
            "if 3 pencils cost 45p how much do 7 cost",
        ] {
            let problem = student_problem(message).unwrap();
            let solution = own_solution(&problem);
            let mut question = PendingQuestion {
                text: problem.text.clone(),
                expected: Some(crate::model::ExpectedAnswer {
                    kind: crate::model::AnswerKind::Number,
                    value: problem.answer.clone(),
                    unit: None,
                    options: Vec::new(),
                    mistakes: Vec::new(),
                }),
                hints_used: 1,
                ..pending(&item("eq-two-step", 0))
            };
            let guard = PendingAnswer::new("own problem", &problem.text, &problem.answer).unwrap();
            // The first step was offered with the problem; after it come its
            // arithmetic, the middle step and its arithmetic where there is
            // one, the finishing step, and the finishing arithmetic.
            let middle = problem.middle_step.as_ref();
            let expected_rungs: Vec<&String> = [
                problem.smaller.first.as_ref(),
                middle.map(|m| &m.ask),
                middle.and_then(|m| m.smaller.as_ref()),
                Some(&problem.finishing_step),
                problem.smaller.finishing.as_ref(),
            ]
            .into_iter()
            .flatten()
            // A rung that would name the answer (50 ÷ 10 when 20% of 50 is
            // 10) is passed.
            .filter(|rung| !guard.found_in(rung))
            .collect();
            let mut rungs = Vec::new();
            loop {
                let turn = for_question(Some(&solution), &question, None, None, &[], &settings);
                let Some(step) = turn.help.next_step else {
                    break;
                };
                assert!(!guard.found_in(&step), "{message}: {step}");
                assert!(rungs.len() < 7, "{message}: the ladder never ends");
                rungs.push(step);
                question.hints_used = turn.hints_used_after;
            }
            assert_eq!(
                rungs.iter().collect::<Vec<_>>(),
                expected_rungs,
                "{message}"
            );
        }
    }

    #[test]
    fn a_step_worked_out_by_the_student_skips_its_smaller_question() {
        use crate::engine::interpret::student_math::{own_solution, student_problem};
        let settings = GradingSettings::default();
        let problem = student_problem("2x + 3 = 11").unwrap();
        let solution = own_solution(&problem);
        let mut question = PendingQuestion {
            text: problem.text.clone(),
            hints_used: 1,
            ..pending(&item("eq-two-step", 0))
        };
        let stuck = for_question(Some(&solution), &question, None, None, &[], &settings);
        assert_eq!(stuck.help.next_step.as_deref(), Some("What is 11 - 3?"));
        assert_eq!(stuck.step_expects.as_deref(), Some("8"));
        // The student answers the smaller question this turn.
        let done = for_question(Some(&solution), &question, Some("8"), None, &[], &settings);
        assert_eq!(done.help.next_step, Some(problem.finishing_step.clone()));
        question.hints_used = done.hints_used_after;
        let smaller = for_question(Some(&solution), &question, None, None, &[], &settings);
        assert_eq!(smaller.help.next_step.as_deref(), Some("What is 8 ÷ 2?"));
    }
}
