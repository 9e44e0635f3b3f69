//! Outbound notifications to integrations: "a student needs a teacher"
//! alerts (seed 003 INTERVENE, safety rules that ask for it). Signed like
//! incoming webhooks, sent with a short timeout, never failing the request.

use std::time::Duration;

use serde_json::json;

use super::{App, StartupError};
use crate::api::webhook::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::config::Config;
use crate::model::integration_student;
use crate::secrets;

/// A teacher webhook that does not answer in time is not waited for.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Notifier {
    http: reqwest::Client,
    teacher_url: Option<String>,
    secret: Option<Vec<u8>>,
}

impl Notifier {
    pub fn from_config(
        config: &Config,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<Self, StartupError> {
        let secret = match &config.notifications.signing_secret {
            Some(reference) => {
                Some(secrets::resolve("notifications.signing_secret", reference, env)?.into_bytes())
            }
            None => None,
        };
        Ok(Notifier {
            http: crate::http_client::shared(),
            teacher_url: config.notifications.teacher_webhook_url.clone(),
            secret,
        })
    }
}

impl App {
    /// Tells the teacher channel that a student needs a person.
    pub(crate) async fn notify_teacher(&self, student_id: &str, thread_id: &str, reason: &str) {
        let Some(url) = &self.notifier.teacher_url else {
            tracing::info!(
                student_id,
                thread_id,
                reason,
                "student needs a teacher (no teacher webhook configured)"
            );
            return;
        };
        let now = self.clock.now();
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
            .notifier
            .http
            .post(url)
            .timeout(NOTIFY_TIMEOUT)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.notifier.secret {
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
