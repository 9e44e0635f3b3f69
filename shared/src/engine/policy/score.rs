//! Unit priority scoring: every signal normalised to
//! \[0, 1\], then a weighted sum clamped to \[0, 1\]. All numbers come from the
//! workflow's `policy` settings.
//!
//! The score is five weighted terms (`policy.weights`: intent, which mixes
//! the mapping confidence with being the focus; recency; in progress; tier
//! need; drill evidence), plus an optional sixth, the BKT mastery gap, whose
//! weight (`policy.weights.mastery_gap`) defaults to 0 so the five-term
//! score is kept unless a workflow asks for it.

use serde::{Deserialize, Serialize};

use crate::content::workflow::{DrillEvidence, PolicySettings, ScoreWeights, TierNeed};
use crate::math::unit_interval;
use crate::model::MasteryTier;

/// What the score of one unit is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitSignals {
    /// The unit's mapped confidence this turn (0 when not mapped).
    pub mapped_confidence: f64,
    /// Whether the unit is the snapshot's focus.
    pub is_focus: bool,
    pub is_in_progress: bool,
    /// Hours since the unit was last touched; `None` when never touched.
    pub hours_since_touched: Option<f64>,
    pub tier: MasteryTier,
    pub drill_streak: u32,
    /// BKT probability that the unit is learned (the prior when no evidence yet).
    pub mastery_probability: f64,
}

/// Each normalised signal of a unit's score, all in \[0, 1\].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreComponents {
    /// `intent_mix.mapped` × mapped confidence + `intent_mix.focus` × is-focus.
    pub intent: f64,
    pub recency: f64,
    pub in_progress: f64,
    pub tier_need: f64,
    pub drill_evidence: f64,
    pub mastery_gap: f64,
}

/// A scored unit, for the policy's choices, the turn log and the CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoredUnit {
    pub unit_id: String,
    pub score: f64,
    pub components: ScoreComponents,
}

/// Linear decay from 1 (just touched) to 0 at `window_hours`; never touched is 0.
/// A touch in the future (clock skew) counts as just touched.
pub fn recency_value(hours_since_touched: Option<f64>, window_hours: f64) -> f64 {
    match hours_since_touched {
        Some(hours) if window_hours > 0.0 => unit_interval(1.0 - hours.max(0.0) / window_hours),
        _ => 0.0,
    }
}

pub fn mapped_value(confidence: f64) -> f64 {
    unit_interval(confidence)
}

pub fn in_progress_value(is_in_progress: bool) -> f64 {
    if is_in_progress { 1.0 } else { 0.0 }
}

/// How urgently a unit still needs to progress at `tier`.
pub fn tier_need_value(tier: MasteryTier, need: &TierNeed) -> f64 {
    unit_interval(match tier {
        MasteryTier::None => need.none,
        MasteryTier::Bronze => need.bronze,
        MasteryTier::Silver => need.silver,
        MasteryTier::Gold => need.gold,
    })
}

/// Drill streak mapped to \[0, 1\]: 0 → 0, 1 → `streak_one`, `full_streak` or
/// more → 1, linear in between (with the default `full_streak` of 2 there is
/// no in between). A `full_streak` of 1 reaches 1 at the first correct answer.
pub fn drill_evidence_value(streak: u32, evidence: &DrillEvidence) -> f64 {
    let full = evidence.full_streak.max(1);
    if streak == 0 {
        0.0
    } else if streak >= full {
        1.0
    } else {
        let one = unit_interval(evidence.streak_one);
        let progress = f64::from(streak - 1) / f64::from(full - 1);
        unit_interval(one + (1.0 - one) * progress)
    }
}

/// The normalised signals of one unit.
pub fn components(signals: &UnitSignals, settings: &PolicySettings) -> ScoreComponents {
    let mix = &settings.intent_mix;
    let focus = if signals.is_focus { 1.0 } else { 0.0 };
    ScoreComponents {
        intent: unit_interval(
            mix.mapped * mapped_value(signals.mapped_confidence) + mix.focus * focus,
        ),
        recency: recency_value(signals.hours_since_touched, settings.recency_window_hours),
        in_progress: in_progress_value(signals.is_in_progress),
        tier_need: tier_need_value(signals.tier, &settings.tier_need),
        drill_evidence: drill_evidence_value(signals.drill_streak, &settings.drill_evidence),
        mastery_gap: unit_interval(1.0 - signals.mastery_probability),
    }
}

/// The weighted sum of the components, clamped to \[0, 1\].
pub fn priority(c: &ScoreComponents, w: &ScoreWeights) -> f64 {
    unit_interval(
        w.intent * c.intent
            + w.recency * c.recency
            + w.in_progress * c.in_progress
            + w.tier_need * c.tier_need
            + w.drill_evidence * c.drill_evidence
            + w.mastery_gap * c.mastery_gap,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn recency_decays_linearly_over_the_window() {
        assert!(close(recency_value(Some(0.0), 72.0), 1.0));
        assert!(close(recency_value(Some(36.0), 72.0), 0.5));
        assert!(close(recency_value(Some(72.0), 72.0), 0.0));
        assert!(close(recency_value(Some(500.0), 72.0), 0.0));
        assert!(close(recency_value(Some(-3.0), 72.0), 1.0));
        assert!(close(recency_value(None, 72.0), 0.0));
    }

    #[test]
    fn default_normalisers() {
        let settings = PolicySettings::default();
        assert!(close(mapped_value(1.7), 1.0));
        assert!(close(mapped_value(-0.2), 0.0));
        assert!(close(mapped_value(f64::NAN), 0.0));
        let need = &settings.tier_need;
        assert!(close(tier_need_value(MasteryTier::None, need), 1.0));
        assert!(close(tier_need_value(MasteryTier::Bronze, need), 0.7));
        assert!(close(tier_need_value(MasteryTier::Silver, need), 0.4));
        assert!(close(tier_need_value(MasteryTier::Gold, need), 0.1));
        let evidence = &settings.drill_evidence;
        assert!(close(drill_evidence_value(0, evidence), 0.0));
        assert!(close(drill_evidence_value(1, evidence), 0.5));
        assert!(close(drill_evidence_value(2, evidence), 1.0));
        assert!(close(drill_evidence_value(9, evidence), 1.0));
    }

    #[test]
    fn a_longer_full_streak_interpolates() {
        let evidence = DrillEvidence {
            streak_one: 0.4,
            full_streak: 4,
        };
        assert!(close(drill_evidence_value(1, &evidence), 0.4));
        assert!(close(drill_evidence_value(2, &evidence), 0.6));
        assert!(close(drill_evidence_value(3, &evidence), 0.8));
        assert!(close(drill_evidence_value(4, &evidence), 1.0));
    }

    /// The default weights by hand: mapped 0.92, focus, in progress, touched 36 h
    /// ago, bronze, streak 1: 0.35×(0.7×0.92+0.3) + 0.15×0.5 + 0.15 + 0.2×0.7 + 0.15×0.5.
    #[test]
    fn the_default_weighted_sum() {
        let settings = PolicySettings::default();
        let signals = UnitSignals {
            mapped_confidence: 0.92,
            is_focus: true,
            is_in_progress: true,
            hours_since_touched: Some(36.0),
            tier: MasteryTier::Bronze,
            drill_streak: 1,
            mastery_probability: 0.3,
        };
        let c = components(&signals, &settings);
        let expected = 0.35 * (0.7 * 0.92 + 0.3) + 0.15 * 0.5 + 0.15 + 0.2 * 0.7 + 0.15 * 0.5;
        assert!(close(priority(&c, &settings.weights), expected));
        assert!(close(c.mastery_gap, 0.7));
        let mut weights = settings.weights.clone();
        weights.mastery_gap = 0.5;
        assert!(close(priority(&c, &weights), 1.0), "clamped to 1");
    }
}
