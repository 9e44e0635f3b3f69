//! Reading the expected answer once: a number, an expression, the
//! solutions of an equation (`x = ±2`) or a relation (`y = 2x + 1`), with
//! its unit and the letters it uses.

use super::algebra::Relation;
use super::context::Context;
use super::extract::{self, Candidate, Form, Shape};
use super::units::{self, Unit};
use crate::math::{self, Expr, Number, Value};
use crate::model::{AnswerKind, ExpectedAnswer};

pub(super) fn evaluate(expr: &Expr) -> Result<Number, String> {
    match math::evaluate(expr, &|_| None) {
        Ok(Value::Num(n)) => Ok(n),
        Ok(Value::Bool(_)) => Err("a comparison, not a value".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// What the expected answer says, read once.
pub(super) struct ParsedExpected {
    pub kind: AnswerKind,
    pub shape: ExpectedShape,
    pub unit: Option<Unit>,
    /// How the expected value is written (`√2` and `9π` are final forms).
    pub form: Form,
    pub variables: Vec<String>,
}

pub(super) enum ExpectedShape {
    Number(Number),
    Expression(Expr),
    /// `x = 4`, `x = ±2`, `x = 2 or x = -2`.
    Solutions {
        variable: String,
        values: Vec<Number>,
    },
    /// An equation or inequality not in solved form (`y = 2x + 1`, `x > 3`),
    /// with the expression it defines when it reads `y = …`.
    Relation(Relation, Option<Expr>),
}

/// A value for some letter, or a bare value (`x = 4`, `4`).
pub(super) fn is_solution(candidate: &Candidate) -> bool {
    solved_form(candidate).is_some()
        || matches!(candidate.shape, Ok(Shape::Value(ref e)) if e.variables().is_empty())
}

/// A value for `variable`, or a bare value.
pub(super) fn solves_for(candidate: &Candidate, variable: &str) -> bool {
    match solved_form(candidate) {
        Some((v, _)) => v == variable,
        None => is_solution(candidate),
    }
}

/// `x = 4` or `4 = x`: a lone variable and a constant.
pub(super) fn solved_form(candidate: &Candidate) -> Option<(String, &Expr)> {
    match candidate.shape.as_ref().ok()? {
        Shape::Chain(parts) => {
            let last = parts.last()?;
            let constant = |e: &Expr| e.variables().is_empty();
            match (parts.first()?, last) {
                (Expr::Var(v), value) if parts[1..].iter().all(constant) => {
                    Some((v.clone(), value))
                }
                (first, Expr::Var(v)) if parts.len() == 2 && constant(first) => {
                    Some((v.clone(), first))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

impl ParsedExpected {
    pub fn read(expected: &ExpectedAnswer) -> Result<ParsedExpected, String> {
        let field_unit = expected.unit.as_deref().and_then(units::parse_expected);
        let context = Context {
            kind: expected.kind,
            variables: &[],
            all_letters: true,
            unit: field_unit.as_ref(),
        };
        let extraction = extract::extract(&expected.value, &context);
        let candidates = extraction.candidates;
        if let Some(e) = candidates.iter().find_map(|c| c.shape.as_ref().err()) {
            return Err(e.clone());
        }
        let [first, ..] = candidates.as_slice() else {
            return Err("it contains no value".to_owned());
        };
        let unit = field_unit.or_else(|| first.unit.clone());
        let one = || -> Result<&Candidate, String> {
            match candidates.as_slice() {
                [c] => Ok(c),
                _ => Err("it contains several values".to_owned()),
            }
        };
        let shape = match expected.kind {
            AnswerKind::Equation => {
                let solved: Vec<(String, &Expr)> =
                    candidates.iter().filter_map(solved_form).collect();
                if solved.len() == candidates.len() && solved.iter().all(|(v, _)| *v == solved[0].0)
                {
                    ExpectedShape::Solutions {
                        variable: solved[0].0.clone(),
                        values: solved
                            .iter()
                            .map(|(_, e)| evaluate(e))
                            .collect::<Result<_, _>>()?,
                    }
                } else {
                    match &one()?.shape {
                        Ok(Shape::Chain(parts)) if parts.len() == 2 => {
                            let defined = match &parts[0] {
                                Expr::Var(v) if !parts[1].variables().contains(&v.as_str()) => {
                                    Some(parts[1].clone())
                                }
                                _ => None,
                            };
                            ExpectedShape::Relation(
                                Relation::new(math::CompareOp::Eq, &parts[0], &parts[1]),
                                defined,
                            )
                        }
                        Ok(Shape::Relation(e)) => ExpectedShape::Relation(
                            Relation::from_expr(e).ok_or("it is not a relation")?,
                            None,
                        ),
                        Ok(Shape::Value(e)) if e.variables().is_empty() => {
                            ExpectedShape::Number(evaluate(e)?)
                        }
                        _ => return Err("it is not an equation".to_owned()),
                    }
                }
            }
            _ => {
                let c = one()?;
                let value = match (solved_form(c), &c.shape) {
                    (Some((_, value)), _) => value.clone(),
                    (None, Ok(Shape::Value(e))) => e.clone(),
                    // `y = 2x + 1` as an expression: its right-hand side.
                    (None, Ok(Shape::Chain(parts)))
                        if parts.len() == 2 && matches!(parts[0], Expr::Var(_)) =>
                    {
                        parts[1].clone()
                    }
                    _ => return Err("it is not a single value".to_owned()),
                };
                if value.variables().is_empty() {
                    ExpectedShape::Number(evaluate(&value)?)
                } else if expected.kind == AnswerKind::Number {
                    return Err(format!(
                        "a number was expected but it uses {}",
                        value.variables().join(", ")
                    ));
                } else {
                    ExpectedShape::Expression(value)
                }
            }
        };
        let mut variables: Vec<String> = match &shape {
            ExpectedShape::Expression(e) => e.variables().iter().map(|v| v.to_string()).collect(),
            ExpectedShape::Solutions { variable, .. } => vec![variable.clone()],
            ExpectedShape::Relation(r, _) => r
                .difference
                .variables()
                .iter()
                .map(|v| v.to_string())
                .collect(),
            ExpectedShape::Number(_) => Vec::new(),
        };
        variables.sort();
        variables.dedup();
        Ok(ParsedExpected {
            kind: expected.kind,
            form: first.form,
            shape,
            unit,
            variables,
        })
    }
}
