//! Wiring from the runtime configuration: one provider (and connection
//! pool) per configured provider kind, shared by the calls that use it, and
//! per request the seam implementation each call is configured for — an LLM
//! one, or the offline one.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::time::Instant;

use super::anthropic::AnthropicProvider;
use super::calls::{
    LlmBinding, LlmDrillGrader, LlmExamEvaluator, LlmPlanner, LlmSafetyJudge, LlmSummarizer,
    LlmTutor,
};
use super::gemini::GeminiProvider;
use super::http::RetryPolicy;
use super::offline::{
    OfflineDrillGrader, OfflineExamEvaluator, OfflinePlanner, OfflineSafetyJudge,
    OfflineSummarizer, OfflineTutor,
};
use super::openai::{OpenAiFlavor, OpenAiProvider};
use super::provider::{ApiKey, Endpoint, LlmCall, LlmProvider};
use crate::config::{LlmConfig, ProviderEndpoint, ProviderKind};
use crate::content::Bundle;
use crate::model::{DrillGrader, ExamEvaluator, Planner, SafetyJudge, Summarizer, Tutor};
use crate::secrets::{self, UnresolvedSecret};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmSetupError {
    /// `section` is the provider's configuration section (`llm.openai`,
    /// `transcription`), so each message names the setting to fix.
    #[error("{section}.api_key is required: a call uses this provider")]
    MissingKey { section: &'static str },
    #[error("{section}.api_key names {reference}, which is not set")]
    UnsetKey {
        section: &'static str,
        reference: String,
    },
    #[error("{section}.api_key: {message}")]
    BadReference {
        section: &'static str,
        message: String,
    },
    #[error("{section}.base_url is empty")]
    NoBaseUrl { section: &'static str },
    #[error("{0}")]
    Moderation(String),
}

/// The providers of every call, built once per process.
#[derive(Debug, Clone, Default)]
pub struct LlmStack {
    by_call: BTreeMap<LlmCall, Arc<dyn LlmProvider>>,
}

impl LlmStack {
    /// Builds the providers `config` names, reading API keys through
    /// `env` (secret references such as `env:OPENAI_API_KEY`). A call
    /// configured as `offline` has no provider.
    pub fn from_config(
        config: &LlmConfig,
        env: impl Fn(&str) -> Option<String>,
        retry: RetryPolicy,
    ) -> Result<Self, LlmSetupError> {
        // One provider per kind, shared by every call that uses it.
        let mut built: Vec<(ProviderKind, Option<Arc<dyn LlmProvider>>)> = Vec::new();
        let mut by_call = BTreeMap::new();
        for call in LlmCall::ALL {
            let kind = call.provider(config);
            let provider = match built.iter().find(|(k, _)| *k == kind) {
                Some((_, p)) => p.clone(),
                None => {
                    let p = build(kind, config, &env, retry)?;
                    built.push((kind, p.clone()));
                    p
                }
            };
            if let Some(provider) = provider {
                by_call.insert(call, provider);
            }
        }
        Ok(LlmStack { by_call })
    }

    /// The provider serving `call`; `None` when it is offline.
    pub fn provider(&self, call: LlmCall) -> Option<&Arc<dyn LlmProvider>> {
        self.by_call.get(&call)
    }

    fn binding(
        &self,
        call: LlmCall,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Option<LlmBinding> {
        self.provider(call).map(|p| {
            let binding = LlmBinding::new(p.clone(), bundle.clone(), workflow);
            match deadline {
                Some(d) => binding.with_deadline(d),
                None => binding,
            }
        })
    }

    pub fn tutor(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn Tutor> {
        match self.binding(LlmCall::Tutor, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmTutor(b)),
            None => Box::new(OfflineTutor::new(bundle.clone(), workflow)),
        }
    }

    pub fn safety(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn SafetyJudge> {
        match self.binding(LlmCall::Safety, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmSafetyJudge(b)),
            None => Box::new(OfflineSafetyJudge),
        }
    }

    pub fn drill_grader(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn DrillGrader> {
        match self.binding(LlmCall::DrillGrading, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmDrillGrader(b)),
            None => Box::new(OfflineDrillGrader),
        }
    }

    pub fn exam_evaluator(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn ExamEvaluator> {
        match self.binding(LlmCall::ExamEvaluation, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmExamEvaluator(b)),
            None => Box::new(OfflineExamEvaluator),
        }
    }

    pub fn planner(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn Planner> {
        match self.binding(LlmCall::Planner, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmPlanner(b)),
            None => Box::new(OfflinePlanner),
        }
    }

    pub fn summarizer(
        &self,
        bundle: &Arc<Bundle>,
        workflow: &str,
        deadline: Option<Instant>,
    ) -> Box<dyn Summarizer> {
        match self.binding(LlmCall::Summary, bundle, workflow, deadline) {
            Some(b) => Box::new(LlmSummarizer(b)),
            None => Box::new(OfflineSummarizer),
        }
    }
}

/// The provider for `kind`; `None` for offline.
fn build(
    kind: ProviderKind,
    config: &LlmConfig,
    env: &impl Fn(&str) -> Option<String>,
    retry: RetryPolicy,
) -> Result<Option<Arc<dyn LlmProvider>>, LlmSetupError> {
    let provider: Arc<dyn LlmProvider> = match kind {
        ProviderKind::Offline => return Ok(None),
        ProviderKind::Openai => Arc::new(OpenAiProvider::new(
            endpoint("llm.openai", &config.openai, true, env)?,
            OpenAiFlavor::OpenAi,
            retry,
        )),
        ProviderKind::OpenaiCompatible => Arc::new(OpenAiProvider::new(
            endpoint(
                "llm.openai_compatible",
                &config.openai_compatible,
                false,
                env,
            )?,
            OpenAiFlavor::Compatible,
            retry,
        )),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(
            endpoint("llm.anthropic", &config.anthropic, true, env)?,
            retry,
        )),
        ProviderKind::Gemini => Arc::new(GeminiProvider::new(
            endpoint("llm.gemini", &config.gemini, true, env)?,
            retry,
        )),
    };
    Ok(Some(provider))
}

fn endpoint(
    section: &'static str,
    settings: &ProviderEndpoint,
    key_required: bool,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Endpoint, LlmSetupError> {
    if settings.base_url.trim().is_empty() {
        return Err(LlmSetupError::NoBaseUrl { section });
    }
    let api_key = match &settings.api_key {
        None if key_required => return Err(LlmSetupError::MissingKey { section }),
        None => None,
        Some(reference) => Some(api_key(section, reference, env)?),
    };
    Ok(Endpoint {
        base_url: settings.base_url.trim().to_owned(),
        api_key,
        default_model: settings.default_model.trim().to_owned(),
    })
}

/// The API key `reference` names, for the provider configured in `section`.
pub(super) fn api_key(
    section: &'static str,
    reference: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ApiKey, LlmSetupError> {
    secrets::resolve(&format!("{section}.api_key"), reference, env)
        .map(ApiKey::new)
        .map_err(|e| match e {
            UnresolvedSecret::Malformed(e) => LlmSetupError::BadReference {
                section,
                message: e.to_string(),
            },
            UnresolvedSecret::Unset { reference, .. } => {
                LlmSetupError::UnsetKey { section, reference }
            }
        })
}
