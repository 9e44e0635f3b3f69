//! An exam's questions, chosen from the repository's content: the
//! workflow's difficulty mix within one question per band, never the same
//! question twice, never a locked bank question, and an adaptive choice
//! that follows the ability estimate.

use std::collections::BTreeSet;
use std::path::PathBuf;

use proptest::prelude::*;
use tutorflow::content::{Bundle, ContentSource, FsSource, Unit};
use tutorflow::engine::mastery::irt;
use tutorflow::engine::modes::exam_select::{Pool, apportion, choose_fixed, choose_next};
use tutorflow::model::{Difficulty, ExamItemSource, ExamQuestion};

fn bundle() -> &'static Bundle {
    static BUNDLE: std::sync::OnceLock<Bundle> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let files = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(FsSource::new(root).fetch())
            .unwrap();
        Bundle::load(&files).unwrap()
    })
}

fn units(ids: &[&str]) -> Vec<&'static Unit> {
    let course = bundle().course("prealgebra").unwrap();
    ids.iter().map(|u| course.unit(u).unwrap()).collect()
}

fn key(q: &ExamQuestion) -> String {
    format!("{} {}", q.prompt, q.question_latex)
}

const UNIT_SETS: &[&[&str]] = &[
    &["whole-numbers"],
    &["fractions"],
    &["ratios"],
    &["decimals", "integers"],
    &["ratios", "fractions", "whole-numbers"],
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_fixed_exam_honours_the_mix_and_never_repeats_or_asks_a_locked_question(
        set in 0..UNIT_SETS.len(),
        n in 1u32..=12,
        seed in any::<u64>(),
        lock_first in any::<bool>(),
    ) {
        let bundle = bundle();
        let course = bundle.course("prealgebra").unwrap();
        let units = units(UNIT_SETS[set]);
        let locked: BTreeSet<String> = if lock_first {
            units.iter().filter_map(|u| u.exam.first().map(|q| q.id.clone())).collect()
        } else {
            BTreeSet::new()
        };
        let pool = Pool { bundle, course, units: units.clone(), locked: &locked, themes: vec![] };
        let mix = &bundle.workflows["default"].modes.exam.difficulty_mix;
        let chosen = choose_fixed(&pool, n, mix, seed).expect("the units give enough questions");
        prop_assert_eq!(chosen.len(), n as usize);
        let keys: BTreeSet<String> = chosen.iter().map(key).collect();
        prop_assert_eq!(keys.len(), chosen.len(), "no question twice");
        for q in &chosen {
            prop_assert!(units.iter().any(|u| u.id == q.unit_id));
            if let ExamItemSource::Bank { question_id, .. } = &q.source {
                prop_assert!(!locked.contains(question_id), "{} is locked", question_id);
            }
        }
        let wanted = apportion(n, mix);
        for (band, want) in Difficulty::ALL.into_iter().zip(wanted) {
            let got = chosen.iter().filter(|q| q.difficulty == band).count() as i64;
            prop_assert!((got - i64::from(want)).abs() <= 1, "{:?}: {} for {}", band, got, want);
        }
        let numbers: Vec<u32> = chosen.iter().map(|q| q.number).collect();
        prop_assert_eq!(numbers, (1..=n).collect::<Vec<_>>());
    }

    #[test]
    fn the_same_seed_chooses_the_same_exam(seed in any::<u64>()) {
        let bundle = bundle();
        let course = bundle.course("prealgebra").unwrap();
        let locked = BTreeSet::new();
        let pool = Pool { bundle, course, units: units(&["ratios", "fractions"]), locked: &locked, themes: vec![] };
        let mix = &bundle.workflows["default"].modes.exam.difficulty_mix;
        prop_assert_eq!(choose_fixed(&pool, 7, mix, seed), choose_fixed(&pool, 7, mix, seed));
    }
}

#[test]
fn an_adaptive_choice_follows_the_ability_estimate() {
    let bundle = bundle();
    let course = bundle.course("prealgebra").unwrap();
    let locked = BTreeSet::new();
    let pool = Pool {
        bundle,
        course,
        units: units(&["whole-numbers", "decimals"]),
        locked: &locked,
        themes: vec![],
    };
    let settings = &bundle.workflows["default"].irt;
    // A run of right answers moves the ability, and so the next item, up;
    // a run of wrong ones moves them down.
    for (correct, rising) in [(true, true), (false, false)] {
        let mut ability = irt::current_ability(None, settings);
        let mut taken: Vec<ExamQuestion> = Vec::new();
        for n in 0..6u64 {
            let target = irt::target_difficulty(Some(ability), settings);
            let q = choose_next(&pool, &taken, target, 7 + n).unwrap();
            assert!(taken.iter().all(|t| key(t) != key(&q)), "no question twice");
            ability = irt::update(
                Some(ability),
                &irt::Response {
                    difficulty: q.difficulty_value,
                    correct,
                    timing: None,
                },
                settings,
            );
            taken.push(q);
        }
        let (first, last) = (taken[0].difficulty_value, taken[5].difficulty_value);
        if rising {
            assert!(last > first, "after right answers: {first} then {last}");
        } else {
            assert!(last < first, "after wrong answers: {first} then {last}");
        }
    }
    // And the choice is the nearest to the target the units can give.
    let easy = choose_next(&pool, &[], 0.1, 1).unwrap();
    let hard = choose_next(&pool, &[], 0.9, 1).unwrap();
    assert!(easy.difficulty_value < hard.difficulty_value);
}
