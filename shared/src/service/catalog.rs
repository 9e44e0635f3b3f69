//! The course catalog: which courses a student can start and in which
//! modes, and one course's unit graph with the caller's progress on it —
//! what an app needs to offer a course and draw a learning path.

use schemars::JsonSchema;
use serde::Serialize;

use super::error::ServiceError;
use super::{Output, Service};
use crate::content::{Course, Workflow};
use crate::engine::mastery::bkt;
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::model::{MasteryTier, Mode, Principal, SnapshotLite, UnitStatus};

/// `GET /courses`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CourseList {
    pub courses: Vec<CourseSummary>,
}

/// One course as a catalog lists it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CourseSummary {
    pub course_id: String,
    pub title: String,
    pub description: String,
    /// Who the course is for, e.g. "ages 12-15".
    pub audience: String,
    pub unit_count: u32,
    /// The modes a thread of this course can be created in now: those the
    /// course's workflow switches on.
    pub modes: Vec<Mode>,
}

/// `GET /courses/{courseId}`: the unit graph and the caller's place in it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CourseDetail {
    pub course_id: String,
    pub title: String,
    pub description: String,
    pub audience: String,
    pub modes: Vec<Mode>,
    /// Where a new student starts.
    pub entry_unit_id: String,
    /// Whether the caller has begun the course (otherwise every unit is
    /// `not_started` at tier `none` and its prior mastery).
    pub started: bool,
    /// Units in teaching order.
    pub units: Vec<CourseUnit>,
    /// Prerequisite edges: `from` must be held before `to`.
    pub edges: Vec<PrerequisiteEdge>,
    /// The caller's focus, revisit list and tier counts.
    pub snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CourseUnit {
    pub unit_id: String,
    pub title: String,
    /// The units it requires.
    pub requires: Vec<String>,
    /// The caller's progress.
    pub status: UnitStatus,
    pub mastery_tier: MasteryTier,
    /// BKT probability that the caller knows the unit, in [0, 1].
    pub mastery_probability: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrerequisiteEdge {
    pub from: String,
    pub to: String,
}

/// The modes a student can start in `course` today, in the catalog's order.
pub(crate) fn offered_modes(workflow: &Workflow) -> Vec<Mode> {
    Mode::ALL
        .into_iter()
        .filter(|m| workflow.modes.enabled(*m))
        .collect()
}

fn summary(course: &Course, workflow: &Workflow) -> CourseSummary {
    CourseSummary {
        course_id: course.id.clone(),
        title: course.title.clone(),
        description: course.description.trim().to_owned(),
        audience: course.audience.clone(),
        unit_count: u32::try_from(course.order.len()).unwrap_or(u32::MAX),
        modes: offered_modes(workflow),
    }
}

impl Service {
    /// `GET /courses`: every course of the content bundle, by title.
    pub async fn list_courses(&self) -> Result<Output, ServiceError> {
        let bundle = self.bundle().await;
        let mut courses: Vec<CourseSummary> = bundle
            .courses
            .values()
            .filter_map(|c| Some(summary(c, bundle.workflow_for(c)?)))
            .collect();
        courses.sort_by(|a, b| a.title.cmp(&b.title).then(a.course_id.cmp(&b.course_id)));
        Output::json(200, &CourseList { courses })
    }

    /// `GET /courses/{courseId}`.
    pub async fn get_course(
        &self,
        who: &Principal,
        course_id: &str,
    ) -> Result<Output, ServiceError> {
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        let (read, snapshot) = self.read_snapshot(who, course).await?;
        let units = course
            .order
            .iter()
            .filter_map(|id| {
                let unit = course.unit(id)?;
                let progress = snapshot.unit_progress.get(id).cloned().unwrap_or_default();
                let prior = bkt::params_for(&workflow.mastery.bkt, course, id).prior;
                Some(CourseUnit {
                    unit_id: unit.id.clone(),
                    title: unit.title.clone(),
                    requires: course.prereqs(id).to_vec(),
                    status: progress.status,
                    mastery_tier: progress.mastery_tier,
                    mastery_probability: progress.mastery_probability.unwrap_or(prior),
                })
            })
            .collect();
        let edges = course
            .order
            .iter()
            .flat_map(|to| {
                course.prereqs(to).iter().map(move |from| PrerequisiteEdge {
                    from: from.clone(),
                    to: to.clone(),
                })
            })
            .collect();
        let now = self.clock.now();
        let lockouts = self
            .exams
            .revisit_statuses(self.store.as_ref(), &snapshot, now)
            .await?;
        let lite = build_snapshot_lite(&snapshot, course, workflow, &lockouts, now);
        let head = summary(course, workflow);
        Output::json(
            200,
            &CourseDetail {
                course_id: head.course_id,
                title: head.title,
                description: head.description,
                audience: head.audience,
                modes: head.modes,
                entry_unit_id: course.entry_unit.clone(),
                started: read.is_some(),
                units,
                edges,
                snapshot_lite: lite,
            },
        )
    }
}
