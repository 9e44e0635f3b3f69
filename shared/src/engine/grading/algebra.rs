//! Whether two expressions or two equations say the same thing.
//!
//! Expressions without variables are compared exactly. With variables, both
//! are evaluated at pseudo-random rational points (exactly, in rationals,
//! falling back to floating point only for roots and huge powers); the
//! points come from a seed derived from the inputs, so grading is
//! deterministic. Equal everywhere sampled means equivalent (the
//! Schwartz–Zippel argument for polynomials and rational functions).
//! Equations are equivalent when one side-difference is a non-zero multiple
//! of the other (`x = 4`, `4 = x`, `2x = 8`); inequalities need a positive
//! multiple.

use std::collections::BTreeMap;

use crate::engine::rng::SplitMix64;
use crate::math::{self, BinaryOp, CompareOp, Expr, Number, Rational, Value};

/// Largest expression (in nodes) compared; beyond it the answer is
/// unverifiable rather than slow.
const MAX_NODES: usize = 400;
const MAX_VARIABLES: usize = 6;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Comparison {
    Equal,
    /// Equal to minus the other (a sign slip).
    Negated,
    Different,
    /// Could not be decided, and why.
    Unknown(String),
}

/// A deterministic stream of test points for comparing expressions.
pub(super) struct Points(SplitMix64);

impl Points {
    pub fn new(seed: u64) -> Points {
        Points(SplitMix64::new(seed))
    }

    /// A small non-zero rational such as -7/3 or 5/2.
    fn rational(&mut self) -> Rational {
        let r = self.0.next_u64();
        let magnitude = (r % 11) as i128 + 1;
        let sign = if (r >> 8) & 1 == 0 { 1 } else { -1 };
        let den = [1, 1, 2, 3, 5, 7][((r >> 16) % 6) as usize];
        Rational::new(sign * magnitude, den).unwrap_or(Rational::ONE)
    }
}

/// FNV-1a over the parts: the seed for the points of one comparison.
pub(super) fn seed_of(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

fn variables_of<'a>(exprs: &[&'a Expr]) -> Vec<&'a str> {
    let mut names: Vec<&str> = exprs.iter().flat_map(|e| e.variables()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn number(value: Result<Value, math::MathError>) -> Result<Number, String> {
    match value {
        Ok(Value::Num(n)) => Ok(n),
        Ok(Value::Bool(_)) => Err("a comparison where a value was expected".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Evaluates every expression at up to `count` points where all of them
/// are defined. Returns the values, point by point.
fn sample(exprs: &[&Expr], seed: u64, count: u32) -> Result<Vec<Vec<Number>>, String> {
    if exprs.iter().map(|e| e.size()).sum::<usize>() > MAX_NODES {
        return Err("too long to compare".to_owned());
    }
    let names = variables_of(exprs);
    if names.len() > MAX_VARIABLES {
        return Err(format!("uses more than {MAX_VARIABLES} variables"));
    }
    let wanted = if names.is_empty() {
        1
    } else {
        count.max(3) as usize
    };
    let mut points = Points::new(seed);
    let mut rows = Vec::with_capacity(wanted);
    let mut last_error = String::new();
    for _ in 0..wanted * 4 {
        if rows.len() == wanted {
            break;
        }
        let assignment: BTreeMap<&str, Number> = names
            .iter()
            .map(|n| (*n, Number::Exact(points.rational())))
            .collect();
        let lookup = |name: &str| assignment.get(name).copied();
        let row: Result<Vec<Number>, String> = exprs
            .iter()
            .map(|e| number(math::evaluate(e, &lookup)))
            .collect();
        match row {
            Ok(values) => rows.push(values),
            Err(e) => last_error = e,
        }
    }
    if rows.len() < wanted.min(3) {
        return Err(if last_error.is_empty() {
            "could not be evaluated".to_owned()
        } else {
            last_error
        });
    }
    Ok(rows)
}

/// Compares two expressions.
pub(super) fn compare_values(a: &Expr, b: &Expr, seed: u64, points: u32) -> Comparison {
    let rows = match sample(&[a, b], seed, points) {
        Ok(rows) => rows,
        Err(e) => return Comparison::Unknown(e),
    };
    let zero = Number::int(0);
    let equal = rows.iter().all(|r| r[0].approx_eq(r[1]));
    if equal {
        return Comparison::Equal;
    }
    let negated =
        rows.iter().all(|r| r[0].approx_eq(-r[1])) && rows.iter().any(|r| !r[0].approx_eq(zero));
    if negated {
        Comparison::Negated
    } else {
        Comparison::Different
    }
}

/// An equation or inequality as `f op 0`, with `op` one of `=`, `≠`, `>`, `≥`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Relation {
    pub op: CompareOp,
    pub difference: Expr,
}

impl Relation {
    pub fn new(op: CompareOp, left: &Expr, right: &Expr) -> Relation {
        let minus = |a: &Expr, b: &Expr| {
            Expr::Binary(BinaryOp::Sub, Box::new(a.clone()), Box::new(b.clone()))
        };
        let (op, difference) = match op {
            CompareOp::Lt => (CompareOp::Gt, minus(right, left)),
            CompareOp::Le => (CompareOp::Ge, minus(right, left)),
            other => (other, minus(left, right)),
        };
        Relation { op, difference }
    }

    /// Reads a parsed comparison (`Expr::Compare`).
    pub fn from_expr(expr: &Expr) -> Option<Relation> {
        match expr {
            Expr::Compare(op, l, r) => Some(Relation::new(*op, l, r)),
            _ => None,
        }
    }
}

/// Whether two relations have the same solutions, judged by one difference
/// being a constant multiple of the other (positive for inequalities).
pub(super) fn compare_relations(a: &Relation, b: &Relation, seed: u64, points: u32) -> Comparison {
    if a.op != b.op {
        return Comparison::Different;
    }
    let rows = match sample(&[&a.difference, &b.difference], seed, points) {
        Ok(rows) => rows,
        Err(e) => return Comparison::Unknown(e),
    };
    let zero = Number::int(0);
    let Some(ratio) = rows
        .iter()
        .find(|r| !r[0].approx_eq(zero))
        .and_then(|r| r[1].checked_div(r[0]).ok())
    else {
        return Comparison::Unknown("the equation holds everywhere or nowhere".to_owned());
    };
    if ratio.approx_eq(zero)
        || (matches!(a.op, CompareOp::Gt | CompareOp::Ge) && ratio.to_f64() < 0.0)
    {
        return Comparison::Different;
    }
    let proportional = rows.iter().all(|r| {
        r[0].checked_mul(ratio)
            .is_ok_and(|scaled| scaled.approx_eq(r[1]))
    });
    if proportional {
        Comparison::Equal
    } else {
        Comparison::Different
    }
}

/// The solution of `difference = 0` when it is linear in `variable` (the
/// only variable), e.g. `2x + 3 - 11` gives 4.
pub(super) fn solve_linear(difference: &Expr, variable: &str, seed: u64) -> Option<Number> {
    if difference.variables() != [variable] || difference.size() > MAX_NODES {
        return None;
    }
    let at = |x: Rational| {
        number(math::evaluate(difference, &|name| {
            (name == variable).then_some(Number::Exact(x))
        }))
        .ok()
    };
    let mut points = Points::new(seed);
    let (p0, p1) = (points.rational(), points.rational());
    let (f0, f1) = (at(p0)?, at(p1)?);
    let run = Number::Exact(p1.checked_sub(p0).ok()?);
    let slope = f1.checked_sub(f0).ok()?.checked_div(run).ok()?;
    if slope.approx_eq(Number::int(0)) {
        return None;
    }
    let intercept = f0
        .checked_sub(slope.checked_mul(Number::Exact(p0)).ok()?)
        .ok()?;
    // Linear only if the line through two points predicts the others.
    for _ in 0..4 {
        let p = points.rational();
        let predicted = intercept
            .checked_add(slope.checked_mul(Number::Exact(p)).ok()?)
            .ok()?;
        if !at(p)?.approx_eq(predicted) {
            return None;
        }
    }
    (-intercept).checked_div(slope).ok()
}

/// Whether an expression still has work a teacher would ask for: like
/// terms to collect (`x + x`, `3 + 2`) or several numbers in one product
/// (`2a · 3b`).
pub(super) fn has_uncollected_terms(expr: &Expr) -> bool {
    let mut terms = Vec::new();
    collect_terms(expr, &mut terms);
    let monomials: Vec<(usize, BTreeMap<String, i128>)> =
        terms.iter().filter_map(|t| monomial(t)).collect();
    monomials.iter().any(|(numbers, _)| *numbers > 1)
        || monomials
            .iter()
            .enumerate()
            .any(|(i, (_, powers))| monomials[i + 1..].iter().any(|(_, other)| other == powers))
}

fn collect_terms<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::Binary(BinaryOp::Add | BinaryOp::Sub, a, b) => {
            collect_terms(a, out);
            collect_terms(b, out);
        }
        Expr::Neg(inner) => collect_terms(inner, out),
        other => out.push(other),
    }
}

/// A product of numbers and powers of variables: how many numbers it
/// multiplies and each variable's power; `None` for anything else.
fn monomial(expr: &Expr) -> Option<(usize, BTreeMap<String, i128>)> {
    match expr {
        Expr::Num(_) => Some((1, BTreeMap::new())),
        Expr::Var(v) => Some((0, BTreeMap::from([(v.clone(), 1)]))),
        Expr::Neg(inner) => monomial(inner),
        Expr::Binary(BinaryOp::Pow, base, exponent) => match (base.as_ref(), exponent.as_ref()) {
            (Expr::Var(v), Expr::Num(n)) if n.is_integer() => {
                Some((0, BTreeMap::from([(v.clone(), n.numer())])))
            }
            _ => None,
        },
        Expr::Binary(BinaryOp::Mul, a, b) => {
            let (na, mut pa) = monomial(a)?;
            let (nb, pb) = monomial(b)?;
            for (v, p) in pb {
                *pa.entry(v).or_insert(0) += p;
            }
            Some((na + nb, pa))
        }
        Expr::Binary(BinaryOp::Div, a, b) if matches!(b.as_ref(), Expr::Num(_)) => {
            let (n, powers) = monomial(a)?;
            Some((n.max(1), powers))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{ParseOptions, parse};

    fn e(text: &str) -> Expr {
        parse(text, ParseOptions::student()).unwrap()
    }

    fn values(a: &str, b: &str) -> Comparison {
        compare_values(&e(a), &e(b), seed_of(&[a, b]), 8)
    }

    fn relations(a: &str, b: &str) -> Comparison {
        let (a, b) = (
            Relation::from_expr(&e(a)).unwrap(),
            Relation::from_expr(&e(b)).unwrap(),
        );
        compare_relations(&a, &b, 7, 8)
    }

    #[test]
    fn expressions() {
        assert_eq!(values("2x+3", "3+2x"), Comparison::Equal);
        assert_eq!(values("2(x+1)", "2x+2"), Comparison::Equal);
        assert_eq!(values("(x+1)^2", "x^2+2x+1"), Comparison::Equal);
        assert_eq!(values("x/2", "0.5x"), Comparison::Equal);
        assert_eq!(values("(x^2-1)/(x-1)", "x+1"), Comparison::Equal);
        assert_eq!(values("2x-3", "3-2x"), Comparison::Negated);
        assert_eq!(values("2x+3", "2x-3"), Comparison::Different);
        assert_eq!(values("x^2", "2x"), Comparison::Different);
        assert_eq!(values("ab", "ba"), Comparison::Equal);
        assert!(matches!(values("1/(x-x)", "x"), Comparison::Unknown(_)));
    }

    #[test]
    fn equations_and_inequalities() {
        assert_eq!(relations("x = 4", "4 = x"), Comparison::Equal);
        assert_eq!(relations("2x = 8", "x = 4"), Comparison::Equal);
        assert_eq!(relations("y = 2x + 1", "2x - y + 1 = 0"), Comparison::Equal);
        assert_eq!(relations("x = 4", "x = -4"), Comparison::Different);
        assert_eq!(relations("x > 3", "3 < x"), Comparison::Equal);
        assert_eq!(relations("x > 3", "x >= 3"), Comparison::Different);
        assert_eq!(relations("x > 3", "-x > -3"), Comparison::Different);
    }

    #[test]
    fn uncollected_terms() {
        for (text, uncollected) in [
            ("3 + x + x", true),
            ("x + x + x", true),
            ("2a*3b", true),
            ("3 + 2 + x", true),
            ("2x + 3", false),
            ("x^2 + 2x + 1", false),
            ("(x+1)^2", false),
            ("6ba", false),
            ("x/2", false),
            ("-x + 5", false),
            ("x^2 + x^2", true),
        ] {
            assert_eq!(has_uncollected_terms(&e(text)), uncollected, "{text}");
        }
    }

    #[test]
    fn linear_solutions() {
        let solve = |t: &str| {
            let r = Relation::from_expr(&e(t)).unwrap();
            solve_linear(&r.difference, "x", 3).map(|n| n.to_string())
        };
        assert_eq!(solve("2x + 3 = 11").as_deref(), Some("4"));
        assert_eq!(solve("x/2 + 1 = 6").as_deref(), Some("10"));
        assert_eq!(solve("x^2 = 4"), None);
        assert_eq!(solve("x = x"), None);
    }
}
