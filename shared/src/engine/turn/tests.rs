//! Whole turns in an exam whose question on screen is written: the plan
//! asks for the evaluation call, [`judged`](super::judged) hands its
//! verdict back, and `apply` records the exam's mark.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Duration;

use crate::engine::exam::judge::WrittenMark;
use crate::engine::modes::exam::tests::{at, event, exam_thread};
use crate::engine::modes::exam::{exam_of, progress_view};
use crate::engine::modes::exam_select;
use crate::engine::practice::drill_token::TokenKeys;
use crate::engine::runtime::{CourseRuntime, shipped_bundle as bundle};
use crate::engine::turn;
use crate::engine::turn_data::{Plan, TurnEnv, TurnState};
use crate::model::{
    ClientEvent, ExamQuestionStatus, JudgedBy, ModeState, Personalization, QuestionResult,
    StudentSnapshot, Thread, ThreadStatus,
};

/// A thread of a 3-question exam whose question on screen is the
/// written bank question `EX-WHN-W1`.
fn written_exam(bundle: &crate::content::Bundle, feedback: &str) -> Thread {
    let mut thread = exam_thread(
        bundle,
        serde_json::json!({"questionCount": 3, "feedback": feedback}),
    );
    thread.status = ThreadStatus::Active;
    thread.ended_at = None;
    let course = bundle.course("prealgebra").unwrap();
    let (unit, item) = course.exam_item("EX-WHN-W1").unwrap();
    let ModeState::Exam(exam) = &mut thread.session.mode_state else {
        panic!();
    };
    let mut q = exam_select::from_bank(unit, item).unwrap();
    q.number = 3;
    q.shown_at = Some(at(2));
    exam.questions[2] = q;
    thread
}

struct Judged {
    plan: Plan,
    applied: turn::Applied,
}

/// A turn answering `said`, with the evaluation call's `verdict` handed
/// back when there is one.
fn answer(thread: &Thread, said: &str, verdict: Option<WrittenMark>) -> Judged {
    let rt = CourseRuntime::new(Arc::new(bundle()), "prealgebra").unwrap();
    let keys = TokenKeys::single(b"exam-judge-test-key-32-bytes-long!").unwrap();
    let lockouts: BTreeMap<String, crate::engine::exam::lockout::LockoutStatus> = BTreeMap::new();
    let personalization = Personalization::default();
    let env = TurnEnv {
        now: at(4),
        turn_id: "t1",
        seed: 3,
        token_keys: &keys,
        drill_ttl: Duration::hours(1),
        lockouts: &lockouts,
        personalization: &personalization,
        safety_region: "default",
    };
    let snapshot = StudentSnapshot::new("s", "prealgebra", "whole-numbers");
    let state = TurnState {
        thread,
        history: &[],
        snapshot: &snapshot,
    };
    let event = event(Some(said), ClientEvent::None);
    let mut plan = turn::plan(&rt, state, &event, &env).unwrap();
    if let Some(verdict) = verdict {
        let request = plan.judging.as_ref().unwrap().request.clone();
        turn::judged(&rt, state, &mut plan, &request, verdict, &env);
    }
    let reply = plan.scripted.clone().expect("the exam writes its replies");
    let applied = turn::apply(
        &rt,
        state,
        &plan,
        Some((&reply, turn::ReplyOrigin::Offline)),
        &env,
    )
    .unwrap();
    Judged { plan, applied }
}

fn said(applied: &turn::Applied) -> String {
    applied.messages.last().unwrap().text.clone()
}

#[test]
fn a_written_answer_asks_for_the_evaluation_of_that_question_alone() {
    let bundle = bundle();
    let thread = written_exam(&bundle, "immediate");
    let j = answer(&thread, "Add 34 and 38 and you should get 72 again", None);
    let judging = j.plan.judging.as_ref().expect("the turn judges the answer");
    let input = &judging.request.input;
    assert_eq!(judging.request.number, 3);
    assert!(
        input.question.contains("Mia worked out 72 - 38"),
        "{input:?}"
    );
    assert!(input.expected_answer.contains("34 + 38 = 72"));
    assert_eq!(input.rubric.len(), 2);
    assert_eq!(
        input.student_answer,
        "Add 34 and 38 and you should get 72 again"
    );
    // Nothing of the other questions.
    let sent = serde_json::to_string(input).unwrap();
    let exam = exam_of(&thread.session).unwrap();
    for q in &exam.questions[..2] {
        assert!(!sent.contains(&q.prompt), "{} in {sent}", q.prompt);
    }
    // Until a model's verdict comes back, the offline judge's stands.
    assert_eq!(judging.verdict.by, JudgedBy::Rubric);
    assert_eq!(judging.verdict.result, QuestionResult::Correct);
    let marked = exam_of(&j.applied.thread.session).unwrap();
    let q = &marked.questions[2];
    assert_eq!((q.result, q.credit), (Some(QuestionResult::Correct), 1.0));
    assert_eq!(q.judged_by, Some(JudgedBy::Rubric));
    assert!(said(&j.applied).contains("Question 3: correct!"));
    assert_eq!(j.applied.thread.status, ThreadStatus::Completed);
    assert_eq!(j.applied.events.len(), 1, "session.completed, once");
}

#[test]
fn the_models_verdict_is_recorded_with_the_workflows_partial_credit() {
    let bundle = bundle();
    let partial = bundle.workflows["default"].modes.exam.partial_credit;
    let thread = written_exam(&bundle, "immediate");
    let verdict = WrittenMark {
        result: QuestionResult::Partial,
        feedback: "Right idea, but say what the total should be".into(),
        by: JudgedBy::Model,
    };
    let j = answer(&thread, "you add them", Some(verdict));
    let q = &exam_of(&j.applied.thread.session).unwrap().questions[2];
    assert_eq!(q.result, Some(QuestionResult::Partial));
    assert_eq!(q.credit, partial);
    assert_eq!(q.judged_by, Some(JudgedBy::Model));
    let text = said(&j.applied);
    assert!(
        text.contains("close, so it earns part of the mark"),
        "{text}"
    );
    assert!(text.contains("say what the total should be."), "{text}");
    assert!(
        text.contains("A full answer: Add the answer back"),
        "{text}"
    );

    // A wrong verdict is no credit.
    let wrong = WrittenMark {
        result: QuestionResult::Incorrect,
        feedback: "That does not check it.".into(),
        by: JudgedBy::Model,
    };
    let j = answer(&thread, "do it again", Some(wrong));
    let q = &exam_of(&j.applied.thread.session).unwrap().questions[2];
    assert_eq!((q.result, q.credit), (Some(QuestionResult::Incorrect), 0.0));
    assert!(said(&j.applied).contains("Question 3: not quite."));
}

#[test]
fn a_verdict_on_another_request_changes_nothing() {
    let bundle = bundle();
    let thread = written_exam(&bundle, "immediate");
    let rt = CourseRuntime::new(Arc::new(bundle), "prealgebra").unwrap();
    let j = answer(&thread, "add them back to get 72", None);
    let mut plan = j.plan;
    let before = (plan.judging.clone(), plan.scripted.clone());
    let mut other = before.0.clone().unwrap().request;
    other.input.student_answer = "something else".into();
    let keys = TokenKeys::single(b"exam-judge-test-key-32-bytes-long!").unwrap();
    let lockouts: BTreeMap<String, crate::engine::exam::lockout::LockoutStatus> = BTreeMap::new();
    let personalization = Personalization::default();
    let env = TurnEnv {
        now: at(4),
        turn_id: "t1",
        seed: 3,
        token_keys: &keys,
        drill_ttl: Duration::hours(1),
        lockouts: &lockouts,
        personalization: &personalization,
        safety_region: "default",
    };
    let snapshot = StudentSnapshot::new("s", "prealgebra", "whole-numbers");
    let state = TurnState {
        thread: &thread,
        history: &[],
        snapshot: &snapshot,
    };
    let verdict = WrittenMark {
        result: QuestionResult::Incorrect,
        feedback: "No.".into(),
        by: JudgedBy::Model,
    };
    turn::judged(&rt, state, &mut plan, &other, verdict, &env);
    assert_eq!((plan.judging, plan.scripted), before);
}

#[test]
fn a_deferred_written_answer_is_only_recorded_until_the_end() {
    let bundle = bundle();
    let mut thread = written_exam(&bundle, "deferred");
    // Not the last question: the exam goes on after it.
    let ModeState::Exam(exam) = &mut thread.session.mode_state else {
        panic!();
    };
    exam.questions.swap(1, 2);
    exam.questions[1].number = 2;
    exam.questions[2].number = 3;
    exam.questions[2].status = ExamQuestionStatus::Unanswered;
    exam.questions[2].result = None;
    exam.questions[2].credit = 0.0;
    exam.questions[2].shown_at = None;
    exam.questions[1].status = ExamQuestionStatus::Unanswered;
    exam.current_index = 1;
    for verdict in [
        None,
        Some(WrittenMark {
            result: QuestionResult::Incorrect,
            feedback: "Not a check at all.".into(),
            by: JudgedBy::Model,
        }),
    ] {
        let j = answer(&thread, "i would guess", verdict);
        let text = said(&j.applied);
        assert!(text.starts_with("Answer to question 2 recorded."), "{text}");
        for telling in [
            "correct",
            "not quite",
            "close",
            "Not a check",
            "A full answer",
        ] {
            assert!(!text.contains(telling), "{telling} in {text}");
        }
        assert!(j.applied.events.is_empty(), "nothing sent before the end");
        let view = progress_view(exam_of(&j.applied.thread.session).unwrap());
        assert!(view.results.is_empty() && view.correct_so_far.is_none());
    }
}
