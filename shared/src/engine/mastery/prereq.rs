//! Prerequisite gating over the course DAG: where a student stands on a
//! unit (held, learning, weak or unknown), which prerequisites block the
//! unit that needs them, and the chain followed down from a target to the
//! unit to teach first (the policy's blocker).
//!
//! A unit never worked on is *unknown*, which is not evidence of a gap.
//! Under `policy.blocker_evidence: weak_only` (the default) only a
//! prerequisite with evidence of weakness blocks, or one that leads down
//! to such a unit however deep; under `any_missing` (the strict rule) every
//! prerequisite below `prereq_min_tier` does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::content::workflow::{BlockerChoice, BlockerEvidence};
use crate::content::{Course, Workflow};
use crate::engine::mastery::bkt;
use crate::model::{RevisitReason, StudentSnapshot};

/// Whether `unit_id` is a unit of the course's graph.
pub fn is_course_unit(course: &Course, unit_id: &str) -> bool {
    course.requires.contains_key(unit_id)
}

/// Where a student stands on one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// At `prereq_min_tier` or above, or (with `placement.known_by_mastery`)
    /// a BKT probability at the unit's `mastered_at` from graded evidence.
    Held,
    /// Graded evidence that does not show weakness yet.
    Learning,
    /// Graded evidence of weakness: a BKT probability below
    /// `placement.weak_below`, stuck by the drill rule, or a failed exam
    /// question waiting to be revisited.
    Weak,
    /// Never graded.
    Unknown,
}

/// The gating rules of one course and workflow.
#[derive(Clone, Copy)]
pub struct Gate<'a> {
    course: &'a Course,
    workflow: &'a Workflow,
}

impl<'a> Gate<'a> {
    pub fn new(course: &'a Course, workflow: &'a Workflow) -> Self {
        Gate { course, workflow }
    }

    /// Where the student stands on `unit_id`.
    pub fn standing(&self, snapshot: &StudentSnapshot, unit_id: &str) -> Standing {
        let policy = &self.workflow.policy;
        if snapshot.tier_of(unit_id) >= policy.prereq_min_tier {
            return Standing::Held;
        }
        let progress = snapshot.unit_progress.get(unit_id);
        let probability = progress.and_then(|p| p.mastery_probability);
        let drill = progress.map(|p| p.drill).unwrap_or_default();
        let failed_exam = snapshot
            .revisit_queue
            .values()
            .any(|e| e.unit_id == unit_id && e.reason == Some(RevisitReason::Failed));
        if probability.is_none() && drill.attempts == 0 && !failed_exam {
            return Standing::Unknown;
        }
        let params = bkt::params_for(&self.workflow.mastery.bkt, self.course, unit_id);
        let p = probability.unwrap_or(params.prior);
        if policy.placement.known_by_mastery
            && probability.is_some()
            && bkt::is_mastered(p, &params)
        {
            return Standing::Held;
        }
        let stuck = drill.attempts >= policy.stuck.min_attempts
            && drill.streak_correct <= policy.stuck.max_streak;
        if p < policy.placement.weak_below || stuck || failed_exam {
            Standing::Weak
        } else {
            Standing::Learning
        }
    }

    /// Whether the student holds `unit_id` (it never blocks).
    pub fn is_held(&self, snapshot: &StudentSnapshot, unit_id: &str) -> bool {
        self.standing(snapshot, unit_id) == Standing::Held
    }

    /// Direct prerequisites of `unit_id` that block it, in the order the
    /// unit lists them. A reference to a unit outside the graph is skipped:
    /// nothing could be taught there.
    pub fn blocking_prereqs(&self, snapshot: &StudentSnapshot, unit_id: &str) -> Vec<&'a str> {
        let mut memo = BTreeMap::new();
        self.course
            .prereqs(unit_id)
            .iter()
            .map(String::as_str)
            .filter(|p| is_course_unit(self.course, p) && self.blocks(snapshot, p, &mut memo))
            .collect()
    }

    /// Whether `unit_id`, as a prerequisite, blocks what depends on it.
    /// `memo` holds verdicts already reached (`None` while a unit is being
    /// decided, so a cycle in an unvalidated course ends as "not blocking").
    fn blocks(
        &self,
        snapshot: &StudentSnapshot,
        unit_id: &'a str,
        memo: &mut BTreeMap<&'a str, Option<bool>>,
    ) -> bool {
        if let Some(known) = memo.get(unit_id) {
            return known.unwrap_or(false);
        }
        memo.insert(unit_id, None);
        let verdict = match self.standing(snapshot, unit_id) {
            Standing::Held => false,
            _ if self.workflow.policy.blocker_evidence == BlockerEvidence::AnyMissing => true,
            Standing::Weak => true,
            Standing::Learning | Standing::Unknown => self
                .course
                .prereqs(unit_id)
                .iter()
                .map(String::as_str)
                .filter(|p| is_course_unit(self.course, p))
                .any(|p| self.blocks(snapshot, p, memo)),
        };
        memo.insert(unit_id, Some(verdict));
        verdict
    }

    /// The chain of blocking prerequisites from `target` down to a unit the
    /// student can start now: the first element is a blocking direct
    /// prerequisite of `target`, each next one a blocking prerequisite of
    /// the previous, and the last has none. Empty when `target` is not
    /// blocked. Under `weak_only` the last unit is always a weak one; the
    /// units before it are on the way down to it.
    ///
    /// At each step `choice` picks among several: the first one listed
    /// (the simple rule), or the one `priority` scores highest (ties go to
    /// the one listed first). Following the chain to its end, rather than
    /// stopping at the first missing prerequisite, is what guarantees the
    /// unit tutored next is never itself blocked. A cycle (only possible in
    /// a course that skipped validation) ends the chain where it would repeat.
    pub fn blocker_chain(
        &self,
        snapshot: &StudentSnapshot,
        target: &str,
        choice: BlockerChoice,
        priority: &mut dyn FnMut(&str) -> f64,
    ) -> Vec<String> {
        let mut chain: Vec<String> = Vec::new();
        let mut current = target.to_owned();
        loop {
            let missing = self.blocking_prereqs(snapshot, &current);
            let pick = match choice {
                BlockerChoice::FirstMissing => missing.first().copied(),
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
            current = next.to_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{DrillCounters, MasteryTier, UnitProgress};

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

    fn workflow(policy: &str) -> Workflow {
        serde_yaml::from_str(&format!(
            "id: t\ntitle: t\ncategories: []\ndefault_category: general\n\
             prompts: {{tutor_system: s, tutor_policy: p, tutor_context: c, tutor_input: i, \
             drill_grading: d, exam_evaluation: e, planner: l, summary: m, safety: f}}\n\
             policy: {policy}\n"
        ))
        .unwrap()
    }

    fn any_missing_rule() -> Workflow {
        workflow("{blocker_evidence: any_missing}")
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

    /// Graded evidence on `unit`: a BKT probability and drill counters.
    fn graded(s: &mut StudentSnapshot, unit: &str, probability: f64, attempts: u32, streak: u32) {
        let p = s.unit_progress.entry(unit.to_owned()).or_default();
        p.mastery_probability = Some(probability);
        p.drill = DrillCounters {
            attempts,
            correct: streak,
            streak_correct: streak,
        };
    }

    fn no_scores(_: &str) -> f64 {
        0.0
    }

    fn chain(
        w: &Workflow,
        s: &StudentSnapshot,
        target: &str,
        choice: BlockerChoice,
    ) -> Vec<String> {
        let course = diamond();
        Gate::new(&course, w).blocker_chain(s, target, choice, &mut no_scores)
    }

    #[test]
    fn under_the_any_missing_rule_the_chain_is_followed_down_to_a_unit_that_can_start() {
        let s = holding(&[]);
        assert_eq!(
            chain(&any_missing_rule(), &s, "e", BlockerChoice::FirstMissing),
            vec!["d", "b", "a"]
        );
    }

    #[test]
    fn units_never_worked_on_do_not_block_under_weak_only() {
        let s = holding(&[]);
        let w = workflow("{}");
        assert!(chain(&w, &s, "e", BlockerChoice::FirstMissing).is_empty());
        let course = diamond();
        assert_eq!(Gate::new(&course, &w).standing(&s, "a"), Standing::Unknown);
    }

    #[test]
    fn a_weak_unit_deep_down_blocks_through_units_never_worked_on() {
        let mut s = holding(&[]);
        graded(&mut s, "a", 0.1, 2, 0);
        let w = workflow("{}");
        assert_eq!(
            chain(&w, &s, "e", BlockerChoice::FirstMissing),
            vec!["d", "b", "a"]
        );
        // A held unit on the way stops the search below it.
        let mut held = s.clone();
        held.unit_progress.get_mut("a").unwrap().mastery_tier = MasteryTier::Bronze;
        assert!(chain(&w, &held, "e", BlockerChoice::FirstMissing).is_empty());
    }

    #[test]
    fn standing_reads_bkt_and_drills() {
        let course = diamond();
        let w = workflow("{}");
        let gate = Gate::new(&course, &w);
        let mut s = holding(&[]);
        graded(&mut s, "a", 0.55, 1, 1);
        assert_eq!(gate.standing(&s, "a"), Standing::Learning);
        graded(&mut s, "b", 0.2, 1, 0);
        assert_eq!(gate.standing(&s, "b"), Standing::Weak);
        graded(&mut s, "c", 0.96, 3, 3);
        assert_eq!(gate.standing(&s, "c"), Standing::Held, "BKT says known");
        let off = workflow("{placement: {known_by_mastery: false}}");
        assert_eq!(
            Gate::new(&course, &off).standing(&s, "c"),
            Standing::Learning
        );
        // Stuck by the drill rule is weak whatever the probability says.
        graded(&mut s, "d", 0.6, 2, 0);
        assert_eq!(gate.standing(&s, "d"), Standing::Weak);
    }

    #[test]
    fn first_missing_follows_the_listed_order() {
        let s = holding(&[("a", MasteryTier::Gold)]);
        assert_eq!(
            chain(&any_missing_rule(), &s, "d", BlockerChoice::FirstMissing),
            vec!["b"]
        );
    }

    #[test]
    fn highest_priority_picks_the_best_scored_prerequisite() {
        let course = diamond();
        let w = any_missing_rule();
        let s = holding(&[("a", MasteryTier::Gold)]);
        let mut scores = |u: &str| if u == "c" { 0.9 } else { 0.1 };
        let chain = Gate::new(&course, &w).blocker_chain(
            &s,
            "d",
            BlockerChoice::HighestPriority,
            &mut scores,
        );
        assert_eq!(chain, vec!["c"]);
    }

    #[test]
    fn held_prerequisites_do_not_block_and_the_minimum_tier_is_respected() {
        let course = diamond();
        let s = holding(&[("a", MasteryTier::Bronze), ("b", MasteryTier::Bronze)]);
        let bronze = any_missing_rule();
        assert_eq!(
            Gate::new(&course, &bronze).blocking_prereqs(&s, "d"),
            vec!["c"]
        );
        let silver = workflow("{blocker_evidence: any_missing, prereq_min_tier: silver}");
        assert_eq!(
            Gate::new(&course, &silver).blocking_prereqs(&s, "d"),
            vec!["b", "c"]
        );
        let none = workflow("{blocker_evidence: any_missing, prereq_min_tier: none}");
        assert!(
            Gate::new(&course, &none)
                .blocking_prereqs(&s, "d")
                .is_empty()
        );
    }

    #[test]
    fn a_cycle_ends_the_chain_instead_of_looping() {
        let mut course = diamond();
        course.requires.insert("a".into(), vec!["e".into()]);
        let s = holding(&[]);
        let w = any_missing_rule();
        let chain = Gate::new(&course, &w).blocker_chain(
            &s,
            "e",
            BlockerChoice::FirstMissing,
            &mut no_scores,
        );
        assert_eq!(chain, vec!["d", "b", "a"]);
    }
}
