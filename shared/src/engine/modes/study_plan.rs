//! A teach_me study plan's rules: how a plan is drafted and checked, which
//! step is current, how an answer moves a step along
//! (pending → in_progress → completed, or blocked after repeated
//! failures), and the evaluator's decision after each answer: continue,
//! advance, or replan (a blocked step, or a student racing ahead).
//!
//! There is no step index: the current step is always derived from the
//! statuses, so it cannot drift from them.

use std::collections::BTreeSet;

use crate::content::Unit;
use crate::content::workflow::TeachMeMode;
use crate::model::{
    AuthoredStep, LlmPlanStep, PacingDirective, PlanStep, ReplanRecord, StepKind, StepProgress,
    StepStatus, StudyPlan,
};

/// A plan has at least this many steps...
pub const MIN_STEPS: usize = 3;
/// ...and at most this many.
pub const MAX_STEPS: usize = 5;

/// A step as the plan's author (a unit file, the planner, the default
/// plan) wrote it, before it has a status.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDraft {
    pub title: String,
    pub kind: StepKind,
    pub concept: String,
    pub success_criteria: Option<String>,
}

impl From<&AuthoredStep> for StepDraft {
    fn from(s: &AuthoredStep) -> Self {
        StepDraft {
            title: s.title.clone(),
            kind: s.kind,
            concept: s.concept.clone(),
            success_criteria: s.success_criteria.clone(),
        }
    }
}

impl From<&LlmPlanStep> for StepDraft {
    fn from(s: &LlmPlanStep) -> Self {
        StepDraft {
            title: s.title.clone(),
            kind: s.kind,
            concept: s.concept.clone(),
            success_criteria: Some(s.success_criteria.clone()),
        }
    }
}

/// Why a drafted plan cannot be used: the whole plan (`step` is `None`)
/// or one step's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanProblem {
    pub step: Option<usize>,
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for PlanProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            Some(i) => write!(f, "step {}: {}", i + 1, self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Checks a drafted plan: 3 to 5 steps, each with a title and a concept
/// the unit is about.
pub fn check_drafts(drafts: &[StepDraft], unit: &Unit) -> Result<(), PlanProblem> {
    let problem = |step, field, message: String| {
        Err(PlanProblem {
            step,
            field,
            message,
        })
    };
    if !(MIN_STEPS..=MAX_STEPS).contains(&drafts.len()) {
        return problem(
            None,
            "study_plan",
            format!(
                "a study plan has {MIN_STEPS} to {MAX_STEPS} steps, not {}",
                drafts.len()
            ),
        );
    }
    let vocabulary = unit_words(unit);
    for (i, d) in drafts.iter().enumerate() {
        if d.title.trim().is_empty() {
            return problem(Some(i), "title", "the step has no title".into());
        }
        if d.concept.trim().is_empty() {
            return problem(Some(i), "concept", "the step has no concept".into());
        }
        if words(&d.concept).is_disjoint(&vocabulary) {
            return problem(
                Some(i),
                "concept",
                format!(
                    "`{}` is not something unit `{}` is about (none of its words are in the unit's title, anchor, tags or key ideas)",
                    d.concept.trim(),
                    unit.id
                ),
            );
        }
    }
    Ok(())
}

/// The workflow's default plan for `unit`: its key ideas explained and
/// checked in turn, then practice on the whole unit.
pub fn default_drafts(unit: &Unit, settings: &TeachMeMode) -> Vec<StepDraft> {
    let ideas: Vec<&str> = unit
        .key_ideas
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty())
        .collect();
    let idea = |n: usize| {
        ideas
            .get(n % ideas.len().max(1))
            .map_or_else(|| unit.title.clone(), |i| (*i).to_owned())
    };
    let mut explained = 0usize;
    let mut drafts: Vec<StepDraft> = settings
        .default_plan
        .iter()
        .map(|&kind| match kind {
            StepKind::Explain => {
                explained += 1;
                StepDraft {
                    title: format!("{}: idea {explained}", unit.title),
                    kind,
                    concept: idea(explained - 1),
                    success_criteria: None,
                }
            }
            StepKind::Check => StepDraft {
                title: format!("Check idea {}", explained.max(1)),
                kind,
                concept: idea(explained.saturating_sub(1)),
                success_criteria: None,
            },
            StepKind::Practice => StepDraft {
                title: format!("Practise {}", unit.title),
                kind,
                concept: unit.title.clone(),
                success_criteria: None,
            },
        })
        .collect();
    // A workflow's default plan is validated to be non-empty; the bounds
    // of a plan hold whatever it says.
    drafts.truncate(MAX_STEPS);
    while drafts.len() < MIN_STEPS {
        drafts.push(StepDraft {
            title: format!("Practise {}", unit.title),
            kind: StepKind::Practice,
            concept: unit.title.clone(),
            success_criteria: None,
        });
    }
    drafts
}

/// A new plan from checked drafts: every step pending.
pub fn from_drafts(drafts: &[StepDraft], unit: &Unit, settings: &TeachMeMode) -> StudyPlan {
    StudyPlan {
        unit_id: unit.id.clone(),
        steps: drafts
            .iter()
            .enumerate()
            .map(|(i, d)| step(format!("s{}", i + 1), d))
            .collect(),
        plan_version: 1,
        replan_count: 0,
        max_replans: settings.max_replans,
        extension_turns: 0,
        replans: Vec::new(),
        last_pacing: None,
    }
}

fn step(step_id: String, d: &StepDraft) -> PlanStep {
    PlanStep {
        step_id,
        title: d.title.trim().to_owned(),
        kind: d.kind,
        concept: d.concept.trim().to_owned(),
        success_criteria: d.success_criteria.clone().filter(|c| !c.trim().is_empty()),
        status: StepStatus::Pending,
        progress: StepProgress::default(),
    }
}

/// The step being worked on: the one in progress, else the first pending
/// one; `None` once no step is left to work on.
pub fn current(plan: &StudyPlan) -> Option<usize> {
    plan.steps
        .iter()
        .position(|s| s.status == StepStatus::InProgress)
        .or_else(|| {
            plan.steps
                .iter()
                .position(|s| s.status == StepStatus::Pending)
        })
}

/// Every step is completed or blocked for good.
pub fn is_complete(plan: &StudyPlan) -> bool {
    current(plan).is_none()
}

/// What the student's message says about the current step, as code reads
/// it (the same before and after the tutor call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEvidence {
    /// A graded answer that is right.
    Correct,
    /// A graded answer that is wrong (or only close).
    Wrong,
    /// The student is stuck ("I don't know"): neither right nor wrong.
    Stuck,
    /// A reply that cannot be graded by code but takes part in the lesson.
    Engaged,
    /// Nothing about the lesson (no message, off topic).
    Nothing,
}

/// What the evaluator decided after a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanDecision {
    /// Stay on the current step.
    Continue,
    /// The current step completed: the next one starts.
    Advance,
    /// The plan was rewritten for this reason.
    Replan(String),
}

/// The result of evaluating one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    pub plan: StudyPlan,
    pub decision: PlanDecision,
    /// This message completed the plan.
    pub completed_now: bool,
    /// A step blocked and was set to start again after a smaller one: the
    /// question the student was failing is dropped.
    pub simplified: bool,
}

/// The evaluator: `evidence` applied to the current step, then a replan
/// when a step blocked (a smaller step first) or, when the last reply was
/// paced ACCELERATE, when a step completed (a later check or practice is
/// skipped),
/// within the plan's replan budget; then the step to work on next is
/// started. `turn` numbers the replan record.
pub fn evaluate(
    plan: &StudyPlan,
    evidence: StepEvidence,
    pacing: Option<PacingDirective>,
    settings: &TeachMeMode,
    turn: u32,
) -> Evaluated {
    let mut plan = plan.clone();
    let was_complete = is_complete(&plan);
    let mut decision = PlanDecision::Continue;
    let mut simplified = false;
    if let Some(i) = current(&plan)
        && plan.steps[i].status == StepStatus::InProgress
    {
        let status = record(&mut plan.steps[i], evidence, settings);
        match status {
            StepStatus::Completed => {
                decision = PlanDecision::Advance;
                if pacing == Some(PacingDirective::Accelerate)
                    && plan.replan_count < plan.max_replans
                    && let Some(reason) = skip_ahead(&mut plan, i)
                {
                    decision = PlanDecision::Replan(reason);
                }
            }
            StepStatus::Blocked if plan.replan_count < plan.max_replans => {
                let reason = simplify(&mut plan, i);
                decision = PlanDecision::Replan(reason);
                simplified = true;
            }
            _ => {}
        }
        if let PlanDecision::Replan(reason) = &decision {
            plan.replan_count += 1;
            plan.plan_version += 1;
            plan.replans.push(ReplanRecord {
                turn,
                reason: reason.clone(),
            });
        }
    }
    if let Some(next) = current(&plan) {
        plan.steps[next].status = StepStatus::InProgress;
    }
    let completed_now = !was_complete && is_complete(&plan);
    Evaluated {
        plan,
        decision,
        completed_now,
        simplified,
    }
}

/// One message's effect on a step in progress; returns its new status.
/// An explain step completes when the student takes part after being
/// taught it, and never blocks: a wrong answer then is about an earlier
/// question, not the idea being explained. A check or practice step
/// completes when enough graded answers are right and blocks after too
/// many wrong ones.
pub fn record(step: &mut PlanStep, evidence: StepEvidence, settings: &TeachMeMode) -> StepStatus {
    let p = &mut step.progress;
    if step.kind == StepKind::Explain {
        let done = p.taught && matches!(evidence, StepEvidence::Correct | StepEvidence::Engaged);
        step.status = if done {
            StepStatus::Completed
        } else {
            StepStatus::InProgress
        };
        return step.status;
    }
    match evidence {
        StepEvidence::Correct => {
            p.attempts += 1;
            p.questions_correct += 1;
        }
        StepEvidence::Wrong => p.attempts += 1,
        StepEvidence::Stuck | StepEvidence::Engaged | StepEvidence::Nothing => {}
    }
    let failures = p.attempts.saturating_sub(p.questions_correct);
    step.status = if p.questions_correct >= settings.step_correct_to_complete.max(1) {
        StepStatus::Completed
    } else if failures >= settings.step_failures_to_block.max(1) {
        StepStatus::Blocked
    } else {
        StepStatus::InProgress
    };
    step.status
}

/// The struggling replan: completed steps stay, and the blocked step is
/// tried again from scratch after a smaller explain step on its concept
/// (unless a replan already put one right before it). To keep the plan within its
/// limit a later pending step gives way, never the last one; if none can,
/// the step is retried without the smaller one.
fn simplify(plan: &mut StudyPlan, blocked: usize) -> String {
    let concept = plan.steps[blocked].concept.clone();
    let title = plan.steps[blocked].title.clone();
    let retry = &mut plan.steps[blocked];
    retry.status = StepStatus::Pending;
    retry.progress = StepProgress::default();
    let explained_before = blocked > 0
        && is_smaller_step(&plan.steps[blocked - 1])
        && plan.steps[blocked - 1].concept == concept;
    if explained_before {
        return format!("\"{title}\" was tricky: it starts again");
    }
    if plan.steps.len() == MAX_STEPS {
        let last = plan.steps.len() - 1;
        let Some(gives_way) = (blocked + 1..last)
            .rev()
            .find(|&j| plan.steps[j].status == StepStatus::Pending)
        else {
            return format!("\"{title}\" was tricky: it starts again");
        };
        plan.steps.remove(gives_way);
    }
    let smaller = step(
        format!("s{}{SMALLER}{}", blocked + 1, plan.replan_count + 1),
        &StepDraft {
            title: format!("One small idea: {concept}"),
            kind: StepKind::Explain,
            concept: concept.clone(),
            success_criteria: None,
        },
    );
    plan.steps.insert(blocked, smaller);
    format!("\"{title}\" was tricky: a smaller step on {concept} comes first")
}

/// Marks the ids of the steps a struggling replan inserts.
const SMALLER: char = 'r';

fn is_smaller_step(step: &PlanStep) -> bool {
    step.step_id.contains(SMALLER)
}

/// The excelling replan: the next pending check or practice step after
/// `done` is marked completed without being worked. The plan's last step
/// is skipped only when it comes right after `done`: a student racing
/// through the second-to-last step goes on to the extension's harder
/// questions, but one with an idea still to learn ends on practice.
fn skip_ahead(plan: &mut StudyPlan, done: usize) -> Option<String> {
    let last = plan.steps.len() - 1;
    let skip = (done + 1..=last).find(|&j| {
        plan.steps[j].status == StepStatus::Pending
            && matches!(plan.steps[j].kind, StepKind::Check | StepKind::Practice)
            && (j < last || j == done + 1)
    })?;
    plan.steps[skip].status = StepStatus::Completed;
    Some(format!(
        "racing ahead: \"{}\" skipped",
        plan.steps[skip].title
    ))
}

/// Content words of a unit: its title, anchor, tags and key ideas.
fn unit_words(unit: &Unit) -> BTreeSet<String> {
    let mut all = words(&unit.title);
    all.extend(words(&unit.anchor));
    for t in &unit.tags {
        all.extend(words(t));
    }
    for k in &unit.key_ideas {
        all.extend(words(k));
    }
    all
}

/// Lowercased words of four letters or more, with a plural `s` or an
/// `-ing` dropped: enough to tell a concept of the unit from one of another
/// topic, and carrying from borrowing.
pub(crate) fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(|w| {
            let w = w.to_lowercase();
            let w = w.strip_suffix('s').map(str::to_owned).unwrap_or(w);
            match w.strip_suffix("ing") {
                Some(stem) if stem.chars().count() >= 4 => stem.to_owned(),
                _ => w,
            }
        })
        .collect()
}

/// The positions in `skills` (each blueprint's domain and skill statement)
/// that share the most words with a step's `topic`: the items a step asks
/// are about what it teaches. Every position when none shares a word.
pub fn closest_skills(topic: &str, skills: &[String]) -> Vec<usize> {
    let topic = words(topic);
    let scores: Vec<usize> = skills
        .iter()
        .map(|s| words(s).intersection(&topic).count())
        .collect();
    let best = scores.iter().copied().max().unwrap_or(0);
    (0..skills.len())
        .filter(|&i| best == 0 || scores[i] == best)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn settings() -> TeachMeMode {
        TeachMeMode::default()
    }

    fn unit() -> Unit {
        serde_yaml::from_str(
            "id: ratios\ntitle: Ratios\nanchor: Sharing an amount in a ratio\n\
             tags: [ratio]\nkey_ideas: [A ratio compares amounts, Simplify a ratio by dividing]\n\
             chunks: []\n",
        )
        .unwrap()
    }

    fn plan_of(kinds: &[StepKind]) -> StudyPlan {
        let drafts: Vec<StepDraft> = kinds
            .iter()
            .map(|&kind| StepDraft {
                title: format!("{kind:?}"),
                kind,
                concept: "ratio".into(),
                success_criteria: None,
            })
            .collect();
        from_drafts(&drafts, &unit(), &settings())
    }

    /// The first step begun, and every explain step's idea taught.
    fn started(kinds: &[StepKind]) -> StudyPlan {
        let mut plan = evaluate(&plan_of(kinds), StepEvidence::Nothing, None, &settings(), 1).plan;
        for s in &mut plan.steps {
            s.progress.taught = true;
        }
        plan
    }

    use StepKind::{Check, Explain, Practice};

    #[test]
    fn the_first_message_starts_the_first_step_without_judging_it() {
        let plan = plan_of(&[Explain, Check, Practice]);
        assert_eq!(current(&plan), Some(0));
        let e = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 1);
        assert_eq!(e.plan.steps[0].status, StepStatus::InProgress);
        assert_eq!(e.decision, PlanDecision::Continue);
    }

    #[test]
    fn an_explain_step_completes_when_the_student_takes_part_and_the_next_starts() {
        let e = evaluate(
            &started(&[Explain, Check, Practice]),
            StepEvidence::Engaged,
            None,
            &settings(),
            2,
        );
        assert_eq!(e.decision, PlanDecision::Advance);
        assert_eq!(e.plan.steps[0].status, StepStatus::Completed);
        assert_eq!(e.plan.steps[1].status, StepStatus::InProgress);
        assert_eq!(current(&e.plan), Some(1));
    }

    #[test]
    fn a_stuck_student_stays_on_an_explain_step() {
        let e = evaluate(
            &started(&[Explain, Check, Practice]),
            StepEvidence::Stuck,
            None,
            &settings(),
            2,
        );
        assert_eq!(e.decision, PlanDecision::Continue);
        assert_eq!(e.plan.steps[0].status, StepStatus::InProgress);
    }

    #[test]
    fn a_check_step_needs_the_configured_number_of_right_answers() {
        let mut plan = started(&[Check, Explain, Practice]);
        for _ in 1..settings().step_correct_to_complete {
            plan = evaluate(&plan, StepEvidence::Correct, None, &settings(), 2).plan;
            assert_eq!(plan.steps[0].status, StepStatus::InProgress);
        }
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 3).plan;
        assert_eq!(
            plan.steps[0].status,
            StepStatus::InProgress,
            "talk is not an answer"
        );
        let e = evaluate(&plan, StepEvidence::Correct, None, &settings(), 4);
        assert_eq!(e.decision, PlanDecision::Advance);
        assert_eq!(e.plan.steps[0].progress.questions_correct, 2);
    }

    #[test]
    fn repeated_failures_block_the_step_and_replan_with_a_smaller_step() {
        let mut plan = started(&[Explain, Check, Practice]);
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 2).plan;
        for _ in 1..settings().step_failures_to_block {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 3).plan;
        }
        let e = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 5);
        assert!(matches!(e.decision, PlanDecision::Replan(_)));
        assert_eq!(e.plan.replan_count, 1);
        assert_eq!(e.plan.replans[0].turn, 5);
        let kinds: Vec<StepKind> = e.plan.steps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [Explain, Explain, Check, Practice]);
        assert_eq!(e.plan.steps[0].status, StepStatus::Completed, "kept");
        assert_eq!(
            e.plan.steps[1].status,
            StepStatus::InProgress,
            "the smaller step"
        );
        assert_eq!(e.plan.steps[2].status, StepStatus::Pending, "tried again");
        assert_eq!(e.plan.steps[2].progress, StepProgress::default());
    }

    #[test]
    fn an_explain_step_waits_to_be_taught_and_never_blocks() {
        let mut plan = evaluate(
            &plan_of(&[Explain, Check, Practice]),
            StepEvidence::Nothing,
            None,
            &settings(),
            1,
        )
        .plan;
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 2).plan;
        assert_eq!(
            plan.steps[0].status,
            StepStatus::InProgress,
            "not taught yet"
        );
        plan.steps[0].progress.taught = true;
        for turn in 3..10 {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), turn).plan;
        }
        assert_eq!(plan.steps[0].status, StepStatus::InProgress);
        assert_eq!(plan.replan_count, 0);
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 10).plan;
        assert_eq!(plan.steps[0].status, StepStatus::Completed);
    }

    #[test]
    fn a_step_blocked_again_is_retried_without_a_second_smaller_step() {
        let mut plan = started(&[Check, Practice, Practice]);
        let block = |mut plan: StudyPlan| {
            for _ in 0..settings().step_failures_to_block {
                plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
            }
            plan
        };
        plan = block(plan);
        assert_eq!(plan.steps.len(), 4);
        plan.steps[0].progress.taught = true;
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 3).plan;
        assert_eq!(plan.steps[1].status, StepStatus::InProgress);
        plan = block(plan);
        assert_eq!(plan.replan_count, 2);
        assert_eq!(plan.steps.len(), 4, "no second smaller step");
        assert_eq!(plan.steps[1].status, StepStatus::InProgress, "tried again");
    }

    #[test]
    fn a_full_plan_makes_room_but_keeps_its_last_step() {
        let mut plan = started(&[Check, Check, Check, Explain, Practice]);
        for _ in 0..settings().step_failures_to_block {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
        }
        let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [Explain, Check, Check, Check, Practice]);

        let mut plan = started(&[Explain, Explain, Explain, Check, Practice]);
        for turn in 2..5 {
            plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), turn).plan;
        }
        for _ in 0..settings().step_failures_to_block {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 6).plan;
        }
        let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [Explain, Explain, Explain, Check, Practice],
            "no room: retried"
        );
        assert_eq!(plan.replan_count, 1);
    }

    #[test]
    fn once_the_replans_are_used_a_blocked_step_stays_blocked_and_the_lesson_moves_on() {
        let mut plan = started(&[Check, Check, Practice]);
        plan.replan_count = plan.max_replans;
        for _ in 0..settings().step_failures_to_block {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
        }
        assert_eq!(plan.steps[0].status, StepStatus::Blocked);
        assert_eq!(plan.steps[1].status, StepStatus::InProgress);
        assert_eq!(plan.replan_count, plan.max_replans);
    }

    #[test]
    fn accelerate_skips_a_later_check_or_practice_and_the_last_only_when_next() {
        let mut plan = started(&[Check, Explain, Practice, Practice]);
        plan.steps[0].progress.questions_correct = 1;
        plan.steps[0].progress.attempts = 1;
        let e = evaluate(
            &plan,
            StepEvidence::Correct,
            Some(PacingDirective::Accelerate),
            &settings(),
            3,
        );
        assert!(matches!(e.decision, PlanDecision::Replan(ref r) if r.contains("skipped")));
        assert_eq!(
            e.plan.steps[1].status,
            StepStatus::InProgress,
            "taught this turn"
        );
        assert_eq!(e.plan.steps[2].status, StepStatus::Completed, "skipped");
        assert_eq!(e.plan.steps[2].progress.attempts, 0);
        assert_eq!(e.plan.steps[3].status, StepStatus::Pending);

        let mut short = started(&[Check, Explain, Practice]);
        short.steps[0].progress.questions_correct = 1;
        let e = evaluate(
            &short,
            StepEvidence::Correct,
            Some(PacingDirective::Accelerate),
            &settings(),
            3,
        );
        assert_eq!(
            e.decision,
            PlanDecision::Advance,
            "only the last practice is left"
        );

        let mut ending = started(&[Explain, Check, Practice]);
        ending.steps[0].status = StepStatus::Completed;
        ending.steps[1].status = StepStatus::InProgress;
        ending.steps[1].progress.questions_correct = 1;
        ending.steps[1].progress.attempts = 1;
        let e = evaluate(
            &ending,
            StepEvidence::Correct,
            Some(PacingDirective::Accelerate),
            &settings(),
            6,
        );
        assert!(matches!(e.decision, PlanDecision::Replan(ref r) if r.contains("skipped")));
        assert_eq!(e.plan.steps[2].status, StepStatus::Completed, "skipped");
        assert!(e.completed_now, "the lesson goes on to its extension");
        let steady = evaluate(&ending, StepEvidence::Correct, None, &settings(), 6);
        assert_eq!(
            steady.decision,
            PlanDecision::Advance,
            "no skip without ACCELERATE"
        );
    }

    #[test]
    fn a_step_asks_from_the_blueprints_about_its_topic() {
        let skills = [
            "Arithmetic > Addition: add two 2-digit numbers, carrying where needed".to_owned(),
            "Arithmetic > Subtraction: subtract whole numbers, borrowing where needed".to_owned(),
        ];
        assert_eq!(closest_skills("Adding with carrying", &skills), [0]);
        assert_eq!(
            closest_skills("column subtraction with borrowing", &skills),
            [1]
        );
        assert_eq!(
            closest_skills("place value", &skills),
            [0, 1],
            "no match: any"
        );
        assert_eq!(closest_skills("needed", &skills), [0, 1], "a tie: either");
    }

    #[test]
    fn completing_the_last_step_completes_the_plan_once() {
        let mut plan = started(&[Explain, Explain, Explain]);
        for turn in 2..=3 {
            plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), turn).plan;
        }
        let e = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 4);
        assert!(e.completed_now);
        assert!(is_complete(&e.plan));
        let after = evaluate(&e.plan, StepEvidence::Engaged, None, &settings(), 5);
        assert!(!after.completed_now);
        assert_eq!(after.decision, PlanDecision::Continue);
    }

    #[test]
    fn drafts_are_checked_for_size_and_for_concepts_of_the_unit() {
        let ok = |concept: &str| StepDraft {
            title: "t".into(),
            kind: Explain,
            concept: concept.into(),
            success_criteria: None,
        };
        let unit = unit();
        assert!(check_drafts(&[ok("ratios"), ok("simplify"), ok("amounts")], &unit).is_ok());
        assert!(check_drafts(&[ok("ratios"), ok("ratios")], &unit).is_err());
        assert!(check_drafts(&vec![ok("ratios"); 6], &unit).is_err());
        let err =
            check_drafts(&[ok("ratios"), ok("photosynthesis"), ok("ratio")], &unit).unwrap_err();
        assert_eq!((err.step, err.field), (Some(1), "concept"));
        assert!(err.to_string().contains("photosynthesis"), "{err}");
    }

    #[test]
    fn the_default_plan_walks_the_key_ideas_and_keeps_the_bounds() {
        let mut s = settings();
        let drafts = default_drafts(&unit(), &s);
        let kinds: Vec<StepKind> = drafts.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, s.default_plan);
        assert_eq!(drafts[0].concept, "A ratio compares amounts");
        assert_eq!(drafts[2].concept, "Simplify a ratio by dividing");
        assert!(check_drafts(&drafts, &unit()).is_ok());
        s.default_plan = vec![Explain];
        assert_eq!(default_drafts(&unit(), &s).len(), MIN_STEPS);
        s.default_plan = vec![Check; 9];
        assert_eq!(default_drafts(&unit(), &s).len(), MAX_STEPS);
    }

    fn kind() -> impl Strategy<Value = StepKind> {
        prop_oneof![Just(Explain), Just(Check), Just(Practice)]
    }

    fn evidence() -> impl Strategy<Value = StepEvidence> {
        prop_oneof![
            Just(StepEvidence::Correct),
            Just(StepEvidence::Wrong),
            Just(StepEvidence::Stuck),
            Just(StepEvidence::Engaged),
            Just(StepEvidence::Nothing),
        ]
    }

    fn pacing() -> impl Strategy<Value = Option<PacingDirective>> {
        prop_oneof![
            Just(None),
            Just(Some(PacingDirective::Accelerate)),
            Just(Some(PacingDirective::Simplify)),
        ]
    }

    proptest! {
        #[test]
        fn plans_keep_their_bounds_and_their_current_step(
            kinds in proptest::collection::vec(kind(), MIN_STEPS..=MAX_STEPS),
            messages in proptest::collection::vec((evidence(), pacing(), any::<bool>()), 0..60),
        ) {
            let mut plan = plan_of(&kinds);
            for (turn, (e, p, teach)) in messages.into_iter().enumerate() {
                let before = plan.clone();
                let out = evaluate(&plan, e, p, &settings(), turn as u32);
                plan = out.plan;
                // The reply may teach the step it works on.
                if teach && let Some(i) = current(&plan) {
                    plan.steps[i].progress.taught = true;
                }
                prop_assert!((MIN_STEPS..=MAX_STEPS).contains(&plan.steps.len()));
                prop_assert!(plan.replan_count <= plan.max_replans);
                prop_assert_eq!(plan.replans.len() as u32, plan.replan_count);
                // Completed steps stay completed, in order.
                let done = |p: &StudyPlan| p.steps.iter()
                    .filter(|s| s.status == StepStatus::Completed)
                    .map(|s| s.step_id.clone()).collect::<Vec<_>>();
                let kept: Vec<String> = done(&plan);
                for id in done(&before) {
                    prop_assert!(kept.contains(&id));
                }
                // At most one step in progress, and it is the current one:
                // the first that is neither completed nor blocked.
                let open: Vec<usize> = plan.steps.iter().enumerate()
                    .filter(|(_, s)| matches!(s.status, StepStatus::Pending | StepStatus::InProgress))
                    .map(|(i, _)| i).collect();
                prop_assert_eq!(current(&plan), open.first().copied());
                let in_progress = plan.steps.iter()
                    .filter(|s| s.status == StepStatus::InProgress).count();
                prop_assert_eq!(in_progress, usize::from(!open.is_empty()));
                prop_assert_eq!(out.completed_now, !is_complete(&before) && is_complete(&plan));
            }
        }
    }
}
