//! The per-turn policy: what the tutor may do this turn, computed by the
//! engine from the snapshot and the message, never stored.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::tier::ExamTier;

/// What the tutor may do this turn.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TutorAction {
    SocraticQuestion,
    ConceptCard,
    DrillCard,
    ExamBlock,
}

impl TutorAction {
    pub fn as_str(self) -> &'static str {
        match self {
            TutorAction::SocraticQuestion => "SOCRATIC_QUESTION",
            TutorAction::ConceptCard => "CONCEPT_CARD",
            TutorAction::DrillCard => "DRILL_CARD",
            TutorAction::ExamBlock => "EXAM_BLOCK",
        }
    }
}

/// Whether an exam question at the desired tier can be attempted now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExamAvailability {
    Available,
    Locked,
    #[default]
    None,
}

/// Small limits that keep the LLM's output short and consistent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyConstraints {
    pub max_concept_words: u32,
    pub max_worked_examples: u32,
    pub drill_max_steps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TutorPolicy {
    pub turn_id: String,
    pub focus_unit_id: String,
    pub primary_target_unit_id: String,
    pub prereq_blocking_unit_id: Option<String>,
    pub scoped_unit_ids: Vec<String>,
    pub allowed_actions: Vec<TutorAction>,
    pub stuck: bool,
    pub exam_ready: bool,
    pub desired_exam_tier: ExamTier,
    pub exam_availability: ExamAvailability,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exam_next_eligible_at: Option<DateTime<Utc>>,
    pub constraints: PolicyConstraints,
}

impl TutorPolicy {
    pub fn allows(&self, action: TutorAction) -> bool {
        self.allowed_actions.contains(&action)
    }
}
