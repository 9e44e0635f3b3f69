//! Idempotency at the request boundary: which key a request carries, how
//! long its in-progress lock may last, and what is stored once it is done.
//!
//! A student's request is keyed by its `Idempotency-Key` header (or a
//! turn's `clientTurnId`). A signed webhook is always keyed by its
//! signature, since the header is not signed: a captured request sent again
//! inside the signature's window, with or without a fresh header, is
//! answered from the store. The header still works for an integration that
//! signs each retry anew; its record is kept next to the signature's.

use std::time::Duration as StdDuration;

use chrono::Duration;

use super::failure::Failure;
use super::handler::{IDEMPOTENCY_HEADER, Incoming};
use super::problem::Problem;
use super::routes::{Route, RouteSpec};
use super::webhook::SIGNATURE_HEADER;
use crate::config::WebhookIntegration;
use crate::llm::provider::LlmCall;
use crate::model::Principal;
use crate::service::{App, ExamGateway, KeySource, Output, ServiceError};
use crate::store::{
    Begin, IdempotencyKey, IdempotencyLock, StoreError, StoredResponse, UnitOfWork, request_hash,
};

/// Time a request needs besides the calls it waits on: store round trips
/// and commits retried after a conflict.
const BASE_WORK: StdDuration = StdDuration::from_secs(5);
/// How long a transcription may take (see `service::transcribe`).
const TRANSCRIPTION: StdDuration = StdDuration::from_secs(60);

/// Who a request acts for.
pub(super) enum Caller<'a> {
    Student(Principal),
    Integration(&'a WebhookIntegration),
}

/// The idempotency records a request holds while it runs.
#[derive(Default)]
pub(super) struct Locks {
    /// Completed in the same commit as the request's state changes.
    primary: Option<IdempotencyLock>,
    /// A webhook's `Idempotency-Key`, stored once the request has succeeded.
    header: Option<IdempotencyLock>,
}

impl Locks {
    pub(super) fn primary(&self) -> Option<&IdempotencyLock> {
        self.primary.as_ref()
    }
}

/// What the start of a mutating request found.
pub(super) enum Begun {
    /// Done before: answer with this and apply nothing.
    Replay(StoredResponse),
    Run(Box<Locks>),
}

impl Begun {
    fn run(locks: Locks) -> Begun {
        Begun::Run(Box::new(locks))
    }
}

impl App {
    /// Takes the request's idempotency locks, or finds its stored response.
    pub(super) async fn begin_request(
        &self,
        spec: &RouteSpec,
        caller: &Caller<'_>,
        incoming: &Incoming,
    ) -> Result<Begun, Failure> {
        let header = header_key(incoming)?;
        let lock_for = self.idempotency_lock_time(spec.route).await;
        let hash = request_hash(incoming.uri.path(), &incoming.body);
        let now = self.clock.now();
        let begin = |key: IdempotencyKey| {
            let hash = &hash;
            async move {
                self.store
                    .begin_idempotency(&key, hash, now, lock_for)
                    .await
            }
        };
        match caller {
            Caller::Student(who) => {
                let (raw, source) = match (header, client_turn_id(spec, incoming)) {
                    (Some(raw), _) => (raw, KeySource::Header),
                    (None, Some(raw)) => (raw, KeySource::ClientTurnId),
                    (None, None) => return Ok(Begun::run(Locks::default())),
                };
                let key = IdempotencyKey::for_student(&who.student_id, &raw)
                    .map_err(|e| invalid_key(e, source))?;
                Ok(match begin(key).await? {
                    Begin::Replay(stored) => Begun::Replay(stored),
                    Begin::Acquired(lock) => Begun::run(Locks {
                        primary: Some(lock),
                        header: None,
                    }),
                })
            }
            Caller::Integration(integration) => {
                // A body without a student is refused by the use case before
                // anything is applied: there is nothing to keep.
                let Some(student) = webhook_student(&incoming.body) else {
                    return Ok(Begun::run(Locks::default()));
                };
                let scoped = |raw: &str| {
                    IdempotencyKey::for_integration(
                        &integration.id,
                        &Principal::integration_student(&integration.id, &student).student_id,
                        raw,
                    )
                    .ok()
                };
                let Some(signed) = signature(incoming).and_then(|s| scoped(&format!("sig:{s}")))
                else {
                    return Ok(Begun::run(Locks::default()));
                };
                let primary = match begin(signed).await? {
                    Begin::Replay(stored) => return Ok(Begun::Replay(stored)),
                    Begin::Acquired(lock) => lock,
                };
                let Some(key) = header.as_deref().and_then(scoped) else {
                    return Ok(Begun::run(Locks {
                        primary: Some(primary),
                        header: None,
                    }));
                };
                match begin(key).await {
                    Ok(Begin::Acquired(lock)) => Ok(Begun::run(Locks {
                        primary: Some(primary),
                        header: Some(lock),
                    })),
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

    /// Stores or releases what `begin_request` took, after the use case ran.
    pub(super) async fn finish_request(
        &self,
        route: Route,
        locks: &Locks,
        result: &Result<Output, Failure>,
    ) {
        let all = || locks.primary.iter().chain(&locks.header);
        match result {
            Err(_) => {
                for lock in all() {
                    self.release(lock).await;
                }
            }
            // A presigned URL expires: a retry gets a fresh one.
            Ok(_) if route == Route::TranscribeUpload => {
                for lock in all() {
                    self.release(lock).await;
                }
            }
            Ok(output) => {
                let stored = StoredResponse {
                    status: output.status,
                    content_type: "application/json".into(),
                    body: output.body.clone(),
                };
                // The other routes store their response in the commit that
                // changes state; a transcript has no such commit.
                if route == Route::Transcribe
                    && let Some(lock) = &locks.primary
                {
                    self.keep_response(lock, &stored).await;
                }
                if let Some(lock) = &locks.header {
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

    /// How long a request on `route` may take at most: the calls it may
    /// wait on (each bounded by its own timeout) and the store work. A
    /// duplicate waits no longer than that, nor after a crash.
    pub async fn idempotency_lock_time(&self, route: Route) -> Duration {
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
        let waits = match route {
            Route::Turn | Route::WebhookTurn => {
                slowest(LlmCall::Tutor) + slowest(LlmCall::Safety) + exam_api
            }
            Route::DrillGrade => slowest(LlmCall::DrillGrading),
            // A lockout read, then the submission or the view.
            Route::McqSubmit | Route::SupportViewed => exam_api * 2,
            Route::Transcribe => TRANSCRIPTION,
            _ => StdDuration::ZERO,
        };
        Duration::from_std(BASE_WORK + waits).unwrap_or_else(|_| Duration::seconds(60))
    }
}

/// The `Idempotency-Key` header, if the request has one.
fn header_key(incoming: &Incoming) -> Result<Option<String>, Problem> {
    let Some(value) = incoming.headers.get(IDEMPOTENCY_HEADER) else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .map_err(|_| {
            Problem::bad_request("Idempotency-Key must be text").with_field(IDEMPOTENCY_HEADER)
        })?
        .trim();
    Ok((!key.is_empty()).then(|| key.to_owned()))
}

/// A turn's `clientTurnId`, which makes a retried turn idempotent too.
fn client_turn_id(spec: &RouteSpec, incoming: &Incoming) -> Option<String> {
    if spec.route != Route::Turn {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&incoming.body).ok()?;
    let id = value.get("clientTurnId")?.as_str()?;
    Some(format!("turn:{id}"))
}

fn signature(incoming: &Incoming) -> Option<&str> {
    incoming
        .headers
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The student a webhook acts for, to scope its idempotency records.
fn webhook_student(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value.get("student_id")?.as_str().map(str::to_owned)
}

/// What is wrong with a client's key, with where it came from.
fn invalid_key(e: StoreError, source: KeySource) -> ServiceError {
    let detail = match e {
        StoreError::InvalidInput(detail) => detail,
        other => other.to_string(),
    };
    ServiceError::InvalidIdempotencyKey { source, detail }
}
