//! Units of measure written after (or, for money, before) an answer: what
//! they measure and how they convert, so `1.2 m` can be checked against
//! `120 cm` and `12 kg` flagged against a length.

use crate::math::Rational;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Currency {
    Dollar,
    Euro,
    Pound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dimension {
    Length,
    Area,
    Volume,
    Mass,
    Time,
    Speed,
    Angle,
    Celsius,
    Fahrenheit,
    Money(Currency),
    /// Per cent: a plain number scaled by 1/100.
    Ratio,
    /// A unit the table does not know (`apples`, `marbles`): compared by name.
    Named,
}

impl Dimension {
    pub fn describe(self) -> &'static str {
        match self {
            Dimension::Length => "a length",
            Dimension::Area => "an area",
            Dimension::Volume => "a volume",
            Dimension::Mass => "a mass",
            Dimension::Time => "a time",
            Dimension::Speed => "a speed",
            Dimension::Angle => "an angle",
            Dimension::Celsius | Dimension::Fahrenheit => "a temperature",
            Dimension::Money(_) => "an amount of money",
            Dimension::Ratio => "a percentage",
            Dimension::Named => "a count",
        }
    }
}

/// A unit: how it is shown, what it measures and its size in the base unit
/// of that dimension.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Unit {
    pub name: String,
    pub dimension: Dimension,
    pub factor: Rational,
}

impl Unit {
    fn known(name: &str, dimension: Dimension, factor: (i128, i128)) -> Option<Unit> {
        Some(Unit {
            name: name.to_owned(),
            dimension,
            factor: Rational::new(factor.0, factor.1).ok()?,
        })
    }

    /// Whether values in `self` and `other` can be converted into each other.
    pub fn commensurable(&self, other: &Unit) -> bool {
        match (self.dimension, other.dimension) {
            (Dimension::Named, Dimension::Named) => same_name(&self.name, &other.name),
            (a, b) => a == b,
        }
    }

    /// The factor that turns a value in `self` into a value in `other`.
    pub fn factor_to(&self, other: &Unit) -> Option<Rational> {
        if !self.commensurable(other) {
            return None;
        }
        self.factor.checked_div(other.factor).ok()
    }
}

/// The word and its possible singulars (`metres`, `inches`, `cms`).
fn singulars(name: &str) -> impl Iterator<Item = &str> {
    let stem = |suffix: &str| name.strip_suffix(suffix).filter(|s| s.len() >= 2);
    [Some(name), stem("s"), stem("es")].into_iter().flatten()
}

fn same_name(a: &str, b: &str) -> bool {
    singulars(a).any(|x| singulars(b).any(|y| x == y))
}

/// Looks up one word or symbol, without powers or rates.
fn lookup(word: &str, prefer_money: bool) -> Option<Unit> {
    use Currency::*;
    use Dimension::*;
    let entry = |name: &str| -> Option<(&'static str, Dimension, (i128, i128))> {
        Some(match name {
            "mm" | "millimetre" | "millimeter" => ("mm", Length, (1, 1000)),
            "cm" | "centimetre" | "centimeter" => ("cm", Length, (1, 100)),
            "m" | "metre" | "meter" => ("m", Length, (1, 1)),
            "km" | "kilometre" | "kilometer" => ("km", Length, (1000, 1)),
            // Not `in`: "12 in total" is no length.
            "inch" => ("in", Length, (254, 10_000)),
            "ft" | "foot" | "feet" => ("ft", Length, (3048, 10_000)),
            "yd" | "yard" => ("yd", Length, (9144, 10_000)),
            "mi" | "mile" => ("mi", Length, (1_609_344, 1000)),
            "ha" | "hectare" => ("ha", Area, (10_000, 1)),
            "mg" | "milligram" => ("mg", Mass, (1, 1000)),
            "g" | "gram" | "gramme" => ("g", Mass, (1, 1)),
            "kg" | "kilogram" | "kilo" => ("kg", Mass, (1000, 1)),
            "t" | "tonne" => ("t", Mass, (1_000_000, 1)),
            "lb" | "pound" => ("lb", Mass, (45_359_237, 100_000)),
            "oz" | "ounce" => ("oz", Mass, (28_349_523_125, 1_000_000_000)),
            "ms" | "millisecond" => ("ms", Time, (1, 1000)),
            "s" | "sec" | "second" => ("s", Time, (1, 1)),
            "min" | "minute" => ("min", Time, (60, 1)),
            "h" | "hr" | "hour" => ("h", Time, (3600, 1)),
            "day" => ("days", Time, (86_400, 1)),
            "week" => ("weeks", Time, (604_800, 1)),
            "ml" | "millilitre" | "milliliter" | "cc" => ("ml", Volume, (1, 1000)),
            "cl" | "centilitre" | "centiliter" => ("cl", Volume, (1, 100)),
            "l" | "litre" | "liter" => ("l", Volume, (1, 1)),
            "kph" | "kmh" => ("km/h", Speed, (1000, 3600)),
            "mph" => ("mph", Speed, (1_609_344, 3_600_000)),
            "°" | "deg" | "degree" => ("°", Angle, (1, 1)),
            "°c" | "celsius" => ("°C", Celsius, (1, 1)),
            "°f" | "fahrenheit" => ("°F", Fahrenheit, (1, 1)),
            "$" | "dollar" | "usd" => ("$", Money(Dollar), (1, 1)),
            "¢" | "cent" => ("¢", Money(Dollar), (1, 100)),
            "€" | "euro" | "eur" => ("€", Money(Euro), (1, 1)),
            "£" | "gbp" => ("£", Money(Pound), (1, 1)),
            "p" | "pence" | "penny" => ("p", Money(Pound), (1, 100)),
            "%" => ("%", Ratio, (1, 100)),
            _ => return None,
        })
    };
    if prefer_money && singulars(word).any(|w| w == "pound") {
        return Unit::known("£", Money(Pound), (1, 1));
    }
    let (name, dimension, factor) = singulars(word).find_map(entry)?;
    Unit::known(name, dimension, factor)
}

/// Units that are single letters, and so are read as units only where no
/// variable is expected.
fn is_single_letter(word: &str) -> bool {
    word.chars().count() == 1 && word.chars().all(|c| c.is_ascii_alphabetic())
}

/// How a unit may be read at a position.
#[derive(Debug, Clone, Copy)]
pub(super) struct UnitContext<'a> {
    /// Read `m`, `g`, `s`, `h`, `l` as units (no variables are expected).
    pub single_letters: bool,
    /// The unit the answer is expected in, which is always recognised.
    pub expected: Option<&'a Unit>,
}

/// Reads a unit starting at `chars[i]` (after optional spaces): a word or
/// symbol, an optional power (`cm^2`, `cm²`, `sq cm`), an optional rate
/// (`km/h`, `m per s`). Returns the unit and where it ends.
pub(super) fn read_unit(chars: &[char], i: usize, context: UnitContext) -> Option<(Unit, usize)> {
    let mut at = skip_spaces(chars, i);
    let mut power = 1;
    // `sq cm`, `square metres`, `cubic cm`.
    if let Some((word, end)) = word_at(chars, at) {
        let p = match word.as_str() {
            "sq" | "square" => 2,
            "cubic" | "cu" => 3,
            _ => 1,
        };
        if p > 1 && base_word(chars, skip_spaces(chars, end), context).is_some() {
            power = p;
            at = skip_spaces(chars, end);
        }
    }
    let (base, mut end) = base_word(chars, at, context)?;
    // `cm^2`, `cm^(2)`, `cm2`.
    if let Some((p, after)) = power_at(chars, end) {
        power = p;
        end = after;
    }
    let mut unit = raise(base, power)?;
    // `km/h`, `m/s`, `km per hour`.
    let rate_at = if chars.get(end) == Some(&'/') {
        Some(end + 1)
    } else {
        let after = skip_spaces(chars, end);
        match word_at(chars, after) {
            Some((w, e)) if w == "per" => Some(skip_spaces(chars, e)),
            _ => None,
        }
    };
    if let Some(rate_at) = rate_at
        && let Some((per, after)) = base_word(
            chars,
            rate_at,
            UnitContext {
                single_letters: true,
                ..context
            },
        )
        && unit.dimension == Dimension::Length
        && per.dimension == Dimension::Time
    {
        unit = Unit {
            name: format!("{}/{}", unit.name, per.name),
            dimension: Dimension::Speed,
            factor: unit.factor.checked_div(per.factor).ok()?,
        };
        end = after;
    }
    Some((unit, end))
}

/// A currency symbol written before an amount (`$36`, `£9.60`).
pub(super) fn currency_prefix(c: char) -> Option<Unit> {
    match c {
        '$' | '€' | '£' => lookup(&c.to_string(), false),
        _ => None,
    }
}

/// Per cent, as a unit.
pub(super) fn percent() -> Unit {
    Unit {
        name: "%".to_owned(),
        dimension: Dimension::Ratio,
        factor: Rational::new(1, 100).unwrap_or(Rational::ONE),
    }
}

/// Parses the `unit` field of an expected answer.
pub(super) fn parse_expected(unit: &str) -> Option<Unit> {
    let folded = unit.trim().to_lowercase();
    let folded = if folded == "in" {
        "inch".to_owned()
    } else {
        folded
    };
    let chars: Vec<char> = folded.chars().collect();
    let context = UnitContext {
        single_letters: true,
        expected: None,
    };
    match read_unit(&chars, 0, context) {
        Some((unit, end)) if skip_spaces(&chars, end) == chars.len() => Some(unit),
        _ if !folded.is_empty() => Some(Unit {
            name: folded,
            dimension: Dimension::Named,
            factor: Rational::ONE,
        }),
        _ => None,
    }
}

fn skip_spaces(chars: &[char], mut i: usize) -> usize {
    while chars.get(i) == Some(&' ') {
        i += 1;
    }
    i
}

/// The word (letters) starting at `i`.
fn word_at(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut end = i;
    while chars.get(end).is_some_and(char::is_ascii_alphabetic) {
        end += 1;
    }
    (end > i).then(|| (chars[i..end].iter().collect(), end))
}

fn base_word(chars: &[char], i: usize, context: UnitContext) -> Option<(Unit, usize)> {
    let prefer_money = context
        .expected
        .is_some_and(|u| matches!(u.dimension, Dimension::Money(_)));
    let c = *chars.get(i)?;
    if matches!(c, '°' | '%' | '$' | '€' | '£' | '¢') {
        // `°C` and `°F` are temperatures; a bare `°` is an angle.
        if c == '°'
            && let Some(&scale) = chars.get(i + 1).filter(|s| matches!(s, 'c' | 'f'))
            && !chars.get(i + 2).is_some_and(char::is_ascii_alphabetic)
        {
            return lookup(&format!("°{scale}"), false).map(|u| (u, i + 2));
        }
        return lookup(&c.to_string(), prefer_money).map(|u| (u, i + 1));
    }
    let (word, end) = word_at(chars, i)?;
    // `degrees celsius`, `degrees f`: a temperature, not an angle.
    if singulars(&word).any(|w| w == "degree")
        && let Some((scale, after)) = word_at(chars, skip_spaces(chars, end))
    {
        let scale = match scale.as_str() {
            "c" | "celsius" | "centigrade" => Some("°c"),
            "f" | "fahrenheit" => Some("°f"),
            _ => None,
        };
        if let Some(scale) = scale {
            return lookup(scale, false).map(|u| (u, after));
        }
    }
    if let Some(expected) = context.expected {
        if expected.dimension == Dimension::Named && same_name(&word, &expected.name) {
            return Some((expected.clone(), end));
        }
        if word == expected.name {
            return Some((expected.clone(), end));
        }
    }
    if is_single_letter(&word) && !context.single_letters {
        return None;
    }
    lookup(&word, prefer_money).map(|u| (u, end))
}

/// `^2`, `^(2)`, or a digit glued to the unit (`cm2`).
fn power_at(chars: &[char], i: usize) -> Option<(i32, usize)> {
    let mut at = skip_spaces(chars, i);
    if chars.get(at) == Some(&'^') {
        at += 1;
        let bracket = chars.get(at) == Some(&'(');
        if bracket {
            at += 1;
        }
        let digit = chars.get(at)?.to_digit(10)?;
        at += 1;
        if bracket {
            if chars.get(at) != Some(&')') {
                return None;
            }
            at += 1;
        }
        return matches!(digit, 2 | 3).then_some((digit as i32, at));
    }
    match chars.get(i).and_then(|c| c.to_digit(10)) {
        Some(d @ (2 | 3)) if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
            Some((d as i32, i + 1))
        }
        _ => None,
    }
}

fn raise(base: Unit, power: i32) -> Option<Unit> {
    if power == 1 {
        return Some(base);
    }
    let dimension = match (base.dimension, power) {
        (Dimension::Length, 2) => Dimension::Area,
        (Dimension::Length, 3) => Dimension::Volume,
        _ => return None,
    };
    let mut factor = base.factor.checked_pow(i64::from(power)).ok()?;
    if dimension == Dimension::Volume {
        // Volumes are measured in litres: 1 m³ is 1000 l.
        factor = factor.checked_mul(Rational::integer(1000)).ok()?;
    }
    Some(Unit {
        name: format!("{}^{power}", base.name),
        dimension,
        factor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, single_letters: bool) -> Option<(String, String)> {
        let chars: Vec<char> = text.chars().collect();
        let context = UnitContext {
            single_letters,
            expected: None,
        };
        read_unit(&chars, 0, context).map(|(u, end)| {
            (
                u.name,
                chars[end..].iter().collect::<String>().trim().to_owned(),
            )
        })
    }

    #[test]
    fn reads_units_with_powers_and_rates() {
        assert_eq!(read(" cm", false), Some(("cm".into(), "".into())));
        assert_eq!(
            read("cm^2 is it", false),
            Some(("cm^2".into(), "is it".into()))
        );
        assert_eq!(read("cm2", false), Some(("cm^2".into(), "".into())));
        assert_eq!(
            read("square metres", false),
            Some(("m^2".into(), "".into()))
        );
        assert_eq!(read("km/h", false), Some(("km/h".into(), "".into())));
        assert_eq!(read("km per hour", false), Some(("km/h".into(), "".into())));
        assert_eq!(read("centimetres.", false), Some(("cm".into(), ".".into())));
        assert_eq!(read("°c", false), Some(("°C".into(), "".into())));
        assert_eq!(
            read("degrees celsius", false),
            Some(("°C".into(), "".into()))
        );
        assert_eq!(read("degrees", false), Some(("°".into(), "".into())));
        assert_eq!(read("m", false), None);
        assert_eq!(read("m", true), Some(("m".into(), "".into())));
        assert_eq!(read("apples", true), None);
    }

    #[test]
    fn conversions() {
        let cm = parse_expected("cm").unwrap();
        let m = parse_expected("metres").unwrap();
        assert_eq!(m.factor_to(&cm), Some(Rational::integer(100)));
        let ml = parse_expected("ml").unwrap();
        let cm3 = parse_expected("cm³".replace('³', "^3").as_str()).unwrap();
        assert_eq!(cm3.factor_to(&ml), Some(Rational::ONE));
        let kg = parse_expected("kg").unwrap();
        assert_eq!(kg.factor_to(&cm), None);
        let apples = parse_expected("apples").unwrap();
        assert!(apples.commensurable(&parse_expected("apple").unwrap()));
    }
}
