//! Grading a drill answer by code: against the item regenerated from its
//! blueprint, or against the answer an LLM-written drill was signed with.
//! The wrong option a student chose (or typed the value of) names the
//! mistake, so confusion tags come from grading alone (seed 004).

use crate::content::blueprint::{AnswerKind as BlueprintKind, EvaluationMethod, ItemFormat};
use crate::content::workflow::GradingSettings;
use crate::engine::drill::Expected;
use crate::engine::generate::Item;
use crate::engine::grading::{self, Grade, SlipTag};
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

/// What code grading made of a drill answer.
#[derive(Debug, Clone, PartialEq)]
pub struct DrillVerdict {
    pub outcome: GradeOutcome,
    /// The distractor's mistake tag when the answer is one of the wrong options.
    pub mistake_tag: Option<String>,
    pub tags: Vec<SlipTag>,
    /// For logs and teachers; may contain the expected answer.
    pub reason: String,
    /// The answer as the student should see it once graded.
    pub correct_answer: String,
}

impl DrillVerdict {
    pub fn is_correct(&self) -> bool {
        self.outcome == GradeOutcome::Correct
    }
}

/// Grades `answer` against what the drill expects.
pub fn grade_drill(expected: &Expected, answer: &str, settings: &GradingSettings) -> DrillVerdict {
    match expected {
        Expected::Generated(item) => grade_item(item, answer, settings),
        Expected::Authored {
            prompt,
            question_latex,
            expected_answer,
        } => {
            let kind = grading::infer_kind(expected_answer, &[]);
            let expected = ExpectedAnswer {
                kind,
                value: expected_answer.clone(),
                unit: None,
                options: Vec::new(),
            };
            let question = format!("{prompt} {question_latex}");
            let grade = grading::grade(&expected, answer, Some(&question), settings);
            from_grade(grade, None, expected_answer.clone())
        }
    }
}

/// The answer of a generated item in the grader's terms.
pub fn expected_answer(item: &Item) -> ExpectedAnswer {
    if item.format == ItemFormat::MultipleChoice
        || item.answer.method == EvaluationMethod::MultipleChoice
    {
        return ExpectedAnswer {
            kind: AnswerKind::Mcq,
            value: item.answer.text.clone(),
            unit: None,
            options: item.options.clone(),
        };
    }
    let (kind, value) = match &item.answer.variable {
        Some(_) => (AnswerKind::Equation, item.answer.text.clone()),
        None => (AnswerKind::Number, item.answer.value.clone()),
    };
    ExpectedAnswer {
        kind,
        value,
        unit: item.answer.unit.clone(),
        options: Vec::new(),
    }
}

fn grade_item(item: &Item, answer: &str, settings: &GradingSettings) -> DrillVerdict {
    let correct_answer = item.answer.text.clone();
    let question = format!("{} {}", item.stem, item.question_latex);
    let expected = expected_answer(item);
    let grade = match item.answer.kind {
        BlueprintKind::QuotientRemainder if expected.kind != AnswerKind::Mcq => {
            grade_quotient_remainder(&item.answer.value, answer)
        }
        BlueprintKind::Ipv4 if expected.kind != AnswerKind::Mcq => {
            grade_ipv4(&item.answer.value, answer)
        }
        _ => {
            let mut grade = grading::grade(&expected, answer, Some(&question), settings);
            apply_method(item, answer, &mut grade, settings);
            grade
        }
    };
    let mistake_tag = (grade.result != GradeOutcome::Correct)
        .then(|| mistake_of(item, answer, &grade, settings))
        .flatten();
    from_grade(grade, mistake_tag, correct_answer)
}

/// Blueprint evaluation rules the general grader does not know about.
fn apply_method(item: &Item, answer: &str, grade: &mut Grade, settings: &GradingSettings) {
    if item.answer.simplest_form
        && grade.result == GradeOutcome::Correct
        && grade.tags.contains(&SlipTag::Unsimplified)
    {
        grade.result = GradeOutcome::Wrong;
        grade.reason = "right value, but the question asks for the simplest form".into();
        return;
    }
    if item.answer.method == EvaluationMethod::NumericTolerance
        && matches!(grade.result, GradeOutcome::Close | GradeOutcome::Wrong)
        && let Some(tolerance) = item.answer.tolerance
    {
        let within = ExpectedAnswer {
            kind: AnswerKind::Number,
            value: item.answer.value.clone(),
            unit: item.answer.unit.clone(),
            options: Vec::new(),
        };
        let loose = GradingSettings {
            close_relative: 0.0,
            close_min_difference: tolerance,
            ..settings.clone()
        };
        if grading::grade(&within, answer, None, &loose).result == GradeOutcome::Close {
            grade.result = GradeOutcome::Correct;
            grade.reason = format!("within the tolerance of {tolerance}");
        }
    }
}

/// The wrong option the answer is, by text (a chosen option) or by value
/// (a typed answer worth the same as a distractor).
fn mistake_of(
    item: &Item,
    answer: &str,
    grade: &Grade,
    settings: &GradingSettings,
) -> Option<String> {
    let chosen = grade.extracted.as_deref().unwrap_or(answer);
    if let Some(d) = item
        .distractor_for(chosen)
        .or_else(|| item.distractor_for(answer))
    {
        return d.mistake_tag.clone();
    }
    let mcq = ExpectedAnswer {
        kind: AnswerKind::Mcq,
        value: item.answer.text.clone(),
        unit: None,
        options: item.options.clone(),
    };
    if let Some(picked) = grading::grade(&mcq, answer, None, settings).normalized
        && let Some(d) = item.distractors.iter().find(|d| picked.ends_with(&d.text))
    {
        return d.mistake_tag.clone();
    }
    item.distractors.iter().find_map(|d| {
        let as_expected = ExpectedAnswer {
            kind: grading::infer_kind(&d.text, &[]),
            value: d.text.clone(),
            unit: None,
            options: Vec::new(),
        };
        (grading::grade(&as_expected, answer, None, settings).result == GradeOutcome::Correct)
            .then(|| d.mistake_tag.clone())
            .flatten()
    })
}

fn from_grade(grade: Grade, mistake_tag: Option<String>, correct_answer: String) -> DrillVerdict {
    DrillVerdict {
        outcome: grade.result,
        mistake_tag,
        tags: grade.tags,
        reason: grade.reason,
        correct_answer,
    }
}

fn verdict(result: GradeOutcome, reason: impl Into<String>) -> Grade {
    Grade {
        result,
        extracted: None,
        normalized: None,
        tags: Vec::new(),
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
    let want = numbers(expected);
    let got = numbers(answer);
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
