//! Gemini `generateContent` with `responseMimeType: application/json` and a
//! `responseJsonSchema`.

use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::http::{
    AttemptFailure, HttpJson, RetryPolicy, clip, event_json, failure_for_status, mid_stream_error,
    parse_proto_duration, read_events, retry_after_header,
};
use super::provider::{
    ChatRole, Completion, CompletionRequest, Endpoint, LlmProvider, TokenUsage, model_for,
    reply_json, thinking_budget,
};
use super::schema::SchemaDialect;
use crate::model::LlmError;

#[derive(Debug)]
pub struct GeminiProvider {
    endpoint: Endpoint,
    http: HttpJson,
}

impl GeminiProvider {
    pub fn new(endpoint: Endpoint, retry: RetryPolicy) -> Self {
        GeminiProvider {
            endpoint,
            http: HttpJson::new(retry),
        }
    }

    fn body(&self, request: &CompletionRequest) -> Value {
        let system: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| json!({"text": m.content}))
            .collect();
        let contents: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != ChatRole::System)
            .map(|m| {
                let role = if m.role == ChatRole::Assistant {
                    "model"
                } else {
                    "user"
                };
                json!({"role": role, "parts": [{"text": m.content}]})
            })
            .collect();
        let mut config = Map::new();
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert(
            "responseJsonSchema".into(),
            request.schema.dialect(SchemaDialect::Gemini).clone(),
        );
        config.insert("temperature".into(), json!(request.settings.temperature));
        let mut max_tokens = request.settings.max_tokens;
        if let Some(effort) = request.settings.reasoning_effort {
            let budget = thinking_budget(effort);
            max_tokens = max_tokens.saturating_add(budget);
            config.insert("thinkingConfig".into(), json!({"thinkingBudget": budget}));
        }
        config.insert("maxOutputTokens".into(), json!(max_tokens));
        let mut body = Map::new();
        if !system.is_empty() {
            body.insert("systemInstruction".into(), json!({"parts": system}));
        }
        body.insert("contents".into(), Value::Array(contents));
        body.insert("generationConfig".into(), Value::Object(config));
        Value::Object(body)
    }
}

#[async_trait]
impl LlmProvider for GeminiProvider {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn default_model(&self) -> &str {
        &self.endpoint.default_model
    }

    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let model = model_for(request, self).to_owned();
        let url = self.endpoint.url(&format!(
            "models/{}:generateContent",
            model.trim_start_matches("models/")
        ));
        let body = self.body(request);
        let reply = self
            .http
            .send(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        completion(&reply.body, model, started, reply.attempts)
    }

    /// `streamGenerateContent` with `alt=sse`: each event a partial
    /// response whose parts carry the next piece of text; the last one has
    /// the finish reason and usage. The pieces are joined into the response
    /// a non-streamed call returns and checked the same way.
    async fn complete_streaming(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let model = model_for(request, self).to_owned();
        let url = self.endpoint.url(&format!(
            "models/{}:streamGenerateContent?alt=sse",
            model.trim_start_matches("models/")
        ));
        let body = self.body(request);
        let (response, attempts) = self
            .http
            .open_stream(
                || self.post(&url, &body),
                request.effective_deadline(started),
                classify,
            )
            .await?;
        let mut whole = json!({});
        let mut text = String::new();
        read_events(response, |event| {
            let part = event_json(&event.data)?;
            if let Some(error) = part.get("error") {
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                return Err(mid_stream_error(message));
            }
            for key in ["usageMetadata", "modelVersion", "promptFeedback"] {
                if let Some(value) = part.get(key) {
                    whole[key] = value.clone();
                }
            }
            let candidate = part.pointer("/candidates/0");
            for piece in candidate
                .and_then(|c| c.pointer("/content/parts"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|p| p.get("thought") != Some(&Value::Bool(true)))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
            {
                text.push_str(piece);
                chunks(piece);
            }
            let finish = candidate.and_then(|c| c.get("finishReason")).cloned();
            let blocked = candidate.is_none() && whole.get("promptFeedback").is_some();
            if let Some(reason) = &finish {
                whole["candidates"] = json!([{"finishReason": reason}]);
            }
            Ok(finish.is_some() || blocked)
        })
        .await?;
        if let Some(candidate) = whole.pointer_mut("/candidates/0") {
            candidate["content"] = json!({"role": "model", "parts": [{"text": text}]});
        }
        completion(&whole, model, started, attempts)
    }
}

impl GeminiProvider {
    fn post(&self, url: &str, body: &Value) -> reqwest::RequestBuilder {
        let builder = self.http.client().post(url).json(body);
        match &self.endpoint.api_key {
            Some(key) => builder.header("x-goog-api-key", key.expose()),
            None => builder,
        }
    }
}

/// A whole response as a completion.
fn completion(
    body: &Value,
    model: String,
    started: Instant,
    attempts: u32,
) -> Result<Completion, LlmError> {
    let value = parse_reply(body)?;
    let count = |key: &str| TokenUsage::count(body.pointer(&format!("/usageMetadata/{key}")));
    Ok(Completion {
        value,
        model: body
            .get("modelVersion")
            .and_then(Value::as_str)
            .map_or(model, str::to_owned),
        usage: TokenUsage {
            input: count("promptTokenCount"),
            output: count("candidatesTokenCount").saturating_add(count("thoughtsTokenCount")),
        },
        latency: started.elapsed(),
        attempts,
    })
}

fn parse_reply(body: &Value) -> Result<Value, LlmError> {
    let Some(candidate) = body.pointer("/candidates/0") else {
        let reason = body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str);
        return Err(match reason {
            Some(reason) => LlmError::Refused(format!("the prompt was blocked ({reason})")),
            None => LlmError::InvalidOutput("the response has no candidates".into()),
        });
    };
    match candidate.get("finishReason").and_then(Value::as_str) {
        None | Some("STOP") => {}
        Some("MAX_TOKENS") => return Err(LlmError::Truncated),
        Some(
            reason @ ("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "LANGUAGE"),
        ) => {
            return Err(LlmError::Refused(format!(
                "stopped by the model ({reason})"
            )));
        }
        Some(other) => {
            return Err(LlmError::InvalidOutput(format!(
                "the reply stopped early ({other})"
            )));
        }
    }
    let text: String = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|part| part.get("thought") != Some(&Value::Bool(true)))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    if text.trim().is_empty() {
        return Err(LlmError::InvalidOutput("the reply has no text".into()));
    }
    reply_json(&text)
}

/// Google's error body: `{"error": {"code", "message", "status", "details": [...]}}`.
/// A 429 names its retry delay in a `google.rpc.RetryInfo` detail; an
/// invalid key is a 400 whose `ErrorInfo` reason says so.
fn classify(status: StatusCode, headers: &HeaderMap, body: &str) -> AttemptFailure {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = &parsed["error"];
    let message = error.get("message").and_then(Value::as_str).unwrap_or(body);
    let details = error
        .get("details")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let detail_of = |suffix: &str| {
        details.iter().find(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with(suffix))
        })
    };
    let retry_delay = detail_of("google.rpc.RetryInfo")
        .and_then(|d| d.get("retryDelay"))
        .and_then(Value::as_str)
        .and_then(parse_proto_duration);
    let mut failure = failure_for_status(
        status,
        message,
        retry_delay.or_else(|| retry_after_header(headers)),
    );
    let reason = detail_of("google.rpc.ErrorInfo")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    if reason == Some("API_KEY_INVALID") {
        failure = AttemptFailure::fatal(LlmError::Auth(clip(message)));
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thought_parts_are_not_the_reply() {
        let body = json!({"candidates": [{"content": {"parts": [
            {"text": "thinking...", "thought": true},
            {"text": "{\"ok\": true}"}
        ]}, "finishReason": "STOP"}]});
        assert_eq!(parse_reply(&body), Ok(json!({"ok": true})));
    }

    #[test]
    fn an_invalid_key_is_an_auth_error() {
        let body = r#"{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}"#;
        let failure = classify(StatusCode::BAD_REQUEST, &HeaderMap::new(), body);
        assert!(matches!(failure.error, LlmError::Auth(_)), "{failure:?}");
        assert!(!failure.retryable);
    }
}
