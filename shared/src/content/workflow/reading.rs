//! How code reads the student: the grading of an answer, and the pacing
//! and style signals taken from how they answer and write.

use serde::{Deserialize, Serialize};

/// How answers are checked by code, never by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GradingSettings {
    /// A wrong number is `close` when it is a slip of the answer itself:
    /// off by at most `close_last_place` units of the expected value's last
    /// decimal place (9 or 11 for 10, 3.7 for 3.8), cut off or rounded too
    /// early, or within
    /// max(`close_min_difference`, `close_relative` × |expected|).
    pub close_last_place: f64,
    pub close_relative: f64,
    pub close_min_difference: f64,
    /// `close_min_difference` counts only for expected values at least
    /// this large: below 1 a floor of 0.3 would call 1/2 close to 3/11.
    pub close_min_difference_from: f64,
    /// A decimal that rounds a non-terminating expected value (1/3 as 0.33,
    /// 9π as 28.3) is correct with this many significant figures ...
    pub rounding_min_significant: u32,
    /// ... or this many decimal places.
    pub rounding_min_decimals: u32,
    /// Points at which two expressions are compared when they have variables.
    pub equivalence_points: u32,
}

impl Default for GradingSettings {
    fn default() -> Self {
        GradingSettings {
            close_last_place: 1.0,
            close_relative: 0.01,
            close_min_difference: 0.0,
            close_min_difference_from: 1.0,
            rounding_min_significant: 3,
            rounding_min_decimals: 2,
            equivalence_points: 8,
        }
    }
}

/// Pacing directive thresholds (average mastery in \[0,1\]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacingSettings {
    pub accelerate_min_mastery: f64,
    /// Fast track: this share of concepts at `fast_track_mastery` or more.
    pub fast_track_share: f64,
    pub fast_track_mastery: f64,
    pub simplify_max_mastery: f64,
    pub consolidate_min_mastery: f64,
    pub consolidate_max_mastery: f64,
    pub consolidate_min_wrong: u32,
    /// Graded answers looked at for the trend (the older half against the newer).
    pub trend_window: u32,
    /// Change in the share of right answers that counts as improving or declining.
    pub trend_margin: f64,
}

impl Default for PacingSettings {
    fn default() -> Self {
        PacingSettings {
            accelerate_min_mastery: 0.8,
            fast_track_share: 0.6,
            fast_track_mastery: 0.7,
            simplify_max_mastery: 0.4,
            consolidate_min_mastery: 0.4,
            consolidate_max_mastery: 0.65,
            consolidate_min_wrong: 2,
            trend_window: 6,
            trend_margin: 0.2,
        }
    }
}

/// Student style thresholds (how much and how the student writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StyleSettings {
    pub quiet_max_words: f64,
    pub expressive_min_words: f64,
    /// Messages looked at for disengagement.
    pub disengagement_window: u32,
    /// Last message shorter than this share of the first ...
    pub disengagement_ratio: f64,
    /// ... and at most this many words.
    pub disengagement_max_words: u32,
}

impl Default for StyleSettings {
    fn default() -> Self {
        StyleSettings {
            quiet_max_words: 5.0,
            expressive_min_words: 25.0,
            disengagement_window: 4,
            disengagement_ratio: 0.4,
            disengagement_max_words: 5,
        }
    }
}
