//! Why a use case did not complete, mapped to a problem+json response.

use crate::api::handler::IDEMPOTENCY_HEADER;
use crate::api::problem::Problem;
use crate::store::StoreError;

#[derive(Debug)]
pub enum ServiceError {
    /// A problem the caller caused or can act on, ready to send.
    Problem(Box<Problem>),
    Store(StoreError),
    /// Something that should not happen; logged, never shown.
    Internal(String),
}

impl ServiceError {
    pub fn not_found(detail: impl Into<String>) -> Self {
        ServiceError::Problem(Box::new(Problem::not_found(detail)))
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        ServiceError::Problem(Box::new(Problem::bad_request(detail)))
    }

    pub fn invalid_field(field: &str, detail: impl Into<String>) -> Self {
        ServiceError::Problem(Box::new(Problem::invalid_body(detail).with_field(field)))
    }

    pub fn unprocessable(
        kind: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        ServiceError::Problem(Box::new(Problem::unprocessable(kind, title, detail)))
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        ServiceError::Internal(detail.into())
    }

    /// The response to send; internal details stay in the logs.
    pub fn to_problem(&self) -> Problem {
        match self {
            ServiceError::Problem(p) => (**p).clone(),
            ServiceError::Store(e) => store_problem(e),
            ServiceError::Internal(_) => Problem::internal(),
        }
    }
}

impl From<Problem> for ServiceError {
    fn from(p: Problem) -> Self {
        ServiceError::Problem(Box::new(p))
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        ServiceError::Store(e)
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServiceError::Problem(p) => write!(f, "{}: {}", p.status, p.detail),
            ServiceError::Store(e) => write!(f, "store: {e}"),
            ServiceError::Internal(e) => write!(f, "internal: {e}"),
        }
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
