//! Authentication against real token shapes: HS256, RS256 through a JWKS
//! endpoint (served by wiremock), and API Gateway authorizer claims.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use tutorflow::api::auth::{Authenticator, dev_token};
use tutorflow::config::{AuthConfig, AuthMode};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn keys_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/keys")
}

fn bearer(token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    h
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

fn hs256_config() -> AuthConfig {
    AuthConfig {
        mode: AuthMode::Hs256,
        hs256_secret: Some("env:SECRET".into()),
        ..AuthConfig::default()
    }
}

fn env(key: &str) -> Option<String> {
    (key == "SECRET").then(|| "local-secret".to_owned())
}

fn rs256_token(claims: serde_json::Value, kid: Option<&str>) -> String {
    let pem = std::fs::read(keys_dir().join("test-rs256-private.pem")).unwrap();
    let mut header = Header::new(Algorithm::RS256);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_rsa_pem(&pem).unwrap()).unwrap()
}

async fn jwks_server() -> MockServer {
    let server = MockServer::builder().start().await;
    let jwks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(keys_dir().join("test-jwks.json")).unwrap())
            .unwrap();
    Mock::given(method("GET"))
        .and(path("/.well-known/jwks.json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(jwks))
        .mount(&server)
        .await;
    server
}

fn jwks_config(server: &MockServer) -> AuthConfig {
    AuthConfig {
        mode: AuthMode::Jwks,
        jwks_url: Some(format!("{}/.well-known/jwks.json", server.uri())),
        issuer: Some("https://issuer.example".into()),
        audience: Some("tutor-app".into()),
        jwks_refresh_seconds: 300,
        ..AuthConfig::default()
    }
}

#[tokio::test]
async fn hs256_tokens_identify_the_student() {
    let auth = Authenticator::from_config(&hs256_config(), env).unwrap();
    let token = dev_token("local-secret", "student-42", Duration::from_secs(60));
    let who = auth.authenticate(&bearer(&token), None).await.unwrap();
    assert_eq!(who.student_id, "student-42");
}

#[tokio::test]
async fn bad_hs256_tokens_are_refused_with_a_reason() {
    let auth = Authenticator::from_config(&hs256_config(), env).unwrap();
    let reason = |headers: HeaderMap| {
        let auth = &auth;
        async move { auth.authenticate(&headers, None).await.unwrap_err() }
    };
    let forged = dev_token("another-secret", "student-42", Duration::from_secs(60));
    assert!(reason(bearer(&forged)).await.detail.contains("signature"));
    let expired = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &json!({"sub": "s", "exp": now() - 3600}),
        &EncodingKey::from_secret(b"local-secret"),
    )
    .unwrap();
    assert!(reason(bearer(&expired)).await.detail.contains("expired"));
    let no_sub = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &json!({"exp": now() + 60}),
        &EncodingKey::from_secret(b"local-secret"),
    )
    .unwrap();
    assert!(reason(bearer(&no_sub)).await.detail.contains("claim"));
    assert!(
        reason(HeaderMap::new())
            .await
            .detail
            .contains("Authorization")
    );
    let mut basic = HeaderMap::new();
    basic.insert(
        AUTHORIZATION,
        HeaderValue::from_static("Basic dXNlcjpwdw=="),
    );
    assert!(reason(basic).await.detail.contains("Bearer"));
    assert!(
        reason(bearer("not.a.jwt"))
            .await
            .detail
            .contains("malformed")
    );
    for problem in [
        reason(bearer(&forged)).await,
        reason(HeaderMap::new()).await,
    ] {
        assert_eq!(problem.status, 401);
    }
}

#[tokio::test]
async fn a_missing_secret_is_reported_at_startup() {
    let err = Authenticator::from_config(&hs256_config(), |_| None)
        .err()
        .unwrap();
    assert!(err.to_string().contains("auth.hs256_secret"), "{err}");
}

#[tokio::test]
async fn rs256_tokens_are_checked_against_the_jwks() {
    let server = jwks_server().await;
    let auth = Authenticator::from_config(&jwks_config(&server), |_| None).unwrap();
    let claims = json!({"sub": "s-7", "exp": now() + 600, "iss": "https://issuer.example", "aud": "tutor-app"});
    let who = auth
        .authenticate(
            &bearer(&rs256_token(claims.clone(), Some("test-key-1"))),
            None,
        )
        .await
        .unwrap();
    assert_eq!(who.student_id, "s-7");
    // The keys are cached: a second token needs no second fetch.
    auth.authenticate(&bearer(&rs256_token(claims, Some("test-key-1"))), None)
        .await
        .unwrap();
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_key_ids_refetch_at_most_once_per_interval() {
    let server = jwks_server().await;
    let auth = Authenticator::from_config(&jwks_config(&server), |_| None).unwrap();
    let claims = json!({"sub": "s-7", "exp": now() + 600, "iss": "https://issuer.example", "aud": "tutor-app"});
    for _ in 0..5 {
        let err = auth
            .authenticate(
                &bearer(&rs256_token(claims.clone(), Some("rotated-key"))),
                None,
            )
            .await
            .unwrap_err();
        assert!(err.detail.contains("unknown key"), "{err:?}");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn issuer_audience_and_cognito_client_are_enforced() {
    let server = jwks_server().await;
    let auth = Authenticator::from_config(&jwks_config(&server), |_| None).unwrap();
    let detail = |claims: serde_json::Value| {
        let auth = &auth;
        async move {
            auth.authenticate(&bearer(&rs256_token(claims, Some("test-key-1"))), None)
                .await
                .unwrap_err()
                .detail
        }
    };
    let exp = now() + 600;
    assert!(
        detail(json!({"sub": "s", "exp": exp, "iss": "https://evil.example", "aud": "tutor-app"}))
            .await
            .contains("issued by")
    );
    assert!(
        detail(json!({"sub": "s", "exp": exp, "iss": "https://issuer.example", "aud": "other"}))
            .await
            .contains("audience")
    );

    let mut cognito = jwks_config(&server);
    cognito.audience = None;
    cognito.cognito_client_id = Some("app-client".into());
    cognito.token_use = Some("access".into());
    let auth = Authenticator::from_config(&cognito, |_| None).unwrap();
    let token = |client: &str, usage: &str| {
        rs256_token(
            json!({"sub": "s", "exp": exp, "iss": "https://issuer.example", "client_id": client, "token_use": usage}),
            Some("test-key-1"),
        )
    };
    assert!(
        auth.authenticate(&bearer(&token("app-client", "access")), None)
            .await
            .is_ok()
    );
    let err = auth
        .authenticate(&bearer(&token("other", "access")), None)
        .await
        .unwrap_err();
    assert!(err.detail.contains("app client"));
    let err = auth
        .authenticate(&bearer(&token("app-client", "id")), None)
        .await
        .unwrap_err();
    assert!(err.detail.contains("access token"));
}

#[tokio::test]
async fn a_jwks_outage_is_a_retryable_503() {
    let server = MockServer::builder().start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let auth = Authenticator::from_config(&jwks_config(&server), |_| None).unwrap();
    let claims = json!({"sub": "s", "exp": now() + 600});
    let err = auth
        .authenticate(&bearer(&rs256_token(claims, Some("test-key-1"))), None)
        .await
        .unwrap_err();
    assert_eq!(err.status, 503);
    assert!(err.retry_after.is_some());
}

#[tokio::test]
async fn authorizer_claims_are_trusted_in_apigw_mode() {
    let config = AuthConfig {
        mode: AuthMode::Apigw,
        ..AuthConfig::default()
    };
    let auth = Authenticator::from_config(&config, |_| None).unwrap();
    let claims = BTreeMap::from([("sub".to_owned(), "s-9".to_owned())]);
    let who = auth
        .authenticate(&HeaderMap::new(), Some(&claims))
        .await
        .unwrap();
    assert_eq!(who.student_id, "s-9");
    assert_eq!(
        auth.authenticate(&HeaderMap::new(), None)
            .await
            .unwrap_err()
            .status,
        401
    );
}
