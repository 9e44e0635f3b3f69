//! Drill answers graded against items regenerated from every shipped
//! blueprint: the answer (as text, and as an option letter when there are
//! options) is right, every distractor is wrong and names its mistake.

use std::path::PathBuf;

use tutorflow::content::blueprint::ItemFormat;
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::practice::drill::Expected;
use tutorflow::engine::practice::drill_grade::grade_drill;
use tutorflow::engine::practice::generate::generate;
use tutorflow::model::GradeOutcome;

fn bundle() -> Bundle {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(FsSource::new(root).fetch())
        .unwrap();
    Bundle::load(&files).unwrap()
}

#[test]
fn every_blueprint_item_grades_its_answer_right_and_its_distractors_wrong() {
    let bundle = bundle();
    let settings = &bundle.workflows["default"].grading;
    for blueprint in bundle.blueprints.values() {
        for seed in 0..40u64 {
            let difficulty = (seed % 5) as f64 / 4.0;
            let item = generate(blueprint, difficulty, seed).unwrap();
            let expected = Expected::Generated(Box::new(item.clone()));
            let right = grade_drill(&expected, &item.answer.text, settings);
            assert_eq!(
                right.outcome,
                GradeOutcome::Correct,
                "{} seed {seed}: {} ({})",
                blueprint.id,
                item.answer.text,
                right.reason
            );
            assert!(right.mistake_tag.is_none());
            if item.format == ItemFormat::MultipleChoice {
                let letter = char::from(b'A' + item.answer_index as u8).to_string();
                let by_letter = grade_drill(&expected, &letter, settings);
                assert_eq!(
                    by_letter.outcome,
                    GradeOutcome::Correct,
                    "{} seed {seed}: letter {letter}",
                    blueprint.id
                );
            }
            for d in &item.distractors {
                let wrong = grade_drill(&expected, &d.text, settings);
                if item.format == ItemFormat::MultipleChoice {
                    let index = item.options.iter().position(|o| *o == d.text).unwrap();
                    let letter = char::from(b'A' + index as u8).to_string();
                    let by_letter = grade_drill(&expected, &letter, settings);
                    assert_eq!(
                        (by_letter.outcome, &by_letter.mistake_tag),
                        (wrong.outcome, &wrong.mistake_tag),
                        "{} seed {seed}: {letter} names the option {}",
                        blueprint.id,
                        d.text
                    );
                }
                assert_ne!(
                    wrong.outcome,
                    GradeOutcome::Correct,
                    "{} seed {seed}: distractor {}",
                    blueprint.id,
                    d.text
                );
                if d.mistake_tag.is_some() {
                    assert_eq!(
                        wrong.mistake_tag, d.mistake_tag,
                        "{} seed {seed}: distractor {}",
                        blueprint.id, d.text
                    );
                }
            }
        }
    }
}

#[test]
fn authored_drills_are_graded_against_their_signed_answer() {
    let bundle = bundle();
    let settings = &bundle.workflows["default"].grading;
    let expected = Expected::Authored {
        prompt: "Solve for x".into(),
        question_latex: "2x+3=11".into(),
        expected_answer: "x = 4".into(),
    };
    assert_eq!(
        grade_drill(&expected, "x=4", settings).outcome,
        GradeOutcome::Correct
    );
    assert_eq!(
        grade_drill(&expected, "4", settings).outcome,
        GradeOutcome::Correct
    );
    assert_eq!(
        grade_drill(&expected, "x = -4", settings).outcome,
        GradeOutcome::Wrong
    );
    assert_eq!(
        grade_drill(&expected, "pineapple", settings).outcome,
        GradeOutcome::Unverifiable
    );
}

/// A typed answer to a multiple-choice drill is graded by value, like a
/// teacher would: every wrong answer the blueprint's mistakes compute
/// names its mistake whether or not it was shown, a number near the answer
/// that no mistake explains is `close`, and one that a mistake of method
/// explains is `wrong`.
#[test]
fn typed_answers_are_graded_by_value_against_every_mistake() {
    let bundle = bundle();
    let settings = &bundle.workflows["default"].grading;
    let mut unshown_named = 0;
    for blueprint in bundle.blueprints.values() {
        for seed in 0..40u64 {
            let difficulty = (seed % 5) as f64 / 4.0;
            let item = generate(blueprint, difficulty, seed).unwrap();
            let expected = Expected::Generated(Box::new(item.clone()));
            for m in &item.mistakes {
                let verdict = grade_drill(&expected, &m.text, settings);
                assert!(
                    matches!(verdict.outcome, GradeOutcome::Wrong | GradeOutcome::Close),
                    "{} seed {seed}: the {} answer {} is {:?}",
                    blueprint.id,
                    m.strategy,
                    m.text,
                    verdict.outcome
                );
                let named = verdict.mistake.expect("a computed mistake is named");
                // Two mistakes may give the same value (2/10 and 1/5); the
                // one listed first names it.
                let position = |strategy: &str| {
                    item.mistakes
                        .iter()
                        .position(|o| o.strategy == strategy)
                        .expect("one of the item's mistakes")
                };
                assert!(
                    named.strategy == m.strategy
                        || position(&named.strategy) < position(&m.strategy),
                    "{} seed {seed}: {} named {} instead of {}",
                    blueprint.id,
                    m.text,
                    named.strategy,
                    m.strategy
                );
                if !m.slip && verdict.outcome == GradeOutcome::Close {
                    panic!(
                        "{} seed {seed}: {} is the {} mistake, not a near miss",
                        blueprint.id, m.text, m.strategy
                    );
                }
                if !item.options.contains(&m.text) && named.strategy == m.strategy {
                    unshown_named += 1;
                }
            }
        }
    }
    assert!(
        unshown_named > 100,
        "mistakes not shown as options are named too ({unshown_named})"
    );
}

fn item_with(
    blueprint: &str,
    wanted: impl Fn(&tutorflow::engine::practice::generate::Item) -> bool,
) -> tutorflow::engine::practice::generate::Item {
    let bundle = bundle();
    let bp = &bundle.blueprints[blueprint];
    (0..2000u64)
        .map(|seed| generate(bp, (seed % 5) as f64 / 4.0, seed).unwrap())
        .find(|item| wanted(item))
        .unwrap_or_else(|| panic!("no such {blueprint} item in 2000 seeds"))
}

#[test]
fn a_near_number_that_is_no_option_is_close_and_a_sum_for_a_difference_is_wrong_operation() {
    let bundle = bundle();
    let settings = &bundle.workflows["default"].grading;
    // A subtraction whose sum is not one of the options.
    let item = item_with("MATH.ARITH.SUB.BORROW", |item| {
        let (a, b) = (value(item, "a"), value(item, "b"));
        a - b > 20 && !item.options.contains(&(a + b).to_string())
    });
    let (a, b) = (value(&item, "a"), value(&item, "b"));
    let expected = Expected::Generated(Box::new(item.clone()));
    let sum = grade_drill(&expected, &(a + b).to_string(), settings);
    assert_eq!(sum.outcome, GradeOutcome::Wrong, "{}", sum.reason);
    assert_eq!(sum.mistake_tag.as_deref(), Some("wrong_operation"));
    let answer = a - b;
    let near = [answer + 2, answer - 2]
        .into_iter()
        .find(|n| !item.mistakes.iter().any(|m| m.value == n.to_string()))
        .expect("a near number no mistake gives");
    let verdict = grade_drill(&expected, &near.to_string(), settings);
    assert!(!item.options.contains(&near.to_string()));
    assert_eq!(
        verdict.outcome,
        GradeOutcome::Close,
        "{near} for {answer}: {}",
        verdict.reason
    );
    assert_eq!(verdict.mistake, None);
    assert!(
        verdict.tags.is_empty(),
        "no not_an_option: {:?}",
        verdict.tags
    );
}

/// The item's `a` and `b` (for blueprints written by digits, rebuilt).
fn value(item: &tutorflow::engine::practice::generate::Item, name: &str) -> i128 {
    let digit = |n: &str| item.parameter(n).map_or(0, |v| v.numer());
    match name {
        "a" => 100 * digit("ah") + 10 * digit("at") + digit("ao"),
        _ => 100 * digit("bh") + 10 * digit("bt") + digit("bo"),
    }
}

/// For every unit and every blueprint it practises: each wrong answer the
/// blueprint computes is explained in the unit's own words, by grading the
/// typed answer; the item's hints carry its numbers and never its answer.
#[test]
fn every_computed_mistake_is_explained_and_every_item_has_hints() {
    use tutorflow::engine::practice::drill_grade::expected_answer;
    use tutorflow::engine::practice::solution::{Solution, explain_mistake, hint_for};
    let bundle = bundle();
    let settings = &bundle.workflows["default"].grading;
    let mut explained = 0;
    for course in bundle.courses.values() {
        for unit in course.units.values() {
            for id in &unit.blueprints {
                let blueprint = &bundle.blueprints[id];
                for seed in 0..20u64 {
                    let item = generate(blueprint, (seed % 5) as f64 / 4.0, seed).unwrap();
                    let expected = expected_answer(&item);
                    for m in item.mistakes.iter().filter(|m| m.mistake_tag.is_some()) {
                        let e = explain_mistake(&expected, &m.text, &unit.mistake_tags, settings)
                            .unwrap_or_else(|| {
                                panic!("{} {id} seed {seed}: {} not explained", unit.id, m.text)
                            });
                        let tag = e.mistake_tag.as_deref().unwrap();
                        let words = &unit
                            .mistake_tags
                            .iter()
                            .find(|t| t.id == tag)
                            .unwrap()
                            .explain;
                        assert_eq!(&e.explain, words.trim());
                        explained += 1;
                    }
                    let first =
                        hint_for(&item, 0).unwrap_or_else(|| panic!("{id} seed {seed}: no hint"));
                    let solution = Solution::of_item(&item);
                    assert!(
                        first.tell.chars().any(|c| c.is_ascii_digit()),
                        "{id} seed {seed}: a hint with the item's numbers: {}",
                        first.tell
                    );
                    assert!(
                        solution
                            .hints()
                            .iter()
                            .all(|h| h.expects.is_some() || h.ask == h.tell)
                    );
                    let context = serde_json::to_string(&solution).unwrap();
                    assert!(
                        !context.contains(&solution.worked().last().unwrap().to_string()),
                        "{id} seed {seed}: the step that gives the answer is left open: {context}"
                    );
                }
            }
        }
    }
    assert!(explained > 500, "{explained}");
}
