//! Read-only views of progress: a thread's summary and a student's report
//! card for a course.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use super::error::ServiceError;
use super::threads::{RECENT_MESSAGES, owned_thread};
use super::views::session_summary;
use super::{Output, Service};
use crate::content::Course;
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::mastery::bkt;
use crate::engine::modes::exam::{self, exam_of};
use crate::engine::modes::problem_set;
use crate::engine::modes::survey;
use crate::engine::modes::teach_me::study_plan_of;
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::model::{
    ConceptTaught, ExamReportView, ExamTier, HistoryMessage, MasteryTier, Principal,
    ProblemSetReport, ProblemStatus, RevisitReason, Role, SessionStats, SnapshotLite, StepStatus,
    StudentSnapshot, SummaryInput, SurveyView, TierCounts, TimelineEntry, Trend, UnitStat,
    UnitStatus,
};

/// `GET /threads/{threadId}/summary`: this conversation only (the course
/// record is the report card).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummaryReport {
    thread_id: String,
    course_id: String,
    /// Turns in this conversation.
    turns: u32,
    /// Answers graded in this conversation (a repeat counts only when it puts
    /// a wrong answer right).
    answers: u32,
    /// Right with no wrong try or help first.
    right_first_time: u32,
    /// Right after a wrong try or help (a hint, a concept card, "I'm stuck"):
    /// learned in this conversation.
    learned: u32,
    wrong: u32,
    /// Units worked on in this conversation that are now at least bronze.
    steps_completed: u32,
    /// Mean BKT probability over the units worked on in this conversation,
    /// in [0, 1].
    mastery_score: f64,
    /// Mistakes seen in this conversation.
    misconceptions_seen: Vec<String>,
    headline: String,
    strengths: Vec<String>,
    to_review: Vec<String>,
    suggestions: Vec<String>,
    /// The units this conversation worked on, in the order it met them.
    units: Vec<ThreadUnitLine>,
    /// An exam thread's report, once the exam is over (absent before: a
    /// running exam's marks are not shown here).
    #[serde(skip_serializing_if = "Option::is_none")]
    exam: Option<ExamReportView>,
    /// A problem set's report, once the session has ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem_set: Option<ProblemSetReport>,
    /// A survey thread's answers so far, read back with their questions.
    #[serde(skip_serializing_if = "Option::is_none")]
    survey: Option<SurveyView>,
    /// The session's latest turns (at most 30), oldest first: what the
    /// student did, what the tutor did and what came of it.
    timeline: Vec<TimelineEntry>,
    /// The trend of the session's graded answers (steady until there are
    /// a few).
    trend: Trend,
    /// The units the session worked on, in the order it met them.
    concepts_taught: Vec<ConceptTaught>,
}

/// One unit's work in one conversation, with where the student stands on it now.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnitLine {
    unit_id: String,
    title: String,
    /// The unit's tier now (course-wide).
    mastery_tier: MasteryTier,
    /// The unit's BKT probability now (course-wide), in [0, 1].
    mastery_probability: f64,
    /// Tutor replies about the unit in this conversation.
    replies: u32,
    answered: u32,
    right_first_time: u32,
    learned: u32,
    /// A wrong answer here not yet put right.
    not_yet_right: bool,
    /// Hints, concept cards and "I'm stuck" turns.
    help: u32,
    misconceptions_seen: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitLine {
    unit_id: String,
    title: String,
    status: UnitStatus,
    mastery_tier: MasteryTier,
    mastery_probability: f64,
    drill_attempts: u32,
    drill_correct: u32,
    exams_passed: TierCounts,
    confusion_tags: Vec<ConfusionLine>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfusionLine {
    tag: String,
    description: String,
    count: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisitLine {
    question_id: String,
    unit_id: String,
    tier: ExamTier,
    reason: Option<RevisitReason>,
    locked_until: Option<DateTime<Utc>>,
}

/// `GET /me/courses/{courseId}/report`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportCard {
    course_id: String,
    title: String,
    started: bool,
    snapshot_lite: SnapshotLite,
    units: Vec<UnitLine>,
    revisit: Vec<RevisitLine>,
    strengths: Vec<String>,
    weak_areas: Vec<String>,
    /// Messages the safety gate flagged in this course, by category
    /// (counts for teachers, never the words).
    safety_flags: std::collections::BTreeMap<String, u32>,
}

fn unit_line(
    course: &Course,
    snapshot: &StudentSnapshot,
    unit_id: &str,
    prior: f64,
) -> Option<UnitLine> {
    let unit = course.unit(unit_id)?;
    let progress = snapshot
        .unit_progress
        .get(unit_id)
        .cloned()
        .unwrap_or_default();
    let mut confusion: Vec<ConfusionLine> = progress
        .confusion_tags
        .iter()
        .map(|(tag, count)| ConfusionLine {
            tag: tag.clone(),
            description: unit
                .mistake_tags
                .iter()
                .find(|t| t.id == *tag)
                .map_or_else(|| tag.replace('_', " "), |t| t.description.clone()),
            count: *count,
        })
        .collect();
    confusion.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tag.cmp(&b.tag)));
    Some(UnitLine {
        unit_id: unit.id.clone(),
        title: unit.title.clone(),
        status: progress.status,
        mastery_tier: progress.mastery_tier,
        mastery_probability: progress.mastery_probability.unwrap_or(prior),
        drill_attempts: progress.drill.attempts,
        drill_correct: progress.drill.correct,
        exams_passed: progress.exam.passed_by_tier,
        confusion_tags: confusion,
    })
}

impl Service {
    pub async fn thread_summary(
        &self,
        who: &Principal,
        thread_id: &str,
    ) -> Result<Output, ServiceError> {
        self.expire_if_idle(who, thread_id).await?;
        let record = owned_thread(self, who, thread_id, RECENT_MESSAGES).await?;
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &record.thread.course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        let (_, snapshot) = self.read_snapshot(who, course).await?;
        let thread_units: Vec<ThreadUnitLine> = record
            .thread
            .session
            .learning
            .units
            .iter()
            .filter_map(|work| {
                let unit = course.unit(&work.unit_id)?;
                let prior = bkt::params_for(&workflow.mastery.bkt, course, &unit.id).prior;
                let progress = snapshot.unit_progress.get(&unit.id);
                Some(ThreadUnitLine {
                    unit_id: unit.id.clone(),
                    title: unit.title.clone(),
                    mastery_tier: progress.map_or(MasteryTier::None, |p| p.mastery_tier),
                    mastery_probability: progress
                        .and_then(|p| p.mastery_probability)
                        .unwrap_or(prior),
                    replies: work.replies,
                    answered: work.right_first_time + work.learned + work.wrong_answers,
                    right_first_time: work.right_first_time,
                    learned: work.learned,
                    not_yet_right: work.not_yet_right,
                    help: work.help,
                    misconceptions_seen: work
                        .mistake_tags
                        .iter()
                        .map(|tag| {
                            unit.mistake_tags
                                .iter()
                                .find(|t| t.id == *tag)
                                .map_or_else(|| tag.replace('_', " "), |t| t.description.clone())
                        })
                        .collect(),
                })
            })
            .collect();
        let mastery_score = if thread_units.is_empty() {
            0.0
        } else {
            thread_units
                .iter()
                .map(|l| l.mastery_probability)
                .sum::<f64>()
                / thread_units.len() as f64
        };
        let misconceptions: Vec<String> = thread_units
            .iter()
            .flat_map(|l| l.misconceptions_seen.iter().cloned())
            .collect();
        // A lesson counts its plan's steps; other modes the units worked on.
        let (steps_completed, steps_total) = match study_plan_of(&record.thread.session) {
            Some(plan) => (
                plan.steps
                    .iter()
                    .filter(|s| s.status == StepStatus::Completed)
                    .count() as u32,
                plan.steps.len() as u32,
            ),
            None if let Some(set) = problem_set::state_of(&record.thread.session) => (
                set.problems
                    .iter()
                    .filter(|p| {
                        matches!(p.status, ProblemStatus::Completed | ProblemStatus::Skipped)
                    })
                    .count() as u32,
                set.problems.len() as u32,
            ),
            None => (
                thread_units
                    .iter()
                    .filter(|l| l.mastery_tier != MasteryTier::None)
                    .count() as u32,
                thread_units.len() as u32,
            ),
        };
        let stats = SessionStats {
            mode: record.thread.mode,
            turns: record.thread.session.turn_count,
            questions_answered: thread_units.iter().map(|l| l.answered).sum(),
            questions_correct: thread_units.iter().map(|l| l.right_first_time).sum(),
            questions_learned: thread_units.iter().map(|l| l.learned).sum(),
            steps_completed,
            steps_total,
            units: thread_units
                .iter()
                .map(|l| UnitStat {
                    title: l.title.clone(),
                    mastery_tier: l.mastery_tier,
                    answered: l.answered,
                    correct: l.right_first_time,
                    learned: l.learned,
                    not_yet_right: l.not_yet_right,
                    help: l.help,
                })
                .collect(),
            misconceptions_seen: misconceptions.clone(),
        };
        let transcript = record
            .recent_messages
            .iter()
            .filter(|m| m.is_conversation())
            .map(|m| HistoryMessage {
                role: m.role,
                text: m.text.clone(),
            })
            .filter(|m| m.role == Role::Student || !m.text.is_empty())
            .collect();
        let timeout = StdDuration::from_millis(workflow.llm.summary.timeout_ms);
        let summarizer = self.llm.summarizer(
            &bundle,
            &course.workflow,
            Some(tokio::time::Instant::now() + timeout),
        );
        let summary = summarizer
            .summarize(&SummaryInput {
                course_title: course.title.clone(),
                transcript,
                stats: stats.clone(),
            })
            .await
            .map_err(|e| ServiceError::internal(format!("summary: {e}")))?
            .value;
        let session = session_summary(&record.thread, &bundle);
        Output::json(
            200,
            &ThreadSummaryReport {
                thread_id: record.thread.thread_id.clone(),
                course_id: course.id.clone(),
                turns: stats.turns,
                answers: stats.questions_answered,
                right_first_time: stats.questions_correct,
                learned: stats.questions_learned,
                wrong: stats.questions_answered - stats.questions_correct - stats.questions_learned,
                steps_completed: stats.steps_completed,
                mastery_score: (mastery_score * 1000.0).round() / 1000.0,
                misconceptions_seen: misconceptions,
                headline: summary.headline,
                strengths: summary.strengths,
                to_review: summary.to_review,
                suggestions: summary.suggestions,
                units: thread_units,
                exam: exam_of(&record.thread.session)
                    .filter(|e| e.finished())
                    .map(|e| exam::report(e, course, self.clock.now())),
                problem_set: problem_set::state_of(&record.thread.session)
                    .and_then(|s| s.report.clone()),
                survey: survey::survey_of(&record.thread.session).map(|s| survey::view(&bundle, s)),
                timeline: session.timeline,
                trend: session.trend,
                concepts_taught: session.concepts_taught,
            },
        )
    }

    pub async fn course_report(
        &self,
        who: &Principal,
        course_id: &str,
    ) -> Result<Output, ServiceError> {
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        let now = self.clock.now();
        let (read, snapshot) = self.read_snapshot(who, course).await?;
        let lockouts = self
            .exams
            .revisit_statuses(self.store.as_ref(), &snapshot, now)
            .await?;
        let lines: Vec<UnitLine> = course
            .order
            .iter()
            .filter_map(|u| {
                let prior = bkt::params_for(&workflow.mastery.bkt, course, u).prior;
                unit_line(course, &snapshot, u, prior)
            })
            .collect();
        let mastered_at = workflow.mastery.bkt.mastered_at;
        let strengths = lines
            .iter()
            .filter(|l| {
                l.mastery_tier >= MasteryTier::Silver || l.mastery_probability >= mastered_at
            })
            .map(|l| l.title.clone())
            .collect();
        let weak_areas = lines
            .iter()
            .filter(|l| {
                l.status == UnitStatus::InProgress
                    && (!l.confusion_tags.is_empty()
                        || (l.drill_attempts >= 2 && l.drill_correct * 2 < l.drill_attempts))
            })
            .map(|l| l.title.clone())
            .collect();
        let revisit = snapshot
            .revisit_queue
            .iter()
            .map(|(q, entry)| RevisitLine {
                question_id: q.clone(),
                unit_id: entry.unit_id.clone(),
                tier: entry.tier,
                reason: entry.reason,
                locked_until: match lockouts.get(q).map(|s| s.at(now)) {
                    Some(LockoutStatus::Locked { until }) => Some(until),
                    _ => None,
                },
            })
            .collect();
        Output::json(
            200,
            &ReportCard {
                course_id: course.id.clone(),
                title: course.title.clone(),
                started: read.is_some(),
                snapshot_lite: build_snapshot_lite(&snapshot, course, workflow, &lockouts, now),
                units: lines,
                revisit,
                strengths,
                weak_areas,
                safety_flags: snapshot.safety_flags.clone(),
            },
        )
    }
}
