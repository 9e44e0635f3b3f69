//! The process's one HTTPS client, shared by the LLM and transcription
//! providers, the JWKS fetch, notifications and the external exam API.
//!
//! Building a reqwest client loads the platform's root certificates (the
//! rustls platform verifier reads the whole system store), which costs
//! milliseconds of every cold start; clones share that work and one
//! connection pool. Callers set their own time limit on each request.

use std::sync::OnceLock;
use std::time::Duration;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Below API Gateway's and the providers' idle limits, so a warm function
/// does not reuse a connection the other side has dropped.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The shared client, built on first use.
pub fn shared() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .pool_idle_timeout(POOL_IDLE_TIMEOUT)
                .build()
                .unwrap_or_default()
        })
        .clone()
}
