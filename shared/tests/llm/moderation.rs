//! OpenAI's moderation endpoint against wiremock replaying its real
//! request and response shapes (`omni-moderation-latest`): a flagged
//! message, a calm one, and the errors — a bad key is not retried, a
//! server error or rate limit is, a late reply times out — and which
//! configurations turn it on.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use tutorflow::config::{Config, ModerationProvider};
use tutorflow::llm::moderation::{Moderator, OpenAiModerator};
use tutorflow::llm::{ApiKey, Endpoint, LlmSetupError, RetryPolicy};
use tutorflow::model::LlmError;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-moderation-test";
const CATEGORIES: [&str; 13] = [
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
];

fn retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(20),
    }
}

fn moderator(server: &MockServer) -> OpenAiModerator {
    OpenAiModerator::new(
        Endpoint {
            base_url: format!("{}/v1", server.uri()),
            api_key: Some(ApiKey::new(KEY)),
            default_model: "omni-moderation-latest".into(),
        },
        Duration::from_secs(2),
        retry(),
    )
}

/// A moderation response as the API sends it: every category with its
/// boolean, score and the input types it applied to.
fn moderation(flagged: &[&str]) -> ResponseTemplate {
    let categories: serde_json::Map<String, Value> = CATEGORIES
        .iter()
        .map(|c| (c.to_string(), json!(flagged.contains(c))))
        .collect();
    let scores: serde_json::Map<String, Value> = CATEGORIES
        .iter()
        .map(|c| {
            let score = if flagged.contains(c) { 0.93 } else { 0.0004 };
            (c.to_string(), json!(score))
        })
        .collect();
    let applied: serde_json::Map<String, Value> = CATEGORIES
        .iter()
        .map(|c| (c.to_string(), json!(["text"])))
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "modr-0d9740456c391e43c445bf0f010940c7",
        "model": "omni-moderation-latest",
        "results": [{
            "flagged": !flagged.is_empty(),
            "categories": categories,
            "category_scores": scores,
            "category_applied_input_types": applied,
        }]
    }))
}

fn openai_error(status: u16, message: &str, kind: &str, code: Option<&str>) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "error": {"message": message, "type": kind, "param": null, "code": code}
    }))
}

async fn mount(server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path("/v1/moderations"))
        .respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(2)
}

#[tokio::test]
async fn a_flagged_message_names_its_categories() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/moderations"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_json(
            json!({"model": "omni-moderation-latest", "input": "i wanna die"}),
        ))
        .respond_with(moderation(&["self-harm", "self-harm/intent"]))
        .expect(1)
        .mount(&server)
        .await;
    let names = moderator(&server)
        .flagged("i wanna die", soon())
        .await
        .unwrap();
    assert_eq!(names, ["self-harm", "self-harm/intent"]);
}

#[tokio::test]
async fn a_calm_message_names_none() {
    let server = MockServer::builder().start().await;
    mount(&server, moderation(&[]), None).await;
    let names = moderator(&server)
        .flagged("kill the x term", soon())
        .await
        .unwrap();
    assert!(names.is_empty(), "{names:?}");
}

#[tokio::test]
async fn a_bad_key_fails_at_once() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        openai_error(
            401,
            "Incorrect API key provided: sk-moder***test.",
            "invalid_request_error",
            Some("invalid_api_key"),
        ),
        None,
    )
    .await;
    let err = moderator(&server).flagged("hi", soon()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Auth(m) if m.contains("Incorrect API key")),
        "{err:?}"
    );
    assert_eq!(requests(&server).await, 1, "not retried");
}

#[tokio::test]
async fn a_server_error_or_rate_limit_is_retried() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        openai_error(500, "The server had an error", "server_error", None),
        Some(1),
    )
    .await;
    mount(
        &server,
        openai_error(
            429,
            "Rate limit reached for omni-moderation-latest",
            "requests",
            Some("rate_limit_exceeded"),
        )
        .insert_header("retry-after-ms", "5"),
        Some(1),
    )
    .await;
    mount(&server, moderation(&["violence"]), None).await;
    let names = moderator(&server)
        .flagged("im going to stab him", soon())
        .await
        .unwrap();
    assert_eq!(names, ["violence"]);
    assert_eq!(requests(&server).await, 3);
}

#[tokio::test]
async fn errors_and_late_replies_are_errors() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        openai_error(
            400,
            "'input' is a required property",
            "invalid_request_error",
            None,
        ),
        Some(1),
    )
    .await;
    let m = moderator(&server);
    assert!(matches!(
        m.flagged("hi", soon()).await,
        Err(LlmError::BadRequest(_))
    ));
    // A reply that is not a moderation result.
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({"id": "x"})),
        Some(1),
    )
    .await;
    assert!(matches!(
        m.flagged("hi", soon()).await,
        Err(LlmError::InvalidOutput(_))
    ));
    // Later than the deadline.
    mount(
        &server,
        moderation(&[]).set_delay(Duration::from_millis(500)),
        None,
    )
    .await;
    let deadline = Instant::now() + Duration::from_millis(100);
    assert!(matches!(
        m.flagged("hi", deadline).await,
        Err(LlmError::Timeout)
    ));
}

fn keys(key: &str) -> Option<String> {
    (key == "OPENAI_KEY").then(|| "sk-set".to_owned())
}

#[test]
fn auto_is_on_wherever_an_openai_key_is_configured() {
    let build = |config: &Config| OpenAiModerator::from_config(config, keys, retry());
    let mut config = Config::default();
    assert!(build(&config).unwrap().is_none(), "no key: off");
    config.llm.openai.api_key = Some("env:OPENAI_KEY".into());
    assert!(build(&config).unwrap().is_some(), "the LLM key is borrowed");
    config.safety.moderation.provider = ModerationProvider::Off;
    assert!(build(&config).unwrap().is_none());

    // A borrowed key that is unset leaves auto off; one of its own must be set.
    let mut config = Config::default();
    config.llm.openai.api_key = Some("env:UNSET_KEY".into());
    assert!(build(&config).unwrap().is_none());
    config.safety.moderation.api_key = Some("env:UNSET_KEY".into());
    let err = build(&config).unwrap_err();
    assert!(
        matches!(&err, LlmSetupError::Moderation(m) if m.contains("safety.moderation.api_key")),
        "{err}"
    );

    let mut config = Config::default();
    config.safety.moderation.provider = ModerationProvider::Openai;
    let err = build(&config).unwrap_err();
    assert!(err.to_string().contains("is required"), "{err}");
}
