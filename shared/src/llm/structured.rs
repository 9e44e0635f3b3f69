//! One structured call end to end: the provider call, the reply decoded
//! into its Rust type (unknown fields refused) and checked, and one
//! structured log event with what it cost.

use serde_json::Value;
use tokio::time::Instant;

use super::provider::{
    CallSettings, ChatMessage, Completion, CompletionRequest, LlmCall, LlmProvider, model_for,
};
use super::schema::{OutputSchema, StructuredOutput};
use crate::model::{CallUsage, LlmError, Reply};

/// Asks `provider` for a `T`. The reply is used only if it decodes into `T`
/// and passes `T`'s checks; otherwise the call fails with `InvalidOutput`
/// and is not repeated: the caller falls back to the deterministic path.
pub async fn structured_call<T: StructuredOutput>(
    provider: &dyn LlmProvider,
    call: LlmCall,
    messages: Vec<ChatMessage>,
    settings: CallSettings,
    deadline: Option<Instant>,
) -> Result<Reply<T>, LlmError> {
    call_with::<T>(provider, call, messages, settings, deadline, None).await
}

/// [`structured_call`] over the provider's streaming API, handing `chunks`
/// the raw reply text as it arrives; the whole reply is decoded and checked
/// exactly as a non-streamed one.
pub async fn structured_call_streaming<T: StructuredOutput>(
    provider: &dyn LlmProvider,
    call: LlmCall,
    messages: Vec<ChatMessage>,
    settings: CallSettings,
    deadline: Option<Instant>,
    chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
) -> Result<Reply<T>, LlmError> {
    call_with::<T>(provider, call, messages, settings, deadline, Some(chunks)).await
}

async fn call_with<T: StructuredOutput>(
    provider: &dyn LlmProvider,
    call: LlmCall,
    messages: Vec<ChatMessage>,
    settings: CallSettings,
    deadline: Option<Instant>,
    chunks: Option<&mut (dyn for<'s> FnMut(&'s str) + Send)>,
) -> Result<Reply<T>, LlmError> {
    let request = CompletionRequest {
        call,
        messages,
        schema: OutputSchema::of::<T>(),
        settings,
        deadline,
    };
    let started = Instant::now();
    let outcome = match chunks {
        Some(chunks) => provider.complete_streaming(&request, chunks).await,
        None => provider.complete(&request).await,
    };
    let requested_model = model_for(&request, provider).to_owned();
    let result = outcome.and_then(|completion| {
        let usage = usage_of(provider, &completion);
        decode::<T>(completion.value).map(|value| Reply { value, usage })
    });
    log_call(
        provider.name(),
        request.call,
        &requested_model,
        &result,
        started.elapsed().as_millis(),
    );
    result
}

fn usage_of(provider: &dyn LlmProvider, completion: &Completion) -> CallUsage {
    CallUsage {
        provider: provider.name().to_owned(),
        model: completion.model.clone(),
        input_tokens: completion.usage.input,
        output_tokens: completion.usage.output,
        latency_ms: u64::try_from(completion.latency.as_millis()).unwrap_or(u64::MAX),
        attempts: completion.attempts,
    }
}

/// `value` as a checked `T`.
pub fn decode<T: StructuredOutput>(value: Value) -> Result<T, LlmError> {
    let reply: T = serde_json::from_value(value).map_err(|e| {
        LlmError::InvalidOutput(format!("the reply does not match the schema: {e}"))
    })?;
    reply.check().map_err(LlmError::InvalidOutput)?;
    Ok(reply)
}

/// The one info-level event of a call. No prompt or reply text: the
/// error's detail (which can quote the reply) is logged at debug level only.
fn log_call<T>(
    provider: &str,
    call: LlmCall,
    requested_model: &str,
    result: &Result<Reply<T>, LlmError>,
    elapsed_ms: u128,
) {
    let latency_ms = u64::try_from(elapsed_ms).unwrap_or(u64::MAX);
    match result {
        Ok(reply) => tracing::info!(
            target: "tutorflow::llm",
            call = call.as_str(),
            provider,
            model = %reply.usage.model,
            input_tokens = reply.usage.input_tokens,
            output_tokens = reply.usage.output_tokens,
            latency_ms,
            attempts = reply.usage.attempts,
            outcome = "ok",
            "llm call"
        ),
        Err(error) => {
            tracing::info!(
                target: "tutorflow::llm",
                call = call.as_str(),
                provider,
                model = requested_model,
                input_tokens = 0u32,
                output_tokens = 0u32,
                latency_ms,
                outcome = error.kind(),
                "llm call"
            );
            tracing::debug!(target: "tutorflow::llm", call = call.as_str(), error = %error, "llm call failed");
        }
    }
}
