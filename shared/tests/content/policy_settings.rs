//! The policy's YAML settings and per-unit BKT overrides: validated by the
//! content loader with file:line:column errors, and used by the engine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tutorflow::content::{Bundle, ContentFiles, Diagnostic};
use tutorflow::engine::mastery::bkt;
use tutorflow::model::MasteryTier;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_dir_into(files: &mut BTreeMap<String, String>, root: &Path, dir: &str) {
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            let name = entry.file_name().into_string().unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            files.insert(format!("{dir}/{name}"), text);
        }
    }
}

const UNIT_A: &str = "workflows/courses/mini/units/a.yaml";
const UNIT_B: &str = "workflows/courses/mini/units/b.yaml";

fn unit(id: &str, extra: &str) -> String {
    format!(
        "id: {id}\ntitle: Unit {id}\nanchor: About {id}.\nkey_ideas: [An idea.]\n\
         chunks:\n  - {{id: c, section: S, text: Text.}}\n{extra}"
    )
}

/// The repository's workflows, blueprints and prompts, and a two-unit course
/// whose unit `b` has `b_extra` appended.
fn bundle(b_extra: &str) -> ContentFiles {
    let root = repo_root();
    let mut files = BTreeMap::new();
    read_dir_into(&mut files, &root, "workflows");
    read_dir_into(&mut files, &root, "workflows/blueprints");
    read_dir_into(&mut files, &root, "prompts");
    files.insert(
        "workflows/courses/mini/course.yaml".into(),
        "id: mini\ntitle: Mini\nentry_unit: a\nunits:\n  - {id: a, requires: []}\n  - {id: b, requires: [a]}\n"
            .into(),
    );
    files.insert(UNIT_A.into(), unit("a", ""));
    files.insert(UNIT_B.into(), unit("b", b_extra));
    ContentFiles::new(files)
}

fn replaced(files: &ContentFiles, path: &str, from: &str, to: &str) -> ContentFiles {
    let mut files = files.clone();
    let text = files.files.get_mut(path).unwrap();
    assert!(text.contains(from), "{path} does not contain {from:?}");
    *text = text.replacen(from, to, 1);
    files
}

fn problems(files: &ContentFiles) -> Vec<Diagnostic> {
    Bundle::load(files).err().map(|d| d.0).unwrap_or_default()
}

fn position_of(files: &ContentFiles, path: &str, needle: &str) -> (usize, usize) {
    let text = &files.files[path];
    let at = text.find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let column = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

fn assert_reported(problems: &[Diagnostic], path: &str, at: (usize, usize), words: &str) {
    assert!(
        problems
            .iter()
            .any(|d| d.path == path && (d.line, d.column) == at && d.message.contains(words)),
        "expected {path}:{}:{} mentioning {words:?}, got:\n{}",
        at.0,
        at.1,
        problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_test_bundle_is_valid_and_the_shipped_defaults_are_the_expected_ones() {
    let bundle = Bundle::load(&bundle("")).unwrap_or_else(|d| panic!("{d:?}"));
    let policy = &bundle.workflows["default"].policy;
    // BKT's mastery gap shares the "still to learn" weight with the tiers.
    assert_eq!(policy.weights.mastery_gap, 0.10);
    assert_eq!(policy.weights.tier_need, 0.10);
    let w = &policy.weights;
    let sum = w.intent + w.recency + w.in_progress + w.tier_need + w.drill_evidence + w.mastery_gap;
    assert!((sum - 1.0).abs() < 1e-9, "the weights sum to {sum}");
    assert_eq!(policy.clarify_min_confidence, 0.25);
    assert_eq!(policy.prereq_min_tier, MasteryTier::Bronze);
    assert!(policy.advance_from_mastered);
    assert_eq!(policy.units_in_progress_cap, 5);
    assert_eq!(policy.constraints.max_key_ideas, 3);
}

#[test]
fn a_unit_can_override_its_bkt_parameters() {
    let files = bundle("bkt: {prior: 0.3, slip: 0.2}\n");
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d:?}"));
    let course = &bundle.courses["mini"];
    let workflow = &bundle.workflows["default"].mastery.bkt;
    let b = bkt::params_for(workflow, course, "b");
    assert_eq!((b.prior, b.slip, b.guess, b.learn), (0.3, 0.2, 0.1, 0.1));
    let a = bkt::params_for(workflow, course, "a");
    assert_eq!(a.prior, 0.1, "units without a block use the workflow's");
}

#[test]
fn a_bkt_override_outside_the_unit_interval_is_reported_where_it_is_written() {
    let files = bundle("bkt: {prior: 1.5}\n");
    let found = problems(&files);
    assert_reported(
        &found,
        UNIT_B,
        position_of(&files, UNIT_B, "1.5"),
        "outside [0, 1]",
    );
}

#[test]
fn a_bkt_override_whose_guess_and_slip_add_up_to_one_is_refused() {
    // The workflow's slip is 0.1.
    let files = bundle("bkt:\n  guess: 0.95\n");
    let found = problems(&files);
    assert_reported(
        &found,
        UNIT_B,
        position_of(&files, UNIT_B, "bkt"),
        "guess + slip must be below 1",
    );
}

#[test]
fn an_unknown_bkt_field_is_named() {
    let files = bundle("bkt: {priors: 0.2}\n");
    let found = problems(&files);
    assert!(
        found
            .iter()
            .any(|d| d.path == UNIT_B && d.message.contains("priors")),
        "{found:?}"
    );
}

#[test]
fn new_policy_settings_are_range_checked() {
    let files = bundle("");
    let wf = "workflows/default.yaml";
    for (from, to, words) in [
        ("mastery_gap: 0.10", "mastery_gap: 1.5", "outside [0, 1]"),
        (
            "clarify_min_confidence: 0.25",
            "clarify_min_confidence: -1",
            "outside [0, 1]",
        ),
        (
            "units_in_progress_cap: 5",
            "units_in_progress_cap: 0",
            "must be at least 1",
        ),
        ("max_key_ideas: 3", "max_key_ideas: 0", "must be at least 1"),
    ] {
        let broken = replaced(&files, wf, from, to);
        // Reported at the value, just after `key: `.
        let (line, column) = position_of(&broken, wf, to);
        let at = (line, column + to.find(": ").unwrap() + 2);
        assert_reported(&problems(&broken), wf, at, words);
    }
    let tier = replaced(
        &files,
        wf,
        "prereq_min_tier: bronze",
        "prereq_min_tier: platinum",
    );
    let found = problems(&tier);
    assert!(
        found
            .iter()
            .any(|d| d.path == wf && d.message.contains("platinum")),
        "{found:?}"
    );
}
