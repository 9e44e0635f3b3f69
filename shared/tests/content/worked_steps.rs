//! The worked steps and representations of every shipped blueprint, over
//! hundreds of items per scenario: each item has 2 to 5 steps whose last
//! reaches the answer; every equality a step states is true (read back from
//! the text and worked out again); the answer never shows in a step before
//! it is left open, nor in a representation; a subtraction talks about
//! borrowing exactly when a column needs it, an addition about carrying
//! exactly when a column reaches ten; and the examples a teacher would
//! write by hand come out word for word.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use tutorflow::content::blueprint::Blueprint;
use tutorflow::engine::content_check::item_problems;
use tutorflow::engine::practice::generate::{Item, generate_in_scenario};
use tutorflow::engine::practice::worked::{self, WorkedStep, answer_free};
use tutorflow::math::{Number, ParseOptions, Rational, Value, evaluate, parse};
use tutorflow::text::mentions;

/// Items tried per scenario.
const SEEDS: u64 = 300;

/// Every blueprint file, read on its own (so one blueprint can be checked
/// while another is being written).
static BLUEPRINTS: LazyLock<BTreeMap<String, Blueprint>> = LazyLock::new(|| {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../workflows/blueprints");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("blueprints directory") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).expect("readable");
            let bp: Blueprint =
                serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.insert(bp.id.clone(), bp);
        }
    }
    assert!(out.len() >= 18, "the shipped blueprints are all here");
    out
});

fn blueprint(id: &str) -> &'static Blueprint {
    BLUEPRINTS
        .get(id)
        .unwrap_or_else(|| panic!("no shipped blueprint {id}"))
}

/// Items of every scenario of `bp`.
fn items(bp: &Blueprint) -> impl Iterator<Item = Item> + '_ {
    (0..bp.difficulty.scenarios.len()).flat_map(move |i| {
        (0..SEEDS).map(move |seed| {
            generate_in_scenario(bp, i, seed)
                .unwrap_or_else(|e| panic!("{} scenario {i} seed {seed}: {e}", bp.id))
        })
    })
}

/// The value of arithmetic as a step writes it, with `x` standing for the
/// item's own x when it has one (so `2x = 8` is checked for x = 4).
fn value(text: &str, x: Option<Rational>) -> Option<Rational> {
    let expr = parse(text.trim(), ParseOptions::student()).ok()?;
    let lookup = |name: &str| (name == "x").then_some(x).flatten().map(Number::Exact);
    match evaluate(&expr, &lookup).ok()? {
        Value::Num(n) => n.exact(),
        Value::Bool(_) => None,
    }
}

/// Characters arithmetic is written with in a step.
fn arithmetic(c: char) -> bool {
    c.is_ascii_digit() || " x.+-×÷()²^/".contains(c)
}

/// Every equality between plain numbers that `text` states is true: each
/// ` = ` compares the arithmetic just before it with the arithmetic just
/// after it (`borrow a ten: 12 - 8 = 4`, `x = 12 - 7 = 5`, `2x = 8` with
/// the item's x); a side that is no number (an address) is skipped.
/// Returns how many equalities were checked.
fn equalities_hold(text: &str, x: Option<Rational>) -> Result<usize, String> {
    let mut checked = 0;
    let pieces: Vec<&str> = text.split(" = ").collect();
    for pair in pieces.windows(2) {
        let before = pair[0];
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| arithmetic(*c))
            .last()
            .map_or(before.len(), |(i, _)| i);
        let left = before[start..].trim();
        let after = pair[1];
        let end = after
            .char_indices()
            .find(|(_, c)| !arithmetic(*c))
            .map_or(after.len(), |(i, _)| i);
        let right = after[..end].trim().trim_end_matches('.').trim();
        if let [Some(a), Some(b)] = [left, right].map(|s| value(s, x)) {
            if a != b {
                return Err(format!(
                    "`{left}` is {a} but `{right}` is {b}, in \"{text}\""
                ));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

fn describe(item: &Item) -> String {
    let params: Vec<String> = item
        .parameters
        .iter()
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    format!(
        "{} / {} / seed {} ({}): {}",
        item.blueprint_id,
        item.scenario,
        item.seed,
        params.join(", "),
        item.steps
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

#[test]
fn every_item_of_every_blueprint_is_worked_out_right() {
    for bp in BLUEPRINTS.values() {
        for item in items(bp) {
            let mut checked = 0;
            let problems = item_problems(&item);
            assert!(problems.is_empty(), "{}: {problems:?}", describe(&item));
            for step in &item.steps {
                assert!(
                    !step.text.contains(['{', '}']),
                    "{}: a placeholder was not filled",
                    describe(&item)
                );
                match equalities_hold(&step.text, item.parameter("x")) {
                    Ok(n) => checked += n,
                    Err(e) => panic!("{}: {e}", describe(&item)),
                }
                // The value a step states is what it works out.
                assert!(
                    step.text.contains(&step.value),
                    "{}: step does not show its value {}",
                    describe(&item),
                    step.value
                );
                assert!(
                    step.open.contains(worked::OPEN) && !step.text.contains(worked::OPEN),
                    "{}: only the open step leaves its result open",
                    describe(&item)
                );
            }
            // Every solution states some arithmetic that was checked.
            assert!(checked > 0, "{}", describe(&item));
            // The answer is what the last step works out.
            let last = item.steps.last().expect("steps");
            assert!(last.gives_answer, "{}", describe(&item));
        }
    }
}

/// The steps as a prompt may carry them never state the answer: a step
/// that works it out is left open, and no other step or representation
/// shows it, except by chance in a few items (the 12 of 6 + 6 = 12 in
/// 4 × (6 + 6) - 6² = 12) or as a lone digit (the 8 tens of 96 - 88 = 8).
#[test]
fn the_answer_is_separable_from_the_steps() {
    for bp in BLUEPRINTS.values() {
        let mut by_chance = Vec::new();
        let mut count = 0;
        for item in items(bp) {
            count += 1;
            for step in item.steps.iter().filter(|s| s.gives_answer) {
                assert_eq!(step.answer_free(), step.open, "{}", describe(&item));
            }
            let answer = &item.answer.text;
            let shown_by_question =
                mentions(&item.stem, answer) || mentions(&item.question_latex, answer);
            // Working whose value equals the answer (1 + 9 = 10 parts of 10
            // each) is a coincidence, left open like the answer itself.
            let coincidence = item.steps.iter().filter(|s| s.gives_answer).count() > 1;
            if shown_by_question
                || coincidence
                || answer.trim_start_matches('-').chars().count() == 1
            {
                continue;
            }
            let shown = answer_free(&item.steps)
                .into_iter()
                .chain(item.representations.iter().map(|r| r.text.clone()))
                .find(|text| mentions(text, answer));
            if let Some(text) = shown {
                by_chance.push(format!("{}: {text}", describe(&item)));
            }
        }
        assert!(
            by_chance.len() * 100 <= count,
            "{}: the answer shows in {} of {count} items, more than chance:\n{}",
            bp.id,
            by_chance.len(),
            by_chance.join("\n")
        );
    }
}

/// The digits of a whole number, ones first.
fn digits(n: i128) -> Vec<i128> {
    let mut out = Vec::new();
    let mut n = n;
    while n > 0 {
        out.push(n % 10);
        n /= 10;
    }
    out
}

fn whole(item: &Item, name: &str) -> i128 {
    let v = item.parameter(name).expect(name);
    assert!(v.is_integer());
    v.numer()
}

#[test]
fn subtraction_borrows_only_when_a_column_needs_it() {
    let bp = blueprint("MATH.ARITH.SUB.BORROW");
    for item in items(bp) {
        let [ah, at, ao, bh, bt, bo] =
            ["ah", "at", "ao", "bh", "bt", "bo"].map(|n| whole(&item, n));
        let (a, b) = (100 * ah + 10 * at + ao, 100 * bh + 10 * bt + bo);
        let needs_borrow = ao < bo || at - i128::from(ao < bo) < bt;
        let talks = item.steps.iter().any(|s| s.text.contains("borrow"));
        assert_eq!(talks, needs_borrow, "{}", describe(&item));
        // The columns' results, read back from the steps, make the answer.
        let columns: Vec<i128> = item.steps[..item.steps.len() - 1]
            .iter()
            .map(|s| s.value.parse::<i128>().expect("whole"))
            .collect();
        let rebuilt: i128 = columns
            .iter()
            .enumerate()
            .map(|(place, digit)| digit * 10i128.pow(place as u32))
            .sum();
        assert_eq!(rebuilt, a - b, "{}", describe(&item));
    }
}

#[test]
fn addition_carries_only_when_a_column_reaches_ten() {
    let bp = blueprint("MATH.ARITH.ADD.2DIGIT");
    for item in items(bp) {
        let (a, b) = (whole(&item, "a"), whole(&item, "b"));
        let carries = a % 10 + b % 10 >= 10;
        let talks = item.steps.iter().any(|s| s.text.contains("carr"));
        assert_eq!(talks, carries, "{}", describe(&item));
        let ones: i128 = item.steps[0].value.parse().unwrap();
        let tens: i128 = item.steps[1].value.parse().unwrap();
        assert_eq!(ones % 10 + 10 * tens, a + b, "{}", describe(&item));
        assert_eq!(digits(a + b)[0], ones % 10);
    }
}

/// The steps `bp`'s scenario `scenario` gives for these parameter values
/// (derived values are worked out as generation would).
fn steps_for(bp: &Blueprint, scenario: &str, values: &[(&str, i128)]) -> Vec<WorkedStep> {
    let scenario = bp
        .difficulty
        .scenarios
        .iter()
        .find(|s| s.name == scenario)
        .expect("scenario");
    let mut env: Vec<(String, Number)> = values
        .iter()
        .map(|(n, v)| ((*n).to_owned(), Number::int(*v)))
        .collect();
    for (name, formula) in bp.derived.iter() {
        let lookup = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let Ok(Value::Num(v)) = evaluate(formula.expr().unwrap(), &lookup) else {
            panic!("derived {name}");
        };
        env.push((name.to_owned(), v));
    }
    let lookup = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    let answer = bp.answer_for(scenario).expect("answer");
    let answer: Vec<Number> = answer
        .value
        .0
        .iter()
        .map(|f| match evaluate(f.expr().unwrap(), &lookup) {
            Ok(Value::Num(n)) => n,
            other => panic!("{other:?}"),
        })
        .collect();
    worked::render_steps(bp.steps_for(scenario), &lookup, &answer).unwrap()
}

fn texts(steps: &[WorkedStep]) -> Vec<&str> {
    steps.iter().map(|s| s.text.as_str()).collect()
}

#[test]
fn the_steps_a_teacher_would_write() {
    let sub = steps_for(
        blueprint("MATH.ARITH.SUB.BORROW"),
        "borrow_ones",
        &[
            ("ah", 0),
            ("at", 7),
            ("ao", 2),
            ("bh", 0),
            ("bt", 3),
            ("bo", 8),
        ],
    );
    assert_eq!(
        texts(&sub),
        [
            "Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = 4",
            "Tens: the 7 tens are now 6, so 6 - 3 = 3",
            "So 72 - 38 = 34",
        ]
    );
    assert_eq!(answer_free(&sub)[2], "So 72 - 38 = ?");
    let no_borrow = steps_for(
        blueprint("MATH.ARITH.SUB.BORROW"),
        "no_borrow",
        &[
            ("ah", 0),
            ("at", 7),
            ("ao", 6),
            ("bh", 0),
            ("bt", 6),
            ("bo", 1),
        ],
    );
    assert_eq!(
        texts(&no_borrow),
        ["Ones: 6 - 1 = 5", "Tens: 7 - 6 = 1", "So 76 - 61 = 15"]
    );
    let eq = steps_for(
        blueprint("MATH.ALG.EQ.TWOSTEP"),
        "multiply_then_add",
        &[("x", 4), ("a", 2), ("b", 3)],
    );
    assert_eq!(
        texts(&eq),
        [
            "Subtract 3 from both sides: 2x = 8",
            "Divide both sides by 2: x = 4"
        ]
    );
    assert_eq!(
        answer_free(&eq),
        [
            "Subtract 3 from both sides: 2x = 8",
            "Divide both sides by 2: x = ?"
        ]
    );
    assert_eq!(eq[0].value, "8");
    assert!(!eq[0].gives_answer && eq[1].gives_answer);
}

#[test]
fn the_equality_reader_catches_a_false_step() {
    for right in [
        "Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = 4",
        "x = 12 - 7 = 5, below zero",
        "Divide both sides by 2: x = 8 ÷ 2 = 4",
        "Powers first: 3² = 3 × 3 = 9",
        "so 3/4 = 9/12",
        "Put (-9) in place of x: 2x means 2 × (-9) = -18",
    ] {
        assert!(
            equalities_hold(right, None).is_ok_and(|n| n >= 1),
            "{right}"
        );
    }
    for wrong in [
        "Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = 5",
        "x = 12 - 7 = 6",
        "Then add 20: -18 + 20 = 3",
        "2^(8 - 6) = 8",
    ] {
        assert!(equalities_hold(wrong, None).is_err(), "{wrong}");
    }
    let four = Some(Rational::integer(4));
    assert_eq!(
        equalities_hold("Subtract 3 from both sides: 2x = 8", four),
        Ok(1)
    );
    assert!(equalities_hold("Subtract 3 from both sides: 2x = 9", four).is_err());
    assert_eq!(equalities_hold("the address is 10.0.0.0", four), Ok(0));
}
