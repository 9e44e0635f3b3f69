//! OpenAI Chat Completions with strict structured outputs, and the servers
//! that speak the same API through a base URL (Ollama, vLLM, llama.cpp).

use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::http::{
    AttemptFailure, HttpJson, RetryPolicy, clip, event_json, failure_for_status, mid_stream_error,
    read_events, retry_after_header,
};
use super::provider::{
    ChatRole, Completion, CompletionRequest, Endpoint, LlmProvider, TokenUsage, model_for,
    reply_json,
};
use super::schema::SchemaDialect;
use crate::content::workflow::ReasoningEffort;
use crate::model::LlmError;

/// Which server is behind the base URL; they differ in small ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAiFlavor {
    /// api.openai.com: `max_completion_tokens`, reasoning models.
    OpenAi,
    /// A compatible server: the widely supported `max_tokens`, key optional.
    Compatible,
}

#[derive(Debug)]
pub struct OpenAiProvider {
    endpoint: Endpoint,
    flavor: OpenAiFlavor,
    http: HttpJson,
}

impl OpenAiProvider {
    pub fn new(endpoint: Endpoint, flavor: OpenAiFlavor, retry: RetryPolicy) -> Self {
        OpenAiProvider {
            endpoint,
            flavor,
            http: HttpJson::new(retry),
        }
    }

    fn body(&self, request: &CompletionRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    ChatRole::System => "system",
                    ChatRole::User => "user",
                    ChatRole::Assistant => "assistant",
                };
                json!({"role": role, "content": m.content})
            })
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(model_for(request, self)));
        body.insert("messages".into(), Value::Array(messages));
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema.name,
                    "strict": true,
                    "schema": request.schema.dialect(SchemaDialect::OpenAiStrict),
                }
            }),
        );
        let limit_key = match self.flavor {
            OpenAiFlavor::OpenAi => "max_completion_tokens",
            OpenAiFlavor::Compatible => "max_tokens",
        };
        body.insert(limit_key.into(), json!(request.settings.max_tokens));
        match request.settings.reasoning_effort {
            // Reasoning models accept only their default temperature.
            Some(effort) => {
                body.insert("reasoning_effort".into(), json!(effort_name(effort)));
            }
            None => {
                body.insert("temperature".into(), json!(request.settings.temperature));
            }
        }
        Value::Object(body)
    }

    fn post(&self, url: &str, body: &Value) -> reqwest::RequestBuilder {
        let builder = self.http.client().post(url).json(body);
        match &self.endpoint.api_key {
            Some(key) => builder.header(AUTHORIZATION, format!("Bearer {}", key.expose())),
            None => builder,
        }
    }
}

fn effort_name(effort: ReasoningEffort) -> &'static str {
    match effort {
        ReasoningEffort::Low => "low",
        ReasoningEffort::Medium => "medium",
        ReasoningEffort::High => "high",
    }
}

#[async_trait]
impl LlmProvider for OpenAiProvider {
    fn name(&self) -> &'static str {
        match self.flavor {
            OpenAiFlavor::OpenAi => "openai",
            OpenAiFlavor::Compatible => "openai_compatible",
        }
    }

    fn default_model(&self) -> &str {
        &self.endpoint.default_model
    }

    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let url = self.endpoint.url("chat/completions");
        let body = self.body(request);
        let reply = self
            .http
            .send(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        let (value, model, usage) = parse_reply(&reply.body)?;
        Ok(Completion {
            value,
            model: model.unwrap_or_else(|| model_for(request, self).to_owned()),
            usage,
            latency: started.elapsed(),
            attempts: reply.attempts,
        })
    }

    async fn complete_streaming(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        self.stream(request, chunks).await
    }
}

impl OpenAiProvider {
    async fn stream(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let url = self.endpoint.url("chat/completions");
        let mut body = self.body(request);
        body["stream"] = json!(true);
        if self.flavor == OpenAiFlavor::OpenAi {
            // Usage comes in a last chunk only when asked for.
            body["stream_options"] = json!({"include_usage": true});
        }
        let (response, attempts) = self
            .http
            .open_stream(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        let mut reply = StreamedReply::default();
        read_events(response, |event| reply.read(&event.data, &mut *chunks)).await?;
        let (value, usage) = reply.finish()?;
        Ok(Completion {
            value,
            model: reply
                .model
                .unwrap_or_else(|| model_for(request, self).to_owned()),
            usage,
            latency: started.elapsed(),
            attempts,
        })
    }
}

/// A Chat Completions stream as it is read: `chat.completion.chunk`
/// objects, an error object if the server fails mid-stream, `[DONE]`.
#[derive(Debug, Default)]
struct StreamedReply {
    text: String,
    refusal: String,
    finish_reason: Option<String>,
    usage: TokenUsage,
    model: Option<String>,
}

impl StreamedReply {
    /// One event's data; `Ok(true)` at the end of the stream.
    fn read(
        &mut self,
        data: &str,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let chunk = event_json(data)?;
        if let Some(error) = chunk.get("error") {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(mid_stream_error(message));
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |key: &str| TokenUsage::count(usage.get(key));
            self.usage = TokenUsage {
                input: count("prompt_tokens"),
                output: count("completion_tokens"),
            };
        }
        if let Some(choice) = chunk.pointer("/choices/0") {
            let delta = &choice["delta"];
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.text.push_str(text);
                chunks(text);
            }
            if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
                self.refusal.push_str(refusal);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(false)
    }

    fn finish(&self) -> Result<(Value, TokenUsage), LlmError> {
        if !self.refusal.trim().is_empty() {
            return Err(LlmError::Refused(clip(&self.refusal)));
        }
        match self.finish_reason.as_deref() {
            Some("length") => return Err(LlmError::Truncated),
            Some("content_filter") => {
                return Err(LlmError::Refused("stopped by the content filter".into()));
            }
            Some(_) => {}
            None => {
                return Err(LlmError::Unavailable(
                    "the stream ended without a finish reason".into(),
                ));
            }
        }
        if self.text.trim().is_empty() {
            return Err(LlmError::InvalidOutput("the reply has no content".into()));
        }
        Ok((reply_json(&self.text)?, self.usage))
    }
}

/// The reply's JSON, model name and usage, or why there is none.
fn parse_reply(body: &Value) -> Result<(Value, Option<String>, TokenUsage), LlmError> {
    let choice = body
        .pointer("/choices/0")
        .ok_or_else(|| LlmError::InvalidOutput("the response has no choices".into()))?;
    let message = &choice["message"];
    if let Some(refusal) = message.get("refusal").and_then(Value::as_str) {
        return Err(LlmError::Refused(clip(refusal)));
    }
    match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => return Err(LlmError::Truncated),
        Some("content_filter") => {
            return Err(LlmError::Refused("stopped by the content filter".into()));
        }
        _ => {}
    }
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| LlmError::InvalidOutput("the reply has no content".into()))?;
    let value = reply_json(content)?;
    let count = |key: &str| TokenUsage::count(body.pointer(&format!("/usage/{key}")));
    let usage = TokenUsage {
        input: count("prompt_tokens"),
        output: count("completion_tokens"),
    };
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    Ok((value, model, usage))
}

/// OpenAI's error body: `{"error": {"message", "type", "code", "param"}}`.
pub(crate) fn classify(status: StatusCode, headers: &HeaderMap, body: &str) -> AttemptFailure {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = &parsed["error"];
    let message = error.get("message").and_then(Value::as_str).unwrap_or(body);
    let code = error.get("code").and_then(Value::as_str);
    let mut failure = failure_for_status(status, message, retry_after_header(headers));
    // An exhausted quota does not come back by waiting a few seconds.
    if status == StatusCode::TOO_MANY_REQUESTS && code == Some("insufficient_quota") {
        failure.retryable = false;
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_wins_over_empty_content() {
        let body = json!({"choices": [{"message": {"content": null, "refusal": "No."}, "finish_reason": "stop"}]});
        assert_eq!(parse_reply(&body), Err(LlmError::Refused("No.".into())));
    }

    #[test]
    fn exhausted_quota_is_not_retried() {
        let body = r#"{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}"#;
        let failure = classify(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), body);
        assert!(matches!(failure.error, LlmError::RateLimited { .. }));
        assert!(!failure.retryable);
    }
}
