//! A set of changes committed atomically: either every change is written or
//! none is. Each change is conditioned on the version it was read at, so a
//! concurrent writer makes the whole commit fail with a `Conflict`.

use std::collections::HashSet;

use serde::Serialize;

use super::error::{ItemRef, StoreError};
use super::idempotency::{IdempotencyLock, StoredResponse};
use super::types::{
    ExamLockout, MAX_ITEM_BYTES, MAX_TRANSACTION_BYTES, MAX_TRANSACTION_ITEMS, SavedProfile,
    ThreadChange, TurnLog, WriteCondition, check_id,
};
use crate::model::StudentSnapshot;

/// One change of a unit of work.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Snapshot {
        snapshot: StudentSnapshot,
        expected: WriteCondition,
    },
    Thread(Box<ThreadChange>),
    CompleteIdempotency {
        lock: IdempotencyLock,
        response: StoredResponse,
    },
    /// Turn logs are new items: a turn is logged once.
    TurnLog(TurnLog),
    Lockout {
        lockout: ExamLockout,
        expected: WriteCondition,
    },
    Profile {
        profile: SavedProfile,
        expected: WriteCondition,
    },
}

/// Changes to commit together, built by the pipeline and handed to
/// [`Committer::commit`](super::Committer::commit).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitOfWork {
    changes: Vec<Change>,
}

impl UnitOfWork {
    pub fn new() -> Self {
        UnitOfWork::default()
    }

    pub fn put_snapshot(
        &mut self,
        snapshot: StudentSnapshot,
        expected: WriteCondition,
    ) -> &mut Self {
        self.changes.push(Change::Snapshot { snapshot, expected });
        self
    }

    /// A thread's new state and the messages appended to it; see
    /// [`ThreadChange::create`] and [`ThreadRecord::update`](super::ThreadRecord::update).
    pub fn put_thread(&mut self, change: ThreadChange) -> &mut Self {
        self.changes.push(Change::Thread(Box::new(change)));
        self
    }

    /// Stores the response of the request holding `lock`; fails with a
    /// conflict on the idempotency record if the lock was taken over.
    pub fn complete_idempotency(
        &mut self,
        lock: IdempotencyLock,
        response: StoredResponse,
    ) -> &mut Self {
        self.changes
            .push(Change::CompleteIdempotency { lock, response });
        self
    }

    pub fn log_turn(&mut self, log: TurnLog) -> &mut Self {
        self.changes.push(Change::TurnLog(log));
        self
    }

    pub fn put_lockout(&mut self, lockout: ExamLockout, expected: WriteCondition) -> &mut Self {
        self.changes.push(Change::Lockout { lockout, expected });
        self
    }

    pub fn put_profile(&mut self, profile: SavedProfile, expected: WriteCondition) -> &mut Self {
        self.changes.push(Change::Profile { profile, expected });
        self
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Stored items this unit writes (each appended message is one).
    pub fn item_count(&self) -> usize {
        self.changes
            .iter()
            .map(|c| match c {
                Change::Thread(t) => 1 + t.append.len(),
                _ => 1,
            })
            .sum()
    }

    /// Everything a store checks before writing, the same for every store:
    /// ids, limits, one change per item, messages belonging to their thread.
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        let count = self.item_count();
        if count > MAX_TRANSACTION_ITEMS {
            return Err(StoreError::InvalidInput(format!(
                "a unit of work may write at most {MAX_TRANSACTION_ITEMS} items, this one writes {count}"
            )));
        }
        let mut seen = HashSet::new();
        for change in &self.changes {
            let item = change.item();
            change.check_ids()?;
            if !seen.insert(item.clone()) {
                return Err(StoreError::InvalidInput(format!(
                    "{item} is changed twice in one unit of work"
                )));
            }
            if let Change::Thread(t) = change {
                for m in &t.append {
                    if m.thread_id != t.thread.thread_id {
                        return Err(StoreError::InvalidInput(format!(
                            "message `{}` belongs to thread `{}`, not `{}`",
                            m.id, m.thread_id, t.thread.thread_id
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Change {
    /// The main item this change writes (for a thread: its metadata).
    pub fn item(&self) -> ItemRef {
        match self {
            Change::Snapshot { snapshot, .. } => ItemRef::Snapshot {
                student_id: snapshot.student_id.clone(),
                course_id: snapshot.course_id.clone(),
            },
            Change::Thread(t) => ItemRef::Thread {
                thread_id: t.thread.thread_id.clone(),
            },
            Change::CompleteIdempotency { lock, .. } => lock.key.item_ref(),
            Change::TurnLog(log) => ItemRef::TurnLog {
                thread_id: log.thread_id.clone(),
                turn_id: log.turn_id.clone(),
            },
            Change::Lockout { lockout, .. } => ItemRef::Lockout {
                student_id: lockout.student_id.clone(),
                course_id: lockout.course_id.clone(),
                question_id: lockout.question_id.clone(),
            },
            Change::Profile { profile, .. } => ItemRef::Profile {
                student_id: profile.student_id.clone(),
            },
        }
    }

    fn check_ids(&self) -> Result<(), StoreError> {
        match self {
            Change::Snapshot { snapshot, .. } => {
                check_id("student id", &snapshot.student_id)?;
                check_id("course id", &snapshot.course_id)
            }
            Change::Thread(t) => {
                check_id("thread id", &t.thread.thread_id)?;
                check_id("student id", &t.thread.student_id)
            }
            Change::CompleteIdempotency { .. } => Ok(()),
            Change::TurnLog(log) => {
                check_id("thread id", &log.thread_id)?;
                check_id("turn id", &log.turn_id)
            }
            Change::Lockout { lockout, .. } => {
                check_id("student id", &lockout.student_id)?;
                check_id("course id", &lockout.course_id)?;
                check_id("question id", &lockout.question_id)
            }
            Change::Profile { profile, .. } => check_id("student id", &profile.student_id),
        }
    }
}

/// Encodes values as JSON while keeping each item and the whole unit within
/// DynamoDB's size limits, so both stores refuse the same oversized writes.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    total: usize,
}

impl Encoder {
    pub(crate) fn json<T: Serialize>(
        &mut self,
        value: &T,
        item: &ItemRef,
    ) -> Result<String, StoreError> {
        let text = serde_json::to_string(value).map_err(|e| StoreError::serialization(item, e))?;
        if text.len() > MAX_ITEM_BYTES {
            return Err(StoreError::InvalidInput(format!(
                "{item} is {} bytes, more than the {MAX_ITEM_BYTES} an item may hold",
                text.len()
            )));
        }
        self.total += text.len();
        if self.total > MAX_TRANSACTION_BYTES {
            return Err(StoreError::InvalidInput(format!(
                "the unit of work is larger than {MAX_TRANSACTION_BYTES} bytes"
            )));
        }
        Ok(text)
    }
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    text: &str,
    item: &ItemRef,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::serialization(item, e))
}
