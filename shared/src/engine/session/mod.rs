//! What a conversation keeps between turns and how a turn moves it on: the
//! pending question's lifecycle, the routing categories' transitions
//! (scaffolding, teach-back), the session's timeline, and what a session
//! driven through a sequence of problems does next.

pub mod lifecycle;
pub mod progression;
pub mod scaffolding;
pub mod timeline;
