//! `POST /threads/{threadId}/turn`: a turn end to end, in any mode.
//!
//! Load → plan (pure) → at most one LLM call → validate, fall back
//! deterministically, apply (pure) → one atomic commit. The one call is the
//! tutor's, or, when the plan asks for a written exam answer to be judged,
//! the `exam_evaluation` call (its verdict handed back to the plan before
//! applying; the offline judge's stands if the call fails). On a version
//! conflict the state is read again and the same planning and applying run
//! on it with the same tutor reply or verdict (re-validated against the
//! fresh policy); the LLM is never asked twice. Every turn leaves one structured
//! log line and a stored turn log with the whole policy chain.

mod integration;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use super::error::ServiceError;
use super::events::check_client_event;
use super::idempotency::Idempotency;
use super::lease::ThreadLease;
use super::lockouts::LockoutsRead;
use super::threads::{
    RECENT_MESSAGES, ThreadReads, commit_with_retries, owned_thread, snapshot_or_new,
};
use super::views::state_view;
use super::{Output, Service};
use crate::content::Bundle;
use crate::engine::exam::judge;
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::modes;
use crate::engine::practice::drill_token::TokenKeys;
use crate::engine::runtime::CourseRuntime;
use crate::engine::safety::{FlagSource, SafetyHit, StreamGuard};
use crate::engine::session::progression::progression;
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::engine::turn::{self, ReplyOrigin, TurnError};
use crate::engine::turn_data::{Plan, TurnEnv, TurnEvent, TurnState};
use crate::engine::turn_log;
use crate::engine::turn_log::{StageTimings, TokenCount};
use crate::llm::OfflineTutor;
use crate::llm::prompt::tutor_prompt;
use crate::llm::provider::LlmCall;
use crate::llm::tokens;
use crate::model::{
    CallUsage, ClientEvent, Judgement, LlmError, LlmTutorResponse, OutboundEvent,
    OutboundEventKind, Personalization, Principal, ProgressionAction, Reply, SafetyInput,
    SafetyMark, SafetyOutcome, StudentSnapshot, TextSink, ThreadStatus, TurnRequest, TurnResponse,
};
use crate::store::{ThreadRecord, TurnLog, UnitOfWork, Versioned, WriteCondition};

pub(crate) use self::integration::{Shape, WebhookSettings};
use self::integration::{webhook_reply, with_problem};

/// When a turn arrived, and how long the reads under its lease took.
#[derive(Clone, Copy)]
pub(crate) struct TurnTimes {
    pub started: Instant,
    pub read_time: StdDuration,
}

/// What a turn is computed from besides state: the same in every commit attempt.
struct TurnCall<'a> {
    who: &'a Principal,
    thread_id: &'a str,
    shape: Shape<'a>,
    idempotency: &'a Idempotency,
    bundle: Arc<Bundle>,
    rt: Arc<CourseRuntime>,
    event: TurnEvent,
    turn_id: String,
    seed: u64,
    token_keys: &'a TokenKeys,
    drill_ttl: Duration,
    personalization: Personalization,
    safety_region: &'a str,
    /// The lease on the thread's item that the turn's commit releases.
    lease_token: Option<&'a str>,
}

impl TurnCall<'_> {
    fn env<'e>(
        &'e self,
        now: DateTime<Utc>,
        lockouts: &'e BTreeMap<String, LockoutStatus>,
    ) -> TurnEnv<'e> {
        TurnEnv {
            now,
            turn_id: &self.turn_id,
            seed: self.seed,
            token_keys: self.token_keys,
            drill_ttl: self.drill_ttl,
            lockouts,
            personalization: &self.personalization,
            safety_region: self.safety_region,
        }
    }
}

/// State as read for one attempt, and the plan made on it.
struct Planned {
    record: ThreadRecord,
    snapshot_read: Option<Versioned<StudentSnapshot>>,
    snapshot: StudentSnapshot,
    lockouts: BTreeMap<String, LockoutStatus>,
    now: DateTime<Utc>,
    plan: Plan,
    load_time: StdDuration,
    plan_time: StdDuration,
}

impl Planned {
    fn state(&self) -> TurnState<'_> {
        TurnState {
            thread: &self.record.thread,
            history: &self.record.recent_messages,
            snapshot: &self.snapshot,
        }
    }
}

/// A turn's response, and whether it replaces the text streamed so far
/// (the reply failed validation or sanitization, or a safety response
/// stands in for it).
#[derive(Debug)]
pub struct StreamedTurn {
    pub output: Output,
    pub replaced: bool,
}

/// The streamed text as the client saw it.
#[derive(Debug, Default)]
struct Streamed {
    shown: String,
    leaked: bool,
}

/// The tutor's pieces of text, into the turn's stream.
struct ChannelSink(UnboundedSender<String>);

impl TextSink for ChannelSink {
    fn text(&self, piece: &str) {
        // A closed stream (the client left) does not stop the turn.
        let _ = self.0.send(piece.to_owned());
    }
}

/// Passes the tutor's text on to the client through the leak guard, and
/// not before the online safety checks let the message through: a message
/// they flag never gets a maths reply, not even a glimpse of one.
async fn forward(
    mut pieces: UnboundedReceiver<String>,
    mut verdict: oneshot::Receiver<bool>,
    mut guard: StreamGuard<'_>,
    deltas: &UnboundedSender<String>,
) -> Streamed {
    let mut streamed = Streamed::default();
    let mut held = String::new();
    let mut open: Option<bool> = None;
    let show = |text: &str, streamed: &mut Streamed| {
        if !text.is_empty() {
            streamed.shown.push_str(text);
            let _ = deltas.send(text.to_owned());
        }
    };
    loop {
        tokio::select! {
            passed = &mut verdict, if open.is_none() => {
                let passed = passed.unwrap_or(false);
                open = Some(passed);
                if passed {
                    show(&std::mem::take(&mut held), &mut streamed);
                }
            }
            piece = pieces.recv() => match piece {
                Some(piece) => {
                    let safe = guard.push(&piece);
                    match open {
                        Some(true) => show(&safe, &mut streamed),
                        Some(false) => {}
                        None => held.push_str(&safe),
                    }
                }
                None => break,
            },
        }
    }
    held.push_str(&guard.finish());
    let passed = match open {
        Some(passed) => passed,
        None => verdict.await.unwrap_or(false),
    };
    if passed {
        show(&held, &mut streamed);
    }
    streamed.leaked = guard.leaked();
    streamed
}

/// The tutor's answer to a plan: `None` when a safety response stands in for it.
type TutorReply = Option<Result<Reply<LlmTutorResponse>, LlmError>>;

/// What the committed attempt leaves for after the commit.
struct Settled {
    output: Output,
    /// The tutor's own reply stands (not a fallback or safety response).
    reply_kept: bool,
    entry: serde_json::Value,
    action: ProgressionAction,
    /// How the tutor answered a message the safety gate flagged.
    safety: Option<SafetyMark>,
    /// Notifications the turn raised, sent once it is committed.
    events: Vec<OutboundEvent>,
    load_time: StdDuration,
    plan_time: StdDuration,
    apply_time: StdDuration,
    attempts: usize,
}

impl Service {
    pub async fn turn(
        &self,
        who: &Principal,
        thread_id: &str,
        request: TurnRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        self.run_turn(who, thread_id, request, idempotency, None)
            .await
            .map(|done| done.output)
    }

    /// [`turn`](Self::turn), sending the tutor's text to `deltas` as it is
    /// written — once the online safety checks have passed the message, and
    /// only what no leak pattern can still match. What is stored and
    /// returned is the same validated, sanitized response as ever.
    pub async fn turn_streaming(
        &self,
        who: &Principal,
        thread_id: &str,
        request: TurnRequest,
        idempotency: &Idempotency,
        deltas: &UnboundedSender<String>,
    ) -> Result<StreamedTurn, ServiceError> {
        self.run_turn(who, thread_id, request, idempotency, Some(deltas))
            .await
    }

    async fn run_turn(
        &self,
        who: &Principal,
        thread_id: &str,
        request: TurnRequest,
        idempotency: &Idempotency,
        deltas: Option<&UnboundedSender<String>>,
    ) -> Result<StreamedTurn, ServiceError> {
        let started = Instant::now();
        self.check_turn_request(&request)?;
        // One turn at a time per thread: the next one plans on what this one
        // commits, and no tutor call is spent on a reply that cannot commit.
        let lease = self.lease_thread(who, thread_id).await?;
        // On the heap: the turn's future is large, and a caller's stack
        // (a test's thread, a debug build) need not hold it.
        let result = Box::pin(async {
            let reading = Instant::now();
            let reads = self
                .read_thread_and_course(
                    who,
                    thread_id,
                    request.course_id.as_deref(),
                    RECENT_MESSAGES,
                )
                .await?;
            let times = TurnTimes {
                started,
                read_time: reading.elapsed(),
            };
            self.leased_turn(
                who,
                thread_id,
                reads,
                request,
                idempotency,
                Shape::App,
                &lease,
                times,
                deltas,
            )
            .await
        })
        .await;
        self.release_thread(lease, result.is_ok()).await;
        result
    }

    /// A turn under its thread's lease, on the thread and course state
    /// read under it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn leased_turn(
        &self,
        who: &Principal,
        thread_id: &str,
        reads: ThreadReads,
        request: TurnRequest,
        idempotency: &Idempotency,
        shape: Shape<'_>,
        lease: &ThreadLease,
        times: TurnTimes,
        deltas: Option<&UnboundedSender<String>>,
    ) -> Result<StreamedTurn, ServiceError> {
        let TurnTimes { started, read_time } = times;
        let lease_wait = lease.waited;
        // One read of the thread serves the idle check and the turn; only a
        // session that has just ended is read again, as it now stands.
        let reading = Instant::now();
        let ThreadReads {
            mut record,
            snapshot,
            lockouts,
        } = reads;
        if self.expire_idle(who, &record).await? {
            record = owned_thread(self, who, thread_id, RECENT_MESSAGES).await?;
        }
        refuse_if_paused(&record)?;
        with_problem(&mut record.thread, shape, self.clock.now());
        let mut call = self
            .turn_call(who, thread_id, shape, idempotency, &record, request)
            .await?;
        call.lease_token = lease.release_token();
        let thread_read = read_time + reading.elapsed();
        let mut first = self.plan_turn(&call, record, snapshot, lockouts).await?;
        first.load_time += thread_read;
        // Online moderation runs alongside the turn's LLM call, so it adds
        // no latency to a safe turn; a flagged message's reply is discarded.
        let calling = Instant::now();
        // A written exam answer: the evaluation call is the turn's one call
        // (the mode writes the reply, so the tutor is not asked).
        let (judged_moderation, verdict) = match first.plan.judging.clone() {
            Some(judging) if !pauses(&first.plan) => {
                let (moderation, verdict) = tokio::join!(
                    self.moderate(&call, &first.plan),
                    self.judge_answer(&call, &judging.request)
                );
                (Some(moderation), verdict.map(|v| (judging.request, v)))
            }
            _ => (None, None),
        };
        if let Some((request, verdict)) = &verdict {
            hand_back_verdict(&call, &mut first, request, verdict);
        }
        let (moderation, tutor_reply, streamed) = match deltas {
            _ if judged_moderation.is_some() => (
                judged_moderation.flatten(),
                self.ask_tutor(&call, &first.plan, None).await,
                Streamed::default(),
            ),
            None => {
                let (moderation, tutor_reply) = tokio::join!(
                    self.moderate(&call, &first.plan),
                    self.ask_tutor(&call, &first.plan, None)
                );
                (moderation, tutor_reply, Streamed::default())
            }
            Some(deltas) => {
                let (pieces, pieces_read) = mpsc::unbounded_channel();
                let (verdict, verdict_read) = oneshot::channel();
                let moderation = async {
                    let hit = self.moderate(&call, &first.plan).await;
                    let _ = verdict.send(hit.as_ref().is_none_or(|h| !h.pauses_tutoring()));
                    hit
                };
                let tutor = async {
                    let sink = ChannelSink(pieces);
                    self.ask_tutor(&call, &first.plan, Some(&sink)).await
                };
                let plan = &first.plan;
                let guard = call
                    .rt
                    .sanitizer
                    .stream_guard()
                    .with_answers(plan.pending_answers.iter().chain(&plan.exam_answers));
                tokio::join!(
                    moderation,
                    tutor,
                    forward(pieces_read, verdict_read, guard, deltas)
                )
            }
        };
        let llm_time = calling.elapsed();
        let from_model = self.llm.provider(LlmCall::Tutor).is_some();
        let measured = Measured {
            started,
            lease_wait,
            llm_time,
            tokens: tutor_tokens(&call.rt, &first.plan, &tutor_reply, from_model),
        };
        screen(&mut first.plan, moderation.as_ref());
        let tutor_reply = tutor_reply.filter(|_| !pauses(&first.plan));

        // After a conflict, planning runs again on fresh state; the reply stays.
        let mut first = Some(first);
        let settled = commit_with_retries(self, |attempt| {
            let ready = first.take();
            let (call, moderation, tutor_reply) = (&call, &moderation, &tutor_reply);
            let verdict = &verdict;
            async move {
                let planned = match ready {
                    Some(planned) => planned,
                    None => {
                        let reading = Instant::now();
                        let reads = self.turn_thread(call, shape).await?;
                        let read_time = reading.elapsed();
                        let mut planned = self
                            .plan_turn(call, reads.record, reads.snapshot, reads.lockouts)
                            .await?;
                        planned.load_time += read_time;
                        screen(&mut planned.plan, moderation.as_ref());
                        if let Some((request, verdict)) = verdict {
                            hand_back_verdict(call, &mut planned, request, verdict);
                        }
                        planned
                    }
                };
                self.apply_turn(call, &planned, tutor_reply, attempt, &measured)
            }
        })
        .await?;

        if let Some(mark) = &settled.safety {
            // The category only: a student's words stay out of info logs.
            tracing::info!(
                target: "tutorflow::safety",
                thread_id,
                category = %mark.category,
                escalated = mark.escalated,
                alert = mark.alert,
                "the safety gate answered a message"
            );
        }
        let alert = match &settled.safety {
            Some(mark) if mark.alert => Some(format!("intervention.needed:{}", mark.category)),
            Some(_) => None,
            None if settled.action == ProgressionAction::Intervene => Some("stuck".to_owned()),
            None => None,
        };
        if let Some(reason) = alert {
            self.teacher_alerts
                .send(&who.student_id, thread_id, &reason, self.clock.now())
                .await;
        }
        log_turn(&call, &settled, llm_time, lease_wait, started.elapsed());
        let mut events = settled.events;
        if let Some(mark) = settled.safety.as_ref().filter(|m| m.alert) {
            // The category only: a student's words are not sent on.
            events.push(OutboundEvent {
                kind: OutboundEventKind::InterventionNeeded,
                data: json!({ "reason": "safety", "category": mark.category }),
            });
        }
        self.send_events(&who.student_id, thread_id, &call.turn_id, events)
            .await;
        let shown = !streamed.shown.is_empty();
        Ok(StreamedTurn {
            replaced: shown && (streamed.leaked || !settled.reply_kept),
            output: settled.output,
        })
    }

    /// The caller's thread and the student's state in its course, read
    /// afresh in one round, with the problem an integration sent.
    async fn turn_thread(
        &self,
        call: &TurnCall<'_>,
        shape: Shape<'_>,
    ) -> Result<ThreadReads, ServiceError> {
        let mut reads = self
            .read_thread_and_course(
                call.who,
                call.thread_id,
                Some(&call.rt.course().id),
                RECENT_MESSAGES,
            )
            .await?;
        refuse_if_paused(&reads.record)?;
        with_problem(&mut reads.record.thread, shape, self.clock.now());
        Ok(reads)
    }

    /// What the turn is computed from: the course's content, the event,
    /// fresh ids. The request must be about the thread's course.
    async fn turn_call<'a>(
        &'a self,
        who: &'a Principal,
        thread_id: &'a str,
        shape: Shape<'a>,
        idempotency: &'a Idempotency,
        record: &ThreadRecord,
        request: TurnRequest,
    ) -> Result<TurnCall<'a>, ServiceError> {
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
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &record.thread.course_id)?;
        check_client_event(rt.course(), &request.client_event)?;
        modes::for_mode(record.thread.mode)
            .check_event(
                &record.thread,
                &bundle,
                &request.client_event,
                request.message_text.as_deref(),
            )
            .map_err(|e| ServiceError::invalid_field(e.field, e.detail))?;
        Ok(TurnCall {
            who,
            thread_id,
            shape,
            idempotency,
            bundle,
            rt,
            event: TurnEvent {
                message_text: request.message_text,
                message_latex: request.message_latex,
                client_event: request.client_event,
            },
            turn_id: self.ids.new_id(),
            seed: self.ids.seed(),
            token_keys: &self.token_keys,
            drill_ttl: Duration::seconds(
                i64::try_from(self.config.drills.token_ttl_seconds).unwrap_or(i64::MAX / 2),
            ),
            personalization: record.thread.session.personalization.clone(),
            safety_region: &self.config.safety.region,
            lease_token: None,
        })
    }

    /// Plan on what was read: the exam statuses the turn's reading names
    /// (from the lockouts read with the snapshot), then the pure plan.
    async fn plan_turn(
        &self,
        call: &TurnCall<'_>,
        record: ThreadRecord,
        snapshot_read: Option<Versioned<StudentSnapshot>>,
        lockouts_read: LockoutsRead,
    ) -> Result<Planned, ServiceError> {
        let loading = Instant::now();
        let course_id = &record.thread.course_id;
        let student_id = &call.who.student_id;
        let snapshot = snapshot_or_new(
            snapshot_read.as_ref(),
            student_id,
            course_id,
            &call.rt.course().entry_unit,
        );
        let now = self.clock.now();
        let state = TurnState {
            thread: &record.thread,
            history: &record.recent_messages,
            snapshot: &snapshot,
        };
        let read = turn::interpret(&call.rt, state, &call.event, now, &call.turn_id)
            .map_err(turn_error)?;
        let lockouts = self
            .exams
            .statuses(&lockouts_read, &snapshot, &read.exam_questions, now)
            .await?;
        let load_time = loading.elapsed();
        let planning = Instant::now();
        let plan = turn::plan_interpreted(
            &call.rt,
            state,
            &call.event,
            read,
            &call.env(now, &lockouts),
        )
        .map_err(turn_error)?;
        Ok(Planned {
            record,
            snapshot_read,
            snapshot,
            lockouts,
            now,
            plan,
            load_time,
            plan_time: planning.elapsed(),
        })
    }

    /// The one tutor call, unless a safety response stands in for it;
    /// streamed into `sink` when there is one.
    async fn ask_tutor(
        &self,
        call: &TurnCall<'_>,
        plan: &Plan,
        sink: Option<&ChannelSink>,
    ) -> TutorReply {
        if pauses(plan) {
            return None;
        }
        if let Some(reply) = &plan.scripted {
            return Some(Ok(Reply {
                value: reply.clone(),
                usage: CallUsage::scripted(),
            }));
        }
        let timeout = StdDuration::from_millis(call.rt.workflow().llm.tutor.timeout_ms);
        let tutor = self.llm.tutor(
            &call.bundle,
            &call.rt.course().workflow,
            Some(tokio::time::Instant::now() + timeout),
        );
        Some(match sink {
            Some(sink) => tutor.decide_streaming(&plan.input, sink).await,
            None => tutor.decide(&plan.input).await,
        })
    }

    /// The `exam_evaluation` call on one written answer, through the
    /// evaluator seam: the model's verdict, or `None` when it gave none
    /// (no model configured, a failure, a timeout, an invalid reply), and
    /// the offline judge's verdict already in the plan stands.
    async fn judge_answer(
        &self,
        call: &TurnCall<'_>,
        request: &judge::JudgeRequest,
    ) -> Option<judge::WrittenMark> {
        self.llm.provider(LlmCall::ExamEvaluation)?;
        let timeout = StdDuration::from_millis(call.rt.workflow().llm.exam_evaluation.timeout_ms);
        let evaluator = self.llm.exam_evaluator(
            &call.bundle,
            &call.rt.course().workflow,
            Some(tokio::time::Instant::now() + timeout),
        );
        match tokio::time::timeout(timeout, evaluator.evaluate(&request.input)).await {
            Ok(Ok(Reply {
                value: Judgement::Judged(evaluation),
                ..
            })) => Some(judge::WrittenMark::from_model(&evaluation)),
            Ok(Ok(_)) => None,
            Ok(Err(e)) => {
                tracing::warn!(
                    thread_id = call.thread_id,
                    error = %e,
                    "exam evaluation failed; the offline judge's mark stands"
                );
                None
            }
            Err(_) => {
                tracing::warn!(
                    thread_id = call.thread_id,
                    "exam evaluation timed out; the offline judge's mark stands"
                );
                None
            }
        }
    }

    /// Validate the reply (or fall back), apply it to the planned state, and
    /// build the unit of work that commits it with the response.
    fn apply_turn(
        &self,
        call: &TurnCall<'_>,
        planned: &Planned,
        tutor_reply: &TutorReply,
        attempt: usize,
        measured: &Measured,
    ) -> Result<(UnitOfWork, Settled), ServiceError> {
        let applying = Instant::now();
        let (rt, plan, now) = (&call.rt, &planned.plan, planned.now);
        // A reply the mode wrote is the one written on this attempt's state
        // (after a conflict, the state the reply is applied to).
        let own_reply: TutorReply;
        let tutor_reply = match &plan.scripted {
            Some(reply) if tutor_reply.is_some() => {
                own_reply = Some(Ok(Reply {
                    value: reply.clone(),
                    usage: CallUsage::scripted(),
                }));
                &own_reply
            }
            _ => tutor_reply,
        };
        let offline = OfflineTutor::new(rt.bundle.clone(), &rt.course().workflow);
        let valid_origin = if self.llm.provider(LlmCall::Tutor).is_some() && plan.scripted.is_none()
        {
            ReplyOrigin::Llm
        } else {
            ReplyOrigin::Offline
        };
        let decision = tutor_reply.as_ref().map(|r| {
            turn::decide(
                rt.workflow(),
                plan,
                r,
                &call.event.client_event,
                &offline,
                valid_origin,
            )
        });
        let applied = turn::apply(
            rt,
            planned.state(),
            plan,
            decision.as_ref().map(|d| (&d.reply, d.origin)),
            &call.env(now, &planned.lockouts),
        )
        .map_err(turn_error)?;
        let safety = applied.messages.iter().rev().find_map(|m| m.safety.clone());
        let reply_kept = decision
            .as_ref()
            .is_some_and(|d| d.origin != ReplyOrigin::Fallback);
        let apply_time = applying.elapsed();
        let timings = StageTimings {
            lease_wait_ms: StageTimings::ms(measured.lease_wait),
            load_ms: StageTimings::ms(planned.load_time),
            plan_ms: StageTimings::ms(planned.plan_time),
            llm_ms: StageTimings::ms(measured.llm_time),
            apply_ms: StageTimings::ms(apply_time),
            until_commit_ms: StageTimings::ms(measured.started.elapsed()),
            commit_attempt: attempt + 1,
        };
        let mut entry = turn_log::log_entry(
            plan,
            decision.as_ref(),
            applied.drill_evidence.as_ref(),
            safety.as_ref(),
            &timings,
            measured.tokens.as_ref(),
        );
        // Who marked a written answer; never the mark (the logs are read
        // during a deferred exam).
        if let Some(judging) = &plan.judging
            && let Some(entry) = entry.as_object_mut()
        {
            entry.insert(
                "examJudge".into(),
                json!({ "question": judging.request.number, "by": judging.verdict.by }),
            );
        }
        let response = TurnResponse {
            turn_id: call.turn_id.clone(),
            messages: applied.messages.clone(),
            snapshot_lite: build_snapshot_lite(
                &applied.snapshot,
                rt.course(),
                rt.workflow(),
                &planned.lockouts,
                now,
            ),
            state: state_view(&applied.thread, &rt.bundle),
            debug: self.turn_debug(
                call.who,
                &entry,
                &plan.policy.policy,
                &applied.snapshot,
                rt.course(),
            ),
        };
        let events = applied.events;
        let action = progression(
            rt.workflow(),
            plan,
            &planned.record.thread,
            &applied.thread,
            matches!(call.shape, Shape::Webhook(_)),
        );
        let mut work = UnitOfWork::new();
        let mut thread_change = planned.record.update(applied.thread, applied.messages);
        if let Some(token) = call.lease_token {
            thread_change = thread_change.releasing(token);
        }
        work.put_thread(thread_change)
            .put_snapshot(
                applied.snapshot,
                WriteCondition::of(planned.snapshot_read.as_ref()),
            )
            .log_turn(TurnLog {
                thread_id: call.thread_id.to_owned(),
                turn_id: call.turn_id.clone(),
                student_id: call.who.student_id.clone(),
                created_at: now,
                committed_at: self.clock.now(),
                entry: entry.clone(),
            });
        let output = match call.shape {
            Shape::App => call.idempotency.respond(&mut work, 200, &response)?,
            Shape::Webhook(_) => call.idempotency.respond(
                &mut work,
                200,
                &webhook_reply(&response, plan, action, call.shape),
            )?,
        };
        let settled = Settled {
            output,
            reply_kept,
            entry,
            action,
            safety,
            events,
            load_time: planned.load_time,
            plan_time: planned.plan_time,
            apply_time,
            attempts: attempt + 1,
        };
        Ok((work, settled))
    }

    /// The online checks the workflow asks for, together: the moderation
    /// provider (where one is configured) and the safety LLM call. Not
    /// asked when the offline gate has already paused tutoring; a check
    /// that fails or is late leaves the offline verdict standing.
    async fn moderate(&self, call: &TurnCall<'_>, plan: &Plan) -> Option<SafetyHit> {
        let said = plan.student_words()?;
        if pauses(plan) {
            return None;
        }
        let (rt, settings) = (&call.rt, &call.rt.workflow().safety);
        let provider = async {
            let moderator = self.moderator.as_ref().filter(|_| settings.moderation)?;
            let deadline = tokio::time::Instant::now() + moderator.timeout();
            match moderator.flagged(said, deadline).await {
                Ok(names) => rt.safety.online(&names, FlagSource::Moderation),
                Err(e) => {
                    tracing::warn!(error = %e, "moderation failed; the offline gate stands");
                    None
                }
            }
        };
        let judge = async {
            if !settings.llm_judge {
                return None;
            }
            let timeout = StdDuration::from_millis(rt.workflow().llm.safety.timeout_ms);
            let judge = self.llm.safety(
                &call.bundle,
                &rt.course().workflow,
                Some(tokio::time::Instant::now() + timeout),
            );
            match judge
                .judge(&SafetyInput {
                    message: said.to_owned(),
                })
                .await
            {
                Ok(Reply {
                    value: SafetyOutcome::Judged(verdict),
                    ..
                }) if !verdict.safe => rt.safety.judged(verdict.category),
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(error = %e, "safety call failed; the offline gate stands");
                    None
                }
            }
        };
        let (moderated, judged) = tokio::join!(provider, judge);
        SafetyHit::most_serious(moderated, judged)
    }

    pub(crate) fn check_turn_request(&self, request: &TurnRequest) -> Result<(), ServiceError> {
        let limit = self.config.limits.max_message_chars;
        for (field, text) in [
            ("messageText", &request.message_text),
            ("messageLatex", &request.message_latex),
        ] {
            if let Some(text) = text {
                if text.chars().count() > limit {
                    return Err(ServiceError::invalid_field(
                        field,
                        format!("the message is longer than {limit} characters"),
                    ));
                }
                super::text_hygiene::check(field, text)?;
            }
        }
        let said = [&request.message_text, &request.message_latex]
            .into_iter()
            .flatten()
            .any(|t| !t.trim().is_empty());
        if !said && request.client_event == ClientEvent::None {
            return Err(ServiceError::invalid_request(
                "send messageText, messageLatex or a clientEvent",
            ));
        }
        Ok(())
    }
}

/// What a turn measured before it applies: the same in every commit attempt.
#[derive(Clone, Copy)]
struct Measured {
    /// The request's arrival.
    started: Instant,
    lease_wait: StdDuration,
    llm_time: StdDuration,
    /// The tutor call's tokens, counted once: a re-plan after a version
    /// conflict reuses the reply, so no more were spent.
    tokens: Option<TokenCount>,
}

/// The tokens of the turn's tutor call: the provider's counts; offline, the
/// estimate of the prompt a model would be sent and of the reply; `None`
/// when no model was asked (a reply the mode wrote, a message the safety
/// gate stopped first, a failed call).
fn tutor_tokens(
    rt: &CourseRuntime,
    plan: &Plan,
    tutor_reply: &TutorReply,
    from_model: bool,
) -> Option<TokenCount> {
    let reply = tutor_reply.as_ref()?.as_ref().ok()?;
    if plan.scripted.is_some() {
        return None;
    }
    if from_model {
        return Some(TokenCount {
            prompt: reply.usage.input_tokens,
            completion: reply.usage.output_tokens,
            estimated: false,
        });
    }
    let prompt = tutor_prompt(&rt.bundle.prompts, rt.workflow(), &plan.input).ok()?;
    let completion = serde_json::to_string(&reply.value).ok()?;
    Some(TokenCount {
        prompt: prompt.tokens,
        completion: tokens::estimate(&completion),
        estimated: true,
    })
}

/// The turn's one structured log line: the policy chain and timings.
fn log_turn(
    call: &TurnCall<'_>,
    settled: &Settled,
    llm_time: StdDuration,
    lease_wait: StdDuration,
    total: StdDuration,
) {
    tracing::info!(
        target: "tutorflow::turn",
        turn_id = %call.turn_id,
        thread_id = %call.thread_id,
        student_id = %call.who.student_id,
        chain = %settled.entry,
        load_ms = settled.load_time.as_millis() as u64,
        plan_us = settled.plan_time.as_micros() as u64,
        llm_ms = llm_time.as_millis() as u64,
        apply_us = settled.apply_time.as_micros() as u64,
        total_ms = total.as_millis() as u64,
        lease_wait_ms = lease_wait.as_millis() as u64,
        commit_attempts = settled.attempts,
        "turn"
    );
}

/// The evaluation call's verdict handed back to a plan that asked for it:
/// the mode writes its reply again with it.
fn hand_back_verdict(
    call: &TurnCall<'_>,
    planned: &mut Planned,
    request: &judge::JudgeRequest,
    verdict: &judge::WrittenMark,
) {
    let state = TurnState {
        thread: &planned.record.thread,
        history: &planned.record.recent_messages,
        snapshot: &planned.snapshot,
    };
    turn::judged(
        &call.rt,
        state,
        &mut planned.plan,
        request,
        verdict.clone(),
        &call.env(planned.now, &planned.lockouts),
    );
}

/// The online checks' verdict joined with the offline one: the more
/// serious stands.
fn screen(plan: &mut Plan, online: Option<&SafetyHit>) {
    plan.safety = SafetyHit::most_serious(plan.safety.take(), online.cloned());
}

/// The safety gate's response is the whole turn.
fn pauses(plan: &Plan) -> bool {
    plan.safety.as_ref().is_some_and(SafetyHit::pauses_tutoring)
}

/// A turn the engine could not compute is the server's fault, never the caller's.
fn turn_error(e: TurnError) -> ServiceError {
    ServiceError::internal(e.to_string())
}

/// A paused session takes no turns until its student resumes it.
fn refuse_if_paused(record: &ThreadRecord) -> Result<(), ServiceError> {
    if record.thread.status == ThreadStatus::Paused {
        return Err(super::lifecycle::wrong_state(
            &record.thread,
            "taking a turn",
        ));
    }
    Ok(())
}
