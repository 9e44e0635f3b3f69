//! Evidence: pure transitions of the snapshot for each student event (a
//! drill graded, an exam answer submitted, a memo viewed) and the per-turn
//! update.
//!
//! Each function changes only the snapshot it is given, from the event, the
//! course, the workflow and `now`; the pipeline re-applies them to a fresh
//! snapshot after a version conflict. What counts as evidence:
//! - drill counters, confusion tags and the BKT probability move only on a
//!   graded *first* attempt at an item (the caller says which attempts are
//!   first; OATutor counts only those), and confusion tags come only from a
//!   grading mistake tag that is in the unit's fixed `mistake_tags` list;
//! - an exam MCQ counts towards `passedByTier` on every pass (a retry after a
//!   lockout is the point of the revisit queue), and towards BKT only on the
//!   first interaction with the question (viewing its memo counts as one:
//!   an answer after reading the solution says little);
//! - any event touches its unit: `lastTouchedAt`, `not_started` →
//!   `in_progress`, and the unit moves to the front of `unitsInProgress`;
//! - a wrong drill answer whose mistake the unit's `prerequisite_checks`
//!   trace to a prerequisite the student does not hold asks for a quick
//!   check on it ([`StudentSnapshot::prereq_check`]); graded evidence on
//!   that prerequisite answers it, and moving to work that does not need
//!   it drops it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::content::{Course, Workflow};
use crate::engine::mastery::prereq::{Gate, is_course_unit};
use crate::engine::mastery::tier::recompute_tier;
use crate::engine::mastery::{bkt, irt};
use crate::model::{
    ExamTier, MasteryTier, PrereqCheck, RevisitEntry, RevisitReason, StudentSnapshot, TutorPolicy,
    UnitStatus,
};

/// What every transition needs besides the snapshot and the event.
#[derive(Debug, Clone, Copy)]
pub struct TransitionContext<'a> {
    pub course: &'a Course,
    pub workflow: &'a Workflow,
    pub now: DateTime<Utc>,
}

/// A generated drill was graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DrillGraded {
    pub unit_id: String,
    pub correct: bool,
    /// The grader's tag from the unit's fixed list, for a wrong answer.
    pub mistake_tag: Option<String>,
    /// False for a repeat attempt at an already graded drill: not evidence.
    pub first_attempt: bool,
}

/// An exam MCQ was submitted and graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamSubmitted {
    pub question_id: String,
    pub unit_id: String,
    pub tier: ExamTier,
    pub correct: bool,
}

/// The memo or video of an exam question was viewed (the exam system locks it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SupportViewed {
    pub question_id: String,
    pub unit_id: String,
    pub tier: ExamTier,
}

/// What an event changed, for the response and the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceEffect {
    /// Whether the event counted as evidence (counters and BKT moved).
    pub counted: bool,
    pub tier_before: MasteryTier,
    pub tier_after: MasteryTier,
    pub mastery_probability: Option<f64>,
    /// The confusion tag incremented, if any.
    pub confusion_tag: Option<String>,
    /// A tag the grader gave that was not used: not in the unit's list, or on a right answer.
    pub rejected_mistake_tag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    #[error("unit `{unit_id}` is not part of course `{course_id}`")]
    UnknownUnit { unit_id: String, course_id: String },
    #[error("exam question `{question_id}` is a {actual_tier} question of unit `{actual_unit}`")]
    QuestionMismatch {
        question_id: String,
        actual_unit: String,
        actual_tier: &'static str,
    },
}

/// A drill graded: drill counters, streak, confusion tag, BKT and tier.
pub fn apply_drill_graded(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    event: &DrillGraded,
) -> Result<EvidenceEffect, EvidenceError> {
    check_unit(ctx.course, &event.unit_id)?;
    let tier_before = snapshot.tier_of(&event.unit_id);
    touch(snapshot, ctx, &event.unit_id);
    let accepted_tag = event.mistake_tag.as_deref().filter(|tag| {
        !event.correct
            && ctx
                .course
                .unit(&event.unit_id)
                .is_some_and(|u| u.mistake_tags.iter().any(|t| t.id == *tag))
    });
    let mut effect = EvidenceEffect {
        counted: event.first_attempt,
        tier_before,
        tier_after: tier_before,
        mastery_probability: None,
        confusion_tag: None,
        rejected_mistake_tag: match (&event.mistake_tag, accepted_tag) {
            (Some(tag), None) => Some(tag.clone()),
            _ => None,
        },
    };
    let params = bkt::params_for(&ctx.workflow.mastery.bkt, ctx.course, &event.unit_id);
    let progress = snapshot
        .unit_progress
        .entry(event.unit_id.clone())
        .or_default();
    if event.first_attempt {
        let drill = &mut progress.drill;
        drill.attempts = drill.attempts.saturating_add(1);
        if event.correct {
            drill.correct = drill.correct.saturating_add(1);
            drill.streak_correct = drill.streak_correct.saturating_add(1);
        } else {
            drill.streak_correct = 0;
        }
        if let Some(tag) = accepted_tag {
            let count = progress.confusion_tags.entry(tag.to_owned()).or_default();
            *count = count.saturating_add(1);
            effect.confusion_tag = Some(tag.to_owned());
        }
        let prior = progress.mastery_probability.unwrap_or(params.prior);
        progress.mastery_probability = Some(bkt::update(prior, event.correct, &params));
        effect.tier_after = recompute_tier(progress, &ctx.workflow.mastery);
    }
    effect.mastery_probability = progress.mastery_probability;
    if event.first_attempt {
        if snapshot
            .prereq_check
            .as_ref()
            .is_some_and(|c| c.unit_id == event.unit_id)
        {
            snapshot.prereq_check = None;
        }
        if let Some(tag) = accepted_tag {
            raise_prereq_check(snapshot, ctx, &event.unit_id, tag);
        }
    }
    settle_in_progress(snapshot, ctx, &event.unit_id);
    Ok(effect)
}

/// A wrong answer with `tag` on `unit_id`: a quick check on the
/// prerequisite the unit traces that mistake to, unless it is held.
fn raise_prereq_check(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    unit_id: &str,
    tag: &str,
) {
    let Some(prereq) = ctx
        .course
        .unit(unit_id)
        .and_then(|u| u.prerequisite_checks.get(tag))
    else {
        return;
    };
    if is_course_unit(ctx.course, prereq)
        && !Gate::new(ctx.course, ctx.workflow).is_held(snapshot, prereq)
    {
        snapshot.prereq_check = Some(PrereqCheck {
            unit_id: prereq.clone(),
            from_unit_id: unit_id.to_owned(),
            mistake_tag: tag.to_owned(),
        });
    }
}

/// The student says their last right answer on `unit_id` was a guess: it
/// no longer counts towards the drill streak (or the right answers). BKT
/// is left as it is: its guess parameter already allows for lucky answers.
pub fn retract_guess(snapshot: &mut StudentSnapshot, unit_id: &str) {
    if let Some(progress) = snapshot.unit_progress.get_mut(unit_id)
        && progress.drill.streak_correct > 0
    {
        progress.drill.streak_correct -= 1;
        progress.drill.correct = progress.drill.correct.saturating_sub(1);
    }
}

/// Help asked for on an untried item (`mastery.hint_before_answer_is_wrong`):
/// OATutor's reading, a wrong first attempt for BKT only. The drill streak
/// and tiers are left alone; the item's answer that follows is no longer a
/// first attempt, so it is not evidence either way.
pub fn apply_hint_before_answer(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    unit_id: &str,
) -> Option<f64> {
    if !ctx.workflow.mastery.hint_before_answer_is_wrong || !is_course_unit(ctx.course, unit_id) {
        return None;
    }
    let params = bkt::params_for(&ctx.workflow.mastery.bkt, ctx.course, unit_id);
    let progress = snapshot
        .unit_progress
        .entry(unit_id.to_owned())
        .or_default();
    let prior = progress.mastery_probability.unwrap_or(params.prior);
    progress.mastery_probability = Some(bkt::update(prior, false, &params));
    progress.mastery_probability
}

/// An exam answer submitted: touched, `passedByTier` and the revisit queue,
/// BKT on the first interaction, and the tier.
pub fn apply_exam_submitted(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    event: &ExamSubmitted,
) -> Result<EvidenceEffect, EvidenceError> {
    check_question(ctx.course, &event.question_id, &event.unit_id, event.tier)?;
    let tier_before = snapshot.tier_of(&event.unit_id);
    let first_interaction = !snapshot
        .exam_touched
        .get(&event.question_id)
        .copied()
        .unwrap_or(false);
    touch(snapshot, ctx, &event.unit_id);
    snapshot
        .exam_touched
        .insert(event.question_id.clone(), true);
    if event.correct {
        snapshot.revisit_queue.remove(&event.question_id);
    } else {
        queue_revisit(
            snapshot,
            ctx,
            &event.question_id,
            &event.unit_id,
            event.tier,
            RevisitReason::Failed,
        );
    }
    let params = bkt::params_for(&ctx.workflow.mastery.bkt, ctx.course, &event.unit_id);
    let progress = snapshot
        .unit_progress
        .entry(event.unit_id.clone())
        .or_default();
    if event.correct {
        let passed = progress.exam.passed_by_tier.get_mut(event.tier);
        *passed = passed.saturating_add(1);
    }
    if first_interaction {
        let prior = progress.mastery_probability.unwrap_or(params.prior);
        progress.mastery_probability = Some(bkt::update(prior, event.correct, &params));
    }
    let tier_after = recompute_tier(progress, &ctx.workflow.mastery);
    let effect = EvidenceEffect {
        counted: true,
        tier_before,
        tier_after,
        mastery_probability: progress.mastery_probability,
        confusion_tag: None,
        rejected_mistake_tag: None,
    };
    settle_in_progress(snapshot, ctx, &event.unit_id);
    Ok(effect)
}

/// A support memo viewed: the question joins the revisit queue (the exam
/// system enforces the lockout) and counts as touched.
pub fn apply_support_viewed(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    event: &SupportViewed,
) -> Result<(), EvidenceError> {
    check_question(ctx.course, &event.question_id, &event.unit_id, event.tier)?;
    touch(snapshot, ctx, &event.unit_id);
    snapshot
        .exam_touched
        .insert(event.question_id.clone(), true);
    queue_revisit(
        snapshot,
        ctx,
        &event.question_id,
        &event.unit_id,
        event.tier,
        RevisitReason::SupportViewed,
    );
    settle_in_progress(snapshot, ctx, &event.unit_id);
    Ok(())
}

/// The per-turn update after a policy was used.
///
/// `focusUnitId` becomes the policy's primary target — the unit the student
/// is working toward — not the blocker being tutored: the policy re-derives
/// the blocker from the target every turn, so once the blocker is held the
/// tutor returns to the target by itself, and the snapshot does not forget
/// what the student asked for. The unit tutored (the policy's focus) is
/// touched. `unitsInProgress` is most recent first: the focus, then the
/// target, then the earlier units; units outside the course and gold units
/// are dropped, and the list is cut at `policy.units_in_progress_cap`.
pub fn apply_turn(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    policy: &TutorPolicy,
) {
    let course = ctx.course;
    if is_course_unit(course, &policy.primary_target_unit_id) {
        snapshot.focus_unit_id = policy.primary_target_unit_id.clone();
    }
    if is_course_unit(course, &policy.focus_unit_id) {
        touch(snapshot, ctx, &policy.focus_unit_id);
    }
    let front = [
        policy.focus_unit_id.as_str(),
        policy.primary_target_unit_id.as_str(),
    ];
    reorder_in_progress(snapshot, ctx, &front);
    snapshot.last_turn_at = Some(ctx.now);
    // A check only matters for work that needs the prerequisite.
    if snapshot.prereq_check.as_ref().is_some_and(|c| {
        !course
            .ancestors(&policy.primary_target_unit_id)
            .contains(&c.unit_id)
    }) {
        snapshot.prereq_check = None;
    }
}

fn check_unit(course: &Course, unit_id: &str) -> Result<(), EvidenceError> {
    if is_course_unit(course, unit_id) {
        Ok(())
    } else {
        Err(EvidenceError::UnknownUnit {
            unit_id: unit_id.to_owned(),
            course_id: course.id.clone(),
        })
    }
}

/// The unit must be in the course; a question of the course's own bank must
/// be the unit's, at that tier (questions of an external exam API are
/// trusted as given).
fn check_question(
    course: &Course,
    question_id: &str,
    unit_id: &str,
    tier: ExamTier,
) -> Result<(), EvidenceError> {
    check_unit(course, unit_id)?;
    match course.exam_item(question_id) {
        Some((unit, item)) if unit.id != unit_id || item.tier != tier => {
            Err(EvidenceError::QuestionMismatch {
                question_id: question_id.to_owned(),
                actual_unit: unit.id.clone(),
                actual_tier: item.tier.as_str(),
            })
        }
        _ => Ok(()),
    }
}

/// Activity on a unit: last touched now, and started if it was not.
fn touch(snapshot: &mut StudentSnapshot, ctx: &TransitionContext<'_>, unit_id: &str) {
    let progress = snapshot
        .unit_progress
        .entry(unit_id.to_owned())
        .or_default();
    progress.last_touched_at = Some(ctx.now);
    if progress.status == UnitStatus::NotStarted {
        progress.status = UnitStatus::InProgress;
    }
}

/// After an event on `unit_id`: it leads `unitsInProgress` (unless gold).
fn settle_in_progress(snapshot: &mut StudentSnapshot, ctx: &TransitionContext<'_>, unit_id: &str) {
    reorder_in_progress(snapshot, ctx, &[unit_id]);
}

fn reorder_in_progress(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    front: &[&str],
) {
    let cap = ctx.workflow.policy.units_in_progress_cap.max(1);
    let mut units: Vec<String> = Vec::with_capacity(cap);
    let earlier = std::mem::take(&mut snapshot.units_in_progress);
    for unit in front
        .iter()
        .copied()
        .chain(earlier.iter().map(String::as_str))
    {
        let keep = is_course_unit(ctx.course, unit)
            && snapshot.tier_of(unit) != MasteryTier::Gold
            && !units.iter().any(|u| u == unit);
        if keep && units.len() < cap {
            units.push(unit.to_owned());
        }
    }
    snapshot.units_in_progress = units;
}

/// Adds the question to the revisit queue; one already queued keeps the
/// time it was first queued and takes the latest reason.
fn queue_revisit(
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    question_id: &str,
    unit_id: &str,
    tier: ExamTier,
    reason: RevisitReason,
) {
    let entry = snapshot
        .revisit_queue
        .entry(question_id.to_owned())
        .or_insert_with(|| RevisitEntry {
            unit_id: unit_id.to_owned(),
            tier,
            reason: None,
            added_at: Some(ctx.now),
        });
    entry.unit_id = unit_id.to_owned();
    entry.tier = tier;
    entry.reason = Some(reason);
}

/// Updates a unit's ability estimate from one graded item.
pub fn record_ability(
    snapshot: &mut StudentSnapshot,
    workflow: &Workflow,
    unit_id: &str,
    difficulty: f64,
    correct: bool,
) {
    let progress = snapshot
        .unit_progress
        .entry(unit_id.to_owned())
        .or_default();
    progress.ability = Some(irt::update(
        progress.ability,
        &irt::Response {
            difficulty,
            correct,
            timing: None,
        },
        &workflow.irt,
    ));
}
