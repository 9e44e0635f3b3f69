//! `POST /threads/{threadId}/turn`: the guided turn end to end.
//!
//! Load → plan (pure) → at most one tutor call → validate, fall back
//! deterministically → apply (pure) → one atomic commit. On a version
//! conflict the state is read again and plan/apply run again on it with the
//! same tutor reply (re-validated against the fresh policy); the LLM is
//! never asked twice. Every turn leaves one structured log line and a
//! stored turn log with the whole policy chain (seed 004 PF-7.1).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::error::ServiceError;
use super::threads::{
    RECENT_MESSAGES, commit_with_retries, owned_thread, respond, snapshot_or_new,
};
use super::views::state_view;
use super::{App, Output};
use crate::api::auth::Principal;
use crate::content::Bundle;
use crate::engine::progression::progression;
use crate::engine::safety::{self, SafetyHit};
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::engine::turn::{self, CourseRuntime, Plan, ReplyOrigin, TurnEnv, TurnEvent, TurnState};
use crate::engine::{grading, reply, scaffolding, turn_log};
use crate::llm::OfflineTutor;
use crate::llm::provider::LlmCall;
use crate::model::{
    ClientEvent, ExpectedAnswer, Mode, PendingQuestion, Personalization, ProgressionAction,
    QuestionPhase, Reply, Role, SafetyInput, SafetyOutcome, Thread, TurnRequest, TurnResponse,
    TutorCard, WebhookSessionStatus, WebhookTurnResponse,
};
use crate::store::{Expected, IdempotencyLock, TurnLog, UnitOfWork};

/// Which response a turn answers with.
#[derive(Clone, Copy)]
pub(crate) enum Shape<'a> {
    /// The app API's `TurnResponse`.
    App,
    /// Seed 003's webhook reply, for an n8n or LMS integration.
    Webhook(&'a WebhookSettings),
}

/// What the webhook reply needs besides the turn response.
pub(crate) struct WebhookSettings {
    /// The problem the integration sent, made the pending question.
    pub problem: Option<crate::model::WebhookProblem>,
}

impl App {
    pub async fn turn(
        &self,
        who: &Principal,
        thread_id: &str,
        request: TurnRequest,
        lock: Option<&IdempotencyLock>,
    ) -> Result<Output, ServiceError> {
        self.run_turn(who, thread_id, request, lock, Shape::App)
            .await
    }

    pub(crate) async fn run_turn(
        &self,
        who: &Principal,
        thread_id: &str,
        request: TurnRequest,
        lock: Option<&IdempotencyLock>,
        shape: Shape<'_>,
    ) -> Result<Output, ServiceError> {
        let started = Instant::now();
        self.check_turn_request(&request)?;
        let mut record = owned_thread(self, who, thread_id, RECENT_MESSAGES).await?;
        with_problem(&mut record.thread, shape, self.clock.now());
        if let Some(course) = &request.course_id
            && *course != record.thread.course_id
        {
            return Err(ServiceError::invalid_field(
                "courseId",
                format!(
                    "this thread belongs to course `{}`",
                    record.thread.course_id
                ),
            ));
        }
        if record.thread.mode != Mode::Guided {
            return Err(ServiceError::unprocessable(
                "mode-not-available",
                "Mode not available yet",
                format!(
                    "turns in mode `{}` are not available yet",
                    record.thread.mode.as_str()
                ),
            ));
        }
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &record.thread.course_id)?;
        let event = TurnEvent {
            message_text: request.message_text.clone(),
            message_latex: request.message_latex.clone(),
            client_event: request.client_event.clone(),
        };
        let turn_id = self.ids.new_id();
        let seed = self.ids.seed();
        let personalization = Personalization::default();
        let drill_ttl = Duration::seconds(
            i64::try_from(self.config.drills.token_ttl_seconds).unwrap_or(i64::MAX / 2),
        );

        // First pass: plan on the state just read, then the one tutor call.
        let loaded = Instant::now();
        let snapshot_read = self
            .store
            .get_snapshot(&who.student_id, &record.thread.course_id)
            .await?;
        let snapshot = snapshot_or_new(
            snapshot_read.as_ref(),
            &who.student_id,
            &record.thread.course_id,
            &rt.course().entry_unit,
        );
        let state = TurnState {
            thread: &record.thread,
            history: &record.recent_messages,
            snapshot: &snapshot,
        };
        let now = self.clock.now();
        let wanted = turn::interpret(&rt, state, &event, now, &turn_id)
            .map_err(turn_error)?
            .exam_questions;
        let lockouts = self
            .exams
            .statuses(self.store.as_ref(), &snapshot, &wanted, now)
            .await?;
        let load_ms = loaded.elapsed();
        let planning = Instant::now();
        let env = TurnEnv {
            now,
            turn_id: &turn_id,
            seed,
            drill_key: &self.drill_key,
            drill_ttl,
            lockouts: &lockouts,
            personalization: &personalization,
        };
        let mut plan = turn::plan(&rt, state, &event, &env).map_err(turn_error)?;
        let plan_ms = planning.elapsed();
        // The workflow may ask the safety call to screen what the rules let through.
        let moderation = self.moderate(&rt, &bundle, &plan).await;
        if plan.safety.is_none() {
            plan.safety = moderation.clone();
        }
        let calling = Instant::now();
        let tutor_reply = match &plan.safety {
            Some(hit) => {
                if hit.notify_teacher {
                    self.notify_teacher(&who.student_id, thread_id, &hit.rule_id)
                        .await;
                }
                None
            }
            None => {
                let timeout = StdDuration::from_millis(rt.workflow().llm.tutor.timeout_ms);
                let tutor = self.llm.tutor(
                    &bundle,
                    &rt.course().workflow,
                    Some(tokio::time::Instant::now() + timeout),
                );
                Some(tutor.decide(&plan.input).await)
            }
        };
        let llm_ms = calling.elapsed();

        // The fallback when the reply is invalid, and where a valid one came from.
        let offline = OfflineTutor::new(rt.bundle.clone(), &rt.course().workflow);
        let valid_origin = if self.llm.provider(LlmCall::Tutor).is_some() {
            ReplyOrigin::Llm
        } else {
            ReplyOrigin::Offline
        };
        let offline = &offline;
        let (rt, event, turn_id_ref, personalization) = (&rt, &event, &turn_id, &personalization);
        let moderation = &moderation;
        let tutor_reply = &tutor_reply;
        let first_plan = &plan;
        let lockouts_first = &lockouts;
        let snapshot_first = (&snapshot, &snapshot_read);
        let record_first = &record;
        let committed = commit_with_retries(self, |attempt| {
            let turn_id = turn_id_ref;
            async move {
                // After a conflict everything pure runs again on fresh state.
                let fresh;
                let fresh_snapshot_read;
                let fresh_snapshot;
                let fresh_lockouts;
                let replanned;
                let (record, snapshot_read, snapshot, lockouts, plan, now) = if attempt == 0 {
                    (
                        record_first,
                        snapshot_first.1,
                        snapshot_first.0,
                        lockouts_first,
                        first_plan,
                        now,
                    )
                } else {
                    let mut reread = owned_thread(self, who, thread_id, RECENT_MESSAGES).await?;
                    with_problem(&mut reread.thread, shape, self.clock.now());
                    fresh = reread;
                    fresh_snapshot_read = self
                        .store
                        .get_snapshot(&who.student_id, &fresh.thread.course_id)
                        .await?;
                    fresh_snapshot = snapshot_or_new(
                        fresh_snapshot_read.as_ref(),
                        &who.student_id,
                        &fresh.thread.course_id,
                        &rt.course().entry_unit,
                    );
                    let now = self.clock.now();
                    let state = TurnState {
                        thread: &fresh.thread,
                        history: &fresh.recent_messages,
                        snapshot: &fresh_snapshot,
                    };
                    let wanted = turn::interpret(rt, state, event, now, turn_id)
                        .map_err(turn_error)?
                        .exam_questions;
                    fresh_lockouts = self
                        .exams
                        .statuses(self.store.as_ref(), &fresh_snapshot, &wanted, now)
                        .await?;
                    let env = TurnEnv {
                        now,
                        turn_id,
                        seed,
                        drill_key: &self.drill_key,
                        drill_ttl,
                        lockouts: &fresh_lockouts,
                        personalization,
                    };
                    let mut again = turn::plan(rt, state, event, &env).map_err(turn_error)?;
                    if again.safety.is_none() {
                        again.safety = moderation.clone();
                    }
                    replanned = again;
                    (
                        &fresh,
                        &fresh_snapshot_read,
                        &fresh_snapshot,
                        &fresh_lockouts,
                        &replanned,
                        now,
                    )
                };
                let applying = Instant::now();
                let env = TurnEnv {
                    now,
                    turn_id,
                    seed,
                    drill_key: &self.drill_key,
                    drill_ttl,
                    lockouts,
                    personalization,
                };
                let decision = tutor_reply.as_ref().map(|r| {
                    reply::decide(
                        rt.workflow(),
                        plan,
                        r,
                        &event.client_event,
                        offline,
                        valid_origin,
                    )
                });
                let state = TurnState {
                    thread: &record.thread,
                    history: &record.recent_messages,
                    snapshot,
                };
                let applied = turn::apply(
                    rt,
                    state,
                    plan,
                    decision.as_ref().map(|d| (&d.reply, d.origin)),
                    &env,
                )
                .map_err(turn_error)?;
                let lite = build_snapshot_lite(
                    &applied.snapshot,
                    rt.course(),
                    rt.workflow(),
                    lockouts,
                    now,
                );
                let response = TurnResponse {
                    turn_id: turn_id.clone(),
                    messages: applied.messages.clone(),
                    snapshot_lite: lite,
                    state: state_view(&applied.thread),
                };
                let entry =
                    turn_log::log_entry(plan, decision.as_ref(), applied.drill_evidence.as_ref());
                let action = progression(
                    rt.workflow(),
                    plan,
                    &record.thread,
                    &applied.thread,
                    matches!(shape, Shape::Webhook(_)),
                );
                let mut work = UnitOfWork::new();
                work.put_thread(record.update(applied.thread, applied.messages))
                    .put_snapshot(applied.snapshot, Expected::of(snapshot_read.as_ref()))
                    .log_turn(TurnLog {
                        thread_id: thread_id.to_owned(),
                        turn_id: turn_id.clone(),
                        student_id: who.student_id.clone(),
                        created_at: now,
                        entry: entry.clone(),
                    });
                let output = match shape {
                    Shape::App => respond(&mut work, lock, 200, &response)?,
                    Shape::Webhook(_) => respond(
                        &mut work,
                        lock,
                        200,
                        &webhook_reply(&response, plan, action),
                    )?,
                };
                Ok((
                    work,
                    (output, entry, applying.elapsed(), attempt + 1, action),
                ))
            }
        })
        .await;
        let (output, entry, apply_ms, attempts_used, action) = committed?;
        if action == ProgressionAction::Intervene && plan.safety.is_none() {
            self.notify_teacher(&who.student_id, thread_id, "stuck")
                .await;
        }
        tracing::info!(
            target: "tutorflow::turn",
            turn_id = %turn_id,
            thread_id = %thread_id,
            student_id = %who.student_id,
            chain = %entry,
            load_ms = load_ms.as_millis() as u64,
            plan_us = plan_ms.as_micros() as u64,
            llm_ms = llm_ms.as_millis() as u64,
            apply_us = apply_ms.as_micros() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            commit_attempts = attempts_used,
            "turn"
        );
        Ok(output)
    }

    /// The optional safety call (one more LLM call, only where the workflow
    /// asks for it). An unreachable model lets the message through: the
    /// rule-based gate has already run.
    async fn moderate(
        &self,
        rt: &CourseRuntime,
        bundle: &Arc<Bundle>,
        plan: &Plan,
    ) -> Option<SafetyHit> {
        let workflow = rt.workflow();
        let said = plan.said.as_ref()?;
        if plan.safety.is_some() || !workflow.safety.moderation {
            return None;
        }
        let timeout = StdDuration::from_millis(workflow.llm.safety.timeout_ms);
        let judge = self.llm.safety(
            bundle,
            &rt.course().workflow,
            Some(tokio::time::Instant::now() + timeout),
        );
        match judge
            .judge(&SafetyInput {
                message: said.clone(),
            })
            .await
        {
            Ok(Reply {
                value: SafetyOutcome::Judged(verdict),
                ..
            }) if !verdict.safe => {
                tracing::info!(category = ?verdict.category, reason = %verdict.reason, "safety call flagged a message");
                Some(safety::moderation_hit(workflow, verdict.category))
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "safety call failed; the rule-based gate stands");
                None
            }
        }
    }

    fn check_turn_request(&self, request: &TurnRequest) -> Result<(), ServiceError> {
        let limit = self.config.limits.max_message_chars;
        for (field, text) in [
            ("messageText", &request.message_text),
            ("messageLatex", &request.message_latex),
        ] {
            if let Some(text) = text
                && text.chars().count() > limit
            {
                return Err(ServiceError::invalid_field(
                    field,
                    format!("the message is longer than {limit} characters"),
                ));
            }
        }
        let said = [&request.message_text, &request.message_latex]
            .into_iter()
            .flatten()
            .any(|t| !t.trim().is_empty());
        if !said && request.client_event == ClientEvent::None {
            return Err(ServiceError::bad_request(
                "send messageText, messageLatex or a clientEvent",
            ));
        }
        Ok(())
    }
}

/// A problem sent by an integration becomes the pending question; a new
/// problem id starts it afresh (seed 003), the same one carries on.
fn with_problem(thread: &mut Thread, shape: Shape<'_>, now: DateTime<Utc>) {
    let Shape::Webhook(WebhookSettings {
        problem: Some(problem),
    }) = shape
    else {
        return;
    };
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
fn webhook_reply(
    response: &TurnResponse,
    plan: &Plan,
    action: ProgressionAction,
) -> WebhookTurnResponse {
    let mut parts = Vec::new();
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
    WebhookTurnResponse {
        output: parts.join("\n"),
        session_status: WebhookSessionStatus {
            current_problem_index: 0,
            action,
            problems_remaining: 0,
        },
        debug: Some(json!({
            "category": plan.category,
            "grade": plan.interpretation.as_ref().and_then(|i| i.grade.as_ref()).map(|g| g.result),
            "focusUnitId": plan.policy.policy.focus_unit_id,
            "turnId": response.turn_id,
        })),
    }
}

fn turn_error(e: turn::TurnError) -> ServiceError {
    ServiceError::internal(e.to_string())
}
