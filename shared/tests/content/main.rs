//! The content bundle: the shipped bundle is valid and each authoring
//! mistake is reported where it is written; the policy's settings in YAML;
//! and every shipped blueprint generates questions and worked steps that
//! are right, checked independently of the generator.

mod blueprint_generation;
mod blueprint_validation;
mod policy_settings;
mod validation;
mod worked_steps;
