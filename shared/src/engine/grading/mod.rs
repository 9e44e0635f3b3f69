//! Grading answers by code, so that a gradable answer never needs the LLM.
//!
//! [`grade`] reads what a student typed — numbers in every everyday format,
//! English number words, LaTeX, units, answers inside sentences, algebraic
//! expressions and equations, multiple-choice picks — and compares it with
//! the expected answer of the pending question. The result is one of
//! `correct`, `close` (a near miss, by the threshold in the workflow's `grading`
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
//! - A question with options whose answer is a value (a generated drill) is
//!   graded by value: a typed number that is none of the options is still
//!   `close` or `wrong`, and a letter or position picks the option it names.
//!   Only `mcq` answers, where the options are all that counts, are graded
//!   by the option chosen.
//! - A wrong answer that a known mistake of the question produces is named
//!   by it (`mistake`), shown as an option or not. Such an answer is not a
//!   near miss: it is `wrong` even when it is near the expected value,
//!   unless the mistake is a slip of the answer itself (one out, ten out).
//!
//! The reason may quote the expected answer: it is for logs, teachers and
//! the CLI, not for the student or the tutor prompt.

mod algebra;
mod computed;
mod context;
mod expected;
mod extract;
mod latex;
mod lex;
mod literal;
mod mcq;
mod mistakes;
mod normalize;
mod numeric;
mod pasted;
mod pick;
mod recurring;
mod structured;
mod text;
mod units;
mod words;

use serde::{Deserialize, Serialize};

use self::context::Context;
use self::expected::evaluate;
use crate::content::workflow::GradingSettings;
use crate::math::Number;
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome, KnownMistake, PendingQuestion};

/// Longest message graded; longer ones are not answers.
const MAX_ANSWER_CHARS: usize = 2000;
/// Longest question text compared with the answer (pasted questions).
const MAX_QUESTION_CHARS: usize = 4000;

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
    /// The known mistake a wrong (or near) answer comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<KnownMistake>,
    pub reason: String,
}

impl Grade {
    fn unverifiable(reason: impl Into<String>) -> Grade {
        Grade {
            result: GradeOutcome::Unverifiable,
            extracted: None,
            normalized: None,
            tags: Vec::new(),
            mistake: None,
            reason: reason.into(),
        }
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

    /// The grade, quoting `extracted` from the message.
    fn into_grade(self, extracted: Option<String>) -> Grade {
        Grade {
            result: self.outcome,
            extracted: extracted.filter(|e| !e.is_empty()),
            normalized: self.normalized,
            tags: self.tags,
            mistake: None,
            reason: self.reason,
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
    if expected.value.chars().count() > MAX_ANSWER_CHARS {
        return Grade::unverifiable("the expected answer is too long to grade against");
    }
    // A question too long to compare is simply not compared.
    let question = question.filter(|q| q.chars().count() <= MAX_QUESTION_CHARS);
    let picked = mcq::picked_by_label(&expected.options, answer);
    let mut grade = match expected.kind {
        AnswerKind::Text => {
            Grade::unverifiable("free-text answers are judged by the tutor, not by code")
        }
        AnswerKind::Mcq => mcq::grade(expected, answer, settings),
        _ => match picked {
            // "B" or "the second one" on a question graded by value: the
            // value of the option named.
            Some(i) => {
                let option = &expected.options[i];
                let mut grade = grade_value(expected, option, question, settings);
                grade.extracted = Some(answer.trim().to_owned());
                grade.reason = format!(
                    "chose option {} ({}); {}",
                    mcq::letter(i),
                    option.trim(),
                    grade.reason
                );
                grade
            }
            None => grade_value(expected, answer, question, settings),
        },
    };
    // "B" is the mistake of the option it names.
    let named = picked.map_or(answer, |i| expected.options[i].as_str());
    mistakes::name(expected, named, settings, &mut grade);
    grade.tags.sort();
    grade.tags.dedup();
    grade
}

/// Grades a value (number, expression or equation) against `expected`.
fn grade_value(
    expected: &ExpectedAnswer,
    answer: &str,
    question: Option<&str>,
    settings: &GradingSettings,
) -> Grade {
    match expected.kind {
        AnswerKind::Number => structured::grade(&expected.value, answer)
            .unwrap_or_else(|| computed::computed(expected, answer, question, settings)),
        _ => computed::computed(expected, answer, question, settings),
    }
}

/// The known mistake of `expected` that `answer` is, if any: what grading
/// reports as `mistake` (also for callers that overrule the grade, such as
/// a drill that wants the simplest form).
pub fn known_mistake<'a>(
    expected: &'a ExpectedAnswer,
    answer: &str,
    settings: &GradingSettings,
) -> Option<&'a KnownMistake> {
    mistakes::find(expected, answer, settings)
}

/// Grades an answer to a pending question; `None` when the question has no
/// expected answer to check against.
pub fn grade_pending(
    question: &PendingQuestion,
    answer: &str,
    settings: &GradingSettings,
) -> Option<Grade> {
    let expected = question.expected.as_ref()?;
    let mut grade = grade(expected, answer, Some(&question.text), settings);
    // 6/9 to "simplify 12/18" has the right value but is not what was
    // asked. A drill's own answer says whether it wants the simplest form
    // (and marks it wrong); a question in the chat says so in its words.
    if question.drill_token.is_none()
        && asks_for_simplest_form(&question.text)
        && grade.result == GradeOutcome::Correct
        && grade.tags.contains(&SlipTag::Unsimplified)
    {
        grade.result = GradeOutcome::Close;
        grade.reason = "right value, but the question asks for the simplest form".into();
    }
    Some(grade)
}

/// Whether a question's words ask for the simplest form.
fn asks_for_simplest_form(question: &str) -> bool {
    let question = question.to_lowercase();
    [
        "simplest form",
        "simplify",
        "lowest terms",
        "fully simplified",
    ]
    .iter()
    .any(|words| question.contains(words))
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
