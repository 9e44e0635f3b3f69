//! The lifecycle of a question the tutor is waiting on: it keeps its
//! expected answer, options, attempts and previous answers, and each wrong
//! answer escalates the phase asked → probe → hint → explain → strategy
//! change, so a student who keeps missing gets more help rather than the
//! same question again. The five cases a message can be (listed in
//! [`LifecycleCase`]) are the pure transitions below.

use serde::Serialize;

use crate::model::{PendingQuestion, QuestionPhase, SessionState};

/// Previous answers kept per question, newest last.
pub const MAX_PREVIOUS_ANSWERS: usize = 10;
/// Longest previous answer kept, in characters.
const MAX_ANSWER_CHARS: usize = 200;

/// Which of the five lifecycle cases a transition was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleCase {
    /// 1. A wrong answer to the pending question: count it, escalate, keep it.
    WrongOnPending,
    /// 2. A correct answer: clear the question (and track a new one, if asked).
    Correct,
    /// 3. A new question with none pending: track it.
    NewQuestion,
    /// 4. A new question on another concept while one is pending: replace it.
    ReplacedOtherConcept,
    /// 5. A follow-up on the same concept: keep the original lifecycle.
    SameConceptFollowUp,
}

/// The phase after `wrong_attempts` wrong answers.
pub fn phase_after(wrong_attempts: u32) -> QuestionPhase {
    match wrong_attempts {
        0 => QuestionPhase::Asked,
        1 => QuestionPhase::Probe,
        2 => QuestionPhase::Hint,
        3 => QuestionPhase::Explain,
        _ => QuestionPhase::StrategyChange,
    }
}

/// What the tutor should do in `phase` (for the prompt's awaiting-answer
/// section).
pub fn strategy(phase: QuestionPhase) -> &'static str {
    match phase {
        QuestionPhase::Asked => "Wait for the answer; do not give it away.",
        QuestionPhase::Probe => {
            "Ask one probing question about how they got their answer; do not give the method away."
        }
        QuestionPhase::Hint => "Give one targeted hint that points at the step that went wrong.",
        QuestionPhase::Explain => {
            "Explain the step directly, then try a completely different approach."
        }
        QuestionPhase::StrategyChange => {
            "Change strategy: step back to a prerequisite or break the problem into smaller pieces."
        }
    }
}

fn shortened(answer: &str) -> String {
    let answer = answer.trim();
    match answer.char_indices().nth(MAX_ANSWER_CHARS) {
        Some((at, _)) => format!("{}…", &answer[..at]),
        None => answer.to_owned(),
    }
}

/// Case 1: counts a wrong answer on the pending question and escalates its
/// phase; the question stays pending. Returns the new phase, or `None` when
/// no question is pending.
pub fn record_wrong_attempt(state: &mut SessionState, answer: &str) -> Option<QuestionPhase> {
    let question = state.pending_question.as_mut()?;
    question.wrong_attempts = question.wrong_attempts.saturating_add(1);
    question.phase = phase_after(question.wrong_attempts);
    if !answer.trim().is_empty() {
        question.previous_answers.push(shortened(answer));
        let excess = question
            .previous_answers
            .len()
            .saturating_sub(MAX_PREVIOUS_ANSWERS);
        question.previous_answers.drain(..excess);
    }
    Some(question.phase)
}

/// Forgets the pending question, returning it.
pub fn clear_question(state: &mut SessionState) -> Option<PendingQuestion> {
    state.pending_question.take()
}

/// Case 2: the pending question was answered correctly; it is cleared and
/// the tutor's next question, if any, is tracked.
pub fn answer_correct(state: &mut SessionState, next: Option<PendingQuestion>) -> LifecycleCase {
    clear_question(state);
    state.pending_question = next;
    LifecycleCase::Correct
}

fn same_concept(a: &PendingQuestion, b: &PendingQuestion) -> bool {
    let norm = |s: &str| s.trim().to_lowercase();
    if a.concept.trim().is_empty() && b.concept.trim().is_empty() {
        return !a.unit_id.is_empty() && a.unit_id == b.unit_id;
    }
    norm(&a.concept) == norm(&b.concept)
}

/// Cases 3 to 5: the tutor asks `question`. With none pending it is
/// tracked; on another concept it replaces the pending one; on the same
/// concept the original lifecycle (attempts, previous answers, hints, phase,
/// when it was asked) carries on, now about the follow-up's text and — if
/// it has one — its expected answer.
pub fn ask(state: &mut SessionState, question: PendingQuestion) -> LifecycleCase {
    match state.pending_question.as_mut() {
        None => {
            state.pending_question = Some(question);
            LifecycleCase::NewQuestion
        }
        Some(pending) if same_concept(pending, &question) => {
            pending.text = question.text;
            if question.expected.is_some() {
                pending.expected = question.expected;
            }
            LifecycleCase::SameConceptFollowUp
        }
        Some(pending) => {
            *pending = question;
            LifecycleCase::ReplacedOtherConcept
        }
    }
}
