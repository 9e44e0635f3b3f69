//! Grading answers by code, so that a gradable answer never needs the LLM.
//!
//! [`grade`] reads what a student typed — numbers in every everyday format,
//! English number words, LaTeX, units, answers inside sentences, algebraic
//! expressions and equations, multiple-choice picks — and compares it with
//! the expected answer of the pending question. The result is one of
//! `correct`, `close` (seed 003's threshold, from the workflow's `grading`
//! section), `wrong` or `unverifiable`, with the text that was graded, its
//! normalised form, slip tags and a reason. `unverifiable` always says why:
//! an answer the grader could not understand is never marked wrong.
//!
//! Decisions where a teacher could go either way:
//! - A solved equation is the answer: to "solve 2x + 3 = 11" with expected
//!   `x = 4`, `x = 4`, `4 = x` and a bare `4` are correct. An equivalent
//!   equation that is not solved (`2x = 8`) is a step, not an answer: it is
//!   `unverifiable` with the tag `not_solved` (or `wrong` when the step
//!   leads to another value). Restating the question is `pasted_question`.
//!   When the expected equation is not in solved form (`y = 2x + 1`), any
//!   equivalent equation is correct.
//! - Values are graded, not forms: `6/8` for 3/4 is correct with the tag
//!   `unsimplified`; a non-terminating value (1/3, 9π) may be given as a
//!   correctly rounded decimal with enough digits (tag `rounded`).
//! - A missing unit is read in the expected unit (tag `missing_unit`); an
//!   equivalent unit is converted (tag `unit_converted`); a unit of another
//!   kind, or the right number in the wrong unit, is wrong (`wrong_unit`).
//!   For an expected percentage, a bare `35` means 35%.
//! - A separator that could be read two ways (`1,234`) is graded correct if
//!   either reading is (tag `ambiguous_separator`).
//!
//! The reason may quote the expected answer: it is for logs, teachers and
//! the CLI, not for the student or the tutor prompt.

mod algebra;
mod extract;
mod latex;
mod literal;
mod mcq;
mod normalize;
mod numeric;
mod text;
mod units;
mod words;

use serde::{Deserialize, Serialize};

use self::algebra::{Comparison, Relation};
use self::extract::{Candidate, Context, Form, Shape};
use self::numeric::Quantity;
use self::units::Unit;
use crate::content::workflow::GradingSettings;
use crate::engine::math::{self, Expr, Number, Value};
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome, PendingQuestion};

/// Longest message graded; longer ones are not answers.
const MAX_ANSWER_CHARS: usize = 2000;

/// A named slip or circumstance noticed while grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlipTag {
    /// The expected value with the opposite sign.
    SignError,
    /// The expected value times or divided by 10, 100 or 1000.
    DecimalPlace,
    /// The expected value turned upside down (`4/3` for `3/4`).
    Reciprocal,
    /// The expected value rounded or cut off too early.
    Rounding,
    /// Correct as a rounded decimal of a non-terminating value.
    Rounded,
    /// The message repeats the question instead of answering it.
    PastedQuestion,
    MissingUnit,
    WrongUnit,
    /// Correct in another unit of the same kind (`1.2 m` for `120 cm`).
    UnitConverted,
    /// Correct, but not in simplest form (`6/8`, `3 + 4`).
    Unsimplified,
    /// An equation that still has to be solved.
    NotSolved,
    /// A separator that can be read two ways (`1,234`).
    AmbiguousSeparator,
    MissingSolution,
    ExtraSolution,
    /// A value that is none of the multiple-choice options.
    NotAnOption,
    /// The right value for another letter (`y = 4` for `x = 4`).
    WrongVariable,
}

/// The outcome of grading one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    pub result: GradeOutcome,
    /// The part of the message that was graded, as the student wrote it.
    pub extracted: Option<String>,
    /// The graded answer in canonical form (`9/2`, `x = 4`, `C: 34`, `12 cm`).
    pub normalized: Option<String>,
    pub tags: Vec<SlipTag>,
    pub reason: String,
}

impl Grade {
    fn unverifiable(reason: impl Into<String>) -> Grade {
        Grade {
            result: GradeOutcome::Unverifiable,
            extracted: None,
            normalized: None,
            tags: Vec::new(),
            reason: reason.into(),
        }
    }

    pub fn has(&self, tag: SlipTag) -> bool {
        self.tags.contains(&tag)
    }
}

/// An outcome before it is attached to the text it came from.
#[derive(Debug, Clone)]
struct Verdict {
    outcome: GradeOutcome,
    tags: Vec<SlipTag>,
    reason: String,
    normalized: Option<String>,
}

impl Verdict {
    fn unverifiable(reason: impl Into<String>) -> Verdict {
        Verdict {
            outcome: GradeOutcome::Unverifiable,
            tags: Vec::new(),
            reason: reason.into(),
            normalized: None,
        }
    }

    fn tagged(mut self, tag: SlipTag) -> Verdict {
        if !self.tags.contains(&tag) {
            self.tags.push(tag);
        }
        self
    }
}

/// Grades `answer` against `expected`. `question` is the question's text,
/// used to notice an answer that only repeats it.
pub fn grade(
    expected: &ExpectedAnswer,
    answer: &str,
    question: Option<&str>,
    settings: &GradingSettings,
) -> Grade {
    if answer.trim().is_empty() {
        return Grade::unverifiable("the message is empty");
    }
    if answer.chars().count() > MAX_ANSWER_CHARS {
        return Grade::unverifiable(format!(
            "the message is longer than {MAX_ANSWER_CHARS} characters, too long to be an answer"
        ));
    }
    let mut grade = match expected.kind {
        AnswerKind::Text => {
            Grade::unverifiable("free-text answers are judged by the tutor, not by code")
        }
        AnswerKind::Mcq => mcq::grade(expected, answer, settings),
        AnswerKind::Number | AnswerKind::Expression | AnswerKind::Equation => {
            computed(expected, answer, question, settings)
        }
    };
    grade.tags.sort();
    grade.tags.dedup();
    grade
}

/// Grades an answer to a pending question; `None` when the question has no
/// expected answer to check against.
pub fn grade_pending(
    question: &PendingQuestion,
    answer: &str,
    settings: &GradingSettings,
) -> Option<Grade> {
    let expected = question.expected.as_ref()?;
    Some(grade(expected, answer, Some(&question.text), settings))
}

/// The kind of an authored answer without one: options make it multiple
/// choice, a relation an equation, letters an expression, else a number.
pub fn infer_kind(value: &str, options: &[String]) -> AnswerKind {
    if !options.is_empty() {
        return AnswerKind::Mcq;
    }
    if value.contains(['=', '<', '>', '≤', '≥']) {
        return AnswerKind::Equation;
    }
    let context = Context {
        kind: AnswerKind::Number,
        variables: &[],
        all_letters: false,
        unit: None,
    };
    let extraction = extract::extract(value, &context);
    let chars = extraction.text.chars();
    // A number, with any letters part of it (`12 cm`, `sqrt(2)`, `pi`).
    let single_number = match extraction.candidates.as_slice() {
        [c] => {
            c.final_value()
                .is_some_and(|e| e.variables().is_empty() && evaluate(e).is_ok())
                && (0..chars.len()).all(|i| !chars[i].is_alphabetic() || c.range.contains(&i))
        }
        _ => false,
    };
    let has_letters = chars.iter().any(|c| c.is_alphabetic());
    if single_number || !has_letters {
        AnswerKind::Number
    } else {
        AnswerKind::Expression
    }
}

/// `text` in backticks, shortened for messages.
fn quote(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("`{}…`", &text[..at]),
        None => format!("`{text}`"),
    }
}

/// A number for people: finite decimals as decimals, other fractions as
/// fractions, approximations to ten significant figures.
fn show_number(n: Number) -> String {
    match n {
        Number::Exact(r) => words::terminating_decimal(r).unwrap_or_else(|| r.to_string()),
        Number::Approx(f) => {
            let digits = 9i32
                .saturating_sub(f.abs().log10().floor() as i32)
                .clamp(0, 12);
            let text = format!("{f:.*}", digits as usize);
            if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                text
            }
        }
    }
}

fn evaluate(expr: &Expr) -> Result<Number, String> {
    match math::evaluate(expr, &|_| None) {
        Ok(Value::Num(n)) => Ok(n),
        Ok(Value::Bool(_)) => Err("a comparison, not a value".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// What the expected answer says, read once.
struct Expected {
    kind: AnswerKind,
    shape: ExpectedShape,
    unit: Option<Unit>,
    /// How the expected value is written (`√2` and `9π` are final forms).
    form: Form,
    variables: Vec<String>,
}

enum ExpectedShape {
    Number(Number),
    Expression(Expr),
    /// `x = 4`, `x = ±2`, `x = 2 or x = -2`.
    Solutions {
        variable: String,
        values: Vec<Number>,
    },
    /// An equation or inequality not in solved form (`y = 2x + 1`, `x > 3`),
    /// with the expression it defines when it reads `y = …`.
    Relation(Relation, Option<Expr>),
}

/// A value for some letter, or a bare value (`x = 4`, `4`).
fn is_solution(candidate: &Candidate) -> bool {
    solved_form(candidate).is_some()
        || matches!(candidate.shape, Ok(Shape::Value(ref e)) if e.variables().is_empty())
}

/// A value for `variable`, or a bare value.
fn solves_for(candidate: &Candidate, variable: &str) -> bool {
    match solved_form(candidate) {
        Some((v, _)) => v == variable,
        None => is_solution(candidate),
    }
}

/// `x = 4` or `4 = x`: a lone variable and a constant.
fn solved_form(candidate: &Candidate) -> Option<(String, &Expr)> {
    match candidate.shape.as_ref().ok()? {
        Shape::Chain(parts) => {
            let last = parts.last()?;
            let constant = |e: &Expr| e.variables().is_empty();
            match (parts.first()?, last) {
                (Expr::Var(v), value) if parts[1..].iter().all(constant) => {
                    Some((v.clone(), value))
                }
                (first, Expr::Var(v)) if parts.len() == 2 && constant(first) => {
                    Some((v.clone(), first))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

impl Expected {
    fn read(expected: &ExpectedAnswer) -> Result<Expected, String> {
        let field_unit = expected.unit.as_deref().and_then(units::parse_expected);
        let context = Context {
            kind: expected.kind,
            variables: &[],
            all_letters: true,
            unit: field_unit.as_ref(),
        };
        let extraction = extract::extract(&expected.value, &context);
        let candidates = extraction.candidates;
        if let Some(e) = candidates.iter().find_map(|c| c.shape.as_ref().err()) {
            return Err(e.clone());
        }
        let [first, ..] = candidates.as_slice() else {
            return Err("it contains no value".to_owned());
        };
        let unit = field_unit.or_else(|| first.unit.clone());
        let one = || -> Result<&Candidate, String> {
            match candidates.as_slice() {
                [c] => Ok(c),
                _ => Err("it contains several values".to_owned()),
            }
        };
        let shape = match expected.kind {
            AnswerKind::Equation => {
                let solved: Vec<(String, &Expr)> =
                    candidates.iter().filter_map(solved_form).collect();
                if solved.len() == candidates.len() && solved.iter().all(|(v, _)| *v == solved[0].0)
                {
                    ExpectedShape::Solutions {
                        variable: solved[0].0.clone(),
                        values: solved
                            .iter()
                            .map(|(_, e)| evaluate(e))
                            .collect::<Result<_, _>>()?,
                    }
                } else {
                    match &one()?.shape {
                        Ok(Shape::Chain(parts)) if parts.len() == 2 => {
                            let defined = match &parts[0] {
                                Expr::Var(v) if !parts[1].variables().contains(&v.as_str()) => {
                                    Some(parts[1].clone())
                                }
                                _ => None,
                            };
                            ExpectedShape::Relation(
                                Relation::new(math::CompareOp::Eq, &parts[0], &parts[1]),
                                defined,
                            )
                        }
                        Ok(Shape::Relation(e)) => ExpectedShape::Relation(
                            Relation::from_expr(e).ok_or("it is not a relation")?,
                            None,
                        ),
                        Ok(Shape::Value(e)) if e.variables().is_empty() => {
                            ExpectedShape::Number(evaluate(e)?)
                        }
                        _ => return Err("it is not an equation".to_owned()),
                    }
                }
            }
            _ => {
                let c = one()?;
                let value = match (solved_form(c), &c.shape) {
                    (Some((_, value)), _) => value.clone(),
                    (None, Ok(Shape::Value(e))) => e.clone(),
                    // `y = 2x + 1` as an expression: its right-hand side.
                    (None, Ok(Shape::Chain(parts)))
                        if parts.len() == 2 && matches!(parts[0], Expr::Var(_)) =>
                    {
                        parts[1].clone()
                    }
                    _ => return Err("it is not a single value".to_owned()),
                };
                if value.variables().is_empty() {
                    ExpectedShape::Number(evaluate(&value)?)
                } else if expected.kind == AnswerKind::Number {
                    return Err(format!(
                        "a number was expected but it uses {}",
                        value.variables().join(", ")
                    ));
                } else {
                    ExpectedShape::Expression(value)
                }
            }
        };
        let mut variables: Vec<String> = match &shape {
            ExpectedShape::Expression(e) => e.variables().iter().map(|v| v.to_string()).collect(),
            ExpectedShape::Solutions { variable, .. } => vec![variable.clone()],
            ExpectedShape::Relation(r, _) => r
                .difference
                .variables()
                .iter()
                .map(|v| v.to_string())
                .collect(),
            ExpectedShape::Number(_) => Vec::new(),
        };
        variables.sort();
        variables.dedup();
        Ok(Expected {
            kind: expected.kind,
            form: first.form,
            shape,
            unit,
            variables,
        })
    }
}

/// What remains of a message once a copy of the question is taken out.
enum Stripped {
    /// The message is the question and nothing else.
    Only,
    Rest(String),
}

fn collapse(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn strip_question(message: &str, question: &str) -> Option<Stripped> {
    let question = collapse(question);
    let question = question.trim_end_matches(['?', '.', '!', ' ']);
    if question.chars().filter(|c| c.is_alphanumeric()).count() < 6 {
        return None;
    }
    let message = collapse(message);
    let at = message.find(question)?;
    let rest = format!("{} {}", &message[..at], &message[at + question.len()..]);
    if rest.chars().any(char::is_alphanumeric) {
        Some(Stripped::Rest(rest))
    } else {
        Some(Stripped::Only)
    }
}

/// The mathematics a question is about (`-3 + 5`, `2x + 3 = 11`): its
/// longest run with an operation in it.
fn question_math(question: &str, context: &Context) -> Option<Shape> {
    let extraction = extract::extract(question, context);
    extraction
        .candidates
        .into_iter()
        .filter(|c| {
            !matches!(c.shape, Ok(Shape::Value(_)))
                || matches!(c.form, Form::Computed | Form::Fraction { reduced: false })
        })
        .max_by_key(|c| c.range.len())
        .and_then(|c| c.shape.ok())
}

fn pasted() -> Grade {
    Grade {
        tags: vec![SlipTag::PastedQuestion],
        ..Grade::unverifiable("the message repeats the question instead of answering it")
    }
}

fn computed(
    expected: &ExpectedAnswer,
    answer: &str,
    question: Option<&str>,
    settings: &GradingSettings,
) -> Grade {
    let spec = match Expected::read(expected) {
        Ok(spec) => spec,
        Err(e) => {
            return Grade::unverifiable(format!(
                "the expected answer {} could not be read: {e}",
                quote(&expected.value)
            ));
        }
    };
    // A boxed answer is the answer; a pasted copy of the question is not.
    let mut focus = latex::boxed_range(answer).map_or(answer, |r| &answer[r]);
    let stripped;
    match question.and_then(|q| strip_question(focus, q)) {
        Some(Stripped::Only) => return pasted(),
        Some(Stripped::Rest(rest)) => {
            stripped = rest;
            focus = &stripped;
        }
        None => {}
    }
    let context = Context {
        kind: spec.kind,
        variables: &spec.variables,
        all_letters: false,
        unit: spec.unit.as_ref(),
    };
    let extraction = extract::extract(focus, &context);
    let question_shape = question.and_then(|q| question_math(q, &context));
    let grader = Grader {
        spec: &spec,
        expected_text: &expected.value,
        settings,
        hedged: extraction.hedged,
        question: question_shape.as_ref(),
    };
    let (verdict, graded) = match &spec.shape {
        ExpectedShape::Number(target) => grader.number(*target, &extraction.candidates),
        ExpectedShape::Expression(target) => grader.expression(target, &extraction.candidates),
        ExpectedShape::Solutions { variable, values } => {
            grader.solutions(variable, values, &extraction.candidates)
        }
        ExpectedShape::Relation(target, defined) => {
            grader.relation(target, defined.as_ref(), &extraction.candidates)
        }
    };
    let extracted = graded.map(|range| extraction.text.original(focus, range).to_owned());
    Grade {
        result: verdict.outcome,
        extracted: extracted.filter(|e| !e.is_empty()),
        normalized: verdict.normalized,
        tags: verdict.tags,
        reason: verdict.reason,
    }
}

/// The candidate chosen as the answer, or why none could be.
enum Pick<'a> {
    One(&'a Candidate),
    Ambiguous(String),
    Nothing,
}

/// Chooses the answer among `candidates`: rejected ones (`not 6`) are out;
/// among those `preferred`, the last one introduced as the answer wins, else
/// the last one. Alternatives (`7 or 8`) or several different values with
/// nothing to tell them apart make the message ambiguous.
fn pick<'a>(
    candidates: &'a [Candidate],
    key: impl Fn(&Candidate) -> String,
    preferred: impl Fn(&Candidate) -> bool,
) -> Pick<'a> {
    let live: Vec<&Candidate> = candidates.iter().filter(|c| !c.negated).collect();
    if live.is_empty() {
        return if candidates.is_empty() {
            Pick::Nothing
        } else {
            Pick::Ambiguous("every value in the message is rejected (`not …`)".to_owned())
        };
    }
    let pool: Vec<usize> = {
        let p: Vec<usize> = (0..live.len()).filter(|&i| preferred(live[i])).collect();
        if p.is_empty() {
            (0..live.len()).collect()
        } else {
            p
        }
    };
    let cued: Vec<usize> = pool.iter().copied().filter(|&i| live[i].cued).collect();
    let chosen = cued.last().or(pool.last()).copied().unwrap_or(0);
    // The alternatives joined to the chosen one by `or`.
    let mut first = chosen;
    while first > 0 && live[first].or_joined {
        first -= 1;
    }
    let mut last = chosen;
    while last + 1 < live.len() && live[last + 1].or_joined {
        last += 1;
    }
    let distinct = |indices: &mut dyn Iterator<Item = usize>| {
        let mut keys: Vec<String> = indices.map(|i| key(live[i])).collect();
        keys.dedup();
        keys.sort();
        keys.dedup();
        keys
    };
    let alternatives = distinct(&mut (first..=last));
    if alternatives.len() > 1 {
        return Pick::Ambiguous(format!(
            "it offers several answers ({})",
            alternatives.join(" or ")
        ));
    }
    if cued.is_empty() {
        let values = distinct(&mut pool.iter().copied());
        if values.len() > 1 {
            return Pick::Ambiguous(format!(
                "it has several values ({}) without saying which is the answer",
                values.join(", ")
            ));
        }
    }
    Pick::One(live[chosen])
}

struct Grader<'a> {
    spec: &'a Expected,
    expected_text: &'a str,
    settings: &'a GradingSettings,
    hedged: bool,
    question: Option<&'a Shape>,
}

type Graded = (Verdict, Option<std::ops::Range<usize>>);

/// Why a candidate is not a plain value.
enum NotAValue {
    /// An equation still to solve.
    Unsolved(Relation),
    Other(String),
}

impl Grader<'_> {
    fn seed(&self, candidate: &Candidate) -> u64 {
        algebra::seed_of(&[self.expected_text, &candidate.rendered])
    }

    fn is_pasted(&self, candidate: &Candidate) -> bool {
        self.question
            .is_some_and(|q| candidate.shape.as_ref().is_ok_and(|s| s == q))
    }

    /// The value a candidate gives: `12`, `x = 12`, `3 × 4 = 12`.
    fn value_of(&self, candidate: &Candidate) -> Result<Number, NotAValue> {
        let shape = candidate
            .shape
            .as_ref()
            .map_err(|e| NotAValue::Other(e.clone()))?;
        let expr = match shape {
            Shape::Value(e) => e,
            Shape::Chain(parts) => match solved_form(candidate) {
                Some((_, value)) => value,
                None if parts.iter().all(|p| p.variables().is_empty()) => parts
                    .last()
                    .ok_or_else(|| NotAValue::Other("nothing to read".into()))?,
                None => {
                    let (first, last) = (&parts[0], &parts[parts.len() - 1]);
                    return Err(NotAValue::Unsolved(Relation::new(
                        math::CompareOp::Eq,
                        first,
                        last,
                    )));
                }
            },
            Shape::Relation(_) => {
                return Err(NotAValue::Other(
                    "an inequality was given where a value is expected".into(),
                ));
            }
        };
        if !expr.variables().is_empty() {
            return Err(NotAValue::Other(format!(
                "`{}` is an expression in {}, not a value",
                candidate.original,
                expr.variables().join(", ")
            )));
        }
        evaluate(expr)
            .map_err(|e| NotAValue::Other(format!("`{}` has no value: {e}", candidate.original)))
    }

    fn key(&self, candidate: &Candidate) -> String {
        match self.value_of(candidate) {
            Ok(n) => show_number(n),
            Err(_) => candidate.rendered.clone(),
        }
    }

    fn quantity(&self, candidate: &Candidate, value: Number) -> Quantity {
        Quantity {
            value,
            unit: candidate.unit.clone(),
            literal: candidate.literal.clone(),
            form: candidate.form,
        }
    }

    fn no_answer(&self, pick: Pick) -> Graded {
        match pick {
            Pick::Ambiguous(why) => (
                Verdict::unverifiable(format!("cannot tell which answer is meant: {why}")),
                None,
            ),
            _ => (
                Verdict::unverifiable(match self.spec.kind {
                    AnswerKind::Expression => "no expression found in the message",
                    AnswerKind::Equation => "no solution found in the message",
                    _ => "no number found in the message",
                }),
                None,
            ),
        }
    }

    /// An equation given where a value or a solution is expected: a step
    /// towards it (unverifiable) or a step that goes wrong.
    fn unsolved(
        &self,
        candidate: &Candidate,
        relation: &Relation,
        target: Option<Number>,
    ) -> Verdict {
        let variables = relation.difference.variables();
        let solution = match variables.as_slice() {
            [v] => algebra::solve_linear(&relation.difference, v, self.seed(candidate))
                .map(|s| (v.to_string(), s)),
            _ => None,
        };
        let verdict = match (solution, target) {
            (Some((v, s)), Some(t)) if s.approx_eq(t) => Verdict::unverifiable(format!(
                "`{}` is a step towards the answer, not the answer: it still has to be solved for {v}",
                candidate.original
            )),
            (Some((v, s)), Some(t)) => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!(
                    "`{}` gives {v} = {}, not the expected {}",
                    candidate.original,
                    show_number(s),
                    show_number(t)
                ),
                normalized: Some(format!("{v} = {}", show_number(s))),
            },
            _ => Verdict::unverifiable(format!(
                "`{}` is an equation, not a solution",
                candidate.original
            )),
        };
        verdict.tagged(SlipTag::NotSolved)
    }

    fn number(&self, target: Number, candidates: &[Candidate]) -> Graded {
        let pick = pick(candidates, |c| self.key(c), |c| self.value_of(c).is_ok());
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted_verdict(), range);
        }
        let verdict = match self.value_of(candidate) {
            Ok(value) => numeric::compare(
                &self.quantity(candidate, value),
                &Quantity {
                    unit: self.spec.unit.clone(),
                    form: self.spec.form,
                    ..Quantity::plain(target)
                },
                self.settings,
            ),
            Err(NotAValue::Unsolved(relation)) => self.unsolved(candidate, &relation, Some(target)),
            Err(NotAValue::Other(why)) => Verdict::unverifiable(why),
        };
        (verdict, range)
    }

    fn expression(&self, target: &Expr, candidates: &[Candidate]) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Value(_) | Shape::Chain(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted_verdict(), range);
        }
        let student = match &candidate.shape {
            Ok(Shape::Value(e)) => e,
            // `y = 2x + 3` names the expression; a chain of working ends in it.
            Ok(Shape::Chain(parts)) => match &parts[0] {
                Expr::Var(v) if parts.len() == 2 && !self.spec.variables.contains(v) => &parts[1],
                _ => &parts[parts.len() - 1],
            },
            Ok(Shape::Relation(_)) => {
                return (
                    Verdict::unverifiable(
                        "an inequality was given where an expression is expected",
                    ),
                    range,
                );
            }
            Err(e) => return (Verdict::unverifiable(e.clone()), range),
        };
        let normalized = Some(student.to_string());
        let shown = format!("`{}`", student);
        let verdict = match algebra::compare_values(
            target,
            student,
            self.seed(candidate),
            self.settings.equivalence_points,
        ) {
            Comparison::Equal => {
                let mut v = Verdict {
                    outcome: GradeOutcome::Correct,
                    tags: Vec::new(),
                    reason: format!("{shown} is equivalent to the expected `{target}`"),
                    normalized,
                };
                if algebra::has_uncollected_terms(student)
                    && !algebra::has_uncollected_terms(target)
                {
                    v = v.tagged(SlipTag::Unsimplified);
                }
                v
            }
            Comparison::Negated => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: vec![SlipTag::SignError],
                reason: format!("{shown} is the expected `{target}` with the opposite sign"),
                normalized,
            },
            Comparison::Different => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!("{shown} is not equivalent to the expected `{target}`"),
                normalized,
            },
            Comparison::Unknown(why) => {
                Verdict::unverifiable(format!("{shown} could not be compared: {why}"))
            }
        };
        (verdict, range)
    }

    fn solutions(&self, variable: &str, values: &[Number], candidates: &[Candidate]) -> Graded {
        if !candidates.iter().any(|c| !c.negated && is_solution(c)) {
            return self.unsolved_only(variable, values, candidates);
        }
        if values.len() == 1 {
            return self.one_solution(variable, values[0], candidates);
        }
        let solved: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| !c.negated && solves_for(c, variable))
            .collect();
        if solved.is_empty() {
            let verdict = Verdict {
                outcome: GradeOutcome::Wrong,
                tags: vec![SlipTag::WrongVariable],
                reason: format!("the values given are not for {variable}"),
                normalized: None,
            };
            return (verdict, None);
        }
        // Several solutions: the set the student gives against the set expected.
        let mut given: Vec<(Number, &Candidate)> = Vec::new();
        for c in &solved {
            if let Ok(v) = self.value_of(c)
                && !given.iter().any(|(g, _)| g.approx_eq(v))
            {
                given.push((v, c));
            }
        }
        let range = solved
            .first()
            .map(|c| c.range.start..solved.last().map_or(c.range.end, |l| l.range.end));
        let found = values
            .iter()
            .filter(|v| given.iter().any(|(g, _)| g.approx_eq(**v)))
            .count();
        let extra = given
            .iter()
            .filter(|(g, _)| !values.iter().any(|v| v.approx_eq(*g)))
            .count();
        let shown: Vec<String> = given
            .iter()
            .map(|(g, _)| format!("{variable} = {}", show_number(*g)))
            .collect();
        let expected: Vec<String> = values
            .iter()
            .map(|v| format!("{variable} = {}", show_number(*v)))
            .collect();
        let (outcome, tags) = match (found, extra) {
            (f, 0) if f == values.len() => (GradeOutcome::Correct, vec![]),
            (f, 0) if f > 0 => (GradeOutcome::Close, vec![SlipTag::MissingSolution]),
            (f, _) if f > 0 => (GradeOutcome::Wrong, vec![SlipTag::ExtraSolution]),
            _ => (GradeOutcome::Wrong, vec![]),
        };
        let verdict = Verdict {
            outcome,
            tags,
            reason: format!(
                "gave {}; expected {} ({found} of {} found, {extra} extra)",
                shown.join(" or "),
                expected.join(" or "),
                values.len()
            ),
            normalized: Some(shown.join(" or ")),
        };
        (verdict, range)
    }

    fn one_solution(&self, variable: &str, target: Number, candidates: &[Candidate]) -> Graded {
        // Values for the right letter first; else any, to name the slip.
        let right_letter = candidates
            .iter()
            .any(|c| !c.negated && solves_for(c, variable));
        let preferred = |c: &Candidate| {
            if right_letter {
                solves_for(c, variable)
            } else {
                is_solution(c)
            }
        };
        let pick = pick(candidates, |c| self.key(c), preferred);
        let candidate = match pick {
            Pick::One(c) => c,
            // `x = 4 or x = -4` stated (not asked): a claim of two solutions.
            Pick::Ambiguous(_) if !self.hedged => {
                let claimed: Vec<&Candidate> = candidates
                    .iter()
                    .filter(|c| !c.negated && preferred(c))
                    .collect();
                let values: Vec<Number> = claimed
                    .iter()
                    .filter_map(|c| self.value_of(c).ok())
                    .collect();
                if values.len() > 1 {
                    let right = values.iter().any(|v| v.approx_eq(target));
                    let range = claimed.first().map(|f| {
                        f.range.start..claimed.last().map_or(f.range.end, |l| l.range.end)
                    });
                    let shown: Vec<String> = values
                        .iter()
                        .map(|v| format!("{variable} = {}", show_number(*v)))
                        .collect();
                    let verdict = Verdict {
                        outcome: GradeOutcome::Wrong,
                        tags: if right {
                            vec![SlipTag::ExtraSolution]
                        } else {
                            vec![]
                        },
                        reason: format!(
                            "gave {}, but the only solution is {variable} = {}",
                            shown.join(" or "),
                            show_number(target)
                        ),
                        normalized: Some(shown.join(" or ")),
                    };
                    return (verdict, range);
                }
                return self.no_answer(pick);
            }
            other => return self.no_answer(other),
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted_verdict(), range);
        }
        let value = match self.value_of(candidate) {
            Ok(v) => v,
            Err(NotAValue::Unsolved(relation)) => {
                return (self.unsolved(candidate, &relation, Some(target)), range);
            }
            Err(NotAValue::Other(why)) => return (Verdict::unverifiable(why), range),
        };
        let mut verdict = numeric::compare(
            &self.quantity(candidate, value),
            &Quantity {
                unit: self.spec.unit.clone(),
                form: self.spec.form,
                ..Quantity::plain(target)
            },
            self.settings,
        );
        let named = solved_form(candidate).map(|(v, _)| v);
        if let Some(name) = named.as_deref() {
            verdict.normalized = verdict.normalized.map(|n| format!("{name} = {n}"));
            if name != variable {
                // The right value for another letter is a slip, not a solution.
                if verdict.outcome == GradeOutcome::Correct {
                    verdict.outcome = GradeOutcome::Close;
                }
                verdict.reason = format!("{} (but for {name}, not {variable})", verdict.reason);
                verdict = verdict.tagged(SlipTag::WrongVariable);
            }
        }
        (verdict, range)
    }

    /// No solution given, only equations: a restated question or a step.
    fn unsolved_only(&self, variable: &str, values: &[Number], candidates: &[Candidate]) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Chain(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted_verdict(), range);
        }
        match self.value_of(candidate) {
            Err(NotAValue::Unsolved(relation)) => {
                let target = (values.len() == 1).then(|| values[0]);
                (self.unsolved(candidate, &relation, target), range)
            }
            Err(NotAValue::Other(why)) => (Verdict::unverifiable(why), range),
            Ok(_) => (
                Verdict::unverifiable(format!("no value for {variable} found")),
                range,
            ),
        }
    }

    fn relation(
        &self,
        target: &Relation,
        defined: Option<&Expr>,
        candidates: &[Candidate],
    ) -> Graded {
        let pick = pick(
            candidates,
            |c| c.rendered.clone(),
            |c| matches!(c.shape, Ok(Shape::Chain(_) | Shape::Relation(_))),
        );
        let Pick::One(candidate) = pick else {
            return self.no_answer(pick);
        };
        let range = Some(candidate.range.clone());
        if self.is_pasted(candidate) {
            return (pasted_verdict(), range);
        }
        let student = match &candidate.shape {
            Ok(Shape::Chain(parts)) => {
                Relation::new(math::CompareOp::Eq, &parts[0], &parts[parts.len() - 1])
            }
            Ok(Shape::Relation(e)) => match Relation::from_expr(e) {
                Some(r) => r,
                None => return (Verdict::unverifiable("not a relation"), range),
            },
            // `2x + 1` for `y = 2x + 1`: the expression the equation defines.
            Ok(Shape::Value(_)) if defined.is_some() => {
                return match defined {
                    Some(expr) => self.expression(expr, std::slice::from_ref(candidate)),
                    None => (Verdict::unverifiable("not a relation"), range),
                };
            }
            Ok(Shape::Value(_)) => {
                return (
                    Verdict::unverifiable(format!(
                        "`{}` is an expression; an equation is expected",
                        candidate.original
                    )),
                    range,
                );
            }
            Err(e) => return (Verdict::unverifiable(e.clone()), range),
        };
        let shown = format!("`{}`", candidate.original);
        let normalized = Some(candidate.rendered.clone());
        let verdict = match algebra::compare_relations(
            target,
            &student,
            self.seed(candidate),
            self.settings.equivalence_points,
        ) {
            Comparison::Equal => Verdict {
                outcome: GradeOutcome::Correct,
                tags: Vec::new(),
                reason: format!("{shown} is equivalent to the expected relation"),
                normalized,
            },
            Comparison::Unknown(why) => {
                Verdict::unverifiable(format!("{shown} could not be compared: {why}"))
            }
            _ => Verdict {
                outcome: GradeOutcome::Wrong,
                tags: Vec::new(),
                reason: format!("{shown} is not equivalent to the expected relation"),
                normalized,
            },
        };
        (verdict, range)
    }
}

fn pasted_verdict() -> Verdict {
    Verdict::unverifiable("the answer repeats the question instead of answering it")
        .tagged(SlipTag::PastedQuestion)
}
