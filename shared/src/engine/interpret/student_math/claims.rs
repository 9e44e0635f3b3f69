//! A worked claim of the student's ("72 - 38 = 46", "x = 4 for 2x + 3 =
//! 11") checked by code, with the slip behind a wrong one named.

use super::problem::StudentProblem;
use super::reading::{MathRun, Piece, math_runs, piece_text};
use super::working::{number_text, value_of, work_out};
use crate::content::course::ProblemShape;

/// A worked claim of the student's, checked by code.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// What was worked out: `72 - 38`, or the equation `2x + 3 = 11`.
    pub problem: StudentProblem,
    /// What the student says it comes to: `46`, or `x = 4`.
    pub claimed: String,
    pub correct: bool,
    /// The likely slip behind a wrong claim, when code can tell.
    pub mistake: Option<ClaimMistake>,
    /// How the student can check a right claim themselves: the solution
    /// put back into the equation (`2 × 4 + 3 = 11`), or the sum undone
    /// (`85 - 38 = 47`).
    pub check: Option<String>,
}

/// A slip code can recognise in a wrong worked claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimMistake {
    /// Added where the problem subtracts, or the other way round.
    SwappedAddSubtract,
    /// Added where the problem multiplies.
    AddedInsteadOfMultiplying,
    /// Took the smaller digit from the larger in a column instead of borrowing.
    NoBorrowing,
    /// Dropped the carried ten.
    NoCarrying,
    /// Added the numerators and the denominators.
    AddedAcross,
    /// One column (a power of ten) out.
    OneColumnOut,
    /// Near the right value.
    Close,
}

impl Claim {
    /// What a tutor says about the claim: right, or what the right value
    /// is and the slip that most likely explains the wrong one.
    pub fn verdict(&self) -> String {
        let problem = &self.problem.text;
        if self.correct {
            return match (self.problem.solves_for, &self.check) {
                (Some(_), Some(check)) => format!(
                    "Yes, {} is right. To check, put it back into {problem}: {check}",
                    self.claimed
                ),
                (Some(_), None) => format!(
                    "Yes, {} is right: put it back into {problem} and both sides match.",
                    self.claimed
                ),
                (None, Some(check)) => format!(
                    "Yes, {problem} = {} is right. You can check it by undoing it: {check}.",
                    self.claimed
                ),
                (None, None) => format!("Yes, {problem} = {} is right.", self.claimed),
            };
        }
        let right = match self.problem.solves_for {
            Some(_) => format!(
                "Not quite: {} does not make {problem} true; the solution is {}.",
                self.claimed, self.problem.answer
            ),
            None => format!(
                "Not quite: {problem} is {}, not {}.",
                self.problem.answer, self.claimed
            ),
        };
        let why = self.mistake.map(|m| match m {
            ClaimMistake::SwappedAddSubtract => {
                "It looks like you added instead of subtracting, or the other way round."
            }
            ClaimMistake::AddedInsteadOfMultiplying => {
                "It looks like you added the numbers instead of multiplying them."
            }
            ClaimMistake::NoBorrowing => {
                "It looks like you took the smaller digit from the larger one in a column instead of borrowing."
            }
            ClaimMistake::NoCarrying => "It looks like the carried ten went missing.",
            ClaimMistake::AddedAcross => {
                "It looks like you added the tops and the bottoms; the fractions need a common denominator first."
            }
            ClaimMistake::OneColumnOut => "You're one place value out: check each column again.",
            ClaimMistake::Close => "You're close: check your working one step at a time.",
        });
        match why {
            Some(why) => format!("{right} {why}"),
            None => right,
        }
    }
}

/// A claim in `message`: an arithmetic `a op b = c`, or an equation with a
/// proposed solution (`2x + 3 = 11`, `x = 4`).
pub fn claim(message: &str) -> Option<Claim> {
    let runs = math_runs(message);
    for run in &runs {
        if run.has_var() {
            continue;
        }
        let Some((left, right)) = run.sides() else {
            continue;
        };
        let lhs = MathRun {
            pieces: left.to_vec(),
        };
        let rhs = MathRun {
            pieces: right.to_vec(),
        };
        // The worked side has an operation, the answer side is one value.
        let answer_side = right.len() == 1 || (right.len() == 2 && right[0] == Piece::Op('-'));
        if lhs.shape().is_none() || !answer_side {
            continue;
        }
        let Some(problem) = work_out(&lhs) else {
            continue;
        };
        let claimed = rhs.compact();
        let correct = same_value(&problem.answer, &claimed);
        let mistake = if correct {
            None
        } else {
            diagnose(&lhs, &problem.answer, &claimed)
        };
        return Some(Claim {
            check: correct.then(|| undone(&lhs, &rhs)).flatten(),
            problem,
            claimed: rhs.display(),
            correct,
            mistake,
        });
    }
    // An equation, then `x = value` as its proposed solution.
    let equation = runs.iter().find(|r| {
        matches!(
            r.shape(),
            Some(ProblemShape::OneStepEquation | ProblemShape::TwoStepEquation)
        )
    })?;
    let proposal = runs.iter().find(|r| {
        r.has_var() && r.pieces.len() >= 3 && r.shape().is_none() && r.sides().is_some()
    })?;
    let problem = work_out(equation)?;
    let (_, value) = proposal.sides()?;
    let claimed_value = MathRun {
        pieces: value.to_vec(),
    }
    .compact();
    let solution = problem.answer.split('=').nth(1)?.trim().to_owned();
    let correct = same_value(&solution, &claimed_value);
    Some(Claim {
        check: correct
            .then(|| put_back(equation, &claimed_value))
            .flatten(),
        correct,
        claimed: proposal.display(),
        problem,
        mistake: None,
    })
}

/// `a + b = c` checked the other way round (`c - b = a`), for the four
/// operations between two numbers.
fn undone(lhs: &MathRun, rhs: &MathRun) -> Option<String> {
    let [a, Piece::Op(op), b] = &lhs.pieces[..] else {
        return None;
    };
    let inverse = match op {
        '+' => '-',
        '-' => '+',
        '*' => '÷',
        '÷' | '/' => '*',
        _ => return None,
    };
    let run = MathRun {
        pieces: [rhs.pieces.clone(), vec![Piece::Op(inverse), b.clone()]].concat(),
    };
    Some(format!("{} = {}", run.display(), piece_text(a)?))
}

/// The equation with `value` put in for its unknown, each side worked
/// out: `2 × 4 + 3 = 11`, or `3 × 4 + 2 = 14 and 4 + 10 = 14`.
fn put_back(equation: &MathRun, value: &str) -> Option<String> {
    let (left, right) = equation.sides()?;
    let negative = value.starts_with('-');
    let side = |pieces: &[Piece]| -> Option<(String, String)> {
        let mut out = Vec::with_capacity(pieces.len() + 2);
        for p in pieces {
            if let Piece::Var(_) = p {
                if matches!(out.last(), Some(Piece::Num { .. })) {
                    out.push(Piece::Op('*'));
                }
                let number = Piece::Num {
                    text: value.to_owned(),
                    decimal: value.contains('.'),
                };
                if negative {
                    out.extend([Piece::Op('('), number, Piece::Op(')')]);
                } else {
                    out.push(number);
                }
            } else {
                out.push(p.clone());
            }
        }
        let run = MathRun { pieces: out };
        let worked = number_text(value_of(&run.compact())?, run.has_decimal());
        Some((run.display(), worked))
    };
    let (left_shown, left_value) = side(left)?;
    let right_run = MathRun {
        pieces: right.to_vec(),
    };
    if !right_run.has_var() {
        return Some(format!(
            "{left_shown} = {left_value}, the same as the other side."
        ));
    }
    let (right_shown, right_value) = side(right)?;
    Some(format!(
        "{left_shown} = {left_value} and {right_shown} = {right_value}, so both sides match."
    ))
}

fn same_value(a: &str, b: &str) -> bool {
    match (value_of(a), value_of(b)) {
        (Some(x), Some(y)) => x.approx_eq(y),
        _ => false,
    }
}

/// The slip behind `claimed` for the two-operand problem `lhs`, if one of
/// the common ones explains it.
fn diagnose(lhs: &MathRun, answer: &str, claimed: &str) -> Option<ClaimMistake> {
    let claimed_value = value_of(claimed)?;
    let matches =
        |expression: String| value_of(&expression).is_some_and(|v| v.approx_eq(claimed_value));
    if let [a, Piece::Op(op), b] = &lhs.pieces[..] {
        let (a_text, b_text) = (piece_text(a)?, piece_text(b)?);
        match (a, op, b) {
            (Piece::Frac(x), '+', Piece::Frac(y)) => {
                let (n1, d1) = x.split_once('/')?;
                let (n2, d2) = y.split_once('/')?;
                let across = format!("({n1}+{n2})/({d1}+{d2})");
                if matches(across) {
                    return Some(ClaimMistake::AddedAcross);
                }
            }
            (Piece::Num { decimal: false, .. }, '-', Piece::Num { decimal: false, .. }) => {
                if matches(format!("{a_text}+{b_text}")) {
                    return Some(ClaimMistake::SwappedAddSubtract);
                }
                if let Some(v) = columnwise(&a_text, &b_text, |x, y| x.abs_diff(y))
                    && matches(v.to_string())
                {
                    return Some(ClaimMistake::NoBorrowing);
                }
            }
            (Piece::Num { decimal: false, .. }, '+', Piece::Num { decimal: false, .. }) => {
                if matches(format!("{a_text}-{b_text}")) || matches(format!("{b_text}-{a_text}")) {
                    return Some(ClaimMistake::SwappedAddSubtract);
                }
                if let Some(v) = columnwise(&a_text, &b_text, |x, y| (x + y) % 10)
                    && matches(v.to_string())
                {
                    return Some(ClaimMistake::NoCarrying);
                }
            }
            (_, '*', _) if matches(format!("{a_text}+{b_text}")) => {
                return Some(ClaimMistake::AddedInsteadOfMultiplying);
            }
            _ => {}
        }
    }
    let right = value_of(answer)?;
    let gap = claimed_value.checked_sub(right).ok()?.to_f64().abs();
    if [1.0, 10.0, 100.0, 1000.0].contains(&gap) && right.to_f64().abs() >= 10.0 {
        return Some(ClaimMistake::OneColumnOut);
    }
    let scale = right.to_f64().abs().max(1.0);
    (gap <= 0.2 * scale).then_some(ClaimMistake::Close)
}

/// Column by column on two whole numbers, right-aligned, with `digit`
/// combining each pair (no carries or borrows between columns).
fn columnwise(a: &str, b: &str, digit: impl Fn(u32, u32) -> u32) -> Option<u64> {
    let width = a.len().max(b.len());
    let pad = |s: &str| format!("{s:0>width$}");
    let (a, b) = (pad(a), pad(b));
    let mut out = String::new();
    for (x, y) in a.chars().zip(b.chars()) {
        out.push(char::from_digit(
            digit(x.to_digit(10)?, y.to_digit(10)?),
            10,
        )?);
    }
    out.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_checked_and_slips_named() {
        let c = claim("can you check my answer? 72 - 38 = 46").unwrap();
        assert!(!c.correct);
        assert_eq!(c.problem.answer, "34");
        assert_eq!(c.mistake, Some(ClaimMistake::NoBorrowing));
        let c = claim("is this right? 47 + 38 = 85").unwrap();
        assert!(c.correct);
        assert_eq!(
            claim("47 + 38 = 75").unwrap().mistake,
            Some(ClaimMistake::NoCarrying)
        );
        assert_eq!(
            claim("72 - 38 = 110").unwrap().mistake,
            Some(ClaimMistake::SwappedAddSubtract)
        );
        assert_eq!(
            claim("1/2 + 1/3 = 2/5").unwrap().mistake,
            Some(ClaimMistake::AddedAcross)
        );
        assert_eq!(
            claim("6 x 4 = 10").unwrap().mistake,
            Some(ClaimMistake::AddedInsteadOfMultiplying)
        );
        let eq = claim("is x = 4 right for 2x + 3 = 11?").unwrap();
        assert!(eq.correct);
        assert_eq!(
            eq.check.as_deref(),
            Some("2 × 4 + 3 = 11, the same as the other side.")
        );
        assert_eq!(
            claim("is x = 4 right for 3x + 2 = x + 10?")
                .unwrap()
                .check
                .as_deref(),
            Some("3 × 4 + 2 = 14 and 4 + 10 = 14, so both sides match.")
        );
        assert_eq!(
            claim("is x = -2 right for 3x + 10 = 4")
                .unwrap()
                .check
                .as_deref(),
            Some("3 × (-2) + 10 = 4, the same as the other side.")
        );
        assert_eq!(
            claim("is this right? 47 + 38 = 85")
                .unwrap()
                .check
                .as_deref(),
            Some("85 - 38 = 47")
        );
        assert_eq!(
            claim("is 72 ÷ 8 = 9 right").unwrap().check.as_deref(),
            Some("9 × 8 = 72")
        );
        // A wrong claim is corrected, not checked.
        assert_eq!(claim("72 - 38 = 46").unwrap().check, None);
        assert!(!claim("2x + 3 = 11 so x = 7").unwrap().correct);
        assert_eq!(claim("what is 47 + 38?"), None);
    }
}
