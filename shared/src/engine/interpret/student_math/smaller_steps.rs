//! Each step of a problem asked smaller still, for a student stuck on it:
//! just the step's arithmetic.

use super::problem::SmallerSteps;
use super::reading::{MathRun, Piece, fraction, whole};
use crate::content::course::ProblemShape;
use crate::math;

/// Each step's arithmetic on its own, for a student stuck on the step:
/// the first step's sum (`first` is what it works out to), then the
/// finishing step's.
pub(super) fn smaller_steps(run: &MathRun, first: Option<&str>) -> SmallerSteps {
    use Piece::{Frac, Num, Of, Op, Var};
    let Some(shape) = run.shape() else {
        return SmallerSteps::default();
    };
    let w: Option<i64> = first.and_then(|w| w.parse().ok());
    let undo = |op: char, b: &Piece, c: &Piece| -> Option<String> {
        let (b, c) = (whole(b)?, whole(c)?);
        Some(if op == '+' {
            format!("What is {c} - {b}?")
        } else {
            format!("What is {c} + {b}?")
        })
    };
    match (shape, &run.pieces[..]) {
        (
            ProblemShape::TwoStepEquation,
            [
                Num { text: a, .. },
                Var(_),
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => SmallerSteps {
            first: undo(*op, b, c),
            finishing: w.map(|w| format!("What is {w} ÷ {a}?")),
        },
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { text: a, .. },
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => SmallerSteps {
            first: undo(*op, b, c),
            finishing: w.map(|w| format!("What is {w} × {a}?")),
        },
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 != d2 && d1 > 0 && d2 > 0 => {
                    let (big, small) = (d1.max(d2), d1.min(d2));
                    let common = d1 / math::gcd(d1, d2) * d2;
                    let verb = if *op == '+' { "add" } else { "take away" };
                    SmallerSteps {
                        first: Some(format!(
                            "Count up in {big}s: {big}, {}, {}… Which is the first of those that {small} goes into too?",
                            2 * big,
                            3 * big
                        )),
                        finishing: Some(format!(
                            "The bottom stays {common}. Just {verb} the tops: what is {} {op} {}?",
                            n1 * (common / d1),
                            n2 * (common / d2)
                        )),
                    }
                }
                _ => SmallerSteps::default(),
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, _]) => {
            let n = fraction(&Frac(f.clone())).map(|(n, _)| n);
            SmallerSteps {
                first: None,
                finishing: w
                    .zip(n)
                    .filter(|(_, n)| *n > 1)
                    .map(|(w, n)| format!("What is {n} × {w}?")),
            }
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => {
            let tens = pct
                .parse::<i64>()
                .ok()
                .filter(|p| p % 10 == 0)
                .map(|p| p / 10);
            SmallerSteps {
                first: whole(amount)
                    .filter(|a| a % 10 == 0)
                    .map(|a| format!("What is {a} ÷ 10?")),
                finishing: w
                    .zip(tens)
                    .filter(|(_, t)| *t > 1)
                    .map(|(w, t)| format!("What is {t} × {w}?")),
            }
        }
        _ => SmallerSteps::default(),
    }
}
