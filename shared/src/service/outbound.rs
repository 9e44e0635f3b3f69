//! Signed outbound notifications (`session.completed`,
//! `intervention.needed`, `problem.advanced`) to an integration's
//! `outbound_url`, or for other students to `notifications.lms_webhook_url`.
//!
//! Each event has an id derived from the turn that raised it, so the same
//! event is never sent under two ids and a receiver de-duplicates by it.
//! The body is signed like incoming webhooks: `sha256=HMAC(secret,
//! "{timestamp}.{body}")` in `x-tutorflow-signature`, the unix timestamp in
//! `x-tutorflow-timestamp`. Delivery starts after the turn is committed: a
//! 5xx, 408, 429, timeout or refused connection is retried with doubling
//! pauses, up to `notifications.delivery_attempts` tries; the outcome
//! (delivered, or failed after N tries) is recorded in the thread's turn
//! log. A failed delivery never fails the student's turn.
//!
//! Where it runs: a long-lived server sends from a background task. On
//! Lambda the sandbox is frozen once the response is out, so a task left
//! running would stall until the next request; there the request hands
//! each notification to an SQS queue (`notifications.queue_url`) and the
//! `notify` function delivers it. The queued message carries no secret:
//! the sender looks the signing secret and address up in its own
//! configuration by the integration's id.

use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::task::JoinSet;

use super::{App, StartupError};
use crate::api::webhook::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::config::Config;
use crate::model::OutboundEvent;
use crate::model::integration_student;
use crate::secrets;
use crate::store::{Store, TurnLog, UnitOfWork};

pub const EVENT_ID_HEADER: &str = "x-tutorflow-event-id";
pub const EVENT_TYPE_HEADER: &str = "x-tutorflow-event";

/// Where notifications go and how hard delivery tries.
pub struct Outbound {
    http: reqwest::Client,
    lms_url: Option<String>,
    lms_secret: Option<Vec<u8>>,
    retries: Retries,
    /// Deliveries under way, so a test or a shutdown can wait for them.
    running: Mutex<JoinSet<()>>,
    /// Set where the process may be frozen after a response (Lambda):
    /// notifications wait there for the `notify` function.
    pub(super) queue: Option<NotificationQueue>,
}

impl Outbound {
    pub fn from_config(
        config: &Config,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<Self, StartupError> {
        let n = &config.notifications;
        let lms_secret = match &n.signing_secret {
            Some(reference) => {
                Some(secrets::resolve("notifications.signing_secret", reference, env)?.into_bytes())
            }
            None => None,
        };
        Ok(Outbound {
            http: crate::http_client::shared(),
            lms_url: n.lms_webhook_url.clone(),
            lms_secret,
            retries: Retries {
                attempts: n.delivery_attempts.max(1),
                base: Duration::from_millis(n.retry_base_ms),
                timeout: Duration::from_millis(n.delivery_timeout_ms.max(1)),
            },
            running: Mutex::new(JoinSet::new()),
            queue: None,
        })
    }
}

/// How hard one notification is tried.
#[derive(Debug, Clone, Copy)]
struct Retries {
    attempts: u32,
    /// The pause before the second try, doubled for each after.
    base: Duration,
    /// How long one try waits for the receiver.
    timeout: Duration,
}

/// The SQS queue notifications wait in on Lambda.
#[derive(Clone)]
pub struct NotificationQueue {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl NotificationQueue {
    pub fn new(client: aws_sdk_sqs::Client, url: &str) -> Self {
        NotificationQueue {
            client,
            url: url.to_owned(),
        }
    }

    /// Queues `notifications` in one request (a turn raises at most a
    /// few, within SQS's batch of ten); returns those not queued.
    async fn enqueue(&self, notifications: Vec<Notification>) -> Vec<Notification> {
        let mut entries = Vec::with_capacity(notifications.len());
        for (i, n) in notifications.iter().enumerate() {
            let entry = serde_json::to_string(n)
                .map_err(|e| e.to_string())
                .and_then(|body| {
                    aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .message_body(body)
                        .build()
                        .map_err(|e| e.to_string())
                });
            match entry {
                Ok(entry) => entries.push(entry),
                Err(error) => {
                    tracing::warn!(event_id = %n.event_id, %error, "notification not queueable")
                }
            }
        }
        let failed: Vec<usize> = match self
            .client
            .send_message_batch()
            .queue_url(&self.url)
            .set_entries(Some(entries))
            .send()
            .await
        {
            Ok(sent) => sent
                .failed()
                .iter()
                .filter_map(|f| {
                    tracing::warn!(id = f.id(), error = f.message(), "notification not queued");
                    f.id().parse().ok()
                })
                .collect(),
            Err(e) => {
                let error = aws_sdk_sqs::error::DisplayErrorContext(e).to_string();
                tracing::warn!(%error, "could not queue the notifications");
                (0..notifications.len()).collect()
            }
        };
        notifications
            .into_iter()
            .enumerate()
            .filter(|(i, _)| failed.contains(i))
            .map(|(_, n)| n)
            .collect()
    }
}

/// One notification, addressed by whose it is; the address and the
/// signing secret are looked up when it is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Notification {
    event_id: String,
    kind: String,
    /// The integration whose student it is; `None`: the LMS address.
    integration: Option<String>,
    body: String,
    thread_id: String,
    student_id: String,
}

/// A queued message the sender cannot act on; SQS keeps it for a retry
/// and, after the queue's receive limit, moves it to the dead-letter queue.
#[derive(Debug, thiserror::Error)]
#[error("unreadable notification message: {0}")]
pub struct UnreadableNotification(String);

/// The event's id: the same for the same turn and event, whatever the
/// number of commit attempts or deliveries.
pub fn event_id(thread_id: &str, turn_id: &str, kind: &str, n: usize) -> String {
    let digest = Sha256::digest(format!("{thread_id}\n{turn_id}\n{kind}\n{n}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("evt_{hex}")
}

impl App {
    /// Sends the events a committed turn raised: queued, where a queue is
    /// configured, before the response; otherwise in the background.
    pub(crate) async fn send_events(
        &self,
        student_id: &str,
        thread_id: &str,
        turn_id: &str,
        events: Vec<OutboundEvent>,
    ) {
        if events.is_empty() {
            return;
        }
        let (integration, student) = match integration_student(student_id) {
            Some((integration, student)) => (Some(integration), student),
            None => (None, student_id),
        };
        if self.destination(integration).is_none() {
            for e in &events {
                tracing::info!(
                    thread_id,
                    event = e.kind.as_str(),
                    "no outbound URL configured; event not sent"
                );
            }
            return;
        }
        let now = self.clock.now();
        let mut notifications = Vec::with_capacity(events.len());
        for (n, event) in events.into_iter().enumerate() {
            let kind = event.kind.as_str();
            let id = event_id(thread_id, turn_id, kind, n);
            let mut body = json!({
                "id": id,
                "type": kind,
                "createdAt": now,
                "threadId": thread_id,
                "studentId": student,
                "data": event.data,
            });
            if let Some(integration) = integration {
                body["integration"] = json!(integration);
            }
            notifications.push(Notification {
                event_id: id,
                kind: kind.to_owned(),
                integration: integration.map(str::to_owned),
                body: body.to_string(),
                thread_id: thread_id.to_owned(),
                student_id: student_id.to_owned(),
            });
        }
        let unqueued = match &self.outbound.queue {
            Some(queue) => queue.enqueue(notifications).await,
            None => notifications,
        };
        // Better sent from here, at the risk of a freeze, than not at all.
        for notification in unqueued {
            self.deliver_in_background(notification);
        }
    }

    /// Where `integration`'s notifications go (the LMS address for
    /// `None`) and the secret they are signed with.
    fn destination(&self, integration: Option<&str>) -> Option<(String, Option<Vec<u8>>)> {
        match integration.and_then(|i| self.webhooks.integration(i)) {
            Some((config, secret)) => Some((config.outbound_url.clone()?, Some(secret.to_vec()))),
            None => Some((
                self.outbound.lms_url.clone()?,
                self.outbound.lms_secret.clone(),
            )),
        }
    }

    fn deliver_in_background(&self, notification: Notification) {
        let Some((url, secret)) = self.destination(notification.integration.as_deref()) else {
            return;
        };
        let http = self.outbound.http.clone();
        let store = self.store.clone();
        let clock = self.clock.clone();
        let retries = self.outbound.retries;
        let task = async move {
            let outcome = send_with_retries(
                &http,
                &notification,
                (&url, secret.as_deref()),
                retries,
                || clock.now(),
            )
            .await;
            record(store.as_ref(), &notification, &outcome, clock.now()).await;
        };
        match self.outbound.running.lock() {
            Ok(mut running) => {
                // Finished deliveries are dropped as new ones start.
                while running.try_join_next().is_some() {}
                running.spawn(task);
            }
            Err(_) => {
                tokio::spawn(task);
            }
        }
    }

    /// Delivers one notification taken from the queue (the `notify`
    /// function), retrying as configured and recording the outcome. Only a
    /// message that cannot be read is an error.
    pub async fn deliver_queued(&self, message: &str) -> Result<(), UnreadableNotification> {
        let notification: Notification =
            serde_json::from_str(message).map_err(|e| UnreadableNotification(e.to_string()))?;
        let outcome = match self.destination(notification.integration.as_deref()) {
            Some((url, secret)) => {
                send_with_retries(
                    &self.outbound.http,
                    &notification,
                    (&url, secret.as_deref()),
                    self.outbound.retries,
                    || self.clock.now(),
                )
                .await
            }
            None => DeliveryOutcome {
                delivered: false,
                tries: 0,
                last_status: None,
                last_error: Some("no outbound URL configured".to_owned()),
            },
        };
        record(
            self.store.as_ref(),
            &notification,
            &outcome,
            self.clock.now(),
        )
        .await;
        Ok(())
    }

    /// Waits for the deliveries under way (tests; a graceful shutdown).
    pub async fn flush_notifications(&self) {
        let mut running = match self.outbound.running.lock() {
            Ok(mut running) => std::mem::take(&mut *running),
            Err(_) => return,
        };
        while running.join_next().await.is_some() {}
    }
}

/// What became of a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DeliveryOutcome {
    delivered: bool,
    tries: u32,
    last_status: Option<u16>,
    last_error: Option<String>,
}

/// Sends `d` to `url`, signed with `secret` when there is one.
async fn send_with_retries(
    http: &reqwest::Client,
    d: &Notification,
    (url, secret): (&str, Option<&[u8]>),
    Retries {
        attempts,
        base,
        timeout,
    }: Retries,
    now: impl Fn() -> DateTime<Utc>,
) -> DeliveryOutcome {
    let mut outcome = DeliveryOutcome {
        delivered: false,
        tries: 0,
        last_status: None,
        last_error: None,
    };
    for n in 0..attempts {
        if n > 0 {
            tokio::time::sleep(base.saturating_mul(1 << (n - 1).min(10))).await;
        }
        outcome.tries = n + 1;
        let mut request = http
            .post(url)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(EVENT_ID_HEADER, &d.event_id)
            .header(EVENT_TYPE_HEADER, &d.kind);
        if let Some(secret) = secret {
            // Signed at each try: a receiver's replay window holds for a retry too.
            let timestamp = now().timestamp();
            request = request
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(SIGNATURE_HEADER, sign(secret, timestamp, d.body.as_bytes()));
        }
        let retry = match request.body(d.body.clone()).send().await {
            Ok(r) if r.status().is_success() => {
                outcome.delivered = true;
                outcome.last_status = Some(r.status().as_u16());
                outcome.last_error = None;
                break;
            }
            Ok(r) => {
                let status = r.status().as_u16();
                outcome.last_status = Some(status);
                outcome.last_error = Some(format!("HTTP {status}"));
                status >= 500 || status == 408 || status == 429
            }
            Err(e) => {
                outcome.last_status = None;
                outcome.last_error = Some(if e.is_timeout() {
                    "timed out".to_owned()
                } else {
                    "unreachable".to_owned()
                });
                true
            }
        };
        tracing::warn!(
            event_id = %d.event_id,
            event = %d.kind,
            attempt = n + 1,
            error = outcome.last_error.as_deref().unwrap_or(""),
            retry,
            "outbound notification not delivered"
        );
        if !retry {
            break;
        }
    }
    outcome
}

/// Records the delivery in the thread's turn log.
async fn record(
    store: &dyn Store,
    d: &Notification,
    outcome: &DeliveryOutcome,
    now: DateTime<Utc>,
) {
    let status = if outcome.delivered {
        "delivered"
    } else {
        "failed"
    };
    if outcome.delivered {
        tracing::info!(event_id = %d.event_id, event = %d.kind, tries = outcome.tries, "outbound notification delivered");
    } else {
        tracing::warn!(event_id = %d.event_id, event = %d.kind, tries = outcome.tries, "outbound notification failed");
    }
    let mut work = UnitOfWork::new();
    work.log_turn(TurnLog {
        thread_id: d.thread_id.clone(),
        turn_id: format!("delivery-{}", d.event_id),
        student_id: d.student_id.clone(),
        created_at: now,
        entry: json!({
            "delivery": {
                "eventId": d.event_id,
                "event": d.kind,
                "status": status,
                "tries": outcome.tries,
                "httpStatus": outcome.last_status,
                "error": outcome.last_error,
            }
        }),
    });
    if let Err(e) = store.commit(work).await {
        tracing::warn!(event_id = %d.event_id, error = %e, "could not record the delivery");
    }
}

#[cfg(test)]
mod tests {
    use super::event_id;

    #[test]
    fn an_event_keeps_its_id_and_events_do_not_share_one() {
        let a = event_id("t", "turn-1", "problem.advanced", 0);
        assert_eq!(a, event_id("t", "turn-1", "problem.advanced", 0));
        assert_ne!(a, event_id("t", "turn-2", "problem.advanced", 0));
        assert_ne!(a, event_id("t", "turn-1", "session.completed", 1));
        assert!(a.starts_with("evt_") && a.len() == 36);
    }
}
