//! SnapshotLite: the small summary apps show beside the
//! chat, so they need no DAG logic. Built from the snapshot alone (plus the
//! revisit questions' lockout statuses), so every endpoint — turn, drill
//! grade, exam submit, support viewed — shows the same thing for the same state.
//!
//! - `focus` is the snapshot's focus: the unit the student is working toward
//!   (see [`crate::engine::mastery::evidence::apply_turn`]), with the policy's
//!   stand-in when it is not a unit of the course.
//! - `prereqNudge` is what must be learned first: the end of the focus's
//!   chain of blocking prerequisites (the unit the tutor is teaching in its
//!   place), chosen by the workflow's `policy.blocker` rule; for
//!   `highest_priority` the scores are computed without this turn's mapping,
//!   which the summary does not have.
//! - `revisit` covers the revisit queue's questions of this course that are
//!   not passed: how many are locked now, when the first of them reopens, and
//!   the question to revisit next — the one queued earliest among those
//!   attemptable now, else the locked one that reopens first.
//! - `progress` counts the course's units at *exactly* each tier (the
//!   mastery distribution across the course), so bronze + silver + gold ≤
//!   total and the rest have no tier yet.

use chrono::{DateTime, Utc};

use crate::content::{Course, Workflow};
use crate::engine::exam::lockout::{LockoutSource, LockoutStatus};
use crate::engine::mastery::prereq::{Gate, is_course_unit};
use crate::engine::policy::{PolicyInput, StudentRequest, resolve_focus, score_unit};
use crate::model::{
    FocusSummary, MasteryTier, ProgressSummary, RevisitSummary, SnapshotLite, StudentSnapshot,
    UnitRef,
};

/// The revisit questions whose lockout statuses [`build_snapshot_lite`] reads.
pub fn revisit_question_ids(snapshot: &StudentSnapshot) -> Vec<String> {
    snapshot.revisit_queue.keys().cloned().collect()
}

/// Builds the summary. Never fails: with a course that has no units the
/// focus is the snapshot's own focus id, titled by its id.
pub fn build_snapshot_lite(
    snapshot: &StudentSnapshot,
    course: &Course,
    workflow: &Workflow,
    lockouts: &dyn LockoutSource,
    now: DateTime<Utc>,
) -> SnapshotLite {
    let focus = resolve_focus(snapshot, course).map_or(snapshot.focus_unit_id.as_str(), |f| f.0);
    SnapshotLite {
        focus: FocusSummary {
            unit_id: focus.to_owned(),
            title: title_of(course, focus),
            mastery_tier: snapshot.tier_of(focus),
        },
        prereq_nudge: prereq_nudge(snapshot, course, workflow, focus, now),
        revisit: revisit_summary(snapshot, course, lockouts, now),
        progress: progress_summary(snapshot, course),
    }
}

fn title_of(course: &Course, unit_id: &str) -> String {
    course
        .unit(unit_id)
        .map_or_else(|| unit_id.to_owned(), |u| u.title.clone())
}

fn prereq_nudge(
    snapshot: &StudentSnapshot,
    course: &Course,
    workflow: &Workflow,
    focus: &str,
    now: DateTime<Utc>,
) -> Option<UnitRef> {
    let settings = &workflow.policy;
    let input = PolicyInput {
        snapshot,
        course,
        workflow,
        mapped_units: &[],
        now,
        turn_id: "",
        request: StudentRequest::None,
    };
    let mut priority = |unit: &str| score_unit(&input, &[], focus, unit).score;
    let chain =
        Gate::new(course, workflow).blocker_chain(snapshot, focus, settings.blocker, &mut priority);
    chain.last().map(|unit| UnitRef {
        unit_id: unit.clone(),
        title: title_of(course, unit),
    })
}

fn revisit_summary(
    snapshot: &StudentSnapshot,
    course: &Course,
    lockouts: &dyn LockoutSource,
    now: DateTime<Utc>,
) -> RevisitSummary {
    let mut locked_count: u32 = 0;
    let mut first_reopening: Option<(DateTime<Utc>, &str)> = None;
    let mut first_available: Option<(Option<DateTime<Utc>>, &str)> = None;
    for (question_id, entry) in &snapshot.revisit_queue {
        if !is_course_unit(course, &entry.unit_id) {
            continue;
        }
        match lockouts.status(question_id).at(now) {
            LockoutStatus::Locked { until } => {
                locked_count = locked_count.saturating_add(1);
                let candidate = (until, question_id.as_str());
                if first_reopening.is_none_or(|best| candidate < best) {
                    first_reopening = Some(candidate);
                }
            }
            LockoutStatus::Available => {
                // Queued earliest first; an entry without a time sorts first (oldest data).
                let candidate = (entry.added_at, question_id.as_str());
                if first_available.is_none_or(|best| candidate < best) {
                    first_available = Some(candidate);
                }
            }
            LockoutStatus::Passed => {}
        }
    }
    RevisitSummary {
        locked_count,
        next_eligible_at: first_reopening.map(|(at, _)| at),
        next_question_id: first_available
            .map(|(_, q)| q)
            .or(first_reopening.map(|(_, q)| q))
            .map(str::to_owned),
    }
}

fn progress_summary(snapshot: &StudentSnapshot, course: &Course) -> ProgressSummary {
    let mut summary = ProgressSummary {
        bronze: 0,
        silver: 0,
        gold: 0,
        total: u32::try_from(course.requires.len()).unwrap_or(u32::MAX),
    };
    for (unit_id, progress) in &snapshot.unit_progress {
        if !is_course_unit(course, unit_id) {
            continue;
        }
        match progress.mastery_tier {
            MasteryTier::None => {}
            MasteryTier::Bronze => summary.bronze += 1,
            MasteryTier::Silver => summary.silver += 1,
            MasteryTier::Gold => summary.gold += 1,
        }
    }
    summary
}
