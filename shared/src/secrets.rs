//! Secrets held in AWS — SSM Parameter Store SecureStrings and Secrets
//! Manager secrets named by `ssm:` and `secretsmanager:` references (see
//! [`SecretRef`]) — fetched through the AWS Parameters and Secrets Lambda
//! Extension, a layer serving them on `localhost:2773` inside the execution
//! environment.
//!
//! The extension rather than the SDK: it is one local HTTP GET with the
//! reqwest client every function already links, where `aws-sdk-ssm` and
//! `aws-sdk-secretsmanager` would add two large crates to every build and
//! binary for a few calls per cold start (README "Deploying to AWS" has the
//! figures). The extension authenticates calls with the function's own
//! session token and uses the function's role, so IAM grants stay per
//! function.
//!
//! When: once per execution environment, and the values are then kept for
//! its whole life. The extension answers only during the Invoke phase (during
//! Init it replies "not ready to serve traffic"), so `startup::lambda::run`
//! opens the store and the content during init and, on the first
//! invocation, fetches the secrets and builds the app from
//! [`Secrets::lookup`]; a failure is not kept, so the next invocation tries
//! again.
//!
//! Locally every reference is `env:` and [`SecretResolver::fetch`] makes no
//! request. Values are never logged; [`Secrets`] prints only references.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde::Deserialize;

use crate::config::{Config, ConfigError, SecretRef};

/// The variable the extension reads its port from (Lambda configuration).
pub const EXTENSION_PORT_ENV: &str = "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT";
const DEFAULT_EXTENSION_PORT: u16 = 2773;
/// The extension refuses requests without the function's session token.
const TOKEN_HEADER: &str = "X-Aws-Parameters-Secrets-Token";
const SESSION_TOKEN_ENV: &str = "AWS_SESSION_TOKEN";
/// A cache miss costs the extension one SSM or Secrets Manager round trip.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// Attempts per secret when the extension or the service behind it is
/// unreachable, throttled or failing (5xx, 429).
const ATTEMPTS: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// How much of an error body is quoted (error bodies hold no secret value).
const QUOTED_BODY_CHARS: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// A reference could not be read; names the setting and the reference.
    #[error("{setting}: cannot read secret {reference}: {reason}")]
    Unavailable {
        setting: String,
        reference: String,
        reason: String,
    },
    /// The environment does not allow reading remote secrets at all.
    #[error("{var}: {message}")]
    Environment { var: &'static str, message: String },
}

/// Why a secret reference in the configuration gave no value.
#[derive(Debug, thiserror::Error)]
pub enum UnresolvedSecret {
    /// The reference is not in a form a secret can be read from.
    #[error(transparent)]
    Malformed(#[from] ConfigError),
    /// Nothing is set under it: an unset variable, or a remote secret that
    /// was not fetched.
    #[error("{setting}: {reference} is not set")]
    Unset { setting: String, reference: String },
}

impl From<UnresolvedSecret> for ConfigError {
    fn from(e: UnresolvedSecret) -> Self {
        match e {
            UnresolvedSecret::Malformed(e) => e,
            UnresolvedSecret::Unset { setting, reference } => ConfigError::Invalid {
                key: setting,
                message: format!("{reference} is not set"),
            },
        }
    }
}

/// The value of the secret `reference` names, read through `lookup` (see
/// [`SecretRef::resolve`]); `setting` is the configuration key the
/// reference is written under, for the error.
pub fn resolve(
    setting: &str,
    reference: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, UnresolvedSecret> {
    SecretRef::parse(reference)?
        .resolve(lookup)
        .ok_or_else(|| UnresolvedSecret::Unset {
            setting: setting.to_owned(),
            reference: reference.to_owned(),
        })
}

/// Reads remote secret references through the Parameters and Secrets
/// Lambda Extension.
#[derive(Debug, Clone)]
pub struct SecretResolver {
    endpoint: Url,
    session_token: Option<String>,
}

impl SecretResolver {
    /// The extension of this execution environment: its port from
    /// `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT` (default 2773), calls
    /// authenticated with `AWS_SESSION_TOKEN`.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Self, SecretError> {
        let port = match env(EXTENSION_PORT_ENV).filter(|p| !p.is_empty()) {
            None => DEFAULT_EXTENSION_PORT,
            Some(raw) => raw.trim().parse().map_err(|_| SecretError::Environment {
                var: EXTENSION_PORT_ENV,
                message: format!("`{raw}` is not a port number"),
            })?,
        };
        let endpoint = Url::parse(&format!("http://localhost:{port}/"))
            .expect("a localhost URL with a numeric port is valid");
        Ok(SecretResolver::new(
            endpoint,
            env(SESSION_TOKEN_ENV).filter(|t| !t.is_empty()),
        ))
    }

    /// An extension at `endpoint` (tests point it at a mock server).
    pub fn new(endpoint: Url, session_token: Option<String>) -> Self {
        SecretResolver {
            endpoint,
            session_token,
        }
    }

    /// A client for the extension only, built when there is something to
    /// fetch (building one loads the root certificates; local runs never
    /// need it).
    fn client() -> reqwest::Client {
        reqwest::Client::builder()
            // The extension is local: a proxy from the environment must not
            // see the session token or the secret.
            .no_proxy()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .expect("a client without TLS settings or proxies always builds")
    }

    /// Fetches every `ssm:` and `secretsmanager:` reference in `config`,
    /// each once and all at the same time. The first failure, in the order
    /// of [`Config::secret_references`], is the error.
    pub async fn fetch(&self, config: &Config) -> Result<Secrets, SecretError> {
        let mut wanted: BTreeMap<SecretRef, String> = BTreeMap::new();
        for (setting, reference) in config.secret_references() {
            let parsed = SecretRef::parse(reference).map_err(|e| SecretError::Unavailable {
                setting: setting.clone(),
                reference: reference.to_owned(),
                reason: e.to_string(),
            })?;
            if parsed.is_remote() {
                wanted.entry(parsed).or_insert(setting);
            }
        }
        if wanted.is_empty() {
            return Ok(Secrets::default());
        }
        let Some(token) = self.session_token.clone() else {
            return Err(SecretError::Environment {
                var: SESSION_TOKEN_ENV,
                message: "not set, so ssm: and secretsmanager: references cannot be read \
                          (they are read inside AWS Lambda; use env: references locally)"
                    .into(),
            });
        };
        let http = Self::client();
        let mut tasks = tokio::task::JoinSet::new();
        for (position, reference) in wanted.keys().enumerate() {
            let (resolver, http) = (self.clone(), http.clone());
            let (reference, token) = (reference.clone(), token.clone());
            tasks.spawn(async move {
                let value = resolver.fetch_one(&http, &reference, &token).await;
                (position, reference, value)
            });
        }
        let mut results = Vec::with_capacity(wanted.len());
        while let Some(joined) = tasks.join_next().await {
            results.push(joined.expect("a secret fetch does not panic"));
        }
        results.sort_by_key(|(position, _, _)| *position);
        let mut values = HashMap::with_capacity(results.len());
        for (_, reference, value) in results {
            match value {
                Ok(value) => {
                    values.insert(reference.to_string(), value);
                }
                Err(reason) => {
                    return Err(SecretError::Unavailable {
                        setting: wanted.remove(&reference).unwrap_or_default(),
                        reference: reference.to_string(),
                        reason,
                    });
                }
            }
        }
        Ok(Secrets { values })
    }

    /// One secret's value, or why it could not be read.
    async fn fetch_one(
        &self,
        http: &reqwest::Client,
        reference: &SecretRef,
        token: &str,
    ) -> Result<String, String> {
        let url = self.url_of(reference)?;
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let outcome = http.get(url.clone()).header(TOKEN_HEADER, token).send();
            let retryable = match outcome.await {
                Err(e) => format!(
                    "the AWS Parameters and Secrets Lambda Extension did not answer at {} \
                     (is its layer attached to the function?): {e}",
                    self.endpoint
                ),
                Ok(response) if response.status().is_success() => {
                    let body = response
                        .bytes()
                        .await
                        .map_err(|e| format!("reading the extension's answer: {e}"))?;
                    return value_of(reference, &body);
                }
                Ok(response) => {
                    let status = response.status();
                    let body = response.text().await.unwrap_or_default();
                    let quoted: String = body.trim().chars().take(QUOTED_BODY_CHARS).collect();
                    let mut reason = format!("the extension answered {status}: {quoted}");
                    if quoted.contains("not ready to serve traffic") {
                        reason.push_str(
                            " (the extension serves only during an invocation: \
                             fetch secrets in the first invocation, not during init)",
                        );
                    }
                    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
                        return Err(reason);
                    }
                    reason
                }
            };
            if attempt == ATTEMPTS {
                return Err(retryable);
            }
            attempt += 1;
            tokio::time::sleep(backoff).await;
            backoff *= 2;
        }
    }

    fn url_of(&self, reference: &SecretRef) -> Result<Url, String> {
        let (path, query): (&str, &[(&str, &str)]) = match reference {
            SecretRef::Ssm(name) => (
                "systemsmanager/parameters/get",
                &[("name", name), ("withDecryption", "true")],
            ),
            SecretRef::SecretsManager(id) => ("secretsmanager/get", &[("secretId", id)]),
            SecretRef::Env(_) => return Err("not a remote reference".into()),
        };
        let mut url = self
            .endpoint
            .join(path)
            .map_err(|e| format!("extension URL: {e}"))?;
        url.query_pairs_mut().extend_pairs(query);
        Ok(url)
    }
}

/// What the extension returns for `/systemsmanager/parameters/get`
/// (SSM's GetParameter result).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ParameterAnswer {
    parameter: Parameter,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Parameter {
    #[serde(rename = "Type")]
    kind: String,
    value: String,
}

/// What the extension returns for `/secretsmanager/get` (Secrets
/// Manager's GetSecretValue result).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SecretAnswer {
    secret_string: Option<String>,
}

fn value_of(reference: &SecretRef, body: &[u8]) -> Result<String, String> {
    // serde's message for a malformed answer names a position, never the
    // content, so it cannot leak the value.
    let value = match reference {
        SecretRef::Ssm(_) => {
            let answer: ParameterAnswer = serde_json::from_slice(body)
                .map_err(|e| format!("unexpected answer from the extension: {e}"))?;
            if answer.parameter.kind != "SecureString" {
                return Err(format!(
                    "the parameter is a {}, not a SecureString: store secrets encrypted",
                    answer.parameter.kind
                ));
            }
            answer.parameter.value
        }
        SecretRef::SecretsManager(_) => {
            let answer: SecretAnswer = serde_json::from_slice(body)
                .map_err(|e| format!("unexpected answer from the extension: {e}"))?;
            answer.secret_string.ok_or(
                "the secret holds binary data; store the key as a secret string".to_owned(),
            )?
        }
        SecretRef::Env(_) => return Err("not a remote reference".into()),
    };
    if value.is_empty() {
        return Err("the value is empty".into());
    }
    Ok(value)
}

/// The remote secrets fetched at startup, by reference.
#[derive(Clone, Default)]
pub struct Secrets {
    values: HashMap<String, String>,
}

impl Secrets {
    /// An environment-like lookup for [`SecretRef::resolve`] and for every
    /// constructor that takes `env` (`Authenticator::from_config`,
    /// `WebhookVerifier::from_config`, `LlmStack::from_config`,
    /// `OpenAiTranscriber::from_config`): whole remote references answer
    /// from the fetched values, anything else from `env`.
    pub fn lookup<'a>(
        &'a self,
        env: impl Fn(&str) -> Option<String> + 'a,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| self.values.get(name).cloned().or_else(|| env(name))
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut references: Vec<&String> = self.values.keys().collect();
        references.sort();
        f.debug_struct("Secrets")
            .field("references", &references)
            .finish_non_exhaustive()
    }
}
