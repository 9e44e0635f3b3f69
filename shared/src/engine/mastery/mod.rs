//! The student's record and what moves it: the evidence each graded event
//! gives, the mastery tiers it earns, the two per-unit estimates (BKT's
//! probability, IRT-lite's ability), what one conversation learned, and
//! the short summary apps show beside the chat.

pub mod bkt;
pub mod evidence;
pub mod irt;
pub mod prereq;
pub mod thread_learning;
pub mod tier;
