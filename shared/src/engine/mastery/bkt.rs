//! Bayesian Knowledge Tracing, as OATutor runs it: one probability per unit
//! that the student has learned it, updated from graded first attempts only.
//!
//! How it relates to the mastery tiers: the tier is the gate. Prerequisite
//! blocking, exam readiness and the desired exam tier are decided by tiers,
//! which are earned by exam passes and drill streaks (see
//! [`crate::engine::mastery::tier`]). The probability never unlocks or blocks
//! anything; it informs the unit priority score (weight
//! `policy.weights.mastery_gap`, 0 by default) and progress reports, where
//! [`is_mastered`] says whether it crossed `mastered_at`.

use crate::content::Course;
use crate::content::workflow::BktParams;
use crate::math::unit_interval;

/// The parameters for `unit_id`: the workflow's, with the unit's own
/// overrides when its file has a `bkt:` block. Every value is kept in \[0, 1\].
pub fn params_for(workflow: &BktParams, course: &Course, unit_id: &str) -> BktParams {
    let overrides = course.unit(unit_id).and_then(|u| u.bkt.as_ref());
    let p = workflow.overridden_by(overrides);
    BktParams {
        prior: unit_interval(p.prior),
        learn: unit_interval(p.learn),
        guess: unit_interval(p.guess),
        slip: unit_interval(p.slip),
        mastered_at: unit_interval(p.mastered_at),
    }
}

/// The probability after one graded first attempt: Bayes' rule on the
/// observation (with guess and slip), then the chance of learning from it.
pub fn update(probability: f64, correct: bool, params: &BktParams) -> f64 {
    let p = unit_interval(probability);
    let (if_learned, if_not) = if correct {
        (p * (1.0 - params.slip), (1.0 - p) * params.guess)
    } else {
        (p * params.slip, (1.0 - p) * (1.0 - params.guess))
    };
    let evidence = if_learned + if_not;
    // Impossible observations (e.g. guess = 0 and nothing learned) teach nothing.
    let posterior = if evidence > 0.0 {
        if_learned / evidence
    } else {
        p
    };
    unit_interval(posterior + (1.0 - posterior) * params.learn)
}

/// Whether the probability has crossed the mastery threshold.
pub fn is_mastered(probability: f64, params: &BktParams) -> bool {
    probability >= params.mastered_at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_correct_answer_from_the_prior_matches_the_formula() {
        let params = BktParams::default();
        // posterior = 0.1×0.9 / (0.1×0.9 + 0.9×0.1) = 0.5; then 0.5 + 0.5×0.1.
        assert!(close(update(0.1, true, &params), 0.55));
        // posterior = 0.1×0.1 / (0.1×0.1 + 0.9×0.9) = 0.01/0.82.
        let posterior = 0.01 / 0.82;
        assert!(close(
            update(0.1, false, &params),
            posterior + (1.0 - posterior) * 0.1
        ));
    }

    #[test]
    fn enough_correct_answers_cross_the_mastery_threshold() {
        let params = BktParams::default();
        let mut p = params.prior;
        let mut answers = 0;
        while !is_mastered(p, &params) {
            p = update(p, true, &params);
            answers += 1;
            assert!(answers < 20, "never mastered");
        }
        assert_eq!(answers, 3, "0.1 → 0.55 → 0.925 → 0.992");
    }

    #[test]
    fn degenerate_parameters_stay_in_range() {
        let params = BktParams {
            prior: 0.0,
            learn: 0.0,
            guess: 0.0,
            slip: 0.0,
            mastered_at: 0.95,
        };
        assert!(close(update(0.0, true, &params), 0.0));
        assert!(close(update(1.0, false, &params), 1.0));
        assert!(close(update(f64::NAN, true, &params), 0.0));
    }
}
