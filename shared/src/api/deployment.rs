//! What a function deployed on AWS Lambda needs from its configuration.
//! The handler checks it at cold start, so a misconfigured stack fails
//! naming the setting rather than on some later request; the
//! infrastructure test runs the same check on each function's environment
//! in the SAM template (infra/template.yaml).

use super::routes::Function;
use crate::config::{AuthMode, Config, ConfigError, ContentSourceKind, SecretRef, StoreBackend};

impl Function {
    /// Whether `config` is a complete deployed configuration for this
    /// function: DynamoDB state and S3 content with no emulator endpoints,
    /// tokens verified by the gateway's JWT authorizer, every secret read
    /// from SSM or Secrets Manager (never a plain environment variable),
    /// and what this function's own routes need.
    pub fn check_lambda_config(self, config: &Config) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| {
            Err(ConfigError::Invalid {
                key: key.into(),
                message: format!("{message} (function {})", self.name()),
            })
        };
        if config.store.backend != StoreBackend::Dynamodb {
            return invalid("store.backend", "must be \"dynamodb\" on Lambda");
        }
        if config.store.endpoint_url.is_some() {
            return invalid("store.endpoint_url", "is an emulator override");
        }
        if config.content.source != ContentSourceKind::S3 {
            return invalid("content.source", "must be \"s3\" on Lambda");
        }
        if config.content.endpoint_url.is_some() {
            return invalid("content.endpoint_url", "is an emulator override");
        }
        if config.auth.mode != AuthMode::Apigw {
            return invalid(
                "auth.mode",
                "must be \"apigw\": the HTTP API's JWT authorizer verifies tokens",
            );
        }
        for (setting, reference) in config.secret_references() {
            if !SecretRef::parse(reference)?.is_remote() {
                return invalid(
                    &setting,
                    "must be an ssm: or secretsmanager: reference on Lambda",
                );
            }
        }
        match self {
            // The turn issues drill cards with signed tokens; drill-grade
            // verifies them.
            Function::Turn | Function::DrillGrade if config.drills.token_secret.is_none() => {
                invalid("drills.token_secret", "signs drill tokens")
            }
            Function::Transcribe if config.transcription.upload_bucket.is_none() => invalid(
                "transcription.upload_bucket",
                "receives audio uploads (POST /transcribe/uploads)",
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Config {
        let map: HashMap<&str, &str> = pairs.iter().copied().collect();
        Config::load(None, |k| map.get(k).map(|v| (*v).to_owned())).unwrap()
    }

    const DEPLOYED: &[(&str, &str)] = &[
        ("TUTORFLOW_STORE", "dynamodb"),
        ("TUTORFLOW_TABLE", "tutorflow-dev"),
        ("TUTORFLOW_CONTENT_SOURCE", "s3"),
        ("TUTORFLOW_CONTENT_BUCKET", "content"),
        ("TUTORFLOW_AUTH_MODE", "apigw"),
        (
            "TUTORFLOW_DRILL_SECRET",
            "ssm:/tutorflow/dev/drill-token-secret",
        ),
        ("TUTORFLOW_AUDIO_BUCKET", "audio"),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut pairs = DEPLOYED.to_vec();
        pairs.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
        pairs.extend(extra.iter().copied().filter(|(_, v)| !v.is_empty()));
        pairs
    }

    fn refused(function: Function, pairs: &[(&str, &str)]) -> String {
        function
            .check_lambda_config(&config(pairs))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_complete_deployed_configuration_passes_for_every_function() {
        for function in Function::ALL {
            function.check_lambda_config(&config(DEPLOYED)).unwrap();
        }
    }

    #[test]
    fn local_settings_are_refused_naming_the_setting() {
        let err = refused(Function::Summary, &with(&[("TUTORFLOW_STORE", "")]));
        assert!(
            err.contains("store.backend") && err.contains("summary"),
            "{err}"
        );
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_AUTH_MODE", "hs256")]));
        assert!(err.contains("auth.mode"), "{err}");
        let err = refused(
            Function::Turn,
            &with(&[("TUTORFLOW_DYNAMODB_ENDPOINT", "http://127.0.0.1:5000")]),
        );
        assert!(err.contains("store.endpoint_url"), "{err}");
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_CONTENT_SOURCE", "fs")]));
        assert!(err.contains("content.source"), "{err}");
    }

    #[test]
    fn secrets_must_not_be_plain_environment_variables() {
        let err = refused(
            Function::Turn,
            &with(&[("TUTORFLOW_OPENAI_API_KEY", "env:OPENAI_API_KEY")]),
        );
        assert!(err.contains("llm.openai.api_key"), "{err}");
    }

    #[test]
    fn each_function_needs_what_its_routes_use() {
        let no_drill_key = with(&[("TUTORFLOW_DRILL_SECRET", "")]);
        for function in [Function::Turn, Function::DrillGrade] {
            let err = refused(function, &no_drill_key);
            assert!(err.contains("drills.token_secret"), "{err}");
        }
        Function::Summary
            .check_lambda_config(&config(&no_drill_key))
            .unwrap();
        let err = refused(
            Function::Transcribe,
            &with(&[("TUTORFLOW_AUDIO_BUCKET", "")]),
        );
        assert!(err.contains("transcription.upload_bucket"), "{err}");
    }
}
