//! Practice items: generated from a blueprint (the same seed gives the same
//! item), worked out step by step, issued as drills whose sealed tokens
//! carry what grading needs, graded by code, and the help a pending item
//! offers from its own solution.

pub mod drill;
pub mod drill_grade;
pub mod drill_token;
pub mod generate;
pub mod item_help;
pub mod solution;
pub mod worked;
