//! The values the store traits read and write: model types wrapped with the
//! version they were read at, pages of listings, turn logs and lockouts.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::cursor;
use super::error::StoreError;
use crate::model::{Mode, RevisitReason, Thread, TutorMessage};

/// Most changes one unit of work may hold (DynamoDB's transaction limit;
/// every appended message counts as one).
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// Largest encoded value of one item. DynamoDB allows 400 KB per item
/// including attribute names and keys; this leaves room for them.
pub const MAX_ITEM_BYTES: usize = 350 * 1024;
/// Largest total of encoded values in one unit of work (DynamoDB: 4 MB).
pub const MAX_TRANSACTION_BYTES: usize = 3 * 1024 * 1024;
/// Largest page of a listing, and most recent messages one read returns.
pub const MAX_PAGE_SIZE: usize = 100;
/// Longest id (student, course, thread, question, turn) the store accepts.
pub const MAX_ID_BYTES: usize = 256;

/// A stored value and the version it was read at. Versions start at 1 and
/// grow by one with every committed change.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    pub value: T,
    pub version: u64,
}

impl<T> Versioned<T> {
    /// The condition for writing a new value over this one.
    pub fn expected(&self) -> WriteCondition {
        WriteCondition::Version(self.version)
    }
}

/// The condition a write is committed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteCondition {
    /// The item must not exist yet.
    New,
    /// The item must still be at this version.
    Version(u64),
}

impl WriteCondition {
    /// `New` when nothing was read, else the version that was read.
    pub fn of<T>(read: Option<&Versioned<T>>) -> WriteCondition {
        read.map_or(WriteCondition::New, Versioned::expected)
    }

    pub(crate) fn next_version(self) -> u64 {
        match self {
            WriteCondition::New => 1,
            WriteCondition::Version(v) => v + 1,
        }
    }
}

/// Direction of a listing in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    OldestFirst,
    NewestFirst,
}

impl Order {
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Order::OldestFirst => "asc",
            Order::NewestFirst => "desc",
        }
    }
}

/// Which page of a listing to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// 1..=[`MAX_PAGE_SIZE`].
    pub limit: usize,
    /// `next_cursor` of the previous page; `None` for the first page.
    pub cursor: Option<String>,
}

impl PageRequest {
    pub fn first(limit: usize) -> Self {
        PageRequest {
            limit,
            cursor: None,
        }
    }

    pub fn after(cursor: impl Into<String>, limit: usize) -> Self {
        PageRequest {
            limit,
            cursor: Some(cursor.into()),
        }
    }

    /// The checked limit, and the position the cursor continues `listing`
    /// from (`None` on the first page): what every store reads a page with.
    pub(crate) fn open(&self, listing: &str) -> Result<(usize, Option<String>), StoreError> {
        let limit = check_limit(self.limit, "page limit")?;
        let from = self
            .cursor
            .as_deref()
            .map(|c| cursor::decode(listing, c))
            .transpose()?;
        Ok((limit, from))
    }
}

pub(crate) fn check_limit(limit: usize, what: &str) -> Result<usize, StoreError> {
    if (1..=MAX_PAGE_SIZE).contains(&limit) {
        Ok(limit)
    } else {
        Err(StoreError::InvalidInput(format!(
            "{what} must be between 1 and {MAX_PAGE_SIZE}, got {limit}"
        )))
    }
}

/// An active thread left without activity, as the idle sweep lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleThread {
    pub thread_id: String,
    /// Its place in the listing (last activity, then id): passed back as
    /// `after`, the listing goes on past it.
    pub position: String,
}

/// One page of a listing. `next_cursor` is set only when more items follow.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// A thread as read for a turn: its state, version, how many messages it
/// has, the most recent of them in chronological order, and the turn
/// lease its item carried.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRecord {
    pub thread: Thread,
    pub version: u64,
    pub message_count: u64,
    pub recent_messages: Vec<TutorMessage>,
    /// The lease a turn holds on the thread, as read (lapsed or not);
    /// always `None` on a store without [`ThreadLeases`](super::ThreadLeases).
    pub lease: Option<ThreadLease>,
}

impl ThreadRecord {
    /// Saves `thread` over this record and appends `messages` after the
    /// ones it had, conditioned on nothing having changed since the read —
    /// the lease included, which the write carries over.
    pub fn update(&self, mut thread: Thread, messages: Vec<TutorMessage>) -> ThreadChange {
        thread.note_messages(&messages);
        ThreadChange {
            thread,
            expected: WriteCondition::Version(self.version),
            messages_before: self.message_count,
            append: messages,
            lease_read: self.lease.clone(),
            lease_after: self.lease.clone(),
        }
    }
}

/// A turn's hold on its thread, stored on the thread's item: the token of
/// the turn that took it and when it lapses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadLease {
    pub token: String,
    pub until: DateTime<Utc>,
}

impl ThreadLease {
    /// Whether another turn may take the thread over at `now`.
    pub fn lapsed(&self, now: DateTime<Utc>) -> bool {
        self.until <= now
    }
}

/// What taking a thread's lease found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseTake {
    /// The lease is the caller's until it commits, releases or lapses.
    Taken,
    /// Another turn holds it until then.
    Held { until: DateTime<Utc> },
    /// No such thread, or not the caller's: nothing was written.
    NoThread,
}

/// A thread write: its new state plus messages appended in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadChange {
    pub(crate) thread: Thread,
    pub(crate) expected: WriteCondition,
    pub(crate) messages_before: u64,
    pub(crate) append: Vec<TutorMessage>,
    /// The lease the write is conditioned on finding (none: no lease).
    pub(crate) lease_read: Option<ThreadLease>,
    /// The lease the item keeps after the write.
    pub(crate) lease_after: Option<ThreadLease>,
}

impl ThreadChange {
    /// A new thread (it must not exist yet) with its first messages.
    pub fn create(mut thread: Thread, messages: Vec<TutorMessage>) -> Self {
        thread.note_messages(&messages);
        ThreadChange {
            thread,
            expected: WriteCondition::New,
            messages_before: 0,
            append: messages,
            lease_read: None,
            lease_after: None,
        }
    }

    /// The write of the turn holding the lease `token`: it releases the
    /// lease with its commit. A lease some other turn has taken since
    /// (after `token`'s lapsed) is carried over as any write does.
    #[must_use]
    pub fn releasing(mut self, token: &str) -> Self {
        if self.lease_after.as_ref().is_some_and(|l| l.token == token) {
            self.lease_after = None;
        }
        self
    }

    /// Sequence numbers of the appended messages, from 0 for a thread's first.
    pub(crate) fn appended(&self) -> impl Iterator<Item = (u64, &TutorMessage)> {
        (self.messages_before..).zip(&self.append)
    }

    pub(crate) fn message_count_after(&self) -> u64 {
        self.messages_before + self.append.len() as u64
    }
}

/// What the thread listing shows without loading each thread's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    pub thread_id: String,
    pub course_id: String,
    pub mode: crate::model::Mode,
    pub status: crate::model::ThreadStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<String>,
    /// What the conversation is about: the goal or the student's first
    /// message, else the kind of session.
    #[serde(default)]
    pub title: String,
    /// The latest message, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Set while the thread is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<DateTime<Utc>>,
    /// Set once the thread is completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
}

impl From<&Thread> for ThreadSummary {
    fn from(t: &Thread) -> Self {
        ThreadSummary {
            thread_id: t.thread_id.clone(),
            course_id: t.course_id.clone(),
            mode: t.mode,
            status: t.status,
            goal: t.goal.clone(),
            unit_id: t.unit_id.clone(),
            title: t
                .title
                .clone()
                .unwrap_or_else(|| untitled(t.mode).to_owned()),
            preview: t.preview.clone(),
            created_at: t.created_at,
            updated_at: t.updated_at,
            paused_at: t.paused_at,
            ended_at: t.ended_at,
        }
    }
}

/// The title of a thread with no goal and no student message yet.
fn untitled(mode: crate::model::Mode) -> &'static str {
    use crate::model::Mode;
    match mode {
        Mode::Guided => "Guided session",
        Mode::TeachMe => "Teach me",
        Mode::ClarifyDoubts => "Questions",
        Mode::Exam => "Practice exam",
        Mode::ProblemSet => "Problem set",
        Mode::Survey => "Survey",
    }
}

/// The structured record of one turn (the turn log): kept for a while
/// for debugging and the logs view, then expired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnLog {
    pub thread_id: String,
    pub turn_id: String,
    pub student_id: String,
    /// The turn's clock reading when it was planned (its time in the
    /// conversation).
    pub created_at: DateTime<Utc>,
    /// When the unit of work that holds this log was handed to the store:
    /// after the model call, so the gap from `created_at` is the turn's
    /// wall time (a commit retried after a conflict carries its own time).
    pub committed_at: DateTime<Utc>,
    /// The pipeline's chain: mapped units, policy, chosen action, timings.
    pub entry: serde_json::Value,
}

/// A built-in exam lockout: the question cannot be attempted before
/// `locked_until`. Used when no external exam API is configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamLockout {
    pub student_id: String,
    pub course_id: String,
    pub question_id: String,
    pub locked_until: DateTime<Utc>,
    pub reason: RevisitReason,
}

impl ExamLockout {
    /// Lockouts stay stored after they end (until their TTL removes them):
    /// whether one still applies is decided here, against the caller's clock.
    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        now < self.locked_until
    }
}

/// A student's saved profile (`PUT /me/profile`): what a new thread's
/// personalization defaults to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedProfile {
    pub student_id: String,
    pub profile: crate::model::StudentProfile,
    pub updated_at: DateTime<Utc>,
}

/// Checks an id the caller supplied: non-empty, bounded, no control characters.
pub(crate) fn check_id(what: &str, id: &str) -> Result<(), StoreError> {
    if id.is_empty() {
        return Err(StoreError::InvalidInput(format!("{what} is empty")));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(StoreError::InvalidInput(format!(
            "{what} is longer than {MAX_ID_BYTES} bytes"
        )));
    }
    if id.chars().any(char::is_control) {
        return Err(StoreError::InvalidInput(format!(
            "{what} contains a control character"
        )));
    }
    Ok(())
}

/// A timestamp as a fixed-width string whose text order is its time order.
pub(crate) fn time_key(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Checks an idle listing's request: a mode whose threads are indexed by
/// activity and a limit in range; the limit.
pub(crate) fn check_idle_listing(mode: Mode, limit: usize) -> Result<usize, StoreError> {
    if !mode.expires_when_idle() {
        return Err(StoreError::InvalidInput(format!(
            "{} threads never expire, so none are listed as idle",
            mode.as_str()
        )));
    }
    check_limit(limit, "idle listing limit")
}

/// A thread's sort key in its student's list: most recent update, then id.
pub(crate) fn list_key(thread: &Thread) -> String {
    format!("{}#{}", time_key(thread.updated_at), thread.thread_id)
}

/// A turn log's sort key within its thread: creation time, then turn id.
pub(crate) fn turn_log_key(log: &TurnLog) -> String {
    format!("{}#{}", time_key(log.created_at), log.turn_id)
}

pub(crate) fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// `t + d`, saturating instead of overflowing on absurd durations.
pub(crate) fn plus(t: DateTime<Utc>, d: chrono::Duration) -> DateTime<Utc> {
    t.checked_add_signed(d)
        .unwrap_or(if d < chrono::Duration::zero() {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
}
