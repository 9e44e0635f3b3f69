//! Reading the bundle's files into their typed form, each document with the
//! positions of its nodes so that a problem found later is reported where
//! it is written. What does not parse is reported here and remembered, so
//! that references to it are not reported again as missing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::de::DeserializeOwned;

use super::blueprint::Blueprint;
use super::course::{CourseFile, Unit};
use super::diagnostic::Diagnostic;
use super::prompt::PromptTemplate;
use super::source::ContentFiles;
use super::survey::Questionnaire;
use super::workflow::Workflow;
use super::yaml_index::LazyYamlIndex;

/// A parsed YAML file with the positions of its nodes.
pub(super) struct Doc<T> {
    pub(super) path: String,
    pub(super) value: T,
    pub(super) index: LazyYamlIndex,
}

/// Files that exist but did not parse. References to them are not reported
/// again as missing: the parse error already says what to fix.
#[derive(Default)]
pub(super) struct Broken {
    pub(super) workflows: BTreeSet<String>,
    pub(super) course_dirs: BTreeSet<String>,
    pub(super) units: BTreeSet<(String, String)>,
    pub(super) blueprints: BTreeSet<String>,
    /// A blueprint file too broken to even read its id.
    pub(super) unreadable_blueprint: bool,
}

/// Every file of the bundle that parsed, with what did not.
#[derive(Default)]
pub(super) struct Parsed {
    pub(super) broken: Broken,
    pub(super) workflows: Vec<Doc<Workflow>>,
    pub(super) courses: Vec<(String, Doc<CourseFile>)>,
    /// (course directory, file stem, unit)
    pub(super) units: Vec<(String, String, Doc<Unit>)>,
    pub(super) blueprints: Vec<Doc<Blueprint>>,
    pub(super) prompts: BTreeMap<String, (String, PromptTemplate)>,
    pub(super) surveys: Vec<Doc<Questionnaire>>,
    /// Tables a workflow may name (`workflows/*.tsv`: the safety
    /// classifier's examples), by path.
    pub(super) tables: BTreeMap<String, String>,
}

enum FileKind {
    Workflow,
    Course { dir: String },
    Unit { dir: String, stem: String },
    Blueprint,
    Survey,
    Prompt { name: String },
    Table,
    Ignored,
    Unexpected,
}

fn classify(path: &str) -> FileKind {
    let parts: Vec<&str> = path.split('/').collect();
    let yaml_stem = |name: &str| {
        name.strip_suffix(".yaml")
            .or_else(|| name.strip_suffix(".yml"))
            .map(str::to_owned)
    };
    let is_yaml = parts.last().is_some_and(|n| yaml_stem(n).is_some());
    match parts.as_slice() {
        ["workflows", name] if is_yaml => {
            let _ = name;
            FileKind::Workflow
        }
        ["workflows", name] if name.ends_with(".tsv") => FileKind::Table,
        ["workflows", "courses", dir, "course.yaml" | "course.yml"] => FileKind::Course {
            dir: (*dir).to_owned(),
        },
        ["workflows", "courses", dir, "units", name] if is_yaml => FileKind::Unit {
            dir: (*dir).to_owned(),
            stem: yaml_stem(name).unwrap_or_default(),
        },
        ["workflows", "blueprints", _] if is_yaml => FileKind::Blueprint,
        ["workflows", "surveys", _] if is_yaml => FileKind::Survey,
        ["workflows", "tests", ..] => FileKind::Ignored,
        ["prompts", name] if name.ends_with(".txt") || name.ends_with(".md") => {
            let stem = name.rsplit_once('.').map_or(*name, |(s, _)| s);
            if stem.eq_ignore_ascii_case("readme") {
                FileKind::Ignored
            } else {
                FileKind::Prompt {
                    name: stem.to_owned(),
                }
            }
        }
        _ if is_yaml => FileKind::Unexpected,
        _ => FileKind::Ignored,
    }
}

static MARK_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r" at line \d+ column \d+").expect("static regex"));

/// Reads every file into its typed form, collecting what does not parse.
#[derive(Default)]
pub(super) struct Reader {
    pub(super) diags: Vec<Diagnostic>,
}

impl Reader {
    fn error(&mut self, path: &str, line: usize, column: usize, message: impl Into<String>) {
        self.diags
            .push(Diagnostic::new(path, line, column, message));
    }

    fn parse_yaml<T: DeserializeOwned>(&mut self, path: &str, text: &str) -> Option<Doc<T>> {
        match serde_yaml::from_str::<T>(text) {
            Ok(value) => Some(Doc {
                path: path.to_owned(),
                value,
                index: LazyYamlIndex::new(text),
            }),
            Err(err) => {
                let (line, column) = err.location().map_or((1, 1), |l| (l.line(), l.column()));
                let message = MARK_SUFFIX.replace_all(&err.to_string(), "").into_owned();
                self.error(path, line, column, message);
                None
            }
        }
    }

    pub(super) fn parse_all(&mut self, files: &ContentFiles) -> Parsed {
        let mut parsed = Parsed::default();
        for (path, text) in &files.files {
            match classify(path) {
                FileKind::Workflow => match self.parse_yaml(path, text) {
                    Some(doc) => parsed.workflows.push(doc),
                    None => {
                        parsed.broken.workflows.insert(file_stem(path).to_owned());
                    }
                },
                FileKind::Course { dir } => match self.parse_yaml(path, text) {
                    Some(doc) => parsed.courses.push((dir, doc)),
                    None => {
                        parsed.broken.course_dirs.insert(dir);
                    }
                },
                FileKind::Unit { dir, stem } => match self.parse_yaml(path, text) {
                    Some(doc) => parsed.units.push((dir, stem, doc)),
                    None => {
                        parsed.broken.units.insert((dir, stem));
                    }
                },
                FileKind::Blueprint => match self.parse_yaml(path, text) {
                    Some(doc) => parsed.blueprints.push(doc),
                    None => match loose_id(text) {
                        Some(id) => {
                            parsed.broken.blueprints.insert(id);
                        }
                        None => parsed.broken.unreadable_blueprint = true,
                    },
                },
                FileKind::Survey => {
                    if let Some(doc) = self.parse_yaml(path, text) {
                        parsed.surveys.push(doc);
                    }
                }
                FileKind::Prompt { name } => match PromptTemplate::parse(&name, text) {
                    Ok(template) => {
                        if let Some((other, _)) = parsed.prompts.get(&name) {
                            self.error(
                                path,
                                1,
                                1,
                                format!("prompt `{name}` is also defined by {other}"),
                            );
                        } else {
                            parsed.prompts.insert(name, (path.clone(), template));
                        }
                    }
                    Err(errors) => {
                        for e in errors {
                            self.error(path, e.line, e.column, e.message);
                        }
                    }
                },
                FileKind::Table => {
                    parsed.tables.insert(path.clone(), text.clone());
                }
                FileKind::Ignored => {}
                FileKind::Unexpected => self.error(
                    path,
                    1,
                    1,
                    "not part of a content bundle: workflows go in workflows/*.yaml, courses in \
                     workflows/courses/<courseId>/course.yaml with units in units/<unitId>.yaml, \
                     blueprints in workflows/blueprints/*.yaml, surveys in \
                     workflows/surveys/*.yaml",
                ),
            }
        }
        parsed
    }
}

/// The top-level `id` of a YAML document that failed typed parsing.
fn loose_id(text: &str) -> Option<String> {
    let value: serde_yaml::Value = serde_yaml::from_str(text).ok()?;
    value.get("id")?.as_str().map(str::to_owned)
}

/// A file's name without its directory and extension.
pub(super) fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}
