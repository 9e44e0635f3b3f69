//! One scenario's draws: its parameters drawn from the seeded stream until
//! they fit the scenario and the constraints, then the question, the answer,
//! the distractors and the mistakes worked out from them.

use super::domain::Domain;
use super::written::{Written, builtin, builtin_both_ways, evaluate_all, write};
use super::{
    Draft, Env, ItemDistractor, ItemMistake, choose_theme, condition, difficulty, lookup, number,
};
use crate::content::blueprint::{
    AnswerSpec, Blueprint, Distractor, Formula, Representation, Scenario, SolutionStep,
};
use crate::engine::practice::worked;
use crate::engine::rng::SplitMix64;
use crate::math::{Number, Rational};
use crate::text::template::Template;

/// Everything about one scenario that stays the same from draw to draw.
pub(super) struct Plan<'a> {
    pub(super) blueprint: &'a Blueprint,
    pub(super) scenario: &'a Scenario,
    domains: Vec<(&'a str, Domain)>,
    /// Earlier scenarios asking the same question, with their domains: an
    /// item fitting one of them belongs there, not here.
    earlier: Vec<(&'a Scenario, Vec<Domain>)>,
    stem: &'a Template,
    /// The theme the question is retold in, and its wording.
    themed: Option<(&'a str, &'a Template)>,
    latex: &'a Template,
    pub(super) answer: &'a AnswerSpec,
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
    pub(super) fn new(
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
    pub(super) fn attempt(&self, rng: &mut SplitMix64) -> Result<Draft, Rejection> {
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
        let answer_values = evaluate_all(&self.answer.value, &env).map_err(Rejection::Answer)?;
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
    pub(super) fn describe(&self, rejection: &Rejection) -> String {
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
pub(super) enum Rejection {
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
    pub(super) fn step(&self) -> u8 {
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
