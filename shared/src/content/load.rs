//! Loading the content bundle: every file parsed into its typed form, then
//! checked as a whole ([`super::check`]). All problems are collected and
//! reported as `path:line:column: message`; nothing here panics on bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::de::DeserializeOwned;

use super::blueprint::Blueprint;
use super::check::{self, blueprint::Probe};
use super::course::{Course, CourseFile, Unit};
use super::diagnostic::{Diagnostic, Diagnostics};
use super::prompt::PromptTemplate;
use super::source::ContentFiles;
use super::survey::Survey;
use super::workflow::Workflow;
use super::yaml_index::LazyYamlIndex;

/// A validated content bundle.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub version: String,
    pub workflows: BTreeMap<String, Workflow>,
    pub courses: BTreeMap<String, Course>,
    pub blueprints: BTreeMap<String, Blueprint>,
    pub prompts: BTreeMap<String, PromptTemplate>,
    pub surveys: BTreeMap<String, Survey>,
}

/// Counts for the one-line summary of `tutorflow validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleSummary {
    pub workflows: usize,
    pub courses: usize,
    pub units: usize,
    pub exam_items: usize,
    pub blueprints: usize,
    pub prompts: usize,
}

impl Bundle {
    /// Parses and validates `files`; on any problem returns all of them.
    /// Each blueprint scenario is tried once ([`Probe::Quick`]).
    pub fn load(files: &ContentFiles) -> Result<Bundle, Diagnostics> {
        Bundle::load_probing(files, Probe::Quick)
    }

    /// [`Bundle::load`] as authoring tools and CI validate: blueprints are
    /// also tried with many seeds and must find items quickly
    /// ([`Probe::Thorough`]; tens of milliseconds, so not for cold starts).
    pub fn validate(files: &ContentFiles) -> Result<Bundle, Diagnostics> {
        Bundle::load_probing(files, Probe::Thorough)
    }

    fn load_probing(files: &ContentFiles, probe: Probe) -> Result<Bundle, Diagnostics> {
        let mut reader = Reader::default();
        let parsed = reader.parse_all(files);
        let mut diags = reader.diags;
        diags.extend(check::check(&parsed, probe));
        if diags.is_empty() {
            Ok(parsed.into_bundle(files.version.clone()))
        } else {
            diags.sort();
            diags.dedup();
            Err(Diagnostics(diags))
        }
    }

    pub fn summary(&self) -> BundleSummary {
        BundleSummary {
            workflows: self.workflows.len(),
            courses: self.courses.len(),
            units: self.courses.values().map(|c| c.units.len()).sum(),
            exam_items: self
                .courses
                .values()
                .flat_map(|c| c.units.values())
                .map(|u| u.exam.len())
                .sum(),
            blueprints: self.blueprints.len(),
            prompts: self.prompts.len(),
        }
    }

    pub fn course(&self, id: &str) -> Option<&Course> {
        self.courses.get(id)
    }

    /// The workflow a course's threads follow (validated to exist).
    pub fn workflow_for(&self, course: &Course) -> Option<&Workflow> {
        self.workflows.get(&course.workflow)
    }
}

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
    pub(super) surveys: Vec<Doc<Survey>>,
}

impl Parsed {
    fn into_bundle(self, version: String) -> Bundle {
        let mut units_by_course: BTreeMap<String, BTreeMap<String, Unit>> = BTreeMap::new();
        for (dir, _, doc) in self.units {
            units_by_course
                .entry(dir)
                .or_default()
                .insert(doc.value.id.clone(), doc.value);
        }
        let courses = self
            .courses
            .into_iter()
            .map(|(dir, doc)| {
                let c = doc.value;
                let course = Course {
                    order: c.units.iter().map(|u| u.id.clone()).collect(),
                    requires: c
                        .units
                        .iter()
                        .map(|u| (u.id.clone(), u.requires.clone()))
                        .collect(),
                    units: units_by_course.remove(&dir).unwrap_or_default(),
                    id: c.id,
                    title: c.title,
                    description: c.description,
                    audience: c.audience,
                    workflow: c.workflow,
                    entry_unit: c.entry_unit,
                    problem_sets: c.problem_sets,
                };
                (course.id.clone(), course)
            })
            .collect();
        Bundle {
            version,
            workflows: self
                .workflows
                .into_iter()
                .map(|d| (d.value.id.clone(), d.value))
                .collect(),
            courses,
            blueprints: self
                .blueprints
                .into_iter()
                .map(|d| (d.value.id.clone(), d.value))
                .collect(),
            prompts: self
                .prompts
                .into_iter()
                .map(|(name, (_, t))| (name, t))
                .collect(),
            surveys: self
                .surveys
                .into_iter()
                .map(|d| (d.value.id.clone(), d.value))
                .collect(),
        }
    }
}

enum FileKind {
    Workflow,
    Course { dir: String },
    Unit { dir: String, stem: String },
    Blueprint,
    Survey,
    Prompt { name: String },
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
struct Reader {
    diags: Vec<Diagnostic>,
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

    fn parse_all(&mut self, files: &ContentFiles) -> Parsed {
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
