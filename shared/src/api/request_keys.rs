//! The idempotency keys a request carries, read off it: the
//! `Idempotency-Key` header, a turn's `clientTurnId`, a webhook's
//! signature and the student its body names. What they do is the service's
//! (`service::idempotency`).

use chrono::Duration;

use super::App;
use super::dispatch::Caller;
use super::failure::Failure;
use super::incoming::{IDEMPOTENCY_HEADER, Incoming};
use super::problem::Problem;
use super::routes::{Route, RouteSpec};
use super::webhook::SIGNATURE_HEADER;
use crate::service::{Begun, ClientKeys, KeyHolder, Operation};
use crate::store::request_hash;

impl App {
    /// Takes the request's idempotency records, or finds its stored response.
    pub(super) async fn begin_request(
        &self,
        spec: &RouteSpec,
        caller: &Caller<'_>,
        incoming: &Incoming,
    ) -> Result<Begun, Failure> {
        let keys = ClientKeys {
            header: header_key(incoming)?,
            client_turn_id: client_turn_id(spec, incoming),
        };
        let holder = match caller {
            Caller::Student(who) => KeyHolder::Student(who),
            Caller::Integration(integration) => KeyHolder::Integration {
                id: &integration.id,
                student: webhook_student(&incoming.body),
                signature: signature(incoming),
            },
        };
        let hash = request_hash(incoming.uri.path(), &incoming.body);
        Ok(self
            .service
            .begin_idempotent(operation(spec.route), holder, keys, &hash)
            .await?)
    }

    /// How long an idempotency record of a request on `route` stays in
    /// progress: as long as the request can take.
    pub async fn idempotency_lock_time(&self, route: Route) -> Duration {
        self.service.time_limit(operation(route)).await
    }
}

/// What a request on `route` does, as far as its idempotency is concerned.
fn operation(route: Route) -> Operation {
    match route {
        Route::Turn | Route::WebhookTurn => Operation::Turn,
        Route::DrillGrade => Operation::DrillGrade,
        Route::McqSubmit | Route::SupportViewed => Operation::ExamAction,
        Route::Transcribe => Operation::Transcription,
        Route::TranscribeUpload => Operation::TranscriptionUpload,
        _ => Operation::Other,
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
