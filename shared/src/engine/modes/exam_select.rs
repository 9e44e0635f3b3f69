//! Which questions an exam asks: items generated from the units'
//! blueprints (their answers computed) and questions of the units' exam
//! banks, never the same question twice and never a bank question the
//! student is locked out of.
//!
//! A fixed exam takes all its questions at creation, at the workflow's
//! easy / medium / hard mix (each count within one of its share). An
//! adaptive exam takes one question at a time, the one whose difficulty is
//! nearest the difficulty the student's ability estimate calls for.
//! Everything is drawn from a seed handed in, so the same seed chooses the
//! same questions.

use std::collections::BTreeSet;

use crate::content::workflow::DifficultyMix;
use crate::content::{Bundle, Course, ExamItem, Unit};
use crate::engine::practice::drill_grade;
use crate::engine::practice::generate::{Item, generate_themed};
use crate::engine::rng::SplitMix64;
use crate::model::{
    AnswerFormat, AnswerKind, Difficulty, ExamItemSource, ExamQuestion, ExamQuestionStatus,
    ExamTier, ExpectedAnswer,
};

/// Generation tries per question before a difficulty is given up on.
const GENERATE_TRIES: usize = 24;
/// Generated candidates an adaptive pick looks at.
const ADAPTIVE_CANDIDATES: usize = 12;

/// What questions are drawn from.
pub struct Pool<'a> {
    pub bundle: &'a Bundle,
    pub course: &'a Course,
    pub units: Vec<&'a Unit>,
    pub locked: &'a BTreeSet<String>,
    /// The student's example themes: a generated question is told in one
    /// its blueprint offers (its answer is the same in every theme).
    pub themes: Vec<&'static str>,
}

/// The difficulty band of a value on the ability scale.
pub fn band(difficulty: f64) -> Difficulty {
    if difficulty < 0.4 {
        Difficulty::Easy
    } else if difficulty < 0.7 {
        Difficulty::Medium
    } else {
        Difficulty::Hard
    }
}

/// The difficulty generation aims at for a band.
fn aim(band: Difficulty) -> f64 {
    match band {
        Difficulty::Easy => 0.2,
        Difficulty::Medium => 0.55,
        Difficulty::Hard => 0.85,
    }
}

/// A bank question's difficulty on the ability scale, from its tier.
fn tier_difficulty(tier: ExamTier) -> f64 {
    match tier {
        ExamTier::Bronze => 0.25,
        ExamTier::Silver => 0.55,
        ExamTier::Gold => 0.85,
    }
}

/// Questions per band for `n` questions at `mix`: largest remainders, so
/// each count is within one of its exact share.
pub fn apportion(n: u32, mix: &DifficultyMix) -> [u32; 3] {
    let weights =
        [mix.easy, mix.medium, mix.hard].map(|w| if w.is_finite() { w.max(0.0) } else { 0.0 });
    let total: f64 = weights.iter().sum();
    let weights = if total > 0.0 {
        weights.map(|w| w / total)
    } else {
        [1.0 / 3.0; 3]
    };
    let exact = weights.map(|w| w * f64::from(n));
    let mut counts = exact.map(|e| e.floor() as u32);
    let mut left = n - counts.iter().sum::<u32>();
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for i in order.into_iter().cycle() {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    counts
}

/// Every question an exam could ask, by its text: two questions that read
/// the same are one.
fn key(q: &ExamQuestion) -> String {
    format!("{} {}", q.prompt, q.question_latex)
        .split_whitespace()
        .collect::<String>()
        .to_lowercase()
}

fn is_new(q: &ExamQuestion, taken: &[ExamQuestion]) -> bool {
    let k = key(q);
    taken.iter().all(|t| t.source != q.source && key(t) != k)
}

/// An item generated from `blueprint_id` as an exam question.
fn generated(
    pool: &Pool<'_>,
    unit: &Unit,
    blueprint_id: &str,
    target: f64,
    seed: u64,
) -> Option<ExamQuestion> {
    let blueprint = pool.bundle.blueprints.get(blueprint_id)?;
    let item = generate_themed(blueprint, target.clamp(0.0, 1.0), seed, &pool.themes).ok()?;
    Some(from_item(unit, &item, target))
}

fn from_item(unit: &Unit, item: &Item, target: f64) -> ExamQuestion {
    let expected = drill_grade::expected_answer(item);
    let format = if item.format == crate::content::blueprint::ItemFormat::MultipleChoice {
        AnswerFormat::Choice
    } else if expected.kind == AnswerKind::Number {
        AnswerFormat::Number
    } else {
        AnswerFormat::Text
    };
    // The worked steps read as sentences, each with its full stop.
    let explanation = item
        .steps
        .iter()
        .map(|s| s.text.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.ends_with(['.', '!', '?', '✓']) {
                s.to_owned()
            } else {
                format!("{s}.")
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    ExamQuestion {
        number: 0,
        unit_id: unit.id.clone(),
        prompt: item.stem.trim().to_owned(),
        question_latex: item.question_latex.trim().to_owned(),
        format,
        options: if format == AnswerFormat::Choice {
            item.options.clone()
        } else {
            Vec::new()
        },
        difficulty: band(item.difficulty),
        difficulty_value: item.difficulty,
        source: ExamItemSource::Blueprint {
            blueprint_id: item.blueprint_id.clone(),
            seed: item.seed,
            target_difficulty: target,
        },
        expected,
        correct_answer: item.answer.text.clone(),
        explanation,
        shown_at: None,
        status: ExamQuestionStatus::Unanswered,
        student_answer: None,
        result: None,
        credit: 0.0,
        mistake: None,
        mistake_tag: None,
        answered_at: None,
        rubric: Vec::new(),
        feedback: None,
        judged_by: None,
    }
}

/// A bank question as an exam question.
pub(crate) fn from_bank(unit: &Unit, item: &ExamItem) -> Option<ExamQuestion> {
    if item.is_written() {
        return Some(written(unit, item));
    }
    let index = item.option_index(&item.answer)?;
    let correct = item.options.get(index)?;
    let difficulty = tier_difficulty(item.tier);
    Some(ExamQuestion {
        number: 0,
        unit_id: unit.id.clone(),
        prompt: item.stem.trim().to_owned(),
        question_latex: String::new(),
        format: AnswerFormat::Choice,
        options: item.options.clone(),
        difficulty: band(difficulty),
        difficulty_value: difficulty,
        source: ExamItemSource::Bank {
            question_id: item.id.clone(),
            tier: item.tier,
        },
        expected: ExpectedAnswer {
            kind: AnswerKind::Mcq,
            value: correct.clone(),
            unit: None,
            options: item.options.clone(),
            mistakes: Vec::new(),
        },
        correct_answer: format!("{}: {correct}", ExamItem::option_id(index)),
        explanation: item.memo.trim().to_owned(),
        shown_at: None,
        status: ExamQuestionStatus::Unanswered,
        student_answer: None,
        result: None,
        credit: 0.0,
        mistake: None,
        mistake_tag: None,
        answered_at: None,
        rubric: Vec::new(),
        feedback: None,
        judged_by: None,
    })
}

/// A written bank question: answered in words, its model answer and
/// rubric kept for the judge.
fn written(unit: &Unit, item: &ExamItem) -> ExamQuestion {
    let difficulty = tier_difficulty(item.tier);
    let answer = item.answer.trim().to_owned();
    ExamQuestion {
        number: 0,
        unit_id: unit.id.clone(),
        prompt: item.stem.trim().to_owned(),
        question_latex: String::new(),
        format: AnswerFormat::Text,
        options: Vec::new(),
        difficulty: band(difficulty),
        difficulty_value: difficulty,
        source: ExamItemSource::Bank {
            question_id: item.id.clone(),
            tier: item.tier,
        },
        expected: ExpectedAnswer {
            kind: AnswerKind::Text,
            value: answer.clone(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        },
        correct_answer: answer,
        explanation: item.memo.trim().to_owned(),
        shown_at: None,
        status: ExamQuestionStatus::Unanswered,
        student_answer: None,
        result: None,
        credit: 0.0,
        mistake: None,
        mistake_tag: None,
        answered_at: None,
        rubric: item.rubric.clone(),
        feedback: None,
        judged_by: None,
    }
}

/// The units' bank questions the student may be asked, shuffled.
fn bank(pool: &Pool<'_>, rng: &mut SplitMix64) -> Vec<ExamQuestion> {
    let mut all: Vec<ExamQuestion> = pool
        .units
        .iter()
        .flat_map(|u| u.exam.iter().map(move |item| (*u, item)))
        .filter(|(_, item)| !pool.locked.contains(&item.id))
        .filter_map(|(u, item)| from_bank(u, item))
        .collect();
    rng.shuffle(&mut all);
    all
}

/// A new generated question in `band`, from the units in turn.
fn generate_in(
    pool: &Pool<'_>,
    band_wanted: Difficulty,
    taken: &[ExamQuestion],
    rng: &mut SplitMix64,
) -> Option<ExamQuestion> {
    let units: Vec<&Unit> = pool
        .units
        .iter()
        .copied()
        .filter(|u| !u.blueprints.is_empty())
        .collect();
    if units.is_empty() {
        return None;
    }
    let start = rng.index(units.len());
    for attempt in 0..GENERATE_TRIES {
        let unit = units[(start + attempt) % units.len()];
        let blueprint = &unit.blueprints[rng.index(unit.blueprints.len())];
        let Some(q) = generated(pool, unit, blueprint, aim(band_wanted), rng.next_u64()) else {
            continue;
        };
        if q.difficulty == band_wanted && is_new(&q, taken) {
            return Some(q);
        }
    }
    None
}

/// `n` questions at `mix`, easiest first; every third from the bank while
/// it has questions of the band. Where neither source has a new question
/// of a band, the nearest new question of another band stands in; `None`
/// when the units cannot give `n` different questions.
pub fn choose_fixed(
    pool: &Pool<'_>,
    n: u32,
    mix: &DifficultyMix,
    seed: u64,
) -> Option<Vec<ExamQuestion>> {
    let mut rng = SplitMix64::new(seed);
    let mut bank = bank(pool, &mut rng);
    let counts = apportion(n, mix);
    let mut chosen: Vec<ExamQuestion> = Vec::new();
    for (band_wanted, count) in Difficulty::ALL.into_iter().zip(counts) {
        for _ in 0..count {
            let from_bank_first = chosen.len() % 3 == 2;
            let take_bank = |bank: &mut Vec<ExamQuestion>, chosen: &[ExamQuestion]| {
                let i = bank
                    .iter()
                    .position(|q| q.difficulty == band_wanted && is_new(q, chosen))?;
                Some(bank.remove(i))
            };
            let next = if from_bank_first {
                take_bank(&mut bank, &chosen)
                    .or_else(|| generate_in(pool, band_wanted, &chosen, &mut rng))
            } else {
                generate_in(pool, band_wanted, &chosen, &mut rng)
                    .or_else(|| take_bank(&mut bank, &chosen))
            };
            let next =
                next.or_else(|| nearest(pool, aim(band_wanted), &chosen, &mut bank, &mut rng));
            chosen.push(next?);
        }
    }
    for (i, q) in chosen.iter_mut().enumerate() {
        q.number = i as u32 + 1;
    }
    Some(chosen)
}

/// The new question whose difficulty is nearest `target`: generated ones
/// aimed at it and the bank's.
fn nearest(
    pool: &Pool<'_>,
    target: f64,
    taken: &[ExamQuestion],
    bank: &mut Vec<ExamQuestion>,
    rng: &mut SplitMix64,
) -> Option<ExamQuestion> {
    let mut candidates: Vec<ExamQuestion> = Vec::new();
    for unit in pool.units.iter().filter(|u| !u.blueprints.is_empty()) {
        for _ in 0..ADAPTIVE_CANDIDATES.div_ceil(pool.units.len().max(1)) {
            let blueprint = &unit.blueprints[rng.index(unit.blueprints.len())];
            if let Some(q) = generated(pool, unit, blueprint, target, rng.next_u64())
                && is_new(&q, taken)
                && is_new(&q, &candidates)
            {
                candidates.push(q);
            }
        }
    }
    let from_bank = bank
        .iter()
        .enumerate()
        .filter(|(_, q)| is_new(q, taken))
        .min_by(|(_, a), (_, b)| {
            (a.difficulty_value - target)
                .abs()
                .total_cmp(&(b.difficulty_value - target).abs())
        })
        .map(|(i, q)| (i, (q.difficulty_value - target).abs()));
    let generated_best = candidates.into_iter().min_by(|a, b| {
        (a.difficulty_value - target)
            .abs()
            .total_cmp(&(b.difficulty_value - target).abs())
    });
    match (generated_best, from_bank) {
        (Some(g), Some((i, gap))) if gap < (g.difficulty_value - target).abs() => {
            Some(bank.remove(i))
        }
        (Some(g), _) => Some(g),
        (None, Some((i, _))) => Some(bank.remove(i)),
        (None, None) => None,
    }
}

/// The next question of an adaptive exam: new, and nearest in difficulty
/// to `target`.
pub fn choose_next(
    pool: &Pool<'_>,
    taken: &[ExamQuestion],
    target: f64,
    seed: u64,
) -> Option<ExamQuestion> {
    let mut rng = SplitMix64::new(seed);
    let mut bank = bank(pool, &mut rng);
    let mut q = nearest(pool, target, taken, &mut bank, &mut rng)?;
    q.number = taken.len() as u32 + 1;
    Some(q)
}

/// How many different questions the units could give at most: every bank
/// question plus many generated ones per blueprint.
pub fn has_questions(pool: &Pool<'_>) -> bool {
    pool.units
        .iter()
        .any(|u| !u.blueprints.is_empty() || u.exam.iter().any(|q| !pool.locked.contains(&q.id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn apportioned_counts_add_up_and_are_within_one_of_the_share(
            n in 1u32..=30,
            easy in 0.0f64..1.0,
            medium in 0.0f64..1.0,
            hard in 0.0f64..1.0,
        ) {
            prop_assume!(easy + medium + hard > 0.01);
            let mix = DifficultyMix { easy, medium, hard };
            let counts = apportion(n, &mix);
            prop_assert_eq!(counts.iter().sum::<u32>(), n);
            let total = easy + medium + hard;
            for (count, w) in counts.iter().zip([easy, medium, hard]) {
                let share = w / total * f64::from(n);
                prop_assert!((f64::from(*count) - share).abs() < 1.0 + 1e-9, "{count} vs {share}");
            }
        }
    }

    #[test]
    fn the_default_mix_of_seven_is_two_four_one() {
        let mix = DifficultyMix::default();
        assert_eq!(apportion(7, &mix), [2, 4, 1]);
        assert_eq!(apportion(10, &mix), [3, 5, 2]);
    }
}
