//! A problem the student brought, worked out by code: the problem as the
//! tutor repeats it, its answer and the steps the help ladder asks.

use std::sync::LazyLock;

use regex::Regex;

use crate::engine::practice::solution::{HintStep, Solution};
use crate::math::{self, ParseOptions};
use crate::model::{AnswerKind, KnownMistake};

/// A problem the student wrote, worked out by code.
#[derive(Debug, Clone, PartialEq)]
pub struct StudentProblem {
    /// The problem as the tutor will repeat it: `47 + 38`, `2x + 3 = 11`.
    pub text: String,
    /// The answer: a number (`85`, `5/6`) or the solution (`x = 4`).
    pub answer: String,
    /// Whether `answer` is an equation's solution.
    pub solves_for: Option<char>,
    /// The first step, worked with the problem's own numbers and asked
    /// as a question; it never states the answer.
    pub first_step: String,
    /// What the first step works out to, when it asks for one number: an
    /// answer to the step is progress on the problem, not a wrong try.
    pub first_step_expects: Option<String>,
    /// A step between the first and the finishing one, where the working
    /// has one to ask on its own (the highest common factor that
    /// simplifies 75 hundredths).
    pub middle_step: Option<HintStep>,
    /// Other values the worked solution passes through short of the
    /// answer (one part of a ratio): a student giving one is making
    /// progress, not a wrong try.
    pub later_values: Vec<String>,
    /// The step after the first, with the first one's result, that works
    /// out the answer (asked open): `So 2x = 8. Now divide both sides by 2.
    /// What is x?`.
    pub finishing_step: String,
    /// Each step asked smaller still, for a student stuck on it: just its
    /// arithmetic (`What is 11 - 3?`, then `What is 8 ÷ 2?`).
    pub smaller: SmallerSteps,
}

impl StudentProblem {
    /// Every value the worked solution passes through short of the answer.
    pub fn passes_through(&self) -> impl Iterator<Item = &str> {
        self.first_step_expects
            .iter()
            .chain(self.middle_step.iter().flat_map(|m| &m.expects))
            .chain(&self.later_values)
            .map(String::as_str)
    }

    /// The wrong answers a common mistake gives for this problem, so a
    /// wrong answer is told what went wrong: adding (or subtracting) the
    /// tops and the bottoms of two fractions (1/2 + 1/3 = 2/5).
    pub fn known_mistakes(&self) -> Vec<KnownMistake> {
        static SUM: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"^(\d+)/(\d+) ([+-]) (\d+)/(\d+)$").expect("a valid pattern")
        });
        let Some(c) = SUM.captures(&self.text) else {
            return Vec::new();
        };
        let part = |i: usize| c[i].parse::<i64>().ok();
        let (Some(a), Some(b), Some(p), Some(q)) = (part(1), part(2), part(4), part(5)) else {
            return Vec::new();
        };
        let (top, bottom) = if &c[3] == "+" {
            (a + p, b + q)
        } else {
            (a - p, b - q)
        };
        if b == q || bottom <= 0 {
            return Vec::new();
        }
        vec![KnownMistake {
            value: format!("{top}/{bottom}"),
            strategy: "added_across".to_owned(),
            mistake_tag: Some("added_denominators".to_owned()),
            slip: false,
        }]
    }

    /// How an answer to the problem is graded: an equation's solution, an
    /// expression in a letter (`6x`, `5a + 3`) or a number.
    pub fn answer_kind(&self) -> AnswerKind {
        if self.solves_for.is_some() {
            return AnswerKind::Equation;
        }
        let in_letters = math::parse(&self.answer, ParseOptions::student())
            .is_ok_and(|expr| !expr.variables().is_empty());
        if in_letters {
            AnswerKind::Expression
        } else {
            AnswerKind::Number
        }
    }
}

/// The arithmetic of a problem's two steps, where code knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmallerSteps {
    pub first: Option<String>,
    pub finishing: Option<String>,
}

/// The solution of a problem the student brought, as the help ladder uses
/// it: the first step (graded when it asks for a number), then the step
/// that finishes it, asked open.
pub fn own_solution(problem: &StudentProblem) -> Solution {
    let first = HintStep {
        ask: problem.first_step.clone(),
        tell: problem.first_step.clone(),
        expects: problem.first_step_expects.clone(),
        smaller: problem.smaller.first.clone(),
    };
    let first_worked = match &problem.first_step_expects {
        Some(value) => format!("{} {value}", problem.first_step),
        None => problem.first_step.clone(),
    };
    let middle = problem.middle_step.iter().map(|step| {
        let worked = match &step.expects {
            Some(value) => format!("{} {value}", step.tell),
            None => step.tell.clone(),
        };
        (step.clone(), worked)
    });
    let finish = HintStep {
        ask: problem.finishing_step.clone(),
        tell: problem.finishing_step.clone(),
        expects: None,
        smaller: problem.smaller.finishing.clone(),
    };
    let finish_worked = format!("{} {}", problem.finishing_step, problem.answer);
    let steps = std::iter::once((first, first_worked))
        .chain(middle)
        .chain(std::iter::once((finish, finish_worked)))
        .collect();
    Solution::worked_by_code(steps, &problem.answer)
}
