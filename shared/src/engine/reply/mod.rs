//! The checks a tutor's reply goes through before a student sees it:
//! [`fallback`] validates the reply against the policy and writes the
//! fallback tutor's reply, [`answer_guard`] keeps pending answers out of the
//! reply and the tutor's input. The turn decides with them
//! (`engine::turn::decide`).

pub mod answer_guard;
pub mod fallback;
