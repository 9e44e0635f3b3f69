//! Grading a drill answer by code: against the item regenerated from its
//! blueprint, or against the answer an LLM-written drill was signed with.
//!
//! A generated item is graded like a person would grade it: by value. Its
//! options are a convenience, not the only answers that count, so a typed
//! 87 for 86 is `close` and a letter picks the option it names. Every wrong
//! answer the blueprint's mistakes can produce is recognised, shown as an
//! option or not, and names the mistake; so confusion tags come from
//! grading alone, never from the model. Only a blueprint graded `multiple_choice`
//! counts nothing but its options.

use crate::content::blueprint::{EvaluationMethod, ItemFormat};
use crate::content::workflow::GradingSettings;
use crate::engine::grading::{self, Grade, SlipTag};
use crate::engine::practice::drill::Expected;
use crate::engine::practice::generate::Item;
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome, KnownMistake};

/// What code grading made of a drill answer.
#[derive(Debug, Clone, PartialEq)]
pub struct DrillVerdict {
    pub outcome: GradeOutcome,
    /// The unit's mistake tag of the mistake the answer comes from.
    pub mistake_tag: Option<String>,
    /// That mistake, when the answer is one the blueprint can compute.
    pub mistake: Option<KnownMistake>,
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
                mistakes: Vec::new(),
            };
            let question = format!("{prompt} {question_latex}");
            let grade = grading::grade(&expected, answer, Some(&question), settings);
            from_grade(grade, expected_answer.clone())
        }
    }
}

/// The answer of a generated item in the grader's terms: graded by value
/// (options may be picked by letter), with every mistake the item's
/// blueprint can compute. Kept server-side with the pending question.
pub fn expected_answer(item: &Item) -> ExpectedAnswer {
    let mcq_only = item.answer.method == EvaluationMethod::MultipleChoice;
    let (kind, value) = match (&item.answer.variable, mcq_only) {
        (_, true) => (AnswerKind::Mcq, item.answer.text.clone()),
        (Some(_), false) => (AnswerKind::Equation, item.answer.text.clone()),
        (None, false) => (AnswerKind::Number, item.answer.value.clone()),
    };
    let mistakes = item
        .mistakes
        .iter()
        .map(|m| KnownMistake {
            value: match kind {
                AnswerKind::Number => m.value.clone(),
                _ => m.text.clone(),
            },
            strategy: m.strategy.clone(),
            mistake_tag: m.mistake_tag.clone(),
            slip: m.slip,
        })
        .collect();
    ExpectedAnswer {
        kind,
        value,
        unit: if mcq_only {
            None
        } else {
            item.answer.unit.clone()
        },
        options: if item.format == ItemFormat::MultipleChoice {
            item.options.clone()
        } else {
            Vec::new()
        },
        mistakes,
    }
}

fn grade_item(item: &Item, answer: &str, settings: &GradingSettings) -> DrillVerdict {
    let correct_answer = item.answer.text.clone();
    let question = format!("{} {}", item.stem, item.question_latex);
    let expected = expected_answer(item);
    let mut grade = grading::grade(&expected, answer, Some(&question), settings);
    apply_method(item, answer, &mut grade, settings);
    match grade.result {
        GradeOutcome::Correct | GradeOutcome::Unverifiable => grade.mistake = None,
        GradeOutcome::Close | GradeOutcome::Wrong if grade.mistake.is_none() => {
            grade.mistake = grading::known_mistake(&expected, answer, settings).cloned();
        }
        _ => {}
    }
    from_grade(grade, correct_answer)
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
            mistakes: Vec::new(),
        };
        let loose = GradingSettings {
            close_last_place: 0.0,
            close_relative: 0.0,
            close_min_difference: tolerance,
            close_min_difference_from: 0.0,
            ..settings.clone()
        };
        if grading::grade(&within, answer, None, &loose).result == GradeOutcome::Close {
            grade.result = GradeOutcome::Correct;
            grade.reason = format!("within the tolerance of {tolerance}");
        }
    }
}

fn from_grade(grade: Grade, correct_answer: String) -> DrillVerdict {
    DrillVerdict {
        outcome: grade.result,
        mistake_tag: grade.mistake.as_ref().and_then(|m| m.mistake_tag.clone()),
        mistake: grade.mistake,
        tags: grade.tags,
        reason: grade.reason,
        correct_answer,
    }
}
