//! Properties of grading: deterministic, symmetric for plain numbers, every
//! supported way of writing a number grades correct against itself, and no
//! input — however long, deep or hostile — panics or fails to come back.

use proptest::prelude::*;
use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::grading::{self, Grade};
use tutorflow::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

fn expected(kind: AnswerKind, value: &str) -> ExpectedAnswer {
    ExpectedAnswer {
        kind,
        value: value.to_owned(),
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    }
}

fn grade_number(expected_value: &str, answer: &str) -> Grade {
    grading::grade(
        &expected(AnswerKind::Number, expected_value),
        answer,
        None,
        &GradingSettings::default(),
    )
}

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// `n` in English words, British (`one hundred and five`) or not.
fn words(n: u64, british: bool) -> String {
    fn below_thousand(n: u64, british: bool) -> String {
        let (hundreds, rest) = (n / 100, n % 100);
        let rest_words = match rest {
            0 => String::new(),
            r if r < 20 => ONES[r as usize].to_owned(),
            r if r % 10 == 0 => TENS[(r / 10) as usize].to_owned(),
            r => format!("{}-{}", TENS[(r / 10) as usize], ONES[(r % 10) as usize]),
        };
        match (hundreds, rest) {
            (0, _) => rest_words,
            (h, 0) => format!("{} hundred", ONES[h as usize]),
            (h, _) if british => format!("{} hundred and {rest_words}", ONES[h as usize]),
            (h, _) => format!("{} hundred {rest_words}", ONES[h as usize]),
        }
    }
    if n == 0 {
        return "zero".to_owned();
    }
    let mut parts = Vec::new();
    for (scale, name) in [(1_000_000, "million"), (1_000, "thousand")] {
        if !(n / scale).is_multiple_of(1000) {
            parts.push(format!(
                "{} {name}",
                below_thousand(n / scale % 1000, british)
            ));
        }
    }
    if !n.is_multiple_of(1000) {
        parts.push(below_thousand(n % 1000, british));
    }
    parts.join(" ")
}

/// `3/4` as `three quarters`, `1/2` as `a half`.
fn fraction_words(num: u64, den: u64) -> String {
    let name = match den {
        2 => "half",
        3 => "third",
        4 => "quarter",
        5 => "fifth",
        8 => "eighth",
        10 => "tenth",
        _ => unreachable!("only generated denominators"),
    };
    match (num, den) {
        (1, _) => format!("a {name}"),
        (n, 2) => format!("{} halves", words(n, false)),
        (n, _) => format!("{} {name}s", words(n, false)),
    }
}

/// Digits of `n` grouped in threes with `separator`.
fn grouped(n: u64, separator: &str) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push_str(separator);
        }
        out.push(c);
    }
    out
}

/// A decimal with up to three places: whole part, fraction digits, places.
fn decimal_text(whole: u64, frac: u64, places: u32) -> String {
    if places == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{frac:0width$}", width = places as usize)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A whole or decimal number in any everyday format grades correct
    /// against its plain form.
    #[test]
    fn decimals_in_every_format_are_correct(
        whole in 0u64..2_000_000,
        frac in 0u64..1000,
        places in 0u32..4,
        negative in any::<bool>(),
        format in 0usize..9,
    ) {
        let frac = if places == 0 { 0 } else { frac % 10u64.pow(places) };
        let sign = if negative && (whole > 0 || frac > 0) { "-" } else { "" };
        let plain = format!("{sign}{}", decimal_text(whole, frac, places));
        let frac_digits = if places == 0 { String::new() } else { format!("{frac:0width$}", width = places as usize) };
        let answer = match format {
            0 => plain.clone(),
            1 => format!("{sign}{}{}", grouped(whole, ","), if places == 0 { String::new() } else { format!(".{frac_digits}") }),
            2 => format!("{sign}{}{}", grouped(whole, "."), if places == 0 { String::new() } else { format!(",{frac_digits}") }),
            3 => format!("{sign}{}{}", grouped(whole, "\u{202f}"), if places == 0 { String::new() } else { format!(".{frac_digits}") }),
            4 => format!("I think it's {plain}"),
            5 => format!("the answer is {plain}."),
            6 => format!("$\\boxed{{{plain}}}$"),
            7 => format!("{sign}{}%", {
                // The same value as a percentage: move the point two places.
                let scaled = (whole as u128) * 10u128.pow(places) + frac as u128;
                let text = (scaled * 100).to_string();
                let (int_part, frac_part) = text.split_at(text.len() - places as usize);
                if places == 0 { int_part.to_owned() } else { format!("{int_part}.{frac_part}") }
            }),
            _ => if whole < 1_000_000 && places == 0 {
                format!("{}{}", if sign.is_empty() { "" } else { "minus " }, words(whole, frac % 2 == 0))
            } else {
                plain.clone()
            },
        };
        let grade = grade_number(&plain, &answer);
        prop_assert_eq!(grade.result, GradeOutcome::Correct, "{} as {:?}: {}", plain, answer, grade.reason);
    }

    /// Fractions, mixed numbers, fraction words and LaTeX fractions grade
    /// correct against the fraction.
    #[test]
    fn fractions_in_every_format_are_correct(
        whole in 0u64..20,
        num in 1u64..10,
        den_index in 0usize..6,
        negative in any::<bool>(),
        format in 0usize..6,
    ) {
        let den = [2u64, 3, 4, 5, 8, 10][den_index];
        let num = num % den;
        prop_assume!(num > 0);
        let sign = if negative { "-" } else { "" };
        let improper = whole * den + num;
        let expected_value = format!("{sign}{improper}/{den}");
        let answer = match format {
            0 => expected_value.clone(),
            1 if whole > 0 => format!("{sign}{whole} {num}/{den}"),
            2 => format!("{sign}\\frac{{{improper}}}{{{den}}}"),
            3 => format!("{sign}\\dfrac{{{improper}}}{{{den}}}"),
            4 => {
                let words_sign = if negative { "minus " } else { "" };
                if whole > 0 {
                    format!("{words_sign}{} and {}", words(whole, false), fraction_words(num, den))
                } else {
                    format!("{words_sign}{}", fraction_words(num, den))
                }
            }
            _ => format!("{sign}{}/{}", improper * 3, den * 3),
        };
        let grade = grade_number(&expected_value, &answer);
        prop_assert_eq!(grade.result, GradeOutcome::Correct, "{} as {:?}: {}", expected_value, answer, grade.reason);
    }

    /// Scientific notation in its written forms grades correct.
    #[test]
    fn scientific_notation_is_correct(mantissa in 100u64..1000, exponent in -12i32..13, format in 0usize..5) {
        let m = format!("{}.{:02}", mantissa / 100, mantissa % 100);
        let value = format!("{m}e{exponent}");
        let answer = match format {
            0 => value.clone(),
            1 => format!("{m} × 10^{exponent}"),
            2 => format!("{m}*10^({exponent})"),
            3 => format!("{m}x10^{exponent}"),
            _ => format!("{m} \\times 10^{{{exponent}}}"),
        };
        let grade = grade_number(&value, &answer);
        prop_assert_eq!(grade.result, GradeOutcome::Correct, "{} as {:?}: {}", value, answer, grade.reason);
    }

    /// For plain numbers, `correct` does not depend on which is expected.
    #[test]
    fn correct_is_symmetric_for_plain_numbers(
        a in -1000i64..1000, a_places in 0u32..3,
        b_delta in -3i64..4, b_places in 0u32..3,
        trailing_zero in any::<bool>(),
    ) {
        let text = |n: i64, places: u32| {
            let scale = 10i64.pow(places);
            let sign = if n < 0 { "-" } else { "" };
            let (whole, frac) = (n.abs() / scale, n.abs() % scale);
            let mut t = format!("{sign}{}", decimal_text(whole as u64, frac as u64, places));
            if trailing_zero && places > 0 {
                t.push('0');
            }
            t
        };
        let first = text(a, a_places);
        // Near or equal values written with other precisions.
        let b = a * 10i64.pow(b_places) / 10i64.pow(a_places) + b_delta;
        let second = text(b, b_places);
        let forward = grade_number(&first, &second).result == GradeOutcome::Correct;
        let backward = grade_number(&second, &first).result == GradeOutcome::Correct;
        prop_assert_eq!(forward, backward, "{} vs {}", first, second);
    }

    /// The same inputs always give the same grade.
    #[test]
    fn grading_is_deterministic(answer in "\\PC{0,60}", kind in 0usize..4) {
        let (kind, value) = [
            (AnswerKind::Number, "3/4"),
            (AnswerKind::Expression, "2(x+1)"),
            (AnswerKind::Equation, "x = ±2"),
            (AnswerKind::Equation, "y = 2x + 1"),
        ][kind];
        let e = expected(kind, value);
        let settings = GradingSettings::default();
        let first = grading::grade(&e, &answer, Some("Solve it"), &settings);
        let second = grading::grade(&e, &answer, Some("Solve it"), &settings);
        prop_assert_eq!(first, second);
    }

    /// Arbitrary text never panics, and an unverifiable grade says why.
    #[test]
    fn arbitrary_text_never_panics(answer in "\\PC{0,300}", expected_text in "\\PC{0,40}", kind in 0usize..5) {
        let kind = [AnswerKind::Number, AnswerKind::Expression, AnswerKind::Equation, AnswerKind::Mcq, AnswerKind::Text][kind];
        let e = ExpectedAnswer {
            kind,
            value: expected_text,
            unit: Some("cm".to_owned()),
            options: vec!["1/2".to_owned(), "x = 4".to_owned(), "$36".to_owned()],
            mistakes: Vec::new(),
        };
        let grade = grading::grade(&e, &answer, Some(&answer), &GradingSettings::default());
        if grade.result == GradeOutcome::Unverifiable {
            prop_assert!(!grade.reason.is_empty());
        }
    }

    /// Mathematical-looking soup never panics either.
    #[test]
    fn operator_soup_never_panics(answer in "[0-9xy()\\[\\]+*/^%.,=<>±√ -]{0,200}", kind in 0usize..3) {
        let (kind, value) = [
            (AnswerKind::Number, "12"),
            (AnswerKind::Expression, "x^2 + y"),
            (AnswerKind::Equation, "x = 3 or x = -1"),
        ][kind];
        let _ = grading::grade(&expected(kind, value), &answer, None, &GradingSettings::default());
    }

    /// Hostile LaTeX, number words and units never panic.
    #[test]
    fn hostile_words_and_latex_never_panic(
        parts in prop::collection::vec(prop::sample::select(vec![
            "\\frac{", "}", "{", "\\sqrt[", "]", "\\boxed{", "$", "$$", "\\left(", "\\right)", "^",
            "minus", "and a half", "hundred", "thousand", "point", "a third", "twenty-", "cm", "km/h",
            "sq", "per", "°", "%", "1,234", "1.234,5", "e-", "10", " ", "±", "x", "=", "or", "not",
        ]), 0..60),
        kind in 0usize..3,
    ) {
        let answer: String = parts.concat();
        let (kind, value) = [(AnswerKind::Number, "1.5"), (AnswerKind::Expression, "x/2"), (AnswerKind::Equation, "x = 10")][kind];
        let _ = grading::grade(&expected(kind, value), &answer, Some(&answer), &GradingSettings::default());
    }
}

#[test]
fn huge_and_deeply_nested_inputs_come_back_unverifiable() {
    let settings = GradingSettings::default();
    let number = expected(AnswerKind::Number, "1");
    let expression = expected(AnswerKind::Expression, "x + 1");
    let hostile = [
        "(".repeat(100_000),
        "(".repeat(300) + "1" + &")".repeat(300),
        "10^".repeat(200) + "10",
        "9".repeat(5000),
        "x^".repeat(150) + "x",
        "\\frac{".repeat(1000) + "1" + &"}".repeat(1000),
        "1+".repeat(1000) + "1",
        "minus ".repeat(500) + "one",
        "a third of ".repeat(300),
        "1 ".repeat(999),
    ];
    for answer in &hostile {
        for e in [&number, &expression] {
            let grade = grading::grade(e, answer, Some(answer), &settings);
            assert_eq!(
                grade.result,
                GradeOutcome::Unverifiable,
                "{}…: {}",
                &answer[..20.min(answer.len())],
                grade.reason
            );
            assert!(!grade.reason.is_empty());
        }
    }
}
