//! Finding the answer in what a student typed: `I think it's x = 4`, `the
//! answer is 12 cm`, `3 × 4 = 12 so 12`, `1 1/2`, `$36`. The message is
//! rewritten (LaTeX, unicode, number words), cut into runs of mathematics
//! between ordinary words, and each run becomes a candidate with the cues
//! around it (`answer is`, `not`, `or`) that decide which one is the answer.

use std::ops::Range;

use super::context::Context;
use super::lex::{self, Lex, Token};
use super::literal::Literal;
use super::text::Text;
use super::units::{self, Unit};
use super::{latex, normalize, recurring, words};
use crate::math::{self, Expr, ParseOptions, Rational};

/// Rewrites a message into the notation the lexer reads.
pub(super) fn prepare(message: &str) -> Text {
    let mut text = Text::new(message);
    if latex::looks_like_latex(message) {
        text = latex::rewrite(&text);
    }
    words::rewrite(&recurring::rewrite(&normalize::fold(&text)))
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
    /// A number the move is made with (`subtract 5`, `divide both sides by
    /// 3`): the student describes a step, not its result.
    pub operand: bool,
    /// Offered as an alternative to the previous candidate (`7 or 8`).
    pub or_joined: bool,
    /// What the parser read.
    pub rendered: String,
    /// What the student wrote for it.
    pub original: String,
}

impl Candidate {
    /// Whether the student offers this value as an answer at all.
    pub fn offered(&self) -> bool {
        !self.negated && !self.operand
    }

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
        hedged: hedged(&text),
        text,
        candidates,
    }
}

/// Whether the message asks rather than states (`is it 7 or 8?`, `maybe
/// 4 or 5`): alternatives in it are doubts, not a claim.
fn hedged(text: &Text) -> bool {
    let chars = text.chars();
    let start: String = chars.iter().take(16).collect();
    let start = start.trim_start();
    chars.contains(&'?')
        || [
            "is it",
            "maybe",
            "either",
            "could it be",
            "perhaps",
            "not sure",
        ]
        .iter()
        .any(|h| start.starts_with(h))
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

/// Verbs of a move on the numbers: the number right after one is what the
/// move is made with (`subtract 5`, `take 5 from both sides`).
const OPERATIONS: &[&str] = &[
    "add",
    "adding",
    "added",
    "subtract",
    "subtracting",
    "subtracted",
    "take",
    "taking",
    "took",
    "away",
    "multiply",
    "multiplying",
    "divide",
    "dividing",
    "undo",
];

/// Words that carry the second number of a move (`divide both sides by 3`,
/// `subtract 5 from 20`) when the gap before the number names the move.
const OPERATION_LINKS: &[&str] = &["by", "from", "to"];

/// Whether the words before a number make it an operand of a described
/// move rather than a result: `subtract 5`, `divide both sides by 3`, and
/// the `20` of `subtract 5 from 20` (`in_a_move`: the number before was one).
fn names_an_operand(gap_words: &[&str], in_a_move: bool) -> bool {
    let Some(last) = gap_words.last() else {
        return false;
    };
    OPERATIONS.contains(last)
        || (OPERATION_LINKS.contains(last)
            && (in_a_move || gap_words.iter().any(|w| OPERATIONS.contains(w))))
}

/// Words that may surround `or` between two alternatives.
const HEDGES: &[&str] = &["or", "maybe", "perhaps", "possibly", "is", "it", "either"];

fn words_of(gap: &str) -> Vec<&str> {
    gap.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

fn candidates(text: &Text, context: &Context) -> Vec<Candidate> {
    let tokens = lex::lex(text, context);
    let runs = runs(&tokens);
    let mut out: Vec<Candidate> = Vec::new();
    let mut previous_end = 0;
    let mut in_a_move = false;
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
            let mut cue_words = cue.rsplit(' ');
            let mut gap = gap_words.iter().rev();
            cue_words.all(|c| gap.next() == Some(&c))
        });
        let after = after.trim_start_matches([' ', ',', '.']);
        let post_cued = POST_CUES.iter().any(|cue| after.starts_with(cue));
        let or_joined = !out.is_empty()
            && gap_words.contains(&"or")
            && gap_words.iter().all(|w| HEDGES.contains(w));
        let negated = NEGATIONS.contains(&last_word)
            || (REFERENCES.contains(&last_word) && gap.trim_end().ends_with(last_word));
        if is_modifier(&tokens[run.clone()], text) {
            continue;
        }
        let operand = !ends_with_cue && !post_cued && names_an_operand(&gap_words, in_a_move);
        in_a_move = operand;
        for mut candidate in build(&tokens[run.clone()]) {
            candidate.cued |= ends_with_cue || post_cued;
            candidate.negated = negated;
            candidate.operand = operand;
            candidate.or_joined |= or_joined;
            out.push(candidate);
        }
    }
    out
}

/// `2-step`, `3-digit`: a number glued by a hyphen to a word describes
/// something; it is not an answer.
fn is_modifier(run: &[Token], text: &Text) -> bool {
    let [.., number, hyphen] = run else {
        return false;
    };
    matches!(hyphen.lex, Lex::Op('-'))
        && number.lex.is_operand()
        && number.range.end == hyphen.range.start
        && text.get(hyphen.range.end).is_some_and(char::is_alphabetic)
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
    let (tokens, cued) = trimmed(run);
    if !tokens.iter().any(|t| t.lex.is_operand()) {
        return Vec::new();
    }
    let range =
        tokens.first().map_or(0, |t| t.range.start)..tokens.last().map_or(0, |t| t.range.end);
    let (math, unit) = take_units(&tokens);
    let variants = sign_variants(&math);
    let count = variants.len();
    variants
        .into_iter()
        .enumerate()
        .map(|(n, tokens)| {
            let (shape, rendered) = match &unit {
                Err(e) => (Err(e.clone()), String::new()),
                Ok(_) => shape_of(&tokens),
            };
            let value_side = value_part(&tokens);
            Candidate {
                range: range.clone(),
                shape,
                unit: unit.clone().unwrap_or(None),
                literal: literal_of(&value_side),
                form: form_of(&value_side),
                cued,
                negated: false,
                operand: false,
                or_joined: count > 1 && n > 0,
                rendered,
                original: String::new(),
            }
        })
        .collect()
}

/// The run without operators that cannot start or end a value; a leading
/// `=` (`= 12`) introduces the answer.
fn trimmed(run: &[Token]) -> (Vec<&Token>, bool) {
    let mut tokens: Vec<&Token> = run.iter().collect();
    let mut cued = false;
    let leading = tokens
        .iter()
        .position(|t| match t.lex {
            Lex::Op(c) if !"-+(√".contains(c) => {
                cued |= c == '=';
                false
            }
            Lex::Space => false,
            _ => true,
        })
        .unwrap_or(tokens.len());
    tokens.drain(..leading);
    loop {
        let unbalanced = bracket_balance(&tokens) < 0;
        let droppable = |t: &Token| match t.lex {
            Lex::Space => true,
            // `4)` from a typo or a list marker: a bracket that closes nothing.
            Lex::Op(')') => unbalanced,
            Lex::Op(c) => !")%".contains(c),
            _ => false,
        };
        if !tokens.last().is_some_and(|t| droppable(t)) {
            break;
        }
        tokens.pop();
    }
    // `(4` with the bracket never closed.
    while tokens
        .first()
        .is_some_and(|t| matches!(t.lex, Lex::Op('(')))
        && !first_closes(&tokens)
    {
        tokens.remove(0);
    }
    (tokens, cued)
}

/// Whether the bracket opening `tokens` is closed somewhere.
fn first_closes(tokens: &[&Token]) -> bool {
    let mut depth = 0isize;
    for t in tokens {
        depth += match t.lex {
            Lex::Op('(') => 1,
            Lex::Op(')') => -1,
            _ => 0,
        };
        if depth == 0 {
            return true;
        }
    }
    false
}

/// Opening minus closing brackets.
fn bracket_balance(tokens: &[&Token]) -> isize {
    tokens
        .iter()
        .map(|t| match t.lex {
            Lex::Op('(') => 1,
            Lex::Op(')') => -1,
            _ => 0,
        })
        .sum()
}

/// Takes the units out of the mathematics: `12 cm`, `$36`, and a `%`
/// closing a number. Two different units are an error.
fn take_units<'a>(tokens: &[&'a Token]) -> (Vec<&'a Token>, Result<Option<Unit>, String>) {
    let mut unit: Option<Unit> = None;
    let mut math: Vec<&Token> = Vec::new();
    let solid: Vec<&Token> = tokens
        .iter()
        .copied()
        .filter(|t| !matches!(t.lex, Lex::Space))
        .collect();
    let trailing_percent = matches!(
        solid.as_slice(),
        [.., before, last]
            if matches!(last.lex, Lex::Op('%'))
                && matches!(before.lex, Lex::Num(_) | Lex::Mixed(_) | Lex::Op(')'))
    );
    for (k, t) in tokens.iter().enumerate() {
        match &t.lex {
            Lex::Unit(u) | Lex::Currency(u) => match &unit {
                Some(seen) if seen.name != u.name => {
                    let error = format!("mixes the units {} and {}", seen.name, u.name);
                    return (math, Err(error));
                }
                _ => unit = Some(u.clone()),
            },
            Lex::Op('%') if trailing_percent && k == tokens.len() - 1 && unit.is_none() => {
                unit = Some(units::percent());
            }
            _ => math.push(t),
        }
    }
    (math, Ok(unit))
}

/// One `±` gives two readings, plus then minus; otherwise one.
fn sign_variants<'a>(math: &[&'a Token]) -> Vec<Vec<(&'a Token, Option<char>)>> {
    let signs = math
        .iter()
        .filter(|t| matches!(t.lex, Lex::Op('±' | '∓')))
        .count();
    if signs != 1 {
        return vec![math.iter().map(|t| (*t, None)).collect()];
    }
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
        math::parse(s, ParseOptions::student()).or_else(|e| {
            // `2(x+1`: brackets left open at the end are closed there, as a
            // teacher reading it would.
            let open = s
                .matches('(')
                .count()
                .saturating_sub(s.matches(')').count());
            if open == 0 {
                return Err(format!("could not read `{s}`: {e}"));
            }
            math::parse(&format!("{s}{}", ")".repeat(open)), ParseOptions::student())
                .map_err(|_| format!("could not read `{s}`: {e}"))
        })
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
    use crate::model::AnswerKind;

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
                if c.operand {
                    s.push_str(" operand");
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

    #[test]
    fn numbers_a_move_is_made_with_are_not_answers() {
        use AnswerKind::*;
        assert_eq!(read("subtract 5", Number), ["5 operand"]);
        assert_eq!(read("take 5 from both sides", Number), ["5 operand"]);
        assert_eq!(read("divide both sides by 3", Equation), ["3 operand"]);
        assert_eq!(
            read("I subtracted 5 and got 15", Number),
            ["5 operand", "15 cued"]
        );
        assert_eq!(
            read("subtract 5 from 20", Number),
            ["5 operand", "20 operand"]
        );
        // A cue still makes it the answer; `by` alone is not a move.
        assert_eq!(read("take away, so 15", Number), ["15 cued"]);
        assert_eq!(read("it went up by 3", Number), ["3"]);
    }
}
