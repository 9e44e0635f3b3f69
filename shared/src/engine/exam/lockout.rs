//! Exam lockouts and exam availability: a failed exam question locks for a
//! while, and the policy offers an exam only when one can be tried now.
//!
//! Lockouts belong to the exam system (an external exam API, or the built-in
//! lockout table): the engine only reads them, through [`LockoutSource`],
//! for the few question ids it asks about. The pipeline prefetches those
//! statuses before calling the engine, so the trait is synchronous.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::ExamAvailability;

/// Whether one exam question can be attempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LockoutStatus {
    Available,
    /// Attemptable again from `until` (after a failure or a support view).
    Locked {
        until: DateTime<Utc>,
    },
    /// Already passed: not offered again.
    Passed,
}

impl LockoutStatus {
    /// The status as of `now`: a lock that has run out is available again, so
    /// a status fetched a little earlier never keeps a question locked too long.
    pub fn at(self, now: DateTime<Utc>) -> LockoutStatus {
        match self {
            LockoutStatus::Locked { until } if until <= now => LockoutStatus::Available,
            status => status,
        }
    }
}

/// Lockout statuses by question id, as the exam system reports them.
pub trait LockoutSource {
    fn status(&self, question_id: &str) -> LockoutStatus;
}

/// A source with no lockouts at all: every question is available.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLockouts;

impl LockoutSource for NoLockouts {
    fn status(&self, _question_id: &str) -> LockoutStatus {
        LockoutStatus::Available
    }
}

/// A lockout table: it lists the questions that have a status; any other
/// question is available.
impl LockoutSource for BTreeMap<String, LockoutStatus> {
    fn status(&self, question_id: &str) -> LockoutStatus {
        self.get(question_id)
            .copied()
            .unwrap_or(LockoutStatus::Available)
    }
}

/// A lockout table: it lists the questions that have a status; any other
/// question is available.
impl<S: std::hash::BuildHasher> LockoutSource for HashMap<String, LockoutStatus, S> {
    fn status(&self, question_id: &str) -> LockoutStatus {
        self.get(question_id)
            .copied()
            .unwrap_or(LockoutStatus::Available)
    }
}

impl<T: LockoutSource + ?Sized> LockoutSource for &T {
    fn status(&self, question_id: &str) -> LockoutStatus {
        (**self).status(question_id)
    }
}

/// Exam availability for one unit and tier, with what it was decided from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamReport {
    pub availability: ExamAvailability,
    /// Every candidate question of the unit at the tier, in bank order.
    pub candidate_question_ids: Vec<String>,
    /// The candidates attemptable now, in bank order: the only questions an
    /// EXAM_BLOCK may show (CONTEXT.examCandidates).
    pub available_question_ids: Vec<String>,
    /// When the first locked candidate opens again (only when none is available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_eligible_at: Option<DateTime<Utc>>,
}

/// Exam availability at a tier: `available` when some candidate
/// can be attempted now, else `locked` (with the earliest reopening) when some
/// is locked, else `none` (no candidates, or all passed).
pub fn exam_availability<'q>(
    candidates: impl IntoIterator<Item = &'q str>,
    lockouts: &dyn LockoutSource,
    now: DateTime<Utc>,
) -> ExamReport {
    let mut report = ExamReport::default();
    let mut earliest: Option<DateTime<Utc>> = None;
    for id in candidates {
        report.candidate_question_ids.push(id.to_owned());
        match lockouts.status(id).at(now) {
            LockoutStatus::Available => report.available_question_ids.push(id.to_owned()),
            LockoutStatus::Locked { until } => {
                earliest = Some(earliest.map_or(until, |e| e.min(until)));
            }
            LockoutStatus::Passed => {}
        }
    }
    if !report.available_question_ids.is_empty() {
        report.availability = ExamAvailability::Available;
    } else if earliest.is_some() {
        report.availability = ExamAvailability::Locked;
        report.next_eligible_at = earliest;
    }
    report
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
    }

    fn table(entries: &[(&str, LockoutStatus)]) -> BTreeMap<String, LockoutStatus> {
        entries.iter().map(|(q, s)| ((*q).to_owned(), *s)).collect()
    }

    #[test]
    fn no_candidates_means_none() {
        let report = exam_availability([], &NoLockouts, now());
        assert_eq!(report.availability, ExamAvailability::None);
        assert_eq!(report.next_eligible_at, None);
    }

    #[test]
    fn one_available_candidate_makes_the_tier_available() {
        let later = now() + Duration::hours(5);
        let lockouts = table(&[("q1", LockoutStatus::Locked { until: later })]);
        let report = exam_availability(["q1", "q2"], &lockouts, now());
        assert_eq!(report.availability, ExamAvailability::Available);
        assert_eq!(report.available_question_ids, vec!["q2"]);
        assert_eq!(report.candidate_question_ids, vec!["q1", "q2"]);
        assert_eq!(report.next_eligible_at, None);
    }

    #[test]
    fn all_locked_reports_the_earliest_reopening() {
        let soon = now() + Duration::hours(2);
        let later = now() + Duration::hours(20);
        let lockouts = table(&[
            ("q1", LockoutStatus::Locked { until: later }),
            ("q2", LockoutStatus::Locked { until: soon }),
            ("q3", LockoutStatus::Passed),
        ]);
        let report = exam_availability(["q1", "q2", "q3"], &lockouts, now());
        assert_eq!(report.availability, ExamAvailability::Locked);
        assert_eq!(report.next_eligible_at, Some(soon));
        assert!(report.available_question_ids.is_empty());
    }

    #[test]
    fn all_passed_means_none() {
        let lockouts = table(&[("q1", LockoutStatus::Passed)]);
        let report = exam_availability(["q1"], &lockouts, now());
        assert_eq!(report.availability, ExamAvailability::None);
    }

    #[test]
    fn an_expired_lock_is_available() {
        let lockouts = table(&[("q1", LockoutStatus::Locked { until: now() })]);
        let report = exam_availability(["q1"], &lockouts, now());
        assert_eq!(report.availability, ExamAvailability::Available);
    }

    #[test]
    fn statuses_serialize_with_a_status_tag() {
        let json = serde_json::to_value(LockoutStatus::Locked { until: now() }).unwrap();
        assert_eq!(json["status"], "locked");
        assert_eq!(json["until"], "2025-03-01T12:00:00Z");
    }
}
