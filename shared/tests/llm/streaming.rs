//! Every provider's streaming API against a wiremock server replaying that
//! provider's real event stream: Chat Completions chunks and `[DONE]`,
//! Anthropic's Messages events (text and forced-tool replies, `ping`,
//! `error`), Gemini's `streamGenerateContent?alt=sse` partial responses.
//! The reply's raw text arrives in pieces and decodes as a whole; an error
//! event mid-stream and a stream cut short fail without a retry; a failure
//! before the first byte is retried; the deadline holds.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tutorflow::llm::anthropic::AnthropicProvider;
use tutorflow::llm::gemini::GeminiProvider;
use tutorflow::llm::openai::{OpenAiFlavor, OpenAiProvider};
use tutorflow::llm::stream_json::FieldReader;
use tutorflow::llm::structured::structured_call_streaming;
use tutorflow::llm::{
    ApiKey, CallSettings, ChatMessage, Endpoint, LlmCall, LlmProvider, RetryPolicy,
};
use tutorflow::model::{LlmError, LlmTutorResponse, Reply};
use wiremock::matchers::{body_partial_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

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

const PIECES: usize = 12;

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

    fn provider(self, server: &MockServer) -> Arc<dyn LlmProvider> {
        let retry = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
        };
        let endpoint = |base: String| Endpoint {
            base_url: base,
            api_key: Some(ApiKey::new("test-key-not-real")),
            default_model: self.model().into(),
        };
        match self {
            Api::OpenAi => Arc::new(OpenAiProvider::new(
                endpoint(format!("{}/v1", server.uri())),
                OpenAiFlavor::OpenAi,
                retry,
            )),
            Api::Compatible => Arc::new(OpenAiProvider::new(
                endpoint(format!("{}/v1", server.uri())),
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

    async fn mount(self, server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
        let mock = match self {
            Api::OpenAi | Api::Compatible => Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .and(body_partial_json(json!({"stream": true}))),
            Api::AnthropicTool | Api::AnthropicNative => Mock::given(method("POST"))
                .and(path("/v1/messages"))
                .and(body_partial_json(json!({"stream": true}))),
            Api::Gemini => Mock::given(method("POST"))
                .and(path(format!(
                    "/v1beta/models/{}:streamGenerateContent",
                    self.model()
                )))
                .and(query_param("alt", "sse")),
        }
        .respond_with(template);
        match times {
            Some(n) => mock.up_to_n_times(n).mount(server).await,
            None => mock.mount(server).await,
        }
    }

    /// The stream's events up to and including the reply's last piece.
    fn pieces(self, text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let size = chars.len().div_ceil(PIECES);
        let pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
        let mut events = Vec::new();
        match self {
            Api::OpenAi | Api::Compatible => {
                events.push(data(&json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952,
                    "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_1",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "refusal": null}, "logprobs": null, "finish_reason": null}]})));
                for piece in pieces {
                    events.push(data(&json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952,
                        "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_1",
                        "choices": [{"index": 0, "delta": {"content": piece}, "logprobs": null, "finish_reason": null}]})));
                }
            }
            Api::AnthropicTool | Api::AnthropicNative => {
                events.push(named("message_start", &json!({"type": "message_start", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": self.model(),
                    "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 472, "output_tokens": 2}}})));
                let block = if self == Api::AnthropicTool {
                    json!({"type": "tool_use", "id": "toolu_1", "name": "tutor_reply", "input": {}})
                } else {
                    json!({"type": "text", "text": ""})
                };
                events.push(named(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": 0, "content_block": block}),
                ));
                events.push(named("ping", &json!({"type": "ping"})));
                for piece in pieces {
                    let delta = if self == Api::AnthropicTool {
                        json!({"type": "input_json_delta", "partial_json": piece})
                    } else {
                        json!({"type": "text_delta", "text": piece})
                    };
                    events.push(named(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
                    ));
                }
            }
            Api::Gemini => {
                for piece in pieces {
                    events.push(data(&json!({"candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}],
                        "usageMetadata": {"promptTokenCount": 472, "totalTokenCount": 472}, "modelVersion": "gemini-2.5-flash", "responseId": "r1"})));
                }
            }
        }
        events
    }

    /// The events that end a complete stream.
    fn ending(self) -> Vec<String> {
        match self {
            Api::OpenAi | Api::Compatible => vec![
                data(
                    &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952, "model": "gpt-4o-mini-2024-07-18",
                    "choices": [{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop"}]}),
                ),
                data(
                    &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952, "model": "gpt-4o-mini-2024-07-18",
                    "choices": [], "usage": {"prompt_tokens": 472, "completion_tokens": 61, "total_tokens": 533}}),
                ),
                "data: [DONE]\n\n".to_owned(),
            ],
            Api::AnthropicTool | Api::AnthropicNative => vec![
                named(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": 0}),
                ),
                named(
                    "message_delta",
                    &json!({"type": "message_delta",
                    "delta": {"stop_reason": if self == Api::AnthropicTool { "tool_use" } else { "end_turn" }, "stop_sequence": null},
                    "usage": {"output_tokens": 61}}),
                ),
                named("message_stop", &json!({"type": "message_stop"})),
            ],
            Api::Gemini => vec![data(
                &json!({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 472, "candidatesTokenCount": 61, "totalTokenCount": 533},
                "modelVersion": "gemini-2.5-flash", "responseId": "r1"}),
            )],
        }
    }

    /// The provider's error event in the middle of a stream.
    fn error_event(self) -> String {
        match self {
            Api::OpenAi | Api::Compatible => data(
                &json!({"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}}),
            ),
            Api::AnthropicTool | Api::AnthropicNative => named(
                "error",
                &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            Api::Gemini => data(
                &json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
            ),
        }
    }
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn named(event: &str, value: &Value) -> String {
    format!("event: {event}\ndata: {value}\n\n")
}

fn stream(events: &[String]) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(events.concat())
}

fn valid_reply() -> Value {
    json!({
        "mapped_units": [{"unit_id": "one-step-equations", "confidence": 0.9}],
        "action": "SOCRATIC_QUESTION",
        "target_unit_id": "one-step-equations",
        "tutor_text": "What is being done to x in 3x = 21? Think \"undo\" — é 🙂",
        "turn_analysis": {
            "student_intent": "question",
            "understanding_signal": "uncertain",
            "suggested_prereq_units": [],
            "answer_text": null
        }
    })
}

/// The call, with what the reader made of the pieces as they came.
async fn call(
    api: Api,
    server: &MockServer,
    timeout: Duration,
) -> (Result<Reply<LlmTutorResponse>, LlmError>, Vec<String>) {
    let provider = api.provider(server);
    let seen = Mutex::new(Vec::new());
    let mut reader = FieldReader::new("tutor_text");
    let mut chunks = |piece: &str| {
        let text = reader.push(piece);
        if !text.is_empty() {
            seen.lock().unwrap().push(text);
        }
    };
    let result = structured_call_streaming(
        provider.as_ref(),
        LlmCall::Tutor,
        vec![
            ChatMessage::system("You are a tutor."),
            ChatMessage::user("Student input: why divide?"),
        ],
        CallSettings {
            model: String::new(),
            temperature: 0.3,
            max_tokens: 900,
            timeout,
            reasoning_effort: None,
        },
        None,
        &mut chunks,
    )
    .await;
    (result, seen.into_inner().unwrap())
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

#[tokio::test]
async fn the_reply_streams_in_pieces_and_decodes_whole() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        let reply = valid_reply();
        let mut events = api.pieces(&reply.to_string());
        events.extend(api.ending());
        api.mount(&server, stream(&events), None).await;
        let (result, seen) = call(api, &server, Duration::from_secs(5)).await;
        let reply_value = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(reply_value.value.tutor_text, reply["tutor_text"], "{api:?}");
        assert!(seen.len() > 2, "{api:?}: the text came in pieces: {seen:?}");
        assert_eq!(seen.concat(), reply_value.value.tutor_text, "{api:?}");
        assert_eq!(reply_value.usage.input_tokens, 472, "{api:?}");
        if api != Api::Compatible {
            assert_eq!(reply_value.usage.output_tokens, 61, "{api:?}");
        }
        assert_eq!(requests(&server).await, 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_fails_without_a_retry() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        let mut events = api.pieces(&valid_reply().to_string());
        // The text is the last field: most of it has been shown.
        events.truncate(events.len() - 1);
        events.push(api.error_event());
        api.mount(&server, stream(&events), None).await;
        let (result, seen) = call(api, &server, Duration::from_secs(5)).await;
        assert!(
            matches!(&result, Err(LlmError::Unavailable(m)) if m.contains("mid-stream")),
            "{api:?}: {result:?}"
        );
        assert!(!seen.is_empty(), "{api:?}: some text came first");
        assert_eq!(
            requests(&server).await,
            1,
            "{api:?}: never retried once streaming"
        );
    }
}

#[tokio::test]
async fn a_stream_cut_short_is_not_taken_for_a_reply() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        // Every piece of the reply, but not the events that end the stream.
        let events = api.pieces(&valid_reply().to_string());
        api.mount(&server, stream(&events), None).await;
        let (result, _) = call(api, &server, Duration::from_secs(5)).await;
        assert!(
            matches!(&result, Err(LlmError::Unavailable(_))),
            "{api:?}: {result:?}"
        );
        assert_eq!(requests(&server).await, 1, "{api:?}");
    }
}

#[tokio::test]
async fn a_failure_before_the_first_byte_is_retried() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        api.mount(
            &server,
            ResponseTemplate::new(503).set_body_string("busy"),
            Some(1),
        )
        .await;
        let mut events = api.pieces(&valid_reply().to_string());
        events.extend(api.ending());
        api.mount(&server, stream(&events), None).await;
        let (result, _) = call(api, &server, Duration::from_secs(5)).await;
        let reply = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(reply.usage.attempts, 2, "{api:?}");
        assert_eq!(requests(&server).await, 2, "{api:?}");
    }
}

#[tokio::test]
async fn a_slow_stream_ends_at_the_deadline() {
    for api in ALL {
        let server = MockServer::builder().start().await;
        let mut events = api.pieces(&valid_reply().to_string());
        events.extend(api.ending());
        api.mount(
            &server,
            stream(&events).set_delay(Duration::from_secs(5)),
            None,
        )
        .await;
        let started = std::time::Instant::now();
        let (result, _) = call(api, &server, Duration::from_millis(300)).await;
        assert_eq!(result.unwrap_err(), LlmError::Timeout, "{api:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{api:?}");
    }
}
