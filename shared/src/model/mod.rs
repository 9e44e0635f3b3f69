//! Contracts: every JSON object the product exchanges, and who a request
//! acts for ([`identity`]).
//!
//! The product's own API is camelCase on the wire and request types reject
//! unknown fields. Two shapes keep the casing of the systems they talk to:
//! the LLM's structured reply ([`llm`], snake_case) and the n8n/LMS webhook
//! ([`webhook`], snake_case, docs/webhooks.md).

pub mod api;
pub mod grade;
pub mod identity;
pub mod llm;
pub mod message;
pub mod policy;
pub mod profile;
pub mod seams;
pub mod session_summary;
pub mod signals;
pub mod snapshot;
pub mod thread;
pub mod tier;
pub mod webhook;

pub use api::*;
pub use grade::*;
pub use identity::*;
pub use llm::*;
pub use message::*;
pub use policy::*;
pub use profile::*;
pub use seams::*;
pub use session_summary::*;
pub use signals::*;
pub use snapshot::*;
pub use thread::*;
pub use tier::*;
pub use webhook::*;
