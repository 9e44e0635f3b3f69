//! The step that finishes a problem once its first step is worked out,
//! with the problem's own numbers where its kind is known.

use super::first_step::pieces_named;
use super::reading::{MathRun, Piece, fraction, piece_text, whole};
use crate::content::course::ProblemShape;
use crate::math;

/// The step that finishes `run` once the first step worked out `first`:
/// with the problem's own numbers where its shape is known, else a plain
/// "now finish it". It leaves the answer open.
pub(super) fn finishing_step(run: &MathRun, v: char, first: Option<&str>) -> String {
    let text = run.display();
    shaped_finish(run, v, first).unwrap_or_else(|| {
        if run.has_var() {
            format!("Now finish it off: what is {v} in {text}?")
        } else {
            format!("Now put it together: what is {text}?")
        }
    })
}

/// The finishing step of the shapes whose second step code knows.
fn shaped_finish(run: &MathRun, v: char, first: Option<&str>) -> Option<String> {
    use Piece::{Frac, Num, Of, Op, Var};
    let text = run.display();
    match (run.shape()?, &run.pieces[..], first) {
        (
            ProblemShape::TwoStepEquation,
            [Num { text: a, .. }, Var(_), Op('+' | '-'), _, Op('='), _],
            Some(w),
        ) => Some(format!(
            "So {a}{v} = {w}. Now undo the × {a}: divide both sides by {a}. What is {v}?"
        )),
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { text: a, .. },
                Op('+' | '-'),
                _,
                Op('='),
                _,
            ],
            Some(w),
        ) => Some(format!(
            "So {v} ÷ {a} = {w}. Now undo the ÷ {a}: multiply both sides by {a}. What is {v}?"
        )),
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b], Some(_)) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 != d2 && d1 > 0 && d2 > 0 => {
                    let common = d1 / math::gcd(d1, d2) * d2;
                    Some(format!(
                        "So we use {}: {text} becomes {}/{common} {op} {}/{common}. What do you get, in its simplest form?",
                        pieces_named(common),
                        n1 * (common / d1),
                        n2 * (common / d2)
                    ))
                }
                (Some((_, d)), Some(_)) => Some(format!(
                    "Keep the bottom, {d}, as it is: the pieces stay {}. So what is {text}, in its simplest form?",
                    pieces_named(d)
                )),
                _ => None,
            }
        }
        (ProblemShape::WholeAddSub, [a, Op(op @ ('+' | '-')), b], Some(ones)) => {
            let (a, b) = (whole(a)?, whole(b)?);
            let ones: i64 = ones.parse().ok()?;
            // Two columns only: longer sums are finished as a whole.
            if a >= 100 || b >= 100 {
                return None;
            }
            Some(match *op {
                '+' if ones >= 10 => format!(
                    "{} + {} = {ones}: write {} in the ones column and carry 1 ten. Now the tens column: {} + {} + the 1 you carried. So what is {a} + {b}?",
                    a % 10,
                    b % 10,
                    ones - 10,
                    a / 10,
                    b / 10
                ),
                '+' => format!(
                    "{} + {} = {ones}, with nothing to carry. Now the tens column: {} + {}. So what is {a} + {b}?",
                    a % 10,
                    b % 10,
                    a / 10,
                    b / 10
                ),
                _ if a % 10 < b % 10 => format!(
                    "After borrowing, the ones column gives {ones}, and the tens column now has {} tens, not {}. Now the tens: {} - {}. So what is {a} - {b}?",
                    a / 10 - 1,
                    a / 10,
                    a / 10 - 1,
                    b / 10
                ),
                _ => format!(
                    "The ones column gives {ones}. Now the tens column: {} - {}. So what is {a} - {b}?",
                    a / 10,
                    b / 10
                ),
            })
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount], Some(w)) => {
            let (n, d) = fraction(&Frac(f.clone()))?;
            Some(format!(
                "One {} of {} is {w}. {f} is {n} of those parts. So what is {f} of {}?",
                pieces_named(d).trim_end_matches('s'),
                piece_text(amount)?,
                piece_text(amount)?
            ))
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount], Some(w)) => {
            let amount = piece_text(amount)?;
            Some(format!(
                "Ten percent of {amount} is {w}. {} So what is {pct}% of {amount}?",
                percent_from_tens(pct)
            ))
        }
        // A one-step equation's first step already undoes its operation:
        // what is left is the arithmetic, asked another way.
        (ProblemShape::OneStepEquation, [Var(_), Op(op @ ('+' | '-')), b, Op('='), c], _) => {
            let (b, c) = (piece_text(b)?, piece_text(c)?);
            let (undo, sign) = if *op == '+' {
                ("Taking", '-')
            } else {
                ("Adding", '+')
            };
            let from = if *op == '+' { "from" } else { "to" };
            Some(format!(
                "{undo} {b} {from} both sides leaves {v} = {c} {sign} {b}. What is {c} {sign} {b}?"
            ))
        }
        (ProblemShape::OneStepEquation, [Num { text: a, .. }, Var(_), Op('='), c], _) => {
            Some(format!(
                "Think of the {a} times table: {a} × what makes {}?",
                piece_text(c)?
            ))
        }
        (ProblemShape::OneStepEquation, [Var(_), Op('/' | '÷'), a, Op('='), c], _) => {
            let (a, c) = (whole(a)?, whole(c)?);
            (1..=12).contains(&c).then(|| {
                format!(
                    "{v} shared into {a} equal parts gives {c} each, so {v} is {c} lots of {a}. Count up in {a}s, {c} times: {a}, {}, {}… Where do you end up?",
                    2 * a,
                    3 * a
                )
            })
        }
        // After "where do you start, and which way do you move?": the start,
        // the way and how far, leaving where they land to them.
        (ProblemShape::IntegerArithmetic, pieces, _) => {
            let (start, op, by) = signed_sum(pieces)?;
            let steps = by.unsigned_abs();
            let way = if (op == '+') == (by > 0) {
                "right"
            } else {
                "left"
            };
            (steps > 0).then(|| {
                format!(
                    "Start at {start} and move {steps} step{} to the {way}. Where do you land?",
                    if steps == 1 { "" } else { "s" }
                )
            })
        }
        _ => None,
    }
}

/// `a + b` or `a - b` of two whole numbers, each maybe signed and
/// bracketed ("-3 + 5", "5 - (-2)"), as (a, the operator, b).
fn signed_sum(pieces: &[Piece]) -> Option<(i64, char, i64)> {
    fn operand(pieces: &[Piece]) -> Option<(i64, &[Piece])> {
        let (bracketed, rest) = match pieces.split_first()? {
            (Piece::Op('('), rest) => (true, rest),
            _ => (false, pieces),
        };
        let (negative, rest) = match rest.split_first()? {
            (Piece::Op('-'), rest) => (true, rest),
            _ => (false, rest),
        };
        let (number, rest) = rest.split_first()?;
        let size = whole(number)?;
        let rest = match (bracketed, rest.split_first()) {
            (false, _) => rest,
            (true, Some((Piece::Op(')'), rest))) => rest,
            (true, _) => return None,
        };
        Some((if negative { -size } else { size }, rest))
    }
    let (a, rest) = operand(pieces)?;
    let (op, rest) = match rest.split_first()? {
        (Piece::Op(op @ ('+' | '-')), rest) => (*op, rest),
        _ => return None,
    };
    let (b, rest) = operand(rest)?;
    rest.is_empty().then_some((a, op, b))
}

/// How `pct` percent is built from ten percent, which the student has just
/// worked out: whole lots of it, a half of it for five, else one percent.
fn percent_from_tens(pct: &str) -> String {
    let lots = |n: u32| match n {
        1 => "ten percent".to_owned(),
        n => format!("{n} lots of ten percent"),
    };
    match pct.parse::<u32>() {
        Ok(p) if p > 0 && p % 10 == 0 => format!("{p}% is {}.", lots(p / 10)),
        Ok(5) => "5% is half of ten percent.".to_owned(),
        Ok(p) if p % 10 == 5 => format!(
            "{p}% is {} and five percent more, and five percent is half of ten percent.",
            lots(p / 10)
        ),
        _ => format!(
            "One percent is ten percent divided by ten, and {pct}% is {pct} lots of one percent."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::student_problem;
    use super::percent_from_tens;

    #[test]
    fn the_finishing_step_carries_on_from_the_first_with_the_problems_numbers() {
        let cases = [
            (
                "2x + 3 = 11",
                "So 2x = 8. Now undo the × 2: divide both sides by 2. What is x?",
            ),
            (
                "x/4 - 1 = 2",
                "So x ÷ 4 = 3. Now undo the ÷ 4: multiply both sides by 4. What is x?",
            ),
            (
                "1/2 + 1/3",
                "So we use sixths: 1/2 + 1/3 becomes 3/6 + 2/6.",
            ),
            (
                "47 + 38",
                "7 + 8 = 15: write 5 in the ones column and carry 1 ten. Now the tens column: 4 + 3 + the 1 you carried.",
            ),
            (
                "72 - 38",
                "the tens column now has 6 tens, not 7. Now the tens: 6 - 3.",
            ),
            (
                "3/4 of 20",
                "One quarter of 20 is 5. 3/4 is 3 of those parts.",
            ),
            (
                "-3 + 5",
                "Start at -3 and move 5 steps to the right. Where do you land?",
            ),
            ("-4 - 6", "Start at -4 and move 6 steps to the left."),
            ("5 - (-2)", "Start at 5 and move 2 steps to the right."),
            ("12 x 3", "Now put it together: what is 12 × 3?"),
            ("347 + 38", "Now put it together: what is 347 + 38?"),
        ];
        for (message, finish) in cases {
            let p = student_problem(message).unwrap();
            assert!(
                p.finishing_step.contains(finish),
                "{message}: {}",
                p.finishing_step
            );
        }
    }

    #[test]
    fn a_percentage_is_built_from_ten_percent_in_whole_steps() {
        assert_eq!(percent_from_tens("30"), "30% is 3 lots of ten percent.");
        assert_eq!(percent_from_tens("10"), "10% is ten percent.");
        assert_eq!(percent_from_tens("5"), "5% is half of ten percent.");
        assert_eq!(
            percent_from_tens("15"),
            "15% is ten percent and five percent more, and five percent is half of ten percent."
        );
        assert_eq!(
            percent_from_tens("12"),
            "One percent is ten percent divided by ten, and 12% is 12 lots of one percent."
        );
    }
}
