//! Question templates with `{name}` and `{name:format}` placeholders, and
//! how values are written for students.
//!
//! A placeholder may also hold a formula over the names, such as
//! `{ao + 10 - bo}` or `{a * b:paren}`, so a worked step can state the
//! numbers it works with without a derived value for each.
//!
//! A `{` that starts a placeholder is followed by a letter or `_`; any other
//! brace is kept as written, so LaTeX works: `\frac{{n}}{{d}}` puts the
//! values of `n` and `d` inside the braces of `\frac`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::math::{Expr, Number, ParseOptions, Rational, Value, evaluate};

/// How a value is written in a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Whole numbers as `12`, terminating decimals as `0.75`, others as `1/3`.
    Plain,
    /// With its sign as an operator, to follow another term: `+ 5`, `- 5`.
    Signed,
    /// Negative numbers in brackets: `(-3)`.
    Paren,
    /// As a coefficient before a letter: `3`, nothing for 1, `-` for -1.
    Coef,
    /// Always as a fraction: `3/4`.
    Fraction,
    /// Always as a decimal: `0.75` (only for values that terminate).
    Decimal,
    /// A whole number from 0 to 2^32 - 1 as a dotted IPv4 address.
    Ipv4,
}

impl Format {
    pub const NAMES: [&'static str; 6] = ["signed", "paren", "coef", "fraction", "decimal", "ipv4"];

    fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "signed" => Format::Signed,
            "paren" => Format::Paren,
            "coef" => Format::Coef,
            "fraction" => Format::Fraction,
            "decimal" => Format::Decimal,
            "ipv4" => Format::Ipv4,
            _ => return None,
        })
    }
}

/// Why a value cannot be written the way it was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(pub String);

/// Most decimal places written; beyond that a value is not a school decimal.
const MAX_DECIMAL_PLACES: u32 = 12;

/// Writes `value` in `format`. Only exact values can be shown: a question
/// never displays a rounded approximation.
pub fn format_number(value: Number, format: Format) -> Result<String, FormatError> {
    let Some(r) = value.exact() else {
        return Err(FormatError(format!(
            "{value} is not exact (e.g. the square root of a non-square)"
        )));
    };
    format_rational(r, format)
}

pub fn format_rational(r: Rational, format: Format) -> Result<String, FormatError> {
    Ok(match format {
        Format::Plain => plain(r),
        Format::Signed => {
            let sign = if r.numer() < 0 { '-' } else { '+' };
            format!("{sign} {}", plain(r.abs()))
        }
        Format::Paren if r.numer() < 0 => format!("({})", plain(r)),
        Format::Paren => plain(r),
        Format::Coef if r == Rational::ONE => String::new(),
        Format::Coef if r == -Rational::ONE => "-".to_owned(),
        Format::Coef => plain(r),
        Format::Fraction => r.to_string(),
        Format::Decimal => decimal(r).ok_or_else(|| {
            FormatError(format!("{r} cannot be written as a terminating decimal"))
        })?,
        Format::Ipv4 => ipv4(r)
            .ok_or_else(|| FormatError(format!("{r} is not an IPv4 address (0 to 4294967295)")))?,
    })
}

/// A value as a student writes it: a whole number, an exact decimal
/// (`12.5`), else a fraction.
pub fn plain(r: Rational) -> String {
    if r.is_integer() {
        r.numer().to_string()
    } else {
        decimal(r).unwrap_or_else(|| r.to_string())
    }
}

/// A small count in words ("three 2s multiplied together"), from one to ten.
pub fn count_word(n: u32) -> Option<&'static str> {
    const WORDS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS.get(usize::try_from(n.checked_sub(1)?).ok()?).copied()
}

/// The exact decimal expansion, when the denominator has no prime factor
/// other than 2 and 5 (and the expansion is short).
pub fn decimal(r: Rational) -> Option<String> {
    let mut den = r.denom();
    let (mut twos, mut fives) = (0u32, 0u32);
    while den % 2 == 0 {
        den /= 2;
        twos += 1;
    }
    while den % 5 == 0 {
        den /= 5;
        fives += 1;
    }
    let places = twos.max(fives);
    if den != 1 || places > MAX_DECIMAL_PLACES {
        return None;
    }
    let scale = 10i128.checked_pow(places)?;
    let scaled = r.numer().checked_mul(scale / r.denom())?;
    if places == 0 {
        return Some(scaled.to_string());
    }
    let digits = scaled.unsigned_abs().to_string();
    let width = places as usize + 1;
    let digits = format!("{digits:0>width$}");
    let (whole, fraction) = digits.split_at(digits.len() - places as usize);
    let sign = if scaled < 0 { "-" } else { "" };
    Some(format!("{sign}{whole}.{fraction}"))
}

fn ipv4(r: Rational) -> Option<String> {
    let n = u32::try_from(r.is_integer().then_some(r.numer())?).ok()?;
    let [a, b, c, d] = n.to_be_bytes();
    Some(format!("{a}.{b}.{c}.{d}"))
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Text(String),
    Slot {
        name: String,
        format: Format,
    },
    /// A formula placeholder: `{a + b}`.
    Formula {
        expr: Expr,
        format: Format,
    },
}

/// A template problem, with the character offset where it starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at character {offset})")]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

/// A parsed template. Parsing happens once, when content is loaded; a
/// template that does not parse keeps its error for validation to report.
#[derive(Debug, Clone)]
pub struct Template {
    text: String,
    parsed: Result<Vec<Segment>, TemplateError>,
}

impl PartialEq for Template {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Template {
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let parsed = parse(&text);
        Template { text, parsed }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn error(&self) -> Option<&TemplateError> {
        self.parsed.as_ref().err()
    }

    /// The names its placeholders use, in order (with repeats).
    pub fn names(&self) -> Vec<&str> {
        match &self.parsed {
            Ok(segments) => segments
                .iter()
                .flat_map(|s| match s {
                    Segment::Slot { name, .. } => vec![name.as_str()],
                    Segment::Formula { expr, .. } => expr.variables(),
                    Segment::Text(_) => Vec::new(),
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The formulas inside its placeholders (not the plain names), for
    /// validation to check that each is a number.
    pub fn formulas(&self) -> Vec<&Expr> {
        match &self.parsed {
            Ok(segments) => segments
                .iter()
                .filter_map(|s| match s {
                    Segment::Formula { expr, .. } => Some(expr),
                    _ => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The text written around the placeholders, joined (validation looks
    /// for braces there that were meant as placeholders).
    pub fn literal_text(&self) -> String {
        match &self.parsed {
            Ok(segments) => segments
                .iter()
                .filter_map(|s| match s {
                    Segment::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect(),
            Err(_) => String::new(),
        }
    }

    /// Fills every placeholder from `lookup`.
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<Number>) -> Result<String, FormatError> {
        self.render_inner(lookup, None)
    }

    /// Fills every placeholder from `lookup`, but writes `mask` for each
    /// one that uses `hidden` (a step with its result left open).
    pub fn render_hiding(
        &self,
        lookup: &dyn Fn(&str) -> Option<Number>,
        hidden: &str,
        mask: &str,
    ) -> Result<String, FormatError> {
        self.render_inner(lookup, Some((hidden, mask)))
    }

    /// How the first placeholder naming `name` writes it.
    pub fn format_of(&self, name: &str) -> Option<Format> {
        self.parsed.as_ref().ok()?.iter().find_map(|s| match s {
            Segment::Slot { name: n, format } if n == name => Some(*format),
            _ => None,
        })
    }

    fn render_inner(
        &self,
        lookup: &dyn Fn(&str) -> Option<Number>,
        hiding: Option<(&str, &str)>,
    ) -> Result<String, FormatError> {
        let segments = self
            .parsed
            .as_ref()
            .map_err(|e| FormatError(format!("template `{}`: {e}", self.text)))?;
        let mask_for = |names: &[&str]| {
            hiding
                .filter(|(hidden, _)| names.contains(hidden))
                .map(|(_, mask)| mask)
        };
        let mut out = String::with_capacity(self.text.len() + 16);
        for segment in segments {
            match segment {
                Segment::Text(t) => out.push_str(t),
                Segment::Slot { name, format } => match mask_for(&[name]) {
                    Some(mask) => out.push_str(mask),
                    None => {
                        let value = lookup(name)
                            .ok_or_else(|| FormatError(format!("`{name}` has no value")))?;
                        out.push_str(&format_number(value, *format)?);
                    }
                },
                Segment::Formula { expr, format } => match mask_for(&expr.variables()) {
                    Some(mask) => out.push_str(mask),
                    None => {
                        let value = match evaluate(expr, lookup) {
                            Ok(Value::Num(n)) => n,
                            Ok(Value::Bool(_)) => {
                                return Err(FormatError(format!(
                                    "`{{{expr}}}` is a condition, not a number"
                                )));
                            }
                            Err(e) => return Err(FormatError(format!("`{{{expr}}}`: {e}"))),
                        };
                        out.push_str(&format_number(value, *format)?);
                    }
                },
            }
        }
        Ok(out)
    }
}

fn parse(text: &str) -> Result<Vec<Segment>, TemplateError> {
    let chars: Vec<char> = text.chars().collect();
    let mut segments = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_slot = chars[i] == '{'
            && chars
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_');
        if !starts_slot {
            literal.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        let close = chars[i..]
            .iter()
            .position(|&c| c == '}')
            .map(|p| p + i)
            .ok_or_else(|| TemplateError {
                offset: start,
                message: "a placeholder is not closed with `}`".into(),
            })?;
        let inside: String = chars[i + 1..close].iter().collect();
        let (name, format) = match inside.split_once(':') {
            Some((name, format)) => (name.trim(), Some(format.trim())),
            None => (inside.trim(), None),
        };
        let formula = if is_identifier(name) {
            None
        } else {
            match crate::math::parse(name, ParseOptions::formula()) {
                Ok(expr) => Some(expr),
                Err(e) => {
                    return Err(TemplateError {
                        offset: start,
                        message: format!(
                            "`{{{inside}}}` is not a placeholder: write {{name}}, \
                             {{name:format}} or a formula such as {{a + b}} ({e})"
                        ),
                    });
                }
            }
        };
        let format = match format {
            None => Format::Plain,
            Some(f) => Format::from_name(f).ok_or_else(|| TemplateError {
                offset: start,
                message: format!(
                    "unknown format `{f}` in `{{{inside}}}` (formats: {})",
                    Format::NAMES.join(", ")
                ),
            })?,
        };
        if !literal.is_empty() {
            segments.push(Segment::Text(std::mem::take(&mut literal)));
        }
        segments.push(match formula {
            Some(expr) => Segment::Formula { expr, format },
            None => Segment::Slot {
                name: name.to_owned(),
                format,
            },
        });
        i = close + 1;
    }
    if !literal.is_empty() {
        segments.push(Segment::Text(literal));
    }
    Ok(segments)
}

/// A name parameters and formulas can use: a letter or `_`, then letters,
/// digits and `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Template {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Template::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i128, d: i128) -> Rational {
        Rational::new(n, d).unwrap()
    }

    fn show(n: i128, d: i128, format: Format) -> String {
        format_rational(r(n, d), format).unwrap()
    }

    #[test]
    fn values_read_the_way_they_are_taught() {
        assert_eq!(show(12, 1, Format::Plain), "12");
        assert_eq!(show(-3, 1, Format::Plain), "-3");
        assert_eq!(show(3, 4, Format::Plain), "0.75");
        assert_eq!(show(1, 3, Format::Plain), "1/3");
        assert_eq!(show(-1, 20, Format::Plain), "-0.05");
        assert_eq!(show(3, 4, Format::Fraction), "3/4");
        assert_eq!(show(5, 1, Format::Signed), "+ 5");
        assert_eq!(show(-5, 1, Format::Signed), "- 5");
        assert_eq!(show(-3, 1, Format::Paren), "(-3)");
        assert_eq!(show(3, 1, Format::Paren), "3");
        assert_eq!(show(1, 1, Format::Coef), "");
        assert_eq!(show(-1, 1, Format::Coef), "-");
        assert_eq!(show(7, 1, Format::Coef), "7");
        assert_eq!(show(3_232_236_544, 1, Format::Ipv4), "192.168.4.0");
        assert_eq!(show(307, 100, Format::Decimal), "3.07");
        assert_eq!(show(12, 1, Format::Decimal), "12");
    }

    #[test]
    fn impossible_formats_are_errors() {
        assert!(format_rational(r(1, 3), Format::Decimal).is_err());
        assert!(format_rational(r(-1, 1), Format::Ipv4).is_err());
        assert!(format_rational(r(1 << 32, 1), Format::Ipv4).is_err());
        assert!(format_rational(r(1, 2), Format::Ipv4).is_err());
        assert!(format_number(Number::Approx(1.5), Format::Plain).is_err());
    }

    #[test]
    fn placeholders_and_latex_braces_coexist() {
        let t = Template::new(r"\frac{{n}}{{d}} + {k:paren}");
        assert_eq!(t.names(), vec!["n", "d", "k"]);
        let out = t
            .render(&|name| match name {
                "n" => Some(Number::int(3)),
                "d" => Some(Number::int(4)),
                "k" => Some(Number::int(-2)),
                _ => None,
            })
            .unwrap();
        assert_eq!(out, r"\frac{3}{4} + (-2)");
        assert_eq!(
            Template::new(r"\frac{1}{2} {{ }").names(),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn formulas_fill_placeholders_and_can_be_hidden() {
        let t = Template::new("Borrow a ten: {ao + 10} - {bo} = {result}, then {ao * 2:paren}");
        assert_eq!(t.names(), vec!["ao", "bo", "result", "ao"]);
        assert_eq!(t.formulas().len(), 2);
        let lookup = |name: &str| match name {
            "ao" => Some(Number::int(-2)),
            "bo" => Some(Number::int(8)),
            "result" => Some(Number::int(0)),
            _ => None,
        };
        assert_eq!(
            t.render(&lookup).unwrap(),
            "Borrow a ten: 8 - 8 = 0, then (-4)"
        );
        assert_eq!(
            t.render_hiding(&lookup, "result", "?").unwrap(),
            "Borrow a ten: 8 - 8 = ?, then (-4)"
        );
        let hidden_in_formula = Template::new("{result * 2}");
        assert_eq!(
            hidden_in_formula
                .render_hiding(&lookup, "result", "?")
                .unwrap(),
            "?"
        );
        assert_eq!(t.literal_text(), "Borrow a ten:  -  = , then ");
        assert_eq!(
            Template::new("{result:fraction}").format_of("result"),
            Some(Format::Fraction)
        );
        let condition = Template::new("{ao > bo}").render(&lookup);
        assert!(condition.unwrap_err().0.contains("condition"));
        let zero = Template::new("{ao / (bo - 8)}").render(&lookup);
        assert!(zero.unwrap_err().0.contains("division by zero"));
    }

    #[test]
    fn template_mistakes_say_where() {
        for (text, offset, words) in [
            ("What is {a + {b}?", 8, "not a placeholder"),
            ("What is {a", 8, "not closed"),
            ("{a:bold}", 0, "unknown format `bold`"),
            ("{a + b:bold}", 0, "unknown format `bold`"),
            ("x {a + * b}", 2, "not a placeholder"),
        ] {
            let err = Template::new(text).error().cloned().unwrap();
            assert_eq!(err.offset, offset, "{text}");
            assert!(err.message.contains(words), "{text}: {}", err.message);
        }
        let missing = Template::new("{a} and {b}").render(&|n| (n == "a").then(|| Number::int(1)));
        assert!(missing.unwrap_err().0.contains("`b`"));
    }
}
