//! A clarify_doubts session and the session lifecycle end to end over
//! HTTP, on the embedded SQLite store and on DynamoDB (moto): three real
//! questions about three units are answered about those units, closing
//! gives a recap and completes the thread, a later message gets a short
//! reply pointing elsewhere, and the next question session remembers this
//! one. Pause refuses turns with a 409 naming the state until resume, which
//! restores the exact state; end completes a thread (with the recap in a
//! question session); the thread list filters by status and mode. Text
//! with control or bidi override characters is refused with a 400 that
//! names the character, and nothing is stored.

use crate::e2e_support;

use e2e_support::{Harness, tutor_text};
use serde_json::{Value, json};

async fn new_thread(h: &Harness, student: &str, mode: &str) -> String {
    let mut body = json!({"courseId": "prealgebra", "mode": mode});
    if mode == "problem_set" {
        body["problems"] = json!([
            {"id": "a", "text": "What is 12 + 15?", "correctAnswer": "27"},
            {"id": "b", "text": "What is 7 x 8?", "correctAnswer": "56"},
            {"id": "c", "text": "What is 100 - 37?", "correctAnswer": "63"},
            {"id": "d", "text": "What is 9 + 6?", "correctAnswer": "15"},
            {"id": "e", "text": "What is -3 + 5?", "correctAnswer": "2"}
        ]);
    }
    let r = h.post(student, "/threads", body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["threadId"].as_str().unwrap().to_owned()
}

async fn say(h: &Harness, student: &str, thread: &str, text: &str) -> Value {
    let r = h
        .post(
            student,
            &format!("/threads/{thread}/turn"),
            json!({ "messageText": text }),
        )
        .await;
    assert_eq!(r.status, 200, "{text}: {}", r.body);
    r.body
}

async fn a_question_session(h: &Harness) {
    let student = "clarify-student";
    let thread = new_thread(h, student, "clarify_doubts").await;
    for (question, about) in [
        ("what is a ratio?", "2:3"),
        (
            "why do we need a common denominator?",
            "denominators must match",
        ),
        ("how do I solve 2x + 3 = 11?", "x = 8 ÷ 2 = 4"),
    ] {
        let turn = say(h, student, &thread, question).await;
        let text = tutor_text(&turn);
        assert!(text.contains(about), "{question}: {text}");
        assert!(turn["state"]["pendingQuestion"].is_null(), "{question}");
        assert!(
            turn["messages"][1]["card"].is_null(),
            "answered in words: {turn}"
        );
    }
    let closed = say(h, student, &thread, "thanks, that's all").await;
    assert_eq!(closed["state"]["status"], "completed");
    assert_eq!(
        closed["state"]["conceptsDiscussed"],
        json!([
            "Ratios and sharing",
            "Adding and subtracting fractions",
            "Two-step equations"
        ])
    );
    assert!(
        tutor_text(&closed).contains("Today we cleared up: ratios and sharing"),
        "{closed}"
    );
    let after = say(h, student, &thread, "what is a percentage?").await;
    let text = tutor_text(&after);
    assert!(text.contains("Teach me"), "{text}");
    assert!(!text.trim_end().ends_with('?'), "no new question: {text}");

    // The thread list shows it completed, with when it ended.
    let listed = h
        .get(student, "/me/threads?status=completed&mode=clarify_doubts")
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let threads = listed.body["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{}", listed.body);
    assert!(threads[0]["endedAt"].is_string(), "{}", listed.body);
    let active = h.get(student, "/me/threads?status=active").await;
    assert_eq!(active.body["threads"], json!([]), "{}", active.body);
    let bad = h.get(student, "/me/threads?status=sleeping").await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["field"], "status", "{}", bad.body);

    // The turn logs, as JSON and as text, to the owner only.
    let logs = h
        .get(student, &format!("/threads/{thread}/logs?limit=2"))
        .await;
    assert_eq!(logs.status, 200, "{}", logs.body);
    let first = &logs.body["logs"];
    assert_eq!(first.as_array().unwrap().len(), 2, "{}", logs.body);
    assert_eq!(first[0]["entry"]["category"], "clarify_answer");
    assert_eq!(first[0]["entry"]["policy"]["focusUnitId"], "ratios");
    let cursor = logs.body["nextCursor"].as_str().unwrap().to_owned();
    let rest = h
        .get(
            student,
            &format!("/threads/{thread}/logs?limit=10&cursor={cursor}"),
        )
        .await;
    assert_eq!(
        rest.body["logs"].as_array().unwrap().len(),
        3,
        "{}",
        rest.body
    );
    assert!(rest.body["nextCursor"].is_null());
    assert!(
        !logs.body.to_string().contains("what is a ratio"),
        "no student text or prompt in the logs"
    );
    let text = h
        .get_text(student, &format!("/threads/{thread}/logs?format=text"))
        .await;
    assert_eq!(text.0, 200);
    assert!(text.1.starts_with("text/plain"), "{}", text.1);
    assert_eq!(text.2.lines().count(), 5, "{}", text.2);
    assert!(
        text.2
            .lines()
            .next()
            .unwrap()
            .contains("category clarify_answer"),
        "{}",
        text.2
    );
    let other = h
        .get("someone-else", &format!("/threads/{thread}/logs"))
        .await;
    assert_eq!(other.status, 404, "{}", other.body);

    // A new session starts knowing what this one discussed.
    let next = new_thread(h, student, "clarify_doubts").await;
    let r = h.get(student, &format!("/threads/{next}")).await;
    assert_eq!(r.status, 200);
    let reply = say(h, student, &next, "what is a percentage?").await;
    assert!(tutor_text(&reply).contains("out of 100"), "{reply}");
}

async fn pause_resume_end(h: &Harness, mode: &str) {
    let student = format!("lifecycle-{mode}");
    let thread = new_thread(h, &student, mode).await;
    let first = say(h, &student, &thread, "what is a ratio?").await;

    let paused = h
        .post(&student, &format!("/threads/{thread}/pause"), json!({}))
        .await;
    assert_eq!(paused.status, 200, "{}", paused.body);
    assert_eq!(paused.body["status"], "paused");
    assert!(paused.body["pausedAt"].is_string());

    let refused = h
        .post(
            &student,
            &format!("/threads/{thread}/turn"),
            json!({"messageText": "what is a percentage?"}),
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert_eq!(refused.body["type"], "urn:tutorflow:problem:thread-paused");
    assert!(
        refused.body["detail"].as_str().unwrap().contains("paused"),
        "{}",
        refused.body
    );
    let listed = h.get(&student, "/me/threads?status=paused").await;
    assert_eq!(listed.body["threads"][0]["threadId"], thread.as_str());

    let resumed = h
        .post(&student, &format!("/threads/{thread}/resume"), json!({}))
        .await;
    assert_eq!(resumed.status, 200, "{}", resumed.body);
    assert_eq!(resumed.body["status"], "active");
    // The state is exactly what it was before the pause.
    let mut before = first["state"].clone();
    let mut after = resumed.body["state"].clone();
    before["status"] = Value::Null;
    after["status"] = Value::Null;
    assert_eq!(before, after);
    say(h, &student, &thread, "what is a percentage?").await;

    let ended = h
        .post(&student, &format!("/threads/{thread}/end"), json!({}))
        .await;
    assert_eq!(ended.status, 200, "{}", ended.body);
    assert_eq!(ended.body["status"], "completed");
    assert!(ended.body["endedAt"].is_string());
    if mode == "clarify_doubts" {
        assert!(
            tutor_text(&ended.body).contains("Today we cleared up: ratios and sharing"),
            "{}",
            ended.body
        );
    }
    if mode == "problem_set" {
        // The set ends where it is, with its report.
        assert_eq!(
            ended.body["state"]["problemSet"]["ended"], "abandoned",
            "{}",
            ended.body
        );
        assert!(
            tutor_text(&ended.body).contains("You finished 0 of 5 problems"),
            "{}",
            ended.body
        );
    }
    let again = h
        .post(&student, &format!("/threads/{thread}/pause"), json!({}))
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.body["type"], "urn:tutorflow:problem:thread-completed");

    // Someone else's thread does not exist for them.
    let other = h
        .post("someone-else", &format!("/threads/{thread}/end"), json!({}))
        .await;
    assert_eq!(other.status, 404, "{}", other.body);
}

async fn spoofing_text_is_refused(h: &Harness) {
    let student = "hygiene-student";
    let thread = new_thread(h, student, "clarify_doubts").await;
    for (text, named) in [
        ("a\u{0}b \u{202e} rtl", "U+0000 (NUL)"),
        ("ab \u{202e} rtl", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("x\u{2066}y", "U+2066"),
    ] {
        let r = h
            .post(
                student,
                &format!("/threads/{thread}/turn"),
                json!({ "messageText": text }),
            )
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.body["field"], "messageText");
        assert!(
            r.body["detail"].as_str().unwrap().contains(named),
            "{}",
            r.body
        );
    }
    let goal = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "goal": "fractions\u{202e}"}),
        )
        .await;
    assert_eq!(goal.status, 400, "{}", goal.body);
    assert_eq!(goal.body["field"], "goal");
    let stored = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(
        stored.body["messages"].as_array().unwrap().len(),
        1,
        "only the welcome: {}",
        stored.body
    );
    // Tabs and line breaks are ordinary text.
    say(h, student, &thread, "what is a ratio?\n\tlike 2:3?").await;
}

#[tokio::test]
async fn sqlite_a_question_session() {
    a_question_session(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_pause_resume_end_in_every_mode() {
    let h = Harness::sqlite().await;
    for mode in ["guided", "teach_me", "clarify_doubts", "problem_set"] {
        pause_resume_end(&h, mode).await;
    }
}

#[tokio::test]
async fn sqlite_spoofing_text_is_refused() {
    spoofing_text_is_refused(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_a_question_session() {
    if let Some(h) = Harness::aws("aws_a_question_session").await {
        a_question_session(&h).await;
    }
}

#[tokio::test]
async fn aws_pause_resume_end_in_every_mode() {
    if let Some(h) = Harness::aws("aws_pause_resume_end_in_every_mode").await {
        for mode in ["guided", "teach_me", "clarify_doubts", "problem_set"] {
            pause_resume_end(&h, mode).await;
        }
    }
}
