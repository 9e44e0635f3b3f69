//! Exam integrity and request hardening, probed over HTTP as an attacker
//! would, on the embedded SQLite store and on DynamoDB (moto): an exam
//! question is submitted only through a card shown in the thread, once; a
//! signed webhook replayed with fresh keys applies once; an idempotency
//! lock lasts as long as its route can take; tokens and ids are checked;
//! errors name their cause; the local server cuts off slow and oversized
//! requests, and authenticates before reading a large body.

use crate::e2e_support;

use std::time::Duration;

use e2e_support::{
    HOOK_SECRET, Harness, JWT_SECRET, Reply, base_config, bundle, bundle_patched, correct_option,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tutorflow::api::App;
use tutorflow::api::routes::Route;
use tutorflow::config::ProviderKind;
use tutorflow::model::ExamTier;

/// A gold question of the course's last unit: what a fresh student must
/// not be able to pass.
fn last_gold_question() -> String {
    let course = bundle().course("prealgebra").unwrap();
    let last = course.order.last().unwrap();
    course.units[last]
        .exam
        .iter()
        .find(|q| q.tier == ExamTier::Gold)
        .unwrap()
        .id
        .clone()
}

fn assert_problem(r: &Reply, status: u16, kind: &str, field: Option<&str>) {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(
        r.body["type"],
        format!("urn:tutorflow:problem:{kind}"),
        "{}",
        r.body
    );
    if let Some(field) = field {
        assert_eq!(r.body["field"], field, "{}", r.body);
    }
}

/// A question the tutor never showed cannot be submitted or its memo
/// opened; a shown card is answered once, even by two requests at once.
async fn exam_submissions_need_a_shown_card(h: &Harness) {
    let student = "student-exam-card";
    let thread = h.new_thread(student).await;
    let submit = format!("/threads/{thread}/exam/mcq-submit");
    let gold = last_gold_question();
    let unshown = h
        .post(
            student,
            &submit,
            json!({"questionId": gold, "selectedOption": correct_option(&gold)}),
        )
        .await;
    assert_problem(&unshown, 409, "exam-card-required", Some("questionId"));
    assert!(
        unshown.body["detail"]
            .as_str()
            .unwrap()
            .contains("has not been shown"),
        "{}",
        unshown.body
    );
    let memo = h
        .post(
            student,
            &format!("/threads/{thread}/exam/support-viewed"),
            json!({"questionId": gold, "supportType": "memo"}),
        )
        .await;
    assert_problem(&memo, 409, "exam-card-required", Some("questionId"));
    assert!(memo.body.get("memo").is_none());
    let report = h.report(student).await;
    assert!(report["revisit"].as_array().unwrap().is_empty(), "{report}");
    assert!(
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["masteryTier"] == "none"),
        "nothing passed: {report}"
    );

    let card = h.exam_card(student, &thread).await;
    let question = card["questionId"].as_str().unwrap().to_owned();
    // Another question of the same unit and tier was not shown.
    let sibling = bundle().course("prealgebra").unwrap().units[card["unitId"].as_str().unwrap()]
        .exam
        .iter()
        .find(|q| q.tier == ExamTier::Bronze && q.id != question)
        .map(|q| q.id.clone());
    if let Some(sibling) = sibling {
        let r = h
            .post(
                student,
                &submit,
                json!({"questionId": sibling, "selectedOption": correct_option(&sibling)}),
            )
            .await;
        assert_problem(&r, 409, "exam-card-required", Some("questionId"));
    }
    // The card, answered twice at once: one answer counts.
    let body = json!({"questionId": question, "selectedOption": correct_option(&question)});
    let (a, b) = tokio::join!(
        h.post(student, &submit, body.clone()),
        h.post(student, &submit, body.clone())
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{} / {}", a.body, b.body);
    let passed = if a.status == 200 { &a } else { &b };
    assert_eq!(passed.body["isCorrect"], true, "{}", passed.body);
    let again = h.post(student, &submit, body).await;
    assert_eq!(again.status, 409, "{}", again.body);
    let report = h.report(student).await;
    let unit = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["unitId"] == card["unitId"])
        .unwrap();
    assert_eq!(unit["masteryTier"], "bronze", "{report}");
}

/// A card the student left too long must be asked for again.
#[tokio::test]
async fn sqlite_an_exam_card_expires() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.content.dir = bundle_patched(
        dir.path(),
        &[(
            "workflows/default.yaml",
            "exam_card_hours: 24",
            "exam_card_hours: 0.0005",
        )],
    );
    let h = Harness::start(config, dir, None).await;
    let student = "student-expired-card";
    let thread = h.new_thread(student).await;
    let card = h.exam_card(student, &thread).await;
    let question = card["questionId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let late = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": question, "selectedOption": correct_option(question)}),
        )
        .await;
    assert_problem(&late, 409, "exam-card-required", Some("questionId"));
    assert!(
        late.body["detail"].as_str().unwrap().contains("expired"),
        "{}",
        late.body
    );
}

/// The thread of an n8n session, as the server names it.
fn session_thread(session: &str) -> String {
    let digest = Sha256::digest(format!("n8n\n{session}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("wh-{hex}")
}

fn signed(h: &Harness, body: &[u8], timestamp: i64, key: Option<&str>) -> reqwest::RequestBuilder {
    let signature = tutorflow::api::webhook::sign(HOOK_SECRET.as_bytes(), timestamp, body);
    let mut request = h
        .http
        .post(format!("{}/webhooks/turn", h.base))
        .header("content-type", "application/json")
        .header("x-tutorflow-integration", "n8n")
        .header("x-tutorflow-timestamp", timestamp.to_string())
        .header("x-tutorflow-signature", signature)
        .body(body.to_vec());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request
}

async fn messages_of(h: &Harness, thread: &str) -> u64 {
    h.store
        .get_thread(thread, 0)
        .await
        .unwrap()
        .map_or(0, |r| r.message_count)
}

/// A captured signed request sent again with fresh Idempotency-Keys is
/// answered from the store; the integration's students are not reachable
/// with a token whose subject looks like theirs.
async fn signed_webhooks_apply_once(h: &Harness) {
    let session = format!("replay-{}", uuid::Uuid::new_v4().simple());
    let thread = session_thread(&session);
    let body = serde_json::to_vec(&json!({
        "student_id": "n8n:42", "session_id": session, "message": "what is 7 + 5?"
    }))
    .unwrap();
    let now = chrono::Utc::now().timestamp();
    let first = h.send(signed(h, &body, now, Some("k-1"))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(!first.replayed);
    assert_eq!(messages_of(h, &thread).await, 2);
    for key in [Some("k-2"), Some("k-3"), Some("k-4"), None] {
        let replay = h.send(signed(h, &body, now, key)).await;
        assert_eq!(replay.status, 200, "{}", replay.body);
        assert!(replay.replayed, "{key:?}: answered from the store");
        assert_eq!(replay.body, first.body);
    }
    assert_eq!(messages_of(h, &thread).await, 2, "applied once");
    // The integration's own retry, signed anew, keeps its key's promise.
    let resigned = h.send(signed(h, &body, now + 1, Some("k-1"))).await;
    assert!(resigned.replayed, "{}", resigned.body);
    assert_eq!(messages_of(h, &thread).await, 2);
    // And a new message, signed anew without a key, is a new turn.
    let next = h.send(signed(h, &body, now + 2, None)).await;
    assert!(!next.replayed && next.status == 200, "{}", next.body);
    assert_eq!(messages_of(h, &thread).await, 4);

    // A token for "n8n:42" is another student than the integration's n8n:42.
    let turn = h
        .post(
            "n8n:42",
            &format!("/threads/{thread}/turn"),
            json!({"messageText": "hi"}),
        )
        .await;
    assert_eq!(turn.status, 404, "{}", turn.body);
    assert_eq!(
        h.get("n8n:42", &format!("/threads/{thread}")).await.status,
        404
    );
    let namespaced = h
        .get("integration:n8n/n8n:42", &format!("/threads/{thread}"))
        .await;
    assert_problem(&namespaced, 401, "unauthorized", None);
    assert!(
        namespaced.body["detail"]
            .as_str()
            .unwrap()
            .contains("reserved"),
        "{}",
        namespaced.body
    );
    assert_eq!(messages_of(h, &thread).await, 4);

    // An empty signed body is refused for what it is.
    let empty = h.send(signed(h, b"", now, None)).await;
    assert_problem(&empty, 400, "invalid-body", None);
    assert!(
        empty.body["detail"].as_str().unwrap().contains("empty"),
        "{}",
        empty.body
    );
}

/// Card events naming a unit or question the course does not have are
/// refused, naming the field, and nothing is applied.
async fn unknown_ids_are_refused(h: &Harness) {
    let student = "student-unknown-ids";
    let thread = h.new_thread(student).await;
    let path = format!("/threads/{thread}/turn");
    let before = h.get(student, &format!("/threads/{thread}")).await.body;
    let cases = [
        (
            json!({"type": "REQUEST_DRILL", "unitId": "no-such-unit"}),
            "clientEvent.unitId",
        ),
        (
            json!({"type": "I_AM_STUCK", "unitId": "no-such-unit"}),
            "clientEvent.unitId",
        ),
        (
            json!({"type": "DRILL_CONTINUE", "unitId": "no-such-unit", "lastResult": "correct"}),
            "clientEvent.unitId",
        ),
        (
            json!({"type": "EXAM_CONTINUE", "questionId": "EX-NOPE", "result": "passed"}),
            "clientEvent.questionId",
        ),
        (
            json!({"type": "EXAM_CONTINUE", "unitId": "whole-numbers", "questionId": last_gold_question()}),
            "clientEvent.unitId",
        ),
    ];
    for (event, field) in cases {
        let r = h
            .post(
                student,
                &path,
                json!({"messageText": "next", "clientEvent": event}),
            )
            .await;
        assert_problem(&r, 422, "unknown-id", Some(field));
    }
    let after = h.get(student, &format!("/threads/{thread}")).await.body;
    assert_eq!(before, after, "nothing applied");
    // Known ids go through.
    let ok = h
        .post(
            student,
            &path,
            json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

/// Each refusal names its real cause.
async fn errors_name_their_cause(h: &Harness) {
    let student = "student-wording";
    let thread = h.new_thread(student).await;
    let keyed = |path: &str, key: &str, body: Value| {
        h.http
            .post(format!("{}{path}", h.base))
            .bearer_auth(h.token(student))
            .header("idempotency-key", key)
            .json(&body)
    };
    let first = h
        .send(keyed(
            &format!("/threads/{thread}/turn"),
            "wording-1",
            json!({"messageText": "what is a fraction?"}),
        ))
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let body = h
        .send(keyed(
            &format!("/threads/{thread}/turn"),
            "wording-1",
            json!({"messageText": "what is a ratio?"}),
        ))
        .await;
    assert_problem(
        &body,
        422,
        "idempotency-key-reused",
        Some("idempotency-key"),
    );
    assert!(
        body.body["detail"]
            .as_str()
            .unwrap()
            .contains("different body"),
        "{}",
        body.body
    );
    let route = h
        .send(keyed(
            "/threads",
            "wording-1",
            json!({"courseId": "prealgebra"}),
        ))
        .await;
    assert_problem(
        &route,
        422,
        "idempotency-key-reused",
        Some("idempotency-key"),
    );
    assert!(
        route.body["detail"]
            .as_str()
            .unwrap()
            .contains("another endpoint"),
        "{}",
        route.body
    );
    let long_sub = "s".repeat(300);
    let r = h
        .send(
            h.http
                .post(format!("{}/threads", h.base))
                .bearer_auth(h.token(&long_sub))
                .header("idempotency-key", "wording-2")
                .json(&json!({"courseId": "prealgebra"})),
        )
        .await;
    assert_problem(&r, 401, "unauthorized", None);
    let detail = r.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("subject (sub)") && !detail.contains("Idempotency"),
        "{detail}"
    );
}

async fn nbf_is_checked(h: &Harness) {
    let now = jsonwebtoken::get_current_timestamp();
    let token = |nbf: u64| {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &json!({"sub": "student-nbf", "exp": now + 7200, "nbf": nbf}),
            &EncodingKey::from_secret(JWT_SECRET.as_bytes()),
        )
        .unwrap()
    };
    let send = |token: String| {
        h.http
            .get(format!("{}/me/threads", h.base))
            .bearer_auth(token)
    };
    let early = h.send(send(token(now + 3600))).await;
    assert_problem(&early, 401, "unauthorized", None);
    assert!(
        early.body["detail"]
            .as_str()
            .unwrap()
            .contains("not valid yet"),
        "{}",
        early.body
    );
    assert_eq!(h.send(send(token(now - 60))).await.status, 200);
}

#[tokio::test]
async fn sqlite_exam_submissions_need_a_shown_card() {
    exam_submissions_need_a_shown_card(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_exam_submissions_need_a_shown_card() {
    if let Some(h) = Harness::aws("aws_exam_submissions_need_a_shown_card").await {
        exam_submissions_need_a_shown_card(&h).await;
    }
}

#[tokio::test]
async fn sqlite_signed_webhooks_apply_once() {
    signed_webhooks_apply_once(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_signed_webhooks_apply_once() {
    if let Some(h) = Harness::aws("aws_signed_webhooks_apply_once").await {
        signed_webhooks_apply_once(&h).await;
    }
}

#[tokio::test]
async fn sqlite_unknown_ids_are_refused() {
    unknown_ids_are_refused(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_unknown_ids_are_refused() {
    if let Some(h) = Harness::aws("aws_unknown_ids_are_refused").await {
        unknown_ids_are_refused(&h).await;
    }
}

#[tokio::test]
async fn sqlite_errors_name_their_cause() {
    errors_name_their_cause(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_errors_name_their_cause() {
    if let Some(h) = Harness::aws("aws_errors_name_their_cause").await {
        errors_name_their_cause(&h).await;
    }
}

#[tokio::test]
async fn a_token_not_valid_yet_is_refused() {
    nbf_is_checked(&Harness::sqlite().await).await;
}

/// The in-progress lock lasts what the route can take: a few seconds for
/// a request that calls nothing slow, the model's timeout more for a turn.
#[tokio::test]
async fn idempotency_locks_last_as_long_as_the_route_can_take() {
    let dir = tempfile::tempdir().unwrap();
    let offline = App::from_config(base_config(dir.path()), &e2e_support::env)
        .await
        .unwrap();
    for route in [
        Route::CreateThread,
        Route::Turn,
        Route::DrillGrade,
        Route::McqSubmit,
        Route::SupportViewed,
    ] {
        let lock = offline.idempotency_lock_time(route).await;
        assert_eq!(lock.num_seconds(), 5, "{route:?}");
    }
    let mut config = base_config(dir.path());
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    let with_model = App::from_config(config, &e2e_support::env).await.unwrap();
    // The shipped workflow gives the tutor call 20 s.
    assert_eq!(
        with_model
            .idempotency_lock_time(Route::Turn)
            .await
            .num_seconds(),
        25
    );
    assert_eq!(
        with_model
            .idempotency_lock_time(Route::CreateThread)
            .await
            .num_seconds(),
        5
    );
}

/// A duplicate of a turn still waiting on the model is told to come back
/// when the first can have finished, then gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_is_told_to_retry_within_the_routes_deadline() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let model = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&model)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    config.content.dir = e2e_support::bundle_with_short_tutor_timeout(dir.path());
    let h = Harness::start(config, dir, None).await;
    let student = "student-duplicate";
    let thread = h.new_thread(student).await;
    let send = || {
        h.http
            .post(format!("{}/threads/{thread}/turn", h.base))
            .bearer_auth(h.token(student))
            .header("idempotency-key", "dup-1")
            .json(&json!({"messageText": "how do I add 45 and 38?"}))
    };
    let first = send().send();
    let duplicate = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        send().send().await.unwrap()
    };
    let (first, duplicate) = tokio::join!(first, duplicate);
    let first = first.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(duplicate.status(), 409);
    let retry_after: u64 = duplicate.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // A one-second tutor timeout and five seconds of store work.
    assert!((1..=6).contains(&retry_after), "Retry-After: {retry_after}");
    let replay = h.send(send()).await;
    assert!(replay.replayed, "{}", replay.body);
}

/// Sends raw bytes to the server and reads what comes back within `wait`.
async fn raw(h: &Harness, request: &[u8], wait: Duration) -> (String, bool) {
    let address = h.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let closed = loop {
        match tokio::time::timeout(wait, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&received).into_owned(), closed)
}

/// `tutorflow serve` lets no client hold it: half-sent headers and bodies
/// are cut off, an oversized body is refused from its declared length and
/// a large audio body is not read before the caller is authenticated.
#[tokio::test]
async fn the_local_server_cuts_off_slow_and_oversized_requests() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.server.header_timeout_ms = 300;
    config.server.body_timeout_ms = 300;
    let h = Harness::start(config, dir, None).await;
    let token = h.token("student-slow");

    let (received, closed) = raw(
        &h,
        b"POST /threads HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n",
        Duration::from_secs(3),
    )
    .await;
    assert!(closed, "half-sent headers: the connection is closed");
    assert!(!received.contains("201"), "{received}");

    let partial = format!(
        "POST /threads HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{{\"courseId\":"
    );
    let (received, _) = raw(&h, partial.as_bytes(), Duration::from_secs(3)).await;
    assert!(
        received.starts_with("HTTP/1.1 408"),
        "half-sent body: {received}"
    );
    assert!(received.contains("request-timeout"), "{received}");

    let unauthenticated = b"POST /transcribe HTTP/1.1\r\nhost: x\r\ncontent-type: audio/wav\r\ncontent-length: 3000000\r\n\r\nRIFF";
    let (received, _) = raw(&h, unauthenticated, Duration::from_secs(3)).await;
    assert!(
        received.starts_with("HTTP/1.1 401"),
        "audio before authentication: {received}"
    );

    let oversized = format!(
        "POST /threads HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{{"
    );
    let (received, _) = raw(&h, oversized.as_bytes(), Duration::from_secs(3)).await;
    assert!(
        received.starts_with("HTTP/1.1 413"),
        "declared too large: {received}"
    );
    // The server still answers whole requests.
    let listed = h.get("student-slow", "/me/threads").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
}
