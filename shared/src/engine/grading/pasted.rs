//! Noticing a student who pastes the question back instead of answering:
//! the question's text inside the message, or the question's mathematics
//! (`-3 + 5`, `2x + 3 = 11`) given as the answer.

use super::context::Context;
use super::extract::{self, Form, Shape};
use super::{SlipTag, Verdict};

/// What remains of a message once a copy of the question is taken out.
pub(super) enum Stripped {
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

pub(super) fn strip_question(message: &str, question: &str) -> Option<Stripped> {
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
pub(super) fn question_math(question: &str, context: &Context) -> Option<Shape> {
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

/// The verdict for a message that only repeats the question.
pub(super) fn verdict() -> Verdict {
    Verdict::unverifiable("the answer repeats the question instead of answering it")
        .tagged(SlipTag::PastedQuestion)
}
