//! One turn at a time per thread. A turn holds a short lease on its thread
//! from before it reads the thread until it has committed, so a second turn
//! on the same thread waits (with jittered backoff) instead of planning on
//! state about to change and spending a tutor call whose reply cannot
//! commit. A turn that has waited too long is refused with 409 and
//! `Retry-After` before any call is made.
//!
//! On DynamoDB the lease lives on the thread's own item (a token and an
//! expiry), so it holds across Lambda instances and lapses by itself if its
//! holder dies. Taking it is one conditional update, which also checks the
//! thread is the caller's: a turn on a thread that does not exist or is
//! someone else's takes nothing and its read answers 404. Taking it leaves
//! the thread's version alone; instead every thread write is conditioned on
//! the lease it read and carries it over, so a drill grade, an exam action
//! or the idle sweep that read before a turn took the lease conflicts and
//! reads again rather than wiping it out. The holder's own commit releases
//! it in the same transaction; a turn that fails before committing releases
//! it with a conditional update of its own. So a turn is the take, its
//! reads and its transaction, with no write after. (Bumping the version on
//! taking would have served as well against lost leases, but every turn
//! would then make the other writers of a thread it merely leased conflict
//! and re-read.)
//!
//! A webhook turn holds its session's lease, whichever of the session's
//! threads it goes to (only the integration's turns reach them), so that
//! looking the thread up — or creating it — is already under the lease:
//! there may be no thread item to hold yet, so that lease is a record of
//! its own in the student's partition (an idempotency record with its own
//! expiry), deleted after the turn.
//!
//! Turns on the same thread in one process (the local server) queue in
//! memory first, so they do not poll the store while they wait; on the
//! embedded SQLite store, which one local server uses, that queue is the
//! whole lease.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration as StdDuration, Instant};

use tokio::sync::OwnedMutexGuard;

use super::Service;
use super::error::ServiceError;
use super::idempotency::Operation;
use crate::model::Principal;
use crate::store::{Begin, IdempotencyKey, IdempotencyLock, LeaseTake, StoreError, payload_hash};

/// The scope of session lease records: a configured integration's id
/// cannot contain a colon, so no client key meets them.
const LEASE_SCOPE: &str = ":thread-lease";
const LEASE_HASH: &str = "thread-lease";

/// Longest a turn waits for the thread: beyond it a client is better told
/// to send again than kept waiting (API Gateway gives up at 29 s).
pub(crate) const LEASE_WAIT: StdDuration = StdDuration::from_secs(8);
/// First and longest pause between tries for a held lease.
const LEASE_BACKOFF_BASE: StdDuration = StdDuration::from_millis(50);
const LEASE_BACKOFF_CAP: StdDuration = StdDuration::from_millis(1000);

/// A held lease on a thread, and how long it took to get it.
pub(crate) struct ThreadLease {
    hold: Hold,
    _queue: OwnedMutexGuard<()>,
    pub waited: StdDuration,
}

/// What a turn holds besides its place in the in-memory queue.
enum Hold {
    /// Nothing in the store: the store is one process's, or there is no
    /// thread of the caller's to hold (the turn's read answers 404).
    Queue,
    /// The lease on the thread's item, released by the holder's commit.
    OnThread { thread_id: String, token: String },
    /// A session's lease record.
    Record(IdempotencyLock),
}

impl ThreadLease {
    /// The token the turn's commit releases the thread's lease with, when
    /// the lease is on the thread's item.
    pub(crate) fn release_token(&self) -> Option<&str> {
        match &self.hold {
            Hold::OnThread { token, .. } => Some(token),
            Hold::Queue | Hold::Record(_) => None,
        }
    }
}

/// One in-memory queue per thread with turns running or waiting here.
#[derive(Default)]
pub(crate) struct TurnQueues(Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>);

impl TurnQueues {
    fn queue(&self, thread_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut queues = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(queue) = queues.get(thread_id).and_then(Weak::upgrade) {
            return queue;
        }
        // Queues no turn holds any more are dropped as new ones come.
        queues.retain(|_, q| q.strong_count() > 0);
        let queue = Arc::new(tokio::sync::Mutex::new(()));
        queues.insert(thread_id.to_owned(), Arc::downgrade(&queue));
        queue
    }
}

impl Service {
    /// Takes the lease on `who`'s thread `thread_id`, waiting for a turn
    /// that holds it for up to [`LEASE_WAIT`].
    pub(crate) async fn lease_thread(
        &self,
        who: &Principal,
        thread_id: &str,
    ) -> Result<ThreadLease, ServiceError> {
        let hold_for = self.time_limit(Operation::Turn).await;
        // Random, as an idempotency lock's: the drawn ids stay the turn's.
        let token = uuid::Uuid::new_v4().to_string();
        self.wait_for_lease(thread_id, || async {
            let Some(leases) = self.store.thread_leases() else {
                return Ok(Some(Hold::Queue));
            };
            let now = self.clock.now();
            let lease = crate::store::ThreadLease {
                token: token.clone(),
                until: now
                    .checked_add_signed(hold_for)
                    .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC),
            };
            Ok(
                match leases
                    .take_thread_lease(thread_id, &who.student_id, &lease, now)
                    .await
                {
                    Ok(LeaseTake::Taken) => Some(Hold::OnThread {
                        thread_id: thread_id.to_owned(),
                        token: token.clone(),
                    }),
                    Ok(LeaseTake::Held { .. }) => None,
                    // Nothing to hold: the turn's read answers 404.
                    Ok(LeaseTake::NoThread) | Err(StoreError::InvalidInput(_)) => Some(Hold::Queue),
                    Err(e) => return Err(e.into()),
                },
            )
        })
        .await
    }

    /// Takes the lease on an integration's session `session` for `who`,
    /// waiting for a turn that holds it for up to [`LEASE_WAIT`].
    pub(crate) async fn lease_session(
        &self,
        who: &Principal,
        session: &str,
    ) -> Result<ThreadLease, ServiceError> {
        // Hashed: a lease key has a fixed length, whatever the session's id.
        let key = IdempotencyKey::for_integration(
            LEASE_SCOPE,
            &who.student_id,
            &payload_hash(session.as_bytes()),
        )?;
        let hold_for = self.time_limit(Operation::Turn).await;
        self.wait_for_lease(session, || async {
            if self.store.thread_leases().is_none() {
                return Ok(Some(Hold::Queue));
            }
            match self
                .store
                .begin_idempotency(&key, LEASE_HASH, self.clock.now(), hold_for)
                .await
            {
                Ok(Begin::Acquired(lock)) => Ok(Some(Hold::Record(lock))),
                // A lease is released, never completed.
                Ok(Begin::Replay(_)) => {
                    Err(ServiceError::internal("a session lease was completed"))
                }
                Err(StoreError::IdempotencyInProgress { .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })
        .await
    }

    /// Queues behind this process's turns on `queued_as`, then tries
    /// `take` (`None`: held by another turn) with jittered backoff until
    /// it holds or [`LEASE_WAIT`] has passed.
    async fn wait_for_lease<F, Fut>(
        &self,
        queued_as: &str,
        mut take: F,
    ) -> Result<ThreadLease, ServiceError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Option<Hold>, ServiceError>>,
    {
        let started = Instant::now();
        let queue = self.turn_queues.queue(queued_as);
        let Ok(queued) = tokio::time::timeout(LEASE_WAIT, queue.lock_owned()).await else {
            return Err(waited_too_long(queued_as, started));
        };
        let mut tries = 0u32;
        loop {
            if let Some(hold) = take().await? {
                return Ok(ThreadLease {
                    hold,
                    _queue: queued,
                    waited: started.elapsed(),
                });
            }
            let pause = backoff(
                tries,
                self.ids.seed(),
                LEASE_BACKOFF_BASE,
                LEASE_BACKOFF_CAP,
            );
            if started.elapsed() + pause > LEASE_WAIT {
                return Err(waited_too_long(queued_as, started));
            }
            tokio::time::sleep(pause).await;
            tries += 1;
        }
    }

    /// Lets the next turn on the thread go. `committed`: the turn's commit
    /// went through, and with it released a lease on the thread's item.
    pub(crate) async fn release_thread(&self, lease: ThreadLease, committed: bool) {
        let released = match &lease.hold {
            Hold::Queue => return,
            Hold::OnThread { .. } if committed => return,
            Hold::OnThread { thread_id, token } => match self.store.thread_leases() {
                Some(leases) => leases.release_thread_lease(thread_id, token).await,
                None => return,
            },
            Hold::Record(lock) => self.store.release_idempotency(lock).await,
        };
        if let Err(e) = released {
            tracing::warn!(error = %e, "could not release a thread lease; it lapses by itself");
        }
    }
}

fn waited_too_long(thread_id: &str, started: Instant) -> ServiceError {
    tracing::warn!(
        thread_id,
        waited_ms = started.elapsed().as_millis() as u64,
        metric = "turn_lease_timeout",
        "a turn waited too long for its thread; refused before the tutor call"
    );
    ServiceError::ThreadBusy(
        "another message in this conversation is still being answered; send this one again in a moment"
            .to_owned(),
    )
}

/// "Full jitter" backoff: a pause drawn evenly from zero to `base × 2^try`
/// (at most `cap`), so waiting requests spread out instead of retrying in
/// step.
pub(crate) fn backoff(tries: u32, seed: u64, base: StdDuration, cap: StdDuration) -> StdDuration {
    let ceiling = base
        .saturating_mul(1u32 << tries.min(16))
        .min(cap)
        .as_micros()
        .max(1) as u64;
    StdDuration::from_micros(seed % (ceiling + 1))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A pause never exceeds its ceiling, which doubles up to the cap.
        #[test]
        fn backoff_stays_under_its_ceiling(tries in 0u32..40, seed in any::<u64>()) {
            let base = StdDuration::from_millis(20);
            let cap = StdDuration::from_millis(400);
            let pause = backoff(tries, seed, base, cap);
            let ceiling = base.saturating_mul(1u32 << tries.min(16)).min(cap);
            prop_assert!(pause <= ceiling);
        }
    }

    #[test]
    fn pauses_spread_out() {
        let base = StdDuration::from_millis(20);
        let cap = StdDuration::from_millis(400);
        let pauses: std::collections::BTreeSet<_> = (0..50u64)
            .map(|s| backoff(3, s * 7919, base, cap))
            .collect();
        assert!(pauses.len() > 40, "{pauses:?}");
    }
}
