//! tutorflow: the adaptive tutoring engine, its content bundle and adapters,
//! shared by every Lambda function and the `tutorflow` CLI.

pub mod api;
pub mod config;
pub mod content;
pub mod engine;
pub mod http_client;
pub mod integrations;
pub mod llm;
pub mod math;
pub mod model;
pub mod secrets;
pub mod service;
pub mod startup;
pub mod store;
pub mod text;

/// Every binary that links this crate (the functions, the CLI, the tests
/// and benchmarks) allocates with mimalloc: a turn makes many short-lived
/// strings, and the system allocator was about a quarter of its time. It is
/// built without transparent huge pages (the workspace Cargo.toml says why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
