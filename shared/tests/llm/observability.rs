//! Each provider call logs one structured info event — provider, model,
//! tokens in and out, latency, attempts, outcome — and no event carries the
//! prompt, the reply text or the API key.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tutorflow::llm::openai::{OpenAiFlavor, OpenAiProvider};
use tutorflow::llm::{
    ApiKey, CallSettings, ChatMessage, Endpoint, LlmCall, RetryPolicy, structured_call,
};
use tutorflow::model::{LlmError, LlmTutorResponse};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const PROMPT_MARKER: &str = "PROMPT-MARKER-x81";
const REPLY_MARKER: &str = "REPLY-MARKER-q27";
const KEY: &str = "sk-observability-secret";

#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    target: String,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }
}

fn reply_body(text: &str) -> serde_json::Value {
    let reply = json!({
        "mapped_units": [], "action": "SOCRATIC_QUESTION", "target_unit_id": "u1",
        "tutor_text": text, "concept_card": null, "drill_card": null, "exam_suggestion": null,
        "turn_analysis": {"student_intent": "unknown", "understanding_signal": "uncertain",
            "suggested_prereq_units": [], "answer_text": null}
    });
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.to_string(), "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375}
    })
}

/// tracing decides once per call site, for the whole process, whether any
/// subscriber wants its events, asking the subscriber of the first thread
/// to get there. Another test of this binary, on a thread without one,
/// would mark the provider's log line as unwanted before the capture below
/// sees it. A global subscriber that wants everything (and keeps nothing)
/// gives every thread the same answer as the capture.
fn listen_on_every_thread() {
    static GLOBAL: Once = Once::new();
    GLOBAL.call_once(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry())
            .expect("no other test of this binary sets the global subscriber");
    });
}

async fn run(template: ResponseTemplate) -> (Result<(), LlmError>, Vec<Captured>) {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(template)
        .mount(&server)
        .await;
    let provider = OpenAiProvider::new(
        Endpoint {
            base_url: format!("{}/v1", server.uri()),
            api_key: Some(ApiKey::new(KEY)),
            default_model: "gpt-4o-mini".into(),
        },
        OpenAiFlavor::OpenAi,
        RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(5),
        },
    );
    listen_on_every_thread();
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let result = structured_call::<LlmTutorResponse>(
        &provider,
        LlmCall::Tutor,
        vec![
            ChatMessage::system(format!("rules {PROMPT_MARKER}")),
            ChatMessage::user(format!("student says {PROMPT_MARKER}")),
        ],
        CallSettings {
            model: String::new(),
            temperature: 0.2,
            max_tokens: 500,
            timeout: Duration::from_secs(5),
            reasoning_effort: None,
        },
        None,
    )
    .await
    .map(|_| ());
    let events = capture.0.lock().unwrap().clone();
    (result, events)
}

fn llm_info(events: &[Captured]) -> Vec<&Captured> {
    events
        .iter()
        .filter(|e| e.target == "tutorflow::llm" && e.level <= Level::INFO)
        .collect()
}

fn assert_clean(events: &[Captured]) {
    for event in events {
        let all = format!("{:?}", event.fields);
        assert!(!all.contains(PROMPT_MARKER), "prompt text logged: {all}");
        assert!(!all.contains(KEY), "API key logged: {all}");
        if event.level <= Level::INFO {
            assert!(
                !all.contains(REPLY_MARKER),
                "reply text logged at info: {all}"
            );
        }
    }
}

#[tokio::test]
async fn a_successful_call_is_one_structured_event() {
    let (result, events) =
        run(ResponseTemplate::new(200).set_body_json(reply_body(&format!("Hi {REPLY_MARKER}?"))))
            .await;
    result.unwrap();
    let info = llm_info(&events);
    assert_eq!(info.len(), 1, "{events:#?}");
    let fields = &info[0].fields;
    for (name, value) in [
        ("call", "tutor"),
        ("provider", "openai"),
        ("model", "gpt-4o-mini-2024-07-18"),
        ("input_tokens", "321"),
        ("output_tokens", "54"),
        ("attempts", "1"),
        ("outcome", "ok"),
    ] {
        assert_eq!(
            fields.get(name).map(String::as_str),
            Some(value),
            "{name}: {fields:?}"
        );
    }
    assert!(fields["latency_ms"].parse::<u64>().is_ok());
    assert_clean(&events);
}

#[tokio::test]
async fn a_failed_call_logs_its_outcome_and_nothing_private() {
    // The reply quotes itself in the decode error, which stays at debug level.
    let mut bad = reply_body(REPLY_MARKER);
    let content = bad["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .replace("\"SOCRATIC_QUESTION\"", &format!("\"{REPLY_MARKER}\""));
    bad["choices"][0]["message"]["content"] = json!(content);
    let (result, events) = run(ResponseTemplate::new(200).set_body_json(bad)).await;
    assert!(matches!(result, Err(LlmError::InvalidOutput(_))));
    let info = llm_info(&events);
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].fields["outcome"], "invalid_output");
    assert_eq!(info[0].fields["model"], "gpt-4o-mini");
    assert_clean(&events);

    let (result, events) = run(ResponseTemplate::new(503)
        .set_body_json(json!({"error": {"message": "overloaded", "type": "server_error"}})))
    .await;
    assert!(matches!(result, Err(LlmError::Unavailable(_))));
    assert_eq!(llm_info(&events)[0].fields["outcome"], "unavailable");
    // The retry is visible at debug level.
    assert!(events.iter().any(|e| {
        e.level == Level::DEBUG
            && e.fields
                .get("message")
                .is_some_and(|m| m.contains("retrying"))
    }));
    assert_clean(&events);
}
