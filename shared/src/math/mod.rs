//! Exact arithmetic and a small, safe expression language.
//!
//! One parser and evaluator serves two users: the grader, which reads what
//! students type (`2(x+1)`, `3/4`, `x = 4`, `50%`), and skill blueprints,
//! whose answers and constraints are expressions over named parameters
//! (`op1 + op2`, `mod(op1, 10) + mod(op2, 10) >= 10`). Nothing is executed
//! but arithmetic: input size, nesting depth and exponents are bounded, so
//! every evaluation finishes quickly whatever the input.

mod expr;
mod number;
mod parse;
mod rational;

pub use expr::{BinaryOp, BuiltinFunction, CompareOp, Expr};
pub use number::{Number, Value};
pub use parse::{ParseOptions, parse};
pub use rational::Rational;

/// `x` clamped to \[0, 1\] (a probability, a score); NaN counts as 0 so
/// nothing built from it can be NaN.
pub fn unit_interval(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

/// The highest common factor of two whole numbers (0 only for 0 and 0).
pub fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

use std::fmt;

/// Why an expression could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MathError {
    #[error("{message} at character {position}")]
    Syntax { position: usize, message: String },
    #[error("the expression is too long or too deeply nested")]
    TooComplex,
    #[error("a number in the expression is too large to work with")]
    TooLarge,
    #[error("division by zero")]
    DivisionByZero,
    #[error("`{0}` has no value here")]
    UnknownVariable(String),
    #[error("{0}")]
    Domain(String),
    #[error("expected {expected}, found {found}")]
    Type {
        expected: &'static str,
        found: &'static str,
    },
}

/// Evaluates `expr` with variables looked up in `vars`.
pub fn evaluate(expr: &Expr, vars: &dyn Fn(&str) -> Option<Number>) -> Result<Value, MathError> {
    expr::eval(expr, vars, 0)
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Num(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}
