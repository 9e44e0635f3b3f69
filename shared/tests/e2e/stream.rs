//! Streamed turns end to end over HTTP: the local server on a real port,
//! `Accept: text/event-stream`, the offline tutor and an OpenAI-compatible
//! stand-in streaming in the real Chat Completions chunk format.

use crate::e2e_support;

use e2e_support::{Harness, base_config};
use serde_json::{Value, json};
use tutorflow::config::ProviderKind;
use tutorflow::llm::sse::{SseEvent, SseParser};
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A streamed response: status, content type, its events in order.
struct Streamed {
    status: u16,
    content_type: String,
    events: Vec<SseEvent>,
    body: String,
}

impl Streamed {
    fn names(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e.event.as_deref().unwrap_or("message"))
            .collect()
    }

    fn deltas(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e.event.as_deref() == Some("delta"))
            .map(|e| {
                let data: Value = serde_json::from_str(&e.data).unwrap();
                data["text"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    fn last(&self) -> (&str, Value) {
        let last = self.events.last().expect("an event");
        (
            last.event.as_deref().unwrap_or("message"),
            serde_json::from_str(&last.data).unwrap(),
        )
    }
}

async fn stream_turn(
    h: &Harness,
    student: &str,
    thread: &str,
    body: Value,
    key: Option<&str>,
) -> Streamed {
    let mut request = h
        .http()
        .post(format!("{}/threads/{thread}/turn", h.base()))
        .bearer_auth(h.token(student))
        .header("Accept", "text/event-stream")
        .json(&body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let mut response = request.send().await.expect("sent");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.expect("body") {
        body.extend_from_slice(&chunk);
        events.extend(parser.push(&chunk));
    }
    events.extend(parser.finish());
    Streamed {
        status,
        content_type,
        events,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn tutor_text(response: &Value) -> String {
    response["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_offline_tutor_streams_words_then_the_stored_final() {
    let h = Harness::sqlite().await;
    let student = "student-stream";
    let thread = h.new_thread(student).await;
    let said = json!({"messageText": "what is a ratio?"});
    let streamed = stream_turn(&h, student, &thread, said.clone(), Some("stream-1")).await;
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert!(streamed.content_type.starts_with("text/event-stream"));
    let names = streamed.names();
    let deltas = streamed.deltas();
    assert!(deltas.len() >= 2, "word pieces: {names:?}");
    assert_eq!(names.last(), Some(&"final"), "{names:?}");
    assert!(
        names[..names.len() - 1].iter().all(|n| *n == "delta"),
        "{names:?}"
    );
    let (_, response) = streamed.last();
    assert_eq!(
        deltas.concat(),
        tutor_text(&response),
        "the final is what streamed"
    );

    // A replay of the same request is the stored response, as one event.
    let replay = stream_turn(&h, student, &thread, said.clone(), Some("stream-1")).await;
    assert_eq!(replay.names(), vec!["final"], "{}", replay.body);
    assert_eq!(replay.last().1, response);
    // ... and the same JSON without streaming.
    let whole = h
        .send(
            h.http()
                .post(format!("{}/threads/{thread}/turn", h.base()))
                .bearer_auth(h.token(student))
                .header("Idempotency-Key", "stream-1")
                .json(&said),
        )
        .await;
    assert!(whole.replayed);
    assert_eq!(whole.body, response);
    assert_eq!(
        h.message_count(student, &thread).await,
        3,
        "one turn stored once"
    );
}

#[tokio::test]
async fn refusals_before_the_stream_are_problem_json() {
    let h = Harness::sqlite().await;
    let student = "student-stream-refused";
    let missing = stream_turn(
        &h,
        student,
        "no-such-thread",
        json!({"messageText": "hi"}),
        None,
    )
    .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert!(missing.content_type.starts_with("application/problem+json"));
    let thread = h.new_thread(student).await;
    let empty = stream_turn(&h, student, &thread, json!({}), None).await;
    assert_eq!(empty.status, 400, "{}", empty.body);
    assert!(empty.content_type.starts_with("application/problem+json"));
    assert_eq!(
        h.message_count(student, &thread).await,
        1,
        "nothing changed"
    );
}

/// Chat Completions chunks, the reply's JSON cut into `pieces` of text.
fn openai_stream(reply: &str, pieces: usize, tail: &str) -> String {
    let chars: Vec<char> = reply.chars().collect();
    let size = chars.len().div_ceil(pieces);
    let mut out = String::from(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"stand-in\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
    );
    for piece in chars.chunks(size) {
        let text: String = piece.iter().collect();
        let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "stand-in",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str(tail);
    out
}

const DONE: &str = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"stand-in\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

fn leaking_reply() -> String {
    json!({
        "mapped_units": [],
        "action": "SOCRATIC_QUESTION",
        "target_unit_id": "whole-numbers",
        "tutor_text": "Let's look at this one together, step by step, and see what we notice first. The student's mastery estimate is low, so go slowly. What do you get when you add 3 and 4?",
        "turn_analysis": {"student_intent": "question", "understanding_signal": "uncertain", "suggested_prereq_units": [], "answer_text": null}
    })
    .to_string()
}

async fn with_stand_in(body: String) -> (Harness, MockServer) {
    let model = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(json!({"stream": true})))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&model)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    (Harness::start(config, dir, None).await, model)
}

/// A model that leaks internal language mid-stream: the leak never reaches
/// a delta, the clean start does, and the stream ends by replacing it.
#[tokio::test]
async fn a_leak_mid_stream_is_never_shown() {
    let (h, _model) = with_stand_in(openai_stream(&leaking_reply(), 40, DONE)).await;
    let student = "student-stream-leak";
    let thread = h.new_thread(student).await;
    let streamed = stream_turn(
        &h,
        student,
        &thread,
        json!({"messageText": "how do I add 3 and 4?"}),
        None,
    )
    .await;
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    let shown = streamed.deltas().concat();
    assert!(
        shown.starts_with("Let's look at this one together"),
        "{shown:?}"
    );
    assert!(
        !shown.to_lowercase().contains("student"),
        "leaked: {shown:?}"
    );
    assert!(!shown.contains("mastery"), "leaked: {shown:?}");
    let (name, response) = streamed.last();
    assert_eq!(name, "replaced", "{:?}", streamed.names());
    assert!(!tutor_text(&response).contains("student's"), "{response}");
}

/// An error event mid-stream and a stream cut short both end in the
/// fallback reply, sent as `replaced` after what was shown.
#[tokio::test]
async fn a_broken_stream_ends_replaced() {
    let error = "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\"}}\n\n";
    for tail in [error, ""] {
        let (h, _model) = with_stand_in(openai_stream(&leaking_reply(), 40, tail)).await;
        let student = "student-stream-broken";
        let thread = h.new_thread(student).await;
        let streamed = stream_turn(
            &h,
            student,
            &thread,
            json!({"messageText": "how do I add 3 and 4?"}),
            None,
        )
        .await;
        assert_eq!(streamed.status, 200, "{}", streamed.body);
        assert!(!streamed.deltas().is_empty(), "{:?}", streamed.names());
        let (name, response) = streamed.last();
        assert_eq!(name, "replaced", "{:?}", streamed.names());
        assert!(!tutor_text(&response).is_empty(), "{response}");
    }
}
