//! Contention without waste: many turns sent at once on one thread are
//! answered one after another (a per-thread lease taken before the tutor
//! call), so a turn either commits or is refused before it spends a model
//! call. Over HTTP, with a stand-in model that counts its calls, on SQLite
//! and DynamoDB (moto). Run with `--nocapture` for the figures
//! (BENCHMARKS.md).

use crate::e2e_support;

use std::time::{Duration, Instant};

use e2e_support::{Harness, base_config, join_all};
use serde_json::json;
use tutorflow::config::{Config, ProviderKind};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TURNS: usize = 50;
/// How long the stand-in model takes to answer.
const MODEL_LATENCY: Duration = Duration::from_millis(50);

/// A model that answers every tutor call with a valid Socratic question.
async fn model() -> MockServer {
    let reply = json!({
        "mapped_units": [],
        "action": "SOCRATIC_QUESTION",
        "target_unit_id": "whole-numbers",
        "tutor_text": "Which column do you add first, and why?",
        "turn_analysis": {
            "student_intent": "question",
            "understanding_signal": "uncertain",
            "suggested_prereq_units": []
        }
    });
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(MODEL_LATENCY)
                .set_body_json(json!({
                    "id": "c", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": reply.to_string(), "refusal": null}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
                })),
        )
        .mount(&server)
        .await;
    server
}

fn with_model(config: &mut Config, model: &MockServer) {
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
}

async fn fifty_turns_at_once(h: &Harness, model: &MockServer, store: &str) {
    let student = "student-contention";
    let thread = h.new_thread(student).await;
    let turn_path = format!("/threads/{thread}/turn");
    let started = Instant::now();
    let requests = (0..TURNS)
        .map(|i| {
            h.post(
                student,
                &turn_path,
                json!({"messageText": format!("message {i}: how do I add 45 and 38?")}),
            )
        })
        .collect();
    let results = join_all(requests).await;
    let elapsed = started.elapsed();
    let ok = results.iter().filter(|r| r.status == 200).count();
    let refused = results.iter().filter(|r| r.status == 409).count();
    for r in &results {
        assert!(
            r.status == 200 || r.status == 409,
            "{} {}",
            r.status,
            r.body
        );
        if r.status == 409 {
            assert!(
                r.body["detail"]
                    .as_str()
                    .unwrap()
                    .contains("still being answered"),
                "{}",
                r.body
            );
        }
    }
    let calls = model.received_requests().await.unwrap().len();
    let wasted = calls.saturating_sub(ok);
    println!(
        "{TURNS} concurrent turns on one thread ({store}, model {} ms): {ok} × 200, {refused} × 409, {calls} tutor calls, {wasted} wasted, {:.1} s",
        MODEL_LATENCY.as_millis(),
        elapsed.as_secs_f64()
    );
    assert!(ok >= 1);
    assert!(
        wasted <= 2,
        "{wasted} tutor calls spent on turns that did not commit"
    );
    let view = h.get(student, &format!("/threads/{thread}?limit=1")).await;
    assert_eq!(view.status, 200, "{}", view.body);
    assert_eq!(
        view.body["state"]["turnCount"], ok,
        "one turn counted per commit"
    );
    let stored = h.store.get_thread(&thread, 0).await.unwrap().unwrap();
    assert_eq!(
        stored.message_count,
        1 + 2 * ok as u64,
        "no lost or doubled message"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_concurrent_turns_spend_no_wasted_tutor_calls() {
    let model = model().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    with_model(&mut config, &model);
    let h = Harness::start(config, dir, None).await;
    fifty_turns_at_once(&h, &model, "SQLite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_concurrent_turns_spend_no_wasted_tutor_calls() {
    let model = model().await;
    let Some(h) = Harness::aws_with("aws_concurrent_turns_spend_no_wasted_tutor_calls", |c| {
        with_model(c, &model)
    })
    .await
    else {
        return;
    };
    fifty_turns_at_once(&h, &model, "DynamoDB on moto").await;
}

/// On DynamoDB the lease is on the thread's item: a stranger's turn takes
/// nothing and is answered 404 at once, a turn refused after taking it
/// releases it, and a committed turn's own transaction releases it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_a_turn_leaves_no_lease_on_its_thread() {
    let Some(h) = Harness::aws("aws_a_turn_leaves_no_lease_on_its_thread").await else {
        return;
    };
    let student = "student-lease";
    let thread = h.new_thread(student).await;
    let turn_path = format!("/threads/{thread}/turn");
    let stored = || async { h.store.get_thread(&thread, 0).await.unwrap().unwrap() };

    let started = Instant::now();
    let stranger = h
        .post("student-stranger", &turn_path, json!({"messageText": "hi"}))
        .await;
    assert_eq!(stranger.status, 404, "{}", stranger.body);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "not kept waiting"
    );
    assert_eq!(stored().await.lease, None);

    // Refused after the lease was taken: the course is not the thread's.
    let refused = h
        .post(
            student,
            &turn_path,
            json!({"messageText": "hi", "courseId": "algebra-1"}),
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(stored().await.lease, None, "released by the refused turn");

    let before = stored().await.version;
    let started = Instant::now();
    let answered = h
        .post(
            student,
            &turn_path,
            json!({"messageText": "what is 2 + 3?"}),
        )
        .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "no lease to wait for"
    );
    let after = stored().await;
    assert_eq!(after.lease, None, "released by the turn's commit");
    assert_eq!(after.version, before + 1, "one write of the thread");
}
