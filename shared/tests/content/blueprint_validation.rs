//! Broken blueprints: each authoring mistake is reported as
//! `path:line:column: message` where it is written, several at once, and
//! never with a panic.

use std::path::PathBuf;
use std::sync::LazyLock;

use proptest::prelude::*;
use tutorflow::content::{Bundle, ContentFiles, ContentSource, Diagnostic, FsSource};

const ADD: &str = "workflows/blueprints/add-2digit.yaml";
const DIV: &str = "workflows/blueprints/div-remainder.yaml";
const EQ1: &str = "workflows/blueprints/eq-one-step.yaml";
const WHOLE_NUMBERS: &str = "workflows/courses/prealgebra/units/whole-numbers.yaml";

static SHIPPED: LazyLock<ContentFiles> = LazyLock::new(|| {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle")
});

/// The shipped bundle with `from` replaced by `to` in `path` (which must contain it).
fn mutated(path: &str, from: &str, to: &str) -> ContentFiles {
    let mut files = SHIPPED.clone();
    let text = files
        .files
        .get_mut(path)
        .unwrap_or_else(|| panic!("no {path}"));
    assert!(text.contains(from), "{path} does not contain {from:?}");
    *text = text.replacen(from, to, 1);
    files
}

/// What `tutorflow validate` reports.
fn problems(files: &ContentFiles) -> Vec<Diagnostic> {
    match Bundle::validate(files) {
        Ok(_) => Vec::new(),
        Err(d) => d.0,
    }
}

/// 1-based line and column where `needle` starts in `path`.
fn position_of(files: &ContentFiles, path: &str, needle: &str) -> (usize, usize) {
    let text = &files.files[path];
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {path}"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

/// Asserts that editing `path` (`from` → `to`) is reported exactly at the
/// start of `at` (a piece of the edited file) with a message containing
/// `words`, and that it is the only problem.
fn reported_at(path: &str, from: &str, to: &str, at: &str, words: &str) {
    let files = mutated(path, from, to);
    let (line, column) = position_of(&files, path, at);
    let found = problems(&files);
    assert!(
        found.iter().any(|d| d.path == path
            && d.line == line
            && d.column == column
            && d.message.contains(words)),
        "expected {path}:{line}:{column} mentioning {words:?}, got:\n{}",
        found
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(found.len(), 1, "one mistake, one problem: {found:#?}");
}

#[test]
fn the_shipped_blueprints_are_valid() {
    let bundle = Bundle::validate(&SHIPPED).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(bundle.blueprints.len(), 18);
}

#[test]
fn a_rare_scenario_passes_loading_but_not_validation() {
    // Loading at cold start only proves each scenario can produce an item.
    let files = mutated(
        ADD,
        "when: \"ones < 10 and tens < 10\"",
        "when: \"ones < 10 and tens < 10 and a = 57\"",
    );
    assert!(Bundle::load(&files).is_ok());
    assert!(Bundle::validate(&files).is_err());
}

#[test]
fn an_undefined_name_in_a_formula() {
    reported_at(
        ADD,
        "value: \"a + b\"",
        "value: \"a + c\"",
        "\"a + c\"",
        "`c`",
    );
}

#[test]
fn a_formula_that_does_not_parse() {
    reported_at(
        ADD,
        "when: \"ones < 10 and tens < 10\"",
        "when: \"ones < 10 and and tens < 10\"",
        "\"ones < 10 and and",
        "not a valid formula",
    );
}

#[test]
fn a_number_where_a_condition_belongs() {
    reported_at(
        ADD,
        "when: \"a > 30 and b > 30\"",
        "when: \"a + b\"",
        "\"a + b\"\n",
        "a condition is needed",
    );
    reported_at(
        ADD,
        "value: \"a + b\"",
        "value: \"a > b\"",
        "\"a > b\"",
        "a number is needed",
    );
}

#[test]
fn an_undefined_placeholder_in_a_stem() {
    reported_at(
        ADD,
        "\"What is {a} + {b}?\"",
        "\"What is {a} + {c}?\"",
        "\"What is {a} + {c}?\"",
        "{c}",
    );
}

#[test]
fn a_latex_word_in_braces_gets_a_hint() {
    reported_at(
        ADD,
        "latex: '{a} + {b}'",
        r"latex: '{a} + {b} \text{cm}'",
        "'{a} + {b} \\text",
        "space after it",
    );
}

#[test]
fn an_unknown_format() {
    reported_at(
        ADD,
        "\"Work out {a} + {b}.\"",
        "\"Work out {a:bold} + {b}.\"",
        "\"Work out {a:bold}",
        "unknown format `bold`",
    );
}

#[test]
fn contradictory_conditions_are_caught_by_trying() {
    reported_at(
        ADD,
        "when: \"ones < 10 and tens < 10\"",
        "when: \"ones < 10 and ones > 20\"",
        "no_carry\n",
        "cannot generate",
    );
}

#[test]
fn a_scenario_that_rarely_fits_is_too_slow() {
    let files = mutated(
        ADD,
        "when: \"ones < 10 and tens < 10\"",
        "when: \"ones < 10 and tens < 10 and a = 57\"",
    );
    let (line, column) = position_of(&files, ADD, "no_carry\n");
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:#?}");
    let d = &found[0];
    assert_eq!((d.line, d.column), (line, column), "{d}");
    assert!(
        d.message.contains("accepts only") || d.message.contains("cannot generate"),
        "{d}"
    );
}

#[test]
fn the_wrong_number_of_parts_for_a_kind() {
    reported_at(
        DIV,
        "value: [\"q\", \"r\"]",
        "value: \"q\"",
        "\"q\"\n",
        "takes 2 formula",
    );
}

#[test]
fn features_must_not_break_monotone_difficulty() {
    reported_at(ADD, "add: 0.05", "add: 0.3", "features:", "harder than");
}

#[test]
fn a_strategy_that_is_not_built_in_needs_a_value() {
    reported_at(
        ADD,
        "- strategy: off_by_ten",
        "- strategy: off_by_eleven",
        "off_by_eleven",
        "not built in",
    );
}

#[test]
fn a_mistake_tag_missing_from_a_unit_is_reported_in_the_unit() {
    let files = mutated(
        ADD,
        "mistake_tag: wrong_operation",
        "mistake_tag: wrong_sum",
    );
    let (line, column) = position_of(&files, WHOLE_NUMBERS, "MATH.ARITH.ADD.2DIGIT");
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].path.as_str(), found[0].line, found[0].column),
        (WHOLE_NUMBERS, line, column),
        "{}",
        found[0]
    );
    assert!(found[0].message.contains("`wrong_sum`"), "{}", found[0]);
}

#[test]
fn a_weight_outside_the_unit_interval() {
    reported_at(ADD, "weight: 0.7", "weight: 1.7", "1.7", "outside [0, 1]");
}

#[test]
fn a_range_upside_down() {
    reported_at(
        ADD,
        "a: {type: integer, min: 10, max: 99}",
        "a: {type: integer, min: 99, max: 10}",
        "{type: integer, min: 99",
        "`min` is larger than `max`",
    );
}

#[test]
fn a_parameter_field_its_type_does_not_take() {
    reported_at(
        ADD,
        "a: {type: integer, min: 10, max: 99}",
        "a: {type: integer, min: 10, max: 99, places: 2}",
        "places: 2",
        "not `places`",
    );
}

#[test]
fn a_reserved_parameter_name() {
    reported_at(
        DIV,
        "  b: {type: integer, min: 2, max: 9}      # the divisor",
        "  b: {type: integer, min: 2, max: 9}\n  mod: {type: integer, min: 1, max: 2}",
        "mod:",
        "cannot be used in formulas",
    );
}

#[test]
fn a_catch_all_scenario_must_come_last() {
    reported_at(
        ADD,
        "      description: \"Neither column reaches ten, as in 42 + 35\"\n      when: \"ones < 10 and tens < 10\"\n",
        "      description: \"Neither column reaches ten, as in 42 + 35\"\n",
        "no_carry\n",
        "can never be chosen",
    );
}

#[test]
fn duplicate_scenarios() {
    reported_at(
        ADD,
        "- name: double_carry",
        "- name: no_carry",
        "no_carry\n      weight: 0.7",
        "defined twice",
    );
}

#[test]
fn too_few_distractors_for_the_options() {
    let files = mutated(DIV, "  options: 4", "  options: 6");
    let found = problems(&files);
    assert_eq!(found.len(), 4, "one per scenario: {found:#?}");
    assert!(
        found
            .iter()
            .all(|d| d.message.contains("6 options need at least 5")),
        "{found:#?}"
    );
}

#[test]
fn a_tolerance_needs_the_tolerance_method() {
    reported_at(
        ADD,
        "method: exact",
        "method: numeric_tolerance",
        "method: numeric",
        "needs a `tolerance`",
    );
}

#[test]
fn benchmarks_must_rise_with_skill() {
    reported_at(
        ADD,
        "expert: {accuracy: 0.98, seconds: 5}",
        "expert: {accuracy: 0.5, seconds: 5}",
        "expert:",
        "at least as accurate",
    );
}

#[test]
fn an_unknown_field_is_named() {
    reported_at(
        ADD,
        "skill_statement:",
        "skill_statment:",
        "skill_statment:",
        "skill_statment",
    );
}

#[test]
fn a_scenario_override_for_an_unknown_parameter() {
    reported_at(
        EQ1,
        "        x: {type: integer, min: 2, max: 12}",
        "        z: {type: integer, min: 2, max: 12}",
        "z: {type",
        "not one of the blueprint's parameters",
    );
}

#[test]
fn every_mistake_is_reported_not_just_the_first() {
    let mut files = mutated(ADD, "value: \"a + b\"", "value: \"a + c\"");
    let text = files.files.get_mut(DIV).unwrap();
    *text = text.replacen("weight: 0.3", "weight: 3", 1);
    let text = files.files.get_mut(EQ1).unwrap();
    *text = text.replacen("kind: integer", "kind: integer\n  variable: \"2x\"", 1);
    let found = problems(&files);
    let paths: std::collections::BTreeSet<&str> = found.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, [ADD, DIV, EQ1].into_iter().collect(), "{found:#?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, .. ProptestConfig::default() })]

    /// Arbitrary edits to a blueprint never panic, and a broken one is
    /// always reported with a position.
    #[test]
    fn edited_blueprints_never_panic(file in 0usize..18, at in any::<prop::sample::Index>(), junk in "[-+*/(){}: a-z0-9.\"'\\[\\],#\n]{0,16}") {
        let mut files = SHIPPED.clone();
        let paths: Vec<String> = files.files.keys().filter(|p| p.starts_with("workflows/blueprints/")).cloned().collect();
        let text = files.files.get_mut(&paths[file % paths.len()]).unwrap();
        let mut cut = at.index(text.len() + 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.insert_str(cut, &junk);
        if let Err(d) = Bundle::load(&files) {
            prop_assert!(!d.0.is_empty());
            for problem in d.0 {
                prop_assert!(problem.line >= 1 && problem.column >= 1);
            }
        }
    }
}
