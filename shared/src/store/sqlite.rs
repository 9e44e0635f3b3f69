//! The embedded store: one SQLite file with the same semantics as DynamoDB.
//!
//! Several processes may open the same file (`cargo lambda watch` runs one
//! per function): the database is in WAL mode, waits for locks with a busy
//! timeout, and every write runs in a `BEGIN IMMEDIATE` transaction, so the
//! version checks and the writes they guard are one atomic step. Blocking
//! calls run on tokio's blocking pool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use tokio::sync::Semaphore;

use super::cursor::{self, paginate, seq_key};
use super::error::{ItemRef, StoreError};
use super::idempotency::{
    self, Begin, IdempotencyKey, IdempotencyLock, IdempotencyRecord, RecordStatus, StoredResponse,
};
use super::types::{
    ExamLockout, IdleThread, Order, Page, PageRequest, SavedProfile, ThreadRecord, ThreadSummary,
    TurnLog, Versioned, WriteCondition, check_id, check_idle_listing, check_limit, from_millis,
    list_key, millis, plus, time_key, turn_log_key,
};
use super::unit_of_work::{Change, Encoder, UnitOfWork, decode};
use super::{
    Committer, IdempotencyStore, LockoutStore, ProfileStore, Retention, SnapshotStore, ThreadStore,
    TurnLogStore,
};
use crate::model::{Mode, StudentSnapshot, TutorMessage};

/// Bumped when the schema changes; a newer file is refused, not misread.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS snapshots (
    student_id TEXT NOT NULL,
    course_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (student_id, course_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY NOT NULL,
    student_id TEXT NOT NULL,
    list_key TEXT NOT NULL,
    version INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    data TEXT NOT NULL,
    summary TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS threads_by_student ON threads (student_id, list_key);
-- The idle sweep's listing: active threads by mode and last activity.
CREATE INDEX IF NOT EXISTS active_threads_by_activity
    ON threads (json_extract(data, '$.mode'), list_key)
    WHERE json_extract(data, '$.status') = 'active';
CREATE TABLE IF NOT EXISTS messages (
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    student_id TEXT NOT NULL,
    key_digest TEXT NOT NULL,
    client_key TEXT NOT NULL,
    status TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    lock_token TEXT NOT NULL,
    lock_expires_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    response TEXT,
    PRIMARY KEY (student_id, key_digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn_logs (
    thread_id TEXT NOT NULL,
    sort_key TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (thread_id, sort_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lockouts (
    student_id TEXT NOT NULL,
    course_id TEXT NOT NULL,
    question_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    locked_until_ms INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (student_id, course_id, question_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profiles (
    student_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    data TEXT NOT NULL
) WITHOUT ROWID;
";

/// Connections to one database, at most `permits` in use at a time.
struct Pool {
    /// `None`: a private in-memory database living in its one connection.
    path: Option<PathBuf>,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
    /// One write transaction at a time in this process: a second writer
    /// would find the file locked and SQLite's busy handler would put it to
    /// sleep for a millisecond or more, where waiting here wakes it as soon
    /// as the first commits. Other processes still meet the busy timeout.
    writer: Semaphore,
}

/// Connections kept per process: SQLite has one writer at a time anyway,
/// a few more serve concurrent reads.
const POOL_SIZE: usize = 4;

#[derive(Clone)]
pub struct SqliteStore {
    pool: Arc<Pool>,
    retention: Retention,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.pool.path)
            .finish_non_exhaustive()
    }
}

fn db_error(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(format!("sqlite: {e}"))
}

/// More than the store's distinct statements.
const STATEMENT_CACHE: usize = 64;

fn connect(path: Option<&Path>) -> Result<Connection, StoreError> {
    let conn = match path {
        Some(path) => Connection::open(path),
        None => Connection::open_in_memory(),
    }
    .map_err(db_error)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(db_error)?;
    // Every statement the store runs stays prepared on its connection: a
    // turn would otherwise parse a dozen statements again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    if path.is_some() {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map_err(db_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db_error)?;
    }
    Ok(conn)
}

fn migrate(conn: &mut Connection, now: DateTime<Utc>) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db_error)?;
    let version: i64 = tx
        .prepare_cached("PRAGMA user_version")
        .map_err(db_error)?
        .query_row([], |r| r.get(0))
        .map_err(db_error)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::Unavailable(format!(
            "the database has schema version {version}; this build knows {SCHEMA_VERSION}"
        )));
    }
    tx.execute_batch(SCHEMA).map_err(db_error)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(db_error)?;
    // SQLite has no TTL: expired records are dropped whenever a process opens the file.
    let now_ms = millis(now);
    tx.prepare_cached("DELETE FROM idempotency WHERE expires_ms <= ?1")
        .map_err(db_error)?
        .execute([now_ms])
        .map_err(db_error)?;
    tx.prepare_cached("DELETE FROM turn_logs WHERE expires_ms <= ?1")
        .map_err(db_error)?
        .execute([now_ms])
        .map_err(db_error)?;
    tx.prepare_cached("DELETE FROM lockouts WHERE locked_until_ms <= ?1")
        .map_err(db_error)?
        .execute([now_ms])
        .map_err(db_error)?;
    tx.commit().map_err(db_error)
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and its parent directories.
    pub async fn open(path: &Path, retention: Retention) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::Unavailable(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        Self::start(Some(path.to_path_buf()), POOL_SIZE, retention).await
    }

    /// A private database that lives as long as the store (for tests and
    /// one-off tools).
    pub async fn in_memory(retention: Retention) -> Result<Self, StoreError> {
        Self::start(None, 1, retention).await
    }

    async fn start(
        path: Option<PathBuf>,
        size: usize,
        retention: Retention,
    ) -> Result<Self, StoreError> {
        let store = SqliteStore {
            pool: Arc::new(Pool {
                path,
                idle: Mutex::new(Vec::new()),
                permits: Semaphore::new(size),
                writer: Semaphore::new(1),
            }),
            retention,
        };
        let now = Utc::now();
        store.run_write(move |conn| migrate(conn, now)).await?;
        Ok(store)
    }

    /// Runs `work`, which writes, once no other write of this process is
    /// running.
    async fn run_write<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let _writing = self
            .pool
            .writer
            .acquire()
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        self.run(work).await
    }

    /// Runs `work` with a pooled connection on the blocking pool.
    async fn run<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let _permit = self
            .pool
            .permits
            .acquire()
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let idle = self.pool.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut conn = match idle {
            Some(conn) => conn,
            None => connect(self.pool.path.as_deref())?,
        };
        let (conn, result) = tokio::task::spawn_blocking(move || {
            let result = work(&mut conn);
            (conn, result)
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("sqlite task failed: {e}")))?;
        if let Ok(mut idle) = self.pool.idle.lock() {
            idle.push(conn);
        }
        result
    }
}

fn version_matches(current: Option<u64>, expected: WriteCondition) -> bool {
    match (current, expected) {
        (None, WriteCondition::New) => true,
        (Some(v), WriteCondition::Version(e)) => v == e,
        _ => false,
    }
}

fn to_version(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn to_sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A change with its values encoded, ready to write.
enum Write {
    Snapshot {
        item: ItemRef,
        student_id: String,
        course_id: String,
        expected: WriteCondition,
        data: String,
    },
    Thread {
        item: ItemRef,
        thread_id: String,
        student_id: String,
        list_key: String,
        expected: WriteCondition,
        message_count: u64,
        data: String,
        summary: String,
        messages: Vec<(u64, String)>,
    },
    Idempotency {
        item: ItemRef,
        student_id: String,
        digest: String,
        token: String,
        record: IdempotencyRecord,
        response: String,
    },
    TurnLog {
        item: ItemRef,
        thread_id: String,
        sort_key: String,
        expires_ms: i64,
        data: String,
    },
    Lockout {
        item: ItemRef,
        lockout: ExamLockout,
        expected: WriteCondition,
        data: String,
    },
    Profile {
        item: ItemRef,
        student_id: String,
        expected: WriteCondition,
        data: String,
    },
}

fn encode(work: &UnitOfWork, retention: Retention) -> Result<Vec<Write>, StoreError> {
    let mut enc = Encoder::default();
    work.changes()
        .iter()
        .map(|change| {
            let item = change.item();
            Ok(match change {
                Change::Snapshot { snapshot, expected } => Write::Snapshot {
                    data: enc.json(snapshot, &item)?,
                    student_id: snapshot.student_id.clone(),
                    course_id: snapshot.course_id.clone(),
                    expected: *expected,
                    item,
                },
                Change::Thread(t) => {
                    let messages = t
                        .appended()
                        .map(|(seq, m)| {
                            let msg_item = ItemRef::Message {
                                thread_id: t.thread.thread_id.clone(),
                                seq,
                            };
                            Ok((seq, enc.json(m, &msg_item)?))
                        })
                        .collect::<Result<_, StoreError>>()?;
                    Write::Thread {
                        data: enc.json(&t.thread, &item)?,
                        summary: enc.json(&ThreadSummary::from(&t.thread), &item)?,
                        thread_id: t.thread.thread_id.clone(),
                        student_id: t.thread.student_id.clone(),
                        list_key: list_key(&t.thread),
                        expected: t.expected,
                        message_count: t.message_count_after(),
                        messages,
                        item,
                    }
                }
                Change::CompleteIdempotency { lock, response } => Write::Idempotency {
                    response: enc.json(response, &item)?,
                    student_id: lock.key.student_id().to_owned(),
                    digest: lock.key.digest(),
                    token: lock.token.clone(),
                    record: IdempotencyRecord::completed(lock, response, retention.idempotency),
                    item,
                },
                Change::TurnLog(log) => Write::TurnLog {
                    data: enc.json(log, &item)?,
                    thread_id: log.thread_id.clone(),
                    sort_key: turn_log_key(log),
                    expires_ms: millis(plus(log.created_at, retention.turn_logs)),
                    item,
                },
                Change::Lockout { lockout, expected } => Write::Lockout {
                    data: enc.json(lockout, &item)?,
                    lockout: lockout.clone(),
                    expected: *expected,
                    item,
                },
                Change::Profile { profile, expected } => Write::Profile {
                    data: enc.json(profile, &item)?,
                    student_id: profile.student_id.clone(),
                    expected: *expected,
                    item,
                },
            })
        })
        .collect()
}

fn apply(tx: &rusqlite::Transaction<'_>, write: Write) -> Result<(), StoreError> {
    match write {
        Write::Snapshot {
            item,
            student_id,
            course_id,
            expected,
            data,
        } => {
            let current: Option<i64> = tx
                .prepare_cached(
                    "SELECT version FROM snapshots WHERE student_id = ?1 AND course_id = ?2",
                )
                .map_err(db_error)?
                .query_row(params![student_id, course_id], |r| r.get(0))
                .optional()
                .map_err(db_error)?;
            if !version_matches(current.map(to_version), expected) {
                return Err(StoreError::Conflict(item));
            }
            tx.prepare_cached(
                "INSERT OR REPLACE INTO snapshots (student_id, course_id, version, data)
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(db_error)?
            .execute(params![
                student_id,
                course_id,
                to_sql(expected.next_version()),
                data
            ])
            .map_err(db_error)?;
        }
        Write::Thread {
            item,
            thread_id,
            student_id,
            list_key,
            expected,
            message_count,
            data,
            summary,
            messages,
        } => {
            let current: Option<i64> = tx
                .prepare_cached("SELECT version FROM threads WHERE thread_id = ?1")
                .map_err(db_error)?
                .query_row([&thread_id], |r| r.get(0))
                .optional()
                .map_err(db_error)?;
            if !version_matches(current.map(to_version), expected) {
                return Err(StoreError::Conflict(item));
            }
            tx.prepare_cached(
                "INSERT OR REPLACE INTO threads
                 (thread_id, student_id, list_key, version, message_count, data, summary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .map_err(db_error)?
            .execute(params![
                thread_id,
                student_id,
                list_key,
                to_sql(expected.next_version()),
                to_sql(message_count),
                data,
                summary
            ])
            .map_err(db_error)?;
            for (seq, data) in messages {
                let inserted = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO messages (thread_id, seq, data) VALUES (?1, ?2, ?3)",
                    )
                    .map_err(db_error)?
                    .execute(params![thread_id, to_sql(seq), data])
                    .map_err(db_error)?;
                if inserted == 0 {
                    return Err(StoreError::Conflict(ItemRef::Message {
                        thread_id: thread_id.clone(),
                        seq,
                    }));
                }
            }
        }
        Write::Idempotency {
            item,
            student_id,
            digest,
            token,
            record,
            response,
        } => {
            let updated = tx
                .prepare_cached(
                    "UPDATE idempotency SET status = ?1, lock_expires_ms = ?2, expires_ms = ?3,
                     response = ?4
                     WHERE student_id = ?5 AND key_digest = ?6 AND lock_token = ?7 AND status = ?8",
                )
                .map_err(db_error)?
                .execute(params![
                    record.status.as_str(),
                    millis(record.lock_expires_at),
                    millis(record.expires_at),
                    response,
                    student_id,
                    digest,
                    token,
                    RecordStatus::InProgress.as_str()
                ])
                .map_err(db_error)?;
            if updated == 0 {
                return Err(StoreError::Conflict(item));
            }
        }
        Write::TurnLog {
            item,
            thread_id,
            sort_key,
            expires_ms,
            data,
        } => {
            let inserted = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO turn_logs (thread_id, sort_key, expires_ms, data)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(db_error)?
                .execute(params![thread_id, sort_key, expires_ms, data])
                .map_err(db_error)?;
            if inserted == 0 {
                return Err(StoreError::Conflict(item));
            }
        }
        Write::Lockout {
            item,
            lockout,
            expected,
            data,
        } => {
            let current: Option<i64> = tx
                .prepare_cached(
                    "SELECT version FROM lockouts
                     WHERE student_id = ?1 AND course_id = ?2 AND question_id = ?3",
                )
                .map_err(db_error)?
                .query_row(
                    params![lockout.student_id, lockout.course_id, lockout.question_id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(db_error)?;
            if !version_matches(current.map(to_version), expected) {
                return Err(StoreError::Conflict(item));
            }
            tx.prepare_cached(
                "INSERT OR REPLACE INTO lockouts
                 (student_id, course_id, question_id, version, locked_until_ms, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(db_error)?
            .execute(params![
                lockout.student_id,
                lockout.course_id,
                lockout.question_id,
                to_sql(expected.next_version()),
                millis(lockout.locked_until),
                data
            ])
            .map_err(db_error)?;
        }
        Write::Profile {
            item,
            student_id,
            expected,
            data,
        } => {
            let current: Option<i64> = tx
                .prepare_cached("SELECT version FROM profiles WHERE student_id = ?1")
                .map_err(db_error)?
                .query_row(params![student_id], |r| r.get(0))
                .optional()
                .map_err(db_error)?;
            if !version_matches(current.map(to_version), expected) {
                return Err(StoreError::Conflict(item));
            }
            tx.prepare_cached(
                "INSERT OR REPLACE INTO profiles (student_id, version, data) VALUES (?1, ?2, ?3)",
            )
            .map_err(db_error)?
            .execute(params![student_id, to_sql(expected.next_version()), data])
            .map_err(db_error)?;
        }
    }
    Ok(())
}

#[async_trait]
impl Committer for SqliteStore {
    async fn commit(&self, work: UnitOfWork) -> Result<(), StoreError> {
        work.check()?;
        if work.is_empty() {
            return Ok(());
        }
        let writes = encode(&work, self.retention)?;
        self.run_write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db_error)?;
            for write in writes {
                // Returning early drops `tx`, which rolls everything back.
                apply(&tx, write)?;
            }
            tx.commit().map_err(db_error)
        })
        .await
    }
}

#[async_trait]
impl SnapshotStore for SqliteStore {
    async fn get_snapshot(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<Option<Versioned<StudentSnapshot>>, StoreError> {
        check_id("student id", student_id)?;
        check_id("course id", course_id)?;
        let item = ItemRef::Snapshot {
            student_id: student_id.to_owned(),
            course_id: course_id.to_owned(),
        };
        let (student_id, course_id) = (student_id.to_owned(), course_id.to_owned());
        let row: Option<(i64, String)> = self
            .run(move |conn| {
                conn.prepare_cached(
                    "SELECT version, data FROM snapshots WHERE student_id = ?1 AND course_id = ?2",
                )
                .map_err(db_error)?
                .query_row(params![student_id, course_id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(db_error)
            })
            .await?;
        row.map(|(version, data)| {
            Ok(Versioned {
                value: decode(&data, &item)?,
                version: to_version(version),
            })
        })
        .transpose()
    }
}

#[async_trait]
impl ThreadStore for SqliteStore {
    async fn get_thread(
        &self,
        thread_id: &str,
        recent: usize,
    ) -> Result<Option<ThreadRecord>, StoreError> {
        check_id("thread id", thread_id)?;
        if recent > 0 {
            check_limit(recent, "recent messages")?;
        }
        let id = thread_id.to_owned();
        type Row = (i64, i64, String, Vec<(i64, String)>);
        let row: Option<Row> = self
            .run(move |conn| {
                // One read transaction: the thread and its messages as of one moment.
                let tx = conn.transaction().map_err(db_error)?;
                let meta: Option<(i64, i64, String)> = tx
                    .prepare_cached(
                        "SELECT version, message_count, data FROM threads WHERE thread_id = ?1",
                    )
                    .map_err(db_error)?
                    .query_row([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
                    .map_err(db_error)?;
                let Some((version, count, data)) = meta else {
                    return Ok(None);
                };
                let mut stmt = tx
                    .prepare_cached(
                        "SELECT seq, data FROM messages WHERE thread_id = ?1
                         ORDER BY seq DESC LIMIT ?2",
                    )
                    .map_err(db_error)?;
                let messages = stmt
                    .query_map(params![id, recent as i64], |r| Ok((r.get(0)?, r.get(1)?)))
                    .and_then(Iterator::collect)
                    .map_err(db_error)?;
                Ok(Some((version, count, data, messages)))
            })
            .await?;
        let Some((version, count, data, mut messages)) = row else {
            return Ok(None);
        };
        messages.reverse();
        let item = ItemRef::Thread {
            thread_id: thread_id.to_owned(),
        };
        Ok(Some(ThreadRecord {
            thread: decode(&data, &item)?,
            version: to_version(version),
            message_count: to_version(count),
            recent_messages: decode_messages(thread_id, messages)?,
            lease: None,
        }))
    }

    async fn list_messages(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
    ) -> Result<Page<TutorMessage>, StoreError> {
        check_id("thread id", thread_id)?;
        let listing = cursor::messages_listing(thread_id, order);
        let (limit, from) = page.open(&listing)?;
        let after: Option<i64> = match from {
            Some(position) => Some(
                position
                    .parse()
                    .map_err(|_| StoreError::InvalidInput("malformed page cursor".into()))?,
            ),
            None => None,
        };
        let sql = match order {
            Order::OldestFirst => {
                "SELECT seq, data FROM messages WHERE thread_id = ?1 AND seq > ?2
                 ORDER BY seq ASC LIMIT ?3"
            }
            Order::NewestFirst => {
                "SELECT seq, data FROM messages WHERE thread_id = ?1 AND seq < ?2
                 ORDER BY seq DESC LIMIT ?3"
            }
        };
        let start = after.unwrap_or(match order {
            Order::OldestFirst => -1,
            Order::NewestFirst => i64::MAX,
        });
        let id = thread_id.to_owned();
        let rows: Vec<(i64, String)> = self
            .run(move |conn| {
                let mut stmt = conn.prepare_cached(sql).map_err(db_error)?;
                stmt.query_map(params![id, start, (limit + 1) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .and_then(Iterator::collect)
                .map_err(db_error)
            })
            .await?;
        let rows = rows
            .into_iter()
            .map(|(seq, data)| {
                let seq = to_version(seq);
                let item = ItemRef::Message {
                    thread_id: thread_id.to_owned(),
                    seq,
                };
                Ok((seq_key(seq), decode(&data, &item)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(rows, limit, &listing))
    }

    async fn list_threads(
        &self,
        student_id: &str,
        page: &PageRequest,
    ) -> Result<Page<ThreadSummary>, StoreError> {
        check_id("student id", student_id)?;
        let listing = cursor::threads_listing(student_id);
        let (limit, from) = page.open(&listing)?;
        // Above every time key.
        let before = from.unwrap_or_else(|| "\u{10FFFF}".to_owned());
        let id = student_id.to_owned();
        let rows: Vec<(String, String, String)> = self
            .run(move |conn| {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT list_key, thread_id, summary FROM threads
                         WHERE student_id = ?1 AND list_key < ?2
                         ORDER BY list_key DESC LIMIT ?3",
                    )
                    .map_err(db_error)?;
                stmt.query_map(params![id, before, (limit + 1) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .and_then(Iterator::collect)
                .map_err(db_error)
            })
            .await?;
        let rows = rows
            .into_iter()
            .map(|(key, thread_id, summary)| {
                Ok((key, decode(&summary, &ItemRef::Thread { thread_id })?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(rows, limit, &listing))
    }

    async fn list_idle_threads(
        &self,
        mode: Mode,
        idle_before: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<IdleThread>, StoreError> {
        let limit = check_idle_listing(mode, limit)?;
        let before = time_key(idle_before);
        let after = after.unwrap_or_default().to_owned();
        let rows: Vec<(String, String)> = self
            .run(move |conn| {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT list_key, thread_id FROM threads
                         WHERE json_extract(data, '$.status') = 'active'
                           AND json_extract(data, '$.mode') = ?1
                           AND list_key > ?2 AND list_key < ?3
                         ORDER BY list_key LIMIT ?4",
                    )
                    .map_err(db_error)?;
                stmt.query_map(params![mode.as_str(), after, before, limit as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .and_then(Iterator::collect)
                .map_err(db_error)
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|(position, thread_id)| IdleThread {
                thread_id,
                position,
            })
            .collect())
    }
}

fn decode_messages(
    thread_id: &str,
    rows: Vec<(i64, String)>,
) -> Result<Vec<TutorMessage>, StoreError> {
    rows.into_iter()
        .map(|(seq, data)| {
            decode(
                &data,
                &ItemRef::Message {
                    thread_id: thread_id.to_owned(),
                    seq: to_version(seq),
                },
            )
        })
        .collect()
}

fn read_record(
    tx: &rusqlite::Transaction<'_>,
    student_id: &str,
    digest: &str,
) -> Result<Option<IdempotencyRecord>, StoreError> {
    type Row = (String, String, String, i64, i64, Option<String>);
    let row: Option<Row> = tx
        .prepare_cached(
            "SELECT status, payload_hash, lock_token, lock_expires_ms, expires_ms, response
             FROM idempotency WHERE student_id = ?1 AND key_digest = ?2",
        )
        .map_err(db_error)?
        .query_row(params![student_id, digest], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .optional()
        .map_err(db_error)?;
    let Some((status, payload_hash, lock_token, lock_ms, expires_ms, response)) = row else {
        return Ok(None);
    };
    let corrupt = |what: &str| StoreError::Serialization(format!("idempotency record: {what}"));
    let response: Option<StoredResponse> = response
        .map(|r| serde_json::from_str(&r))
        .transpose()
        .map_err(|_| corrupt("unreadable response"))?;
    Ok(Some(IdempotencyRecord {
        status: RecordStatus::parse(&status).ok_or_else(|| corrupt("unknown status"))?,
        payload_hash,
        lock_token,
        lock_expires_at: from_millis(lock_ms),
        expires_at: from_millis(expires_ms),
        response,
    }))
}

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn begin_idempotency(
        &self,
        key: &IdempotencyKey,
        payload_hash: &str,
        now: DateTime<Utc>,
        lock_for: Duration,
    ) -> Result<Begin, StoreError> {
        idempotency::check_lock_duration(lock_for)?;
        let lock = idempotency::new_lock(key, payload_hash, now)?;
        let record = IdempotencyRecord::in_progress(&lock, lock_for, self.retention.idempotency);
        let (student_id, digest) = (key.student_id().to_owned(), key.digest());
        let client_key = key.key().to_owned();
        let existing = self
            .run_write(move |conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(db_error)?;
                if let Some(existing) = read_record(&tx, &student_id, &digest)? {
                    let found = idempotency::resolve(&existing, &record.payload_hash, now);
                    if found != idempotency::Existing::Vacant {
                        return Ok(Some(found));
                    }
                }
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO idempotency (student_id, key_digest, client_key,
                     status, payload_hash, lock_token, lock_expires_ms, expires_ms, response)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
                )
                .map_err(db_error)?
                .execute(params![
                    student_id,
                    digest,
                    client_key,
                    record.status.as_str(),
                    record.payload_hash,
                    record.lock_token,
                    millis(record.lock_expires_at),
                    millis(record.expires_at)
                ])
                .map_err(db_error)?;
                tx.commit().map_err(db_error)?;
                Ok(None)
            })
            .await?;
        match existing.and_then(|found| idempotency::outcome(key, found)) {
            Some(answer) => answer,
            None => Ok(Begin::Acquired(lock)),
        }
    }

    async fn release_idempotency(&self, lock: &IdempotencyLock) -> Result<(), StoreError> {
        let (student_id, digest) = (lock.key.student_id().to_owned(), lock.key.digest());
        let token = lock.token.clone();
        self.run_write(move |conn| {
            conn.prepare_cached(
                "DELETE FROM idempotency WHERE student_id = ?1 AND key_digest = ?2
                 AND lock_token = ?3 AND status = ?4",
            )
            .map_err(db_error)?
            .execute(params![
                student_id,
                digest,
                token,
                RecordStatus::InProgress.as_str()
            ])
            .map(drop)
            .map_err(db_error)
        })
        .await
    }
}

#[async_trait]
impl TurnLogStore for SqliteStore {
    async fn list_turn_logs(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<TurnLog>, StoreError> {
        check_id("thread id", thread_id)?;
        let listing = cursor::turn_logs_listing(thread_id, order);
        let (limit, from) = page.open(&listing)?;
        let (sql, start) = match order {
            Order::OldestFirst => (
                "SELECT sort_key, data FROM turn_logs
                 WHERE thread_id = ?1 AND sort_key > ?2 AND expires_ms > ?3
                 ORDER BY sort_key ASC LIMIT ?4",
                from.unwrap_or_default(),
            ),
            Order::NewestFirst => (
                "SELECT sort_key, data FROM turn_logs
                 WHERE thread_id = ?1 AND sort_key < ?2 AND expires_ms > ?3
                 ORDER BY sort_key DESC LIMIT ?4",
                from.unwrap_or_else(|| "\u{10FFFF}".to_owned()),
            ),
        };
        let id = thread_id.to_owned();
        let now_ms = millis(now);
        let rows: Vec<(String, String)> = self
            .run(move |conn| {
                let mut stmt = conn.prepare_cached(sql).map_err(db_error)?;
                stmt.query_map(params![id, start, now_ms, (limit + 1) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .and_then(Iterator::collect)
                .map_err(db_error)
            })
            .await?;
        let rows = rows
            .into_iter()
            .map(|(key, data)| {
                let item = ItemRef::TurnLog {
                    thread_id: thread_id.to_owned(),
                    turn_id: key.clone(),
                };
                Ok((key, decode(&data, &item)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(rows, limit, &listing))
    }
}

#[async_trait]
impl LockoutStore for SqliteStore {
    async fn list_lockouts(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<BTreeMap<String, Versioned<ExamLockout>>, StoreError> {
        check_id("student id", student_id)?;
        check_id("course id", course_id)?;
        let (sid, cid) = (student_id.to_owned(), course_id.to_owned());
        let rows: Vec<(String, i64, String)> = self
            .run(move |conn| {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT question_id, version, data FROM lockouts
                         WHERE student_id = ?1 AND course_id = ?2",
                    )
                    .map_err(db_error)?;
                let rows = stmt
                    .query_map(params![sid, cid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .map_err(db_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(db_error)?;
                Ok(rows)
            })
            .await?;
        rows.into_iter()
            .map(|(question_id, version, data)| {
                let item = ItemRef::Lockout {
                    student_id: student_id.to_owned(),
                    course_id: course_id.to_owned(),
                    question_id: question_id.clone(),
                };
                let value = decode(&data, &item)?;
                Ok((
                    question_id,
                    Versioned {
                        value,
                        version: to_version(version),
                    },
                ))
            })
            .collect()
    }
}

#[async_trait]
impl ProfileStore for SqliteStore {
    async fn get_profile(
        &self,
        student_id: &str,
    ) -> Result<Option<Versioned<SavedProfile>>, StoreError> {
        check_id("student id", student_id)?;
        let sid = student_id.to_owned();
        let row: Option<(i64, String)> = self
            .run(move |conn| {
                conn.prepare_cached("SELECT version, data FROM profiles WHERE student_id = ?1")
                    .map_err(db_error)?
                    .query_row(params![sid], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
                    .map_err(db_error)
            })
            .await?;
        let item = ItemRef::Profile {
            student_id: student_id.to_owned(),
        };
        row.map(|(version, data)| {
            Ok(Versioned {
                value: decode(&data, &item)?,
                version: to_version(version),
            })
        })
        .transpose()
    }
}
