//! Comparing a number with the expected one: units first (`1.2 m` against
//! `120 cm`), then equality, accepted roundings, the `close` threshold (a
//! near miss, within the workflow's tolerance), and the slips worth naming
//! (sign, decimal place, reciprocal).

use super::extract::Form;
use super::literal::Literal;
use super::units::{Dimension, Unit};
use super::{SlipTag, Verdict, show_number};
use crate::content::workflow::GradingSettings;
use crate::math::{Number, Rational};
use crate::model::GradeOutcome;

/// A number with its unit and how it was written.
#[derive(Debug, Clone)]
pub(super) struct Quantity {
    pub value: Number,
    pub unit: Option<Unit>,
    pub literal: Option<Literal>,
    pub form: Form,
}

impl Quantity {
    pub fn plain(value: Number) -> Quantity {
        Quantity {
            value,
            unit: None,
            literal: None,
            form: Form::Literal,
        }
    }
}

fn with_unit(value: Number, unit: Option<&Unit>) -> String {
    match unit {
        Some(u) if u.dimension == Dimension::Ratio => format!("{}%", show_number(value)),
        Some(u) if matches!(u.dimension, Dimension::Money(_)) && u.name.chars().count() == 1 => {
            // -£5, not £-5.
            let shown = show_number(value);
            let (sign, magnitude) = match shown.strip_prefix('-') {
                Some(magnitude) => ("-", magnitude),
                None => ("", shown.as_str()),
            };
            format!("{sign}{}{magnitude}", u.name)
        }
        Some(u) => format!("{} {}", show_number(value), u.name),
        None => show_number(value),
    }
}

pub(super) fn compare(
    student: &Quantity,
    expected: &Quantity,
    settings: &GradingSettings,
) -> Verdict {
    let mut tags = Vec::new();
    let target = expected.value;
    let shown_expected = with_unit(target, expected.unit.as_ref());
    // Bring the student's value into the expected unit.
    let (value, factor) = match (&student.unit, &expected.unit) {
        (Some(s), Some(e)) => match s.factor_to(e) {
            Some(f) => {
                if f != Rational::ONE {
                    tags.push(SlipTag::UnitConverted);
                }
                match student.value.checked_mul(Number::Exact(f)) {
                    Ok(v) => (v, f),
                    Err(e) => {
                        return Verdict::unverifiable(format!("the value is out of range: {e}"));
                    }
                }
            }
            None => {
                let same_number = student.value.approx_eq(target);
                let reason = format!(
                    "{} is {}, but {} is expected{}",
                    with_unit(student.value, Some(s)),
                    s.dimension.describe(),
                    shown_expected,
                    if same_number {
                        " (right number, wrong unit)"
                    } else {
                        ""
                    }
                );
                return Verdict {
                    outcome: GradeOutcome::Wrong,
                    tags: vec![SlipTag::WrongUnit],
                    reason,
                    normalized: Some(with_unit(student.value, Some(s))),
                };
            }
        },
        (None, Some(_)) => {
            tags.push(SlipTag::MissingUnit);
            (student.value, Rational::ONE)
        }
        (Some(s), None) if s.dimension == Dimension::Ratio => {
            match student.value.checked_mul(Number::Exact(s.factor)) {
                Ok(v) => (v, Rational::ONE),
                Err(e) => return Verdict::unverifiable(format!("the value is out of range: {e}")),
            }
        }
        _ => (student.value, Rational::ONE),
    };
    // `12 m` for `12 cm`: the right number in the wrong unit.
    if factor != Rational::ONE && student.value.approx_eq(target) {
        tags.push(SlipTag::WrongUnit);
    }
    let normalized = Some(with_unit(value, expected.unit.as_ref()));
    let shown = with_unit(value, expected.unit.as_ref());
    let unconverted = factor == Rational::ONE;
    if value.approx_eq(target) {
        // `3 + 4` or `6/8` where `7` or `3/4` is expected; `√2` for √2 is fine.
        let expected_simple = expected.form != Form::Computed;
        if expected_simple
            && matches!(
                student.form,
                Form::Computed | Form::Fraction { reduced: false }
            )
        {
            tags.push(SlipTag::Unsimplified);
        }
        return Verdict {
            outcome: GradeOutcome::Correct,
            reason: format!("{shown} equals the expected {shown_expected}"),
            tags,
            normalized,
        };
    }
    if let Some(literal) = student.literal.as_ref().filter(|_| unconverted) {
        if accepted_rounding(target, literal, settings) {
            tags.push(SlipTag::Rounded);
            return Verdict {
                outcome: GradeOutcome::Correct,
                reason: format!(
                    "{shown} is {shown_expected} correctly rounded to {} decimal place{}",
                    literal.decimals,
                    if literal.decimals == 1 { "" } else { "s" }
                ),
                tags,
                normalized,
            };
        }
        if let Some(alternative) = literal.alternative
            && Number::Exact(alternative).approx_eq(target)
        {
            tags.push(SlipTag::AmbiguousSeparator);
            let alt = with_unit(Number::Exact(alternative), expected.unit.as_ref());
            return Verdict {
                outcome: GradeOutcome::Correct,
                reason: format!(
                    "the separator can be read either way; read as {alt} it equals the expected {shown_expected}"
                ),
                tags,
                normalized: Some(alt),
            };
        }
    }
    let difference = (value.to_f64() - target.to_f64()).abs();
    let relative = settings.close_relative * target.to_f64().abs();
    let threshold = if target.to_f64().abs() >= settings.close_min_difference_from {
        settings.close_min_difference.max(relative)
    } else {
        relative
    };
    // Beside a wrong unit, a factor of 100 is the unit's doing, not a slip.
    if !tags.contains(&SlipTag::WrongUnit) {
        tags.extend(slips(
            value,
            target,
            student.literal.as_ref().filter(|_| unconverted),
        ));
    }
    // A hair of slack so that 3.7 against 3.8 is within 0.1 despite binary floats.
    let within = |limit: f64| difference <= limit * (1.0 + 1e-9) + 1e-12;
    // Whole units of the last place: 9 for 10 is one out, 9.8 is not. A
    // fraction has no last place: 1/2 for 2/5 is not a slip of 0.4.
    let fraction = |q: &Quantity| matches!(q.form, Form::Fraction { .. } | Form::Mixed);
    let one_out = !fraction(student)
        && !fraction(expected)
        && last_place(target).is_some_and(|place| {
            let units = difference / place;
            within(place * settings.close_last_place) && (units - units.round()).abs() < 1e-6
        });
    // Rounding too early is a slip of the answer; a wrong sign, a factor
    // of ten or a flipped fraction is a mistake of method.
    let rounded_early = tags.contains(&SlipTag::Rounding);
    let outcome = if within(threshold) || one_out || rounded_early {
        GradeOutcome::Close
    } else {
        GradeOutcome::Wrong
    };
    let reason = match outcome {
        GradeOutcome::Close if !within(threshold) && one_out => {
            format!("{shown} is one out in the last place from the expected {shown_expected}")
        }
        GradeOutcome::Close if !within(threshold) => {
            format!("{shown} is the expected {shown_expected} rounded too early")
        }
        GradeOutcome::Close => format!(
            "{shown} is close to the expected {shown_expected}: off by {}, within the threshold {}",
            show_float(difference),
            show_float(threshold)
        ),
        _ => format!(
            "{shown} is not the expected {shown_expected}: off by {}, beyond the threshold {}",
            show_float(difference),
            show_float(threshold)
        ),
    };
    Verdict {
        outcome,
        tags,
        reason,
        normalized,
    }
}

/// A difference or threshold to four significant figures (`0.0016`, `2.4`,
/// `1e-7`).
fn show_float(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-6..=15).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - magnitude).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// One unit of the last decimal place of an exact value that ends within
/// six places (1 for 10, 0.1 for 3.8); none for one that does not end.
fn last_place(value: Number) -> Option<f64> {
    let Number::Exact(exact) = value else {
        return None;
    };
    (0..=6).find_map(|places: i32| {
        let shifted = exact.to_f64() * 10f64.powi(places);
        ((shifted - shifted.round()).abs() < 1e-9).then(|| 10f64.powi(-places))
    })
}

/// Whether the expected value has a finite decimal expansion.
fn terminates(value: Number) -> bool {
    match value {
        Number::Exact(r) => {
            let mut d = r.denom();
            for p in [2, 5] {
                while d % p == 0 {
                    d /= p;
                }
            }
            d == 1
        }
        Number::Approx(_) => false,
    }
}

/// `value` rounded half away from zero to `decimals` places, as a float.
fn rounded(value: Number, decimals: u32) -> Option<Number> {
    let scale = Rational::integer(10)
        .checked_pow(i64::from(decimals))
        .ok()?;
    match value {
        Number::Exact(r) => {
            let half = Rational::new(1, 2).ok()?;
            let scaled = r
                .abs()
                .checked_mul(scale)
                .ok()?
                .checked_add(half)
                .ok()?
                .floor();
            let magnitude = scaled.checked_div(scale).ok()?;
            Some(Number::Exact(if r.numer() < 0 {
                -magnitude
            } else {
                magnitude
            }))
        }
        Number::Approx(f) => {
            let s = scale.to_f64();
            Some(Number::Approx((f.abs() * s).round() / s * f.signum()))
        }
    }
}

/// `value` cut off after `decimals` places.
fn truncated(value: Number, decimals: u32) -> Option<Number> {
    let scale = Rational::integer(10)
        .checked_pow(i64::from(decimals))
        .ok()?;
    match value {
        Number::Exact(r) => {
            let magnitude = r
                .abs()
                .checked_mul(scale)
                .ok()?
                .floor()
                .checked_div(scale)
                .ok()?;
            Some(Number::Exact(if r.numer() < 0 {
                -magnitude
            } else {
                magnitude
            }))
        }
        Number::Approx(f) => {
            let s = scale.to_f64();
            Some(Number::Approx((f.abs() * s).floor() / s * f.signum()))
        }
    }
}

/// 1/3 as 0.33 or 0.333, 9π as 28.27: a non-terminating value rounded
/// correctly to enough digits. A terminating value (0.125) must be exact.
fn accepted_rounding(target: Number, literal: &Literal, settings: &GradingSettings) -> bool {
    if terminates(target) {
        return false;
    }
    let precise_enough = literal.significant >= settings.rounding_min_significant
        || (literal.decimals >= settings.rounding_min_decimals && literal.significant >= 2);
    precise_enough
        && rounded(target, literal.decimals)
            .is_some_and(|r| r.approx_eq(Number::Exact(literal.value)))
}

/// Named slips between a wrong `value` and the `target`.
fn slips(value: Number, target: Number, literal: Option<&Literal>) -> Vec<SlipTag> {
    let mut tags = Vec::new();
    let zero = Number::int(0);
    if target.approx_eq(zero) {
        return tags;
    }
    if value.approx_eq(-target) {
        tags.push(SlipTag::SignError);
    }
    let decimal_slip = (1..=3).any(|k| {
        let ten = Number::int(10i128.pow(k));
        target.checked_mul(ten).is_ok_and(|t| t.approx_eq(value))
            || target.checked_div(ten).is_ok_and(|t| t.approx_eq(value))
    });
    if decimal_slip {
        tags.push(SlipTag::DecimalPlace);
    }
    let one = Number::int(1);
    if !target.approx_eq(one)
        && !target.approx_eq(-one)
        && value.checked_mul(target).is_ok_and(|p| p.approx_eq(one))
    {
        tags.push(SlipTag::Reciprocal);
    }
    // Rounded, or cut off, to fewer places than the value needs.
    if let Some(literal) = literal {
        let written = Number::Exact(literal.value);
        let cut = |n: Number| {
            rounded(n, literal.decimals).is_some_and(|r| r.approx_eq(written))
                || truncated(n, literal.decimals).is_some_and(|t| t.approx_eq(written))
        };
        if cut(target) {
            tags.push(SlipTag::Rounding);
        }
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grading::literal;

    fn number(text: &str) -> Quantity {
        let literal = literal::read(text.trim_start_matches('-')).unwrap();
        let literal = if text.starts_with('-') {
            Literal {
                value: -literal.value,
                ..literal
            }
        } else {
            literal
        };
        Quantity {
            value: Number::Exact(literal.value),
            unit: None,
            literal: Some(literal),
            form: Form::Literal,
        }
    }

    fn verdict(student: &str, expected: Number) -> (GradeOutcome, Vec<SlipTag>) {
        let v = compare(
            &number(student),
            &Quantity::plain(expected),
            &GradingSettings::default(),
        );
        (v.outcome, v.tags)
    }

    fn r(n: i128, d: i128) -> Number {
        Number::Exact(Rational::new(n, d).unwrap())
    }

    #[test]
    fn only_a_slip_of_the_answer_is_close() {
        use GradeOutcome::*;
        assert_eq!(verdict("10", r(10, 1)).0, Correct);
        assert_eq!(verdict("9", r(10, 1)).0, Close, "one out");
        assert_eq!(verdict("11", r(10, 1)).0, Close, "one out");
        assert_eq!(verdict("8", r(10, 1)).0, Wrong);
        assert_eq!(verdict("7", r(10, 1)).0, Wrong, "3 out of 10 is not close");
        assert_eq!(verdict("3.7", r(38, 10)).0, Close, "one out in the tenths");
        assert_eq!(verdict("3.5", r(38, 10)).0, Wrong);
        assert_eq!(
            verdict("9.8", r(10, 1)).0,
            Wrong,
            "not whole units of the last place"
        );
        assert_eq!(verdict("990", r(1000, 1)).0, Close, "within 1%");
        assert_eq!(verdict("950", r(1000, 1)).0, Wrong);
        assert_eq!(verdict("0.5", r(3, 11)).0, Wrong);
        assert_eq!(verdict("0.3", r(3, 11)).0, Close, "3/11 rounded too early");
        assert_eq!(verdict("0.25", r(3, 11)).0, Wrong);
    }

    #[test]
    fn a_fraction_has_no_last_place_to_be_one_out_in() {
        let fraction = |value: Number, reduced: bool| Quantity {
            form: Form::Fraction { reduced },
            ..Quantity::plain(value)
        };
        let grade = |student: Quantity, expected: Quantity| {
            compare(&student, &expected, &GradingSettings::default())
        };
        let half = grade(fraction(r(1, 2), true), fraction(r(2, 5), true));
        assert_eq!(half.outcome, GradeOutcome::Wrong, "{}", half.reason);
        let decimal = grade(number("0.5"), fraction(r(2, 5), true));
        assert_eq!(decimal.outcome, GradeOutcome::Wrong, "{}", decimal.reason);
        let slip = grade(number("0.5"), Quantity::plain(r(2, 5)));
        assert_eq!(slip.outcome, GradeOutcome::Close);
        assert!(
            slip.reason.contains("one out in the last place"),
            "{}",
            slip.reason
        );
    }

    #[test]
    fn roundings_and_slips() {
        use GradeOutcome::*;
        assert_eq!(verdict("0.33", r(1, 3)), (Correct, vec![SlipTag::Rounded]));
        assert_eq!(verdict("0.667", r(2, 3)), (Correct, vec![SlipTag::Rounded]));
        assert_eq!(verdict("0.66", r(2, 3)), (Close, vec![SlipTag::Rounding]));
        assert_eq!(
            verdict("0.13", r(1, 8)).0,
            Close,
            "0.125 terminates: exact only"
        );
        assert_eq!(
            verdict("28.27", Number::Approx(9.0 * std::f64::consts::PI)).0,
            Correct
        );
        assert_eq!(verdict("-4", r(4, 1)), (Wrong, vec![SlipTag::SignError]));
        assert_eq!(verdict("5", r(1, 2)), (Wrong, vec![SlipTag::DecimalPlace]));
        assert_eq!(verdict("0.75", r(4, 3)), (Wrong, vec![SlipTag::Reciprocal]));
    }
}
