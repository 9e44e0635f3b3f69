//! The LLM calls' model settings and the prompt template each uses.

use serde::{Deserialize, Serialize};

/// Model settings per LLM call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmCalls {
    pub tutor: LlmCallSettings,
    pub safety: LlmCallSettings,
    pub drill_grading: LlmCallSettings,
    pub exam_evaluation: LlmCallSettings,
    pub planner: LlmCallSettings,
    pub summary: LlmCallSettings,
}

impl Default for LlmCalls {
    fn default() -> Self {
        let call = |max_tokens, timeout_ms| LlmCallSettings {
            max_tokens,
            timeout_ms,
            ..LlmCallSettings::default()
        };
        LlmCalls {
            tutor: call(900, 20_000),
            safety: call(100, 3_000),
            drill_grading: call(300, 8_000),
            exam_evaluation: call(300, 8_000),
            planner: call(800, 15_000),
            summary: call(600, 15_000),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmCallSettings {
    /// Model name for the configured provider; empty uses the provider's default.
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub timeout_ms: u64,
    /// For providers with reasoning controls.
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl Default for LlmCallSettings {
    fn default() -> Self {
        LlmCallSettings {
            model: String::new(),
            temperature: 0.3,
            max_tokens: 800,
            timeout_ms: 15_000,
            reasoning_effort: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

/// Which prompt template each LLM call uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptNames {
    pub tutor_system: String,
    pub tutor_policy: String,
    pub tutor_context: String,
    pub tutor_input: String,
    pub drill_grading: String,
    pub exam_evaluation: String,
    pub planner: String,
    pub summary: String,
    pub safety: String,
}
