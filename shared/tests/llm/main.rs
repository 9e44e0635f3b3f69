//! The LLM layer: the tutor prompt and the schemas it is sent with, every
//! provider and its streaming API against wiremock replays of their real
//! shapes, moderation, transcription, the offline tutor, the token estimate
//! and what a provider call logs.

#[path = "../llm_support/mod.rs"]
mod llm_support;

mod calls;
mod moderation;
mod observability;
mod offline;
mod phrasebook;
mod prompt;
mod providers;
mod schemas;
mod streaming;
mod tokens;
mod transcription;
