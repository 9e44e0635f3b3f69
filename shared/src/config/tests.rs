use super::*;
use std::collections::HashMap;
use std::path::Path;

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
    let unknown =
        r#"[{"id": "x", "secret": "env:S", "student_prefix": "", "course_id": "c", "extra": 1}]"#;
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
