//! Exam mode end to end over HTTP, on the embedded SQLite store and on
//! DynamoDB + S3 (moto): a 7-question exam with immediate feedback (right,
//! close, wrong, skipped, ended early), a deferred exam where no route
//! says anything about correctness before the end, an adaptive exam whose
//! questions get harder after right answers, two tabs answering the same
//! question under their own Idempotency-Keys (one graded, once), an exam
//! ended with `POST /threads/{id}/end` scored as its end event scores it,
//! and the creation parameters refused with a problem naming the field. The answers are read from the store behind the API: a client
//! never sees them before they may be shown.

use crate::e2e_support;

use e2e_support::Harness;
use serde_json::{Value, json};
use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::grading;
use tutorflow::engine::reply::answer_guard::PendingAnswer;
use tutorflow::model::{
    AnswerKind, ExamQuestion, ExamQuestionStatus, ExamSession, GradeOutcome, ModeState,
};

const COURSE: &str = "prealgebra";

async fn new_exam(h: &Harness, student: &str, body: Value) -> (String, Value) {
    let mut body = body;
    body["courseId"] = json!(COURSE);
    body["mode"] = json!("exam");
    let r = h.post(student, "/threads", body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    (r.body["threadId"].as_str().unwrap().to_owned(), r.body)
}

/// The exam as the server keeps it, answers included.
async fn exam(h: &Harness, thread: &str) -> ExamSession {
    let record = h.store.get_thread(thread, 0).await.unwrap().unwrap();
    match record.thread.session.mode_state {
        ModeState::Exam(e) => e,
        other => panic!("not an exam: {other:?}"),
    }
}

fn texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "assistant")
                .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A question as it is shown, options included: numbers the student can
/// read on screen give nothing away.
fn as_shown(q: &ExamQuestion) -> String {
    format!("{} {} {}", q.prompt, q.question_latex, q.options.join(" "))
}

/// No unrevealed answer in what the tutor said, and no mark of an
/// unrevealed question anywhere in the body.
fn assert_no_leak(body: &Value, exam: &ExamSession, revealed: impl Fn(&ExamQuestion) -> bool) {
    let said = texts(body);
    let on_screen =
        |q: &ExamQuestion| body["state"]["examProgress"]["question"]["number"] == q.number;
    // A question asked before the one on screen is still in the
    // conversation as it was shown, its options (one of them right)
    // included: its answer cannot be told apart from its options there.
    // Its marks are checked below.
    let current = body["state"]["examProgress"]["question"]["number"]
        .as_u64()
        .unwrap_or(0);
    let asked_before = |q: &ExamQuestion| u64::from(q.number) < current;
    // What may be read legitimately: the questions revealed (with their
    // answers and explanations), the question on screen, and the questions
    // asked before it as they were shown (an option of one, 4/44, may equal
    // a later question's answer, 1/11).
    let visible: String = exam
        .questions
        .iter()
        .map(|q| {
            if revealed(q) || on_screen(q) {
                format!("{} {} {}", as_shown(q), q.correct_answer, q.explanation)
            } else if asked_before(q) {
                as_shown(q)
            } else {
                String::new()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let unasked = |q: &&ExamQuestion| !revealed(q) && u64::from(q.number) >= current;
    for q in exam.questions.iter().filter(unasked) {
        if let Some(guard) = PendingAnswer::for_expected("q", &as_shown(q), &q.expected) {
            // An answer that is also a number on screen (or another
            // question's revealed answer) cannot be told apart in text.
            if !guard.found_in(&visible) {
                assert!(
                    !guard.found_in(&said),
                    "question {} ({}) leaked in {said}",
                    q.number,
                    q.correct_answer
                );
            }
        }
    }
    let results = body["state"]["examProgress"]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for r in results {
        let q = &exam.questions[r["number"].as_u64().unwrap() as usize - 1];
        assert!(
            revealed(q),
            "question {} shown before it may be: {r}",
            q.number
        );
    }
}

/// The right answer, as a student would type it.
fn right(q: &ExamQuestion) -> String {
    q.correct_answer.split(": ").last().unwrap().to_owned()
}

/// A typed answer the grader calls close, for a number question.
fn close(q: &ExamQuestion) -> Option<String> {
    if q.expected.kind != AnswerKind::Number {
        return None;
    }
    let value: f64 = q.expected.value.parse().ok()?;
    let settings = grading_settings();
    // One out in the last place written, then further.
    let places = q.expected.value.split_once('.').map_or(0, |(_, f)| f.len());
    let last_place = 10f64.powi(-(places as i32));
    [
        last_place,
        -last_place,
        1.0,
        -1.0,
        0.1 * value,
        -0.1 * value,
        0.5,
        2.0,
    ]
    .into_iter()
    .map(|d| {
        let v = value + d;
        if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            format!("{v:.places$}")
        }
    })
    .find(|a| grading::grade(&q.expected, a, None, settings).result == GradeOutcome::Close)
}

/// The shipped workflow's grading settings, as the server grades with.
fn grading_settings() -> &'static GradingSettings {
    &e2e_support::bundle()
        .workflows
        .values()
        .next()
        .unwrap()
        .grading
}

/// A wrong answer: another option graded wrong (a distractor one out in
/// the last place is close), or a number far off.
fn wrong(q: &ExamQuestion) -> String {
    let settings = grading_settings();
    if let Some(other) = q.options.iter().find(|o| {
        **o != right(q)
            && grading::grade(&q.expected, o, None, settings).result == GradeOutcome::Wrong
    }) {
        return other.clone();
    }
    match q.expected.value.parse::<f64>() {
        Ok(v) => format!("{}", (v * 7.0 + 1000.0).round()),
        Err(_) => "x = 123456".into(),
    }
}

async fn an_immediate_exam_marks_each_answer(h: &Harness) {
    let student = "student-exam";
    let (thread, created) = new_exam(
        h,
        student,
        json!({"units": ["whole-numbers", "decimals", "ratios"], "questionCount": 7}),
    )
    .await;
    let progress = &created["state"]["examProgress"];
    assert_eq!(progress["totalQuestions"], 7);
    assert_eq!(progress["question"]["number"], 1);
    assert!(progress.get("results").is_none(), "{created}");
    let mut e = exam(h, &thread).await;
    assert_eq!(e.questions.len(), 7);
    let texts_now = texts(&created);
    assert!(texts_now.contains("Question 1 of 7"), "{texts_now}");
    assert!(
        !texts_now.contains("Question 2 of 7"),
        "only the first question"
    );
    assert_no_leak(&created, &e, |_| false);

    // The mix: 2 easy, 4 medium, 1 hard (each within one).
    for (band, want) in [("easy", 2i64), ("medium", 4), ("hard", 1)] {
        let got = e
            .questions
            .iter()
            .filter(|q| format!("{:?}", q.difficulty).to_lowercase() == band)
            .count() as i64;
        assert!((got - want).abs() <= 1, "{band}: {got} for {want}");
    }
    let mut keys: Vec<String> = e.questions.iter().map(as_shown).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 7, "no question twice");

    // Right, then close where a typed number can be close (else wrong),
    // then wrong, then skipped, then ended early.
    let first = h
        .turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[0])}),
        )
        .await;
    assert!(texts(&first).contains("Question 1: correct"), "{first}");
    assert_eq!(first["state"]["examProgress"]["correctSoFar"], 1);
    assert_no_leak(&first, &e, |q| q.number == 1);

    e = exam(h, &thread).await;
    let q2 = &e.questions[1];
    let (said, credit) = match close(q2) {
        Some(c) => (c, 0.5),
        None => (wrong(q2), 0.0),
    };
    let second = h.turn(student, &thread, json!({"messageText": said})).await;
    let results = second["state"]["examProgress"]["results"]
        .as_array()
        .unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[1]["credit"], credit, "{second}");
    assert!(
        texts(&second).contains(&q2.correct_answer),
        "the answer after marking"
    );
    assert_no_leak(&second, &e, |q| q.number <= 2);

    let third = h
        .turn(
            student,
            &thread,
            json!({"messageText": wrong(&e.questions[2])}),
        )
        .await;
    assert!(texts(&third).contains("Question 3: not quite"), "{third}");
    assert_eq!(
        third["state"]["examProgress"]["results"][2]["result"],
        "incorrect"
    );
    assert_no_leak(&third, &e, |q| q.number <= 3);

    // Help is not given during an exam, and the question stays open.
    let asked = h
        .turn(student, &thread, json!({"messageText": "what is a ratio?"}))
        .await;
    assert!(texts(&asked).contains("can't give help"), "{asked}");
    assert_eq!(asked["state"]["examProgress"]["currentQuestion"], 4);
    assert_no_leak(&asked, &e, |q| q.number <= 3);

    let skipped = h
        .turn(student, &thread, json!({"messageText": "skip"}))
        .await;
    assert_eq!(skipped["state"]["examProgress"]["skipped"], 1);
    assert_eq!(skipped["state"]["examProgress"]["currentQuestion"], 5);

    let ended = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "EXAM_END"}}),
        )
        .await;
    assert_eq!(ended["state"]["isComplete"], true, "{ended}");
    assert_eq!(ended["state"]["examProgress"]["ended"], "ended_early");
    e = exam(h, &thread).await;
    let score: f64 = e.questions.iter().map(|q| q.credit).sum();
    assert_eq!(score, 1.0 + credit);
    assert_eq!(e.questions[4].status, ExamQuestionStatus::Unanswered);

    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200);
    let report = &summary.body["exam"];
    assert_eq!(report["score"], score, "{report}");
    assert_eq!(report["maxScore"], 7);
    assert_eq!(report["answered"], 3);
    assert_eq!(report["skipped"], 1);
    assert_eq!(report["unanswered"], 3);
    let questions = report["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 5, "questions never reached stay hidden");
    assert!(questions.iter().all(|q| q["correctAnswer"].is_string()));
    assert!(!report["byUnit"].as_array().unwrap().is_empty());
    assert!(!report["byDifficulty"].as_array().unwrap().is_empty());

    // The answers are evidence in the student's record.
    let card = h.report(student).await;
    let attempts: u64 = card["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["drillAttempts"].as_u64().unwrap_or(0))
        .sum();
    let bank_answers = e.questions[..3]
        .iter()
        .filter(|q| matches!(q.source, tutorflow::model::ExamItemSource::Bank { .. }))
        .count() as u64;
    assert_eq!(attempts + bank_answers, 3, "{card}");

    // After the end, nothing more is marked.
    let after = h.turn(student, &thread, json!({"messageText": "7"})).await;
    assert!(texts(&after).contains("This exam is finished"), "{after}");
}

/// What the report card says about the student's answers: per unit, the
/// mastery, drill and exam counts and the mistakes; the revisit list.
fn marks(card: &Value) -> Value {
    let units: Vec<Value> = card["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            json!([
                u["unitId"],
                u["masteryTier"],
                u["masteryProbability"],
                u["drillAttempts"],
                u["drillCorrect"],
                u["examsPassed"],
                u["confusionTags"]
            ])
        })
        .collect();
    json!({"units": units, "revisit": card["revisit"], "strengths": card["strengths"], "weak": card["weakAreas"]})
}

async fn a_deferred_exam_reveals_nothing_until_the_end(h: &Harness) {
    let student = "student-proctored";
    let (thread, created) = new_exam(
        h,
        student,
        json!({"unitId": "fractions", "questionCount": 4, "feedback": "deferred"}),
    )
    .await;
    let e = exam(h, &thread).await;
    assert_no_leak(&created, &e, |_| false);
    assert!(
        created["state"]["examProgress"]
            .get("correctSoFar")
            .is_none()
    );
    let card_before = marks(&h.report(student).await);
    let answers = [
        right(&e.questions[0]),
        wrong(&e.questions[1]),
        right(&e.questions[2]),
    ];
    for (i, said) in answers.iter().enumerate() {
        let turn = h.turn(student, &thread, json!({"messageText": said})).await;
        let t = texts(&turn).to_lowercase();
        assert!(t.contains("recorded"), "{t}");
        for word in ["correct", "not quite", "close", "wrong", "the answer is"] {
            assert!(!t.contains(word), "`{word}` said before the end: {t}");
        }
        assert!(turn["state"]["examProgress"].get("correctSoFar").is_none());
        assert_no_leak(&turn, &e, |_| false);
        // Every other route, too.
        let replay = h.get(student, &format!("/threads/{thread}")).await;
        assert_no_leak(&replay.body, &e, |_| false);
        // A closed tab resumes at the question on screen.
        let resumed = &replay.body["state"]["examProgress"];
        assert_eq!(resumed["question"]["number"], i + 2, "{resumed}");
        assert!(resumed["startedAt"].is_string());
        let replayed = replay.body.to_string().to_lowercase();
        assert!(!replayed.contains("not quite") && !replayed.contains("correctanswer"));
        let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
        assert!(summary.body.get("exam").is_none(), "{}", summary.body);
        assert_eq!(summary.body["answers"], 0, "{}", summary.body);
        assert_eq!(summary.body["wrong"], 0);
        assert_eq!(
            marks(&h.report(student).await),
            card_before,
            "after answer {}",
            i + 1
        );
        let list = h.get(student, "/me/threads").await;
        assert!(!list.body.to_string().to_lowercase().contains("not quite"));
    }
    let last = h
        .turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[3])}),
        )
        .await;
    let t = texts(&last);
    assert!(t.contains("You scored 3 out of 4"), "{t}");
    assert!(
        t.contains(&e.questions[1].correct_answer),
        "answers at the end: {t}"
    );
    assert_eq!(
        last["state"]["examProgress"]["results"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.body["exam"]["score"], 3.0, "{}", summary.body);
    assert_eq!(summary.body["answers"], 4);
    assert_ne!(
        marks(&h.report(student).await),
        card_before,
        "evidence at the end"
    );
}

async fn an_adaptive_exam_gets_harder_after_right_answers(h: &Harness) {
    let student = "student-adaptive";
    let (thread, created) = new_exam(
        h,
        student,
        json!({"units": ["whole-numbers", "decimals"], "questionCount": 6, "selection": "adaptive"}),
    )
    .await;
    assert_eq!(created["state"]["examProgress"]["selection"], "adaptive");
    assert_eq!(exam(h, &thread).await.questions.len(), 1, "one at a time");
    for n in 0..6 {
        let e = exam(h, &thread).await;
        assert_eq!(e.questions.len(), n + 1);
        h.turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[n])}),
        )
        .await;
    }
    let e = exam(h, &thread).await;
    assert!(e.finished());
    let first = e.questions[0].difficulty_value;
    let last = e.questions[5].difficulty_value;
    assert!(last > first, "{first} then {last}");
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    let ability = &summary.body["exam"]["ability"];
    assert!(ability["estimate"].as_f64().unwrap() > 0.5, "{ability}");
    assert!(
        ability["standardError"].as_f64().unwrap() < 1.0,
        "{ability}"
    );
}

/// A turn posted under its own Idempotency-Key, as a browser tab sends it.
async fn tab(
    h: &Harness,
    student: &str,
    thread: &str,
    key: &str,
    body: &Value,
) -> e2e_support::Reply {
    h.send(
        h.http()
            .post(format!("{}/threads/{thread}/turn", h.base()))
            .bearer_auth(h.token(student))
            .header("Idempotency-Key", key)
            .json(body),
    )
    .await
}

async fn two_tabs_answering_the_same_question_count_once(h: &Harness) {
    let student = "student-two-tabs";
    let (thread, _) = new_exam(h, student, json!({"unitId": "ratios", "questionCount": 3})).await;
    let first = exam(h, &thread).await;
    // The tabs disagree: one sends the right answer, the other a wrong one.
    let bodies = [right(&first.questions[0]), wrong(&first.questions[0])].map(|said| {
        json!({
            "messageText": said,
            "clientEvent": {"type": "EXAM_ANSWER", "questionNumber": 1},
        })
    });
    let keys = ["tab-one-answer-1", "tab-two-answer-1"];
    let replies = e2e_support::join_all(vec![
        tab(h, student, &thread, keys[0], &bodies[0]),
        tab(h, student, &thread, keys[1], &bodies[1]),
    ])
    .await;
    // The other tab is told its answer was not counted: by the exam (the
    // question was answered) or, while the first is still being answered,
    // by the thread's lease (409, send again).
    let marked = |r: &e2e_support::Reply| {
        r.status == 200
            && (texts(&r.body).contains("Question 1: correct")
                || texts(&r.body).contains("Question 1: not quite"))
    };
    let counted: Vec<usize> = (0..2).filter(|&i| marked(&replies[i])).collect();
    let refused = replies
        .iter()
        .filter(|r| {
            (r.status == 409
                && r.body["type"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("urn:tutorflow:problem:")))
                || (r.status == 200 && texts(&r.body).contains("already been answered"))
        })
        .count();
    assert_eq!(
        (counted.len(), refused),
        (1, 1),
        "{:?}",
        replies
            .iter()
            .map(|r| (r.status, &r.body))
            .collect::<Vec<_>>()
    );
    let winner = counted[0];
    let e = exam(h, &thread).await;
    assert_eq!(e.current_index, 1, "one answer moved the exam on");
    assert_eq!(
        e.questions[0].student_answer.as_deref(),
        bodies[winner]["messageText"].as_str()
    );
    let credit = if winner == 0 { 1.0 } else { 0.0 };
    assert_eq!(
        e.questions[0].credit, credit,
        "graded once, as the counted tab was told"
    );
    assert_eq!(e.questions[1].status, ExamQuestionStatus::Unanswered);
    let progress = &replies[winner].body["state"]["examProgress"];
    assert_eq!(progress["answered"], 1, "{progress}");

    // Each tab sending its request again gets its own reply back, and
    // nothing is marked again.
    let again = tab(h, student, &thread, keys[winner], &bodies[winner]).await;
    assert!(again.replayed, "{}", again.body);
    assert_eq!(again.body, replies[winner].body);
    let after = exam(h, &thread).await;
    assert_eq!(after.questions[0], e.questions[0]);
    assert_eq!(after.current_index, 1);

    // Ended now, the exam counts the one answer, once.
    let ended = h
        .post(student, &format!("/threads/{thread}/end"), json!({}))
        .await;
    assert_eq!(ended.status, 200, "{}", ended.body);
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.body["exam"]["answered"], 1, "{}", summary.body);
    assert_eq!(summary.body["exam"]["score"], credit);
}

/// `POST /threads/{id}/end` on an exam scores it exactly as its end event
/// does: two students answer the same way (one right, one wrong or close,
/// one skip), one ends with the event and one ends the thread; the reports
/// agree, the answers are evidence once, and ending again changes nothing.
async fn ending_the_thread_scores_the_exam_as_the_end_event_does(h: &Harness) {
    let mut reports = Vec::new();
    for (student, by_event) in [("student-end-event", true), ("student-end-thread", false)] {
        let (thread, _) = new_exam(
            h,
            student,
            json!({"units": ["whole-numbers", "decimals"], "questionCount": 5, "feedback": "deferred"}),
        )
        .await;
        let e = exam(h, &thread).await;
        h.turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[0])}),
        )
        .await;
        h.turn(
            student,
            &thread,
            json!({"messageText": wrong(&e.questions[1])}),
        )
        .await;
        h.turn(student, &thread, json!({"messageText": "skip"}))
            .await;
        let (state, said) = if by_event {
            let ended = h
                .turn(
                    student,
                    &thread,
                    json!({"clientEvent": {"type": "EXAM_END"}}),
                )
                .await;
            (ended["state"].clone(), texts(&ended))
        } else {
            let ended = h
                .post(student, &format!("/threads/{thread}/end"), json!({}))
                .await;
            assert_eq!(ended.status, 200, "{}", ended.body);
            assert_eq!(ended.body["status"], "completed");
            (ended.body["state"].clone(), texts(&ended.body))
        };
        assert_eq!(state["isComplete"], true, "{state}");
        assert_eq!(state["examProgress"]["ended"], "ended_early", "{state}");
        assert!(said.contains("You ended the exam early"), "{said}");
        let stored = exam(h, &thread).await;
        let score: f64 = stored.questions.iter().map(|q| q.credit).sum();
        assert_eq!(stored.questions[0].credit, 1.0);
        assert!(
            said.contains(&format!("You scored {score} out of 5")),
            "{said}"
        );
        assert_eq!(stored.questions[3].status, ExamQuestionStatus::Unanswered);
        // Deferred marks are revealed at the end, however it came.
        assert!(said.contains(&e.questions[1].correct_answer), "{said}");
        let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
        assert_eq!(summary.status, 200, "{}", summary.body);
        let mut report = summary.body["exam"].clone();
        assert_eq!(report["answered"], 2, "{report}");
        assert_eq!(report["skipped"], 1);
        assert_eq!(report["unanswered"], 2);
        assert_eq!(report["score"], score);
        // The answers are evidence in the student's record, once each.
        let card = h.report(student).await;
        let attempts: u64 = card["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["drillAttempts"].as_u64().unwrap_or(0))
            .sum();
        let bank_answers = e.questions[..2]
            .iter()
            .filter(|q| matches!(q.source, tutorflow::model::ExamItemSource::Bank { .. }))
            .count() as u64;
        assert_eq!(attempts + bank_answers, 2, "{card}");

        if !by_event {
            // Ending again (another tab, a retry) changes nothing.
            let messages = h.message_count(student, &thread).await;
            let again = h
                .post(student, &format!("/threads/{thread}/end"), json!({}))
                .await;
            assert_eq!(again.status, 200, "{}", again.body);
            assert_eq!(again.body["messages"], json!([]));
            assert_eq!(h.message_count(student, &thread).await, messages);
            assert_eq!(h.report(student).await, card, "nothing counted twice");
            let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
            assert_eq!(summary.body["exam"], report);
        }
        // What differs between two exams: their questions and times.
        for key in [
            "score",
            "percentage",
            "questions",
            "byUnit",
            "byDifficulty",
            "strengths",
            "toReview",
            "nextUnits",
            "timeUsedSeconds",
            "ability",
        ] {
            report.as_object_mut().unwrap().remove(key);
        }
        reports.push(report);
    }
    assert_eq!(reports[0], reports[1]);
}

async fn bad_parameters_are_refused(h: &Harness) {
    let student = "student-bad-exam";
    for (body, field) in [
        (json!({"questionCount": 0}), "questionCount"),
        (json!({"questionCount": 31}), "questionCount"),
        (json!({"units": []}), "units"),
        (json!({"units": ["ratios", "no-such-unit"]}), "units"),
        (json!({"timeLimitMinutes": 0}), "timeLimitMinutes"),
    ] {
        let mut body = body;
        body["courseId"] = json!(COURSE);
        body["mode"] = json!("exam");
        let r = h.post(student, "/threads", body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body.to_string().contains(field), "{}", r.body);
    }
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": COURSE, "mode": "exam", "feedback": "sometimes"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        h.get(student, "/me/threads").await.body["threads"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn sqlite_an_immediate_exam_marks_each_answer() {
    an_immediate_exam_marks_each_answer(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_a_deferred_exam_reveals_nothing_until_the_end() {
    a_deferred_exam_reveals_nothing_until_the_end(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_an_adaptive_exam_gets_harder_after_right_answers() {
    an_adaptive_exam_gets_harder_after_right_answers(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_two_tabs_answering_the_same_question_count_once() {
    two_tabs_answering_the_same_question_count_once(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_ending_the_thread_scores_the_exam_as_the_end_event_does() {
    ending_the_thread_scores_the_exam_as_the_end_event_does(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_ending_the_thread_scores_the_exam_as_the_end_event_does() {
    if let Some(h) =
        Harness::aws("aws_ending_the_thread_scores_the_exam_as_the_end_event_does").await
    {
        ending_the_thread_scores_the_exam_as_the_end_event_does(&h).await;
    }
}

#[tokio::test]
async fn sqlite_bad_parameters_are_refused() {
    bad_parameters_are_refused(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_an_immediate_exam_marks_each_answer() {
    if let Some(h) = Harness::aws("aws_an_immediate_exam_marks_each_answer").await {
        an_immediate_exam_marks_each_answer(&h).await;
    }
}

#[tokio::test]
async fn aws_a_deferred_exam_reveals_nothing_until_the_end() {
    if let Some(h) = Harness::aws("aws_a_deferred_exam_reveals_nothing_until_the_end").await {
        a_deferred_exam_reveals_nothing_until_the_end(&h).await;
    }
}

#[tokio::test]
async fn aws_two_tabs_answering_the_same_question_count_once() {
    if let Some(h) = Harness::aws("aws_two_tabs_answering_the_same_question_count_once").await {
        two_tabs_answering_the_same_question_count_once(&h).await;
    }
}

/// With a model configured for the tutor and the summary, an exam's turns
/// never call it (the mode writes its replies), so no prompt can carry an
/// answer; the summary's prompt before the end of a deferred exam carries
/// none either.
#[tokio::test]
async fn no_answer_reaches_a_model_prompt() {
    use e2e_support::base_config;
    use tutorflow::config::ProviderKind;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let model = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&model)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.summary = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    let h = Harness::start(config, dir, None).await;
    let student = "student-prompts";
    for feedback in ["immediate", "deferred"] {
        let (thread, _) = new_exam(
            &h,
            student,
            json!({"unitId": "whole-numbers", "questionCount": 3, "feedback": feedback}),
        )
        .await;
        let e = exam(&h, &thread).await;
        h.turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[0])}),
        )
        .await;
        h.turn(
            student,
            &thread,
            json!({"messageText": wrong(&e.questions[1])}),
        )
        .await;
        assert!(
            model.received_requests().await.unwrap().is_empty(),
            "{feedback}: an exam turn called the model"
        );
        // The summary's call (it fails here, so the route answers 500 or
        // falls back; what matters is what it was sent).
        let _ = h.get(student, &format!("/threads/{thread}/summary")).await;
        let e = exam(&h, &thread).await;
        // Immediate feedback has shown the answered ones to the student.
        let unrevealed = |q: &&ExamQuestion| {
            feedback == "deferred" || q.status == ExamQuestionStatus::Unanswered
        };
        for request in model.received_requests().await.unwrap() {
            let prompt = String::from_utf8_lossy(&request.body).to_string();
            for q in e.questions.iter().filter(unrevealed) {
                assert!(
                    !prompt.contains(&format!("\"{}\"", q.correct_answer))
                        && !prompt.contains(&q.explanation),
                    "{feedback}: question {}'s answer in a prompt: {prompt}",
                    q.number
                );
            }
        }
        model.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500))
            .mount(&model)
            .await;
    }
}

/// An OpenAI-compatible chat completion whose structured output is `reply`.
fn completion(reply: Value) -> wiremock::ResponseTemplate {
    wiremock::ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "llama3.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.to_string(), "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140}
    }))
}

/// The written bank question put on screen next: question 2 of `thread`'s
/// exam (not yet shown) is replaced through the store, so the test does not
/// depend on the draw.
async fn written_next(h: &Harness, thread: &str, question_id: &str) -> ExamQuestion {
    let record = h.store.get_thread(thread, 0).await.unwrap().unwrap();
    let mut t = record.thread.clone();
    let ModeState::Exam(e) = &mut t.session.mode_state else {
        panic!("an exam");
    };
    let course = e2e_support::bundle().course(COURSE).unwrap();
    let (_, item) = course.exam_item(question_id).unwrap();
    assert!(item.is_written());
    let q = &mut e.questions[1];
    q.prompt = item.stem.clone();
    q.question_latex = String::new();
    q.format = tutorflow::model::AnswerFormat::Text;
    q.options = Vec::new();
    q.source = tutorflow::model::ExamItemSource::Bank {
        question_id: item.id.clone(),
        tier: item.tier,
    };
    q.expected = tutorflow::model::ExpectedAnswer {
        kind: AnswerKind::Text,
        value: item.answer.clone(),
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    };
    q.correct_answer = item.answer.clone();
    q.explanation = item.memo.trim().to_owned();
    q.rubric = item.rubric.clone();
    let written = q.clone();
    let mut work = tutorflow::store::UnitOfWork::new();
    work.put_thread(record.update(t, Vec::new()));
    h.store.commit(work).await.unwrap();
    written
}

/// What the evaluation model was sent, as one text per request.
async fn evaluation_prompts(model: &wiremock::MockServer) -> Vec<String> {
    model
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .collect()
}

/// A written answer is judged by the `exam_evaluation` call (the turn's
/// one call: the tutor is never asked), which sees that question, its
/// model answer and rubric and the answer, never another question; its
/// verdict is recorded with the workflow's partial credit. An invalid
/// reply or a 500 leaves the offline judge's mark, and the turn succeeds.
/// A deferred exam says nothing of the marks, judged or not, until the
/// end; the integration hears `session.completed` once, at the end.
async fn written_answers_are_judged_by_the_evaluation_call(
    h: &Harness,
    model: &wiremock::MockServer,
    receiver: &wiremock::MockServer,
) {
    use wiremock::Mock;
    use wiremock::matchers::{method, path};
    let partial = e2e_support::bundle().workflows["default"]
        .modes
        .exam
        .partial_credit;

    // A valid verdict: close, with feedback.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(json!({
            "result": "partial",
            "feedback": "You add back, but say what total shows it is right."
        })))
        .mount(model)
        .await;
    let student = "student-written";
    let (thread, _) = new_exam(
        h,
        student,
        json!({"unitId": "whole-numbers", "questionCount": 3}),
    )
    .await;
    let written = written_next(h, &thread, "EX-WHN-W1").await;
    let e = exam(h, &thread).await;
    let first = h
        .turn(
            student,
            &thread,
            json!({"messageText": right(&e.questions[0])}),
        )
        .await;
    assert!(texts(&first).contains(&written.prompt), "{first}");
    assert_eq!(first["state"]["examProgress"]["question"]["format"], "text");
    assert!(
        evaluation_prompts(model).await.is_empty(),
        "code grades question 1"
    );
    let answer = "I would add 34 and 38 back together";
    let second = h
        .turn(student, &thread, json!({"messageText": answer}))
        .await;
    let said = texts(&second);
    assert!(
        said.contains("Question 2: close, so it earns part of the mark"),
        "{said}"
    );
    assert!(said.contains("say what total shows it is right."), "{said}");
    assert_eq!(
        second["state"]["examProgress"]["results"][1]["credit"],
        partial
    );
    assert_no_leak(&second, &e, |q| q.number <= 2);
    let stored = exam(h, &thread).await;
    assert_eq!(stored.questions[1].credit, partial);
    assert_eq!(
        stored.questions[1].judged_by,
        Some(tutorflow::model::JudgedBy::Model)
    );
    // One call, the evaluation's: this question alone.
    let prompts = evaluation_prompts(model).await;
    assert_eq!(prompts.len(), 1, "one LLM call, and not the tutor's");
    let prompt = &prompts[0];
    assert!(prompt.contains("exam_evaluation"), "the evaluation schema");
    assert!(prompt.contains("Mia worked out 72 - 38"), "{prompt}");
    assert!(prompt.contains(answer), "{prompt}");
    assert!(
        prompt.contains("adds the answer and the number taken away"),
        "{prompt}"
    );
    for other in [&stored.questions[0], &stored.questions[2]] {
        assert!(
            !prompt.contains(&other.prompt),
            "question {} sent",
            other.number
        );
    }
    // The last answer ends it: session.completed, once.
    h.turn(student, &thread, json!({"messageText": "skip"}))
        .await;
    let events = completed_events(receiver, &thread).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let data = &events[0]["data"];
    assert_eq!(data["mode"], "exam");
    assert_eq!(data["exam"]["score"], 1.0 + partial);
    assert_eq!(data["exam"]["maxScore"], 3);
    assert!(
        !events[0].to_string().contains(answer),
        "no student words sent"
    );
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    let judged = &summary.body["exam"]["questions"][1];
    assert_eq!(judged["judgedBy"], "model", "{judged}");
    assert_eq!(judged["result"], "partial", "{judged}");
    assert!(judged["feedback"].as_str().unwrap().contains("what total"));
    let after = h.turn(student, &thread, json!({"messageText": "7"})).await;
    assert!(texts(&after).contains("This exam is finished"));
    // A written question is not a card's choice: exam-submit refuses it.
    let guided = h.new_thread(student).await;
    let submit = h
        .post(
            student,
            &format!("/threads/{guided}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-W1", "selectedOption": "A"}),
        )
        .await;
    assert!(
        (400..500).contains(&submit.status) && submit.body.to_string().contains("questionId"),
        "{}",
        submit.body
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        completed_events(receiver, &thread).await.len(),
        1,
        "still once"
    );

    // An invalid verdict, then a 500: the offline judge's mark stands.
    for (case, reply) in [
        (
            "invalid",
            completion(json!({"result": "maybe", "feedback": "?"})),
        ),
        ("500", wiremock::ResponseTemplate::new(500)),
    ] {
        model.reset().await;
        Mock::given(method("POST"))
            .respond_with(reply)
            .mount(model)
            .await;
        let (thread, _) = new_exam(
            h,
            student,
            json!({"unitId": "whole-numbers", "questionCount": 3, "feedback": "deferred"}),
        )
        .await;
        written_next(h, &thread, "EX-WHN-W1").await;
        let e = exam(h, &thread).await;
        let first = h
            .turn(
                student,
                &thread,
                json!({"messageText": wrong(&e.questions[0])}),
            )
            .await;
        assert_no_leak(&first, &e, |_| false);
        let r = h
            .send(
                h.http()
                    .post(format!("{}/threads/{thread}/turn", h.base()))
                    .bearer_auth(h.token(student))
                    .json(&json!({"messageText": "Add them back: 34 + 38 = 72"})),
            )
            .await;
        assert_eq!(r.status, 200, "{case}: {}", r.body);
        let said = texts(&r.body);
        assert!(
            said.starts_with("Answer to question 2 recorded."),
            "{case}: {said}"
        );
        assert_no_leak(&r.body, &e, |_| false);
        assert!(
            r.body["state"]["examProgress"]
                .get("correctSoFar")
                .is_none()
        );
        assert!(
            !evaluation_prompts(model).await.is_empty(),
            "{case}: the call was made"
        );
        let stored = exam(h, &thread).await;
        let q = &stored.questions[1];
        assert_eq!(
            q.result,
            Some(tutorflow::model::QuestionResult::Correct),
            "{case}"
        );
        assert_eq!(
            q.judged_by,
            Some(tutorflow::model::JudgedBy::Rubric),
            "{case}"
        );
        // Nothing about it before the end: not the summary, not the logs.
        let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
        assert!(
            !summary.body.to_string().contains("\"correct\""),
            "{case}: {}",
            summary.body
        );
        let logs = h.get(student, &format!("/threads/{thread}/logs")).await;
        assert!(
            !logs.body.to_string().contains("\"correct\""),
            "{case}: {}",
            logs.body
        );
        assert!(completed_events(receiver, &thread).await.is_empty());
        let last = h
            .turn(student, &thread, json!({"messageText": "skip"}))
            .await;
        assert!(texts(&last).contains("Your answers:"), "{last}");
        assert_eq!(completed_events(receiver, &thread).await.len(), 1);
    }
}

/// The `session.completed` deliveries for `thread` the receiver has, one
/// per event id, once the first arrived (or the wait is over).
async fn completed_events(receiver: &wiremock::MockServer, thread: &str) -> Vec<Value> {
    let mut found = Vec::new();
    for _ in 0..40 {
        found.clear();
        let mut ids = std::collections::BTreeSet::new();
        for r in receiver.received_requests().await.unwrap_or_default() {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            if body["type"] == "session.completed"
                && body["threadId"] == thread
                && ids.insert(body["id"].to_string())
            {
                found.push(body);
            }
        }
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    found
}

async fn judge_and_receiver() -> (wiremock::MockServer, wiremock::MockServer) {
    use wiremock::matchers::method;
    let receiver = wiremock::MockServer::builder().start().await;
    wiremock::Mock::given(method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    (wiremock::MockServer::builder().start().await, receiver)
}

/// The evaluation call on the OpenAI-compatible provider, and the LMS
/// address for notifications.
fn judged_config(
    config: &mut tutorflow::config::Config,
    model: &wiremock::MockServer,
    receiver: &wiremock::MockServer,
) {
    config.llm.exam_evaluation = tutorflow::config::ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    config.notifications.lms_webhook_url = Some(format!("{}/lms", receiver.uri()));
    config.notifications.signing_secret = Some("env:E2E_HOOK_SECRET".into());
}

#[tokio::test]
async fn sqlite_written_answers_are_judged_by_the_evaluation_call() {
    let (model, receiver) = judge_and_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = e2e_support::base_config(dir.path());
    judged_config(&mut config, &model, &receiver);
    let h = Harness::start(config, dir, None).await;
    written_answers_are_judged_by_the_evaluation_call(&h, &model, &receiver).await;
}

#[tokio::test]
async fn aws_written_answers_are_judged_by_the_evaluation_call() {
    let (model, receiver) = judge_and_receiver().await;
    if let Some(h) = Harness::aws_with(
        "aws_written_answers_are_judged_by_the_evaluation_call",
        |c| judged_config(c, &model, &receiver),
    )
    .await
    {
        written_answers_are_judged_by_the_evaluation_call(&h, &model, &receiver).await;
    }
}
