//! Who decides exam lockouts (the built-in store, or an external exam API
//! that is then authoritative), and a request's one read of a student's
//! lockouts in a course.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::Service;
use super::error::ServiceError;
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::snapshot_lite::revisit_question_ids;
use crate::integrations::exam_api::{ExamApi, ExamApiError};
use crate::model::StudentSnapshot;
use crate::store::{ExamLockout, LockoutStore, StoreError, Versioned};

/// Where exam lockouts and verdicts come from.
pub enum ExamGateway {
    /// Lockouts kept in the state store; verdicts from the course's bank.
    BuiltIn,
    /// An external exam service, then authoritative.
    External(ExamApi),
}

impl ExamGateway {
    /// Statuses of `question_ids` for the student, for deciding what to
    /// offer: when the external API is down the questions count as not
    /// available, so turns carry on without exam blocks.
    pub async fn statuses(
        &self,
        store: &dyn LockoutStore,
        snapshot: &StudentSnapshot,
        question_ids: &[String],
        now: DateTime<Utc>,
    ) -> Result<BTreeMap<String, LockoutStatus>, ServiceError> {
        match self.lookup(store, snapshot, question_ids, now).await {
            Err(ServiceError::Unavailable { detail, .. }) => {
                tracing::warn!(detail = %detail, "exam API unavailable; exam blocks are off for this request");
                Ok(question_ids
                    .iter()
                    .map(|q| (q.clone(), LockoutStatus::Passed))
                    .collect())
            }
            other => other,
        }
    }

    /// Statuses of the questions `snapshot` waits to revisit, which its
    /// snapshot lite shows.
    pub async fn revisit_statuses(
        &self,
        store: &dyn LockoutStore,
        snapshot: &StudentSnapshot,
        now: DateTime<Utc>,
    ) -> Result<BTreeMap<String, LockoutStatus>, ServiceError> {
        self.statuses(store, snapshot, &revisit_question_ids(snapshot), now)
            .await
    }

    /// Statuses of `question_ids` as the authority reports them; an
    /// unreachable external API is an error. With the built-in store, a
    /// question touched and not waiting for a revisit has been passed.
    pub async fn lookup(
        &self,
        store: &dyn LockoutStore,
        snapshot: &StudentSnapshot,
        question_ids: &[String],
        now: DateTime<Utc>,
    ) -> Result<BTreeMap<String, LockoutStatus>, ServiceError> {
        let mut statuses = BTreeMap::new();
        if question_ids.is_empty() {
            return Ok(statuses);
        }
        match self {
            ExamGateway::BuiltIn => {
                let locks = store
                    .list_lockouts(&snapshot.student_id, &snapshot.course_id)
                    .await?;
                for q in question_ids {
                    let passed = snapshot.exam_touched.get(q).copied().unwrap_or(false)
                        && !snapshot.revisit_queue.contains_key(q);
                    let status = match locks.get(q) {
                        Some(l) if l.value.is_active(now) => LockoutStatus::Locked {
                            until: l.value.locked_until,
                        },
                        _ if passed => LockoutStatus::Passed,
                        _ => LockoutStatus::Available,
                    };
                    statuses.insert(q.clone(), status);
                }
            }
            ExamGateway::External(api) => {
                statuses = api
                    .statuses(&snapshot.student_id, &snapshot.course_id, question_ids, now)
                    .await
                    .map_err(|e| exam_api_down("status", &e))?;
            }
        }
        Ok(statuses)
    }
}

/// A student's lockouts in one course as one attempt of a request read
/// them, alongside the snapshot: the exam gateway's look-ups in that
/// attempt are answered from it. Empty, and not read, when an external
/// exam API decides lockouts.
#[derive(Debug, Clone)]
pub(crate) struct LockoutsRead {
    student_id: String,
    course_id: String,
    lockouts: BTreeMap<String, Versioned<ExamLockout>>,
}

impl LockoutsRead {
    /// The stored lockout of `question_id`, active or not.
    pub(super) fn get(&self, question_id: &str) -> Option<&Versioned<ExamLockout>> {
        self.lockouts.get(question_id)
    }
}

#[async_trait::async_trait]
impl LockoutStore for LockoutsRead {
    async fn list_lockouts(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<BTreeMap<String, Versioned<ExamLockout>>, StoreError> {
        if (student_id, course_id) != (self.student_id.as_str(), self.course_id.as_str()) {
            return Err(StoreError::InvalidInput(format!(
                "the lockouts of `{student_id}` in `{course_id}` were not read"
            )));
        }
        Ok(self.lockouts.clone())
    }
}

impl Service {
    /// The student's lockouts in `course_id`: one request, which needs no
    /// snapshot, so it runs alongside the snapshot's read (with an
    /// external exam API, nothing is read).
    pub(crate) async fn read_lockouts(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<LockoutsRead, ServiceError> {
        let lockouts = match self.exams {
            ExamGateway::BuiltIn => self.store.list_lockouts(student_id, course_id).await?,
            ExamGateway::External(_) => BTreeMap::new(),
        };
        Ok(LockoutsRead {
            student_id: student_id.to_owned(),
            course_id: course_id.to_owned(),
            lockouts,
        })
    }
}

pub(super) fn exam_api_down(call: &str, error: &ExamApiError) -> ServiceError {
    tracing::warn!(call, error = %error, "exam API call failed");
    ServiceError::unavailable(
        "the exam service is unavailable; try again shortly",
        Some(5),
    )
}
