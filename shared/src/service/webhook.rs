//! `POST /webhooks/turn`: a turn from an n8n or LMS integration (seed 003
//! payload and reply). The integration is authenticated by its signature;
//! it acts only for its own students, and each of its sessions is a thread.

use sha2::{Digest, Sha256};

use super::error::ServiceError;
use super::threads::snapshot_or_new;
use super::turn::{Shape, WebhookSettings};
use super::{App, Output};
use crate::api::auth::Principal;
use crate::api::problem::Problem;
use crate::config::WebhookIntegration;
use crate::model::{
    ClientEvent, Mode, SessionState, Thread, ThreadStatus, TurnRequest, WebhookTurnRequest,
};
use crate::store::{Expected, IdempotencyLock, StoreError, ThreadChange, UnitOfWork};

/// Longest student id an integration may send.
const MAX_STUDENT_ID_BYTES: usize = 150;

/// The thread of an integration's session: the same session id from two
/// integrations never meets.
fn session_thread_id(integration: &str, session_id: &str) -> String {
    let digest = Sha256::digest(format!("{integration}\n{session_id}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("wh-{hex}")
}

impl App {
    pub async fn webhook_turn(
        &self,
        integration: &WebhookIntegration,
        request: WebhookTurnRequest,
        lock: Option<&IdempotencyLock>,
    ) -> Result<Output, ServiceError> {
        let student = request.student_id.as_str();
        if student.trim().is_empty()
            || student.len() > MAX_STUDENT_ID_BYTES
            || student.chars().any(char::is_control)
        {
            return Err(ServiceError::invalid_field(
                "student_id",
                format!(
                    "student_id must be 1 to {MAX_STUDENT_ID_BYTES} bytes of text without control characters"
                ),
            ));
        }
        if !student.starts_with(&integration.student_prefix) {
            return Err(Problem::forbidden(format!(
                "integration `{}` may only act for students whose id starts with `{}`",
                integration.id, integration.student_prefix
            ))
            .with_field("student_id")
            .into());
        }
        if request.session_id.trim().is_empty() || request.session_id.len() > 200 {
            return Err(ServiceError::invalid_field(
                "session_id",
                "session_id must be 1 to 200 characters",
            ));
        }
        if request.message.trim().is_empty() {
            return Err(ServiceError::invalid_field(
                "message",
                "the message is empty",
            ));
        }
        super::text_hygiene::check("message", &request.message)?;
        super::text_hygiene::check("session_id", &request.session_id)?;
        if let Some(problem) = &request.current_problem {
            super::text_hygiene::check("current_problem.text", &problem.text)?;
            super::text_hygiene::check("current_problem.correct_answer", &problem.correct_answer)?;
        }
        let thread_id = session_thread_id(&integration.id, &request.session_id);
        let who = Principal::integration_student(&integration.id, student);
        self.ensure_session_thread(integration, &who, &thread_id)
            .await?;
        let settings = WebhookSettings {
            problem: request.current_problem.clone(),
        };
        let turn = TurnRequest {
            course_id: None,
            message_text: Some(request.message.clone()),
            message_latex: None,
            client_event: ClientEvent::None,
            client_turn_id: None,
        };
        self.run_turn(&who, &thread_id, turn, lock, Shape::Webhook(&settings))
            .await
    }

    /// Creates the session's thread on its first message.
    async fn ensure_session_thread(
        &self,
        integration: &WebhookIntegration,
        who: &Principal,
        thread_id: &str,
    ) -> Result<(), ServiceError> {
        match self.store.get_thread(thread_id, 0).await? {
            Some(record) if record.thread.student_id == who.student_id => return Ok(()),
            Some(_) => {
                return Err(
                    Problem::forbidden("this session belongs to another student")
                        .with_field("session_id")
                        .into(),
                );
            }
            None => {}
        }
        let bundle = self.bundle().await;
        let course = bundle.course(&integration.course_id).ok_or_else(|| {
            ServiceError::internal(format!(
                "integration `{}` names course `{}`, which is not in the content bundle",
                integration.id, integration.course_id
            ))
        })?;
        let now = self.clock.now();
        let snapshot_read = self.store.get_snapshot(&who.student_id, &course.id).await?;
        let thread = Thread {
            thread_id: thread_id.to_owned(),
            student_id: who.student_id.clone(),
            course_id: course.id.clone(),
            mode: Mode::Guided,
            status: ThreadStatus::Active,
            goal: None,
            unit_id: None,
            created_at: now,
            updated_at: now,
            title: None,
            preview: None,
            paused_at: None,
            ended_at: None,
            session: SessionState::default(),
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread, Vec::new()));
        if snapshot_read.is_none() {
            work.put_snapshot(
                snapshot_or_new(None, &who.student_id, &course.id, &course.entry_unit),
                Expected::New,
            );
        }
        match self.store.commit(work).await {
            // Another request created it first: it is there either way.
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_map_to_stable_separate_threads() {
        let a = session_thread_id("n8n", "sess-1");
        assert_eq!(a, session_thread_id("n8n", "sess-1"));
        assert_ne!(a, session_thread_id("lms", "sess-1"));
        assert_ne!(a, session_thread_id("n8n", "sess-2"));
        assert!(a.starts_with("wh-") && a.len() == 35);
    }
}
