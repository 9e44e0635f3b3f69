//! What can go wrong when reading or writing state, typed so callers can act
//! on it: a [`StoreError::Conflict`] is retried by re-reading, idempotency
//! outcomes map to HTTP statuses, and everything else is an outage or a bug.

use std::fmt;

use chrono::{DateTime, Utc};

/// One stored item, named in errors so a conflict says what changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ItemRef {
    Snapshot {
        student_id: String,
        course_id: String,
    },
    Thread {
        thread_id: String,
    },
    Message {
        thread_id: String,
        seq: u64,
    },
    Idempotency {
        student_id: String,
        key: String,
    },
    TurnLog {
        thread_id: String,
        turn_id: String,
    },
    Lockout {
        student_id: String,
        course_id: String,
        question_id: String,
    },
    Profile {
        student_id: String,
    },
}

impl fmt::Display for ItemRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ItemRef::Snapshot {
                student_id,
                course_id,
            } => write!(
                f,
                "snapshot of student `{student_id}` in course `{course_id}`"
            ),
            ItemRef::Thread { thread_id } => write!(f, "thread `{thread_id}`"),
            ItemRef::Message { thread_id, seq } => {
                write!(f, "message #{seq} of thread `{thread_id}`")
            }
            ItemRef::Idempotency { student_id, key } => {
                write!(f, "idempotency record `{key}` of student `{student_id}`")
            }
            ItemRef::TurnLog { thread_id, turn_id } => {
                write!(f, "turn log `{turn_id}` of thread `{thread_id}`")
            }
            ItemRef::Lockout {
                student_id,
                course_id,
                question_id,
            } => write!(
                f,
                "lockout of question `{question_id}` for student `{student_id}` in course `{course_id}`"
            ),
            ItemRef::Profile { student_id } => write!(f, "profile of student `{student_id}`"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An item's version differs from the one the change was based on (or a
    /// new item already exists). Nothing was written: re-read and re-apply.
    #[error("conflict: {0} was changed by another request")]
    Conflict(ItemRef),

    /// The idempotency key was already used with a different request body,
    /// or on another route (HTTP 422).
    #[error("idempotency key `{key}` was already used with a different request")]
    IdempotencyKeyReused { key: String, another_route: bool },

    /// The first request with this idempotency key is still being processed
    /// (HTTP 409; retry after `retry_after`).
    #[error("a request with idempotency key `{key}` is still in progress")]
    IdempotencyInProgress {
        key: String,
        retry_after: DateTime<Utc>,
    },

    /// The caller passed something the store cannot accept (an empty id, a
    /// forged cursor, too many changes in one unit of work). Nothing was written.
    #[error("invalid store request: {0}")]
    InvalidInput(String),

    /// A stored item could not be decoded (or a value could not be encoded).
    #[error("stored data is unreadable: {0}")]
    Serialization(String),

    /// The database could not be reached or failed to answer.
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// Whether repeating the same call later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            StoreError::Conflict(_)
                | StoreError::IdempotencyInProgress { .. }
                | StoreError::Unavailable(_)
        )
    }

    pub(crate) fn serialization(item: &ItemRef, e: impl fmt::Display) -> Self {
        StoreError::Serialization(format!("{item}: {e}"))
    }
}
