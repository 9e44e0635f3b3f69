//! Checking the parsed bundle as a whole: each file's own rules and every
//! reference between files (a course's workflow, a unit's blueprints, a
//! workflow's prompts and their placeholders). Problems are located by YAML
//! path and reported as `path:line:column: message`.

pub mod blueprint;
mod course;
mod prompts;
pub mod safety;
mod workflow;

use std::collections::{BTreeMap, BTreeSet};

use self::blueprint::Probe;
use self::prompts::PromptUse;
use super::blueprint::Blueprint;
use super::diagnostic::Diagnostic;
use super::load::{Doc, Parsed};
use super::survey::Survey;
use super::yaml_index::YamlPath;

/// Every problem of `parsed`, trying each blueprint scenario as `probe` says.
pub(super) fn check(parsed: &Parsed, probe: Probe) -> Vec<Diagnostic> {
    let mut checker = Checker {
        diags: Vec::new(),
        probe,
    };
    checker.check(parsed);
    checker.diags
}

struct Checker {
    diags: Vec<Diagnostic>,
    probe: Probe,
}

impl Checker {
    fn error(&mut self, path: &str, line: usize, column: usize, message: impl Into<String>) {
        self.diags
            .push(Diagnostic::new(path, line, column, message));
    }

    /// A problem with the value at `at` in `doc`.
    fn at<T>(&mut self, doc: &Doc<T>, at: &YamlPath, message: impl Into<String>) {
        let pos = doc.index.locate(at);
        self.error(&doc.path, pos.line, pos.column, message);
    }

    /// A problem with the key naming the value at `at` in `doc`.
    fn at_key<T>(&mut self, doc: &Doc<T>, at: &YamlPath, message: impl Into<String>) {
        let pos = doc.index.locate_key(at);
        self.error(&doc.path, pos.line, pos.column, message);
    }

    fn check(&mut self, parsed: &Parsed) {
        let blueprint_ids = self.check_blueprints(&parsed.blueprints);
        let workflow_ids: BTreeSet<&str> = parsed
            .workflows
            .iter()
            .map(|d| d.value.id.as_str())
            .chain(parsed.broken.workflows.iter().map(String::as_str))
            .collect();
        let mut prompt_uses: Vec<PromptUse> = Vec::new();
        let mut seen_workflows = BTreeMap::new();
        for doc in &parsed.workflows {
            if let Some(first) = seen_workflows.insert(doc.value.id.clone(), doc.path.clone()) {
                self.at(
                    doc,
                    &YamlPath::root().key("id"),
                    format!("workflow id `{}` is also used by {first}", doc.value.id),
                );
            }
            self.check_workflow(doc, &mut prompt_uses);
        }
        if parsed.workflows.is_empty()
            && parsed.courses.is_empty()
            && parsed.broken.workflows.is_empty()
            && parsed.broken.course_dirs.is_empty()
        {
            self.error(
                "workflows",
                1,
                1,
                "no workflows/*.yaml or courses found: is this a content bundle?",
            );
        }
        self.check_prompts(&parsed.prompts, &prompt_uses);
        let mut blueprint_ids = blueprint_ids;
        blueprint_ids.extend(parsed.broken.blueprints.iter().cloned());
        let blueprints = if parsed.broken.unreadable_blueprint {
            None
        } else {
            Some(&blueprint_ids)
        };
        self.check_courses(parsed, &workflow_ids, blueprints);
        self.check_distractor_tags(parsed);
        self.check_surveys(&parsed.surveys, parsed);
    }

    /// Each survey on its own (see [`Survey::problems`]), and ids unique.
    fn check_surveys(&mut self, surveys: &[Doc<Survey>], parsed: &Parsed) {
        let mut seen = BTreeMap::new();
        for doc in surveys {
            for (i, unit) in doc.value.units.iter().enumerate() {
                let known = parsed.units.iter().any(|(_, _, u)| &u.value.id == unit)
                    || parsed.broken.units.iter().any(|(_, stem)| stem == unit);
                if !known {
                    self.at(
                        doc,
                        &YamlPath::root().key("units").index(i),
                        format!("unit `{unit}` is not in any course"),
                    );
                }
            }
            if let Some(first) = seen.insert(doc.value.id.clone(), doc.path.clone()) {
                self.at(
                    doc,
                    &YamlPath::root().key("id"),
                    format!("survey id `{}` is also used by {first}", doc.value.id),
                );
            }
            for (at, message) in doc.value.problems() {
                self.at(doc, &at, message);
            }
        }
    }

    /// A distractor's mistake tag must be in the list of every unit whose
    /// drills use its blueprint: that list is all drill grading may tag.
    fn check_distractor_tags(&mut self, parsed: &Parsed) {
        for (_, _, unit) in &parsed.units {
            let known: BTreeSet<&str> = unit
                .value
                .mistake_tags
                .iter()
                .map(|t| t.id.as_str())
                .collect();
            for (i, id) in unit.value.blueprints.iter().enumerate() {
                let Some(bp) = parsed.blueprints.iter().find(|d| &d.value.id == id) else {
                    continue;
                };
                let missing: BTreeSet<&str> = blueprint::mistake_tags(&bp.value)
                    .into_iter()
                    .map(|(tag, _)| tag)
                    .filter(|tag| !known.contains(tag))
                    .collect();
                if !missing.is_empty() {
                    self.at(
                        unit,
                        &YamlPath::root().key("blueprints").index(i),
                        format!(
                            "blueprint `{id}` tags wrong answers with {}, not among this unit's \
                             mistake_tags",
                            missing
                                .iter()
                                .map(|t| format!("`{t}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                }
            }
        }
    }

    fn check_blueprints(&mut self, docs: &[Doc<Blueprint>]) -> BTreeSet<String> {
        let mut ids: BTreeMap<String, String> = BTreeMap::new();
        for doc in docs {
            let bp = &doc.value;
            for finding in blueprint::check(bp, self.probe) {
                if finding.key {
                    self.at_key(doc, &finding.at, finding.message);
                } else {
                    self.at(doc, &finding.at, finding.message);
                }
            }
            if bp.id.trim().is_empty() {
                self.at(doc, &YamlPath::root().key("id"), "blueprint id is empty");
            } else if let Some(first) = ids.insert(bp.id.clone(), doc.path.clone()) {
                self.at(
                    doc,
                    &YamlPath::root().key("id"),
                    format!("blueprint `{}` is also defined by {first}", bp.id),
                );
            }
        }
        ids.into_keys().collect()
    }

    fn check_regex<T>(&mut self, doc: &Doc<T>, at: &YamlPath, pattern: &str) {
        if let Err(e) = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
        {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("invalid").trim().to_owned();
            self.at(
                doc,
                at,
                format!("invalid regular expression `{pattern}`: {last}"),
            );
        }
    }
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
