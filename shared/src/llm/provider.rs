//! The provider seam: one structured completion per call.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::time::Instant;

use super::schema::OutputSchema;
use crate::config::{LlmConfig, ProviderKind};
use crate::content::workflow::{LlmCallSettings, LlmCalls, ReasoningEffort};
use crate::model::{
    LlmDrillGrade, LlmError, LlmExamEvaluation, LlmSafetyVerdict, LlmSessionSummary, LlmStudyPlan,
    LlmTutorResponse,
};

/// The LLM calls the product makes; each has its own provider, model
/// settings, prompt and output schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LlmCall {
    Tutor,
    Safety,
    DrillGrading,
    ExamEvaluation,
    Planner,
    Summary,
}

impl LlmCall {
    pub const ALL: [LlmCall; 6] = [
        LlmCall::Tutor,
        LlmCall::Safety,
        LlmCall::DrillGrading,
        LlmCall::ExamEvaluation,
        LlmCall::Planner,
        LlmCall::Summary,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LlmCall::Tutor => "tutor",
            LlmCall::Safety => "safety",
            LlmCall::DrillGrading => "drill_grading",
            LlmCall::ExamEvaluation => "exam_evaluation",
            LlmCall::Planner => "planner",
            LlmCall::Summary => "summary",
        }
    }

    /// The schema of this call's reply.
    pub fn output_schema(self) -> Arc<OutputSchema> {
        match self {
            LlmCall::Tutor => OutputSchema::of::<LlmTutorResponse>(),
            LlmCall::Safety => OutputSchema::of::<LlmSafetyVerdict>(),
            LlmCall::DrillGrading => OutputSchema::of::<LlmDrillGrade>(),
            LlmCall::ExamEvaluation => OutputSchema::of::<LlmExamEvaluation>(),
            LlmCall::Planner => OutputSchema::of::<LlmStudyPlan>(),
            LlmCall::Summary => OutputSchema::of::<LlmSessionSummary>(),
        }
    }

    /// This call's model settings in a workflow's `llm:` section.
    pub fn settings(self, calls: &LlmCalls) -> &LlmCallSettings {
        match self {
            LlmCall::Tutor => &calls.tutor,
            LlmCall::Safety => &calls.safety,
            LlmCall::DrillGrading => &calls.drill_grading,
            LlmCall::ExamEvaluation => &calls.exam_evaluation,
            LlmCall::Planner => &calls.planner,
            LlmCall::Summary => &calls.summary,
        }
    }

    /// Which provider serves this call in the runtime configuration.
    pub fn provider(self, config: &LlmConfig) -> ProviderKind {
        match self {
            LlmCall::Tutor => config.tutor,
            LlmCall::Safety => config.safety,
            LlmCall::DrillGrading => config.drill_grading,
            LlmCall::ExamEvaluation => config.exam_evaluation,
            LlmCall::Planner => config.planner,
            LlmCall::Summary => config.summary,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: ChatRole::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: ChatRole::User,
            content: content.into(),
        }
    }
}

/// Model settings of one call (a workflow's `llm.<call>`; an empty model
/// means the provider's configured default).
#[derive(Debug, Clone, PartialEq)]
pub struct CallSettings {
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub timeout: Duration,
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl From<&LlmCallSettings> for CallSettings {
    fn from(s: &LlmCallSettings) -> Self {
        CallSettings {
            model: s.model.trim().to_owned(),
            temperature: s.temperature,
            max_tokens: s.max_tokens,
            timeout: Duration::from_millis(s.timeout_ms),
            reasoning_effort: s.reasoning_effort,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CompletionRequest {
    pub call: LlmCall,
    pub messages: Vec<ChatMessage>,
    pub schema: Arc<OutputSchema>,
    pub settings: CallSettings,
    /// The caller's own deadline (e.g. the Lambda's remaining time); the
    /// call ends at the earlier of this and `settings.timeout` from now.
    pub deadline: Option<Instant>,
}

impl CompletionRequest {
    pub fn effective_deadline(&self, started: Instant) -> Instant {
        let own = started + self.settings.timeout;
        self.deadline.map_or(own, |d| d.min(own))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub input: u32,
    pub output: u32,
}

impl TokenUsage {
    /// One count of a provider's usage object: 0 when absent, clamped to
    /// `u32::MAX`.
    pub(crate) fn count(value: Option<&Value>) -> u32 {
        value
            .and_then(Value::as_u64)
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    }
}

/// A parsed JSON reply (not yet checked against the reply type).
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub value: Value,
    /// The model that answered, as the provider names it.
    pub model: String,
    pub usage: TokenUsage,
    pub latency: Duration,
    pub attempts: u32,
}

/// One structured completion: messages and an output schema in, a JSON
/// value out, or a typed error. Implementations retry where it helps and
/// never log prompts or keys.
#[async_trait]
pub trait LlmProvider: Send + Sync + fmt::Debug {
    /// `openai`, `openai_compatible`, `anthropic` or `gemini`.
    fn name(&self) -> &'static str;
    /// The model used when the workflow names none.
    fn default_model(&self) -> &str;
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError>;
    /// [`complete`](Self::complete), handing `chunks` the reply's raw JSON
    /// text as the provider writes it. A provider without a streaming API
    /// answers whole, and `chunks` hears nothing.
    async fn complete_streaming(
        &self,
        request: &CompletionRequest,
        chunks: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<Completion, LlmError> {
        let _ = chunks;
        self.complete(request).await
    }
}

/// The model a request asks for: the workflow's, else the provider's default.
pub(crate) fn model_for<'a>(
    request: &'a CompletionRequest,
    provider: &'a dyn LlmProvider,
) -> &'a str {
    if request.settings.model.is_empty() {
        provider.default_model()
    } else {
        &request.settings.model
    }
}

/// The reply's text as JSON (checked against the reply type later).
pub(crate) fn reply_json(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text)
        .map_err(|e| LlmError::InvalidOutput(format!("the reply is not JSON: {e}")))
}

/// Thinking tokens per reasoning effort, for the APIs that take a budget
/// (Anthropic's minimum is 1024). The budget counts against the output
/// limit, so each provider adds it to the reply's.
pub(crate) fn thinking_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Low => 1024,
        ReasoningEffort::Medium => 4096,
        ReasoningEffort::High => 16384,
    }
}

/// Joins the system messages into one text, for APIs with a single system field.
pub(crate) fn system_text(messages: &[ChatMessage]) -> Option<String> {
    let parts: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == ChatRole::System)
        .map(|m| m.content.as_str())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// An API key: kept out of `Debug` output and therefore out of logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where a provider is and how it authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub default_model: String,
}

impl Endpoint {
    /// `path` under the base URL, whatever slashes either has.
    pub(crate) fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}
