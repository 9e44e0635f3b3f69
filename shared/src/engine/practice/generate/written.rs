//! Writing an answer, or a wrong answer, as it is shown (`x = 4`, `12 cm`,
//! `26 r 2`), and the wrong answers the built-in strategies make.

use super::{Env, number};
use crate::content::blueprint::{
    AnswerShape, AnswerSpec, BuiltinStrategy, Distractor, Formulas, MAX_PLACES,
};
use crate::engine::rng::SplitMix64;
use crate::math::{Number, Rational};
use crate::text::template::{Format, format_number, format_rational};

/// An answer (or a wrong answer) as it is shown.
#[derive(Debug, Clone)]
pub(super) struct Written {
    /// With the variable and unit: `x = 4`.
    pub(super) text: String,
    /// Without them: `4`.
    pub(super) value: String,
    /// The number it stands for, for the numeric kinds.
    pub(super) number: Option<Rational>,
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
    pub(super) fn same_as(&self, answer: &Written, simplest_form: bool) -> bool {
        if self.text == answer.text || self.value == answer.value {
            return true;
        }
        match (self.number, answer.number) {
            (Some(a), Some(b)) if a == b => !(simplest_form && self.unsimplified),
            _ => false,
        }
    }
}

pub(super) fn exact(n: Number, what: &str) -> Result<Rational, String> {
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

pub(super) fn evaluate_all(formulas: &Formulas, env: &Env<'_>) -> Result<Vec<Number>, String> {
    formulas.0.iter().map(|f| number(f, env)).collect()
}

/// Writes `values` as a value of `kind`, decorated like `answer`.
pub(super) fn write(
    answer: &AnswerSpec,
    kind: AnswerShape,
    values: &[Number],
) -> Result<Written, String> {
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
pub(super) fn builtin(
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
pub(super) fn builtin_both_ways(
    d: &Distractor,
    right: &Written,
    answer: &AnswerSpec,
) -> Vec<Written> {
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
