//! problem_set sessions end to end over HTTP, on the embedded SQLite store
//! and on DynamoDB + S3 (moto): created from the caller's problems or a
//! course set (bad input refused with a problem+json naming the field); a
//! first-try answer moves on with the next problem in the same reply, a
//! helped one after the teach-back, the last one completes the session with
//! its report in the summary. Over the signed webhook, as an LMS would: a
//! stuck student's `intervention.needed`, each `problem.advanced` and the
//! `session.completed` report reach a local receiver signed, retried after
//! its 500 under the same event id, and recorded as delivered; an idle
//! session expires as abandoned and the next message starts a new thread;
//! a set the student ends sends its report once, however often it is ended.

use crate::e2e_support;

use std::time::Duration;

use e2e_support::{Aws, HOOK_SECRET, Harness, aws, base_config, env, sdk_config};
use serde_json::{Value, json};
use tutorflow::api::App;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn problems() -> Value {
    json!([
        {"id": "a", "text": "What is 12 + 15?", "correctAnswer": "27"},
        {"id": "b", "text": "What is 7 x 8?", "correctAnswer": "56", "hints": ["Think of 7 x 8 as 7 x 4 doubled."]},
        {"id": "c", "text": "Solve x + 4 = 10.", "correctAnswer": "x = 6", "unitId": "one-step-equations"},
        {"id": "d", "text": "What is 100 - 37?", "correctAnswer": "63"},
        {"id": "e", "text": "What is -3 + 5?", "correctAnswer": "2"}
    ])
}

fn text(turn: &Value) -> String {
    turn["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn set(turn: &Value) -> &Value {
    &turn["state"]["problemSet"]
}

async fn say(h: &Harness, student: &str, thread: &str, said: &str) -> Value {
    h.turn(student, thread, json!({ "messageText": said }))
        .await
}

async fn a_session_from_the_callers_problems(h: &Harness) {
    let student = "ps-student";
    let created = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "problem_set", "problems": problems()}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let thread = created.body["threadId"].as_str().unwrap().to_owned();
    let welcome = created.body["messages"][0]["text"].as_str().unwrap();
    assert!(
        welcome.contains("Problem 1 of 5: What is 12 + 15?"),
        "{welcome}"
    );
    assert_eq!(set(&created.body)["problemsTotal"], 5);
    assert!(
        !created.body.to_string().contains("\"27\""),
        "an expected answer is never shown"
    );

    // Right first time: mastered, and the next problem in the same reply.
    let t = say(h, student, &thread, "27").await;
    assert_eq!(set(&t)["lastAction"], "ADVANCE");
    assert_eq!(set(&t)["problems"][0]["signal"], "mastered");
    assert_eq!(set(&t)["currentProblemIndex"], 1);
    assert!(
        text(&t).contains("Problem 2 of 5: What is 7 x 8?"),
        "{}",
        text(&t)
    );

    // Wrong, then stuck (the problem's own hint), then right: learned,
    // and the teach-back comes before moving on.
    let t = say(h, student, &thread, "54").await;
    assert_eq!(set(&t)["lastAction"], "CONTINUE");
    let t = say(h, student, &thread, "I don't know").await;
    assert!(
        text(&t).contains("Think of 7 x 8 as 7 x 4 doubled."),
        "{}",
        text(&t)
    );
    let t = say(h, student, &thread, "56").await;
    assert_eq!(set(&t)["lastAction"], "CONTINUE");
    assert_eq!(set(&t)["problems"][1]["signal"], "learned");
    assert_eq!(t["state"]["teachBackActive"], true);
    assert!(!text(&t).contains("Problem 3"), "{}", text(&t));
    let t = say(h, student, &thread, "I did 7 x 4 = 28 and then doubled it").await;
    assert_eq!(set(&t)["lastAction"], "ADVANCE");
    assert!(
        text(&t).contains("Problem 3 of 5: Solve x + 4 = 10."),
        "{}",
        text(&t)
    );

    // A skip, then the rest right; the last completes the session.
    let t = say(h, student, &thread, "skip").await;
    assert_eq!(set(&t)["lastAction"], "SKIP");
    assert_eq!(set(&t)["problems"][2]["status"], "skipped");
    say(h, student, &thread, "63").await;
    let t = say(h, student, &thread, "2").await;
    assert_eq!(set(&t)["ended"], "completed");
    assert_eq!(t["state"]["status"], "completed");
    assert!(
        text(&t).contains(
            "You got 3 of 5 right first time and worked out 1 more with some help, and skipped 1."
        ),
        "{}",
        text(&t)
    );

    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    let report = &summary.body["problemSet"];
    assert_eq!(report["ended"], "completed");
    assert_eq!(
        (
            report["mastered"].as_u64(),
            report["learned"].as_u64(),
            report["skipped"].as_u64()
        ),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!(report["problems"][1]["attempts"], 2);
    assert_eq!(report["problems"][1]["taughtBack"], true);
    assert_eq!(report["suggestedFocus"][0], "One-step equations");
}

async fn a_course_set_and_bad_input(h: &Harness) {
    let student = "ps-course";
    let created = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "problem_set", "problemSetId": "equations-practice"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(set(&created.body)["setId"], "equations-practice");
    assert!(
        created.body["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Problem 1 of 5: Solve x + 7 = 12.")
    );

    let bad = |body: Value, field: &'static str| async move {
        let r = h.post(student, "/threads", body).await;
        assert!(
            r.status == 400 || r.status == 422,
            "{field}: {} {}",
            r.status,
            r.body
        );
        assert!(r.body.to_string().contains(field), "{field}: {}", r.body);
    };
    let mut few = problems();
    few.as_array_mut().unwrap().truncate(3);
    bad(
        json!({"courseId": "prealgebra", "mode": "problem_set", "problems": few}),
        "problems",
    )
    .await;
    let mut twice = problems();
    twice[1]["id"] = json!("a");
    bad(
        json!({"courseId": "prealgebra", "mode": "problem_set", "problems": twice}),
        "problems[1].id",
    )
    .await;
    let mut prose = problems();
    prose[0]["correctAnswer"] = json!("it depends on the weather");
    bad(
        json!({"courseId": "prealgebra", "mode": "problem_set", "problems": prose}),
        "problems[0].correctAnswer",
    )
    .await;
    let mut unit = problems();
    unit[0]["unitId"] = json!("no-such-unit");
    bad(
        json!({"courseId": "prealgebra", "mode": "problem_set", "problems": unit}),
        "problems[0].unitId",
    )
    .await;
    bad(
        json!({"courseId": "prealgebra", "mode": "problem_set", "problemSetId": "nope"}),
        "problemSetId",
    )
    .await;
    bad(
        json!({"courseId": "prealgebra", "mode": "guided", "problems": problems()}),
        "problems",
    )
    .await;
}

/// Notifications for students without an integration go to the LMS
/// address, signed with the same secret as the tests' webhooks.
fn notify_lms(config: &mut tutorflow::config::Config, receiver: &MockServer) {
    config.notifications.lms_webhook_url = Some(format!("{}/lms", receiver.uri()));
    config.notifications.signing_secret = Some("env:E2E_HOOK_SECRET".into());
    config.notifications.retry_base_ms = 20;
}

/// A set the student ends with `POST /threads/{id}/end` sends
/// `session.completed` with the report as it stands, once: ending it again,
/// under another Idempotency-Key or none, sends nothing more.
async fn ending_a_set_sends_its_report_once(h: &Harness, receiver: &MockServer) {
    let student = "ps-ender";
    let created = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "problem_set", "problems": problems()}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let thread = created.body["threadId"].as_str().unwrap().to_owned();
    let turn = say(h, student, &thread, "27").await;
    assert_eq!(set(&turn)["currentProblemIndex"], 1, "{}", set(&turn));
    let end = |key: Option<&'static str>| {
        let mut request = h
            .http()
            .post(format!("{}/threads/{thread}/end", h.base()))
            .bearer_auth(h.token(student))
            .json(&json!({}));
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        h.send(request)
    };
    let ended = end(Some("end-one")).await;
    assert_eq!(ended.status, 200, "{}", ended.body);
    assert_eq!(set(&ended.body)["ended"], "abandoned", "{}", ended.body);
    assert!(
        text(&ended.body).contains("You finished 1 of 5 problems"),
        "{}",
        ended.body
    );
    for key in [Some("end-one"), Some("end-two"), None] {
        let again = end(key).await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(again.body["status"], "completed");
    }

    // problem.advanced for the first answer, then the one session.completed.
    let events = delivered(receiver, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let events_now = dedup(&receiver.received_requests().await.unwrap());
    assert_eq!(
        events_now.len(),
        events.len(),
        "nothing after: {events_now:?}"
    );
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["problem.advanced", "session.completed"],
        "{kinds:?}"
    );
    let completed = &events[1].2;
    assert_eq!(completed["threadId"], thread.as_str());
    assert_eq!(completed["studentId"], student);
    let report = &completed["data"]["report"];
    assert_eq!(report["ended"], "abandoned", "{report}");
    assert_eq!(report["problemsTotal"], 5);
    assert_eq!(report["problemsCompleted"], 1);
    assert_eq!(report["mastered"], 1);
    // The report sent is the one the summary shows.
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    assert_eq!(&summary.body["problemSet"], report, "{}", summary.body);
}

async fn lms_receiver() -> MockServer {
    let receiver = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/lms"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    receiver
}

#[tokio::test]
async fn sqlite_ending_a_set_sends_its_report_once() {
    let receiver = lms_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    notify_lms(&mut config, &receiver);
    let h = Harness::start(config, dir, None).await;
    ending_a_set_sends_its_report_once(&h, &receiver).await;
}

#[tokio::test]
async fn aws_ending_a_set_sends_its_report_once() {
    let receiver = lms_receiver().await;
    if let Some(h) = Harness::aws_with("aws_ending_a_set_sends_its_report_once", |c| {
        notify_lms(c, &receiver)
    })
    .await
    {
        ending_a_set_sends_its_report_once(&h, &receiver).await;
    }
}

#[tokio::test]
async fn sqlite_a_session_from_the_callers_problems() {
    a_session_from_the_callers_problems(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_a_course_set_and_bad_input() {
    a_course_set_and_bad_input(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_a_session_from_the_callers_problems() {
    if let Some(h) = Harness::aws("aws_a_session_from_the_callers_problems").await {
        a_session_from_the_callers_problems(&h).await;
    }
}

#[tokio::test]
async fn aws_a_course_set_and_bad_input() {
    if let Some(h) = Harness::aws("aws_a_course_set_and_bad_input").await {
        a_course_set_and_bad_input(&h).await;
    }
}

/// A receiver that refuses each event's first delivery with a 500.
struct FirstTryFails(std::sync::Mutex<std::collections::HashMap<String, u32>>);

impl Respond for FirstTryFails {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id = request
            .headers
            .get("x-tutorflow-event-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut seen = self.0.lock().unwrap();
        let n = seen.entry(id).or_default();
        *n += 1;
        if *n == 1 {
            ResponseTemplate::new(500)
        } else {
            ResponseTemplate::new(200)
        }
    }
}

async fn webhook(h: &Harness, body: &Value) -> Value {
    webhook_at(h, body, chrono::Utc::now()).await
}

/// A signed webhook turn, stamped `at` (the server's clock, when the test
/// moves it).
async fn webhook_at(h: &Harness, body: &Value, at: chrono::DateTime<chrono::Utc>) -> Value {
    let raw = serde_json::to_vec(body).unwrap();
    let timestamp = at.timestamp();
    let signature = tutorflow::api::webhook::sign(HOOK_SECRET.as_bytes(), timestamp, &raw);
    let r = h
        .send(
            h.http()
                .post(format!("{}/webhooks/turn", h.base()))
                .header("content-type", "application/json")
                .header("x-tutorflow-integration", "n8n")
                .header("x-tutorflow-timestamp", timestamp.to_string())
                .header("x-tutorflow-signature", signature)
                .body(raw),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// The deliveries the receiver accepted, by event type, once `want` of them
/// have arrived (or the wait is over).
async fn delivered(receiver: &MockServer, want: usize) -> Vec<(String, String, Value)> {
    for _ in 0..200 {
        let requests = receiver.received_requests().await.unwrap_or_default();
        let ok: Vec<(String, String, Value)> = dedup(&requests);
        if ok.len() >= want {
            return ok;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    dedup(&receiver.received_requests().await.unwrap_or_default())
}

/// Every request's event id, type and body, checking its signature; one
/// entry per event id.
fn dedup(requests: &[Request]) -> Vec<(String, String, Value)> {
    let mut out: Vec<(String, String, Value)> = Vec::new();
    for r in requests {
        let header = |name: &str| r.headers.get(name).unwrap().to_str().unwrap().to_owned();
        let timestamp: i64 = header("x-tutorflow-timestamp").parse().unwrap();
        assert_eq!(
            header("x-tutorflow-signature"),
            tutorflow::api::webhook::sign(HOOK_SECRET.as_bytes(), timestamp, &r.body),
            "every delivery is signed over timestamp and body"
        );
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        let id = header("x-tutorflow-event-id");
        assert_eq!(body["id"], id);
        if !out.iter().any(|(seen, _, _)| *seen == id) {
            out.push((id, body["type"].as_str().unwrap().to_owned(), body));
        }
    }
    out
}

#[tokio::test]
async fn the_webhook_session_sends_signed_notifications_retried_after_a_failure() {
    let receiver = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/lms"))
        .respond_with(FirstTryFails(Default::default()))
        .mount(&receiver)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.auth.webhooks[0].outbound_url = Some(format!("{}/lms", receiver.uri()));
    config.notifications.retry_base_ms = 20;
    let h = Harness::start(config, dir, None).await;

    let problems: Vec<Value> = problems()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!({"id": p["id"], "text": p["text"], "correct_answer": p["correctAnswer"]}))
        .collect();
    let msg =
        |said: &str| json!({"student_id": "n8n:kid-1", "session_id": "lesson-9", "message": said});
    let mut first = msg("hi, ready!");
    first["problems"] = json!(problems);
    let r = webhook(&h, &first).await;
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("Problem 1 of 5: What is 12 + 15?"),
        "{r}"
    );
    assert_eq!(r["session_status"]["status"], "active");

    let r = webhook(&h, &msg("27")).await;
    assert_eq!(r["session_status"]["action"], "ADVANCE");
    assert_eq!(r["session_status"]["current_problem_index"], 1);
    assert_eq!(r["session_status"]["problems_remaining"], 4);
    assert!(
        r["output"].as_str().unwrap().contains("Problem 2 of 5"),
        "{r}"
    );

    // Stuck past the workflow's depth: the teacher is alerted.
    let mut action = Value::Null;
    for said in ["I don't know", "I'm stuck", "no idea", "I give up"] {
        action = webhook(&h, &msg(said)).await["session_status"]["action"].clone();
    }
    assert_eq!(action, "INTERVENE");
    for said in ["skip", "x = 6", "63", "2"] {
        action = webhook(&h, &msg(said)).await["session_status"]["status"].clone();
    }
    assert_eq!(action, "completed");

    // 5 problem.advanced, 1 intervention.needed, 1 session.completed: each
    // refused once, delivered on the retry under the same id, never twice.
    let events = delivered(&receiver, 7).await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "problem.advanced").count(),
        5,
        "{kinds:?}"
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "intervention.needed")
            .count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "session.completed").count(),
        1,
        "{kinds:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let requests = receiver.received_requests().await.unwrap();
    assert_eq!(
        requests.len(),
        14,
        "each event: one refused try, one delivered"
    );
    let (_, _, completed) = events
        .iter()
        .find(|(_, k, _)| k == "session.completed")
        .unwrap();
    assert_eq!(completed["studentId"], "n8n:kid-1");
    assert_eq!(completed["integration"], "n8n");
    let report = &completed["data"]["report"];
    assert_eq!(report["problemsTotal"], 5);
    assert_eq!(report["stuck"], 1);
    assert_eq!(report["skipped"], 1);
    let (_, _, alert) = events
        .iter()
        .find(|(_, k, _)| k == "intervention.needed")
        .unwrap();
    assert_eq!(alert["data"]["reason"], "stuck");
    assert_eq!(alert["data"]["problemId"], "b");

    // Each delivery is recorded in the thread's log.
    let thread = completed["threadId"].as_str().unwrap();
    let mut recorded = 0;
    for _ in 0..40 {
        let logs = h
            .store
            .list_turn_logs(
                thread,
                tutorflow::store::Order::OldestFirst,
                &tutorflow::store::PageRequest::first(100),
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        recorded = logs
            .items
            .iter()
            .filter(|l| {
                l.entry["delivery"]["status"] == "delivered" && l.entry["delivery"]["tries"] == 2
            })
            .count();
        if recorded == 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(recorded, 7);

    // The finished session's next message starts a new thread, and says so.
    let r = webhook(&h, &msg("can I do more?")).await;
    assert_ne!(r["session_status"]["thread_id"], thread);
    assert!(r["output"].as_str().unwrap().contains("new session"), "{r}");
}

/// On Lambda a turn only queues its notifications (a frozen sandbox would
/// stall a delivery left running); the notify function takes them from the
/// SQS batch, delivers them signed and records each. Nothing reaches the
/// receiver before the queue is drained.
#[tokio::test]
async fn on_lambda_notifications_wait_in_the_queue_for_the_notify_function() {
    let Some(Aws::Emulator(endpoint)) = aws("queued notifications") else {
        return;
    };
    let receiver = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/lms"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    let sqs = aws_sdk_sqs::Client::new(&sdk_config(&Aws::Emulator(endpoint.clone())).await);
    let queue = sqs
        .create_queue()
        .queue_name(format!(
            "e2e-notify-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        ))
        .send()
        .await
        .expect("queue")
        .queue_url
        .unwrap();
    let url = format!("{}/lms", receiver.uri());
    let h = Harness::aws_with("queued notifications", |c| {
        c.auth.webhooks[0].outbound_url = Some(url);
        c.notifications.queue_url = Some(queue.clone());
        c.notifications.queue_endpoint_url = Some(endpoint.clone());
    })
    .await
    .unwrap();

    let problems: Vec<Value> = problems()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!({"id": p["id"], "text": p["text"], "correct_answer": p["correctAnswer"]}))
        .collect();
    let mut first = json!({"student_id": "n8n:kid-q", "session_id": "lesson-q", "message": "hi"});
    first["problems"] = json!(problems);
    // A greeting first: it is no attempt at the problem.
    webhook(&h, &first).await;
    let r = webhook(
        &h,
        &json!({"student_id": "n8n:kid-q", "session_id": "lesson-q", "message": "27"}),
    )
    .await;
    assert_eq!(r["session_status"]["action"], "ADVANCE");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        receiver.received_requests().await.unwrap().is_empty(),
        "the turn only queues"
    );

    // The SQS event Lambda would hand the notify function.
    let received = sqs
        .receive_message()
        .queue_url(&queue)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("receive");
    let records: Vec<Value> = received
        .messages()
        .iter()
        .map(|m| json!({"messageId": m.message_id(), "body": m.body()}))
        .collect();
    assert_eq!(records.len(), 1, "one problem.advanced: {records:?}");
    let mut batch = records.clone();
    batch.push(json!({"messageId": "not-ours", "body": "{\"hello\": 1}"}));
    let event: aws_lambda_events::event::sqs::SqsEvent =
        serde_json::from_value(json!({ "Records": batch })).unwrap();
    let notify = std::sync::Arc::new(App::from_config(h.config.clone(), &env).await.unwrap());
    let response = tutorflow::api::lambda::deliver_batch(&notify, event).await;
    let failed: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(
        failed,
        ["not-ours"],
        "only the unreadable message goes back"
    );

    let events = dedup(&receiver.received_requests().await.unwrap());
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1, "problem.advanced");
    assert_eq!(events[0].2["studentId"], "n8n:kid-q");
    let thread = events[0].2["threadId"].as_str().unwrap();
    let logs = h
        .store
        .list_turn_logs(
            thread,
            tutorflow::store::Order::OldestFirst,
            &tutorflow::store::PageRequest::first(100),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    assert!(
        logs.items
            .iter()
            .any(|l| l.entry["delivery"]["status"] == "delivered"),
        "the delivery is recorded"
    );
}

/// The webhook's problems, as an integration sends them.
fn webhook_problems() -> Value {
    problems()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!({"id": p["id"], "text": p["text"], "correct_answer": p["correctAnswer"]}))
        .collect()
}

/// A webhook session left idle past the workflow's session_ttl_minutes
/// (30) is closed as abandoned on its next message, which starts a new
/// thread for the same session_id and says after how long the last ended.
#[tokio::test]
async fn an_idle_webhook_session_gives_way_to_a_new_one_that_names_the_ttl() {
    use tutorflow::service::Clock as _;
    let dir = tempfile::tempdir().unwrap();
    let config = base_config(dir.path());
    let clock = e2e_support::HandedClock::starting_now();
    let h = Harness::with_clock(config, dir, clock.clone()).await;
    let msg =
        |said: &str| json!({"student_id": "n8n:kid-2", "session_id": "lesson-10", "message": said});
    let mut first = msg("hi, ready!");
    first["problems"] = webhook_problems();
    let r = webhook_at(&h, &first, clock.now()).await;
    let thread = r["session_status"]["thread_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = webhook_at(&h, &msg("27"), clock.now()).await;
    assert_eq!(r["session_status"]["current_problem_index"], 1, "{r}");
    assert_eq!(r["session_status"]["thread_id"], thread.as_str());

    // Within the time to live the session carries on.
    clock.advance(29);
    let r = webhook_at(&h, &msg("I don't know"), clock.now()).await;
    assert_eq!(r["session_status"]["thread_id"], thread.as_str(), "{r}");
    assert_eq!(r["session_status"]["status"], "active");

    clock.advance(31);
    let r = webhook_at(&h, &msg("56"), clock.now()).await;
    assert_ne!(r["session_status"]["thread_id"], thread.as_str(), "{r}");
    assert!(
        r["output"].as_str().unwrap().contains(
            "Your last session ended after 30 minutes without a message, so this is a new one."
        ),
        "{r}"
    );
    assert_eq!(r["session_status"]["status"], "active");
    // The old thread was closed as abandoned with what was done.
    let old = h.store.get_thread(&thread, 0).await.unwrap().unwrap();
    let state = match &old.thread.session.mode_state {
        tutorflow::model::ModeState::ProblemSet(state) => state,
        other => panic!("a problem set, not {other:?}"),
    };
    assert_eq!(state.ended, Some(tutorflow::model::SessionEnd::Abandoned));
    let report = state.report.as_ref().unwrap();
    assert_eq!((report.problems_completed, report.problems_total), (1, 5));
}

/// The scheduled sweep closes a set left idle past session_ttl_minutes
/// (30) without waiting for the student to come back: the thread ends as
/// abandoned with a notice, its report reaches the LMS, and the next sweep
/// finds nothing more. A set still within its time and a paused one are
/// left alone until their own time comes.
#[tokio::test]
async fn the_sweep_closes_an_idle_set_and_sends_its_report() {
    let receiver = lms_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    notify_lms(&mut config, &receiver);
    let clock = e2e_support::HandedClock::starting_now();
    let h = Harness::with_clock(config.clone(), dir, clock.clone()).await;
    let start = |student: &'static str| {
        let h = &h;
        async move {
            let created = h
                .post(
                    student,
                    "/threads",
                    json!({"courseId": "prealgebra", "mode": "problem_set", "problems": problems()}),
                )
                .await;
            assert_eq!(created.status, 201, "{}", created.body);
            created.body["threadId"].as_str().unwrap().to_owned()
        }
    };
    let idle = start("sweep-idle").await;
    say(&h, "sweep-idle", &idle, "27").await;
    let paused = start("sweep-paused").await;
    let pause = h
        .post(
            "sweep-paused",
            &format!("/threads/{paused}/pause"),
            json!({}),
        )
        .await;
    assert_eq!(pause.status, 200, "{}", pause.body);
    clock.advance(20);
    let recent = start("sweep-recent").await;
    clock.advance(15);

    // The sweep runs as its own process would: another app on the store.
    let sweeper = e2e_support::app_with_clock(&config, h.store.clone(), clock.clone()).await;
    let swept = sweeper.sweep_idle().await.unwrap();
    assert_eq!(
        (swept.checked, swept.expired, swept.failed, swept.more),
        (1, 1, 0, false),
        "{swept:?}"
    );
    let status = |student: &'static str, thread: String| {
        let h = &h;
        async move {
            let read = h.get(student, &format!("/threads/{thread}")).await;
            assert_eq!(read.status, 200, "{}", read.body);
            read.body
        }
    };
    let closed = status("sweep-idle", idle.clone()).await;
    assert_eq!(closed["status"], "completed", "{closed}");
    // The caller's problems belong to no unit: no nameless concept is shown.
    let taught = closed["state"]["conceptsTaught"].as_array().unwrap();
    assert!(
        taught.iter().all(|c| c["unitId"] != "" && c["title"] != ""),
        "{taught:?}"
    );
    let timeline = closed["state"]["timeline"].as_array().unwrap();
    assert!(timeline.iter().all(|e| e["unitId"] != ""), "{timeline:?}");
    let last = closed["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["text"]
            .as_str()
            .unwrap()
            .contains("closed after 30 minutes without a message. You finished 1 of 5 problems."),
        "{last}"
    );
    for (student, thread, want) in [
        ("sweep-paused", paused.clone(), "paused"),
        ("sweep-recent", recent.clone(), "active"),
    ] {
        let read = status(student, thread).await;
        assert_eq!(read["status"], want, "{read}");
    }
    // problem.advanced for the answer, then the abandoned set's report.
    let events = delivered(&receiver, 2).await;
    let kinds: Vec<&str> = events.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["problem.advanced", "session.completed"],
        "{kinds:?}"
    );
    let completed = &events[1].2;
    assert_eq!(completed["threadId"], idle.as_str());
    assert_eq!(completed["data"]["report"]["ended"], "abandoned");
    assert_eq!(completed["data"]["report"]["problemsCompleted"], 1);

    // Nothing is idle now; later the recent set's time comes too.
    let again = sweeper.sweep_idle().await.unwrap();
    assert_eq!((again.checked, again.expired), (0, 0), "{again:?}");
    clock.advance(20);
    let later = sweeper.sweep_idle().await.unwrap();
    assert_eq!((later.checked, later.expired), (1, 1), "{later:?}");
    let read = status("sweep-recent", recent).await;
    assert_eq!(read["status"], "completed", "{read}");
    let read = status("sweep-paused", paused).await;
    assert_eq!(read["status"], "paused", "{read}");
}

/// An integration whose outbound_url always answers 500: each notification
/// is tried `delivery_attempts` times, then recorded in the thread's log as
/// failed with the last status, and the student's turns answer as usual.
#[tokio::test]
async fn a_delivery_that_keeps_failing_is_recorded_and_the_turn_still_answers() {
    let receiver = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/lms"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&receiver)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.auth.webhooks[0].outbound_url = Some(format!("{}/lms", receiver.uri()));
    config.notifications.retry_base_ms = 10;
    config.notifications.delivery_attempts = 3;
    let h = Harness::start(config, dir, None).await;
    let msg =
        |said: &str| json!({"student_id": "n8n:kid-3", "session_id": "lesson-11", "message": said});
    let mut first = msg("hi, ready!");
    first["problems"] = webhook_problems();
    webhook(&h, &first).await;
    // The answer moves the set on (a problem.advanced notification) and
    // the turn answers 200 whatever the receiver says.
    let r = webhook(&h, &msg("27")).await;
    assert_eq!(r["session_status"]["action"], "ADVANCE", "{r}");
    assert!(
        r["output"].as_str().unwrap().contains("Problem 2 of 5"),
        "{r}"
    );
    let thread = r["session_status"]["thread_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut failed = Vec::new();
    for _ in 0..100 {
        let logs = h
            .store
            .list_turn_logs(
                &thread,
                tutorflow::store::Order::OldestFirst,
                &tutorflow::store::PageRequest::first(100),
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        failed = logs
            .items
            .into_iter()
            .filter(|l| l.entry["delivery"]["status"] == "failed")
            .map(|l| l.entry["delivery"].clone())
            .collect();
        if !failed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["event"], "problem.advanced", "{failed:?}");
    assert_eq!(failed[0]["tries"], 3, "{failed:?}");
    assert_eq!(failed[0]["httpStatus"], 500, "{failed:?}");
    let tried = receiver.received_requests().await.unwrap();
    assert_eq!(tried.len(), 3, "three tries of the one notification");

    // The session carries on: the next answer is taken as usual.
    let r = webhook(&h, &msg("56")).await;
    assert_eq!(r["session_status"]["current_problem_index"], 2, "{r}");
}
