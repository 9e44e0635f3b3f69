//! Prerequisite gating over the course DAG (seed 004 `isBlocked` and the
//! policy's prerequisite blocker).

use crate::content::Course;
use crate::content::workflow::BlockerChoice;
use crate::model::{MasteryTier, StudentSnapshot};

/// Whether `unit_id` is a unit of the course's graph.
pub fn is_course_unit(course: &Course, unit_id: &str) -> bool {
    course.requires.contains_key(unit_id)
}

/// Direct prerequisites of `unit_id` the student does not hold at
/// `min_tier` yet, in the order the unit lists them. A reference to a unit
/// outside the graph is skipped: nothing could be taught there.
pub fn missing_prereqs<'c>(
    course: &'c Course,
    snapshot: &StudentSnapshot,
    unit_id: &str,
    min_tier: MasteryTier,
) -> impl Iterator<Item = &'c str> {
    course
        .prereqs(unit_id)
        .iter()
        .map(String::as_str)
        .filter(move |p| is_course_unit(course, p) && snapshot.tier_of(p) < min_tier)
}

/// The chain of missing prerequisites from `target` down to a unit the
/// student can start now: the first element is a missing direct prerequisite
/// of `target`, each next one a missing prerequisite of the previous, and the
/// last has every prerequisite held. Empty when `target` is not blocked.
///
/// At each step `choice` picks among several missing prerequisites: the
/// first one listed (seed 004 v1), or the one `priority` scores highest
/// (ties go to the one listed first). Following the chain, rather than
/// stopping at the first hop as the seed does, is what guarantees the unit
/// tutored next is never itself blocked. A cycle (only possible in a course
/// that skipped validation) ends the chain where it would repeat.
pub fn blocker_chain(
    course: &Course,
    snapshot: &StudentSnapshot,
    target: &str,
    min_tier: MasteryTier,
    choice: BlockerChoice,
    priority: &mut dyn FnMut(&str) -> f64,
) -> Vec<String> {
    let mut chain: Vec<String> = Vec::new();
    let mut current = target;
    loop {
        let mut missing = missing_prereqs(course, snapshot, current, min_tier);
        let pick = match choice {
            BlockerChoice::FirstMissing => missing.next(),
            BlockerChoice::HighestPriority => {
                let mut best: Option<(&str, f64)> = None;
                for unit in missing {
                    let score = priority(unit);
                    if best.is_none_or(|(_, top)| score > top) {
                        best = Some((unit, score));
                    }
                }
                best.map(|(unit, _)| unit)
            }
        };
        let Some(next) = pick else {
            return chain;
        };
        if next == target || chain.iter().any(|u| u == next) {
            return chain;
        }
        chain.push(next.to_owned());
        current = next;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::UnitProgress;

    /// a ← b ← d, a ← c ← d (d requires b then c); e requires d.
    fn diamond() -> Course {
        let edges: &[(&str, &[&str])] = &[
            ("a", &[]),
            ("b", &["a"]),
            ("c", &["a"]),
            ("d", &["b", "c"]),
            ("e", &["d"]),
        ];
        Course {
            id: "c".into(),
            title: "c".into(),
            description: String::new(),
            audience: String::new(),
            workflow: "default".into(),
            entry_unit: "a".into(),
            order: edges.iter().map(|(u, _)| (*u).to_owned()).collect(),
            units: BTreeMap::new(),
            requires: edges
                .iter()
                .map(|(u, r)| ((*u).to_owned(), r.iter().map(|p| (*p).to_owned()).collect()))
                .collect(),
            problem_sets: Vec::new(),
        }
    }

    fn holding(units: &[(&str, MasteryTier)]) -> StudentSnapshot {
        let mut s = StudentSnapshot::new("s", "c", "a");
        for (u, tier) in units {
            s.unit_progress.insert(
                (*u).to_owned(),
                UnitProgress {
                    mastery_tier: *tier,
                    ..UnitProgress::default()
                },
            );
        }
        s
    }

    fn no_scores(_: &str) -> f64 {
        0.0
    }

    #[test]
    fn the_chain_is_followed_down_to_a_unit_that_can_start() {
        let course = diamond();
        let s = holding(&[]);
        let chain = blocker_chain(
            &course,
            &s,
            "e",
            MasteryTier::Bronze,
            BlockerChoice::FirstMissing,
            &mut no_scores,
        );
        assert_eq!(chain, vec!["d", "b", "a"]);
    }

    #[test]
    fn first_missing_follows_the_listed_order() {
        let course = diamond();
        let s = holding(&[("a", MasteryTier::Gold)]);
        let chain = blocker_chain(
            &course,
            &s,
            "d",
            MasteryTier::Bronze,
            BlockerChoice::FirstMissing,
            &mut no_scores,
        );
        assert_eq!(chain, vec!["b"]);
    }

    #[test]
    fn highest_priority_picks_the_best_scored_prerequisite() {
        let course = diamond();
        let s = holding(&[("a", MasteryTier::Gold)]);
        let mut scores = |u: &str| if u == "c" { 0.9 } else { 0.1 };
        let chain = blocker_chain(
            &course,
            &s,
            "d",
            MasteryTier::Bronze,
            BlockerChoice::HighestPriority,
            &mut scores,
        );
        assert_eq!(chain, vec!["c"]);
    }

    #[test]
    fn held_prerequisites_do_not_block_and_the_minimum_tier_is_respected() {
        let course = diamond();
        let s = holding(&[("a", MasteryTier::Bronze), ("b", MasteryTier::Bronze)]);
        assert_eq!(
            missing_prereqs(&course, &s, "d", MasteryTier::Bronze).collect::<Vec<_>>(),
            vec!["c"]
        );
        assert_eq!(
            missing_prereqs(&course, &s, "d", MasteryTier::Silver).collect::<Vec<_>>(),
            vec!["b", "c"]
        );
        assert_eq!(
            missing_prereqs(&course, &s, "d", MasteryTier::None).count(),
            0
        );
    }

    #[test]
    fn a_cycle_ends_the_chain_instead_of_looping() {
        let mut course = diamond();
        course.requires.insert("a".into(), vec!["e".into()]);
        let s = holding(&[]);
        let chain = blocker_chain(
            &course,
            &s,
            "e",
            MasteryTier::Bronze,
            BlockerChoice::FirstMissing,
            &mut no_scores,
        );
        assert_eq!(chain, vec!["d", "b", "a"]);
    }
}
