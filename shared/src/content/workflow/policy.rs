//! The guided policy's settings: scoring weights, scope caps, blockers,
//! placement, stuck and exam readiness.

use serde::{Deserialize, Serialize};

use crate::model::MasteryTier;

/// The guided policy's numbers: scope, scoring weights, blockers, stuck and
/// exam readiness (docs/architecture.md, "The guided policy").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicySettings {
    pub weights: ScoreWeights,
    pub intent_mix: IntentMix,
    /// Recency decays linearly to zero over this many hours.
    pub recency_window_hours: f64,
    pub tier_need: TierNeed,
    pub drill_evidence: DrillEvidence,
    /// Top mapped unit becomes the primary target at or above this confidence.
    pub primary_target_min_confidence: f64,
    /// A best mapped unit (other than the current focus) at or above this
    /// confidence but below `primary_target_min_confidence` makes the
    /// message ambiguous: only a Socratic clarifier is allowed, no card.
    /// Set it to `primary_target_min_confidence` or above to turn this off.
    pub clarify_min_confidence: f64,
    /// A prerequisite is missing until the student holds this tier in it.
    pub prereq_min_tier: MasteryTier,
    /// Which missing prerequisites block.
    pub blocker_evidence: BlockerEvidence,
    pub placement: PlacementSettings,
    /// With no confident mapped unit and a gold focus, move on to the best
    /// unfinished unit in progress or the next unit of the course.
    pub advance_from_mastered: bool,
    /// Most units kept in `unitsInProgress` (most recent first).
    pub units_in_progress_cap: usize,
    pub candidates: CandidateCaps,
    pub scoped: ScopedCaps,
    pub stuck: StuckRule,
    /// Drill streak needed (with prerequisites met) to be exam-ready.
    pub exam_ready_streak: u32,
    pub blocker: BlockerChoice,
    pub constraints: ConstraintSettings,
    /// Built-in lockout after a failed exam question or a support view.
    pub exam_lockout_hours: f64,
    /// How long a shown exam card can be answered.
    pub exam_card_hours: f64,
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings {
            weights: ScoreWeights::default(),
            intent_mix: IntentMix::default(),
            recency_window_hours: 72.0,
            tier_need: TierNeed::default(),
            drill_evidence: DrillEvidence::default(),
            primary_target_min_confidence: 0.55,
            clarify_min_confidence: 0.25,
            prereq_min_tier: MasteryTier::Bronze,
            blocker_evidence: BlockerEvidence::WeakOnly,
            placement: PlacementSettings::default(),
            advance_from_mastered: true,
            units_in_progress_cap: 5,
            candidates: CandidateCaps::default(),
            scoped: ScopedCaps::default(),
            stuck: StuckRule::default(),
            exam_ready_streak: 2,
            blocker: BlockerChoice::default(),
            constraints: ConstraintSettings::default(),
            exam_lockout_hours: 24.0,
            exam_card_hours: 24.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreWeights {
    pub intent: f64,
    pub recency: f64,
    pub in_progress: f64,
    pub tier_need: f64,
    pub drill_evidence: f64,
    /// 1 - the BKT mastery probability. Zero keeps the five-term score.
    pub mastery_gap: f64,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            intent: 0.35,
            recency: 0.15,
            in_progress: 0.15,
            tier_need: 0.20,
            drill_evidence: 0.15,
            mastery_gap: 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntentMix {
    pub mapped: f64,
    pub focus: f64,
}

impl Default for IntentMix {
    fn default() -> Self {
        IntentMix {
            mapped: 0.7,
            focus: 0.3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierNeed {
    pub none: f64,
    pub bronze: f64,
    pub silver: f64,
    pub gold: f64,
}

impl Default for TierNeed {
    fn default() -> Self {
        TierNeed {
            none: 1.0,
            bronze: 0.7,
            silver: 0.4,
            gold: 0.1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrillEvidence {
    /// Value of a streak of one.
    pub streak_one: f64,
    /// Streak at which the value reaches 1.
    pub full_streak: u32,
}

impl Default for DrillEvidence {
    fn default() -> Self {
        DrillEvidence {
            streak_one: 0.5,
            full_streak: 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CandidateCaps {
    pub top_mapped: usize,
    pub in_progress: usize,
}

impl Default for CandidateCaps {
    fn default() -> Self {
        CandidateCaps {
            top_mapped: 3,
            in_progress: 3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopedCaps {
    pub max_units: usize,
    pub top_mapped: usize,
    pub in_progress: usize,
}

impl Default for ScopedCaps {
    fn default() -> Self {
        ScopedCaps {
            max_units: 6,
            top_mapped: 2,
            in_progress: 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StuckRule {
    pub min_attempts: u32,
    pub max_streak: u32,
}

impl Default for StuckRule {
    fn default() -> Self {
        StuckRule {
            min_attempts: 2,
            max_streak: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConstraintSettings {
    pub max_concept_words: u32,
    pub max_worked_examples: u32,
    pub drill_max_steps: u32,
    /// Most key ideas on a concept card (the prompt contract says up to 3).
    pub max_key_ideas: u32,
}

impl Default for ConstraintSettings {
    fn default() -> Self {
        ConstraintSettings {
            max_concept_words: 170,
            max_worked_examples: 1,
            drill_max_steps: 2,
            max_key_ideas: 3,
        }
    }
}

/// Which blocking prerequisite becomes the focus when several are missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerChoice {
    /// The first missing prerequisite in the course's listed order.
    #[default]
    FirstMissing,
    /// The missing prerequisite with the highest priority score.
    HighestPriority,
}

/// Which prerequisites below `prereq_min_tier` block the unit that needs them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerEvidence {
    /// Only a prerequisite with evidence of weakness (or one that leads down
    /// to such a unit) blocks. A unit never worked on is unknown, not
    /// missing: the student is taught where they asked, and a prerequisite
    /// is checked only when a wrong answer points to it.
    #[default]
    WeakOnly,
    /// Every prerequisite below the tier blocks, worked on or not (the
    /// strict rule).
    AnyMissing,
}

/// How the policy places a student: what counts as held, and as weak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlacementSettings {
    /// A unit whose BKT probability reached `mastery.bkt.mastered_at` from
    /// graded evidence is held, whatever its tier.
    pub known_by_mastery: bool,
    /// A unit with graded evidence and a BKT probability below this is weak.
    pub weak_below: f64,
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            known_by_mastery: true,
            weak_below: 0.5,
        }
    }
}
