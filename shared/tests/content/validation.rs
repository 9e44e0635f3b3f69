//! The shipped bundle is valid, and each kind of authoring mistake is
//! reported at the right file, line and column — several at once, never a panic.

use std::path::PathBuf;

use proptest::prelude::*;
use tutorflow::content::yaml_index::YamlIndex;
use tutorflow::content::{Bundle, ContentFiles, ContentSource, Diagnostic, FsSource};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shipped() -> ContentFiles {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(FsSource::new(repo_root()).fetch())
        .expect("the repository holds a bundle")
}

/// The shipped bundle with `from` replaced by `to` in `path` (which must contain it).
fn mutated(files: &ContentFiles, path: &str, from: &str, to: &str) -> ContentFiles {
    let mut files = files.clone();
    let text = files
        .files
        .get_mut(path)
        .unwrap_or_else(|| panic!("no {path}"));
    assert!(text.contains(from), "{path} does not contain {from:?}");
    *text = text.replacen(from, to, 1);
    files
}

fn problems(files: &ContentFiles) -> Vec<Diagnostic> {
    match Bundle::load(files) {
        Ok(_) => Vec::new(),
        Err(d) => d.0,
    }
}

/// 1-based line and column where `needle` starts in `path` of `files`.
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

fn assert_reported(problems: &[Diagnostic], path: &str, line: usize, column: usize, words: &str) {
    assert!(
        problems.iter().any(|d| d.path == path
            && d.line == line
            && d.column == column
            && d.message.contains(words)),
        "expected {path}:{line}:{column} mentioning {words:?}, got:\n{}",
        problems
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

const COURSE: &str = "workflows/courses/prealgebra/course.yaml";
const UNIT: &str = "workflows/courses/prealgebra/units/one-step-equations.yaml";
const WORKFLOW: &str = "workflows/default.yaml";

#[test]
fn the_shipped_bundle_is_valid() {
    let files = shipped();
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d}"));
    let course = bundle.course("prealgebra").unwrap();
    assert!(course.units.len() >= 12, "a course someone could study");
    for unit in course.units.values() {
        assert!(
            unit.chunks.len() >= 2,
            "{} needs real explanatory text",
            unit.id
        );
        assert!(!unit.misconceptions.is_empty(), "{}", unit.id);
        assert!(!unit.mistake_tags.is_empty(), "{}", unit.id);
        for tier in tutorflow::model::ExamTier::ALL {
            assert!(
                unit.exam.iter().any(|q| q.tier == tier),
                "{} has no {} exam item",
                unit.id,
                tier.as_str()
            );
        }
    }
    assert!(bundle.workflows.contains_key("default"));
    assert_eq!(bundle.version, files.version);
    // Every shipped YAML file is fully indexed, so positions in it are exact.
    for (path, text) in &files.files {
        if path.ends_with(".yaml") {
            assert!(
                YamlIndex::build(text).is_complete(),
                "{path} is not fully indexable"
            );
        }
    }
}

#[test]
fn a_broken_unit_file_is_not_also_reported_missing() {
    let files = mutated(
        &shipped(),
        UNIT,
        "title: One-step equations",
        "title: [One-step",
    );
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, UNIT);
}

#[test]
fn bad_indentation_is_a_syntax_error_at_its_line() {
    let files = mutated(
        &shipped(),
        UNIT,
        "\n  - id: inverse\n",
        "\n  - id: inverse\n     section: oops\n",
    );
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, _) = position_of(&files, UNIT, "     section: oops");
    assert_eq!(found[0].path, UNIT);
    assert_eq!(found[0].line, line, "{}", found[0]);
}

#[test]
fn a_wrong_type_is_reported_where_it_is_written() {
    let files = mutated(&shipped(), WORKFLOW, "priority: 90", "priority: high");
    let (line, column) = position_of(&files, WORKFLOW, "priority: high");
    let found = problems(&files);
    assert_reported(
        &found,
        WORKFLOW,
        line,
        column + "priority: ".len(),
        "invalid type",
    );
    assert_eq!(
        found.len(),
        1,
        "no knock-on errors from the broken workflow: {found:?}"
    );
}

#[test]
fn an_unknown_field_is_named() {
    let files = mutated(&shipped(), UNIT, "\nanchor:", "\nanchr:");
    let (line, column) = position_of(&files, UNIT, "anchr:");
    assert_reported(&problems(&files), UNIT, line, column, "anchr");
}

#[test]
fn a_missing_prerequisite_points_at_the_reference() {
    let files = mutated(
        &shipped(),
        COURSE,
        "requires: [inverse-operations]",
        "requires: [inverse-operatons]",
    );
    let (line, column) = position_of(&files, COURSE, "inverse-operatons");
    assert_reported(
        &problems(&files),
        COURSE,
        line,
        column,
        "`inverse-operatons`",
    );
}

#[test]
fn a_prerequisite_cycle_is_reported_once() {
    // ratios requires fractions, which requires multiplication-division.
    let files = mutated(
        &shipped(),
        COURSE,
        "  - id: multiplication-division\n    requires: [whole-numbers]",
        "  - id: multiplication-division\n    requires: [whole-numbers, ratios]",
    );
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, COURSE);
    assert!(
        found[0].message.contains("prerequisite cycle"),
        "{}",
        found[0]
    );
    for unit in ["multiplication-division", "fractions", "ratios"] {
        assert!(found[0].message.contains(unit), "{}", found[0]);
    }
}

#[test]
fn an_unknown_prompt_placeholder_is_reported_in_the_prompt() {
    let path = "prompts/welcome_guided.txt";
    let files = mutated(&shipped(), path, "{{course_title}}", "{{course_name}}");
    let (line, column) = position_of(&files, path, "{{course_name}}");
    assert_reported(&problems(&files), path, line, column, "course_name");
}

#[test]
fn a_missing_prompt_is_reported_at_its_reference() {
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "prompt: category_close",
        "prompt: category_closer",
    );
    let (line, column) = position_of(&files, WORKFLOW, "category_closer");
    assert_reported(&problems(&files), WORKFLOW, line, column, "does not exist");
}

#[test]
fn a_required_placeholder_must_be_used() {
    let files = mutated(
        &shipped(),
        "prompts/tutor_policy.txt",
        "{{policy_json}}",
        "(none)",
    );
    assert_reported(
        &problems(&files),
        "prompts/tutor_policy.txt",
        1,
        1,
        "{{policy_json}}",
    );
}

#[test]
fn weights_outside_the_unit_interval_are_refused() {
    let files = mutated(&shipped(), WORKFLOW, "tier_need: 0.10", "tier_need: 1.10");
    let (line, column) = position_of(&files, WORKFLOW, "1.10");
    assert_reported(&problems(&files), WORKFLOW, line, column, "outside [0, 1]");
}

#[test]
fn grading_thresholds_are_checked() {
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "close_relative: 0.01",
        "close_relative: 20",
    );
    let (line, column) = position_of(&files, WORKFLOW, "20\n");
    assert_reported(&problems(&files), WORKFLOW, line, column, "outside [0, 1]");
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "close_min_difference: 0\n",
        "close_min_difference: -1\n",
    );
    let (line, column) = position_of(&files, WORKFLOW, "-1\n");
    assert_reported(&problems(&files), WORKFLOW, line, column, "zero or more");
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "close_min_difference_from: 1.0",
        "close_min_difference_from: -0.5",
    );
    let (line, column) = position_of(&files, WORKFLOW, "-0.5\n");
    assert_reported(&problems(&files), WORKFLOW, line, column, "zero or more");
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "equivalence_points: 8",
        "equivalence_points: 1",
    );
    let (line, column) = position_of(&files, WORKFLOW, "equivalence_points: 1");
    let value_column = column + "equivalence_points: ".len();
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        value_column,
        "between 3 and 32",
    );
}

#[test]
fn pacing_and_style_thresholds_are_consistent() {
    let files = mutated(&shipped(), WORKFLOW, "trend_window: 6", "trend_window: 1");
    let (line, column) = position_of(&files, WORKFLOW, "trend_window: 1");
    let value_column = column + "trend_window: ".len();
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        value_column,
        "between 2 and 50",
    );
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "quiet_max_words: 5",
        "quiet_max_words: 30",
    );
    let (line, column) = position_of(&files, WORKFLOW, "quiet_max_words: 30");
    let value_column = column + "quiet_max_words: ".len();
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        value_column,
        "below expressive_min_words",
    );
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "consolidate_min_mastery: 0.4",
        "consolidate_min_mastery: 0.7",
    );
    let (line, column) = position_of(&files, WORKFLOW, "consolidate_min_mastery: 0.7");
    let value_column = column + "consolidate_min_mastery: ".len();
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        value_column,
        "consolidate_max_mastery",
    );
}

#[test]
fn an_exam_answer_must_be_an_option() {
    let files = mutated(&shipped(), UNIT, "answer: C", "answer: E");
    let (line, column) = position_of(&files, UNIT, "E\n");
    assert_reported(&problems(&files), UNIT, line, column, "not an option id");
}

#[test]
fn a_survey_time_limit_out_of_range_is_reported_where_it_is_written() {
    const SURVEY: &str = "workflows/surveys/fractions-confidence.yaml";
    let files = mutated(
        &shipped(),
        SURVEY,
        "units: [fractions]\n",
        "units: [fractions]\ntime_limit_minutes: 0\n",
    );
    let (line, column) = position_of(&files, SURVEY, "time_limit_minutes: 0");
    let value = column + "time_limit_minutes: ".len();
    assert_reported(&problems(&files), SURVEY, line, value, "1 to 480 minutes");
    let files = mutated(
        &shipped(),
        SURVEY,
        "units: [fractions]\n",
        "units: [fractions]\ntime_limit_minutes: soon\n",
    );
    let (line, _) = position_of(&files, SURVEY, "soon");
    assert!(
        problems(&files)
            .iter()
            .any(|d| d.path == SURVEY && d.line == line && d.message.contains("invalid")),
        "{:?}",
        problems(&files)
    );
}

#[test]
fn an_unknown_tier_is_refused() {
    let files = mutated(&shipped(), UNIT, "tier: gold", "tier: platinum");
    let (line, column) = position_of(&files, UNIT, "platinum");
    assert_reported(&problems(&files), UNIT, line, column, "platinum");
}

#[test]
fn an_invalid_pattern_is_refused() {
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "\"(?i)\\\\bsystem prompt\\\\b\"",
        "\"(?i)(system prompt\"",
    );
    let (line, column) = position_of(&files, WORKFLOW, "\"(?i)(system prompt\"");
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        column,
        "invalid regular expression",
    );
}

/// Each mistake a safeguarding lead could make in the safety section is
/// reported where it is written.
#[test]
fn safety_mistakes_are_reported_where_they_are_written() {
    let cases: [(&str, &str, &str); 9] = [
        // A word list that does not exist.
        (
            "- \"{self_act} {myself}\"",
            "- \"{self_act} {myslf}\"",
            "unknown word list {myslf}",
        ),
        // A pattern that is not a regular expression.
        (
            "- \"take my (own )?life\"",
            "- \"take my (own life\"",
            "invalid regular expression",
        ),
        // An online category the providers do not have.
        (
            "online: [violence, violence/graphic,",
            "online: [violense, violence/graphic,",
            "unknown online category `violense`",
        ),
        // A mode that does not exist.
        (
            "      response_by_mode:\n        exam:",
            "      response_by_mode:\n        exams:",
            "unknown mode `exams`",
        ),
        // Two categories with one id.
        ("- id: injection", "- id: cheating", "defined twice"),
        // The reserved catch-all id.
        ("- id: profanity", "- id: other", "reserved"),
        // A category about someone else whose id a message could contain.
        (
            "- id: someone_at_risk",
            "- id: friend",
            "no message can contain",
        ),
        // A kind of someone else's risk that is not one lower-case word.
        ("        abuse:\n", "        Abuse:\n", "`Abuse` is not"),
        // Help resources shown, but no default list.
        (
            "    default:\n      - {name: \"Your local emergency number\"",
            "    world:\n      - {name: \"Your local emergency number\"",
            "no `default` list",
        ),
    ];
    for (from, to, words) in cases {
        let files = mutated(&shipped(), WORKFLOW, from, to);
        let reported = problems(&files);
        assert!(
            reported
                .iter()
                .any(|d| d.path == WORKFLOW && d.message.contains(words)),
            "{to:?}: expected a problem mentioning {words:?}, got:\n{}",
            reported
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    // Positions: an unknown list is reported at its pattern.
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "- \"{self_act} {myself}\"",
        "- \"{self_act} {myslf}\"",
    );
    let (line, column) = position_of(&files, WORKFLOW, "\"{self_act} {myslf}\"");
    assert_reported(&problems(&files), WORKFLOW, line, column, "{myslf}");
    // A mode key is reported where the key is written.
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "      response_by_mode:\n        exam:",
        "      response_by_mode:\n        exams:",
    );
    let (line, column) = position_of(&files, WORKFLOW, "exams:");
    assert_reported(&problems(&files), WORKFLOW, line, column, "unknown mode");
}

/// The classifier's threshold, check-in category and examples file are
/// checked, and each problem is reported where it is written: in the
/// workflow, or at the line and column of the examples file.
#[test]
fn safety_classifier_mistakes_are_reported_where_they_are_written() {
    const EXAMPLES: &str = "workflows/safety_examples.tsv";
    for (from, to, needle, words) in [
        ("    at: 0.97", "    at: 1.5", "1.5", "not a probability"),
        ("    at: 0.97", "    at: 0", "0", "not a probability"),
        (
            "    check_in: concern",
            "    check_in: worry",
            "worry",
            "unknown safety category `worry`",
        ),
        (
            "    examples: safety_examples.tsv",
            "    examples: ../secrets.tsv",
            "../secrets.tsv",
            "not a .tsv file name",
        ),
        (
            "    examples: safety_examples.tsv",
            "    examples: missing.tsv",
            "missing.tsv",
            "does not exist",
        ),
    ] {
        let files = mutated(&shipped(), WORKFLOW, from, to);
        // The value is reported, where it starts on its line.
        let (line, column) = position_of(&files, WORKFLOW, &format!("{to}\n"));
        let offset = to.find(needle).expect("the value is on its line");
        assert_reported(&problems(&files), WORKFLOW, line, column + offset, words);
    }
    // An unknown label, a line with no tab, and a message labelled twice.
    let files = mutated(
        &shipped(),
        EXAMPLES,
        "self_harm\ti wanna die\n",
        "self_harm\ti wanna die\nselfharm\ti wanna disappear\nno tab here\nordinary\ti wanna die\n",
    );
    let (line, _) = position_of(&files, EXAMPLES, "selfharm\t");
    let reported = problems(&files);
    assert_reported(
        &reported,
        EXAMPLES,
        line,
        1,
        "`selfharm` is not a safety category",
    );
    assert_reported(&reported, EXAMPLES, line + 1, 1, "no tab");
    assert_reported(
        &reported,
        EXAMPLES,
        line + 2,
        10,
        "labelled `self_harm` on line",
    );
}

#[test]
fn a_missing_blueprint_is_refused() {
    let files = mutated(
        &shipped(),
        UNIT,
        "[MATH.ALG.EQ.ONESTEP]",
        "[MATH.ALG.EQ.ONE_STEP]",
    );
    let (line, column) = position_of(&files, UNIT, "MATH.ALG.EQ.ONE_STEP");
    assert_reported(&problems(&files), UNIT, line, column, "does not exist");
}

#[test]
fn a_study_plan_is_three_to_five_steps_about_its_unit() {
    let short = mutated(
        &shipped(),
        UNIT,
        "  - {title: \"Mixed practice with checking\"",
        "  # - {title: \"Mixed practice with checking\"",
    );
    let short = mutated(
        &short,
        UNIT,
        "  - {title: \"Undo multiplication and division\"",
        "  # - {title: \"Undo multiplication and division\"",
    );
    let (line, column) = position_of(&short, UNIT, "study_plan:");
    assert_reported(&problems(&short), UNIT, line, column, "3 to 5 steps, not 2");

    let off_topic = mutated(
        &shipped(),
        UNIT,
        "concept: \"inverse of + and -\"",
        "concept: \"photosynthesis in plants\"",
    );
    let (line, column) = position_of(&off_topic, UNIT, "\"photosynthesis in plants\"");
    assert_reported(
        &problems(&off_topic),
        UNIT,
        line,
        column,
        "not something unit `one-step-equations` is about",
    );
}

#[test]
fn an_unreachable_unit_is_refused() {
    let files = mutated(
        &shipped(),
        COURSE,
        "  - id: ratios\n    requires: [fractions]",
        "  - id: ratios\n    requires: []",
    );
    let (line, column) = position_of(&files, COURSE, "ratios\n");
    assert_reported(&problems(&files), COURSE, line, column, "not connected");
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let files = shipped();
    let files = mutated(
        &files,
        COURSE,
        "requires: [inverse-operations]",
        "requires: [nowhere]",
    );
    let files = mutated(
        &files,
        "prompts/welcome_exam.txt",
        "{{unit_title}}",
        "{{unit_name}}",
    );
    let files = mutated(
        &files,
        WORKFLOW,
        "default_category: general",
        "default_category: chat",
    );
    let found = problems(&files);
    let paths: std::collections::BTreeSet<_> = found.iter().map(|d| d.path.as_str()).collect();
    assert!(found.len() >= 3, "{found:?}");
    assert_eq!(paths.len(), 3, "{found:?}");
}

#[test]
fn files_in_the_wrong_place_are_named() {
    let mut files = shipped();
    files.files.insert(
        "workflows/courses/prealgebra/extra.yaml".into(),
        "id: x\n".into(),
    );
    assert_reported(
        &problems(&files),
        "workflows/courses/prealgebra/extra.yaml",
        1,
        1,
        "not part of a content bundle",
    );
}

/// Each case loads the whole bundle (most of a second in a debug build), so
/// the suite runs 48; `PROPTEST_CASES=1000` searches deeper.
fn bundle_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: bundle_cases(), .. ProptestConfig::default() })]

    /// Arbitrary edits to real files never panic; a broken file always
    /// yields at least one located problem.
    #[test]
    fn loading_never_panics(file in 0usize..40, at in any::<prop::sample::Index>(), junk in ".{0,12}") {
        let mut files = shipped();
        let keys: Vec<String> = files.files.keys().cloned().collect();
        let key = &keys[file % keys.len()];
        let text = files.files.get_mut(key).unwrap();
        let mut cut = at.index(text.len() + 1);
        while !text.is_char_boundary(cut) { cut -= 1; }
        text.insert_str(cut, &junk);
        if let Err(d) = Bundle::load(&files) {
            prop_assert!(!d.0.is_empty());
            for problem in d.0 {
                prop_assert!(problem.line >= 1 && problem.column >= 1);
            }
        }
    }

    #[test]
    fn arbitrary_text_in_any_role_never_panics(text in "\\PC{0,200}", role in 0usize..4) {
        let mut files = shipped();
        let path = ["workflows/default.yaml", COURSE, UNIT, "prompts/tutor_input.txt"][role];
        files.files.insert(path.to_owned(), text);
        let _ = Bundle::load(&files);
    }
}

#[test]
fn a_mistake_tag_needs_an_explanation_for_the_student() {
    let explain = line_of(UNIT, "explain: \"To get x");
    let files = mutated(&shipped(), UNIT, explain, "");
    let (line, column) = position_of(&files, UNIT, "id: wrong_inverse");
    assert_reported(&problems(&files), UNIT, line, column, "needs an `explain`");
    let long = format!("    explain: \"{}\"\n", "Undo it. ".repeat(60));
    let files = mutated(&shipped(), UNIT, explain, &long);
    let (line, column) = position_of(&files, UNIT, "\"Undo it.");
    assert_reported(&problems(&files), UNIT, line, column, "keep it to 400");
}

/// The whole line of `path` that holds `needle`, with its newline.
fn line_of(path: &str, needle: &str) -> &'static str {
    let text: &'static str = Box::leak(
        std::fs::read_to_string(repo_root().join(path))
            .unwrap()
            .into_boxed_str(),
    );
    let at = text.find(needle).expect("needle");
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
    &text[start..end]
}

#[test]
fn an_authored_step_must_not_state_the_answer() {
    const COURSE: &str = "workflows/courses/prealgebra/course.yaml";
    let files = mutated(
        &shipped(),
        COURSE,
        "\"Then undo the 2 ×: divide both sides by 2, x = 8 ÷ 2\"",
        "\"Then undo the 2 ×: divide both sides by 2, so x = 4\"",
    );
    let (line, column) = position_of(
        &files,
        COURSE,
        "\"Then undo the 2 ×: divide both sides by 2, so",
    );
    assert_reported(
        &problems(&files),
        COURSE,
        line,
        column,
        "states the answer `x = 4`",
    );
    let six = format!("steps: [{}]}}", ["\"a step\""; 6].join(", "));
    let files = mutated(
        &shipped(),
        COURSE,
        "steps: [\"Take 7 away from both sides to undo the + 7: x = 12 - 7\"]}",
        &six,
    );
    let (line, column) = position_of(&files, COURSE, "steps: [\"a step\"");
    assert_reported(&problems(&files), COURSE, line, column, "at most 5");
}

#[test]
fn a_lesson_text_may_use_only_its_own_placeholders() {
    // An unknown placeholder in the step text, reported where it is written
    // inside the folded text, not at the text's first line.
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "{{concept}}. Success criteria:",
        "{{concept}} for {{student_name}}. Success criteria:",
    );
    let (line, column) = position_of(&files, WORKFLOW, "{{student_name}}");
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        column,
        "placeholder {{student_name}} cannot be used in prompt_signals.lesson.step; available: {{number}}",
    );

    // The texts that follow the step take none.
    let files = mutated(
        &shipped(),
        WORKFLOW,
        "take a smaller step.",
        "take a smaller step on {{concept}}.",
    );
    let (line, column) = position_of(&files, WORKFLOW, "on {{concept}}.");
    let column = column + "on ".len();
    assert_reported(
        &problems(&files),
        WORKFLOW,
        line,
        column,
        "cannot be used in prompt_signals.lesson.simplify; available: none",
    );

    let files = mutated(
        &shipped(),
        WORKFLOW,
        "Ask nothing new.",
        "Ask nothing {{new.",
    );
    assert!(
        problems(&files)
            .iter()
            .any(|d| d.path == WORKFLOW && d.message.contains("{{")),
        "an unclosed placeholder is refused"
    );
}

#[test]
fn an_authored_plan_step_has_no_placeholders() {
    let files = mutated(
        &shipped(),
        UNIT,
        "concept: \"inverse of + and -\"",
        "concept: \"inverse of + and - for {{unit_title}}\"",
    );
    let (line, column) = position_of(&files, UNIT, "{{unit_title}}");
    assert_reported(
        &problems(&files),
        UNIT,
        line,
        column,
        "`{{unit_title}}` is never filled in a study plan's concept",
    );
}

const ADD_BLUEPRINT: &str = "workflows/blueprints/add-2digit.yaml";

#[test]
fn theme_wordings_are_checked_where_they_are_written() {
    let files = shipped();
    // A theme no student can choose, pointed at by its name.
    let unknown = mutated(&files, ADD_BLUEPRINT, "\n  music:\n", "\n  musik:\n");
    let (line, column) = position_of(&unknown, ADD_BLUEPRINT, "musik:");
    assert_reported(
        &problems(&unknown),
        ADD_BLUEPRINT,
        line,
        column,
        "`musik` is not a theme a student can choose (themes: sports, cooking",
    );

    // A wording that leaves out a number the question needs.
    let sports = "\"A basketball team scored {a} points in the first half and {b} points";
    let missing = mutated(
        &files,
        ADD_BLUEPRINT,
        sports,
        "\"A basketball team scored {a} points in the first half and some points",
    );
    let (line, column) = position_of(&missing, ADD_BLUEPRINT, "\"A basketball team");
    assert_reported(
        &problems(&missing),
        ADD_BLUEPRINT,
        line,
        column,
        "leaves out {b}: a theme wording uses the same values as the plain stem",
    );

    // One that shows a value the plain stems keep hidden (the carry sum).
    let extra = mutated(
        &files,
        ADD_BLUEPRINT,
        sports,
        "\"A basketball team scored {a} points ({ones} in ones) in the first half and {b} points",
    );
    let (line, column) = position_of(&extra, ADD_BLUEPRINT, "\"A basketball team");
    assert_reported(
        &problems(&extra),
        ADD_BLUEPRINT,
        line,
        column,
        "adds {ones}",
    );

    // One over a name that does not exist at all.
    let undefined = mutated(
        &files,
        ADD_BLUEPRINT,
        sports,
        "\"A team scored {c} points and {b} points",
    );
    let (line, column) = position_of(&undefined, ADD_BLUEPRINT, "\"A team scored {c}");
    assert_reported(
        &problems(&undefined),
        ADD_BLUEPRINT,
        line,
        column,
        "uses {c} not defined",
    );

    // A theme with no wordings.
    let empty = mutated(
        &files,
        ADD_BLUEPRINT,
        "  music:\n    - \"Your playlist",
        "  music: []\n  art:\n    - \"Your playlist",
    );
    let (line, column) = position_of(&empty, ADD_BLUEPRINT, "music: []");
    let column = column + "music: ".len();
    assert_reported(
        &problems(&empty),
        ADD_BLUEPRINT,
        line,
        column,
        "theme `music` has no wordings",
    );
}

const WRITTEN_UNIT: &str = "workflows/courses/prealgebra/units/whole-numbers.yaml";
const WRITTEN_RUBRIC: &str = r#"    rubric:
      - point: "adds the answer and the number taken away (34 + 38)"
        terms: ["add", "adding", "plus", "+", "sum", "addition"]
      - point: "says the total must be the number she started from (72)"
        terms: ["72", "seventy-two", "seventy two", "started with", "started from", "first number"]
"#;

#[test]
fn the_shipped_course_has_written_exam_questions_with_rubrics() {
    let bundle = Bundle::load(&shipped()).unwrap();
    let written: Vec<_> = bundle
        .courses
        .values()
        .flat_map(|c| c.units.values())
        .flat_map(|u| u.exam.iter())
        .filter(|q| q.is_written())
        .collect();
    assert!(written.len() >= 2, "{written:?}");
    assert!(
        written
            .iter()
            .all(|q| !q.rubric.is_empty() && q.options.is_empty())
    );
}

#[test]
fn a_written_exam_question_without_a_rubric_is_reported_at_the_question() {
    let files = mutated(&shipped(), WRITTEN_UNIT, WRITTEN_RUBRIC, "");
    let (line, column) = position_of(&files, WRITTEN_UNIT, "id: EX-WHN-W1");
    assert_reported(
        &problems(&files),
        WRITTEN_UNIT,
        line,
        column,
        "written question `EX-WHN-W1` has no rubric",
    );
}

#[test]
fn a_rubric_point_the_model_answer_does_not_make_is_reported_at_its_terms() {
    let files = mutated(
        &shipped(),
        WRITTEN_UNIT,
        r#"terms: ["72", "seventy-two", "seventy two", "started with", "started from", "first number"]"#,
        r#"terms: ["seventy-two", "first number"]"#,
    );
    let (line, column) = position_of(&files, WRITTEN_UNIT, r#"["seventy-two", "first"#);
    assert_reported(
        &problems(&files),
        WRITTEN_UNIT,
        line,
        column,
        "the model answer does not make this point",
    );
}

#[test]
fn a_written_question_has_no_options_and_a_choice_question_no_rubric() {
    let files = mutated(
        &shipped(),
        WRITTEN_UNIT,
        "    format: written\n",
        "    format: written\n    options: [\"34\", \"44\"]\n",
    );
    let (line, column) = position_of(&files, WRITTEN_UNIT, "options: [\"34\", \"44\"]");
    assert_reported(
        &problems(&files),
        WRITTEN_UNIT,
        line,
        column,
        "has no options",
    );
    let files = mutated(&shipped(), WRITTEN_UNIT, "    format: written\n", "");
    let (line, column) = position_of(&files, WRITTEN_UNIT, "rubric:\n      - point: \"adds");
    assert_reported(
        &problems(&files),
        WRITTEN_UNIT,
        line,
        column,
        "only a written question",
    );
}
