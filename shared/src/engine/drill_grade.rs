//! Grading a drill answer by code: against the item regenerated from its
//! blueprint, or against the answer an LLM-written drill was signed with.
//! The wrong option a student chose (or typed the value of) names the
//! mistake, so confusion tags come from grading alone (seed 004).

use crate::content::blueprint::{EvaluationMethod, ItemFormat};
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
    let mut grade = grading::grade(&expected, answer, Some(&question), settings);
    apply_method(item, answer, &mut grade, settings);
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
