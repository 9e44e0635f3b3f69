//! Mastery tiers per unit, earned by the workflow's
//! `mastery.bronze/silver/gold` rules (docs/architecture.md, "The guided
//! policy").
//!
//! A tier is earned, never lost. Recomputing the tier from the current
//! drill streak alone would let one wrong drill after a bronze exam pass
//! drop the unit back to `none` and re-block every unit that needs it; so
//! the recomputed tier only ever raises the stored one.

use crate::content::workflow::{MasterySettings, TierRule};
use crate::model::{ExamTier, MasteryTier, UnitProgress, UnitStatus};

/// The highest tier the unit has earned: each tier needs the one below, a
/// drill streak of at least its `drill_streak` and at least `exam_passes`
/// passed exam questions of its own tier. Tiers already held count as met,
/// so a silver pass after a broken streak still lifts a bronze unit.
pub fn earned_tier(progress: &UnitProgress, rules: &MasterySettings) -> MasteryTier {
    let meets = |tier: ExamTier, rule: &TierRule| {
        progress.drill.streak_correct >= rule.drill_streak
            && progress.exam.passed_by_tier.get(tier) >= rule.exam_passes
    };
    let mut earned = MasteryTier::None;
    for (tier, rule) in [
        (ExamTier::Bronze, &rules.bronze),
        (ExamTier::Silver, &rules.silver),
        (ExamTier::Gold, &rules.gold),
    ] {
        if MasteryTier::from(tier) > progress.mastery_tier && !meets(tier, rule) {
            break;
        }
        earned = tier.into();
    }
    earned
}

/// Raises the unit's tier to what its evidence has earned; a gold unit is
/// `mastered`. Returns the tier now held.
pub fn recompute_tier(progress: &mut UnitProgress, rules: &MasterySettings) -> MasteryTier {
    progress.mastery_tier = progress.mastery_tier.max(earned_tier(progress, rules));
    if progress.mastery_tier == MasteryTier::Gold {
        progress.status = UnitStatus::Mastered;
    }
    progress.mastery_tier
}

/// The exam tier to aim for next: the one above the unit's mastery tier
/// (gold stays gold).
pub fn desired_exam_tier(tier: MasteryTier) -> ExamTier {
    match tier {
        MasteryTier::None => ExamTier::Bronze,
        MasteryTier::Bronze => ExamTier::Silver,
        MasteryTier::Silver | MasteryTier::Gold => ExamTier::Gold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DrillCounters, ExamCounters, TierCounts};

    fn progress(streak: u32, bronze: u32, silver: u32, gold: u32) -> UnitProgress {
        UnitProgress {
            drill: DrillCounters {
                attempts: streak,
                correct: streak,
                streak_correct: streak,
            },
            exam: ExamCounters {
                passed_by_tier: TierCounts {
                    bronze,
                    silver,
                    gold,
                },
            },
            ..UnitProgress::default()
        }
    }

    #[test]
    fn default_rules() {
        let rules = MasterySettings::default();
        assert_eq!(
            earned_tier(&progress(2, 0, 0, 0), &rules),
            MasteryTier::None
        );
        assert_eq!(
            earned_tier(&progress(1, 1, 0, 0), &rules),
            MasteryTier::None
        );
        assert_eq!(
            earned_tier(&progress(2, 1, 0, 0), &rules),
            MasteryTier::Bronze
        );
        assert_eq!(
            earned_tier(&progress(2, 1, 1, 0), &rules),
            MasteryTier::Silver
        );
        assert_eq!(
            earned_tier(&progress(2, 1, 1, 1), &rules),
            MasteryTier::Gold
        );
        // Silver needs bronze first, gold needs silver.
        assert_eq!(
            earned_tier(&progress(2, 0, 1, 1), &rules),
            MasteryTier::None
        );
        assert_eq!(
            earned_tier(&progress(2, 1, 0, 1), &rules),
            MasteryTier::Bronze
        );
    }

    #[test]
    fn a_tier_is_never_lost_and_gold_masters_the_unit() {
        let rules = MasterySettings::default();
        let mut p = progress(2, 1, 0, 0);
        assert_eq!(recompute_tier(&mut p, &rules), MasteryTier::Bronze);
        p.drill.streak_correct = 0;
        assert_eq!(recompute_tier(&mut p, &rules), MasteryTier::Bronze);
        assert_eq!(p.status, UnitStatus::NotStarted);
        p.exam.passed_by_tier.silver = 1;
        assert_eq!(recompute_tier(&mut p, &rules), MasteryTier::Silver);
        p.exam.passed_by_tier.gold = 1;
        assert_eq!(recompute_tier(&mut p, &rules), MasteryTier::Gold);
        assert_eq!(p.status, UnitStatus::Mastered);
    }

    #[test]
    fn workflow_rules_replace_the_default_numbers() {
        let rules = MasterySettings {
            bronze: TierRule {
                drill_streak: 3,
                exam_passes: 2,
            },
            ..MasterySettings::default()
        };
        assert_eq!(
            earned_tier(&progress(2, 2, 0, 0), &rules),
            MasteryTier::None
        );
        assert_eq!(
            earned_tier(&progress(3, 1, 0, 0), &rules),
            MasteryTier::None
        );
        assert_eq!(
            earned_tier(&progress(3, 2, 0, 0), &rules),
            MasteryTier::Bronze
        );
    }

    #[test]
    fn desired_tier_is_the_next_one_up() {
        assert_eq!(desired_exam_tier(MasteryTier::None), ExamTier::Bronze);
        assert_eq!(desired_exam_tier(MasteryTier::Bronze), ExamTier::Silver);
        assert_eq!(desired_exam_tier(MasteryTier::Silver), ExamTier::Gold);
        assert_eq!(desired_exam_tier(MasteryTier::Gold), ExamTier::Gold);
    }
}
