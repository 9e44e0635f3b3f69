use std::collections::BTreeSet;

use super::domain::Domain;
use super::written::{builtin, write};
use super::*;
use crate::content::blueprint::{AnswerSpec, Distractor, Parameter};

fn blueprint(yaml: &str) -> Blueprint {
    serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

const ADD: &str = r#"
id: TEST.ADD
domain: Test
skill_statement: Add
cognitive_level: Apply
parameters:
  a: {type: integer, min: 10, max: 99}
  b: {type: integer, min: 10, max: 99}
difficulty:
  scenarios:
    - {name: no_carry, weight: 0.3, when: "mod(a, 10) + mod(b, 10) < 10"}
    - {name: carry, weight: 0.6}
stems: ["What is {a} + {b}?"]
latex: "{a} + {b}"
answer: {value: "a + b", kind: integer}
distractors:
  - {strategy: off_by_one}
  - {strategy: off_by_ten}
  - {strategy: wrong_operation, value: "a - b", when: "a > b"}
  - {strategy: forgot_carry, value: "a + b - 10", when: "mod(a, 10) + mod(b, 10) >= 10"}
"#;

#[test]
fn the_same_inputs_give_the_same_item() {
    let bp = blueprint(ADD);
    let a = generate(&bp, 0.5, 99).unwrap();
    assert_eq!(a, generate(&bp, 0.5, 99).unwrap());
    assert_ne!(a, generate(&bp, 0.5, 100).unwrap());
}

#[test]
fn the_nearest_scenario_is_chosen_and_its_rules_hold() {
    let bp = blueprint(ADD);
    for seed in 0..200 {
        let easy = generate(&bp, 0.0, seed).unwrap();
        assert_eq!(easy.scenario, "no_carry");
        let (a, b) = (easy.parameter("a").unwrap(), easy.parameter("b").unwrap());
        assert!(a.numer() % 10 + b.numer() % 10 < 10);
        let hard = generate(&bp, 0.9, seed).unwrap();
        assert_eq!(hard.scenario, "carry");
        let (a, b) = (hard.parameter("a").unwrap(), hard.parameter("b").unwrap());
        assert!(
            a.numer() % 10 + b.numer() % 10 >= 10,
            "the catch-all excludes earlier scenarios"
        );
        assert_eq!(hard.answer.value, (a.numer() + b.numer()).to_string());
        assert_eq!(hard.options[hard.answer_index], hard.answer.text);
        assert_eq!(hard.options.len(), 4);
    }
}

#[test]
fn a_chosen_distractor_gives_its_mistake() {
    let bp = blueprint(ADD);
    let item = generate(&bp, 0.9, 4).unwrap();
    for d in &item.distractors {
        let sloppy = format!("  {} ", d.text.to_uppercase());
        assert_eq!(item.distractor_for(&sloppy), Some(d));
    }
    assert_eq!(item.distractor_for(&item.answer.text), None);
}

#[test]
fn contradictory_rules_give_a_clear_error() {
    let bp = blueprint(&ADD.replace(
        "when: \"mod(a, 10) + mod(b, 10) < 10\"",
        "when: \"a + b > 500\"",
    ));
    match generate(&bp, 0.3, 1) {
        Err(GenerateError::Unsatisfiable {
            scenario,
            attempts,
            reason,
            ..
        }) => {
            assert_eq!(scenario, "no_carry");
            assert_eq!(attempts, MAX_ATTEMPTS);
            assert!(reason.contains("a + b > 500"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        generate(&bp, f64::NAN, 1),
        Err(GenerateError::InvalidTarget(_))
    ));
    assert!(generate(&bp, 1.5, 1).is_err());
}

#[test]
fn too_few_distractors_is_reported() {
    let bp = blueprint(&ADD.replace("  - {strategy: off_by_ten}\n", ""));
    // Without off_by_ten, a no-carry item with a <= b has only one distractor.
    match generate(&bp, 0.0, 3) {
        Err(GenerateError::Unsatisfiable { reason, .. }) => {
            assert!(reason.contains("wrong answers"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn built_in_strategies_follow_the_kind() {
    let answer = |kind| AnswerSpec {
        value: crate::content::blueprint::Formulas(vec![Formula::new("0")]),
        kind,
        unit: None,
        variable: None,
    };
    let d = |name: &str| Distractor {
        strategy: name.into(),
        value: None,
        kind: None,
        when: None,
        mistake_tag: None,
        description: String::new(),
    };
    let r = |n, den| Rational::new(n, den).unwrap();
    let right = |kind, v: Rational| write(&answer(kind), kind, &[Number::Exact(v)]).unwrap();
    let mut rng = SplitMix64::new(5);
    let dec = builtin(
        &d("off_by_one"),
        &right(AnswerShape::Decimal, r(615, 100)),
        &answer(AnswerShape::Decimal),
        &mut rng,
    )
    .unwrap();
    assert!(
        ["6.14", "6.16"].contains(&dec.text.as_str()),
        "{}",
        dec.text
    );
    let whole = builtin(
        &d("off_by_one"),
        &right(AnswerShape::Decimal, r(1, 1)),
        &answer(AnswerShape::Decimal),
        &mut rng,
    )
    .unwrap();
    assert!(
        ["0.9", "1.1"].contains(&whole.text.as_str()),
        "{}",
        whole.text
    );
    let half = right(AnswerShape::Fraction, r(1, 2));
    for _ in 0..8 {
        if let Ok(w) = builtin(
            &d("off_by_one"),
            &half,
            &answer(AnswerShape::Fraction),
            &mut rng,
        ) {
            assert_eq!(w.text, "1", "1/2 slips up to 2/2, never down to 0");
        }
    }
    let frac = builtin(
        &d("swapped_fraction"),
        &right(AnswerShape::Fraction, r(5, 4)),
        &answer(AnswerShape::Fraction),
        &mut rng,
    )
    .unwrap();
    assert_eq!(frac.text, "4/5");
    let sign = builtin(
        &d("sign_error"),
        &right(AnswerShape::Integer, r(7, 1)),
        &answer(AnswerShape::Integer),
        &mut rng,
    )
    .unwrap();
    assert_eq!(sign.text, "-7");
    assert!(
        builtin(
            &d("sign_error"),
            &right(AnswerShape::Integer, r(0, 1)),
            &answer(AnswerShape::Integer),
            &mut rng
        )
        .is_err()
    );
    assert!(
        builtin(
            &d("off_by_ten"),
            &right(AnswerShape::Fraction, r(1, 2)),
            &answer(AnswerShape::Fraction),
            &mut rng
        )
        .is_err()
    );
}

#[test]
fn an_unsimplified_fraction_is_wrong_only_when_simplest_form_is_required() {
    let answer = AnswerSpec {
        value: crate::content::blueprint::Formulas(vec![Formula::new("0")]),
        kind: AnswerShape::Fraction,
        unit: None,
        variable: Some("x".into()),
    };
    let right = write(
        &answer,
        AnswerShape::Fraction,
        &[Number::Exact(Rational::new(2, 3).unwrap())],
    )
    .unwrap();
    assert_eq!(right.text, "x = 2/3");
    let four_sixths = write(
        &answer,
        AnswerShape::Fraction,
        &[Number::int(4), Number::int(6)],
    )
    .unwrap();
    assert_eq!(four_sixths.text, "x = 4/6");
    assert!(!four_sixths.same_as(&right, true));
    assert!(four_sixths.same_as(&right, false));
    let decimal = write(
        &answer,
        AnswerShape::Decimal,
        &[Number::Exact(Rational::new(1, 2).unwrap())],
    )
    .unwrap();
    let half = write(
        &answer,
        AnswerShape::Fraction,
        &[Number::Exact(Rational::new(1, 2).unwrap())],
    )
    .unwrap();
    assert!(decimal.same_as(&half, true), "0.5 is 1/2");
}

#[test]
fn domains_cover_their_ranges_exactly() {
    let p: Parameter =
        serde_yaml::from_str("{type: decimal, min: 1.5, max: 2, places: 1}").unwrap();
    let d = Domain::of(&p).unwrap();
    let mut rng = SplitMix64::new(1);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..500 {
        seen.insert(d.draw(&mut rng).unwrap());
    }
    let expected: std::collections::BTreeSet<Rational> =
        (15..=20).map(|n| Rational::new(n, 10).unwrap()).collect();
    assert_eq!(seen, expected);
    assert!(d.contains(Rational::new(17, 10).unwrap()));
    assert!(!d.contains(Rational::new(175, 100).unwrap()));
    let p: Parameter =
        serde_yaml::from_str("{type: integer, min: 5, max: 95, step: 5, exclude: [50]}").unwrap();
    let d = Domain::of(&p).unwrap();
    assert!(d.contains(Rational::integer(95)) && !d.contains(Rational::integer(50)));
    assert!(!d.contains(Rational::integer(100)) && !d.contains(Rational::integer(7)));
    let p: Parameter = serde_yaml::from_str("{type: integer, min: 9, max: 1}").unwrap();
    assert!(Domain::of(&p).is_err());
}

const THEMED: &str = r#"
id: TEST.THEMED
domain: Test
skill_statement: Add
cognitive_level: Apply
parameters:
  a: {type: integer, min: 10, max: 99}
  b: {type: integer, min: 10, max: 99}
difficulty:
  scenarios:
    - {name: any, weight: 0.5}
    - name: own_wording
      weight: 0.9
      stems: ["Add {a} and {b}."]
      latex: "{a} + {b} = ?"
stems: ["What is {a} + {b}?", "Work out {a} + {b}."]
themes:
  sports:
    - "A team scored {a} points and then {b} more. How many points is that?"
    - "A runner ran {a} laps on Monday and {b} on Tuesday. How many laps altogether?"
  cooking:
    - "A cook baked {a} rolls and then {b} more. How many rolls is that?"
latex: "{a} + {b}"
answer: {value: "a + b", kind: integer}
distractors:
  - {strategy: off_by_one}
  - {strategy: off_by_ten}
  - {strategy: doubled_a, value: "2 * a + b"}
"#;

/// The item with its wording and theme set aside.
fn question(item: &Item) -> Item {
    Item {
        stem: String::new(),
        theme: None,
        authoring_problems: Vec::new(),
        ..item.clone()
    }
}

#[test]
fn a_theme_is_chosen_from_the_seed_and_the_students_themes() {
    let bp = blueprint(THEMED);
    let mut seen = BTreeSet::new();
    for seed in 0..64 {
        let item = generate_themed(&bp, 0.5, seed, &["cooking", "sports"]).unwrap();
        assert_eq!(
            item,
            generate_themed(&bp, 0.5, seed, &["cooking", "sports"]).unwrap(),
            "the same seed and themes give the same item"
        );
        let theme = item.theme.clone().expect("both themes are offered");
        let wordings = bp.themes.get(&theme).unwrap();
        assert!(
            wordings.iter().any(|w| {
                let a = item.parameter("a").unwrap();
                let b = item.parameter("b").unwrap();
                w.text()
                    .replace("{a}", &a.to_string())
                    .replace("{b}", &b.to_string())
                    == item.stem
            }),
            "{theme}: {}",
            item.stem
        );
        seen.insert((theme, item.stem.split(' ').nth(1).unwrap_or("").to_owned()));
    }
    // Both themes, and both sports wordings, come up.
    assert!(seen.iter().any(|(t, _)| t == "cooking"), "{seen:?}");
    assert!(seen.iter().any(|(_, w)| w == "team"), "{seen:?}");
    assert!(seen.iter().any(|(_, w)| w == "runner"), "{seen:?}");
}

#[test]
fn a_theme_the_blueprint_does_not_offer_gives_the_plain_wording() {
    let bp = blueprint(THEMED);
    for seed in 0..32 {
        let plain = generate(&bp, 0.5, seed).unwrap();
        assert_eq!(plain.theme, None);
        for unknown in [&["space"][..], &["Sports"], &[""], &[]] {
            assert_eq!(generate_themed(&bp, 0.5, seed, unknown).unwrap(), plain);
        }
        // Only the offered one of the student's themes is used.
        let item = generate_themed(&bp, 0.5, seed, &["space", "cooking"]).unwrap();
        assert_eq!(item.theme.as_deref(), Some("cooking"));
    }
    // A scenario with its own wording and no themes of its own stays plain.
    let own = generate_themed(&bp, 0.9, 3, &["sports"]).unwrap();
    assert_eq!((own.scenario.as_str(), own.theme), ("own_wording", None));
    assert!(own.stem.starts_with("Add "), "{}", own.stem);
}

#[test]
fn a_wording_that_cannot_be_written_falls_back_to_the_plain_one() {
    let broken = THEMED.replace("A cook baked {a} rolls", "A cook baked {c} rolls");
    let bp = blueprint(&broken);
    let item = generate_themed(&bp, 0.5, 1, &["cooking"]).unwrap();
    assert_eq!(question(&item), question(&generate(&bp, 0.5, 1).unwrap()));
    assert_eq!(item.theme, None);
    assert!(
        item.authoring_problems
            .iter()
            .any(|p| p.starts_with("theme `cooking`")),
        "{:?}",
        item.authoring_problems
    );
}

proptest::proptest! {
    /// A theme retells the question: the numbers, options and answer are
    /// the ones the plain wording gets, whatever the seed and themes.
    #[test]
    fn the_answer_is_the_same_in_every_theme(
        seed: u64,
        target in 0.0f64..=1.0,
        themes in proptest::sample::subsequence(vec!["sports", "cooking", "space"], 0..=3),
    ) {
        let bp = blueprint(THEMED);
        let plain = generate(&bp, target, seed).unwrap();
        let themed = generate_themed(&bp, target, seed, &themes).unwrap();
        proptest::prop_assert_eq!(question(&themed), question(&plain));
        let offered = themes.iter().any(|t| *t != "space") && plain.scenario == "any";
        proptest::prop_assert_eq!(themed.theme.is_some(), offered);
        if !offered {
            proptest::prop_assert_eq!(&themed.stem, &plain.stem);
        }
    }
}
