//! Idempotent requests: a request sent again with the same key gets the
//! first one's response back and applies nothing twice. Its whole life is
//! here: it begins ([`Service::begin_idempotent`]) by taking an in-progress
//! record for each of its keys, or by finding the stored response; its use
//! case completes the first record in the same commit as its changes
//! ([`Idempotency::respond`]); once the use case has run,
//! [`Service::finish_idempotent`] keeps the response under its other keys, or
//! releases every record if it failed. The records themselves are the
//! store's (`store::IdempotencyKey`).
//!
//! A student's request is keyed by its `Idempotency-Key` header (or a
//! turn's `clientTurnId`). A signed webhook is always keyed by its
//! signature, since the header is not signed: a captured request sent again
//! inside the signature's window, with or without a fresh header, is
//! answered from the store. The header still works for an integration that
//! signs each retry anew; its record is kept next to the signature's.

use std::time::Duration as StdDuration;

use chrono::Duration;
use serde::Serialize;

use super::error::{KeySource, ServiceError};
use super::lockouts::ExamGateway;
use super::{JSON, Output, Service};
use crate::llm::provider::LlmCall;
use crate::model::Principal;
use crate::store::{
    Begin, IdempotencyKey, IdempotencyLock, StoreError, StoredResponse, UnitOfWork,
};

/// Time a request needs besides the calls it waits on: store round trips
/// and commits retried after a conflict.
const BASE_WORK: StdDuration = StdDuration::from_secs(5);
/// How long a transcription may take (see `service::transcribe`).
const TRANSCRIPTION: StdDuration = StdDuration::from_secs(60);

/// What a request does, as far as its idempotency is concerned: what it
/// may wait on, and how its response is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Operation {
    /// A turn, from the app or a webhook: the tutor, safety and exam calls.
    Turn,
    /// A drill answer, graded by the drill-grading call where configured.
    DrillGrade,
    /// An exam submission or memo view: a lockout read, then the action.
    ExamAction,
    /// A transcription: no commit of its own, so its response is kept after.
    Transcription,
    /// A presigned upload URL, which expires: never kept.
    TranscriptionUpload,
    /// Anything that calls nothing slow.
    #[default]
    Other,
}

/// Who a request's keys belong to.
pub enum KeyHolder<'a> {
    Student(&'a Principal),
    /// An integration acting for `student`, as the request's body names
    /// them (none: the use case refuses the body before applying anything).
    Integration {
        id: &'a str,
        student: Option<String>,
        /// The request's signature, which keys it whatever the client sends.
        signature: Option<&'a str>,
    },
}

/// The keys a client sent with a request.
#[derive(Debug, Default)]
pub struct ClientKeys {
    /// The `Idempotency-Key` header.
    pub header: Option<String>,
    /// A turn's `clientTurnId`.
    pub client_turn_id: Option<String>,
}

/// The idempotency of one request while it runs: the records it holds,
/// handed to its use case, which completes the first one with its commit.
#[derive(Debug, Default)]
pub struct Idempotency {
    operation: Operation,
    /// Completed in the same commit as the request's state changes.
    primary: Option<IdempotencyLock>,
    /// A webhook's `Idempotency-Key`, kept once the request has succeeded.
    header: Option<IdempotencyLock>,
}

/// What the start of a request found.
pub enum Begun {
    /// Done before: answer with this and apply nothing.
    Replay(StoredResponse),
    Run(Box<Idempotency>),
}

impl Idempotency {
    fn run(self) -> Begun {
        Begun::Run(Box::new(self))
    }

    /// Serializes `value` as the response and, when the request is keyed,
    /// stores it with `work`, the commit that applies the request.
    pub(crate) fn respond<T: Serialize>(
        &self,
        work: &mut UnitOfWork,
        status: u16,
        value: &T,
    ) -> Result<Output, ServiceError> {
        let output = Output::json(status, value)?;
        if let Some(lock) = &self.primary {
            work.complete_idempotency(lock.clone(), stored(&output));
        }
        Ok(output)
    }

    fn all(&self) -> impl Iterator<Item = &IdempotencyLock> {
        self.primary.iter().chain(&self.header)
    }
}

fn stored(output: &Output) -> StoredResponse {
    StoredResponse {
        status: output.status,
        content_type: JSON.into(),
        body: output.body.clone(),
    }
}

impl Service {
    /// Takes the records of a request's keys, or finds its stored
    /// response. `request_hash` identifies what was asked (path and body),
    /// so a key sent again with another request is refused.
    pub async fn begin_idempotent(
        &self,
        operation: Operation,
        holder: KeyHolder<'_>,
        keys: ClientKeys,
        request_hash: &str,
    ) -> Result<Begun, ServiceError> {
        let lock_for = self.time_limit(operation).await;
        let now = self.clock.now();
        let begin = |key: IdempotencyKey| async move {
            self.store
                .begin_idempotency(&key, request_hash, now, lock_for)
                .await
        };
        let unkeyed = Idempotency {
            operation,
            ..Idempotency::default()
        };
        match holder {
            KeyHolder::Student(who) => {
                let (raw, source) = match (keys.header, keys.client_turn_id) {
                    (Some(raw), _) => (raw, KeySource::Header),
                    (None, Some(raw)) => (raw, KeySource::ClientTurnId),
                    (None, None) => return Ok(unkeyed.run()),
                };
                let key = IdempotencyKey::for_student(&who.student_id, &raw)
                    .map_err(|e| invalid_key(e, source))?;
                Ok(match begin(key).await? {
                    Begin::Replay(stored) => Begun::Replay(stored),
                    Begin::Acquired(lock) => Idempotency {
                        primary: Some(lock),
                        ..unkeyed
                    }
                    .run(),
                })
            }
            KeyHolder::Integration {
                id,
                student,
                signature,
            } => {
                let Some(student) = student else {
                    return Ok(unkeyed.run());
                };
                let scoped = |raw: &str| {
                    IdempotencyKey::for_integration(
                        id,
                        &Principal::integration_student(id, &student).student_id,
                        raw,
                    )
                    .ok()
                };
                let Some(signed) = signature.and_then(|s| scoped(&format!("sig:{s}"))) else {
                    return Ok(unkeyed.run());
                };
                let primary = match begin(signed).await? {
                    Begin::Replay(stored) => return Ok(Begun::Replay(stored)),
                    Begin::Acquired(lock) => lock,
                };
                let Some(key) = keys.header.as_deref().and_then(scoped) else {
                    return Ok(Idempotency {
                        primary: Some(primary),
                        ..unkeyed
                    }
                    .run());
                };
                match begin(key).await {
                    Ok(Begin::Acquired(lock)) => Ok(Idempotency {
                        primary: Some(primary),
                        header: Some(lock),
                        ..unkeyed
                    }
                    .run()),
                    // A retry the integration signed anew: the first one's answer,
                    // now also the answer to this signature.
                    Ok(Begin::Replay(stored)) => {
                        self.keep_response(&primary, &stored).await;
                        Ok(Begun::Replay(stored))
                    }
                    Err(e) => {
                        self.release(&primary).await;
                        Err(e.into())
                    }
                }
            }
        }
    }

    /// Keeps or releases what `begin_idempotent` took, once the use case
    /// has run: `output` is its response, `None` if it failed.
    pub async fn finish_idempotent(&self, idempotency: &Idempotency, output: Option<&Output>) {
        let Some(output) = output else {
            for lock in idempotency.all() {
                self.release(lock).await;
            }
            return;
        };
        match idempotency.operation {
            // A presigned URL expires: a retry gets a fresh one.
            Operation::TranscriptionUpload => {
                for lock in idempotency.all() {
                    self.release(lock).await;
                }
            }
            operation => {
                let stored = stored(output);
                // The others store their response in the commit that
                // changes state; a transcript has no such commit.
                if operation == Operation::Transcription
                    && let Some(lock) = &idempotency.primary
                {
                    self.keep_response(lock, &stored).await;
                }
                if let Some(lock) = &idempotency.header {
                    self.keep_response(lock, &stored).await;
                }
            }
        }
    }

    async fn keep_response(&self, lock: &IdempotencyLock, stored: &StoredResponse) {
        let mut work = UnitOfWork::new();
        work.complete_idempotency(lock.clone(), stored.clone());
        if let Err(e) = self.store.commit(work).await {
            tracing::warn!(error = %e, "could not store a response for replay");
            self.release(lock).await;
        }
    }

    async fn release(&self, lock: &IdempotencyLock) {
        if let Err(e) = self.store.release_idempotency(lock).await {
            tracing::warn!(error = %e, "could not release an idempotency lock");
        }
    }

    /// How long a request doing `operation` may take at most: the calls it
    /// may wait on (each bounded by its own timeout) and the store work. Its
    /// records stay in progress that long: a duplicate waits no longer,
    /// nor after a crash.
    pub async fn time_limit(&self, operation: Operation) -> Duration {
        let bundle = self.bundle().await;
        let slowest = |call: LlmCall| {
            if self.llm.provider(call).is_none() {
                return StdDuration::ZERO;
            }
            let millis = bundle
                .workflows
                .values()
                .map(|w| {
                    let settings = &w.llm;
                    match call {
                        LlmCall::Tutor => settings.tutor.timeout_ms,
                        LlmCall::Safety if w.safety.moderation => settings.safety.timeout_ms,
                        LlmCall::DrillGrading => settings.drill_grading.timeout_ms,
                        _ => 0,
                    }
                })
                .max()
                .unwrap_or(0);
            StdDuration::from_millis(millis)
        };
        let exam_api = match &self.exams {
            ExamGateway::External(_) => StdDuration::from_millis(self.config.exam_api.timeout_ms),
            ExamGateway::BuiltIn => StdDuration::ZERO,
        };
        let waits = match operation {
            Operation::Turn => slowest(LlmCall::Tutor) + slowest(LlmCall::Safety) + exam_api,
            Operation::DrillGrade => slowest(LlmCall::DrillGrading),
            // A lockout read, then the submission or the view.
            Operation::ExamAction => exam_api * 2,
            Operation::Transcription => TRANSCRIPTION,
            Operation::TranscriptionUpload | Operation::Other => StdDuration::ZERO,
        };
        Duration::from_std(BASE_WORK + waits).unwrap_or_else(|_| Duration::seconds(60))
    }
}

/// What is wrong with a client's key, with where it came from.
fn invalid_key(e: StoreError, source: KeySource) -> ServiceError {
    let detail = match e {
        StoreError::InvalidInput(detail) => detail,
        other => other.to_string(),
    };
    ServiceError::InvalidIdempotencyKey { source, detail }
}
