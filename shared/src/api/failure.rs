//! Why a request was not answered with success, and its problem+json: the
//! api's own refusals (routing, authentication, parsing) as they are, and
//! the use cases' domain errors by their kind. Each kind's status, `type`,
//! title and headers are part of the API (docs/openapi.yaml lists them).

use http::StatusCode;

use super::incoming::IDEMPOTENCY_HEADER;
use super::problem::Problem;
use crate::model::ThreadStatus;
use crate::service::{KeySource, ServiceError};
use crate::store::StoreError;

/// A request that failed. Public only as part of [`super::Routes`]'s
/// signatures; nothing outside the api names it.
#[derive(Debug)]
pub enum Failure {
    /// Refused by the api itself, with the problem to send.
    Refused(Box<Problem>),
    /// The use case's error.
    Service(ServiceError),
}

impl From<Problem> for Failure {
    fn from(p: Problem) -> Self {
        Failure::Refused(Box::new(p))
    }
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Self {
        Failure::Service(e)
    }
}

impl Failure {
    /// Something that should not happen; logged, never shown.
    pub(crate) fn internal(detail: impl Into<String>) -> Self {
        Failure::Service(ServiceError::internal(detail))
    }

    /// Logs the failure as its kind deserves: faults as errors, refusals
    /// under concurrency and unavailable dependencies as warnings, what the
    /// caller caused not at all.
    pub(crate) fn log(&self) {
        match self {
            Failure::Service(ServiceError::Internal(detail)) => {
                tracing::error!(error = %detail, "request failed")
            }
            // Expected outcomes of concurrent requests, not faults.
            Failure::Service(ServiceError::Store(
                store @ (StoreError::Conflict(_)
                | StoreError::IdempotencyInProgress { .. }
                | StoreError::IdempotencyKeyReused { .. }),
            )) => {
                tracing::warn!(error = %store, "request refused: concurrent change")
            }
            Failure::Service(ServiceError::Store(store)) => {
                tracing::error!(error = %store, "store error")
            }
            Failure::Service(ServiceError::Unavailable { detail, .. }) => {
                tracing::warn!(detail = %detail, "request failed")
            }
            Failure::Refused(p) if p.status.is_server_error() => {
                tracing::warn!(detail = %p.detail, "request failed")
            }
            Failure::Refused(_) | Failure::Service(_) => {}
        }
    }

    /// The response to send; internal details stay in the logs.
    pub(crate) fn to_problem(&self) -> Problem {
        match self {
            Failure::Refused(p) => (**p).clone(),
            Failure::Service(e) => problem_of(e),
        }
    }
}

/// The problem a use case's error is answered with.
fn problem_of(e: &ServiceError) -> Problem {
    let conflict = |kind, title, detail: &str| {
        Problem::new(StatusCode::CONFLICT, kind, title, detail.to_owned())
    };
    match e {
        ServiceError::NotFound(detail) => Problem::not_found(detail.clone()),
        ServiceError::InvalidRequest(detail) => Problem::bad_request(detail.clone()),
        ServiceError::InvalidField { field, detail } => {
            Problem::invalid_body(detail.clone()).with_field(field.clone())
        }
        ServiceError::UnknownId { field, detail } => {
            Problem::unprocessable("unknown-id", "Unknown id", detail.clone())
                .with_field(field.clone())
        }
        ServiceError::Forbidden { field, detail } => {
            Problem::forbidden(detail.clone()).with_field(field.clone())
        }
        ServiceError::ThreadStatus { status, detail } => match status {
            ThreadStatus::Paused => conflict("thread-paused", "Thread paused", detail),
            ThreadStatus::Completed => conflict("thread-completed", "Thread completed", detail),
            ThreadStatus::Active => conflict("thread-active", "Thread active", detail),
        },
        ServiceError::ModeDisabled { field, detail } => {
            Problem::unprocessable("mode-disabled", "Mode disabled", detail.clone())
                .with_field(field.clone())
        }
        ServiceError::SessionLimit(detail) => {
            Problem::unprocessable("session-limit", "Too many sessions", detail.clone())
        }
        ServiceError::DrillOutdated { field, detail } => Problem::unprocessable(
            "drill-outdated",
            "Drill no longer available",
            detail.clone(),
        )
        .with_field(field.clone()),
        ServiceError::QuestionClosed(detail) => Problem::conflict(detail.clone()),
        ServiceError::ExamCardRequired { field, detail } => {
            conflict("exam-card-required", "Exam card required", detail).with_field(field.clone())
        }
        // The turn holding the thread is answered within seconds.
        ServiceError::ThreadBusy(detail) => Problem::conflict(detail.clone()).with_retry_after(2),
        ServiceError::InvalidIdempotencyKey { source, detail } => {
            let (name, field) = match source {
                KeySource::Header => ("Idempotency-Key", IDEMPOTENCY_HEADER),
                KeySource::ClientTurnId => ("clientTurnId", "clientTurnId"),
            };
            Problem::bad_request(format!("{name}: {detail}")).with_field(field)
        }
        ServiceError::TooLarge(detail) => Problem::too_large(detail.clone()),
        ServiceError::UnsupportedMediaType(detail) => {
            Problem::unsupported_media_type(detail.clone())
        }
        ServiceError::Unavailable {
            detail,
            retry_after,
        } => {
            let p = Problem::unavailable(detail.clone());
            match retry_after {
                Some(seconds) => p.with_retry_after(*seconds),
                None => p,
            }
        }
        ServiceError::Store(e) => store_problem(e),
        ServiceError::Internal(_) => Problem::internal(),
    }
}

fn store_problem(e: &StoreError) -> Problem {
    match e {
        StoreError::Conflict(_) => Problem::conflict(
            "this conversation changed while your request was handled; send it again",
        )
        .with_retry_after(1),
        StoreError::IdempotencyInProgress { retry_after, .. } => {
            // Whole seconds, rounded up: retrying earlier would only be refused again.
            let remaining = (*retry_after - chrono::Utc::now()).num_milliseconds();
            let seconds = u32::try_from((remaining + 999) / 1000).unwrap_or(1).max(1);
            Problem::conflict(format!(
                "a request with this Idempotency-Key is still being handled; retry in {seconds} s"
            ))
            .with_retry_after(seconds)
            .with_field(IDEMPOTENCY_HEADER)
        }
        StoreError::IdempotencyKeyReused { another_route, .. } => Problem::unprocessable(
            "idempotency-key-reused",
            "Idempotency key reused",
            if *another_route {
                "this Idempotency-Key was already used for a request to another endpoint; use a new key"
            } else {
                "this Idempotency-Key was already used for a request with a different body; use a new key"
            },
        )
        .with_field(IDEMPOTENCY_HEADER),
        StoreError::InvalidInput(detail) => Problem::bad_request(detail.clone()),
        StoreError::Unavailable(_) => {
            Problem::unavailable("the state store is unavailable right now").with_retry_after(2)
        }
        _ => Problem::internal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_field_is_an_invalid_body_naming_it() {
        let p = problem_of(&ServiceError::invalid_field("messageText", "too long"));
        assert_eq!(p.status, 400);
        assert_eq!(p.kind, "invalid-body");
        assert_eq!(p.field.as_deref(), Some("messageText"));
        assert_eq!(p.detail, "too long");
    }

    #[test]
    fn a_thread_in_the_wrong_state_is_a_conflict_named_by_the_state() {
        let p = problem_of(&ServiceError::ThreadStatus {
            status: ThreadStatus::Paused,
            detail: "paused".into(),
        });
        assert_eq!(
            (p.status.as_u16(), p.kind, p.title),
            (409, "thread-paused", "Thread paused")
        );
    }

    #[test]
    fn an_unavailable_dependency_says_when_to_retry() {
        let p = problem_of(&ServiceError::unavailable("down", Some(5)));
        assert_eq!((p.status.as_u16(), p.retry_after), (503, Some(5)));
        let p = problem_of(&ServiceError::unavailable("not configured", None));
        assert_eq!(p.retry_after, None);
    }

    #[test]
    fn a_bad_idempotency_key_names_where_it_came_from() {
        let p = problem_of(&ServiceError::InvalidIdempotencyKey {
            source: KeySource::Header,
            detail: "too long".into(),
        });
        assert_eq!(p.detail, "Idempotency-Key: too long");
        assert_eq!(p.field.as_deref(), Some(IDEMPOTENCY_HEADER));
        let p = problem_of(&ServiceError::InvalidIdempotencyKey {
            source: KeySource::ClientTurnId,
            detail: "too long".into(),
        });
        assert_eq!(p.detail, "clientTurnId: too long");
        assert_eq!(p.field.as_deref(), Some("clientTurnId"));
    }
}
