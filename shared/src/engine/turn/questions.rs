//! The question a turn leaves pending: the tutor's own question (kept,
//! replaced or taken as a smaller step), its expected answer, the tutor
//! model's reading where code cannot grade, and a problem the student
//! brings as their own.

use chrono::{DateTime, Utc};

use crate::content::{Course, Unit};
use crate::engine::interpret::student_math;
use crate::engine::mastery::thread_learning;
use crate::engine::session::lifecycle;
use crate::engine::session::scaffolding;
use crate::engine::turn_data::Plan;
use crate::model::{
    AnswerKind, ExpectedAnswer, GradeOutcome, LlmTutorResponse, PendingQuestion, QuestionPhase,
    SessionState, StudentIntent,
};

/// Keeps the tutor's question where it belongs. During scaffolding it is
/// the next small step, and the problem stays the pending question (the
/// student is still working towards its answer); a probe or hint about a
/// question code can grade never replaces it, so the student's next try is
/// still graded; otherwise it is tracked for its lifecycle
/// (`engine::session::lifecycle`).
///
/// A question with an answer code knows replaces a pending word question
/// the student has not tried yet (the tutor moved on); once they have
/// tried it, a new question is a smaller step towards it, and an answer to
/// that step is progress, not a wrong try.
pub(super) fn track_tutor_question(
    session: &mut SessionState,
    question: String,
    expected: Option<ExpectedAnswer>,
    unit: &Unit,
    now: DateTime<Utc>,
) {
    let step_value = |e: &ExpectedAnswer| (e.kind == AnswerKind::Number).then(|| e.value.clone());
    let pending = session.pending_question.as_ref();
    // "Let's get back to the question. What is 12 + 15?" asks the pending
    // question again: it stays the one pending, with its own attempts.
    if pending.is_some_and(|q| restates(&q.text, &question)) {
        return;
    }
    let in_words = pending.is_some_and(|q| q.drill_token.is_none());
    let untried = pending.is_some_and(|q| q.wrong_attempts == 0);
    if session.scaffolding.active {
        scaffolding::set_scaffold_question(session, &question);
        if let Some(value) = expected.as_ref().and_then(step_value) {
            session.scaffolding.step_expects = Some(value);
        }
    } else if pending.is_none_or(|q| q.expected.is_none())
        || (in_words && untried && expected.is_some())
    {
        let mut asked = tutor_question(question, unit, now);
        asked.expected = expected;
        lifecycle::ask(session, asked);
    } else if in_words && let Some(value) = expected.as_ref().and_then(step_value) {
        session.scaffolding.active = true;
        session.scaffolding.depth = session.scaffolding.depth.max(1);
        session.scaffolding.step_expects = Some(value);
        scaffolding::set_scaffold_question(session, &question);
    }
}

/// Whether `asked` is `pending` again, in its words or inside a longer one.
fn restates(pending: &str, asked: &str) -> bool {
    let squeeze = |t: &str| -> String {
        t.chars()
            .filter(|c| c.is_alphanumeric() || "+-*/=×÷".contains(*c))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (pending, asked) = (squeeze(pending), squeeze(asked));
    !asked.is_empty() && (pending.contains(&asked) || asked.contains(&pending))
}

/// The answer of a question the tutor asked in words: worked out by code
/// when the question states a computation ("What is 7 + 5?"), else the
/// answer the tutor model says it expects. Code's arithmetic wins over the
/// model's; a model's answer in words ("no", "the denominator") stands.
pub(super) fn expected_of_question(
    question: &str,
    llm_answer: Option<&str>,
) -> Option<ExpectedAnswer> {
    let llm_answer = llm_answer.map(str::trim).filter(|a| !a.is_empty());
    let from_model = llm_answer.map(|a| ExpectedAnswer {
        kind: crate::engine::grading::infer_kind(a, &[]),
        value: a.to_owned(),
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    });
    let model_says_words = from_model
        .as_ref()
        .is_some_and(|e| !matches!(e.kind, AnswerKind::Number | AnswerKind::Equation));
    if model_says_words {
        return from_model;
    }
    let computed = student_math::student_problem(question).map(|problem| ExpectedAnswer {
        kind: problem.answer_kind(),
        value: problem.answer,
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    });
    computed.or(from_model)
}

/// Where code could not grade an answer to the pending question (it asks
/// for words, or has no answer code knows), the tutor model's reading of
/// it settles the lifecycle: a wrong answer is counted and escalates the
/// phase, a right one clears the question. It counts in the thread's own
/// record (with a misconception the model names, when the unit lists it)
/// but is never evidence of mastery: only code's grades are.
pub(super) fn settle_by_reading(
    session: &mut SessionState,
    answered: Option<&PendingQuestion>,
    plan: &Plan,
    reply: &LlmTutorResponse,
    course: &Course,
) {
    let analysis = &reply.turn_analysis;
    let (Some(answered), Some(correct)) = (answered, analysis.answer_correct) else {
        return;
    };
    let code_graded = plan
        .interpretation
        .as_ref()
        .and_then(|i| i.grade.as_ref())
        .is_some_and(|g| g.result != GradeOutcome::Unverifiable);
    let is_answer = matches!(
        analysis.student_intent,
        StudentIntent::Answer | StudentIntent::Check
    );
    // Still the question the student answered, and not yet settled this turn.
    let untouched = session.pending_question.as_ref().is_some_and(|q| {
        q.asked_at == answered.asked_at && q.wrong_attempts == answered.wrong_attempts
    });
    if code_graded || !is_answer || !untouched {
        return;
    }
    let known = course.unit(&answered.unit_id).and_then(|unit| {
        analysis.misconceptions_detected.iter().find(|tag| {
            unit.mistake_tags.iter().any(|t| &t.id == *tag)
                || unit.misconceptions.iter().any(|m| &m.id == *tag)
        })
    });
    thread_learning::record_answer(
        &mut session.learning,
        &answered.unit_id,
        correct,
        false,
        known.map(String::as_str).filter(|_| !correct),
    );
    if correct {
        lifecycle::answer_correct(session, None);
    } else {
        lifecycle::record_wrong_attempt(session, plan.said.as_deref().unwrap_or(""));
    }
}

/// A problem the student brings as their own (see
/// [`student_math::own_problem`]): with a problem pending, only one they
/// ask about that is not the pending problem.
pub(super) fn own_problem(
    session: &SessionState,
    said: Option<&str>,
) -> Option<student_math::StudentProblem> {
    let pending = session
        .pending_question
        .as_ref()
        .filter(|q| q.expected.is_some());
    match pending {
        Some(drill) if drill.drill_token.is_some() => {
            student_math::own_problem_beside_drill(said?, &drill.text)
        }
        pending => student_math::own_problem(said?, pending.map(|q| q.text.as_str())),
    }
}

/// A problem the student typed ("what is 47 + 38?", "how do I solve
/// 2x + 3 = 11?") with nothing pending becomes their question, worked out
/// by code, so their answer to it ("85") is graded rather than taken for
/// a new message. A worked claim ("72 - 38 = 46") is checked instead.
pub(super) fn track_student_problem(
    session: &mut SessionState,
    plan: &Plan,
    course: &Course,
    now: DateTime<Utc>,
) {
    // A question session answers it outright: nothing is left pending.
    if plan.input.category.own_problem.is_empty() || plan.input.clarify.is_some() {
        return;
    }
    let Some(problem) = plan.said.as_deref().and_then(student_math::student_problem) else {
        return;
    };
    let unit_id = plan
        .mapped_units
        .first()
        .map_or(plan.policy.policy.focus_unit_id.as_str(), |m| {
            m.unit_id.as_str()
        });
    let Some(unit) = course.unit(unit_id) else {
        return;
    };
    let mistakes = problem.known_mistakes();
    let mut question = tutor_question(problem.text, unit, now);
    // A share in a ratio is answered share by share: the first is asked for.
    let answer = problem
        .answer
        .split(" and ")
        .next()
        .unwrap_or_default()
        .to_owned();
    question.expected = Some(ExpectedAnswer {
        kind: if problem.solves_for.is_some() {
            AnswerKind::Equation
        } else {
            AnswerKind::Number
        },
        value: answer,
        unit: None,
        options: Vec::new(),
        mistakes,
    });
    lifecycle::ask(session, question);
    // The reply offers its first step: the next help is the step after.
    if let Some(pending) = session.pending_question.as_mut() {
        pending.hints_used = pending.hints_used.max(1);
    }
    // It is worked step by step: the answer to a step is progress on it,
    // not a wrong try at the whole problem.
    session.scaffolding.active = true;
    session.scaffolding.depth = session.scaffolding.depth.max(1);
    session.scaffolding.step_expects = problem.first_step_expects;
}

/// The last sentence of `text` that asks something.
pub(super) fn last_question(text: &str) -> Option<String> {
    text.split_inclusive(['.', '!', '?', '\n'])
        .rev()
        .find(|s| s.trim_end().ends_with('?'))
        .map(|s| s.trim().to_owned())
}

/// A question the tutor asked in words: tracked for its lifecycle; its
/// answer is not known to code, so the LLM's reading judges replies to it.
fn tutor_question(text: String, unit: &Unit, now: DateTime<Utc>) -> PendingQuestion {
    PendingQuestion {
        text,
        expected: None,
        unit_id: unit.id.clone(),
        concept: unit.title.clone(),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: now,
        drill_token: None,
    }
}
