//! The n8n / LMS webhook shapes (seed 003), snake_case as those tools send them.

use serde::{Deserialize, Serialize};

use super::thread::ProgressionAction;

/// `POST /webhooks/turn` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookTurnRequest {
    pub student_id: String,
    pub session_id: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_problem: Option<WebhookProblem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookProblem {
    pub id: String,
    pub text: String,
    #[serde(alias = "ans")]
    pub correct_answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookTurnResponse {
    pub output: String,
    pub session_status: WebhookSessionStatus,
    #[serde(rename = "_debug", default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookSessionStatus {
    pub current_problem_index: u32,
    pub action: ProgressionAction,
    pub problems_remaining: u32,
}
