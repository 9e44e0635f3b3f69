//! `POST /threads/{threadId}/pause`, `/resume` and `/end`: a session's
//! lifecycle, the same in every mode. A paused thread keeps its state
//! exactly as it was and refuses turns (409) until it is resumed; an ended
//! thread is completed, and its mode closes its own state as its own finish
//! would, in the same commit: an exam is scored and its answers become
//! evidence, a problem set sends its report, a question session recaps.
//! A session idle past its mode's time to live ends here too, with a notice
//! in the conversation, when it is next read or swept (`expire_idle`).

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
use crate::store::{ThreadRecord, UnitOfWork, WriteCondition};

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

/// A session idle past its time to live.
impl Service {
    /// Ends the caller's thread if its mode's session has been idle past
    /// its time to live, saying so in the conversation and sending the
    /// session's report. Whether it ended now.
    pub(crate) async fn expire_if_idle(
        &self,
        who: &Principal,
        thread_id: &str,
    ) -> Result<bool, ServiceError> {
        let record = owned_thread(self, who, thread_id, 0).await?;
        self.expire_idle(who, &record).await
    }

    /// [`expire_if_idle`](Self::expire_if_idle) on a thread already read.
    pub(crate) async fn expire_idle(
        &self,
        who: &Principal,
        record: &ThreadRecord,
    ) -> Result<bool, ServiceError> {
        let thread_id = record.thread.thread_id.as_str();
        // A paused session waits for its student: it is not idle; a
        // completed one has nothing left to close.
        if record.thread.status != ThreadStatus::Active {
            return Ok(false);
        }
        let mode = modes::for_mode(record.thread.mode);
        let bundle = self.bundle().await;
        // A course no longer published has no time to live to go by; a
        // caller that needs the course reports it.
        let Ok(rt) = self.runtime(&bundle, &record.thread.course_id) else {
            return Ok(false);
        };
        let now = self.clock.now();
        let mut thread = record.thread.clone();
        let Some(expired) = mode.expire(&mut thread, rt.course(), rt.workflow(), now) else {
            return Ok(false);
        };
        if thread.status == ThreadStatus::Completed && thread.ended_at.is_none() {
            thread.ended_at = Some(now);
        }
        let entry = timeline::close_entry(thread.session.turn_count, SessionClose::Expired, now);
        timeline::record(&mut thread.session.timeline, entry);
        let notice = TutorMessage {
            id: format!("{thread_id}-expired-{}", now.timestamp()),
            thread_id: thread_id.to_owned(),
            role: Role::Assistant,
            text: expired.notice.clone(),
            latex: None,
            card: None,
            card_state: None,
            event: None,
            safety: None,
            created_at: now,
        };
        let mut work = UnitOfWork::new();
        work.put_thread(record.update(thread, vec![notice]));
        match self.store.commit(work).await {
            Ok(()) => {
                let turn_id = format!("expired-{}", record.thread.updated_at.timestamp_millis());
                self.send_events(&who.student_id, thread_id, &turn_id, expired.events)
                    .await;
                Ok(true)
            }
            // Another request got there first: it has ended either way.
            Err(crate::store::StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}
