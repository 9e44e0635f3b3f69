//! Survey mode end to end over HTTP, on the embedded SQLite store and on
//! DynamoDB + S3 (moto): the fractions check-in answered with a skip rule
//! taken, an interruption resumed at the same question, an optional
//! question skipped, the answers in the thread's state and summary; and
//! bad input (an unknown survey, an answer to a question that is not on
//! screen or not in the survey, an invalid choice, skipping a required
//! question) refused with a problem naming what was wrong, changing nothing.

mod e2e_support;

use e2e_support::Harness;
use serde_json::{Value, json};
use tutorflow::model::ModeState;

const COURSE: &str = "prealgebra";
const SURVEY: &str = "fractions-confidence";

fn said(body: &Value) -> String {
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

fn on_screen(body: &Value) -> &Value {
    &body["state"]["survey"]["question"]["questionId"]
}

async fn new_survey(h: &Harness, student: &str) -> (String, Value) {
    // No survey named: the unit's check-in is the one answered.
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": COURSE, "mode": "survey", "unitId": "fractions"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    (r.body["threadId"].as_str().unwrap().to_owned(), r.body)
}

async fn a_survey_follows_its_skips_and_resumes(h: &Harness) {
    let student = "student-survey";
    let (thread, created) = new_survey(h, student).await;
    let text = said(&created);
    assert!(text.contains("Quick check-in: fractions"), "{text}");
    assert!(
        text.contains("Question 1 of 5: Have you worked with fractions"),
        "{text}"
    );
    assert_eq!(created["state"]["survey"]["surveyId"], SURVEY);
    let first = &created["state"]["survey"]["question"];
    assert_eq!(first["kind"], "choice");
    assert_eq!(first["options"].as_array().unwrap().len(), 3);
    assert_eq!(first["required"], true);

    // "Not yet" jumps past the questions about earlier work.
    let turn = h
        .turn(
            student,
            &thread,
            json!({"messageText": "not_yet",
                   "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "met_before"}}),
        )
        .await;
    assert_eq!(on_screen(&turn), "feeling", "{}", turn["state"]);
    assert!(said(&turn).contains("Question 4 of 5"), "{}", said(&turn));

    // The tab is closed; the thread opened again shows the same question.
    let reopened = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(reopened.status, 200, "{}", reopened.body);
    assert_eq!(on_screen(&reopened.body), "feeling");

    // A typed answer: the option's number.
    let turn = h.turn(student, &thread, json!({"messageText": "2"})).await;
    assert_eq!(on_screen(&turn), "anything_else");
    assert_eq!(turn["state"]["survey"]["question"]["required"], false);

    let turn = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "SURVEY_SKIP", "questionId": "anything_else"}}),
        )
        .await;
    assert_eq!(turn["state"]["survey"]["finished"], true);
    assert_eq!(turn["state"]["status"], "completed");
    let closing = said(&turn);
    assert!(closing.contains("Thank you!"), "{closing}");
    assert!(
        closing.contains("Not yet") && closing.contains("It's OK"),
        "{closing}"
    );

    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    let answers = summary.body["survey"]["answers"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = answers
        .iter()
        .map(|a| {
            (
                a["questionId"].as_str().unwrap(),
                a["answer"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [("met_before", "Not yet"), ("feeling", "It's OK")],
        "{}",
        summary.body
    );

    let record = h.store.get_thread(&thread, 0).await.unwrap().unwrap();
    let ModeState::Survey(session) = record.thread.session.mode_state else {
        panic!("not a survey")
    };
    assert_eq!(session.skipped, ["anything_else"]);
    assert!(session.finished_at.is_some());
}

async fn bad_input_is_refused_and_changes_nothing(h: &Harness) {
    let student = "student-survey-bad";
    for (body, field, words) in [
        (
            json!({"mode": "survey", "surveyId": "no-such-survey"}),
            "surveyId",
            "no survey `no-such-survey`",
        ),
        (
            json!({"mode": "exam", "surveyId": SURVEY}),
            "surveyId",
            "for mode `survey` only",
        ),
    ] {
        let mut body = body;
        body["courseId"] = json!(COURSE);
        let r = h.post(student, "/threads", body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["field"], field, "{}", r.body);
        assert!(r.body.to_string().contains(words), "{}", r.body);
    }
    let (thread, _) = new_survey(h, student).await;
    let before = h.message_count(student, &thread).await;
    for (body, field, words) in [
        (
            json!({"messageText": "1", "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "favourite_colour"}}),
            "clientEvent.questionId",
            "has no question `favourite_colour`",
        ),
        (
            json!({"messageText": "3", "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "confidence"}}),
            "clientEvent.questionId",
            "not the one being asked (`met_before`)",
        ),
        (
            json!({"messageText": "purple", "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "met_before"}}),
            "messageText",
            "`purple` is not an answer to `met_before`",
        ),
        (
            json!({"clientEvent": {"type": "SURVEY_ANSWER", "questionId": "met_before"}}),
            "messageText",
            "missing",
        ),
        (
            json!({"clientEvent": {"type": "SURVEY_SKIP", "questionId": "met_before"}}),
            "clientEvent.questionId",
            "cannot be skipped",
        ),
    ] {
        let r = h
            .post(student, &format!("/threads/{thread}/turn"), body.clone())
            .await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["field"], field, "{body}: {}", r.body);
        assert!(r.body.to_string().contains(words), "{body}: {}", r.body);
    }
    assert_eq!(h.message_count(student, &thread).await, before);
    let state = h.get(student, &format!("/threads/{thread}")).await.body;
    assert_eq!(on_screen(&state), "met_before");
    assert!(
        state["state"]["survey"]["answers"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn sqlite_a_survey_follows_its_skips_and_resumes() {
    a_survey_follows_its_skips_and_resumes(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_bad_input_is_refused_and_changes_nothing() {
    bad_input_is_refused_and_changes_nothing(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_a_survey_follows_its_skips_and_resumes() {
    if let Some(h) = Harness::aws("aws_a_survey_follows_its_skips_and_resumes").await {
        a_survey_follows_its_skips_and_resumes(&h).await;
    }
}
