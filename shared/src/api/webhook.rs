//! n8n and LMS integrations: each signs its requests (see
//! [`crate::integrations::signature`]) and may act only for its own students.

use http::HeaderMap;

use super::problem::Problem;
use crate::config::{ConfigError, WebhookIntegration};
use crate::integrations::signature;
/// The signature scheme, here too: integrations and tests sign their
/// requests with it.
pub use crate::integrations::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::secrets;

pub const INTEGRATION_HEADER: &str = "x-tutorflow-integration";

struct Integration {
    config: WebhookIntegration,
    secret: Vec<u8>,
}

pub struct WebhookVerifier {
    integrations: Vec<Integration>,
    tolerance_seconds: i64,
}

impl WebhookVerifier {
    pub fn from_config(
        integrations: &[WebhookIntegration],
        tolerance_seconds: u64,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let integrations = integrations
            .iter()
            .enumerate()
            .map(|(n, i)| {
                // The id names the integration's students (see Principal::integration_student).
                let valid = !i.id.is_empty()
                    && i.id.len() <= 64
                    && i.id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
                if !valid {
                    return Err(ConfigError::Invalid {
                        key: format!("auth.webhooks[{n}].id"),
                        message: format!(
                            "`{}` must be 1 to 64 letters, digits, `-`, `_` or `.`",
                            i.id
                        ),
                    });
                }
                if integrations[..n].iter().any(|other| other.id == i.id) {
                    return Err(ConfigError::Invalid {
                        key: format!("auth.webhooks[{n}].id"),
                        message: format!("integration `{}` is configured twice", i.id),
                    });
                }
                let secret =
                    secrets::resolve(&format!("auth.webhooks[{}].secret", i.id), &i.secret, &env)?;
                Ok(Integration {
                    config: i.clone(),
                    secret: secret.into_bytes(),
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(WebhookVerifier {
            integrations,
            tolerance_seconds: i64::try_from(tolerance_seconds).unwrap_or(i64::MAX),
        })
    }

    /// An integration's settings and resolved secret, by id.
    pub fn integration(&self, id: &str) -> Option<(&WebhookIntegration, &[u8])> {
        self.integrations
            .iter()
            .find(|i| i.config.id == id)
            .map(|i| (&i.config, i.secret.as_slice()))
    }

    /// The integration that signed this request, checked against `now`
    /// (unix seconds): a signature outside the tolerance window is refused,
    /// so a captured request cannot be replayed later.
    pub fn verify(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now: i64,
    ) -> Result<&WebhookIntegration, Problem> {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| Problem::unauthorized(format!("missing {name} header")))
        };
        let id = header(INTEGRATION_HEADER)?;
        let integration = self
            .integrations
            .iter()
            .find(|i| i.config.id == id)
            .ok_or_else(|| Problem::unauthorized(format!("unknown integration `{id}`")))?;
        let timestamp: i64 = header(TIMESTAMP_HEADER)?.parse().map_err(|_| {
            Problem::unauthorized(format!("{TIMESTAMP_HEADER} must be unix seconds"))
        })?;
        if (now - timestamp).abs() > self.tolerance_seconds {
            return Err(Problem::unauthorized(
                "the request timestamp is outside the accepted window; sign each request when sending it",
            ));
        }
        let signature = header(SIGNATURE_HEADER)?;
        let tag = signature
            .strip_prefix("sha256=")
            .and_then(decode_hex)
            .ok_or_else(|| {
                Problem::unauthorized(format!("{SIGNATURE_HEADER} must be sha256=<hex>"))
            })?;
        if !signature::verify(&integration.secret, timestamp, body, &tag) {
            return Err(Problem::unauthorized(
                "the webhook signature does not match the body",
            ));
        }
        Ok(&integration.config)
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn verifier() -> WebhookVerifier {
        let integration = WebhookIntegration {
            id: "n8n".into(),
            secret: "env:HOOK".into(),
            student_prefix: "n8n:".into(),
            course_id: "prealgebra".into(),
            outbound_url: None,
        };
        WebhookVerifier::from_config(&[integration], 300, |k| {
            (k == "HOOK").then(|| "s3cret".to_owned())
        })
        .unwrap()
    }

    fn headers(id: &str, ts: i64, signature: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(INTEGRATION_HEADER, HeaderValue::from_str(id).unwrap());
        h.insert(
            TIMESTAMP_HEADER,
            HeaderValue::from_str(&ts.to_string()).unwrap(),
        );
        h.insert(SIGNATURE_HEADER, HeaderValue::from_str(signature).unwrap());
        h
    }

    #[test]
    fn accepts_a_fresh_correct_signature() {
        let body = br#"{"student_id":"n8n:7"}"#;
        let sig = sign(b"s3cret", 1_000, body);
        let v = verifier();
        let found = v.verify(&headers("n8n", 1_000, &sig), body, 1_100).unwrap();
        assert_eq!(found.id, "n8n");
    }

    /// A signature computed outside this code (Python's `hmac` and
    /// `openssl dgst -sha256 -hmac s3cret` agree on it), so a change to how
    /// requests are signed cannot pass by changing `sign` and `verify` alike.
    #[test]
    fn a_fixed_test_vector_is_accepted_and_signed_alike() {
        let body = br#"{"student_id":"n8n:42","session_id":"s-1","message":"what is 7 + 5?"}"#;
        let vector = "sha256=e4c09d7146034c4c4bf8eae399da8a58e4e53cb3d9c209b78044d7530d7b0b45";
        let v = verifier();
        let found = v
            .verify(&headers("n8n", 1_700_000_000, vector), body, 1_700_000_010)
            .unwrap();
        assert_eq!(found.id, "n8n");
        assert_eq!(sign(b"s3cret", 1_700_000_000, body), vector);
    }

    #[test]
    fn refuses_tampering_replays_and_strangers() {
        let v = verifier();
        let body = br#"{"student_id":"n8n:7"}"#;
        let sig = sign(b"s3cret", 1_000, body);
        let detail = |r: Result<&WebhookIntegration, Problem>| r.unwrap_err().detail;
        assert!(
            detail(v.verify(
                &headers("n8n", 1_000, &sig),
                b"{\"student_id\":\"n8n:8\"}",
                1_000
            ))
            .contains("does not match")
        );
        assert!(detail(v.verify(&headers("n8n", 1_000, &sig), body, 1_301)).contains("window"));
        assert!(detail(v.verify(&headers("n8n", 1_000, &sig), body, 699)).contains("window"));
        assert!(
            detail(v.verify(&headers("lms", 1_000, &sig), body, 1_000))
                .contains("unknown integration")
        );
        assert!(
            detail(v.verify(&headers("n8n", 1_000, "sha256=zz"), body, 1_000))
                .contains("sha256=<hex>")
        );
        let wrong_key = sign(b"other", 1_000, body);
        assert!(
            detail(v.verify(&headers("n8n", 1_000, &wrong_key), body, 1_000))
                .contains("does not match")
        );
        assert!(detail(v.verify(&HeaderMap::new(), body, 1_000)).contains("missing"));
    }

    #[test]
    fn a_missing_secret_is_a_config_error() {
        let integration = WebhookIntegration {
            id: "lms".into(),
            secret: "env:NOPE".into(),
            student_prefix: "lms:".into(),
            course_id: "prealgebra".into(),
            outbound_url: None,
        };
        let err = WebhookVerifier::from_config(&[integration], 300, |_| None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("env:NOPE"), "{err}");
    }
}
