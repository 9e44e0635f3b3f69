//! Deterministic item generation from a skill blueprint.
//!
//! `generate(blueprint, target difficulty, seed)` is a pure function: the
//! same inputs give the same item, byte for byte, which is what lets a drill
//! token carry only a seed. It picks the scenario whose weight is closest to
//! the target, then draws parameters from the seeded stream until they fit
//! the scenario and the constraints (at most [`MAX_ATTEMPTS`] draws), works
//! out the answer from its formula, computes the distractors from their
//! mistakes, and shuffles the options. It also works out everything a hint
//! may need: every wrong answer the blueprint's mistakes give (shown or
//! not), the worked steps and the other representations of the question.
//!
//! The order in which the stream is consumed is part of the drill-token
//! contract: scenario tie-break, stem, parameter draws, distractor choices,
//! shuffle. Changing it means bumping the token version.
//!
//! A student's example themes (sports, cooking, ...) can retell the
//! question: when the scenario offers one of them, a stream of its own,
//! seeded from the same seed, picks the theme and its wording. The item's
//! stream is untouched, so the numbers, the options and the answer are the
//! same in every theme, and the plain wording is still drawn (and checked)
//! as it always was.
//!
//! This file holds the item, the entry points and the scenario choice;
//! `plan` makes one scenario's draws, `domain` the values a parameter can
//! take, and `written` how an answer or a wrong answer is written.

mod domain;
mod plan;
mod written;

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::worked::{ItemRepresentation, WorkedStep};
use crate::content::blueprint::{
    AnswerShape, Blueprint, EvaluationMethod, Formula, ItemFormat, Scenario,
};
use crate::engine::rng::SplitMix64;
use crate::math::{Number, Rational, Value, evaluate};
use crate::text::template::{Format, Template, format_rational};

pub use self::domain::parameter_problem;
use self::plan::{Plan, Rejection};
use self::written::Written;

/// Most parameter draws for one item. Validation requires every scenario to
/// accept at least [`MIN_ACCEPTANCE`] of draws, so running out is
/// practically impossible for a valid blueprint (0.99^4096 ≈ 1e-18).
pub const MAX_ATTEMPTS: u32 = 4096;

/// Smallest share of random draws a scenario must accept.
pub const MIN_ACCEPTANCE: f64 = 0.01;

/// One generated item, with everything needed to show and grade it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub blueprint_id: String,
    pub seed: u64,
    pub target_difficulty: f64,
    pub scenario: String,
    /// Computed from the scenario weight and the item's features, in [0, 1].
    pub difficulty: f64,
    /// The question in words.
    pub stem: String,
    /// The example theme the stem is told in; `None`: the plain wording.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// The question as LaTeX.
    pub question_latex: String,
    /// The answer and the distractors, shuffled.
    pub options: Vec<String>,
    pub answer_index: usize,
    pub answer: ItemAnswer,
    /// The wrong options, in the order they appear in `options`.
    pub distractors: Vec<ItemDistractor>,
    /// Every wrong answer the blueprint's mistakes give for this item,
    /// shown as an option or not (a built-in slip in both directions).
    pub mistakes: Vec<ItemMistake>,
    /// The worked solution. Steps that give the answer must only be shown
    /// open ([`WorkedStep::answer_free`]) while the item is pending.
    pub steps: Vec<WorkedStep>,
    /// The question shown other ways (number line, area model, ...).
    pub representations: Vec<ItemRepresentation>,
    /// The drawn parameters (not the derived values), exact.
    #[serde(serialize_with = "exact_map")]
    pub parameters: Vec<(String, Rational)>,
    pub format: ItemFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_limit_seconds: Option<u32>,
    /// Parameter draws it took (for validation and benchmarks).
    #[serde(skip)]
    pub attempts: u32,
    /// Steps or representations that could not be written for this item
    /// (validation reports them; the item itself is unaffected).
    #[serde(skip)]
    pub authoring_problems: Vec<String>,
}

impl Item {
    /// The distractor a chosen option (or a typed answer written exactly
    /// like one) is, ignoring case and spacing: its mistake tag is the
    /// drill's confusion tag. Value-level matching of typed answers is the
    /// grader's job.
    pub fn distractor_for(&self, answer: &str) -> Option<&ItemDistractor> {
        let wanted = normalized(answer);
        self.distractors
            .iter()
            .find(|d| normalized(&d.text) == wanted)
    }

    /// The value of a drawn parameter.
    pub fn parameter(&self, name: &str) -> Option<Rational> {
        self.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<String>().to_lowercase()
}

/// What a grader needs to check an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemAnswer {
    /// As written among the options: `x = 4`, `12 cm`, `26 r 2`.
    pub text: String,
    /// The bare value, without the variable or unit: `4`, `12`, `26 r 2`.
    pub value: String,
    pub kind: AnswerShape,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    pub method: EvaluationMethod,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    pub simplest_form: bool,
}

/// A wrong option and the mistake that produces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemDistractor {
    pub text: String,
    pub strategy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
}

/// A wrong answer one of the blueprint's mistakes gives for this item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemMistake {
    /// As an option would show it: `x = 6`, `12 kg`, `25 r 9`.
    pub text: String,
    /// Without the variable or unit: `6`, `12`, `25 r 9`.
    pub value: String,
    pub strategy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
    /// The blueprint's description of the mistake.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// A built-in slip of the answer itself (one out, ten out), not a
    /// mistake of method.
    pub slip: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerateError {
    #[error("the target difficulty must be a number from 0 to 1, not {0}")]
    InvalidTarget(f64),
    #[error("blueprint `{blueprint}` cannot generate items: {problem}")]
    InvalidBlueprint { blueprint: String, problem: String },
    #[error(
        "blueprint `{blueprint}`, scenario `{scenario}`: no item found in {attempts} random \
         draws; most were rejected because {reason}"
    )]
    Unsatisfiable {
        blueprint: String,
        scenario: String,
        attempts: u32,
        reason: String,
    },
}

/// Generates the item for `seed` from the scenario closest to `target_difficulty`.
pub fn generate(
    blueprint: &Blueprint,
    target_difficulty: f64,
    seed: u64,
) -> Result<Item, GenerateError> {
    generate_themed(blueprint, target_difficulty, seed, &[])
}

/// [`generate`], told in one of `themes` (a student's example themes, or
/// the one theme a drill token recorded) when the item's scenario offers
/// any of them; otherwise in the plain wording. Only the stem differs.
pub fn generate_themed(
    blueprint: &Blueprint,
    target_difficulty: f64,
    seed: u64,
    themes: &[&str],
) -> Result<Item, GenerateError> {
    if !(0.0..=1.0).contains(&target_difficulty) {
        return Err(GenerateError::InvalidTarget(target_difficulty));
    }
    let mut rng = SplitMix64::new(seed);
    let scenario = choose_scenario(blueprint, target_difficulty, &mut rng)?;
    generate_with(blueprint, scenario, target_difficulty, seed, themes, rng)
}

/// Generates an item of the scenario at `index` (validation and tests use
/// it to reach every scenario); its target difficulty is the scenario weight.
pub fn generate_in_scenario(
    blueprint: &Blueprint,
    index: usize,
    seed: u64,
) -> Result<Item, GenerateError> {
    generate_in_scenario_themed(blueprint, index, seed, &[])
}

/// [`generate_in_scenario`] told in one of `themes`, as [`generate_themed`].
pub fn generate_in_scenario_themed(
    blueprint: &Blueprint,
    index: usize,
    seed: u64,
    themes: &[&str],
) -> Result<Item, GenerateError> {
    let scenario = blueprint.difficulty.scenarios.get(index).ok_or_else(|| {
        invalid(
            blueprint,
            format!("it has no scenario number {}", index + 1),
        )
    })?;
    let mut rng = SplitMix64::new(seed);
    rng.next_u64(); // the draw `generate` spends on the scenario
    generate_with(blueprint, index, scenario.weight, seed, themes, rng)
}

/// Seeds the stream that picks a theme, apart from the item's own stream
/// (any fixed odd constant would do; this one spells "themes").
const THEME_STREAM: u64 = 0x0074_6865_6d65_7301;

/// The theme and wording an item of `scenario` is told in: among the
/// `wanted` themes the scenario offers, in the order wanted, one picked by
/// the seed, then one of its wordings. `None` when none is offered.
pub fn choose_theme<'a>(
    blueprint: &'a Blueprint,
    scenario: &'a Scenario,
    wanted: &[&str],
    seed: u64,
) -> Option<(&'a str, &'a Template)> {
    let offered = blueprint.themes_for(scenario);
    let mut candidates: Vec<(&str, &[Template])> = Vec::new();
    for name in wanted {
        if let Some((name, stems)) = offered.0.iter().find(|(n, _)| n == name)
            && !stems.is_empty()
            && !candidates.iter().any(|(c, _)| c == name)
        {
            candidates.push((name.as_str(), stems.as_slice()));
        }
    }
    if candidates.is_empty() {
        return None;
    }
    let mut rng = SplitMix64::new(seed ^ THEME_STREAM);
    let (name, stems) = candidates[rng.index(candidates.len())];
    Some((name, &stems[rng.index(stems.len())]))
}

fn invalid(blueprint: &Blueprint, problem: impl Into<String>) -> GenerateError {
    GenerateError::InvalidBlueprint {
        blueprint: blueprint.id.clone(),
        problem: problem.into(),
    }
}

/// The scenario whose weight is nearest the target; equally near ones are
/// picked between by the seed.
fn choose_scenario(
    blueprint: &Blueprint,
    target: f64,
    rng: &mut SplitMix64,
) -> Result<usize, GenerateError> {
    let scenarios = &blueprint.difficulty.scenarios;
    let distance = |s: &Scenario| (s.weight - target).abs();
    let best = scenarios
        .iter()
        .map(distance)
        .filter(|d| d.is_finite())
        .fold(f64::INFINITY, f64::min);
    let nearest: Vec<usize> = (0..scenarios.len())
        .filter(|&i| distance(&scenarios[i]) <= best + 1e-9)
        .collect();
    let pick = rng.index(nearest.len());
    nearest
        .get(pick)
        .copied()
        .ok_or_else(|| invalid(blueprint, "it has no difficulty scenarios"))
}

/// The values an item's formulas can use: parameters, then derived values.
type Env<'a> = Vec<(&'a str, Number)>;

fn lookup<'e>(env: &'e Env<'_>) -> impl Fn(&str) -> Option<Number> + 'e {
    move |name| env.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn number(formula: &Formula, env: &Env<'_>) -> Result<Number, String> {
    let expr = formula
        .expr()
        .map_err(|e| format!("`{}` does not parse: {e}", formula.text()))?;
    match evaluate(expr, &lookup(env)) {
        Ok(Value::Num(n)) => Ok(n),
        Ok(Value::Bool(_)) => Err(format!("`{}` is a condition, not a number", formula.text())),
        Err(e) => Err(format!("`{}`: {e}", formula.text())),
    }
}

fn condition(formula: &Formula, env: &Env<'_>) -> Result<bool, String> {
    let expr = formula
        .expr()
        .map_err(|e| format!("`{}` does not parse: {e}", formula.text()))?;
    match evaluate(expr, &lookup(env)) {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(Value::Num(_)) => Err(format!("`{}` is a number, not a condition", formula.text())),
        Err(e) => Err(format!("`{}`: {e}", formula.text())),
    }
}

/// A successful draw, before the options are shuffled.
struct Draft {
    mistakes: Vec<ItemMistake>,
    steps: Vec<WorkedStep>,
    representations: Vec<ItemRepresentation>,
    authoring_problems: Vec<String>,
    parameters: Vec<(String, Rational)>,
    difficulty: f64,
    stem: String,
    theme: Option<String>,
    question_latex: String,
    answer: Written,
    distractors: Vec<ItemDistractor>,
}

fn generate_with(
    blueprint: &Blueprint,
    index: usize,
    target: f64,
    seed: u64,
    themes: &[&str],
    mut rng: SplitMix64,
) -> Result<Item, GenerateError> {
    let plan =
        Plan::new(blueprint, index, themes, seed, &mut rng).map_err(|p| invalid(blueprint, p))?;
    let mut rejections: BTreeMap<Rejection, u32> = BTreeMap::new();
    for attempt in 1..=MAX_ATTEMPTS {
        match plan.attempt(&mut rng) {
            Ok(draft) => return Ok(finish(&plan, draft, target, seed, attempt, &mut rng)),
            Err(r) => *rejections.entry(r).or_default() += 1,
        }
    }
    let reason = rejections
        .iter()
        .max_by_key(|(r, n)| (r.step(), **n))
        .map_or_else(String::new, |(r, _)| plan.describe(r));
    Err(GenerateError::Unsatisfiable {
        blueprint: blueprint.id.clone(),
        scenario: plan.scenario.name.clone(),
        attempts: MAX_ATTEMPTS,
        reason,
    })
}

fn finish(
    plan: &Plan<'_>,
    draft: Draft,
    target: f64,
    seed: u64,
    attempts: u32,
    rng: &mut SplitMix64,
) -> Item {
    let bp = plan.blueprint;
    // Option slots: None is the answer, Some(i) the i-th distractor.
    let mut slots: Vec<Option<usize>> = std::iter::once(None)
        .chain((0..draft.distractors.len()).map(Some))
        .collect();
    rng.shuffle(&mut slots);
    let answer_index = slots.iter().position(Option::is_none).unwrap_or(0);
    let options = slots
        .iter()
        .map(|s| match s {
            None => draft.answer.text.clone(),
            Some(i) => draft.distractors[*i].text.clone(),
        })
        .collect();
    let distractors = slots
        .iter()
        .flatten()
        .map(|&i| draft.distractors[i].clone())
        .collect();
    let answer = plan.answer;
    Item {
        blueprint_id: bp.id.clone(),
        seed,
        target_difficulty: target,
        scenario: plan.scenario.name.clone(),
        difficulty: draft.difficulty,
        stem: draft.stem,
        theme: draft.theme,
        question_latex: draft.question_latex,
        options,
        answer_index,
        answer: ItemAnswer {
            text: draft.answer.text,
            value: draft.answer.value,
            kind: answer.kind,
            unit: answer.unit.clone(),
            variable: answer.variable.clone(),
            method: bp.evaluation.method,
            tolerance: bp.evaluation.tolerance,
            simplest_form: bp.evaluation.simplest_form,
        },
        distractors,
        mistakes: draft.mistakes,
        steps: draft.steps,
        representations: draft.representations,
        parameters: draft.parameters,
        format: bp.presentation.format,
        time_limit_seconds: bp.presentation.time_limit_seconds,
        attempts,
        authoring_problems: draft.authoring_problems,
    }
}

/// The difficulty of an item of `scenario` with these values: its weight
/// plus the features that hold, kept in [0, 1] and rounded to 4 places.
fn difficulty(blueprint: &Blueprint, scenario: &Scenario, env: &Env<'_>) -> f64 {
    let raw = blueprint
        .difficulty
        .features
        .iter()
        .filter(|f| condition(&f.when, env).unwrap_or(false))
        .fold(scenario.weight, |d, f| d + f.add);
    (raw.clamp(0.0, 1.0) * 10_000.0).round() / 10_000.0
}

fn exact_map<S: Serializer>(values: &[(String, Rational)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(values.len()))?;
    for (name, value) in values {
        let text = format_rational(*value, Format::Plain).unwrap_or_else(|_| value.to_string());
        map.serialize_entry(name, &text)?;
    }
    map.end()
}

#[cfg(test)]
mod tests;
