//! The turn after the LLM call: [`apply`] puts the decided reply into the
//! state (transitions, evidence, the ability estimate, the help given, the
//! reply's card and the question it leaves pending, the timeline).

use super::cards::{drill_card, exam_card};
use super::questions::{
    expected_of_question, last_question, settle_by_reading, track_student_problem,
    track_tutor_question,
};
use super::{Applied, ReplyOrigin, TurnError, mode_of};
use crate::content::Workflow;
use crate::content::workflow::{Category, Transition};
use crate::engine::exam;
use crate::engine::mastery::evidence::{self, DrillGraded, TransitionContext, record_ability};
use crate::engine::mastery::thread_learning;
use crate::engine::modes::{ModeTurn, Outcome};
use crate::engine::practice::drill_token;
use crate::engine::practice::item_help;
use crate::engine::runtime::CourseRuntime;
use crate::engine::safety::{ReplyContext, SafetyGate, SafetyHit};
use crate::engine::session::scaffolding;
use crate::engine::session::timeline;
use crate::engine::turn_data::{Plan, TurnEnv, TurnState};
use crate::model::{
    ConceptCard, GradeOutcome, LlmTutorResponse, MappedUnit, PendingQuestion, QuestionPhase, Role,
    SessionState, StudentSnapshot, Thread, ThreadLearning, ThreadStatus, TurnAnalysis, TutorAction,
    TutorCard, TutorMessage, WorkedExample,
};

/// Replay keys of graded drills kept per thread: tokens expire long before
/// this many more are issued in one conversation.
const GRADED_DRILLS_KEPT: usize = 200;

/// Grades kept for the pacing trend.
const RECENT_OUTCOMES_KEPT: usize = 12;

/// Steps 10 and 11: the decided reply applied to state read at one moment.
/// Pure; safe to run again on fresh state after a version conflict.
pub fn apply(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    plan: &Plan,
    reply: Option<(&LlmTutorResponse, ReplyOrigin)>,
    env: &TurnEnv<'_>,
) -> Result<Applied, TurnError> {
    let course = rt.course();
    let workflow = rt.workflow();
    let mut thread = state.thread.clone();
    let mut snapshot = state.snapshot.clone();
    let mut messages = Vec::new();
    if let Some(said) = plan.student_words() {
        messages.push(message(
            state.thread,
            env,
            "s",
            Role::Student,
            said.to_owned(),
            plan.input.student.message_latex.clone(),
            None,
        ));
    }
    let session = &mut thread.session;
    session.turn_count = session.turn_count.saturating_add(1);
    // This turn read them (modes read the state as it was before the turn).
    session.card_grades.clear();
    thread.updated_at = env.now;

    // The safety gate's words for a flagged message, counted in the
    // conversation (for its escalation) and the course (for the report).
    let safety = plan.safety.as_ref().map(|hit| {
        let said = rt.safety.reply(
            hit,
            session,
            ReplyContext {
                mode: state.thread.mode,
                region: env.safety_region,
            },
        );
        SafetyGate::record(hit, session, &mut snapshot);
        said
    });
    let paused = plan.safety.as_ref().is_some_and(SafetyHit::pauses_tutoring);
    let (Some((reply, origin)), false) = (reply, paused) else {
        let (text, mark) = match safety {
            Some(s) => (s.text, Some(s.mark)),
            None => (workflow.sanitize.fallback_text.clone(), None),
        };
        let mut said = message(state.thread, env, "a", Role::Assistant, text, None, None);
        said.safety = mark;
        messages.push(said);
        record_timeline(workflow, state, plan, None, env, &mut thread);
        return Ok(Applied {
            thread,
            snapshot,
            messages,
            drill_evidence: None,
            events: Vec::new(),
        });
    };

    // Evidence from a drill answered in the chat.
    let ctx = TransitionContext {
        course,
        workflow,
        now: env.now,
    };
    let mut drill_evidence = None;
    if let Some(d) = &plan.chat_drill {
        let first_attempt = d.first_attempt && !session.graded_drills.contains(&d.replay_key);
        let effect = evidence::apply_drill_graded(
            &mut snapshot,
            &ctx,
            &DrillGraded {
                unit_id: d.unit_id.clone(),
                correct: d.verdict.is_correct(),
                mistake_tag: d.verdict.mistake_tag.clone(),
                first_attempt,
            },
        )
        .ok();
        if first_attempt && let Some(difficulty) = d.difficulty {
            record_ability(
                &mut snapshot,
                workflow,
                &d.unit_id,
                difficulty,
                d.verdict.is_correct(),
            );
        }
        remember_drill(session, &d.replay_key);
        drill_evidence = effect;
    }

    // The category's transitions (question lifecycle, scaffolding, teach-back).
    if let Some(c) = workflow.category(&plan.category) {
        scaffolding::apply_category(
            session,
            c,
            scaffolding::ScaffoldingContext {
                answer: plan.said.as_deref(),
            },
        );
        if c.transitions.contains(&Transition::RetractGuess) {
            evidence::retract_guess(&mut snapshot, &plan.policy.policy.focus_unit_id);
        }
        if reply.action == TutorAction::SocraticQuestion {
            record_help_given(session, c, &plan.item_help);
        }
        if plan.chat_drill.is_none() && c.asks_for_help() {
            hint_before_answer(session, &mut snapshot, &ctx, state.thread, env);
        }
    }
    if origin == ReplyOrigin::Llm {
        settle_by_reading(
            session,
            state.thread.session.pending_question.as_ref(),
            plan,
            reply,
            course,
        );
    }
    track_student_problem(session, plan, course, env.now);
    record_learning(
        &mut session.learning,
        workflow,
        state.thread.session.pending_question.as_ref(),
        plan,
        reply,
    );
    if let Some(grade) = plan.interpretation.as_ref().and_then(|i| i.grade.as_ref())
        && grade.result != GradeOutcome::Unverifiable
    {
        session.recent_outcomes.push(grade.result);
        let excess = session
            .recent_outcomes
            .len()
            .saturating_sub(RECENT_OUTCOMES_KEPT);
        session.recent_outcomes.drain(..excess);
    }

    // The reply: its card, and the question it leaves pending.
    let target = course
        .unit(&reply.target_unit_id)
        .ok_or_else(|| TurnError::UnknownUnit(reply.target_unit_id.clone()))?;
    let text = rt.sanitizer.clean(&reply.tutor_text).text;
    let invites = workflow
        .category(&plan.category)
        .is_some_and(Category::invites_choice);
    let card = match reply.action {
        TutorAction::SocraticQuestion if invites => None,
        TutorAction::SocraticQuestion => {
            let named = reply
                .question_asked
                .as_ref()
                .map(|q| rt.sanitizer.clean(&q.text).text)
                .filter(|q| !q.trim().is_empty());
            if let Some(question) = last_question(&text).or(named) {
                let llm_answer = reply
                    .question_asked
                    .as_ref()
                    .and_then(|q| q.expected_answer.as_deref());
                let expected = expected_of_question(&question, llm_answer);
                track_tutor_question(session, question, expected, target, env.now);
            }
            None
        }
        TutorAction::ConceptCard => reply.concept_card.as_ref().map(|c| {
            TutorCard::Concept(ConceptCard {
                unit_id: target.id.clone(),
                key_ideas: c.key_ideas.clone(),
                worked_example: c.worked_example.as_ref().map(|w| WorkedExample {
                    problem_latex: w.problem_latex.clone(),
                    steps_latex: w.steps_latex.clone().unwrap_or_default(),
                    final_answer_latex: w.final_answer_latex.clone(),
                }),
            })
        }),
        TutorAction::DrillCard => {
            drill_card(state.thread, reply, target, plan, env).map(|(card, question)| {
                // A new item is a new problem: its own attempts, no
                // scaffolding or teach-back carried over from the last one.
                scaffolding::start_problem(session, question);
                TutorCard::Drill(card)
            })
        }
        TutorAction::ExamBlock => reply.exam_suggestion.as_ref().and_then(|s| {
            let card = exam_card(course, &s.question_id, env)?;
            exam::cards::record_shown(session, &s.question_id, env.now);
            Some(card)
        }),
    };
    // A safety note that lets tutoring continue comes first.
    let (text, mark) = match safety {
        Some(s) => (format!("{}\n\n{text}", s.text), Some(s.mark)),
        None => (text, None),
    };
    let mut said = message(state.thread, env, "a", Role::Assistant, text, None, card);
    said.safety = mark;
    messages.push(said);

    // The snapshot: focus and units in progress, and this turn's reading.
    // Chatter about something else changes nothing the student's record shows.
    let off_topic = workflow
        .category(&plan.category)
        .is_some_and(|c| c.transitions.contains(&Transition::CountOffTopic));
    if !off_topic {
        evidence::apply_turn(&mut snapshot, &ctx, &plan.policy.policy);
    }
    let analysis = match origin {
        ReplyOrigin::Llm => TurnAnalysis {
            mapped_units: reply
                .mapped_units
                .iter()
                .filter(|m| course.unit(&m.unit_id).is_some())
                .map(|m| MappedUnit {
                    unit_id: m.unit_id.clone(),
                    confidence: m.confidence.clamp(0.0, 1.0),
                })
                .collect(),
            student_intent: reply.turn_analysis.student_intent,
            understanding_signal: reply.turn_analysis.understanding_signal,
            suggested_prereq_units: reply.turn_analysis.suggested_prereq_units.clone(),
        },
        ReplyOrigin::Offline | ReplyOrigin::Fallback => TurnAnalysis {
            mapped_units: plan.input.reading.mapped_units.clone(),
            student_intent: plan.input.reading.intent,
            understanding_signal: reply.turn_analysis.understanding_signal,
            suggested_prereq_units: Vec::new(),
        },
    };
    if !off_topic {
        snapshot.last_turn_analysis = Some(analysis);
    }
    let mut events = Vec::new();
    mode_of(state.thread).apply(
        &ModeTurn { rt, state, env },
        plan,
        reply,
        &mut Outcome {
            thread: &mut thread,
            snapshot: &mut snapshot,
            messages: &mut messages,
            events: &mut events,
        },
    );
    if thread.status == ThreadStatus::Completed && thread.ended_at.is_none() {
        thread.ended_at = Some(env.now);
    }
    record_timeline(workflow, state, plan, Some(reply), env, &mut thread);
    Ok(Applied {
        thread,
        snapshot,
        messages,
        drill_evidence,
        events,
    })
}

/// Step 10's timeline entry for this turn, in every mode alike.
fn record_timeline(
    workflow: &Workflow,
    state: TurnState<'_>,
    plan: &Plan,
    reply: Option<&LlmTutorResponse>,
    env: &TurnEnv<'_>,
    thread: &mut Thread,
) {
    let entry = timeline::turn_entry(
        workflow,
        &timeline::TurnRecord {
            turn: thread.session.turn_count,
            now: env.now,
            plan,
            pending: state.thread.session.pending_question.as_ref(),
            reply,
        },
    );
    timeline::record(&mut thread.session.timeline, entry);
}

/// Help asked for on a drill not yet answered: a wrong first attempt for
/// BKT (when the workflow counts it so), and the drill is marked tried so
/// the answer that follows is not taken for a first attempt.
fn hint_before_answer(
    session: &mut SessionState,
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    thread: &Thread,
    env: &TurnEnv<'_>,
) {
    if !ctx.workflow.mastery.hint_before_answer_is_wrong {
        return;
    }
    let Some(token) = session
        .pending_question
        .as_ref()
        .and_then(|q| q.drill_token.as_deref())
    else {
        return;
    };
    let Ok(verified) = drill_token::verify(
        token,
        env.token_keys,
        &thread.thread_id,
        env.now,
        env.drill_ttl,
    ) else {
        return;
    };
    if session.graded_drills.contains(&verified.replay_key) {
        return;
    }
    evidence::apply_hint_before_answer(snapshot, ctx, &verified.claims.unit_id);
    remember_drill(session, &verified.replay_key);
}

/// Counts the help this turn gave from the item's solution, so the next
/// help moves on instead of repeating it. A smaller step offered to work
/// on breaks the problem down: scaffolding starts, and an answer to that
/// step is progress, not a wrong try at the problem.
fn record_help_given(
    session: &mut SessionState,
    category: &crate::content::workflow::Category,
    help: &item_help::TurnHelp,
) {
    let Some(question) = session.pending_question.as_mut() else {
        return;
    };
    let scaffolds = category.transitions.iter().any(|t| {
        matches!(
            t,
            Transition::StartScaffolding | Transition::DeepenScaffolding
        )
    });
    let hints = category
        .transitions
        .contains(&Transition::RecordWrongAttempt)
        && matches!(
            question.phase,
            QuestionPhase::Hint | QuestionPhase::StrategyChange
        );
    let offered = help.help.next_step.is_some() || help.help.representation.is_some();
    if !offered || !(scaffolds || hints) {
        return;
    }
    question.hints_used = help
        .hints_used_after
        .max(question.hints_used.saturating_add(1));
    if help.help.next_step.is_some() {
        let scaffolding = &mut session.scaffolding;
        scaffolding.active = true;
        scaffolding.depth = scaffolding.depth.max(1);
        scaffolding.step_expects = help.step_expects.clone();
    }
}

/// Remembers a graded drill so a second answer to it is not evidence.
pub fn remember_drill(session: &mut SessionState, replay_key: &str) {
    if !session.graded_drills.iter().any(|k| k == replay_key) {
        session.graded_drills.push(replay_key.to_owned());
    }
    let excess = session
        .graded_drills
        .len()
        .saturating_sub(GRADED_DRILLS_KEPT);
    session.graded_drills.drain(..excess);
}

fn message(
    thread: &Thread,
    env: &TurnEnv<'_>,
    suffix: &str,
    role: Role,
    text: String,
    latex: Option<String>,
    card: Option<TutorCard>,
) -> TutorMessage {
    TutorMessage {
        id: format!("{}-{suffix}", env.turn_id),
        thread_id: thread.thread_id.clone(),
        role,
        text,
        latex,
        card,
        card_state: None,
        event: None,
        safety: None,
        created_at: env.now,
    }
}

/// A turn's share: the answer it graded (in the chat), the help the student
/// asked for or was given, and the unit the reply was about.
fn record_learning(
    learning: &mut ThreadLearning,
    workflow: &Workflow,
    pending: Option<&PendingQuestion>,
    plan: &Plan,
    reply: &LlmTutorResponse,
) {
    if let Some(d) = &plan.chat_drill {
        thread_learning::record_answer(
            learning,
            &d.unit_id,
            d.verdict.is_correct(),
            !d.first_attempt,
            d.verdict.mistake_tag.as_deref(),
        );
    } else if let (Some(question), Some(grade)) = (
        pending,
        plan.interpretation.as_ref().and_then(|i| i.grade.as_ref()),
    ) && grade.result != GradeOutcome::Unverifiable
    {
        thread_learning::record_answer(
            learning,
            &question.unit_id,
            grade.result == GradeOutcome::Correct,
            false,
            None,
        );
    }
    let asked_for_help = workflow
        .category(&plan.category)
        .is_some_and(Category::asks_for_help);
    if asked_for_help {
        let unit_id = pending.map_or(&plan.policy.policy.focus_unit_id, |q| &q.unit_id);
        thread_learning::record_help(learning, unit_id);
    }
    if reply.action == TutorAction::ConceptCard && !asked_for_help {
        thread_learning::record_help(learning, &reply.target_unit_id);
    }
    thread_learning::record_reply(learning, &reply.target_unit_id);
}
