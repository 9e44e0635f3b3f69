//! Worked solutions shown whole: every step of an equation undone in
//! reverse order, a fraction or ratio simplified, two fractions added, a
//! percentage or fraction of an amount built from simple parts.

use super::first_step::pieces_named;
use super::fractions_and_ratios::conversion_steps;
use super::problem::StudentProblem;
use super::reading::{Piece, fraction, math_runs, piece_text};
use super::working::evaluate;
use crate::content::course::ProblemShape;
use crate::engine::interpret::outside_math::listed;
use crate::math;

/// The steps that solve a problem of the form `ax + b = c` (`a`, `b`
/// whole numbers, `b` may be absent or subtracted), each undoing one
/// operation on both sides, then a check; `None` for any other problem.
pub fn solution_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    let Some(variable) = problem.solves_for else {
        return simplest_form_steps(problem)
            .or_else(|| fraction_sum_steps(problem))
            .or_else(|| amount_steps(problem))
            .or_else(|| conversion_steps(problem));
    };
    let compact: String = problem
        .text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (left, right) = compact.split_once('=')?;
    let c: i64 = right.parse().ok()?;
    let at = left.find(variable)?;
    let a: i64 = match &left[..at] {
        "" => 1,
        digits => digits.parse().ok()?,
    };
    let rest = &left[at + variable.len_utf8()..];
    let b: i64 = match rest.chars().next() {
        None => 0,
        Some('+') => rest[1..].parse().ok()?,
        Some('-') => -rest[1..].parse::<i64>().ok()?,
        Some(_) => return None,
    };
    if a == 0 || (c - b) % a != 0 {
        return None;
    }
    let x = (c - b) / a;
    let mut steps = Vec::new();
    let ax = if a == 1 {
        variable.to_string()
    } else {
        format!("{a}{variable}")
    };
    if b > 0 {
        steps.push(format!(
            "First undo the + {b}: take {b} from both sides, so {ax} = {c} - {b} = {}.",
            c - b
        ));
    } else if b < 0 {
        steps.push(format!(
            "First undo the - {}: add {} to both sides, so {ax} = {c} + {} = {}.",
            -b,
            -b,
            -b,
            c - b
        ));
    }
    if a != 1 {
        let then = if b == 0 { "Undo" } else { "Then undo" };
        steps.push(format!(
            "{then} the \u{d7} {a}: divide both sides by {a}, so {variable} = {} \u{f7} {a} = {x}.",
            c - b
        ));
    }
    let check = match (a, b) {
        (1, 0) => return None,
        (1, b) => format!("{x} {} {}", if b > 0 { '+' } else { '-' }, b.abs()),
        (a, 0) => format!("{a} \u{d7} {}", signed(x)),
        (a, b) => format!(
            "{a} \u{d7} {} {} {}",
            signed(x),
            if b > 0 { '+' } else { '-' },
            b.abs()
        ),
    };
    steps.push(format!(
        "So {variable} = {x}. Check: {check} = {c} \u{2713}. We undo the operations in reverse order, doing the same to both sides so the equation stays balanced."
    ));
    Some(steps)
}

/// The steps that put a fraction or a ratio in its simplest form
/// (`12/18`, `12:8`, as the problem is stored: "12:8 in its simplest
/// form"): their highest common factor, then each part divided by it.
fn simplest_form_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    let shown = problem.text.strip_suffix(" in its simplest form")?;
    let (separator, kind) = if shown.contains(':') {
        (':', "ratio")
    } else {
        ('/', "fraction")
    };
    let parts: Vec<i64> = shown
        .split(separator)
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    let hcf = parts.iter().copied().fold(0, math::gcd);
    if parts.len() < 2 || hcf <= 1 {
        return None;
    }
    let numbers: Vec<String> = parts.iter().map(i64::to_string).collect();
    let divided: Vec<String> = parts
        .iter()
        .map(|p| format!("{p} \u{f7} {hcf} = {}", p / hcf))
        .collect();
    Some(vec![
        format!(
            "Find the biggest number that divides into {}: it is {hcf}.",
            listed(&numbers)
        ),
        format!(
            "Divide every part by {hcf}: {}. So {shown} in its simplest form is {}, an equivalent {kind} with smaller numbers.",
            divided.join(", "),
            problem.answer
        ),
    ])
}

/// The steps that add or take away two fractions (`2/5 + 1/3`): a common
/// denominator, each fraction over it, then the tops, simplified at the end.
fn fraction_sum_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    use Piece::Op;
    let run = math_runs(&problem.text).into_iter().next()?;
    let (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) =
        (run.shape()?, &run.pieces[..])
    else {
        return None;
    };
    let ((n1, d1), (n2, d2)) = (fraction(a)?, fraction(b)?);
    if d1 <= 0 || d2 <= 0 {
        return None;
    }
    let common = d1 / math::gcd(d1, d2) * d2;
    let (t1, t2) = (n1 * (common / d1), n2 * (common / d2));
    let top = if *op == '+' { t1 + t2 } else { t1 - t2 };
    let verb = if *op == '+' { "add" } else { "take away" };
    let mut steps = Vec::new();
    if d1 == d2 {
        steps.push(format!(
            "The bottoms are the same, {d1}, so the pieces are the same size: keep the {d1} and {verb} the tops."
        ));
    } else {
        steps.push(format!(
            "The bottoms, {d1} and {d2}, are different, so first find a number both go into: the smallest is {common}."
        ));
        steps.push(format!(
            "{n1}/{d1} = {t1}/{common} and {n2}/{d2} = {t2}/{common} (multiply the top and the bottom by the same number)."
        ));
    }
    let raw = format!("{top}/{common}");
    let finish = if raw == problem.answer {
        format!("{t1}/{common} {op} {t2}/{common} = {raw}.")
    } else {
        format!(
            "{t1}/{common} {op} {t2}/{common} = {raw}, which simplifies to {}.",
            problem.answer
        )
    };
    steps.push(finish);
    Some(steps)
}

/// The steps that find a percentage or a fraction of an amount (`15% of
/// 80`, `3/4 of 20`) through the simple parts a student can work out in
/// their head; `None` for any other problem.
fn amount_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    use Piece::{Frac, Num, Of, Op};
    let run = math_runs(&problem.text).into_iter().next()?;
    let value = |expression: String| evaluate(&expression, true);
    let answer = &problem.answer;
    match (run.shape()?, &run.pieces[..]) {
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => {
            let amount = piece_text(amount)?;
            let p: i64 = pct.parse().ok()?;
            let tenth = value(format!("{amount}/10"))?;
            let (tens, five) = (p / 10, p % 10 == 5);
            let lots = if tens == 1 {
                "one lot".to_owned()
            } else {
                format!("{tens} lots")
            };
            if p % 10 == 0 {
                Some(vec![
                    format!("10% of {amount} is {amount} ÷ 10 = {tenth}."),
                    format!(
                        "{p}% is {lots} of 10%, so {p}% of {amount} is {tens} × {tenth} = {answer}."
                    ),
                ])
            } else if five {
                let half = value(format!("{amount}/20"))?;
                let built = if tens == 0 {
                    format!("So {p}% of {amount} is {answer}.")
                } else {
                    format!(
                        "{p}% is {lots} of 10% and one 5%, so {p}% of {amount} is {tens} × {tenth} + {half} = {answer}."
                    )
                };
                Some(vec![
                    format!(
                        "10% of {amount} is {amount} ÷ 10 = {tenth}, and 5% is half of that, {half}."
                    ),
                    built,
                ])
            } else {
                let hundredths = value(format!("{p}/100"))?;
                Some(vec![
                    format!("{p}% means {p} hundredths: {p} ÷ 100 = {hundredths}."),
                    format!("So {p}% of {amount} is {hundredths} × {amount} = {answer}."),
                ])
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (n, d) = fraction(&Frac(f.clone()))?;
            let amount = piece_text(amount)?;
            let part = value(format!("{amount}/{d}"))?;
            Some(vec![
                format!(
                    "One {} of {amount} is {amount} ÷ {d} = {part}.",
                    pieces_named(d).trim_end_matches('s')
                ),
                format!(
                    "{f} is {n} of those parts, so {f} of {amount} is {n} × {part} = {answer}."
                ),
            ])
        }
        _ => None,
    }
}

fn signed(n: i64) -> String {
    if n < 0 {
        format!("({n})")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::super::student_problem;
    use super::*;

    fn steps(message: &str) -> Option<Vec<String>> {
        solution_steps(&student_problem(message)?)
    }

    #[test]
    fn a_ratio_or_fraction_is_simplified_through_its_highest_common_factor() {
        let s = steps("how do i simplify 12:8").unwrap();
        assert!(s[0].contains("it is 4"), "{s:?}");
        assert!(s[1].contains("12 ÷ 4 = 3, 8 ÷ 4 = 2"), "{s:?}");
        assert!(
            s[1].ends_with("is 3:2, an equivalent ratio with smaller numbers."),
            "{s:?}"
        );
        let s = steps("simplify 12/18").unwrap();
        assert!(s[1].contains("is 2/3, an equivalent fraction"), "{s:?}");
    }

    #[test]
    fn fractions_are_added_over_a_common_denominator() {
        let s = steps("how do i add 2/5 and 1/3").unwrap();
        assert_eq!(
            s,
            [
                "The bottoms, 5 and 3, are different, so first find a number both go into: the smallest is 15.",
                "2/5 = 6/15 and 1/3 = 5/15 (multiply the top and the bottom by the same number).",
                "6/15 + 5/15 = 11/15.",
            ]
        );
        let s = steps("what is 1/6 + 1/3").unwrap();
        assert_eq!(
            s.last().unwrap(),
            "1/6 + 2/6 = 3/6, which simplifies to 1/2."
        );
        let s = steps("3/7 - 1/7").unwrap();
        assert!(s[0].starts_with("The bottoms are the same, 7"), "{s:?}");
    }

    #[test]
    fn a_two_step_equation_is_undone_in_reverse_order() {
        let s = steps("how do I solve 2x + 3 = 11?").unwrap();
        assert_eq!(s.len(), 3);
        assert!(
            s[0].contains("take 3 from both sides, so 2x = 11 - 3 = 8"),
            "{s:?}"
        );
        assert!(
            s[1].contains("divide both sides by 2, so x = 8 \u{f7} 2 = 4"),
            "{s:?}"
        );
        assert!(s[2].contains("Check: 2 \u{d7} 4 + 3 = 11"), "{s:?}");
    }

    #[test]
    fn subtraction_and_negative_answers() {
        let s = steps("solve 3y - 5 = -11").unwrap();
        assert!(
            s[0].contains("add 5 to both sides, so 3y = -11 + 5 = -6"),
            "{s:?}"
        );
        assert!(s[2].contains("3 \u{d7} (-2) - 5 = -11"), "{s:?}");
        let one = steps("x + 4 = 9").unwrap();
        assert_eq!(one.len(), 2, "{one:?}");
        assert!(one[1].contains("Check: 5 + 4 = 9"), "{one:?}");
    }

    #[test]
    fn a_percentage_or_fraction_of_an_amount_is_built_from_simple_parts() {
        let s = steps("how do I find 15% of 80").unwrap();
        assert_eq!(
            s,
            [
                "10% of 80 is 80 ÷ 10 = 8, and 5% is half of that, 4.",
                "15% is one lot of 10% and one 5%, so 15% of 80 is 1 × 8 + 4 = 12."
            ]
        );
        let s = steps("what is 30% of 50?").unwrap();
        assert!(s[1].ends_with("3 × 5 = 15."), "{s:?}");
        let s = steps("what's 12% of 50").unwrap();
        assert!(s[1].ends_with("0.12 × 50 = 6."), "{s:?}");
        let s = steps("3/4 of 20").unwrap();
        assert_eq!(s[0], "One quarter of 20 is 20 ÷ 4 = 5.");
        assert!(s[1].ends_with("3 × 5 = 15."), "{s:?}");
    }

    #[test]
    fn other_problems_have_no_steps_here() {
        assert!(steps("what is 47 + 38?").is_none());
        assert!(
            steps("solve 2x + 3 = 10").is_none(),
            "not a whole-number answer"
        );
        assert!(steps("solve 2(x + 3) = 10").is_none());
    }
}
