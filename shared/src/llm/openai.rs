//! OpenAI Chat Completions with strict structured outputs, and the servers
//! that speak the same API through a base URL (Ollama, vLLM, llama.cpp).

use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::http::{Failure, HttpJson, RetryPolicy, clip, failure_for_status, retry_after_header};
use super::provider::{
    ChatRole, Completion, CompletionRequest, Endpoint, LlmProvider, TokenUsage, model_for,
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
        let key = self.endpoint.api_key.clone();
        let reply = self
            .http
            .send(
                || {
                    let builder = self.http.client().post(&url).json(&body);
                    match &key {
                        Some(key) => {
                            builder.header(AUTHORIZATION, format!("Bearer {}", key.expose()))
                        }
                        None => builder,
                    }
                },
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
    let value = serde_json::from_str(content)
        .map_err(|e| LlmError::InvalidOutput(format!("the reply is not JSON: {e}")))?;
    let count = |key: &str| {
        body.pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    let usage = TokenUsage {
        input: count("prompt_tokens"),
        output: count("completion_tokens"),
    };
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    Ok((value, model, usage))
}

/// OpenAI's error body: `{"error": {"message", "type", "code", "param"}}`.
pub(crate) fn classify(status: StatusCode, headers: &HeaderMap, body: &str) -> Failure {
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
