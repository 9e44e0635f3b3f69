//! Anthropic Messages API. Models with native structured outputs (Claude
//! 4.5 and later) get `output_config.format`, a JSON schema the model is
//! constrained to; older ones get a single tool the model is forced to call,
//! whose input is the reply.

use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::http::{
    AttemptFailure, HttpJson, RetryPolicy, clip, event_json, failure_for_status, mid_stream_error,
    read_events, retry_after_header,
};
use super::provider::{
    ChatRole, Completion, CompletionRequest, Endpoint, LlmProvider, TokenUsage, model_for,
    reply_json, system_text, thinking_budget,
};
use super::schema::SchemaDialect;
use crate::model::LlmError;

const API_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct AnthropicProvider {
    endpoint: Endpoint,
    http: HttpJson,
}

/// How the reply's structure is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnthropicOutput {
    /// `output_config.format` with a JSON schema.
    Native,
    /// A forced call of one tool whose input schema is the reply's.
    ForcedTool,
}

/// Native structured outputs exist from Claude 4.5 on (Opus, Sonnet, Haiku);
/// model ids look like `claude-sonnet-4-5` or `claude-sonnet-4-5-20250929`,
/// older ones like `claude-3-7-sonnet-20250219`.
pub fn output_mode(model: &str) -> AnthropicOutput {
    let mut parts = model
        .trim()
        .strip_prefix("claude-")
        .unwrap_or("")
        .split('-');
    let family = parts.next().unwrap_or("");
    if !matches!(family, "opus" | "sonnet" | "haiku") {
        return AnthropicOutput::ForcedTool;
    }
    let number = |p: Option<&str>| {
        p.filter(|p| p.len() <= 2)
            .and_then(|p| p.parse::<u32>().ok())
    };
    let major = number(parts.next());
    let minor = number(parts.next()).unwrap_or(0);
    match major {
        Some(major) if (major, minor) >= (4, 5) => AnthropicOutput::Native,
        _ => AnthropicOutput::ForcedTool,
    }
}

impl AnthropicProvider {
    pub fn new(endpoint: Endpoint, retry: RetryPolicy) -> Self {
        AnthropicProvider {
            endpoint,
            http: HttpJson::new(retry),
        }
    }

    fn body(&self, request: &CompletionRequest, mode: AnthropicOutput) -> Value {
        let model = model_for(request, self);
        let schema = request.schema.dialect(SchemaDialect::Anthropic);
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != ChatRole::System)
            .map(|m| {
                let role = if m.role == ChatRole::Assistant {
                    "assistant"
                } else {
                    "user"
                };
                json!({"role": role, "content": m.content})
            })
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        if let Some(system) = system_text(&request.messages) {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages));
        let mut max_tokens = request.settings.max_tokens;
        match mode {
            AnthropicOutput::Native => {
                body.insert(
                    "output_config".into(),
                    json!({"format": {"type": "json_schema", "schema": schema}}),
                );
            }
            AnthropicOutput::ForcedTool => {
                body.insert(
                    "tools".into(),
                    json!([{
                        "name": request.schema.name,
                        "description": "Record your reply. Its input is the complete reply.",
                        "input_schema": schema,
                    }]),
                );
                body.insert(
                    "tool_choice".into(),
                    json!({"type": "tool", "name": request.schema.name}),
                );
            }
        }
        // Extended thinking cannot be combined with a forced tool, and it
        // requires the default temperature; its budget is on top of the reply's.
        match (request.settings.reasoning_effort, mode) {
            (Some(effort), AnthropicOutput::Native) => {
                let budget = thinking_budget(effort);
                max_tokens = max_tokens.saturating_add(budget);
                body.insert(
                    "thinking".into(),
                    json!({"type": "enabled", "budget_tokens": budget}),
                );
            }
            _ => {
                body.insert(
                    "temperature".into(),
                    json!(request.settings.temperature.min(1.0)),
                );
            }
        }
        body.insert("max_tokens".into(), json!(max_tokens));
        Value::Object(body)
    }

    fn post(&self, url: &str, body: &Value) -> reqwest::RequestBuilder {
        let builder = self
            .http
            .client()
            .post(url)
            .header("anthropic-version", API_VERSION)
            .json(body);
        match &self.endpoint.api_key {
            Some(key) => builder.header("x-api-key", key.expose()),
            None => builder,
        }
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let mode = output_mode(model_for(request, self));
        let url = self.endpoint.url("v1/messages");
        let mut body = self.body(request, mode);
        body["stream"] = json!(true);
        let (response, attempts) = self
            .http
            .open_stream(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        let mut message = StreamedMessage::new(mode, &request.schema.name);
        read_events(response, |event| message.read(&event.data, &mut *chunks)).await?;
        self.completion(request, &message.into_body(), mode, started, attempts)
    }

    /// A whole Messages response (or a stream rebuilt into one) as a completion.
    fn completion(
        &self,
        request: &CompletionRequest,
        body: &Value,
        mode: AnthropicOutput,
        started: Instant,
        attempts: u32,
    ) -> Result<Completion, LlmError> {
        let value = parse_reply(body, mode, &request.schema.name)?;
        let count = |key: &str| TokenUsage::count(body.pointer(&format!("/usage/{key}")));
        Ok(Completion {
            value,
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_else(|| model_for(request, self))
                .to_owned(),
            usage: TokenUsage {
                input: count("input_tokens"),
                output: count("output_tokens"),
            },
            latency: started.elapsed(),
            attempts,
        })
    }
}

/// A Messages stream as it is read (`message_start`, content blocks and
/// their deltas, `message_delta`, `message_stop`, `error`), rebuilt into
/// the message a non-streamed call returns so it is checked the same way.
#[derive(Debug)]
struct StreamedMessage<'a> {
    mode: AnthropicOutput,
    tool: &'a str,
    message: Value,
    /// Each block, with its streamed text or tool input JSON.
    blocks: Vec<(Value, String)>,
}

impl<'a> StreamedMessage<'a> {
    fn new(mode: AnthropicOutput, tool: &'a str) -> Self {
        StreamedMessage {
            mode,
            tool,
            message: json!({}),
            blocks: Vec::new(),
        }
    }

    /// One event's data; `Ok(true)` at `message_stop`.
    fn read(
        &mut self,
        data: &str,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<bool, LlmError> {
        let event = event_json(data)?;
        match event["type"].as_str().unwrap_or("") {
            "message_start" => self.message = event["message"].clone(),
            "content_block_start" => {
                self.blocks
                    .push((event["content_block"].clone(), String::new()));
            }
            "content_block_delta" => {
                let index = event["index"].as_u64().unwrap_or(0) as usize;
                let Some((block, text)) = self.blocks.get_mut(index) else {
                    return Ok(false);
                };
                let delta = &event["delta"];
                let piece = match delta["type"].as_str() {
                    Some("text_delta") => delta["text"].as_str(),
                    Some("input_json_delta") => delta["partial_json"].as_str(),
                    // Thinking and its signature are not the reply.
                    _ => None,
                };
                if let Some(piece) = piece {
                    text.push_str(piece);
                    let reply_block = match self.mode {
                        AnthropicOutput::Native => block["type"] == "text",
                        AnthropicOutput::ForcedTool => {
                            block["type"] == "tool_use" && block["name"] == self.tool
                        }
                    };
                    if reply_block {
                        chunks(piece);
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason") {
                    self.message["stop_reason"] = reason.clone();
                }
                if let Some(output) = event.pointer("/usage/output_tokens") {
                    self.message["usage"]["output_tokens"] = output.clone();
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let kind = event.pointer("/error/type").and_then(Value::as_str);
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return Err(match kind {
                    Some("rate_limit_error") => LlmError::RateLimited { retry_after: None },
                    _ => mid_stream_error(message),
                });
            }
            // `ping`, `content_block_stop`, and event types added later.
            _ => {}
        }
        Ok(false)
    }

    /// The message as a non-streamed call returns it.
    fn into_body(mut self) -> Value {
        let content: Vec<Value> = self
            .blocks
            .into_iter()
            .map(|(mut block, text)| {
                match block["type"].as_str() {
                    Some("text") => block["text"] = json!(text),
                    Some("tool_use") => {
                        block["input"] = serde_json::from_str(&text).unwrap_or(Value::Null);
                    }
                    _ => {}
                }
                block
            })
            .collect();
        self.message["content"] = Value::Array(content);
        self.message
    }
}

#[async_trait]
impl LlmProvider for AnthropicProvider {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn default_model(&self) -> &str {
        &self.endpoint.default_model
    }

    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let mode = output_mode(model_for(request, self));
        let url = self.endpoint.url("v1/messages");
        let body = self.body(request, mode);
        let reply = self
            .http
            .send(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        self.completion(request, &reply.body, mode, started, reply.attempts)
    }

    async fn complete_streaming(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        self.stream(request, chunks).await
    }
}

fn parse_reply(body: &Value, mode: AnthropicOutput, tool: &str) -> Result<Value, LlmError> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::InvalidOutput("the response has no content".into()))?;
    fn text_of(block: &Value) -> Option<&str> {
        (block["type"] == "text")
            .then(|| block.get("text").and_then(Value::as_str))
            .flatten()
    }
    match body.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => return Err(LlmError::Truncated),
        Some("refusal") => {
            let said: String = content.iter().filter_map(text_of).collect();
            return Err(LlmError::Refused(clip(if said.is_empty() {
                "the model declined to answer"
            } else {
                &said
            })));
        }
        _ => {}
    }
    match mode {
        AnthropicOutput::ForcedTool => content
            .iter()
            .find(|b| b["type"] == "tool_use" && b["name"] == tool)
            .and_then(|b| b.get("input"))
            .filter(|input| input.is_object())
            .cloned()
            .ok_or_else(|| LlmError::InvalidOutput(format!("the reply did not call `{tool}`"))),
        AnthropicOutput::Native => {
            let text: String = content.iter().filter_map(text_of).collect();
            if text.trim().is_empty() {
                return Err(LlmError::InvalidOutput("the reply has no text".into()));
            }
            reply_json(&text)
        }
    }
}

/// Anthropic's error body: `{"type": "error", "error": {"type", "message"}}`.
fn classify(status: StatusCode, headers: &HeaderMap, body: &str) -> AttemptFailure {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = parsed
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or(body);
    let kind = parsed.pointer("/error/type").and_then(Value::as_str);
    let mut failure = failure_for_status(status, message, retry_after_header(headers));
    // Overload can come back as 429 too; it is the provider's, not our quota.
    if kind == Some("overloaded_error") {
        failure.error = LlmError::Unavailable(format!("overloaded: {}", clip(message)));
        failure.retryable = true;
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_output_from_claude_4_5_on() {
        for model in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-6",
            "claude-haiku-4-5",
            "claude-opus-5",
        ] {
            assert_eq!(output_mode(model), AnthropicOutput::Native, "{model}");
        }
        for model in [
            "claude-opus-4-1-20250805",
            "claude-opus-4-20250514",
            "claude-3-7-sonnet-20250219",
            "claude-3-5-haiku-latest",
            "my-finetune",
            "",
        ] {
            assert_eq!(output_mode(model), AnthropicOutput::ForcedTool, "{model}");
        }
    }

    #[test]
    fn overload_is_retried_even_as_429() {
        let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let failure = classify(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), body);
        assert!(matches!(failure.error, LlmError::Unavailable(_)));
        assert!(failure.retryable);
    }
}
