//! What clients see of threads: state views without expected answers.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use crate::content::Bundle;
use crate::engine::modes::exam::{exam_of, progress_view};
use crate::engine::modes::problem_set;
use crate::engine::modes::study_plan;
use crate::engine::modes::survey;
use crate::engine::modes::teach_me::study_plan_of;
use crate::model::{
    ConceptTaught, Mode, PendingQuestionView, PlanStepView, ProblemSetState, ProblemSetView,
    ProblemStatus, ProblemView, StepStatus, StudyPlanView, Thread, ThreadStateView, ThreadStatus,
    TimelineEntry, Trend, TutorMessage,
};
use crate::store::ThreadSummary;

/// The public view of a thread's state: never an expected answer or a token.
pub fn state_view(thread: &Thread, bundle: &Bundle) -> ThreadStateView {
    let s = &thread.session;
    let summary = session_summary(thread, bundle);
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
        study_plan: study_plan_of(s).map(|plan| {
            let current = study_plan::current(plan).map(|i| plan.steps[i].step_id.clone());
            StudyPlanView {
                unit_id: plan.unit_id.clone(),
                steps: plan
                    .steps
                    .iter()
                    .map(|step| PlanStepView {
                        step_id: step.step_id.clone(),
                        title: step.title.clone(),
                        kind: step.kind,
                        concept: step.concept.clone(),
                        success_criteria: step.success_criteria.clone(),
                        status: step.status,
                        questions_asked: step.progress.questions_asked,
                        questions_correct: step.progress.questions_correct,
                        attempts: step.progress.attempts,
                    })
                    .collect(),
                current_step_id: current,
                steps_completed: plan
                    .steps
                    .iter()
                    .filter(|s| s.status == StepStatus::Completed)
                    .count() as u32,
                replans_used: plan.replan_count,
                max_replans: plan.max_replans,
                replans: plan.replans.clone(),
                complete: study_plan::is_complete(plan),
                extension_turns: plan.extension_turns,
            }
        }),
        concepts_discussed: s.concepts_discussed.clone(),
        exam_progress: exam_of(s).map(progress_view),
        problem_set: problem_set::state_of(s).map(problem_set_view),
        survey: survey::survey_of(s).map(|session| survey::view(bundle, session)),
        timeline: summary.timeline,
        trend: summary.trend,
        concepts_taught: summary.concepts_taught,
    }
}

/// A session's summary (its timeline, trend and concepts), the same in every mode.
pub struct SessionSummary {
    /// The latest turns, oldest first.
    pub timeline: Vec<TimelineEntry>,
    /// The trend of the session's graded answers.
    pub trend: Trend,
    /// The units the session worked on, in the order it met them.
    pub concepts_taught: Vec<ConceptTaught>,
}

pub fn session_summary(thread: &Thread, bundle: &Bundle) -> SessionSummary {
    let s = &thread.session;
    let course = bundle.course(&thread.course_id);
    let trend = course
        .and_then(|c| bundle.workflow_for(c))
        .map_or(Trend::Steady, |w| {
            Trend::from_outcomes(&s.recent_outcomes, &w.pacing)
        });
    SessionSummary {
        timeline: s.timeline.clone(),
        trend,
        concepts_taught: s
            .learning
            .units
            .iter()
            .map(|u| ConceptTaught {
                unit_id: u.unit_id.clone(),
                title: course
                    .and_then(|c| c.unit(&u.unit_id))
                    .map_or_else(|| u.unit_id.clone(), |unit| unit.title.clone()),
            })
            .collect(),
    }
}

/// A problem set's progress, without the answers.
pub fn problem_set_view(state: &ProblemSetState) -> ProblemSetView {
    ProblemSetView {
        set_id: state.set_id.clone(),
        current_problem_index: state.current_index,
        problems_total: state.problems.len() as u32,
        problems_completed: state
            .problems
            .iter()
            .filter(|p| matches!(p.status, ProblemStatus::Completed | ProblemStatus::Skipped))
            .count() as u32,
        last_action: state.last_action,
        problems: state
            .problems
            .iter()
            .map(|p| ProblemView {
                problem_id: p.problem_id.clone(),
                text: p.text.clone(),
                status: p.status,
                signal: p.progress.signal,
                attempts: p.progress.attempts,
                hints_used: p.progress.hints_used,
            })
            .collect(),
        ended: state.ended,
    }
}

/// `GET /threads/{threadId}`.
#[derive(Debug, Serialize, JsonSchema)]
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
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadList {
    pub threads: Vec<ThreadSummary>,
    pub next_cursor: Option<String>,
}
