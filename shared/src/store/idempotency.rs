//! Idempotent requests with the semantics of Powertools for AWS Lambda:
//! the first request takes an in-progress lock (with its own expiry), its
//! response is stored when it completes, and a retry with the same key gets
//! that response back without anything being applied twice.
//!
//! Keys are scoped to a student (and to an integration for webhooks), so one
//! caller can never replay another's response.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{ItemRef, StoreError};
use super::types::{check_id, plus};

/// Longest idempotency key accepted (Powertools and Stripe use 255).
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

/// A client's idempotency key within the scope of the caller it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    student_id: String,
    integration: Option<String>,
    key: String,
}

impl IdempotencyKey {
    /// A key sent by a student's app (`Idempotency-Key` or `clientTurnId`).
    pub fn for_student(student_id: &str, key: &str) -> Result<Self, StoreError> {
        Self::build(student_id, None, key)
    }

    /// A key sent by a webhook integration acting for one of its students.
    pub fn for_integration(
        integration_id: &str,
        student_id: &str,
        key: &str,
    ) -> Result<Self, StoreError> {
        check_id("integration id", integration_id)?;
        Self::build(student_id, Some(integration_id.to_owned()), key)
    }

    fn build(student_id: &str, integration: Option<String>, key: &str) -> Result<Self, StoreError> {
        check_id("student id", student_id)?;
        if key.trim().is_empty() {
            return Err(StoreError::InvalidInput("idempotency key is empty".into()));
        }
        if key.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS {
            return Err(StoreError::InvalidInput(format!(
                "idempotency key is longer than {MAX_IDEMPOTENCY_KEY_CHARS} characters"
            )));
        }
        if key.chars().any(char::is_control) {
            return Err(StoreError::InvalidInput(
                "idempotency key contains a control character".into(),
            ));
        }
        Ok(IdempotencyKey {
            student_id: student_id.to_owned(),
            integration,
            key: key.to_owned(),
        })
    }

    pub fn student_id(&self) -> &str {
        &self.student_id
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// Fixed-length storage id of (integration, key): client text never
    /// becomes part of a database key.
    pub(crate) fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.integration.as_deref().unwrap_or("").as_bytes());
        hasher.update([0]);
        hasher.update(self.key.as_bytes());
        crate::content::source::hex(&hasher.finalize())
    }

    /// How errors name this key's record.
    pub fn item_ref(&self) -> ItemRef {
        ItemRef::Idempotency {
            student_id: self.student_id.clone(),
            key: self.key.clone(),
        }
    }
}

/// SHA-256 (hex) of a request body: same key + different hash is a misuse.
pub fn payload_hash(body: &[u8]) -> String {
    crate::content::source::hex(&Sha256::digest(body))
}

/// The hash of a request to `path` with `body`: the path's part is kept
/// apart, so a key reused on another route is told from one reused with
/// another body.
pub fn request_hash(path: &str, body: &[u8]) -> String {
    let route = payload_hash(path.as_bytes());
    format!("{}{ROUTE_SEPARATOR}{}", &route[..16], payload_hash(body))
}

const ROUTE_SEPARATOR: char = '.';

/// Whether two request hashes are of the same route (hashes made without
/// a route part are taken to be).
fn same_route(a: &str, b: &str) -> bool {
    match (a.split_once(ROUTE_SEPARATOR), b.split_once(ROUTE_SEPARATOR)) {
        (Some((a, _)), Some((b, _))) => a == b,
        _ => true,
    }
}

/// The response stored for a completed request and replayed to retries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredResponse {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// Proof that this request holds the in-progress lock of its key. Hand it
/// to [`UnitOfWork::complete_idempotency`](super::UnitOfWork::complete_idempotency)
/// to store the response with the state changes, or to `release_idempotency`
/// when the request fails so a retry can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyLock {
    pub key: IdempotencyKey,
    pub(crate) token: String,
    pub(crate) payload_hash: String,
    pub(crate) acquired_at: DateTime<Utc>,
}

/// What `begin_idempotency` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// First request (or the previous record expired): go ahead.
    Acquired(IdempotencyLock),
    /// Already done: answer with this response and apply nothing.
    Replay(StoredResponse),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum RecordStatus {
    InProgress,
    Completed,
}

impl RecordStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RecordStatus::InProgress => "INPROGRESS",
            RecordStatus::Completed => "COMPLETED",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "INPROGRESS" => Some(RecordStatus::InProgress),
            "COMPLETED" => Some(RecordStatus::Completed),
            _ => None,
        }
    }
}

/// A stored idempotency record, as both stores keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdempotencyRecord {
    pub status: RecordStatus,
    pub payload_hash: String,
    pub lock_token: String,
    pub lock_expires_at: DateTime<Utc>,
    /// When the whole record stops counting (TTL deletes it some time later).
    pub expires_at: DateTime<Utc>,
    pub response: Option<StoredResponse>,
}

impl IdempotencyRecord {
    pub(crate) fn in_progress(
        lock: &IdempotencyLock,
        lock_for: Duration,
        keep_for: Duration,
    ) -> Self {
        IdempotencyRecord {
            status: RecordStatus::InProgress,
            payload_hash: lock.payload_hash.clone(),
            lock_token: lock.token.clone(),
            lock_expires_at: plus(lock.acquired_at, lock_for),
            expires_at: plus(lock.acquired_at, keep_for),
            response: None,
        }
    }

    pub(crate) fn completed(
        lock: &IdempotencyLock,
        response: &StoredResponse,
        keep_for: Duration,
    ) -> Self {
        IdempotencyRecord {
            status: RecordStatus::Completed,
            payload_hash: lock.payload_hash.clone(),
            lock_token: lock.token.clone(),
            lock_expires_at: lock.acquired_at,
            expires_at: plus(lock.acquired_at, keep_for),
            response: Some(response.clone()),
        }
    }
}

/// What an existing record means for a new request with the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Expired (or an abandoned lock): the new request may take the key.
    Vacant,
    Replay(StoredResponse),
    InProgress(DateTime<Utc>),
    KeyReused {
        another_route: bool,
    },
}

/// Expiry is decided here, not by TTL: TTL deletion happens up to days late.
pub(crate) fn resolve(
    record: &IdempotencyRecord,
    payload_hash: &str,
    now: DateTime<Utc>,
) -> Existing {
    let lock_abandoned = record.status == RecordStatus::InProgress && record.lock_expires_at <= now;
    if record.expires_at <= now || lock_abandoned {
        return Existing::Vacant;
    }
    if record.payload_hash != payload_hash {
        return Existing::KeyReused {
            another_route: !same_route(&record.payload_hash, payload_hash),
        };
    }
    match (&record.status, &record.response) {
        (RecordStatus::Completed, Some(response)) => Existing::Replay(response.clone()),
        _ => Existing::InProgress(record.lock_expires_at),
    }
}

/// Turns a non-vacant existing record into the caller's answer.
pub(crate) fn outcome(
    key: &IdempotencyKey,
    existing: Existing,
) -> Option<Result<Begin, StoreError>> {
    match existing {
        Existing::Vacant => None,
        Existing::Replay(response) => Some(Ok(Begin::Replay(response))),
        Existing::InProgress(retry_after) => Some(Err(StoreError::IdempotencyInProgress {
            key: key.key.clone(),
            retry_after,
        })),
        Existing::KeyReused { another_route } => Some(Err(StoreError::IdempotencyKeyReused {
            key: key.key.clone(),
            another_route,
        })),
    }
}

/// A fresh lock for `key`; the token tells this holder from a later one.
pub(crate) fn new_lock(
    key: &IdempotencyKey,
    payload_hash: &str,
    now: DateTime<Utc>,
) -> Result<IdempotencyLock, StoreError> {
    if payload_hash.is_empty() {
        return Err(StoreError::InvalidInput("payload hash is empty".into()));
    }
    Ok(IdempotencyLock {
        key: key.clone(),
        token: uuid::Uuid::new_v4().to_string(),
        payload_hash: payload_hash.to_owned(),
        acquired_at: now,
    })
}

pub(crate) fn check_lock_duration(lock_for: Duration) -> Result<(), StoreError> {
    if lock_for <= Duration::zero() {
        return Err(StoreError::InvalidInput(
            "idempotency lock duration must be positive".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: RecordStatus, lock_mins: i64, expiry_mins: i64) -> IdempotencyRecord {
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        IdempotencyRecord {
            status,
            payload_hash: "h1".into(),
            lock_token: "tok".into(),
            lock_expires_at: t0 + Duration::minutes(lock_mins),
            expires_at: t0 + Duration::minutes(expiry_mins),
            response: (status == RecordStatus::Completed).then(|| StoredResponse {
                status: 200,
                content_type: "application/json".into(),
                body: "{}".into(),
            }),
        }
    }

    fn at(mins: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap() + Duration::minutes(mins)
    }

    #[test]
    fn a_live_lock_is_in_progress_until_it_expires() {
        let r = record(RecordStatus::InProgress, 1, 60);
        assert_eq!(resolve(&r, "h1", at(0)), Existing::InProgress(at(1)));
        assert_eq!(resolve(&r, "h1", at(1)), Existing::Vacant);
    }

    #[test]
    fn a_completed_record_replays_until_it_expires() {
        let r = record(RecordStatus::Completed, 0, 60);
        assert!(matches!(resolve(&r, "h1", at(59)), Existing::Replay(_)));
        assert_eq!(resolve(&r, "h1", at(60)), Existing::Vacant);
    }

    #[test]
    fn another_payload_is_refused_while_the_record_counts() {
        let r = record(RecordStatus::Completed, 0, 60);
        assert_eq!(
            resolve(&r, "h2", at(5)),
            Existing::KeyReused {
                another_route: false
            }
        );
        assert_eq!(resolve(&r, "h2", at(61)), Existing::Vacant);
    }

    #[test]
    fn a_key_reused_on_another_route_is_told_from_another_body() {
        let mut r = record(RecordStatus::Completed, 0, 60);
        r.payload_hash = request_hash("/threads/t/turn", b"{}");
        assert!(matches!(
            resolve(&r, &request_hash("/threads/t/turn", b"{}"), at(1)),
            Existing::Replay(_)
        ));
        assert_eq!(
            resolve(&r, &request_hash("/threads/t/turn", b"{ }"), at(1)),
            Existing::KeyReused {
                another_route: false
            }
        );
        assert_eq!(
            resolve(&r, &request_hash("/threads/t/drill/grade", b"{}"), at(1)),
            Existing::KeyReused {
                another_route: true
            }
        );
    }

    #[test]
    fn keys_are_checked() {
        assert!(IdempotencyKey::for_student("s1", "").is_err());
        assert!(IdempotencyKey::for_student("s1", "  ").is_err());
        assert!(IdempotencyKey::for_student("", "k").is_err());
        assert!(IdempotencyKey::for_student("s1", "a\nb").is_err());
        assert!(IdempotencyKey::for_student("s1", &"k".repeat(256)).is_err());
        assert!(IdempotencyKey::for_integration("", "s1", "k").is_err());
        assert!(IdempotencyKey::for_student("s1", &"k".repeat(255)).is_ok());
    }

    #[test]
    fn the_same_key_from_another_integration_is_another_record() {
        let app = IdempotencyKey::for_student("s1", "k").unwrap();
        let n8n = IdempotencyKey::for_integration("n8n", "s1", "k").unwrap();
        assert_ne!(app.digest(), n8n.digest());
        assert_eq!(app.digest().len(), 64);
    }
}
