//! Finding the answer in what a student typed: `I think it's x = 4`, `the
//! answer is 12 cm`, `3 × 4 = 12 so 12`, `1 1/2`, `$36`. The message is
//! rewritten (LaTeX, unicode, number words), cut into runs of mathematics
//! between ordinary words, and each run becomes a candidate with the cues
//! around it (`answer is`, `not`, `or`) that decide which one is the answer.

use std::ops::Range;

use super::literal::{self, Literal};
use super::text::Text;
use super::units::{self, Unit, UnitContext};
use super::{latex, normalize, words};
use crate::engine::math::{self, Expr, ParseOptions, Rational};
use crate::model::AnswerKind;

/// What reading a message needs to know about the expected answer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Context<'a> {
    pub kind: AnswerKind,
    /// Letters the expected answer uses as variables.
    pub variables: &'a [String],
    /// Read every lone letter as a variable (used for the expected answer).
    pub all_letters: bool,
    pub unit: Option<&'a Unit>,
}

/// Rewrites a message into the notation the lexer reads.
pub(super) fn prepare(message: &str) -> Text {
    let mut text = Text::new(message);
    if latex::looks_like_latex(message) {
        text = latex::rewrite(&text);
    }
    words::rewrite(&normalize::fold(&text))
}

#[derive(Debug, Clone)]
enum Lex {
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
    fn is_math(&self) -> bool {
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

    fn is_operand(&self) -> bool {
        matches!(
            self,
            Lex::Num(_) | Lex::Mixed(_) | Lex::Var(_) | Lex::Func("pi")
        )
    }
}

#[derive(Debug, Clone)]
struct Token {
    lex: Lex,
    range: Range<usize>,
}

/// The shape of a candidate answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    /// An expression or a number.
    Value(Expr),
    /// `a = b` or a chain of working `a = b = c`: each side in order.
    Chain(Vec<Expr>),
    /// An inequality (`x > 3`), parsed whole.
    Relation(Expr),
}

/// How the final value of a candidate is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Literal,
    /// `a/b` with whole numbers; `reduced` when in lowest terms.
    Fraction {
        reduced: bool,
    },
    Mixed,
    /// Anything with operations still to carry out (`3 + 4`, `2^3`).
    Computed,
}

#[derive(Debug, Clone)]
pub(super) struct Candidate {
    /// Characters of the prepared text.
    pub range: Range<usize>,
    pub shape: Result<Shape, String>,
    pub unit: Option<Unit>,
    /// The final value, when it is a single number literal (sign applied).
    pub literal: Option<Literal>,
    pub form: Form,
    /// Introduced as the answer (`the answer is`, `so`, `=`, `got`).
    pub cued: bool,
    /// Rejected by the student (`not 6`).
    pub negated: bool,
    /// Offered as an alternative to the previous candidate (`7 or 8`).
    pub or_joined: bool,
    /// What the parser read.
    pub rendered: String,
    /// What the student wrote for it.
    pub original: String,
}

impl Candidate {
    /// The last side of a chain, or the value itself.
    pub fn final_value(&self) -> Option<&Expr> {
        match self.shape.as_ref().ok()? {
            Shape::Value(e) => Some(e),
            Shape::Chain(parts) => parts.last(),
            Shape::Relation(_) => None,
        }
    }
}

pub(super) struct Extraction {
    pub text: Text,
    pub candidates: Vec<Candidate>,
    /// The message asks something (`is it 7 or 8?`): alternatives are doubts.
    pub hedged: bool,
}

pub(super) fn extract(message: &str, context: &Context) -> Extraction {
    let text = prepare(message);
    let mut candidates = candidates(&text, context);
    for c in &mut candidates {
        c.original = text.original(message, c.range.clone()).to_owned();
    }
    Extraction {
        hedged: text.chars().contains(&'?'),
        text,
        candidates,
    }
}

const OPERATORS: &str = "+-*/^()[]{}=<>≤≥≠√±∓!%";

fn lex(text: &Text, context: &Context) -> Vec<Token> {
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
    // Where a number is expected, a letter is still algebra when it is
    // written into the mathematics (`2x`, `x=4`), so it is not misread.
    let allowed = context.all_letters
        || matches!(context.kind, AnswerKind::Expression | AnswerKind::Equation)
        || next == Some('=')
        || after_equals
        || glued;
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

/// Words before a number that introduce it as the answer.
const CUES: &[&str] = &[
    "answer",
    "answers",
    "answer is",
    "answers are",
    "be",
    "is",
    "is it",
    "it's",
    "its",
    "it is",
    "got",
    "get",
    "gives",
    "giving",
    "gave",
    "equals",
    "makes",
    "so",
    "therefore",
    "thus",
    "hence",
    "then",
    "maybe",
    "probably",
    "think",
    "guess",
    "say",
    "was",
    "final",
    "result",
    "wait",
    "actually",
    "sorry",
    "mean",
    "oops",
    "correction",
    "instead",
];

/// Words right after a number that say it is the answer.
const POST_CUES: &[&str] = &[
    "is the answer",
    "is my answer",
    "is the final answer",
    "is correct",
    "is right",
    "as my answer",
    "as the answer",
    "final answer",
];

const NEGATIONS: &[&str] = &[
    "not", "isn't", "isnt", "wasn't", "wasnt", "aren't", "never", "nor",
];

/// Words after which a number names something (`question 2`, `step 3`)
/// rather than answering.
const REFERENCES: &[&str] = &[
    "question", "problem", "step", "part", "page", "exercise", "q", "no", "number", "line",
];

/// Words that may surround `or` between two alternatives.
const HEDGES: &[&str] = &["or", "maybe", "perhaps", "possibly", "is", "it", "either"];

fn words_of(gap: &str) -> Vec<&str> {
    gap.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

fn candidates(text: &Text, context: &Context) -> Vec<Candidate> {
    let tokens = lex(text, context);
    let runs = runs(&tokens);
    let mut out: Vec<Candidate> = Vec::new();
    let mut previous_end = 0;
    for (n, run) in runs.iter().enumerate() {
        let first_char = tokens[run.start].range.start;
        let gap = text.slice(previous_end..first_char);
        let next_start = runs
            .get(n + 1)
            .map_or(text.len(), |r| tokens[r.start].range.start);
        let last_char = tokens[run.end - 1].range.end;
        let after = text.slice(last_char..next_start);
        previous_end = last_char;
        let gap_words = words_of(&gap);
        let last_word = gap_words.last().copied().unwrap_or("");
        let ends_with_cue = CUES.iter().any(|cue| {
            let cue_words: Vec<&str> = cue.split(' ').collect();
            gap_words.ends_with(&cue_words)
        });
        let after = after.trim_start_matches([' ', ',', '.']);
        let post_cued = POST_CUES.iter().any(|cue| after.starts_with(cue));
        let or_joined = !out.is_empty()
            && gap_words.contains(&"or")
            && gap_words.iter().all(|w| HEDGES.contains(w));
        let negated = NEGATIONS.contains(&last_word)
            || (REFERENCES.contains(&last_word) && gap.trim_end().ends_with(last_word));
        for mut candidate in build(&tokens[run.clone()]) {
            candidate.cued |= ends_with_cue || post_cued;
            candidate.negated = negated;
            candidate.or_joined |= or_joined;
            out.push(candidate);
        }
    }
    out
}

/// Maximal stretches of mathematical tokens (spaces allowed inside).
fn runs(tokens: &[Token]) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    let mut last_math = 0;
    for (k, t) in tokens.iter().enumerate() {
        if t.lex.is_math() {
            if start.is_none() {
                start = Some(k);
            }
            last_math = k;
        } else if !matches!(t.lex, Lex::Space)
            && let Some(s) = start.take()
        {
            runs.push(s..last_math + 1);
        }
    }
    if let Some(s) = start {
        runs.push(s..last_math + 1);
    }
    runs
}

/// Turns one run into candidates (two for a `±`).
fn build(run: &[Token]) -> Vec<Candidate> {
    let mut tokens: Vec<&Token> = run.iter().collect();
    let mut cued = false;
    // `= 12`: a leading equals sign introduces the answer.
    while let Some(first) = tokens.first() {
        match first.lex {
            Lex::Op(c) if !"-+(√".contains(c) => {
                cued |= c == '=';
                tokens.remove(0);
            }
            Lex::Space => {
                tokens.remove(0);
            }
            _ => break,
        }
    }
    while let Some(last) = tokens.last() {
        match last.lex {
            Lex::Op(c) if !")%".contains(c) => {
                tokens.pop();
            }
            Lex::Space => {
                tokens.pop();
            }
            _ => break,
        }
    }
    if !tokens.iter().any(|t| t.lex.is_operand()) {
        return Vec::new();
    }
    let range =
        tokens.first().map_or(0, |t| t.range.start)..tokens.last().map_or(0, |t| t.range.end);
    // Units come out of the expression; a trailing % after a number is one.
    let mut unit: Option<Unit> = None;
    let mut unit_error = None;
    let solid: Vec<&Token> = tokens
        .iter()
        .copied()
        .filter(|t| !matches!(t.lex, Lex::Space))
        .collect();
    let trailing_percent = solid.len() >= 2
        && matches!(solid[solid.len() - 1].lex, Lex::Op('%'))
        && matches!(
            solid[solid.len() - 2].lex,
            Lex::Num(_) | Lex::Mixed(_) | Lex::Op(')')
        );
    let mut math: Vec<&Token> = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        match &t.lex {
            Lex::Unit(u) | Lex::Currency(u) => match &unit {
                Some(seen) if seen.name != u.name => {
                    unit_error = Some(format!("mixes the units {} and {}", seen.name, u.name))
                }
                _ => unit = Some(u.clone()),
            },
            Lex::Op('%') if trailing_percent && k == tokens.len() - 1 => match &unit {
                Some(_) => math.push(t),
                None => unit = units::parse_expected("%"),
            },
            _ => math.push(t),
        }
    }
    let variants: Vec<Vec<(&Token, Option<char>)>> = {
        let signs = math
            .iter()
            .filter(|t| matches!(t.lex, Lex::Op('±' | '∓')))
            .count();
        let plain: Vec<(&Token, Option<char>)> = math.iter().map(|t| (*t, None)).collect();
        if signs == 1 {
            let with = |sign: char| {
                math.iter()
                    .map(|t| match t.lex {
                        Lex::Op('±') => (*t, Some(sign)),
                        Lex::Op('∓') => (*t, Some(if sign == '+' { '-' } else { '+' })),
                        _ => (*t, None),
                    })
                    .collect()
            };
            vec![with('+'), with('-')]
        } else {
            vec![plain]
        }
    };
    let count = variants.len();
    variants
        .into_iter()
        .enumerate()
        .map(|(n, tokens)| {
            let (shape, rendered) = match &unit_error {
                Some(e) => (Err(e.clone()), String::new()),
                None => shape_of(&tokens),
            };
            let last_part: Vec<&Token> = value_part(&tokens);
            Candidate {
                range: range.clone(),
                shape,
                unit: unit.clone(),
                literal: literal_of(&last_part),
                form: form_of(&last_part),
                cued,
                negated: false,
                or_joined: count > 1 && n > 0,
                rendered,
                original: String::new(),
            }
        })
        .collect()
}

fn render(tokens: &[(&Token, Option<char>)]) -> String {
    let mut out = String::new();
    for (t, sign) in tokens {
        match &t.lex {
            Lex::Num(l) => {
                let text =
                    words::terminating_decimal(l.value).unwrap_or_else(|| format!("({})", l.value));
                out.push_str(&text);
            }
            Lex::Mixed(v) => out.push_str(&format!("({v})")),
            Lex::Var(v) => out.push_str(v),
            Lex::Func(f) => out.push_str(f),
            Lex::Op(c) => out.push(sign.unwrap_or(*c)),
            Lex::Space => out.push(' '),
            _ => {}
        }
        // Keep tokens apart so `2` `3` does not become 23.
        if !matches!(t.lex, Lex::Op(_)) {
            out.push(' ');
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Indices of the `=` signs that separate the sides of an equation (not
/// those inside `<=`, `>=`, `!=` or a doubled `==`).
fn equals_positions(tokens: &[(&Token, Option<char>)]) -> Vec<usize> {
    let mut positions = Vec::new();
    for (k, (t, _)) in tokens.iter().enumerate() {
        if !matches!(t.lex, Lex::Op('=')) {
            continue;
        }
        let prev = tokens[..k]
            .iter()
            .rev()
            .find(|(t, _)| !matches!(t.lex, Lex::Space));
        if prev.is_some_and(|(p, _)| matches!(p.lex, Lex::Op('<' | '>' | '!' | '='))) {
            continue;
        }
        positions.push(k);
    }
    positions
}

fn shape_of(tokens: &[(&Token, Option<char>)]) -> (Result<Shape, String>, String) {
    let rendered = render(tokens);
    let relation = tokens
        .iter()
        .any(|(t, _)| matches!(t.lex, Lex::Op('<' | '>' | '≤' | '≥' | '≠')))
        || tokens
            .windows(2)
            .any(|w| matches!((&w[0].0.lex, &w[1].0.lex), (Lex::Op('!'), Lex::Op('='))));
    let parse = |s: &str| {
        math::parse(s, ParseOptions::student()).map_err(|e| format!("could not read `{s}`: {e}"))
    };
    if relation {
        return (parse(&rendered).map(Shape::Relation), rendered);
    }
    let cuts = equals_positions(tokens);
    if cuts.is_empty() {
        return (parse(&rendered).map(Shape::Value), rendered);
    }
    let mut parts = Vec::new();
    let mut from = 0;
    for cut in cuts.iter().copied().chain([tokens.len()]) {
        let side: Vec<(&Token, Option<char>)> = tokens[from..cut]
            .iter()
            .copied()
            .filter(|(t, _)| !matches!(t.lex, Lex::Op('=')))
            .collect();
        from = cut + 1;
        let text = render(&side);
        if text.is_empty() {
            continue;
        }
        match parse(&text) {
            Ok(e) => parts.push(e),
            Err(e) => return (Err(e), rendered),
        }
    }
    let shape = if parts.len() >= 2 {
        Ok(Shape::Chain(parts))
    } else {
        parts
            .pop()
            .map(Shape::Value)
            .ok_or_else(|| "nothing to read".to_owned())
    };
    (shape, rendered)
}

/// The side that holds the value: the last one, or the first in `4 = x`.
fn value_part<'a>(tokens: &[(&'a Token, Option<char>)]) -> Vec<&'a Token> {
    let cuts = equals_positions(tokens);
    let side = |range: Range<usize>| -> Vec<&'a Token> {
        tokens[range]
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| !matches!(t.lex, Lex::Space))
            .collect()
    };
    let last = side(cuts.last().map_or(0, |k| k + 1)..tokens.len());
    match (cuts.as_slice(), last.as_slice()) {
        ([cut], [t]) if matches!(t.lex, Lex::Var(_)) => side(0..*cut),
        _ => last,
    }
}

/// The single literal a final side consists of, with its sign.
fn literal_of(part: &[&Token]) -> Option<Literal> {
    match part {
        [t] => match &t.lex {
            Lex::Num(l) => Some(l.clone()),
            _ => None,
        },
        [sign, t] => match (&sign.lex, &t.lex) {
            (Lex::Op('-'), Lex::Num(l)) => Some(Literal {
                value: -l.value,
                alternative: l.alternative.map(|a| -a),
                ..l.clone()
            }),
            (Lex::Op('+'), Lex::Num(l)) => Some(l.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn form_of(part: &[&Token]) -> Form {
    // Brackets around a plain fraction (`((9)/(2))` from LaTeX) change nothing.
    let unbracketed: Vec<&Token> = part
        .iter()
        .copied()
        .filter(|t| !matches!(t.lex, Lex::Op('(' | ')')))
        .collect();
    let lexes: Vec<&Lex> = unbracketed.iter().map(|t| &t.lex).collect();
    let simple = matches!(
        lexes.as_slice(),
        [Lex::Num(_)]
            | [Lex::Op('-'), Lex::Num(_)]
            | [Lex::Num(_), Lex::Op('/'), Lex::Num(_)]
            | [Lex::Op('-'), Lex::Num(_), Lex::Op('/'), Lex::Num(_)]
    );
    // Scientific notation, `2.5 × 10^3` or `2.5 × 10^(-3)`, is a final form.
    let ten = |l: &Lex| matches!(l, Lex::Num(n) if n.value == Rational::integer(10));
    let scientific = match lexes.as_slice() {
        [.., Lex::Num(_), Lex::Op('*'), t, Lex::Op('^'), Lex::Num(e)]
        | [
            ..,
            Lex::Num(_),
            Lex::Op('*'),
            t,
            Lex::Op('^'),
            Lex::Op('-' | '+'),
            Lex::Num(e),
        ] => ten(t) && e.value.is_integer() && lexes.len() <= 7,
        _ => false,
    };
    if scientific {
        return Form::Literal;
    }
    let part = if simple { unbracketed.as_slice() } else { part };
    let unsigned = match part.first().map(|t| &t.lex) {
        Some(Lex::Op('-' | '+')) => &part[1..],
        _ => part,
    };
    match unsigned {
        [t] if matches!(t.lex, Lex::Num(_)) => Form::Literal,
        [t] if matches!(t.lex, Lex::Mixed(_)) => Form::Mixed,
        [a, slash, b] => match (&a.lex, &slash.lex, &b.lex) {
            (Lex::Num(n), Lex::Op('/'), Lex::Num(d))
                if n.value.is_integer() && d.value.is_integer() =>
            {
                let reduced = Rational::new(n.value.numer(), d.value.numer())
                    .is_ok_and(|r| r.numer() == n.value.numer() || n.value.numer() == 0);
                Form::Fraction { reduced }
            }
            _ => Form::Computed,
        },
        _ => Form::Computed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(kind: AnswerKind, variables: &[String]) -> Context<'_> {
        Context {
            kind,
            variables,
            all_letters: false,
            unit: None,
        }
    }

    fn read(message: &str, kind: AnswerKind) -> Vec<String> {
        let vars = vec!["x".to_owned()];
        let e = extract(message, &context(kind, &vars));
        e.candidates
            .iter()
            .map(|c| {
                let mut s = c.rendered.clone();
                if let Some(u) = &c.unit {
                    s.push_str(&format!(" [{}]", u.name));
                }
                if c.cued {
                    s.push_str(" cued");
                }
                if c.negated {
                    s.push_str(" not");
                }
                if c.or_joined {
                    s.push_str(" or");
                }
                s
            })
            .collect()
    }

    #[test]
    fn answers_inside_sentences() {
        use AnswerKind::*;
        assert_eq!(read("I think it's x = 4", Equation), ["x = 4 cued"]);
        assert_eq!(read("the answer is 12 cm", Number), ["12 [cm] cued"]);
        assert_eq!(read("it's 5, not 6", Number), ["5 cued", "6 not"]);
        assert_eq!(read("is it 7 or 8?", Number), ["7 cued", "8 or"]);
        assert_eq!(read("1 1/2", Number), ["(3/2)"]);
        assert_eq!(read("-1 1/2", Number), ["-(3/2)"]);
        assert_eq!(read("$36", Number), ["36 [$]"]);
        assert_eq!(read("3 x 4 = 12", Number), ["3 * 4 = 12"]);
        assert_eq!(read("2x+3", Expression), ["2 x +3"]);
        assert_eq!(read("x = ±2", Equation), ["x = +2", "x = -2 or"]);
        assert_eq!(read("50%", Number), ["50 [%]"]);
        assert_eq!(read("1,234.5", Number), ["1234.5"]);
        assert_eq!(read("four and a half", Number), ["4.5"]);
        assert_eq!(read("I have no idea", Number), Vec::<String>::new());
    }
}
