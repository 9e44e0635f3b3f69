//! What a function deployed on AWS Lambda needs from its configuration:
//! the contract infra/template.yaml is held to (shared/tests/api/infra_template.rs
//! runs this check on each function's environment in the template). The
//! Lambda adapter does not enforce it at cold start, because the same
//! binaries run locally under `cargo lambda watch` with the local defaults
//! (SQLite, files, HS256 tokens, `env:` secrets).

use super::routes::Function;
use crate::config::{
    AuthMode, Config, ConfigError, ContentSourceKind, ENV_OVERRIDES, SecretRef, StoreBackend,
};

/// Settings every deployed function must be given, because their defaults
/// are local ones or guesses (the table name `tutorflow`, the development
/// drill key). Every function builds the whole `api::App`, which signs
/// and checks drill tokens.
const REQUIRED_EVERYWHERE: &[&str] = &[
    "store.backend",
    "store.table",
    "content.source",
    "content.bucket",
    "content.prefix",
    "auth.mode",
    "drills.token_secret",
];

impl Function {
    /// The configuration keys this function must be given on Lambda, where
    /// the environment (`config::ENV_OVERRIDES`) is its only configuration.
    pub fn required_settings(self) -> Vec<&'static str> {
        let own: &[&str] = match self {
            // POST /transcribe/uploads presigns uploads into this bucket.
            Function::Transcribe => &["transcription.upload_bucket"],
            Function::Turn
            | Function::DrillGrade
            | Function::ExamSubmit
            | Function::SupportViewed
            | Function::Summary => &[],
        };
        REQUIRED_EVERYWHERE.iter().chain(own).copied().collect()
    }

    /// Whether `config`, loaded from `env`, is a complete deployed
    /// configuration for this function: every required setting given,
    /// DynamoDB state and S3 content with no emulator endpoints, tokens
    /// verified by the gateway's JWT authorizer, every secret read from SSM
    /// or Secrets Manager (never a plain environment variable).
    pub fn check_lambda_config(
        self,
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| {
            Err(ConfigError::Invalid {
                key: key.into(),
                message: format!("{message} (function {})", self.name()),
            })
        };
        for key in self.required_settings() {
            let var = ENV_OVERRIDES
                .iter()
                .find(|(_, k, _)| *k == key)
                .map(|(var, _, _)| *var)
                .expect("every required setting has an environment variable");
            if env(var).is_none_or(|v| v.is_empty()) {
                return invalid(key, &format!("must be set on Lambda ({var})"));
            }
        }
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const DEPLOYED: &[(&str, &str)] = &[
        ("TUTORFLOW_STORE", "dynamodb"),
        ("TUTORFLOW_TABLE", "tutorflow-dev"),
        ("TUTORFLOW_CONTENT_SOURCE", "s3"),
        ("TUTORFLOW_CONTENT_BUCKET", "content"),
        ("TUTORFLOW_CONTENT_PREFIX", "tutorflow"),
        ("TUTORFLOW_AUTH_MODE", "apigw"),
        (
            "TUTORFLOW_DRILL_SECRET",
            "ssm:/tutorflow/dev/drill-token-secret",
        ),
        ("TUTORFLOW_AUDIO_BUCKET", "audio"),
    ];

    /// `DEPLOYED` with `changes` applied (an empty value removes the variable).
    fn with(changes: &[(&'static str, &'static str)]) -> HashMap<&'static str, &'static str> {
        let mut env: HashMap<_, _> = DEPLOYED.iter().copied().collect();
        for (var, value) in changes {
            env.remove(var);
            if !value.is_empty() {
                env.insert(var, value);
            }
        }
        env
    }

    fn check(function: Function, env: &HashMap<&str, &str>) -> Result<(), ConfigError> {
        let lookup = |k: &str| env.get(k).map(|v| (*v).to_owned());
        let config = Config::load(None, lookup)?;
        function.check_lambda_config(&config, lookup)
    }

    fn refused(function: Function, env: &HashMap<&str, &str>) -> String {
        check(function, env).unwrap_err().to_string()
    }

    #[test]
    fn a_complete_deployed_configuration_passes_for_every_function() {
        for function in Function::ALL {
            check(function, &with(&[])).unwrap();
        }
    }

    #[test]
    fn settings_with_local_defaults_must_be_given() {
        let err = refused(Function::Summary, &with(&[("TUTORFLOW_TABLE", "")]));
        assert!(
            err.contains("store.table")
                && err.contains("TUTORFLOW_TABLE")
                && err.contains("summary"),
            "{err}"
        );
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_CONTENT_PREFIX", "")]));
        assert!(err.contains("content.prefix"), "{err}");
    }

    #[test]
    fn local_settings_are_refused_naming_the_setting() {
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_AUTH_MODE", "hs256")]));
        assert!(err.contains("auth.mode"), "{err}");
        let err = refused(
            Function::Turn,
            &with(&[("TUTORFLOW_DYNAMODB_ENDPOINT", "http://127.0.0.1:5000")]),
        );
        assert!(err.contains("store.endpoint_url"), "{err}");
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_CONTENT_SOURCE", "fs")]));
        assert!(err.contains("content.source"), "{err}");
        let err = refused(Function::Turn, &with(&[("TUTORFLOW_STORE", "sqlite")]));
        assert!(err.contains("store.backend"), "{err}");
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
        for function in Function::ALL {
            let err = refused(function, &no_drill_key);
            assert!(err.contains("drills.token_secret"), "{err}");
        }
        let no_audio_bucket = with(&[("TUTORFLOW_AUDIO_BUCKET", "")]);
        check(Function::Summary, &no_audio_bucket).unwrap();
        let err = refused(
            Function::Transcribe,
            &with(&[("TUTORFLOW_AUDIO_BUCKET", "")]),
        );
        assert!(err.contains("transcription.upload_bucket"), "{err}");
    }
}
