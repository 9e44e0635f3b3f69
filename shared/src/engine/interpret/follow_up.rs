//! A follow-up that leans on the student's previous question ("what about
//! 1/3?" after "how do I turn 3/8 into a decimal?", "and 50?" after "what's
//! the square root of 49?") is read as that question asked again with the
//! new numbers, so it is answered as the whole question would be rather
//! than as a bare number or a vague "what about".

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::student_math;

/// How many of the student's earlier messages a chain of follow-ups is
/// followed back through ("what about 1/3?", "and 2/3?", "and 5/6?").
pub const CHAIN: usize = 4;

/// The question `message` stands for, when it is a follow-up on the
/// previous question: `earlier` holds the student's earlier messages, the
/// most recent first.
pub fn meant(message: &str, earlier: &[&str]) -> Option<String> {
    let brought = lead_in(message)?;
    // The student's answer to the last question ("9") sits between it and
    // the follow-up: the question is the one before.
    let asked = earlier.iter().position(|m| !is_an_answer(m))?;
    let (previous, before) = earlier[asked..].split_first()?;
    let frame = if lead_in(previous).is_some() {
        meant(previous, before)?
    } else {
        (*previous).to_owned()
    };
    let expanded = if is_only_numbers(brought) {
        substitute(&frame, brought)?
    } else {
        substitute_counted(&frame, brought)?
    };
    (expanded != frame).then_some(expanded)
}

/// A message that only gives an answer ("9", "x = 4", "i think its 12"):
/// no question to ask again.
fn is_an_answer(message: &str) -> bool {
    const ANSWER_WORDS: [&str; 11] = [
        "its", "it's", "is", "the", "answer", "got", "think", "maybe", "equals", "so", "um",
    ];
    message
        .split(|c: char| !c.is_alphabetic() && c != '\'')
        .filter(|w| w.chars().count() > 1)
        .all(|w| ANSWER_WORDS.contains(&w.to_lowercase().as_str()) || w.len() <= 1)
}

/// "what about 2 decimal places?" after "round 3.456 to 1 decimal place":
/// a number with the words it counts takes the place of the number that
/// counts the same thing in the question.
fn substitute_counted(frame: &str, brought: &str) -> Option<String> {
    static COUNTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^(\d+(?:\.\d+)?)\s+([a-z]+)(?:\s+([a-z]+))?$").expect("a valid pattern")
    });
    let c = COUNTED.captures(brought.trim())?;
    let stem = |word: &str| regex::escape(&word[..word.len().min(4)].to_lowercase());
    let words = match c.get(3) {
        Some(second) => format!(r"{}[a-z]*\s+{}[a-z]*", stem(&c[2]), stem(second.as_str())),
        None => format!(r"{}[a-z]*", stem(&c[2])),
    };
    let old = Regex::new(&format!(r"(?i)\b\d+(?:\.\d+)?\s+{words}\b")).ok()?;
    let mut found = old.find_iter(frame);
    let only = found.next()?;
    if found.next().is_some() {
        return None;
    }
    Some(format!(
        "{}{}{}",
        &frame[..only.start()],
        brought.trim(),
        &frame[only.end()..]
    ))
}

/// "How do I check it?" after answering a problem of their own: the
/// claim to check, the answer put with its problem ("is x = 4 right for
/// 2x + 3 = 11?"), so code can show the check with the student's numbers.
pub fn check_of(message: &str, earlier: &[&str]) -> Option<String> {
    static CHECK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)^\s*(?:but\s+|so\s+|and\s+)?
            (?:how\s+(?:do|can|would|could|should)\s+(?:i|we|you)\s+(?:check|test|make\s+sure\s+of)\s+(?:it|that|this|my\s+answer|the\s+answer)
              |how\s+(?:do|can)\s+(?:i|we)\s+(?:know|tell|be\s+sure)\s+(?:if\s+|that\s+)?(?:it'?s|its|it\s+is|that'?s|i'?m|i\s+am|my\s+answer\s+is)\s+(?:right|correct)
              |(?:can\s+you\s+|please\s+)?check\s+(?:it|that|my\s+answer)
              |is\s+(?:it|that|my\s+answer)\s+(?:right|correct))
            (?:\s+please)?\s*[?.!]*\s*$",
        )
        .expect("a valid pattern")
    });
    if !CHECK.is_match(message) {
        return None;
    }
    let [answer, question, ..] = earlier else {
        return None;
    };
    let problem = student_math::student_problem(question)?;
    let value = answer_value(answer)?;
    match problem.solves_for {
        Some(unknown) => Some(format!(
            "is this right? {unknown} = {value} for {}",
            problem.text
        )),
        None => Some(format!("is this right? {} = {value}", problem.text)),
    }
}

/// The number an answer gives: its last number ("85", "it's 85", "x = 4").
fn answer_value(answer: &str) -> Option<&str> {
    static LAST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"-?\d+(?:\.\d+)?(?:/\d+)?\s*[?.!]*\s*$").expect("a valid pattern")
    });
    if answer.chars().count() > 30 {
        return None;
    }
    let found = LAST.find(answer)?.as_str();
    Some(found.trim_end_matches(|c: char| c.is_whitespace() || "?.!".contains(c)))
}

/// "Are they the same?" after two questions that each named one number,
/// fraction or ratio: whether those two are equal ("is 2:3 the same as
/// 4:6?"), which code answers.
pub fn they_compared(message: &str, earlier: &[&str]) -> Option<String> {
    static SAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)^\s*(?:so\s+|and\s+|but\s+)?(?:are|is)\s+(?:they|those|these|both|the\s+two|them)\s+(?:the\s+same|equal|equivalent)(?:\s+(?:ratios?|fractions?|numbers?|things?))?(?:\s+then)?\s*[?!.]*\s*$",
        )
        .expect("a valid pattern")
    });
    if !SAME.is_match(message) {
        return None;
    }
    let [newer, older, ..] = earlier else {
        return None;
    };
    let named = |text: &str| -> Option<String> {
        let found = runs(text);
        let [run] = found.as_slice() else {
            return None;
        };
        Some(text[run.at.clone()].to_owned())
    };
    Some(format!(
        "is {} the same as {}?",
        named(older)?,
        named(newer)?
    ))
}

/// A "why?" on its own ("why", "how come?", "but why is that"), which
/// asks about the answer just given.
pub fn only_asks_why(message: &str) -> bool {
    static WHY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(?:but\s+|and\s+|so\s+)?(?:why|how\s+come|y)(?:\s+(?:is\s+that|is\s+it|not|though|tho))?\s*[?!.]*\s*$")
            .expect("a valid pattern")
    });
    WHY.is_match(message)
}

/// Whether `question` asks why ("why is 51 not prime?", "how come…").
pub fn asks_why(question: &str) -> bool {
    let lower = question.trim_start().to_lowercase();
    lower.starts_with("why") || lower.starts_with("how come")
}

/// The numbers a follow-up brings ("1/3" of "what about 1/3?"), when the
/// message is only a lead-in and numbers.
fn follow_up_numbers(message: &str) -> Option<&str> {
    lead_in(message).filter(|brought| is_only_numbers(brought))
}

/// What a follow-up brings after its lead-in ("what about …", "and …").
fn lead_in(message: &str) -> Option<&str> {
    static LEAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)^\s*(?:(?:ok(?:ay)?|so|right|and)\s*,?\s+)?
            (?:what\s+about|how\s+about|what\s+if\s+(?:it\s+was|it\s+is|it'?s|its)|and|same\s+(?:thing\s+)?(?:for|with)|now\s+(?:do|try))
            \s+(?:for\s+|with\s+)?
            (?P<numbers>.+?)
            (?:\s+(?:then|instead|please|pls|now))?
            \s*[?.!]*\s*$",
        )
        .expect("a valid pattern")
    });
    let brought = LEAD.captures(message)?.name("numbers")?.as_str();
    brought
        .chars()
        .any(|c| c.is_ascii_digit())
        .then_some(brought)
}

/// Numbers, operators and the few words that join them ("4, 8 and 9",
/// "2x + 5 = 17", "20% of 60"), and nothing else.
fn is_only_numbers(text: &str) -> bool {
    static WORDS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z]+").expect("valid"));
    const JOINING: [&str; 5] = ["and", "of", "to", "percent", "by"];
    text.chars().count() <= 40
        && text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " .,/%+-−×÷*=()^:".contains(c))
        && WORDS.find_iter(text).all(|w| {
            let word = w.as_str().to_lowercase();
            JOINING.contains(&word.as_str())
                // A letter next to a number is an unknown (2x, 3y).
                || (word.len() == 1 && text[..w.start()].ends_with(|c: char| c.is_ascii_digit()))
                || word == "x"
        })
}

/// What kind of number a lone number is: one is only swapped for another
/// of its kind, so "what about 20%?" after "what is 15% of 80?" changes the
/// percentage and not the 80.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fraction,
    Percentage,
    Plain,
}

/// A run of numbers in a message: one number, a list, or a calculation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    Single(Kind),
    List,
    Calculation,
}

struct Run {
    at: Range<usize>,
    shape: Shape,
}

/// The runs of numbers in `text`, in order.
fn runs(text: &str) -> Vec<Run> {
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\d+\s*/\s*\d+|\d*\.\d+|\d+(?:\s*%|\s*percent\b|\s*per\s?cent\b|[a-z]\b)?")
            .expect("a valid pattern")
    });
    static LIST_GAP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:\s*,\s*(?:and\s+)?|\s+and\s+)$").expect("valid"));
    static CALCULATION_GAP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[\s()]*[-+−×÷*/=^x:][\s()-]*$").expect("valid"));
    let mut runs: Vec<Run> = Vec::new();
    for number in NUMBER.find_iter(text) {
        let token = number.as_str();
        // Glued to a letter or another number ("x2", "1.2.3"): not a number
        // a follow-up swaps.
        if text[..number.start()].ends_with(|c: char| c.is_alphabetic() || c == '.') {
            continue;
        }
        let joined = runs.last_mut().and_then(|last| {
            let gap = &text[last.at.end..number.start()];
            let shape = if LIST_GAP.is_match(gap) {
                Shape::List
            } else if CALCULATION_GAP.is_match(gap) {
                Shape::Calculation
            } else {
                return None;
            };
            let fits = match &last.shape {
                Shape::Single(_) => true,
                joined => *joined == shape,
            };
            fits.then(|| {
                last.at.end = number.end();
                last.shape = shape;
            })
        });
        if joined.is_none() {
            runs.push(Run {
                at: number.range(),
                shape: Shape::Single(kind_of(token)),
            });
        }
    }
    runs
}

fn kind_of(token: &str) -> Kind {
    if token.contains('/') {
        Kind::Fraction
    } else if token.contains('%') || token.contains("cent") {
        Kind::Percentage
    } else {
        Kind::Plain
    }
}

/// `frame` with the numbers of `new` in place of those they stand for:
/// run for run when both have the same runs ("20% of 60" for "15% of
/// 80"), else the one run that fits — a list for a list, a calculation
/// for a calculation, a number for the one number of its kind.
fn substitute(frame: &str, new: &str) -> Option<String> {
    // Only a question is asked again: an answer ("85") has no words to
    // carry the new numbers.
    if !frame.chars().any(char::is_alphabetic) || follow_up_numbers(frame).is_some() {
        return None;
    }
    let new_runs = runs(new);
    let old = runs(frame);
    if new_runs.len() > 1 {
        let same_shapes = new_runs.len() == old.len()
            && new_runs.iter().zip(&old).all(|(n, o)| n.shape == o.shape);
        if !same_shapes {
            return None;
        }
        let mut out = String::with_capacity(frame.len() + new.len());
        let mut at = 0;
        for (n, o) in new_runs.iter().zip(&old) {
            out.push_str(&frame[at..o.at.start]);
            out.push_str(&new[n.at.clone()]);
            at = o.at.end;
        }
        out.push_str(&frame[at..]);
        return Some(out);
    }
    let [new_run] = new_runs.as_slice() else {
        return None;
    };
    let fitting: Vec<&Run> = match &new_run.shape {
        Shape::Single(kind) => {
            let singles: Vec<&Run> = old
                .iter()
                .filter(|r| r.shape == Shape::Single(*kind))
                .collect();
            // The question's only number, whatever its kind ("is 51
            // prime?", "and 2.5?").
            if singles.is_empty() && old.len() == 1 {
                old.iter()
                    .filter(|r| matches!(r.shape, Shape::Single(_)))
                    .collect()
            } else {
                singles
            }
        }
        shape => old.iter().filter(|r| r.shape == *shape).collect(),
    };
    let [run] = fitting.as_slice() else {
        return None;
    };
    Some(format!(
        "{}{}{}",
        &frame[..run.at.start],
        &new[new_run.at.clone()],
        &frame[run.at.end..]
    ))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn after(previous: &str, message: &str) -> Option<String> {
        meant(message, &[previous])
    }

    #[test]
    fn a_new_number_takes_the_place_of_the_old_one() {
        assert_eq!(
            after("how do i turn 3/8 into a decimal", "what about 1/3").as_deref(),
            Some("how do i turn 1/3 into a decimal")
        );
        assert_eq!(
            after("whats the square root of 49", "and 50?").as_deref(),
            Some("whats the square root of 50")
        );
        assert_eq!(
            after("is 51 prime", "how about 53").as_deref(),
            Some("is 53 prime")
        );
    }

    #[test]
    fn a_number_replaces_the_one_of_its_kind() {
        assert_eq!(
            after("what is 15% of 80", "what about 20%?").as_deref(),
            Some("what is 20% of 80")
        );
        assert_eq!(
            after("what is 15% of 80", "and 120").as_deref(),
            Some("what is 15% of 120")
        );
        assert_eq!(
            after("what is 15% of 80", "what about 20% of 60").as_deref(),
            Some("what is 20% of 60")
        );
        // Two whole numbers: which one is meant cannot be told.
        assert_eq!(after("what is 47 + 38", "what about 50"), None);
    }

    #[test]
    fn lists_and_calculations_replace_their_own_kind() {
        assert_eq!(
            after("find the mean of 4, 8 and 9", "what about 2, 3 and 10").as_deref(),
            Some("find the mean of 2, 3 and 10")
        );
        assert_eq!(
            after("solve 2x + 3 = 11", "what about 3x - 5 = 10?").as_deref(),
            Some("solve 3x - 5 = 10")
        );
        assert_eq!(
            after("what is 3 + 4 x 2", "and 5 + 6 x 2").as_deref(),
            Some("what is 5 + 6 x 2")
        );
    }

    #[test]
    fn a_number_with_what_it_counts_replaces_the_same_count() {
        assert_eq!(
            after(
                "round 3.456 to 1 decimal place",
                "what about 2 decimal places"
            )
            .as_deref(),
            Some("round 3.456 to 2 decimal places")
        );
        assert_eq!(
            after("how many minutes in 3 hours", "and 5 hours?").as_deref(),
            Some("how many minutes in 5 hours")
        );
        assert_eq!(
            after("round 3.456 to 1 decimal place", "what about 2 apples"),
            None
        );
    }

    #[test]
    fn a_chain_of_follow_ups_keeps_the_first_question() {
        assert_eq!(
            meant(
                "and 2/3?",
                &["what about 1/3", "how do i turn 3/8 into a decimal"]
            )
            .as_deref(),
            Some("how do i turn 2/3 into a decimal")
        );
    }

    #[test]
    fn only_a_lead_in_and_numbers_is_a_follow_up() {
        let previous = "how do i turn 3/8 into a decimal";
        for message in [
            "what about fractions",
            "1/3",
            "what about 1/3 of a pizza and a drink",
            "what about my homework 1/3",
            "and then i got 1/3",
        ] {
            assert_eq!(after(previous, message), None, "{message}");
        }
        // After an answer alone, or with nothing before it, there is no
        // question to ask again; an answer after the question is passed over.
        assert_eq!(after("85", "what about 90"), None);
        assert_eq!(
            meant("what about 30 percent", &["9", "whats 15 percent of 60"]).as_deref(),
            Some("whats 30 percent of 60")
        );
        assert_eq!(
            meant(
                "and 3x + 1 = 10?",
                &["x = 4", "i think its 8", "solve 2x + 3 = 11"]
            )
            .as_deref(),
            Some("solve 3x + 1 = 10")
        );
        assert_eq!(meant("what about 1/3", &[]), None);
    }

    #[test]
    fn how_to_check_an_answer_is_asked_of_the_problem_and_the_answer() {
        let earlier = ["x = 4", "solve 2x + 3 = 11"];
        assert_eq!(
            check_of("how do i check it", &earlier).as_deref(),
            Some("is this right? x = 4 for 2x + 3 = 11")
        );
        assert_eq!(
            check_of("how can I know if it's right?", &["85", "what is 47 + 38?"]).as_deref(),
            Some("is this right? 47 + 38 = 85")
        );
        // Not a request to check, or nothing answered to check.
        assert_eq!(
            check_of("how do i check my homework online", &earlier),
            None
        );
        assert_eq!(check_of("how do i check it", &["solve 2x + 3 = 11"]), None);
        assert_eq!(check_of("how do i check it", &["ok", "hello"]), None);
    }

    #[test]
    fn they_are_the_two_things_just_asked_about() {
        assert_eq!(
            they_compared(
                "are they the same",
                &["so what about 4:6", "what does 2:3 mean"]
            )
            .as_deref(),
            Some("is 2:3 the same as 4:6?")
        );
        assert_eq!(
            they_compared(
                "are they equivalent fractions?",
                &["and 2/4?", "what is 1/2"]
            )
            .as_deref(),
            Some("is 1/2 the same as 2/4?")
        );
        assert_eq!(
            they_compared("are they the same", &["what is 47 + 38"]),
            None
        );
        assert_eq!(they_compared("are they nice", &["4:6", "2:3"]), None);
    }

    #[test]
    fn a_why_on_its_own_is_told_apart_from_a_question() {
        for why in ["why", "Why?", "how come", "but why is that?", "y"] {
            assert!(only_asks_why(why), "{why}");
        }
        for question in [
            "why is 51 not prime",
            "whyyy is maths hard",
            "why do we need fractions",
        ] {
            assert!(!only_asks_why(question), "{question}");
        }
    }

    proptest! {
        /// Whatever the numbers, the follow-up's numbers end up in the
        /// question, and the question's words stay.
        #[test]
        fn the_question_keeps_its_words(a in 1u32..500, b in 1u32..500) {
            let previous = format!("is {a} a prime number");
            let expanded = after(&previous, &format!("what about {b}?"));
            prop_assert_eq!(expanded, (a != b).then(|| format!("is {b} a prime number")));
        }
    }
}
