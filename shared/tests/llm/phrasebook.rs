//! The workflow's prompt signals and offline phrasebook are validated like
//! the rest of the bundle: each authoring mistake is reported at its
//! `path:line:column`.

use crate::llm_support;

use tutorflow::content::{Bundle, ContentFiles, Diagnostic};

use llm_support::content_files;

const WORKFLOW: &str = "workflows/default.yaml";

fn mutated(from: &str, to: &str) -> ContentFiles {
    let mut files = content_files();
    let text = files.files.get_mut(WORKFLOW).unwrap();
    assert!(
        text.contains(from),
        "default.yaml does not contain {from:?}"
    );
    *text = text.replacen(from, to, 1);
    files
}

fn problems(files: &ContentFiles) -> Vec<Diagnostic> {
    Bundle::load(files).err().map(|d| d.0).unwrap_or_default()
}

/// 1-based line and column of `needle` in the workflow.
fn position_of(files: &ContentFiles, needle: &str) -> (usize, usize) {
    let text = &files.files[WORKFLOW];
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not found"));
    let before = &text[..at];
    (
        before.matches('\n').count() + 1,
        before.rsplit('\n').next().unwrap().chars().count() + 1,
    )
}

fn assert_reported(files: &ContentFiles, needle: &str, words: &str) {
    let found = problems(files);
    let (line, column) = position_of(files, needle);
    assert!(
        found.iter().any(|d| d.path == WORKFLOW
            && d.line == line
            && d.column == column
            && d.message.contains(words)),
        "expected {WORKFLOW}:{line}:{column} mentioning {words:?}, got:\n{}",
        found
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_shipped_phrasebook_and_signals_are_valid() {
    let found = problems(&content_files());
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn an_unknown_placeholder_is_reported_at_its_phrase() {
    let files = mutated(
        "      - Can you explain how you got it, in your own words?",
        "      - Can you explain {{answer}} in your own words?",
    );
    assert_reported(
        &files,
        "Can you explain {{answer}}",
        "placeholder {{answer}} cannot be used in a teach_back phrase; available: unit_title, key_idea",
    );
}

#[test]
fn a_reaction_for_a_category_that_does_not_exist_is_reported() {
    let files = mutated(
        "    off_topic:\n      then: redirect",
        "    off_topics:\n      then: redirect",
    );
    assert_reported(
        &files,
        "off_topics:",
        "`off_topics` is not a routing category",
    );
}

#[test]
fn every_move_needs_a_phrase_that_can_always_be_said() {
    let files = mutated(
        "    drill_card:\n      - Let's practise. Give this one a go, and take your time.\n      - Time for some practice on {{unit_title}}. Have a go at this one.",
        "    drill_card: []",
    );
    assert_reported(
        &files,
        "drill_card: []",
        "`drill_card` needs at least one phrase",
    );

    let files = mutated(
        "    clarify:\n      - \"Here's the idea: {{key_idea}} {{explanation}} For example: {{example_problem}} {{example_steps}} Does that help?\"\n      - \"{{key_idea}} {{explanation}} Here's an example. {{example_problem}} {{example_steps}} Does that make sense?\"\n      - \"Here's the idea: {{key_idea}} For example: {{example_problem}} {{example_steps}} Does that help?\"\n      - \"{{key_idea}} Here's an example. {{example_problem}} {{example_steps}} Does that make sense?\"\n      - \"Here's the idea: {{key_idea}} {{explanation}} Does that make sense?\"\n      - \"{{key_idea}} {{explanation}} Does that help?\"\n      - \"Here's the idea: {{key_idea}} Does that make sense?\"",
        "    clarify:\n      - \"For example: {{example_problem}} Does that help?\"",
    );
    assert_reported(
        &files,
        "clarify:\n      - \"For example",
        "one phrase here must use only {{unit_title}}, {{key_idea}}, {{explanation}}",
    );
}

#[test]
fn a_retry_reaction_without_words_is_reported() {
    let files = mutated(
        "    wrong_operation:\n      then: retry\n      say:\n        - Not quite yet. Talk me through your first step. What did you do?\n",
        "    wrong_operation:\n      then: retry\n",
    );
    assert_reported(
        &files,
        "then: retry\n      by_phase",
        "a `retry` reaction is the whole reply",
    );
}

#[test]
fn template_syntax_errors_and_empty_texts_are_reported() {
    let files = mutated(
        "      - Great work today on {{unit_title}}. You kept at it. See you next time!",
        "      - Great work today on {{unit title}}. See you next time!",
    );
    assert_reported(
        &files,
        "Great work today on {{unit title}}",
        "is not a placeholder name",
    );

    let files = mutated(
        "    steady: Steady progress. Teach one idea at a time.",
        "    steady: \"\"",
    );
    assert_reported(&files, "\"\"\n  style:", "text is empty");
}

#[test]
fn a_workflow_without_a_phrasebook_says_what_is_missing() {
    let mut files = content_files();
    let text = files.files.get_mut(WORKFLOW).unwrap();
    let start = text.find("offline_tutor:").unwrap();
    let end = text.find("# Largest tutor prompt").unwrap();
    text.replace_range(start..end, "");
    let found = problems(&files);
    assert!(
        found.iter().any(|d| d.path == WORKFLOW
            && (d.line, d.column) == (1, 1)
            && d.message
                .contains("a workflow needs a `offline_tutor` section")),
        "{found:#?}"
    );
    // One problem says it all, not one per phrase.
    assert_eq!(
        found.iter().filter(|d| d.path == WORKFLOW).count(),
        1,
        "{found:#?}"
    );
}
