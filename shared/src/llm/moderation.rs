//! Online moderation of student messages: OpenAI's moderation endpoint
//! (`omni-moderation-latest`, free to call), which names the categories a
//! message is flagged under. The safety gate maps those names onto the
//! workflow's categories; the offline rules have already run.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::http::{HttpJson, RetryPolicy};
use super::openai::classify;
use super::provider::{ApiKey, Endpoint};
use super::setup::LlmSetupError;
use crate::config::{Config, ModerationProvider};
use crate::model::LlmError;
use crate::secrets::{self, UnresolvedSecret};

/// Screens one student message.
#[async_trait]
pub trait Moderator: Send + Sync + fmt::Debug {
    /// The provider's names of the categories `text` is flagged under;
    /// empty when it is not flagged.
    async fn flagged(&self, text: &str, deadline: Instant) -> Result<Vec<String>, LlmError>;

    /// How long a turn waits for the verdict.
    fn timeout(&self) -> Duration;
}

/// `POST {base_url}/moderations` of an OpenAI-style API.
#[derive(Debug)]
pub struct OpenAiModerator {
    endpoint: Endpoint,
    timeout: Duration,
    http: HttpJson,
}

impl OpenAiModerator {
    /// The moderator the configuration asks for: with `auto`, OpenAI's
    /// wherever a key for it is configured (`safety.moderation.api_key`,
    /// else `llm.openai.api_key`); `None` when off or, for `auto`, keyless.
    pub fn from_config(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
        retry: RetryPolicy,
    ) -> Result<Option<Self>, LlmSetupError> {
        let settings = &config.safety.moderation;
        let (setting, reference) = match (&settings.api_key, &config.llm.openai.api_key) {
            (Some(key), _) => ("safety.moderation.api_key", Some(key)),
            (None, Some(key)) => ("llm.openai.api_key", Some(key)),
            (None, None) => ("safety.moderation.api_key", None),
        };
        let reference = match (settings.provider, reference) {
            (ModerationProvider::Off, _) | (ModerationProvider::Auto, None) => return Ok(None),
            (ModerationProvider::Openai, None) => {
                return Err(LlmSetupError::Moderation(format!(
                    "{setting} is required when safety.moderation.provider = \"openai\""
                )));
            }
            (_, Some(reference)) => reference,
        };
        let key = match secrets::resolve(setting, reference, &env) {
            Ok(key) => key,
            Err(UnresolvedSecret::Malformed(e)) => {
                return Err(LlmSetupError::Moderation(format!("{setting}: {e}")));
            }
            // `auto` quietly stays offline when the key it would borrow is unset.
            Err(UnresolvedSecret::Unset { .. }) => {
                return match settings.provider {
                    ModerationProvider::Auto if settings.api_key.is_none() => Ok(None),
                    _ => Err(LlmSetupError::Moderation(format!(
                        "{setting} names {reference}, which is not set"
                    ))),
                };
            }
        };
        if settings.base_url.trim().is_empty() {
            return Err(LlmSetupError::Moderation(
                "safety.moderation.base_url is empty".into(),
            ));
        }
        Ok(Some(OpenAiModerator::new(
            Endpoint {
                base_url: settings.base_url.trim().to_owned(),
                api_key: Some(ApiKey::new(key)),
                default_model: settings.model.trim().to_owned(),
            },
            Duration::from_millis(settings.timeout_ms),
            retry,
        )))
    }

    pub fn new(endpoint: Endpoint, timeout: Duration, retry: RetryPolicy) -> Self {
        OpenAiModerator {
            endpoint,
            timeout,
            http: HttpJson::new(retry),
        }
    }
}

#[async_trait]
impl Moderator for OpenAiModerator {
    async fn flagged(&self, text: &str, deadline: Instant) -> Result<Vec<String>, LlmError> {
        let url = self.endpoint.url("moderations");
        let body = json!({"model": self.endpoint.default_model, "input": text});
        let build = || {
            let request = self.http.client().post(&url).json(&body);
            match &self.endpoint.api_key {
                Some(key) => request.header(AUTHORIZATION, format!("Bearer {}", key.expose())),
                None => request,
            }
        };
        let reply = self.http.send(build, deadline, classify).await?;
        flagged_categories(&reply.body)
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// The categories of the first (only) result marked true. A result
/// flagged without any category set is reported as `flagged`.
fn flagged_categories(body: &Value) -> Result<Vec<String>, LlmError> {
    let result = body["results"]
        .get(0)
        .ok_or_else(|| LlmError::InvalidOutput("the moderation reply has no results".into()))?;
    let flagged = result["flagged"].as_bool().ok_or_else(|| {
        LlmError::InvalidOutput("the moderation result has no `flagged` value".into())
    })?;
    let mut names: Vec<String> = result["categories"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, on)| on.as_bool() == Some(true))
        .map(|(name, _)| name.clone())
        .collect();
    names.sort();
    if flagged && names.is_empty() {
        names.push("flagged".to_owned());
    }
    if !flagged {
        names.clear();
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_flagged_result_names_categories() {
        let body = json!({"results": [{"flagged": true, "categories": {"violence": false, "self-harm/intent": true, "self-harm": true}}]});
        assert_eq!(
            flagged_categories(&body).unwrap(),
            ["self-harm", "self-harm/intent"]
        );
        let calm = json!({"results": [{"flagged": false, "categories": {"violence": true}}]});
        assert!(flagged_categories(&calm).unwrap().is_empty());
        let bare = json!({"results": [{"flagged": true, "categories": {}}]});
        assert_eq!(flagged_categories(&bare).unwrap(), ["flagged"]);
        assert!(flagged_categories(&json!({"results": []})).is_err());
        assert!(flagged_categories(&json!({"results": [{}]})).is_err());
    }
}
