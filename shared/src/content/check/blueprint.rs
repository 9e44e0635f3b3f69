//! Validation of one skill blueprint: every field, every formula and
//! template, and finally, through the engine ([`EngineChecks`]), a trial run
//! proving that every scenario can really produce items. Problems are
//! returned with the YAML path they concern; the loader turns them into
//! `path:line:column` diagnostics.

use std::collections::BTreeSet;

use super::{EngineChecks, Finding, is_slug};
use crate::content::blueprint::{
    AnswerShape, AnswerSpec, Blueprint, BuiltinStrategy, Distractor, EvaluationMethod, Formula,
    Formulas, ItemFormat, MAX_PLACES, Parameter, ParameterKind, Representation, STEP_RESULT,
    SolutionStep, Themes,
};
use crate::content::yaml_index::YamlPath;
use crate::math::{Expr, ParseOptions, Rational, parse};
use crate::model::ExampleTheme;
use crate::text::template::Template;

/// Every problem with `bp`, in no particular order. Items are generated
/// (by `engine`) only from a blueprint without other problems.
pub fn check(bp: &Blueprint, engine: &dyn EngineChecks) -> Vec<Finding> {
    let mut c = Checker {
        bp,
        engine,
        findings: Vec::new(),
    };
    c.run();
    c.findings
}

/// The mistake tags `bp`'s distractors give, with where each is written.
pub fn mistake_tags(bp: &Blueprint) -> Vec<(&str, YamlPath)> {
    let lists = std::iter::once((
        bp.distractors.as_slice(),
        YamlPath::root().key("distractors"),
    ))
    .chain(
        bp.difficulty
            .scenarios
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let list = s.distractors.as_deref()?;
                Some((list, scenario_path(i).key("distractors")))
            }),
    );
    let mut out = Vec::new();
    for (list, at) in lists {
        for (i, d) in list.iter().enumerate() {
            if let Some(tag) = &d.mistake_tag {
                out.push((tag.as_str(), at.index(i).key("mistake_tag")));
            }
        }
    }
    out
}

/// Where scenario `i` is written.
pub fn scenario_path(i: usize) -> YamlPath {
    YamlPath::root().key("difficulty").key("scenarios").index(i)
}

/// Whether a formula's value is a number or a true/false condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Number,
    Condition,
}

impl Shape {
    fn describe(self) -> &'static str {
        match self {
            Shape::Number => "a number",
            Shape::Condition => "a condition",
        }
    }
}

/// The shape of `e`, or the first place where a number and a condition are mixed.
fn shape(e: &Expr) -> Result<Shape, String> {
    let need = |e: &Expr, want: Shape| -> Result<(), String> {
        let got = shape(e)?;
        if got == want {
            Ok(())
        } else {
            Err(format!(
                "`{e}` is {} where {} is expected",
                got.describe(),
                want.describe()
            ))
        }
    };
    Ok(match e {
        Expr::Num(_) | Expr::Var(_) | Expr::Pi => Shape::Number,
        Expr::Neg(a) | Expr::Percent(a) => {
            need(a, Shape::Number)?;
            Shape::Number
        }
        Expr::Binary(_, a, b) => {
            need(a, Shape::Number)?;
            need(b, Shape::Number)?;
            Shape::Number
        }
        Expr::Call(_, args) => {
            for a in args {
                need(a, Shape::Number)?;
            }
            Shape::Number
        }
        Expr::Compare(_, a, b) => {
            need(a, Shape::Number)?;
            need(b, Shape::Number)?;
            Shape::Condition
        }
        Expr::And(a, b) | Expr::Or(a, b) => {
            need(a, Shape::Condition)?;
            need(b, Shape::Condition)?;
            Shape::Condition
        }
        Expr::Not(a) => {
            need(a, Shape::Condition)?;
            Shape::Condition
        }
    })
}

/// A name formulas can refer to: it must read back as that one variable
/// (so not `mod`, `pi` or `and`, in any letter case).
fn usable_name(name: &str) -> bool {
    matches!(parse(name, ParseOptions::formula()), Ok(Expr::Var(v)) if v == name)
}

struct Checker<'a> {
    bp: &'a Blueprint,
    engine: &'a dyn EngineChecks,
    findings: Vec<Finding>,
}

impl<'a> Checker<'a> {
    fn at(&mut self, at: YamlPath, message: impl Into<String>) {
        self.findings.push(Finding::at(at, message));
    }

    fn at_key(&mut self, at: YamlPath, message: impl Into<String>) {
        self.findings.push(Finding::at_key(at, message));
    }

    fn run(&mut self) {
        let bp = self.bp;
        let root = YamlPath::root();
        for (key, value) in [
            ("domain", &bp.domain),
            ("skill_statement", &bp.skill_statement),
        ] {
            if value.trim().is_empty() {
                self.at(root.key(key), format!("{key} is empty"));
            }
        }
        let names = self.check_names();
        self.check_parameters();
        let all: BTreeSet<&str> = names.iter().copied().collect();
        for (i, c) in bp.constraints.iter().enumerate() {
            self.formula(c, root.key("constraints").index(i), &all, Shape::Condition);
        }
        self.check_scenarios(&all);
        self.check_features(&all);
        self.check_wording(&all);
        self.check_explanations(&all);
        self.check_answers(&all);
        self.check_presentation();
        self.check_benchmarks();
        if self.findings.is_empty() {
            self.findings = self.engine.generated_items(bp);
        }
    }

    /// Parameter and derived names; returns every name formulas may use.
    fn check_names(&mut self) -> Vec<&'a str> {
        let bp = self.bp;
        let root = YamlPath::root();
        if bp.parameters.is_empty() {
            self.at_key(
                root.key("parameters"),
                "a blueprint needs at least one parameter",
            );
        }
        let mut seen: Vec<&str> = Vec::new();
        let listed = bp
            .parameters
            .names()
            .map(|n| (n, root.key("parameters").key(n)))
            .chain(bp.derived.names().map(|n| (n, root.key("derived").key(n))));
        for (name, at) in listed {
            if name == STEP_RESULT {
                self.at_key(
                    at,
                    format!("`{STEP_RESULT}` is kept for the value of a step: choose another name"),
                );
            } else if !usable_name(name) {
                self.at_key(
                    at,
                    format!(
                        "`{name}` cannot be used in formulas: use letters, digits and _, \
                         starting with a letter, and not a function name or and/or/not/pi"
                    ),
                );
            } else if seen.contains(&name) {
                self.at_key(at, format!("`{name}` is defined twice"));
            }
            seen.push(name);
        }
        for (i, (name, formula)) in bp.derived.iter().enumerate() {
            let earlier: BTreeSet<&str> = bp
                .parameters
                .names()
                .chain(bp.derived.names().take(i))
                .collect();
            self.formula(
                formula,
                root.key("derived").key(name),
                &earlier,
                Shape::Number,
            );
        }
        seen
    }

    /// Reports problems with `formula`; `known` are the names it may use.
    fn formula(&mut self, formula: &Formula, at: YamlPath, known: &BTreeSet<&str>, want: Shape) {
        let expr = match formula.expr() {
            Ok(e) => e,
            Err(e) => {
                self.at(
                    at,
                    format!("`{}` is not a valid formula: {e}", formula.text()),
                );
                return;
            }
        };
        let unknown: Vec<&str> = expr
            .variables()
            .into_iter()
            .filter(|v| !known.contains(v))
            .collect();
        if !unknown.is_empty() {
            self.at(
                at,
                format!(
                    "`{}` uses {} not defined here (known: {})",
                    formula.text(),
                    unknown
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            );
            return;
        }
        match shape(expr) {
            Ok(got) if got == want => {}
            Ok(got) => self.at(
                at,
                format!(
                    "`{}` is {}, but {} is needed here",
                    formula.text(),
                    got.describe(),
                    want.describe()
                ),
            ),
            Err(e) => self.at(at, format!("`{}`: {e}", formula.text())),
        }
    }

    fn check_parameters(&mut self) {
        let bp = self.bp;
        let root = YamlPath::root();
        for (name, p) in bp.parameters.iter() {
            self.parameter(p, root.key("parameters").key(name));
        }
        for (i, s) in bp.difficulty.scenarios.iter().enumerate() {
            for (name, p) in s.parameters.iter() {
                let at = scenario_path(i).key("parameters").key(name);
                if bp.parameters.get(name).is_none() {
                    self.at_key(
                        at,
                        format!("`{name}` is not one of the blueprint's parameters"),
                    );
                } else {
                    self.parameter(p, at);
                }
            }
        }
    }

    fn parameter(&mut self, p: &Parameter, at: YamlPath) {
        let allowed: &[&str] = match p.kind {
            ParameterKind::Integer => &["min", "max", "step"],
            ParameterKind::Decimal => &["min", "max", "places"],
            ParameterKind::Choice => &["values"],
        };
        let given = [
            ("min", p.min.is_some()),
            ("max", p.max.is_some()),
            ("step", p.step.is_some()),
            ("places", p.places.is_some()),
            ("values", p.values.is_some()),
        ];
        let kind = match p.kind {
            ParameterKind::Integer => "an integer",
            ParameterKind::Decimal => "a decimal",
            ParameterKind::Choice => "a choice",
        };
        let mut ok = true;
        for (field, present) in given {
            if present && !allowed.contains(&field) {
                self.at_key(
                    at.key(field),
                    format!(
                        "{kind} parameter takes {}, not `{field}`",
                        allowed.join(", ")
                    ),
                );
                ok = false;
            } else if !present && allowed.contains(&field) && field != "step" {
                self.at_key(at.clone(), format!("{kind} parameter needs `{field}`"));
                ok = false;
            }
        }
        if !ok {
            return;
        }
        match p.kind {
            ParameterKind::Integer => {
                for (field, v) in [("min", p.min), ("max", p.max), ("step", p.step)] {
                    if let Some(v) = v
                        && !v.0.is_integer()
                    {
                        self.at(at.key(field), format!("{} is not a whole number", v.0));
                        ok = false;
                    }
                }
            }
            ParameterKind::Decimal => {
                let places = p.places.unwrap_or(0);
                if places > MAX_PLACES {
                    self.at(at.key("places"), format!("at most {MAX_PLACES} places"));
                    return;
                }
                let unit = Rational::new(1, 10i128.pow(places)).unwrap_or(Rational::ONE);
                for (field, v) in [("min", p.min), ("max", p.max)] {
                    if let Some(v) = v
                        && !v.0.checked_div(unit).is_ok_and(Rational::is_integer)
                    {
                        self.at(
                            at.key(field),
                            format!("{} has more than {places} places", v.0),
                        );
                        ok = false;
                    }
                }
            }
            ParameterKind::Choice => {
                let values = p.values.as_deref().unwrap_or_default();
                if values.is_empty() {
                    self.at_key(at.key("values"), "a choice needs at least one value");
                    ok = false;
                }
                for (i, v) in values.iter().enumerate() {
                    if values[..i].contains(v) {
                        self.at(
                            at.key("values").index(i),
                            format!("{} is listed twice", v.0),
                        );
                        ok = false;
                    }
                }
            }
        }
        if ok && let Some(problem) = self.engine.undrawable(p) {
            self.at(at, problem);
        }
    }

    fn check_scenarios(&mut self, known: &BTreeSet<&str>) {
        let scenarios = &self.bp.difficulty.scenarios;
        let at = YamlPath::root().key("difficulty").key("scenarios");
        if scenarios.is_empty() {
            self.at_key(at, "a blueprint needs at least one difficulty scenario");
            return;
        }
        let mut names = BTreeSet::new();
        for (i, s) in scenarios.iter().enumerate() {
            let at = scenario_path(i);
            if !is_slug(&s.name) {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario name `{}` must be lowercase letters, digits and _",
                        s.name
                    ),
                );
            } else if !names.insert(s.name.as_str()) {
                self.at(
                    at.key("name"),
                    format!("scenario `{}` is defined twice", s.name),
                );
            }
            if !(0.0..=1.0).contains(&s.weight) {
                self.at(
                    at.key("weight"),
                    format!("weight {} is outside [0, 1]", s.weight),
                );
            }
            let shadowed = scenarios[i + 1..]
                .iter()
                .find(|later| self.bp.same_question(s, later));
            match (&s.when, shadowed) {
                (Some(when), _) => self.formula(when, at.key("when"), known, Shape::Condition),
                (None, Some(later)) if s.parameters.is_empty() && later.parameters.is_empty() => self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no `when`, so it takes every item and `{}`, which asks \
                         the same question after it, can never be chosen: give it a `when` or \
                         move it last",
                        s.name, later.name
                    ),
                ),
                (None, _) => {}
            }
        }
    }

    /// Features may not let an easier scenario's items outrank a harder one's,
    /// so difficulty stays monotone in the scenario weights.
    fn check_features(&mut self, known: &BTreeSet<&str>) {
        let d = &self.bp.difficulty;
        let at = YamlPath::root().key("difficulty").key("features");
        let mut names = BTreeSet::new();
        for (i, f) in d.features.iter().enumerate() {
            if !is_slug(&f.name) {
                self.at(
                    at.index(i).key("name"),
                    format!(
                        "feature name `{}` must be lowercase letters, digits and _",
                        f.name
                    ),
                );
            } else if !names.insert(f.name.as_str()) {
                self.at(
                    at.index(i).key("name"),
                    format!("feature `{}` is defined twice", f.name),
                );
            }
            self.formula(&f.when, at.index(i).key("when"), known, Shape::Condition);
            if !(-1.0..=1.0).contains(&f.add) {
                self.at(
                    at.index(i).key("add"),
                    format!("{} is outside [-1, 1]", f.add),
                );
            }
        }
        let up: f64 = d.features.iter().map(|f| f.add.max(0.0)).sum();
        let down: f64 = d.features.iter().map(|f| f.add.min(0.0)).sum();
        let finite = d.scenarios.iter().all(|s| s.weight.is_finite()) && up.is_finite();
        if d.features.is_empty() || !finite {
            return;
        }
        for easy in &d.scenarios {
            for hard in &d.scenarios {
                let highest = (easy.weight + up).clamp(0.0, 1.0);
                let lowest = (hard.weight + down).clamp(0.0, 1.0);
                if easy.weight < hard.weight && highest > lowest + 1e-9 {
                    self.at_key(
                        at,
                        format!(
                            "the features can move a difficulty by {down:+} to {up:+}, so an item \
                             of `{}` (weight {}) could come out harder than one of `{}` (weight \
                             {}): keep the features' total within the gap between scenario weights",
                            easy.name, easy.weight, hard.name, hard.weight
                        ),
                    );
                    return;
                }
            }
        }
    }

    fn template(&mut self, t: &Template, at: YamlPath, known: &BTreeSet<&str>) {
        if let Some(e) = t.error() {
            self.at(at, format!("`{}`: {e}", t.text()));
            return;
        }
        let unknown: BTreeSet<&str> = t
            .names()
            .into_iter()
            .filter(|n| !known.contains(n))
            .collect();
        if !unknown.is_empty() {
            let latex_hint = if t.text().contains('\\') {
                "; in LaTeX, a brace that is not a placeholder needs a space after it, as in \\text{ cm}"
            } else {
                ""
            };
            self.at(
                at,
                format!(
                    "`{}` uses {} not defined (known: {}){latex_hint}",
                    t.text(),
                    unknown
                        .iter()
                        .map(|u| format!("{{{u}}}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            );
        }
    }

    /// Theme wordings: themes a student can choose, each with wordings
    /// over exactly the values one of the plain `stems` uses, so a theme
    /// retells the question and never hides a number or shows another.
    fn themes(
        &mut self,
        themes: &Themes,
        plain: &[Template],
        at: YamlPath,
        known: &BTreeSet<&str>,
    ) {
        let plain_values: Vec<BTreeSet<&str>> = plain
            .iter()
            .map(|t| t.names().into_iter().collect())
            .collect();
        for (i, (name, wordings)) in themes.0.iter().enumerate() {
            let here = at.key(name);
            if ExampleTheme::named(name).is_none() {
                let choices: Vec<&str> = ExampleTheme::ALL.iter().map(|t| t.as_str()).collect();
                self.at_key(
                    here,
                    format!(
                        "`{name}` is not a theme a student can choose (themes: {})",
                        choices.join(", ")
                    ),
                );
                continue;
            }
            if themes.0[..i].iter().any(|(n, _)| n == name) {
                self.at_key(here, format!("theme `{name}` is given twice"));
                continue;
            }
            if wordings.is_empty() {
                self.at(here, format!("theme `{name}` has no wordings"));
                continue;
            }
            for (j, t) in wordings.iter().enumerate() {
                let before = self.findings.len();
                self.template(t, here.index(j), known);
                if self.findings.len() > before {
                    continue;
                }
                let used: BTreeSet<&str> = t.names().into_iter().collect();
                let Some(nearest) = plain_values
                    .iter()
                    .min_by_key(|p| p.symmetric_difference(&used).count())
                else {
                    continue;
                };
                if *nearest == used {
                    continue;
                }
                let listed = |names: Vec<&&str>| {
                    names
                        .iter()
                        .map(|n| format!("{{{n}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let mut wrong = Vec::new();
                let missing: Vec<&&str> = nearest.difference(&used).collect();
                if !missing.is_empty() {
                    wrong.push(format!("leaves out {}", listed(missing)));
                }
                let extra: Vec<&&str> = used.difference(nearest).collect();
                if !extra.is_empty() {
                    wrong.push(format!("adds {}", listed(extra)));
                }
                self.at(
                    here.index(j),
                    format!(
                        "the `{name}` wording `{}` {}: a theme wording uses the same values as \
                         the plain stem it retells",
                        t.text(),
                        wrong.join(" and ")
                    ),
                );
            }
        }
    }

    fn check_wording(&mut self, known: &BTreeSet<&str>) {
        let bp = self.bp;
        let root = YamlPath::root();
        for (i, t) in bp.stems.iter().enumerate() {
            self.template(t, root.key("stems").index(i), known);
        }
        if let Some(t) = &bp.latex {
            self.template(t, root.key("latex"), known);
        }
        self.themes(&bp.themes, &bp.stems, root.key("themes"), known);
        for (i, s) in bp.difficulty.scenarios.iter().enumerate() {
            let at = scenario_path(i);
            for (j, t) in s.stems.iter().flatten().enumerate() {
                self.template(t, at.key("stems").index(j), known);
            }
            if let Some(themes) = &s.themes {
                self.themes(themes, bp.stems_for(s), at.key("themes"), known);
            }
            if let Some(t) = &s.latex {
                self.template(t, at.key("latex"), known);
            }
            if bp.stems_for(s).is_empty() {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no stems: give the blueprint or the scenario some",
                        s.name
                    ),
                );
            }
            if bp.latex_for(s).is_none() {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no latex: give the blueprint or the scenario one",
                        s.name
                    ),
                );
            }
        }
    }

    /// Steps and representations, wherever they are written, and that
    /// every scenario has both.
    fn check_explanations(&mut self, known: &BTreeSet<&str>) {
        let bp = self.bp;
        let root = YamlPath::root();
        self.steps(&bp.steps, root.key("steps"), known);
        self.representations(&bp.representations, root.key("representations"), known);
        for (i, s) in bp.difficulty.scenarios.iter().enumerate() {
            let at = scenario_path(i);
            if let Some(list) = &s.steps {
                self.steps(list, at.key("steps"), known);
            }
            if let Some(list) = &s.representations {
                self.representations(list, at.key("representations"), known);
            }
            if bp.steps_for(s).is_empty() {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no steps: give the blueprint or the scenario some, \
                         so hints can walk through the item",
                        s.name
                    ),
                );
            }
            if bp.representations_for(s).is_empty() {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no representations: give the blueprint or the \
                         scenario one, for a student the steps did not help",
                        s.name
                    ),
                );
            }
        }
    }

    fn steps(&mut self, list: &[SolutionStep], at: YamlPath, known: &BTreeSet<&str>) {
        let mut with_result = known.clone();
        with_result.insert(STEP_RESULT);
        for (i, step) in list.iter().enumerate() {
            let at = at.index(i);
            self.prose(&step.text, at.key("text"), &with_result);
            if step.text.error().is_none() && !step.text.names().contains(&STEP_RESULT) {
                self.at(
                    at.key("text"),
                    format!(
                        "`{}` does not say what the step gives: write {{{STEP_RESULT}}} where \
                         its value goes, as in \"Tens: {{at}} - {{bt}} = {{{STEP_RESULT}}}\"",
                        step.text.text()
                    ),
                );
            }
            self.formula(&step.value, at.key("value"), known, Shape::Number);
            if let Some(when) = &step.when {
                self.formula(when, at.key("when"), known, Shape::Condition);
            }
        }
    }

    fn representations(&mut self, list: &[Representation], at: YamlPath, known: &BTreeSet<&str>) {
        for (i, r) in list.iter().enumerate() {
            let at = at.index(i);
            if !is_slug(&r.kind) {
                self.at(
                    at.key("kind"),
                    format!(
                        "kind `{}` must be lowercase letters, digits and _, such as number_line",
                        r.kind
                    ),
                );
            }
            self.prose(&r.text, at.key("text"), known);
            if let Some(when) = &r.when {
                self.formula(when, at.key("when"), known, Shape::Condition);
            }
        }
    }

    /// A template of plain words (a step, a representation): its names
    /// must exist, its formulas be numbers, and it has no stray braces.
    fn prose(&mut self, t: &Template, at: YamlPath, known: &BTreeSet<&str>) {
        let before = self.findings.len();
        self.template(t, at.clone(), known);
        if self.findings.len() > before {
            return;
        }
        for e in t.formulas() {
            if let Err(problem) = shape(e).and_then(|s| match s {
                Shape::Number => Ok(()),
                Shape::Condition => Err(format!("`{{{e}}}` is a condition, not a number")),
            }) {
                self.at(at.clone(), format!("`{}`: {problem}", t.text()));
                return;
            }
        }
        if t.literal_text().contains(['{', '}']) {
            self.at(
                at,
                format!(
                    "`{}` has a brace that is not a placeholder: a placeholder starts with a \
                     letter, as in {{bo + 10}} (not {{10 + bo}})",
                    t.text()
                ),
            );
        }
    }

    fn check_answers(&mut self, known: &BTreeSet<&str>) {
        let bp = self.bp;
        let root = YamlPath::root();
        if let Some(answer) = &bp.answer {
            self.answer(answer, root.key("answer"), known);
        }
        self.distractors(
            &bp.distractors,
            bp.answer.as_ref(),
            root.key("distractors"),
            known,
        );
        let needed = bp.presentation.options.saturating_sub(1);
        for (i, s) in bp.difficulty.scenarios.iter().enumerate() {
            let at = scenario_path(i);
            if let Some(answer) = &s.answer {
                self.answer(answer, at.key("answer"), known);
            }
            let answer = bp.answer_for(s);
            if answer.is_none() {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has no answer: give the blueprint or the scenario one",
                        s.name
                    ),
                );
            }
            if let Some(list) = &s.distractors {
                self.distractors(list, answer, at.key("distractors"), known);
            }
            let offered = bp.distractors_for(s).len();
            if offered < needed {
                self.at(
                    at.key("name"),
                    format!(
                        "scenario `{}` has {offered} distractor strategies; {} options need at \
                         least {needed}",
                        s.name, bp.presentation.options
                    ),
                );
            }
            if bp.evaluation.simplest_form
                && answer.is_some_and(|a| a.kind != AnswerShape::Fraction)
            {
                self.at(
                    root.key("evaluation").key("simplest_form"),
                    "simplest_form only applies to fraction answers",
                );
            }
        }
    }

    fn values(
        &mut self,
        values: &Formulas,
        kind: AnswerShape,
        at: YamlPath,
        known: &BTreeSet<&str>,
    ) {
        if !kind.parts().contains(&values.0.len()) {
            let parts = kind.parts();
            let wanted = if parts.start() == parts.end() {
                parts.start().to_string()
            } else {
                format!("{} or {}", parts.start(), parts.end())
            };
            self.at(
                at,
                format!(
                    "a {} value takes {wanted} formula(s), not {}",
                    kind.as_str(),
                    values.0.len()
                ),
            );
            return;
        }
        for (i, f) in values.0.iter().enumerate() {
            self.formula(f, at.index(i), known, Shape::Number);
        }
    }

    fn answer(&mut self, answer: &AnswerSpec, at: YamlPath, known: &BTreeSet<&str>) {
        self.values(&answer.value, answer.kind, at.key("value"), known);
        if let Some(v) = &answer.variable
            && !crate::text::template::is_identifier(v)
        {
            self.at(
                at.key("variable"),
                format!("`{v}` is not a variable name such as x"),
            );
        }
        if answer.unit.as_deref().is_some_and(|u| u.trim().is_empty()) {
            self.at(at.key("unit"), "unit is empty");
        }
    }

    fn distractors(
        &mut self,
        list: &[Distractor],
        answer: Option<&AnswerSpec>,
        at: YamlPath,
        known: &BTreeSet<&str>,
    ) {
        for (i, d) in list.iter().enumerate() {
            let at = at.index(i);
            if !is_slug(&d.strategy) {
                self.at(
                    at.key("strategy"),
                    format!(
                        "strategy `{}` must be lowercase letters, digits and _",
                        d.strategy
                    ),
                );
            }
            if let Some(tag) = &d.mistake_tag
                && !is_slug(tag)
            {
                self.at(
                    at.key("mistake_tag"),
                    format!("mistake tag `{tag}` must be lowercase letters, digits and _"),
                );
            }
            if let Some(when) = &d.when {
                self.formula(when, at.key("when"), known, Shape::Condition);
            }
            let kind = d.kind.or(answer.map(|a| a.kind));
            match (&d.value, BuiltinStrategy::from_name(&d.strategy)) {
                (Some(values), _) => {
                    if let Some(kind) = kind {
                        self.values(values, kind, at.key("value"), known);
                    }
                }
                (None, Some(builtin)) => {
                    if d.kind.is_some() {
                        self.at(
                            at.key("kind"),
                            "a built-in strategy keeps the answer's kind",
                        );
                    } else if let Some(kind) = kind
                        && !builtin.applies_to(kind)
                    {
                        self.at(
                            at.key("strategy"),
                            format!(
                                "`{}` cannot change a {} answer: give a `value`",
                                d.strategy,
                                kind.as_str()
                            ),
                        );
                    }
                }
                (None, None) => self.at(
                    at.key("strategy"),
                    format!(
                        "`{}` is not built in ({}): give it a `value` formula",
                        d.strategy,
                        BuiltinStrategy::NAMES.join(", ")
                    ),
                ),
            }
        }
    }

    fn check_presentation(&mut self) {
        let bp = self.bp;
        let root = YamlPath::root();
        let p = &bp.presentation;
        if !(2..=8).contains(&p.options) {
            self.at(
                root.key("presentation").key("options"),
                "must be between 2 and 8 options",
            );
        }
        if p.time_limit_seconds == Some(0) {
            self.at(
                root.key("presentation").key("time_limit_seconds"),
                "must be at least 1 second",
            );
        }
        let e = &bp.evaluation;
        let at = root.key("evaluation");
        match (e.method, e.tolerance) {
            (EvaluationMethod::NumericTolerance, None) => {
                self.at_key(at.key("method"), "numeric_tolerance needs a `tolerance`")
            }
            (EvaluationMethod::NumericTolerance, Some(t)) if !(t > 0.0 && t.is_finite()) => {
                self.at(at.key("tolerance"), "tolerance must be a positive number")
            }
            (EvaluationMethod::NumericTolerance, Some(_)) => {}
            (_, Some(_)) => self.at_key(
                at.key("tolerance"),
                "tolerance only applies to method numeric_tolerance",
            ),
            (_, None) => {}
        }
        if e.method == EvaluationMethod::MultipleChoice && p.format == ItemFormat::Typed {
            self.at(
                at.key("method"),
                "multiple_choice grading needs presentation format multiple_choice",
            );
        }
    }

    fn check_benchmarks(&mut self) {
        let Some(b) = &self.bp.benchmarks else { return };
        let at = YamlPath::root().key("benchmarks");
        let levels = [
            ("novice", b.novice),
            ("competent", b.competent),
            ("expert", b.expert),
        ];
        for (name, level) in levels {
            if !(0.0..=1.0).contains(&level.accuracy) {
                self.at(at.key(name).key("accuracy"), "accuracy must be in [0, 1]");
            }
            if !(level.seconds > 0.0 && level.seconds.is_finite()) {
                self.at(at.key(name).key("seconds"), "seconds must be positive");
            }
        }
        for pair in levels.windows(2) {
            let ((lower, l), (higher, h)) = (pair[0], pair[1]);
            if h.accuracy < l.accuracy || h.seconds > l.seconds {
                self.at_key(
                    at.key(higher),
                    format!("{higher} must be at least as accurate and as fast as {lower}"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::ParseOptions;

    fn shape_of(text: &str) -> Result<Shape, String> {
        shape(&parse(text, ParseOptions::formula()).unwrap())
    }

    #[test]
    fn shapes_are_checked_without_evaluating() {
        assert_eq!(shape_of("a + b * 2"), Ok(Shape::Number));
        assert_eq!(
            shape_of("mod(a, 10) >= 5 and not b < 3"),
            Ok(Shape::Condition)
        );
        assert!(shape_of("(a > 1) + 2").is_err());
        assert!(shape_of("a and b > 1").is_err());
    }

    #[test]
    fn reserved_words_are_not_usable_names() {
        for ok in ["a", "op1", "tens_a", "x"] {
            assert!(usable_name(ok), "{ok}");
        }
        for bad in ["mod", "Mod", "pi", "and", "1a", "a b", "", "a-b"] {
            assert!(!usable_name(bad), "{bad}");
        }
    }
}
