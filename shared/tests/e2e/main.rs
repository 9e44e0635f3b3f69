//! End to end over HTTP: the local server on a real port, the real handler,
//! the offline tutor (or an OpenAI-style stand-in) and a real store — the
//! embedded SQLite file, and DynamoDB + S3 on the emulator (moto) that
//! scripts/test.sh starts. Every mode and flow a student or an integration
//! meets, and the store round trips each route makes.

#[path = "../e2e_support/mod.rs"]
mod e2e_support;

mod clarify;
mod contention;
mod course_hints;
mod exam;
mod first_questions;
mod http;
mod integrations;
mod integrity;
mod item_tokens;
mod personalization;
mod problem_set;
mod safety;
mod session_summary;
mod store_round_trips;
mod stream;
mod survey;
mod teach_me;
mod text_hygiene;
