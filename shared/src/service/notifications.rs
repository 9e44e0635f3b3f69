//! The notifications a committed turn raises (`session.completed`,
//! `intervention.needed`, `problem.advanced`) and the record of each
//! delivery in the thread's turn log. Delivering them is the outbound
//! adapter's ([`crate::integrations::outbound`]).
//!
//! Each event has an id derived from the turn that raised it, so the same
//! event is never sent under two ids and a receiver de-duplicates by it.
//! Delivery starts after the turn is committed; its outcome (delivered, or
//! failed after N tries) is recorded in the thread's turn log. A failed
//! delivery never fails the student's turn.

use chrono::{DateTime, Utc};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::Service;
use crate::integrations::outbound::{DeliveryOutcome, Notification, UnreadableNotification};
use crate::model::{OutboundEvent, integration_student};
use crate::store::{Store, TurnLog, UnitOfWork};

/// The event's id: the same for the same turn and event, whatever the
/// number of commit attempts or deliveries.
pub fn event_id(thread_id: &str, turn_id: &str, kind: &str, n: usize) -> String {
    let digest = Sha256::digest(format!("{thread_id}\n{turn_id}\n{kind}\n{n}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("evt_{hex}")
}

impl Service {
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
        if self.outbound.destination(integration).is_none() {
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
        // Better sent from here, at the risk of a freeze, than not at all.
        for notification in self.outbound.enqueue(notifications).await {
            self.deliver_in_background(notification);
        }
    }

    fn deliver_in_background(&self, notification: Notification) {
        let Some(to) = self
            .outbound
            .destination(notification.integration.as_deref())
        else {
            return;
        };
        let sender = self.outbound.sender();
        let store = self.store.clone();
        let clock = self.clock.clone();
        self.outbound.run_in_background(async move {
            let outcome = sender.send(&notification, &to, || clock.now()).await;
            record(store.as_ref(), &notification, &outcome, clock.now()).await;
        });
    }

    /// Delivers one notification taken from the queue (the `notify`
    /// function), retrying as configured and recording the outcome. Only a
    /// message that cannot be read is an error.
    pub async fn deliver_queued(&self, message: &str) -> Result<(), UnreadableNotification> {
        let notification = Notification::from_queued(message)?;
        let outcome = match self
            .outbound
            .destination(notification.integration.as_deref())
        {
            Some(to) => {
                self.outbound
                    .sender()
                    .send(&notification, &to, || self.clock.now())
                    .await
            }
            None => DeliveryOutcome::undeliverable(),
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
        self.outbound.flush().await;
    }
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
        committed_at: now,
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
