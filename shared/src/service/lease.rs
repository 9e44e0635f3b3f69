//! One turn at a time per thread. A turn holds a short lease on its thread
//! from before it reads the thread until it has committed, so a second turn
//! on the same thread waits (with jittered backoff) instead of planning on
//! state about to change and spending a tutor call whose reply cannot
//! commit. A turn that has waited too long is refused with 409 and
//! `Retry-After` before any call is made. A webhook turn holds its
//! session's lease, whichever of the session's threads it goes to (only
//! the integration's turns reach them), so that looking the thread up is
//! already under the lease.
//!
//! The lease is an idempotency record in the student's partition (a
//! conditional put with its own expiry), so it holds across Lambda
//! instances and lapses by itself if its holder dies. Turns on the same
//! thread in one process (the local server) queue in memory first, so
//! they do not poll the store while they wait; on the embedded SQLite
//! store, which one local server uses, that queue is the whole lease.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration as StdDuration, Instant};

use tokio::sync::OwnedMutexGuard;

use super::Service;
use super::error::ServiceError;
use super::idempotency::Operation;
use crate::config::StoreBackend;
use crate::model::Principal;
use crate::store::{Begin, IdempotencyKey, IdempotencyLock, StoreError, payload_hash};

/// The scope of lease records: a configured integration's id cannot
/// contain a colon, so no client key meets them.
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
    lock: Option<IdempotencyLock>,
    _queue: OwnedMutexGuard<()>,
    pub waited: StdDuration,
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
    /// Takes the lease on `thread_id` for `who`, waiting for a turn that
    /// holds it for up to [`LEASE_WAIT`].
    pub(crate) async fn lease_thread(
        &self,
        who: &Principal,
        thread_id: &str,
    ) -> Result<ThreadLease, ServiceError> {
        // Hashed: a lease key has a fixed length, whatever the path said.
        let key = IdempotencyKey::for_integration(
            LEASE_SCOPE,
            &who.student_id,
            &payload_hash(thread_id.as_bytes()),
        )?;
        let hold = self.time_limit(Operation::Turn).await;
        let started = Instant::now();
        let queue = self.turn_queues.queue(thread_id);
        let Ok(queued) = tokio::time::timeout(LEASE_WAIT, queue.lock_owned()).await else {
            return Err(waited_too_long(thread_id, started));
        };
        if self.config.store.backend == StoreBackend::Sqlite {
            return Ok(ThreadLease {
                lock: None,
                _queue: queued,
                waited: started.elapsed(),
            });
        }
        let mut tries = 0u32;
        loop {
            match self
                .store
                .begin_idempotency(&key, LEASE_HASH, self.clock.now(), hold)
                .await
            {
                Ok(Begin::Acquired(lock)) => {
                    return Ok(ThreadLease {
                        lock: Some(lock),
                        _queue: queued,
                        waited: started.elapsed(),
                    });
                }
                // A lease is released, never completed.
                Ok(Begin::Replay(_)) => {
                    return Err(ServiceError::internal("a thread lease was completed"));
                }
                Err(StoreError::IdempotencyInProgress { .. }) => {}
                Err(e) => return Err(e.into()),
            }
            let pause = backoff(
                tries,
                self.ids.seed(),
                LEASE_BACKOFF_BASE,
                LEASE_BACKOFF_CAP,
            );
            if started.elapsed() + pause > LEASE_WAIT {
                return Err(waited_too_long(thread_id, started));
            }
            tokio::time::sleep(pause).await;
            tries += 1;
        }
    }

    /// Lets the next turn on the thread go.
    pub(crate) async fn release_thread(&self, lease: ThreadLease) {
        let Some(lock) = &lease.lock else {
            return;
        };
        if let Err(e) = self.store.release_idempotency(lock).await {
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
