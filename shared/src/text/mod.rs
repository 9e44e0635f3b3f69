//! The small text languages content is written in, which the content checks
//! and the engine read alike: question templates and how values are written
//! for students ([`template`]), the safety gate's patterns ([`pattern`]),
//! whether a sentence mentions a value ([`mentions`]), and the folded form
//! messages and routing phrases are compared in ([`fold`]).

mod fold;
mod mentions;
pub mod pattern;
pub mod template;

pub use fold::{first_word, fold, is_word_char, word_bit};
pub use mentions::mentions;
