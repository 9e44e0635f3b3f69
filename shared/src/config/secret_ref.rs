//! Secret references: where a secret the configuration needs is read from,
//! and which settings hold one.

use super::{AuthMode, Config, ConfigError};

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
