//! Why a use case did not complete, in the domain's terms. Each message is
//! written for the person who sent the request; the api gives each kind
//! its problem+json status, type and headers (`api::failure`).

use crate::model::ThreadStatus;
use crate::store::StoreError;

#[derive(Debug)]
pub enum ServiceError {
    /// What the request names does not exist, or is not the caller's: the
    /// two are not told apart, so nobody can probe for others' threads.
    NotFound(String),
    /// The request cannot be acted on as a whole.
    InvalidRequest(String),
    /// A field of the request holds a value that is not accepted.
    InvalidField { field: String, detail: String },
    /// A field names a unit or question the thread's course does not have.
    UnknownId { field: String, detail: String },
    /// The caller may not act for what `field` names.
    Forbidden { field: String, detail: String },
    /// The thread's status does not allow what was asked.
    ThreadStatus {
        status: ThreadStatus,
        detail: String,
    },
    /// The mode `field` asks for is switched off for the course.
    ModeDisabled { field: String, detail: String },
    /// An integration's session has had as many threads as it may.
    SessionLimit(String),
    /// The drill `field` carries was issued for content that has changed.
    DrillOutdated { field: String, detail: String },
    /// The exam question cannot be answered now: it is locked, or passed.
    QuestionClosed(String),
    /// The exam action needs the card of the question `field` names open
    /// in the thread.
    ExamCardRequired { field: String, detail: String },
    /// Another message in the thread is still being answered.
    ThreadBusy(String),
    /// An idempotency key the client sent cannot be used.
    InvalidIdempotencyKey { source: KeySource, detail: String },
    /// What was sent is larger than accepted.
    TooLarge(String),
    /// What was sent is in a format not accepted.
    UnsupportedMediaType(String),
    /// Something the request depends on cannot be reached now; worth
    /// trying again after `retry_after` seconds, when given.
    Unavailable {
        detail: String,
        retry_after: Option<u32>,
    },
    /// The state store refused or failed (a version conflict, a key in use).
    Store(StoreError),
    /// Something that should not happen; logged, never shown.
    Internal(String),
}

/// Where a client's idempotency key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// The request's `Idempotency-Key` header.
    Header,
    /// A turn's `clientTurnId`.
    ClientTurnId,
}

impl ServiceError {
    pub fn not_found(detail: impl Into<String>) -> Self {
        ServiceError::NotFound(detail.into())
    }

    pub fn invalid_request(detail: impl Into<String>) -> Self {
        ServiceError::InvalidRequest(detail.into())
    }

    pub fn invalid_field(field: &str, detail: impl Into<String>) -> Self {
        ServiceError::InvalidField {
            field: field.to_owned(),
            detail: detail.into(),
        }
    }

    pub fn unavailable(detail: impl Into<String>, retry_after: Option<u32>) -> Self {
        ServiceError::Unavailable {
            detail: detail.into(),
            retry_after,
        }
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        ServiceError::Internal(detail.into())
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        ServiceError::Store(e)
    }
}
