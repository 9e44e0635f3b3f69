//! Numbers that stay exact while they can and fall back to floating point
//! (square roots of non-squares, values beyond i128).

use std::cmp::Ordering;
use std::fmt;

use super::{MathError, Rational};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Exact(Rational),
    Approx(f64),
}

/// The result of evaluating an expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Num(Number),
    Bool(bool),
}

/// Relative tolerance when at least one side is approximate.
const APPROX_EQ: f64 = 1e-9;

impl Number {
    pub fn int(n: i128) -> Number {
        Number::Exact(Rational::integer(n))
    }

    pub fn to_f64(self) -> f64 {
        match self {
            Number::Exact(r) => r.to_f64(),
            Number::Approx(f) => f,
        }
    }

    pub fn exact(self) -> Option<Rational> {
        match self {
            Number::Exact(r) => Some(r),
            Number::Approx(_) => None,
        }
    }

    /// The value as an integer, if it is one exactly.
    pub fn as_integer(self) -> Option<i128> {
        self.exact().filter(|r| r.is_integer()).map(Rational::numer)
    }

    fn approx(value: f64) -> Result<Number, MathError> {
        if value.is_finite() {
            Ok(Number::Approx(value))
        } else if value.is_nan() {
            Err(MathError::Domain("the result is not a number".into()))
        } else {
            Err(MathError::TooLarge)
        }
    }

    /// Applies `exact` when both sides are exact and it succeeds, else `float`.
    fn combine(
        self,
        other: Number,
        exact: impl Fn(Rational, Rational) -> Result<Rational, MathError>,
        float: impl Fn(f64, f64) -> f64,
    ) -> Result<Number, MathError> {
        if let (Number::Exact(a), Number::Exact(b)) = (self, other) {
            match exact(a, b) {
                Ok(r) => return Ok(Number::Exact(r)),
                Err(MathError::TooLarge) => {}
                Err(e) => return Err(e),
            }
        }
        Number::approx(float(self.to_f64(), other.to_f64()))
    }

    pub fn checked_add(self, other: Number) -> Result<Number, MathError> {
        self.combine(other, Rational::checked_add, |a, b| a + b)
    }

    pub fn checked_sub(self, other: Number) -> Result<Number, MathError> {
        self.combine(other, Rational::checked_sub, |a, b| a - b)
    }

    pub fn checked_mul(self, other: Number) -> Result<Number, MathError> {
        self.combine(other, Rational::checked_mul, |a, b| a * b)
    }

    pub fn checked_div(self, other: Number) -> Result<Number, MathError> {
        if other.to_f64() == 0.0 {
            return Err(MathError::DivisionByZero);
        }
        self.combine(other, Rational::checked_div, |a, b| a / b)
    }

    /// Powers with integer exponents stay exact; others use floating point.
    pub fn checked_pow(self, exp: Number) -> Result<Number, MathError> {
        if self.to_f64() == 0.0 && exp.to_f64() < 0.0 {
            return Err(MathError::DivisionByZero);
        }
        if let (Number::Exact(base), Some(e)) = (self, exp.as_integer()) {
            let e = i64::try_from(e).map_err(|_| MathError::TooLarge)?;
            match base.checked_pow(e) {
                Ok(r) => return Ok(Number::Exact(r)),
                Err(MathError::TooLarge) => {}
                Err(err) => return Err(err),
            }
        }
        let (b, e) = (self.to_f64(), exp.to_f64());
        if b < 0.0 && e.fract() != 0.0 {
            return Err(MathError::Domain(
                "a negative number to a fractional power".into(),
            ));
        }
        Number::approx(b.powf(e))
    }

    pub fn sqrt(self) -> Result<Number, MathError> {
        if self.to_f64() < 0.0 {
            return Err(MathError::Domain("square root of a negative number".into()));
        }
        if let Some(root) = self.exact().and_then(Rational::sqrt_exact) {
            return Ok(Number::Exact(root));
        }
        Number::approx(self.to_f64().sqrt())
    }

    /// Equal exactly, or within a relative 1e-9 when either side is approximate.
    pub fn approx_eq(self, other: Number) -> bool {
        match (self, other) {
            (Number::Exact(a), Number::Exact(b)) => a == b,
            _ => {
                let (a, b) = (self.to_f64(), other.to_f64());
                (a - b).abs() <= APPROX_EQ * a.abs().max(b.abs()).max(1.0)
            }
        }
    }

    pub fn compare(self, other: Number) -> Ordering {
        match (self, other) {
            (Number::Exact(a), Number::Exact(b)) => a.cmp(&b),
            _ if self.approx_eq(other) => Ordering::Equal,
            _ => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

impl std::ops::Neg for Number {
    type Output = Number;

    fn neg(self) -> Number {
        match self {
            Number::Exact(r) => Number::Exact(-r),
            Number::Approx(f) => Number::Approx(-f),
        }
    }
}

impl From<Rational> for Number {
    fn from(r: Rational) -> Self {
        Number::Exact(r)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Exact(r) => write!(f, "{r}"),
            Number::Approx(x) => write!(f, "{x}"),
        }
    }
}
