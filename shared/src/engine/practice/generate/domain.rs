//! The values a parameter can take, and drawing one of them.

use std::collections::BTreeSet;

use crate::content::blueprint::{MAX_PLACES, Parameter, ParameterKind};
use crate::engine::rng::SplitMix64;
use crate::math::Rational;

/// The values a parameter can take.
#[derive(Debug, Clone)]
pub(super) struct Domain {
    values: DomainValues,
    pub(super) exclude: Vec<Rational>,
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
    pub(super) fn of(p: &Parameter) -> Result<Domain, String> {
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

    pub(super) fn draw(&self, rng: &mut SplitMix64) -> Option<Rational> {
        let value = match &self.values {
            DomainValues::Range { start, step, count } => {
                let k = Rational::integer(i128::from(rng.below(*count)));
                start.checked_add(step.checked_mul(k).ok()?).ok()?
            }
            DomainValues::List(values) => values[rng.index(values.len())],
        };
        Some(value)
    }

    pub(super) fn contains(&self, value: Rational) -> bool {
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
