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
mod tests;
