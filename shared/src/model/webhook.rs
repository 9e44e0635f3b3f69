//! The n8n / LMS webhook shapes (docs/webhooks.md), snake_case as those
//! tools send them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::thread::ProgressionAction;

/// `POST /webhooks/turn` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookTurnRequest {
    pub student_id: String,
    pub session_id: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_problem: Option<WebhookProblem>,
    /// Starts a problem-set session with these problems (5 to 10), in
    /// order; read on the session's first message only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<WebhookProblem>>,
    /// Starts a problem-set session with one of the course's sets; read on
    /// the session's first message only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_set_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = answer_alias_schema)]
pub struct WebhookProblem {
    pub id: String,
    pub text: String,
    #[serde(alias = "ans")]
    pub correct_answer: String,
}

/// schemars ignores serde aliases; without this the published schema would
/// refuse `ans`, which the server reads as `correct_answer`. Exactly one of
/// the two is required: serde refuses both at once as a duplicate field.
fn answer_alias_schema(schema: &mut schemars::Schema) {
    if let Some(properties) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        properties.insert(
            "ans".into(),
            serde_json::json!({ "type": "string", "description": "Another name for `correct_answer`." }),
        );
    }
    if let Some(required) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
        required.retain(|name| name != "correct_answer");
    }
    schema.insert(
        "oneOf".into(),
        serde_json::json!([{ "required": ["correct_answer"] }, { "required": ["ans"] }]),
    );
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookTurnResponse {
    pub output: String,
    pub session_status: WebhookSessionStatus,
    /// Diagnostics for whoever builds the integration (routing category,
    /// code grade, focus unit, turn id); not a stable contract.
    #[serde(rename = "_debug", default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookSessionStatus {
    pub current_problem_index: u32,
    pub action: ProgressionAction,
    pub problems_remaining: u32,
    /// `active`, `completed` or `abandoned` (a problem-set session left
    /// inactive past its time to live).
    #[serde(default = "active")]
    pub status: String,
    /// The thread this session's messages go to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

fn active() -> String {
    "active".to_owned()
}

/// A signed notification sent to an integration (outbound webhook).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum OutboundEventKind {
    /// A problem-set session ended (completed, or abandoned past its time
    /// to live): `data` is its report.
    #[serde(rename = "session.completed")]
    SessionCompleted,
    /// A student needs a person: stuck on a problem, or a safety flag.
    #[serde(rename = "intervention.needed")]
    InterventionNeeded,
    /// A problem was finished (solved or skipped) and the next one presented.
    #[serde(rename = "problem.advanced")]
    ProblemAdvanced,
}

impl OutboundEventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboundEventKind::SessionCompleted => "session.completed",
            OutboundEventKind::InterventionNeeded => "intervention.needed",
            OutboundEventKind::ProblemAdvanced => "problem.advanced",
        }
    }
}

/// An event a turn raised, before it is addressed and signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboundEvent {
    pub kind: OutboundEventKind,
    pub data: serde_json::Value,
}
