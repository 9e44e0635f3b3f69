//! The `tutorflow` command run as a user runs it: classify, generate, grade,
//! policy, publish, safety, simulate, sweep and test, and a new student's first
//! minute.

mod classify;
mod first_minute;
mod generate;
mod grade;
mod policy;
mod publish;
mod safety;
mod simulate;
mod sweep;
