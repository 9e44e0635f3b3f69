//! The problem_set mode: a session of a few problems worked
//! through in order, each with the guided routing (scaffolding when stuck,
//! teach-back after a right answer), and a progression decision after
//! every turn.
//!
//! - `start` sets up the problems (the caller's, or one of the course's
//!   sets) and makes the first one the pending question.
//! - `plan` reads the message as evidence about the current problem and
//!   decides, before the tutor is asked, whether the session moves on: a
//!   reply that finishes a problem answers as the workflow's solved (or
//!   skipped) category, since the next problem follows it. The history is
//!   cut by the hybrid memory (docs/architecture.md, problem_set): the
//!   current problem in full, a few turns of the problems before it.
//! - `apply` records the problem's progress and carries out the decision:
//!   the next problem (or the end of the set, with its report) is added to
//!   the same reply, a teacher alert raised when the student is stuck, a
//!   skip offered after a long time on one problem.
//!
//! The mastery signals and progression rules are [`decide`], pure and
//! table-tested, in `rules`; the report the session ends with is in
//! `report`.

mod report;
mod rules;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::content::workflow::ProblemSetMode;
use crate::content::{Course, Workflow};
use crate::engine::grading;
use crate::engine::modes::teach_me::with_completion;
use crate::engine::modes::{
    Ended, Ending, Expired, MemoryCut, ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start,
    StartError, Started, welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::session::scaffolding;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{
    ExamAvailability, ExpectedAnswer, LlmTutorResponse, Mode, ModeState, OutboundEvent,
    OutboundEventKind, PendingQuestion, ProblemBrief, ProblemEntry, ProblemProgress,
    ProblemSetReport, ProblemSetState, ProblemStatus, ProgressionAction, QuestionPhase, Role,
    SessionEnd, SessionState, Thread, ThreadStatus, TutorAction, WebhookProblem,
};

pub use self::report::{end_session, report, session_completed};
pub use self::rules::{ProblemDecision, TurnFacts, decide};
use self::rules::{facts, record};

/// The problem_set mode.
pub struct ProblemSet;

/// A mapped unit below this confidence does not scope a problem.
const UNIT_CONFIDENCE: f64 = 0.3;

impl SessionMode for ProblemSet {
    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        let settings = &start.workflow.modes.problem_set;
        let mut state = initial_state(start)?;
        let mut session = SessionState::default();
        let total = state.problems.len();
        let first = begin_problem(&mut state, &mut session, 0, start.now)
            .ok_or_else(|| StartError("the problem set has no problems".into()))?;
        let intro = render(
            start.bundle,
            &settings.next_problem_prompt,
            &next_values(1, total, &first),
        )?;
        session.mode_state = ModeState::ProblemSet(state);
        Ok(Started {
            session,
            welcome: format!("{}\n\n{intro}", welcome(start, Mode::ProblemSet)?),
        })
    }

    /// A student who ends the session (`POST /threads/{id}/end`) ends the
    /// set where it is: the report of what was done, sent as
    /// `session.completed` as a finished set's is.
    fn end(&self, ending: &mut Ending<'_>) -> Ended {
        let Some(mut state) = state_of(&ending.thread.session).cloned() else {
            return Ended::default();
        };
        if state.ended.is_some() {
            return Ended::default();
        }
        let report = close(ending.thread, &mut state, ending.course, ending.now);
        Ended {
            text: Some(format!(
                "This problem set is over. You finished {} of {} problems.",
                report.problems_completed, report.problems_total
            )),
            events: vec![session_completed(&report)],
        }
    }

    /// Time paused is not time on the problem: the problem under way
    /// started that much later, for the skip offer and the report.
    fn resumed(&self, thread: &mut Thread, paused_for: chrono::Duration) {
        let ModeState::ProblemSet(state) = &mut thread.session.mode_state else {
            return;
        };
        for progress in state.problems.iter_mut().map(|p| &mut p.progress) {
            if progress.finished_at.is_none()
                && let Some(started) = progress.started_at.as_mut()
            {
                *started = started.checked_add_signed(paused_for).unwrap_or(*started);
            }
        }
    }

    fn idle_limit(&self, workflow: &Workflow) -> Option<chrono::Duration> {
        Some(chrono::Duration::minutes(i64::from(
            workflow.modes.problem_set.session_ttl_minutes,
        )))
    }

    /// A session left without a message past `session_ttl_minutes` ends as
    /// abandoned, with the report of what was done.
    fn expire(
        &self,
        thread: &mut Thread,
        course: &Course,
        workflow: &Workflow,
        now: DateTime<Utc>,
    ) -> Option<Expired> {
        let settings = &workflow.modes.problem_set;
        let mut state = state_of(&thread.session)?.clone();
        if state.ended.is_some()
            || thread.status == ThreadStatus::Completed
            || !ProblemSet::expired(settings, thread.updated_at, now)
        {
            return None;
        }
        let report = close(thread, &mut state, course, now);
        thread.updated_at = now;
        let notice = format!(
            "This problem set was closed after {} minutes without a message. You finished {} of {} problems.",
            settings.session_ttl_minutes, report.problems_completed, report.problems_total
        );
        Some(Expired {
            notice,
            events: vec![session_completed(&report)],
        })
    }

    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        _event: &TurnEvent,
        read: &Interpreted,
        mut policy: PolicyOutcome,
    ) -> ModePlan {
        let session = &turn.state.thread.session;
        let workflow = turn.rt.workflow();
        let settings = &workflow.modes.problem_set;
        let p = &mut policy.policy;
        // The problem is the question: no drills or exam questions beside it.
        p.prereq_blocking_unit_id = None;
        p.exam_ready = false;
        p.exam_availability = ExamAvailability::None;
        p.exam_next_eligible_at = None;
        policy.exam.available_question_ids.clear();
        let p = &mut policy.policy;
        let Some(state) = state_of(session) else {
            p.allowed_actions = vec![TutorAction::SocraticQuestion];
            return plain(policy);
        };
        let Some(index) = current(state) else {
            // The set is over: answer what is said, set nothing new.
            p.allowed_actions = vec![TutorAction::SocraticQuestion];
            p.stuck = false;
            return plain(policy);
        };
        let entry = &state.problems[index];
        if let Some(unit) = problem_unit(turn, entry) {
            p.focus_unit_id = unit.clone();
            p.primary_target_unit_id = unit.clone();
            p.scoped_unit_ids = vec![unit];
        }
        let facts = facts(
            workflow,
            session,
            entry,
            &read.category,
            read.interpretation
                .as_ref()
                .map(|i| i.classification.intent),
            read.interpretation
                .as_ref()
                .and_then(|i| i.grade.as_ref())
                .map(|g| g.result),
            turn.env.now,
        );
        let decision = decide(&entry.progress, &facts, settings);
        // The idea's card the first time they are stuck; after that, smaller steps.
        let mut actions = vec![TutorAction::SocraticQuestion];
        if facts.stuck && entry.progress.scaffold_depth == 0 {
            actions.push(TutorAction::ConceptCard);
        }
        p.allowed_actions = actions;
        p.stuck = facts.stuck;
        let category = match decision.action {
            // Solved earlier: this message replied to the teach-back.
            ProgressionAction::Advance if entry.progress.solved => {
                Some(settings.explained_category.clone())
            }
            ProgressionAction::Advance => Some(settings.solved_category.clone()),
            ProgressionAction::Skip => Some(settings.skipped_category.clone()),
            ProgressionAction::Continue | ProgressionAction::Intervene => None,
        };
        let finishing = category.is_some();
        ModePlan {
            policy,
            practice: None,
            block: ModeBlock {
                plan_complete: false,
                lesson: None,
                problem: Some(ProblemBrief {
                    number: index as u32 + 1,
                    total: state.problems.len() as u32,
                    text: entry.text.clone(),
                    hint: (!finishing && facts.hint_due(&entry.progress))
                        .then(|| next_hint(entry))
                        .flatten(),
                    earlier_messages: 0,
                    finishing,
                }),
                memory: state.problem_turn.as_ref().map(|t| MemoryCut {
                    boundary_turn: t.clone(),
                    keep_previous: settings.memory_turns_kept as usize * 2,
                }),
                clarify: None,
            },
            category,
            judging: None,
            reply: None,
        }
    }

    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        _reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    ) {
        let before = &turn.state.thread.session;
        let Some(mut state) = state_of(before).cloned() else {
            return;
        };
        let Some(index) = current(&state) else {
            // Nothing to work on: the set is over, or waits for a problem.
            state.last_action = ProgressionAction::Continue;
            outcome.thread.session.mode_state = ModeState::ProblemSet(state);
            return;
        };
        let workflow = turn.rt.workflow();
        let settings = &workflow.modes.problem_set;
        let now = turn.env.now;
        // The reading the plan decided on, before a finishing reply's category.
        let read_category = match &plan.interpretation {
            Some(i) if plan.category != i.classification.category => {
                if [
                    &settings.solved_category,
                    &settings.explained_category,
                    &settings.skipped_category,
                ]
                .contains(&&plan.category)
                {
                    i.classification.category.clone()
                } else {
                    plan.category.clone()
                }
            }
            _ => plan.category.clone(),
        };
        let facts = facts(
            workflow,
            before,
            &state.problems[index],
            &read_category,
            plan.interpretation
                .as_ref()
                .map(|i| i.classification.intent),
            plan.interpretation
                .as_ref()
                .and_then(|i| i.grade.as_ref())
                .map(|g| g.result),
            now,
        );
        let decision = decide(&state.problems[index].progress, &facts, settings);
        let hint = plan.input.problem.as_ref().and_then(|p| p.hint.clone());
        record(
            &mut state.problems[index].progress,
            &facts,
            &decision,
            &read_category,
            hint.is_some(),
            now,
        );
        state.last_action = decision.action;

        let bundle = &turn.rt.bundle;
        let total = state.problems.len();
        // The hint goes before the reply's closing question, which stays last.
        if let Some(hint) = hint
            && let Some(last) = outcome
                .messages
                .iter_mut()
                .rev()
                .find(|m| m.role == Role::Assistant)
        {
            last.text = with_completion(&last.text, &format!("Hint: {hint}"));
        }
        let mut added: Vec<String> = Vec::new();
        // A session an integration started has had no welcome: its first
        // reply puts the problem in front of the student.
        let unseen = turn.state.history.is_empty() && !state.open;
        if unseen
            && matches!(
                decision.action,
                ProgressionAction::Continue | ProgressionAction::Intervene
            )
        {
            added.extend(
                render(
                    bundle,
                    &settings.next_problem_prompt,
                    &next_values(index + 1, total, &state.problems[index]),
                )
                .ok(),
            );
        }
        let session = &mut outcome.thread.session;
        match decision.action {
            ProgressionAction::Intervene => {
                let entry = &mut state.problems[index];
                let progress = &mut entry.progress;
                progress.intervened = true;
                progress.skip_offered = true;
                added.extend(render(bundle, &settings.intervene_prompt, &BTreeMap::new()).ok());
                outcome.events.push(OutboundEvent {
                    kind: OutboundEventKind::InterventionNeeded,
                    data: json!({
                        "reason": "stuck",
                        "problemId": entry.problem_id,
                        "problemIndex": index,
                        "signal": progress.signal,
                        "attempts": progress.attempts,
                        "scaffoldDepth": progress.scaffold_depth,
                    }),
                });
            }
            ProgressionAction::Continue if decision.offer_skip => {
                state.problems[index].progress.skip_offered = true;
                added.extend(render(bundle, &settings.skip_offer_prompt, &BTreeMap::new()).ok());
            }
            ProgressionAction::Continue => {}
            ProgressionAction::Advance | ProgressionAction::Skip => {
                let entry = &mut state.problems[index];
                entry.status = if decision.action == ProgressionAction::Skip {
                    ProblemStatus::Skipped
                } else {
                    ProblemStatus::Completed
                };
                entry.progress.finished_at = Some(now);
                let finished = json!({
                    "problemId": entry.problem_id,
                    "problemIndex": index,
                    "status": entry.status,
                    "signal": entry.progress.signal,
                    "attempts": entry.progress.attempts,
                    "hintsUsed": entry.progress.hints_used,
                });
                // The problem is no longer pending, whatever the reply asked.
                session.pending_question = None;
                session.scaffolding = Default::default();
                session.teach_back = Default::default();
                // The integration hears of every move on: the problem
                // finished, and the one now current if there is one.
                let advanced = |next_problem_id: Option<&str>, current: usize, remaining: usize| {
                    OutboundEvent {
                        kind: OutboundEventKind::ProblemAdvanced,
                        data: json!({
                            "finished": finished,
                            "action": decision.action,
                            "nextProblemId": next_problem_id,
                            "currentProblemIndex": current,
                            "problemsRemaining": remaining,
                        }),
                    }
                };
                match begin_problem(&mut state, session, index + 1, now) {
                    Some(next) => {
                        state.problem_turn = Some(turn.env.turn_id.to_owned());
                        added.extend(
                            render(
                                bundle,
                                &settings.next_problem_prompt,
                                &next_values(index + 2, total, &next),
                            )
                            .ok(),
                        );
                        outcome.events.push(advanced(
                            Some(&next.problem_id),
                            index + 1,
                            total - index - 1,
                        ));
                    }
                    None if state.open => {
                        // The integration sends the next problem.
                        state.current_index = total as u32;
                        outcome.events.push(advanced(None, total, 0));
                    }
                    None => {
                        let report = end_session(&mut state, SessionEnd::Completed, now, |u| {
                            turn.rt.course().unit(u).map(|u| u.title.clone())
                        });
                        outcome.thread.status = ThreadStatus::Completed;
                        added.extend(completion_text(turn, &report));
                        outcome.events.push(advanced(None, total, 0));
                        outcome.events.push(session_completed(&report));
                    }
                }
            }
        }
        // A message that cleared the problem without finishing it (a
        // request, a change of topic) leaves it pending all the same.
        let entry = &state.problems[index];
        let unfinished = entry.status == ProblemStatus::InProgress && !entry.progress.solved;
        if unfinished
            && session
                .pending_question
                .as_ref()
                .is_none_or(|q| q.expected.is_none())
        {
            session.pending_question = Some(problem_question(entry, now));
        }
        session.mode_state = ModeState::ProblemSet(state);
        if !added.is_empty()
            && let Some(last) = outcome
                .messages
                .iter_mut()
                .rev()
                .find(|m| m.role == Role::Assistant)
        {
            last.text = format!("{}\n\n{}", last.text.trim_end(), added.join("\n\n"));
        }
    }
}

impl ProblemSet {
    /// Whether a session idle since `last_active` has expired at `now`.
    pub fn expired(
        settings: &ProblemSetMode,
        last_active: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> bool {
        now - last_active > chrono::Duration::minutes(i64::from(settings.session_ttl_minutes))
    }
}

/// Ends `thread`'s set where it is (completed when every problem is done,
/// else abandoned) and completes the thread; the session's report.
fn close(
    thread: &mut Thread,
    state: &mut ProblemSetState,
    course: &Course,
    now: DateTime<Utc>,
) -> ProblemSetReport {
    let all_done = state
        .problems
        .iter()
        .all(|p| matches!(p.status, ProblemStatus::Completed | ProblemStatus::Skipped));
    let end = if all_done {
        SessionEnd::Completed
    } else {
        SessionEnd::Abandoned
    };
    let report = end_session(state, end, now, |u| course.unit(u).map(|u| u.title.clone()));
    thread.session.mode_state = ModeState::ProblemSet(state.clone());
    thread.session.pending_question = None;
    thread.session.scaffolding = Default::default();
    thread.session.teach_back = Default::default();
    thread.status = ThreadStatus::Completed;
    report
}

/// A thread's problem set, if it runs one.
pub fn state_of(session: &SessionState) -> Option<&ProblemSetState> {
    match &session.mode_state {
        ModeState::ProblemSet(state) => Some(state),
        _ => None,
    }
}

/// The index of the problem being worked on; `None` once the set is over.
pub fn current(state: &ProblemSetState) -> Option<usize> {
    let i = state.current_index as usize;
    (state.ended.is_none() && i < state.problems.len()).then_some(i)
}

fn plain(policy: PolicyOutcome) -> ModePlan {
    ModePlan {
        policy,
        practice: None,
        block: ModeBlock::default(),
        category: None,
        judging: None,
        reply: None,
    }
}

/// The problems a new thread works through: the caller's, else the
/// course set asked for.
fn initial_state(start: &Start<'_>) -> Result<ProblemSetState, StartError> {
    let (set_id, title, problems) = match (start.problems, start.problem_set_id) {
        (Some(problems), _) => (
            None,
            None,
            problems
                .iter()
                .map(|p| {
                    entry(
                        &p.id,
                        &p.text,
                        &p.correct_answer,
                        p.unit_id.clone(),
                        &p.hints,
                    )
                })
                .collect(),
        ),
        (None, Some(id)) => {
            let set = start
                .course
                .problem_sets
                .iter()
                .find(|s| s.id == id)
                .ok_or_else(|| StartError(format!("problem set `{id}` is not in the course")))?;
            (
                Some(set.id.clone()),
                Some(set.title.clone()),
                set.problems
                    .iter()
                    .map(|p| entry(&p.id, &p.text, &p.answer, Some(p.unit.clone()), &p.steps))
                    .collect(),
            )
        }
        (None, None) => {
            let set = start
                .course
                .problem_sets
                .first()
                .ok_or_else(|| StartError("the course has no problem set".into()))?;
            (
                Some(set.id.clone()),
                Some(set.title.clone()),
                set.problems
                    .iter()
                    .map(|p| entry(&p.id, &p.text, &p.answer, Some(p.unit.clone()), &p.steps))
                    .collect(),
            )
        }
    };
    Ok(ProblemSetState {
        set_id,
        title,
        problems,
        started_at: Some(start.now),
        ..ProblemSetState::default()
    })
}

/// A session an integration starts with the problem it sent
/// (`current_problem` of the webhook).
pub fn from_webhook(
    problem: &WebhookProblem,
    session: &mut SessionState,
    now: DateTime<Utc>,
) -> ProblemSetState {
    let mut state = ProblemSetState {
        problems: vec![entry(
            &problem.id,
            &problem.text,
            &problem.correct_answer,
            None,
            &[],
        )],
        open: true,
        started_at: Some(now),
        ..ProblemSetState::default()
    };
    begin_problem(&mut state, session, 0, now);
    state
}

/// A problem an integration sends joins its session: a new id is added at
/// the end (and becomes the current problem when every earlier one is
/// done); one the session has already carries on as it is.
pub fn extend(
    state: &mut ProblemSetState,
    session: &mut SessionState,
    problem: &WebhookProblem,
    now: DateTime<Utc>,
) {
    if state.ended.is_some() || state.problems.iter().any(|p| p.problem_id == problem.id) {
        return;
    }
    let waiting = current(state).is_none();
    state.problems.push(entry(
        &problem.id,
        &problem.text,
        &problem.correct_answer,
        None,
        &[],
    ));
    if waiting {
        begin_problem(state, session, state.problems.len() - 1, now);
    }
}

/// A problem as the session keeps it: its answer checked by code.
pub fn entry(
    id: &str,
    text: &str,
    answer: &str,
    unit_id: Option<String>,
    hints: &[String],
) -> ProblemEntry {
    ProblemEntry {
        problem_id: id.to_owned(),
        text: text.trim().to_owned(),
        expected: ExpectedAnswer {
            kind: grading::infer_kind(answer, &[]),
            value: answer.trim().to_owned(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        },
        unit_id,
        hints: hints.to_vec(),
        status: ProblemStatus::Pending,
        progress: ProblemProgress::default(),
    }
}

/// Makes problem `index` the current one and its question the pending one,
/// with fresh attempts, scaffolding and teach-back. `None` past the last.
pub fn begin_problem(
    state: &mut ProblemSetState,
    session: &mut SessionState,
    index: usize,
    now: DateTime<Utc>,
) -> Option<ProblemEntry> {
    state.current_index = index as u32;
    let entry = state.problems.get_mut(index)?;
    entry.status = ProblemStatus::InProgress;
    entry.progress.started_at = Some(now);
    scaffolding::start_problem(session, problem_question(entry, now));
    Some(entry.clone())
}

fn problem_question(entry: &ProblemEntry, now: DateTime<Utc>) -> PendingQuestion {
    PendingQuestion {
        text: entry.text.clone(),
        expected: Some(entry.expected.clone()),
        unit_id: entry.unit_id.clone().unwrap_or_default(),
        concept: concept_of(entry),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: now,
        drill_token: None,
    }
}

fn concept_of(entry: &ProblemEntry) -> String {
    format!("problem {}", entry.problem_id)
}

/// The unit a problem practises: its own, else the one its words map to.
fn problem_unit(turn: &ModeTurn<'_>, entry: &ProblemEntry) -> Option<String> {
    let course = turn.rt.course();
    entry
        .unit_id
        .clone()
        .filter(|u| course.unit(u).is_some())
        .or_else(|| {
            turn.rt
                .index
                .map_message(&entry.text, 1)
                .into_iter()
                .find(|m| m.confidence >= UNIT_CONFIDENCE)
                .map(|m| m.unit_id)
        })
}

/// The problem's next authored hint, if any are left.
fn next_hint(entry: &ProblemEntry) -> Option<String> {
    entry
        .hints
        .get(entry.progress.hints_shown as usize)
        .cloned()
}

fn next_values(
    number: usize,
    total: usize,
    entry: &ProblemEntry,
) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        ("number", number.to_string()),
        ("total", total.to_string()),
        ("problem", entry.text.clone()),
    ])
}

fn render(
    bundle: &crate::content::Bundle,
    name: &str,
    values: &BTreeMap<&str, String>,
) -> Result<String, StartError> {
    let template = bundle
        .prompts
        .get(name)
        .ok_or_else(|| StartError(format!("prompt `{name}` missing")))?;
    template
        .render(values)
        .map(|t| t.trim().to_owned())
        .map_err(|e| StartError(e.to_string()))
}

/// The end of the set in words: the tally, and what to practise.
fn completion_text(turn: &ModeTurn<'_>, report: &ProblemSetReport) -> Option<String> {
    let settings = &turn.rt.workflow().modes.problem_set;
    let mut summary = format!(
        "You got {} of {} right first time",
        report.mastered, report.problems_total
    );
    if report.learned > 0 {
        summary.push_str(&format!(
            " and worked out {} more with some help",
            report.learned
        ));
    }
    if report.skipped > 0 {
        summary.push_str(&format!(", and skipped {}", report.skipped));
    }
    summary.push('.');
    let focus = if report.suggested_focus.is_empty() {
        String::new()
    } else {
        format!(
            " Next time, let's practise {}.",
            report
                .suggested_focus
                .iter()
                .map(|f| in_sentence(f))
                .collect::<Vec<_>>()
                .join(" and ")
        )
    };
    render(
        &turn.rt.bundle,
        &settings.complete_prompt,
        &BTreeMap::from([("summary", summary), ("focus", focus)]),
    )
    .ok()
}

/// A title as it reads inside a sentence: "Integer operations" becomes
/// "integer operations"; "BIDMAS rules" stays.
fn in_sentence(title: &str) -> String {
    let mut chars = title.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => {
            first.to_lowercase().chain(title.chars().skip(1)).collect()
        }
        _ => title.to_owned(),
    }
}

#[cfg(test)]
mod tests;
