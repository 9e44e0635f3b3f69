//! Answers the number grader cannot read, recognised by the shape of the
//! expected answer: a quotient with a remainder (`26 r 2`), a ratio
//! (`3:2`) and an IPv4 address (`192.168.4.0`). Drill cards, the chat and distractor matching
//! all grade through [`super::grade`], so each form is handled once.

use super::{Grade, SlipTag};
use crate::model::GradeOutcome;

/// The grade of `answer` when `expected` has one of these shapes.
pub(super) fn grade(expected: &str, answer: &str) -> Option<Grade> {
    if is_quotient_remainder(expected) {
        Some(grade_quotient_remainder(expected, answer))
    } else if let Some(parts) = ratio(expected) {
        Some(grade_ratio(&parts, answer))
    } else if is_ipv4(expected) {
        Some(grade_ipv4(expected, answer))
    } else {
        None
    }
}

/// `26 r 2`, as items write it.
fn is_quotient_remainder(expected: &str) -> bool {
    let integer = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    matches!(expected.split_whitespace().collect::<Vec<_>>()[..], [q, "r", r] if integer(q) && integer(r))
}

/// The whole-number parts of a ratio written with colons (`3:2`,
/// `2 : 3 : 5`), or written `3 to 2`.
fn ratio(text: &str) -> Option<Vec<u64>> {
    let text = text.trim().trim_end_matches(['.', '!']);
    let parts: Vec<&str> = if text.contains(':') {
        text.split(':').collect()
    } else {
        text.split(" to ").collect()
    };
    if parts.len() < 2 {
        return None;
    }
    parts.iter().map(|p| p.trim().parse().ok()).collect()
}

/// A ratio must have its parts in order; the same ratio with its parts
/// multiplied or divided by one number is equivalent, not yet simplest.
fn grade_ratio(expected: &[u64], answer: &str) -> Grade {
    let given = answer.split([',', ';']).map(str::trim).find_map(|t| {
        let words: Vec<&str> = t.split_whitespace().collect();
        // The ratio is the last run of words that reads as one: "it is 3:2".
        (0..words.len()).find_map(|i| ratio(&words[i..].join(" ")))
    });
    let Some(given) = given else {
        return verdict(
            GradeOutcome::Unverifiable,
            "no ratio in the answer; write it like 3:2",
        );
    };
    if given == expected {
        return verdict(GradeOutcome::Correct, "the ratio matches, part for part");
    }
    let proportional = given.len() == expected.len()
        && given.iter().all(|&g| g > 0)
        && given
            .iter()
            .zip(expected)
            .all(|(&g, &e)| g * expected[0] == e * given[0]);
    if proportional {
        let mut close = verdict(
            GradeOutcome::Close,
            "an equivalent ratio, not in the form asked for",
        );
        // 6:4 for 3:2 can still be divided down; 3:2 for 6:4 went too far.
        if given[0] > expected[0] {
            close.tags.push(SlipTag::Unsimplified);
        }
        return close;
    }
    let reversed: Vec<u64> = given.iter().rev().copied().collect();
    let reason = if reversed == expected {
        "the parts are the other way round"
    } else {
        "the ratio is not right"
    };
    verdict(GradeOutcome::Wrong, reason)
}

fn is_ipv4(expected: &str) -> bool {
    let parts: Vec<&str> = expected.trim().split('.').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<u8>().is_ok())
}

fn verdict(result: GradeOutcome, reason: impl Into<String>) -> Grade {
    Grade {
        result,
        extracted: None,
        normalized: None,
        tags: Vec::new(),
        mistake: None,
        reason: reason.into(),
    }
}

/// `26 r 2`, `26 R2`, `26 remainder 2`, `26 rem 2`: both numbers must match.
fn grade_quotient_remainder(expected: &str, answer: &str) -> Grade {
    let numbers = |text: &str| -> Vec<i64> {
        text.split(|c: char| !c.is_ascii_digit() && c != '-')
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    // 26.2 is a decimal, not 26 r 2 (a full stop after a number is not).
    let decimal = answer
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .map(|t| t.trim_matches('.'))
        .any(|t| t.contains('.'));
    let want = numbers(expected);
    let got = numbers(answer);
    if decimal {
        return verdict(
            GradeOutcome::Wrong,
            "a decimal is not a quotient and a remainder",
        );
    }
    match (want.as_slice(), got.as_slice()) {
        ([q, r], [gq, gr]) if q == gq && r == gr => {
            verdict(GradeOutcome::Correct, "quotient and remainder match")
        }
        ([q, _], [gq, _]) if q == gq => verdict(
            GradeOutcome::Close,
            "the quotient is right, the remainder is not",
        ),
        ([q, r], [gq]) if q == gq && *r == 0 => verdict(GradeOutcome::Correct, "divides exactly"),
        ([q, _], [gq]) if q == gq => verdict(
            GradeOutcome::Close,
            "the quotient is right; the remainder is missing",
        ),
        (_, []) => verdict(
            GradeOutcome::Unverifiable,
            "no numbers in the answer; write it like 26 r 2",
        ),
        _ => verdict(GradeOutcome::Wrong, "the quotient is not right"),
    }
}

/// Four dotted octets, compared exactly.
fn grade_ipv4(expected: &str, answer: &str) -> Grade {
    let address = |text: &str| -> Option<[u8; 4]> {
        let candidate = text
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .find(|t| t.matches('.').count() == 3)?;
        let mut octets = [0u8; 4];
        for (slot, part) in octets.iter_mut().zip(candidate.split('.')) {
            *slot = part.parse().ok()?;
        }
        Some(octets)
    };
    match (address(expected), address(answer)) {
        (Some(a), Some(b)) if a == b => verdict(GradeOutcome::Correct, "same address"),
        (Some(_), Some(_)) => verdict(GradeOutcome::Wrong, "a different address"),
        _ => verdict(
            GradeOutcome::Unverifiable,
            "no IPv4 address like 192.168.1.0 in the answer",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_these_shapes_are_taken() {
        assert!(grade("26 r 2", "26 r 2").is_some());
        assert!(grade("192.168.4.0", "192.168.4.0").is_some());
        assert!(grade("3:2", "3:2").is_some());
        for other in ["26", "2.5", "x = 4", "26 r", "1.2.3", "300.1.1.1"] {
            assert!(grade(other, "26 r 2").is_none(), "{other}");
        }
    }

    #[test]
    fn a_ratio_is_graded_part_for_part() {
        let grade = |answer: &str| grade("3:2", answer).unwrap().result;
        for answer in ["3:2", "3 : 2", "3 to 2", "its 3:2", "I think it is 3 to 2."] {
            assert_eq!(grade(answer), GradeOutcome::Correct, "{answer}");
        }
        assert_eq!(grade("6:4"), GradeOutcome::Close);
        assert_eq!(grade("2:3"), GradeOutcome::Wrong);
        assert_eq!(grade("4:3"), GradeOutcome::Wrong);
        assert_eq!(grade("4"), GradeOutcome::Unverifiable);
        assert_eq!(
            super::grade("2:3:5", "2:3:5").unwrap().result,
            GradeOutcome::Correct
        );
        assert_eq!(
            super::grade("2:3:5", "4:6:10").unwrap().result,
            GradeOutcome::Close
        );
    }

    #[test]
    fn quotient_and_remainder_forms() {
        for answer in ["26 r 2", "26 R2", "26 remainder 2", "26rem2", "q=26, r=2"] {
            assert_eq!(
                grade_quotient_remainder("26 r 2", answer).result,
                GradeOutcome::Correct,
                "{answer}"
            );
        }
        assert_eq!(
            grade_quotient_remainder("26 r 2", "26 r 3").result,
            GradeOutcome::Close
        );
        assert_eq!(
            grade_quotient_remainder("26 r 2", "26").result,
            GradeOutcome::Close
        );
        assert_eq!(
            grade_quotient_remainder("26 r 0", "26").result,
            GradeOutcome::Correct
        );
        assert_eq!(
            grade_quotient_remainder("26 r 2", "25 r 2").result,
            GradeOutcome::Wrong
        );
        for decimal in ["26.2", "26.5 r 2"] {
            assert_eq!(
                grade_quotient_remainder("26 r 2", decimal).result,
                GradeOutcome::Wrong,
                "{decimal}"
            );
        }
        assert_eq!(
            grade_quotient_remainder("26 r 2", "q=26, r=2.").result,
            GradeOutcome::Correct
        );
        assert_eq!(
            grade_quotient_remainder("26 r 2", "no idea").result,
            GradeOutcome::Unverifiable
        );
    }

    #[test]
    fn ipv4_addresses() {
        assert_eq!(
            grade_ipv4("192.168.4.0", "it's 192.168.4.0").result,
            GradeOutcome::Correct
        );
        assert_eq!(
            grade_ipv4("192.168.4.0", "192.168.4.255").result,
            GradeOutcome::Wrong
        );
        assert_eq!(
            grade_ipv4("192.168.4.0", "192.168.4").result,
            GradeOutcome::Unverifiable
        );
        assert_eq!(
            grade_ipv4("192.168.4.0", "999.1.1.1").result,
            GradeOutcome::Unverifiable
        );
    }
}
