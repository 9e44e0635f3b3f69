//! `ssm:` and `secretsmanager:` references read through a wiremock stand-in
//! for the AWS Parameters and Secrets Lambda Extension, answering with the
//! extension's shapes (SSM GetParameter and Secrets Manager GetSecretValue
//! results).

use std::collections::HashMap;

use reqwest::Url;
use serde_json::json;
use tutorflow::config::{Config, SecretRef};
use tutorflow::secrets::{SecretError, SecretResolver};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "session-token-of-the-function";

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k| map.get(k).cloned()
}

fn config(pairs: &[(&str, &str)]) -> Config {
    Config::load(None, env_of(pairs)).unwrap()
}

fn resolver(server: &MockServer) -> SecretResolver {
    SecretResolver::new(Url::parse(&server.uri()).unwrap(), Some(TOKEN.into()))
}

fn parameter(name: &str, kind: &str, value: &str) -> serde_json::Value {
    json!({
        "Parameter": {
            "ARN": format!("arn:aws:ssm:eu-west-1:123456789012:parameter{name}"),
            "DataType": "text",
            "LastModifiedDate": "2026-01-05T10:00:00Z",
            "Name": name,
            "Selector": null,
            "SourceResult": null,
            "Type": kind,
            "Value": value,
            "Version": 3
        },
        "ResultMetadata": {}
    })
}

fn secret_string(name: &str, value: Option<&str>) -> serde_json::Value {
    json!({
        "ARN": format!("arn:aws:secretsmanager:eu-west-1:123456789012:secret:{name}-AbCdEf"),
        "CreatedDate": "2026-01-05T10:00:00Z",
        "Name": name,
        "SecretBinary": if value.is_none() { json!("AAEC") } else { json!(null) },
        "SecretString": value,
        "VersionId": "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111",
        "VersionStages": ["AWSCURRENT"],
        "ResultMetadata": {}
    })
}

async fn mock_parameter(server: &MockServer, name: &str, kind: &str, value: &str) {
    Mock::given(method("GET"))
        .and(path("/systemsmanager/parameters/get"))
        .and(query_param("name", name))
        .and(query_param("withDecryption", "true"))
        .and(header("X-Aws-Parameters-Secrets-Token", TOKEN))
        .respond_with(ResponseTemplate::new(200).set_body_json(parameter(name, kind, value)))
        .expect(1)
        .mount(server)
        .await;
}

fn unavailable(err: SecretError) -> (String, String, String) {
    match err {
        SecretError::Unavailable {
            setting,
            reference,
            reason,
        } => (setting, reference, reason),
        other => panic!("expected an unreadable secret, got {other}"),
    }
}

#[tokio::test]
async fn reads_parameters_and_secrets_once_each_and_resolves_them() {
    let server = MockServer::builder().start().await;
    mock_parameter(
        &server,
        "/tutorflow/dev/drill-token-secret",
        "SecureString",
        "dr1ll",
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/secretsmanager/get"))
        .and(query_param("secretId", "tutorflow/dev/llm-api-key"))
        .and(header("X-Aws-Parameters-Secrets-Token", TOKEN))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(secret_string("tutorflow/dev/llm-api-key", Some("sk-abc"))),
        )
        // Two settings name the same secret: it is fetched once.
        .expect(1)
        .mount(&server)
        .await;
    let config = config(&[
        (
            "TUTORFLOW_DRILL_SECRET",
            "ssm:/tutorflow/dev/drill-token-secret",
        ),
        (
            "TUTORFLOW_OPENAI_API_KEY",
            "secretsmanager:tutorflow/dev/llm-api-key",
        ),
        (
            "TUTORFLOW_TRANSCRIPTION_API_KEY",
            "secretsmanager:tutorflow/dev/llm-api-key",
        ),
        ("TUTORFLOW_JWT_SECRET", "env:LOCAL_JWT"),
    ]);

    let secrets = resolver(&server).fetch(&config).await.unwrap();

    let env = env_of(&[("LOCAL_JWT", "from-env")]);
    let lookup = secrets.lookup(&env);
    let resolve = |reference: &str| SecretRef::parse(reference).unwrap().resolve(&lookup);
    assert_eq!(
        resolve("ssm:/tutorflow/dev/drill-token-secret").as_deref(),
        Some("dr1ll")
    );
    assert_eq!(
        resolve("secretsmanager:tutorflow/dev/llm-api-key").as_deref(),
        Some("sk-abc")
    );
    assert_eq!(resolve("env:LOCAL_JWT").as_deref(), Some("from-env"));
    assert_eq!(resolve("ssm:/not/fetched"), None);
    // Debug output names references only.
    let printed = format!("{secrets:?}");
    assert!(
        printed.contains("ssm:/tutorflow/dev/drill-token-secret"),
        "{printed}"
    );
    assert!(
        !printed.contains("dr1ll") && !printed.contains("sk-abc"),
        "{printed}"
    );
}

#[tokio::test]
async fn a_missing_parameter_is_an_error_naming_setting_and_reference() {
    let server = MockServer::builder().start().await;
    Mock::given(path("/systemsmanager/parameters/get"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_string("ParameterNotFound: an error occurred when calling GetParameter"),
        )
        // A 400 is final: no retry.
        .expect(1)
        .mount(&server)
        .await;
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/tutorflow/dev/missing")]);

    let err = resolver(&server).fetch(&config).await.unwrap_err();

    let message = err.to_string();
    let (setting, reference, reason) = unavailable(err);
    assert_eq!(setting, "drills.token_secret");
    assert_eq!(reference, "ssm:/tutorflow/dev/missing");
    assert!(
        reason.contains("400") && reason.contains("ParameterNotFound"),
        "{reason}"
    );
    assert!(message.contains("ssm:/tutorflow/dev/missing"), "{message}");
}

#[tokio::test]
async fn a_plain_string_parameter_or_a_binary_secret_is_refused() {
    let server = MockServer::builder().start().await;
    mock_parameter(&server, "/tutorflow/dev/plain", "String", "visible").await;
    Mock::given(path("/secretsmanager/get"))
        .respond_with(ResponseTemplate::new(200).set_body_json(secret_string("bin", None)))
        .mount(&server)
        .await;

    let plain = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/tutorflow/dev/plain")]);
    let (_, _, reason) = unavailable(resolver(&server).fetch(&plain).await.unwrap_err());
    assert!(reason.contains("not a SecureString"), "{reason}");
    assert!(!reason.contains("visible"), "{reason}");

    let binary = config(&[("TUTORFLOW_GEMINI_API_KEY", "secretsmanager:bin")]);
    let (setting, _, reason) = unavailable(resolver(&server).fetch(&binary).await.unwrap_err());
    assert_eq!(setting, "llm.gemini.api_key");
    assert!(reason.contains("binary"), "{reason}");
}

#[tokio::test]
async fn throttling_and_server_errors_are_retried() {
    let server = MockServer::builder().start().await;
    Mock::given(path("/systemsmanager/parameters/get"))
        .respond_with(ResponseTemplate::new(429).set_body_string("throttled"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/systemsmanager/parameters/get"))
        .respond_with(ResponseTemplate::new(502).set_body_string("bad gateway"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    mock_parameter(&server, "/tutorflow/dev/k", "SecureString", "v").await;
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/tutorflow/dev/k")]);

    let secrets = resolver(&server).fetch(&config).await.unwrap();
    assert_eq!(
        secrets.lookup(|_| None)("ssm:/tutorflow/dev/k").as_deref(),
        Some("v")
    );
}

#[tokio::test]
async fn a_failing_extension_gives_up_after_three_attempts() {
    let server = MockServer::builder().start().await;
    Mock::given(path("/secretsmanager/get"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal error"))
        .expect(3)
        .mount(&server)
        .await;
    let config = config(&[("TUTORFLOW_ANTHROPIC_API_KEY", "secretsmanager:k")]);

    let (_, _, reason) = unavailable(resolver(&server).fetch(&config).await.unwrap_err());
    assert!(reason.contains("500"), "{reason}");
}

#[tokio::test]
async fn a_call_during_init_explains_when_to_fetch() {
    let server = MockServer::builder().start().await;
    Mock::given(path("/systemsmanager/parameters/get"))
        .respond_with(
            ResponseTemplate::new(400).set_body_string("not ready to serve traffic, please wait"),
        )
        .mount(&server)
        .await;
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/d")]);

    let (_, _, reason) = unavailable(resolver(&server).fetch(&config).await.unwrap_err());
    assert!(reason.contains("first invocation"), "{reason}");
}

#[tokio::test]
async fn an_absent_extension_is_named() {
    // Bind a port, then free it: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/d")]);

    let err = SecretResolver::new(url, Some(TOKEN.into()))
        .fetch(&config)
        .await
        .unwrap_err();
    let (_, _, reason) = unavailable(err);
    assert!(reason.contains("layer"), "{reason}");
}

#[tokio::test]
async fn env_references_alone_need_no_extension_and_no_token() {
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "env:DRILL")]);
    let resolver = SecretResolver::from_env(env_of(&[])).unwrap();

    let secrets = resolver.fetch(&config).await.unwrap();
    assert_eq!(
        secrets.lookup(env_of(&[("DRILL", "d")]))("DRILL").as_deref(),
        Some("d")
    );
}

#[tokio::test]
async fn remote_references_need_the_session_token_and_a_valid_port() {
    let config = config(&[("TUTORFLOW_DRILL_SECRET", "ssm:/d")]);
    let err = SecretResolver::from_env(env_of(&[]))
        .unwrap()
        .fetch(&config)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("AWS_SESSION_TOKEN"), "{err}");

    let err = SecretResolver::from_env(env_of(&[(
        "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT",
        "27x3",
    )]))
    .unwrap_err();
    assert!(err.to_string().contains("27x3"), "{err}");
}
