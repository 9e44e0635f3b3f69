//! Candidate units and scoped units.
//!
//! Candidates are the broad set that might matter this turn (they are what
//! gets scored); scoped units are the small, ordered list the LLM may
//! reference or target. Both take mapped units already restricted to the
//! course and sorted best first, and in-progress units restricted to the course.

use crate::content::Course;
use crate::content::workflow::{CandidateCaps, ScopedCaps};
use crate::engine::mastery::prereq::is_course_unit;
use crate::model::MappedUnit;

/// The candidate units: the top mapped units, the focus, the
/// first units in progress, then the direct prerequisites of all of them, in
/// that order without repeats.
pub fn candidate_units(
    course: &Course,
    mapped: &[MappedUnit],
    focus: &str,
    in_progress: &[&str],
    caps: &CandidateCaps,
) -> Vec<String> {
    let mut units: Vec<String> = Vec::new();
    mapped
        .iter()
        .take(caps.top_mapped)
        .for_each(|m| push_unique(&mut units, &m.unit_id));
    push_unique(&mut units, focus);
    in_progress
        .iter()
        .take(caps.in_progress)
        .for_each(|u| push_unique(&mut units, u));
    for i in 0..units.len() {
        let prereqs = course.prereqs(&units[i]);
        for p in prereqs {
            if is_course_unit(course, p) {
                push_unique(&mut units, p);
            }
        }
    }
    units
}

/// What the scoped list is built from.
#[derive(Debug, Clone, Copy)]
pub struct ScopeInput<'a> {
    pub focus: &'a str,
    pub target: &'a str,
    pub blocker: Option<&'a str>,
    /// Course units only, best first.
    pub mapped: &'a [MappedUnit],
    /// Course units only, most recent first.
    pub in_progress: &'a [&'a str],
}

/// The scoped units. The scope holds the focus, the target,
/// the blocker and its prerequisites, the top mapped units, the target's
/// prerequisites and the first units in progress; it is ordered focus,
/// blocker, target, top mapped, target's prerequisites, units in progress,
/// then the rest (the blocker's prerequisites), and cut at `max_units`. The
/// cap is never below 2, so the focus and the target always stay in scope.
pub fn scoped_units(course: &Course, input: &ScopeInput<'_>, caps: &ScopedCaps) -> Vec<String> {
    let top_mapped: Vec<&str> = input
        .mapped
        .iter()
        .take(caps.top_mapped)
        .map(|m| m.unit_id.as_str())
        .collect();
    let target_prereqs: Vec<&str> = course_prereqs(course, input.target).collect();
    let in_progress: Vec<&str> = input
        .in_progress
        .iter()
        .take(caps.in_progress)
        .copied()
        .collect();
    let blocker_prereqs: Vec<&str> = input
        .blocker
        .map(|b| course_prereqs(course, b).collect())
        .unwrap_or_default();

    let mut ordered: Vec<String> = Vec::new();
    push_unique(&mut ordered, input.focus);
    if let Some(blocker) = input.blocker {
        push_unique(&mut ordered, blocker);
    }
    push_unique(&mut ordered, input.target);
    for unit in top_mapped
        .iter()
        .chain(&target_prereqs)
        .chain(&in_progress)
        .chain(&blocker_prereqs)
    {
        push_unique(&mut ordered, unit);
    }
    ordered.truncate(caps.max_units.max(2));
    ordered
}

fn course_prereqs<'c>(course: &'c Course, unit: &str) -> impl Iterator<Item = &'c str> {
    course
        .prereqs(unit)
        .iter()
        .map(String::as_str)
        .filter(|p| is_course_unit(course, p))
}

fn push_unique(units: &mut Vec<String>, unit: &str) {
    if !units.iter().any(|u| u == unit) {
        units.push(unit.to_owned());
    }
}
