//! Multiple choice, graded by what the student chose rather than by how
//! they named it: the option's text (`34`, `$36`, `a triangle`), its letter
//! (`C`, `(c)`, `option c`) or its position (`3`, `the third one`).

use super::context::Context;
use super::extract;
use super::units::{Dimension, Unit};
use super::{Grade, SlipTag, quote, show_number};
use crate::content::workflow::GradingSettings;
use crate::math::{self, Number};
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

const ORDINALS: [&str; 10] = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
];

/// Words around a choice that carry no choice themselves.
const FILLER: &[&str] = &[
    "i",
    "think",
    "it's",
    "its",
    "it",
    "is",
    "the",
    "answer",
    "option",
    "choice",
    "letter",
    "pick",
    "choose",
    "go",
    "with",
    "for",
    "my",
    "maybe",
    "probably",
    "guess",
    "say",
    "would",
    "be",
    "i'll",
    "ill",
    "take",
    "number",
    "so",
    "then",
    "correct",
    "one",
    "should",
    "that",
    "must",
    "final",
    "i'd",
    "id",
    "like",
    "want",
    "select",
    "selected",
    "chose",
    "picked",
    "definitely",
];

pub(super) fn letter(index: usize) -> char {
    char::from(b'A' + (index % 26) as u8)
}

fn squash(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '?'])
        .trim()
        .to_owned()
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The number an option or answer stands for (`$36` → 36), if it is one.
fn value_of(text: &str) -> Option<(Number, Option<Unit>)> {
    let context = Context {
        kind: AnswerKind::Number,
        variables: &[],
        all_letters: false,
        unit: None,
    };
    let extraction = extract::extract(text, &context);
    let [candidate] = extraction.candidates.as_slice() else {
        return None;
    };
    let value = candidate.final_value()?;
    let n = match math::evaluate(value, &|_| None).ok()? {
        math::Value::Num(n) => n,
        math::Value::Bool(_) => return None,
    };
    // `5%` is the value 0.05; other units stay with the number.
    match &candidate.unit {
        Some(u) if u.dimension == Dimension::Ratio => {
            Some((n.checked_mul(Number::Exact(u.factor)).ok()?, None))
        }
        unit => Some((n, unit.clone())),
    }
}

/// Which option the expected answer names: its text, letter or number.
fn expected_index(expected: &ExpectedAnswer) -> Option<usize> {
    let options = &expected.options;
    let value = squash(&expected.value);
    if let Some(i) = options.iter().position(|o| squash(o) == value) {
        return Some(i);
    }
    let mut chars = value.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && c.is_ascii_lowercase()
    {
        let i = (c as u8 - b'a') as usize;
        return (i < options.len()).then_some(i);
    }
    if let Ok(n) = value.parse::<usize>() {
        return (1..=options.len()).contains(&n).then(|| n - 1);
    }
    let (target, _) = value_of(&expected.value)?;
    let matching: Vec<usize> = options
        .iter()
        .enumerate()
        .filter(|(_, o)| value_of(o).is_some_and(|(v, _)| v.approx_eq(target)))
        .map(|(i, _)| i)
        .collect();
    match matching.as_slice() {
        [i] => Some(*i),
        _ => None,
    }
}

/// The option a message names by its letter, position or number (`B`,
/// `the second one`, `option 2`), not by its content. A bare number is a
/// value, not an option number, for questions graded by value.
pub(super) fn picked_by_label(options: &[String], answer: &str) -> Option<usize> {
    let bare = answer.trim().trim_end_matches(['.', '!', '?']).trim_end();
    if options.is_empty() || bare.parse::<f64>().is_ok() {
        return None;
    }
    match choose(options, answer) {
        Choice::Option(i, "its letter" | "its position" | "its number") => Some(i),
        _ => None,
    }
}

/// How the student's choice was recognised.
enum Choice {
    Option(usize, &'static str),
    /// A value that is none of the options.
    Value(Number),
    Ambiguous(String),
    Nothing,
}

fn choose(options: &[String], answer: &str) -> Choice {
    let message = squash(answer);
    if let Some(i) = options.iter().position(|o| squash(o) == message) {
        return Choice::Option(i, "its text");
    }
    let all = words(answer);
    let negated_at = |k: usize| k > 0 && matches!(all[k - 1].as_str(), "not" | "isn't" | "isnt");
    let remaining: Vec<(usize, &String)> = all
        .iter()
        .enumerate()
        .filter(|(k, w)| {
            !FILLER.contains(&w.as_str())
                && !negated_at(*k)
                && !matches!(w.as_str(), "not" | "isn't" | "isnt")
        })
        .collect();
    let cue = all
        .iter()
        .any(|w| matches!(w.as_str(), "option" | "choice" | "number" | "letter"));
    if let [(_, only)] = remaining.as_slice() {
        let mut chars = only.chars();
        if let (Some(c), None) = (chars.next(), chars.next())
            && c.is_ascii_lowercase()
        {
            let i = (c as u8 - b'a') as usize;
            if i < options.len() {
                return Choice::Option(i, "its letter");
            }
        }
        if let Some(i) = ORDINALS.iter().position(|o| o == only)
            && i < options.len()
        {
            return Choice::Option(i, "its position");
        }
        let ordinal_digits = only.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        if only.ends_with(['t', 'd', 'h'])
            && ordinal_digits.len() < only.len()
            && let Ok(n) = ordinal_digits.parse::<usize>()
            && (1..=options.len()).contains(&n)
        {
            return Choice::Option(n - 1, "its position");
        }
        if cue
            && let Ok(n) = only.parse::<usize>()
            && (1..=options.len()).contains(&n)
        {
            return Choice::Option(n - 1, "its number");
        }
    }
    // The option's content inside a sentence: a value, or words.
    let values: Vec<Option<(Number, Option<Unit>)>> = options.iter().map(|o| value_of(o)).collect();
    if let Some((said, _)) = value_of(answer) {
        let matching: Vec<usize> = (0..options.len())
            .filter(|i| values[*i].as_ref().is_some_and(|(v, _)| v.approx_eq(said)))
            .collect();
        match matching.as_slice() {
            [i] => return Choice::Option(*i, "its value"),
            [] => {}
            several => {
                return Choice::Ambiguous(format!(
                    "{} matches options {}",
                    show_number(said),
                    several
                        .iter()
                        .map(|i| letter(*i).to_string())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ));
            }
        }
        // A bare number with no option of that value is the option's number.
        if let Ok(n) = message.parse::<usize>()
            && (1..=options.len()).contains(&n)
        {
            return Choice::Option(n - 1, "its number");
        }
        return Choice::Value(said);
    }
    let padded = format!(" {} ", all.join(" "));
    let mentioned: Vec<usize> = options
        .iter()
        .enumerate()
        .filter(|(_, o)| {
            let option_words = words(o).join(" ");
            !option_words.is_empty()
                && padded.contains(&format!(" {option_words} "))
                && !["not", "not a", "not an", "not the", "isn't", "isn't a"]
                    .iter()
                    .any(|n| padded.contains(&format!(" {n} {option_words} ")))
        })
        .map(|(i, _)| i)
        .collect();
    match mentioned.as_slice() {
        [i] => Choice::Option(*i, "its text"),
        [] => Choice::Nothing,
        several => Choice::Ambiguous(format!(
            "the message names options {}",
            several
                .iter()
                .map(|i| letter(*i).to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

pub(super) fn grade(expected: &ExpectedAnswer, answer: &str, _settings: &GradingSettings) -> Grade {
    let options = &expected.options;
    if options.is_empty() {
        return Grade::unverifiable("a multiple-choice question needs its options stored with it");
    }
    let Some(correct) = expected_index(expected) else {
        return Grade::unverifiable(format!(
            "the expected answer {} is none of the options",
            quote(&expected.value)
        ));
    };
    let show = |i: usize| format!("{}: {}", letter(i), options[i].trim());
    match choose(options, answer) {
        Choice::Option(i, how) => {
            let right = i == correct;
            Grade {
                result: if right {
                    GradeOutcome::Correct
                } else {
                    GradeOutcome::Wrong
                },
                extracted: Some(answer.trim().to_owned()),
                normalized: Some(show(i)),
                tags: Vec::new(),
                mistake: None,
                reason: if right {
                    format!("chose {} by {how}, the correct option", show(i))
                } else {
                    format!(
                        "chose {} by {how}; the correct option is {}",
                        show(i),
                        show(correct)
                    )
                },
            }
        }
        Choice::Value(value) => Grade {
            result: GradeOutcome::Wrong,
            extracted: Some(answer.trim().to_owned()),
            normalized: Some(show_number(value)),
            tags: vec![SlipTag::NotAnOption],
            mistake: None,
            reason: format!(
                "{} is none of the options; the correct option is {}",
                show_number(value),
                show(correct)
            ),
        },
        Choice::Ambiguous(why) => {
            Grade::unverifiable(format!("cannot tell which option was chosen: {why}"))
        }
        Choice::Nothing => {
            Grade::unverifiable("no option, letter or option number found in the message")
        }
    }
}
