//! Delivering signed notifications (`session.completed`,
//! `intervention.needed`, `problem.advanced`) to an integration's
//! `outbound_url`, or for other students to `notifications.lms_webhook_url`.
//!
//! The body is signed like incoming webhooks (see [`super::signature`]).
//! A 5xx, 408, 429, timeout or refused connection is retried with doubling
//! pauses, up to `notifications.delivery_attempts` tries.
//!
//! Where it runs: a long-lived server sends from a background task. On
//! Lambda the sandbox is frozen once the response is out, so a task left
//! running would stall until the next request; there notifications wait in
//! an SQS queue (`notifications.queue_url`) for the `notify` function. The
//! queued message carries no secret: the sender looks the signing secret
//! and address up in its own configuration by the integration's id.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

use super::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use crate::config::Config;
use crate::secrets::{self, UnresolvedSecret};

pub const EVENT_ID_HEADER: &str = "x-tutorflow-event-id";
pub const EVENT_TYPE_HEADER: &str = "x-tutorflow-event";

/// Where notifications go and how hard delivery tries.
pub struct Outbound {
    http: reqwest::Client,
    lms: Option<Destination>,
    /// Each integration's own address (if it has one) and secret, by id.
    integrations: BTreeMap<String, (Option<String>, Vec<u8>)>,
    retries: Retries,
    /// Deliveries under way, so a test or a shutdown can wait for them.
    running: Mutex<JoinSet<()>>,
    /// Set where the process may be frozen after a response (Lambda):
    /// notifications wait there for the `notify` function.
    queue: Option<NotificationQueue>,
}

/// Where one notification goes, and the secret it is signed with.
#[derive(Debug, Clone)]
pub struct Destination {
    url: String,
    secret: Option<Vec<u8>>,
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

/// One notification, addressed by whose it is; the address and the
/// signing secret are looked up when it is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Notification {
    pub event_id: String,
    pub kind: String,
    /// The integration whose student it is; `None`: the LMS address.
    pub integration: Option<String>,
    pub body: String,
    pub thread_id: String,
    pub student_id: String,
}

/// A queued message the sender cannot act on; SQS keeps it for a retry
/// and, after the queue's receive limit, moves it to the dead-letter queue.
#[derive(Debug, thiserror::Error)]
#[error("unreadable notification message: {0}")]
pub struct UnreadableNotification(String);

impl Notification {
    /// A notification as it was queued.
    pub fn from_queued(message: &str) -> Result<Notification, UnreadableNotification> {
        serde_json::from_str(message).map_err(|e| UnreadableNotification(e.to_string()))
    }
}

/// What became of a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryOutcome {
    pub delivered: bool,
    pub tries: u32,
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
}

impl DeliveryOutcome {
    /// A notification with nowhere to go.
    pub fn undeliverable() -> DeliveryOutcome {
        DeliveryOutcome {
            delivered: false,
            tries: 0,
            last_status: None,
            last_error: Some("no outbound URL configured".to_owned()),
        }
    }
}

impl Outbound {
    pub fn from_config(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, UnresolvedSecret> {
        let n = &config.notifications;
        let lms_secret = match &n.signing_secret {
            Some(reference) => Some(
                secrets::resolve("notifications.signing_secret", reference, &env)?.into_bytes(),
            ),
            None => None,
        };
        let integrations = config
            .auth
            .webhooks
            .iter()
            .map(|i| {
                let setting = format!("auth.webhooks[{}].secret", i.id);
                let secret = secrets::resolve(&setting, &i.secret, &env)?;
                Ok((i.id.clone(), (i.outbound_url.clone(), secret.into_bytes())))
            })
            .collect::<Result<_, UnresolvedSecret>>()?;
        Ok(Outbound {
            http: crate::http_client::shared(),
            lms: n.lms_webhook_url.clone().map(|url| Destination {
                url,
                secret: lms_secret,
            }),
            integrations,
            retries: Retries {
                attempts: n.delivery_attempts.max(1),
                base: Duration::from_millis(n.retry_base_ms),
                timeout: Duration::from_millis(n.delivery_timeout_ms.max(1)),
            },
            running: Mutex::new(JoinSet::new()),
            queue: None,
        })
    }

    /// Notifications wait in `queue` instead of being sent from here.
    pub fn set_queue(&mut self, queue: Option<NotificationQueue>) {
        self.queue = queue;
    }

    /// Where `integration`'s notifications go (the LMS address for
    /// `None`, or for an integration not configured here).
    pub fn destination(&self, integration: Option<&str>) -> Option<Destination> {
        match integration.and_then(|i| self.integrations.get(i)) {
            Some((url, secret)) => Some(Destination {
                url: url.clone()?,
                secret: Some(secret.clone()),
            }),
            None => self.lms.clone(),
        }
    }

    /// Queues `notifications` where a queue is configured; returns those
    /// not queued, to be sent from here.
    pub async fn enqueue(&self, notifications: Vec<Notification>) -> Vec<Notification> {
        match &self.queue {
            Some(queue) => queue.enqueue(notifications).await,
            None => notifications,
        }
    }

    /// A sender that can outlive this borrow (for a background task).
    pub fn sender(&self) -> Sender {
        Sender {
            http: self.http.clone(),
            retries: self.retries,
        }
    }

    /// Runs a delivery in the background, where [`Outbound::flush`] can wait for it.
    pub fn run_in_background(&self, task: impl Future<Output = ()> + Send + 'static) {
        match self.running.lock() {
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

    /// Waits for the deliveries under way (tests; a graceful shutdown).
    pub async fn flush(&self) {
        let mut running = match self.running.lock() {
            Ok(mut running) => std::mem::take(&mut *running),
            Err(_) => return,
        };
        while running.join_next().await.is_some() {}
    }
}

/// Sends notifications, retrying as configured.
#[derive(Clone)]
pub struct Sender {
    http: reqwest::Client,
    retries: Retries,
}

impl Sender {
    /// Sends `d` to `to`, signed when it has a secret; `now` dates each
    /// try's signature.
    pub async fn send(
        &self,
        d: &Notification,
        to: &Destination,
        now: impl Fn() -> DateTime<Utc>,
    ) -> DeliveryOutcome {
        let Retries {
            attempts,
            base,
            timeout,
        } = self.retries;
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
            let mut request = self
                .http
                .post(&to.url)
                .timeout(timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(EVENT_ID_HEADER, &d.event_id)
                .header(EVENT_TYPE_HEADER, &d.kind);
            if let Some(secret) = &to.secret {
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
