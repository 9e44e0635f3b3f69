//! IRT-lite: a per-unit ability estimate in [0, 1], moved
//! after every graded generated item by an Elo-style step, and the
//! difficulty of the next item chosen so that the student succeeds with a
//! set probability (`irt.target_success`, 0.75 by default, as in Math Garden).
//!
//! Abilities and item difficulties share one scale. The chance of a right
//! answer follows a logistic curve in their difference:
//! P = 1 / (1 + e^(-SCALE · (ability - difficulty))). With SCALE = 8 an item
//! 0.14 below the student's ability is answered correctly 3 times in 4, and
//! the easiest and hardest items (difficulty 0 and 1) span the whole range
//! from near-certain failure to near-certain success.

use crate::content::workflow::IrtSettings;

/// Steepness of the success curve on the [0, 1] scale.
pub const SCALE: f64 = 8.0;

/// Success probabilities are kept inside this margin, so a setting of 0 or
/// 1 still gives a finite target.
const PROBABILITY_MARGIN: f64 = 0.01;

/// A speed weight never moves a step by more than this factor either way.
const MAX_SPEED_WEIGHT: f64 = 1.5;
const MIN_SPEED_WEIGHT: f64 = 0.5;

/// One graded generated item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Response {
    /// The item's computed difficulty in [0, 1].
    pub difficulty: f64,
    pub correct: bool,
    /// How long the student took, and how long a competent student takes
    /// (the blueprint's benchmark), when both are known.
    pub timing: Option<Timing>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub seconds: f64,
    pub competent_seconds: f64,
}

/// The stored ability, or the workflow's starting value for a unit with no
/// graded items yet (or a stored value that is not a number in [0, 1]).
pub fn current_ability(stored: Option<f64>, settings: &IrtSettings) -> f64 {
    match stored {
        Some(a) if (0.0..=1.0).contains(&a) => a,
        _ => unit_or(settings.initial_ability, 0.5),
    }
}

fn unit_or(value: f64, fallback: f64) -> f64 {
    if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        fallback
    }
}

/// Chance that a student of `ability` answers an item of `difficulty` correctly.
pub fn success_probability(ability: f64, difficulty: f64) -> f64 {
    let gap = unit_or(ability, 0.5) - unit_or(difficulty, 0.5);
    1.0 / (1.0 + (-SCALE * gap).exp())
}

/// How strongly the response time counts: a right answer faster than a
/// competent student's is stronger evidence of ability than a slow one
/// ("correct AND fast → ability > difficulty"). Wrong answers count fully
/// whatever their speed.
fn speed_weight(response: &Response) -> f64 {
    match response.timing {
        Some(t)
            if response.correct
                && t.seconds > 0.0
                && t.seconds.is_finite()
                && t.competent_seconds > 0.0
                && t.competent_seconds.is_finite() =>
        {
            (t.competent_seconds / t.seconds).clamp(MIN_SPEED_WEIGHT, MAX_SPEED_WEIGHT)
        }
        _ => 1.0,
    }
}

/// The ability after `response`: an Elo step of `k` times the surprise
/// (1 − P for a right answer, −P for a wrong one), kept in [0, 1].
pub fn update(stored: Option<f64>, response: &Response, settings: &IrtSettings) -> f64 {
    let ability = current_ability(stored, settings);
    let expected = success_probability(ability, response.difficulty);
    let outcome = if response.correct { 1.0 } else { 0.0 };
    let k = unit_or(settings.k, 0.1);
    let next = ability + k * speed_weight(response) * (outcome - expected);
    next.clamp(0.0, 1.0)
}

/// The item difficulty at which this student succeeds with probability
/// `target_success`: ability − logit(p) / SCALE, kept in [0, 1].
pub fn target_difficulty(stored: Option<f64>, settings: &IrtSettings) -> f64 {
    let ability = current_ability(stored, settings);
    let p =
        unit_or(settings.target_success, 0.75).clamp(PROBABILITY_MARGIN, 1.0 - PROBABILITY_MARGIN);
    let logit = (p / (1.0 - p)).ln();
    (ability - logit / SCALE).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::SplitMix64;
    use proptest::prelude::*;

    fn settings(k: f64, target: f64) -> IrtSettings {
        IrtSettings {
            initial_ability: 0.5,
            k,
            target_success: target,
            request_step: 0.25,
        }
    }

    fn answer(difficulty: f64, correct: bool) -> Response {
        Response {
            difficulty,
            correct,
            timing: None,
        }
    }

    #[test]
    fn defaults_aim_at_three_in_four() {
        let s = IrtSettings::default();
        let target = target_difficulty(None, &s);
        assert!((success_probability(0.5, target) - 0.75).abs() < 1e-9);
        assert!(
            target < 0.5,
            "an item a bit easier than the student: {target}"
        );
        assert!((success_probability(0.4, 0.4) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn nonsense_inputs_fall_back_instead_of_spreading() {
        let s = IrtSettings::default();
        for stored in [
            Some(f64::NAN),
            Some(-3.0),
            Some(7.0),
            Some(f64::INFINITY),
            None,
        ] {
            assert_eq!(current_ability(stored, &s), 0.5);
        }
        let weird = Response {
            difficulty: f64::NAN,
            correct: true,
            timing: Some(Timing {
                seconds: 0.0,
                competent_seconds: f64::NAN,
            }),
        };
        let next = update(Some(0.5), &weird, &s);
        assert!((0.0..=1.0).contains(&next));
        let broken = IrtSettings {
            initial_ability: f64::NAN,
            k: f64::NAN,
            target_success: f64::NAN,
            request_step: f64::NAN,
        };
        assert!((0.0..=1.0).contains(&target_difficulty(None, &broken)));
        assert!((0.0..=1.0).contains(&update(None, &answer(0.3, false), &broken)));
    }

    /// A simulated student of fixed true ability, drilled at the target
    /// difficulty, ends up estimated near that ability.
    #[test]
    fn the_estimate_converges_on_a_simulated_student() {
        let s = settings(0.05, 0.75);
        for true_ability in [0.2f64, 0.5, 0.8] {
            let mut rng = SplitMix64::new(true_ability.to_bits());
            let mut stored = None;
            let mut recent = Vec::new();
            for round in 0..2000 {
                let difficulty = target_difficulty(stored, &s);
                let p = success_probability(true_ability, difficulty);
                let correct = (rng.next_u64() as f64 / u64::MAX as f64) < p;
                stored = Some(update(stored, &answer(difficulty, correct), &s));
                if round >= 1000 {
                    recent.push(stored.unwrap_or_default());
                }
            }
            let mean = recent.iter().sum::<f64>() / recent.len() as f64;
            assert!((mean - true_ability).abs() < 0.05, "{true_ability}: {mean}");
        }
    }

    proptest! {
        #[test]
        fn right_answers_raise_and_wrong_answers_lower(
            ability in 0.0f64..=1.0, difficulty in 0.0f64..=1.0, k in 0.0f64..=1.0,
        ) {
            let s = settings(k, 0.75);
            let up = update(Some(ability), &answer(difficulty, true), &s);
            let down = update(Some(ability), &answer(difficulty, false), &s);
            prop_assert!(up >= ability && down <= ability);
            prop_assert!((0.0..=1.0).contains(&up) && (0.0..=1.0).contains(&down));
            if k > 0.0 && ability > 0.0 && ability < 1.0 {
                prop_assert!(up > ability && down < ability);
            }
        }

        #[test]
        fn surprises_move_the_estimate_more(
            ability in 0.05f64..=0.95, easy in 0.0f64..=1.0, hard in 0.0f64..=1.0,
        ) {
            prop_assume!(easy < hard);
            let s = settings(0.1, 0.75);
            // Solving a harder item is more surprising than solving an easier one...
            prop_assert!(update(Some(ability), &answer(hard, true), &s) >= update(Some(ability), &answer(easy, true), &s));
            // ...and failing an easier one more surprising than failing a harder one.
            prop_assert!(update(Some(ability), &answer(easy, false), &s) <= update(Some(ability), &answer(hard, false), &s));
        }

        #[test]
        fn quick_right_answers_count_more(
            ability in 0.05f64..=0.95, difficulty in 0.0f64..=1.0,
            fast in 1.0f64..10.0, slow in 10.0f64..120.0,
        ) {
            let s = settings(0.1, 0.75);
            let timed = |seconds| Response {
                difficulty,
                correct: true,
                timing: Some(Timing { seconds, competent_seconds: 15.0 }),
            };
            let quick = update(Some(ability), &timed(fast), &s);
            let slowly = update(Some(ability), &timed(slow), &s);
            prop_assert!(quick >= slowly && slowly >= ability);
        }

        #[test]
        fn the_target_gives_the_configured_success_rate(
            ability in 0.0f64..=1.0, target in 0.05f64..=0.95,
        ) {
            let s = settings(0.1, target);
            let difficulty = target_difficulty(Some(ability), &s);
            prop_assert!((0.0..=1.0).contains(&difficulty));
            if difficulty > 0.0 && difficulty < 1.0 {
                prop_assert!((success_probability(ability, difficulty) - target).abs() < 1e-9);
            }
        }

        #[test]
        fn abler_students_get_harder_items_and_higher_targets_easier_ones(
            low in 0.0f64..=1.0, high in 0.0f64..=1.0, t1 in 0.05f64..=0.95, t2 in 0.05f64..=0.95,
        ) {
            prop_assume!(low < high && t1 < t2);
            prop_assert!(target_difficulty(Some(low), &settings(0.1, t1)) <= target_difficulty(Some(high), &settings(0.1, t1)));
            prop_assert!(target_difficulty(Some(low), &settings(0.1, t2)) <= target_difficulty(Some(low), &settings(0.1, t1)));
        }
    }
}
