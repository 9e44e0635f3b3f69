//! What a student's recent turns say about how the tutor should go on: the
//! pacing directive and the student's style, which the engine reads from
//! the conversation and the tutor prompt is given.

use serde::{Deserialize, Serialize};

/// How the next reply paces the lesson, from the turn number, mastery and
/// the trend of recent answers (the workflow's `pacing` section).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacingDirective {
    /// The first turn: a short opening and one simple question.
    TurnOne,
    Accelerate,
    Extend,
    Simplify,
    Consolidate,
    #[default]
    Steady,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verbosity {
    Quiet,
    #[default]
    Moderate,
    Expressive,
}

/// How the student writes: how much, with emoji or questions, and whether
/// their replies are trailing off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StudentStyle {
    pub verbosity: Verbosity,
    /// Replies keep getting shorter (by the workflow's `style` section).
    pub disengaged: bool,
    pub uses_emoji: bool,
    pub asks_questions: bool,
}
