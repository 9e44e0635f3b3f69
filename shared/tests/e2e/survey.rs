//! Survey mode end to end over HTTP, on the embedded SQLite store and on
//! DynamoDB + S3 (moto): the fractions check-in answered with a skip rule
//! taken, an interruption resumed at the same question, an optional
//! question skipped, the answers in the thread's state and summary; a
//! time limit kept by the clock the server is handed; and
//! bad input (an unknown survey, an answer to a question that is not on
//! screen or not in the survey, an invalid choice, skipping a required
//! question) refused with a problem naming what was wrong, changing nothing.

use crate::e2e_support;

use e2e_support::{HandedClock, Harness};
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

/// The fractions check-in with a ten-minute limit, served with a clock the
/// test moves: answers within the limit are kept; the first after it is
/// told time is up, is not recorded, and the survey ends with what was
/// answered (state, summary); later messages change nothing.
#[tokio::test]
async fn a_survey_past_its_time_limit_ends_with_what_was_answered() {
    use std::sync::Arc;
    use tutorflow::service::Clock as _;
    let dir = tempfile::tempdir().unwrap();
    let mut config = e2e_support::base_config(dir.path());
    config.content.dir = e2e_support::bundle_patched(
        dir.path(),
        &[(
            "workflows/surveys/fractions-confidence.yaml",
            "units: [fractions]\n",
            "units: [fractions]\ntime_limit_minutes: 10\n",
        )],
    );
    let store = tutorflow::store::open(&config.store).await.unwrap();
    let content = tutorflow::store::ContentCache::load(
        Arc::new(tutorflow::content::FsSource::new(&config.content.dir)),
        std::time::Duration::from_secs(3600),
    )
    .await
    .unwrap();
    let clock = HandedClock::starting_now();
    let app = tutorflow::api::App::assemble(
        tutorflow::service::AppParts {
            config: config.clone(),
            store: store.clone(),
            content: Arc::new(content),
            clock: clock.clone(),
            ids: Arc::new(tutorflow::service::RandomIds),
        },
        &e2e_support::env,
    )
    .unwrap();
    let h = Harness::serve(Arc::new(app), config, store, dir, None).await;
    let student = "student-survey-timed";
    let (thread, created) = new_survey(&h, student).await;
    assert!(
        said(&created).contains("You have 10 minutes"),
        "{}",
        said(&created)
    );
    let ends_at = created["state"]["survey"]["endsAt"]
        .as_str()
        .unwrap()
        .to_owned();

    let started_at = created["state"]["survey"]["startedAt"]
        .as_str()
        .unwrap()
        .to_owned();
    let parse = |at: &str| chrono::DateTime::parse_from_rfc3339(at).unwrap();
    assert_eq!(
        parse(&ends_at) - parse(&started_at),
        chrono::Duration::minutes(10)
    );

    clock.advance(4);
    // Opened again later, the survey still says when it started: the
    // client shows the time used (4 minutes) as an exam's does.
    let reopened = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(reopened.status, 200, "{}", reopened.body);
    let survey = &reopened.body["state"]["survey"];
    assert_eq!(survey["startedAt"].as_str(), Some(started_at.as_str()));
    assert_eq!(
        clock.now() - parse(&started_at).with_timezone(&chrono::Utc),
        chrono::Duration::minutes(4)
    );
    let turn = h
        .turn(student, &thread, json!({"messageText": "a little"}))
        .await;
    assert_eq!(on_screen(&turn), "confidence", "{}", turn["state"]);
    clock.advance(6);
    let late = h
        .turn(
            student,
            &thread,
            json!({"messageText": "4", "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "confidence"}}),
        )
        .await;
    let text = said(&late);
    assert!(text.contains("Time's up"), "{text}");
    assert!(text.contains("wasn't recorded"), "{text}");
    assert!(
        text.contains("A little bit"),
        "what was answered is read back: {text}"
    );
    let survey = &late["state"]["survey"];
    assert_eq!(survey["finished"], true, "{survey}");
    assert_eq!(survey["timedOut"], true, "{survey}");
    assert_eq!(survey["endsAt"].as_str(), Some(ends_at.as_str()));
    assert_eq!(late["state"]["status"], "completed");

    clock.advance(1);
    let after = h.turn(student, &thread, json!({"messageText": "5"})).await;
    assert!(said(&after).contains("finished"), "{}", said(&after));
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    let answers = summary.body["survey"]["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 1, "{}", summary.body);
    assert_eq!(answers[0]["questionId"], "met_before");
    let record = h.store.get_thread(&thread, 0).await.unwrap().unwrap();
    let ModeState::Survey(session) = record.thread.session.mode_state else {
        panic!("not a survey")
    };
    assert!(session.timed_out);
    assert_eq!(session.finished_at, session.ends_at);
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

/// The `session.completed` deliveries for `thread`, one per event id, once
/// `want` arrived (or the wait is over).
async fn completed(receiver: &wiremock::MockServer, thread: &str, want: usize) -> Vec<Value> {
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
        if found.len() >= want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    found
}

/// A survey's end, by its last answer or by `POST /threads/{id}/end`, is
/// sent to the notification target as `session.completed`, once, with how
/// much was answered and none of the answers' words.
async fn a_finished_survey_is_notified_once(h: &Harness, receiver: &wiremock::MockServer) {
    let student = "student-survey-notified";
    let (thread, _) = new_survey(h, student).await;
    h.turn(
        student,
        &thread,
        json!({"messageText": "not_yet",
               "clientEvent": {"type": "SURVEY_ANSWER", "questionId": "met_before"}}),
    )
    .await;
    assert!(
        completed(receiver, &thread, 1).await.is_empty(),
        "not before the end"
    );
    h.turn(student, &thread, json!({"messageText": "2"})).await;
    let last = h
        .turn(student, &thread, json!({"messageText": "skip"}))
        .await;
    assert_eq!(last["state"]["survey"]["finished"], true, "{last}");
    let events = completed(receiver, &thread, 1).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let data = &events[0]["data"];
    assert_eq!(data["mode"], "survey");
    assert_eq!(data["survey"]["surveyId"], SURVEY);
    assert_eq!(data["survey"]["answered"], 2);
    assert_eq!(data["survey"]["skipped"], 1);
    assert!(
        !events[0].to_string().contains("It's OK"),
        "no answers sent"
    );
    // A message after the end, and ending it, send nothing more.
    h.turn(student, &thread, json!({"messageText": "thanks"}))
        .await;
    h.post(student, &format!("/threads/{thread}/end"), json!({}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(completed(receiver, &thread, 2).await.len(), 1, "once");

    // Ended part way: sent once, however often it is ended.
    let (thread, _) = new_survey(h, student).await;
    for _ in 0..2 {
        let ended = h
            .post(student, &format!("/threads/{thread}/end"), json!({}))
            .await;
        assert_eq!(ended.status, 200, "{}", ended.body);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let events = completed(receiver, &thread, 2).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["survey"]["answered"], 0);
}

async fn receiver() -> wiremock::MockServer {
    let receiver = wiremock::MockServer::builder().start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    receiver
}

fn notify(config: &mut tutorflow::config::Config, receiver: &wiremock::MockServer) {
    config.notifications.lms_webhook_url = Some(format!("{}/lms", receiver.uri()));
    config.notifications.signing_secret = Some("env:E2E_HOOK_SECRET".into());
}

#[tokio::test]
async fn sqlite_a_finished_survey_is_notified_once() {
    let receiver = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = e2e_support::base_config(dir.path());
    notify(&mut config, &receiver);
    let h = Harness::start(config, dir, None).await;
    a_finished_survey_is_notified_once(&h, &receiver).await;
}

#[tokio::test]
async fn aws_a_finished_survey_is_notified_once() {
    let receiver = receiver().await;
    if let Some(h) = Harness::aws_with("aws_a_finished_survey_is_notified_once", |c| {
        notify(c, &receiver)
    })
    .await
    {
        a_finished_survey_is_notified_once(&h, &receiver).await;
    }
}
