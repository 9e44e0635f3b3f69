//! Exam questions in a conversation: the cards shown and answered, the
//! marking of a written answer, and the lockouts that decide which
//! questions may be tried now.

pub mod cards;
pub mod judge;
pub mod lockout;
