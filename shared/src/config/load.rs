//! Reading the configuration: the file, then the environment variables
//! that override its keys, then the checks a loaded configuration passes.

use std::path::{Path, PathBuf};

use super::{AuthMode, Config, ConfigError, ContentSourceKind, SecretRef, StoreBackend};

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
