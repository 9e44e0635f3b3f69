//! The checks of content that try it in the engine: values drawn and items
//! generated from every blueprint scenario (whose worked steps and
//! representations must hold up), a written question's model answer read by
//! the offline judge, an authored study plan checked as a lesson checks a
//! drafted one. Content's checks ask these through [`EngineChecks`]; the
//! answers are here because the rules are the engine's. So are the bundle's
//! two depths of checking, [`Bundle::load`] and [`Bundle::validate`].

use crate::content::blueprint::{Blueprint, Parameter, STEP_RESULT};
use crate::content::check::blueprint::scenario_path;
use crate::content::course::{ExamItem, Unit};
use crate::content::yaml_index::YamlPath;
use crate::content::{Bundle, ContentFiles, Diagnostics, EngineChecks, Finding};
use crate::engine::exam::judge;
use crate::engine::modes::study_plan::{self, StepDraft};
use crate::engine::practice::generate::{self, Item, MIN_ACCEPTANCE};
use crate::model::{AuthoredStep, ExamEvaluationInput};
use crate::text::mentions;
use crate::text::template::{Format, format_rational};

impl Bundle {
    /// Parses and checks `files` as a running function does at cold start;
    /// on any problem returns all of them. Each blueprint scenario is tried
    /// once ([`Probe::Quick`]).
    pub fn load(files: &ContentFiles) -> Result<Bundle, Diagnostics> {
        Bundle::load_with(
            files,
            &Trials {
                probe: Probe::Quick,
            },
        )
    }

    /// [`Bundle::load`] as authoring tools, CI and `tutorflow publish`
    /// check: blueprints are also tried with many seeds and must find items
    /// quickly ([`Probe::Thorough`]; tens of milliseconds, so not for cold
    /// starts).
    pub fn validate(files: &ContentFiles) -> Result<Bundle, Diagnostics> {
        Bundle::load_with(
            files,
            &Trials {
                probe: Probe::Thorough,
            },
        )
    }
}

/// Seeds tried per scenario by the thorough check.
pub const PROBE_SEEDS: u64 = 16;

/// How many steps a worked solution has: enough to be a hint, few enough
/// to follow.
pub const STEPS: std::ops::RangeInclusive<usize> = 2..=5;

/// How hard validation tries generating items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Probe {
    /// One item per scenario, from seed 0: proves each scenario can produce
    /// items. Cheap enough for every cold start (about a millisecond for the
    /// shipped bundle).
    #[default]
    Quick,
    /// Items from [`PROBE_SEEDS`] seeds per scenario, and their draws must
    /// be accepted often enough ([`MIN_ACCEPTANCE`]) for generation to stay
    /// fast. For authoring tools, CI and publishing.
    Thorough,
}

/// The engine's answers to content's checks, trying blueprints as `probe`
/// says.
#[derive(Debug, Clone, Copy)]
pub struct Trials {
    pub probe: Probe,
}

impl EngineChecks for Trials {
    fn undrawable(&self, parameter: &Parameter) -> Option<String> {
        generate::parameter_problem(parameter)
    }

    fn generated_items(&self, blueprint: &Blueprint) -> Vec<Finding> {
        generate_all(blueprint, self.probe)
    }

    // The model answer is what a full answer looks like: the offline judge
    // must find every point in it, or the point's terms are wrong.
    fn points_made(&self, question: &ExamItem) -> Vec<usize> {
        judge::mark(&ExamEvaluationInput {
            question: question.stem.clone(),
            expected_answer: question.answer.clone(),
            rubric: question.rubric.clone(),
            student_answer: question.answer.clone(),
        })
        .points_made
    }

    fn study_plan(&self, plan: &[AuthoredStep], unit: &Unit, at: &YamlPath) -> Option<Finding> {
        let drafts: Vec<StepDraft> = plan.iter().map(StepDraft::from).collect();
        let problem = study_plan::check_drafts(&drafts, unit).err()?;
        Some(match problem.step {
            Some(i) => Finding::at(at.index(i).key(problem.field), problem.message),
            None => Finding::at_key(at.clone(), problem.message),
        })
    }
}

/// Generates items of every scenario of `bp`: each must succeed and, when
/// thorough, draws must be accepted often enough to stay fast. Stops at the
/// first item that fails.
fn generate_all(bp: &Blueprint, probe: Probe) -> Vec<Finding> {
    let mut findings = Vec::new();
    let seeds = match probe {
        Probe::Quick => 1,
        Probe::Thorough => PROBE_SEEDS,
    };
    for (i, s) in bp.difficulty.scenarios.iter().enumerate() {
        let mut attempts = 0u64;
        // The plain wording, then each theme's: a theme wording that
        // cannot be written for an item is reported as a step is.
        let tellings: Vec<Option<&str>> = std::iter::once(None)
            .chain(bp.themes_for(s).names().map(Some))
            .collect();
        for (seed, theme) in (0..seeds).flat_map(|seed| tellings.iter().map(move |t| (seed, *t))) {
            match generate::generate_in_scenario_themed(bp, i, seed, theme.as_slice()) {
                Ok(item) => {
                    if theme.is_none() {
                        attempts += u64::from(item.attempts);
                    }
                    if let Some(problem) = item_problems(&item).into_iter().next() {
                        let list = match problem.part {
                            Part::Themes if s.themes.is_some() => scenario_path(i).key("themes"),
                            Part::Themes => YamlPath::root().key("themes"),
                            Part::Steps if s.steps.is_some() => scenario_path(i).key("steps"),
                            Part::Steps => YamlPath::root().key("steps"),
                            Part::Representations if s.representations.is_some() => {
                                scenario_path(i).key("representations")
                            }
                            Part::Representations => YamlPath::root().key("representations"),
                        };
                        findings.push(Finding::at_key(
                            list,
                            format!(
                                "scenario `{}`, seed {seed} ({}): {}",
                                s.name,
                                drawn(&item),
                                problem.message
                            ),
                        ));
                        return findings;
                    }
                }
                Err(e) => {
                    findings.push(Finding::at(
                        scenario_path(i).key("name"),
                        format!("cannot generate an item (seed {seed}): {e}"),
                    ));
                    return findings;
                }
            }
        }
        let acceptance = seeds as f64 / attempts.max(1) as f64;
        if probe == Probe::Thorough && acceptance < MIN_ACCEPTANCE {
            findings.push(Finding::at(
                scenario_path(i).key("name"),
                format!(
                    "scenario `{}` accepts only {:.1}% of random draws (at least {:.0}% \
                     needed): narrow its parameter ranges so items are found quickly",
                    s.name,
                    acceptance * 100.0,
                    MIN_ACCEPTANCE * 100.0
                ),
            ));
        }
    }
    findings
}

/// Which explanation of an item a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Steps,
    Representations,
    Themes,
}

/// A problem with how one generated item is explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemProblem {
    pub part: Part,
    pub message: String,
}

/// What is wrong with how `item` is explained: steps or representations
/// that could not be written, too few or too many steps, a last step that
/// does not reach the answer, and an answer that shows where it must not
/// (in a step before it is left open, or in a representation).
pub fn item_problems(item: &Item) -> Vec<ItemProblem> {
    let problem = |part, message: String| ItemProblem { part, message };
    let mut out: Vec<ItemProblem> = item
        .authoring_problems
        .iter()
        .map(|p| {
            let part = if p.starts_with("representation") {
                Part::Representations
            } else if p.starts_with("theme") {
                Part::Themes
            } else {
                Part::Steps
            };
            problem(part, p.clone())
        })
        .collect();
    if !out.is_empty() {
        return out;
    }
    let steps = &item.steps;
    if !STEPS.contains(&steps.len()) {
        out.push(problem(
            Part::Steps,
            format!(
                "{} steps apply to this item; a worked solution has {} to {}",
                steps.len(),
                STEPS.start(),
                STEPS.end()
            ),
        ));
    }
    if let Some(last) = steps.last()
        && !last.gives_answer
    {
        out.push(problem(
            Part::Steps,
            format!(
                "the last step (\"{}\") works out {}, but the answer is {}",
                last.text, last.value, item.answer.text
            ),
        ));
    }
    // Only a step that works out the answer is checked: other working may
    // show the answer's number by chance (6 + 6 = 12 in 4 × (6 + 6) - 6²),
    // and so may a step after such a coincidence (72 - 36 = 36).
    let coincidence = steps.iter().filter(|s| s.gives_answer).count() > 1;
    let answer = if coincidence {
        Vec::new()
    } else {
        answer_spellings(item)
    };
    for (k, step) in steps.iter().enumerate().filter(|(_, s)| s.gives_answer) {
        // Nor does a lone digit tell anything (the 9 in 18 - 9 = 9).
        if let Some(a) = answer
            .iter()
            .filter(|a| distinctive(a))
            .find(|a| mentions(step.answer_free(), a))
        {
            out.push(problem(
                Part::Steps,
                format!(
                    "step {} gives away the answer {a} while the item is pending: \"{}\" \
                     (only its {{{STEP_RESULT}}} is left open)",
                    k + 1,
                    step.answer_free()
                ),
            ));
        }
    }
    if item.representations.is_empty() {
        out.push(problem(
            Part::Representations,
            "no representation applies to this item".into(),
        ));
    }
    for r in &item.representations {
        if let Some(a) = answer
            .iter()
            .filter(|a| distinctive(a))
            .find(|a| mentions(&r.text, a))
        {
            out.push(problem(
                Part::Representations,
                format!(
                    "the `{}` representation gives away the answer {a}: \"{}\"; it should \
                     pose the question, not work it out",
                    r.kind, r.text
                ),
            ));
        }
    }
    out
}

/// How the answer could be written in a sentence (as an option shows it,
/// and as a bare value), leaving out what the question itself shows: in
/// 86 - 43 the answer 43 is no secret.
fn answer_spellings(item: &Item) -> Vec<&str> {
    let mut out = vec![item.answer.text.as_str()];
    if item.answer.value != item.answer.text {
        out.push(&item.answer.value);
    }
    out.retain(|a| !mentions(&item.stem, a) && !mentions(&item.question_latex, a));
    out
}

/// Whether an answer is more than a lone digit (`-7`), so that finding it
/// in a sentence is no coincidence.
fn distinctive(answer: &str) -> bool {
    answer.trim().trim_start_matches('-').chars().count() > 1
}

/// The drawn parameters, for messages: `a = 72, b = 38`.
fn drawn(item: &Item) -> String {
    item.parameters
        .iter()
        .map(|(name, value)| {
            let shown =
                format_rational(*value, Format::Plain).unwrap_or_else(|_| value.to_string());
            format!("{name} = {shown}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}
