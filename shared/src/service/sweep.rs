//! The idle sweep: ends the sessions students left without a message past
//! their mode's time to live (a problem set after `session_ttl_minutes`),
//! on a schedule. Without it such a session ends only when it is next
//! opened, so its report and `session.completed` notification would wait
//! for a student who may never come back.

use serde::Serialize;

use super::{Service, ServiceError};
use crate::engine::modes;
use crate::model::{Mode, Principal};

/// Idle threads read per store listing.
const SWEEP_PAGE: usize = 100;

/// Threads one sweep looks at, so a run ends well inside a function's
/// timeout; the next run goes on where the index still lists threads.
const SWEEP_MAX_THREADS: usize = 1_000;

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    /// Idle threads read and checked against their course's time to live.
    pub checked: usize,
    /// Of those, the ones ended now (their report and notifications sent).
    pub expired: usize,
    /// Threads that could not be read or ended (logged); the next sweep
    /// tries them again.
    pub failed: usize,
    /// The sweep stopped at its per-run limit with more threads listed.
    pub more: bool,
}

impl Service {
    /// Ends every session idle past its time to live, oldest first, up to
    /// a thousand threads per run. Each thread is read afresh and ended
    /// exactly as opening it would end it; a student writing at the same
    /// moment wins (the version-conditioned write refuses the sweep's).
    /// Returns once the notifications it raised are sent or queued.
    pub async fn sweep_idle(&self) -> Result<SweepReport, ServiceError> {
        let mut report = SweepReport::default();
        let swept = self.sweep_into(&mut report).await;
        self.flush_notifications().await;
        tracing::info!(
            checked = report.checked,
            expired = report.expired,
            failed = report.failed,
            more = report.more,
            "idle sweep"
        );
        swept.map(|()| report)
    }

    async fn sweep_into(&self, report: &mut SweepReport) -> Result<(), ServiceError> {
        let bundle = self.bundle().await;
        let now = self.clock.now();
        for mode in Mode::ALL.into_iter().filter(|m| m.expires_when_idle()) {
            // The shortest time to live of any workflow lists every thread
            // that may have lapsed; each is then judged by its own course.
            let Some(shortest) = bundle
                .workflows
                .values()
                .filter_map(|w| modes::for_mode(mode).idle_limit(w))
                .min()
            else {
                continue;
            };
            let idle_before = now - shortest;
            let mut after: Option<String> = None;
            loop {
                let batch = self
                    .store
                    .list_idle_threads(mode, idle_before, after.as_deref(), SWEEP_PAGE)
                    .await?;
                for idle in &batch {
                    if report.checked == SWEEP_MAX_THREADS {
                        report.more = true;
                        return Ok(());
                    }
                    report.checked += 1;
                    match self.expire_listed(&idle.thread_id).await {
                        Ok(true) => report.expired += 1,
                        Ok(false) => {}
                        Err(e) => {
                            report.failed += 1;
                            tracing::warn!(thread_id = %idle.thread_id, error = ?e, "idle sweep could not end the thread");
                        }
                    }
                }
                match batch.last() {
                    Some(last) if batch.len() == SWEEP_PAGE => after = Some(last.position.clone()),
                    _ => break,
                }
            }
        }
        Ok(())
    }

    /// Ends a thread the idle listing named, if it is still idle past its
    /// time: the listing may lag behind the thread.
    async fn expire_listed(&self, thread_id: &str) -> Result<bool, ServiceError> {
        let Some(record) = self.store.get_thread(thread_id, 0).await? else {
            return Ok(false);
        };
        let owner = Principal {
            student_id: record.thread.student_id.clone(),
            staff: false,
        };
        self.expire_idle(&owner, &record).await
    }
}
