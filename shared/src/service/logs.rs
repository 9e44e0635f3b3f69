//! `GET /threads/{threadId}/logs`: a thread's turn logs, oldest first, a
//! page at a time — what code read (category, intent, grade, mapped
//! units), the policy chain, the action taken and whether the reply was
//! the model's or the fallback, the model call's usage, when the turn was
//! committed, how long each stage took and the tokens the tutor call cost
//! (estimated offline). The stored entry never holds the prompt. Logs
//! expire after the configured retention in both stores; only the
//! thread's owner can read them.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::error::ServiceError;
use super::threads::owned_thread;
use super::{JSON, Output, Service};
use crate::model::Principal;
use crate::store::{Order, PageRequest, TurnLog};

/// How the logs are written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    /// One readable line per turn (`text/plain`).
    Text,
}

/// A page of a thread's turn logs.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLogs {
    pub thread_id: String,
    pub logs: Vec<TurnLogView>,
    /// Pass as `cursor` for the next page.
    pub next_cursor: Option<String>,
}

/// One turn's log.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnLogView {
    pub turn_id: String,
    /// When the turn was planned: its time in the conversation.
    pub created_at: DateTime<Utc>,
    /// When the turn was committed to the store, after the model call.
    pub committed_at: DateTime<Utc>,
    /// The policy chain and outcome of the turn, as logged, with its stage
    /// timings (`timings`) and the tutor call's tokens (`tokens`).
    pub entry: Value,
}

impl Service {
    pub async fn thread_logs(
        &self,
        who: &Principal,
        thread_id: &str,
        page: PageRequest,
        format: LogFormat,
    ) -> Result<Output, ServiceError> {
        owned_thread(self, who, thread_id, 0).await?;
        let logs = self
            .store
            .list_turn_logs(thread_id, Order::OldestFirst, &page, self.clock.now())
            .await?;
        match format {
            LogFormat::Json => Output::json(
                200,
                &ThreadLogs {
                    thread_id: thread_id.to_owned(),
                    logs: logs
                        .items
                        .into_iter()
                        .map(|l| TurnLogView {
                            turn_id: l.turn_id,
                            created_at: l.created_at,
                            committed_at: l.committed_at,
                            entry: l.entry,
                        })
                        .collect(),
                    next_cursor: logs.next_cursor,
                },
            )
            .map(|o| Output {
                content_type: JSON,
                ..o
            }),
            LogFormat::Text => {
                let mut body: String = logs.items.iter().map(text_line).collect();
                if let Some(cursor) = logs.next_cursor {
                    body.push_str(&format!("next cursor: {cursor}\n"));
                }
                Ok(Output {
                    status: 200,
                    body,
                    content_type: "text/plain; charset=utf-8",
                })
            }
        }
    }
}

/// `2026-11-24T19:00:00Z turn t1 (committed 2026-11-24T19:00:01.482Z): category conceptual_question (intent question), action SOCRATIC_QUESTION on ratios, origin offline, validation valid; focus ratios, allowed [SOCRATIC_QUESTION]; ms: lease wait 0, load 0.41, plan 0.09, llm 0.02, apply 0.05, until commit 0.6 (attempt 1); tokens: prompt 2210, completion 96 (estimated)`.
fn text_line(log: &TurnLog) -> String {
    let e = &log.entry;
    let s = |v: &Value| match v {
        Value::Null => "-".to_owned(),
        Value::String(t) => t.clone(),
        other => other.to_string(),
    };
    let allowed = e["policy"]["allowedActions"]
        .as_array()
        .map(|a| a.iter().map(&s).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let mut line = format!(
        "{} turn {} (committed {}): category {} (intent {}), action {} on {}, origin {}, validation {}; focus {}, allowed [{}]",
        log.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        log.turn_id,
        log.committed_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        s(&e["category"]),
        s(&e["intent"]),
        s(&e["action"]),
        s(&e["targetUnitId"]),
        s(&e["origin"]),
        s(&e["validation"]["outcome"]),
        s(&e["policy"]["focusUnitId"]),
        allowed,
    );
    if !e["grade"].is_null() {
        line.push_str(&format!(", grade {}", s(&e["grade"]["result"])));
    }
    if !e["safety"].is_null() {
        line.push_str(&format!(", safety {}", s(&e["safety"]["category"])));
    }
    let t = &e["timings"];
    if t.is_object() {
        line.push_str(&format!(
            "; ms: lease wait {}, load {}, plan {}, llm {}, apply {}, until commit {} (attempt {})",
            s(&t["leaseWaitMs"]),
            s(&t["loadMs"]),
            s(&t["planMs"]),
            s(&t["llmMs"]),
            s(&t["applyMs"]),
            s(&t["untilCommitMs"]),
            s(&t["commitAttempt"]),
        ));
    }
    let tokens = &e["tokens"];
    if tokens.is_object() {
        let estimated = if tokens["estimated"] == Value::Bool(true) {
            " (estimated)"
        } else {
            ""
        };
        line.push_str(&format!(
            "; tokens: prompt {}, completion {}{estimated}",
            s(&tokens["prompt"]),
            s(&tokens["completion"]),
        ));
    }
    line.push('\n');
    line
}
