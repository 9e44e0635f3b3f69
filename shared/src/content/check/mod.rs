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

use self::prompts::PromptUse;
use super::blueprint::{Blueprint, Parameter};
use super::course::{ExamItem, Unit};
use super::diagnostic::Diagnostic;
use super::read::{Doc, Parsed};
use super::survey::Questionnaire;
use super::yaml_index::YamlPath;
use crate::model::AuthoredStep;

/// What checking content asks of the engine. Whether content works once it
/// is used — values drawn and items generated from a blueprint, an answer
/// read by the offline judge, a study plan a lesson accepts — is decided by
/// the engine's rules, and content sits below the engine: the checks ask
/// here, and the engine's `content_check` answers.
pub trait EngineChecks {
    /// Why no value can be drawn for `parameter`, if none can.
    fn undrawable(&self, parameter: &Parameter) -> Option<String>;

    /// Problems found generating items from `blueprint`, which has passed
    /// every other check: a scenario that produces no item, or items whose
    /// worked steps and representations do not hold up.
    fn generated_items(&self, blueprint: &Blueprint) -> Vec<Finding>;

    /// The rubric points (by index) the offline judge finds in written
    /// question `question`'s own model answer.
    fn points_made(&self, question: &ExamItem) -> Vec<usize>;

    /// Why `unit`'s authored study plan (written at `at`) is not one a
    /// lesson can follow, if it is not.
    fn study_plan(&self, plan: &[AuthoredStep], unit: &Unit, at: &YamlPath) -> Option<Finding>;
}

/// One problem and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub at: YamlPath,
    /// Point at the key naming the value rather than the value itself.
    pub key: bool,
    pub message: String,
}

impl Finding {
    /// A problem with the value at `at`.
    pub fn at(at: YamlPath, message: impl Into<String>) -> Finding {
        Finding {
            at,
            key: false,
            message: message.into(),
        }
    }

    /// A problem with the key naming the value at `at`.
    pub fn at_key(at: YamlPath, message: impl Into<String>) -> Finding {
        Finding {
            at,
            key: true,
            message: message.into(),
        }
    }
}

/// Every problem of `parsed`, with `engine` answering what content cannot.
pub(super) fn check(parsed: &Parsed, engine: &dyn EngineChecks) -> Vec<Diagnostic> {
    let mut checker = Checker {
        diags: Vec::new(),
        engine,
    };
    checker.check(parsed);
    checker.diags
}

struct Checker<'e> {
    diags: Vec<Diagnostic>,
    engine: &'e dyn EngineChecks,
}

impl Checker<'_> {
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

    fn report<T>(&mut self, doc: &Doc<T>, finding: Finding) {
        if finding.key {
            self.at_key(doc, &finding.at, finding.message);
        } else {
            self.at(doc, &finding.at, finding.message);
        }
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
            self.check_safety_examples(doc, &parsed.tables);
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

    /// Each survey on its own (see [`Questionnaire::problems`]), and ids unique.
    fn check_surveys(&mut self, surveys: &[Doc<Questionnaire>], parsed: &Parsed) {
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
            for finding in blueprint::check(bp, self.engine) {
                self.report(doc, finding);
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
