//! The mathematics in a student's message, read the way students write it:
//! the runs of it between the words ("How do I solve 2x+3=11?" holds
//! `2x+3=11`), what kind of problem each run is ([`ProblemShape`]), a
//! problem the student brings to be worked out ("what is 47 + 38?"), and a
//! worked claim to check ("72 - 38 = 46"). Pure text work: no course, no
//! state.
//!
//! Each concern has a file of its own: reading the runs (`reading`),
//! working a run out (`working`) with its first, finishing and smaller
//! steps, the fraction, percentage and ratio problems asked in words
//! (`fractions_and_ratios`), the other problems asked in words
//! (`worded_problems`), worked solutions shown whole (`solutions`) and
//! claims (`claims`). [`StudentProblem`] is in `problem`, which every part
//! uses and which uses none of them, so the parts import no cycle.

mod claims;
mod finishing_step;
mod first_step;
mod fractions_and_ratios;
mod problem;
mod reading;
mod recent;
mod smaller_steps;
mod solutions;
mod worded_problems;
mod working;

pub use claims::{Claim, ClaimMistake, claim};
pub use problem::{SmallerSteps, StudentProblem, own_solution};
pub use reading::{MathRun, math_runs};
pub use solutions::solution_steps;
pub(crate) use working::value_of;

use crate::content::course::ProblemShape;
use fractions_and_ratios::{conversion, shared_in_ratio, simplifying, to_fraction};
use reading::{plain_fractions, terms};
use recent::Recent;
use worded_problems::worded_problem;
use working::work_out;

/// The kinds of problem in `message`, each once, in order of appearance.
/// A number to be written another way is a conversion, not a fraction or
/// a decimal on its own; a problem in words is of its own kind only.
pub fn shapes(message: &str) -> Vec<ProblemShape> {
    let mut out = Vec::new();
    if conversion(message).is_some() || to_fraction(message).is_some() {
        out.push(ProblemShape::Conversion);
    } else if let Some((shape, _)) = worded_problem(message) {
        // The problem in words is what is asked: "45p" in "3 pencils cost
        // 45p" is a price, not an expression.
        out.push(shape);
        return out;
    }
    for run in math_runs(message) {
        if out.contains(&ProblemShape::Conversion)
            && run.shape() == Some(ProblemShape::SingleFraction)
        {
            continue;
        }
        if let Some(shape) = run.shape()
            && !out.contains(&shape)
        {
            out.push(shape);
        }
    }
    out
}

/// The first problem in `message` that code can work out: arithmetic with
/// at least one operation, or a linear equation in one unknown.
pub fn student_problem(message: &str) -> Option<StudentProblem> {
    thread_local! {
        static RECENT: Recent<Option<StudentProblem>> = const { Recent::new() };
    }
    RECENT.with(|recent| recent.get_or(message, || read_student_problem(message)))
}

fn read_student_problem(message: &str) -> Option<StudentProblem> {
    let message = &plain_fractions(message);
    if let Some(problem) = shared_in_ratio(message) {
        return Some(problem);
    }
    if let Some(problem) = conversion(message)
        .or_else(|| to_fraction(message))
        .or_else(|| simplifying(message))
    {
        return Some(problem);
    }
    if let Some((_, problem)) = worded_problem(message) {
        return Some(problem);
    }
    math_runs(message)
        .into_iter()
        .filter(|r| r.shape().is_some())
        .find_map(|run| work_out(&run))
}

/// Words that ask for help with a problem rather than answer one.
const ASKS: &[&str] = &[
    "?",
    "how",
    "what",
    "solve",
    "work out",
    "calculate",
    "find",
    "help",
    "can you",
    "could you",
    "explain",
    "don't get",
    "dont get",
    "show me",
    "pls",
    "please",
    "plz",
    "add",
    "subtract",
    "multiply",
    "divide",
    "share",
    "simplify",
    "evaluate",
    "why",
    "stuck",
    "understand",
];

/// A problem the student brings as their own: with nothing pending, any
/// problem code can work out that is not a worked claim to check; with a
/// problem pending, one they ask about ("and how do I solve 3x - 5 = 10")
/// that is not the pending problem itself. Working written on its own
/// ("2x = 8") answers the pending problem instead.
pub fn own_problem(message: &str, pending: Option<&str>) -> Option<StudentProblem> {
    if claim(message).is_some() {
        return None;
    }
    let problem = student_problem(message)?;
    let Some(pending) = pending else {
        return Some(problem);
    };
    let text = message.to_lowercase();
    let asks = ASKS.iter().any(|cue| text.contains(cue));
    let squeeze = |t: &str| -> String {
        t.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c {
                '×' => '*',
                '÷' => '/',
                '−' => '-',
                c => c,
            })
            .collect()
    };
    let restates_pending = squeeze(&pending.to_lowercase()).contains(&squeeze(&problem.text));
    (asks && !restates_pending).then_some(problem)
}

/// A problem the student types while a drill is on screen: one they ask
/// about, as [`own_problem`], or a bare expression that shares no number
/// with the drill (`1/2 + 1/3` beside `7/12 + 5/6`), which cannot be
/// working towards it. A drill is answered by its options or a number.
pub fn own_problem_beside_drill(message: &str, drill: &str) -> Option<StudentProblem> {
    if let Some(problem) = own_problem(message, Some(drill)) {
        return Some(problem);
    }
    if claim(message).is_some() {
        return None;
    }
    let problem = student_problem(message)?;
    let drill_terms = terms(drill);
    let shares = terms(&problem.text).iter().any(|t| drill_terms.contains(t));
    (!shares).then_some(problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProblemShape::*;

    fn shape(message: &str) -> Option<ProblemShape> {
        shapes(message).first().copied()
    }

    #[test]
    fn shapes_of_what_students_write() {
        let cases: &[(&str, Option<ProblemShape>)] = &[
            (
                "How do I solve equations like 2x + 3 = 11?",
                Some(TwoStepEquation),
            ),
            ("2x+3=11", Some(TwoStepEquation)),
            ("solve x/2 + 1 = 6", Some(TwoStepEquation)),
            ("3(x + 2) = 21", Some(TwoStepEquation)),
            ("11x = 132", Some(OneStepEquation)),
            ("x + 7 = 12", Some(OneStepEquation)),
            ("what's 3/4 of 20", Some(FractionOfAmount)),
            ("what is 1/2 + 1/3", Some(FractionAddSub)),
            ("2/3 × 3/4", Some(FractionMulDiv)),
            ("simplify 12/18", Some(SingleFraction)),
            ("what is 3/4 as a decimal", Some(Conversion)),
            ("convert 2/5 to a percentage", Some(Conversion)),
            ("what is 25% of 80?", Some(Percentage)),
            ("20 percent of 50", Some(Percentage)),
            ("share 60 in the ratio 2:3", Some(Ratio)),
            ("0.3 + 0.45", Some(DecimalArithmetic)),
            ("-3 + 5", Some(IntegerArithmetic)),
            ("what is (-3) x (-5)", Some(IntegerArithmetic)),
            ("what's (-4) × (-6)", Some(IntegerArithmetic)),
            ("2 + 3 × 4", Some(MixedOperations)),
            ("12 x 3", Some(WholeMulDiv)),
            ("144 ÷ 12", Some(WholeMulDiv)),
            ("what is 47 + 38?", Some(WholeAddSub)),
            ("check my answer: 72 - 38 = 46", Some(WholeAddSub)),
            ("simplify 3x + 2x", Some(Expression)),
            ("is -3 bigger than -5", Some(NegativeNumbers)),
            ("x = 4", None),
            ("I am 12", None),
            ("what is a ratio?", None),
            ("did u watch the football", None),
        ];
        for (message, expected) in cases {
            assert_eq!(shape(message), *expected, "{message}");
        }
    }

    #[test]
    fn a_problem_said_back_reads_as_the_same_problem() {
        // The pending problem is read again from its text on later turns:
        // that is how its steps are found.
        for message in [
            "how do i share 60 in the ratio 2:3",
            "a £60 jumper has 25% off, how much is it now",
            "increase 80 by 15%",
            "if a = 4 what is 3a+7",
            "simplify 3x+5x-2x",
            "simplify 12:18",
            "convert 0.4 to a percentage",
            "which is bigger 0.5 or 0.45",
            "which is bigger 3/4 or 2/3",
            "if 3 pencils cost 45p how much do 7 cost",
            "how do i convert 0.75 to a fraction",
            "what is 3/4 as a decimal",
            "how do i simplify 12/18",
            "2x + 3 = 11",
        ] {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            let again = student_problem(&p.text);
            assert_eq!(
                again.as_ref().map(|a| (&a.text, &a.answer)),
                Some((&p.text, &p.answer)),
                "{message} said back as {:?}",
                p.text
            );
        }
    }

    #[test]
    fn problems_said_in_words_are_worked_out() {
        let cases = [
            ("I don't get how to add 1/4 and 2/3", "1/4 + 2/3", "11/12"),
            ("what's the sum of 47 and 38", "47 + 38", "85"),
            ("how do you take 38 away from 72", "72 - 38", "34"),
            ("subtract 2.5 from 7.25", "7.25 - 2.5", "4.75"),
            ("multiply 2/3 by 3/4 pls", "2/3 × 3/4", "1/2"),
            ("can you divide 144 by 12", "144 ÷ 12", "12"),
            ("how do I find 20% of 50?", "20% of 50", "10"),
            ("what's 3/4 of 20", "3/4 of 20", "15"),
            ("solve 3x - 5 = 10 pls", "3x - 5 = 10", "x = 5"),
            ("2:3 share 40", "40 shared in the ratio 2:3", "16 and 24"),
            (
                "how do I share 40 sweets in the ratio 3:5",
                "40 shared in the ratio 3:5",
                "15 and 25",
            ),
        ];
        for (message, text, answer) in cases {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(
                (p.text.as_str(), p.answer.as_str()),
                (text, answer),
                "{message}"
            );
        }
    }

    #[test]
    fn an_own_problem_while_another_is_pending_is_one_they_ask_about() {
        let pending = Some("Write 16/22 in its simplest form. \\frac{16}{22}");
        assert!(own_problem("and how do I solve 3x - 5 = 10", pending).is_some());
        assert!(own_problem("I don't get how to add 1/4 and 2/3", pending).is_some());
        assert_eq!(own_problem("8/11", pending), None);
        assert_eq!(own_problem("x=5", pending), None);
        let equation = Some("Solve 2x + 3 = 11.");
        assert_eq!(
            own_problem("2x = 8", equation),
            None,
            "working, not a problem"
        );
        assert_eq!(
            own_problem("what is 2x + 3 = 11?", equation),
            None,
            "the pending one"
        );
        assert_eq!(
            own_problem("72 - 38 = 46 is this right", None),
            None,
            "a claim"
        );
        assert!(own_problem("what is 47 + 38", None).is_some());
        // Beside a drill, a bare expression of other numbers is a new
        // question; working with the drill's own numbers is not.
        let drill = "Work out 7/12 + 5/6. \\frac{7}{12} + \\frac{5}{6}";
        assert!(own_problem_beside_drill("\\frac{1}{2}+\\frac{1}{3}", drill).is_some());
        assert!(own_problem_beside_drill("what is 3/4 of 20", drill).is_some());
        assert_eq!(own_problem_beside_drill("7/12 + 10/12", drill), None);
        assert_eq!(own_problem_beside_drill("17/12", drill), None);
        assert_eq!(own_problem_beside_drill("B", drill), None);
    }
}
