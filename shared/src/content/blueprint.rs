//! Skill blueprints (`workflows/blueprints/*.yaml`, seed 002 §13.5): what a
//! generated practice item assesses.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blueprint {
    /// Skill id, e.g. `MATH.ARITH.ADD.2DIGIT`.
    pub id: String,
    /// e.g. `Mathematics > Arithmetic > Addition`.
    pub domain: String,
    pub skill_statement: String,
    /// Bloom's level: Remember, Understand, Apply, Analyze, Evaluate, Create.
    pub cognitive_level: CognitiveLevel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CognitiveLevel {
    Remember,
    Understand,
    Apply,
    Analyze,
    Evaluate,
    Create,
}
