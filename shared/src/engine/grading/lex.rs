//! Cutting prepared text into tokens: number literals (with their
//! separators, exponents and mixed numbers), variables, units, operators
//! and the ordinary words and punctuation between them. Whether a letter is
//! a variable, a unit or a times sign depends on the expected answer.

use std::ops::Range;

use super::context::Context;
use super::literal::{self, Literal};
use super::text::Text;
use super::units::{self, Unit, UnitContext};
use crate::math::Rational;
use crate::model::AnswerKind;

#[derive(Debug, Clone)]
pub(super) enum Lex {
    Num(Literal),
    Mixed(Rational),
    Var(String),
    Func(&'static str),
    Op(char),
    Unit(Unit),
    Currency(Unit),
    Word,
    Comma,
    Stop,
    Space,
    Other,
}

impl Lex {
    pub fn is_math(&self) -> bool {
        matches!(
            self,
            Lex::Num(_)
                | Lex::Mixed(_)
                | Lex::Var(_)
                | Lex::Func(_)
                | Lex::Op(_)
                | Lex::Unit(_)
                | Lex::Currency(_)
        )
    }

    pub fn is_operand(&self) -> bool {
        matches!(
            self,
            Lex::Num(_) | Lex::Mixed(_) | Lex::Var(_) | Lex::Func("pi")
        )
    }
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub lex: Lex,
    pub range: Range<usize>,
}

const OPERATORS: &str = "+-*/^()[]{}=<>≤≥≠√±∓!%";

pub(super) fn lex(text: &Text, context: &Context) -> Vec<Token> {
    let chars = text.chars();
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let next_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        let prev_operand = last_solid(&tokens)
            .is_some_and(|t| matches!(t.lex, Lex::Num(_) | Lex::Mixed(_) | Lex::Op(')')));
        let lex = if c == ' ' {
            i += 1;
            Lex::Space
        } else if c.is_ascii_digit() || (c == '.' && next_digit && !prev_digit(chars, i)) {
            let (raw, end) = number_raw(chars, i);
            i = end;
            if let Some((value, end)) = mixed_number(chars, &raw, i) {
                i = end;
                Lex::Mixed(value)
            } else {
                literal::read(&raw).map_or(Lex::Other, Lex::Num)
            }
        } else if c.is_alphabetic() {
            let mut end = i;
            while chars.get(end).is_some_and(|c| c.is_alphabetic()) {
                end += 1;
            }
            let word: String = chars[i..end].iter().collect();
            let unit_context = UnitContext {
                single_letters: single_letter_units(context, &word),
                expected: context.unit,
            };
            let unit = prev_operand
                .then(|| units::read_unit(chars, i, unit_context))
                .flatten()
                .filter(|(_, e)| !chars.get(*e).is_some_and(|c| c.is_alphanumeric()));
            if let Some((unit, unit_end)) = unit {
                i = unit_end;
                Lex::Unit(unit)
            } else if word == "x" && times_sign(context, &tokens, chars, end) {
                i = end;
                Lex::Op('*')
            } else if matches!(word.as_str(), "pi" | "π" | "sqrt" | "abs") {
                i = end;
                Lex::Func(match word.as_str() {
                    "sqrt" => "sqrt",
                    "abs" => "abs",
                    _ => "pi",
                })
            } else if word.chars().count() == 1 {
                i = end;
                if is_variable(context, &tokens, chars, start, end) {
                    Lex::Var(word)
                } else {
                    Lex::Word
                }
            } else if splits_into_variables(context, chars, &word, start, end) {
                for (k, letter) in word.chars().enumerate() {
                    tokens.push(Token {
                        lex: Lex::Var(letter.to_string()),
                        range: start + k..start + k + 1,
                    });
                }
                i = end;
                continue;
            } else {
                i = end;
                Lex::Word
            }
        } else if matches!(c, '$' | '€' | '£') && !prev_operand {
            i += 1;
            units::currency_prefix(c).map_or(Lex::Other, Lex::Currency)
        } else if matches!(c, '$' | '€' | '£' | '°' | '¢') && prev_operand {
            let unit_context = UnitContext {
                single_letters: true,
                expected: context.unit,
            };
            match units::read_unit(chars, i, unit_context) {
                Some((unit, end)) => {
                    i = end;
                    Lex::Unit(unit)
                }
                None => {
                    i += 1;
                    Lex::Other
                }
            }
        } else if c == '!' && chars.get(i + 1) != Some(&'=') {
            i += 1;
            Lex::Stop
        } else if OPERATORS.contains(c) {
            i += 1;
            Lex::Op(match c {
                '[' | '{' => '(',
                ']' | '}' => ')',
                _ => c,
            })
        } else if c == ',' {
            i += 1;
            Lex::Comma
        } else if matches!(c, '.' | '?' | ';' | ':') {
            i += 1;
            Lex::Stop
        } else {
            i += 1;
            Lex::Other
        };
        tokens.push(Token {
            lex,
            range: start..i,
        });
    }
    tokens
}

fn last_solid(tokens: &[Token]) -> Option<&Token> {
    tokens.iter().rev().find(|t| !matches!(t.lex, Lex::Space))
}

fn prev_digit(chars: &[char], i: usize) -> bool {
    i > 0 && chars[i - 1].is_ascii_digit()
}

fn next_solid(chars: &[char], from: usize) -> Option<char> {
    chars[from.min(chars.len())..]
        .iter()
        .find(|c| **c != ' ')
        .copied()
}

fn prev_solid(chars: &[char], before: usize) -> Option<char> {
    chars[..before.min(chars.len())]
        .iter()
        .rev()
        .find(|c| **c != ' ')
        .copied()
}

/// Where single-letter units (`m`, `g`, `s`) may be read: never where a
/// letter could be one of the expected answer's variables.
fn single_letter_units(context: &Context, word: &str) -> bool {
    let variable = context.variables.iter().any(|v| v == word);
    match context.kind {
        AnswerKind::Number | AnswerKind::Mcq | AnswerKind::Text => !variable,
        AnswerKind::Equation => !variable && !context.all_letters,
        AnswerKind::Expression => false,
    }
}

/// `3 x 4`, `2.5x10^3`: the letter x as a times sign between numbers,
/// where no variable is expected.
fn times_sign(context: &Context, tokens: &[Token], chars: &[char], end: usize) -> bool {
    let numeric_kind = matches!(context.kind, AnswerKind::Number | AnswerKind::Mcq);
    let after_number = last_solid(tokens)
        .is_some_and(|t| matches!(t.lex, Lex::Num(_) | Lex::Mixed(_) | Lex::Op(')')));
    // `3 x -5` with spaces, but `2x-3` is algebra.
    let spaced = chars.get(end) == Some(&' ');
    let before_number = next_solid(chars, end)
        .is_some_and(|c| c.is_ascii_digit() || c == '(' || c == '.' || (c == '-' && spaced));
    numeric_kind && !context.all_letters && after_number && before_number
}

fn is_operator_char(c: char) -> bool {
    "+-*/^()=<>√".contains(c)
}

/// A lone letter is a variable when the expected answer uses it, or when
/// it sits in mathematics (`2x`, `x+1`, `x = 4`) rather than in a sentence.
fn is_variable(
    context: &Context,
    tokens: &[Token],
    chars: &[char],
    start: usize,
    end: usize,
) -> bool {
    let letter: String = chars[start..end].iter().collect();
    let next = next_solid(chars, end);
    let after_equals = last_solid(tokens).is_some_and(|t| matches!(t.lex, Lex::Op('=')));
    let glued = (start > 0
        && (chars[start - 1].is_ascii_digit() || is_operator_char(chars[start - 1])))
        || chars
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || is_operator_char(*c));
    // Brackets alone do not make a letter algebra where a number is
    // expected: `a) 4` is a list, `4 (i think)` a remark.
    let glued_to_operation = (start > 0
        && (chars[start - 1].is_ascii_digit() || "+-*/^=<>".contains(chars[start - 1])))
        || chars
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || "+-*/^=<>".contains(*c));
    // Where a number is expected, a letter is still algebra when it is
    // written into the mathematics (`2x`, `x=4`), so it is not misread.
    let allowed = context.all_letters
        || matches!(context.kind, AnswerKind::Expression | AnswerKind::Equation)
        || next == Some('=')
        || after_equals
        || glued_to_operation;
    if !allowed {
        return false;
    }
    let beside_operator = prev_solid(chars, start).is_some_and(|c| "+-*/^(=<>".contains(c))
        || next.is_some_and(|c| "+-*/^)=<>".contains(c));
    context.all_letters || context.variables.contains(&letter) || glued || beside_operator
}

/// `xy`, `2ab`: a short word of letters written as a product of variables.
fn splits_into_variables(
    context: &Context,
    chars: &[char],
    word: &str,
    start: usize,
    end: usize,
) -> bool {
    if matches!(
        context.kind,
        AnswerKind::Number | AnswerKind::Mcq | AnswerKind::Text
    ) || word.chars().count() > 4
    {
        return false;
    }
    let all_known = word
        .chars()
        .all(|c| context.variables.iter().any(|v| v.chars().eq([c])));
    let glued = (start > 0
        && (chars[start - 1].is_ascii_digit() || is_operator_char(chars[start - 1])))
        || chars
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || is_operator_char(*c));
    let connective = matches!(word, "or" | "and" | "of" | "is" | "to" | "so");
    all_known || glued || (context.all_letters && !connective)
}

/// The raw text of a number literal starting at `i`, and where it ends.
fn number_raw(chars: &[char], i: usize) -> (String, usize) {
    let digit = |k: usize| chars.get(k).is_some_and(char::is_ascii_digit);
    let mut j = i;
    let mut raw = String::new();
    let mut group_len = 0;
    let mut groups = 0;
    let take = |j: &mut usize, raw: &mut String| -> usize {
        let from = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            raw.push(chars[*j]);
            *j += 1;
        }
        *j - from
    };
    if chars.get(j) == Some(&'.') {
        raw.push('.');
        j += 1;
    }
    group_len += take(&mut j, &mut raw);
    loop {
        match chars.get(j) {
            Some(&sep @ ('.' | ',')) if digit(j + 1) => {
                raw.push(sep);
                j += 1;
                take(&mut j, &mut raw);
                group_len = usize::MAX;
            }
            // `12 345`: a space grouping thousands, never before a fraction bar.
            Some(' ') if (1..=3).contains(&group_len) || (groups > 0 && group_len == 3) => {
                let three = (1..=3).all(|k| digit(j + k));
                let ends = !digit(j + 4) && chars.get(j + 4) != Some(&'/');
                if !(three && ends) || raw.contains(['.', ',']) {
                    break;
                }
                raw.push(' ');
                j += 1;
                group_len = take(&mut j, &mut raw);
                groups += 1;
            }
            _ => break,
        }
    }
    // Scientific notation: 2.5e3, 2.5e-3.
    if chars.get(j) == Some(&'e') {
        let signed = matches!(chars.get(j + 1), Some('+' | '-'));
        let first = if signed { j + 2 } else { j + 1 };
        let mut k = first;
        while digit(k) {
            k += 1;
        }
        if k > first && !chars.get(k).is_some_and(|c| c.is_alphabetic()) {
            raw.extend(&chars[j..k]);
            j = k;
        }
    }
    (raw, j)
}

/// `1 1/2` after the whole number `raw`: a proper fraction one space away.
fn mixed_number(chars: &[char], raw: &str, at: usize) -> Option<(Rational, usize)> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) || chars.get(at) != Some(&' ') {
        return None;
    }
    let digits = |from: usize| {
        let mut k = from;
        while chars.get(k).is_some_and(char::is_ascii_digit) {
            k += 1;
        }
        k
    };
    let num_end = digits(at + 1);
    if num_end == at + 1 || chars.get(num_end) != Some(&'/') {
        return None;
    }
    let den_end = digits(num_end + 1);
    if den_end == num_end + 1
        || chars
            .get(den_end)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '^'))
    {
        return None;
    }
    let read = |r: Range<usize>| chars[r].iter().collect::<String>().parse::<i128>().ok();
    let (whole, num, den) = (
        raw.parse::<i128>().ok()?,
        read(at + 1..num_end)?,
        read(num_end + 1..den_end)?,
    );
    if num >= den || den == 0 {
        return None;
    }
    let value = Rational::integer(whole)
        .checked_add(Rational::new(num, den).ok()?)
        .ok()?;
    Some((value, den_end))
}
