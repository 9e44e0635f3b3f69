//! The persistent per-student, per-course record the policy reads.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::llm::{StudentIntent, UnderstandingSignal};
use super::tier::{ExamTier, MasteryTier, TierCounts};

/// Canonical progress of one student in one course. Sparse: only units and
/// exam questions the student has touched appear.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentSnapshot {
    pub student_id: String,
    pub course_id: String,
    /// Last known focus; starts at the course's entry unit.
    pub focus_unit_id: String,
    pub units_in_progress: Vec<String>,
    pub unit_progress: BTreeMap<String, UnitProgress>,
    /// Exam questions the student has interacted with.
    pub exam_touched: BTreeMap<String, bool>,
    /// Exam questions to come back to (failed or support viewed).
    pub revisit_queue: BTreeMap<String, RevisitEntry>,
    /// The LLM's reading of the previous turn (never confusion tags).
    pub last_turn_analysis: Option<TurnAnalysis>,
    pub last_turn_at: Option<DateTime<Utc>>,
    /// A prerequisite a wrong answer pointed to, to check with one quick
    /// question before going on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prereq_check: Option<PrereqCheck>,
    /// Messages the safety gate flagged in this course, by category.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub safety_flags: BTreeMap<String, u32>,
}

/// A quick check on a prerequisite, raised by a graded mistake that the
/// unit's content says comes from that prerequisite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrereqCheck {
    /// The prerequisite to check.
    pub unit_id: String,
    /// The unit whose answer showed the mistake.
    pub from_unit_id: String,
    pub mistake_tag: String,
}

impl StudentSnapshot {
    /// The sparse default for a student's first interaction with a course.
    pub fn new(student_id: &str, course_id: &str, entry_unit_id: &str) -> Self {
        StudentSnapshot {
            student_id: student_id.to_owned(),
            course_id: course_id.to_owned(),
            focus_unit_id: entry_unit_id.to_owned(),
            units_in_progress: Vec::new(),
            unit_progress: BTreeMap::new(),
            exam_touched: BTreeMap::new(),
            revisit_queue: BTreeMap::new(),
            last_turn_analysis: None,
            last_turn_at: None,
            prereq_check: None,
            safety_flags: BTreeMap::new(),
        }
    }

    /// A unit's tier, `none` for units never touched.
    pub fn tier_of(&self, unit_id: &str) -> MasteryTier {
        self.unit_progress
            .get(unit_id)
            .map_or(MasteryTier::None, |p| p.mastery_tier)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitStatus {
    #[default]
    NotStarted,
    InProgress,
    /// Gold reached: nothing left to earn in this unit.
    Mastered,
}

/// Evidence and mastery for one unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitProgress {
    pub status: UnitStatus,
    pub mastery_tier: MasteryTier,
    pub last_touched_at: Option<DateTime<Utc>>,
    pub drill: DrillCounters,
    pub exam: ExamCounters,
    /// Mistake tags from drill grading only, never from the tutor LLM's
    /// reading: a tag must come from a graded answer.
    pub confusion_tags: BTreeMap<String, u32>,
    /// BKT probability that the unit is learned; absent until graded evidence arrives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mastery_probability: Option<f64>,
    /// IRT-lite ability estimate from 0 to 1; absent until a generated item is graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ability: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DrillCounters {
    pub attempts: u32,
    pub correct: u32,
    pub streak_correct: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamCounters {
    pub passed_by_tier: TierCounts,
}

/// Why an exam question is waiting to be revisited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevisitReason {
    Failed,
    SupportViewed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisitEntry {
    pub unit_id: String,
    pub tier: ExamTier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RevisitReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_at: Option<DateTime<Utc>>,
}

/// A unit the student's message was mapped to, with a confidence from 0 to 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MappedUnit {
    pub unit_id: String,
    pub confidence: f64,
}

/// The previous turn's reading of the student, kept for the next policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnAnalysis {
    pub mapped_units: Vec<MappedUnit>,
    pub student_intent: StudentIntent,
    pub understanding_signal: UnderstandingSignal,
    pub suggested_prereq_units: Vec<String>,
}
