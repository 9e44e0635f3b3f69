//! A turn from an integration (docs/webhooks.md): the problem it sent made
//! the pending question, and the reply written as one message for a chat.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::engine::grading;
use crate::engine::modes::problem_set;
use crate::engine::session::scaffolding;
use crate::engine::turn_data::Plan;
use crate::model::{
    ExpectedAnswer, ModeState, PendingQuestion, ProgressionAction, QuestionPhase, Role, SessionEnd,
    Thread, TurnResponse, TutorCard, WebhookProblem, WebhookSessionStatus, WebhookTurnResponse,
};

/// Which response a turn answers with.
#[derive(Clone, Copy)]
pub(crate) enum Shape<'a> {
    /// The app API's `TurnResponse`.
    App,
    /// The webhook reply (docs/webhooks.md), for an n8n or LMS integration.
    Webhook(&'a WebhookSettings),
}

/// What the webhook reply needs besides the turn response.
pub(crate) struct WebhookSettings {
    /// The problem the integration sent, made the pending question.
    pub problem: Option<WebhookProblem>,
    /// Said before the reply: why this message starts a new session.
    pub notice: Option<String>,
}

/// A problem sent by an integration becomes the pending question; a new
/// problem id starts it afresh, the same one carries on.
pub(super) fn with_problem(thread: &mut Thread, shape: Shape<'_>, now: DateTime<Utc>) {
    let Shape::Webhook(WebhookSettings {
        problem: Some(problem),
        ..
    }) = shape
    else {
        return;
    };
    if let ModeState::ProblemSet(state) = &thread.session.mode_state {
        let mut state = state.clone();
        problem_set::extend(&mut state, &mut thread.session, problem, now);
        thread.session.mode_state = ModeState::ProblemSet(state);
        return;
    }
    let concept = format!("problem {}", problem.id);
    let same = thread
        .session
        .pending_question
        .as_ref()
        .is_some_and(|q| q.concept == concept);
    let answered = thread.session.last_problem.as_deref() == Some(problem.id.as_str());
    if same || answered {
        return;
    }
    let unit_id = thread.unit_id.clone().unwrap_or_default();
    scaffolding::start_problem(
        &mut thread.session,
        PendingQuestion {
            text: problem.text.clone(),
            expected: Some(ExpectedAnswer {
                kind: grading::infer_kind(&problem.correct_answer, &[]),
                value: problem.correct_answer.clone(),
                unit: None,
                options: Vec::new(),
                mistakes: Vec::new(),
            }),
            unit_id,
            concept,
            wrong_attempts: 0,
            previous_answers: Vec::new(),
            hints_used: 0,
            phase: QuestionPhase::Asked,
            asked_at: now,
            drill_token: None,
        },
    );
    thread.session.last_problem = Some(problem.id.clone());
}

/// The tutor's words as one message for a chat integration: a card's
/// question is written out, since the integration shows text only.
pub(super) fn webhook_reply(
    response: &TurnResponse,
    plan: &Plan,
    action: ProgressionAction,
    shape: Shape<'_>,
) -> WebhookTurnResponse {
    let mut parts = Vec::new();
    if let Shape::Webhook(WebhookSettings {
        notice: Some(notice),
        ..
    }) = shape
    {
        parts.push(notice.clone());
    }
    for m in response
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
    {
        if !m.text.trim().is_empty() {
            parts.push(m.text.trim().to_owned());
        }
        match &m.card {
            Some(TutorCard::Drill(d)) => parts.push(format!("{} {}", d.prompt, d.question_latex)),
            Some(TutorCard::Concept(c)) => {
                parts.extend(c.key_ideas.iter().map(|k| format!("- {k}")))
            }
            Some(TutorCard::Exam(e)) => {
                parts.push(e.stem.clone());
                parts.extend(e.options.iter().map(|o| format!("{}) {}", o.id, o.text)));
            }
            None => {}
        }
    }
    let state = &response.state;
    let (index, remaining) = state.problem_set.as_ref().map_or((0, 0), |p| {
        (
            p.current_problem_index,
            p.problems_total.saturating_sub(p.problems_completed),
        )
    });
    let status = match state.problem_set.as_ref().and_then(|p| p.ended) {
        Some(SessionEnd::Abandoned) => "abandoned",
        Some(SessionEnd::Completed) => "completed",
        None if state.is_complete => "completed",
        None => "active",
    };
    WebhookTurnResponse {
        output: parts.join("\n"),
        session_status: WebhookSessionStatus {
            current_problem_index: index,
            action,
            problems_remaining: remaining,
            status: status.to_owned(),
            thread_id: Some(state.thread_id.clone()),
        },
        debug: Some(json!({
            "category": plan.category,
            "grade": plan.interpretation.as_ref().and_then(|i| i.grade.as_ref()).map(|g| g.result),
            "focusUnitId": plan.policy.policy.focus_unit_id,
            "turnId": response.turn_id,
        })),
    }
}
