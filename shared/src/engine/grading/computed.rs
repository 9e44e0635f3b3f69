//! Grading numbers, expressions and equations: the chosen candidate
//! against the expected answer's shape.

use std::ops::Range;

use super::algebra::{self, Comparison, Relation};
use super::context::Context;
use super::expected::{
    ExpectedShape, ParsedExpected, evaluate, is_solution, solved_form, solves_for,
};
use super::extract::{self, Candidate, Shape};
use super::numeric::{self, Quantity};
use super::pasted::{self, Stripped};
use super::pick::{Pick, pick};
use super::{Grade, SlipTag, Verdict, latex, quote, show_number};
use crate::content::workflow::GradingSettings;
use crate::math::{self, Expr, Number};
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

pub(super) fn computed(
    expected: &ExpectedAnswer,
    answer: &str,
    question: Option<&str>,
    settings: &GradingSettings,
) -> Grade {
    let spec = match ParsedExpected::read(expected) {
        Ok(spec) => spec,
        Err(e) => {
            return Grade::unverifiable(format!(
                "the expected answer {} could not be read: {e}",
                quote(&expected.value)
            ));
        }
    };
    // A boxed answer is the answer; a pasted copy of the question is not.
    let mut focus = latex::boxed_range(answer).map_or(answer, |r| &answer[r]);
    let stripped;
    match question.and_then(|q| pasted::strip_question(focus, q)) {
        Some(Stripped::Only) => return pasted::verdict().into_grade(None),
        Some(Stripped::Rest(rest)) => {
            stripped = rest;
            focus = &stripped;
        }
        None => {}
    }
    let context = Context {
        kind: spec.kind,
        variables: &spec.variables,
        all_letters: false,
        unit: spec.unit.as_ref(),
    };
    let extraction = extract::extract(focus, &context);
    let question_shape = question.and_then(|q| pasted::question_math(q, &context));
    let grader = Grader {
        spec: &spec,
        expected_text: &expected.value,
        settings,
        hedged: extraction.hedged,
        question: question_shape.as_ref(),
    };
    let (verdict, graded) = match &spec.shape {
        ExpectedShape::Number(target) => grader.number(*target, &extraction.candidates),
        ExpectedShape::Expression(target) => grader.expression(target, &extraction.candidates),
        ExpectedShape::Solutions { variable, values } => {
            grader.solutions(variable, values, &extraction.candidates)
        }
        ExpectedShape::Relation(target, defined) => {
            grader.relation(target, defined.as_ref(), &extraction.candidates)
        }
    };
    let extracted = graded.map(|range| extraction.text.original(focus, range).to_owned());
    verdict.into_grade(extracted)
}

struct Grader<'a> {
    spec: &'a ParsedExpected,
    expected_text: &'a str,
    settings: &'a GradingSettings,
    hedged: bool,
    question: Option<&'a Shape>,
}

type Graded = (Verdict, Option<Range<usize>>);

/// Why a candidate is not a plain value.
enum NotAValue {
    /// An equation still to solve.
    Unsolved(Relation),
    Other(String),
}

impl Grader<'_> {
    fn seed(&self, candidate: &Candidate) -> u64 {
        algebra::seed_of(&[self.expected_text, &candidate.rendered])
    }

    fn is_pasted(&self, candidate: &Candidate) -> bool {
        self.question
            .is_some_and(|q| candidate.shape.as_ref().is_ok_and(|s| s == q))
    }

    /// The value a candidate gives: `12`, `x = 12`, `3 × 4 = 12`.
    fn value_of(&self, candidate: &Candidate) -> Result<Number, NotAValue> {
        let shape = candidate
            .shape
            .as_ref()
            .map_err(|e| NotAValue::Other(e.clone()))?;
        let expr = match shape {
            Shape::Value(e) => e,
            Shape::Chain(parts) => match solved_form(candidate) {
                Some((_, value)) => value,
                None if parts.iter().all(|p| p.variables().is_empty()) => parts
                    .last()
                    .ok_or_else(|| NotAValue::Other("nothing to read".into()))?,
                None => {
                    let (first, last) = (&parts[0], &parts[parts.len() - 1]);
                    return Err(NotAValue::Unsolved(Relation::new(
                        math::CompareOp::Eq,
                        first,
                        last,
                    )));
                }
            },
            Shape::Relation(_) => {
                return Err(NotAValue::Other(
                    "an inequality was given where a value is expected".into(),
                ));
            }
        };
        if !expr.variables().is_empty() {
            return Err(NotAValue::Other(format!(
                "`{}` is an expression in {}, not a value",
                candidate.original,
                expr.variables().join(", ")
            )));
        }
        evaluate(expr)
            .map_err(|e| NotAValue::Other(format!("`{}` has no value: {e}", candidate.original)))
    }

    fn key(&self, candidate: &Candidate) -> String {
        match self.value_of(candidate) {
            Ok(n) => show_number(n),
            Err(_) => candidate.rendered.clone(),
        }
    }

    fn quantity(&self, candidate: &Candidate, value: Number) -> Quantity {
        Quantity {
            value,
            unit: candidate.unit.clone(),
            literal: candidate.literal.clone(),
            form: candidate.form,
        }
    }

    fn no_answer(&self, pick: Pick) -> Graded {
        match pick {
            Pick::Ambiguous(why) => (
                Verdict::unverifiable(format!("cannot tell which answer is meant: {why}")),
                None,
            ),
            _ => (
                Verdict::unverifiable(match self.spec.kind {
                    AnswerKind::Expression => "no expression found in the message",
                    AnswerKind::Equation => "no solution found in the message",
                    _ => "no number found in the message",
                }),
                None,
            ),
        }
    }

    /// An equation given where a value or a solution is expected: a step
    /// towards it (unverifiable) or a step that goes wrong.
    fn unsolved(
        &self,
        candidate: &Candidate,
        relation: &Relation,
        target: Option<Number>,
    ) -> Verdict {
        let variables = relation.difference.variables();
        let solution = match variables.as_slice() {
            [v] => algebra::solve_linear(&relation.difference, v, self.seed(candidate))
                .map(|s| (v.to_string(), s)),
            _ => None,
        };
        let verdict = match (solution, target) {
            (Some((v, s)), Some(t)) if s.approx_eq(t) => Verdict::unverifiable(format!(
                "`{}` is a step towards the answer, not the answer: it still has to be solved for {v}",
                candidate.original
            )),
            (Some((v, s)), Some(t)) => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!(
                    "`{}` gives {v} = {}, not the expected {}",
                    candidate.original,
                    show_number(s),
                    show_number(t)
                ),
                normalized: Some(format!("{v} = {}", show_number(s))),
            },
            _ => Verdict::unverifiable(format!(
                "`{}` is an equation, not a solution",
                candidate.original
            )),
        };
        verdict.tagged(SlipTag::NotSolved)
    }

    fn number(&self, target: Number, candidates: &[Candidate]) -> Graded {
        let pick = pick(candidates, |c| self.key(c), |c| self.value_of(c).is_ok());
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted::verdict(), range);
        }
        let verdict = match self.value_of(candidate) {
            Ok(value) => numeric::compare(
                &self.quantity(candidate, value),
                &Quantity {
                    unit: self.spec.unit.clone(),
                    form: self.spec.form,
                    ..Quantity::plain(target)
                },
                self.settings,
            ),
            Err(NotAValue::Unsolved(relation)) => self.unsolved(candidate, &relation, Some(target)),
            Err(NotAValue::Other(why)) => Verdict::unverifiable(why),
        };
        (verdict, range)
    }

    fn expression(&self, target: &Expr, candidates: &[Candidate]) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Value(_) | Shape::Chain(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted::verdict(), range);
        }
        let student = match &candidate.shape {
            Ok(Shape::Value(e)) => e,
            // `y = 2x + 3` names the expression; a chain of working ends in it.
            Ok(Shape::Chain(parts)) => match &parts[0] {
                Expr::Var(v) if parts.len() == 2 && !self.spec.variables.contains(v) => &parts[1],
                _ => &parts[parts.len() - 1],
            },
            Ok(Shape::Relation(_)) => {
                return (
                    Verdict::unverifiable(
                        "an inequality was given where an expression is expected",
                    ),
                    range,
                );
            }
            Err(e) => return (Verdict::unverifiable(e.clone()), range),
        };
        let normalized = Some(student.to_string());
        let shown = format!("`{}`", student);
        let verdict = match algebra::compare_values(
            target,
            student,
            self.seed(candidate),
            self.settings.equivalence_points,
        ) {
            Comparison::Equal => {
                let mut v = Verdict {
                    outcome: GradeOutcome::Correct,
                    tags: Vec::new(),
                    reason: format!("{shown} is equivalent to the expected `{target}`"),
                    normalized,
                };
                if algebra::has_uncollected_terms(student)
                    && !algebra::has_uncollected_terms(target)
                {
                    v = v.tagged(SlipTag::Unsimplified);
                }
                v
            }
            Comparison::Negated => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: vec![SlipTag::SignError],
                reason: format!("{shown} is the expected `{target}` with the opposite sign"),
                normalized,
            },
            Comparison::Different => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!("{shown} is not equivalent to the expected `{target}`"),
                normalized,
            },
            Comparison::Unknown(why) => {
                Verdict::unverifiable(format!("{shown} could not be compared: {why}"))
            }
        };
        (verdict, range)
    }

    fn solutions(&self, variable: &str, values: &[Number], candidates: &[Candidate]) -> Graded {
        if !candidates.iter().any(|c| c.offered() && is_solution(c)) {
            return self.unsolved_only(variable, values, candidates);
        }
        if values.len() == 1 {
            return self.one_solution(variable, values[0], candidates);
        }
        let solved: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| c.offered() && solves_for(c, variable))
            .collect();
        if solved.is_empty() {
            let verdict = Verdict {
                outcome: GradeOutcome::Wrong,
                tags: vec![SlipTag::WrongVariable],
                reason: format!("the values given are not for {variable}"),
                normalized: None,
            };
            return (verdict, None);
        }
        // Several solutions: the set the student gives against the set expected.
        let mut given: Vec<(Number, &Candidate)> = Vec::new();
        for c in &solved {
            if let Ok(v) = self.value_of(c)
                && !given.iter().any(|(g, _)| g.approx_eq(v))
            {
                given.push((v, c));
            }
        }
        let range = solved
            .first()
            .map(|c| c.range.start..solved.last().map_or(c.range.end, |l| l.range.end));
        let found = values
            .iter()
            .filter(|v| given.iter().any(|(g, _)| g.approx_eq(**v)))
            .count();
        let extra = given
            .iter()
            .filter(|(g, _)| !values.iter().any(|v| v.approx_eq(*g)))
            .count();
        let shown: Vec<String> = given
            .iter()
            .map(|(g, _)| format!("{variable} = {}", show_number(*g)))
            .collect();
        let expected: Vec<String> = values
            .iter()
            .map(|v| format!("{variable} = {}", show_number(*v)))
            .collect();
        let (outcome, tags) = match (found, extra) {
            (f, 0) if f == values.len() => (GradeOutcome::Correct, vec![]),
            (f, 0) if f > 0 => (GradeOutcome::Close, vec![SlipTag::MissingSolution]),
            (f, _) if f > 0 => (GradeOutcome::Wrong, vec![SlipTag::ExtraSolution]),
            _ => (GradeOutcome::Wrong, vec![]),
        };
        let verdict = Verdict {
            outcome,
            tags,
            reason: format!(
                "gave {}; expected {} ({found} of {} found, {extra} extra)",
                shown.join(" or "),
                expected.join(" or "),
                values.len()
            ),
            normalized: Some(shown.join(" or ")),
        };
        (verdict, range)
    }

    fn one_solution(&self, variable: &str, target: Number, candidates: &[Candidate]) -> Graded {
        // Values for the right letter first; else any, to name the slip.
        let right_letter = candidates
            .iter()
            .any(|c| c.offered() && solves_for(c, variable));
        let preferred = |c: &Candidate| {
            if right_letter {
                solves_for(c, variable)
            } else {
                is_solution(c)
            }
        };
        let pick = pick(candidates, |c| self.key(c), preferred);
        let candidate = match pick {
            Pick::One(c) => c,
            // `x = 4 or x = -4` stated (not asked): a claim of two solutions.
            Pick::Ambiguous(_) if !self.hedged => {
                let claimed: Vec<&Candidate> = candidates
                    .iter()
                    .filter(|c| c.offered() && preferred(c))
                    .collect();
                let values: Vec<Number> = claimed
                    .iter()
                    .filter_map(|c| self.value_of(c).ok())
                    .collect();
                if values.len() > 1 {
                    let right = values.iter().any(|v| v.approx_eq(target));
                    let range = claimed.first().map(|f| {
                        f.range.start..claimed.last().map_or(f.range.end, |l| l.range.end)
                    });
                    let shown: Vec<String> = values
                        .iter()
                        .map(|v| format!("{variable} = {}", show_number(*v)))
                        .collect();
                    let verdict = Verdict {
                        outcome: GradeOutcome::Wrong,
                        tags: if right {
                            vec![SlipTag::ExtraSolution]
                        } else {
                            vec![]
                        },
                        reason: format!(
                            "gave {}, but the only solution is {variable} = {}",
                            shown.join(" or "),
                            show_number(target)
                        ),
                        normalized: Some(shown.join(" or ")),
                    };
                    return (verdict, range);
                }
                return self.no_answer(pick);
            }
            other => return self.no_answer(other),
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted::verdict(), range);
        }
        let value = match self.value_of(candidate) {
            Ok(v) => v,
            Err(NotAValue::Unsolved(relation)) => {
                return (self.unsolved(candidate, &relation, Some(target)), range);
            }
            Err(NotAValue::Other(why)) => return (Verdict::unverifiable(why), range),
        };
        let mut verdict = numeric::compare(
            &self.quantity(candidate, value),
            &Quantity {
                unit: self.spec.unit.clone(),
                form: self.spec.form,
                ..Quantity::plain(target)
            },
            self.settings,
        );
        let named = solved_form(candidate).map(|(v, _)| v);
        if let Some(name) = named.as_deref() {
            verdict.normalized = verdict.normalized.map(|n| format!("{name} = {n}"));
            if name != variable {
                // The right value for another letter is a slip, not a solution.
                if verdict.outcome == GradeOutcome::Correct {
                    verdict.outcome = GradeOutcome::Close;
                }
                verdict.reason = format!("{} (but for {name}, not {variable})", verdict.reason);
                verdict = verdict.tagged(SlipTag::WrongVariable);
            }
        }
        (verdict, range)
    }

    /// No solution given, only equations: a restated question or a step.
    fn unsolved_only(&self, variable: &str, values: &[Number], candidates: &[Candidate]) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Chain(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted::verdict(), range);
        }
        match self.value_of(candidate) {
            Err(NotAValue::Unsolved(relation)) => {
                let target = (values.len() == 1).then(|| values[0]);
                (self.unsolved(candidate, &relation, target), range)
            }
            Err(NotAValue::Other(why)) => (Verdict::unverifiable(why), range),
            Ok(_) => (
                Verdict::unverifiable(format!("no value for {variable} found")),
                range,
            ),
        }
    }

    fn relation(
        &self,
        target: &Relation,
        defined: Option<&Expr>,
        candidates: &[Candidate],
    ) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Chain(_) | Shape::Relation(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted::verdict(), range);
        }
        let student = match &candidate.shape {
            Ok(Shape::Chain(parts)) => {
                Relation::new(math::CompareOp::Eq, &parts[0], &parts[parts.len() - 1])
            }
            Ok(Shape::Relation(e)) => match Relation::from_expr(e) {
                Some(r) => r,
                None => return (Verdict::unverifiable("not a relation"), range),
            },
            // `2x + 1` for `y = 2x + 1`: the expression the equation defines.
            Ok(Shape::Value(_)) if defined.is_some() => {
                return match defined {
                    Some(expr) => self.expression(expr, std::slice::from_ref(candidate)),
                    None => (Verdict::unverifiable("not a relation"), range),
                };
            }
            Ok(Shape::Value(_)) => {
                return (
                    Verdict::unverifiable(format!(
                        "`{}` is an expression; an equation is expected",
                        candidate.original
                    )),
                    range,
                );
            }
            Err(e) => return (Verdict::unverifiable(e.clone()), range),
        };
        let shown = format!("`{}`", candidate.original);
        let normalized = Some(candidate.rendered.clone());
        let verdict = match algebra::compare_relations(
            target,
            &student,
            self.seed(candidate),
            self.settings.equivalence_points,
        ) {
            Comparison::Equal => Verdict {
                outcome: GradeOutcome::Correct,
                tags: Vec::new(),
                reason: format!("{shown} is equivalent to the expected relation"),
                normalized,
            },
            Comparison::Unknown(why) => {
                Verdict::unverifiable(format!("{shown} could not be compared: {why}"))
            }
            _ => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!("{shown} is not equivalent to the expected relation"),
                normalized,
            },
        };
        (verdict, range)
    }
}
