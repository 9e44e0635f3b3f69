//! The LLM layer: providers behind one structured-completion trait, output
//! schemas per provider, the tutor's prompt bundle, the LLM and offline
//! implementations of every call's seam (`crate::model::seams`), and speech
//! transcription.
//!
//! - [`provider`]: the [`LlmProvider`] trait, requests and completions;
//!   [`openai`], [`anthropic`] and [`gemini`] implement it over [`http`],
//!   which owns retries and deadlines.
//! - [`schema`]: JSON schemas derived from the reply types, normalised per
//!   provider; [`structured`] decodes and checks every reply before use.
//! - [`prompt`] and [`tokens`]: the tutor prompt within its token budget.
//! - [`calls`]: the seams as one provider call each; [`offline`]: the same
//!   seams, deterministic; [`setup`]: which one each call gets.
//! - [`sse`] and [`stream_json`]: streamed replies — provider event
//!   streams read, and the reply's text picked out while it is written.
//! - [`transcription`]: speech to text.

pub mod anthropic;
pub mod calls;
pub mod gemini;
pub mod http;
pub mod moderation;
pub mod offline;
pub mod openai;
pub mod prompt;
pub mod provider;
pub mod schema;
pub mod setup;
pub mod sse;
pub mod stream_json;
pub mod structured;
pub mod tokens;
pub mod transcription;

pub use calls::{
    LlmBinding, LlmDrillGrader, LlmExamEvaluator, LlmPlanner, LlmSafetyJudge, LlmSummarizer,
    LlmTutor,
};
pub use http::RetryPolicy;
pub use offline::{
    OfflineDrillGrader, OfflineExamEvaluator, OfflinePlanner, OfflineSafetyJudge,
    OfflineSummarizer, OfflineTutor,
};
pub use provider::{
    ApiKey, CallSettings, ChatMessage, ChatRole, Completion, CompletionRequest, Endpoint, LlmCall,
    LlmProvider, TokenUsage,
};
pub use schema::{OutputSchema, SchemaDialect, StructuredOutput};
pub use setup::{LlmSetupError, LlmStack};
pub use structured::structured_call;
pub use transcription::{
    AudioClip, AudioFormat, OpenAiTranscriber, Transcript, TranscriptionError,
};
