//! `POST /threads/{threadId}/pause`, `/resume` and `/end`: a session's
//! lifecycle, the same in every mode. A paused thread keeps its state
//! exactly as it was and refuses turns (409) until it is resumed; an ended
//! thread is completed, and its mode closes its own state as its own finish
//! would, in the same commit: an exam is scored and its answers become
//! evidence, a problem set sends its report, a question session recaps.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::threads::{commit_with_retries, owned_thread};
use super::views::state_view;
use super::{Output, Service};
use crate::content::Bundle;
use crate::engine::modes::{self, Ended, Ending};
use crate::engine::session::timeline::{self, SessionClose};
use crate::model::{Principal, Role, Thread, ThreadStateView, ThreadStatus, TutorMessage};
use crate::store::{UnitOfWork, WriteCondition};

/// What the student asks of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleChange {
    Pause,
    Resume,
    End,
}

/// The answer to a lifecycle request: the thread's state after it, and the
/// messages it added (an ended session's summary).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleResponse {
    pub thread_id: String,
    pub status: ThreadStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    pub state: ThreadStateView,
    pub messages: Vec<TutorMessage>,
}

/// The refusal naming the state a thread is in that does not allow `what`.
pub(crate) fn wrong_state(thread: &Thread, what: &str) -> ServiceError {
    let hint = match thread.status {
        ThreadStatus::Paused => "; resume it first (POST /threads/{threadId}/resume)",
        ThreadStatus::Completed | ThreadStatus::Active => "",
    };
    ServiceError::ThreadStatus {
        status: thread.status,
        detail: format!(
            "thread `{}` is {}: {what} is not possible{hint}",
            thread.thread_id,
            status_word(thread.status)
        ),
    }
}

fn status_word(status: ThreadStatus) -> &'static str {
    match status {
        ThreadStatus::Active => "active",
        ThreadStatus::Paused => "paused",
        ThreadStatus::Completed => "completed",
    }
}

impl Service {
    pub async fn change_lifecycle(
        &self,
        who: &Principal,
        thread_id: &str,
        change: LifecycleChange,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let bundle = self.bundle().await;
        let (output, events) = commit_with_retries(self, |_| {
            let bundle = bundle.clone();
            async move {
                let record = owned_thread(self, who, thread_id, 0).await?;
                let now = self.clock.now();
                let mut thread = record.thread.clone();
                let mut messages = Vec::new();
                let mut work = UnitOfWork::new();
                let mut events = Vec::new();
                match (change, thread.status) {
                    // Asking for the state the thread is already in changes nothing.
                    (LifecycleChange::Pause, ThreadStatus::Paused)
                    | (LifecycleChange::Resume, ThreadStatus::Active)
                    | (LifecycleChange::End, ThreadStatus::Completed) => {}
                    (LifecycleChange::Pause, ThreadStatus::Active) => {
                        thread.status = ThreadStatus::Paused;
                        thread.paused_at = Some(now);
                    }
                    (LifecycleChange::Resume, ThreadStatus::Paused) => {
                        thread.status = ThreadStatus::Active;
                        // The idle clock restarts from here (`updated_at`);
                        // the mode takes the pause off its own clocks.
                        if let Some(paused_at) = thread.paused_at.take() {
                            modes::for_mode(thread.mode).resumed(
                                &mut thread,
                                (now - paused_at).max(chrono::Duration::zero()),
                            );
                        }
                    }
                    (LifecycleChange::Pause | LifecycleChange::Resume, ThreadStatus::Completed) => {
                        return Err(wrong_state(
                            &thread,
                            if change == LifecycleChange::Pause {
                                "pausing"
                            } else {
                                "resuming"
                            },
                        ));
                    }
                    (LifecycleChange::End, ThreadStatus::Active | ThreadStatus::Paused) => {
                        thread.status = ThreadStatus::Completed;
                        thread.paused_at = None;
                        thread.ended_at = Some(now);
                        let ended = self
                            .close_session(&bundle, who, &mut thread, &mut work, now)
                            .await?;
                        let entry = timeline::close_entry(
                            thread.session.turn_count,
                            SessionClose::Ended,
                            now,
                        );
                        timeline::record(&mut thread.session.timeline, entry);
                        if let Some(text) = ended.text {
                            messages.push(TutorMessage {
                                id: format!("{thread_id}-end"),
                                thread_id: thread_id.to_owned(),
                                role: Role::Assistant,
                                text,
                                latex: None,
                                card: None,
                                card_state: None,
                                event: None,
                                safety: None,
                                created_at: now,
                            });
                        }
                        events = ended.events;
                    }
                }
                if thread != record.thread {
                    thread.updated_at = now;
                }
                let response = LifecycleResponse {
                    thread_id: thread.thread_id.clone(),
                    status: thread.status,
                    paused_at: thread.paused_at,
                    ended_at: thread.ended_at,
                    state: state_view(&thread, &bundle),
                    messages: messages.clone(),
                };
                if thread != record.thread {
                    work.put_thread(record.update(thread, messages));
                }
                let output = idempotency.respond(&mut work, 200, &response)?;
                Ok((work, (output, events)))
            }
        })
        .await?;
        // Sent once the end is committed, as a turn's are; the end happens
        // once, so its events have one id each however often it is asked.
        self.send_events(&who.student_id, thread_id, END_TURN_ID, events)
            .await;
        Ok(output)
    }
}

impl Service {
    /// The thread's mode closes its session as its own finish would; what
    /// that changes in the student's record joins `work`.
    async fn close_session(
        &self,
        bundle: &Bundle,
        who: &Principal,
        thread: &mut Thread,
        work: &mut UnitOfWork,
        now: DateTime<Utc>,
    ) -> Result<Ended, ServiceError> {
        let course = bundle.course(&thread.course_id);
        let workflow = course.and_then(|c| bundle.workflow_for(c));
        // A course no longer published: the thread just completes.
        let Some((course, workflow)) = course.zip(workflow) else {
            return Ok(Ended::default());
        };
        let (read, before) = self.read_snapshot(who, course).await?;
        let mut snapshot = before.clone();
        let ended = modes::for_mode(thread.mode).end(&mut Ending {
            course,
            workflow,
            now,
            thread,
            snapshot: &mut snapshot,
        });
        if snapshot != before {
            work.put_snapshot(snapshot, WriteCondition::of(read.as_ref()));
        }
        Ok(ended)
    }
}

/// The turn id a session's end raises its notifications under.
const END_TURN_ID: &str = "end";
