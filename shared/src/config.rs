//! Runtime configuration: a TOML file (see `samplconfig.toml`, which
//! documents every key) overridden by environment variables, which is how
//! the Lambda functions are configured. Defaults run everything locally:
//! the embedded SQLite store, content from the repository's directories and
//! the offline tutor.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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

/// The type of an environment override's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvType {
    Str,
    Int,
    /// `true` or `false` (also `1`/`0`).
    Bool,
    /// A JSON value, for settings that are lists of tables (a Lambda
    /// function has no configuration file to write them in).
    Json,
}

/// Environment variables that override configuration keys. The Lambda
/// functions are configured only through these.
pub const ENV_OVERRIDES: &[(&str, &str, EnvType)] = &[
    ("TUTORFLOW_STORE", "store.backend", EnvType::Str),
    ("TUTORFLOW_SQLITE_PATH", "store.sqlite_path", EnvType::Str),
    ("TUTORFLOW_TABLE", "store.table", EnvType::Str),
    (
        "TUTORFLOW_DYNAMODB_ENDPOINT",
        "store.endpoint_url",
        EnvType::Str,
    ),
    ("TUTORFLOW_REGION", "store.region", EnvType::Str),
    ("TUTORFLOW_CONTENT_SOURCE", "content.source", EnvType::Str),
    ("TUTORFLOW_CONTENT_DIR", "content.dir", EnvType::Str),
    ("TUTORFLOW_CONTENT_BUCKET", "content.bucket", EnvType::Str),
    ("TUTORFLOW_CONTENT_PREFIX", "content.prefix", EnvType::Str),
    (
        "TUTORFLOW_S3_ENDPOINT",
        "content.endpoint_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_CONTENT_REFRESH_SECONDS",
        "content.refresh_seconds",
        EnvType::Int,
    ),
    ("TUTORFLOW_AUTH_MODE", "auth.mode", EnvType::Str),
    ("TUTORFLOW_JWT_SECRET", "auth.hs256_secret", EnvType::Str),
    ("TUTORFLOW_JWKS_URL", "auth.jwks_url", EnvType::Str),
    ("TUTORFLOW_JWT_ISSUER", "auth.issuer", EnvType::Str),
    ("TUTORFLOW_JWT_AUDIENCE", "auth.audience", EnvType::Str),
    ("TUTORFLOW_WEBHOOKS", "auth.webhooks", EnvType::Json),
    ("TUTORFLOW_LLM_TUTOR", "llm.tutor", EnvType::Str),
    ("TUTORFLOW_LLM_SAFETY", "llm.safety", EnvType::Str),
    (
        "TUTORFLOW_LLM_DRILL_GRADING",
        "llm.drill_grading",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_LLM_EXAM_EVALUATION",
        "llm.exam_evaluation",
        EnvType::Str,
    ),
    ("TUTORFLOW_LLM_PLANNER", "llm.planner", EnvType::Str),
    ("TUTORFLOW_LLM_SUMMARY", "llm.summary", EnvType::Str),
    (
        "TUTORFLOW_OPENAI_BASE_URL",
        "llm.openai.base_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_OPENAI_API_KEY",
        "llm.openai.api_key",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_OPENAI_COMPATIBLE_BASE_URL",
        "llm.openai_compatible.base_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_OPENAI_COMPATIBLE_API_KEY",
        "llm.openai_compatible.api_key",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_ANTHROPIC_API_KEY",
        "llm.anthropic.api_key",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_GEMINI_API_KEY",
        "llm.gemini.api_key",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_TRANSCRIPTION",
        "transcription.provider",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_TRANSCRIPTION_API_KEY",
        "transcription.api_key",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_AUDIO_BUCKET",
        "transcription.upload_bucket",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_DRILL_SECRET",
        "drills.token_secret",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_DRILL_RETIRED_SECRETS",
        "drills.retired_token_secrets",
        EnvType::Json,
    ),
    ("TUTORFLOW_EXAM_API_URL", "exam_api.base_url", EnvType::Str),
    ("TUTORFLOW_EXAM_API_KEY", "exam_api.api_key", EnvType::Str),
    (
        "TUTORFLOW_LMS_WEBHOOK_URL",
        "notifications.lms_webhook_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_NOTIFICATIONS_QUEUE_URL",
        "notifications.queue_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_SQS_ENDPOINT",
        "notifications.queue_endpoint_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_TEACHER_WEBHOOK_URL",
        "notifications.teacher_webhook_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_NOTIFY_SECRET",
        "notifications.signing_secret",
        EnvType::Str,
    ),
    ("TUTORFLOW_SAFETY_REGION", "safety.region", EnvType::Str),
    (
        "TUTORFLOW_MODERATION",
        "safety.moderation.provider",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_MODERATION_BASE_URL",
        "safety.moderation.base_url",
        EnvType::Str,
    ),
    (
        "TUTORFLOW_MODERATION_API_KEY",
        "safety.moderation.api_key",
        EnvType::Str,
    ),
    ("TUTORFLOW_HOST", "server.host", EnvType::Str),
    ("TUTORFLOW_PORT", "server.port", EnvType::Int),
    ("TUTORFLOW_DEBUG", "debug.enabled", EnvType::Bool),
    ("TUTORFLOW_STAFF_GROUP", "auth.staff_group", EnvType::Str),
];

/// The variable naming a configuration file to read.
pub const CONFIG_FILE_ENV: &str = "TUTORFLOW_CONFIG";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    #[error("configuration key {key}: {message}")]
    Invalid { key: String, message: String },
}

impl Config {
    /// Reads `file` (if given, else `$TUTORFLOW_CONFIG` if set, else only
    /// defaults) and applies the environment overrides from `env`.
    pub fn load(
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let from_env = env(CONFIG_FILE_ENV).map(PathBuf::from);
        let written = match file.map(Path::to_path_buf).or(from_env) {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::File {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                text.parse::<toml::Table>().map_err(|e| ConfigError::File {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?
            }
            None => toml::Table::new(),
        };
        // Start from the defaults, so that a table given in part (say only
        // `llm.anthropic.api_key`) keeps the rest of its own defaults (the
        // provider's base URL) rather than those of its type.
        let mut doc = toml::Table::try_from(Config::default())
            .expect("the default configuration serializes to TOML");
        merge_tables(&mut doc, written);
        for (var, key, kind) in ENV_OVERRIDES {
            let Some(raw) = env(var).filter(|v| !v.is_empty()) else {
                continue;
            };
            let value = match kind {
                EnvType::Str => toml::Value::String(raw),
                EnvType::Int => raw
                    .trim()
                    .parse::<i64>()
                    .map(toml::Value::Integer)
                    .map_err(|_| ConfigError::Env {
                        var: (*var).to_owned(),
                        message: format!("`{raw}` is not a whole number"),
                    })?,
                EnvType::Bool => match raw.trim() {
                    "true" | "1" => toml::Value::Boolean(true),
                    "false" | "0" => toml::Value::Boolean(false),
                    _ => {
                        return Err(ConfigError::Env {
                            var: (*var).to_owned(),
                            message: format!("`{raw}` is not true or false"),
                        });
                    }
                },
                EnvType::Json => serde_json::from_str::<serde_json::Value>(&raw)
                    .map_err(|e| e.to_string())
                    .and_then(|json| toml::Value::try_from(json).map_err(|e| e.to_string()))
                    .map_err(|message| ConfigError::Env {
                        var: (*var).to_owned(),
                        message: format!("not a JSON value without nulls: {message}"),
                    })?,
            };
            set_path(&mut doc, key, value);
        }
        let config: Config = toml::Value::Table(doc)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                key: "(file)".into(),
                message: e.message().to_owned(),
            })?;
        config.check()?;
        Ok(config)
    }

    /// Cross-field checks: a setting that needs another one names both.
    fn check(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| {
            Err(ConfigError::Invalid {
                key: key.into(),
                message: message.into(),
            })
        };
        if self.store.backend == StoreBackend::Dynamodb && self.store.table.trim().is_empty() {
            return invalid("store.table", "required when store.backend = \"dynamodb\"");
        }
        if self.content.source == ContentSourceKind::S3 && self.content.bucket.is_none() {
            return invalid("content.bucket", "required when content.source = \"s3\"");
        }
        if self.auth.mode == AuthMode::Jwks && self.auth.jwks_url.is_none() {
            return invalid("auth.jwks_url", "required when auth.mode = \"jwks\"");
        }
        if self.limits.max_body_bytes == 0 || self.limits.max_message_chars == 0 {
            return invalid("limits", "limits must be greater than zero");
        }
        if self.server.header_timeout_ms == 0 || self.server.body_timeout_ms == 0 {
            return invalid("server", "timeouts must be greater than zero");
        }
        for (_, reference) in self.secret_references() {
            SecretRef::parse(reference)?;
        }
        Ok(())
    }
}

impl Config {
    /// Every secret reference the configuration uses, with the setting
    /// that holds it (for error messages). The HS256 secret counts only in
    /// `hs256` mode: otherwise nothing reads it.
    pub fn secret_references(&self) -> Vec<(String, &str)> {
        let hs256_secret = match self.auth.mode {
            AuthMode::Hs256 => &self.auth.hs256_secret,
            AuthMode::Jwks | AuthMode::Apigw => &None,
        };
        let settings = [
            ("auth.hs256_secret", hs256_secret),
            ("drills.token_secret", &self.drills.token_secret),
            ("llm.openai.api_key", &self.llm.openai.api_key),
            (
                "llm.openai_compatible.api_key",
                &self.llm.openai_compatible.api_key,
            ),
            ("llm.anthropic.api_key", &self.llm.anthropic.api_key),
            ("llm.gemini.api_key", &self.llm.gemini.api_key),
            ("transcription.api_key", &self.transcription.api_key),
            ("exam_api.api_key", &self.exam_api.api_key),
            ("safety.moderation.api_key", &self.safety.moderation.api_key),
            (
                "notifications.signing_secret",
                &self.notifications.signing_secret,
            ),
        ];
        settings
            .into_iter()
            .filter_map(|(setting, reference)| Some((setting.to_owned(), reference.as_deref()?)))
            .chain(
                self.auth
                    .webhooks
                    .iter()
                    .map(|w| (format!("auth.webhooks[{}].secret", w.id), w.secret.as_str())),
            )
            .chain(
                self.drills
                    .retired_token_secrets
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (format!("drills.retired_token_secrets[{i}]"), r.as_str())),
            )
            .collect()
    }
}

/// `overlay` written over `base`, table by table; any other value replaces.
fn merge_tables(base: &mut toml::Table, overlay: toml::Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(over)) => {
                merge_tables(inner, over)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) {
    let mut table = doc;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            table.insert(part.to_owned(), value);
            return;
        }
        let entry = table
            .entry(part.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        table = next;
    }
}

/// Where a secret comes from. Secrets are never written in configuration
/// files: the file names the place to read them from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecretRef {
    /// `env:NAME` — an environment variable (local runs).
    Env(String),
    /// `ssm:/path/name` — an SSM Parameter Store parameter, decrypted
    /// (a SecureString).
    Ssm(String),
    /// `secretsmanager:id` — the string value of a Secrets Manager secret,
    /// by name or ARN.
    SecretsManager(String),
}

impl SecretRef {
    pub fn parse(reference: &str) -> Result<SecretRef, ConfigError> {
        let parsed = match reference.split_once(':') {
            Some(("env", name)) if !name.is_empty() => Some(SecretRef::Env(name.to_owned())),
            Some(("ssm", name)) if name.len() > 1 && name.starts_with('/') => {
                Some(SecretRef::Ssm(name.to_owned()))
            }
            Some(("secretsmanager", id)) if !id.is_empty() => {
                Some(SecretRef::SecretsManager(id.to_owned()))
            }
            _ => None,
        };
        parsed.ok_or_else(|| ConfigError::Invalid {
            key: reference.to_owned(),
            message: "a secret reference must look like env:NAME, ssm:/parameter/name \
                      or secretsmanager:secret-id"
                .into(),
        })
    }

    /// Whether the value lives in an AWS service and must be fetched before
    /// it can be resolved (see [`crate::secrets`]).
    pub fn is_remote(&self) -> bool {
        !matches!(self, SecretRef::Env(_))
    }

    /// The secret's value, if it is set. `lookup` is asked for the variable
    /// name of an `env:` reference and for the whole reference (`ssm:/…`,
    /// `secretsmanager:…`) of a remote one: the process environment answers
    /// the former; [`crate::secrets::Secrets::lookup`] adds the remote
    /// values fetched at startup. A remote reference that was not fetched
    /// reads as unset.
    pub fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
        match self {
            SecretRef::Env(name) => lookup(name),
            remote => lookup(&remote.to_string()),
        }
        .filter(|v| !v.is_empty())
    }
}

impl std::fmt::Display for SecretRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretRef::Env(name) => write!(f, "env:{name}"),
            SecretRef::Ssm(name) => write!(f, "ssm:{name}"),
            SecretRef::SecretsManager(id) => write!(f, "secretsmanager:{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_run_everything_locally() {
        let config = Config::load(None, env_of(&[])).unwrap();
        assert_eq!(config.store.backend, StoreBackend::Sqlite);
        assert_eq!(config.content.source, ContentSourceKind::Fs);
        assert_eq!(config.llm.tutor, ProviderKind::Offline);
        assert_eq!(config.limits.max_body_bytes, 65536);
        assert_eq!(config.limits.max_message_chars, 4000);
    }

    #[test]
    fn sample_config_is_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samplconfig.toml");
        let config = Config::load(Some(&path), env_of(&[])).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn environment_overrides_the_file() {
        let config = Config::load(
            None,
            env_of(&[
                ("TUTORFLOW_STORE", "dynamodb"),
                ("TUTORFLOW_TABLE", "tutorflow-prod"),
                ("TUTORFLOW_CONTENT_REFRESH_SECONDS", "15"),
                ("TUTORFLOW_LLM_TUTOR", "anthropic"),
            ]),
        )
        .unwrap();
        assert_eq!(config.store.backend, StoreBackend::Dynamodb);
        assert_eq!(config.store.table, "tutorflow-prod");
        assert_eq!(config.content.refresh_seconds, 15);
        assert_eq!(config.llm.tutor, ProviderKind::Anthropic);
    }

    #[test]
    fn a_provider_key_alone_keeps_the_provider_defaults() {
        let config = Config::load(
            None,
            env_of(&[
                ("TUTORFLOW_ANTHROPIC_API_KEY", "ssm:/k"),
                ("TUTORFLOW_OPENAI_API_KEY", "ssm:/k"),
            ]),
        )
        .unwrap();
        let defaults = LlmConfig::default();
        assert_eq!(config.llm.anthropic.base_url, defaults.anthropic.base_url);
        assert_eq!(config.llm.openai.base_url, defaults.openai.base_url);
        assert_eq!(
            config.llm.openai.default_model,
            defaults.openai.default_model
        );
        assert_eq!(config.llm.anthropic.api_key.as_deref(), Some("ssm:/k"));
    }

    #[test]
    fn bad_values_name_what_was_wrong() {
        let err = Config::load(None, env_of(&[("TUTORFLOW_PORT", "eighty")])).unwrap_err();
        assert!(err.to_string().contains("TUTORFLOW_PORT"), "{err}");
        let err = Config::load(None, env_of(&[("TUTORFLOW_STORE", "postgres")])).unwrap_err();
        assert!(err.to_string().contains("postgres"), "{err}");
        let err = Config::load(None, env_of(&[("TUTORFLOW_CONTENT_SOURCE", "s3")])).unwrap_err();
        assert!(err.to_string().contains("content.bucket"), "{err}");
        let err = Config::load(None, env_of(&[("TUTORFLOW_JWT_SECRET", "hunter2")])).unwrap_err();
        assert!(err.to_string().contains("env:NAME"), "{err}");
    }

    #[test]
    fn secrets_resolve_from_the_environment() {
        let secret = SecretRef::parse("env:MY_KEY").unwrap();
        assert_eq!(
            secret.resolve(env_of(&[("MY_KEY", "s3cret")])).as_deref(),
            Some("s3cret")
        );
        assert_eq!(secret.resolve(env_of(&[])), None);
    }

    #[test]
    fn remote_secrets_resolve_by_their_whole_reference() {
        let parameter = SecretRef::parse("ssm:/tutorflow/dev/drill-token-secret").unwrap();
        assert_eq!(
            parameter,
            SecretRef::Ssm("/tutorflow/dev/drill-token-secret".into())
        );
        assert!(parameter.is_remote());
        let fetched = env_of(&[("ssm:/tutorflow/dev/drill-token-secret", "k3y")]);
        assert_eq!(parameter.resolve(&fetched).as_deref(), Some("k3y"));
        // The process environment knows no remote reference.
        assert_eq!(parameter.resolve(env_of(&[])), None);

        let arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tutorflow/llm-AbCdEf";
        let secret = SecretRef::parse(&format!("secretsmanager:{arn}")).unwrap();
        assert_eq!(secret, SecretRef::SecretsManager(arn.into()));
        assert_eq!(secret.to_string(), format!("secretsmanager:{arn}"));
        assert!(!SecretRef::parse("env:X").unwrap().is_remote());
    }

    #[test]
    fn malformed_secret_references_are_refused() {
        for reference in [
            "ssm:",
            "ssm:/",
            "ssm:relative",
            "secretsmanager:",
            "vault:x",
            "plain",
        ] {
            let err = SecretRef::parse(reference).unwrap_err();
            assert!(
                err.to_string().contains("ssm:/parameter/name"),
                "{reference}: {err}"
            );
        }
    }

    #[test]
    fn webhook_integrations_come_from_json_in_the_environment() {
        let json = r#"[{"id": "n8n", "secret": "ssm:/tutorflow/dev/webhooks/n8n",
                        "student_prefix": "n8n:", "course_id": "prealgebra"}]"#;
        let config = Config::load(None, env_of(&[("TUTORFLOW_WEBHOOKS", json)])).unwrap();
        assert_eq!(config.auth.webhooks.len(), 1);
        assert_eq!(
            config.auth.webhooks[0].secret,
            "ssm:/tutorflow/dev/webhooks/n8n"
        );
        assert!(config.secret_references().contains(&(
            "auth.webhooks[n8n].secret".into(),
            "ssm:/tutorflow/dev/webhooks/n8n"
        )));
        let err = Config::load(None, env_of(&[("TUTORFLOW_WEBHOOKS", "[{")])).unwrap_err();
        assert!(err.to_string().contains("TUTORFLOW_WEBHOOKS"), "{err}");
        let unknown = r#"[{"id": "x", "secret": "env:S", "student_prefix": "", "course_id": "c", "extra": 1}]"#;
        assert!(Config::load(None, env_of(&[("TUTORFLOW_WEBHOOKS", unknown)])).is_err());
    }

    #[test]
    fn secret_references_lists_every_secret_setting() {
        let config = Config::load(
            None,
            env_of(&[
                ("TUTORFLOW_DRILL_SECRET", "ssm:/d"),
                ("TUTORFLOW_OPENAI_API_KEY", "secretsmanager:o"),
                ("TUTORFLOW_NOTIFY_SECRET", "env:N"),
            ]),
        )
        .unwrap();
        let mut found = config.secret_references();
        found.sort();
        assert_eq!(
            found,
            vec![
                (
                    "auth.hs256_secret".to_owned(),
                    "env:TUTORFLOW_DEV_JWT_SECRET"
                ),
                ("drills.token_secret".to_owned(), "ssm:/d"),
                ("llm.openai.api_key".to_owned(), "secretsmanager:o"),
                ("notifications.signing_secret".to_owned(), "env:N"),
            ]
        );
    }
}
