//! Mastery tiers and exam difficulty tiers (docs/architecture.md, "The
//! guided policy").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A unit's mastery tier; `none` until the first tier is reached.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MasteryTier {
    #[default]
    None,
    Bronze,
    Silver,
    Gold,
}

/// Difficulty tier of an exam question; passing one at a tier earns that mastery tier.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExamTier {
    Bronze,
    Silver,
    Gold,
}

impl ExamTier {
    pub const ALL: [ExamTier; 3] = [ExamTier::Bronze, ExamTier::Silver, ExamTier::Gold];

    pub fn as_str(self) -> &'static str {
        match self {
            ExamTier::Bronze => "bronze",
            ExamTier::Silver => "silver",
            ExamTier::Gold => "gold",
        }
    }
}

impl MasteryTier {
    pub fn as_str(self) -> &'static str {
        match self {
            MasteryTier::None => "none",
            MasteryTier::Bronze => "bronze",
            MasteryTier::Silver => "silver",
            MasteryTier::Gold => "gold",
        }
    }
}

impl From<ExamTier> for MasteryTier {
    fn from(tier: ExamTier) -> Self {
        match tier {
            ExamTier::Bronze => MasteryTier::Bronze,
            ExamTier::Silver => MasteryTier::Silver,
            ExamTier::Gold => MasteryTier::Gold,
        }
    }
}

/// A count per exam tier (`passedByTier`, progress summaries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TierCounts {
    pub bronze: u32,
    pub silver: u32,
    pub gold: u32,
}

impl TierCounts {
    pub fn get(&self, tier: ExamTier) -> u32 {
        match tier {
            ExamTier::Bronze => self.bronze,
            ExamTier::Silver => self.silver,
            ExamTier::Gold => self.gold,
        }
    }

    pub fn get_mut(&mut self, tier: ExamTier) -> &mut u32 {
        match tier {
            ExamTier::Bronze => &mut self.bronze,
            ExamTier::Silver => &mut self.silver,
            ExamTier::Gold => &mut self.gold,
        }
    }
}
