//! Personalization end to end over HTTP, on the embedded SQLite store and
//! on DynamoDB (moto): a saved profile (`PUT /me/profile`) reaches every
//! new thread — the tutor greets the student by name and speaks their
//! language — while `student` on `POST /threads` overrides it for that
//! thread alone. A profile is the caller's own, and one that breaks a
//! rule is refused with a 400 naming the field, changing nothing. A
//! student who likes sports gets practice items told in sports, graded
//! right from the sealed token; a student without themes gets the same
//! items told plainly.

use crate::e2e_support;

use e2e_support::{Harness, drill_answer, tutor_text};
use serde_json::{Value, json};

async fn put_profile(h: &Harness, student: &str, profile: Value) -> e2e_support::Reply {
    let request = h
        .http()
        .put(format!("{}/me/profile", h.base()))
        .bearer_auth(h.token(student))
        .header("idempotency-key", uuid::Uuid::new_v4().to_string())
        .json(&profile);
    h.send(request).await
}

async fn personalization(h: &Harness) {
    let student = "lucia";
    let saved = json!({"name": "Lucía", "language": "es", "exampleThemes": ["cooking"]});
    let put = put_profile(h, student, saved.clone()).await;
    assert_eq!(put.status, 200, "{}", put.body);
    let read = h.get(student, "/me/profile").await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body, saved);

    // A new thread takes the saved profile: greeted by name, in Spanish.
    let created = h
        .post(student, "/threads", json!({"courseId": "prealgebra"}))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let welcome = tutor_text(&created.body);
    assert!(
        welcome.contains("Lucía") && welcome.contains("Hola"),
        "{welcome}"
    );
    let thread = created.body["threadId"].as_str().unwrap().to_owned();
    let stuck = h
        .turn(
            student,
            &thread,
            json!({"messageText": "how do I add 1/2 + 1/3? I'm stuck"}),
        )
        .await;
    let boundary = h
        .turn(
            student,
            &thread,
            json!({"messageText": "do you play minecraft?"}),
        )
        .await;
    // Chatter mid-problem is answered in Spanish, back to the problem.
    let back = tutor_text(&boundary);
    assert!(
        back.contains("1/2 + 1/3") && (back.contains("Volvamos") || back.contains("estábamos")),
        "{} / {back}",
        tutor_text(&stuck)
    );

    // `student` on the thread overrides the saved profile for that thread.
    let english = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "student": {"name": "Lu", "language": "en"}}),
        )
        .await;
    assert_eq!(english.status, 201, "{}", english.body);
    let welcome = tutor_text(&english.body);
    assert!(
        welcome.contains("Lu") && !welcome.contains("Lucía") && !welcome.contains("Hola"),
        "{welcome}"
    );
    assert_eq!(h.get(student, "/me/profile").await.body, saved);

    // Another student sees only their own (empty) profile.
    let other = h.get("someone-else", "/me/profile").await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert!(other.body.get("name").is_none(), "{}", other.body);

    // A profile breaking a rule is refused, naming the field; nothing changes.
    for (bad, field) in [
        (json!({"age": 99}), "age"),
        (json!({"name": ""}), "name"),
        (json!({"language": "klingon"}), "language"),
    ] {
        let refused = put_profile(h, student, bad.clone()).await;
        assert_eq!(refused.status, 400, "{bad}: {}", refused.body);
        assert_eq!(refused.body["status"], 400, "a problem: {}", refused.body);
        let named = refused.body["field"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
            + refused.body["detail"].as_str().unwrap_or_default();
        assert!(named.contains(field), "{bad}: {}", refused.body);
    }
    assert_eq!(h.get(student, "/me/profile").await.body, saved);
}

/// The prompts of the first `count` drills a student with `themes` is set
/// on whole numbers, each graded with its right answer.
async fn drills_for(h: &Harness, student: &str, themes: Value, count: usize) -> Vec<String> {
    let created = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "student": {"exampleThemes": themes}}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let thread = created.body["threadId"].as_str().unwrap().to_owned();
    let ask = json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}});
    let mut prompts = Vec::new();
    for _ in 0..count * 3 {
        let turn = h.turn(student, &thread, ask.clone()).await;
        let Some(card) = Harness::card(&turn, "DRILL") else {
            continue;
        };
        let token = card["drillToken"].as_str().unwrap();
        let graded = h
            .grade(student, &thread, token, &drill_answer(&thread, token))
            .await;
        assert_eq!(graded["isCorrect"], true, "{card}: {graded}");
        prompts.push(card["prompt"].as_str().unwrap().to_owned());
        if prompts.len() == count {
            return prompts;
        }
    }
    panic!("only {} drills in {} asks", prompts.len(), count * 3);
}

async fn items_in_the_students_theme(h: &Harness) {
    // Both whole-number blueprints offer sports.
    let sporty = ["basketball team", "stadium"];
    for prompt in drills_for(h, "sporty", json!(["sports"]), 3).await {
        assert!(
            sporty.iter().any(|s| prompt.contains(s)),
            "a sports wording: {prompt}"
        );
    }
    for prompt in drills_for(h, "plain", json!([]), 3).await {
        assert!(
            !sporty.iter().any(|s| prompt.contains(s)),
            "a plain wording: {prompt}"
        );
    }
}

#[tokio::test]
async fn sqlite_items_are_told_in_the_students_theme() {
    items_in_the_students_theme(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_items_are_told_in_the_students_theme() {
    if let Some(h) = Harness::aws("aws_items_are_told_in_the_students_theme").await {
        items_in_the_students_theme(&h).await;
    }
}

#[tokio::test]
async fn sqlite_a_saved_profile_reaches_new_threads() {
    personalization(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_a_saved_profile_reaches_new_threads() {
    if let Some(h) = Harness::aws("aws_a_saved_profile_reaches_new_threads").await {
        personalization(&h).await;
    }
}
