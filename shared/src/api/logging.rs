//! Structured logs: JSON lines on Lambda when `AWS_LAMBDA_LOG_FORMAT=JSON`
//! (or locally with `TUTORFLOW_LOG_FORMAT=json`), readable text otherwise.
//! The level comes from `RUST_LOG`, else `AWS_LAMBDA_LOG_LEVEL`, else info.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; later calls do nothing.
pub fn init(env: impl Fn(&str) -> Option<String>) {
    let json = env("AWS_LAMBDA_LOG_FORMAT").is_some_and(|f| f.eq_ignore_ascii_case("json"))
        || env("TUTORFLOW_LOG_FORMAT").is_some_and(|f| f.eq_ignore_ascii_case("json"));
    let level = env("RUST_LOG")
        .or_else(|| env("AWS_LAMBDA_LOG_LEVEL").map(|l| l.to_lowercase()))
        .unwrap_or_else(|| "info".to_owned());
    let filter = EnvFilter::try_new(&level).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(true)
        .with_writer(std::io::stderr);
    let result = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            // Lambda adds its own timestamps.
            .without_time()
            .try_init()
    } else {
        builder.compact().try_init()
    };
    let _ = result;
}
