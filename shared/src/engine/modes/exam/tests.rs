use super::marking::sentence;
use super::report::percent;
use super::*;
use crate::model::{OutboundEventKind, Thread};

pub(crate) fn event(text: Option<&str>, client_event: ClientEvent) -> TurnEvent {
    TurnEvent {
        message_text: text.map(str::to_owned),
        message_latex: None,
        client_event,
    }
}

#[test]
fn a_message_is_an_answer_unless_it_skips_or_ends_the_exam() {
    let read = |text: &str| {
        let e = event(Some(text), ClientEvent::None);
        match read_move(&e, Some(text)) {
            Move::Answer(..) => "answer",
            Move::Skip(_) => "skip",
            Move::End => "end",
            Move::Nothing => "nothing",
        }
    };
    assert_eq!(read("Skip!"), "skip");
    assert_eq!(read("  pass "), "skip");
    assert_eq!(read("End the exam."), "end");
    assert_eq!(read("42"), "answer");
    assert_eq!(read("I'd skip lunch for 12"), "answer");
    let ended = event(None, ClientEvent::ExamEnd);
    assert!(matches!(read_move(&ended, None), Move::End));
    let skipped = event(
        None,
        ClientEvent::ExamSkip {
            question_number: Some(2),
        },
    );
    assert!(matches!(read_move(&skipped, None), Move::Skip(Some(2))));
    let tab = event(Some("skip"), ClientEvent::ExamAnswer { question_number: 3 });
    assert!(matches!(read_move(&tab, Some("skip")), Move::Skip(Some(3))));
    let nothing = event(None, ClientEvent::None);
    assert!(matches!(read_move(&nothing, None), Move::Nothing));
}

use crate::engine::runtime::shipped_bundle as bundle;

pub(crate) fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-02T08:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + Duration::minutes(minutes)
}

/// A 4-question exam on whole numbers started at [`at`]`(0)`, its first
/// question answered right and its second wrong, as turns mark them.
pub(crate) fn exam_thread(bundle: &crate::content::Bundle, request: serde_json::Value) -> Thread {
    let course = bundle.course("prealgebra").unwrap();
    let workflow = bundle.workflow_for(course).unwrap();
    let mut request = request;
    request["courseId"] = serde_json::json!("prealgebra");
    request["mode"] = serde_json::json!("exam");
    let request: crate::model::CreateThreadRequest = serde_json::from_value(request).unwrap();
    let started = Exam
        .start(&Start {
            bundle,
            course,
            workflow,
            unit: course.unit("whole-numbers"),
            goal: None,
            prepared: None,
            earlier: &[],
            request: &request,
            now: at(0),
            seed: 7,
            locked_questions: &BTreeSet::new(),
            snapshot: None,
            problems: None,
            problem_set_id: None,
            personalization: &Default::default(),
        })
        .unwrap();
    let mut session = started.session;
    let ModeState::Exam(exam) = &mut session.mode_state else {
        panic!("an exam");
    };
    for (i, correct) in [(0, true), (1, false)] {
        let q = &mut exam.questions[i];
        q.status = ExamQuestionStatus::Answered;
        q.shown_at = Some(at(i as i64));
        q.answered_at = Some(at(i as i64 + 1));
        q.result = Some(if correct {
            QuestionResult::Correct
        } else {
            QuestionResult::Incorrect
        });
        q.credit = if correct { 1.0 } else { 0.0 };
    }
    exam.current_index = 2;
    exam.questions[2].shown_at = Some(at(2));
    Thread {
        thread_id: "t-exam".into(),
        student_id: "s".into(),
        course_id: "prealgebra".into(),
        mode: Mode::Exam,
        status: ThreadStatus::Completed,
        goal: None,
        unit_id: Some("whole-numbers".into()),
        created_at: at(0),
        updated_at: at(3),
        title: None,
        preview: None,
        paused_at: None,
        ended_at: Some(at(5)),
        session,
    }
}

fn end_at(
    bundle: &crate::content::Bundle,
    thread: &mut Thread,
    snapshot: &mut StudentSnapshot,
    now: DateTime<Utc>,
) -> Ended {
    let course = bundle.course("prealgebra").unwrap();
    Exam.end(&mut Ending {
        course,
        workflow: bundle.workflow_for(course).unwrap(),
        now,
        thread,
        snapshot,
    })
}

#[test]
fn an_exam_the_student_ends_is_scored_with_the_unanswered_at_zero() {
    let bundle = bundle();
    let mut thread = exam_thread(&bundle, serde_json::json!({"questionCount": 4}));
    let mut snapshot = StudentSnapshot::new("s", "prealgebra", "whole-numbers");
    let before = snapshot.clone();
    let ended = end_at(&bundle, &mut thread, &mut snapshot, at(5));
    let text = ended.text.expect("the report is said");
    assert!(text.contains("You ended the exam early"), "{text}");
    assert!(text.contains("You scored 1 out of 4 (25%)"), "{text}");
    // The integration hears of it once, with the score summary only.
    assert_eq!(ended.events.len(), 1);
    let completed = &ended.events[0];
    assert_eq!(completed.kind, OutboundEventKind::SessionCompleted);
    assert_eq!(completed.data["mode"], "exam");
    assert_eq!(completed.data["exam"]["score"], 1.0);
    assert_eq!(completed.data["exam"]["maxScore"], 4);
    assert_eq!(completed.data["exam"]["ended"], "ended_early");
    assert!(completed.data["exam"].get("questions").is_none());
    let exam = exam_of(&thread.session).unwrap();
    assert_eq!(exam.ended, Some(ExamEnd::EndedEarly));
    assert_eq!(exam.finished_at, Some(at(5)));
    let r = report(exam, bundle.course("prealgebra").unwrap(), at(9));
    assert_eq!(
        (r.score, r.max_score, r.answered, r.unanswered),
        (1.0, 4, 2, 2)
    );
    assert_eq!(r.time_used_seconds, 300, "to the end, not to the report");
    assert_eq!(r.questions.len(), 3, "the question on screen is shown");
    // The two answers are evidence, and the thread's learning has them.
    assert_ne!(snapshot, before);
    let progress = &snapshot.unit_progress;
    assert!(!progress.is_empty(), "{snapshot:?}");
    assert!(!thread.session.learning.is_empty());

    // Ending it again changes nothing.
    let (kept, kept_snapshot) = (thread.clone(), snapshot.clone());
    let again = end_at(&bundle, &mut thread, &mut snapshot, at(8));
    assert_eq!(again, Ended::default());
    assert_eq!((thread, snapshot), (kept, kept_snapshot));
}

#[test]
fn an_exam_ended_past_its_time_limit_ends_as_timed_out() {
    let bundle = bundle();
    let mut thread = exam_thread(
        &bundle,
        serde_json::json!({"questionCount": 4, "timeLimitMinutes": 10}),
    );
    let mut snapshot = StudentSnapshot::new("s", "prealgebra", "whole-numbers");
    let text = end_at(&bundle, &mut thread, &mut snapshot, at(12))
        .text
        .unwrap();
    assert!(text.starts_with("Time's up"), "{text}");
    let exam = exam_of(&thread.session).unwrap();
    assert_eq!(exam.ended, Some(ExamEnd::TimeUp));
}

#[test]
fn an_exam_ended_with_nothing_answered_is_no_evidence() {
    let bundle = bundle();
    let mut thread = exam_thread(&bundle, serde_json::json!({"questionCount": 3}));
    let ModeState::Exam(exam) = &mut thread.session.mode_state else {
        panic!();
    };
    for q in &mut exam.questions {
        q.status = ExamQuestionStatus::Unanswered;
        q.result = None;
        q.credit = 0.0;
    }
    let mut snapshot = StudentSnapshot::new("s", "prealgebra", "whole-numbers");
    let before = snapshot.clone();
    let text = end_at(&bundle, &mut thread, &mut snapshot, at(5))
        .text
        .unwrap();
    assert!(text.contains("You scored 0 out of 3"), "{text}");
    assert_eq!(snapshot, before);
}

#[test]
fn scores_are_written_as_a_person_writes_them() {
    assert_eq!(show(2.0), "2");
    assert_eq!(show(2.5), "2.5");
    assert_eq!(show(28.571), "28.6");
    assert_eq!(percent(2.5, 7), 35.7);
    assert_eq!(percent(0.0, 0), 0.0);
    assert_eq!(sentence("Divide both by 2"), "Divide both by 2.");
    assert_eq!(sentence("Done!"), "Done!");
}
