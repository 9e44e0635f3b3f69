//! Who is calling: a student with a JWT (HS256 locally, RS256 via JWKS, or
//! claims an API Gateway JWT authorizer already verified). The student id
//! always comes from the token's `sub`, never from the request body.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use http::HeaderMap;
use http::header::AUTHORIZATION;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use tokio::sync::RwLock;
use tokio::time::Instant;

use super::problem::Problem;
use crate::config::{AuthConfig, AuthMode, ConfigError};
use crate::model::{INTEGRATION_NAMESPACE, Principal};
use crate::secrets;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    // Defaulted so a missing `sub` is reported as a missing claim, not as a malformed token.
    #[serde(default)]
    sub: String,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    token_use: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default, rename = "cognito:groups")]
    cognito_groups: Vec<String>,
}

/// Checks a request's credentials. Built once per process and shared.
pub struct Authenticator {
    verifier: Verifier,
    staff_group: String,
    cognito_client_id: Option<String>,
    token_use: Option<String>,
}

enum Verifier {
    Hs256 {
        key: DecodingKey,
        validation: Validation,
    },
    Jwks {
        cache: JwksCache,
        validation: Validation,
    },
    Authorizer,
}

/// Clock skew tolerated on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;
/// Time allowed for fetching the identity provider's keys.
const JWKS_TIMEOUT: Duration = Duration::from_secs(5);

impl Authenticator {
    pub fn from_config(
        config: &AuthConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let validation = |alg| {
            let mut v = Validation::new(alg);
            v.leeway = LEEWAY_SECONDS;
            // jsonwebtoken checks `exp` by default but `nbf` only when asked.
            v.validate_nbf = true;
            v.set_required_spec_claims(&["exp", "sub"]);
            if let Some(issuer) = &config.issuer {
                v.set_issuer(&[issuer]);
            }
            match (&config.audience, &config.cognito_client_id) {
                (Some(audience), None) => v.set_audience(&[audience]),
                // Cognito access tokens carry client_id, not aud; checked below.
                _ => v.validate_aud = false,
            }
            v
        };
        let verifier = match config.mode {
            AuthMode::Hs256 => {
                let reference = config
                    .hs256_secret
                    .as_deref()
                    .ok_or_else(|| missing("auth.hs256_secret"))?;
                let secret = secrets::resolve("auth.hs256_secret", reference, &env)?;
                Verifier::Hs256 {
                    key: DecodingKey::from_secret(secret.as_bytes()),
                    validation: validation(Algorithm::HS256),
                }
            }
            AuthMode::Jwks => {
                let url = config
                    .jwks_url
                    .clone()
                    .ok_or_else(|| missing("auth.jwks_url"))?;
                Verifier::Jwks {
                    cache: JwksCache::new(url, Duration::from_secs(config.jwks_refresh_seconds)),
                    validation: validation(Algorithm::RS256),
                }
            }
            AuthMode::Apigw => Verifier::Authorizer,
        };
        Ok(Authenticator {
            verifier,
            staff_group: config.staff_group.clone(),
            cognito_client_id: config.cognito_client_id.clone(),
            token_use: config.token_use.clone(),
        })
    }

    /// The calling student, from the bearer token or (in `apigw` mode) the
    /// claims the authorizer verified.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        authorizer_claims: Option<&BTreeMap<String, String>>,
    ) -> Result<Principal, Problem> {
        let claims = match &self.verifier {
            Verifier::Authorizer => {
                let claims = authorizer_claims.ok_or_else(|| {
                    Problem::unauthorized(
                        "no verified claims arrived from the API Gateway authorizer",
                    )
                })?;
                Claims {
                    sub: claims.get("sub").cloned().unwrap_or_default(),
                    client_id: claims.get("client_id").cloned(),
                    token_use: claims.get("token_use").cloned(),
                    groups: claims
                        .get("groups")
                        .map_or_else(Vec::new, |g| authorizer_list(g)),
                    cognito_groups: claims
                        .get("cognito:groups")
                        .map_or_else(Vec::new, |g| authorizer_list(g)),
                }
            }
            Verifier::Hs256 { key, validation } => decode(bearer(headers)?, key, validation)?,
            Verifier::Jwks { cache, validation } => {
                let token = bearer(headers)?;
                let header = jsonwebtoken::decode_header(token)
                    .map_err(|_| Problem::unauthorized("the bearer token is malformed"))?;
                let key = cache.key(header.kid.as_deref()).await?;
                decode(token, &key, validation)?
            }
        };
        if let Some(expected) = &self.cognito_client_id
            && claims.client_id.as_deref() != Some(expected)
        {
            return Err(Problem::unauthorized(
                "the token was issued to another app client",
            ));
        }
        if let Some(expected) = &self.token_use
            && claims.token_use.as_deref() != Some(expected)
        {
            return Err(Problem::unauthorized(format!(
                "expected an {expected} token"
            )));
        }
        check_subject(&claims.sub)?;
        let staff = claims
            .groups
            .iter()
            .chain(&claims.cognito_groups)
            .any(|g| *g == self.staff_group);
        Ok(Principal {
            student_id: claims.sub,
            staff,
        })
    }
}

/// A list claim as an API Gateway authorizer passes it on: `[a b]`.
fn authorizer_list(value: &str) -> Vec<String> {
    value
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split([' ', ','])
        .filter(|g| !g.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Longest accepted subject: student ids key stored items.
pub const MAX_SUBJECT_BYTES: usize = 200;

/// A subject the store can key student state by, outside the integrations' namespace.
fn check_subject(sub: &str) -> Result<(), Problem> {
    if sub.trim().is_empty() {
        return Err(Problem::unauthorized("the token has no subject (sub)"));
    }
    if sub.len() > MAX_SUBJECT_BYTES {
        return Err(Problem::unauthorized(format!(
            "the token's subject (sub) is longer than {MAX_SUBJECT_BYTES} bytes"
        )));
    }
    if sub.chars().any(char::is_control) {
        return Err(Problem::unauthorized(
            "the token's subject (sub) contains a control character",
        ));
    }
    if sub.starts_with(INTEGRATION_NAMESPACE) {
        return Err(Problem::unauthorized(format!(
            "the token's subject (sub) starts with `{INTEGRATION_NAMESPACE}`, which is reserved for integrations' students"
        )));
    }
    Ok(())
}

fn missing(key: &str) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: "required for this auth mode".into(),
    }
}

fn bearer(headers: &HeaderMap) -> Result<&str, Problem> {
    let value = headers
        .get(AUTHORIZATION)
        .ok_or_else(|| Problem::unauthorized("send an Authorization: Bearer <token> header"))?
        .to_str()
        .map_err(|_| Problem::unauthorized("the Authorization header is not text"))?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(Problem::unauthorized(
            "the Authorization header must be `Bearer <token>`",
        ));
    }
    Ok(token.trim())
}

fn decode(token: &str, key: &DecodingKey, validation: &Validation) -> Result<Claims, Problem> {
    jsonwebtoken::decode::<Claims>(token, key, validation)
        .map(|data| data.claims)
        .map_err(|e| {
            Problem::unauthorized(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::InvalidSignature => "the token's signature is not valid",
                ErrorKind::InvalidAudience => "the token is for another audience",
                ErrorKind::InvalidIssuer => "the token was issued by someone else",
                ErrorKind::InvalidAlgorithm => "the token is signed with an unexpected algorithm",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim (exp, sub)",
                _ => "the bearer token is malformed",
            })
        })
}

/// Signing keys from a JWKS URL, fetched once and kept across warm
/// invocations; refetched when a token names an unknown key id, at most
/// once per `min_refresh` so a flood of bad tokens cannot hammer the issuer.
struct JwksCache {
    url: String,
    http: reqwest::Client,
    min_refresh: Duration,
    state: RwLock<JwksState>,
}

#[derive(Default)]
struct JwksState {
    keys: HashMap<String, DecodingKey>,
    fetched_at: Option<Instant>,
}

impl JwksCache {
    fn new(url: String, min_refresh: Duration) -> Self {
        JwksCache {
            url,
            http: crate::http_client::shared(),
            min_refresh,
            state: RwLock::new(JwksState::default()),
        }
    }

    async fn key(&self, kid: Option<&str>) -> Result<DecodingKey, Problem> {
        if let Some(key) = Self::lookup(&*self.state.read().await, kid) {
            return Ok(key);
        }
        let mut state = self.state.write().await;
        // Another request may have refreshed while we waited for the lock.
        if let Some(key) = Self::lookup(&state, kid) {
            return Ok(key);
        }
        let may_refresh = state
            .fetched_at
            .is_none_or(|at| at.elapsed() >= self.min_refresh);
        if may_refresh {
            state.fetched_at = Some(Instant::now());
            match self.fetch().await {
                Ok(keys) => state.keys = keys,
                Err(message) => {
                    tracing::warn!(url = %self.url, error = %message, "JWKS fetch failed");
                    if state.keys.is_empty() {
                        return Err(Problem::unavailable(
                            "the token signing keys cannot be fetched right now",
                        )
                        .with_retry_after(5));
                    }
                }
            }
        }
        Self::lookup(&state, kid)
            .ok_or_else(|| Problem::unauthorized("the token is signed with an unknown key"))
    }

    fn lookup(state: &JwksState, kid: Option<&str>) -> Option<DecodingKey> {
        match kid {
            Some(kid) => state.keys.get(kid).cloned(),
            // Without a kid only an unambiguous single key will do.
            None if state.keys.len() == 1 => state.keys.values().next().cloned(),
            None => None,
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, DecodingKey>, String> {
        let response = self
            .http
            .get(&self.url)
            .timeout(JWKS_TIMEOUT)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("status {}", response.status()));
        }
        let set: JwkSet = response.json().await.map_err(|e| e.to_string())?;
        Ok(set
            .keys
            .iter()
            .filter_map(|jwk| {
                let kid = jwk.common.key_id.clone()?;
                DecodingKey::from_jwk(jwk).ok().map(|key| (kid, key))
            })
            .collect())
    }
}

/// An HS256 token for `student_id`, valid for `ttl`: for local use and tests.
pub fn dev_token(secret: &str, student_id: &str, ttl: Duration) -> String {
    dev_token_in_groups(secret, student_id, &[], ttl)
}

/// [`dev_token`] with a `groups` claim (e.g. the staff group).
pub fn dev_token_in_groups(
    secret: &str,
    student_id: &str,
    groups: &[&str],
    ttl: Duration,
) -> String {
    #[derive(Serialize)]
    struct DevClaims<'a> {
        sub: &'a str,
        exp: u64,
        iat: u64,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        groups: &'a [&'a str],
    }
    let now = jsonwebtoken::get_current_timestamp();
    let claims = DevClaims {
        sub: student_id,
        exp: now + ttl.as_secs(),
        iat: now,
        groups,
    };
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::authorizer_list;

    #[test]
    fn list_claims_from_an_authorizer_are_read() {
        assert_eq!(authorizer_list("[staff teachers]"), ["staff", "teachers"]);
        assert_eq!(authorizer_list("[staff,admins]"), ["staff", "admins"]);
        assert_eq!(authorizer_list("staff"), ["staff"]);
        assert!(authorizer_list("[]").is_empty());
    }
}
