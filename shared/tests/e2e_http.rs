//! End to end over HTTP: the local server on a real port, the real handler,
//! the offline tutor, and a real store — the embedded SQLite file, and
//! DynamoDB + S3 on the emulator (moto) that scripts/test.sh starts.
//!
//! A scripted student goes from the first message to a bronze tier; a
//! failed exam question locks and queues a revisit; retries with an
//! Idempotency-Key change nothing; concurrent turns lose nothing; bad
//! requests of every kind are refused and change nothing.

mod store_support;

use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as ChronoDuration;
use serde_json::{Value, json};
use tutorflow::api::auth::dev_token;
use tutorflow::api::server;
use tutorflow::config::{
    Config, ContentSourceKind, ProviderKind, StoreBackend, WebhookIntegration,
};
use tutorflow::content::{ContentSource, FsSource};
use tutorflow::engine::{drill, drill_token};
use tutorflow::service::App;
use tutorflow::store::Order;

use store_support::{Aws, Cleanup, aws, sdk_config};

const JWT_SECRET: &str = "e2e-jwt-secret-0123456789abcdef";
const DRILL_SECRET: &str = "e2e-drill-secret-0123456789abcdef";
const HOOK_SECRET: &str = "e2e-webhook-secret";

fn repo_root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn env(key: &str) -> Option<String> {
    match key {
        "TUTORFLOW_DEV_JWT_SECRET" => Some(JWT_SECRET.into()),
        "TUTORFLOW_DEV_DRILL_SECRET" => Some(DRILL_SECRET.into()),
        "E2E_HOOK_SECRET" => Some(HOOK_SECRET.into()),
        _ => None,
    }
}

/// A running server and a client for it.
struct Harness {
    base: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
    _cleanup: Option<Cleanup>,
}

struct Reply {
    status: u16,
    body: Value,
    replayed: bool,
}

fn base_config(dir: &std::path::Path) -> Config {
    let mut config = Config::default();
    config.store.sqlite_path = dir.join("tutorflow.sqlite");
    config.content.dir = repo_root();
    config.auth.webhooks = vec![WebhookIntegration {
        id: "n8n".into(),
        secret: "env:E2E_HOOK_SECRET".into(),
        student_prefix: "n8n:".into(),
        course_id: "prealgebra".into(),
    }];
    config
}

impl Harness {
    async fn start(config: Config, dir: tempfile::TempDir, cleanup: Option<Cleanup>) -> Harness {
        let app = Arc::new(App::from_config(config, &env).await.expect("app starts"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server::serve(app, listener, std::future::pending()));
        Harness {
            base,
            http: reqwest::Client::new(),
            _dir: dir,
            _cleanup: cleanup,
        }
    }

    async fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let config = base_config(dir.path());
        Harness::start(config, dir, None).await
    }

    /// DynamoDB and S3 on the emulator; `None` when it is not running (and not CI).
    async fn aws(test: &str) -> Option<Harness> {
        let Aws::Emulator(endpoint) = aws(test)? else {
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        let table = format!("e2e-{}", &suffix[..12]);
        let bucket = format!("e2e-content-{}", &suffix[..12]);
        let sdk = sdk_config(&Aws::Emulator(endpoint.clone())).await;
        let s3 = tutorflow::store::s3_client(Some(&endpoint), Some("us-east-1")).await;
        s3.create_bucket()
            .bucket(&bucket)
            .send()
            .await
            .expect("bucket");
        let files = FsSource::new(repo_root()).fetch().await.unwrap();
        tutorflow::store::publish(&s3, &bucket, "live", &files, chrono::Utc::now())
            .await
            .expect("publish");
        let mut config = base_config(dir.path());
        config.store.backend = StoreBackend::Dynamodb;
        config.store.table = table.clone();
        config.store.endpoint_url = Some(endpoint.clone());
        config.store.region = Some("us-east-1".into());
        config.content.source = ContentSourceKind::S3;
        config.content.bucket = Some(bucket.clone());
        config.content.prefix = "live".into();
        config.content.endpoint_url = Some(endpoint);
        let cleanup = Cleanup::table(sdk, &table).and_bucket(&bucket);
        Some(Harness::start(config, dir, Some(cleanup)).await)
    }

    fn token(&self, student: &str) -> String {
        dev_token(JWT_SECRET, student, Duration::from_secs(3600))
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let replayed = response.headers().contains_key("idempotent-replayed");
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Reply {
            status,
            body,
            replayed,
        }
    }

    async fn post(&self, student: &str, path: &str, body: Value) -> Reply {
        let request = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.token(student))
            .json(&body);
        self.send(request).await
    }

    async fn get(&self, student: &str, path: &str) -> Reply {
        self.send(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(self.token(student)),
        )
        .await
    }

    async fn new_thread(&self, student: &str) -> String {
        let r = self
            .post(student, "/threads", json!({"courseId": "prealgebra"}))
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["threadId"].as_str().unwrap().to_owned()
    }

    async fn turn(&self, student: &str, thread: &str, body: Value) -> Value {
        let r = self
            .post(student, &format!("/threads/{thread}/turn"), body)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// The drill card of the turn's tutor message.
    fn card<'a>(turn: &'a Value, kind: &str) -> Option<&'a Value> {
        turn["messages"]
            .as_array()?
            .iter()
            .filter_map(|m| m.get("card"))
            .find(|c| c["type"] == kind)
    }

    async fn grade(&self, student: &str, thread: &str, token: &str, answer: &str) -> Value {
        let r = self
            .post(
                student,
                &format!("/threads/{thread}/drill/grade"),
                json!({"drillToken": token, "studentAnswer": answer}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    async fn message_count(&self, student: &str, thread: &str) -> usize {
        let r = self
            .get(student, &format!("/threads/{thread}?limit=100"))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body["messages"].as_array().unwrap().len()
    }

    async fn report(&self, student: &str) -> Value {
        let r = self.get(student, "/me/courses/prealgebra/report").await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }
}

/// The right answer to a drill card, read back the way drill-grade does.
fn drill_answer(thread: &str, token: &str) -> String {
    let verified = drill_token::verify(
        token,
        DRILL_SECRET.as_bytes(),
        thread,
        chrono::Utc::now(),
        ChronoDuration::hours(24),
    )
    .unwrap();
    match drill::expected(&verified, &bundle().blueprints).unwrap() {
        drill::Expected::Generated(item) => item.answer.text.clone(),
        drill::Expected::Authored {
            expected_answer, ..
        } => expected_answer,
    }
}

/// The shipped bundle, loaded once for the tests' own look-ups.
fn bundle() -> &'static tutorflow::content::Bundle {
    static BUNDLE: std::sync::OnceLock<tutorflow::content::Bundle> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| tutorflow::content::Bundle::load(&bundle_files()).unwrap())
}

/// A wrong answer to a drill card: another option, or for a typed drill
/// a number far from the right one.
fn wrong_answer(card: &Value, right: &str) -> String {
    match card["options"].as_array() {
        Some(options) => options
            .iter()
            .filter_map(Value::as_str)
            .find(|o| *o != right)
            .unwrap()
            .to_owned(),
        None => format!("{}", right.parse::<f64>().map_or(1000.0, |v| v + 1000.0)),
    }
}

/// The correct option id of a bank question.
fn correct_option(question_id: &str) -> String {
    let (_, item) = bundle()
        .course("prealgebra")
        .unwrap()
        .exam_item(question_id)
        .unwrap();
    item.answer.clone()
}

fn wrong_option(question_id: &str) -> String {
    let right = correct_option(question_id);
    if right == "A" { "B".into() } else { "A".into() }
}

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
}

/// A failed question locks and goes on the revisit list; a viewed memo too.
async fn failures_lock_and_queue_revisits(h: &Harness) {
    let student = "student-revisit";
    let thread = h.new_thread(student).await;
    let failed = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-B1", "selectedOption": wrong_option("EX-WHN-B1")}),
        )
        .await;
    assert_eq!(failed.status, 200, "{}", failed.body);
    assert_eq!(failed.body["isCorrect"], false);
    assert!(failed.body["lockedUntil"].is_string());
    assert_eq!(failed.body["snapshotLite"]["revisit"]["lockedCount"], 1);
    assert_eq!(
        failed.body["snapshotLite"]["revisit"]["nextQuestionId"],
        "EX-WHN-B1"
    );
    let locked = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-B1", "selectedOption": correct_option("EX-WHN-B1")}),
        )
        .await;
    assert_eq!(
        locked.status, 409,
        "a locked question cannot be retried: {}",
        locked.body
    );

    let viewed = h
        .post(
            student,
            &format!("/threads/{thread}/exam/support-viewed"),
            json!({"questionId": "EX-WHN-S1", "supportType": "memo"}),
        )
        .await;
    assert_eq!(viewed.status, 200, "{}", viewed.body);
    assert!(viewed.body["memo"].as_str().unwrap().len() > 20);
    assert_eq!(viewed.body["snapshotLite"]["revisit"]["lockedCount"], 2);
    let report = h.report(student).await;
    let queued: Vec<&str> = report["revisit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["questionId"].as_str().unwrap())
        .collect();
    assert_eq!(queued, vec!["EX-WHN-B1", "EX-WHN-S1"]);
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

/// Runs every request at once and waits for them all.
async fn join_all<F: std::future::Future<Output = Reply>>(futures: Vec<F>) -> Vec<Reply> {
    let mut pending: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<Reply>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (i, f) in pending.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(r) => results[i] = Some(r),
                    std::task::Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results.into_iter().map(Option::unwrap).collect()
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
            422,
            Some("mode"),
            h.http
                .post(format!("{}/threads", h.base))
                .bearer_auth(h.token(student))
                .json(&json!({"courseId": "prealgebra", "mode": "exam"})),
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
/// seed 003 reply shape, replays answered from the store.
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
    assert_eq!(
        first.body["_debug"]["category"], "correct",
        "{}",
        first.body
    );
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

/// The shipped bundle, copied, with a one-second tutor timeout so the
/// timing-out model fails fast.
fn bundle_with_short_tutor_timeout(dir: &std::path::Path) -> std::path::PathBuf {
    let root = dir.join("bundle");
    for (path, text) in &bundle_files().files {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let text = if path == "workflows/default.yaml" {
            text.replace(
                "max_tokens: 900, timeout_ms: 20000",
                "max_tokens: 900, timeout_ms: 1000",
            )
        } else {
            text.clone()
        };
        std::fs::write(target, text).unwrap();
    }
    root
}

fn bundle_files() -> tutorflow::content::ContentFiles {
    std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(FsSource::new(repo_root()).fetch())
            .unwrap()
    })
    .join()
    .unwrap()
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
        let model = MockServer::start().await;
        Mock::given(method("POST")).respond_with(response).mount(&model).await;
        let dir = tempfile::tempdir().unwrap();
        let mut config = base_config(dir.path());
        config.llm.tutor = ProviderKind::OpenaiCompatible;
        config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
        config.content.dir = bundle_with_short_tutor_timeout(dir.path());
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
