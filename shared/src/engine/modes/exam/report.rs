//! What an exam reports: the closing message, the report of its results,
//! the progress shown while it runs, and the `session.completed`
//! notification.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::{on_screen, shown_text};
use crate::content::{Course, ExamItem};
use crate::model::{
    AbilityEstimate, ExamBreakdownLine, ExamEnd, ExamFeedbackMode, ExamOption, ExamProgressView,
    ExamQuestion, ExamQuestionResultView, ExamQuestionStatus, ExamQuestionView, ExamReportView,
    ExamSession, OutboundEvent, OutboundEventKind, QuestionResult, UnitRef,
};

/// A unit answered at least this well is a strength; below the review
/// line it is one to look at again.
const STRONG: f64 = 0.75;
const REVIEW: f64 = 0.5;

/// The `session.completed` notification of a finished exam: its score
/// summary, sent only once the exam is over (a deferred exam's marks are
/// not known outside it before), without the student's own words.
pub fn session_completed(exam: &ExamSession, course: &Course, now: DateTime<Utc>) -> OutboundEvent {
    let r = report(exam, course, now);
    OutboundEvent {
        kind: OutboundEventKind::SessionCompleted,
        data: serde_json::json!({
            "mode": "exam",
            "exam": {
                "ended": r.ended,
                "score": r.score,
                "maxScore": r.max_score,
                "percentage": r.percentage,
                "answered": r.answered,
                "skipped": r.skipped,
                "unanswered": r.unanswered,
                "timeUsedSeconds": r.time_used_seconds,
                "byUnit": r.by_unit,
                "byDifficulty": r.by_difficulty,
                "ability": r.ability,
                "feedback": exam.feedback_mode,
            },
        }),
    }
}
/// A number as a person writes it: at most one decimal place.
pub(super) fn show(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// The end of an exam: the score and what to do next, the results in full.
pub(super) fn closing(session: &ExamSession, course: &Course, now: DateTime<Utc>) -> String {
    let r = report(session, course, now);
    let mut text = format!(
        "That's the end of the exam. You scored {} out of {} ({}%).",
        show(r.score),
        r.max_score,
        show(r.percentage)
    );
    if !r.strengths.is_empty() {
        text.push_str(&format!(" Strong: {}.", r.strengths.join(", ")));
    }
    if !r.to_review.is_empty() {
        text.push_str(&format!(" To review: {}.", r.to_review.join("; ")));
    }
    if session.feedback_mode == ExamFeedbackMode::Deferred {
        text.push_str("\n\nYour answers:");
        for q in &r.questions {
            let mark = match (q.status, q.result) {
                (ExamQuestionStatus::Answered, Some(QuestionResult::Correct)) => {
                    "correct".to_owned()
                }
                (ExamQuestionStatus::Answered, Some(QuestionResult::Partial)) => {
                    format!("close (the answer is {})", q.correct_answer)
                }
                (ExamQuestionStatus::Answered, _) => {
                    format!("wrong (the answer is {})", q.correct_answer)
                }
                (ExamQuestionStatus::Skipped, _) => {
                    format!("skipped (the answer is {})", q.correct_answer)
                }
                (ExamQuestionStatus::Unanswered, _) => {
                    format!("not answered (the answer is {})", q.correct_answer)
                }
            };
            text.push_str(&format!("\n{}. {mark}", q.number));
        }
    }
    text.push_str(
        "\n\nThe full report, with every question explained, is in this conversation's summary.",
    );
    text
}

/// A question's result as the report shows it.
fn result_view(q: &ExamQuestion) -> ExamQuestionResultView {
    ExamQuestionResultView {
        number: q.number,
        unit_id: q.unit_id.clone(),
        prompt: shown_text(q).trim().to_owned(),
        difficulty: q.difficulty,
        status: q.status,
        student_answer: q.student_answer.clone(),
        result: q.result,
        credit: q.credit,
        correct_answer: q.correct_answer.clone(),
        explanation: q.explanation.clone(),
        mistake: q.mistake.clone(),
        feedback: q.feedback.clone(),
        judged_by: q.judged_by,
    }
}

pub(super) fn percent(score: f64, of: u32) -> f64 {
    if of == 0 {
        0.0
    } else {
        (score / f64::from(of) * 1000.0).round() / 10.0
    }
}

/// The report of a finished exam (of the exam so far, for one still running).
pub fn report(session: &ExamSession, course: &Course, now: DateTime<Utc>) -> ExamReportView {
    let questions: Vec<ExamQuestionResultView> = session
        .questions
        .iter()
        .filter(|q| q.shown_at.is_some())
        .map(result_view)
        .collect();
    let score: f64 = session.questions.iter().map(|q| q.credit).sum();
    let count =
        |s: ExamQuestionStatus| session.questions.iter().filter(|q| q.status == s).count() as u32;
    let answered = count(ExamQuestionStatus::Answered);
    let skipped = count(ExamQuestionStatus::Skipped);
    let max_score = session.question_count.max(session.questions.len() as u32);
    let mut by_unit: Vec<ExamBreakdownLine> = Vec::new();
    for unit_id in &session.unit_ids {
        let qs: Vec<&ExamQuestion> = session
            .questions
            .iter()
            .filter(|q| &q.unit_id == unit_id)
            .collect();
        if qs.is_empty() {
            continue;
        }
        let s: f64 = qs.iter().map(|q| q.credit).sum();
        by_unit.push(ExamBreakdownLine {
            key: unit_id.clone(),
            title: course
                .unit(unit_id)
                .map_or_else(|| unit_id.clone(), |u| u.title.clone()),
            score: s,
            questions: qs.len() as u32,
            percentage: percent(s, qs.len() as u32),
        });
    }
    let by_difficulty = crate::model::Difficulty::ALL
        .into_iter()
        .filter_map(|d| {
            let qs: Vec<&ExamQuestion> = session
                .questions
                .iter()
                .filter(|q| q.difficulty == d)
                .collect();
            if qs.is_empty() {
                return None;
            }
            let s: f64 = qs.iter().map(|q| q.credit).sum();
            Some(ExamBreakdownLine {
                key: d.as_str().to_owned(),
                title: d.as_str().to_owned(),
                score: s,
                questions: qs.len() as u32,
                percentage: percent(s, qs.len() as u32),
            })
        })
        .collect();
    let strengths: Vec<String> = by_unit
        .iter()
        .filter(|l| l.percentage >= STRONG * 100.0)
        .map(|l| l.title.clone())
        .collect();
    let mut to_review: Vec<String> = by_unit
        .iter()
        .filter(|l| l.percentage < REVIEW * 100.0)
        .map(|l| l.title.clone())
        .collect();
    let mut mistakes: BTreeMap<&str, ()> = BTreeMap::new();
    for q in &session.questions {
        if let Some(m) = &q.mistake
            && mistakes.insert(m.as_str(), ()).is_none()
        {
            to_review.push(m.trim_end_matches('.').to_owned());
        }
    }
    let mut next_units: Vec<UnitRef> = Vec::new();
    let mut push = |id: &str| {
        if let Some(u) = course.unit(id)
            && !next_units.iter().any(|n| n.unit_id == u.id)
        {
            next_units.push(UnitRef {
                unit_id: u.id.clone(),
                title: u.title.clone(),
            });
        }
    };
    for l in by_unit.iter().filter(|l| l.percentage < STRONG * 100.0) {
        push(&l.key);
    }
    for l in by_unit.iter().filter(|l| l.percentage >= STRONG * 100.0) {
        for d in course.dependents(&l.key) {
            if !session.unit_ids.iter().any(|u| u == d) {
                push(d);
            }
        }
    }
    let end = session.finished_at.unwrap_or(now);
    ExamReportView {
        ended: session.ended.unwrap_or(ExamEnd::Completed),
        score,
        max_score,
        percentage: percent(score, max_score),
        answered,
        skipped,
        unanswered: max_score - answered - skipped,
        time_used_seconds: (end - session.started_at).num_seconds().max(0),
        questions,
        by_unit,
        by_difficulty,
        strengths,
        to_review,
        next_units,
        ability: AbilityEstimate {
            estimate: (session.ability * 1000.0).round() / 1000.0,
            standard_error: if session.information > 0.0 {
                ((1.0 / session.information.sqrt()).min(1.0) * 1000.0).round() / 1000.0
            } else {
                1.0
            },
        },
    }
}

/// What a client may see of an exam: the question on screen (never an
/// answer), and the marks only once they may be shown.
pub fn progress_view(session: &ExamSession) -> ExamProgressView {
    let revealed = |q: &ExamQuestion| match session.feedback_mode {
        ExamFeedbackMode::Immediate => q.status != ExamQuestionStatus::Unanswered,
        ExamFeedbackMode::Deferred => session.finished(),
    };
    let shown = on_screen(session);
    let open_marks = session.feedback_mode == ExamFeedbackMode::Immediate || session.finished();
    ExamProgressView {
        current_question: shown.map(|q| q.number),
        total_questions: session.question_count,
        answered: session
            .questions
            .iter()
            .filter(|q| q.status == ExamQuestionStatus::Answered)
            .count() as u32,
        skipped: session
            .questions
            .iter()
            .filter(|q| q.status == ExamQuestionStatus::Skipped)
            .count() as u32,
        feedback: session.feedback_mode,
        selection: session.selection,
        started_at: session.started_at,
        ends_at: session
            .time_limit_minutes
            .map(|m| session.started_at + Duration::minutes(i64::from(m))),
        finished: session.finished(),
        ended: session.ended,
        question: shown.map(|q| ExamQuestionView {
            number: q.number,
            unit_id: q.unit_id.clone(),
            prompt: q.prompt.clone(),
            question_latex: q.question_latex.clone(),
            format: q.format,
            options: q
                .options
                .iter()
                .enumerate()
                .map(|(i, text)| ExamOption {
                    id: ExamItem::option_id(i),
                    text: text.clone(),
                })
                .collect(),
            difficulty: q.difficulty,
        }),
        correct_so_far: open_marks.then(|| {
            session
                .questions
                .iter()
                .filter(|q| q.result == Some(QuestionResult::Correct))
                .count() as u32
        }),
        results: session
            .questions
            .iter()
            .filter(|q| revealed(q))
            .map(result_view)
            .collect(),
    }
}
