//! The exam mode: an evaluation the server runs. The questions are chosen
//! by code (see [`exam_select`]), their answers stay in the thread's state,
//! and the mode writes its replies itself, so no answer ever reaches the
//! tutor model. Every answer is graded by code, except a
//! written one (an explanation, a word answer): the turn's one LLM call is
//! then the `exam_evaluation` call on that question alone, with the offline
//! judge's mark standing when the call fails (see [`judge`]).
//!
//! - `start` chooses the questions (all of them, or the first of an
//!   adaptive exam) and shows the first one only.
//! - `plan` reads the message as an answer to the question on screen (or
//!   "skip", or the end-exam event), marks it, and writes the reply: the
//!   result and a short explanation with immediate feedback, only "recorded"
//!   with deferred feedback, then the next question. After the last
//!   question, the end event or the time limit, the reply is the report.
//! - `judged` writes the reply again with the evaluation call's verdict.
//! - `apply` commits the same step, and at the end feeds the answers into
//!   the student's record as evidence and sends `session.completed` (the
//!   score summary) to the integration, if the thread has one.
//!
//! This file runs the exam; `marking` marks an answer and words its
//! feedback, `report` writes what the exam reports (the closing message,
//! the report, the progress view, the `session.completed` notification).

mod marking;
mod report;

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use crate::content::{Course, ExamItem, Unit};
use crate::engine::exam::judge::{self, Judging, WrittenMark};
use crate::engine::mastery::evidence::record_ability;
use crate::engine::mastery::evidence::{self, DrillGraded, ExamSubmitted, TransitionContext};
use crate::engine::mastery::irt;
use crate::engine::mastery::thread_learning;
use crate::engine::modes::exam_select::{self, Pool};
use crate::engine::modes::{
    Ended, Ending, InvalidParam, ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start,
    StartError, Started, welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{
    ClientEvent, ExamEnd, ExamFeedbackMode, ExamItemSource, ExamQuestion, ExamQuestionStatus,
    ExamSelection, ExamSession, LlmTutorResponse, Mode, ModeState, QuestionResult, Scaffolding,
    SessionState, StudentIntent, StudentSnapshot, TeachBack, ThreadLearning, ThreadStatus,
    TutorAction, UnderstandingSignal,
};

use self::marking::{Marked, feedback, is_written, judge_request, mark};
use self::report::{closing, show};
pub use self::report::{progress_view, report, session_completed};

/// The most questions an exam may have.
pub const MAX_QUESTIONS: u32 = 30;
/// The longest time limit, in minutes (a school day).
pub const MAX_TIME_LIMIT_MINUTES: u32 = 480;

/// The exam mode.
pub struct Exam;

impl SessionMode for Exam {
    fn draws_from_bank(&self) -> bool {
        true
    }

    fn check(&self, start: &Start<'_>) -> Result<(), InvalidParam> {
        let request = start.request;
        if let Some(n) = request.question_count
            && !(1..=MAX_QUESTIONS).contains(&n)
        {
            return Err(InvalidParam {
                field: "questionCount",
                detail: format!("an exam has 1 to {MAX_QUESTIONS} questions, not {n}"),
            });
        }
        if let Some(m) = request.time_limit_minutes
            && !(1..=MAX_TIME_LIMIT_MINUTES).contains(&m)
        {
            return Err(InvalidParam {
                field: "timeLimitMinutes",
                detail: format!("a time limit is 1 to {MAX_TIME_LIMIT_MINUTES} minutes, not {m}"),
            });
        }
        if let Some(units) = &request.units {
            if units.is_empty() {
                return Err(InvalidParam {
                    field: "units",
                    detail: "name at least one unit, or leave `units` out".into(),
                });
            }
            if let Some(u) = units.iter().find(|u| start.course.unit(u).is_none()) {
                return Err(InvalidParam {
                    field: "units",
                    detail: format!("unit `{u}` is not part of course `{}`", start.course.id),
                });
            }
        }
        let units = exam_units(start);
        let pool = pool_of(start, &units);
        let n = question_count(start);
        let available = match selection(start) {
            ExamSelection::Fixed => exam_select::choose_fixed(
                &pool,
                n,
                &start.workflow.modes.exam.difficulty_mix,
                start.seed,
            )
            .is_some(),
            ExamSelection::Adaptive => exam_select::has_questions(&pool),
        };
        if !available {
            let field = if request.units.is_some() {
                "units"
            } else {
                "unitId"
            };
            return Err(InvalidParam {
                field,
                detail: format!(
                    "{} cannot give {n} different questions; ask for fewer or add units",
                    titles(&units)
                ),
            });
        }
        Ok(())
    }

    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        let units = exam_units(start);
        let pool = pool_of(start, &units);
        let n = question_count(start);
        let settings = &start.workflow.modes.exam;
        let ability = starting_ability(start, &units);
        let selection = selection(start);
        let questions = match selection {
            ExamSelection::Fixed => {
                exam_select::choose_fixed(&pool, n, &settings.difficulty_mix, start.seed)
            }
            ExamSelection::Adaptive => exam_select::choose_next(
                &pool,
                &[],
                irt::target_difficulty(Some(ability), &start.workflow.irt),
                start.seed,
            )
            .map(|q| vec![q]),
        }
        .ok_or_else(|| StartError(format!("{} has no questions to ask", titles(&units))))?;
        let mut questions = questions;
        questions[0].shown_at = Some(start.now);
        let session = ExamSession {
            unit_ids: units.iter().map(|u| u.id.clone()).collect(),
            questions,
            question_count: n,
            current_index: 0,
            feedback_mode: start.request.feedback.unwrap_or(settings.feedback),
            selection,
            seed: start.seed,
            locked_questions: start.locked_questions.iter().cloned().collect(),
            started_at: start.now,
            time_limit_minutes: start.request.time_limit_minutes,
            ability,
            information: 0.0,
            ended: None,
            finished_at: None,
        };
        let first = ask(&session, 0);
        let title_unit = (units.len() == 1).then(|| units[0]);
        let hello = welcome(
            &Start {
                unit: title_unit.or(start.unit),
                ..*start
            },
            Mode::Exam,
        )?;
        let rules = match session.feedback_mode {
            ExamFeedbackMode::Immediate => "You'll see how each answer went as you go.",
            ExamFeedbackMode::Deferred => {
                "Your answers are marked at the end, so I won't say how each one went until then."
            }
        };
        let limit = session
            .time_limit_minutes
            .map(|m| format!(" You have {m} minutes."))
            .unwrap_or_default();
        Ok(Started {
            welcome: format!(
                "{hello} {rules}{limit} Type \"skip\" to pass on a question.\n\n{first}"
            ),
            session: SessionState {
                mode_state: ModeState::Exam(session),
                ..SessionState::default()
            },
        })
    }

    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        read: &Interpreted,
        mut policy: PolicyOutcome,
    ) -> ModePlan {
        let Some(before) = exam_of(&turn.state.thread.session) else {
            return ModePlan {
                policy,
                practice: None,
                block: ModeBlock::default(),
                category: None,
                judging: None,
                reply: None,
            };
        };
        let step = advance(turn, before, event, read.said.as_deref(), None);
        let unit_id = step
            .session
            .questions
            .get(step.session.current_index as usize)
            .or(step.session.questions.last())
            .map(|q| q.unit_id.clone())
            .unwrap_or_else(|| policy.policy.focus_unit_id.clone());
        let p = &mut policy.policy;
        p.focus_unit_id = unit_id.clone();
        p.primary_target_unit_id = unit_id.clone();
        p.scoped_unit_ids = vec![unit_id.clone()];
        p.prereq_blocking_unit_id = None;
        p.allowed_actions = vec![TutorAction::SocraticQuestion];
        p.stuck = false;
        p.exam_ready = false;
        p.exam_availability = crate::model::ExamAvailability::None;
        p.exam_next_eligible_at = None;
        policy.exam.available_question_ids.clear();
        ModePlan {
            policy,
            practice: None,
            block: ModeBlock::default(),
            category: None,
            judging: step.judging,
            reply: Some(LlmTutorResponse::said(
                unit_id,
                step.text,
                StudentIntent::Answer,
                UnderstandingSignal::default(),
            )),
        }
    }

    /// The same step as `plan`'s, marked with the evaluation call's verdict.
    fn judged(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        verdict: &WrittenMark,
    ) -> Option<LlmTutorResponse> {
        let before = exam_of(&turn.state.thread.session)?;
        let step = advance(
            turn,
            before,
            &plan.event(),
            plan.said.as_deref(),
            Some(verdict),
        );
        Some(LlmTutorResponse::said(
            plan.policy.policy.focus_unit_id.clone(),
            step.text,
            StudentIntent::Answer,
            UnderstandingSignal::default(),
        ))
    }

    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        _reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    ) {
        let before_session = &turn.state.thread.session;
        let Some(before) = exam_of(before_session) else {
            return;
        };
        let event = plan.event();
        let verdict = plan.judging.as_ref().map(|j| &j.verdict);
        let step = advance(turn, before, &event, plan.said.as_deref(), verdict);
        let session = &mut outcome.thread.session;
        // An exam keeps no question, scaffolding or help of the chat's own:
        // its questions and answers are in its state, and only its end is
        // evidence.
        session.pending_question = None;
        session.scaffolding = Scaffolding::default();
        session.teach_back = TeachBack::default();
        session.learning = before_session.learning.clone();
        session.recent_outcomes = before_session.recent_outcomes.clone();
        if step.finished_now {
            let ctx = TransitionContext {
                course: turn.rt.course(),
                workflow: turn.rt.workflow(),
                now: turn.env.now,
            };
            record_results(&step.session, &mut session.learning, outcome.snapshot, &ctx);
            outcome.thread.status = ThreadStatus::Completed;
            outcome.events.push(session_completed(
                &step.session,
                turn.rt.course(),
                turn.env.now,
            ));
        }
        outcome.thread.session.mode_state = ModeState::Exam(step.session);
    }

    /// An exam the student ends (`POST /threads/{id}/end`) is scored as
    /// one ended by its end event: the questions not answered score 0 (or,
    /// past its time limit, it ends as timed out), the report is kept for
    /// the summary and the answers become evidence.
    fn end(&self, ending: &mut Ending<'_>) -> Ended {
        let Some(before) = exam_of(&ending.thread.session) else {
            return Ended::default();
        };
        if before.finished() {
            return Ended::default();
        }
        let mut exam = before.clone();
        let (course, now) = (ending.course, ending.now);
        let text =
            time_up(&mut exam, course, now).unwrap_or_else(|| end_early(&mut exam, course, now));
        let ctx = TransitionContext {
            course,
            workflow: ending.workflow,
            now,
        };
        let session = &mut ending.thread.session;
        record_results(&exam, &mut session.learning, ending.snapshot, &ctx);
        let events = vec![session_completed(&exam, course, now)];
        session.mode_state = ModeState::Exam(exam);
        Ended {
            text: Some(text),
            events,
        }
    }
}

/// A finished exam's answers fed into the student's record as evidence,
/// and into the thread's own learning: however the exam ended, only its
/// answered questions count (a skipped or unanswered one is no evidence).
fn record_results(
    exam: &ExamSession,
    learning: &mut ThreadLearning,
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
) {
    let answered: Vec<&ExamQuestion> = exam
        .questions
        .iter()
        .filter(|q| q.status == ExamQuestionStatus::Answered)
        .collect();
    // Each question is a first try: the rights are recorded before
    // the wrongs, so none reads as put right after a wrong one.
    for correct in [true, false] {
        for q in answered
            .iter()
            .filter(|q| (q.result == Some(QuestionResult::Correct)) == correct)
        {
            thread_learning::record_answer(
                learning,
                &q.unit_id,
                correct,
                false,
                q.mistake_tag.as_deref(),
            );
        }
    }
    for q in answered {
        let correct = q.result == Some(QuestionResult::Correct);
        match &q.source {
            ExamItemSource::Blueprint { .. } => {
                let _ = evidence::apply_drill_graded(
                    snapshot,
                    ctx,
                    &DrillGraded {
                        unit_id: q.unit_id.clone(),
                        correct,
                        mistake_tag: q.mistake_tag.clone(),
                        first_attempt: true,
                    },
                );
                record_ability(
                    snapshot,
                    ctx.workflow,
                    &q.unit_id,
                    q.difficulty_value,
                    correct,
                );
            }
            ExamItemSource::Bank { question_id, tier } => {
                let _ = evidence::apply_exam_submitted(
                    snapshot,
                    ctx,
                    &ExamSubmitted {
                        question_id: question_id.clone(),
                        unit_id: q.unit_id.clone(),
                        tier: *tier,
                        correct,
                    },
                );
            }
        }
    }
}

/// The exam a session runs, if it is an exam's.
pub fn exam_of(session: &SessionState) -> Option<&ExamSession> {
    match &session.mode_state {
        ModeState::Exam(exam) => Some(exam),
        _ => None,
    }
}

/// The units an exam covers: those named, else the one asked for, else
/// the student's focus, else the course's entry.
fn exam_units<'a>(start: &Start<'a>) -> Vec<&'a Unit> {
    let course = start.course;
    if let Some(units) = &start.request.units {
        let mut seen = BTreeSet::new();
        return units
            .iter()
            .filter(|u| seen.insert(u.as_str()))
            .filter_map(|u| course.unit(u))
            .collect();
    }
    start
        .unit
        .or_else(|| start.snapshot.and_then(|s| course.unit(&s.focus_unit_id)))
        .or_else(|| course.unit(&course.entry_unit))
        .into_iter()
        .collect()
}

fn pool_of<'a>(start: &Start<'a>, units: &[&'a Unit]) -> Pool<'a> {
    Pool {
        bundle: start.bundle,
        course: start.course,
        units: units.to_vec(),
        locked: start.locked_questions,
        themes: start.personalization.theme_names(),
    }
}

fn question_count(start: &Start<'_>) -> u32 {
    start
        .request
        .question_count
        .unwrap_or(start.workflow.modes.exam.question_count)
        .clamp(1, MAX_QUESTIONS)
}

fn selection(start: &Start<'_>) -> ExamSelection {
    start.request.selection.unwrap_or_default()
}

fn titles(units: &[&Unit]) -> String {
    units
        .iter()
        .map(|u| u.title.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The student's ability over the exam's units so far, else the workflow's start.
fn starting_ability(start: &Start<'_>, units: &[&Unit]) -> f64 {
    let known: Vec<f64> = units
        .iter()
        .filter_map(|u| start.snapshot?.unit_progress.get(&u.id)?.ability)
        .collect();
    if known.is_empty() {
        irt::current_ability(None, &start.workflow.irt)
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    }
}

/// The question on screen, while the exam runs.
fn on_screen(session: &ExamSession) -> Option<&ExamQuestion> {
    if session.finished() {
        return None;
    }
    session.questions.get(session.current_index as usize)
}

/// A question as written, for the answer guard: its words and its maths.
fn shown_text(q: &ExamQuestion) -> String {
    format!("{} {}", q.prompt, q.question_latex)
}

/// Question `index` as the student reads it: its number, words, maths and
/// lettered options.
fn ask(session: &ExamSession, index: usize) -> String {
    let Some(q) = session.questions.get(index) else {
        return String::new();
    };
    let mut text = format!(
        "Question {} of {}: {}",
        q.number, session.question_count, q.prompt
    );
    // A stem that states its numbers needs no maths after it.
    if !q.question_latex.is_empty() && !q.prompt.chars().any(|c| c.is_ascii_digit()) {
        text.push_str(&format!(" \\({}\\)", q.question_latex));
    }
    for (i, option) in q.options.iter().enumerate() {
        text.push_str(&format!("\n{}) {option}", ExamItem::option_id(i)));
    }
    text
}

/// What the student did this turn, as the exam reads it.
enum Move<'a> {
    Answer(&'a str, Option<u32>),
    Skip(Option<u32>),
    End,
    /// Nothing to read (a button the exam has no use for), or a "ready"
    /// or "next": the open question is asked.
    Nothing,
}

fn read_move<'a>(event: &'a TurnEvent, said: Option<&'a str>) -> Move<'a> {
    match (&event.client_event, said) {
        (ClientEvent::ExamEnd, _) => Move::End,
        (ClientEvent::ExamSkip { question_number }, _) => Move::Skip(*question_number),
        (ClientEvent::ExamAnswer { question_number }, Some(text)) => {
            if is_skip(text) {
                Move::Skip(Some(*question_number))
            } else {
                Move::Answer(text, Some(*question_number))
            }
        }
        (_, Some(text)) if is_skip(text) => Move::Skip(None),
        (_, Some(text)) if is_end(text) => Move::End,
        (_, Some(text)) if is_ready(text) => Move::Nothing,
        (_, Some(text)) => Move::Answer(text, None),
        (_, None) => Move::Nothing,
    }
}

fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_skip(text: &str) -> bool {
    matches!(
        words(text).as_str(),
        "skip"
            | "pass"
            | "skip it"
            | "skip this"
            | "skip this one"
            | "skip question"
            | "skip this question"
            | "i'll skip"
            | "next question"
    )
}

fn is_end(text: &str) -> bool {
    matches!(
        words(text).as_str(),
        "end exam"
            | "end the exam"
            | "finish exam"
            | "finish the exam"
            | "stop the exam"
            | "stop exam"
            | "end the test"
            | "end test"
    )
}

/// "ready", "ok", "next": the student waits for the question, which is no
/// answer and no request for help.
fn is_ready(text: &str) -> bool {
    matches!(
        words(text).as_str(),
        "ready"
            | "i'm ready"
            | "im ready"
            | "ok"
            | "okay"
            | "ok ready"
            | "okay ready"
            | "start"
            | "start exam"
            | "start the exam"
            | "start the test"
            | "let's start"
            | "lets start"
            | "begin"
            | "let's go"
            | "lets go"
            | "go"
            | "next"
            | "next one"
            | "continue"
    )
}

/// One turn of an exam, worked out on the state as read.
struct Step {
    session: ExamSession,
    /// The reply.
    text: String,
    /// The exam ended this turn.
    finished_now: bool,
    /// A written answer marked this turn, and by whom.
    judging: Option<Judging>,
}

/// The exam after this turn's message, and what to say.
/// A written answer is marked with `verdict` when one is handed in,
/// else by the offline judge (and the step says it was asked to be judged).
fn advance(
    turn: &ModeTurn<'_>,
    before: &ExamSession,
    event: &TurnEvent,
    said: Option<&str>,
    verdict: Option<&WrittenMark>,
) -> Step {
    let mut session = before.clone();
    let now = turn.env.now;
    let course = turn.rt.course();
    if session.finished() {
        let report = report(&session, course, now);
        return Step {
            text: format!(
                "This exam is finished: you scored {} out of {} ({}%). Your full report is in \
                 this conversation's summary. Start a new conversation to keep practising.",
                show(report.score),
                report.max_score,
                show(report.percentage)
            ),
            session,
            finished_now: false,
            judging: None,
        };
    }
    if let Some(text) = time_up(&mut session, course, now) {
        return Step {
            session,
            text,
            finished_now: true,
            judging: None,
        };
    }
    let index = session.current_index as usize;
    let number = index as u32 + 1;
    let stale = |n: Option<u32>| n.is_some_and(|n| n != number);
    let mut lead = String::new();
    let mut judging: Option<Judging> = None;
    match read_move(event, said) {
        Move::End => {
            let text = end_early(&mut session, course, now);
            return Step {
                session,
                text,
                finished_now: true,
                judging: None,
            };
        }
        Move::Skip(n) | Move::Answer(_, n) if stale(n) => {
            let n = n.unwrap_or_default();
            let text = if n < number {
                format!(
                    "Question {n} has already been answered, so that answer was not counted. \
                     You're on question {number}.\n\n{}",
                    ask(&session, index)
                )
            } else {
                format!(
                    "Question {n} isn't open yet. You're on question {number}.\n\n{}",
                    ask(&session, index)
                )
            };
            return Step {
                session,
                text,
                finished_now: false,
                judging: None,
            };
        }
        Move::Nothing => {
            return Step {
                text: ask(&session, index),
                session,
                finished_now: false,
                judging: None,
            };
        }
        Move::Skip(_) => {
            let q = &mut session.questions[index];
            q.status = ExamQuestionStatus::Skipped;
            q.answered_at = Some(now);
            update_ability(&mut session, index, false, turn);
            lead.push_str(&format!("Question {number} skipped."));
        }
        Move::Answer(text, _) => {
            let q = &session.questions[index];
            let marked = if is_written(q) {
                let request = judge_request(q, text);
                let verdict = verdict
                    .cloned()
                    .unwrap_or_else(|| judge::judge(&request.input));
                let marked = Marked::judged(&verdict);
                judging = Some(Judging { request, verdict });
                Some(marked)
            } else {
                mark(turn, q, text)
            };
            let Some(marked) = marked else {
                let hint = match session.questions[index].format {
                    crate::model::AnswerFormat::Choice => "pick an option by its letter",
                    crate::model::AnswerFormat::Number => "type a number",
                    crate::model::AnswerFormat::Text => "type your answer",
                };
                let text = format!(
                    "I can't give help during the exam, and I couldn't read that as an answer to \
                     question {number}. Please {hint}, or type \"skip\" to move on.\n\n{}",
                    ask(&session, index)
                );
                return Step {
                    session,
                    text,
                    finished_now: false,
                    judging,
                };
            };
            let partial = turn.rt.workflow().modes.exam.partial_credit;
            let q = &mut session.questions[index];
            q.status = ExamQuestionStatus::Answered;
            q.student_answer = Some(text.trim().to_owned());
            q.answered_at = Some(now);
            q.result = Some(marked.result);
            q.credit = judge::credit(marked.result, partial);
            q.mistake = marked.mistake;
            q.mistake_tag = marked.mistake_tag;
            q.feedback = marked.feedback;
            q.judged_by = marked.judged_by;
            let correct = marked.result == QuestionResult::Correct;
            update_ability(&mut session, index, correct, turn);
            lead = match session.feedback_mode {
                ExamFeedbackMode::Deferred => format!("Answer to question {number} recorded."),
                ExamFeedbackMode::Immediate => feedback(&session.questions[index]),
            };
        }
    }
    // On to the next question, or the end.
    let next = index + 1;
    if next as u32 >= session.question_count {
        finish(&mut session, ExamEnd::Completed, now);
        let text = format!("{lead}\n\n{}", closing(&session, course, now));
        return Step {
            session,
            text,
            finished_now: true,
            judging,
        };
    }
    if session.selection == ExamSelection::Adaptive && next >= session.questions.len() {
        let units: Vec<&Unit> = session
            .unit_ids
            .iter()
            .filter_map(|u| course.unit(u))
            .collect();
        let locked: BTreeSet<String> = session.locked_questions.iter().cloned().collect();
        let pool = Pool {
            bundle: &turn.rt.bundle,
            course,
            units,
            locked: &locked,
            themes: turn.state.thread.session.personalization.theme_names(),
        };
        let target = irt::target_difficulty(Some(session.ability), &turn.rt.workflow().irt);
        let seed = session.seed ^ (u64::from(next as u32) << 32 | 0x9e37);
        match exam_select::choose_next(&pool, &session.questions, target, seed) {
            Some(q) => session.questions.push(q),
            None => {
                // The units have no new question left: the exam ends here.
                session.question_count = session.questions.len() as u32;
                finish(&mut session, ExamEnd::Completed, now);
                let text = format!("{lead}\n\n{}", closing(&session, course, now));
                return Step {
                    session,
                    text,
                    finished_now: true,
                    judging,
                };
            }
        }
    }
    session.current_index = next as u32;
    session.questions[next].shown_at = Some(now);
    let text = format!("{lead}\n\n{}", ask(&session, next));
    Step {
        session,
        text,
        finished_now: false,
        judging,
    }
}

/// Ends the exam with what was answered when its time limit has passed
/// at `now`; the reply that says so, with the results.
fn time_up(session: &mut ExamSession, course: &Course, now: DateTime<Utc>) -> Option<String> {
    let limit = session.time_limit_minutes?;
    if now < session.started_at + Duration::minutes(i64::from(limit)) {
        return None;
    }
    finish(session, ExamEnd::TimeUp, now);
    Some(format!(
        "Time's up, so the exam ends with what you had answered. {}",
        closing(session, course, now)
    ))
}

/// Ends the exam before its last question, at the student's word (the
/// end event, or the thread ended): the questions not answered score 0.
fn end_early(session: &mut ExamSession, course: &Course, now: DateTime<Utc>) -> String {
    finish(session, ExamEnd::EndedEarly, now);
    format!(
        "You ended the exam early; the questions not answered score 0. {}",
        closing(session, course, now)
    )
}

fn finish(session: &mut ExamSession, how: ExamEnd, now: DateTime<Utc>) {
    session.ended = Some(how);
    session.finished_at = Some(now);
    session.current_index = session.questions.len() as u32;
}

/// The ability estimate after question `index`, and what the item told
/// about it (Fisher information of the logistic curve).
fn update_ability(session: &mut ExamSession, index: usize, correct: bool, turn: &ModeTurn<'_>) {
    let difficulty = session.questions[index].difficulty_value;
    let p = irt::success_probability(session.ability, difficulty);
    session.information += irt::SCALE * irt::SCALE * p * (1.0 - p);
    session.ability = irt::update(
        Some(session.ability),
        &irt::Response {
            difficulty,
            correct,
            timing: None,
        },
        &turn.rt.workflow().irt,
    );
}

#[cfg(test)]
pub(crate) mod tests;
