//! Exact fractions over i128 with overflow detection.

use std::cmp::Ordering;
use std::fmt;

use super::MathError;

/// A fraction in lowest terms with a positive denominator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rational {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Rational {
    pub const ZERO: Rational = Rational { num: 0, den: 1 };
    pub const ONE: Rational = Rational { num: 1, den: 1 };

    pub fn new(num: i128, den: i128) -> Result<Rational, MathError> {
        if den == 0 {
            return Err(MathError::DivisionByZero);
        }
        // i128::MIN has no positive counterpart.
        if num == i128::MIN || den == i128::MIN {
            return Err(MathError::TooLarge);
        }
        let g = gcd(num, den).max(1);
        let (mut num, mut den) = (num / g, den / g);
        if den < 0 {
            num = -num;
            den = -den;
        }
        Ok(Rational { num, den })
    }

    pub fn integer(n: i128) -> Rational {
        Rational { num: n, den: 1 }
    }

    pub fn numer(self) -> i128 {
        self.num
    }

    pub fn denom(self) -> i128 {
        self.den
    }

    pub fn is_integer(self) -> bool {
        self.den == 1
    }

    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Parses digits with an optional fractional part and exponent, e.g.
    /// `12`, `0.375`, `1.5e3`, `2E-4` (no sign; the caller handles signs).
    pub fn parse_decimal(text: &str) -> Result<Rational, MathError> {
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(i) => {
                let exp: i32 = text[i + 1..].parse().map_err(|_| MathError::Syntax {
                    position: i,
                    message: format!("`{text}` is not a number"),
                })?;
                (&text[..i], exp)
            }
            None => (text, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int_part.is_empty() && frac_part.is_empty()
            || !int_part.bytes().all(|b| b.is_ascii_digit())
            || !frac_part.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(MathError::Syntax {
                position: 0,
                message: format!("`{text}` is not a number"),
            });
        }
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 36 {
            return Err(MathError::TooLarge);
        }
        let num: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| MathError::TooLarge)?
        };
        let scale = exponent - frac_part.len() as i32;
        let ten = Rational::integer(10);
        let factor = ten.checked_pow(scale.unsigned_abs() as i64)?;
        let value = Rational::integer(num);
        if scale >= 0 {
            value.checked_mul(factor)
        } else {
            value.checked_div(factor)
        }
    }

    pub fn checked_add(self, other: Rational) -> Result<Rational, MathError> {
        let g = gcd(self.den, other.den).max(1);
        let lhs = self
            .num
            .checked_mul(other.den / g)
            .ok_or(MathError::TooLarge)?;
        let rhs = other
            .num
            .checked_mul(self.den / g)
            .ok_or(MathError::TooLarge)?;
        let num = lhs.checked_add(rhs).ok_or(MathError::TooLarge)?;
        let den = (self.den / g)
            .checked_mul(other.den)
            .ok_or(MathError::TooLarge)?;
        Rational::new(num, den)
    }

    pub fn checked_sub(self, other: Rational) -> Result<Rational, MathError> {
        self.checked_add(-other)
    }

    pub fn checked_mul(self, other: Rational) -> Result<Rational, MathError> {
        // Cross-reduce first to keep intermediate values small.
        let g1 = gcd(self.num, other.den).max(1);
        let g2 = gcd(other.num, self.den).max(1);
        let num = (self.num / g1)
            .checked_mul(other.num / g2)
            .ok_or(MathError::TooLarge)?;
        let den = (self.den / g2)
            .checked_mul(other.den / g1)
            .ok_or(MathError::TooLarge)?;
        Rational::new(num, den)
    }

    pub fn recip(self) -> Result<Rational, MathError> {
        Rational::new(self.den, self.num)
    }

    pub fn checked_div(self, other: Rational) -> Result<Rational, MathError> {
        self.checked_mul(other.recip()?)
    }

    /// `self` to an integer power, by squaring; overflow is detected at once.
    pub fn checked_pow(self, exp: i64) -> Result<Rational, MathError> {
        if exp < 0 {
            return self
                .recip()?
                .checked_pow(exp.checked_neg().ok_or(MathError::TooLarge)?);
        }
        let mut result = Rational::ONE;
        let mut base = self;
        let mut e = exp as u64;
        while e > 0 {
            if e & 1 == 1 {
                result = result.checked_mul(base)?;
            }
            e >>= 1;
            if e > 0 {
                base = base.checked_mul(base)?;
            }
        }
        Ok(result)
    }

    /// Largest integer not above the value.
    pub fn floor(self) -> Rational {
        Rational::integer(self.num.div_euclid(self.den))
    }

    pub fn abs(self) -> Rational {
        Rational {
            num: self.num.abs(),
            den: self.den,
        }
    }

    /// The exact square root, when the value is a perfect square of a rational.
    pub fn sqrt_exact(self) -> Option<Rational> {
        if self.num < 0 {
            return None;
        }
        let n = isqrt(self.num)?;
        let d = isqrt(self.den)?;
        Some(Rational { num: n, den: d })
    }
}

fn isqrt(v: i128) -> Option<i128> {
    let guess = (v as f64).sqrt().round() as i128;
    (guess.saturating_sub(1)..=guess.saturating_add(1)).find(|g| g.checked_mul(*g) == Some(v))
}

impl std::ops::Neg for Rational {
    type Output = Rational;

    fn neg(self) -> Rational {
        Rational {
            num: -self.num,
            den: self.den,
        }
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rational {
    fn cmp(&self, other: &Self) -> Ordering {
        match (
            self.num.checked_mul(other.den),
            other.num.checked_mul(self.den),
        ) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i128, d: i128) -> Rational {
        Rational::new(n, d).unwrap()
    }

    #[test]
    fn normalises_sign_and_terms() {
        assert_eq!(r(6, -8), r(-3, 4));
        assert_eq!(r(-6, -8).to_string(), "3/4");
        assert_eq!(r(0, -5), Rational::ZERO);
        assert_eq!(Rational::new(1, 0), Err(MathError::DivisionByZero));
    }

    #[test]
    fn arithmetic_is_exact() {
        assert_eq!(r(1, 3).checked_add(r(1, 6)).unwrap(), r(1, 2));
        assert_eq!(r(3, 4).checked_sub(r(1, 8)).unwrap(), r(5, 8));
        assert_eq!(r(2, 3).checked_mul(r(9, 4)).unwrap(), r(3, 2));
        assert_eq!(r(2, 3).checked_div(r(4, 9)).unwrap(), r(3, 2));
        assert_eq!(r(2, 3).checked_pow(-2).unwrap(), r(9, 4));
        assert_eq!(r(-7, 2).floor(), Rational::integer(-4));
        assert_eq!(r(9, 4).sqrt_exact(), Some(r(3, 2)));
        assert_eq!(r(2, 1).sqrt_exact(), None);
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let big = Rational::integer(10).checked_pow(30).unwrap();
        assert_eq!(big.checked_mul(big), Err(MathError::TooLarge));
        assert_eq!(
            Rational::integer(10).checked_pow(10_000_000_000),
            Err(MathError::TooLarge)
        );
        assert_eq!(
            Rational::integer(1).checked_pow(i64::MAX).unwrap(),
            Rational::ONE
        );
    }

    #[test]
    fn parses_decimals_and_exponents() {
        assert_eq!(Rational::parse_decimal("0.375").unwrap(), r(3, 8));
        assert_eq!(
            Rational::parse_decimal("1.5e3").unwrap(),
            Rational::integer(1500)
        );
        assert_eq!(Rational::parse_decimal("2E-4").unwrap(), r(1, 5000));
        assert_eq!(Rational::parse_decimal(".5").unwrap(), r(1, 2));
        assert!(Rational::parse_decimal("1e99").is_err());
        assert!(Rational::parse_decimal("1.2.3").is_err());
        assert!(Rational::parse_decimal("").is_err());
    }

    #[test]
    fn orders_values() {
        assert!(r(1, 3) < r(1, 2));
        assert!(r(-1, 2) < Rational::ZERO);
    }
}
