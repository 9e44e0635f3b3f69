//! "A student needs a teacher" alerts to the configured teacher webhook:
//! sent when a safety rule asks for a person, or a student stays stuck.
//! Signed like incoming webhooks, sent with a short timeout, never failing
//! the request that raised them.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;

use super::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::config::Config;
use crate::model::integration_student;
use crate::secrets::{self, UnresolvedSecret};

/// A teacher webhook that does not answer in time is not waited for.
const ALERT_TIMEOUT: Duration = Duration::from_secs(2);

pub struct TeacherAlerts {
    http: reqwest::Client,
    url: Option<String>,
    secret: Option<Vec<u8>>,
}

impl TeacherAlerts {
    pub fn from_config(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, UnresolvedSecret> {
        let secret = match &config.notifications.signing_secret {
            Some(reference) => {
                Some(secrets::resolve("notifications.signing_secret", reference, env)?.into_bytes())
            }
            None => None,
        };
        Ok(TeacherAlerts {
            http: crate::http_client::shared(),
            url: config.notifications.teacher_webhook_url.clone(),
            secret,
        })
    }

    /// Tells the teacher channel that a student needs a person; without a
    /// teacher webhook, says so in the log.
    pub async fn send(&self, student_id: &str, thread_id: &str, reason: &str, now: DateTime<Utc>) {
        let Some(url) = &self.url else {
            tracing::info!(
                student_id,
                thread_id,
                reason,
                "student needs a teacher (no teacher webhook configured)"
            );
            return;
        };
        // An integration's student is named as the integration knows them.
        let (integration, student) = match integration_student(student_id) {
            Some((integration, student)) => (Some(integration), student),
            None => (None, student_id),
        };
        let mut body = json!({
            "event": "student_needs_teacher",
            "studentId": student,
            "threadId": thread_id,
            "reason": reason,
            "at": now,
        });
        if let Some(integration) = integration {
            body["integration"] = json!(integration);
        }
        let body = body.to_string();
        let mut request = self
            .http
            .post(url)
            .timeout(ALERT_TIMEOUT)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.secret {
            let timestamp = now.timestamp();
            request = request
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(SIGNATURE_HEADER, sign(secret, timestamp, body.as_bytes()));
        }
        match request.body(body).send().await {
            Ok(r) if r.status().is_success() => {
                tracing::info!(student_id, thread_id, reason, "teacher notified");
            }
            Ok(r) => {
                tracing::warn!(status = %r.status(), reason, "teacher webhook refused the alert")
            }
            Err(e) => tracing::warn!(error = %e, reason, "teacher webhook unreachable"),
        }
    }
}
