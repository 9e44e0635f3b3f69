//! Naming the known mistake a wrong answer comes from.
//!
//! A question may carry the wrong answers its known mistakes produce (a
//! generated drill carries every one its blueprint can compute, shown as
//! an option or not). A wrong answer equal in value to one of them is that
//! mistake. It is then no near miss: an answer one out is `wrong` when a
//! mistake of method produces it. Only a slip of the answer itself may
//! stay `close`.

use super::{Grade, grade};
use crate::content::workflow::GradingSettings;
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome, KnownMistake};

/// The mistake `answer` is written as (an option picked as shown), else
/// the first of `expected`'s mistakes that it is worth the same as: 2/10
/// and 1/5 may be the wrong answers of two different mistakes.
pub(super) fn find<'a>(
    expected: &'a ExpectedAnswer,
    answer: &str,
    settings: &GradingSettings,
) -> Option<&'a KnownMistake> {
    let typed = answer.trim();
    if let Some(exact) = expected.mistakes.iter().find(|m| m.value.trim() == typed) {
        return Some(exact);
    }
    expected.mistakes.iter().find(|m| {
        let as_expected = ExpectedAnswer {
            // An option of a multiple-choice question is read for its value.
            kind: match expected.kind {
                AnswerKind::Mcq => super::infer_kind(&m.value, &[]),
                kind => kind,
            },
            value: m.value.clone(),
            unit: expected.unit.clone(),
            options: expected.options.clone(),
            mistakes: Vec::new(),
        };
        grade(&as_expected, answer, None, settings).result == GradeOutcome::Correct
    })
}

/// Names the mistake of a wrong or near answer, and makes a near answer
/// that a mistake of method explains `wrong`.
pub(super) fn name(
    expected: &ExpectedAnswer,
    answer: &str,
    settings: &GradingSettings,
    grade: &mut Grade,
) {
    if !matches!(grade.result, GradeOutcome::Close | GradeOutcome::Wrong) {
        return;
    }
    let Some(mistake) = find(expected, answer, settings) else {
        return;
    };
    if grade.result == GradeOutcome::Close && !mistake.slip {
        grade.result = GradeOutcome::Wrong;
    }
    grade.reason = format!("{} (the `{}` mistake)", grade.reason, mistake.strategy);
    grade.mistake = Some(mistake.clone());
}
