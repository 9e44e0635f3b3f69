//! The expression tree and its evaluation.

use std::fmt;

use super::{MathError, Number, Rational, Value};

/// Deepest tree evaluated; the parser enforces the same bound.
pub(super) const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(Rational),
    Var(String),
    /// π, the one named constant.
    Pi,
    Neg(Box<Expr>),
    /// `x%`: x hundredths.
    Percent(Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Call(BuiltinFunction, Vec<Expr>),
    Compare(CompareOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// `=` and `==` are both `Eq`: an equation when parsing student answers, an
/// equality test in blueprint constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinFunction {
    Sqrt,
    Abs,
    Floor,
    Ceil,
    Round,
    Min,
    Max,
    Gcd,
    Lcm,
    /// `mod(a, b)`: the remainder with the sign of `b` (`mod(-7, 3) = 2`).
    Mod,
}

impl BuiltinFunction {
    pub(super) fn from_name(name: &str) -> Option<BuiltinFunction> {
        Some(match name {
            "sqrt" => BuiltinFunction::Sqrt,
            "abs" => BuiltinFunction::Abs,
            "floor" => BuiltinFunction::Floor,
            "ceil" => BuiltinFunction::Ceil,
            "round" => BuiltinFunction::Round,
            "min" => BuiltinFunction::Min,
            "max" => BuiltinFunction::Max,
            "gcd" => BuiltinFunction::Gcd,
            "lcm" => BuiltinFunction::Lcm,
            "mod" => BuiltinFunction::Mod,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            BuiltinFunction::Sqrt => "sqrt",
            BuiltinFunction::Abs => "abs",
            BuiltinFunction::Floor => "floor",
            BuiltinFunction::Ceil => "ceil",
            BuiltinFunction::Round => "round",
            BuiltinFunction::Min => "min",
            BuiltinFunction::Max => "max",
            BuiltinFunction::Gcd => "gcd",
            BuiltinFunction::Lcm => "lcm",
            BuiltinFunction::Mod => "mod",
        }
    }

    /// Accepted argument counts (min, max).
    pub(super) fn arity(self) -> (usize, usize) {
        match self {
            BuiltinFunction::Min | BuiltinFunction::Max => (1, 16),
            BuiltinFunction::Gcd | BuiltinFunction::Lcm | BuiltinFunction::Mod => (2, 2),
            _ => (1, 1),
        }
    }
}

impl Expr {
    /// Variables used, each once, in order of first use.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Var(v) => {
                if !out.contains(&v.as_str()) {
                    out.push(v);
                }
            }
            Expr::Num(_) | Expr::Pi => {}
            Expr::Neg(e) | Expr::Percent(e) | Expr::Not(e) => e.collect_vars(out),
            Expr::Binary(_, a, b) | Expr::Compare(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                a.collect_vars(out);
                b.collect_vars(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.collect_vars(out)),
        }
    }

    /// Number of nodes in the tree.
    pub fn size(&self) -> usize {
        1 + match self {
            Expr::Num(_) | Expr::Var(_) | Expr::Pi => 0,
            Expr::Neg(e) | Expr::Percent(e) | Expr::Not(e) => e.size(),
            Expr::Binary(_, a, b) | Expr::Compare(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                a.size() + b.size()
            }
            Expr::Call(_, args) => args.iter().map(Expr::size).sum(),
        }
    }
}

fn number(value: Value) -> Result<Number, MathError> {
    match value {
        Value::Num(n) => Ok(n),
        Value::Bool(_) => Err(MathError::Type {
            expected: "a number",
            found: "true/false",
        }),
    }
}

fn boolean(value: Value) -> Result<bool, MathError> {
    match value {
        Value::Bool(b) => Ok(b),
        Value::Num(_) => Err(MathError::Type {
            expected: "true/false",
            found: "a number",
        }),
    }
}

fn integer(n: Number, function: BuiltinFunction) -> Result<i128, MathError> {
    n.as_integer()
        .ok_or_else(|| MathError::Domain(format!("{} needs whole numbers", function.name())))
}

pub(super) fn eval(
    expr: &Expr,
    vars: &dyn Fn(&str) -> Option<Number>,
    depth: usize,
) -> Result<Value, MathError> {
    if depth > MAX_DEPTH {
        return Err(MathError::TooComplex);
    }
    let num = |e: &Expr| eval(e, vars, depth + 1).and_then(number);
    let truth = |e: &Expr| eval(e, vars, depth + 1).and_then(boolean);
    Ok(match expr {
        Expr::Num(r) => Value::Num(Number::Exact(*r)),
        Expr::Pi => Value::Num(Number::Approx(std::f64::consts::PI)),
        Expr::Var(name) => {
            Value::Num(vars(name).ok_or_else(|| MathError::UnknownVariable(name.clone()))?)
        }
        Expr::Neg(e) => Value::Num(-num(e)?),
        Expr::Percent(e) => Value::Num(num(e)?.checked_div(Number::int(100))?),
        Expr::Binary(op, a, b) => {
            let (a, b) = (num(a)?, num(b)?);
            Value::Num(match op {
                BinaryOp::Add => a.checked_add(b)?,
                BinaryOp::Sub => a.checked_sub(b)?,
                BinaryOp::Mul => a.checked_mul(b)?,
                BinaryOp::Div => a.checked_div(b)?,
                BinaryOp::Pow => a.checked_pow(b)?,
            })
        }
        Expr::Call(f, args) => {
            let values = args.iter().map(num).collect::<Result<Vec<_>, _>>()?;
            Value::Num(call(*f, &values)?)
        }
        Expr::Compare(op, a, b) => {
            let ordering = num(a)?.compare(num(b)?);
            Value::Bool(match op {
                CompareOp::Eq => ordering.is_eq(),
                CompareOp::Ne => !ordering.is_eq(),
                CompareOp::Lt => ordering.is_lt(),
                CompareOp::Le => ordering.is_le(),
                CompareOp::Gt => ordering.is_gt(),
                CompareOp::Ge => ordering.is_ge(),
            })
        }
        Expr::And(a, b) => Value::Bool(truth(a)? && truth(b)?),
        Expr::Or(a, b) => Value::Bool(truth(a)? || truth(b)?),
        Expr::Not(e) => Value::Bool(!truth(e)?),
    })
}

fn call(f: BuiltinFunction, args: &[Number]) -> Result<Number, MathError> {
    let first = args[0];
    let exact_or = |exact: Option<Rational>, float: f64| -> Number {
        exact.map_or(Number::Approx(float), Number::Exact)
    };
    Ok(match f {
        BuiltinFunction::Sqrt => first.sqrt()?,
        BuiltinFunction::Abs => exact_or(first.exact().map(Rational::abs), first.to_f64().abs()),
        BuiltinFunction::Floor => {
            exact_or(first.exact().map(Rational::floor), first.to_f64().floor())
        }
        BuiltinFunction::Ceil => {
            exact_or(first.exact().map(|r| -(-r).floor()), first.to_f64().ceil())
        }
        BuiltinFunction::Round => {
            // Half away from zero, as taught in school.
            let half = Rational::new(1, 2)?;
            exact_or(
                first.exact().map(|r| {
                    if r.numer() >= 0 {
                        r.checked_add(half).map(Rational::floor).unwrap_or(r)
                    } else {
                        (-r).checked_add(half).map(|x| -x.floor()).unwrap_or(r)
                    }
                }),
                first.to_f64().round(),
            )
        }
        BuiltinFunction::Min | BuiltinFunction::Max => {
            let mut best = first;
            for &n in &args[1..] {
                let better = if f == BuiltinFunction::Min {
                    n.compare(best).is_lt()
                } else {
                    n.compare(best).is_gt()
                };
                if better {
                    best = n;
                }
            }
            best
        }
        BuiltinFunction::Gcd | BuiltinFunction::Lcm => {
            let (a, b) = (integer(args[0], f)?.abs(), integer(args[1], f)?.abs());
            let g = {
                let (mut x, mut y) = (a, b);
                while y != 0 {
                    (x, y) = (y, x % y);
                }
                x
            };
            if f == BuiltinFunction::Gcd {
                Number::int(g)
            } else if g == 0 {
                Number::int(0)
            } else {
                Number::int((a / g).checked_mul(b).ok_or(MathError::TooLarge)?)
            }
        }
        BuiltinFunction::Mod => {
            let (a, b) = (args[0], args[1]);
            if b.to_f64() == 0.0 {
                return Err(MathError::DivisionByZero);
            }
            let quotient = call(BuiltinFunction::Floor, &[a.checked_div(b)?])?;
            a.checked_sub(b.checked_mul(quotient)?)?
        }
    })
}

/// Binding strength, to print only the parentheses that are needed.
fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Or(..) => 1,
        Expr::And(..) => 2,
        Expr::Not(..) => 3,
        Expr::Compare(..) => 4,
        Expr::Binary(BinaryOp::Add | BinaryOp::Sub, ..) => 5,
        Expr::Binary(BinaryOp::Mul | BinaryOp::Div, ..) => 6,
        Expr::Neg(..) => 7,
        Expr::Binary(BinaryOp::Pow, ..) => 8,
        Expr::Percent(..) => 9,
        Expr::Num(r) if !r.is_integer() || r.numer() < 0 => 6,
        _ => 10,
    }
}

struct Operand<'a>(&'a Expr, bool);

impl fmt::Display for Operand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.1 {
            write!(f, "({})", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = precedence(self);
        fn wrap(e: &Expr, parent: u8, strictly: bool) -> Operand<'_> {
            let q = precedence(e);
            Operand(e, if strictly { q <= parent } else { q < parent })
        }
        let wrap = |e, strictly| wrap(e, p, strictly);
        match self {
            Expr::Num(r) => write!(f, "{r}"),
            Expr::Var(v) => write!(f, "{v}"),
            Expr::Pi => write!(f, "pi"),
            Expr::Neg(e) => write!(f, "-{}", wrap(e, false)),
            Expr::Percent(e) => write!(f, "{}%", wrap(e, true)),
            Expr::Not(e) => write!(f, "not {}", wrap(e, false)),
            Expr::Binary(op, a, b) => {
                let symbol = match op {
                    BinaryOp::Add => " + ",
                    BinaryOp::Sub => " - ",
                    BinaryOp::Mul => "*",
                    BinaryOp::Div => "/",
                    BinaryOp::Pow => "^",
                };
                // Left-associative operators need parentheses on the right
                // at equal strength; power is right-associative.
                let (left_strict, right_strict) = match op {
                    BinaryOp::Pow => (true, false),
                    _ => (false, true),
                };
                write!(
                    f,
                    "{}{symbol}{}",
                    wrap(a, left_strict),
                    wrap(b, right_strict)
                )
            }
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
            Expr::Compare(op, a, b) => {
                let symbol = match op {
                    CompareOp::Eq => "=",
                    CompareOp::Ne => "!=",
                    CompareOp::Lt => "<",
                    CompareOp::Le => "<=",
                    CompareOp::Gt => ">",
                    CompareOp::Ge => ">=",
                };
                write!(f, "{} {symbol} {}", wrap(a, true), wrap(b, true))
            }
            Expr::And(a, b) => write!(f, "{} and {}", wrap(a, false), wrap(b, true)),
            Expr::Or(a, b) => write!(f, "{} or {}", wrap(a, false), wrap(b, true)),
        }
    }
}
