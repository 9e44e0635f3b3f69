//! A student's question comparing two numbers ("is 2/3 the same as 8/12?",
//! "is 0.5 bigger than 1/3?"), answered by code with the verdict and why,
//! so a question that asks yes or no gets a yes or a no. Pure text work.

use std::sync::LazyLock;

use regex::Regex;

use crate::engine::interpret::student_math::value_of;
use crate::math::Number;

/// A number as students write one to compare: `-7`, `0.25`, `2/3`.
static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[-−]?\d+(?:\.\d+)?(?:\s*/\s*\d+)?").expect("a valid pattern"));

/// What a comparison question asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Equal,
    Bigger,
    Smaller,
}

const RELATIONS: &[(&str, Asked)] = &[
    ("the same as", Asked::Equal),
    ("same as", Asked::Equal),
    ("equal to", Asked::Equal),
    ("equivalent to", Asked::Equal),
    ("bigger than", Asked::Bigger),
    ("greater than", Asked::Bigger),
    ("larger than", Asked::Bigger),
    ("more than", Asked::Bigger),
    ("higher than", Asked::Bigger),
    ("smaller than", Asked::Smaller),
    ("less than", Asked::Smaller),
    ("lower than", Asked::Smaller),
];

/// The answer to `message` when it asks whether two numbers are equal, or
/// one bigger or smaller than the other; `None` for anything else.
pub fn answer(message: &str) -> Option<String> {
    if let Some(ratios) = ratios_compared(message) {
        return ratios;
    }
    let Comparison { left, right, asked } = read(message)?;
    let (a, b) = (value_of(&left)?, value_of(&right)?);
    let equal = a.approx_eq(b);
    let bigger = !equal && a.to_f64() > b.to_f64();
    let yes = match asked {
        Asked::Equal => equal,
        Asked::Bigger => bigger,
        Asked::Smaller => !equal && !bigger,
    };
    let verdict = if yes { "Yes" } else { "No" };
    if equal {
        let why = scaled(&left, &right)
            .map(|why| format!(" {why}"))
            .unwrap_or_default();
        return Some(format!(
            "{verdict}: {left} and {right} are the same number.{why}"
        ));
    }
    let (more, less) = if bigger {
        (&left, &right)
    } else {
        (&right, &left)
    };
    let why = if a.to_f64() < 0.0 || b.to_f64() < 0.0 {
        format!(" On a number line, {less} is further to the left than {more}.")
    } else if is_fraction(&left) || is_fraction(&right) {
        format!(
            " As decimals, {left} is about {} and {right} is about {}.",
            decimal(a),
            decimal(b)
        )
    } else {
        String::new()
    };
    // Said the way it was asked: "is -2 less than 1?" "Yes: -2 is smaller than 1."
    let said = if asked == Asked::Smaller {
        format!("{less} is smaller than {more}")
    } else {
        format!("{more} is bigger than {less}")
    };
    Some(format!("{verdict}: {said}.{why}"))
}

/// Whether `message` compares two numbers that `pending` (the question
/// the student was asked) does not both name: "is 2/6 the same as 1/3?"
/// asked during a percentage question is a question of its own, where
/// "is 3/4 bigger than 2/3?" after "which is bigger, 3/4 or 2/3?" is a
/// guess at the answer.
pub fn asks_beyond(message: &str, pending: &str) -> bool {
    let Some(Comparison { left, right, .. }) = read(message) else {
        return false;
    };
    let named: Vec<String> = NUMBER.find_iter(pending).map(squeezed).collect();
    !(named.contains(&left) && named.contains(&right))
}

/// Two numbers a yes-or-no question compares, as written.
struct Comparison {
    left: String,
    right: String,
    asked: Asked,
}

/// The comparison `message` asks about, if it asks one.
fn read(message: &str) -> Option<Comparison> {
    let lower = message.to_lowercase();
    if !asks_yes_or_no(&lower) {
        return None;
    }
    let (at, phrase, asked) = relation(&lower)?;
    let left = NUMBER.find_iter(&lower[..at]).last().map(squeezed)?;
    let right = NUMBER
        .find_iter(&lower[at + phrase.len()..])
        .next()
        .map(squeezed)?;
    Some(Comparison { left, right, asked })
}

/// "is 2:3 the same as 4:6?": equivalent when one is the other with both
/// parts multiplied by the same number. `Some(None)` when ratios are
/// compared by size, which has no single answer ("is 2:3 bigger than
/// 3:4?" may mean the first part's share, or the ratio as a fraction):
/// no verdict is given rather than one on two of their numbers.
fn ratios_compared(message: &str) -> Option<Option<String>> {
    static RATIO: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(\d+)\s*:\s*(\d+)").expect("a valid pattern"));
    let lower = message.to_lowercase();
    if !asks_yes_or_no(&lower) {
        return None;
    }
    let (at, phrase, asked) = relation(&lower)?;
    let left = RATIO.captures_iter(&lower[..at]).last()?;
    let right = RATIO.captures(&lower[at + phrase.len()..])?;
    if asked != Asked::Equal {
        return Some(None);
    }
    let part = |c: &regex::Captures<'_>, i: usize| c[i].parse::<i64>().ok();
    let (a, b, c, d) = (
        part(&left, 1)?,
        part(&left, 2)?,
        part(&right, 1)?,
        part(&right, 2)?,
    );
    let (first, second) = (format!("{a}:{b}"), format!("{c}:{d}"));
    if a * d != b * c || [a, b, c, d].contains(&0) {
        return Some(Some(format!(
            "No: {first} and {second} are not equivalent ratios. Multiplying or dividing both parts of {first} by the same number never gives {second}: written as fractions, {a}/{b} and {c}/{d} are different numbers."
        )));
    }
    let how = if c > a && c % a == 0 {
        format!(
            " Multiply both parts of {first} by {} and you get {second}.",
            c / a
        )
    } else if a > c && a % c == 0 {
        format!(
            " Divide both parts of {first} by {} and you get {second}.",
            a / c
        )
    } else {
        let hcf = crate::math::gcd(a, b);
        format!(" Both simplify to {}:{}.", a / hcf, b / hcf)
    };
    Some(Some(format!(
        "Yes: {first} and {second} are equivalent ratios.{how}"
    )))
}

/// The first relation the question names ("the same as", "bigger
/// than"), where it starts, and what it asks.
fn relation(lower: &str) -> Option<(usize, &'static str, Asked)> {
    RELATIONS
        .iter()
        .filter_map(|(p, a)| lower.find(p).map(|at| (at, *p, *a)))
        .min_by_key(|(at, p, _)| (*at, std::cmp::Reverse(p.len())))
}

/// A yes-or-no question: "what is 3 more than 4?" asks for a sum.
fn asks_yes_or_no(lower: &str) -> bool {
    let opening = lower.trim_start();
    ["is ", "are ", "does ", "so is "]
        .iter()
        .any(|w| opening.starts_with(w))
}

fn squeezed(m: regex::Match<'_>) -> String {
    m.as_str().replace(' ', "").replace('−', "-")
}

fn fraction(text: &str) -> Option<(i64, i64)> {
    let (top, bottom) = text.split_once('/')?;
    Some((top.trim().parse().ok()?, bottom.trim().parse().ok()?))
}

fn is_fraction(text: &str) -> bool {
    fraction(text).is_some()
}

/// How one fraction becomes the other by multiplying (or dividing) its top
/// and bottom by the same whole number.
fn scaled(left: &str, right: &str) -> Option<String> {
    let ((a, b), (c, d)) = (fraction(left)?, fraction(right)?);
    if a == 0 || b == 0 {
        return None;
    }
    if c % a == 0 && d % b == 0 && c / a == d / b && c / a > 1 {
        return Some(format!(
            "Multiply the top and bottom of {left} by {} and you get {right}.",
            c / a
        ));
    }
    if c != 0 && d != 0 && a % c == 0 && b % d == 0 && a / c == b / d && a / c > 1 {
        return Some(format!(
            "Divide the top and bottom of {left} by {} and you get {right}.",
            a / c
        ));
    }
    None
}

/// A value to at most three decimal places, without trailing zeros.
fn decimal(n: Number) -> String {
    let text = format!("{:.3}", n.to_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_of_other_numbers_is_a_question_of_its_own() {
        let pending = "Percent means out of a hundred: how many hundredths is 0.4?";
        assert!(asks_beyond("is 2/6 the same as 1/3?", pending));
        let pending = "Which is bigger, 3/4 or 2/3?";
        assert!(!asks_beyond("is 3/4 bigger than 2/3?", pending));
        assert!(asks_beyond("is 3/4 bigger than 5/8?", pending));
        assert!(!asks_beyond("is it 3/4?", pending), "not a comparison");
    }

    #[test]
    fn equal_fractions_are_shown_equal_with_the_factor() {
        assert_eq!(
            answer("is 2/3 the same as 8/12").as_deref(),
            Some(
                "Yes: 2/3 and 8/12 are the same number. Multiply the top and bottom of 2/3 by 4 and you get 8/12."
            )
        );
        assert_eq!(
            answer("is 6/8 equal to 3/4?").as_deref(),
            Some(
                "Yes: 6/8 and 3/4 are the same number. Divide the top and bottom of 6/8 by 2 and you get 3/4."
            )
        );
        assert_eq!(
            answer("is 0.5 the same as 1/2").as_deref(),
            Some("Yes: 0.5 and 1/2 are the same number.")
        );
    }

    #[test]
    fn unequal_numbers_say_which_is_bigger_and_why() {
        assert_eq!(
            answer("is -7 bigger than -3").as_deref(),
            Some("No: -3 is bigger than -7. On a number line, -7 is further to the left than -3.")
        );
        assert_eq!(
            answer("is 2/3 the same as 3/4?").as_deref(),
            Some(
                "No: 3/4 is bigger than 2/3. As decimals, 2/3 is about 0.667 and 3/4 is about 0.75."
            )
        );
        assert_eq!(
            answer("is −2 less than 1").as_deref(),
            Some("Yes: -2 is smaller than 1. On a number line, -2 is further to the left than 1.")
        );
        assert_eq!(
            answer("is 0.3 smaller than 0.25?").as_deref(),
            Some("No: 0.25 is smaller than 0.3.")
        );
    }

    #[test]
    fn ratios_are_equivalent_or_not_and_never_compared_as_two_numbers() {
        assert_eq!(
            answer("is 2:3 the same as 4:6?").as_deref(),
            Some(
                "Yes: 2:3 and 4:6 are equivalent ratios. Multiply both parts of 2:3 by 2 and you get 4:6."
            )
        );
        assert_eq!(
            answer("is 6:9 equivalent to 4:6").as_deref(),
            Some("Yes: 6:9 and 4:6 are equivalent ratios. Both simplify to 2:3.")
        );
        assert!(
            answer("is 2:3 the same as 3:4")
                .unwrap()
                .starts_with("No: 2:3 and 3:4 are not equivalent")
        );
        assert_eq!(answer("is 2:3 bigger than 3:4"), None);
    }

    #[test]
    fn statements_and_other_questions_are_not_comparisons() {
        assert_eq!(answer("2/3 is the same as 8/12"), None);
        assert_eq!(answer("is a ratio the same as a fraction?"), None);
        assert_eq!(answer("what is 3 more than 4?"), None);
    }
}
