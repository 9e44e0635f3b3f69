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

use std::collections::{BTreeMap, BTreeSet};

use serde::{Serialize, Serializer};

use super::worked::{self, ItemRepresentation, WorkedStep};
use crate::content::blueprint::{
    AnswerShape, AnswerSpec, Blueprint, BuiltinStrategy, Distractor, EvaluationMethod, Formula,
    Formulas, ItemFormat, MAX_PLACES, Parameter, ParameterKind, Representation, Scenario,
    SolutionStep,
};
use crate::engine::rng::SplitMix64;
use crate::math::{Number, Rational, Value, evaluate};
use crate::text::template::{Format, Template, format_number, format_rational};

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

/// The values a parameter can take.
#[derive(Debug, Clone)]
struct Domain {
    values: DomainValues,
    exclude: Vec<Rational>,
}

#[derive(Debug, Clone)]
enum DomainValues {
    /// `start`, `start + step`, ... (`count` values).
    Range {
        start: Rational,
        step: Rational,
        count: u64,
    },
    List(Vec<Rational>),
}

impl Domain {
    fn of(p: &Parameter) -> Result<Domain, String> {
        let exclude = p.exclude.iter().map(|e| e.0).collect();
        let values = match p.kind {
            ParameterKind::Choice => {
                let values: Vec<Rational> = p.values.iter().flatten().map(|v| v.0).collect();
                if values.is_empty() {
                    return Err("a choice parameter needs `values`".into());
                }
                DomainValues::List(values)
            }
            ParameterKind::Integer | ParameterKind::Decimal => {
                let (Some(min), Some(max)) = (p.min, p.max) else {
                    return Err("a range needs `min` and `max`".into());
                };
                let step = match (p.kind, p.places) {
                    (ParameterKind::Decimal, Some(places)) if places <= MAX_PLACES => {
                        Rational::new(1, 10i128.pow(places)).map_err(|e| e.to_string())?
                    }
                    (ParameterKind::Decimal, _) => {
                        return Err(format!("a decimal needs `places` from 0 to {MAX_PLACES}"));
                    }
                    _ => p.step.map_or(Rational::ONE, |s| s.0),
                };
                if step.numer() <= 0 {
                    return Err("`step` must be positive".into());
                }
                let span = max
                    .0
                    .checked_sub(min.0)
                    .and_then(|s| s.checked_div(step))
                    .map_err(|e| e.to_string())?;
                if span.numer() < 0 {
                    return Err("`min` is larger than `max`".into());
                }
                let count = u64::try_from(span.floor().numer())
                    .ok()
                    .and_then(|c| c.checked_add(1))
                    .ok_or("the range has too many values")?;
                DomainValues::Range {
                    start: min.0,
                    step,
                    count,
                }
            }
        };
        Ok(Domain { values, exclude })
    }

    /// Whether every value is excluded.
    fn is_empty(&self) -> bool {
        let available = |v: &Rational| !self.exclude.contains(v);
        match &self.values {
            DomainValues::List(values) => !values.iter().any(available),
            DomainValues::Range { count, .. } => {
                let in_range: BTreeSet<&Rational> = self
                    .exclude
                    .iter()
                    .filter(|v| self.values.contains(**v))
                    .collect();
                u128::from(*count) <= in_range.len() as u128
            }
        }
    }

    fn draw(&self, rng: &mut SplitMix64) -> Option<Rational> {
        let value = match &self.values {
            DomainValues::Range { start, step, count } => {
                let k = Rational::integer(i128::from(rng.below(*count)));
                start.checked_add(step.checked_mul(k).ok()?).ok()?
            }
            DomainValues::List(values) => values[rng.index(values.len())],
        };
        Some(value)
    }

    fn contains(&self, value: Rational) -> bool {
        !self.exclude.contains(&value) && self.values.contains(value)
    }
}

impl DomainValues {
    fn contains(&self, value: Rational) -> bool {
        match self {
            DomainValues::Range { start, step, count } => value
                .checked_sub(*start)
                .and_then(|d| d.checked_div(*step))
                .is_ok_and(|k| {
                    k.is_integer() && k.numer() >= 0 && (k.numer() as u128) < u128::from(*count)
                }),
            DomainValues::List(values) => values.contains(&value),
        }
    }
}

/// Why values cannot be drawn for `p`, if they cannot (for validation).
pub fn parameter_problem(p: &Parameter) -> Option<String> {
    match Domain::of(p) {
        Err(problem) => Some(problem),
        Ok(d) if d.is_empty() => Some("every value of the range is excluded".into()),
        Ok(_) => None,
    }
}

/// Everything about one scenario that stays the same from draw to draw.
struct Plan<'a> {
    blueprint: &'a Blueprint,
    scenario: &'a Scenario,
    domains: Vec<(&'a str, Domain)>,
    /// Earlier scenarios asking the same question, with their domains: an
    /// item fitting one of them belongs there, not here.
    earlier: Vec<(&'a Scenario, Vec<Domain>)>,
    stem: &'a Template,
    /// The theme the question is retold in, and its wording.
    themed: Option<(&'a str, &'a Template)>,
    latex: &'a Template,
    answer: &'a AnswerSpec,
    distractors: &'a [Distractor],
    steps: &'a [SolutionStep],
    representations: &'a [Representation],
}

fn domains_of<'a>(
    blueprint: &'a Blueprint,
    scenario: &'a Scenario,
) -> Result<Vec<(&'a str, Domain)>, String> {
    blueprint
        .parameters
        .iter()
        .map(|(name, global)| {
            let p = scenario.parameters.get(name).unwrap_or(global);
            Domain::of(p)
                .map(|d| (name, d))
                .map_err(|e| format!("parameter `{name}`: {e}"))
        })
        .collect()
}

impl<'a> Plan<'a> {
    fn new(
        blueprint: &'a Blueprint,
        index: usize,
        themes: &[&str],
        seed: u64,
        rng: &mut SplitMix64,
    ) -> Result<Self, String> {
        let scenarios = &blueprint.difficulty.scenarios;
        let scenario = &scenarios[index];
        let stems = blueprint.stems_for(scenario);
        if stems.is_empty() {
            return Err(format!("scenario `{}` has no stems", scenario.name));
        }
        let stem = &stems[rng.index(stems.len())];
        let latex = blueprint
            .latex_for(scenario)
            .ok_or_else(|| format!("scenario `{}` has no latex", scenario.name))?;
        let answer = blueprint
            .answer_for(scenario)
            .ok_or_else(|| format!("scenario `{}` has no answer", scenario.name))?;
        let earlier = scenarios[..index]
            .iter()
            .filter(|s| blueprint.same_question(s, scenario))
            .map(|s| {
                let domains = domains_of(blueprint, s)?
                    .into_iter()
                    .map(|(_, d)| d)
                    .collect();
                Ok((s, domains))
            })
            .collect::<Result<_, String>>()?;
        Ok(Plan {
            blueprint,
            scenario,
            domains: domains_of(blueprint, scenario)?,
            earlier,
            stem,
            themed: choose_theme(blueprint, scenario, themes, seed),
            latex,
            answer,
            distractors: blueprint.distractors_for(scenario),
            steps: blueprint.steps_for(scenario),
            representations: blueprint.representations_for(scenario),
        })
    }

    /// Whether `env` (with parameters in blueprint order) fits `scenario`.
    fn fits(scenario: &Scenario, domains: &[Domain], env: &Env<'_>) -> bool {
        let in_range = domains
            .iter()
            .zip(env)
            .all(|(d, (_, v))| v.exact().is_some_and(|r| d.contains(r)));
        in_range
            && scenario
                .when
                .as_ref()
                .is_none_or(|w| condition(w, env).unwrap_or(false))
    }

    /// One draw: the item, or why these parameters were rejected.
    fn attempt(&self, rng: &mut SplitMix64) -> Result<Draft, Rejection> {
        let bp = self.blueprint;
        let mut env: Env<'a> = Vec::with_capacity(bp.parameters.len() + bp.derived.len());
        for (i, (name, domain)) in self.domains.iter().enumerate() {
            let value = domain.draw(rng).ok_or(Rejection::Overflow(i))?;
            if domain.exclude.contains(&value) {
                return Err(Rejection::Excluded(i));
            }
            env.push((name, Number::Exact(value)));
        }
        for (i, (name, formula)) in bp.derived.iter().enumerate() {
            let value = number(formula, &env).map_err(|e| Rejection::Derived(i, e))?;
            env.push((name, value));
        }
        for (i, c) in bp.constraints.iter().enumerate() {
            if !condition(c, &env).map_err(Rejection::ConstraintError)? {
                return Err(Rejection::Constraint(i));
            }
        }
        if let Some(when) = &self.scenario.when
            && !condition(when, &env).map_err(Rejection::WhenError)?
        {
            return Err(Rejection::When);
        }
        for (i, (earlier, domains)) in self.earlier.iter().enumerate() {
            if Plan::fits(earlier, domains, &env) {
                return Err(Rejection::Earlier(i));
            }
        }
        let answer_values =
            evaluate_all(&self.answer.value, &env).map_err(Rejection::Answer)?;
        let answer =
            write(self.answer, self.answer.kind, &answer_values).map_err(Rejection::Answer)?;
        let plain = self
            .stem
            .render(&lookup(&env))
            .map_err(|e| Rejection::Wording(e.0))?;
        let question_latex = self
            .latex
            .render(&lookup(&env))
            .map_err(|e| Rejection::Wording(e.0))?;
        let distractors = self
            .distractors(&answer, &env, rng)
            .map_err(Rejection::Distractors)?;
        // Nothing below draws from the stream or can reject the draw.
        let mut authoring_problems = Vec::new();
        // A theme wording that cannot be written falls back to the plain
        // one: the theme never changes which item this is.
        let (stem, theme) = match self.themed {
            Some((theme, wording)) => match wording.render(&lookup(&env)) {
                Ok(told) => (told, Some(theme.to_owned())),
                Err(e) => {
                    authoring_problems.push(format!("theme `{theme}`: {}", e.0));
                    (plain, None)
                }
            },
            None => (plain, None),
        };
        let mut steps = worked::render_steps(self.steps, &lookup(&env), &answer_values)
            .unwrap_or_else(|e| {
                authoring_problems.push(e);
                Vec::new()
            });
        worked::show_what_the_question_shows(&mut steps, &[&stem, &question_latex]);
        let representations = worked::render_representations(self.representations, &lookup(&env))
            .unwrap_or_else(|e| {
                authoring_problems.push(e);
                Vec::new()
            });
        Ok(Draft {
            mistakes: self.mistakes(&answer, &env, &distractors),
            steps,
            representations,
            authoring_problems,
            parameters: env[..self.domains.len()]
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.exact().unwrap_or(Rational::ZERO)))
                .collect(),
            difficulty: difficulty(bp, self.scenario, &env),
            stem,
            theme,
            question_latex,
            answer,
            distractors,
        })
    }

    /// Why draws were rejected, in words for the blueprint's author.
    fn describe(&self, rejection: &Rejection) -> String {
        let bp = self.blueprint;
        let parameter = |i: usize| self.domains.get(i).map_or("?", |(n, _)| *n);
        match rejection {
            Rejection::Overflow(i) => format!("parameter `{}` overflowed", parameter(*i)),
            Rejection::Excluded(i) => format!("`{}` drew an excluded value", parameter(*i)),
            Rejection::Derived(i, e) => format!(
                "derived `{}`: {e}",
                bp.derived.0.get(*i).map_or("?", |(n, _)| n.as_str())
            ),
            Rejection::Constraint(i) => format!(
                "the constraint `{}` failed",
                bp.constraints.get(*i).map_or("?", Formula::text)
            ),
            Rejection::When => format!(
                "the `when` of scenario `{}` (`{}`) failed",
                self.scenario.name,
                self.scenario.when.as_ref().map_or("", Formula::text)
            ),
            Rejection::Earlier(i) => format!(
                "the parameters fit the earlier scenario `{}`",
                self.earlier.get(*i).map_or("?", |(s, _)| s.name.as_str())
            ),
            Rejection::ConstraintError(e)
            | Rejection::WhenError(e)
            | Rejection::Answer(e)
            | Rejection::Wording(e)
            | Rejection::Distractors(e) => e.clone(),
        }
    }

    /// Every wrong answer the scenario's mistakes give: the shown options'
    /// own mistakes first (two mistakes may give the same wrong answer, and
    /// an option is the mistake it was made by), then the others in the
    /// order they are listed. Values equal to the answer or to an earlier
    /// one are left out.
    fn mistakes(
        &self,
        answer: &Written,
        env: &Env<'_>,
        shown: &[ItemDistractor],
    ) -> Vec<ItemMistake> {
        let simplest_form = self.blueprint.evaluation.simplest_form;
        let mut all: Vec<ItemMistake> = Vec::new();
        for d in self.distractors {
            if let Some(when) = &d.when
                && !condition(when, env).unwrap_or(false)
            {
                continue;
            }
            let (written, slip) = match &d.value {
                Some(value) => (
                    evaluate_all(value, env)
                        .and_then(|values| {
                            write(self.answer, d.kind.unwrap_or(self.answer.kind), &values)
                        })
                        .into_iter()
                        .collect(),
                    false,
                ),
                None => (builtin_both_ways(d, answer, self.answer), true),
            };
            for w in written {
                if w.same_as(answer, simplest_form) {
                    continue;
                }
                all.push(ItemMistake {
                    text: w.text,
                    value: w.value,
                    strategy: d.strategy.clone(),
                    mistake_tag: d.mistake_tag.clone(),
                    description: d.description.clone(),
                    slip,
                });
            }
        }
        let is_shown = |m: &ItemMistake| {
            shown
                .iter()
                .any(|d| d.text == m.text && d.strategy == m.strategy)
        };
        let (mut out, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(is_shown);
        for m in rest {
            if !out.iter().any(|o| o.text == m.text) {
                out.push(m);
            }
        }
        out.dedup_by(|later, earlier| later.text == earlier.text);
        out
    }

    fn distractors(
        &self,
        answer: &Written,
        env: &Env<'_>,
        rng: &mut SplitMix64,
    ) -> Result<Vec<ItemDistractor>, String> {
        let needed = self.blueprint.presentation.options.saturating_sub(1);
        let simplest_form = self.blueprint.evaluation.simplest_form;
        let mut found: Vec<ItemDistractor> = Vec::new();
        for d in self.distractors {
            if let Some(when) = &d.when
                && !condition(when, env).unwrap_or(false)
            {
                continue;
            }
            let written = match &d.value {
                Some(value) => evaluate_all(value, env).and_then(|values| {
                    write(self.answer, d.kind.unwrap_or(self.answer.kind), &values)
                }),
                None => builtin(d, answer, self.answer, rng),
            };
            let Ok(written) = written else { continue };
            if written.same_as(answer, simplest_form)
                || found.iter().any(|f| f.text == written.text)
            {
                continue;
            }
            found.push(ItemDistractor {
                text: written.text,
                strategy: d.strategy.clone(),
                mistake_tag: d.mistake_tag.clone(),
            });
        }
        if found.len() < needed {
            return Err(format!(
                "only {} different wrong answers came out, and {needed} are needed",
                found.len()
            ));
        }
        // A seeded choice of which mistakes to offer, so repeated drills vary.
        for i in 0..needed {
            let j = i + rng.index(found.len() - i);
            found.swap(i, j);
        }
        found.truncate(needed);
        Ok(found)
    }
}

/// Why a draw was rejected, in the order of the steps of a draw: the
/// furthest step any draw reached says most about what to fix. Only the
/// reported reason is ever put into words, so rejections stay cheap.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Rejection {
    Overflow(usize),
    Excluded(usize),
    Derived(usize, String),
    ConstraintError(String),
    Constraint(usize),
    WhenError(String),
    When,
    Earlier(usize),
    Answer(String),
    Wording(String),
    Distractors(String),
}

impl Rejection {
    /// How far the draw got.
    fn step(&self) -> u8 {
        match self {
            Rejection::Overflow(_) | Rejection::Excluded(_) | Rejection::Derived(..) => 0,
            Rejection::ConstraintError(_) | Rejection::Constraint(_) => 1,
            Rejection::WhenError(_) | Rejection::When | Rejection::Earlier(_) => 2,
            Rejection::Answer(_) => 3,
            Rejection::Wording(_) => 4,
            Rejection::Distractors(_) => 5,
        }
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

/// An answer (or a wrong answer) as it is shown.
#[derive(Debug, Clone)]
struct Written {
    /// With the variable and unit: `x = 4`.
    text: String,
    /// Without them: `4`.
    value: String,
    /// The number it stands for, for the numeric kinds.
    number: Option<Rational>,
    /// A fraction written with a common factor left in (`4/6`).
    unsimplified: bool,
}

impl Written {
    fn new(
        answer: &AnswerSpec,
        value: String,
        number: Option<Rational>,
        unsimplified: bool,
    ) -> Self {
        let mut text = value.clone();
        if let Some(var) = &answer.variable {
            text = format!("{var} = {text}");
        }
        if let Some(unit) = &answer.unit {
            let glue = if unit.starts_with(|c: char| c.is_alphabetic()) {
                " "
            } else {
                ""
            };
            text = format!("{text}{glue}{unit}");
        }
        Written {
            text,
            value,
            number,
            unsimplified,
        }
    }

    /// Whether a student giving `self` would be right. A fraction with a
    /// common factor left in is a different answer only when the simplest
    /// form is required.
    fn same_as(&self, answer: &Written, simplest_form: bool) -> bool {
        if self.text == answer.text || self.value == answer.value {
            return true;
        }
        match (self.number, answer.number) {
            (Some(a), Some(b)) if a == b => !(simplest_form && self.unsimplified),
            _ => false,
        }
    }
}

fn exact(n: Number, what: &str) -> Result<Rational, String> {
    n.exact().ok_or_else(|| {
        format!("{what} {n} is not exact (e.g. a square root that does not come out)")
    })
}

fn whole(n: Number, what: &str) -> Result<i128, String> {
    let r = exact(n, what)?;
    if r.is_integer() {
        Ok(r.numer())
    } else {
        Err(format!("{what} {r} is not a whole number"))
    }
}

fn evaluate_all(formulas: &Formulas, env: &Env<'_>) -> Result<Vec<Number>, String> {
    formulas.0.iter().map(|f| number(f, env)).collect()
}

/// Writes `values` as a value of `kind`, decorated like `answer`.
fn write(answer: &AnswerSpec, kind: AnswerShape, values: &[Number]) -> Result<Written, String> {
    let what = "the answer";
    let plain = |r: Rational, format| format_rational(r, format).map_err(|e| e.0);
    let (value, number, unsimplified) = match (kind, values) {
        (AnswerShape::Integer, [v]) => {
            let n = whole(*v, what)?;
            (n.to_string(), Some(Rational::integer(n)), false)
        }
        (AnswerShape::Decimal, [v]) => {
            let r = exact(*v, what)?;
            (plain(r, Format::Decimal)?, Some(r), false)
        }
        (AnswerShape::Fraction, [v]) => {
            let r = exact(*v, what)?;
            (plain(r, Format::Fraction)?, Some(r), false)
        }
        (AnswerShape::Fraction, [n, d]) => {
            let (n, d) = (whole(*n, "the numerator")?, whole(*d, "the denominator")?);
            let r = Rational::new(n, d).map_err(|e| e.to_string())?;
            let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
            let text = format!("{n}/{d}");
            (text, Some(r), r.numer() != n)
        }
        (AnswerShape::QuotientRemainder, [q, r]) => {
            let (q, r) = (whole(*q, "the quotient")?, whole(*r, "the remainder")?);
            (format!("{q} r {r}"), None, false)
        }
        (AnswerShape::Ipv4, [v]) => (
            format_number(*v, Format::Ipv4).map_err(|e| e.0)?,
            None,
            false,
        ),
        (kind, values) => {
            return Err(format!(
                "a {} value takes {:?} formulas, not {}",
                kind.as_str(),
                kind.parts(),
                values.len()
            ));
        }
    };
    Ok(Written::new(answer, value, number, unsimplified))
}

/// The wrong answer a built-in strategy makes from the right one; the
/// stream picks the direction of a shift.
fn builtin(
    d: &Distractor,
    right: &Written,
    answer: &AnswerSpec,
    rng: &mut SplitMix64,
) -> Result<Written, String> {
    // Only an applicable strategy draws from the stream.
    builtin_inputs(d, right, answer)?;
    let up = rng.below(2) == 0;
    builtin_shifted(d, right, answer, up)
}

/// Both wrong answers a built-in strategy can make (one for a sign error
/// or a swapped fraction), for recognising a typed answer.
fn builtin_both_ways(d: &Distractor, right: &Written, answer: &AnswerSpec) -> Vec<Written> {
    let mut out: Vec<Written> = Vec::new();
    for up in [true, false] {
        if let Ok(w) = builtin_shifted(d, right, answer, up)
            && !out.iter().any(|o| o.text == w.text)
        {
            out.push(w);
        }
    }
    out
}

/// The strategy, the answer's kind and its value, if the strategy applies.
fn builtin_inputs(
    d: &Distractor,
    right: &Written,
    answer: &AnswerSpec,
) -> Result<(BuiltinStrategy, AnswerShape, Rational), String> {
    let strategy = BuiltinStrategy::from_name(&d.strategy)
        .ok_or_else(|| format!("`{}` needs a value", d.strategy))?;
    let kind = answer.kind;
    if !strategy.applies_to(kind) {
        return Err(format!(
            "`{}` does not apply to {}",
            d.strategy,
            kind.as_str()
        ));
    }
    let value = right.number.ok_or("the answer is not a number")?;
    Ok((strategy, kind, value))
}

fn builtin_shifted(
    d: &Distractor,
    right: &Written,
    answer: &AnswerSpec,
    up: bool,
) -> Result<Written, String> {
    let (strategy, kind, value) = builtin_inputs(d, right, answer)?;
    let shift = |by: Rational| {
        if up {
            value.checked_add(by)
        } else {
            value.checked_sub(by)
        }
        .map_err(|e| e.to_string())
    };
    let wrong = match strategy {
        BuiltinStrategy::OffByOne => {
            let step = match kind {
                // A decimal answer that comes out whole still slips in the tenths.
                AnswerShape::Decimal => {
                    last_place(value).min(Rational::new(1, 10).map_err(|e| e.to_string())?)
                }
                AnswerShape::Fraction => {
                    Rational::new(1, value.denom()).map_err(|e| e.to_string())?
                }
                _ => Rational::ONE,
            };
            let wrong = shift(step)?;
            // A slip in the last digit of an amount does not make it vanish or change sign.
            let amount = matches!(kind, AnswerShape::Decimal | AnswerShape::Fraction);
            if amount && (wrong.is_zero() || (wrong.numer() < 0) != (value.numer() < 0)) {
                return Err("the slip would reach zero".into());
            }
            wrong
        }
        BuiltinStrategy::OffByTen => shift(Rational::integer(10))?,
        BuiltinStrategy::SignError if !value.is_zero() => -value,
        BuiltinStrategy::SwappedFraction if !value.is_zero() => {
            value.recip().map_err(|e| e.to_string())?
        }
        _ => return Err("the answer is zero".into()),
    };
    write(answer, kind, &[Number::Exact(wrong)])
}

/// One unit of the last decimal place of `value` (1 for whole numbers).
fn last_place(value: Rational) -> Rational {
    let mut unit = Rational::ONE;
    let tenth = Rational::new(1, 10).unwrap_or(Rational::ONE);
    for _ in 0..MAX_PLACES {
        match value.checked_div(unit) {
            Ok(q) if q.is_integer() => return unit,
            _ => unit = unit.checked_mul(tenth).unwrap_or(unit),
        }
    }
    unit
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
mod tests {
    use super::*;

    fn blueprint(yaml: &str) -> Blueprint {
        serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
    }

    const ADD: &str = r#"
id: TEST.ADD
domain: Test
skill_statement: Add
cognitive_level: Apply
parameters:
  a: {type: integer, min: 10, max: 99}
  b: {type: integer, min: 10, max: 99}
difficulty:
  scenarios:
    - {name: no_carry, weight: 0.3, when: "mod(a, 10) + mod(b, 10) < 10"}
    - {name: carry, weight: 0.6}
stems: ["What is {a} + {b}?"]
latex: "{a} + {b}"
answer: {value: "a + b", kind: integer}
distractors:
  - {strategy: off_by_one}
  - {strategy: off_by_ten}
  - {strategy: wrong_operation, value: "a - b", when: "a > b"}
  - {strategy: forgot_carry, value: "a + b - 10", when: "mod(a, 10) + mod(b, 10) >= 10"}
"#;

    #[test]
    fn the_same_inputs_give_the_same_item() {
        let bp = blueprint(ADD);
        let a = generate(&bp, 0.5, 99).unwrap();
        assert_eq!(a, generate(&bp, 0.5, 99).unwrap());
        assert_ne!(a, generate(&bp, 0.5, 100).unwrap());
    }

    #[test]
    fn the_nearest_scenario_is_chosen_and_its_rules_hold() {
        let bp = blueprint(ADD);
        for seed in 0..200 {
            let easy = generate(&bp, 0.0, seed).unwrap();
            assert_eq!(easy.scenario, "no_carry");
            let (a, b) = (easy.parameter("a").unwrap(), easy.parameter("b").unwrap());
            assert!(a.numer() % 10 + b.numer() % 10 < 10);
            let hard = generate(&bp, 0.9, seed).unwrap();
            assert_eq!(hard.scenario, "carry");
            let (a, b) = (hard.parameter("a").unwrap(), hard.parameter("b").unwrap());
            assert!(
                a.numer() % 10 + b.numer() % 10 >= 10,
                "the catch-all excludes earlier scenarios"
            );
            assert_eq!(hard.answer.value, (a.numer() + b.numer()).to_string());
            assert_eq!(hard.options[hard.answer_index], hard.answer.text);
            assert_eq!(hard.options.len(), 4);
        }
    }

    #[test]
    fn a_chosen_distractor_gives_its_mistake() {
        let bp = blueprint(ADD);
        let item = generate(&bp, 0.9, 4).unwrap();
        for d in &item.distractors {
            let sloppy = format!("  {} ", d.text.to_uppercase());
            assert_eq!(item.distractor_for(&sloppy), Some(d));
        }
        assert_eq!(item.distractor_for(&item.answer.text), None);
    }

    #[test]
    fn contradictory_rules_give_a_clear_error() {
        let bp = blueprint(&ADD.replace(
            "when: \"mod(a, 10) + mod(b, 10) < 10\"",
            "when: \"a + b > 500\"",
        ));
        match generate(&bp, 0.3, 1) {
            Err(GenerateError::Unsatisfiable {
                scenario,
                attempts,
                reason,
                ..
            }) => {
                assert_eq!(scenario, "no_carry");
                assert_eq!(attempts, MAX_ATTEMPTS);
                assert!(reason.contains("a + b > 500"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            generate(&bp, f64::NAN, 1),
            Err(GenerateError::InvalidTarget(_))
        ));
        assert!(generate(&bp, 1.5, 1).is_err());
    }

    #[test]
    fn too_few_distractors_is_reported() {
        let bp = blueprint(&ADD.replace("  - {strategy: off_by_ten}\n", ""));
        // Without off_by_ten, a no-carry item with a <= b has only one distractor.
        match generate(&bp, 0.0, 3) {
            Err(GenerateError::Unsatisfiable { reason, .. }) => {
                assert!(reason.contains("wrong answers"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn built_in_strategies_follow_the_kind() {
        let answer = |kind| AnswerSpec {
            value: crate::content::blueprint::Formulas(vec![Formula::new("0")]),
            kind,
            unit: None,
            variable: None,
        };
        let d = |name: &str| Distractor {
            strategy: name.into(),
            value: None,
            kind: None,
            when: None,
            mistake_tag: None,
            description: String::new(),
        };
        let r = |n, den| Rational::new(n, den).unwrap();
        let right = |kind, v: Rational| write(&answer(kind), kind, &[Number::Exact(v)]).unwrap();
        let mut rng = SplitMix64::new(5);
        let dec = builtin(
            &d("off_by_one"),
            &right(AnswerShape::Decimal, r(615, 100)),
            &answer(AnswerShape::Decimal),
            &mut rng,
        )
        .unwrap();
        assert!(
            ["6.14", "6.16"].contains(&dec.text.as_str()),
            "{}",
            dec.text
        );
        let whole = builtin(
            &d("off_by_one"),
            &right(AnswerShape::Decimal, r(1, 1)),
            &answer(AnswerShape::Decimal),
            &mut rng,
        )
        .unwrap();
        assert!(
            ["0.9", "1.1"].contains(&whole.text.as_str()),
            "{}",
            whole.text
        );
        let half = right(AnswerShape::Fraction, r(1, 2));
        for _ in 0..8 {
            if let Ok(w) = builtin(
                &d("off_by_one"),
                &half,
                &answer(AnswerShape::Fraction),
                &mut rng,
            ) {
                assert_eq!(w.text, "1", "1/2 slips up to 2/2, never down to 0");
            }
        }
        let frac = builtin(
            &d("swapped_fraction"),
            &right(AnswerShape::Fraction, r(5, 4)),
            &answer(AnswerShape::Fraction),
            &mut rng,
        )
        .unwrap();
        assert_eq!(frac.text, "4/5");
        let sign = builtin(
            &d("sign_error"),
            &right(AnswerShape::Integer, r(7, 1)),
            &answer(AnswerShape::Integer),
            &mut rng,
        )
        .unwrap();
        assert_eq!(sign.text, "-7");
        assert!(
            builtin(
                &d("sign_error"),
                &right(AnswerShape::Integer, r(0, 1)),
                &answer(AnswerShape::Integer),
                &mut rng
            )
            .is_err()
        );
        assert!(
            builtin(
                &d("off_by_ten"),
                &right(AnswerShape::Fraction, r(1, 2)),
                &answer(AnswerShape::Fraction),
                &mut rng
            )
            .is_err()
        );
    }

    #[test]
    fn an_unsimplified_fraction_is_wrong_only_when_simplest_form_is_required() {
        let answer = AnswerSpec {
            value: crate::content::blueprint::Formulas(vec![Formula::new("0")]),
            kind: AnswerShape::Fraction,
            unit: None,
            variable: Some("x".into()),
        };
        let right = write(
            &answer,
            AnswerShape::Fraction,
            &[Number::Exact(Rational::new(2, 3).unwrap())],
        )
        .unwrap();
        assert_eq!(right.text, "x = 2/3");
        let four_sixths = write(
            &answer,
            AnswerShape::Fraction,
            &[Number::int(4), Number::int(6)],
        )
        .unwrap();
        assert_eq!(four_sixths.text, "x = 4/6");
        assert!(!four_sixths.same_as(&right, true));
        assert!(four_sixths.same_as(&right, false));
        let decimal = write(
            &answer,
            AnswerShape::Decimal,
            &[Number::Exact(Rational::new(1, 2).unwrap())],
        )
        .unwrap();
        let half = write(
            &answer,
            AnswerShape::Fraction,
            &[Number::Exact(Rational::new(1, 2).unwrap())],
        )
        .unwrap();
        assert!(decimal.same_as(&half, true), "0.5 is 1/2");
    }

    #[test]
    fn domains_cover_their_ranges_exactly() {
        let p: Parameter =
            serde_yaml::from_str("{type: decimal, min: 1.5, max: 2, places: 1}").unwrap();
        let d = Domain::of(&p).unwrap();
        let mut rng = SplitMix64::new(1);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..500 {
            seen.insert(d.draw(&mut rng).unwrap());
        }
        let expected: std::collections::BTreeSet<Rational> =
            (15..=20).map(|n| Rational::new(n, 10).unwrap()).collect();
        assert_eq!(seen, expected);
        assert!(d.contains(Rational::new(17, 10).unwrap()));
        assert!(!d.contains(Rational::new(175, 100).unwrap()));
        let p: Parameter =
            serde_yaml::from_str("{type: integer, min: 5, max: 95, step: 5, exclude: [50]}")
                .unwrap();
        let d = Domain::of(&p).unwrap();
        assert!(d.contains(Rational::integer(95)) && !d.contains(Rational::integer(50)));
        assert!(!d.contains(Rational::integer(100)) && !d.contains(Rational::integer(7)));
        let p: Parameter = serde_yaml::from_str("{type: integer, min: 9, max: 1}").unwrap();
        assert!(Domain::of(&p).is_err());
    }

    const THEMED: &str = r#"
id: TEST.THEMED
domain: Test
skill_statement: Add
cognitive_level: Apply
parameters:
  a: {type: integer, min: 10, max: 99}
  b: {type: integer, min: 10, max: 99}
difficulty:
  scenarios:
    - {name: any, weight: 0.5}
    - name: own_wording
      weight: 0.9
      stems: ["Add {a} and {b}."]
      latex: "{a} + {b} = ?"
stems: ["What is {a} + {b}?", "Work out {a} + {b}."]
themes:
  sports:
    - "A team scored {a} points and then {b} more. How many points is that?"
    - "A runner ran {a} laps on Monday and {b} on Tuesday. How many laps altogether?"
  cooking:
    - "A cook baked {a} rolls and then {b} more. How many rolls is that?"
latex: "{a} + {b}"
answer: {value: "a + b", kind: integer}
distractors:
  - {strategy: off_by_one}
  - {strategy: off_by_ten}
  - {strategy: doubled_a, value: "2 * a + b"}
"#;

    /// The item with its wording and theme set aside.
    fn question(item: &Item) -> Item {
        Item {
            stem: String::new(),
            theme: None,
            authoring_problems: Vec::new(),
            ..item.clone()
        }
    }

    #[test]
    fn a_theme_is_chosen_from_the_seed_and_the_students_themes() {
        let bp = blueprint(THEMED);
        let mut seen = BTreeSet::new();
        for seed in 0..64 {
            let item = generate_themed(&bp, 0.5, seed, &["cooking", "sports"]).unwrap();
            assert_eq!(
                item,
                generate_themed(&bp, 0.5, seed, &["cooking", "sports"]).unwrap(),
                "the same seed and themes give the same item"
            );
            let theme = item.theme.clone().expect("both themes are offered");
            let wordings = bp.themes.get(&theme).unwrap();
            assert!(
                wordings.iter().any(|w| {
                    let a = item.parameter("a").unwrap();
                    let b = item.parameter("b").unwrap();
                    w.text()
                        .replace("{a}", &a.to_string())
                        .replace("{b}", &b.to_string())
                        == item.stem
                }),
                "{theme}: {}",
                item.stem
            );
            seen.insert((theme, item.stem.split(' ').nth(1).unwrap_or("").to_owned()));
        }
        // Both themes, and both sports wordings, come up.
        assert!(seen.iter().any(|(t, _)| t == "cooking"), "{seen:?}");
        assert!(seen.iter().any(|(_, w)| w == "team"), "{seen:?}");
        assert!(seen.iter().any(|(_, w)| w == "runner"), "{seen:?}");
    }

    #[test]
    fn a_theme_the_blueprint_does_not_offer_gives_the_plain_wording() {
        let bp = blueprint(THEMED);
        for seed in 0..32 {
            let plain = generate(&bp, 0.5, seed).unwrap();
            assert_eq!(plain.theme, None);
            for unknown in [&["space"][..], &["Sports"], &[""], &[]] {
                assert_eq!(generate_themed(&bp, 0.5, seed, unknown).unwrap(), plain);
            }
            // Only the offered one of the student's themes is used.
            let item = generate_themed(&bp, 0.5, seed, &["space", "cooking"]).unwrap();
            assert_eq!(item.theme.as_deref(), Some("cooking"));
        }
        // A scenario with its own wording and no themes of its own stays plain.
        let own = generate_themed(&bp, 0.9, 3, &["sports"]).unwrap();
        assert_eq!((own.scenario.as_str(), own.theme), ("own_wording", None));
        assert!(own.stem.starts_with("Add "), "{}", own.stem);
    }

    #[test]
    fn a_wording_that_cannot_be_written_falls_back_to_the_plain_one() {
        let broken = THEMED.replace("A cook baked {a} rolls", "A cook baked {c} rolls");
        let bp = blueprint(&broken);
        let item = generate_themed(&bp, 0.5, 1, &["cooking"]).unwrap();
        assert_eq!(question(&item), question(&generate(&bp, 0.5, 1).unwrap()));
        assert_eq!(item.theme, None);
        assert!(
            item.authoring_problems
                .iter()
                .any(|p| p.starts_with("theme `cooking`")),
            "{:?}",
            item.authoring_problems
        );
    }

    proptest::proptest! {
        /// A theme retells the question: the numbers, options and answer are
        /// the ones the plain wording gets, whatever the seed and themes.
        #[test]
        fn the_answer_is_the_same_in_every_theme(
            seed: u64,
            target in 0.0f64..=1.0,
            themes in proptest::sample::subsequence(vec!["sports", "cooking", "space"], 0..=3),
        ) {
            let bp = blueprint(THEMED);
            let plain = generate(&bp, target, seed).unwrap();
            let themed = generate_themed(&bp, target, seed, &themes).unwrap();
            proptest::prop_assert_eq!(question(&themed), question(&plain));
            let offered = themes.iter().any(|t| *t != "space") && plain.scenario == "any";
            proptest::prop_assert_eq!(themed.theme.is_some(), offered);
            if !offered {
                proptest::prop_assert_eq!(&themed.stem, &plain.stem);
            }
        }
    }
}
