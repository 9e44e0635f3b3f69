//! The cards a reply shows: a drill card with the question it leaves
//! pending, and an exam card from the course bank (never its answer).

use crate::content::{Course, Unit};
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::practice::drill;
use crate::engine::practice::drill_grade;
use crate::engine::turn_data::{Plan, TurnEnv};
use crate::model::{
    ExamCard, ExamOption, ExpectedAnswer, LlmTutorResponse, PendingQuestion, QuestionPhase, Thread,
    TutorCard,
};

/// The drill card the reply shows and the question it leaves pending: the
/// server's practice item when there is one (its answer stays here), else
/// the LLM's own drill, whose answer goes into the signed token.
pub(super) fn drill_card(
    thread: &Thread,
    reply: &LlmTutorResponse,
    target: &Unit,
    plan: &Plan,
    env: &TurnEnv<'_>,
) -> Option<(crate::model::DrillCard, PendingQuestion)> {
    if let Some(issued) = &plan.practice {
        let expected = drill_grade::expected_answer(&issued.item);
        let question = PendingQuestion {
            text: question_text(&issued.card.prompt, &issued.card.question_latex),
            expected: Some(expected),
            unit_id: issued.card.unit_id.clone(),
            concept: format!("drill {}", issued.item.seed),
            wrong_attempts: 0,
            previous_answers: Vec::new(),
            hints_used: 0,
            phase: QuestionPhase::Asked,
            asked_at: env.now,
            drill_token: issued.card.drill_token.clone(),
        };
        return Some((issued.card.clone(), question));
    }
    let authored = reply.drill_card.as_ref()?;
    let card = drill::issue_authored(
        authored,
        &target.id,
        &thread.thread_id,
        env.now,
        env.token_keys,
    )
    .ok()?;
    let answer = authored.expected_answer.clone()?;
    let question = PendingQuestion {
        text: question_text(&authored.prompt, &authored.question_latex),
        expected: Some(ExpectedAnswer {
            kind: crate::engine::grading::infer_kind(&answer, &[]),
            value: answer,
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        }),
        unit_id: target.id.clone(),
        concept: format!("drill {}", env.turn_id),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: env.now,
        drill_token: card.drill_token.clone(),
    };
    Some((card, question))
}

/// A drill's question as one text: the prompt alone when it already
/// states the maths ("Work out 45 - 29."), else the prompt and the maths.
fn question_text(prompt: &str, latex: &str) -> String {
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let (prompt, latex) = (prompt.trim(), latex.trim());
    if latex.is_empty() || squeeze(prompt).contains(&squeeze(latex)) {
        prompt.to_owned()
    } else {
        format!("{prompt} {latex}")
    }
}

/// An exam block from the course bank: stem and options, never the answer.
pub fn exam_card(course: &Course, question_id: &str, env: &TurnEnv<'_>) -> Option<TutorCard> {
    let (unit, item) = course.exam_item(question_id)?;
    let locked_until = match env.lockouts.status(question_id).at(env.now) {
        LockoutStatus::Locked { until } => Some(until),
        _ => None,
    };
    Some(TutorCard::Exam(ExamCard {
        unit_id: unit.id.clone(),
        question_id: item.id.clone(),
        tier: item.tier,
        stem: item.stem.clone(),
        options: item
            .options
            .iter()
            .enumerate()
            .map(|(i, text)| ExamOption {
                id: crate::content::ExamItem::option_id(i),
                text: text.clone(),
            })
            .collect(),
        has_memo: !item.memo.trim().is_empty(),
        video_url: item.video_url.clone(),
        locked_until,
    }))
}
