//! The engine over the shipped content and synthetic courses: the policy and
//! its triggers, state transitions and signals, routing categories, exam
//! selection, grading and drill tokens, mapping messages to units, the
//! safety gate's corpus, and no answer leaking before it is graded.

#[path = "../policy_support/mod.rs"]
mod policy_support;

mod answer_leaks;
mod classify;
mod drill_grading;
mod drill_token;
mod exam_selection;
mod grading_cases;
mod grading_properties;
mod policy_properties;
mod policy_triggers;
mod retrieval;
mod safety_corpus;
mod signals;
mod transitions;
mod unit_mapping;
