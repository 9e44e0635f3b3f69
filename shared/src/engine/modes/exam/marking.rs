//! Marking an exam answer: by code (a generated item by its regenerated
//! blueprint, a bank question by its options), or, for a written answer,
//! the request the evaluation call is sent; and the feedback a marked
//! question is given.

use super::report::show;
use super::shown_text;
use crate::engine::exam::judge::{JudgeRequest, WrittenMark};
use crate::engine::grading;
use crate::engine::modes::ModeTurn;
use crate::engine::practice::drill::Expected;
use crate::engine::practice::drill_grade;
use crate::engine::practice::generate::generate;
use crate::engine::practice::solution;
use crate::model::{
    AnswerKind, ExamEvaluationInput, ExamItemSource, ExamQuestion, GradeOutcome, QuestionResult,
};

/// An answer's mark.
pub(super) struct Marked {
    pub(super) result: QuestionResult,
    pub(super) mistake: Option<String>,
    pub(super) mistake_tag: Option<String>,
    /// A judge's words on a written answer.
    pub(super) feedback: Option<String>,
    pub(super) judged_by: Option<crate::model::JudgedBy>,
}

impl Marked {
    pub(super) fn judged(verdict: &WrittenMark) -> Marked {
        Marked {
            result: verdict.result,
            mistake: None,
            mistake_tag: None,
            feedback: Some(verdict.feedback.clone()).filter(|f| !f.is_empty()),
            judged_by: Some(verdict.by),
        }
    }
}

/// A written question: answered in words that code cannot grade, so
/// judged against its model answer and rubric.
pub(super) fn is_written(q: &ExamQuestion) -> bool {
    q.expected.kind == AnswerKind::Text
}

/// What the evaluation call is sent for `answer` to `q`: this question,
/// its model answer and rubric, and the answer; never another question.
pub(super) fn judge_request(q: &ExamQuestion, answer: &str) -> JudgeRequest {
    JudgeRequest {
        number: q.number,
        input: ExamEvaluationInput {
            question: shown_text(q).trim().to_owned(),
            expected_answer: q.correct_answer.clone(),
            rubric: q.rubric.clone(),
            student_answer: answer.trim().to_owned(),
        },
    }
}

/// `answer` to `q`, graded by code: a generated item by its regenerated
/// blueprint (as a drill is), a bank question by its options. `None` when
/// the message cannot be read as an answer.
pub(super) fn mark(turn: &ModeTurn<'_>, q: &ExamQuestion, answer: &str) -> Option<Marked> {
    let settings = &turn.rt.workflow().grading;
    let regenerated = match &q.source {
        ExamItemSource::Blueprint {
            blueprint_id,
            seed,
            target_difficulty,
        } => turn
            .rt
            .bundle
            .blueprints
            .get(blueprint_id)
            .and_then(|b| generate(b, *target_difficulty, *seed).ok())
            .filter(|item| item.answer.text == q.correct_answer),
        ExamItemSource::Bank { .. } => None,
    };
    let (outcome, mistake) = match regenerated {
        Some(item) => {
            let verdict =
                drill_grade::grade_drill(&Expected::Generated(Box::new(item)), answer, settings);
            (verdict.outcome, verdict.mistake)
        }
        None => {
            let grade = grading::grade(&q.expected, answer, Some(&shown_text(q)), settings);
            (grade.result, grade.mistake)
        }
    };
    let result = match outcome {
        GradeOutcome::Correct => QuestionResult::Correct,
        GradeOutcome::Close => QuestionResult::Partial,
        GradeOutcome::Wrong => QuestionResult::Incorrect,
        GradeOutcome::Unverifiable => return None,
    };
    let unit = turn.rt.course().unit(&q.unit_id);
    let explained = mistake
        .as_ref()
        .filter(|_| result != QuestionResult::Correct)
        .and_then(|m| solution::explanation_of(m, unit.map_or(&[][..], |u| &u.mistake_tags)));
    Some(Marked {
        result,
        feedback: None,
        judged_by: None,
        mistake_tag: mistake
            .as_ref()
            .filter(|_| result != QuestionResult::Correct)
            .and_then(|m| m.mistake_tag.clone()),
        mistake: explained.map(|e| e.explain),
    })
}

/// The result of a marked question and a short explanation.
pub(super) fn feedback(q: &ExamQuestion) -> String {
    let how = if q.explanation.is_empty() {
        String::new()
    } else {
        format!(" {}", sentence(&q.explanation))
    };
    let mistake = q
        .mistake
        .as_deref()
        .map(|m| format!(" {}", sentence(m)))
        .unwrap_or_default();
    // A judge's words on a written answer come first.
    let judge = q
        .feedback
        .as_deref()
        .map(|f| format!(" {}", sentence(f)))
        .unwrap_or_default();
    let answer = if is_written(q) {
        format!("A full answer: {}", sentence(&q.correct_answer))
    } else {
        format!("The answer is {}.", q.correct_answer)
    };
    match q.result {
        Some(QuestionResult::Correct) => format!("Question {}: correct!{judge}", q.number),
        Some(QuestionResult::Partial) => format!(
            "Question {}: close, so it earns part of the mark ({}).{judge} {answer}{mistake}{how}",
            q.number,
            show(q.credit),
        ),
        _ => format!(
            "Question {}: not quite.{judge} {answer}{mistake}{how}",
            q.number
        ),
    }
}

pub(super) fn sentence(text: &str) -> String {
    let t = text.trim();
    if t.ends_with(['.', '!', '?']) {
        t.to_owned()
    } else {
        format!("{t}.")
    }
}
