//! Free text outside the turn's message is held to the same rule as the
//! message (docs/architecture.md, "Text hygiene"): a drill answer, a
//! caller's problem id and a webhook's student id carrying a control or
//! bidirectional override character are refused with a 400 problem naming
//! the field and the character, and nothing is stored.

use crate::e2e_support;

use e2e_support::{HOOK_SECRET, Harness, drill_answer};
use serde_json::{Value, json};

fn assert_refused(r: &e2e_support::Reply, field: &str, named: &str) {
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["field"], field, "{}", r.body);
    assert!(
        r.body["detail"].as_str().unwrap().contains(named),
        "{}",
        r.body
    );
}

async fn a_drill_answer_with_a_control_character_is_refused(h: &Harness) {
    let student = "hygiene-drill";
    let thread = h.new_thread(student).await;
    let turn = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}}),
        )
        .await;
    let card = Harness::card(&turn, "DRILL").unwrap_or_else(|| panic!("a drill card: {turn}"));
    let token = card["drillToken"].as_str().unwrap().to_owned();
    let right = drill_answer(&thread, &token);
    let messages = h.message_count(student, &thread).await;
    for (answer, named) in [
        (format!("{right}\u{0}"), "U+0000 (NUL)"),
        (
            format!("\u{202e}{right}"),
            "U+202E (RIGHT-TO-LEFT OVERRIDE)",
        ),
        (format!("{right} \u{85}x"), "U+0085"),
    ] {
        let r = h
            .post(
                student,
                &format!("/threads/{thread}/drill/grade"),
                json!({"drillToken": token, "studentAnswer": answer}),
            )
            .await;
        assert_refused(&r, "studentAnswer", named);
    }
    assert_eq!(
        h.message_count(student, &thread).await,
        messages,
        "a refused answer adds no event message"
    );
    // Nothing was recorded on the card: the clean answer is still the
    // first attempt, and counts.
    let graded = h.grade(student, &thread, &token, &right).await;
    assert_eq!(graded["isCorrect"], true, "{graded}");
    assert_eq!(graded["counted"], true, "{graded}");
}

async fn a_problem_id_with_a_bidi_override_is_refused(h: &Harness) {
    let student = "hygiene-problems";
    let problems: Vec<Value> = (1..=5)
        .map(|i| {
            json!({
                "id": if i == 3 { "p\u{202d}3".to_owned() } else { format!("p{i}") },
                "text": format!("What is {i} + {i}?"),
                "correctAnswer": format!("{}", i + i),
            })
        })
        .collect();
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "problem_set", "problems": problems}),
        )
        .await;
    assert_refused(&r, "problems[2].id", "U+202D (LEFT-TO-RIGHT OVERRIDE)");
    let listed = h.get(student, "/me/threads").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(
        listed.body["threads"].as_array().unwrap().len(),
        0,
        "no thread was created: {}",
        listed.body
    );
}

async fn signed_webhook(h: &Harness, body: &Value) -> e2e_support::Reply {
    let raw = serde_json::to_vec(body).unwrap();
    let timestamp = chrono::Utc::now().timestamp();
    let signature = tutorflow::api::webhook::sign(HOOK_SECRET.as_bytes(), timestamp, &raw);
    h.send(
        h.http()
            .post(format!("{}/webhooks/turn", h.base()))
            .header("content-type", "application/json")
            .header("x-tutorflow-integration", "n8n")
            .header("x-tutorflow-timestamp", timestamp.to_string())
            .header("x-tutorflow-signature", signature)
            .body(raw),
    )
    .await
}

async fn a_webhook_student_id_with_a_bidi_isolate_is_refused(h: &Harness) {
    let r = signed_webhook(
        h,
        &json!({"student_id": "n8n:kid\u{2067}1", "session_id": "s-1", "message": "hi"}),
    )
    .await;
    assert_refused(&r, "student_id", "U+2067 (RIGHT-TO-LEFT ISOLATE)");
    // Spelt plainly, the same message is an ordinary first message.
    let r = signed_webhook(
        h,
        &json!({"student_id": "n8n:kid1", "session_id": "s-1", "message": "hi"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["session_status"]["status"], "active", "{}", r.body);
}

#[tokio::test]
async fn sqlite_free_text_outside_the_message_is_held_to_the_same_rule() {
    let h = Harness::sqlite().await;
    a_drill_answer_with_a_control_character_is_refused(&h).await;
    a_problem_id_with_a_bidi_override_is_refused(&h).await;
    a_webhook_student_id_with_a_bidi_isolate_is_refused(&h).await;
}
