//! How code graded an answer: the outcome a drill, a card and a thread's
//! recent answers record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How code graded an answer: right, close to it (by the workflow's
/// `grading` thresholds), wrong, or not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GradeOutcome {
    Correct,
    Close,
    Wrong,
    /// The answer could not be understood; never counted as wrong.
    Unverifiable,
}
