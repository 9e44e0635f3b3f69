//! Runtime configuration: a TOML file (see `samplconfig.toml`, which
//! documents every key) overridden by environment variables, which is how
//! the Lambda functions are configured. Defaults run everything locally:
//! the embedded SQLite store, content from the repository's directories and
//! the offline tutor.
//!
//! This file holds the settings and their defaults; `load` reads the file
//! and the environment overrides, `secret_ref` the secret references.

mod load;
mod secret_ref;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use self::load::{CONFIG_FILE_ENV, ENV_OVERRIDES, EnvType};
pub use self::secret_ref::SecretRef;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub store: StoreConfig,
    pub content: ContentConfig,
    pub auth: AuthConfig,
    pub llm: LlmConfig,
    pub transcription: TranscriptionConfig,
    pub drills: DrillConfig,
    pub exam_api: ExamApiConfig,
    pub notifications: NotificationConfig,
    pub safety: SafetyConfig,
    pub limits: Limits,
    pub server: ServerConfig,
    pub debug: DebugConfig,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    #[default]
    Sqlite,
    Dynamodb,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    pub backend: StoreBackend,
    pub sqlite_path: PathBuf,
    pub table: String,
    /// Endpoint override (moto, DynamoDB Local); empty for AWS.
    pub endpoint_url: Option<String>,
    pub region: Option<String>,
    pub idempotency_ttl_hours: u64,
    pub turn_log_ttl_days: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentSourceKind {
    #[default]
    Fs,
    S3,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContentConfig {
    pub source: ContentSourceKind,
    /// Bundle root holding workflows/ and prompts/ (source = fs).
    pub dir: PathBuf,
    pub bucket: Option<String>,
    pub prefix: String,
    pub endpoint_url: Option<String>,
    /// How often a running process checks for newly published content.
    pub refresh_seconds: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Shared-secret tokens, for local use.
    #[default]
    Hs256,
    /// RS256 tokens checked against a JWKS URL.
    Jwks,
    /// Claims already verified by an API Gateway JWT authorizer.
    Apigw,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    pub mode: AuthMode,
    /// Secret for HS256 tokens, as a secret reference ([`SecretRef`]).
    pub hs256_secret: Option<String>,
    pub jwks_url: Option<String>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    /// Cognito access tokens carry `client_id` instead of `aud`.
    pub cognito_client_id: Option<String>,
    /// Expected `token_use` claim (Cognito: `access` or `id`).
    pub token_use: Option<String>,
    /// Minimum seconds between JWKS refreshes on an unknown `kid`.
    pub jwks_refresh_seconds: u64,
    pub webhooks: Vec<WebhookIntegration>,
    /// Accepted clock difference for webhook signatures.
    pub webhook_tolerance_seconds: u64,
    /// Members of this group (the token's `groups` or `cognito:groups`
    /// claim) are staff: with `debug.enabled` they see policy traces.
    pub staff_group: String,
}

/// An n8n or LMS integration allowed to post turns for its students.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookIntegration {
    pub id: String,
    /// HMAC-SHA256 key, as a secret reference ([`SecretRef`]).
    pub secret: String,
    /// Student ids this integration may act for start with this prefix.
    pub student_prefix: String,
    pub course_id: String,
    /// Receives the integration's signed notifications (`session.completed`,
    /// `intervention.needed`, `problem.advanced`), signed with its secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbound_url: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// The deterministic tutor built from templates and blueprints.
    #[default]
    Offline,
    Openai,
    /// Ollama, vLLM, llama.cpp server and others speaking the OpenAI API.
    OpenaiCompatible,
    Anthropic,
    Gemini,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// Provider per call.
    pub tutor: ProviderKind,
    pub safety: ProviderKind,
    pub drill_grading: ProviderKind,
    pub exam_evaluation: ProviderKind,
    pub planner: ProviderKind,
    pub summary: ProviderKind,
    pub openai: ProviderEndpoint,
    pub openai_compatible: ProviderEndpoint,
    pub anthropic: ProviderEndpoint,
    pub gemini: ProviderEndpoint,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProviderEndpoint {
    pub base_url: String,
    /// API key as a secret reference ([`SecretRef`]); never written in the file.
    pub api_key: Option<String>,
    /// Model used when the workflow does not name one.
    pub default_model: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptionProvider {
    #[default]
    None,
    Openai,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TranscriptionConfig {
    pub provider: TranscriptionProvider,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    /// Audio larger than this goes through a presigned S3 upload.
    pub max_inline_bytes: u64,
    pub max_upload_bytes: u64,
    pub upload_bucket: Option<String>,
    /// S3 endpoint override for the upload bucket (moto); unset for AWS.
    pub endpoint_url: Option<String>,
    pub upload_prefix: String,
    pub presign_seconds: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrillConfig {
    /// The secret drill tokens are sealed with, as a secret reference
    /// ([`SecretRef`]).
    pub token_secret: Option<String>,
    /// Secrets rotated out: tokens they sealed still open until the entry
    /// is removed (after `token_ttl_seconds`, none is left to open).
    pub retired_token_secrets: Vec<String>,
    pub token_ttl_seconds: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExamApiConfig {
    /// When set, exam lockouts and submissions go to this API (authoritative).
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotificationConfig {
    /// Receives the notifications of students who are not an integration's
    /// (the LMS post of docs/webhooks.md), signed with `signing_secret`.
    pub lms_webhook_url: Option<String>,
    /// Receives "student needs a teacher" alerts.
    pub teacher_webhook_url: Option<String>,
    /// Signs outbound notifications (HMAC-SHA256), as a secret reference.
    pub signing_secret: Option<String>,
    /// Tries per notification before it is recorded as failed: a 5xx, a
    /// 408 or 429, a timeout or a refused connection is tried again.
    pub delivery_attempts: u32,
    /// Pause before the second try; it doubles for each try after.
    pub retry_base_ms: u64,
    /// How long one try waits for the receiver.
    pub delivery_timeout_ms: u64,
    /// An SQS queue the notifications are handed to instead of being sent
    /// from the request's process. On Lambda a task left running after the
    /// response is frozen with the sandbox, so the functions queue each
    /// notification and the `notify` function delivers it.
    pub queue_url: Option<String>,
    /// The SQS endpoint, for an emulator (moto).
    pub queue_endpoint_url: Option<String>,
}

impl Default for NotificationConfig {
    fn default() -> Self {
        NotificationConfig {
            lms_webhook_url: None,
            teacher_webhook_url: None,
            signing_secret: None,
            delivery_attempts: 4,
            retry_base_ms: 500,
            delivery_timeout_ms: 5_000,
            queue_url: None,
            queue_endpoint_url: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    /// Whose help lines a safety reply shows: a key of the workflow's
    /// `safety.help_resources` (e.g. `GB`, `US`); `default` otherwise.
    pub region: String,
    pub moderation: ModerationConfig,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModerationProvider {
    /// OpenAI's moderation wherever a key for it is configured.
    #[default]
    Auto,
    Openai,
    Off,
}

/// The moderation provider that screens messages alongside the tutor call
/// (where the workflow's `safety.moderation` asks for it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModerationConfig {
    pub provider: ModerationProvider,
    pub base_url: String,
    /// A secret reference; unset, `llm.openai.api_key` is used.
    pub api_key: Option<String>,
    pub model: String,
    /// A verdict later than this is not waited for (the offline one stands).
    pub timeout_ms: u64,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            region: "default".into(),
            moderation: ModerationConfig::default(),
        }
    }
}

impl Default for ModerationConfig {
    fn default() -> Self {
        ModerationConfig {
            provider: ModerationProvider::Auto,
            base_url: "https://api.openai.com/v1".into(),
            api_key: None,
            model: "omni-moderation-latest".into(),
            timeout_ms: 3000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    pub max_body_bytes: usize,
    pub max_message_chars: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    /// Time a client has to send a request's headers (or, on an idle
    /// kept-alive connection, to start the next request).
    pub header_timeout_ms: u64,
    /// Time a client has to send a request's body once its headers arrived.
    pub body_timeout_ms: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            backend: StoreBackend::Sqlite,
            sqlite_path: PathBuf::from(".tutorflow/tutorflow.sqlite"),
            table: "tutorflow".into(),
            endpoint_url: None,
            region: None,
            idempotency_ttl_hours: 24,
            turn_log_ttl_days: 30,
        }
    }
}

impl Default for ContentConfig {
    fn default() -> Self {
        ContentConfig {
            source: ContentSourceKind::Fs,
            dir: PathBuf::from("."),
            bucket: None,
            prefix: String::new(),
            endpoint_url: None,
            refresh_seconds: 60,
        }
    }
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            mode: AuthMode::Hs256,
            hs256_secret: Some("env:TUTORFLOW_DEV_JWT_SECRET".into()),
            jwks_url: None,
            issuer: None,
            audience: None,
            cognito_client_id: None,
            token_use: None,
            jwks_refresh_seconds: 300,
            webhooks: Vec::new(),
            webhook_tolerance_seconds: 300,
            staff_group: "staff".into(),
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            tutor: ProviderKind::Offline,
            safety: ProviderKind::Offline,
            drill_grading: ProviderKind::Offline,
            exam_evaluation: ProviderKind::Offline,
            planner: ProviderKind::Offline,
            summary: ProviderKind::Offline,
            openai: ProviderEndpoint::new("https://api.openai.com/v1", "gpt-4o-mini"),
            openai_compatible: ProviderEndpoint::new("http://127.0.0.1:11434/v1", "llama3.1"),
            anthropic: ProviderEndpoint::new("https://api.anthropic.com", "claude-sonnet-4-5"),
            gemini: ProviderEndpoint::new(
                "https://generativelanguage.googleapis.com/v1beta",
                "gemini-2.5-flash",
            ),
        }
    }
}

impl Default for ProviderEndpoint {
    fn default() -> Self {
        ProviderEndpoint::new("", "")
    }
}

impl ProviderEndpoint {
    fn new(base_url: &str, default_model: &str) -> Self {
        ProviderEndpoint {
            base_url: base_url.into(),
            api_key: None,
            default_model: default_model.into(),
        }
    }
}

impl Default for TranscriptionConfig {
    fn default() -> Self {
        TranscriptionConfig {
            provider: TranscriptionProvider::None,
            model: "gpt-4o-mini-transcribe".into(),
            base_url: "https://api.openai.com/v1".into(),
            api_key: None,
            max_inline_bytes: 4 * 1024 * 1024,
            max_upload_bytes: 25 * 1024 * 1024,
            upload_bucket: None,
            endpoint_url: None,
            upload_prefix: "audio/".into(),
            presign_seconds: 300,
        }
    }
}

impl Default for DrillConfig {
    fn default() -> Self {
        DrillConfig {
            token_secret: Some("env:TUTORFLOW_DEV_DRILL_SECRET".into()),
            retired_token_secrets: Vec::new(),
            token_ttl_seconds: 24 * 3600,
        }
    }
}

impl Default for ExamApiConfig {
    fn default() -> Self {
        ExamApiConfig {
            base_url: None,
            api_key: None,
            timeout_ms: 3000,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 * 1024,
            max_message_chars: 4000,
        }
    }
}

/// The policy trace in turn replies (the web page's debug drawer). Off by
/// default; when on, only staff tokens get it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DebugConfig {
    pub enabled: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: "127.0.0.1".into(),
            port: 8787,
            header_timeout_ms: 10_000,
            body_timeout_ms: 30_000,
        }
    }
}

/// A configuration that cannot be read or is not valid.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    #[error("configuration key {key}: {message}")]
    Invalid { key: String, message: String },
}

#[cfg(test)]
mod tests;
