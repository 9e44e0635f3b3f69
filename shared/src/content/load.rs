//! Loading the content bundle: every file read into its typed form
//! (`read.rs`), then checked as a whole ([`super::check`]). All
//! problems are collected and reported as `path:line:column: message`;
//! nothing here panics on bad input.

use std::collections::BTreeMap;

use super::blueprint::Blueprint;
use super::check::{self, EngineChecks};
use super::course::{Course, Unit};
use super::diagnostic::Diagnostics;
use super::prompt::PromptTemplate;
use super::read::{Parsed, Reader};
use super::safety_examples;
use super::source::ContentFiles;
use super::survey::Questionnaire;
use super::workflow::Workflow;

/// A validated content bundle. Made by [`Bundle::load`] (what a running
/// function does at cold start) or [`Bundle::validate`] (the thorough
/// check of `tutorflow validate` and `tutorflow publish`), which live in
/// the engine's `content_check` because part of checking content is trying
/// it in the engine; both come here through [`Bundle::load_with`].
#[derive(Debug, Clone)]
pub struct Bundle {
    pub version: String,
    pub workflows: BTreeMap<String, Workflow>,
    pub courses: BTreeMap<String, Course>,
    pub blueprints: BTreeMap<String, Blueprint>,
    pub prompts: BTreeMap<String, PromptTemplate>,
    pub surveys: BTreeMap<String, Questionnaire>,
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
    /// Parses and checks `files`, asking `engine` what only the engine can
    /// tell; on any problem returns all of them.
    pub fn load_with(
        files: &ContentFiles,
        engine: &dyn EngineChecks,
    ) -> Result<Bundle, Diagnostics> {
        let mut reader = Reader::default();
        let parsed = reader.parse_all(files);
        let mut diags = reader.diags;
        diags.extend(check::check(&parsed, engine));
        if diags.is_empty() {
            Ok(assemble(parsed, files.version.clone()))
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

/// `workflow`'s safety classifier given the examples its file holds
/// (checked to exist and to read cleanly).
fn with_safety_examples(workflow: &mut Workflow, tables: &BTreeMap<String, String>) {
    let Some(classifier) = &mut workflow.safety.classifier else {
        return;
    };
    let Some(text) = tables.get(&safety_examples::bundle_path(&classifier.examples)) else {
        return;
    };
    classifier.labelled = safety_examples::parse(text)
        .0
        .into_iter()
        .map(|line| line.example)
        .collect();
}

/// The bundle `parsed` makes once every check has passed.
fn assemble(parsed: Parsed, version: String) -> Bundle {
    let mut units_by_course: BTreeMap<String, BTreeMap<String, Unit>> = BTreeMap::new();
    for (dir, _, doc) in parsed.units {
        units_by_course
            .entry(dir)
            .or_default()
            .insert(doc.value.id.clone(), doc.value);
    }
    let courses = parsed
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
        workflows: parsed
            .workflows
            .into_iter()
            .map(|d| {
                let mut workflow = d.value;
                with_safety_examples(&mut workflow, &parsed.tables);
                (workflow.id.clone(), workflow)
            })
            .collect(),
        courses,
        blueprints: parsed
            .blueprints
            .into_iter()
            .map(|d| (d.value.id.clone(), d.value))
            .collect(),
        prompts: parsed
            .prompts
            .into_iter()
            .map(|(name, (_, t))| (name, t))
            .collect(),
        surveys: parsed
            .surveys
            .into_iter()
            .map(|d| (d.value.id.clone(), d.value))
            .collect(),
    }
}
