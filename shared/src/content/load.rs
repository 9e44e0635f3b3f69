//! Loading and validating the content bundle: every file parsed into its
//! typed form, then every cross-reference checked. All problems are collected
//! and reported as `path:line:column: message`; nothing here panics on bad input.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::de::DeserializeOwned;

use super::blueprint::Blueprint;
use super::blueprint_check::{self, Probe};
use super::course::{Course, CourseFile, ExamItem, Unit};
use super::diagnostic::{Diagnostic, Diagnostics};
use super::prompt::{PromptRole, PromptTemplate};
use super::source::ContentFiles;
use super::survey::Survey;
use super::tutor_text::{
    FollowUp, Moves, OfflinePhrases, PhraseSlot, PromptSignals, Reaction, phase_name,
};
use super::workflow::{BktParams, Transition, Workflow, unit_interval_fields};
use super::yaml_index::{LazyYamlIndex, Position, YamlPath};
use crate::engine::modes::study_plan::{self, StepDraft};
use crate::model::{AuthoredStep, Mode};

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
        let mut loader = Loader {
            probe,
            ..Loader::default()
        };
        let parsed = loader.parse_all(files);
        loader.validate(&parsed);
        if loader.diags.is_empty() {
            Ok(parsed.into_bundle(files.version.clone()))
        } else {
            let mut diags = loader.diags;
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
struct Doc<T> {
    path: String,
    value: T,
    index: LazyYamlIndex,
}

/// Files that exist but did not parse. References to them are not reported
/// again as missing: the parse error already says what to fix.
#[derive(Default)]
struct Broken {
    workflows: BTreeSet<String>,
    course_dirs: BTreeSet<String>,
    units: BTreeSet<(String, String)>,
    blueprints: BTreeSet<String>,
    /// A blueprint file too broken to even read its id.
    unreadable_blueprint: bool,
}

#[derive(Default)]
struct Parsed {
    broken: Broken,
    workflows: Vec<Doc<Workflow>>,
    courses: Vec<(String, Doc<CourseFile>)>,
    /// (course directory, file stem, unit)
    units: Vec<(String, String, Doc<Unit>)>,
    blueprints: Vec<Doc<Blueprint>>,
    prompts: BTreeMap<String, (String, PromptTemplate)>,
    surveys: Vec<Doc<Survey>>,
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

#[derive(Default)]
struct Loader {
    diags: Vec<Diagnostic>,
    probe: Probe,
}

impl Loader {
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

    fn validate(&mut self, parsed: &Parsed) {
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
                let missing: BTreeSet<&str> = blueprint_check::mistake_tags(&bp.value)
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
            for finding in blueprint_check::check(bp, self.probe) {
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

    fn check_workflow<'a>(&mut self, doc: &'a Doc<Workflow>, uses: &mut Vec<PromptUse<'a>>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let stem = file_stem(&doc.path);
        if w.id != stem {
            self.at(
                doc,
                &root.key("id"),
                format!("workflow id `{}` must match its file name `{stem}`", w.id),
            );
        }
        let mut use_prompt = |name: &str, role: PromptRole, at: YamlPath| {
            uses.push(PromptUse {
                name: name.to_owned(),
                role,
                file: &doc.path,
                index: &doc.index,
                at,
            });
        };
        // Categories.
        let cats = root.key("categories");
        if w.categories.is_empty() {
            self.at_key(doc, &cats, "a workflow needs at least one routing category");
        }
        let mut seen = BTreeSet::new();
        for (i, c) in w.categories.iter().enumerate() {
            let at = cats.index(i);
            if !is_slug(&c.id) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!(
                        "category id `{}` must be lowercase letters, digits and _",
                        c.id
                    ),
                );
            }
            if !seen.insert(c.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("category `{}` is defined twice", c.id),
                );
            }
            let d = &c.detect;
            // A mode may answer as a category it never detects.
            let answered_as = [
                &w.modes.problem_set.solved_category,
                &w.modes.problem_set.explained_category,
                &w.modes.problem_set.skipped_category,
            ]
            .contains(&&c.id);
            if d.grades.is_empty()
                && d.intents.is_empty()
                && d.phrases.is_empty()
                && !d.unrelated
                && !c.set_by_mode
                && !answered_as
            {
                self.at_key(
                    doc,
                    &at.key("detect"),
                    format!(
                        "category `{}` can never be detected: give it grades, intents, phrases or unrelated",
                        c.id
                    ),
                );
            }
            for (j, phrase) in d.phrases.iter().enumerate() {
                if phrase.trim().is_empty() {
                    self.at(
                        doc,
                        &at.key("detect").key("phrases").index(j),
                        "empty phrase",
                    );
                }
            }
            for (a, b) in [
                (Transition::StartScaffolding, Transition::EndScaffolding),
                (Transition::StartTeachBack, Transition::EndTeachBack),
                (Transition::CountOffTopic, Transition::ResetOffTopic),
                (Transition::ClearQuestion, Transition::RecordWrongAttempt),
                (Transition::Harder, Transition::Easier),
            ] {
                if c.transitions.contains(&a) && c.transitions.contains(&b) {
                    self.at_key(
                        doc,
                        &at.key("transitions"),
                        format!(
                            "category `{}` both {} and {}: they undo each other",
                            c.id,
                            transition_name(a),
                            transition_name(b)
                        ),
                    );
                }
            }
            use_prompt(&c.prompt, PromptRole::CategoryGuidance, at.key("prompt"));
        }
        if !w.categories.iter().any(|c| c.id == w.default_category) {
            self.at(
                doc,
                &root.key("default_category"),
                format!(
                    "default_category `{}` is not one of the categories ({})",
                    w.default_category,
                    w.categories
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        // Numbers.
        for (segments, value) in unit_interval_fields(w) {
            if !(0.0..=1.0).contains(&value) {
                let at = segments.iter().fold(root.clone(), |p, s| p.key(s));
                self.at(doc, &at, format!("{value} is outside [0, 1]"));
            }
        }
        let p = &w.policy;
        let policy = root.key("policy");
        if !(p.recency_window_hours > 0.0 && p.recency_window_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("recency_window_hours"),
                "must be a positive number of hours",
            );
        }
        if !(p.exam_lockout_hours >= 0.0 && p.exam_lockout_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("exam_lockout_hours"),
                "must be zero or more hours",
            );
        }
        if !(p.exam_card_hours > 0.0 && p.exam_card_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("exam_card_hours"),
                "must be a positive number of hours",
            );
        }
        if p.scoped.max_units < 2 {
            self.at(
                doc,
                &policy.key("scoped").key("max_units"),
                "must be at least 2 (the focus and the target are always in scope)",
            );
        }
        if p.candidates.top_mapped == 0 {
            self.at(
                doc,
                &policy.key("candidates").key("top_mapped"),
                "must be at least 1",
            );
        }
        if p.units_in_progress_cap == 0 {
            self.at(
                doc,
                &policy.key("units_in_progress_cap"),
                "must be at least 1 (the focus is always in progress)",
            );
        }
        if p.constraints.max_key_ideas == 0 {
            self.at(
                doc,
                &policy.key("constraints").key("max_key_ideas"),
                "must be at least 1 (a concept card needs an idea)",
            );
        }
        if p.drill_evidence.full_streak == 0 {
            self.at(
                doc,
                &policy.key("drill_evidence").key("full_streak"),
                "must be at least 1",
            );
        }
        let grading = &w.grading;
        let grading_at = root.key("grading");
        if !(grading.close_min_difference >= 0.0 && grading.close_min_difference.is_finite()) {
            self.at(
                doc,
                &grading_at.key("close_min_difference"),
                "must be zero or more",
            );
        }
        if !(1..=15).contains(&grading.rounding_min_significant) {
            self.at(
                doc,
                &grading_at.key("rounding_min_significant"),
                "must be between 1 and 15 significant figures",
            );
        }
        if grading.rounding_min_decimals > 12 {
            self.at(
                doc,
                &grading_at.key("rounding_min_decimals"),
                "must be at most 12 decimal places",
            );
        }
        if !(3..=32).contains(&grading.equivalence_points) {
            self.at(
                doc,
                &grading_at.key("equivalence_points"),
                "must be between 3 and 32 points",
            );
        }
        let pacing = &w.pacing;
        if pacing.consolidate_min_mastery > pacing.consolidate_max_mastery {
            self.at(
                doc,
                &root.key("pacing").key("consolidate_min_mastery"),
                "must not be above consolidate_max_mastery",
            );
        }
        if !(2..=50).contains(&pacing.trend_window) {
            self.at(
                doc,
                &root.key("pacing").key("trend_window"),
                "must be between 2 and 50 answers",
            );
        }
        let style = &w.style;
        if !(style.quiet_max_words >= 0.0 && style.quiet_max_words < style.expressive_min_words) {
            self.at(
                doc,
                &root.key("style").key("quiet_max_words"),
                "must be zero or more and below expressive_min_words",
            );
        }
        if style.disengagement_window < 2 {
            self.at(
                doc,
                &root.key("style").key("disengagement_window"),
                "must be at least 2 messages",
            );
        }
        let bkt = &w.mastery.bkt;
        if bkt.guess + bkt.slip >= 1.0 {
            self.at_key(
                doc,
                &root.key("mastery").key("bkt"),
                "guess + slip must be below 1, or a right answer would be evidence of not knowing",
            );
        }
        let exam = &w.modes.exam;
        let mix = &exam.difficulty_mix;
        if ((mix.easy + mix.medium + mix.hard) - 1.0).abs() > 0.01 {
            self.at_key(
                doc,
                &root.key("modes").key("exam").key("difficulty_mix"),
                format!(
                    "easy + medium + hard must add up to 1 (they add up to {})",
                    mix.easy + mix.medium + mix.hard
                ),
            );
        }
        if !(1..=50).contains(&exam.question_count) {
            self.at(
                doc,
                &root.key("modes").key("exam").key("question_count"),
                "must be between 1 and 50",
            );
        }
        if w.modes.teach_me.default_plan.is_empty() {
            self.at(
                doc,
                &root.key("modes").key("teach_me").key("default_plan"),
                "the default study plan needs at least one step",
            );
        }
        if !(500..=200_000).contains(&w.token_budget) {
            self.at(
                doc,
                &root.key("token_budget"),
                "must be between 500 and 200000 tokens",
            );
        }
        if w.history_messages > 50 {
            self.at(doc, &root.key("history_messages"), "must be at most 50");
        }
        let calls = [
            ("tutor", &w.llm.tutor),
            ("safety", &w.llm.safety),
            ("drill_grading", &w.llm.drill_grading),
            ("exam_evaluation", &w.llm.exam_evaluation),
            ("planner", &w.llm.planner),
            ("summary", &w.llm.summary),
        ];
        for (name, call) in calls {
            let at = root.key("llm").key(name);
            if !(0.0..=2.0).contains(&call.temperature) {
                self.at(
                    doc,
                    &at.key("temperature"),
                    "temperature must be between 0 and 2",
                );
            }
            if !(100..=120_000).contains(&call.timeout_ms) {
                self.at(
                    doc,
                    &at.key("timeout_ms"),
                    "timeout must be between 100 and 120000 ms",
                );
            }
            if call.max_tokens < 16 {
                self.at(doc, &at.key("max_tokens"), "max_tokens must be at least 16");
            }
        }
        // Patterns.
        for problem in super::safety_check::check(&w.safety, &root.key("safety")) {
            if problem.on_key {
                self.at_key(doc, &problem.at, problem.message);
            } else {
                self.at(doc, &problem.at, problem.message);
            }
        }
        for (i, pattern) in w.sanitize.patterns.iter().enumerate() {
            self.check_regex(doc, &root.key("sanitize").key("patterns").index(i), pattern);
        }
        // Prompts.
        let prompts = root.key("prompts");
        let names = &w.prompts;
        for (key, name, role) in [
            ("tutor_system", &names.tutor_system, PromptRole::TutorSystem),
            ("tutor_policy", &names.tutor_policy, PromptRole::TutorPolicy),
            (
                "tutor_context",
                &names.tutor_context,
                PromptRole::TutorContext,
            ),
            ("tutor_input", &names.tutor_input, PromptRole::TutorInput),
            (
                "drill_grading",
                &names.drill_grading,
                PromptRole::DrillGrading,
            ),
            (
                "exam_evaluation",
                &names.exam_evaluation,
                PromptRole::ExamEvaluation,
            ),
            ("planner", &names.planner, PromptRole::Planner),
            ("summary", &names.summary, PromptRole::Summary),
            ("safety", &names.safety, PromptRole::Safety),
        ] {
            use_prompt(name, role, prompts.key(key));
        }
        for mode in Mode::ALL {
            use_prompt(
                w.modes.welcome_prompt(mode),
                PromptRole::Welcome,
                root.key("modes").key(mode.as_str()).key("welcome_prompt"),
            );
        }
        let teach_me = root.key("modes").key("teach_me");
        use_prompt(
            &w.modes.teach_me.completion_prompt,
            PromptRole::LessonComplete,
            teach_me.key("completion_prompt"),
        );
        use_prompt(
            &w.modes.teach_me.review_prompt,
            PromptRole::LessonComplete,
            teach_me.key("review_prompt"),
        );
        let problem_set = root.key("modes").key("problem_set");
        let ps = &w.modes.problem_set;
        for (key, name) in [
            ("next_problem_prompt", &ps.next_problem_prompt),
            ("complete_prompt", &ps.complete_prompt),
            ("skip_offer_prompt", &ps.skip_offer_prompt),
            ("intervene_prompt", &ps.intervene_prompt),
        ] {
            use_prompt(name, PromptRole::ProblemSetText, problem_set.key(key));
        }
        for (i, category) in ps.skip_categories.iter().enumerate() {
            if w.category(category).is_none() {
                self.at(
                    doc,
                    &problem_set.key("skip_categories").index(i),
                    format!("`{category}` is not a routing category of this workflow"),
                );
            }
        }
        if ps.min_problems == 0 || ps.min_problems > ps.max_problems {
            self.at(
                doc,
                &problem_set.key("min_problems"),
                "min_problems must be at least 1 and at most max_problems".to_owned(),
            );
        }
        let clarify = root.key("modes").key("clarify_doubts");
        let clarify_doubts = &w.modes.clarify_doubts;
        for (node, key, category) in [
            (
                &teach_me,
                "closing_category",
                &w.modes.teach_me.closing_category,
            ),
            (
                &teach_me,
                "replan_category",
                &w.modes.teach_me.replan_category,
            ),
            (&problem_set, "solved_category", &ps.solved_category),
            (&problem_set, "explained_category", &ps.explained_category),
            (&problem_set, "skipped_category", &ps.skipped_category),
            (&clarify, "answer_category", &clarify_doubts.answer_category),
            (
                &clarify,
                "closing_category",
                &clarify_doubts.closing_category,
            ),
            (&clarify, "after_category", &clarify_doubts.after_category),
        ] {
            if w.category(category).is_none() {
                self.at(
                    doc,
                    &node.key(key),
                    format!("`{category}` is not a routing category of this workflow"),
                );
            }
        }
        self.check_tutor_text(doc);
    }

    /// The prompt signal texts and the offline tutor's phrasebook.
    fn check_tutor_text(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        for (section, absent, what) in [
            (
                "prompt_signals",
                w.prompt_signals == PromptSignals::default(),
                "the texts of the tutor prompt's pacing, style and mode signals",
            ),
            (
                "offline_tutor",
                w.offline_tutor == OfflinePhrases::default(),
                "the offline tutor's phrasebook",
            ),
        ] {
            if absent {
                self.error(
                    &doc.path,
                    1,
                    1,
                    format!(
                        "a workflow needs a `{section}` section ({what}); \
                         workflows/default.yaml has one to start from"
                    ),
                );
                return;
            }
        }
        let signals = YamlPath::root().key("prompt_signals");
        for ([group, name], text) in w.prompt_signals.texts() {
            if text.trim().is_empty() {
                self.at(doc, &signals.key(group).key(name), "text is empty");
            }
        }
        self.check_lesson_texts(doc, &signals.key("lesson"));
        let offline = YamlPath::root().key("offline_tutor");
        let phrases = &w.offline_tutor;
        for (id, reaction) in &phrases.reactions {
            let at = offline.key("reactions").key(id);
            if w.category(id).is_none() {
                self.at_key(
                    doc,
                    &at,
                    format!("`{id}` is not a routing category of this workflow"),
                );
            }
            self.check_reaction(doc, &at, reaction);
        }
        self.check_reaction(
            doc,
            &offline.key("default_reaction"),
            &phrases.default_reaction,
        );
        for slot in Moves::SLOTS {
            let at = offline.key("moves").key(slot.name());
            let list = phrases.moves.phrases(slot);
            if list.is_empty() {
                self.at_key(
                    doc,
                    &at,
                    format!("`{}` needs at least one phrase", slot.name()),
                );
            }
            self.check_phrases(doc, &at, list, slot);
        }
        for (language, translation) in &phrases.languages {
            let at = offline.key("languages").key(language.as_str());
            for (id, reaction) in &translation.reactions {
                let reaction_at = at.key("reactions").key(id);
                let Some(english) = phrases.reactions.get(id) else {
                    self.at_key(
                        doc,
                        &reaction_at,
                        format!("`{id}` has no English reaction to translate"),
                    );
                    continue;
                };
                // The translation keeps the English entry's `then`.
                let spoken = Reaction {
                    then: english.then,
                    say: if reaction.say.is_empty() {
                        english.say.clone()
                    } else {
                        reaction.say.clone()
                    },
                    by_phase: reaction.by_phase.clone(),
                };
                self.check_reaction(doc, &reaction_at, &spoken);
            }
            for (name, list) in &translation.moves {
                let move_at = at.key("moves").key(name);
                match Moves::SLOTS.into_iter().find(|s| s.name() == name) {
                    Some(slot) => {
                        if list.is_empty() {
                            self.at_key(doc, &move_at, "needs at least one phrase");
                        }
                        self.check_phrases(doc, &move_at, list, slot);
                    }
                    None => self.at_key(doc, &move_at, format!("`{name}` is not a move")),
                }
            }
        }
    }

    /// The lesson texts of the tutor prompt's mode block use only the
    /// placeholders filled in for them; an unknown one would reach the model
    /// as it is written. Each is reported where it stands in the file.
    fn check_lesson_texts(&mut self, doc: &Doc<Workflow>, at: &YamlPath) {
        for (name, text, allowed) in doc.value.prompt_signals.lesson.texts() {
            let text_at = at.key(name);
            let template = match PromptTemplate::parse(name, text) {
                Ok(t) => t,
                Err(errors) => {
                    for e in errors {
                        self.at(doc, &text_at, e.message);
                    }
                    continue;
                }
            };
            for p in template.placeholders() {
                if allowed.contains(&p.name.as_str()) {
                    continue;
                }
                let pos = doc
                    .index
                    .locate_within(&text_at, &format!("{{{{{}}}}}", p.name));
                let available = if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed
                        .iter()
                        .map(|a| format!("{{{{{a}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                self.error(
                    &doc.path,
                    pos.line,
                    pos.column,
                    format!(
                        "placeholder {{{{{}}}}} cannot be used in prompt_signals.lesson.{name}; available: {available}",
                        p.name
                    ),
                );
            }
        }
    }

    fn check_reaction(&mut self, doc: &Doc<Workflow>, at: &YamlPath, reaction: &Reaction) {
        if reaction.then == FollowUp::Retry && reaction.say.is_empty() {
            self.at_key(
                doc,
                &at.key("then"),
                "a `retry` reaction is the whole reply: give it phrases under `say`",
            );
        }
        self.check_phrases(doc, &at.key("say"), &reaction.say, PhraseSlot::Reaction);
        for (phase, list) in &reaction.by_phase {
            let phase_at = at.key("by_phase").key(phase_name(*phase));
            if list.is_empty() {
                self.at_key(doc, &phase_at, "needs at least one phrase");
            }
            self.check_phrases(doc, &phase_at, list, PhraseSlot::Reaction);
        }
    }

    /// Each phrase parses and uses only its slot's placeholders; a non-empty
    /// list has a variant that can always be said.
    fn check_phrases(
        &mut self,
        doc: &Doc<Workflow>,
        at: &YamlPath,
        list: &[String],
        slot: PhraseSlot,
    ) {
        let mut always = false;
        for (i, phrase) in list.iter().enumerate() {
            let phrase_at = at.index(i);
            if phrase.trim().is_empty() {
                self.at(doc, &phrase_at, "phrase is empty");
                continue;
            }
            let template = match PromptTemplate::parse(slot.name(), phrase) {
                Ok(t) => t,
                Err(errors) => {
                    for e in errors {
                        self.at(doc, &phrase_at, e.message);
                    }
                    continue;
                }
            };
            let mut usable = true;
            for p in template.placeholders() {
                if !slot.placeholders().contains(&p.name.as_str()) {
                    usable = false;
                    self.at(
                        doc,
                        &phrase_at,
                        format!(
                            "placeholder {{{{{}}}}} cannot be used in a {} phrase; available: {}",
                            p.name,
                            slot.name(),
                            slot.placeholders().join(", ")
                        ),
                    );
                }
            }
            always |= usable
                && template
                    .placeholders()
                    .all(|p| slot.always_available().contains(&p.name.as_str()));
        }
        if !list.is_empty() && !always {
            self.at_key(
                doc,
                at,
                format!(
                    "one phrase here must use only {}, which can always be filled",
                    slot.always_available()
                        .iter()
                        .map(|p| format!("{{{{{p}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
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

    fn check_prompts(
        &mut self,
        prompts: &BTreeMap<String, (String, PromptTemplate)>,
        uses: &[PromptUse<'_>],
    ) {
        for u in uses {
            let Some((path, template)) = prompts.get(&u.name) else {
                let known: Vec<&str> = prompts.keys().map(String::as_str).collect();
                let position = u.position();
                self.error(
                    u.file,
                    position.line,
                    position.column,
                    format!(
                        "prompt `{}` does not exist (expected prompts/{}.txt; known: {})",
                        u.name,
                        u.name,
                        known.join(", ")
                    ),
                );
                continue;
            };
            let allowed = u.role.placeholders();
            for p in template.placeholders() {
                if !allowed.contains(&p.name.as_str()) {
                    self.error(
                        path,
                        p.line,
                        p.column,
                        format!(
                            "placeholder {{{{{}}}}} does not exist for a {} prompt (used by {}:{}); \
                             available: {}",
                            p.name,
                            u.role.name(),
                            u.file,
                            u.position().line,
                            allowed.join(", ")
                        ),
                    );
                }
            }
            for required in u.role.required() {
                if !template.uses(required) {
                    self.error(
                        path,
                        1,
                        1,
                        format!(
                            "a {} prompt must use {{{{{required}}}}} (used by {}:{})",
                            u.role.name(),
                            u.file,
                            u.position().line
                        ),
                    );
                }
            }
        }
    }

    /// `blueprints` is `None` when some blueprint file could not be read at
    /// all, so references to blueprints cannot be checked.
    fn check_courses(
        &mut self,
        parsed: &Parsed,
        workflows: &BTreeSet<&str>,
        blueprints: Option<&BTreeSet<String>>,
    ) {
        let course_dirs: BTreeSet<&str> = parsed
            .courses
            .iter()
            .map(|(d, _)| d.as_str())
            .chain(parsed.broken.course_dirs.iter().map(String::as_str))
            .collect();
        for (dir, stem, unit) in &parsed.units {
            if !course_dirs.contains(dir.as_str()) {
                self.error(
                    &unit.path,
                    1,
                    1,
                    format!("unit file has no workflows/courses/{dir}/course.yaml"),
                );
            } else if unit.value.id != *stem {
                self.at(
                    unit,
                    &YamlPath::root().key("id"),
                    format!(
                        "unit id `{}` must match its file name `{stem}`",
                        unit.value.id
                    ),
                );
            }
        }
        for (dir, doc) in &parsed.courses {
            let units: Vec<&Doc<Unit>> = parsed
                .units
                .iter()
                .filter(|(d, stem, u)| d == dir && u.value.id == *stem)
                .map(|(_, _, u)| u)
                .collect();
            let broken_units: BTreeSet<&str> = parsed
                .broken
                .units
                .iter()
                .filter(|(d, _)| d == dir)
                .map(|(_, stem)| stem.as_str())
                .collect();
            let workflow_bkt = parsed
                .workflows
                .iter()
                .find(|w| w.value.id == doc.value.workflow)
                .map(|w| &w.value.mastery.bkt);
            self.check_course(dir, doc, &units, &broken_units, workflows, blueprints);
            for unit in &units {
                self.check_unit_bkt(unit, workflow_bkt);
            }
        }
    }

    fn check_course(
        &mut self,
        dir: &str,
        doc: &Doc<CourseFile>,
        units: &[&Doc<Unit>],
        broken_units: &BTreeSet<&str>,
        workflows: &BTreeSet<&str>,
        blueprints: Option<&BTreeSet<String>>,
    ) {
        let c = &doc.value;
        let root = YamlPath::root();
        if c.id != dir {
            self.at(
                doc,
                &root.key("id"),
                format!("course id `{}` must match its directory `{dir}`", c.id),
            );
        }
        if !workflows.contains(c.workflow.as_str()) {
            self.at(
                doc,
                &root.key("workflow"),
                format!(
                    "workflow `{}` does not exist (workflows/{}.yaml)",
                    c.workflow, c.workflow
                ),
            );
        }
        let nodes = root.key("units");
        let mut listed: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, node) in c.units.iter().enumerate() {
            if listed.insert(node.id.as_str(), i).is_some() {
                self.at(
                    doc,
                    &nodes.index(i).key("id"),
                    format!("unit `{}` is listed twice", node.id),
                );
            }
        }
        let files: BTreeMap<&str, &Doc<Unit>> =
            units.iter().map(|u| (u.value.id.as_str(), *u)).collect();
        for (i, node) in c.units.iter().enumerate() {
            let at = nodes.index(i);
            if !files.contains_key(node.id.as_str()) && !broken_units.contains(node.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!(
                        "unit `{}` has no file workflows/courses/{dir}/units/{}.yaml",
                        node.id, node.id
                    ),
                );
            }
            let mut seen = BTreeSet::new();
            for (j, req) in node.requires.iter().enumerate() {
                let req_at = at.key("requires").index(j);
                if req == &node.id {
                    self.at(doc, &req_at, format!("unit `{}` requires itself", node.id));
                } else if !listed.contains_key(req.as_str()) {
                    self.at(
                        doc,
                        &req_at,
                        format!(
                            "prerequisite `{req}` of unit `{}` is not a unit of this course",
                            node.id
                        ),
                    );
                } else if !seen.insert(req.as_str()) {
                    self.at(
                        doc,
                        &req_at,
                        format!("prerequisite `{req}` is listed twice"),
                    );
                }
            }
        }
        for unit in units {
            if !listed.contains_key(unit.value.id.as_str()) {
                self.error(
                    &unit.path,
                    1,
                    1,
                    format!(
                        "unit `{}` is not listed under units: in workflows/courses/{dir}/course.yaml",
                        unit.value.id
                    ),
                );
            }
        }
        match listed.get(c.entry_unit.as_str()) {
            None => self.at(
                doc,
                &root.key("entry_unit"),
                format!("entry unit `{}` is not a unit of this course", c.entry_unit),
            ),
            Some(&i) => {
                if !c.units[i].requires.is_empty() {
                    self.at(
                        doc,
                        &root.key("entry_unit"),
                        format!("entry unit `{}` must not require other units", c.entry_unit),
                    );
                }
                self.check_connected(doc, &listed);
            }
        }
        self.check_acyclic(doc, &listed);
        let mut question_ids: BTreeMap<&str, &str> = BTreeMap::new();
        for unit in units {
            self.check_unit(unit, blueprints, &mut question_ids);
            self.check_prerequisite_checks(unit, c);
        }
        let sets = root.key("problem_sets");
        let mut set_ids = BTreeSet::new();
        for (i, set) in c.problem_sets.iter().enumerate() {
            let at = sets.index(i);
            if !set_ids.insert(set.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("problem set `{}` is defined twice", set.id),
                );
            }
            if set.problems.is_empty() {
                self.at_key(
                    doc,
                    &at.key("problems"),
                    "a problem set needs at least one problem",
                );
            }
            let mut ids = BTreeSet::new();
            for (j, problem) in set.problems.iter().enumerate() {
                let p_at = at.key("problems").index(j);
                if !ids.insert(problem.id.as_str()) {
                    self.at(
                        doc,
                        &p_at.key("id"),
                        format!("problem `{}` appears twice", problem.id),
                    );
                }
                if !listed.contains_key(problem.unit.as_str()) {
                    self.at(
                        doc,
                        &p_at.key("unit"),
                        format!("unit `{}` is not a unit of this course", problem.unit),
                    );
                }
                if problem.answer.trim().is_empty() {
                    self.at(doc, &p_at.key("answer"), "answer is empty");
                } else {
                    self.check_authored_steps(doc, &p_at, &problem.steps, &problem.answer);
                }
            }
        }
    }

    /// Every unit must be reachable from the entry unit along prerequisite
    /// edges in either direction: a unit off on its own is never taught.
    fn check_connected(&mut self, doc: &Doc<CourseFile>, listed: &BTreeMap<&str, usize>) {
        let c = &doc.value;
        let mut neighbours: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for node in &c.units {
            for req in &node.requires {
                if listed.contains_key(req.as_str()) {
                    neighbours.entry(node.id.as_str()).or_default().push(req);
                    neighbours.entry(req.as_str()).or_default().push(&node.id);
                }
            }
        }
        let mut reached: HashSet<&str> = HashSet::from([c.entry_unit.as_str()]);
        let mut stack = vec![c.entry_unit.as_str()];
        while let Some(u) = stack.pop() {
            for &n in neighbours.get(u).map_or(&[][..], Vec::as_slice) {
                if reached.insert(n) {
                    stack.push(n);
                }
            }
        }
        for (i, node) in c.units.iter().enumerate() {
            if !reached.contains(node.id.as_str()) {
                self.at(
                    doc,
                    &YamlPath::root().key("units").index(i).key("id"),
                    format!(
                        "unit `{}` is not connected to the entry unit `{}`",
                        node.id, c.entry_unit
                    ),
                );
            }
        }
    }

    /// Reports each prerequisite cycle once, at the edge that closes it.
    fn check_acyclic(&mut self, doc: &Doc<CourseFile>, listed: &BTreeMap<&str, usize>) {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Active,
            Done,
        }
        let c = &doc.value;
        let mut marks = vec![Mark::New; c.units.len()];
        let mut reported: BTreeSet<Vec<&str>> = BTreeSet::new();
        for start in 0..c.units.len() {
            if marks[start] != Mark::New {
                continue;
            }
            // Iterative DFS: (unit index, next requirement to follow).
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            marks[start] = Mark::Active;
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                let reqs = &c.units[u].requires;
                if *next >= reqs.len() {
                    marks[u] = Mark::Done;
                    stack.pop();
                    continue;
                }
                let j = *next;
                *next += 1;
                let Some(&v) = listed.get(reqs[j].as_str()) else {
                    continue;
                };
                match marks[v] {
                    Mark::New => {
                        marks[v] = Mark::Active;
                        stack.push((v, 0));
                    }
                    Mark::Active if v != u => {
                        let from = stack.iter().position(|&(w, _)| w == v).unwrap_or(0);
                        let mut cycle: Vec<&str> = stack[from..]
                            .iter()
                            .map(|&(w, _)| c.units[w].id.as_str())
                            .collect();
                        let mut key = cycle.clone();
                        key.sort_unstable();
                        if reported.insert(key) {
                            cycle.push(c.units[v].id.as_str());
                            self.at(
                                doc,
                                &YamlPath::root()
                                    .key("units")
                                    .index(u)
                                    .key("requires")
                                    .index(j),
                                format!("prerequisite cycle: {}", cycle.join(" requires ")),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn check_unit<'a>(
        &mut self,
        doc: &'a Doc<Unit>,
        blueprints: Option<&BTreeSet<String>>,
        question_ids: &mut BTreeMap<&'a str, &'a str>,
    ) {
        let u = &doc.value;
        let root = YamlPath::root();
        for (key, value) in [("title", &u.title), ("anchor", &u.anchor)] {
            if value.trim().is_empty() {
                self.at(doc, &root.key(key), format!("{key} is empty"));
            }
        }
        if u.key_ideas.is_empty() {
            self.at_key(
                doc,
                &root.key("key_ideas"),
                "a unit needs at least one key idea",
            );
        }
        if u.chunks.is_empty() {
            self.at_key(
                doc,
                &root.key("chunks"),
                "a unit needs at least one content chunk",
            );
        }
        let mut chunk_ids = BTreeSet::new();
        for (i, chunk) in u.chunks.iter().enumerate() {
            let at = root.key("chunks").index(i);
            if !chunk_ids.insert(chunk.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("chunk `{}` appears twice", chunk.id),
                );
            }
            if chunk.text.trim().is_empty() {
                self.at(doc, &at.key("text"), "chunk text is empty");
            }
        }
        let mut ids = BTreeSet::new();
        for (i, m) in u.misconceptions.iter().enumerate() {
            if !ids.insert(m.id.as_str()) {
                self.at(
                    doc,
                    &root.key("misconceptions").index(i).key("id"),
                    format!("misconception `{}` appears twice", m.id),
                );
            }
        }
        let mut tags = BTreeSet::new();
        for (i, t) in u.mistake_tags.iter().enumerate() {
            let at = root.key("mistake_tags").index(i).key("id");
            if !is_slug(&t.id) {
                self.at(
                    doc,
                    &at,
                    format!(
                        "mistake tag `{}` must be lowercase letters, digits and _",
                        t.id
                    ),
                );
            } else if !tags.insert(t.id.as_str()) {
                self.at(doc, &at, format!("mistake tag `{}` appears twice", t.id));
            }
            let entry = root.key("mistake_tags").index(i);
            let explain = t.explain.trim();
            if explain.is_empty() {
                self.at(
                    doc,
                    &entry,
                    format!(
                        "mistake tag `{}` needs an `explain`: what the tutor tells a student \
                         who made this mistake",
                        t.id
                    ),
                );
            } else if explain.chars().count() > MAX_EXPLAIN_CHARS {
                self.at(
                    doc,
                    &entry.key("explain"),
                    format!(
                        "explain is {} characters; keep it to {MAX_EXPLAIN_CHARS}, a sentence \
                         or two a student reads in the chat",
                        explain.chars().count()
                    ),
                );
            }
        }
        for (i, bp) in u.blueprints.iter().enumerate() {
            if blueprints.is_some_and(|known| !known.contains(bp)) {
                self.at(
                    doc,
                    &root.key("blueprints").index(i),
                    format!("blueprint `{bp}` does not exist in workflows/blueprints/"),
                );
            }
        }
        if let Some(plan) = &u.study_plan {
            self.check_plan_texts(doc, &root.key("study_plan"), plan);
            let drafts: Vec<StepDraft> = plan.iter().map(StepDraft::from).collect();
            if let Err(problem) = study_plan::check_drafts(&drafts, u) {
                let at = root.key("study_plan");
                match problem.step {
                    Some(i) => self.at(doc, &at.index(i).key(problem.field), problem.message),
                    None => self.at_key(doc, &at, problem.message),
                }
            }
        }
        for (i, q) in u.exam.iter().enumerate() {
            self.check_exam_item(doc, &root.key("exam").index(i), q, question_ids);
        }
    }

    /// An authored plan's words go into the tutor prompt as they are: a
    /// `{{placeholder}}` in them is never filled, so it is an error where
    /// it stands.
    fn check_plan_texts(&mut self, doc: &Doc<Unit>, at: &YamlPath, plan: &[AuthoredStep]) {
        for (i, step) in plan.iter().enumerate() {
            let fields = [
                ("title", Some(&step.title)),
                ("concept", Some(&step.concept)),
                ("success_criteria", step.success_criteria.as_ref()),
            ];
            for (field, text) in fields {
                let Some(text) = text else { continue };
                let Some(start) = text.find("{{") else {
                    continue;
                };
                let end = text[start..]
                    .find("}}")
                    .map_or(text.len(), |e| start + e + 2);
                let written = &text[start..end];
                let field_at = at.index(i).key(field);
                let pos = doc.index.locate_within(&field_at, written);
                self.error(
                    &doc.path,
                    pos.line,
                    pos.column,
                    format!(
                        "`{written}` is never filled in a study plan's {field}: write the words themselves"
                    ),
                );
            }
        }
    }

    /// Each mistake tag a unit maps to a prerequisite check is one of its
    /// own tags, and the unit it points to is one the unit depends on.
    fn check_prerequisite_checks(&mut self, doc: &Doc<Unit>, course: &CourseFile) {
        let u = &doc.value;
        if u.prerequisite_checks.is_empty() {
            return;
        }
        let requires: BTreeMap<&str, &[String]> = course
            .units
            .iter()
            .map(|n| (n.id.as_str(), n.requires.as_slice()))
            .collect();
        let mut below: BTreeSet<&str> = BTreeSet::new();
        let mut stack: Vec<&str> = vec![u.id.as_str()];
        while let Some(next) = stack.pop() {
            for p in requires.get(next).copied().unwrap_or_default() {
                if below.insert(p.as_str()) {
                    stack.push(p.as_str());
                }
            }
        }
        // With a prerequisite missing from the graph (reported already),
        // what a unit depends on is not known. A check naming a unit this
        // course does not have is never raised, so it is not an error.
        let graph_whole = requires
            .values()
            .all(|r| r.iter().all(|p| requires.contains_key(p.as_str())));
        let root = YamlPath::root().key("prerequisite_checks");
        for (tag, prereq) in &u.prerequisite_checks {
            let at = root.key(tag);
            if !u.mistake_tags.iter().any(|t| t.id == *tag) {
                self.at_key(
                    doc,
                    &at,
                    format!("`{tag}` is not one of this unit's mistake_tags"),
                );
            } else if graph_whole
                && requires.contains_key(prereq.as_str())
                && !below.contains(prereq.as_str())
            {
                self.at(
                    doc,
                    &at,
                    format!(
                        "`{prereq}` is not a unit `{}` depends on, so it cannot be checked as its prerequisite",
                        u.id
                    ),
                );
            }
        }
    }

    /// A unit's BKT overrides: probabilities, and with the workflow's values
    /// for what is not overridden, guess + slip below 1. `workflow` is `None`
    /// when the course's workflow did not load (already reported).
    fn check_unit_bkt(&mut self, doc: &Doc<Unit>, workflow: Option<&BktParams>) {
        let Some(o) = &doc.value.bkt else {
            return;
        };
        let at = YamlPath::root().key("bkt");
        for (key, value) in [
            ("prior", o.prior),
            ("learn", o.learn),
            ("guess", o.guess),
            ("slip", o.slip),
            ("mastered_at", o.mastered_at),
        ] {
            if let Some(v) = value
                && !(0.0..=1.0).contains(&v)
            {
                self.at(doc, &at.key(key), format!("{v} is outside [0, 1]"));
            }
        }
        if let Some(workflow) = workflow {
            let resolved = workflow.overridden_by(Some(o));
            if (o.guess.is_some() || o.slip.is_some()) && resolved.guess + resolved.slip >= 1.0 {
                self.at_key(
                    doc,
                    &at,
                    format!(
                        "guess + slip must be below 1 (here {} + {}), or a right answer would be \
                         evidence of not knowing",
                        resolved.guess, resolved.slip
                    ),
                );
            }
        }
    }

    fn check_exam_item<'a>(
        &mut self,
        doc: &'a Doc<Unit>,
        at: &YamlPath,
        q: &'a ExamItem,
        question_ids: &mut BTreeMap<&'a str, &'a str>,
    ) {
        if let Some(other) = question_ids.insert(q.id.as_str(), doc.path.as_str()) {
            self.at(
                doc,
                &at.key("id"),
                format!("exam question `{}` is also defined in {other}", q.id),
            );
        }
        if q.stem.trim().is_empty() {
            self.at(doc, &at.key("stem"), "stem is empty");
        }
        if q.is_written() {
            self.check_written_item(doc, at, q);
        } else {
            self.check_choice_item(doc, at, q);
        }
        if q.memo.trim().is_empty() {
            self.at(
                doc,
                &at.key("memo"),
                "memo is empty: students who view it need the worked solution",
            );
        }
        if let Some(url) = &q.video_url
            && !url.starts_with("https://")
        {
            self.at(
                doc,
                &at.key("video_url"),
                "video_url must be an https:// address",
            );
        }
    }

    /// A written question is marked against its rubric (by the evaluation
    /// call, or offline by the rubric's terms): it needs a model answer and
    /// points that each name the words that show them.
    fn check_written_item(&mut self, doc: &Doc<Unit>, at: &YamlPath, q: &ExamItem) {
        if !q.options.is_empty() {
            self.at_key(
                doc,
                &at.key("options"),
                "a written question has no options (leave out `format: written` for a choice)",
            );
        }
        if q.answer.trim().is_empty() {
            self.at(
                doc,
                &at.key("answer"),
                "a written question needs a model answer",
            );
        }
        if q.rubric.is_empty() {
            self.at(
                doc,
                at,
                format!(
                    "written question `{}` has no rubric: list the points an answer must make, \
                     each with the terms that show it",
                    q.id
                ),
            );
        }
        for (i, p) in q.rubric.iter().enumerate() {
            let here = at.key("rubric").index(i);
            if p.point.trim().is_empty() {
                self.at(doc, &here.key("point"), "rubric point is empty");
            }
            if p.terms.iter().all(|t| t.trim().is_empty()) {
                self.at_key(
                    doc,
                    &here.key("terms"),
                    "a rubric point needs at least one term that shows it was made",
                );
            }
        }
        if !q.steps.is_empty() {
            self.at_key(
                doc,
                &at.key("steps"),
                "a written question has no hint steps: it is asked only in exams",
            );
        }
        // The model answer is what a full answer looks like: the offline
        // judge must find every point in it, or its terms are wrong.
        let own = crate::engine::exam_judge::mark(&crate::model::ExamEvaluationInput {
            question: q.stem.clone(),
            expected_answer: q.answer.clone(),
            rubric: q.rubric.clone(),
            student_answer: q.answer.clone(),
        });
        for i in 0..q.rubric.len() {
            if !q.answer.trim().is_empty() && !own.points_made.contains(&i) {
                self.at(
                    doc,
                    &at.key("rubric").index(i).key("terms"),
                    "the model answer does not make this point: none of its terms is in `answer`",
                );
            }
        }
    }

    fn check_choice_item(&mut self, doc: &Doc<Unit>, at: &YamlPath, q: &ExamItem) {
        if !q.rubric.is_empty() {
            self.at_key(
                doc,
                &at.key("rubric"),
                "only a written question has a rubric (add `format: written`)",
            );
        }
        if !(2..=26).contains(&q.options.len()) {
            self.at_key(
                doc,
                &at.key("options"),
                "an exam question needs 2 to 26 options",
            );
        }
        let mut seen = BTreeSet::new();
        for (i, option) in q.options.iter().enumerate() {
            let normalized = option.trim().to_lowercase();
            if normalized.is_empty() {
                self.at(doc, &at.key("options").index(i), "option is empty");
            } else if !seen.insert(normalized) {
                self.at(
                    doc,
                    &at.key("options").index(i),
                    format!("option `{option}` appears twice"),
                );
            }
        }
        if let Some(i) = q.option_index(&q.answer) {
            self.check_authored_steps(doc, at, &q.steps, &q.options[i]);
        } else {
            let ids: Vec<String> = (0..q.options.len()).map(ExamItem::option_id).collect();
            self.at(
                doc,
                &at.key("answer"),
                format!(
                    "answer `{}` is not an option id ({})",
                    q.answer,
                    ids.join(", ")
                ),
            );
        }
    }
}

impl Loader {
    /// Authored steps lead up to the answer and never state it: a hint may
    /// show any of them while the question is pending.
    fn check_authored_steps<T>(
        &mut self,
        doc: &Doc<T>,
        at: &YamlPath,
        steps: &[String],
        answer: &str,
    ) {
        if steps.len() > AUTHORED_STEPS_MAX {
            self.at_key(
                doc,
                &at.key("steps"),
                format!(
                    "{} steps: a worked solution has at most {AUTHORED_STEPS_MAX}",
                    steps.len()
                ),
            );
        }
        for (i, step) in steps.iter().enumerate() {
            let step_at = at.key("steps").index(i);
            if step.trim().is_empty() {
                self.at(doc, &step_at, "step is empty");
            } else if crate::text::mentions(step, answer) {
                self.at(
                    doc,
                    &step_at,
                    format!(
                        "the step states the answer `{}`: steps lead up to the answer, which \
                         is only shown once the question is over",
                        answer.trim()
                    ),
                );
            }
        }
    }
}

/// Most authored steps an exam question or problem has.
const AUTHORED_STEPS_MAX: usize = 5;

/// Longest mistake explanation.
const MAX_EXPLAIN_CHARS: usize = 400;

/// A workflow's reference to a prompt, located only if it must be reported.
struct PromptUse<'a> {
    name: String,
    role: PromptRole,
    file: &'a str,
    index: &'a LazyYamlIndex,
    at: YamlPath,
}

impl PromptUse<'_> {
    fn position(&self) -> Position {
        self.index.locate(&self.at)
    }
}

/// The top-level `id` of a YAML document that failed typed parsing.
fn loose_id(text: &str) -> Option<String> {
    let value: serde_yaml::Value = serde_yaml::from_str(text).ok()?;
    value.get("id")?.as_str().map(str::to_owned)
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn transition_name(t: Transition) -> &'static str {
    match t {
        Transition::ClearQuestion => "clear_question",
        Transition::RecordWrongAttempt => "record_wrong_attempt",
        Transition::StartScaffolding => "start_scaffolding",
        Transition::DeepenScaffolding => "deepen_scaffolding",
        Transition::EndScaffolding => "end_scaffolding",
        Transition::StartTeachBack => "start_teach_back",
        Transition::EndTeachBack => "end_teach_back",
        Transition::CountOffTopic => "count_off_topic",
        Transition::ResetOffTopic => "reset_off_topic",
        Transition::MoveOn => "move_on",
        Transition::Harder => "harder",
        Transition::Easier => "easier",
        Transition::RetractGuess => "retract_guess",
    }
}
