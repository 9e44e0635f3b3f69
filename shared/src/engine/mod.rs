//! The pedagogy engine: policy, grading, item generation, mastery, modes and
//! the turn pipeline.
//!
//! Everything here is pure. No I/O, no clock and no randomness that is not
//! handed in: the current time arrives as a value, seeds as numbers, and
//! whatever the engine needs from the outside world (lockouts, the LLM's
//! reading of a message) arrives as data or through a trait it is given.
//! The engine never imports an adapter (`store`, `llm`, `api`).
//!
//! [`turn`] runs a turn; the folders beside it hold what its steps call,
//! one kind of work each: reading the message ([`interpret`]), deciding
//! what the tutor may do ([`policy`]), practice items ([`practice`]), the
//! student's record ([`mastery`]), what a conversation carries between
//! turns ([`session`]), exams ([`exam`]), checking the reply ([`reply`]),
//! and [`grading`], [`safety`] and the session [`modes`]. What a turn's
//! steps pass between them and hand the mode is in [`turn_data`], and the
//! per-course cache they all read in [`runtime`].

pub mod content_check;
pub mod exam;
pub mod grading;
pub mod interpret;
pub mod mastery;
pub mod modes;
pub mod policy;
pub mod practice;
pub mod reply;
pub mod rng;
pub mod runtime;
pub mod safety;
pub mod session;
pub mod snapshot_lite;
pub mod turn;
pub mod turn_data;
pub mod turn_log;
