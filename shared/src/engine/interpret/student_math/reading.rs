//! The runs of mathematics in a student's message, read the way students
//! write it ("How do I solve 2x+3=11?" holds `2x+3=11`; "3 times 4" is
//! `3 * 4`), and what kind of problem each run is ([`ProblemShape`]).

use std::sync::LazyLock;

use regex::Regex;

use super::recent::Recent;
use crate::content::course::ProblemShape;

/// One piece of a run of mathematics.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    /// A number as written; `decimal` when it has a decimal point.
    Num {
        text: String,
        decimal: bool,
    },
    /// A fraction written `a/b` with no spaces.
    Frac(String),
    Var(char),
    /// `+ - * ÷ / ^ = : ( ) %`; `/` only when spaced (`144 / 12`).
    Op(char),
    /// "of", between a fraction or percentage and an amount.
    Of,
}

/// A run of mathematics found in a message.
#[derive(Debug, Clone, PartialEq)]
pub struct MathRun {
    pub(super) pieces: Vec<Piece>,
}

impl MathRun {
    /// The run written out compactly: `2x+3=11`, `3/4*20` (with `of` as `*`).
    pub fn compact(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Num { text, .. } | Piece::Frac(text) => text.clone(),
                Piece::Var(v) => v.to_string(),
                Piece::Op('÷') => "/".to_owned(),
                Piece::Op(c) => c.to_string(),
                Piece::Of => "*".to_owned(),
            })
            .collect()
    }

    /// The run as a reader would write it: `72 - 38 = 46`, `3/4 of 20`.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| &self.pieces[j]);
            let text = match p {
                Piece::Num { text, .. } | Piece::Frac(text) => text.clone(),
                Piece::Var(v) => v.to_string(),
                Piece::Op('*') => "×".to_owned(),
                Piece::Op(c) => c.to_string(),
                Piece::Of => "of".to_owned(),
            };
            let glued = match (prev, p) {
                (None, _) => true,
                (Some(Piece::Num { .. }), Piece::Var(_)) => true,
                (Some(Piece::Op('(')), _) | (_, Piece::Op(')' | '%' | '^')) => true,
                (Some(Piece::Op('^')), _) => true,
                (Some(Piece::Op('-')), Piece::Num { .. }) if self.is_sign(i - 1) => true,
                (Some(Piece::Num { .. } | Piece::Var(_) | Piece::Op(')')), Piece::Op('(')) => true,
                _ => false,
            };
            if !glued {
                out.push(' ');
            }
            out.push_str(&text);
        }
        out
    }

    /// Whether the `-` at `i` is a sign (at the start or after an operator).
    fn is_sign(&self, i: usize) -> bool {
        self.pieces[i] == Piece::Op('-')
            && (i == 0
                || matches!(
                    self.pieces[i - 1],
                    Piece::Op('+' | '-' | '*' | '÷' | '/' | '=' | '(' | '^')
                ))
    }

    pub(super) fn has_decimal(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Num { decimal: true, .. }))
    }

    pub(super) fn has_var(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Var(_)))
    }

    pub(super) fn has_op(&self, op: char) -> bool {
        self.pieces.contains(&Piece::Op(op))
    }

    /// The run's pieces before and after its one `=`, if it has exactly one.
    pub(super) fn sides(&self) -> Option<(&[Piece], &[Piece])> {
        let at: Vec<usize> = self
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == Piece::Op('='))
            .map(|(i, _)| i)
            .collect();
        match at[..] {
            [i] if i > 0 && i + 1 < self.pieces.len() => {
                Some((&self.pieces[..i], &self.pieces[i + 1..]))
            }
            _ => None,
        }
    }

    /// What kind of problem the run is, if any: a lone number is none, nor
    /// is a bare answer like `x = 4`.
    pub fn shape(&self) -> Option<ProblemShape> {
        if self.has_var() {
            return match self.sides() {
                Some((left, right)) => equation_shape(left, right),
                None if self.has_op('=') => None,
                None => Some(ProblemShape::Expression),
            };
        }
        let pieces = match self.sides() {
            Some((left, _)) => left,
            None => &self.pieces[..],
        };
        arithmetic_shape(pieces)
    }
}

fn is_value(p: &Piece) -> bool {
    matches!(p, Piece::Num { .. } | Piece::Frac(_) | Piece::Var(_))
}

fn arithmetic_shape(pieces: &[Piece]) -> Option<ProblemShape> {
    let count = |f: &dyn Fn(&Piece) -> bool| pieces.iter().filter(|p| f(p)).count();
    let values = count(&|p| matches!(p, Piece::Num { .. } | Piece::Frac(_)));
    let fractions = count(&|p| matches!(p, Piece::Frac(_)));
    let has = |c: char| pieces.contains(&Piece::Op(c));
    if has('%') {
        return Some(ProblemShape::Percentage);
    }
    if has(':') {
        return (values >= 2).then_some(ProblemShape::Ratio);
    }
    if fractions > 0 && pieces.contains(&Piece::Of) {
        return Some(ProblemShape::FractionOfAmount);
    }
    let add_sub = pieces
        .iter()
        .enumerate()
        .any(|(i, p)| matches!(p, Piece::Op('+' | '-')) && i > 0 && !signs(pieces, i));
    let mul_div = has('*') || has('÷') || has('/');
    if fractions > 0 {
        return Some(if values == 1 {
            ProblemShape::SingleFraction
        } else if mul_div {
            ProblemShape::FractionMulDiv
        } else {
            ProblemShape::FractionAddSub
        });
    }
    if values < 2 {
        let negative = (0..pieces.len()).any(|i| signs(pieces, i));
        return (negative && values == 1).then_some(ProblemShape::NegativeNumbers);
    }
    if pieces
        .iter()
        .any(|p| matches!(p, Piece::Num { decimal: true, .. }))
    {
        return Some(ProblemShape::DecimalArithmetic);
    }
    if (0..pieces.len()).any(|i| signs(pieces, i)) {
        return Some(ProblemShape::IntegerArithmetic);
    }
    if has('(') || has('^') || (add_sub && mul_div) {
        return Some(ProblemShape::MixedOperations);
    }
    if mul_div {
        Some(ProblemShape::WholeMulDiv)
    } else if add_sub {
        Some(ProblemShape::WholeAddSub)
    } else {
        None
    }
}

/// Whether the `-` at `i` of `pieces` is the sign of a number.
fn signs(pieces: &[Piece], i: usize) -> bool {
    pieces[i] == Piece::Op('-')
        && pieces.get(i + 1).is_some_and(is_value)
        && (i == 0
            || matches!(
                pieces[i - 1],
                Piece::Op('+' | '-' | '*' | '÷' | '/' | '(' | '=')
            ))
}

/// One step or two: how many operations stand between the unknown and
/// the number on the other side.
fn equation_shape(left: &[Piece], right: &[Piece]) -> Option<ProblemShape> {
    let holds_var = |side: &[Piece]| side.iter().any(|p| matches!(p, Piece::Var(_)));
    let (with_var, without) = match (holds_var(left), holds_var(right)) {
        (true, true) => return Some(ProblemShape::TwoStepEquation),
        (true, false) => (left, right),
        (false, true) => (right, left),
        (false, false) => return None,
    };
    if with_var.len() == 1 && without.len() == 1 {
        // `x = 4` is an answer, not a problem.
        return None;
    }
    // Each number beside the unknown is one operation to undo (2x + 3:
    // a coefficient and a term); a bracket always needs two.
    let steps = with_var
        .iter()
        .filter(|p| matches!(p, Piece::Num { .. } | Piece::Frac(_)))
        .count();
    let bracket = with_var
        .windows(2)
        .any(|w| matches!(w, [Piece::Num { .. }, Piece::Op('(')]));
    match steps {
        0 => None,
        1 if !bracket => Some(ProblemShape::OneStepEquation),
        _ => Some(ProblemShape::TwoStepEquation),
    }
}

/// The runs of mathematics in `message`, in order.
pub fn math_runs(message: &str) -> Vec<MathRun> {
    thread_local! {
        static RECENT: Recent<Vec<MathRun>> = const { Recent::new() };
    }
    RECENT.with(|recent| recent.get_or(message, || read_math_runs(message)))
}

fn read_math_runs(message: &str) -> Vec<MathRun> {
    let text = prepared(message);
    let chars: Vec<char> = text.chars().collect();
    let mut runs = Vec::new();
    let mut current: Vec<Piece> = Vec::new();
    let mut i = 0;
    let end = |current: &mut Vec<Piece>, runs: &mut Vec<MathRun>| {
        trim_run(current);
        let lone_fraction = matches!(current[..], [Piece::Frac(_)]);
        if current.iter().any(is_value) && (current.len() > 1 || lone_fraction) {
            runs.push(MathRun {
                pieces: std::mem::take(current),
            });
        }
        current.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], '.' | ',')
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                        && (chars[i] == '.' || thousands(&chars, i))))
            {
                i += 1;
            }
            let number: String = chars[start..i].iter().filter(|c| **c != ',').collect();
            // `3/4` with no spaces is a fraction; `144 / 12` a division.
            if chars.get(i) == Some(&'/') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                let den_start = i + 1;
                let mut j = den_start;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let den: String = chars[den_start..j].iter().collect();
                if !number.contains('.') {
                    current.push(Piece::Frac(format!("{number}/{den}")));
                    i = j;
                    continue;
                }
            }
            current.push(Piece::Num {
                decimal: number.contains('.'),
                text: number,
            });
            continue;
        }
        if c.is_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_alphabetic() {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let before = chars[..start].iter().rev().find(|c| **c != ' ').copied();
            let after = chars[i..].iter().find(|c| **c != ' ').copied();
            let attached = start > 0 && chars[start - 1].is_ascii_digit();
            // The `s` of "what's" is no unknown.
            let contracted = start > 0 && matches!(chars[start - 1], '\'' | '’');
            let operator_near = |c: Option<char>| c.is_some_and(|c| "+-*/÷=^()".contains(c));
            match word.as_str() {
                "of" if current
                    .last()
                    .is_some_and(|p| matches!(p, Piece::Frac(_) | Piece::Op('%')))
                    && after.is_some_and(|c| c.is_ascii_digit()) =>
                {
                    current.push(Piece::Of);
                }
                _ if word.chars().count() == 1
                    && !contracted
                    && (attached || operator_near(after) || operator_near(before)) =>
                {
                    current.push(Piece::Var(word.chars().next().unwrap_or('x')));
                }
                _ => end(&mut current, &mut runs),
            }
            continue;
        }
        match c {
            '+' | '-' | '*' | '÷' | '/' | '=' | ':' | '(' | ')' | '%' | '^' => {
                // A colon only joins numbers (3:5); elsewhere it ends a sentence.
                let ratio = c == ':'
                    && current.last().is_some_and(is_value)
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit);
                if c == ':' && !ratio {
                    end(&mut current, &mut runs);
                } else {
                    current.push(Piece::Op(c));
                }
            }
            ' ' => {}
            _ => end(&mut current, &mut runs),
        }
        i += 1;
    }
    end(&mut current, &mut runs);
    runs
}

/// Whether the comma at `i` separates thousands (`1,250`): three digits follow.
fn thousands(chars: &[char], i: usize) -> bool {
    (1..=3).all(|k| chars.get(i + k).is_some_and(char::is_ascii_digit))
        && !chars.get(i + 4).is_some_and(char::is_ascii_digit)
}

/// Drops operators a run cannot end or start with (a trailing `=`, a `)`
/// with no partner at the start).
fn trim_run(pieces: &mut Vec<Piece>) {
    while pieces.last().is_some_and(|p| {
        matches!(p, Piece::Op('+' | '*' | '÷' | '/' | '=' | '(' | '^')) || *p == Piece::Of
    }) {
        pieces.pop();
    }
    while pieces.first().is_some_and(|p| {
        matches!(p, Piece::Op('+' | '*' | '÷' | '/' | '=' | ')' | '^' | '%')) || *p == Piece::Of
    }) {
        pieces.remove(0);
    }
}

/// Lower case, one kind of minus and times, and the operator words
/// students use between numbers (`3 times 4`, `20 percent of 50`).
fn prepared(message: &str) -> String {
    let mut text: String = message
        .to_lowercase()
        .chars()
        .map(|c| match c {
            '−' | '–' | '—' => '-',
            '×' | '·' | '⋅' | '∙' => '*',
            '\u{2044}' | '∕' => '/',
            '?' | '!' | ';' | '"' | '“' | '”' => ' ',
            _ => c,
        })
        .collect();
    text = worded(&text);
    for (word, op) in [
        (" multiplied by ", " * "),
        (" times ", " * "),
        (" divided by ", " ÷ "),
        (" plus ", " + "),
        (" minus ", " - "),
        (" per cent", "%"),
        (" percent", "%"),
        (" equals ", " = "),
    ] {
        text = between_numbers(&text, word, op);
    }
    times_sign(&text)
}

/// A number as students write one in a sentence: `40`, `-3`, `2.5`, `3/4`.
const NUMBER: &str = r"(-?\d+(?:\.\d+)?(?:/\d+)?)";

/// Operations said in words ("add 1/4 and 2/3", "take 38 away from 72",
/// "the product of 6 and 4") written as the operators they name.
fn worded(text: &str) -> String {
    static RULES: std::sync::LazyLock<Vec<(regex::Regex, &'static str)>> =
        std::sync::LazyLock::new(|| {
            [
                (
                    r"\b(?:add|adding|added)\s+N\s+(?:and|to|with)\s+N",
                    "$1 + $2",
                ),
                (r"\b(?:the\s+)?(?:sum|total)\s+of\s+N\s+and\s+N", "$1 + $2"),
                (
                    r"\b(?:subtract|subtracting|take|taking|minus)\s+N\s+(?:away\s+)?from\s+N",
                    "$2 - $1",
                ),
                (r"\btake\s+away\s+N\s+from\s+N", "$2 - $1"),
                (
                    r"\b(?:the\s+)?difference\s+between\s+N\s+and\s+N",
                    "$1 - $2",
                ),
                (
                    r"\b(?:multiply|multiplying|times)\s+N\s+(?:by|and|with)\s+N",
                    "$1 * $2",
                ),
                (r"\b(?:the\s+)?product\s+of\s+N\s+and\s+N", "$1 * $2"),
                (r"\b(?:divide|dividing)\s+N\s+(?:by|into)\s+N", "$1 ÷ $2"),
            ]
            .into_iter()
            .filter_map(|(pattern, with)| {
                regex::Regex::new(&pattern.replace('N', NUMBER))
                    .ok()
                    .map(|r| (r, with))
            })
            .collect()
        });
    let mut text = text.to_owned();
    for (rule, with) in RULES.iter() {
        text = rule.replace_all(&text, *with).into_owned();
    }
    text
}

/// Replaces `word` with `op` where a number stands right before it.
fn between_numbers(text: &str, word: &str, op: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = &rest[..at];
        out.push_str(before);
        let after_number = before
            .trim_end()
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit() || c == ')' || c == '%');
        out.push_str(if after_number { op } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// An `x` between two numbers is a times sign: `12 x 3`, `12x3`.
fn times_sign(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == 'x' {
            let before = chars[..i].iter().rev().find(|c| **c != ' ');
            let after = chars[i + 1..].iter().find(|c| **c != ' ');
            let word_before = i > 0 && chars[i - 1].is_alphabetic();
            let word_after = chars.get(i + 1).is_some_and(|c| c.is_alphabetic());
            if !word_before
                && !word_after
                && before.is_some_and(|c| c.is_ascii_digit() || *c == ')')
                && after.is_some_and(|c| c.is_ascii_digit() || *c == '(')
                && chars.get(i + 1) != Some(&'(')
            {
                out.push('*');
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// `text` with LaTeX fractions written `a/b` (`\frac{3}{8}` as `3/8`).
pub(super) fn plain_fractions(text: &str) -> String {
    static FRAC: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\\[dt]?frac\{\s*(\d+)\s*\}\{\s*(\d+)\s*\}").expect("a valid pattern")
    });
    FRAC.replace_all(text, "$1/$2").into_owned()
}

/// The numbers and fractions `text` names.
pub(super) fn terms(text: &str) -> Vec<String> {
    static TERM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d+(?:\.\d+)?(?:\s*/\s*\d+)?").expect("a valid pattern"));
    let plain = plain_fractions(text);
    TERM.find_iter(&plain)
        .map(|m| m.as_str().split_whitespace().collect())
        .collect()
}

/// What a piece is as a whole number, if it is one.
pub(super) fn whole(p: &Piece) -> Option<i64> {
    match p {
        Piece::Num {
            text,
            decimal: false,
        } => text.parse().ok(),
        _ => None,
    }
}

pub(super) fn fraction(p: &Piece) -> Option<(i64, i64)> {
    match p {
        Piece::Frac(text) => {
            let (n, d) = text.split_once('/')?;
            Some((n.parse().ok()?, d.parse().ok()?))
        }
        _ => None,
    }
}

pub(super) fn piece_text(p: &Piece) -> Option<String> {
    match p {
        Piece::Num { text, .. } | Piece::Frac(text) => Some(text.clone()),
        _ => None,
    }
}
