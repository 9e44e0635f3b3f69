//! Checks of a workflow's `safety` section beyond its shape: every term and
//! pattern compiles the way the gate compiles it, word lists exist, online
//! category names and mode names are known, and help resources exist where
//! a category shows them; the classifier's settings name a category and a
//! threshold between 0 and 1, and its examples file exists and labels every line
//! with a category or `ordinary`. Problems are located by YAML path (or,
//! in the examples file, by line and column) so the loader reports them as
//! `file:line:column`.

use std::collections::{BTreeMap, BTreeSet};

use super::Finding;
use crate::content::diagnostic::Diagnostic;
use crate::content::safety_examples;
use crate::content::workflow::{
    DEFAULT_REGION, ONLINE_CATEGORIES, ORDINARY_LABEL, OTHER_CATEGORY, SafetySettings,
};
use crate::content::yaml_index::YamlPath;
use crate::model::Mode;
use crate::text::pattern;

/// Escalating more often than this makes no sense in one conversation.
const MAX_ESCALATION_FLAGS: u32 = 20;

/// Every problem of `safety`, found under `at` (the section's path).
pub fn check(safety: &SafetySettings, at: &YamlPath) -> Vec<Finding> {
    let mut report = Report(Vec::new());
    let vocabulary = &safety.vocabulary;
    for (name, words) in vocabulary {
        let list = at.key("vocabulary").key(name);
        if name == "gap" {
            report.value(
                list.clone(),
                "`gap` is built in (up to three words); choose another name".into(),
            );
        }
        if words.is_empty() {
            report.value(list.clone(), format!("word list `{name}` is empty"));
        }
        for (i, word) in words.iter().enumerate() {
            if let Err(e) = compiles(pattern::compile(word, vocabulary)) {
                report.value(list.index(i), e);
            }
        }
    }
    for (i, p) in safety.ordinary.iter().enumerate() {
        if let Err(e) = compiles(pattern::compile(p, vocabulary)) {
            report.value(at.key("ordinary").index(i), e);
        }
    }
    let modes: BTreeSet<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
    let mode_names = || modes.iter().copied().collect::<Vec<_>>().join(", ");
    let mut seen = BTreeSet::new();
    let mut needs_resources = None;
    for (i, c) in safety.categories.iter().enumerate() {
        let here = at.key("categories").index(i);
        if c.id.trim().is_empty() {
            report.value(here.key("id"), "a safety category needs an id".into());
        } else if c.id == OTHER_CATEGORY {
            report.value(
                here.key("id"),
                format!("`{OTHER_CATEGORY}` is reserved for flags no category lists"),
            );
        } else if c.id == ORDINARY_LABEL {
            report.value(
                here.key("id"),
                format!("`{ORDINARY_LABEL}` is reserved for example messages that are not flagged"),
            );
        } else if !seen.insert(c.id.as_str()) {
            report.value(
                here.key("id"),
                format!("safety category `{}` is defined twice", c.id),
            );
        }
        // Its id stands where its matches were for the categories above
        // it: with a `_` it is one word no message can have.
        let one_word = |ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_';
        if c.someone_else && !(c.id.contains('_') && c.id.chars().all(one_word)) {
            report.value(
                here.key("id"),
                format!(
                    "a category about someone else needs an id of lower-case words joined by `_` (`someone_at_risk`), which no message can contain: the categories above it read its id where it matched; `{}` is not one",
                    c.id
                ),
            );
        }
        for kind in c.patterns_by_kind.keys() {
            if !c.someone_else {
                report.value(
                    here.key("patterns_by_kind").key(kind),
                    format!(
                        "only a category about someone else (`someone_else: true`) sorts patterns by kind; `{}` is not one: list them under `patterns`",
                        c.id
                    ),
                );
            } else if kind.is_empty() || !kind.chars().all(one_word) {
                report.key(
                    here.key("patterns_by_kind").key(kind),
                    format!(
                        "a kind of risk is read as `{}_<kind>` by the categories above, so it is lower-case words joined by `_`; `{kind}` is not",
                        c.id
                    ),
                );
            }
        }
        if c.response.trim().is_empty() {
            report.value(
                here.key("response"),
                format!("safety category `{}` has no response", c.id),
            );
        }
        if c.terms.is_empty()
            && c.patterns.is_empty()
            && c.patterns_by_kind.values().all(Vec::is_empty)
            && c.online.is_empty()
        {
            report.value(
                here.clone(),
                format!(
                    "safety category `{}` has no terms, patterns or online categories: nothing can flag it",
                    c.id
                ),
            );
        }
        for (j, term) in c.terms.iter().enumerate() {
            if let Err(e) = compiles(pattern::compile_term(term)) {
                report.value(here.key("terms").index(j), e);
            }
        }
        for (j, p) in c.patterns.iter().enumerate() {
            if let Err(e) = compiles(pattern::compile(p, vocabulary)) {
                report.value(here.key("patterns").index(j), e);
            }
        }
        for (kind, patterns) in &c.patterns_by_kind {
            for (j, p) in patterns.iter().enumerate() {
                if let Err(e) = compiles(pattern::compile(p, vocabulary)) {
                    report.value(here.key("patterns_by_kind").key(kind).index(j), e);
                }
            }
        }
        for (j, name) in c.online.iter().enumerate() {
            if !ONLINE_CATEGORIES.contains(&name.as_str()) {
                report.value(
                    here.key("online").index(j),
                    format!(
                        "unknown online category `{name}`; known: {}",
                        ONLINE_CATEGORIES.join(", ")
                    ),
                );
            }
        }
        for mode in c.response_by_mode.keys() {
            if !modes.contains(mode.as_str()) {
                report.key(
                    here.key("response_by_mode").key(mode),
                    format!("unknown mode `{mode}`; modes: {}", mode_names()),
                );
            }
        }
        if c.help_resources && needs_resources.is_none() {
            needs_resources = Some(here.key("help_resources"));
        }
    }
    if let Some(asked) = needs_resources
        && safety
            .help_resources
            .get(DEFAULT_REGION)
            .is_none_or(Vec::is_empty)
    {
        report.value(
            asked,
            format!(
                "this category shows help resources, but safety.help_resources has no `{DEFAULT_REGION}` list"
            ),
        );
    }
    for (region, list) in &safety.help_resources {
        for (i, r) in list.iter().enumerate() {
            if r.name.trim().is_empty() {
                report.value(
                    at.key("help_resources").key(region).index(i).key("name"),
                    "a help resource needs a name".into(),
                );
            }
        }
    }
    let escalation = at.key("escalation");
    if safety.escalation.after_flags > MAX_ESCALATION_FLAGS {
        report.value(
            escalation.key("after_flags"),
            format!("must be at most {MAX_ESCALATION_FLAGS} (0 turns escalation off)"),
        );
    }
    if safety.escalation.after_flags > 0 && safety.escalation.text.trim().is_empty() {
        report.value(escalation.key("text"), "the escalation needs a text".into());
    }
    for mode in safety.escalation.text_by_mode.keys() {
        if !modes.contains(mode.as_str()) {
            report.key(
                escalation.key("text_by_mode").key(mode),
                format!("unknown mode `{mode}`; modes: {}", mode_names()),
            );
        }
    }
    report.0
}

/// Problems of the classifier's settings (found under `at`, the safety
/// section's path) and of its examples file, whose text is `examples` when
/// the bundle has the file: the first by YAML path, the second where they
/// are in the file.
pub fn check_classifier(
    safety: &SafetySettings,
    at: &YamlPath,
    examples: Option<&str>,
) -> (Vec<Finding>, Vec<Diagnostic>) {
    let mut report = Report(Vec::new());
    let mut lines = Vec::new();
    let Some(settings) = &safety.classifier else {
        return (report.0, lines);
    };
    let at = at.key("classifier");
    let categories: BTreeSet<&str> = safety.categories.iter().map(|c| c.id.as_str()).collect();
    let known = |id: &str| categories.contains(id);
    let known_names = || categories.iter().copied().collect::<Vec<_>>().join(", ");
    if !known(&settings.check_in) {
        report.value(
            at.key("check_in"),
            format!(
                "unknown safety category `{}`; categories: {}",
                settings.check_in,
                known_names()
            ),
        );
    }
    if !(settings.at > 0.0 && settings.at < 1.0) {
        report.value(
            at.key("at"),
            format!("`{}` is not a probability above 0 and below 1", settings.at),
        );
    }
    let file = safety_examples::bundle_path(&settings.examples);
    if !safety_examples::is_file_name(&settings.examples) {
        report.value(
            at.key("examples"),
            format!(
                "`{}` is not a .tsv file name in {}/",
                settings.examples,
                safety_examples::FOLDER
            ),
        );
        return (report.0, lines);
    }
    let Some(text) = examples else {
        report.value(at.key("examples"), format!("{file} does not exist"));
        return (report.0, lines);
    };
    let (examples, problems) = safety_examples::parse(text);
    for p in problems {
        lines.push(Diagnostic::new(&file, p.line, p.column, p.message));
    }
    // The first line of each message (compared ignoring case and spacing).
    let mut first: BTreeMap<String, (usize, &str)> = BTreeMap::new();
    let mut labelled: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &examples {
        let label = e.example.label.as_str();
        if label != ORDINARY_LABEL && !known(label) {
            lines.push(Diagnostic::new(
                &file,
                e.line,
                1,
                format!(
                    "`{label}` is not a safety category of this workflow (or `{ORDINARY_LABEL}`); \
                     categories: {}",
                    known_names()
                ),
            ));
            continue;
        }
        *labelled.entry(label).or_default() += 1;
        let key = e
            .example
            .message
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        match first.get(&key) {
            Some((line, other)) if *other == label => lines.push(Diagnostic::new(
                &file,
                e.line,
                e.message_column,
                format!("the same message as line {line}"),
            )),
            Some((line, other)) => lines.push(Diagnostic::new(
                &file,
                e.line,
                e.message_column,
                format!("this message is labelled `{other}` on line {line}"),
            )),
            None => {
                first.insert(key, (e.line, label));
            }
        }
    }
    if !labelled.contains_key(ORDINARY_LABEL) {
        report.value(
            at.key("examples"),
            format!(
                "{file} has no `{ORDINARY_LABEL}` messages: the classifier needs to see what is not flagged"
            ),
        );
    }
    let escalating = safety
        .categories
        .iter()
        .any(|c| c.escalates && labelled.contains_key(c.id.as_str()));
    if !escalating {
        report.value(
            at.key("examples"),
            format!("{file} has no messages of an escalating category: there is nothing to learn"),
        );
    }
    (report.0, lines)
}

struct Report(Vec<Finding>);

impl Report {
    fn value(&mut self, at: YamlPath, message: String) {
        self.0.push(Finding::at(at, message));
    }

    /// A problem with a mapping key, reported where the key is written.
    fn key(&mut self, at: YamlPath, message: String) {
        self.0.push(Finding::at_key(at, message));
    }
}

/// The compiled pattern parses as a regular expression. Parsing, not
/// building: validation runs at every cold start and must stay cheap.
fn compiles(compiled: Result<String, pattern::PatternError>) -> Result<(), String> {
    let re = compiled.map_err(|e| match e.offset {
        Some(offset) => format!("{} (at character {})", e.message, offset + 1),
        None => e.message,
    })?;
    regex_syntax::Parser::new()
        .parse(&re)
        .map(|_| ())
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("invalid").trim().to_owned();
            format!("invalid pattern: {last}")
        })
}
