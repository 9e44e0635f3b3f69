//! State storage and the content bundle's cloud source.
//!
//! The rest of the system is handed the traits defined here (usually as one
//! `Arc<dyn Store>`); it never sees a database type. Two implementations
//! give the same semantics — versions, atomic units of work, conflicts,
//! idempotency, expiry — and one conformance suite (shared/tests/store/)
//! holds them to it:
//! - [`DynamoStore`]: one DynamoDB table (single-table design, see README
//!   "State storage");
//! - `SqliteStore`: an embedded SQLite file, the local default, safe to
//!   share between processes. Behind the `sqlite` feature: `serve`,
//!   `simulate` and `cargo lambda watch` enable it; a function built for
//!   Lambda does not link it.
//!
//! Reads that a turn builds on are strongly consistent. A turn reads, runs
//! the pure engine, then commits a [`UnitOfWork`] whose changes are each
//! conditioned on the version read; on [`StoreError::Conflict`] it re-reads
//! and re-applies:
//!
//! ```no_run
//! # use tutorflow::store::*;
//! # use tutorflow::model::{StudentSnapshot, Thread, TutorMessage};
//! /// What the pure engine does with the state it is given.
//! type Engine = fn(&ThreadRecord, Option<&Versioned<StudentSnapshot>>)
//!     -> (Thread, Vec<TutorMessage>, StudentSnapshot);
//!
//! async fn turn(
//!     store: &dyn Store,
//!     engine: Engine,
//!     key: &IdempotencyKey,
//!     body: &[u8],
//! ) -> Result<StoredResponse, StoreError> {
//!     let now = chrono::Utc::now();
//!     let lock = match store
//!         .begin_idempotency(key, &payload_hash(body), now, chrono::Duration::seconds(30))
//!         .await?
//!     {
//!         Begin::Replay(response) => return Ok(response),
//!         Begin::Acquired(lock) => lock,
//!     };
//!     for _ in 0..3 {
//!         let thread = store.get_thread("thread-1", 20).await?.expect("404 in the real API");
//!         let snapshot = store.get_snapshot("student-1", "prealgebra").await?;
//!         let (new_thread, messages, new_snapshot) = engine(&thread, snapshot.as_ref());
//!         let response = StoredResponse {
//!             status: 200,
//!             content_type: "application/json".into(),
//!             body: "{}".into(),
//!         };
//!         let mut work = UnitOfWork::new();
//!         work.put_thread(thread.update(new_thread, messages))
//!             .put_snapshot(new_snapshot, WriteCondition::of(snapshot.as_ref()))
//!             .complete_idempotency(lock.clone(), response.clone());
//!         match store.commit(work).await {
//!             Ok(()) => return Ok(response),
//!             Err(StoreError::Conflict(_)) => continue, // re-read, re-apply
//!             Err(e) => {
//!                 store.release_idempotency(&lock).await?;
//!                 return Err(e);
//!             }
//!         }
//!     }
//!     store.release_idempotency(&lock).await?;
//!     Err(StoreError::Conflict(lock.key.item_ref()))
//! }
//! ```

mod audio;
mod aws;
mod content_cache;
mod cursor;
mod dynamo;
mod error;
mod idempotency;
pub mod permissions;
mod s3_content;
#[cfg(feature = "sqlite")]
mod sqlite;
mod types;
mod unit_of_work;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};

pub use audio::{AudioFetchError, AudioStore, StoredAudio};
pub use aws::{dynamodb_client, s3_client, sqs_client};
pub use content_cache::{ContentCache, InstantSource, LoadError};
pub use dynamo::{ACTIVE_INDEX, DynamoStore, TABLE_LAYOUT, THREADS_INDEX, TableLayout};
pub use error::{ItemRef, StoreError};
pub use idempotency::{
    Begin, IdempotencyKey, IdempotencyLock, MAX_IDEMPOTENCY_KEY_CHARS, StoredResponse,
    payload_hash, request_hash,
};
pub use s3_content::{
    MANIFEST_FILE, Manifest, ManifestEntry, PublishError, PublishReport, S3Source, publish,
};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use types::{
    ExamLockout, IdleThread, LeaseTake, MAX_ID_BYTES, MAX_ITEM_BYTES, MAX_PAGE_SIZE,
    MAX_TRANSACTION_BYTES, MAX_TRANSACTION_ITEMS, Order, Page, PageRequest, SavedProfile,
    ThreadChange, ThreadLease, ThreadRecord, ThreadSummary, TurnLog, Versioned, WriteCondition,
};
pub use unit_of_work::{Change, UnitOfWork};

use crate::config::{ContentConfig, ContentSourceKind, StoreBackend, StoreConfig};
use crate::content::{ContentSource, FsSource, SourceError};
use crate::model::{Mode, StudentSnapshot};

/// A student's progress per course.
#[async_trait]
pub trait SnapshotStore: Send + Sync {
    /// The snapshot and its version (consistent read), `None` before the
    /// student's first interaction with the course.
    async fn get_snapshot(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<Option<Versioned<StudentSnapshot>>, StoreError>;
}

/// Conversations: metadata and state, append-only messages, per-student listing.
#[async_trait]
pub trait ThreadStore: Send + Sync {
    /// The thread with its `recent` (0..=[`MAX_PAGE_SIZE`]) latest messages
    /// in chronological order (consistent read). The store does not check
    /// ownership: compare `thread.student_id` with the caller (404 if not).
    async fn get_thread(
        &self,
        thread_id: &str,
        recent: usize,
    ) -> Result<Option<ThreadRecord>, StoreError>;

    /// A thread's messages page by page (consistent read).
    async fn list_messages(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
    ) -> Result<Page<crate::model::TutorMessage>, StoreError>;

    /// A student's threads, most recently updated first. The index behind
    /// it is eventually consistent on DynamoDB: a thread updated a moment
    /// ago may still show its previous position.
    async fn list_threads(
        &self,
        student_id: &str,
        page: &PageRequest,
    ) -> Result<Page<ThreadSummary>, StoreError>;

    /// Up to `limit` (1..=[`MAX_PAGE_SIZE`]) active threads of `mode` last
    /// updated before `idle_before`, least recently updated first, after
    /// the position `after` of an earlier call. Only modes whose sessions
    /// expire when idle ([`Mode::expires_when_idle`]) are listed: the
    /// index behind it holds no others. Eventually consistent on DynamoDB:
    /// read the thread before acting on it.
    async fn list_idle_threads(
        &self,
        mode: Mode,
        idle_before: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<IdleThread>, StoreError>;

    /// Turn leases held on the threads' own items, where the store is
    /// shared between processes (DynamoDB). `None` on a store one process
    /// uses (the embedded SQLite), whose in-memory turn queue is the lease.
    fn thread_leases(&self) -> Option<&dyn ThreadLeases> {
        None
    }
}

/// A turn's lease on its thread, kept on the thread's item: taking it
/// leaves the thread's version as it is, and every thread write carries
/// the lease it read over, conditioned on it (see
/// [`ThreadRecord::update`]), except the holder's commit, which releases
/// it ([`ThreadChange::releasing`]).
#[async_trait]
pub trait ThreadLeases: Send + Sync {
    /// Takes the lease on `student_id`'s thread `thread_id` as `lease`,
    /// when no turn holds it or its holder's has lapsed at `now`.
    async fn take_thread_lease(
        &self,
        thread_id: &str,
        student_id: &str,
        lease: &ThreadLease,
        now: DateTime<Utc>,
    ) -> Result<LeaseTake, StoreError>;

    /// Drops the lease of a turn that did not commit, if `token` still
    /// holds it.
    async fn release_thread_lease(&self, thread_id: &str, token: &str) -> Result<(), StoreError>;
}

/// Idempotency records (see [`Begin`]).
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Takes the in-progress lock of `key` for `lock_for`, or reports what an
    /// earlier request with the key left: its response to replay, that it is
    /// still running ([`StoreError::IdempotencyInProgress`]), or that it had
    /// another payload ([`StoreError::IdempotencyKeyReused`]).
    async fn begin_idempotency(
        &self,
        key: &IdempotencyKey,
        payload_hash: &str,
        now: DateTime<Utc>,
        lock_for: Duration,
    ) -> Result<Begin, StoreError>;

    /// Drops the lock of a request that failed, so a retry runs again.
    /// Does nothing if the lock was taken over or completed meanwhile.
    async fn release_idempotency(&self, lock: &IdempotencyLock) -> Result<(), StoreError>;
}

/// Turn logs, kept for the configured time.
#[async_trait]
pub trait TurnLogStore: Send + Sync {
    /// A thread's turn logs that have not expired at `now`.
    async fn list_turn_logs(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<TurnLog>, StoreError>;
}

/// Built-in exam lockouts.
#[async_trait]
pub trait LockoutStore: Send + Sync {
    /// The student's stored lockouts in a course, by question id
    /// (consistent read): one request answers for every question a use
    /// case may look at, so it can run alongside the snapshot's read.
    /// Ended lockouts may still be returned: check
    /// [`ExamLockout::is_active`].
    async fn list_lockouts(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<BTreeMap<String, Versioned<ExamLockout>>, StoreError>;
}

/// Students' saved profiles.
#[async_trait]
pub trait ProfileStore: Send + Sync {
    /// The profile and its version (consistent read), `None` until the
    /// student first saves one.
    async fn get_profile(
        &self,
        student_id: &str,
    ) -> Result<Option<Versioned<SavedProfile>>, StoreError>;
}

/// Atomic, version-conditioned writes.
#[async_trait]
pub trait Committer: Send + Sync {
    /// Writes every change of `work` or none. A failed condition is a
    /// [`StoreError::Conflict`] naming the item; an empty unit is a no-op.
    async fn commit(&self, work: UnitOfWork) -> Result<(), StoreError>;
}

/// Everything the functions need from state storage.
pub trait Store:
    SnapshotStore
    + ThreadStore
    + IdempotencyStore
    + TurnLogStore
    + LockoutStore
    + ProfileStore
    + Committer
{
}

impl<T> Store for T where
    T: SnapshotStore
        + ThreadStore
        + IdempotencyStore
        + TurnLogStore
        + LockoutStore
        + ProfileStore
        + Committer
{
}

/// How long records are kept, from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub idempotency: Duration,
    pub turn_logs: Duration,
}

impl Retention {
    /// Settings beyond a century are taken as a century.
    pub fn from_config(config: &StoreConfig) -> Self {
        const CENTURY_DAYS: u64 = 36_500;
        let hours = config.idempotency_ttl_hours.min(CENTURY_DAYS * 24);
        let days = config.turn_log_ttl_days.min(CENTURY_DAYS);
        Retention {
            idempotency: Duration::hours(hours as i64),
            turn_logs: Duration::days(days as i64),
        }
    }
}

/// Opens the configured store. SQLite creates its file (and parent
/// directories). DynamoDB expects the table to exist — except behind an
/// endpoint override (moto, DynamoDB Local), where it is created if missing
/// so local runs need no setup.
pub async fn open(config: &StoreConfig) -> Result<Arc<dyn Store>, StoreError> {
    let retention = Retention::from_config(config);
    match config.backend {
        #[cfg(feature = "sqlite")]
        StoreBackend::Sqlite => Ok(Arc::new(
            SqliteStore::open(&config.sqlite_path, retention).await?,
        )),
        #[cfg(not(feature = "sqlite"))]
        StoreBackend::Sqlite => Err(StoreError::Unavailable(format!(
            "store.backend = \"sqlite\" ({}) needs a build with the `sqlite` feature \
             (e.g. `cargo lambda watch --features tutorflow/sqlite`); \
             this one links only DynamoDB",
            config.sqlite_path.display()
        ))),
        StoreBackend::Dynamodb => {
            let client =
                dynamodb_client(config.endpoint_url.as_deref(), config.region.as_deref()).await;
            let store = DynamoStore::new(client, &config.table, retention);
            if config.endpoint_url.is_some() {
                store.create_table_if_missing().await?;
            }
            Ok(Arc::new(store))
        }
    }
}

/// The configured content source: the bundle directory, or the bundle
/// published to S3.
pub async fn content_source(config: &ContentConfig) -> Result<Arc<dyn ContentSource>, SourceError> {
    match config.source {
        ContentSourceKind::Fs => Ok(Arc::new(FsSource::new(&config.dir))),
        ContentSourceKind::S3 => {
            let bucket = config.bucket.as_deref().ok_or_else(|| {
                SourceError::Unavailable(
                    "content.bucket is required for content.source = \"s3\"".into(),
                )
            })?;
            let client = s3_client(config.endpoint_url.as_deref(), None).await;
            Ok(Arc::new(S3Source::new(client, bucket, &config.prefix)))
        }
    }
}

/// Loads the configured content into a cache that refreshes every
/// `content.refresh_seconds`.
pub async fn open_content(config: &ContentConfig) -> Result<ContentCache, LoadError> {
    let refresh = std::time::Duration::from_secs(config.refresh_seconds);
    ContentCache::load(content_source(config).await?, refresh).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_comes_from_the_configuration_and_is_capped() {
        let retention = Retention::from_config(&StoreConfig::default());
        assert_eq!(retention.idempotency, Duration::hours(24));
        assert_eq!(retention.turn_logs, Duration::days(30));
        let absurd = StoreConfig {
            idempotency_ttl_hours: u64::MAX,
            turn_log_ttl_days: u64::MAX,
            ..StoreConfig::default()
        };
        let capped = Retention::from_config(&absurd);
        assert_eq!(capped.turn_logs, Duration::days(36_500));
        assert_eq!(capped.idempotency, Duration::days(36_500));
    }
}
