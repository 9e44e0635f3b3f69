//! `POST /webhooks/turn`: a turn from an n8n or LMS integration (payload
//! and reply in docs/webhooks.md). The integration is authenticated by its signature;
//! it acts only for its own students, and each of its sessions is a thread.

use sha2::{Digest, Sha256};

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::threads::{
    RECENT_MESSAGES, ThreadReads, check_problem_count, owned_thread, snapshot_or_new,
};
use super::turn::{Shape, TurnTimes, WebhookSettings};
use super::{Output, Service};
use crate::config::WebhookIntegration;
use chrono::{DateTime, Utc};
use std::time::Instant;

use crate::content::Course;
use crate::content::course::CourseProblemSet;
use crate::content::workflow::ProblemSetMode;
use crate::engine::modes::problem_set;
use crate::model::{
    ClientEvent, Mode, ModeState, Principal, ProblemEntry, ProblemSetState, SessionState, Thread,
    ThreadStatus, TurnRequest, WebhookTurnRequest,
};
use crate::store::{StoreError, ThreadChange, UnitOfWork, WriteCondition};

/// Longest student id an integration may send.
const MAX_STUDENT_ID_BYTES: usize = 150;

/// The thread of an integration's session: the same session id from two
/// integrations never meets.
fn session_thread_id(integration: &str, session_id: &str) -> String {
    let digest = Sha256::digest(format!("{integration}\n{session_id}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("wh-{hex}")
}

impl Service {
    pub async fn webhook_turn(
        &self,
        integration: &WebhookIntegration,
        request: WebhookTurnRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let student = request.student_id.as_str();
        // Bidi overrides too: an id shows in teachers' alerts and LMS views.
        super::text_hygiene::check("student_id", student)?;
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
            return Err(ServiceError::Forbidden {
                field: "student_id".to_owned(),
                detail: format!(
                    "integration `{}` may only act for students whose id starts with `{}`",
                    integration.id, integration.student_prefix
                ),
            });
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
        let sent = request
            .current_problem
            .iter()
            .map(|p| ("current_problem".to_owned(), p));
        let listed = (request.problems.iter().flatten().enumerate())
            .map(|(i, p)| (format!("problems[{i}]"), p));
        for (field, problem) in sent.chain(listed) {
            for (name, text) in [
                ("id", &problem.id),
                ("text", &problem.text),
                ("correct_answer", &problem.correct_answer),
            ] {
                super::text_hygiene::check(&format!("{field}.{name}"), text)?;
            }
        }
        let who = Principal::integration_student(&integration.id, student);
        let turn = TurnRequest {
            course_id: None,
            message_text: Some(request.message.clone()),
            message_latex: None,
            client_event: ClientEvent::None,
            client_turn_id: None,
        };
        let started = Instant::now();
        self.check_turn_request(&turn)?;
        // One turn at a time per session, whichever of its threads the
        // message goes to: only its integration's turns reach a session's
        // threads, so the session's lease is each thread's. Taken before
        // the session's thread is looked up, that look-up is the turn's read.
        let session = session_thread_id(&integration.id, &request.session_id);
        let lease = self.lease_session(&who, &session).await?;
        // On the heap, as an app turn's.
        let result = Box::pin(async {
            let reading = Instant::now();
            let (thread_id, reads, notice) =
                self.session_thread(integration, &who, &request).await?;
            let settings = WebhookSettings {
                problem: request.current_problem.clone(),
                notice,
            };
            let times = TurnTimes {
                started,
                read_time: reading.elapsed(),
            };
            self.leased_turn(
                &who,
                &thread_id,
                reads,
                turn,
                idempotency,
                Shape::Webhook(&settings),
                &lease,
                times,
                None,
            )
            .await
        })
        .await;
        self.release_thread(lease, result.is_ok()).await;
        result.map(|done| done.output)
    }

    /// The thread the session's message goes to, created on its first
    /// message, with the student's state in its course (read alongside it,
    /// in the integration's course). A problem-set session that has ended
    /// (finished, or idle past its time to live) is not continued: the
    /// message starts the session's next thread, and the reply says so.
    async fn session_thread(
        &self,
        integration: &WebhookIntegration,
        who: &Principal,
        request: &WebhookTurnRequest,
    ) -> Result<(String, ThreadReads, Option<String>), ServiceError> {
        let base = session_thread_id(&integration.id, &request.session_id);
        let mut notice = None;
        for generation in 1..=MAX_SESSION_THREADS {
            let thread_id = if generation == 1 {
                base.clone()
            } else {
                format!("{base}-{generation}")
            };
            let any_thread =
                async { Ok(self.store.get_thread(&thread_id, RECENT_MESSAGES).await?) };
            let found = Box::pin(self.read_with_course(
                who,
                &thread_id,
                Some(&integration.course_id),
                any_thread,
            ))
            .await?;
            let Some(mut reads) = found else {
                self.create_session_thread(integration, who, &thread_id, request)
                    .await?;
                let reads = self
                    .read_thread_and_course(
                        who,
                        &thread_id,
                        Some(&integration.course_id),
                        RECENT_MESSAGES,
                    )
                    .await?;
                return Ok((thread_id, reads, notice));
            };
            let record = &reads.record;
            if record.thread.student_id != who.student_id {
                return Err(ServiceError::Forbidden {
                    field: "session_id".to_owned(),
                    detail: "this session belongs to another student".to_owned(),
                });
            }
            let expired = self.expire_idle(who, record).await?;
            let ended = record.thread.mode == Mode::ProblemSet
                && (expired || record.thread.status == ThreadStatus::Completed);
            if !ended {
                if expired {
                    // The session carries on past its close: as it now stands.
                    reads.record = owned_thread(self, who, &thread_id, RECENT_MESSAGES).await?;
                }
                return Ok((thread_id, reads, notice));
            }
            notice = Some(if expired {
                // The time to live it was closed under, so the integration
                // can tell its student why.
                let bundle = self.bundle().await;
                match self.runtime(&bundle, &record.thread.course_id) {
                    Ok(rt) => format!(
                        "Your last session ended after {} minutes without a message, so this is a new one.",
                        rt.workflow().modes.problem_set.session_ttl_minutes
                    ),
                    Err(_) => "Your last session ended after a while without a message, so this is a new one."
                        .to_owned(),
                }
            } else {
                "Your last problem set is finished, so this is a new session.".to_owned()
            });
        }
        Err(ServiceError::SessionLimit(format!(
            "session `{}` has had {MAX_SESSION_THREADS} threads; use a new session_id",
            request.session_id
        )))
    }

    /// Creates a session's thread: a problem set when the integration sends
    /// problems, else a guided conversation.
    async fn create_session_thread(
        &self,
        integration: &WebhookIntegration,
        who: &Principal,
        thread_id: &str,
        request: &WebhookTurnRequest,
    ) -> Result<(), ServiceError> {
        let bundle = self.bundle().await;
        let course = bundle.course(&integration.course_id).ok_or_else(|| {
            ServiceError::internal(format!(
                "integration `{}` names course `{}`, which is not in the content bundle",
                integration.id, integration.course_id
            ))
        })?;
        let now = self.clock.now();
        let snapshot_read = self.store.get_snapshot(&who.student_id, &course.id).await?;
        let mut session = SessionState::default();
        let workflow = bundle.workflow_for(course).ok_or_else(|| {
            ServiceError::internal(format!("course `{}` has no workflow", course.id))
        })?;
        let state = problem_set_of(
            course,
            &workflow.modes.problem_set,
            request,
            &mut session,
            now,
        )?;
        let mode = if state.is_some() {
            Mode::ProblemSet
        } else {
            Mode::Guided
        };
        if let Some(state) = state {
            session.mode_state = ModeState::ProblemSet(state);
        }
        let thread = Thread {
            thread_id: thread_id.to_owned(),
            student_id: who.student_id.clone(),
            course_id: course.id.clone(),
            mode,
            status: ThreadStatus::Active,
            goal: None,
            unit_id: None,
            created_at: now,
            updated_at: now,
            title: None,
            preview: None,
            paused_at: None,
            ended_at: None,
            session,
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread, Vec::new()));
        if snapshot_read.is_none() {
            work.put_snapshot(
                snapshot_or_new(None, &who.student_id, &course.id, &course.entry_unit),
                WriteCondition::New,
            );
        }
        match self.store.commit(work).await {
            // Another request created it first: it is there either way.
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Threads one session id may have, one after another.
const MAX_SESSION_THREADS: u32 = 50;

/// The problem set an integration's first message starts, if it sends
/// problems: its list, a course set, or the one current problem (then
/// more may follow).
fn problem_set_of(
    course: &Course,
    settings: &ProblemSetMode,
    request: &WebhookTurnRequest,
    session: &mut SessionState,
    now: DateTime<Utc>,
) -> Result<Option<ProblemSetState>, ServiceError> {
    let from = |problems: Vec<ProblemEntry>,
                set: Option<&CourseProblemSet>,
                session: &mut SessionState| {
        let mut state = ProblemSetState {
            set_id: set.map(|s| s.id.clone()),
            title: set.map(|s| s.title.clone()),
            problems,
            started_at: Some(now),
            ..ProblemSetState::default()
        };
        problem_set::begin_problem(&mut state, session, 0, now);
        state
    };
    if let Some(problems) = &request.problems {
        check_problem_count(problems.len(), settings)?;
        let mut seen = std::collections::BTreeSet::new();
        for p in problems {
            if p.id.trim().is_empty() || !seen.insert(p.id.as_str()) {
                return Err(ServiceError::invalid_field(
                    "problems",
                    "every problem needs an id of its own",
                ));
            }
            if p.text.trim().is_empty() || p.correct_answer.trim().is_empty() {
                return Err(ServiceError::invalid_field(
                    "problems",
                    format!("problem `{}` needs text and a correct answer", p.id),
                ));
            }
        }
        let entries = problems
            .iter()
            .map(|p| problem_set::entry(&p.id, &p.text, &p.correct_answer, None, &[]))
            .collect();
        return Ok(Some(from(entries, None, session)));
    }
    if let Some(id) = &request.problem_set_id {
        let set = course
            .problem_sets
            .iter()
            .find(|s| &s.id == id)
            .ok_or_else(|| {
                ServiceError::invalid_field(
                    "problem_set_id",
                    format!("course `{}` has no problem set `{id}`", course.id),
                )
            })?;
        let entries = set
            .problems
            .iter()
            .map(|p| problem_set::entry(&p.id, &p.text, &p.answer, Some(p.unit.clone()), &p.steps))
            .collect();
        return Ok(Some(from(entries, Some(set), session)));
    }
    Ok(request
        .current_problem
        .as_ref()
        .map(|p| problem_set::from_webhook(p, session, now)))
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
