//! Fractions, decimals, percentages and ratios asked in words: a fraction
//! written as a decimal or a percentage, a decimal or a percentage as a
//! fraction, a fraction simplified, an amount shared in a ratio.

use std::sync::LazyLock;

use regex::Regex;

use super::problem::{SmallerSteps, StudentProblem};
use super::reading::plain_fractions;
use super::working::number_text;
use crate::engine::practice::solution::HintStep;
use crate::math::{self, Number};

/// The bottoms a fraction is written over to reach an exact decimal; a
/// fraction none of them is a multiple of is worked by dividing.
const EXACT_BOTTOMS: [i64; 3] = [100, 1000, 10_000];

/// What a fraction is to be written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Decimal,
    Percentage,
}

/// A fraction to write as a decimal or a percentage ("3/4 as a decimal",
/// "convert 2/5 to a percentage", "what percentage is 3/20"), worked
/// through the equivalent fraction over 100 (or 1000): for denominators
/// that go into 1000, so the answer is exact.
pub(super) fn conversion(message: &str) -> Option<StudentProblem> {
    static AS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(\d{1,4})\s*/\s*(\d{1,4})\b[^\d/]{0,25}?\b(?:as|to|into|in)\s+(?:an?\s+)?(decimals?|percent(?:age)?s?|per cent|%)")
            .expect("a valid pattern")
    });
    static WHAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\bwhat\s+(decimal|percent(?:age)?|per cent)\s+is\s+(\d{1,4})\s*/\s*(\d{1,4})\b",
        )
        .expect("a valid pattern")
    });
    let plain = plain_fractions(message);
    let (n, d, written) = if let Some(c) = AS.captures(&plain) {
        let written = if c[3].to_lowercase().starts_with("dec") {
            Written::Decimal
        } else {
            Written::Percentage
        };
        (
            c[1].parse::<i64>().ok()?,
            c[2].parse::<i64>().ok()?,
            written,
        )
    } else {
        let c = WHAT.captures(&plain)?;
        let written = if c[1].to_lowercase().starts_with("dec") {
            Written::Decimal
        } else {
            Written::Percentage
        };
        (
            c[2].parse::<i64>().ok()?,
            c[3].parse::<i64>().ok()?,
            written,
        )
    };
    if d == 0 {
        return None;
    }
    // Over 100 (or 1000): what the bottom is multiplied by to get there.
    let Some(over) = EXACT_BOTTOMS.into_iter().find(|t| t % d == 0) else {
        return by_division(n, d, written);
    };
    let factor = over / d;
    let top = n * factor;
    let exact = |num: i64, den: i64| {
        math::Rational::new(i128::from(num), i128::from(den))
            .ok()
            .map(|r| number_text(Number::Exact(r), true))
    };
    let decimal = exact(top, over)?;
    let percent = exact(top * 100, over)?;
    let (place, places, digit) = match over {
        100 => ("hundredths", "Hundredths", "second"),
        1000 => ("thousandths", "Thousandths", "third"),
        _ => ("ten-thousandths", "Ten-thousandths", "fourth"),
    };
    // In words ("75 hundredths"), not 75/100: that fraction is already
    // the answer, which the steps must not give away.
    let (text, answer, finishing, smaller_finishing) = match written {
        Written::Decimal => (
            format!("{n}/{d} as a decimal"),
            decimal,
            format!("So {n}/{d} is {top} {place}. What is that as a decimal?"),
            Some(format!(
                "{places} are the {digit} digit after the decimal point. How do you write {top} {place} with a decimal point?"
            )),
        ),
        Written::Percentage => (
            format!("{n}/{d} as a percentage"),
            format!("{percent}%"),
            format!(
                "So {n}/{d} is {top} {place}. Per cent means out of 100, so what is {n}/{d} as a percentage?"
            ),
            None,
        ),
    };
    // With 1 on top the top is the number just found: nothing to multiply.
    let middle_step = (n != 1).then(|| {
        let ask = format!("Multiply the top by {factor} as well: what is {n} × {factor}?");
        HintStep {
            tell: ask.clone(),
            ask,
            expects: Some(top.to_string()),
            smaller: None,
        }
    });
    Some(StudentProblem {
        text,
        answer,
        solves_for: None,
        first_step: format!(
            "Write it with {over} on the bottom: what do you multiply {d} by to get {over}?"
        ),
        first_step_expects: Some(factor.to_string()),
        middle_step,
        later_values: Vec::new(),
        finishing_step: finishing,
        smaller: SmallerSteps {
            first: Some(format!("What is {over} ÷ {d}?")),
            finishing: smaller_finishing,
        },
    })
}

/// A fraction whose bottom does not go into 1000 (1/3, 5/6, 2/7), worked
/// by dividing the top by the bottom: the first digit is asked, then how
/// a remainder that comes back makes the digits repeat for ever.
fn by_division(n: i64, d: i64, written: Written) -> Option<StudentProblem> {
    let expansion = Expansion::of(n, d)?;
    let whole = n / d;
    let start = n % d;
    let first_digit = start * 10 / d;
    let left = start * 10 % d;
    let (text, answer, asked) = match written {
        Written::Decimal => (
            format!("{n}/{d} as a decimal"),
            expansion.shown(),
            format!("What is {n}/{d} as a decimal?"),
        ),
        Written::Percentage => (
            format!("{n}/{d} as a percentage"),
            format!("{}%", Expansion::of(n * 100, d)?.shown()),
            format!(
                "Per cent means out of 100, so multiply that decimal by 100: what is {n}/{d} as a percentage?"
            ),
        ),
    };
    let opening = if whole == 0 {
        format!("{d} doesn't go into {n}, so write 0 and a decimal point")
    } else {
        format!("{n} ÷ {d} is {whole} remainder {start}, so write {whole} and a decimal point")
    };
    let repeats = if expansion.block.is_empty() {
        format!(
            "Keep going: bring down a 0 each time and divide by {d} again, until nothing is left over."
        )
    } else if left == start {
        format!(
            "The {left} left over is what you started with, so the {first_digit} comes again and again for ever."
        )
    } else {
        format!(
            "Keep going: bring down a 0 each time and divide by {d} again. Once a remainder comes back, the digits repeat from there for ever."
        )
    };
    Some(StudentProblem {
        text,
        answer,
        solves_for: None,
        first_step: format!(
            "A fraction is a division: {n}/{d} means {n} ÷ {d}. {opening}, then share {} tenths between {d}. What is {} ÷ {d}, leaving out the remainder?",
            start * 10,
            start * 10
        ),
        first_step_expects: Some(first_digit.to_string()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So {} ÷ {d} is {first_digit} with {left} left over. {repeats} {asked}{}",
            start * 10,
            if expansion.block.is_empty() {
                String::new()
            } else {
                format!(
                    " (Repeating digits are written with dots: {})",
                    dots_example(n, d)
                )
            }
        ),
        smaller: SmallerSteps {
            first: Some(format!("How many times does {d} fit into {}?", start * 10)),
            finishing: Some(format!("Bring down a 0: what is {} ÷ {d}?", left * 10)),
        },
    })
}

/// A conversion of `problem` shown whole, for a question session that
/// answers outright: "3/8 as a decimal" through thousandths, "1/3 as a
/// decimal" by dividing, "0.75 as a fraction" through hundredths.
pub(super) fn conversion_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    static FRACTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d+)/(\d+) as a (decimal|percentage)$").expect("a valid pattern")
    });
    static TO_FRACTION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\S+) as a fraction$").expect("a valid pattern"));
    if let Some(c) = TO_FRACTION.captures(&problem.text) {
        let shown = &c[1];
        let (top, over): (i64, i64) = match shown.strip_suffix('%') {
            Some(percent) => (percent.parse().ok()?, 100),
            None => {
                let (whole, places) = shown.split_once('.')?;
                (
                    format!("{whole}{places}").parse().ok()?,
                    10_i64.checked_pow(u32::try_from(places.len()).ok()?)?,
                )
            }
        };
        let place = match over {
            10 => "tenths",
            100 => "hundredths",
            _ => "thousandths",
        };
        let hcf = math::gcd(top, over);
        let mut said = vec![format!("{shown} is {top} {place}, which is {top}/{over}.")];
        if hcf > 1 {
            said.push(format!(
                "Divide the top and the bottom by {hcf}, the biggest number that goes into both: {shown} = {}.",
                problem.answer
            ));
        }
        return Some(said);
    }
    let c = FRACTION.captures(&problem.text)?;
    let (n, d): (i64, i64) = (c[1].parse().ok()?, c[2].parse().ok()?);
    let percentage = &c[3] == "percentage";
    let decimal = match EXACT_BOTTOMS.into_iter().find(|t| t % d == 0) {
        Some(over) => {
            let factor = over / d;
            let steps = format!(
                "Make the bottom {over}: {d} × {factor} = {over}, so multiply the top by {factor} too: {n}/{d} = {}/{over}.",
                n * factor
            );
            let value = Expansion::of(n, d)?.shown();
            (steps, value)
        }
        None => {
            let expansion = Expansion::of(n, d)?;
            let steps = format!(
                "A fraction is a division, so work out {n} ÷ {d}. Each remainder carries on to the next digit, and once a remainder comes back the digits repeat for ever: the {} repeats.",
                expansion.block
            );
            (steps, expansion.shown())
        }
    };
    let (steps, value) = decimal;
    let mut said = vec![steps];
    // "0.333..." ends the sentence with its own dots.
    let ended = |value: &str| {
        if value.ends_with("...") {
            value.to_owned()
        } else {
            format!("{value}.")
        }
    };
    if percentage {
        // A long repeating block is hard to read: rounded as well.
        let about = Expansion::of(n * 100, d)
            .filter(|e| e.block.len() > 2)
            .map(|_| format!(" (about {:.2}%)", (n * 100) as f64 / d as f64))
            .unwrap_or_default();
        said.push(format!(
            "As a decimal that is {value}; per cent means out of 100, so multiply by 100: {n}/{d} = {}{about}.",
            problem.answer
        ));
    } else {
        said.push(format!("So {n}/{d} = {}", ended(&value)));
    }
    Some(said)
}

/// How repeating digits are written, shown on a fraction other than the
/// one asked (whose answer it would give away).
fn dots_example(n: i64, d: i64) -> &'static str {
    if n * 9 == 7 * d {
        "1/9 is 0.111..."
    } else {
        "7/9 is 0.777..."
    }
}

/// A fraction's decimal digits by long division: those before the block
/// that repeats, and the block.
struct Expansion {
    whole: i64,
    before: String,
    block: String,
}

impl Expansion {
    /// Longest repeating block worked out; a bottom this size is already
    /// beyond what a student divides by hand.
    const LONGEST: usize = 12;

    fn of(n: i64, d: i64) -> Option<Expansion> {
        if d <= 0 || n < 0 {
            return None;
        }
        let mut seen: Vec<i64> = Vec::new();
        let mut digits = String::new();
        let mut remainder = n % d;
        while remainder != 0 && !seen.contains(&remainder) {
            if seen.len() > Self::LONGEST {
                return None;
            }
            seen.push(remainder);
            digits.push(char::from_digit(
                u32::try_from(remainder * 10 / d).ok()?,
                10,
            )?);
            remainder = remainder * 10 % d;
        }
        let at = seen
            .iter()
            .position(|&r| r == remainder)
            .unwrap_or(digits.len());
        Some(Expansion {
            whole: n / d,
            before: digits[..at].to_owned(),
            block: digits[at..].to_owned(),
        })
    }

    /// Written with the repeating block shown often enough for a reader
    /// (and the grader) to see it repeat: 0.333..., 0.1666..., 0.2857142857...
    fn shown(&self) -> String {
        let times = if self.block.len() == 1 { 3 } else { 2 };
        let dots = if self.block.is_empty() { "" } else { "..." };
        format!(
            "{}.{}{}{dots}",
            self.whole,
            self.before,
            self.block.repeat(times)
        )
    }
}

/// A decimal or a whole percentage to write as a fraction ("0.75 as a
/// fraction", "convert 40% to a fraction", "what fraction is 0.6"),
/// worked through tenths, hundredths or thousandths, then simplified.
pub(super) fn to_fraction(message: &str) -> Option<StudentProblem> {
    const NUMBER: &str = r"(\d{0,4}\.\d{1,3}|\d{1,3}\s*(?:%|per\s?cent\b))";
    static AS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"(?i)(?:^|[^\d.]){NUMBER}[^\d]{{0,25}}?\b(?:as|to|into|in)\s+(?:an?\s+)?fractions?\b"
        ))
        .expect("a valid pattern")
    });
    static WHAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"(?i)\bwhat\s+fraction\s+is\s+{NUMBER}")).expect("a valid pattern")
    });
    let c = AS.captures(message).or_else(|| WHAT.captures(message))?;
    let written = c.get(1)?.as_str();
    let percent = !written.contains('.');
    let digits: String = written
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (whole, places) = digits.split_once('.').unwrap_or((&digits, ""));
    let top: i64 = format!("{whole}{places}").parse().ok()?;
    if top == 0 {
        return None;
    }
    let over = if percent {
        100
    } else {
        10_i64.pow(u32::try_from(places.len()).ok()?)
    };
    let hcf = math::gcd(top, over);
    let shown = if percent {
        format!("{top}%")
    } else {
        format!("{}.{places}", if whole.is_empty() { "0" } else { whole })
    };
    let unit = match over {
        10 => "tenths",
        100 => "hundredths",
        _ => "thousandths",
    };
    // Said in words ("75 hundredths"), not as 75/100: that is already an
    // answer, which the steps must not give away.
    let (first_step, smaller_first) = if percent {
        (
            format!("Per cent means out of 100: how many hundredths is {shown}?"),
            None,
        )
    } else {
        let count = match places.len() {
            1 => "one digit".to_owned(),
            n => format!("{n} digits"),
        };
        (
            format!(
                "{shown} has {count} after the decimal point, so count it in {unit}: how many {unit} is {shown}?"
            ),
            Some(format!("What is {shown} × {over}?")),
        )
    };
    // Simplifying is a step of its own: the highest common factor first,
    // then the division by it.
    let (middle_step, finishing_step, smaller_finishing) = if hcf == 1 {
        (
            None,
            format!("So {shown} is {top} {unit}. How do you write that as a fraction?"),
            None,
        )
    } else {
        let ask = format!(
            "So {shown} is {top} {unit}. To write it in its simplest form, find the biggest number that goes into both {top} and {over}. What is it?"
        );
        (
            Some(HintStep {
                tell: ask.clone(),
                ask,
                expects: Some(hcf.to_string()),
                smaller: Some(format!("Which numbers divide into {top} exactly?")),
            }),
            format!(
                "So divide the top, {top}, and the bottom, {over}, by {hcf}. What fraction do you get?"
            ),
            Some(format!(
                "What is {top} ÷ {hcf}, and what is {over} ÷ {hcf}?"
            )),
        )
    };
    Some(StudentProblem {
        text: format!("{shown} as a fraction"),
        answer: format!("{}/{}", top / hcf, over / hcf),
        solves_for: None,
        first_step,
        first_step_expects: Some(top.to_string()),
        middle_step,
        later_values: Vec::new(),
        finishing_step,
        smaller: SmallerSteps {
            first: smaller_first,
            finishing: smaller_finishing,
        },
    })
}

/// A fraction to simplify, asked in words ("simplify 12/18", "12/18 in
/// its simplest form"), when it can be: through its highest common factor.
pub(super) fn simplifying(message: &str) -> Option<StudentProblem> {
    static SIMPLIFY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\bsimplif\w*\D{0,12}?\b(\d{1,4})\s*/\s*(\d{1,4})\b|\b(\d{1,4})\s*/\s*(\d{1,4})\b[^\d/]{0,20}?\b(?:in\s+)?(?:its\s+)?(?:simplest form|lowest terms|simplified)")
            .expect("a valid pattern")
    });
    let c = SIMPLIFY.captures(message)?;
    let (n, d) = match (c.get(1), c.get(2)) {
        (Some(n), Some(d)) => (n.as_str(), d.as_str()),
        _ => (c.get(3)?.as_str(), c.get(4)?.as_str()),
    };
    let (n, d): (i64, i64) = (n.parse().ok()?, d.parse().ok()?);
    if n == 0 || d == 0 {
        return None;
    }
    let hcf = math::gcd(n, d);
    if hcf == 1 {
        return None;
    }
    Some(StudentProblem {
        text: format!("{n}/{d} in its simplest form"),
        answer: format!("{}/{}", n / hcf, d / hcf),
        solves_for: None,
        first_step: format!(
            "Find the biggest number that divides into both {n} and {d}. What is it?"
        ),
        first_step_expects: Some(hcf.to_string()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So divide the top and the bottom by {hcf}. What is {n}/{d} in its simplest form?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("Which numbers divide into {n} exactly?")),
            finishing: Some(format!("What is {n} ÷ {hcf}, and what is {d} ÷ {hcf}?")),
        },
    })
}

/// A share of an amount in a ratio, worked out: both shares. Three steps,
/// one question each: the parts altogether, what one part is worth, then
/// the shares.
pub(super) fn shared_in_ratio(message: &str) -> Option<StudentProblem> {
    let (amount, p, q) = ratio_share(message)?;
    let parts = p + q;
    let part = amount / parts;
    let one_part =
        format!("So {amount} is split into {parts} equal parts. How much is one part worth?");
    Some(StudentProblem {
        text: format!("{amount} shared in the ratio {p}:{q}"),
        answer: format!("{} and {}", part * p, part * q),
        solves_for: None,
        first_step: format!(
            "The ratio {p}:{q} splits {amount} into {p} + {q} equal parts. How many parts is that altogether?"
        ),
        first_step_expects: Some(parts.to_string()),
        middle_step: Some(HintStep {
            tell: one_part.clone(),
            ask: one_part,
            expects: Some(part.to_string()),
            smaller: Some(format!("What is {amount} ÷ {parts}?")),
        }),
        later_values: Vec::new(),
        finishing_step: format!(
            "One part is {part}. How much are {p} parts, and how much are {q} parts?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("What is {p} + {q}?")),
            finishing: Some(format!("What is {p} × {part}, and what is {q} × {part}?")),
        },
    })
}

/// "Share 40 in the ratio 2:3", "2:3 share 40": the amount and the parts.
fn ratio_share(message: &str) -> Option<(u64, u64, u64)> {
    static FORMS: std::sync::LazyLock<Vec<regex::Regex>> = std::sync::LazyLock::new(|| {
        [
            r"\b(?:share|split|divide|sharing|splitting|dividing)\s+[£$€]?(\d+)\D{0,40}?\bratio\s+(?:of\s+)?(\d+)\s*:\s*(\d+)",
            r"\b(?:share|split|divide)\s+[£$€]?(\d+)\s+(?:in|into)\s+(\d+)\s*:\s*(\d+)",
            // As the tutor says it back: "60 shared in the ratio 2:3".
            r"(?:^|\s)[£$€]?(\d+)\s+shared\s+in\s+the\s+ratio\s+(\d+)\s*:\s*(\d+)",
        ]
        .iter()
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect()
    });
    static PARTS_FIRST: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| {
            regex::Regex::new(
                r"\b(\d+)\s*:\s*(\d+)\D{0,12}?\b(?:share|split|divide|shared|split)\s+[£$€]?(\d+)",
            )
            .ok()
        });
    let text = message.to_lowercase();
    let number = |c: Option<regex::Match>| c.and_then(|m| m.as_str().parse::<u64>().ok());
    let found = FORMS
        .iter()
        .find_map(|r| r.captures(&text))
        .and_then(|c| Some((number(c.get(1))?, number(c.get(2))?, number(c.get(3))?)))
        .or_else(|| {
            let c = PARTS_FIRST.as_ref()?.captures(&text)?;
            Some((number(c.get(3))?, number(c.get(1))?, number(c.get(2))?))
        })?;
    let (amount, p, q) = found;
    (p > 0 && q > 0 && amount % (p + q) == 0).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::super::student_problem;
    use super::conversion_steps;
    use crate::content::workflow::GradingSettings;
    use crate::engine::grading;
    use crate::engine::reply::answer_guard::PendingAnswer;
    use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

    #[test]
    fn fractions_are_simplified_and_written_another_way() {
        let cases = [
            (
                "how do i simplify 12/18",
                "12/18 in its simplest form",
                "2/3",
                "6",
            ),
            (
                "what is 24/36 in simplest form?",
                "24/36 in its simplest form",
                "2/3",
                "12",
            ),
            ("what is 3/4 as a decimal", "3/4 as a decimal", "0.75", "25"),
            (
                "convert 3/8 into a decimal",
                "3/8 as a decimal",
                "0.375",
                "125",
            ),
            (
                "how do i write 2/5 as a percentage",
                "2/5 as a percentage",
                "40%",
                "20",
            ),
            (
                "what percentage is 3/20",
                "3/20 as a percentage",
                "15%",
                "5",
            ),
            ("1/8 as a percent", "1/8 as a percentage", "12.5%", "125"),
            (
                "how do i convert 0.75 to a fraction",
                "0.75 as a fraction",
                "3/4",
                "75",
            ),
            ("write .6 as a fraction", "0.6 as a fraction", "3/5", "6"),
            (
                "what fraction is 0.125",
                "0.125 as a fraction",
                "1/8",
                "125",
            ),
            ("0.3 as a fraction?", "0.3 as a fraction", "3/10", "3"),
            (
                "how do you change 40% into a fraction",
                "40% as a fraction",
                "2/5",
                "40",
            ),
        ];
        for (message, text, answer, first) in cases {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(
                (p.text.as_str(), p.answer.as_str()),
                (text, answer),
                "{message}"
            );
            assert_eq!(p.first_step_expects.as_deref(), Some(first), "{message}");
            assert!(
                !p.first_step.contains(answer),
                "{message}: {}",
                p.first_step
            );
        }
        // Nothing to simplify.
        assert_eq!(student_problem("simplify 3/7"), None);
    }

    #[test]
    fn a_conversion_is_shown_whole_in_its_own_numbers() {
        let shown = |message: &str| {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            conversion_steps(&p)
                .unwrap_or_else(|| panic!("{message}: no steps"))
                .join(" ")
        };
        assert!(shown("3/8 as a decimal").ends_with("3/8 = 375/1000. So 3/8 = 0.375."));
        assert!(shown("1/3 as a decimal").ends_with("So 1/3 = 0.333..."));
        assert!(shown("2/7 as a percentage").ends_with("(about 28.57%)."));
        assert!(shown("2/3 as a percentage").ends_with("2/3 = 66.666...%."));
        assert!(shown("0.75 as a fraction").ends_with("0.75 = 3/4."));
        assert_eq!(
            shown("0.7 as a fraction"),
            "0.7 is 7 tenths, which is 7/10."
        );
        assert!(shown("what fraction is 40%").ends_with("40% = 2/5."));
    }

    #[test]
    fn a_decimal_that_never_ends_is_worked_by_dividing() {
        let cases = [
            ("what is 1/3 as a decimal", "0.333...", "3"),
            ("5/6 as a decimal", "0.8333...", "8"),
            ("convert 2/7 into a decimal", "0.285714285714...", "2"),
            ("what is 1/3 as a percentage", "33.333...%", "3"),
            // 16 goes into 10,000: over ten-thousandths, exactly.
            ("1/16 as a decimal", "0.0625", "625"),
        ];
        let settings = GradingSettings::default();
        for (message, answer, first) in cases {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(p.answer, answer, "{message}");
            assert_eq!(p.first_step_expects.as_deref(), Some(first), "{message}");
            let guard = PendingAnswer::new("own problem", &p.text, &p.answer).expect("a guard");
            for step in [&p.first_step, &p.finishing_step] {
                assert!(!guard.found_in(step), "{message}: {step}");
            }
        }
        // The dots mean the digits repeat: the answer grades as the fraction.
        let p = student_problem("what is 2/3 as a decimal").expect("a problem");
        let expected = ExpectedAnswer {
            kind: AnswerKind::Number,
            value: p.answer.clone(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        };
        let grade = grading::grade(&expected, "2/3", None, &settings);
        assert_eq!(grade.result, GradeOutcome::Correct, "{}", grade.reason);
    }
}
