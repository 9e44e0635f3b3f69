//! The mathematics in a student's message, read the way students write it:
//! the runs of it between the words ("How do I solve 2x+3=11?" holds
//! `2x+3=11`), what kind of problem each run is ([`ProblemShape`]), a
//! problem the student brings to be worked out ("what is 47 + 38?"), and a
//! worked claim to check ("72 - 38 = 46"). Pure text work: no course, no
//! state.

use std::sync::LazyLock;

use regex::Regex;

use crate::content::course::ProblemShape;
use crate::engine::interpret::worded_problems::worded_problem;
use crate::engine::practice::solution::{HintStep, Solution};
use crate::math::{self, Number, ParseOptions, Value};
use crate::model::AnswerKind;
use crate::text::template::count_word;

/// One piece of a run of mathematics.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
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
    pieces: Vec<Piece>,
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

    fn has_decimal(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Num { decimal: true, .. }))
    }

    fn has_var(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Var(_)))
    }

    fn has_op(&self, op: char) -> bool {
        self.pieces.contains(&Piece::Op(op))
    }

    /// The run's pieces before and after its one `=`, if it has exactly one.
    fn sides(&self) -> Option<(&[Piece], &[Piece])> {
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

/// Results of the last few readings, per thread: a turn reads one message
/// in several stages (own problem, claim, unit mapping, classification,
/// the reply), and each would parse it again.
struct Recent<T> {
    kept: std::cell::RefCell<std::collections::VecDeque<(String, T)>>,
}

/// How many readings [`Recent`] keeps: the message, the pending question
/// and the tutor's question fit with room to spare.
const RECENT_KEPT: usize = 8;

impl<T: Clone> Recent<T> {
    const fn new() -> Self {
        Recent {
            kept: std::cell::RefCell::new(std::collections::VecDeque::new()),
        }
    }

    fn get_or(&self, text: &str, read: impl FnOnce() -> T) -> T {
        if let Some((_, found)) = self.kept.borrow().iter().find(|(t, _)| t == text) {
            return found.clone();
        }
        let value = read();
        let mut kept = self.kept.borrow_mut();
        if kept.len() == RECENT_KEPT {
            kept.pop_front();
        }
        kept.push_back((text.to_owned(), value.clone()));
        value
    }
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

/// "Share 40 in the ratio 2:3", "2:3 share 40": the amount and the parts.
fn ratio_share(message: &str) -> Option<(u64, u64, u64)> {
    static FORMS: std::sync::LazyLock<Vec<regex::Regex>> = std::sync::LazyLock::new(|| {
        [
            r"\b(?:share|split|divide|sharing|splitting|dividing)\s+[£$€]?(\d+)\D{0,40}?\bratio\s+(?:of\s+)?(\d+)\s*:\s*(\d+)",
            r"\b(?:share|split|divide)\s+[£$€]?(\d+)\s+(?:in|into)\s+(\d+)\s*:\s*(\d+)",
            // As the tutor says it back: "60 shared in the ratio 2:3".
            r"(?:^|\s)[£$€]?(\d+)\s+shared\s+in\s+the\s+ratio\s+(\d+)\s*:\s*(\d+)",
        ]
        .iter()
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect()
    });
    static PARTS_FIRST: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| {
            regex::Regex::new(
                r"\b(\d+)\s*:\s*(\d+)\D{0,12}?\b(?:share|split|divide|shared|split)\s+[£$€]?(\d+)",
            )
            .ok()
        });
    let text = message.to_lowercase();
    let number = |c: Option<regex::Match>| c.and_then(|m| m.as_str().parse::<u64>().ok());
    let found = FORMS
        .iter()
        .find_map(|r| r.captures(&text))
        .and_then(|c| Some((number(c.get(1))?, number(c.get(2))?, number(c.get(3))?)))
        .or_else(|| {
            let c = PARTS_FIRST.as_ref()?.captures(&text)?;
            Some((number(c.get(3))?, number(c.get(1))?, number(c.get(2))?))
        })?;
    let (amount, p, q) = found;
    (p > 0 && q > 0 && amount % (p + q) == 0).then_some(found)
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

/// The kinds of problem in `message`, each once, in order of appearance.
/// A number to be written another way is a conversion, not a fraction or
/// a decimal on its own; a problem in words is of its own kind only.
pub fn shapes(message: &str) -> Vec<ProblemShape> {
    let mut out = Vec::new();
    if conversion(message).is_some() || to_fraction(message).is_some() {
        out.push(ProblemShape::Conversion);
    } else if let Some((shape, _)) = worded_problem(message) {
        // The problem in words is what is asked: "45p" in "3 pencils cost
        // 45p" is a price, not an expression.
        out.push(shape);
        return out;
    }
    for run in math_runs(message) {
        if out.contains(&ProblemShape::Conversion)
            && run.shape() == Some(ProblemShape::SingleFraction)
        {
            continue;
        }
        if let Some(shape) = run.shape()
            && !out.contains(&shape)
        {
            out.push(shape);
        }
    }
    out
}

/// A problem the student wrote, worked out by code.
#[derive(Debug, Clone, PartialEq)]
pub struct StudentProblem {
    /// The problem as the tutor will repeat it: `47 + 38`, `2x + 3 = 11`.
    pub text: String,
    /// The answer: a number (`85`, `5/6`) or the solution (`x = 4`).
    pub answer: String,
    /// Whether `answer` is an equation's solution.
    pub solves_for: Option<char>,
    /// The first step, worked with the problem's own numbers and asked
    /// as a question; it never states the answer.
    pub first_step: String,
    /// What the first step works out to, when it asks for one number: an
    /// answer to the step is progress on the problem, not a wrong try.
    pub first_step_expects: Option<String>,
    /// A step between the first and the finishing one, where the working
    /// has one to ask on its own (the highest common factor that
    /// simplifies 75 hundredths).
    pub middle_step: Option<HintStep>,
    /// Other values the worked solution passes through short of the
    /// answer (one part of a ratio): a student giving one is making
    /// progress, not a wrong try.
    pub later_values: Vec<String>,
    /// The step after the first, with the first one's result, that works
    /// out the answer (asked open): `So 2x = 8. Now divide both sides by 2.
    /// What is x?`.
    pub finishing_step: String,
    /// Each step asked smaller still, for a student stuck on it: just its
    /// arithmetic (`What is 11 - 3?`, then `What is 8 ÷ 2?`).
    pub smaller: SmallerSteps,
}

impl StudentProblem {
    /// Every value the worked solution passes through short of the answer.
    pub fn passes_through(&self) -> impl Iterator<Item = &str> {
        self.first_step_expects
            .iter()
            .chain(self.middle_step.iter().flat_map(|m| &m.expects))
            .chain(&self.later_values)
            .map(String::as_str)
    }

    /// How an answer to the problem is graded: an equation's solution, an
    /// expression in a letter (`6x`, `5a + 3`) or a number.
    pub fn answer_kind(&self) -> AnswerKind {
        if self.solves_for.is_some() {
            return AnswerKind::Equation;
        }
        let in_letters = math::parse(&self.answer, ParseOptions::student())
            .is_ok_and(|expr| !expr.variables().is_empty());
        if in_letters {
            AnswerKind::Expression
        } else {
            AnswerKind::Number
        }
    }
}

/// The arithmetic of a problem's two steps, where code knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmallerSteps {
    pub first: Option<String>,
    pub finishing: Option<String>,
}

/// The solution of a problem the student brought, as the help ladder uses
/// it: the first step (graded when it asks for a number), then the step
/// that finishes it, asked open.
pub fn own_solution(problem: &StudentProblem) -> Solution {
    let first = HintStep {
        ask: problem.first_step.clone(),
        tell: problem.first_step.clone(),
        expects: problem.first_step_expects.clone(),
        smaller: problem.smaller.first.clone(),
    };
    let first_worked = match &problem.first_step_expects {
        Some(value) => format!("{} {value}", problem.first_step),
        None => problem.first_step.clone(),
    };
    let middle = problem.middle_step.iter().map(|step| {
        let worked = match &step.expects {
            Some(value) => format!("{} {value}", step.tell),
            None => step.tell.clone(),
        };
        (step.clone(), worked)
    });
    let finish = HintStep {
        ask: problem.finishing_step.clone(),
        tell: problem.finishing_step.clone(),
        expects: None,
        smaller: problem.smaller.finishing.clone(),
    };
    let finish_worked = format!("{} {}", problem.finishing_step, problem.answer);
    let steps = std::iter::once((first, first_worked))
        .chain(middle)
        .chain(std::iter::once((finish, finish_worked)))
        .collect();
    Solution::worked_by_code(steps, &problem.answer)
}

/// The first problem in `message` that code can work out: arithmetic with
/// at least one operation, or a linear equation in one unknown.
pub fn student_problem(message: &str) -> Option<StudentProblem> {
    thread_local! {
        static RECENT: Recent<Option<StudentProblem>> = const { Recent::new() };
    }
    RECENT.with(|recent| recent.get_or(message, || read_student_problem(message)))
}

fn read_student_problem(message: &str) -> Option<StudentProblem> {
    let message = &plain_fractions(message);
    if let Some(problem) = shared_in_ratio(message) {
        return Some(problem);
    }
    if let Some(problem) = conversion(message)
        .or_else(|| to_fraction(message))
        .or_else(|| simplifying(message))
    {
        return Some(problem);
    }
    if let Some((_, problem)) = worded_problem(message) {
        return Some(problem);
    }
    math_runs(message)
        .into_iter()
        .filter(|r| r.shape().is_some())
        .find_map(|run| work_out(&run))
}

/// Words that ask for help with a problem rather than answer one.
const ASKS: &[&str] = &[
    "?",
    "how",
    "what",
    "solve",
    "work out",
    "calculate",
    "find",
    "help",
    "can you",
    "could you",
    "explain",
    "don't get",
    "dont get",
    "show me",
    "pls",
    "please",
    "plz",
    "add",
    "subtract",
    "multiply",
    "divide",
    "share",
    "simplify",
    "evaluate",
    "why",
    "stuck",
    "understand",
];

/// A problem the student brings as their own: with nothing pending, any
/// problem code can work out that is not a worked claim to check; with a
/// problem pending, one they ask about ("and how do I solve 3x - 5 = 10")
/// that is not the pending problem itself. Working written on its own
/// ("2x = 8") answers the pending problem instead.
pub fn own_problem(message: &str, pending: Option<&str>) -> Option<StudentProblem> {
    if claim(message).is_some() {
        return None;
    }
    let problem = student_problem(message)?;
    let Some(pending) = pending else {
        return Some(problem);
    };
    let text = message.to_lowercase();
    let asks = ASKS.iter().any(|cue| text.contains(cue));
    let squeeze = |t: &str| -> String {
        t.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c {
                '×' => '*',
                '÷' => '/',
                '−' => '-',
                c => c,
            })
            .collect()
    };
    let restates_pending = squeeze(&pending.to_lowercase()).contains(&squeeze(&problem.text));
    (asks && !restates_pending).then_some(problem)
}

/// A problem the student types while a drill is on screen: one they ask
/// about, as [`own_problem`], or a bare expression that shares no number
/// with the drill (`1/2 + 1/3` beside `7/12 + 5/6`), which cannot be
/// working towards it. A drill is answered by its options or a number.
pub fn own_problem_beside_drill(message: &str, drill: &str) -> Option<StudentProblem> {
    if let Some(problem) = own_problem(message, Some(drill)) {
        return Some(problem);
    }
    if claim(message).is_some() {
        return None;
    }
    let problem = student_problem(message)?;
    let drill_terms = terms(drill);
    let shares = terms(&problem.text).iter().any(|t| drill_terms.contains(t));
    (!shares).then_some(problem)
}

/// `text` with LaTeX fractions written `a/b` (`\frac{3}{8}` as `3/8`).
fn plain_fractions(text: &str) -> String {
    static FRAC: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\\[dt]?frac\{\s*(\d+)\s*\}\{\s*(\d+)\s*\}").expect("a valid pattern")
    });
    FRAC.replace_all(text, "$1/$2").into_owned()
}

/// The numbers and fractions `text` names.
fn terms(text: &str) -> Vec<String> {
    static TERM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d+(?:\.\d+)?(?:\s*/\s*\d+)?").expect("a valid pattern"));
    let plain = plain_fractions(text);
    TERM.find_iter(&plain)
        .map(|m| m.as_str().split_whitespace().collect())
        .collect()
}

/// What a fraction is to be written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Decimal,
    Percentage,
}

/// A fraction to write as a decimal or a percentage ("3/4 as a decimal",
/// "convert 2/5 to a percentage", "what percentage is 3/20"), worked
/// through the equivalent fraction over 100 (or 1000): for denominators
/// that go into 1000, so the answer is exact.
fn conversion(message: &str) -> Option<StudentProblem> {
    static AS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(\d{1,4})\s*/\s*(\d{1,4})\b[^\d/]{0,25}?\b(?:as|to|into|in)\s+(?:an?\s+)?(decimals?|percent(?:age)?s?|per cent|%)")
            .expect("a valid pattern")
    });
    static WHAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\bwhat\s+(decimal|percent(?:age)?|per cent)\s+is\s+(\d{1,4})\s*/\s*(\d{1,4})\b",
        )
        .expect("a valid pattern")
    });
    let plain = plain_fractions(message);
    let (n, d, written) = if let Some(c) = AS.captures(&plain) {
        let written = if c[3].to_lowercase().starts_with("dec") {
            Written::Decimal
        } else {
            Written::Percentage
        };
        (
            c[1].parse::<i64>().ok()?,
            c[2].parse::<i64>().ok()?,
            written,
        )
    } else {
        let c = WHAT.captures(&plain)?;
        let written = if c[1].to_lowercase().starts_with("dec") {
            Written::Decimal
        } else {
            Written::Percentage
        };
        (
            c[2].parse::<i64>().ok()?,
            c[3].parse::<i64>().ok()?,
            written,
        )
    };
    if d == 0 {
        return None;
    }
    // Over 100 (or 1000): what the bottom is multiplied by to get there.
    let over = [100, 1000].into_iter().find(|t| t % d == 0)?;
    let factor = over / d;
    let top = n * factor;
    let exact = |num: i64, den: i64| {
        math::Rational::new(i128::from(num), i128::from(den))
            .ok()
            .map(|r| number_text(Number::Exact(r), true))
    };
    let decimal = exact(top, over)?;
    let percent = exact(top * 100, over)?;
    let (text, answer, finishing) = match written {
        Written::Decimal => (
            format!("{n}/{d} as a decimal"),
            decimal.clone(),
            format!(
                "So {n}/{d} = {top}/{over}: {top} {}. What is that as a decimal?",
                if over == 100 {
                    "hundredths"
                } else {
                    "thousandths"
                }
            ),
        ),
        Written::Percentage => (
            format!("{n}/{d} as a percentage"),
            format!("{percent}%"),
            format!(
                "So {n}/{d} = {top}/{over}. Per cent means out of 100, so what is {n}/{d} as a percentage?"
            ),
        ),
    };
    Some(StudentProblem {
        text,
        answer,
        solves_for: None,
        first_step: format!(
            "Write it with {over} on the bottom: what do you multiply {d} by to get {over}?"
        ),
        first_step_expects: Some(factor.to_string()),
        middle_step: None,
        later_values: vec![top.to_string()],
        finishing_step: finishing,
        smaller: SmallerSteps {
            first: Some(format!("What is {over} ÷ {d}?")),
            finishing: Some(format!("What is {n} × {factor}?")),
        },
    })
}

/// A decimal or a whole percentage to write as a fraction ("0.75 as a
/// fraction", "convert 40% to a fraction", "what fraction is 0.6"),
/// worked through tenths, hundredths or thousandths, then simplified.
fn to_fraction(message: &str) -> Option<StudentProblem> {
    const NUMBER: &str = r"(\d{0,4}\.\d{1,3}|\d{1,3}\s*(?:%|per\s?cent\b))";
    static AS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"(?i)(?:^|[^\d.]){NUMBER}[^\d]{{0,25}}?\b(?:as|to|into|in)\s+(?:an?\s+)?fractions?\b"
        ))
        .expect("a valid pattern")
    });
    static WHAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"(?i)\bwhat\s+fraction\s+is\s+{NUMBER}")).expect("a valid pattern")
    });
    let c = AS.captures(message).or_else(|| WHAT.captures(message))?;
    let written = c.get(1)?.as_str();
    let percent = !written.contains('.');
    let digits: String = written
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (whole, places) = digits.split_once('.').unwrap_or((&digits, ""));
    let top: i64 = format!("{whole}{places}").parse().ok()?;
    if top == 0 {
        return None;
    }
    let over = if percent {
        100
    } else {
        10_i64.pow(u32::try_from(places.len()).ok()?)
    };
    let hcf = math::gcd(top, over);
    let shown = if percent {
        format!("{top}%")
    } else {
        format!("{}.{places}", if whole.is_empty() { "0" } else { whole })
    };
    let unit = match over {
        10 => "tenths",
        100 => "hundredths",
        _ => "thousandths",
    };
    // Said in words ("75 hundredths"), not as 75/100: that is already an
    // answer, which the steps must not give away.
    let (first_step, smaller_first) = if percent {
        (
            format!("Per cent means out of 100: how many hundredths is {shown}?"),
            None,
        )
    } else {
        let count = match places.len() {
            1 => "one digit".to_owned(),
            n => format!("{n} digits"),
        };
        (
            format!(
                "{shown} has {count} after the decimal point, so count it in {unit}: how many {unit} is {shown}?"
            ),
            Some(format!("What is {shown} × {over}?")),
        )
    };
    // Simplifying is a step of its own: the highest common factor first,
    // then the division by it.
    let (middle_step, finishing_step, smaller_finishing) = if hcf == 1 {
        (
            None,
            format!("So {shown} is {top} {unit}. How do you write that as a fraction?"),
            None,
        )
    } else {
        let ask = format!(
            "So {shown} is {top} {unit}. To write it in its simplest form, find the biggest number that goes into both {top} and {over}. What is it?"
        );
        (
            Some(HintStep {
                tell: ask.clone(),
                ask,
                expects: Some(hcf.to_string()),
                smaller: Some(format!("Which numbers divide into {top} exactly?")),
            }),
            format!(
                "So divide the top, {top}, and the bottom, {over}, by {hcf}. What fraction do you get?"
            ),
            Some(format!(
                "What is {top} ÷ {hcf}, and what is {over} ÷ {hcf}?"
            )),
        )
    };
    Some(StudentProblem {
        text: format!("{shown} as a fraction"),
        answer: format!("{}/{}", top / hcf, over / hcf),
        solves_for: None,
        first_step,
        first_step_expects: Some(top.to_string()),
        middle_step,
        later_values: Vec::new(),
        finishing_step,
        smaller: SmallerSteps {
            first: smaller_first,
            finishing: smaller_finishing,
        },
    })
}

/// A fraction to simplify, asked in words ("simplify 12/18", "12/18 in
/// its simplest form"), when it can be: through its highest common factor.
fn simplifying(message: &str) -> Option<StudentProblem> {
    static SIMPLIFY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\bsimplif\w*\D{0,12}?\b(\d{1,4})\s*/\s*(\d{1,4})\b|\b(\d{1,4})\s*/\s*(\d{1,4})\b[^\d/]{0,20}?\b(?:in\s+)?(?:its\s+)?(?:simplest form|lowest terms|simplified)")
            .expect("a valid pattern")
    });
    let c = SIMPLIFY.captures(message)?;
    let (n, d) = match (c.get(1), c.get(2)) {
        (Some(n), Some(d)) => (n.as_str(), d.as_str()),
        _ => (c.get(3)?.as_str(), c.get(4)?.as_str()),
    };
    let (n, d): (i64, i64) = (n.parse().ok()?, d.parse().ok()?);
    if n == 0 || d == 0 {
        return None;
    }
    let hcf = math::gcd(n, d);
    if hcf == 1 {
        return None;
    }
    Some(StudentProblem {
        text: format!("{n}/{d} in its simplest form"),
        answer: format!("{}/{}", n / hcf, d / hcf),
        solves_for: None,
        first_step: format!(
            "Find the biggest number that divides into both {n} and {d}. What is it?"
        ),
        first_step_expects: Some(hcf.to_string()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So divide the top and the bottom by {hcf}. What is {n}/{d} in its simplest form?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("Which numbers divide into {n} exactly?")),
            finishing: Some(format!("What is {n} ÷ {hcf}, and what is {d} ÷ {hcf}?")),
        },
    })
}

/// A share of an amount in a ratio, worked out: both shares. Three steps,
/// one question each: the parts altogether, what one part is worth, then
/// the shares.
fn shared_in_ratio(message: &str) -> Option<StudentProblem> {
    let (amount, p, q) = ratio_share(message)?;
    let parts = p + q;
    let part = amount / parts;
    let one_part =
        format!("So {amount} is split into {parts} equal parts. How much is one part worth?");
    Some(StudentProblem {
        text: format!("{amount} shared in the ratio {p}:{q}"),
        answer: format!("{} and {}", part * p, part * q),
        solves_for: None,
        first_step: format!(
            "The ratio {p}:{q} splits {amount} into {p} + {q} equal parts. How many parts is that altogether?"
        ),
        first_step_expects: Some(parts.to_string()),
        middle_step: Some(HintStep {
            tell: one_part.clone(),
            ask: one_part,
            expects: Some(part.to_string()),
            smaller: Some(format!("What is {amount} ÷ {parts}?")),
        }),
        later_values: Vec::new(),
        finishing_step: format!(
            "One part is {part}. How much are {p} parts, and how much are {q} parts?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("What is {p} + {q}?")),
            finishing: Some(format!("What is {p} × {part}, and what is {q} × {part}?")),
        },
    })
}

fn work_out(run: &MathRun) -> Option<StudentProblem> {
    if run.has_var() {
        let (variable, value) = solve_linear(run)?;
        let answer = format!("{variable} = {value}");
        let (first_step, first_step_expects) = stepped(run, &answer, variable);
        let finishing_step = finishing_step(run, variable, first_step_expects.as_deref());
        let smaller = smaller_steps(run, first_step_expects.as_deref());
        return Some(StudentProblem {
            first_step,
            first_step_expects,
            middle_step: None,
            later_values: Vec::new(),
            finishing_step,
            smaller,
            text: run.display(),
            answer,
            solves_for: Some(variable),
        });
    }
    let operates = run
        .pieces
        .iter()
        .any(|p| matches!(p, Piece::Op(c) if *c != '(' && *c != ')') || *p == Piece::Of);
    if run.has_op('=') || !operates {
        return None;
    }
    let value = evaluate(&run.compact(), run.has_decimal())?;
    let (first_step, first_step_expects) = stepped(run, &value, 'x');
    let finishing_step = finishing_step(run, 'x', first_step_expects.as_deref());
    let smaller = smaller_steps(run, first_step_expects.as_deref());
    Some(StudentProblem {
        first_step,
        first_step_expects,
        middle_step: None,
        later_values: Vec::new(),
        finishing_step,
        smaller,
        text: run.display(),
        answer: value,
        solves_for: None,
    })
}

/// The first step of `run` and what it works out to; a step that would
/// give `answer` away is replaced by one that names no number, and
/// expects none.
fn stepped(run: &MathRun, answer: &str, variable: char) -> (String, Option<String>) {
    let step = first_step(run, variable);
    let safe = safe_step(run, answer, step.clone());
    let expects = (safe == step)
        .then(|| first_step_value(run))
        .flatten()
        .filter(|v| v != answer);
    (safe, expects)
}

/// The step that finishes `run` once the first step worked out `first`:
/// with the problem's own numbers where its shape is known, else a plain
/// "now finish it". It leaves the answer open.
fn finishing_step(run: &MathRun, v: char, first: Option<&str>) -> String {
    let text = run.display();
    shaped_finish(run, v, first).unwrap_or_else(|| {
        if run.has_var() {
            format!("Now finish it off: what is {v} in {text}?")
        } else {
            format!("Now put it together: what is {text}?")
        }
    })
}

/// The finishing step of the shapes whose second step code knows.
fn shaped_finish(run: &MathRun, v: char, first: Option<&str>) -> Option<String> {
    use Piece::{Frac, Num, Of, Op, Var};
    let text = run.display();
    match (run.shape()?, &run.pieces[..], first) {
        (
            ProblemShape::TwoStepEquation,
            [Num { text: a, .. }, Var(_), Op('+' | '-'), _, Op('='), _],
            Some(w),
        ) => Some(format!(
            "So {a}{v} = {w}. Now undo the × {a}: divide both sides by {a}. What is {v}?"
        )),
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { text: a, .. },
                Op('+' | '-'),
                _,
                Op('='),
                _,
            ],
            Some(w),
        ) => Some(format!(
            "So {v} ÷ {a} = {w}. Now undo the ÷ {a}: multiply both sides by {a}. What is {v}?"
        )),
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b], Some(_)) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 != d2 && d1 > 0 && d2 > 0 => {
                    let common = d1 / math::gcd(d1, d2) * d2;
                    Some(format!(
                        "So we use {}: {text} becomes {}/{common} {op} {}/{common}. What do you get, in its simplest form?",
                        pieces_named(common),
                        n1 * (common / d1),
                        n2 * (common / d2)
                    ))
                }
                (Some((_, d)), Some(_)) => Some(format!(
                    "Keep the bottom, {d}, as it is: the pieces stay {}. So what is {text}, in its simplest form?",
                    pieces_named(d)
                )),
                _ => None,
            }
        }
        (ProblemShape::WholeAddSub, [a, Op(op @ ('+' | '-')), b], Some(ones)) => {
            let (a, b) = (whole(a)?, whole(b)?);
            let ones: i64 = ones.parse().ok()?;
            // Two columns only: longer sums are finished as a whole.
            if a >= 100 || b >= 100 {
                return None;
            }
            Some(match *op {
                '+' if ones >= 10 => format!(
                    "{} + {} = {ones}: write {} in the ones column and carry 1 ten. Now the tens column: {} + {} + the 1 you carried. So what is {a} + {b}?",
                    a % 10,
                    b % 10,
                    ones - 10,
                    a / 10,
                    b / 10
                ),
                '+' => format!(
                    "{} + {} = {ones}, with nothing to carry. Now the tens column: {} + {}. So what is {a} + {b}?",
                    a % 10,
                    b % 10,
                    a / 10,
                    b / 10
                ),
                _ if a % 10 < b % 10 => format!(
                    "After borrowing, the ones column gives {ones}, and the tens column now has {} tens, not {}. Now the tens: {} - {}. So what is {a} - {b}?",
                    a / 10 - 1,
                    a / 10,
                    a / 10 - 1,
                    b / 10
                ),
                _ => format!(
                    "The ones column gives {ones}. Now the tens column: {} - {}. So what is {a} - {b}?",
                    a / 10,
                    b / 10
                ),
            })
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount], Some(w)) => {
            let (n, d) = fraction(&Frac(f.clone()))?;
            Some(format!(
                "One {} of {} is {w}. {f} is {n} of those parts. So what is {f} of {}?",
                pieces_named(d).trim_end_matches('s'),
                piece_text(amount)?,
                piece_text(amount)?
            ))
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount], Some(w)) => {
            Some(format!(
                "Ten percent of {} is {w}. How many lots of ten percent make {pct}%? So what is {pct}% of {}?",
                piece_text(amount)?,
                piece_text(amount)?
            ))
        }
        // A one-step equation's first step already undoes its operation:
        // what is left is the arithmetic, asked another way.
        (ProblemShape::OneStepEquation, [Var(_), Op(op @ ('+' | '-')), b, Op('='), c], _) => {
            let (b, c) = (piece_text(b)?, piece_text(c)?);
            let (undo, sign) = if *op == '+' {
                ("Taking", '-')
            } else {
                ("Adding", '+')
            };
            let from = if *op == '+' { "from" } else { "to" };
            Some(format!(
                "{undo} {b} {from} both sides leaves {v} = {c} {sign} {b}. What is {c} {sign} {b}?"
            ))
        }
        (ProblemShape::OneStepEquation, [Num { text: a, .. }, Var(_), Op('='), c], _) => {
            Some(format!(
                "Think of the {a} times table: {a} × what makes {}?",
                piece_text(c)?
            ))
        }
        (ProblemShape::OneStepEquation, [Var(_), Op('/' | '÷'), a, Op('='), c], _) => {
            let (a, c) = (whole(a)?, whole(c)?);
            (1..=12).contains(&c).then(|| {
                format!(
                    "{v} shared into {a} equal parts gives {c} each, so {v} is {c} lots of {a}. Count up in {a}s, {c} times: {a}, {}, {}… Where do you end up?",
                    2 * a,
                    3 * a
                )
            })
        }
        // After "where do you start, and which way do you move?": the start,
        // the way and how far, leaving where they land to them.
        (ProblemShape::IntegerArithmetic, pieces, _) => {
            let (start, op, by) = signed_sum(pieces)?;
            let steps = by.unsigned_abs();
            let way = if (op == '+') == (by > 0) {
                "right"
            } else {
                "left"
            };
            (steps > 0).then(|| {
                format!(
                    "Start at {start} and move {steps} step{} to the {way}. Where do you land?",
                    if steps == 1 { "" } else { "s" }
                )
            })
        }
        _ => None,
    }
}

/// `a + b` or `a - b` of two whole numbers, each maybe signed and
/// bracketed ("-3 + 5", "5 - (-2)"), as (a, the operator, b).
fn signed_sum(pieces: &[Piece]) -> Option<(i64, char, i64)> {
    fn operand(pieces: &[Piece]) -> Option<(i64, &[Piece])> {
        let (bracketed, rest) = match pieces.split_first()? {
            (Piece::Op('('), rest) => (true, rest),
            _ => (false, pieces),
        };
        let (negative, rest) = match rest.split_first()? {
            (Piece::Op('-'), rest) => (true, rest),
            _ => (false, rest),
        };
        let (number, rest) = rest.split_first()?;
        let size = whole(number)?;
        let rest = match (bracketed, rest.split_first()) {
            (false, _) => rest,
            (true, Some((Piece::Op(')'), rest))) => rest,
            (true, _) => return None,
        };
        Some((if negative { -size } else { size }, rest))
    }
    let (a, rest) = operand(pieces)?;
    let (op, rest) = match rest.split_first()? {
        (Piece::Op(op @ ('+' | '-')), rest) => (*op, rest),
        _ => return None,
    };
    let (b, rest) = operand(rest)?;
    rest.is_empty().then_some((a, op, b))
}

/// Each step's arithmetic on its own, for a student stuck on the step:
/// the first step's sum (`first` is what it works out to), then the
/// finishing step's.
fn smaller_steps(run: &MathRun, first: Option<&str>) -> SmallerSteps {
    use Piece::{Frac, Num, Of, Op, Var};
    let Some(shape) = run.shape() else {
        return SmallerSteps::default();
    };
    let w: Option<i64> = first.and_then(|w| w.parse().ok());
    let undo = |op: char, b: &Piece, c: &Piece| -> Option<String> {
        let (b, c) = (whole(b)?, whole(c)?);
        Some(if op == '+' {
            format!("What is {c} - {b}?")
        } else {
            format!("What is {c} + {b}?")
        })
    };
    match (shape, &run.pieces[..]) {
        (
            ProblemShape::TwoStepEquation,
            [
                Num { text: a, .. },
                Var(_),
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => SmallerSteps {
            first: undo(*op, b, c),
            finishing: w.map(|w| format!("What is {w} ÷ {a}?")),
        },
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { text: a, .. },
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => SmallerSteps {
            first: undo(*op, b, c),
            finishing: w.map(|w| format!("What is {w} × {a}?")),
        },
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 != d2 && d1 > 0 && d2 > 0 => {
                    let (big, small) = (d1.max(d2), d1.min(d2));
                    let common = d1 / math::gcd(d1, d2) * d2;
                    let verb = if *op == '+' { "add" } else { "take away" };
                    SmallerSteps {
                        first: Some(format!(
                            "Count up in {big}s: {big}, {}, {}… Which is the first of those that {small} goes into too?",
                            2 * big,
                            3 * big
                        )),
                        finishing: Some(format!(
                            "The bottom stays {common}. Just {verb} the tops: what is {} {op} {}?",
                            n1 * (common / d1),
                            n2 * (common / d2)
                        )),
                    }
                }
                _ => SmallerSteps::default(),
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, _]) => {
            let n = fraction(&Frac(f.clone())).map(|(n, _)| n);
            SmallerSteps {
                first: None,
                finishing: w
                    .zip(n)
                    .filter(|(_, n)| *n > 1)
                    .map(|(w, n)| format!("What is {n} × {w}?")),
            }
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => {
            let tens = pct
                .parse::<i64>()
                .ok()
                .filter(|p| p % 10 == 0)
                .map(|p| p / 10);
            SmallerSteps {
                first: whole(amount)
                    .filter(|a| a % 10 == 0)
                    .map(|a| format!("What is {a} ÷ 10?")),
                finishing: w
                    .zip(tens)
                    .filter(|(_, t)| *t > 1)
                    .map(|(w, t)| format!("What is {t} × {w}?")),
            }
        }
        _ => SmallerSteps::default(),
    }
}

/// The number the first step asks for, where it asks for one.
fn first_step_value(run: &MathRun) -> Option<String> {
    use Piece::{Frac, Num, Of, Op, Var};
    let value = match (run.shape()?, &run.pieces[..]) {
        (ProblemShape::WholeAddSub, [a, Op('+'), b]) => {
            let (a, b) = (whole(a)?, whole(b)?);
            // Below ten both, the step counts on to the answer itself.
            if a < 10 && b < 10 {
                return None;
            }
            a % 10 + b % 10
        }
        (ProblemShape::WholeAddSub, [a, Op('-'), b]) => {
            let (a, b) = (whole(a)?, whole(b)?);
            if a < 10 {
                return None;
            }
            if a % 10 < b % 10 {
                a % 10 + 10 - b % 10
            } else {
                a % 10 - b % 10
            }
        }
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            let ((n1, d1), (n2, d2)) = (fraction(a)?, fraction(b)?);
            match (d1 == d2, *op) {
                (true, '+') => n1 + n2,
                (true, _) => n1 - n2,
                (false, _) => d1 / math::gcd(d1, d2) * d2,
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (_, d) = fraction(&Frac(f.clone()))?;
            let amount = whole(amount)?;
            if d == 0 || amount % d != 0 {
                return None;
            }
            amount / d
        }
        (ProblemShape::Percentage, [Num { .. }, Op('%'), Of, amount]) => {
            let amount = whole(amount)?;
            if amount % 10 != 0 {
                return None;
            }
            amount / 10
        }
        (
            ProblemShape::TwoStepEquation,
            [Num { .. }, Var(_), Op(op @ ('+' | '-')), b, Op('='), c],
        ) => {
            let (b, c) = (whole(b)?, whole(c)?);
            if *op == '+' { c - b } else { c + b }
        }
        (
            ProblemShape::TwoStepEquation,
            [
                Var(_),
                Op('/' | '÷'),
                Num { .. },
                Op(op @ ('+' | '-')),
                b,
                Op('='),
                c,
            ],
        ) => {
            let (b, c) = (whole(b)?, whole(c)?);
            if *op == '+' { c - b } else { c + b }
        }
        _ => return None,
    };
    Some(value.to_string())
}

/// The steps that solve a problem of the form `ax + b = c` (`a`, `b`
/// whole numbers, `b` may be absent or subtracted), each undoing one
/// operation on both sides, then a check; `None` for any other problem.
pub fn solution_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    let Some(variable) = problem.solves_for else {
        return simplest_form_steps(problem)
            .or_else(|| fraction_sum_steps(problem))
            .or_else(|| amount_steps(problem));
    };
    let compact: String = problem
        .text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (left, right) = compact.split_once('=')?;
    let c: i64 = right.parse().ok()?;
    let at = left.find(variable)?;
    let a: i64 = match &left[..at] {
        "" => 1,
        digits => digits.parse().ok()?,
    };
    let rest = &left[at + variable.len_utf8()..];
    let b: i64 = match rest.chars().next() {
        None => 0,
        Some('+') => rest[1..].parse().ok()?,
        Some('-') => -rest[1..].parse::<i64>().ok()?,
        Some(_) => return None,
    };
    if a == 0 || (c - b) % a != 0 {
        return None;
    }
    let x = (c - b) / a;
    let mut steps = Vec::new();
    let ax = if a == 1 {
        variable.to_string()
    } else {
        format!("{a}{variable}")
    };
    if b > 0 {
        steps.push(format!(
            "First undo the + {b}: take {b} from both sides, so {ax} = {c} - {b} = {}.",
            c - b
        ));
    } else if b < 0 {
        steps.push(format!(
            "First undo the - {}: add {} to both sides, so {ax} = {c} + {} = {}.",
            -b,
            -b,
            -b,
            c - b
        ));
    }
    if a != 1 {
        let then = if b == 0 { "Undo" } else { "Then undo" };
        steps.push(format!(
            "{then} the \u{d7} {a}: divide both sides by {a}, so {variable} = {} \u{f7} {a} = {x}.",
            c - b
        ));
    }
    let check = match (a, b) {
        (1, 0) => return None,
        (1, b) => format!("{x} {} {}", if b > 0 { '+' } else { '-' }, b.abs()),
        (a, 0) => format!("{a} \u{d7} {}", signed(x)),
        (a, b) => format!(
            "{a} \u{d7} {} {} {}",
            signed(x),
            if b > 0 { '+' } else { '-' },
            b.abs()
        ),
    };
    steps.push(format!(
        "So {variable} = {x}. Check: {check} = {c} \u{2713}. We undo the operations in reverse order, doing the same to both sides so the equation stays balanced."
    ));
    Some(steps)
}

/// The steps that put a fraction or a ratio in its simplest form
/// (`12/18`, `12:8`, as the problem is stored: "12:8 in its simplest
/// form"): their highest common factor, then each part divided by it.
fn simplest_form_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    let shown = problem.text.strip_suffix(" in its simplest form")?;
    let (separator, kind) = if shown.contains(':') {
        (':', "ratio")
    } else {
        ('/', "fraction")
    };
    let parts: Vec<i64> = shown
        .split(separator)
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    let hcf = parts.iter().copied().fold(0, math::gcd);
    if parts.len() < 2 || hcf <= 1 {
        return None;
    }
    let numbers: Vec<String> = parts.iter().map(i64::to_string).collect();
    let divided: Vec<String> = parts
        .iter()
        .map(|p| format!("{p} \u{f7} {hcf} = {}", p / hcf))
        .collect();
    Some(vec![
        format!(
            "Find the biggest number that divides into {}: it is {hcf}.",
            super::outside_math::listed(&numbers)
        ),
        format!(
            "Divide every part by {hcf}: {}. So {shown} in its simplest form is {}, an equivalent {kind} with smaller numbers.",
            divided.join(", "),
            problem.answer
        ),
    ])
}

/// The steps that add or take away two fractions (`2/5 + 1/3`): a common
/// denominator, each fraction over it, then the tops, simplified at the end.
fn fraction_sum_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    use Piece::Op;
    let run = math_runs(&problem.text).into_iter().next()?;
    let (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) =
        (run.shape()?, &run.pieces[..])
    else {
        return None;
    };
    let ((n1, d1), (n2, d2)) = (fraction(a)?, fraction(b)?);
    if d1 <= 0 || d2 <= 0 {
        return None;
    }
    let common = d1 / math::gcd(d1, d2) * d2;
    let (t1, t2) = (n1 * (common / d1), n2 * (common / d2));
    let top = if *op == '+' { t1 + t2 } else { t1 - t2 };
    let verb = if *op == '+' { "add" } else { "take away" };
    let mut steps = Vec::new();
    if d1 == d2 {
        steps.push(format!(
            "The bottoms are the same, {d1}, so the pieces are the same size: keep the {d1} and {verb} the tops."
        ));
    } else {
        steps.push(format!(
            "The bottoms, {d1} and {d2}, are different, so first find a number both go into: the smallest is {common}."
        ));
        steps.push(format!(
            "{n1}/{d1} = {t1}/{common} and {n2}/{d2} = {t2}/{common} (multiply the top and the bottom by the same number)."
        ));
    }
    let raw = format!("{top}/{common}");
    let finish = if raw == problem.answer {
        format!("{t1}/{common} {op} {t2}/{common} = {raw}.")
    } else {
        format!(
            "{t1}/{common} {op} {t2}/{common} = {raw}, which simplifies to {}.",
            problem.answer
        )
    };
    steps.push(finish);
    Some(steps)
}

/// The steps that find a percentage or a fraction of an amount (`15% of
/// 80`, `3/4 of 20`) through the simple parts a student can work out in
/// their head; `None` for any other problem.
fn amount_steps(problem: &StudentProblem) -> Option<Vec<String>> {
    use Piece::{Frac, Num, Of, Op};
    let run = math_runs(&problem.text).into_iter().next()?;
    let value = |expression: String| evaluate(&expression, true);
    let answer = &problem.answer;
    match (run.shape()?, &run.pieces[..]) {
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => {
            let amount = piece_text(amount)?;
            let p: i64 = pct.parse().ok()?;
            let tenth = value(format!("{amount}/10"))?;
            let (tens, five) = (p / 10, p % 10 == 5);
            let lots = if tens == 1 {
                "one lot".to_owned()
            } else {
                format!("{tens} lots")
            };
            if p % 10 == 0 {
                Some(vec![
                    format!("10% of {amount} is {amount} ÷ 10 = {tenth}."),
                    format!(
                        "{p}% is {lots} of 10%, so {p}% of {amount} is {tens} × {tenth} = {answer}."
                    ),
                ])
            } else if five {
                let half = value(format!("{amount}/20"))?;
                let built = if tens == 0 {
                    format!("So {p}% of {amount} is {answer}.")
                } else {
                    format!(
                        "{p}% is {lots} of 10% and one 5%, so {p}% of {amount} is {tens} × {tenth} + {half} = {answer}."
                    )
                };
                Some(vec![
                    format!(
                        "10% of {amount} is {amount} ÷ 10 = {tenth}, and 5% is half of that, {half}."
                    ),
                    built,
                ])
            } else {
                let hundredths = value(format!("{p}/100"))?;
                Some(vec![
                    format!("{p}% means {p} hundredths: {p} ÷ 100 = {hundredths}."),
                    format!("So {p}% of {amount} is {hundredths} × {amount} = {answer}."),
                ])
            }
        }
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (n, d) = fraction(&Frac(f.clone()))?;
            let amount = piece_text(amount)?;
            let part = value(format!("{amount}/{d}"))?;
            Some(vec![
                format!(
                    "One {} of {amount} is {amount} ÷ {d} = {part}.",
                    pieces_named(d).trim_end_matches('s')
                ),
                format!(
                    "{f} is {n} of those parts, so {f} of {amount} is {n} × {part} = {answer}."
                ),
            ])
        }
        _ => None,
    }
}

fn signed(n: i64) -> String {
    if n < 0 {
        format!("({n})")
    } else {
        n.to_string()
    }
}

/// `step`, unless it would give `answer` away: then a first step that
/// names no number of its own.
fn safe_step(run: &MathRun, answer: &str, step: String) -> String {
    let text = run.display();
    let leaks =
        crate::engine::reply::answer_guard::PendingAnswer::new("own problem", &text, answer)
            .is_some_and(|a| a.found_in(&step));
    if leaks {
        format!("What is the very first thing you would work out in {text}?")
    } else {
        step
    }
}

/// What a piece is as a whole number, if it is one.
fn whole(p: &Piece) -> Option<i64> {
    match p {
        Piece::Num {
            text,
            decimal: false,
        } => text.parse().ok(),
        _ => None,
    }
}

fn fraction(p: &Piece) -> Option<(i64, i64)> {
    match p {
        Piece::Frac(text) => {
            let (n, d) = text.split_once('/')?;
            Some((n.parse().ok()?, d.parse().ok()?))
        }
        _ => None,
    }
}

/// "quarters", "thirds": what pieces a denominator cuts a whole into.
fn pieces_named(d: i64) -> String {
    match d {
        2 => "halves".to_owned(),
        3 => "thirds".to_owned(),
        4 => "quarters".to_owned(),
        5 => "fifths".to_owned(),
        6 => "sixths".to_owned(),
        7 => "sevenths".to_owned(),
        8 => "eighths".to_owned(),
        9 => "ninths".to_owned(),
        10 => "tenths".to_owned(),
        12 => "twelfths".to_owned(),
        d => format!("{d}ths"),
    }
}

/// The first step of the problem `run`, with its own numbers, asked as a
/// question (`variable` names the unknown of an equation).
fn first_step(run: &MathRun, variable: char) -> String {
    use Piece::{Frac, Num, Of, Op};
    let text = run.display();
    let generic = format!("What is the very first thing you would work out in {text}?");
    let Some(shape) = run.shape() else {
        return generic;
    };
    let pieces = &run.pieces[..];
    let v = variable;
    match (shape, pieces) {
        (ProblemShape::WholeAddSub, [a, Op('+'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a >= 10 || b >= 10 => format!(
                "Start with the ones column: {} + {}. What do you get there, and is there a ten to carry?",
                a % 10,
                b % 10
            ),
            (Some(a), Some(b)) => format!(
                "Start at the bigger number, {}, and count on {}. Where do you end up?",
                a.max(b),
                a.min(b)
            ),
            _ => generic,
        },
        (ProblemShape::WholeAddSub, [a, Op('-'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a % 10 < b % 10 && a >= 10 => format!(
                "Look at the ones column: {} take away {} doesn't work, so borrow a ten from the tens. What is {} - {}?",
                a % 10,
                b % 10,
                a % 10 + 10,
                b % 10
            ),
            (Some(a), Some(b)) if a >= 10 => format!(
                "Start with the ones column: {} - {}. What do you get there?",
                a % 10,
                b % 10
            ),
            _ => format!("Start at {text_a} and count back. How far do you get?", text_a = piece_text(a).unwrap_or_default()),
        },
        (ProblemShape::WholeMulDiv, [a, Op('*'), b]) => match (whole(a), whole(b)) {
            (Some(a), Some(b)) if a.max(b) >= 10 => {
                let (big, small) = (a.max(b), a.min(b));
                let tens = big - big % 10;
                format!(
                    "Split {big} into {tens} and {}. What is {tens} × {small}, and what is {} × {small}?",
                    big % 10,
                    big % 10
                )
            }
            _ => format!(
                "{text} means {} lots of {}. Can you count up in {}s?",
                piece_text(b).unwrap_or_default(),
                piece_text(a).unwrap_or_default(),
                piece_text(a).unwrap_or_default()
            ),
        },
        (ProblemShape::WholeMulDiv, [a, Op('÷' | '/'), b]) => match (whole(a), whole(b)) {
            (Some(0), Some(b)) if b != 0 => format!(
                "Division shares the first number into equal groups. If there is nothing to share, how much is in each of the {b} groups?"
            ),
            // A small answer is found by counting up, not by guessing from 10 lots.
            (Some(a), Some(b)) if b > 0 && a <= b * 10 => format!(
                "Division asks how many {b}s make {a}. Count up in {b}s, starting at {b}. How many {b}s do you need to reach {a}?"
            ),
            _ => format!(
                "Division asks how many {b}s make {a}. Start with a guess: what is {b} × 10, and is that too many or too few?",
                a = piece_text(a).unwrap_or_default(),
                b = piece_text(b).unwrap_or_default()
            ),
        },
        // A power on its own has no order to choose: say what it means.
        (ProblemShape::MixedOperations, [a, Op('^'), b]) => match (whole(a), whole(b)) {
            (Some(base), Some(times @ 2..=6)) => format!(
                "{text} means {} {base}s multiplied together: {}. What does that come to?",
                count_word(times as u32).unwrap_or_default(),
                vec![base.to_string(); times as usize].join(" × ")
            ),
            _ => format!(
                "The small number says how many times the big number is multiplied by itself. How would you write {text} as a multiplication?"
            ),
        },
        (ProblemShape::MixedOperations, _) => format!(
            "Brackets come first, then × and ÷, then + and -. Which part of {text} do you work out first?"
        ),
        (ProblemShape::IntegerArithmetic | ProblemShape::NegativeNumbers, _)
            if run.has_op('*') || run.has_op('÷') || run.has_op('/') =>
        {
            "First multiply or divide the sizes and ignore the signs. Then decide the sign: are the two signs the same or different?".to_owned()
        }
        (ProblemShape::IntegerArithmetic | ProblemShape::NegativeNumbers, _) => format!(
            "Picture a number line. Where do you start for {text}, and which way do you move?"
        ),
        (ProblemShape::DecimalArithmetic, _) if run.has_op('*') => {
            "Ignore the decimal points for a moment and multiply the whole numbers. Then count how many decimal places the numbers had altogether. What do you get first?".to_owned()
        }
        (ProblemShape::DecimalArithmetic, _) => format!(
            "Write the numbers in {text} one under the other with the decimal points lined up, filling gaps with zeros. Which column do you start with?"
        ),
        (ProblemShape::FractionAddSub, [a, Op(op @ ('+' | '-')), b]) => {
            match (fraction(a), fraction(b)) {
                (Some((n1, d1)), Some((n2, d2))) if d1 == d2 => format!(
                    "The bottoms are the same, so the pieces are the same size ({}). What do you get when you {} the tops, {n1} and {n2}?",
                    pieces_named(d1),
                    if *op == '+' { "add" } else { "subtract" }
                ),
                (Some((_, d1)), Some((_, d2))) => format!(
                    "The pieces are different sizes ({} and {}), so first we need a common denominator. What is the smallest number that both {d1} and {d2} go into?",
                    pieces_named(d1),
                    pieces_named(d2)
                ),
                _ => format!(
                    "First write both as fractions with the same bottom number. What could the common denominator be in {text}?"
                ),
            }
        }
        (ProblemShape::FractionMulDiv, [_, Op('÷' | '/'), b]) => format!(
            "Dividing by a fraction is the same as multiplying by it turned upside down. What do you get when you flip {}, and what does {} become?",
            piece_text(b).unwrap_or_default(),
            text
        ),
        (ProblemShape::FractionMulDiv, [a, Op('*'), b]) => match (fraction(a), fraction(b)) {
            (Some((n1, d1)), Some((n2, d2))) => format!(
                "Multiply the tops together and the bottoms together. What is {n1} × {n2}, and what is {d1} × {d2}?"
            ),
            _ => format!("A whole number is a fraction over 1. How would you write {text} as two fractions?"),
        },
        (ProblemShape::FractionOfAmount, [Frac(f), Of, amount]) => {
            let (_, d) = fraction(&Frac(f.clone())).unwrap_or((1, 1));
            let amount = piece_text(amount).unwrap_or_default();
            format!(
                "First find one {} of {amount}: share {amount} into {d} equal parts. What is {amount} ÷ {d}?",
                pieces_named(d).trim_end_matches('s')
            )
        }
        (ProblemShape::Percentage, [Num { text: pct, .. }, Op('%'), Of, amount]) => format!(
            "Percent means out of a hundred, so ten percent of {amount} is {amount} divided by ten. What is ten percent of {amount}, and how many of those make {pct}%?",
            amount = piece_text(amount).unwrap_or_default()
        ),
        (ProblemShape::Percentage, _) => format!(
            "Percent means out of a hundred. What would one percent be in {text}?"
        ),
        (ProblemShape::OneStepEquation | ProblemShape::TwoStepEquation, _) => {
            equation_step(pieces, v).unwrap_or_else(|| {
                format!("What is being done to {v} in {text}? Which operation would undo it?")
            })
        }
        _ => generic,
    }
}

/// The first step of a linear equation written `a v + b = c`, `v + b = c`,
/// `a v = c`, `v / a = c` or `v / a + b = c`: undo the term, then the
/// coefficient.
fn equation_step(pieces: &[Piece], v: char) -> Option<String> {
    use Piece::{Num, Op, Var};
    let eq = pieces.iter().position(|p| *p == Op('='))?;
    let (left, right) = (&pieces[..eq], &pieces[eq + 1..]);
    let right = MathRun {
        pieces: right.to_vec(),
    }
    .display();
    let undo = |op: char, b: &str| match op {
        '+' => format!("take {b} from both sides"),
        _ => format!("add {b} to both sides"),
    };
    match left {
        [Var(_), Op(op @ ('+' | '-')), Num { text: b, .. }] => {
            let doing = undo(*op, b);
            Some(format!(
                "To get {v} on its own, undo the {op} {b}: {doing}. What does {v} equal then?"
            ))
        }
        [Num { text: a, .. }, Var(_)] => Some(format!(
            "{v} is multiplied by {a}. To undo that, divide both sides by {a}. What is {right} ÷ {a}?"
        )),
        [Var(_), Op('/' | '÷'), Num { text: a, .. }] => Some(format!(
            "{v} is divided by {a}. To undo that, multiply both sides by {a}. What is {right} × {a}?"
        )),
        [
            Num { .. },
            Var(_),
            Op(op @ ('+' | '-')),
            Num { text: b, .. },
        ]
        | [
            Var(_),
            Op('/' | '÷'),
            Num { .. },
            Op(op @ ('+' | '-')),
            Num { text: b, .. },
        ] => {
            let doing = undo(*op, b);
            let side = MathRun {
                pieces: left[..left.len() - 2].to_vec(),
            }
            .display();
            Some(format!(
                "Undo the {op} {b} first: {doing}. What does {side} equal then?"
            ))
        }
        _ => None,
    }
}

/// The value of an arithmetic expression in the student grammar, written
/// exactly: a whole number, else a decimal when the problem has decimals
/// and the value ends, else a fraction (`5/6`).
fn evaluate(expression: &str, decimals: bool) -> Option<String> {
    value_of(expression).map(|n| number_text(n, decimals))
}

fn number_text(n: Number, decimals: bool) -> String {
    let ends = |d: i128| {
        let mut d = d;
        for p in [2, 5] {
            while d % p == 0 {
                d /= p;
            }
        }
        d == 1
    };
    match n.exact() {
        Some(r) if r.is_integer() => r.numer().to_string(),
        Some(r) if decimals && ends(r.denom()) => {
            let text = format!("{:.6}", r.to_f64());
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        Some(r) => format!("{}/{}", r.numer(), r.denom()),
        None => format!("{}", n.to_f64()),
    }
}

/// The solution of a linear equation in one unknown, found from the
/// equation's value at two points and checked by substituting it back.
fn solve_linear(run: &MathRun) -> Option<(char, String)> {
    let variables: Vec<char> = run
        .pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Var(v) => Some(*v),
            _ => None,
        })
        .collect();
    let variable = *variables.first()?;
    if variables.iter().any(|v| *v != variable) {
        return None;
    }
    let (left, right) = run.sides()?;
    let side = |pieces: &[Piece]| MathRun {
        pieces: pieces.to_vec(),
    };
    let difference = format!("({}) - ({})", side(left).compact(), side(right).compact());
    let expr = math::parse(&difference, ParseOptions::student()).ok()?;
    let name = variable.to_string();
    let at = |x: Number| -> Option<Number> {
        let value = math::evaluate(&expr, &|v| (v == name).then_some(x)).ok()?;
        match value {
            Value::Num(n) => Some(n),
            Value::Bool(_) => None,
        }
    };
    let f0 = at(Number::int(0))?;
    let f1 = at(Number::int(1))?;
    let slope = f1.checked_sub(f0).ok()?;
    let root = Number::int(0)
        .checked_sub(f0)
        .ok()?
        .checked_div(slope)
        .ok()?;
    // Linear only: the value at 2 is on the same line, and the root solves it.
    let on_line = f0
        .checked_add(slope.checked_mul(Number::int(2)).ok()?)
        .ok()?;
    if !at(Number::int(2))?.approx_eq(on_line) || !at(root)?.approx_eq(Number::int(0)) {
        return None;
    }
    Some((variable, number_text(root, run.has_decimal())))
}

/// A worked claim of the student's, checked by code.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// What was worked out: `72 - 38`, or the equation `2x + 3 = 11`.
    pub problem: StudentProblem,
    /// What the student says it comes to: `46`, or `x = 4`.
    pub claimed: String,
    pub correct: bool,
    /// The likely slip behind a wrong claim, when code can tell.
    pub mistake: Option<ClaimMistake>,
}

/// A slip code can recognise in a wrong worked claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimMistake {
    /// Added where the problem subtracts, or the other way round.
    SwappedAddSubtract,
    /// Added where the problem multiplies.
    AddedInsteadOfMultiplying,
    /// Took the smaller digit from the larger in a column instead of borrowing.
    NoBorrowing,
    /// Dropped the carried ten.
    NoCarrying,
    /// Added the numerators and the denominators.
    AddedAcross,
    /// One column (a power of ten) out.
    OneColumnOut,
    /// Near the right value.
    Close,
}

impl Claim {
    /// What a tutor says about the claim: right, or what the right value
    /// is and the slip that most likely explains the wrong one.
    pub fn verdict(&self) -> String {
        let problem = &self.problem.text;
        if self.correct {
            return match self.problem.solves_for {
                Some(_) => format!(
                    "Yes, {} is right: put it back into {problem} and both sides match.",
                    self.claimed
                ),
                None => format!("Yes, {problem} = {} is right.", self.claimed),
            };
        }
        let right = match self.problem.solves_for {
            Some(_) => format!(
                "Not quite: {} does not make {problem} true; the solution is {}.",
                self.claimed, self.problem.answer
            ),
            None => format!(
                "Not quite: {problem} is {}, not {}.",
                self.problem.answer, self.claimed
            ),
        };
        let why = self.mistake.map(|m| match m {
            ClaimMistake::SwappedAddSubtract => {
                "It looks like you added instead of subtracting, or the other way round."
            }
            ClaimMistake::AddedInsteadOfMultiplying => {
                "It looks like you added the numbers instead of multiplying them."
            }
            ClaimMistake::NoBorrowing => {
                "It looks like you took the smaller digit from the larger one in a column instead of borrowing."
            }
            ClaimMistake::NoCarrying => "It looks like the carried ten went missing.",
            ClaimMistake::AddedAcross => {
                "It looks like you added the tops and the bottoms; the fractions need a common denominator first."
            }
            ClaimMistake::OneColumnOut => "You're one place value out: check each column again.",
            ClaimMistake::Close => "You're close: check your working one step at a time.",
        });
        match why {
            Some(why) => format!("{right} {why}"),
            None => right,
        }
    }
}

/// A claim in `message`: an arithmetic `a op b = c`, or an equation with a
/// proposed solution (`2x + 3 = 11`, `x = 4`).
pub fn claim(message: &str) -> Option<Claim> {
    let runs = math_runs(message);
    for run in &runs {
        if run.has_var() {
            continue;
        }
        let Some((left, right)) = run.sides() else {
            continue;
        };
        let lhs = MathRun {
            pieces: left.to_vec(),
        };
        let rhs = MathRun {
            pieces: right.to_vec(),
        };
        // The worked side has an operation, the answer side is one value.
        let answer_side = right.len() == 1 || (right.len() == 2 && right[0] == Piece::Op('-'));
        if lhs.shape().is_none() || !answer_side {
            continue;
        }
        let Some(problem) = work_out(&lhs) else {
            continue;
        };
        let claimed = rhs.compact();
        let correct = same_value(&problem.answer, &claimed);
        let mistake = if correct {
            None
        } else {
            diagnose(&lhs, &problem.answer, &claimed)
        };
        return Some(Claim {
            problem,
            claimed: rhs.display(),
            correct,
            mistake,
        });
    }
    // An equation, then `x = value` as its proposed solution.
    let equation = runs.iter().find(|r| {
        matches!(
            r.shape(),
            Some(ProblemShape::OneStepEquation | ProblemShape::TwoStepEquation)
        )
    })?;
    let proposal = runs.iter().find(|r| {
        r.has_var() && r.pieces.len() >= 3 && r.shape().is_none() && r.sides().is_some()
    })?;
    let problem = work_out(equation)?;
    let (_, value) = proposal.sides()?;
    let claimed_value = MathRun {
        pieces: value.to_vec(),
    }
    .compact();
    let solution = problem.answer.split('=').nth(1)?.trim().to_owned();
    Some(Claim {
        correct: same_value(&solution, &claimed_value),
        claimed: proposal.display(),
        problem,
        mistake: None,
    })
}

/// The value of a number or expression as a student writes it.
pub(crate) fn value_of(text: &str) -> Option<Number> {
    let expr = math::parse(text, ParseOptions::student()).ok()?;
    match math::evaluate(&expr, &|_| None).ok()? {
        Value::Num(n) => Some(n),
        Value::Bool(_) => None,
    }
}

fn same_value(a: &str, b: &str) -> bool {
    match (value_of(a), value_of(b)) {
        (Some(x), Some(y)) => x.approx_eq(y),
        _ => false,
    }
}

/// The slip behind `claimed` for the two-operand problem `lhs`, if one of
/// the common ones explains it.
fn diagnose(lhs: &MathRun, answer: &str, claimed: &str) -> Option<ClaimMistake> {
    let claimed_value = value_of(claimed)?;
    let matches =
        |expression: String| value_of(&expression).is_some_and(|v| v.approx_eq(claimed_value));
    if let [a, Piece::Op(op), b] = &lhs.pieces[..] {
        let (a_text, b_text) = (piece_text(a)?, piece_text(b)?);
        match (a, op, b) {
            (Piece::Frac(x), '+', Piece::Frac(y)) => {
                let (n1, d1) = x.split_once('/')?;
                let (n2, d2) = y.split_once('/')?;
                let across = format!("({n1}+{n2})/({d1}+{d2})");
                if matches(across) {
                    return Some(ClaimMistake::AddedAcross);
                }
            }
            (Piece::Num { decimal: false, .. }, '-', Piece::Num { decimal: false, .. }) => {
                if matches(format!("{a_text}+{b_text}")) {
                    return Some(ClaimMistake::SwappedAddSubtract);
                }
                if let Some(v) = columnwise(&a_text, &b_text, |x, y| x.abs_diff(y))
                    && matches(v.to_string())
                {
                    return Some(ClaimMistake::NoBorrowing);
                }
            }
            (Piece::Num { decimal: false, .. }, '+', Piece::Num { decimal: false, .. }) => {
                if matches(format!("{a_text}-{b_text}")) || matches(format!("{b_text}-{a_text}")) {
                    return Some(ClaimMistake::SwappedAddSubtract);
                }
                if let Some(v) = columnwise(&a_text, &b_text, |x, y| (x + y) % 10)
                    && matches(v.to_string())
                {
                    return Some(ClaimMistake::NoCarrying);
                }
            }
            (_, '*', _) if matches(format!("{a_text}+{b_text}")) => {
                return Some(ClaimMistake::AddedInsteadOfMultiplying);
            }
            _ => {}
        }
    }
    let right = value_of(answer)?;
    let gap = claimed_value.checked_sub(right).ok()?.to_f64().abs();
    if [1.0, 10.0, 100.0, 1000.0].contains(&gap) && right.to_f64().abs() >= 10.0 {
        return Some(ClaimMistake::OneColumnOut);
    }
    let scale = right.to_f64().abs().max(1.0);
    (gap <= 0.2 * scale).then_some(ClaimMistake::Close)
}

fn piece_text(p: &Piece) -> Option<String> {
    match p {
        Piece::Num { text, .. } | Piece::Frac(text) => Some(text.clone()),
        _ => None,
    }
}

/// Column by column on two whole numbers, right-aligned, with `digit`
/// combining each pair (no carries or borrows between columns).
fn columnwise(a: &str, b: &str, digit: impl Fn(u32, u32) -> u32) -> Option<u64> {
    let width = a.len().max(b.len());
    let pad = |s: &str| format!("{s:0>width$}");
    let (a, b) = (pad(a), pad(b));
    let mut out = String::new();
    for (x, y) in a.chars().zip(b.chars()) {
        out.push(char::from_digit(
            digit(x.to_digit(10)?, y.to_digit(10)?),
            10,
        )?);
    }
    out.parse().ok()
}

#[cfg(test)]
mod solution_tests {
    use super::*;

    fn steps(message: &str) -> Option<Vec<String>> {
        solution_steps(&student_problem(message)?)
    }

    #[test]
    fn a_ratio_or_fraction_is_simplified_through_its_highest_common_factor() {
        let s = steps("how do i simplify 12:8").unwrap();
        assert!(s[0].contains("it is 4"), "{s:?}");
        assert!(s[1].contains("12 ÷ 4 = 3, 8 ÷ 4 = 2"), "{s:?}");
        assert!(
            s[1].ends_with("is 3:2, an equivalent ratio with smaller numbers."),
            "{s:?}"
        );
        let s = steps("simplify 12/18").unwrap();
        assert!(s[1].contains("is 2/3, an equivalent fraction"), "{s:?}");
    }

    #[test]
    fn fractions_are_added_over_a_common_denominator() {
        let s = steps("how do i add 2/5 and 1/3").unwrap();
        assert_eq!(
            s,
            [
                "The bottoms, 5 and 3, are different, so first find a number both go into: the smallest is 15.",
                "2/5 = 6/15 and 1/3 = 5/15 (multiply the top and the bottom by the same number).",
                "6/15 + 5/15 = 11/15.",
            ]
        );
        let s = steps("what is 1/6 + 1/3").unwrap();
        assert_eq!(
            s.last().unwrap(),
            "1/6 + 2/6 = 3/6, which simplifies to 1/2."
        );
        let s = steps("3/7 - 1/7").unwrap();
        assert!(s[0].starts_with("The bottoms are the same, 7"), "{s:?}");
    }

    #[test]
    fn a_two_step_equation_is_undone_in_reverse_order() {
        let s = steps("how do I solve 2x + 3 = 11?").unwrap();
        assert_eq!(s.len(), 3);
        assert!(
            s[0].contains("take 3 from both sides, so 2x = 11 - 3 = 8"),
            "{s:?}"
        );
        assert!(
            s[1].contains("divide both sides by 2, so x = 8 \u{f7} 2 = 4"),
            "{s:?}"
        );
        assert!(s[2].contains("Check: 2 \u{d7} 4 + 3 = 11"), "{s:?}");
    }

    #[test]
    fn subtraction_and_negative_answers() {
        let s = steps("solve 3y - 5 = -11").unwrap();
        assert!(
            s[0].contains("add 5 to both sides, so 3y = -11 + 5 = -6"),
            "{s:?}"
        );
        assert!(s[2].contains("3 \u{d7} (-2) - 5 = -11"), "{s:?}");
        let one = steps("x + 4 = 9").unwrap();
        assert_eq!(one.len(), 2, "{one:?}");
        assert!(one[1].contains("Check: 5 + 4 = 9"), "{one:?}");
    }

    #[test]
    fn a_percentage_or_fraction_of_an_amount_is_built_from_simple_parts() {
        let s = steps("how do I find 15% of 80").unwrap();
        assert_eq!(
            s,
            [
                "10% of 80 is 80 ÷ 10 = 8, and 5% is half of that, 4.",
                "15% is one lot of 10% and one 5%, so 15% of 80 is 1 × 8 + 4 = 12."
            ]
        );
        let s = steps("what is 30% of 50?").unwrap();
        assert!(s[1].ends_with("3 × 5 = 15."), "{s:?}");
        let s = steps("what's 12% of 50").unwrap();
        assert!(s[1].ends_with("0.12 × 50 = 6."), "{s:?}");
        let s = steps("3/4 of 20").unwrap();
        assert_eq!(s[0], "One quarter of 20 is 20 ÷ 4 = 5.");
        assert!(s[1].ends_with("3 × 5 = 15."), "{s:?}");
    }

    #[test]
    fn other_problems_have_no_steps_here() {
        assert!(steps("what is 47 + 38?").is_none());
        assert!(
            steps("solve 2x + 3 = 10").is_none(),
            "not a whole-number answer"
        );
        assert!(steps("solve 2(x + 3) = 10").is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProblemShape::*;

    fn shape(message: &str) -> Option<ProblemShape> {
        shapes(message).first().copied()
    }

    #[test]
    fn shapes_of_what_students_write() {
        let cases: &[(&str, Option<ProblemShape>)] = &[
            (
                "How do I solve equations like 2x + 3 = 11?",
                Some(TwoStepEquation),
            ),
            ("2x+3=11", Some(TwoStepEquation)),
            ("solve x/2 + 1 = 6", Some(TwoStepEquation)),
            ("3(x + 2) = 21", Some(TwoStepEquation)),
            ("11x = 132", Some(OneStepEquation)),
            ("x + 7 = 12", Some(OneStepEquation)),
            ("what's 3/4 of 20", Some(FractionOfAmount)),
            ("what is 1/2 + 1/3", Some(FractionAddSub)),
            ("2/3 × 3/4", Some(FractionMulDiv)),
            ("simplify 12/18", Some(SingleFraction)),
            ("what is 3/4 as a decimal", Some(Conversion)),
            ("convert 2/5 to a percentage", Some(Conversion)),
            ("what is 25% of 80?", Some(Percentage)),
            ("20 percent of 50", Some(Percentage)),
            ("share 60 in the ratio 2:3", Some(Ratio)),
            ("0.3 + 0.45", Some(DecimalArithmetic)),
            ("-3 + 5", Some(IntegerArithmetic)),
            ("what is (-3) x (-5)", Some(IntegerArithmetic)),
            ("what's (-4) × (-6)", Some(IntegerArithmetic)),
            ("2 + 3 × 4", Some(MixedOperations)),
            ("12 x 3", Some(WholeMulDiv)),
            ("144 ÷ 12", Some(WholeMulDiv)),
            ("what is 47 + 38?", Some(WholeAddSub)),
            ("check my answer: 72 - 38 = 46", Some(WholeAddSub)),
            ("simplify 3x + 2x", Some(Expression)),
            ("is -3 bigger than -5", Some(NegativeNumbers)),
            ("x = 4", None),
            ("I am 12", None),
            ("what is a ratio?", None),
            ("did u watch the football", None),
        ];
        for (message, expected) in cases {
            assert_eq!(shape(message), *expected, "{message}");
        }
    }

    #[test]
    fn a_problem_is_worked_out() {
        let p = student_problem("what is 47 + 38?").unwrap();
        assert_eq!((p.text.as_str(), p.answer.as_str()), ("47 + 38", "85"));
        assert_eq!(student_problem("what is 1/2 + 1/3").unwrap().answer, "5/6");
        assert_eq!(student_problem("what's 3/4 of 20").unwrap().answer, "15");
        assert_eq!(student_problem("25% of 80").unwrap().answer, "20");
        let eq = student_problem("How do I solve 2x + 3 = 11?").unwrap();
        assert_eq!(
            (eq.text.as_str(), eq.answer.as_str()),
            ("2x + 3 = 11", "x = 4")
        );
        assert_eq!(student_problem("what is a ratio?"), None);
        assert_eq!(student_problem("x^2 = 9"), None, "not linear");
    }

    #[test]
    fn fractions_are_simplified_and_written_another_way() {
        let cases = [
            (
                "how do i simplify 12/18",
                "12/18 in its simplest form",
                "2/3",
                "6",
            ),
            (
                "what is 24/36 in simplest form?",
                "24/36 in its simplest form",
                "2/3",
                "12",
            ),
            ("what is 3/4 as a decimal", "3/4 as a decimal", "0.75", "25"),
            (
                "convert 3/8 into a decimal",
                "3/8 as a decimal",
                "0.375",
                "125",
            ),
            (
                "how do i write 2/5 as a percentage",
                "2/5 as a percentage",
                "40%",
                "20",
            ),
            (
                "what percentage is 3/20",
                "3/20 as a percentage",
                "15%",
                "5",
            ),
            ("1/8 as a percent", "1/8 as a percentage", "12.5%", "125"),
            (
                "how do i convert 0.75 to a fraction",
                "0.75 as a fraction",
                "3/4",
                "75",
            ),
            ("write .6 as a fraction", "0.6 as a fraction", "3/5", "6"),
            (
                "what fraction is 0.125",
                "0.125 as a fraction",
                "1/8",
                "125",
            ),
            ("0.3 as a fraction?", "0.3 as a fraction", "3/10", "3"),
            (
                "how do you change 40% into a fraction",
                "40% as a fraction",
                "2/5",
                "40",
            ),
        ];
        for (message, text, answer, first) in cases {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(
                (p.text.as_str(), p.answer.as_str()),
                (text, answer),
                "{message}"
            );
            assert_eq!(p.first_step_expects.as_deref(), Some(first), "{message}");
            assert!(
                !p.first_step.contains(answer),
                "{message}: {}",
                p.first_step
            );
        }
        // Nothing to simplify, or no exact decimal to reach over 100 or 1000.
        assert_eq!(student_problem("simplify 3/7"), None);
        assert_eq!(student_problem("what is 1/3 as a decimal"), None);
    }

    #[test]
    fn a_problem_said_back_reads_as_the_same_problem() {
        // The pending problem is read again from its text on later turns:
        // that is how its steps are found.
        for message in [
            "how do i share 60 in the ratio 2:3",
            "a £60 jumper has 25% off, how much is it now",
            "increase 80 by 15%",
            "if a = 4 what is 3a+7",
            "simplify 3x+5x-2x",
            "simplify 12:18",
            "convert 0.4 to a percentage",
            "which is bigger 0.5 or 0.45",
            "which is bigger 3/4 or 2/3",
            "if 3 pencils cost 45p how much do 7 cost",
            "how do i convert 0.75 to a fraction",
            "what is 3/4 as a decimal",
            "how do i simplify 12/18",
            "2x + 3 = 11",
        ] {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            let again = student_problem(&p.text);
            assert_eq!(
                again.as_ref().map(|a| (&a.text, &a.answer)),
                Some((&p.text, &p.answer)),
                "{message} said back as {:?}",
                p.text
            );
        }
    }

    #[test]
    fn a_power_on_its_own_is_said_as_a_multiplication() {
        let p = student_problem("what does 2^3 mean").expect("a problem");
        assert_eq!(p.answer, "8");
        assert!(
            p.first_step
                .contains("three 2s multiplied together: 2 × 2 × 2"),
            "{}",
            p.first_step
        );
        assert!(!p.first_step.contains("Brackets"), "{}", p.first_step);
    }

    #[test]
    fn problems_said_in_words_are_worked_out() {
        let cases = [
            ("I don't get how to add 1/4 and 2/3", "1/4 + 2/3", "11/12"),
            ("what's the sum of 47 and 38", "47 + 38", "85"),
            ("how do you take 38 away from 72", "72 - 38", "34"),
            ("subtract 2.5 from 7.25", "7.25 - 2.5", "4.75"),
            ("multiply 2/3 by 3/4 pls", "2/3 × 3/4", "1/2"),
            ("can you divide 144 by 12", "144 ÷ 12", "12"),
            ("how do I find 20% of 50?", "20% of 50", "10"),
            ("what's 3/4 of 20", "3/4 of 20", "15"),
            ("solve 3x - 5 = 10 pls", "3x - 5 = 10", "x = 5"),
            ("2:3 share 40", "40 shared in the ratio 2:3", "16 and 24"),
            (
                "how do I share 40 sweets in the ratio 3:5",
                "40 shared in the ratio 3:5",
                "15 and 25",
            ),
        ];
        for (message, text, answer) in cases {
            let p = student_problem(message).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(
                (p.text.as_str(), p.answer.as_str()),
                (text, answer),
                "{message}"
            );
        }
    }

    #[test]
    fn first_steps_use_the_problems_numbers_and_keep_the_answer() {
        let cases = [
            ("add 1/4 and 2/3", &["4", "3", "common denominator"][..]),
            ("20% of 50", &["50", "20%"]),
            ("3x - 5 = 10", &["add 5 to both sides", "3x"]),
            ("x + 7 = 12", &["take 7 from both sides"]),
            ("47 + 38", &["7 + 8", "carry"]),
            ("72 - 38", &["borrow", "12 - 8"]),
            ("3/4 of 20", &["20 ÷ 4"]),
            ("2:3 share 40", &["2 + 3", "40"]),
            ("12 x 3", &["10 × 3", "2 × 3"]),
            ("2 + 3 × 4", &["2 + 3 × 4", "first"]),
            ("12 ÷ 2", &["Count up in 2s", "reach 12"]),
            ("156 ÷ 12", &["12 × 10"]),
        ];
        for (message, words) in cases {
            let p = student_problem(message).unwrap();
            for w in words {
                assert!(p.first_step.contains(w), "{message}: {}", p.first_step);
            }
            assert!(p.first_step.ends_with('?'), "{}", p.first_step);
            let guard =
                crate::engine::reply::answer_guard::PendingAnswer::new("own", &p.text, &p.answer)
                    .unwrap();
            assert!(
                !guard.found_in(&p.first_step),
                "{message}: {}",
                p.first_step
            );
        }
    }

    #[test]
    fn nothing_divided_is_shared_out_not_guessed() {
        let p = student_problem("0 ÷ 5").unwrap();
        assert!(
            p.first_step.contains("nothing to share"),
            "{}",
            p.first_step
        );
        assert!(!p.first_step.contains("× 10"), "{}", p.first_step);
    }

    #[test]
    fn a_first_step_knows_the_number_it_asks_for() {
        let cases = [
            ("add 1/4 and 2/3", Some("12")),
            ("1/5 + 2/5", Some("3")),
            ("20% of 50", Some("5")),
            ("3/4 of 20", Some("5")),
            ("47 + 38", Some("15")),
            ("72 - 38", Some("4")),
            ("3x - 5 = 10", Some("15")),
            ("2:3 share 40", Some("5")),
            ("3 + 4", None),
            ("12 x 3", None),
        ];
        for (message, expects) in cases {
            let p = student_problem(message).unwrap();
            assert_eq!(
                p.first_step_expects.as_deref(),
                expects,
                "{message}: {}",
                p.first_step
            );
        }
    }

    #[test]
    fn the_finishing_step_carries_on_from_the_first_with_the_problems_numbers() {
        let cases = [
            (
                "2x + 3 = 11",
                "So 2x = 8. Now undo the × 2: divide both sides by 2. What is x?",
            ),
            (
                "x/4 - 1 = 2",
                "So x ÷ 4 = 3. Now undo the ÷ 4: multiply both sides by 4. What is x?",
            ),
            (
                "1/2 + 1/3",
                "So we use sixths: 1/2 + 1/3 becomes 3/6 + 2/6.",
            ),
            (
                "47 + 38",
                "7 + 8 = 15: write 5 in the ones column and carry 1 ten. Now the tens column: 4 + 3 + the 1 you carried.",
            ),
            (
                "72 - 38",
                "the tens column now has 6 tens, not 7. Now the tens: 6 - 3.",
            ),
            (
                "3/4 of 20",
                "One quarter of 20 is 5. 3/4 is 3 of those parts.",
            ),
            (
                "-3 + 5",
                "Start at -3 and move 5 steps to the right. Where do you land?",
            ),
            ("-4 - 6", "Start at -4 and move 6 steps to the left."),
            ("5 - (-2)", "Start at 5 and move 2 steps to the right."),
            ("12 x 3", "Now put it together: what is 12 × 3?"),
            ("347 + 38", "Now put it together: what is 347 + 38?"),
        ];
        for (message, finish) in cases {
            let p = student_problem(message).unwrap();
            assert!(
                p.finishing_step.contains(finish),
                "{message}: {}",
                p.finishing_step
            );
        }
    }

    #[test]
    fn an_own_problem_while_another_is_pending_is_one_they_ask_about() {
        let pending = Some("Write 16/22 in its simplest form. \\frac{16}{22}");
        assert!(own_problem("and how do I solve 3x - 5 = 10", pending).is_some());
        assert!(own_problem("I don't get how to add 1/4 and 2/3", pending).is_some());
        assert_eq!(own_problem("8/11", pending), None);
        assert_eq!(own_problem("x=5", pending), None);
        let equation = Some("Solve 2x + 3 = 11.");
        assert_eq!(
            own_problem("2x = 8", equation),
            None,
            "working, not a problem"
        );
        assert_eq!(
            own_problem("what is 2x + 3 = 11?", equation),
            None,
            "the pending one"
        );
        assert_eq!(
            own_problem("72 - 38 = 46 is this right", None),
            None,
            "a claim"
        );
        assert!(own_problem("what is 47 + 38", None).is_some());
        // Beside a drill, a bare expression of other numbers is a new
        // question; working with the drill's own numbers is not.
        let drill = "Work out 7/12 + 5/6. \\frac{7}{12} + \\frac{5}{6}";
        assert!(own_problem_beside_drill("\\frac{1}{2}+\\frac{1}{3}", drill).is_some());
        assert!(own_problem_beside_drill("what is 3/4 of 20", drill).is_some());
        assert_eq!(own_problem_beside_drill("7/12 + 10/12", drill), None);
        assert_eq!(own_problem_beside_drill("17/12", drill), None);
        assert_eq!(own_problem_beside_drill("B", drill), None);
    }

    #[test]
    fn claims_are_checked_and_slips_named() {
        let c = claim("can you check my answer? 72 - 38 = 46").unwrap();
        assert!(!c.correct);
        assert_eq!(c.problem.answer, "34");
        assert_eq!(c.mistake, Some(ClaimMistake::NoBorrowing));
        let c = claim("is this right? 47 + 38 = 85").unwrap();
        assert!(c.correct);
        assert_eq!(
            claim("47 + 38 = 75").unwrap().mistake,
            Some(ClaimMistake::NoCarrying)
        );
        assert_eq!(
            claim("72 - 38 = 110").unwrap().mistake,
            Some(ClaimMistake::SwappedAddSubtract)
        );
        assert_eq!(
            claim("1/2 + 1/3 = 2/5").unwrap().mistake,
            Some(ClaimMistake::AddedAcross)
        );
        assert_eq!(
            claim("6 x 4 = 10").unwrap().mistake,
            Some(ClaimMistake::AddedInsteadOfMultiplying)
        );
        let eq = claim("is x = 4 right for 2x + 3 = 11?").unwrap();
        assert!(eq.correct);
        assert!(!claim("2x + 3 = 11 so x = 7").unwrap().correct);
        assert_eq!(claim("what is 47 + 38?"), None);
    }
}
