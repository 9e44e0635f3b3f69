//! What reading a message needs to know about the expected answer: the
//! lexer and the extractor both read by it.

use super::units::Unit;
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
