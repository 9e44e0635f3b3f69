//! Drill answers graded against items regenerated from every shipped
//! blueprint: the answer (as text, and as an option letter when there are
//! options) is right, every distractor is wrong and names its mistake.

use std::path::PathBuf;

use tutorflow::content::blueprint::ItemFormat;
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::drill::Expected;
use tutorflow::engine::drill_grade::grade_drill;
use tutorflow::engine::generate::generate;
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
