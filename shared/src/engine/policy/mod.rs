//! The deterministic tutor policy (docs/architecture.md, "The guided
//! policy"): mapped units → primary target → prerequisite blocker → focus →
//! stuck / desired tier / exam readiness / exam availability → allowed
//! actions and scoped units.
//!
//! [`compute_policy`] is a pure function of the snapshot, the course, the
//! workflow, this turn's mapped units, `now`, a turn id and the lockout
//! statuses of the focus unit's exam candidates. Every number comes from the
//! workflow's `policy` settings. The decisions that are not obvious:
//!
//! - **Mapped units outside the course** are ignored (listed in the trace): they
//!   can be neither taught nor scoped. A unit mapped twice keeps its highest
//!   confidence; confidences are clamped to \[0, 1\] (NaN counts as 0); ties in
//!   confidence are broken by unit id, so the LLM's listing order never matters.
//! - **A snapshot focus that is not a unit of the course** (a cold-start
//!   placeholder such as `ENTRY-00`, or a unit removed from the course) is
//!   replaced by the most recent unit in progress that is in the course, else the
//!   course's entry unit, else its first unit.
//! - **Primary target**: the best mapped unit at or above
//!   `primary_target_min_confidence`, else the snapshot focus, which
//!   is the previous turn's target — the unit the student works toward. When
//!   `advance_from_mastered` is on and that focus is already gold, the target
//!   moves on to the best-scored unit that is not gold among the units in
//!   progress and the units that build directly on the focus; otherwise the
//!   tutor would stay on a finished unit until the student names a new one.
//! - **Blocker**: a prerequisite of the target that blocks it
//!   ([`crate::engine::mastery::prereq::Gate`]): by default only one with evidence
//!   of weakness, or one leading down to such a unit (a unit never worked
//!   on is unknown, not missing); with `blocker_evidence: any_missing`,
//!   every one below `prereq_min_tier`. `policy.blocker` picks among
//!   several: the first one the unit lists (the default) or the one with the
//!   highest priority score. The chain is followed down until a unit
//!   that can be started now; that unit is `prereqBlockingUnitId` and the
//!   focus (the focus shifts to the prerequisite). So the focus is never
//!   blocked itself.
//! - **Prerequisite check**: with nothing blocking, a check a graded
//!   mistake raised ([`StudentSnapshot::prereq_check`]) on a prerequisite
//!   of the target becomes the blocker for one quick question: the
//!   student is placed where they asked, and a prerequisite is probed only
//!   when a wrong answer points to it.
//! - **Moving on** when the student asks to (and names nothing): the
//!   target becomes the unit after the focus — the first unit that builds
//!   on it, else the next one in the course — unless the focus shows
//!   weakness, in which case the target stays and the trace says why.
//! - **Exam readiness** is judged on the focus: its prerequisites held and
//!   its drill streak at `exam_ready_streak`. It deliberately does not also
//!   require "no blocker": the focus *is* the blocker whenever there is one,
//!   and a blocker only stops blocking once it earns bronze through an exam
//!   — so that condition would lock a student out of the very exam that
//!   unblocks them.
//! - **Ambiguous mapping** (a Socratic clarifier, no card): when no
//!   mapped unit is confident enough but the best one, other than the target
//!   and the focus, reaches `clarify_min_confidence`, the only allowed action is
//!   SOCRATIC_QUESTION. The flags (stuck, examReady) are still reported as is.
//! - **Exam availability** is only looked up when the focus is exam-ready
//!   (no lockout is read otherwise), and the candidates are the focus unit's
//!   exam bank at the desired tier; [`exam_questions_to_check`] names them so
//!   the pipeline can
//!   prefetch their lockout statuses before calling [`compute_policy`].
//!
//! - **What the priority score decides** (it ranks candidate units but never
//!   overrides prerequisite gating): the blocker under
//!   `blocker: highest_priority`, and the unit to move on to from a gold
//!   focus. Every scored unit is reported in
//!   [`PolicyOutcome::candidates`] for the turn log and `tutorflow policy`.
//!
//! How the snapshot's `focusUnitId` and `unitsInProgress` change after the
//! turn is [`crate::engine::mastery::evidence::apply_turn`]'s job.
//!
//! Its parts: [`score`] (unit priority), [`scope`] (candidate and scoped
//! units) and [`signals`] (the pacing and style the prompt is given); where
//! a student stands on a unit's prerequisites and what blocks is read from
//! their record ([`crate::engine::mastery::prereq`]).

pub mod scope;
pub mod score;
pub mod signals;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::content::workflow::PolicySettings;
use crate::content::{Course, Workflow};
use crate::engine::exam::lockout::{ExamReport, LockoutSource, exam_availability};
use crate::engine::mastery::bkt;
use crate::engine::mastery::prereq::{Gate, Standing, is_course_unit};
use crate::engine::mastery::tier::desired_exam_tier;
use crate::engine::policy::scope::{ScopeInput, candidate_units, scoped_units};
use crate::engine::policy::score::{ScoredUnit, UnitSignals};
use crate::math::unit_interval;
use crate::model::{
    ExamAvailability, ExamTier, MappedUnit, MasteryTier, PolicyConstraints, StudentSnapshot,
    TutorAction, TutorPolicy,
};

/// Everything the policy is computed from, apart from lockout statuses.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInput<'a> {
    pub snapshot: &'a StudentSnapshot,
    pub course: &'a Course,
    pub workflow: &'a Workflow,
    /// This turn's mapped units (the LLM's reading or lexical mapping), in any order.
    pub mapped_units: &'a [MappedUnit],
    pub now: DateTime<Utc>,
    pub turn_id: &'a str,
    /// What the student asked of the session this turn.
    pub request: StudentRequest,
}

/// A request of the student's that changes what to work on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StudentRequest {
    #[default]
    None,
    /// "Can we move on?": on to the unit after the focus.
    MoveOn,
}

/// What became of a request to move on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MoveOn {
    /// On to the target, from `from`.
    Moved { from: String },
    /// The focus shows weakness: finish it first.
    NotYet { unit_id: String },
    /// Nothing comes after the focus that is not finished.
    NothingAfter { unit_id: String },
}

/// The policy and how it was reached, for the turn log and the CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyOutcome {
    pub policy: TutorPolicy,
    /// Every unit scored this turn, best first (ties by unit id): the
    /// candidate units, plus the target and the blocker chain.
    pub candidates: Vec<ScoredUnit>,
    /// The focus unit's exam candidates at the desired tier (empty when not exam-ready).
    pub exam: ExamReport,
    pub trace: PolicyTrace,
}

/// Why the policy chose what it chose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyTrace {
    pub target_reason: TargetReason,
    /// Missing prerequisites followed from the target; the last one is the blocker.
    pub blocker_chain: Vec<String>,
    /// No confident mapping, but a plausible one: only a clarifier is allowed.
    pub ambiguous_mapping: bool,
    /// Mapped unit ids that are not units of the course.
    pub ignored_mapped_units: Vec<String>,
    /// The blocker is a quick check a graded mistake asked for.
    #[serde(default)]
    pub prereq_check: bool,
    /// What became of a request to move on, if the student made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_on: Option<MoveOn>,
}

/// How the primary target was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TargetReason {
    /// The best mapped unit reached `primary_target_min_confidence`.
    Mapped { confidence: f64 },
    /// No confident mapping: the snapshot's focus stays the target.
    SnapshotFocus,
    /// The snapshot's focus is not a unit of the course; this unit stands in.
    FocusStandIn { snapshot_focus: String },
    /// The focus was gold and nothing new was named: the tutor moved on.
    AdvancedFromMastered { from: String },
    /// The student asked to move on.
    MovedOn { from: String },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("course `{course_id}` has no units to tutor")]
    EmptyCourse { course_id: String },
}

/// The question ids whose lockout statuses [`compute_policy`] will ask for:
/// the focus unit's exam bank at the desired tier, when the focus is
/// exam-ready; empty otherwise.
pub fn exam_questions_to_check(input: &PolicyInput<'_>) -> Result<Vec<String>, PolicyError> {
    let decision = decide(input)?;
    Ok(if decision.exam_ready {
        exam_question_ids(input.course, &decision.focus, decision.desired_tier)
            .map(str::to_owned)
            .collect()
    } else {
        Vec::new()
    })
}

/// The choice questions of `unit_id`'s exam bank at `tier`, in bank order
/// (a written one is asked in exam sessions only).
pub fn exam_question_ids<'c>(
    course: &'c Course,
    unit_id: &str,
    tier: ExamTier,
) -> impl Iterator<Item = &'c str> {
    course
        .unit(unit_id)
        .map_or(&[][..], |u| u.exam.as_slice())
        .iter()
        .filter(move |q| q.tier == tier && !q.is_written())
        .map(|q| q.id.as_str())
}

/// The policy of one turn, with the decisions listed in the module docs.
pub fn compute_policy(
    input: &PolicyInput<'_>,
    lockouts: &dyn LockoutSource,
) -> Result<PolicyOutcome, PolicyError> {
    let decision = decide(input)?;
    let settings = &input.workflow.policy;
    let exam = if decision.exam_ready {
        exam_availability(
            exam_question_ids(input.course, &decision.focus, decision.desired_tier),
            lockouts,
            input.now,
        )
    } else {
        ExamReport::default()
    };
    let allowed_actions = if decision.ambiguous {
        vec![TutorAction::SocraticQuestion]
    } else {
        let mut actions = vec![TutorAction::SocraticQuestion, TutorAction::DrillCard];
        if decision.stuck {
            actions.push(TutorAction::ConceptCard);
        }
        if decision.exam_ready && exam.availability == ExamAvailability::Available {
            actions.push(TutorAction::ExamBlock);
        }
        actions
    };
    let in_progress: Vec<&str> = decision.in_progress.iter().map(String::as_str).collect();
    let scoped_unit_ids = scoped_units(
        input.course,
        &ScopeInput {
            focus: &decision.focus,
            target: &decision.target,
            blocker: decision.chain.last().map(String::as_str),
            mapped: &decision.mapped,
            in_progress: &in_progress,
        },
        &settings.scoped,
    );
    let constraints = &settings.constraints;
    let policy = TutorPolicy {
        turn_id: input.turn_id.to_owned(),
        focus_unit_id: decision.focus.clone(),
        primary_target_unit_id: decision.target.clone(),
        prereq_blocking_unit_id: decision.chain.last().cloned(),
        scoped_unit_ids,
        allowed_actions,
        stuck: decision.stuck,
        exam_ready: decision.exam_ready,
        desired_exam_tier: decision.desired_tier,
        exam_availability: exam.availability,
        exam_next_eligible_at: exam.next_eligible_at,
        constraints: PolicyConstraints {
            max_concept_words: constraints.max_concept_words,
            max_worked_examples: constraints.max_worked_examples,
            drill_max_steps: constraints.drill_max_steps,
        },
    };
    let mut candidates = decision.scored;
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.unit_id.cmp(&b.unit_id))
    });
    Ok(PolicyOutcome {
        policy,
        candidates,
        exam,
        trace: PolicyTrace {
            target_reason: decision.target_reason,
            blocker_chain: decision.chain,
            ambiguous_mapping: decision.ambiguous,
            ignored_mapped_units: decision.ignored_mapped,
            prereq_check: decision.prereq_check,
            move_on: decision.move_on,
        },
    })
}

/// Whether the evidence on a unit says the student is stuck (repeated
/// drill attempts with no streak; thresholds from `policy.stuck`).
pub fn is_stuck(snapshot: &StudentSnapshot, unit_id: &str, settings: &PolicySettings) -> bool {
    let drill = snapshot
        .unit_progress
        .get(unit_id)
        .map(|p| p.drill)
        .unwrap_or_default();
    drill.attempts >= settings.stuck.min_attempts
        && drill.streak_correct <= settings.stuck.max_streak
}

/// The unit standing for the snapshot's focus (see the module docs), and
/// whether it is the snapshot's own focus.
pub fn resolve_focus<'a>(
    snapshot: &'a StudentSnapshot,
    course: &'a Course,
) -> Result<(&'a str, bool), PolicyError> {
    if is_course_unit(course, &snapshot.focus_unit_id) {
        return Ok((&snapshot.focus_unit_id, true));
    }
    snapshot
        .units_in_progress
        .iter()
        .chain(std::iter::once(&course.entry_unit))
        .chain(&course.order)
        .chain(course.requires.keys())
        .find(|u| is_course_unit(course, u))
        .map(|u| (u.as_str(), false))
        .ok_or_else(|| PolicyError::EmptyCourse {
            course_id: course.id.clone(),
        })
}

/// Everything decided before exam availability.
struct Decision {
    mapped: Vec<MappedUnit>,
    ignored_mapped: Vec<String>,
    in_progress: Vec<String>,
    target: String,
    target_reason: TargetReason,
    chain: Vec<String>,
    prereq_check: bool,
    move_on: Option<MoveOn>,
    focus: String,
    ambiguous: bool,
    stuck: bool,
    exam_ready: bool,
    desired_tier: ExamTier,
    scored: Vec<ScoredUnit>,
}

fn decide(input: &PolicyInput<'_>) -> Result<Decision, PolicyError> {
    let PolicyInput {
        snapshot, course, ..
    } = *input;
    let settings = &input.workflow.policy;
    let (mapped, ignored_mapped) = course_mapped_units(course, input.mapped_units);
    let mut in_progress: Vec<String> = Vec::new();
    for unit in &snapshot.units_in_progress {
        if is_course_unit(course, unit) && !in_progress.contains(unit) {
            in_progress.push(unit.clone());
        }
    }
    let (snapshot_focus, focus_is_own) = resolve_focus(snapshot, course)?;
    let mut scorer = Scorer {
        input,
        mapped: &mapped,
        in_progress: &in_progress,
        snapshot_focus,
        scored: Vec::new(),
    };

    let gate = Gate::new(course, input.workflow);
    let top = mapped.first();
    let mut move_on = None;
    let (target, target_reason) = match top {
        Some(m) if m.confidence >= settings.primary_target_min_confidence => (
            m.unit_id.clone(),
            TargetReason::Mapped {
                confidence: m.confidence,
            },
        ),
        _ => {
            let stay = if focus_is_own {
                TargetReason::SnapshotFocus
            } else {
                TargetReason::FocusStandIn {
                    snapshot_focus: snapshot.focus_unit_id.clone(),
                }
            };
            let asked = (input.request == StudentRequest::MoveOn)
                .then(|| move_on_from(input, &gate, snapshot_focus));
            if let Some((outcome, next)) = asked {
                move_on = Some(outcome);
                if let Some(next) = next {
                    (
                        next,
                        TargetReason::MovedOn {
                            from: snapshot_focus.to_owned(),
                        },
                    )
                } else {
                    (snapshot_focus.to_owned(), stay)
                }
            } else {
                match advance_from(&mut scorer, snapshot_focus) {
                    Some(next) => (
                        next,
                        TargetReason::AdvancedFromMastered {
                            from: snapshot_focus.to_owned(),
                        },
                    ),
                    None => (snapshot_focus.to_owned(), stay),
                }
            }
        }
    };
    let mut chain = gate.blocker_chain(snapshot, &target, settings.blocker, &mut |unit| {
        scorer.score(unit)
    });
    let mut prereq_check = false;
    if chain.is_empty()
        && let Some(check) = &snapshot.prereq_check
        && is_course_unit(course, &check.unit_id)
        && course.ancestors(&target).contains(&check.unit_id)
        && !gate.is_held(snapshot, &check.unit_id)
    {
        chain.push(check.unit_id.clone());
        prereq_check = true;
    }
    let focus = chain.last().unwrap_or(&target).clone();
    // A weak mapping to the unit already being worked on is no ambiguity.
    let ambiguous = !matches!(target_reason, TargetReason::Mapped { .. })
        && top.is_some_and(|m| {
            m.unit_id != target
                && m.unit_id != focus
                && m.confidence >= settings.clarify_min_confidence
        });

    let in_progress_ids: Vec<&str> = in_progress.iter().map(String::as_str).collect();
    for unit in candidate_units(
        course,
        &mapped,
        snapshot_focus,
        &in_progress_ids,
        &settings.candidates,
    ) {
        scorer.score(&unit);
    }
    scorer.score(&target);
    for unit in &chain {
        scorer.score(unit);
    }

    let stuck = is_stuck(snapshot, &focus, settings);
    let desired_tier = desired_exam_tier(snapshot.tier_of(&focus));
    let streak = snapshot
        .unit_progress
        .get(&focus)
        .map_or(0, |p| p.drill.streak_correct);
    let prereqs_held = gate.blocking_prereqs(snapshot, &focus).is_empty();
    let exam_ready = prereqs_held && streak >= settings.exam_ready_streak;

    Ok(Decision {
        scored: scorer.scored,
        mapped,
        ignored_mapped,
        in_progress,
        target,
        target_reason,
        chain,
        prereq_check,
        move_on,
        focus,
        ambiguous,
        stuck,
        exam_ready,
        desired_tier,
    })
}

/// Mapped units of the course, one per unit at its highest confidence
/// (clamped), best first with ties by unit id; and the ids outside the course.
fn course_mapped_units(course: &Course, mapped: &[MappedUnit]) -> (Vec<MappedUnit>, Vec<String>) {
    let mut kept: Vec<MappedUnit> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for m in mapped {
        let confidence = unit_interval(m.confidence);
        if !is_course_unit(course, &m.unit_id) {
            if !ignored.contains(&m.unit_id) {
                ignored.push(m.unit_id.clone());
            }
        } else if let Some(seen) = kept.iter_mut().find(|k| k.unit_id == m.unit_id) {
            seen.confidence = seen.confidence.max(confidence);
        } else {
            kept.push(MappedUnit {
                unit_id: m.unit_id.clone(),
                confidence,
            });
        }
    }
    kept.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| a.unit_id.cmp(&b.unit_id))
    });
    (kept, ignored)
}

/// Whether the student may move on from `focus`, and the unit to move on
/// to when they may.
fn move_on_from(input: &PolicyInput<'_>, gate: &Gate<'_>, focus: &str) -> (MoveOn, Option<String>) {
    let unit_id = focus.to_owned();
    if gate.standing(input.snapshot, focus) == Standing::Weak {
        return (MoveOn::NotYet { unit_id }, None);
    }
    match next_after(input, focus) {
        Some(next) => (MoveOn::Moved { from: unit_id }, Some(next)),
        None => (MoveOn::NothingAfter { unit_id }, None),
    }
}

/// The unit after `focus`: the first unit that builds on it, else the next
/// one in the course's order; never a gold unit.
fn next_after(input: &PolicyInput<'_>, focus: &str) -> Option<String> {
    let course = input.course;
    let open = |u: &&str| *u != focus && input.snapshot.tier_of(u) != MasteryTier::Gold;
    let later = course
        .order
        .iter()
        .map(String::as_str)
        .skip_while(|u| *u != focus)
        .skip(1);
    course
        .dependents(focus)
        .into_iter()
        .chain(later)
        .find(open)
        .map(str::to_owned)
}

/// The unit to move on to from a gold focus, if `advance_from_mastered` is
/// on: the best-scored unit that is not gold among the units in progress and
/// the focus's direct dependents (ties go to the one listed first).
fn advance_from(scorer: &mut Scorer<'_, '_>, focus: &str) -> Option<String> {
    let PolicyInput {
        snapshot,
        course,
        workflow,
        ..
    } = *scorer.input;
    if !workflow.policy.advance_from_mastered || snapshot.tier_of(focus) != MasteryTier::Gold {
        return None;
    }
    let mut options: Vec<String> = Vec::new();
    let unfinished = |u: &str| u != focus && snapshot.tier_of(u) != MasteryTier::Gold;
    for unit in scorer
        .in_progress
        .iter()
        .map(String::as_str)
        .chain(course.dependents(focus))
    {
        if unfinished(unit) && !options.iter().any(|o| o == unit) {
            options.push(unit.to_owned());
        }
    }
    let mut best: Option<(String, f64)> = None;
    for unit in options {
        let score = scorer.score(&unit);
        if best.as_ref().is_none_or(|(_, top)| score > *top) {
            best = Some((unit, score));
        }
    }
    best.map(|(unit, _)| unit)
}

/// Scores units on demand, each once.
struct Scorer<'i, 'a> {
    input: &'i PolicyInput<'a>,
    mapped: &'i [MappedUnit],
    in_progress: &'i [String],
    snapshot_focus: &'i str,
    scored: Vec<ScoredUnit>,
}

impl Scorer<'_, '_> {
    fn score(&mut self, unit_id: &str) -> f64 {
        if let Some(done) = self.scored.iter().find(|s| s.unit_id == unit_id) {
            return done.score;
        }
        let scored = score_unit(self.input, self.mapped, self.snapshot_focus, unit_id);
        let value = scored.score;
        self.scored.push(scored);
        value
    }
}

/// The priority score of one unit this turn. `mapped` holds this turn's
/// mapped units (clamped confidences); `snapshot_focus` is the resolved
/// snapshot focus. A unit never graded scores its BKT prior.
pub fn score_unit(
    input: &PolicyInput<'_>,
    mapped: &[MappedUnit],
    snapshot_focus: &str,
    unit_id: &str,
) -> ScoredUnit {
    let progress = input.snapshot.unit_progress.get(unit_id);
    let probability = progress
        .and_then(|p| p.mastery_probability)
        .unwrap_or_else(|| {
            bkt::params_for(&input.workflow.mastery.bkt, input.course, unit_id).prior
        });
    let signals = UnitSignals {
        mapped_confidence: mapped
            .iter()
            .find(|m| m.unit_id == unit_id)
            .map_or(0.0, |m| unit_interval(m.confidence)),
        is_focus: unit_id == snapshot_focus,
        is_in_progress: input
            .snapshot
            .units_in_progress
            .iter()
            .any(|u| u == unit_id),
        hours_since_touched: progress
            .and_then(|p| p.last_touched_at)
            .map(|at| (input.now - at).num_milliseconds() as f64 / 3_600_000.0),
        tier: progress.map_or(MasteryTier::None, |p| p.mastery_tier),
        drill_streak: progress.map_or(0, |p| p.drill.streak_correct),
        mastery_probability: probability,
    };
    let settings = &input.workflow.policy;
    let components = score::components(&signals, settings);
    ScoredUnit {
        unit_id: unit_id.to_owned(),
        score: score::priority(&components, &settings.weights),
        components,
    }
}
