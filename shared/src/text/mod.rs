//! The small text languages content is written in, which the content checks
//! and the engine read alike: question templates and how values are written
//! for students ([`template`]), the safety gate's patterns ([`pattern`]),
//! and whether a sentence mentions a value ([`mentions`]).

mod mentions;
pub mod pattern;
pub mod template;

pub use mentions::mentions;
