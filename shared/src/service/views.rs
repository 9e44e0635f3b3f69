//! What clients see of threads: state views without expected answers.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::model::{
    Mode, PendingQuestionView, Thread, ThreadStateView, ThreadStatus, TutorMessage,
};
use crate::store::ThreadSummary;

/// The public view of a thread's state: never an expected answer or a token.
pub fn state_view(thread: &Thread) -> ThreadStateView {
    let s = &thread.session;
    ThreadStateView {
        thread_id: thread.thread_id.clone(),
        course_id: thread.course_id.clone(),
        mode: thread.mode,
        status: thread.status,
        turn_count: s.turn_count,
        is_complete: thread.status == ThreadStatus::Completed,
        pending_question: s.pending_question.as_ref().map(|q| PendingQuestionView {
            text: q.text.clone(),
            phase: q.phase,
            wrong_attempts: q.wrong_attempts,
        }),
        scaffolding_active: s.scaffolding.active,
        teach_back_active: s.teach_back.active,
        study_plan: None,
        exam_progress: None,
        problem_set: None,
    }
}

/// `GET /threads/{threadId}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReplay {
    pub thread_id: String,
    pub course_id: String,
    pub mode: Mode,
    pub status: ThreadStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub state: ThreadStateView,
    pub messages: Vec<TutorMessage>,
    /// Pass as `cursor` for the next page of messages.
    pub next_cursor: Option<String>,
}

/// `GET /me/threads`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadList {
    pub threads: Vec<ThreadSummary>,
    pub next_cursor: Option<String>,
}
