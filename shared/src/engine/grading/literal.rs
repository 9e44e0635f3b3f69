//! Number literals as people write them: `1,234.5`, `1.234,5`, `3,5`,
//! `12 345`, `2.5e-3`. A separator that could be read two ways (`1,234`)
//! gives a second reading, so a European decimal comma is not marked wrong.

use crate::math::Rational;

/// A number literal with what its digits say about precision.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Literal {
    pub value: Rational,
    /// The other reading of an ambiguous separator (`1,234` as 1.234).
    pub alternative: Option<Rational>,
    /// Digits written after the decimal mark.
    pub decimals: u32,
    /// Significant figures written.
    pub significant: u32,
}

/// Reads `raw` (digits with `.`, `,`, single-space groups and an optional
/// exponent, as collected by the lexer).
pub(super) fn read(raw: &str) -> Option<Literal> {
    let (mantissa, exponent) = match raw.find('e') {
        Some(at) => (&raw[..at], Some(&raw[at + 1..])),
        None => (raw, None),
    };
    let exponent: i32 = match exponent {
        Some(e) => e.parse().ok()?,
        None => 0,
    };
    let mantissa = mantissa.replace(' ', "");
    let dots = mantissa.matches('.').count();
    let commas = mantissa.matches(',').count();
    let (primary, alternative) = match (dots, commas) {
        (0, 0) => (mantissa.clone(), None),
        (_, 0) => one_kind(&mantissa, '.', false)?,
        (0, _) => one_kind(&mantissa, ',', true)?,
        _ => {
            // Both: the last one is the decimal mark, the other groups thousands.
            let last = mantissa.rfind(['.', ','])?;
            let mark = mantissa[last..].chars().next()?;
            let group = if mark == '.' { ',' } else { '.' };
            let (int_part, frac_part) = mantissa.split_at(last);
            if int_part.contains(mark) || !grouped(int_part, group) {
                return None;
            }
            (
                format!("{}.{}", int_part.replace(group, ""), &frac_part[1..]),
                None,
            )
        }
    };
    let decimals = primary.split_once('.').map_or(0, |(_, f)| f.len() as u32);
    let significant = primary
        .trim_start_matches(['0', '.'])
        .chars()
        .filter(char::is_ascii_digit)
        .count() as u32;
    let scale = |digits: &str| -> Option<Rational> {
        let value = Rational::parse_decimal(digits).ok()?;
        let ten = Rational::integer(10)
            .checked_pow(i64::from(exponent))
            .ok()?;
        value.checked_mul(ten).ok()
    };
    Some(Literal {
        value: scale(&primary)?,
        alternative: match alternative {
            Some(a) => Some(scale(&a)?),
            None => None,
        },
        decimals: (i64::from(decimals) - i64::from(exponent)).max(0) as u32,
        significant,
    })
}

/// `mark` is the only separator: decide whether it groups thousands or
/// marks decimals. Returns the primary reading and an alternative.
fn one_kind(mantissa: &str, mark: char, comma: bool) -> Option<(String, Option<String>)> {
    let count = mantissa.matches(mark).count();
    let as_decimal = || mantissa.replace(mark, ".");
    let as_thousands = || mantissa.replace(mark, "");
    if count > 1 {
        return grouped(mantissa, mark).then(|| (as_thousands(), None));
    }
    let (int_part, frac_part) = mantissa.split_once(mark)?;
    let could_group = frac_part.len() == 3
        && (1..=3).contains(&int_part.len())
        && !int_part.starts_with('0')
        && !int_part.is_empty();
    match (could_group, comma) {
        // `1,234`: thousands in English, 1.234 in much of Europe.
        (true, true) => Some((as_thousands(), Some(as_decimal()))),
        (true, false) => Some((as_decimal(), Some(as_thousands()))),
        (false, _) => Some((as_decimal(), None)),
    }
}

/// Whether `digits` are correctly grouped in threes by `mark` (`1,234,567`).
fn grouped(digits: &str, mark: char) -> bool {
    let mut groups = digits.split(mark);
    let first = groups.next().unwrap_or("");
    (1..=3).contains(&first.len()) && groups.all(|g| g.len() == 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &str) -> (String, Option<String>) {
        let l = read(raw).unwrap_or_else(|| panic!("{raw}"));
        (l.value.to_string(), l.alternative.map(|a| a.to_string()))
    }

    #[test]
    fn separators() {
        assert_eq!(value("1234"), ("1234".into(), None));
        assert_eq!(value("1,234,567"), ("1234567".into(), None));
        assert_eq!(value("1,234.5"), ("2469/2".into(), None));
        assert_eq!(value("1.234,5"), ("2469/2".into(), None));
        assert_eq!(value("3,5"), ("7/2".into(), None));
        assert_eq!(value("0,125"), ("1/8".into(), None));
        assert_eq!(value("1,234"), ("1234".into(), Some("617/500".into())));
        assert_eq!(value("1.234"), ("617/500".into(), Some("1234".into())));
        assert_eq!(value("12 345"), ("12345".into(), None));
        assert_eq!(value("2.5e3"), ("2500".into(), None));
        assert_eq!(value("2.5e-3"), ("1/400".into(), None));
        assert_eq!(read("1,23,4"), None);
        assert_eq!(read("1.2,34.5"), None);
    }

    #[test]
    fn precision() {
        let l = read("0.0330").unwrap();
        assert_eq!((l.decimals, l.significant), (4, 3));
        let l = read("28.27").unwrap();
        assert_eq!((l.decimals, l.significant), (2, 4));
    }
}
