//! A run of mathematics worked out: its answer (a value, or an equation's
//! solution) and its steps, put together into a [`StudentProblem`].

use super::finishing_step::finishing_step;
use super::first_step::{first_step, first_step_value};
use super::problem::StudentProblem;
use super::reading::{MathRun, Piece};
use super::smaller_steps::smaller_steps;
use crate::math::{self, Number, ParseOptions, Value};

pub(super) fn work_out(run: &MathRun) -> Option<StudentProblem> {
    if run.has_var() {
        let (variable, value) = solve_linear(run)?;
        let answer = format!("{variable} = {value}");
        let (first_step, first_step_expects) = stepped(run, &answer, variable);
        let finishing_step = finishing_step(run, variable, first_step_expects.as_deref());
        let smaller = smaller_steps(run, first_step_expects.as_deref());
        return Some(StudentProblem {
            first_step,
            first_step_expects,
            middle_step: None,
            later_values: Vec::new(),
            finishing_step,
            smaller,
            text: run.display(),
            answer,
            solves_for: Some(variable),
        });
    }
    let operates = run
        .pieces
        .iter()
        .any(|p| matches!(p, Piece::Op(c) if *c != '(' && *c != ')') || *p == Piece::Of);
    if run.has_op('=') || !operates {
        return None;
    }
    let value = evaluate(&run.compact(), run.has_decimal())?;
    let (first_step, first_step_expects) = stepped(run, &value, 'x');
    let finishing_step = finishing_step(run, 'x', first_step_expects.as_deref());
    let smaller = smaller_steps(run, first_step_expects.as_deref());
    Some(StudentProblem {
        first_step,
        first_step_expects,
        middle_step: None,
        later_values: Vec::new(),
        finishing_step,
        smaller,
        text: run.display(),
        answer: value,
        solves_for: None,
    })
}

/// The first step of `run` and what it works out to; a step that would
/// give `answer` away is replaced by one that names no number, and
/// expects none.
fn stepped(run: &MathRun, answer: &str, variable: char) -> (String, Option<String>) {
    let step = first_step(run, variable);
    let safe = safe_step(run, answer, step.clone());
    let expects = (safe == step)
        .then(|| first_step_value(run))
        .flatten()
        .filter(|v| v != answer);
    (safe, expects)
}

/// `step`, unless it would give `answer` away: then a first step that
/// names no number of its own.
fn safe_step(run: &MathRun, answer: &str, step: String) -> String {
    let text = run.display();
    let leaks =
        crate::engine::reply::answer_guard::PendingAnswer::new("own problem", &text, answer)
            .is_some_and(|a| a.found_in(&step));
    if leaks {
        format!("What is the very first thing you would work out in {text}?")
    } else {
        step
    }
}

/// The value of a number or expression as a student writes it.
pub(crate) fn value_of(text: &str) -> Option<Number> {
    let expr = math::parse(text, ParseOptions::student()).ok()?;
    match math::evaluate(&expr, &|_| None).ok()? {
        Value::Num(n) => Some(n),
        Value::Bool(_) => None,
    }
}

/// The value of an arithmetic expression in the student grammar, written
/// exactly: a whole number, else a decimal when the problem has decimals
/// and the value ends, else a fraction (`5/6`).
pub(super) fn evaluate(expression: &str, decimals: bool) -> Option<String> {
    value_of(expression).map(|n| number_text(n, decimals))
}

pub(super) fn number_text(n: Number, decimals: bool) -> String {
    let ends = |d: i128| {
        let mut d = d;
        for p in [2, 5] {
            while d % p == 0 {
                d /= p;
            }
        }
        d == 1
    };
    match n.exact() {
        Some(r) if r.is_integer() => r.numer().to_string(),
        Some(r) if decimals && ends(r.denom()) => {
            let text = format!("{:.6}", r.to_f64());
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        Some(r) => format!("{}/{}", r.numer(), r.denom()),
        None => format!("{}", n.to_f64()),
    }
}

/// The solution of a linear equation in one unknown, found from the
/// equation's value at two points and checked by substituting it back.
fn solve_linear(run: &MathRun) -> Option<(char, String)> {
    let variables: Vec<char> = run
        .pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Var(v) => Some(*v),
            _ => None,
        })
        .collect();
    let variable = *variables.first()?;
    if variables.iter().any(|v| *v != variable) {
        return None;
    }
    let (left, right) = run.sides()?;
    let side = |pieces: &[Piece]| MathRun {
        pieces: pieces.to_vec(),
    };
    let difference = format!("({}) - ({})", side(left).compact(), side(right).compact());
    let expr = math::parse(&difference, ParseOptions::student()).ok()?;
    let name = variable.to_string();
    let at = |x: Number| -> Option<Number> {
        let value = math::evaluate(&expr, &|v| (v == name).then_some(x)).ok()?;
        match value {
            Value::Num(n) => Some(n),
            Value::Bool(_) => None,
        }
    };
    let f0 = at(Number::int(0))?;
    let f1 = at(Number::int(1))?;
    let slope = f1.checked_sub(f0).ok()?;
    let root = Number::int(0)
        .checked_sub(f0)
        .ok()?
        .checked_div(slope)
        .ok()?;
    // Linear only: the value at 2 is on the same line, and the root solves it.
    let on_line = f0
        .checked_add(slope.checked_mul(Number::int(2)).ok()?)
        .ok()?;
    if !at(Number::int(2))?.approx_eq(on_line) || !at(root)?.approx_eq(Number::int(0)) {
        return None;
    }
    Some((variable, number_text(root, run.has_decimal())))
}

#[cfg(test)]
mod tests {
    use super::super::student_problem;

    #[test]
    fn a_problem_is_worked_out() {
        let p = student_problem("what is 47 + 38?").unwrap();
        assert_eq!((p.text.as_str(), p.answer.as_str()), ("47 + 38", "85"));
        assert_eq!(student_problem("what is 1/2 + 1/3").unwrap().answer, "5/6");
        assert_eq!(student_problem("what's 3/4 of 20").unwrap().answer, "15");
        assert_eq!(student_problem("25% of 80").unwrap().answer, "20");
        let eq = student_problem("How do I solve 2x + 3 = 11?").unwrap();
        assert_eq!(
            (eq.text.as_str(), eq.answer.as_str()),
            ("2x + 3 = 11", "x = 4")
        );
        assert_eq!(student_problem("what is a ratio?"), None);
        assert_eq!(student_problem("x^2 = 9"), None, "not linear");
    }
}
