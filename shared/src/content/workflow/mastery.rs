//! What earns a mastery tier, and the parameters of the two estimates kept
//! per unit: BKT's probability and IRT-lite's ability.

use serde::{Deserialize, Serialize};

/// What earns each mastery tier, and BKT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MasterySettings {
    pub bronze: TierRule,
    pub silver: TierRule,
    pub gold: TierRule,
    pub bkt: BktParams,
    /// Help asked for on an item before any answer to it counts as OATutor
    /// counts it: a wrong first attempt for BKT, so the answer that follows
    /// is not a first attempt (and a right one is not evidence of mastery).
    pub hint_before_answer_is_wrong: bool,
}

impl Default for MasterySettings {
    fn default() -> Self {
        MasterySettings {
            bronze: TierRule {
                drill_streak: 2,
                exam_passes: 1,
            },
            silver: TierRule {
                drill_streak: 0,
                exam_passes: 1,
            },
            gold: TierRule {
                drill_streak: 0,
                exam_passes: 1,
            },
            bkt: BktParams::default(),
            hint_before_answer_is_wrong: true,
        }
    }
}

/// A tier is reached when the lower tier is held, the drill streak is at
/// least `drill_streak` and `exam_passes` questions of this tier were passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierRule {
    pub drill_streak: u32,
    pub exam_passes: u32,
}

impl Default for TierRule {
    fn default() -> Self {
        TierRule {
            drill_streak: 0,
            exam_passes: 1,
        }
    }
}

/// Bayesian Knowledge Tracing parameters (OATutor's defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BktParams {
    pub prior: f64,
    pub learn: f64,
    pub guess: f64,
    pub slip: f64,
    pub mastered_at: f64,
}

impl BktParams {
    /// These parameters with a unit's overrides applied.
    pub fn overridden_by(&self, unit: Option<&BktOverride>) -> BktParams {
        let Some(o) = unit else {
            return self.clone();
        };
        BktParams {
            prior: o.prior.unwrap_or(self.prior),
            learn: o.learn.unwrap_or(self.learn),
            guess: o.guess.unwrap_or(self.guess),
            slip: o.slip.unwrap_or(self.slip),
            mastered_at: o.mastered_at.unwrap_or(self.mastered_at),
        }
    }
}

impl Default for BktParams {
    fn default() -> Self {
        BktParams {
            prior: 0.1,
            learn: 0.1,
            guess: 0.1,
            slip: 0.1,
            mastered_at: 0.95,
        }
    }
}

/// A unit's own BKT parameters (OATutor keeps one set per skill): the fields
/// given replace the workflow's `mastery.bkt`, the others are inherited.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BktOverride {
    pub prior: Option<f64>,
    pub learn: Option<f64>,
    pub guess: Option<f64>,
    pub slip: Option<f64>,
    pub mastered_at: Option<f64>,
}

/// IRT-lite ability tracking (`engine::mastery::irt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrtSettings {
    /// Starting ability in \[0,1\].
    pub initial_ability: f64,
    /// Elo step size.
    pub k: f64,
    /// Success probability that next-item difficulty aims for.
    pub target_success: f64,
    /// How far a request for a harder (or easier) item moves its
    /// difficulty, on the \[0,1\] scale.
    pub request_step: f64,
}

impl Default for IrtSettings {
    fn default() -> Self {
        IrtSettings {
            initial_ability: 0.5,
            k: 0.1,
            target_success: 0.75,
            request_step: 0.25,
        }
    }
}
