//! The first step of a problem, for each kind of problem: worked with the
//! problem's own numbers and asked as a question, and the number it asks
//! for where it asks for one.

use super::reading::{MathRun, Piece, fraction, piece_text, whole};
use crate::content::course::ProblemShape;
use crate::math;
use crate::text::template::count_word;

/// The first step of the problem `run`, with its own numbers, asked as a
/// question (`variable` names the unknown of an equation).
pub(super) fn first_step(run: &MathRun, variable: char) -> String {
    use Piece::{Frac, Num, Of, Op};
    let text = run.display();
    let generic = format!("What is the very first thing you would work out in {text}?");
    let Some(shape) = run.shape() else {
        return generic;
    };
    let pieces = &run.pieces[..];
    let v = variable;
    match (shape, pieces) {
        (ProblemShape::WholeAddSub, [a, Op('+'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a >= 10 || b >= 10 => format!(
                "Start with the ones column: {} + {}. What do you get there, and is there a ten to carry?",
                a % 10,
                b % 10
            ),
            (Some(a), Some(b)) => format!(
                "Start at the bigger number, {}, and count on {}. Where do you end up?",
                a.max(b),
                a.min(b)
            ),
            _ => generic,
        },
        (ProblemShape::WholeAddSub, [a, Op('-'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a % 10 < b % 10 && a >= 10 => format!(
                "Look at the ones column: {} take away {} doesn't work, so borrow a ten from the tens. What is {} - {}?",
                a % 10,
                b % 10,
                a % 10 + 10,
                b % 10
            ),
            (Some(a), Some(b)) if a >= 10 => format!(
                "Start with the ones column: {} - {}. What do you get there?",
                a % 10,
                b % 10
            ),
            _ => format!("Start at {text_a} and count back. How far do you get?", text_a = piece_text(a).unwrap_or_default()),
        },
        (ProblemShape::WholeMulDiv, [a, Op('*'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a.max(b) >= 10 => {
                let (big, small) = (a.max(b), a.min(b));
                let tens = big - big % 10;
                format!(
                    "Split {big} into {tens} and {}. What is {tens} × {small}, and what is {} × {small}?",
                    big % 10,
                    big % 10
                )
            }
            _ => format!(
                "{text} means {} lots of {}. Can you count up in {}s?",
                piece_text(b).unwrap_or_default(),
                piece_text(a).unwrap_or_default(),
                piece_text(a).unwrap_or_default()
            ),
        },
        (ProblemShape::WholeMulDiv, [a, Op('÷' | '/'), b]) => match (whole(a), whole(b)) {
            (Some(0), Some(b)) if b != 0 => format!(
                "Division shares the first number into equal groups. If there is nothing to share, how much is in each of the {b} groups?"
            ),
            // A small answer is found by counting up, not by guessing from 10 lots.
            (Some(a), Some(b)) if b > 0 && a <= b * 10 => format!(
                "Division asks how many {b}s make {a}. Count up in {b}s, starting at {b}. How many {b}s do you need to reach {a}?"
            ),
            _ => format!(
                "Division asks how many {b}s make {a}. Start with a guess: what is {b} × 10, and is that too many or too few?",
                a = piece_text(a).unwrap_or_default(),
                b = piece_text(b).unwrap_or_default()
            ),
        },
        // A power on its own has no order to choose: say what it means.
        (ProblemShape::MixedOperations, [a, Op('^'), b]) => match (whole(a), whole(b)) {
            (Some(base), Some(times @ 2..=6)) => format!(
                "{text} means {} {base}s multiplied together: {}. What does that come to?",
                count_word(times as u32).unwrap_or_default(),
                vec![base.to_string(); times as usize].join(" × ")
            ),
            _ => format!(
                "The small number says how many times the big number is multiplied by itself. How would you write {text} as a multiplication?"
            ),
        },
        (ProblemShape::MixedOperations, _) => format!(
            "Brackets come first, then × and ÷, then + and -. Which part of {text} do you work out first?"
        ),
        (ProblemShape::IntegerArithmetic | ProblemShape::NegativeNumbers, _)
            if run.has_op('*') || run.has_op('÷') || run.has_op('/') =>
        {
            "First multiply or divide the sizes and ignore the signs. Then decide the sign: are the two signs the same or different?".to_owned()
        }
        (ProblemShape::IntegerArithmetic | ProblemShape::NegativeNumbers, _) => format!(
            "Picture a number line. Where do you start for {text}, and which way do you move?"
        ),
        (ProblemShape::DecimalArithmetic, _) if run.has_op('*') => {
            "Ignore the decimal points for a moment and multiply the whole numbers. Then count how many decimal places the numbers had altogether. What do you get first?".to_owned()
        }
        (ProblemShape::DecimalArithmetic, _) => format!(
            "Write the numbers in {text} one under the other with the decimal points lined up, filling gaps with zeros. Which column do you start with?"
        ),
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 == d2 => format!(
                    "The bottoms are the same, so the pieces are the same size ({}). What do you get when you {} the tops, {n1} and {n2}?",
                    pieces_named(d1),
                    if *op == '+' { "add" } else { "subtract" }
                ),
                (Some((_, d1)), Some((_, d2))) => format!(
                    "The pieces are different sizes ({} and {}), so first we need a common denominator. What is the smallest number that both {d1} and {d2} go into?",
                    pieces_named(d1),
                    pieces_named(d2)
                ),
                _ => format!(
                    "First write both as fractions with the same bottom number. What could the common denominator be in {text}?"
                ),
            }
        }
        (ProblemShape::FractionMulDiv, [_, Op('÷' | '/'), b]) => format!(
            "Dividing by a fraction is the same as multiplying by it turned upside down. What do you get when you flip {}, and what does {} become?",
            piece_text(b).unwrap_or_default(),
            text
        ),
        (ProblemShape::FractionMulDiv, [a, Op('*'), b]) => match (fraction(a), fraction(b)) {
            (Some((n1, d1)), Some((n2, d2))) => format!(
                "Multiply the tops together and the bottoms together. What is {n1} × {n2}, and what is {d1} × {d2}?"
            ),
            _ => format!("A whole number is a fraction over 1. How would you write {text} as two fractions?"),
        },
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (_, d) = fraction(&Frac(f.clone())).unwrap_or((1, 1));
            let amount = piece_text(amount).unwrap_or_default();
            format!(
                "First find one {} of {amount}: share {amount} into {d} equal parts. What is {amount} ÷ {d}?",
                pieces_named(d).trim_end_matches('s')
            )
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => format!(
            "Percent means out of a hundred. To find {pct}% of {amount}, start with ten percent, which is {amount} divided by ten. What is ten percent of {amount}?",
            amount = piece_text(amount).unwrap_or_default()
        ),
        (ProblemShape::Percentage, _) => format!(
            "Percent means out of a hundred. What would one percent be in {text}?"
        ),
        (ProblemShape::OneStepEquation | ProblemShape::TwoStepEquation, _) => {
            equation_step(pieces, v).unwrap_or_else(|| {
                format!("What is being done to {v} in {text}? Which operation would undo it?")
            })
        }
        _ => generic,
    }
}

/// The first step of a linear equation written `a v + b = c`, `v + b = c`,
/// `a v = c`, `v / a = c` or `v / a + b = c`: undo the term, then the
/// coefficient.
fn equation_step(pieces: &[Piece], v: char) -> Option<String> {
    use Piece::{Num, Op, Var};
    let eq = pieces.iter().position(|p| *p == Op('='))?;
    let (left, right) = (&pieces[..eq], &pieces[eq + 1..]);
    let right = MathRun {
        pieces: right.to_vec(),
    }
    .display();
    let undo = |op: char, b: &str| match op {
        '+' => format!("take {b} from both sides"),
        _ => format!("add {b} to both sides"),
    };
    match left {
        [Var(_), Op(op @ ('+' | '-')), Num { text: b, .. }] => {
            let doing = undo(*op, b);
            Some(format!(
                "To get {v} on its own, undo the {op} {b}: {doing}. What does {v} equal then?"
            ))
        }
        [Num { text: a, .. }, Var(_)] => Some(format!(
            "{v} is multiplied by {a}. To undo that, divide both sides by {a}. What is {right} ÷ {a}?"
        )),
        [Var(_), Op('/' | '÷'), Num { text: a, .. }] => Some(format!(
            "{v} is divided by {a}. To undo that, multiply both sides by {a}. What is {right} × {a}?"
        )),
        [
            Num { .. },
            Var(_),
            Op(op @ ('+' | '-')),
            Num { text: b, .. },
        ]
        | [
            Var(_),
            Op('/' | '÷'),
            Num { .. },
            Op(op @ ('+' | '-')),
            Num { text: b, .. },
        ] => {
            let doing = undo(*op, b);
            let side = MathRun {
                pieces: left[..left.len() - 2].to_vec(),
            }
            .display();
            Some(format!(
                "Undo the {op} {b} first: {doing}. What does {side} equal then?"
            ))
        }
        _ => None,
    }
}

/// The number the first step asks for, where it asks for one.
pub(super) fn first_step_value(run: &MathRun) -> Option<String> {
    use Piece::{Frac, Num, Of, Op, Var};
    let value = match (run.shape()?, &run.pieces[..]) {
        (ProblemShape::WholeAddSub, [a, Op('+'), b]) => {
            let (a, b) = (whole(a)?, whole(b)?);
            // Below ten both, the step counts on to the answer itself.
            if a < 10 && b < 10 {
                return None;
            }
            a % 10 + b % 10
        }
        (ProblemShape::WholeAddSub, [a, Op('-'), b]) => {
            let (a, b) = (whole(a)?, whole(b)?);
            if a < 10 {
                return None;
            }
            if a % 10 < b % 10 {
                a % 10 + 10 - b % 10
            } else {
                a % 10 - b % 10
            }
        }
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            let ((n1, d1), (n2, d2)) = (fraction(a)?, fraction(b)?);
            match (d1 == d2, *op) {
                (true, '+') => n1 + n2,
                (true, _) => n1 - n2,
                (false, _) => d1 / math::gcd(d1, d2) * d2,
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (_, d) = fraction(&Frac(f.clone()))?;
            let amount = whole(amount)?;
            if d == 0 || amount % d != 0 {
                return None;
            }
            amount / d
        }
        (ProblemShape::Percentage, [Num { .. }, Op('%'), Of, amount]) => {
            let amount = whole(amount)?;
            if amount % 10 != 0 {
                return None;
            }
            amount / 10
        }
        (
            ProblemShape::TwoStepEquation,
            [Num { .. }, Var(_), Op(op @ ('+' | '-')), b, Op('='), c],
        ) => {
            let (b, c) = (whole(b)?, whole(c)?);
            if *op == '+' { c - b } else { c + b }
        }
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { .. },
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => {
            let (b, c) = (whole(b)?, whole(c)?);
            if *op == '+' { c - b } else { c + b }
        }
        _ => return None,
    };
    Some(value.to_string())
}

/// "quarters", "thirds": what pieces a denominator cuts a whole into.
pub(super) fn pieces_named(d: i64) -> String {
    match d {
        2 => "halves".to_owned(),
        3 => "thirds".to_owned(),
        4 => "quarters".to_owned(),
        5 => "fifths".to_owned(),
        6 => "sixths".to_owned(),
        7 => "sevenths".to_owned(),
        8 => "eighths".to_owned(),
        9 => "ninths".to_owned(),
        10 => "tenths".to_owned(),
        12 => "twelfths".to_owned(),
        d => format!("{d}ths"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::student_problem;

    #[test]
    fn first_steps_use_the_problems_numbers_and_keep_the_answer() {
        let cases = [
            ("add 1/4 and 2/3", &["4", "3", "common denominator"][..]),
            ("20% of 50", &["50", "20%"]),
            ("3x - 5 = 10", &["add 5 to both sides", "3x"]),
            ("x + 7 = 12", &["take 7 from both sides"]),
            ("47 + 38", &["7 + 8", "carry"]),
            ("72 - 38", &["borrow", "12 - 8"]),
            ("3/4 of 20", &["20 ÷ 4"]),
            ("2:3 share 40", &["2 + 3", "40"]),
            ("12 x 3", &["10 × 3", "2 × 3"]),
            ("2 + 3 × 4", &["2 + 3 × 4", "first"]),
            ("12 ÷ 2", &["Count up in 2s", "reach 12"]),
            ("156 ÷ 12", &["12 × 10"]),
        ];
        for (message, words) in cases {
            let p = student_problem(message).unwrap();
            for w in words {
                assert!(p.first_step.contains(w), "{message}: {}", p.first_step);
            }
            assert!(p.first_step.ends_with('?'), "{}", p.first_step);
            let guard =
                crate::engine::reply::answer_guard::PendingAnswer::new("own", &p.text, &p.answer)
                    .unwrap();
            assert!(
                !guard.found_in(&p.first_step),
                "{message}: {}",
                p.first_step
            );
        }
    }

    #[test]
    fn nothing_divided_is_shared_out_not_guessed() {
        let p = student_problem("0 ÷ 5").unwrap();
        assert!(
            p.first_step.contains("nothing to share"),
            "{}",
            p.first_step
        );
        assert!(!p.first_step.contains("× 10"), "{}", p.first_step);
    }

    #[test]
    fn a_first_step_knows_the_number_it_asks_for() {
        let cases = [
            ("add 1/4 and 2/3", Some("12")),
            ("1/5 + 2/5", Some("3")),
            ("20% of 50", Some("5")),
            ("3/4 of 20", Some("5")),
            ("47 + 38", Some("15")),
            ("72 - 38", Some("4")),
            ("3x - 5 = 10", Some("15")),
            ("2:3 share 40", Some("5")),
            ("3 + 4", None),
            ("12 x 3", None),
        ];
        for (message, expects) in cases {
            let p = student_problem(message).unwrap();
            assert_eq!(
                p.first_step_expects.as_deref(),
                expects,
                "{message}: {}",
                p.first_step
            );
        }
    }

    #[test]
    fn a_power_on_its_own_is_said_as_a_multiplication() {
        let p = student_problem("what does 2^3 mean").expect("a problem");
        assert_eq!(p.answer, "8");
        assert!(
            p.first_step
                .contains("three 2s multiplied together: 2 × 2 × 2"),
            "{}",
            p.first_step
        );
        assert!(!p.first_step.contains("Brackets"), "{}", p.first_step);
    }
}
