//! End to end over HTTP: the local server on a real port, the real handler,
//! the offline tutor, and a real store — the embedded SQLite file, and
//! DynamoDB + S3 on the emulator (moto) that scripts/test.sh starts.
//!
//! A scripted student goes from the first message to a bronze tier; a
//! failed exam question locks and queues a revisit; retries with an
//! Idempotency-Key change nothing; concurrent turns lose nothing; bad
//! requests of every kind are refused and change nothing.

use crate::e2e_support;

use std::time::Duration;

use e2e_support::{
    HOOK_SECRET, Harness, base_config, correct_option, drill_answer, join_all, wrong_answer,
    wrong_option,
};
use serde_json::{Value, json};
use tutorflow::api::auth::{dev_token, dev_token_in_groups};
use tutorflow::config::{Config, ProviderKind};
use tutorflow::store::Order;

/// First message to bronze: drills, stuck, concept card, drills, exam, pass.
async fn journey_to_bronze(h: &Harness) {
    let student = "student-journey";
    let thread = h.new_thread(student).await;
    let unit = json!({"type": "REQUEST_DRILL", "unitId": "whole-numbers"});

    let first = h
        .turn(
            student,
            &thread,
            json!({"messageText": "I want to practise adding whole numbers"}),
        )
        .await;
    assert_eq!(
        first["snapshotLite"]["focus"]["unitId"], "whole-numbers",
        "{first}"
    );

    // Two wrong drills: stuck.
    for _ in 0..2 {
        let turn = h.turn(student, &thread, json!({"clientEvent": unit})).await;
        let card = Harness::card(&turn, "DRILL").unwrap_or_else(|| panic!("a drill card: {turn}"));
        let token = card["drillToken"].as_str().unwrap();
        assert!(card.get("answer").is_none() && !card.to_string().contains("answerIndex"));
        let right = drill_answer(&thread, token);
        let graded = h
            .grade(student, &thread, token, &wrong_answer(card, &right))
            .await;
        assert_eq!(graded["isCorrect"], false, "{graded}");
        assert_eq!(graded["counted"], true);
        assert_eq!(graded["correctAnswer"], right.as_str());
    }
    let after_wrong = h
        .turn(student, &thread, json!({"clientEvent": {"type": "DRILL_CONTINUE", "unitId": "whole-numbers", "lastResult": "incorrect"}}))
        .await;
    let concept = Harness::card(&after_wrong, "CONCEPT")
        .unwrap_or_else(|| panic!("stuck → concept card: {after_wrong}"));
    assert!(!concept["keyIdeas"].as_array().unwrap().is_empty());

    // Two right drills: exam-ready.
    for _ in 0..2 {
        let turn = h.turn(student, &thread, json!({"clientEvent": unit})).await;
        let card = Harness::card(&turn, "DRILL").unwrap_or_else(|| panic!("a drill card: {turn}"));
        let token = card["drillToken"].as_str().unwrap();
        let graded = h
            .grade(student, &thread, token, &drill_answer(&thread, token))
            .await;
        assert_eq!(graded["isCorrect"], true, "{graded}");
        assert_eq!(graded["counted"], true);
        // A second answer to the same drill is not evidence.
        let again = h
            .grade(student, &thread, token, &drill_answer(&thread, token))
            .await;
        assert_eq!(again["counted"], false);
    }
    let ready = h
        .turn(student, &thread, json!({"clientEvent": {"type": "DRILL_CONTINUE", "unitId": "whole-numbers", "lastResult": "correct"}}))
        .await;
    let exam =
        Harness::card(&ready, "EXAM").unwrap_or_else(|| panic!("exam-ready → exam block: {ready}"));
    assert_eq!(exam["tier"], "bronze");
    assert!(
        !exam.to_string().contains("\"answer\""),
        "the card never carries the answer: {exam}"
    );
    let question = exam["questionId"].as_str().unwrap();

    let passed = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": question, "selectedOption": correct_option(question)}),
        )
        .await;
    assert_eq!(passed.status, 200, "{}", passed.body);
    assert_eq!(passed.body["isCorrect"], true);
    assert_eq!(passed.body["masteryTier"], "bronze");
    assert_eq!(passed.body["snapshotLite"]["progress"]["bronze"], 1);

    // The thread's own summary: two wrong drills, a concept card, then two
    // right (the first of them right after help: learned, not a miss) and
    // the exam question right.
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    let s = &summary.body;
    assert_eq!(
        [
            &s["answers"],
            &s["rightFirstTime"],
            &s["learned"],
            &s["wrong"]
        ],
        [5, 2, 1, 2],
        "{s}"
    );
    let headline = s["headline"].as_str().unwrap().to_owned();
    assert!(
        headline.contains("1 right after help") && !headline.contains(" of "),
        "{headline}"
    );
    assert_eq!(s["units"][0]["unitId"], "whole-numbers", "{s}");
    assert_eq!(s["units"][0]["notYetRight"], false, "{s}");
    assert!(s["units"][0]["help"].as_u64().unwrap() >= 1, "{s}");

    let report = h.report(student).await;
    let whole = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["unitId"] == "whole-numbers")
        .unwrap();
    assert_eq!(whole["masteryTier"], "bronze");
    assert_eq!(whole["drillAttempts"], 4);
    assert!(whole["masteryProbability"].as_f64().unwrap() > 0.1);
    // Passed questions are not offered again.
    let again = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": question, "selectedOption": correct_option(question)}),
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);

    // Read back, the conversation shows what became of every card.
    let replay = h
        .get(student, &format!("/threads/{thread}?limit=100"))
        .await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    let messages = replay.body["messages"].as_array().unwrap();
    let drills: Vec<&Value> = messages
        .iter()
        .filter(|m| m["card"]["type"] == "DRILL" && m.get("cardState").is_some())
        .collect();
    assert_eq!(drills.len(), 4, "the four answered drills: {}", replay.body);
    let verdicts: Vec<&Value> = drills
        .iter()
        .map(|m| &m["cardState"]["isCorrect"])
        .collect();
    assert_eq!(verdicts, [false, false, true, true], "{}", replay.body);
    assert!(drills.iter().all(|m| m["cardState"]["type"] == "DRILL"
        && m["cardState"]["answer"].is_string()
        && m["cardState"]["feedbackText"].is_string()));
    let exam_card = messages
        .iter()
        .find(|m| m["card"]["type"] == "EXAM")
        .unwrap();
    assert_eq!(exam_card["cardState"]["status"], "passed", "{exam_card}");
    assert_eq!(
        exam_card["cardState"]["selectedOption"],
        correct_option(question).as_str()
    );
    let events: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["event"]["type"].as_str())
        .collect();
    // Four first answers and two repeats; the refused resubmission is not an event.
    assert_eq!(
        events.iter().filter(|e| **e == "DRILL_GRADED").count(),
        6,
        "{events:?}"
    );
    assert_eq!(events.iter().filter(|e| **e == "EXAM_SUBMITTED").count(), 1);
    let listed = h.get(student, "/me/threads").await;
    let summary = &listed.body["threads"][0];
    assert_eq!(summary["threadId"], thread.as_str());
    assert_eq!(
        summary["title"], "I want to practise adding whole numbers",
        "the first message titles the thread: {summary}"
    );
    assert!(
        summary["preview"].as_str().unwrap().starts_with("I chose"),
        "{summary}"
    );

    // The course graph shows the student's tier per unit.
    let course = h.get(student, "/courses/prealgebra").await;
    assert_eq!(course.status, 200, "{}", course.body);
    assert_eq!(course.body["started"], true);
    let units = course.body["units"].as_array().unwrap();
    assert_eq!(units[0]["unitId"], "whole-numbers");
    assert_eq!(units[0]["masteryTier"], "bronze");
    assert!(units[1..].iter().all(|u| u["masteryTier"] == "none"));
    assert!(
        course.body["edges"]
            .as_array()
            .unwrap()
            .contains(&json!({"from": "whole-numbers", "to": "multiplication-division"}))
    );
    let newcomer = h
        .get("student-catalog-newcomer", "/courses/prealgebra")
        .await;
    assert_eq!(newcomer.body["started"], false);

    // A new thread of the same student speaks of itself: zero turns.
    let fresh = h.new_thread(student).await;
    let empty = h.get(student, &format!("/threads/{fresh}/summary")).await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    let e = &empty.body;
    assert_eq!([&e["turns"], &e["answers"]], [0, 0], "{e}");
    assert_eq!(e["units"].as_array().unwrap().len(), 0, "{e}");
    let fresh_headline = e["headline"].as_str().unwrap();
    assert!(fresh_headline.contains("0 turns"), "{fresh_headline}");
    assert_ne!(fresh_headline, headline);
}

/// A failed question locks and goes on the revisit list; its memo can be
/// opened and it cannot be answered again; a memo viewed locks too.
async fn failures_lock_and_queue_revisits(h: &Harness) {
    let student = "student-revisit";
    let thread = h.new_thread(student).await;
    let card = h.exam_card(student, &thread).await;
    let question = card["questionId"].as_str().unwrap();
    let submit = format!("/threads/{thread}/exam/mcq-submit");
    let failed = h
        .post(
            student,
            &submit,
            json!({"questionId": question, "selectedOption": wrong_option(question)}),
        )
        .await;
    assert_eq!(failed.status, 200, "{}", failed.body);
    assert_eq!(failed.body["isCorrect"], false);
    assert!(failed.body["lockedUntil"].is_string());
    assert_eq!(failed.body["snapshotLite"]["revisit"]["lockedCount"], 1);
    assert_eq!(
        failed.body["snapshotLite"]["revisit"]["nextQuestionId"],
        question
    );
    let locked = h
        .post(
            student,
            &submit,
            json!({"questionId": question, "selectedOption": correct_option(question)}),
        )
        .await;
    assert_eq!(
        locked.status, 409,
        "a locked question cannot be retried: {}",
        locked.body
    );
    assert!(
        locked.body["detail"]
            .as_str()
            .unwrap()
            .contains("locked until"),
        "{}",
        locked.body
    );

    let viewed = h
        .post(
            student,
            &format!("/threads/{thread}/exam/support-viewed"),
            json!({"questionId": question, "supportType": "memo"}),
        )
        .await;
    assert_eq!(viewed.status, 200, "{}", viewed.body);
    assert!(viewed.body["memo"].as_str().unwrap().len() > 20);
    assert_eq!(viewed.body["snapshotLite"]["revisit"]["lockedCount"], 1);
    // A memo opened on a card still open locks its question too.
    h.show_exam_cards(&thread, &["EX-WHN-S1"]).await;
    let viewed = h
        .post(
            student,
            &format!("/threads/{thread}/exam/support-viewed"),
            json!({"questionId": "EX-WHN-S1", "supportType": "memo"}),
        )
        .await;
    assert_eq!(viewed.status, 200, "{}", viewed.body);
    assert_eq!(viewed.body["snapshotLite"]["revisit"]["lockedCount"], 2);
    let report = h.report(student).await;
    let queued: Vec<&str> = report["revisit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["questionId"].as_str().unwrap())
        .collect();
    assert_eq!(queued, vec![question, "EX-WHN-S1"]);
    // The exam actions are in the timeline (after the drills that led to the card).
    let replay = h
        .get(student, &format!("/threads/{thread}?limit=100"))
        .await;
    let events: Vec<&Value> = replay.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.get("event"))
        .filter(|e| e["type"] != "DRILL_GRADED")
        .collect();
    assert_eq!(events.len(), 3, "{}", replay.body);
    assert_eq!(events[0]["type"], "EXAM_SUBMITTED");
    assert_eq!(events[0]["isCorrect"], false);
    assert!(events[0]["lockedUntil"].is_string());
    assert_eq!(events[1]["type"], "SUPPORT_VIEWED");
    assert_eq!(events[1]["supportType"], "memo");
    assert_eq!(events[2]["type"], "SUPPORT_VIEWED");
}

/// Retrying with the same key returns the same response and applies nothing twice.
async fn idempotent_retries(h: &Harness) {
    let student = "student-idem";
    let thread = h.new_thread(student).await;
    let send = |key: &str, text: &str| {
        h.http
            .post(format!("{}/threads/{thread}/turn", h.base))
            .bearer_auth(h.token(student))
            .header("Idempotency-Key", key)
            .json(&json!({"messageText": text}))
    };
    let first = h.send(send("k-1", "what is a negative number?")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = h.send(send("k-1", "what is a negative number?")).await;
    assert_eq!(second.status, 200);
    assert!(second.replayed && !first.replayed);
    assert_eq!(first.body, second.body, "identical response");
    assert_eq!(
        h.message_count(student, &thread).await,
        3,
        "welcome + one student and one tutor message"
    );
    let reused = h.send(send("k-1", "a different message")).await;
    assert_eq!(reused.status, 422, "{}", reused.body);
    assert_eq!(h.message_count(student, &thread).await, 3);
    // The same key belongs to each student separately.
    let other = h.new_thread("student-idem-2").await;
    let r = h
        .send(
            h.http
                .post(format!("{}/threads/{other}/turn", h.base))
                .bearer_auth(h.token("student-idem-2"))
                .header("Idempotency-Key", "k-1")
                .json(&json!({"messageText": "what is a negative number?"})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(!r.replayed);
}

/// 20 turns at once on one thread: each commits whole or fails cleanly.
async fn concurrent_turns(h: &Harness) {
    let student = "student-concurrent";
    let thread = h.new_thread(student).await;
    let path = format!("/threads/{thread}/turn");
    let results = join_all(
        (0..20)
            .map(|i| {
                h.post(
                    student,
                    &path,
                    json!({"messageText": format!("message {i}: how do I add 2 + 3?")}),
                )
            })
            .collect(),
    )
    .await;
    let ok = results.iter().filter(|r| r.status == 200).count();
    for r in &results {
        assert!(
            r.status == 200 || r.status == 409,
            "{} {}",
            r.status,
            r.body
        );
    }
    assert!(ok >= 1);
    let thread_view = h
        .get(student, &format!("/threads/{thread}?limit=100"))
        .await;
    assert_eq!(
        thread_view.body["state"]["turnCount"], ok,
        "one turn counted per commit"
    );
    assert_eq!(
        thread_view.body["messages"].as_array().unwrap().len(),
        1 + 2 * ok,
        "no lost or doubled message"
    );
}

/// Everything a caller can get wrong is refused with problem+json, and
/// changes nothing.
async fn bad_requests_change_nothing(h: &Harness) {
    let student = "student-bad";
    let thread = h.new_thread(student).await;
    let turn_path = format!("{}/threads/{thread}/turn", h.base);
    let before = h.message_count(student, &thread).await;
    let raw = |body: &'static str| {
        h.http
            .post(&turn_path)
            .bearer_auth(h.token(student))
            .header("content-type", "application/json")
            .body(body)
    };
    let cases: Vec<(u16, Option<&str>, reqwest::RequestBuilder)> = vec![
        (400, None, raw("{\"messageText\": ")),
        (400, Some("messageTxt"), raw("{\"messageTxt\": \"hi\"}")),
        (
            400,
            Some("clientEvent.type"),
            raw("{\"clientEvent\": {\"type\": \"TELEPORT\"}}"),
        ),
        (400, None, raw("{}")),
        (
            400,
            Some("messageText"),
            h.http
                .post(&turn_path)
                .bearer_auth(h.token(student))
                .json(&json!({"messageText": "x".repeat(4001)})),
        ),
        (
            413,
            None,
            h.http
                .post(&turn_path)
                .bearer_auth(h.token(student))
                .json(&json!({"messageText": "x".repeat(70_000)})),
        ),
        (
            415,
            None,
            h.http
                .post(&turn_path)
                .bearer_auth(h.token(student))
                .header("content-type", "text/plain")
                .body("hi"),
        ),
        (
            401,
            None,
            h.http.post(&turn_path).json(&json!({"messageText": "hi"})),
        ),
        (
            401,
            None,
            h.http
                .post(&turn_path)
                .bearer_auth(dev_token(
                    "forged-secret-0123456789abcdef",
                    student,
                    Duration::from_secs(60),
                ))
                .json(&json!({"messageText": "hi"})),
        ),
        (
            404,
            None,
            h.http
                .post(&turn_path)
                .bearer_auth(h.token("another-student"))
                .json(&json!({"messageText": "hi"})),
        ),
        (
            404,
            None,
            h.http
                .post(format!("{}/threads/no-such-thread/turn", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"messageText": "hi"})),
        ),
        (
            405,
            None,
            h.http.delete(&turn_path).bearer_auth(h.token(student)),
        ),
        (
            400,
            Some("drillToken"),
            h.http
                .post(format!("{}/threads/{thread}/drill/grade", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"drillToken": "v1.forged.token", "studentAnswer": "4"})),
        ),
        (
            400,
            Some("selectedOption"),
            h.http
                .post(format!("{}/threads/{thread}/exam/mcq-submit", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"questionId": "EX-WHN-B1", "selectedOption": "Z"})),
        ),
        (
            400,
            Some("isCorrect"),
            h.http
                .post(format!("{}/threads/{thread}/exam/mcq-submit", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"questionId": "EX-WHN-B1", "isCorrect": true})),
        ),
        (
            400,
            Some("questionCount"),
            h.http
                .post(format!("{}/threads", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"courseId": "prealgebra", "mode": "exam", "questionCount": 0})),
        ),
        (
            400,
            Some("courseId"),
            h.http
                .post(format!("{}/threads", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"courseId": "astrophysics"})),
        ),
        (
            400,
            Some("limit"),
            h.http
                .get(format!("{}/me/threads?limit=0", h.base))
                .bearer_auth(h.token(student)),
        ),
    ];
    for (status, field, request) in cases {
        let r = h.send(request).await;
        assert_eq!(r.status, status, "{}", r.body);
        if status != 405 {
            assert!(
                r.body["type"]
                    .as_str()
                    .unwrap()
                    .starts_with("urn:tutorflow:problem:"),
                "{}",
                r.body
            );
            assert!(r.body["requestId"].is_string(), "{}", r.body);
            assert!(!r.body["detail"].as_str().unwrap().is_empty());
        }
        if let Some(field) = field {
            assert_eq!(r.body["field"], field, "{}", r.body);
        }
    }
    assert_eq!(
        h.message_count(student, &thread).await,
        before,
        "nothing was written"
    );
    let report = h.report(student).await;
    assert_eq!(report["revisit"].as_array().unwrap().len(), 0);
    // Another student's thread is not found, whatever the route.
    for path in [
        format!("/threads/{thread}"),
        format!("/threads/{thread}/summary"),
    ] {
        assert_eq!(h.get("another-student", &path).await.status, 404);
    }
}

/// An n8n integration: signed requests only, its own students only, the
/// webhook reply shape (docs/webhooks.md), replays answered from the store.
async fn webhook_turns(h: &Harness) {
    let send = |body: &Value, timestamp: i64, secret: &str| {
        let bytes = serde_json::to_vec(body).unwrap();
        let signature = tutorflow::api::webhook::sign(secret.as_bytes(), timestamp, &bytes);
        h.http
            .post(format!("{}/webhooks/turn", h.base))
            .header("content-type", "application/json")
            .header("x-tutorflow-integration", "n8n")
            .header("x-tutorflow-timestamp", timestamp.to_string())
            .header("x-tutorflow-signature", signature)
            .body(bytes)
    };
    let now = chrono::Utc::now().timestamp();
    let body = json!({
        "student_id": "n8n:42", "session_id": "sess-1", "message": "I think it's 2",
        "current_problem": {"id": "p1", "text": "What is -3 + 5?", "correct_answer": "2"}
    });
    let first = h.send(send(&body, now, HOOK_SECRET)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(!first.body["output"].as_str().unwrap().is_empty());
    // A current_problem starts a problem set: right first time moves on.
    assert_eq!(
        first.body["_debug"]["category"], "problem_solved",
        "{}",
        first.body
    );
    assert_eq!(first.body["session_status"]["action"], "ADVANCE");
    let replay = h.send(send(&body, now, HOOK_SECRET)).await;
    assert!(
        replay.replayed,
        "an exact replay is answered from the store"
    );
    assert_eq!(replay.body, first.body);
    assert_eq!(
        h.send(send(&body, now - 3600, HOOK_SECRET)).await.status,
        401,
        "outside the window"
    );
    assert_eq!(h.send(send(&body, now, "wrong-secret")).await.status, 401);
    let stranger = json!({"student_id": "lms:7", "session_id": "s", "message": "hi"});
    assert_eq!(h.send(send(&stranger, now, HOOK_SECRET)).await.status, 403);
}

/// A mode the course's workflow switches off: creating a thread in it is a
/// 422 problem naming the mode (and the field), nothing is created, and the
/// catalog does not offer it. The other modes carry on.
#[tokio::test]
async fn a_mode_the_course_switches_off_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = e2e_support::base_config(dir.path());
    config.content.dir = e2e_support::bundle_patched(
        dir.path(),
        &[
            (
                "workflows/default.yaml",
                "  exam:\n    enabled: true",
                "  exam:\n    enabled: false",
            ),
            (
                "workflows/default.yaml",
                "  survey:\n    enabled: true",
                "  survey:\n    enabled: false",
            ),
        ],
    );
    let h = Harness::start(config, dir, None).await;
    let student = "student-disabled";
    for mode in ["exam", "survey"] {
        let response = h
            .http
            .post(format!("{}/threads", h.base))
            .bearer_auth(h.token(student))
            .json(&json!({"courseId": "prealgebra", "mode": mode, "unitId": "fractions"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 422, "{mode}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{mode}"
        );
        let problem: Value = response.json().await.unwrap();
        assert_eq!(
            problem["type"], "urn:tutorflow:problem:mode-disabled",
            "{problem}"
        );
        assert_eq!(problem["status"], 422);
        assert_eq!(problem["field"], "mode", "{problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("`{mode}`")), "{detail}");
        assert!(detail.contains("`prealgebra`"), "{detail}");
    }
    let listed = h.get(student, "/me/threads").await;
    assert_eq!(listed.body["threads"], json!([]), "{}", listed.body);
    let course = h.get(student, "/courses/prealgebra").await;
    assert_eq!(course.status, 200, "{}", course.body);
    let offered = course.body["modes"].as_array().unwrap();
    assert!(
        !offered.contains(&json!("exam")) && !offered.contains(&json!("survey")),
        "{offered:?}"
    );
    assert!(offered.contains(&json!("guided")), "{offered:?}");
    let lesson = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "teach_me", "unitId": "fractions"}),
        )
        .await;
    assert_eq!(lesson.status, 201, "{}", lesson.body);
}

#[tokio::test]
async fn sqlite_journey_to_bronze() {
    journey_to_bronze(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_failures_lock_and_queue_revisits() {
    failures_lock_and_queue_revisits(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_idempotent_retries() {
    idempotent_retries(&Harness::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_turns() {
    concurrent_turns(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_bad_requests_change_nothing() {
    bad_requests_change_nothing(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_webhook_turns() {
    webhook_turns(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_journey_to_bronze() {
    if let Some(h) = Harness::aws("aws_journey_to_bronze").await {
        journey_to_bronze(&h).await;
    }
}

#[tokio::test]
async fn aws_failures_lock_and_queue_revisits() {
    if let Some(h) = Harness::aws("aws_failures_lock_and_queue_revisits").await {
        failures_lock_and_queue_revisits(&h).await;
    }
}

#[tokio::test]
async fn aws_idempotent_retries() {
    if let Some(h) = Harness::aws("aws_idempotent_retries").await {
        idempotent_retries(&h).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_concurrent_turns() {
    if let Some(h) = Harness::aws("aws_concurrent_turns").await {
        concurrent_turns(&h).await;
    }
}

#[tokio::test]
async fn aws_bad_requests_change_nothing() {
    if let Some(h) = Harness::aws("aws_bad_requests_change_nothing").await {
        bad_requests_change_nothing(&h).await;
    }
}

/// A tutor model that times out, or answers with something that is not the
/// contract, still gives the student a valid reply — and the turn log says
/// it fell back.
#[tokio::test]
async fn a_failing_model_falls_back_to_the_offline_tutor() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    for response in [
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "{\"action\": \"TELEPORT\"}", "refusal": null}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        })),
        ResponseTemplate::new(200).set_delay(Duration::from_secs(30)),
    ] {
        let model = MockServer::builder().start().await;
        Mock::given(method("POST")).respond_with(response).mount(&model).await;
        let dir = tempfile::tempdir().unwrap();
        let mut config = base_config(dir.path());
        config.llm.tutor = ProviderKind::OpenaiCompatible;
        config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
        config.content.dir = e2e_support::bundle_with_short_tutor_timeout(dir.path());
        let sqlite = config.store.sqlite_path.clone();
        let h = Harness::start(config, dir, None).await;
        let student = "student-fallback";
        let thread = h.new_thread(student).await;
        let turn = h.turn(student, &thread, json!({"messageText": "how do I add 45 and 38?"})).await;
        let text = turn["messages"][1]["text"].as_str().unwrap();
        assert!(!text.is_empty(), "{turn}");
        let store = tutorflow::store::SqliteStore::open(&sqlite, tutorflow::store::Retention::from_config(&Config::default().store))
            .await
            .unwrap();
        use tutorflow::store::TurnLogStore;
        let logs = store
            .list_turn_logs(&thread, Order::NewestFirst, &tutorflow::store::PageRequest::first(5), chrono::Utc::now())
            .await
            .unwrap();
        let entry = &logs.items[0].entry;
        assert_eq!(entry["origin"], "fallback", "{entry}");
        assert_eq!(entry["validation"]["outcome"], "fallback", "{entry}");
        assert!(entry["llm"]["error"].is_string() || entry["validation"]["violations"].is_array(), "{entry}");
    }
}

/// A stand-in for an OpenAI-compatible tutor model: it asks "What is
/// 7 + 5?" in words with the answer it expects, and after each answer
/// probes how the student got it (a question with no answer of its own).
/// It answers in the provider's real response shape, on the unit the
/// policy focuses.
struct AsksInWords;

impl wiremock::Respond for AsksInWords {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let prompt: String = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let unit = prompt
            .split("\"focusUnitId\"")
            .nth(1)
            .and_then(|rest| rest.split('"').nth(1))
            .unwrap_or_default()
            .to_owned();
        // The question itself, not its sum: the prompt's content has sums of
        // its own, and a generated item may read "27 + 54".
        let first = !prompt.contains("What is 7 + 5?");
        let (text, asked) = if first {
            (
                "Let's add. What is 7 + 5?",
                json!({"text": "What is 7 + 5?", "expected_answer": "12"}),
            )
        } else {
            ("Not quite. How did you get that?", Value::Null)
        };
        let reply = json!({
            "mapped_units": [], "action": "SOCRATIC_QUESTION", "target_unit_id": unit,
            "tutor_text": text, "concept_card": null, "drill_card": null, "exam_suggestion": null,
            "question_asked": asked, "advance": false,
            "turn_analysis": {"student_intent": if first { "question" } else { "answer" },
                "understanding_signal": "uncertain", "suggested_prereq_units": [],
                "answer_text": null, "answer_correct": null, "misconceptions_detected": []}
        });
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply.to_string(), "refusal": null}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        }))
    }
}

/// A question the tutor model asks in words keeps its expected answer on
/// the server: each wrong answer is graded by code, counted, and escalates
/// the phase asked → probe → hint → explain → strategy change; the answer
/// never reaches the student's view.
#[tokio::test]
async fn a_question_asked_in_words_is_graded_and_escalates() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer};
    let model = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(AsksInWords)
        .mount(&model)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    let h = Harness::start(config, dir, None).await;
    let student = "student-words";
    let thread = h.new_thread(student).await;
    let asked = h
        .turn(
            student,
            &thread,
            json!({"messageText": "can we practise adding?"}),
        )
        .await;
    let pending = &asked["state"]["pendingQuestion"];
    assert_eq!(pending["text"], "What is 7 + 5?", "{asked}");
    assert_eq!(
        (pending["phase"].as_str(), pending["wrongAttempts"].as_u64()),
        (Some("asked"), Some(0))
    );
    // What the student is shown: the messages' words and the question's state.
    let texts: Vec<&Value> = asked["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["text"])
        .collect();
    let shown = json!([texts, asked["state"]["pendingQuestion"]]).to_string();
    assert!(
        !shown.contains("12"),
        "the expected answer reached the student: {shown}"
    );
    for (answer, phase, attempts) in [
        ("11", "probe", 1),
        ("13", "hint", 2),
        ("it's 10", "explain", 3),
        ("14", "strategy_change", 4),
    ] {
        let turn = h
            .turn(student, &thread, json!({"messageText": answer}))
            .await;
        let pending = &turn["state"]["pendingQuestion"];
        assert_eq!(pending["phase"], phase, "after {answer}: {turn}");
        assert_eq!(pending["wrongAttempts"], attempts, "after {answer}: {turn}");
    }
    // Nor is it written back into what the model is told about the question.
    let requests = model.received_requests().await.unwrap();
    let last = String::from_utf8_lossy(&requests.last().unwrap().body).into_owned();
    let question_line = last
        .split("Question being worked on:")
        .nth(1)
        .and_then(|rest| rest.split("\\n").next())
        .unwrap_or_default();
    assert!(question_line.contains("7 + 5"), "{question_line}");
    assert!(!question_line.contains("12"), "{question_line}");
    let right = h.turn(student, &thread, json!({"messageText": "12"})).await;
    // A right answer clears it: what is pending now is the model's next
    // question, a fresh one.
    let pending = &right["state"]["pendingQuestion"];
    assert_ne!(pending["text"], "What is 7 + 5?", "{right}");
    assert_eq!(pending["wrongAttempts"], 0, "{right}");
}

/// The debug drawer's trace: only with `debug.enabled`, only for staff.
#[tokio::test]
async fn the_policy_trace_is_for_staff_on_a_debug_server_only() {
    async fn turn_as(h: &Harness, token: &str) -> Value {
        let created = h
            .send(
                h.http()
                    .post(format!("{}/threads", h.base()))
                    .bearer_auth(token)
                    .json(&json!({"courseId": "prealgebra"})),
            )
            .await;
        let thread = created.body["threadId"].as_str().unwrap().to_owned();
        let reply = h
            .send(
                h.http()
                    .post(format!("{}/threads/{thread}/turn", h.base()))
                    .bearer_auth(token)
                    .json(&json!({"messageText": "how do I add 47 and 38?"})),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    }
    let hour = Duration::from_secs(3600);
    let staff = dev_token_in_groups(e2e_support::JWT_SECRET, "teacher-1", &["staff"], hour);
    let student = dev_token(e2e_support::JWT_SECRET, "student-debug", hour);

    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.debug.enabled = true;
    let debug_server = Harness::start(config, dir, None).await;
    let traced = turn_as(&debug_server, &staff).await;
    let debug = &traced["debug"];
    assert!(
        debug["trace"]["policy"]["focusUnitId"].is_string(),
        "{traced}"
    );
    assert!(
        debug["trace"]["topCandidates"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    assert!(
        debug["trace"]["topCandidates"][0]["score"].is_number(),
        "{debug}"
    );
    assert_eq!(
        debug["unitTiers"][0]["unitId"],
        debug["trace"]["policy"]["focusUnitId"]
    );
    assert!(
        turn_as(&debug_server, &student)
            .await
            .get("debug")
            .is_none()
    );

    let plain_server = Harness::sqlite().await;
    assert!(turn_as(&plain_server, &staff).await.get("debug").is_none());
}
