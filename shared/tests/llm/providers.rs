//! Every provider against a wiremock server replaying that provider's real
//! response shapes: success, refusal, truncation, 429 with a retry delay,
//! 5xx, malformed and schema-violating JSON, timeouts, bad requests and bad
//! keys — the right typed value or error every time, and the right number
//! of attempts.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use tutorflow::config::{LlmConfig, ProviderKind};
use tutorflow::content::workflow::ReasoningEffort;
use tutorflow::llm::anthropic::AnthropicProvider;
use tutorflow::llm::gemini::GeminiProvider;
use tutorflow::llm::openai::{OpenAiFlavor, OpenAiProvider};
use tutorflow::llm::{
    ApiKey, CallSettings, ChatMessage, Endpoint, LlmCall, LlmProvider, LlmSetupError, LlmStack,
    OutputSchema, RetryPolicy, SchemaDialect, structured_call,
};
use tutorflow::model::{
    LlmError, LlmSafetyVerdict, LlmTutorResponse, Reply, SafetyCategory, TutorAction,
};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "test-key-not-real";

/// The providers under test; Anthropic twice, for its two output modes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Api {
    OpenAi,
    Compatible,
    AnthropicTool,
    AnthropicNative,
    Gemini,
}

const ALL: [Api; 5] = [
    Api::OpenAi,
    Api::Compatible,
    Api::AnthropicTool,
    Api::AnthropicNative,
    Api::Gemini,
];

impl Api {
    fn model(self) -> &'static str {
        match self {
            Api::OpenAi => "gpt-4o-mini",
            Api::Compatible => "llama3.1",
            Api::AnthropicTool => "claude-3-7-sonnet-20250219",
            Api::AnthropicNative => "claude-sonnet-4-5",
            Api::Gemini => "gemini-2.5-flash",
        }
    }

    fn path(self) -> String {
        match self {
            Api::OpenAi | Api::Compatible => "/v1/chat/completions".into(),
            Api::AnthropicTool | Api::AnthropicNative => "/v1/messages".into(),
            Api::Gemini => format!("/v1beta/models/{}:generateContent", self.model()),
        }
    }

    fn provider(self, server: &MockServer) -> Arc<dyn LlmProvider> {
        let retry = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
        };
        let endpoint = |base: String| Endpoint {
            base_url: base,
            api_key: Some(ApiKey::new(KEY)),
            default_model: self.model().into(),
        };
        match self {
            Api::OpenAi => Arc::new(OpenAiProvider::new(
                endpoint(format!("{}/v1", server.uri())),
                OpenAiFlavor::OpenAi,
                retry,
            )),
            Api::Compatible => Arc::new(OpenAiProvider::new(
                endpoint(format!("{}/v1/", server.uri())),
                OpenAiFlavor::Compatible,
                retry,
            )),
            Api::AnthropicTool | Api::AnthropicNative => {
                Arc::new(AnthropicProvider::new(endpoint(server.uri()), retry))
            }
            Api::Gemini => Arc::new(GeminiProvider::new(
                endpoint(format!("{}/v1beta", server.uri())),
                retry,
            )),
        }
    }

    /// A successful response carrying `reply` as the tutor call's output.
    fn success(self, reply: &Value) -> ResponseTemplate {
        self.success_as("tutor_reply", reply)
    }

    /// A successful response carrying `reply` as the output of the call
    /// whose schema is named `schema` (Anthropic's tool is named after it).
    fn success_as(self, schema: &str, reply: &Value) -> ResponseTemplate {
        let text = reply.to_string();
        let body = match self {
            Api::OpenAi | Api::Compatible => json!({
                "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
                "object": "chat.completion",
                "created": 1741569952,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": null, "annotations": []},
                    "logprobs": null,
                    "finish_reason": "stop"
                }],
                "usage": {
                    "prompt_tokens": 1234, "completion_tokens": 156, "total_tokens": 1390,
                    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                        "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
                },
                "service_tier": "default",
                "system_fingerprint": "fp_06737a9306"
            }),
            Api::AnthropicTool => json!({
                "id": "msg_01Aq9w938a90dw8q",
                "type": "message",
                "role": "assistant",
                "model": "claude-3-7-sonnet-20250219",
                "content": [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": schema, "input": reply}],
                "stop_reason": "tool_use",
                "stop_sequence": null,
                "usage": {"input_tokens": 1234, "output_tokens": 156, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            }),
            Api::AnthropicNative => json!({
                "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": null,
                "usage": {"input_tokens": 1234, "output_tokens": 156}
            }),
            Api::Gemini => json!({
                "candidates": [{
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0
                }],
                "usageMetadata": {"promptTokenCount": 1234, "candidatesTokenCount": 120, "totalTokenCount": 1390, "thoughtsTokenCount": 36},
                "modelVersion": "gemini-2.5-flash",
                "responseId": "mMTNaO7VJ5e1nvgPkZ3P6QI"
            }),
        };
        ResponseTemplate::new(200).set_body_json(body)
    }

    /// Output text that is not JSON (for the tool mode: a text block only).
    fn malformed(self) -> ResponseTemplate {
        match self {
            Api::AnthropicTool => ResponseTemplate::new(200).set_body_json(json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-7-sonnet-20250219",
                "content": [{"type": "text", "text": "Sure! Here is the reply: {\"action\": "}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 10}
            })),
            _ => {
                let body = match self {
                    Api::OpenAi | Api::Compatible => json!({
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"action\": \"SOCRATIC_QUESTION\", \"tutor_text\": \"Wh", "refusal": null}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
                    }),
                    Api::AnthropicNative => json!({
                        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": "{\"action\": SOCRATIC_QUESTION}"}],
                        "stop_reason": "end_turn", "stop_sequence": null,
                        "usage": {"input_tokens": 10, "output_tokens": 10}
                    }),
                    _ => json!({
                        "candidates": [{"content": {"parts": [{"text": "```json\n{\"action\": \"SOCRATIC_QUESTION\"\n```"}], "role": "model"}, "finishReason": "STOP", "index": 0}],
                        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
                        "modelVersion": "gemini-2.5-flash"
                    }),
                };
                ResponseTemplate::new(200).set_body_json(body)
            }
        }
    }

    fn refusal(self) -> ResponseTemplate {
        let body = match self {
            Api::OpenAi | Api::Compatible => json!({
                "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                    "refusal": "I'm sorry, I can't assist with that request."}, "logprobs": null, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}
            }),
            Api::AnthropicTool | Api::AnthropicNative => json!({
                "id": "msg_2", "type": "message", "role": "assistant", "model": self.model(),
                "content": [{"type": "text", "text": "I can't help with that request."}],
                "stop_reason": "refusal", "stop_sequence": null,
                "usage": {"input_tokens": 100, "output_tokens": 8}
            }),
            Api::Gemini => json!({
                "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [
                    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]},
                "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100},
                "modelVersion": "gemini-2.5-flash"
            }),
        };
        ResponseTemplate::new(200).set_body_json(body)
    }

    fn truncated(self) -> ResponseTemplate {
        let body = match self {
            Api::OpenAi | Api::Compatible => json!({
                "id": "chatcmpl-3", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"mapped_units\": [{\"unit_id\": \"one-st", "refusal": null},
                    "logprobs": null, "finish_reason": "length"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 900, "total_tokens": 1000}
            }),
            Api::AnthropicTool => json!({
                "id": "msg_3", "type": "message", "role": "assistant", "model": self.model(),
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "tutor_reply", "input": {}}],
                "stop_reason": "max_tokens", "stop_sequence": null,
                "usage": {"input_tokens": 100, "output_tokens": 900}
            }),
            Api::AnthropicNative => json!({
                "id": "msg_3", "type": "message", "role": "assistant", "model": self.model(),
                "content": [{"type": "text", "text": "{\"mapped_units\": [{\"unit_id\": \"one-st"}],
                "stop_reason": "max_tokens", "stop_sequence": null,
                "usage": {"input_tokens": 100, "output_tokens": 900}
            }),
            Api::Gemini => json!({
                "candidates": [{"content": {"parts": [{"text": "{\"mapped_units\": [{\"unit_id\": \"one-st"}], "role": "model"},
                    "finishReason": "MAX_TOKENS", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 900, "totalTokenCount": 1000},
                "modelVersion": "gemini-2.5-flash"
            }),
        };
        ResponseTemplate::new(200).set_body_json(body)
    }

    /// A 429 asking for a wait of `delay`, in the provider's own way.
    fn rate_limited(self, delay: Duration) -> ResponseTemplate {
        match self {
            Api::OpenAi | Api::Compatible => ResponseTemplate::new(429)
                .insert_header("retry-after-ms", delay.as_millis().to_string().as_str())
                .insert_header("x-ratelimit-reset-requests", "20s")
                .set_body_json(json!({"error": {
                    "message": "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1.",
                    "type": "requests", "param": null, "code": "rate_limit_exceeded"}})),
            Api::AnthropicTool | Api::AnthropicNative => ResponseTemplate::new(429)
                .insert_header("retry-after", delay.as_secs().to_string().as_str())
                .insert_header("anthropic-ratelimit-requests-remaining", "0")
                .set_body_json(json!({"type": "error", "error": {"type": "rate_limit_error",
                    "message": "Number of request tokens has exceeded your per-minute rate limit"}})),
            Api::Gemini => ResponseTemplate::new(429).set_body_json(json!({"error": {
                "code": 429,
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                    {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "Learn more", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{}s", delay.as_secs_f64())}
                ]}})),
        }
    }

    fn server_error(self) -> ResponseTemplate {
        match self {
            Api::OpenAi | Api::Compatible => ResponseTemplate::new(500).set_body_json(json!({"error": {
                "message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error", "param": null, "code": null}})),
            Api::AnthropicTool | Api::AnthropicNative => ResponseTemplate::new(529).set_body_json(
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            Api::Gemini => ResponseTemplate::new(503).set_body_json(json!({"error": {
                "code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})),
        }
    }

    fn bad_request(self) -> ResponseTemplate {
        match self {
            Api::OpenAi | Api::Compatible => ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "Invalid schema for response_format 'tutor_reply': In context=(), 'additionalProperties' is required to be supplied and to be false.",
                "type": "invalid_request_error", "param": "response_format", "code": null}})),
            Api::AnthropicTool | Api::AnthropicNative => ResponseTemplate::new(400).set_body_json(json!({
                "type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}})),
            Api::Gemini => ResponseTemplate::new(400).set_body_json(json!({"error": {
                "code": 400, "message": "Invalid JSON payload received. Unknown name \"responseJsonSchem\" at 'generation_config'.",
                "status": "INVALID_ARGUMENT"}})),
        }
    }

    fn unauthorized(self) -> ResponseTemplate {
        match self {
            Api::OpenAi | Api::Compatible => ResponseTemplate::new(401).set_body_json(json!({"error": {
                "message": "Incorrect API key provided: test-key***real. You can find your API key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})),
            Api::AnthropicTool | Api::AnthropicNative => ResponseTemplate::new(401).set_body_json(json!({
                "type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
            Api::Gemini => ResponseTemplate::new(400).set_body_json(json!({"error": {
                "code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}})),
        }
    }
}

fn valid_reply() -> Value {
    json!({
        "mapped_units": [{"unit_id": "one-step-equations", "confidence": 0.9}],
        "action": "SOCRATIC_QUESTION",
        "target_unit_id": "one-step-equations",
        "tutor_text": "What is being done to x in 3x = 21?",
        "concept_card": null,
        "drill_card": null,
        "exam_suggestion": null,
        "turn_analysis": {
            "student_intent": "question",
            "understanding_signal": "uncertain",
            "suggested_prereq_units": [],
            "answer_text": null
        }
    })
}

fn settings(timeout: Duration) -> CallSettings {
    CallSettings {
        model: String::new(),
        temperature: 0.3,
        max_tokens: 900,
        timeout,
        reasoning_effort: None,
    }
}

async fn call(api: Api, server: &MockServer) -> Result<Reply<LlmTutorResponse>, LlmError> {
    call_with(api, server, settings(Duration::from_secs(5))).await
}

async fn call_with(
    api: Api,
    server: &MockServer,
    settings: CallSettings,
) -> Result<Reply<LlmTutorResponse>, LlmError> {
    let provider = api.provider(server);
    structured_call(
        provider.as_ref(),
        LlmCall::Tutor,
        vec![
            ChatMessage::system("You are a tutor."),
            ChatMessage::system("POLICY: {}"),
            ChatMessage::user("Student input: why divide?"),
        ],
        settings,
        None,
    )
    .await
}

async fn requests(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap_or_default()
}

async fn mount(server: &MockServer, api: Api, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path(api.path()))
        .respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

#[tokio::test]
async fn a_valid_reply_is_decoded_with_its_usage() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.success(&valid_reply()), None).await;
        let reply = call(api, &server)
            .await
            .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(reply.value.action, TutorAction::SocraticQuestion, "{api:?}");
        assert_eq!(reply.value.turn_analysis.answer_text, None);
        assert_eq!(reply.usage.input_tokens, 1234, "{api:?}");
        assert_eq!(reply.usage.output_tokens, 156, "{api:?}");
        assert_eq!(reply.usage.attempts, 1, "{api:?}");
        assert!(!reply.usage.model.is_empty());
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

/// The safety call's verdict on a student worried about a friend: every
/// provider is offered the category in its schema and decodes it, so an
/// online deployment gives the worried-friend reply.
#[tokio::test]
async fn a_friend_at_risk_verdict_is_offered_and_decoded_by_every_provider() {
    let verdict = json!({
        "safe": false,
        "category": "someone_at_risk",
        "reason": "Worried about a friend who wants to die."
    });
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(
            &server,
            api,
            api.success_as("safety_verdict", &verdict),
            None,
        )
        .await;
        let provider = api.provider(&server);
        let reply: Reply<LlmSafetyVerdict> = structured_call(
            provider.as_ref(),
            LlmCall::Safety,
            vec![ChatMessage::user("Message: my friend wants to die")],
            settings(Duration::from_secs(5)),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert!(!reply.value.safe, "{api:?}");
        assert_eq!(
            reply.value.category,
            Some(SafetyCategory::SomeoneAtRisk),
            "{api:?}"
        );
        let request = &requests(&server).await[0];
        let sent = String::from_utf8_lossy(&request.body);
        assert!(sent.contains("\"someone_at_risk\""), "{api:?}: {sent}");
    }
}

#[tokio::test]
async fn each_request_has_the_provider_shape_schema_and_key() {
    let schema = OutputSchema::of::<LlmTutorResponse>();
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.success(&valid_reply()), None).await;
        call(api, &server).await.unwrap();
        let request = &requests(&server).await[0];
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let auth = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        match api {
            Api::OpenAi | Api::Compatible => {
                assert_eq!(
                    auth("authorization").as_deref(),
                    Some("Bearer test-key-not-real")
                );
                let format = &body["response_format"];
                assert_eq!(format["type"], "json_schema");
                assert_eq!(format["json_schema"]["name"], "tutor_reply");
                assert_eq!(format["json_schema"]["strict"], true);
                assert_eq!(
                    &format["json_schema"]["schema"],
                    schema.dialect(SchemaDialect::OpenAiStrict)
                );
                assert_eq!(body["messages"].as_array().unwrap().len(), 3);
                assert_eq!(body["messages"][0]["role"], "system");
                assert_eq!(body["temperature"], 0.3);
                let (used, unused) = if api == Api::OpenAi {
                    ("max_completion_tokens", "max_tokens")
                } else {
                    ("max_tokens", "max_completion_tokens")
                };
                assert_eq!(body[used], 900, "{api:?}");
                assert!(body.get(unused).is_none(), "{api:?}");
            }
            Api::AnthropicTool | Api::AnthropicNative => {
                assert_eq!(auth("x-api-key").as_deref(), Some(KEY));
                assert_eq!(auth("anthropic-version").as_deref(), Some("2023-06-01"));
                assert_eq!(body["system"], "You are a tutor.\n\nPOLICY: {}");
                assert_eq!(body["messages"].as_array().unwrap().len(), 1);
                assert_eq!(body["max_tokens"], 900);
                let anthropic = schema.dialect(SchemaDialect::Anthropic);
                if api == Api::AnthropicTool {
                    assert_eq!(
                        body["tool_choice"],
                        json!({"type": "tool", "name": "tutor_reply"})
                    );
                    assert_eq!(&body["tools"][0]["input_schema"], anthropic);
                    assert!(body.get("output_config").is_none());
                } else {
                    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
                    assert_eq!(&body["output_config"]["format"]["schema"], anthropic);
                    assert!(body.get("tools").is_none());
                }
            }
            Api::Gemini => {
                assert_eq!(auth("x-goog-api-key").as_deref(), Some(KEY));
                let config = &body["generationConfig"];
                assert_eq!(config["responseMimeType"], "application/json");
                assert_eq!(
                    &config["responseJsonSchema"],
                    schema.dialect(SchemaDialect::Gemini)
                );
                assert_eq!(config["maxOutputTokens"], 900);
                assert_eq!(
                    body["systemInstruction"]["parts"].as_array().unwrap().len(),
                    2
                );
                assert_eq!(body["contents"][0]["role"], "user");
            }
        }
        // The key travels only in its header, never in the URL or body.
        assert!(!request.url.as_str().contains(KEY), "{api:?}");
        assert!(
            !String::from_utf8_lossy(&request.body).contains(KEY),
            "{api:?}"
        );
    }
}

#[tokio::test]
async fn a_refusal_is_refused_and_not_retried() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.refusal(), None).await;
        let err = call(api, &server).await.unwrap_err();
        assert!(matches!(err, LlmError::Refused(_)), "{api:?}: {err:?}");
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn a_cut_off_reply_is_truncated_and_not_retried() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.truncated(), None).await;
        assert_eq!(
            call(api, &server).await.unwrap_err(),
            LlmError::Truncated,
            "{api:?}"
        );
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn malformed_json_is_invalid_output_and_not_retried() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.malformed(), None).await;
        let err = call(api, &server).await.unwrap_err();
        assert!(
            matches!(err, LlmError::InvalidOutput(_)),
            "{api:?}: {err:?}"
        );
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn schema_violating_replies_are_invalid_output_and_not_retried() {
    let mut unknown_field = valid_reply();
    unknown_field["mood"] = json!("happy");
    let mut out_of_range = valid_reply();
    out_of_range["mapped_units"][0]["confidence"] = json!(1.7);
    let mut bad_action = valid_reply();
    bad_action["action"] = json!("LECTURE");
    let mut missing = valid_reply();
    missing.as_object_mut().unwrap().remove("turn_analysis");
    let mut empty_text = valid_reply();
    empty_text["tutor_text"] = json!("  ");
    let mut four_ideas = valid_reply();
    four_ideas["concept_card"] = json!({"key_ideas": ["a", "b", "c", "d"], "worked_example": null});
    for (what, reply) in [
        ("unknown field", unknown_field),
        ("confidence out of range", out_of_range),
        ("unknown action", bad_action),
        ("missing field", missing),
        ("empty text", empty_text),
        ("four key ideas", four_ideas),
    ] {
        for api in ALL {
            let server = MockServer::builder().start().await;
            mount(&server, api, api.success(&reply), None).await;
            let err = call(api, &server).await.unwrap_err();
            assert!(
                matches!(err, LlmError::InvalidOutput(_)),
                "{what} via {api:?}: {err:?}"
            );
            assert_eq!(requests(&server).await.len(), 1, "{what} via {api:?}");
        }
    }
}

#[tokio::test]
async fn a_429_is_retried_after_the_providers_delay() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        // Anthropic's retry-after is in whole seconds.
        let delay = match api {
            Api::AnthropicTool | Api::AnthropicNative => Duration::from_secs(1),
            _ => Duration::from_millis(300),
        };
        mount(&server, api, api.rate_limited(delay), Some(1)).await;
        mount(&server, api, api.success(&valid_reply()), None).await;
        let started = Instant::now();
        let reply = call(api, &server)
            .await
            .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert!(started.elapsed() >= delay, "{api:?} did not wait {delay:?}");
        assert_eq!(reply.usage.attempts, 2, "{api:?}");
        assert_eq!(requests(&server).await.len(), 2, "{api:?}");
    }
}

#[tokio::test]
async fn a_429_asking_to_wait_past_the_deadline_fails_at_once() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(
            &server,
            api,
            api.rate_limited(Duration::from_secs(30)),
            None,
        )
        .await;
        let started = Instant::now();
        let err = call_with(api, &server, settings(Duration::from_secs(3)))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(30))
            },
            "{api:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "{api:?}");
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_attempt_limit() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.server_error(), None).await;
        let err = call(api, &server).await.unwrap_err();
        assert!(matches!(err, LlmError::Unavailable(_)), "{api:?}: {err:?}");
        assert_eq!(requests(&server).await.len(), 3, "{api:?}");
    }
}

#[tokio::test]
async fn a_server_error_then_success_succeeds() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.server_error(), Some(1)).await;
        mount(&server, api, api.success(&valid_reply()), None).await;
        let reply = call(api, &server).await.unwrap();
        assert_eq!(reply.usage.attempts, 2, "{api:?}");
        assert_eq!(requests(&server).await.len(), 2, "{api:?}");
    }
}

#[tokio::test]
async fn bad_requests_and_bad_keys_are_never_retried() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.bad_request(), None).await;
        let err = call(api, &server).await.unwrap_err();
        assert!(matches!(err, LlmError::BadRequest(_)), "{api:?}: {err:?}");
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");

        let server = MockServer::builder().start().await;
        mount(&server, api, api.unauthorized(), None).await;
        let err = call(api, &server).await.unwrap_err();
        assert!(matches!(err, LlmError::Auth(_)), "{api:?}: {err:?}");
        assert!(!err.to_string().contains(KEY), "{api:?} echoes the key");
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn a_slow_provider_times_out_at_the_deadline() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        mount(
            &server,
            api,
            api.success(&valid_reply())
                .set_delay(Duration::from_secs(5)),
            None,
        )
        .await;
        let started = Instant::now();
        let err = call_with(api, &server, settings(Duration::from_millis(300)))
            .await
            .unwrap_err();
        assert_eq!(err, LlmError::Timeout, "{api:?}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(2),
            "{api:?} took {took:?}"
        );
        assert_eq!(requests(&server).await.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn the_callers_deadline_wins_over_the_workflow_timeout() {
    let server = MockServer::builder().start().await;
    let api = Api::OpenAi;
    mount(
        &server,
        api,
        api.success(&valid_reply())
            .set_delay(Duration::from_secs(5)),
        None,
    )
    .await;
    let provider = api.provider(&server);
    let started = Instant::now();
    let err = structured_call::<LlmTutorResponse>(
        provider.as_ref(),
        LlmCall::Tutor,
        vec![ChatMessage::user("hi")],
        settings(Duration::from_secs(20)),
        Some(Instant::now() + Duration::from_millis(250)),
    )
    .await
    .unwrap_err();
    assert_eq!(err, LlmError::Timeout);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_unavailable() {
    // Bind a port, then free it: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let provider = OpenAiProvider::new(
        Endpoint {
            base_url: format!("http://{address}/v1"),
            api_key: None,
            default_model: "llama3.1".into(),
        },
        OpenAiFlavor::Compatible,
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(100),
        },
    );
    let started = Instant::now();
    let err = structured_call::<LlmTutorResponse>(
        &provider,
        LlmCall::Tutor,
        vec![ChatMessage::user("hi")],
        settings(Duration::from_secs(5)),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::Unavailable(_)), "{err:?}");
    // Two backoffs of 50-100 ms each: it did retry.
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[tokio::test]
async fn an_exhausted_openai_quota_is_not_retried() {
    let server = MockServer::builder().start().await;
    let api = Api::OpenAi;
    mount(
        &server,
        api,
        ResponseTemplate::new(429).set_body_json(json!({"error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}})),
        None,
    )
    .await;
    let err = call(api, &server).await.unwrap_err();
    assert_eq!(err, LlmError::RateLimited { retry_after: None });
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn reasoning_effort_replaces_temperature_or_adds_a_thinking_budget() {
    let mut with_effort = settings(Duration::from_secs(5));
    with_effort.reasoning_effort = Some(ReasoningEffort::Low);
    for api in [
        Api::OpenAi,
        Api::AnthropicNative,
        Api::AnthropicTool,
        Api::Gemini,
    ] {
        let server = MockServer::builder().start().await;
        mount(&server, api, api.success(&valid_reply()), None).await;
        call_with(api, &server, with_effort.clone()).await.unwrap();
        let body: Value = serde_json::from_slice(&requests(&server).await[0].body).unwrap();
        match api {
            Api::OpenAi => {
                assert_eq!(body["reasoning_effort"], "low");
                assert!(body.get("temperature").is_none());
            }
            Api::AnthropicNative => {
                assert_eq!(
                    body["thinking"],
                    json!({"type": "enabled", "budget_tokens": 1024})
                );
                assert_eq!(body["max_tokens"], 900 + 1024);
                assert!(body.get("temperature").is_none());
            }
            // A forced tool cannot think: the effort is ignored.
            Api::AnthropicTool => {
                assert!(body.get("thinking").is_none());
                assert_eq!(body["max_tokens"], 900);
            }
            _ => {
                assert_eq!(
                    body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
                    1024
                );
                assert_eq!(body["generationConfig"]["maxOutputTokens"], 900 + 1024);
            }
        }
    }
}

#[tokio::test]
async fn a_gemini_reply_counts_thinking_as_output() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        Api::Gemini,
        Api::Gemini.success(&valid_reply()),
        None,
    )
    .await;
    let reply = call(Api::Gemini, &server).await.unwrap();
    // candidatesTokenCount 120 + thoughtsTokenCount 36.
    assert_eq!(reply.usage.output_tokens, 156);
    assert_eq!(reply.usage.model, "gemini-2.5-flash");
}

#[tokio::test]
async fn a_workflow_model_overrides_the_providers_default() {
    let server = MockServer::builder().start().await;
    let api = Api::Gemini;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-pro:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(api.success(&valid_reply()))
        .mount(&server)
        .await;
    let mut chosen = settings(Duration::from_secs(5));
    chosen.model = "gemini-2.5-pro".into();
    call_with(api, &server, chosen).await.unwrap();
}

#[test]
fn the_stack_builds_one_provider_per_kind_and_needs_keys() {
    let env = |name: &str| (name == "OPENAI_KEY").then(|| "sk-test".to_owned());
    let mut config = LlmConfig::default();
    let stack = LlmStack::from_config(&config, env, RetryPolicy::default()).unwrap();
    for call in LlmCall::ALL {
        assert!(stack.provider(call).is_none(), "offline by default");
    }
    config.tutor = ProviderKind::Openai;
    config.summary = ProviderKind::Openai;
    assert_eq!(
        LlmStack::from_config(&config, env, RetryPolicy::default()).unwrap_err(),
        LlmSetupError::MissingKey {
            section: "llm.openai"
        }
    );
    config.openai.api_key = Some("env:OPENAI_KEY".into());
    let stack = LlmStack::from_config(&config, env, RetryPolicy::default()).unwrap();
    let tutor = stack.provider(LlmCall::Tutor).unwrap();
    let summary = stack.provider(LlmCall::Summary).unwrap();
    assert!(
        Arc::ptr_eq(tutor, summary),
        "one connection pool per provider"
    );
    assert_eq!(tutor.name(), "openai");
    assert!(stack.provider(LlmCall::Safety).is_none());
    // The key never shows in debug output.
    assert!(!format!("{stack:?}").contains("sk-test"));

    config.anthropic.api_key = Some("env:ANTHROPIC_KEY".into());
    config.planner = ProviderKind::Anthropic;
    assert_eq!(
        LlmStack::from_config(&config, env, RetryPolicy::default()).unwrap_err(),
        LlmSetupError::UnsetKey {
            section: "llm.anthropic",
            reference: "env:ANTHROPIC_KEY".into()
        }
    );
    // A local OpenAI-compatible server needs no key.
    config.planner = ProviderKind::OpenaiCompatible;
    let stack = LlmStack::from_config(&config, env, RetryPolicy::default()).unwrap();
    assert_eq!(
        stack.provider(LlmCall::Planner).unwrap().name(),
        "openai_compatible"
    );
}
