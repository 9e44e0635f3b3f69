//! The HTTP loop every provider shares: retries only where they can help
//! (transport errors, 429, 5xx), honouring the provider's retry delay, with
//! jittered exponential backoff, and never past the call's deadline.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::sse::{SseEvent, SseParser};
use crate::model::LlmError;

/// How often and how patiently a failed attempt is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_attempts: u32,
    /// Backoff before the first retry; doubled for each further one.
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(4),
        }
    }
}

impl RetryPolicy {
    /// The jittered wait before retry number `retry` (1 for the first):
    /// uniformly between half and all of the exponential step, so clients
    /// that failed together do not retry together.
    pub fn backoff(&self, retry: u32) -> Duration {
        let step = self
            .base_delay
            .saturating_mul(1 << retry.saturating_sub(1).min(16))
            .min(self.max_delay);
        step.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// A retry delay longer than this is treated as "not within this call".
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);
/// Larger response bodies are refused: no structured reply is this big.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Provider messages are cut to this many characters in errors and logs.
const MAX_MESSAGE_CHARS: usize = 300;

/// What one failed attempt means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptFailure {
    pub error: LlmError,
    pub retryable: bool,
    /// The provider's own retry delay, when it gave one.
    pub retry_after: Option<Duration>,
}

impl AttemptFailure {
    pub fn fatal(error: LlmError) -> Self {
        AttemptFailure {
            error,
            retryable: false,
            retry_after: None,
        }
    }

    pub fn retryable(error: LlmError) -> Self {
        AttemptFailure {
            error,
            retryable: true,
            retry_after: None,
        }
    }
}

/// The usual meaning of an HTTP error status; providers refine it from
/// their error bodies.
pub(crate) fn failure_for_status(
    status: StatusCode,
    message: &str,
    retry_after: Option<Duration>,
) -> AttemptFailure {
    let detail = format!("HTTP {}: {}", status.as_u16(), clip(message));
    match status.as_u16() {
        401 | 403 => AttemptFailure::fatal(LlmError::Auth(detail)),
        408 => AttemptFailure::retryable(LlmError::Unavailable(detail)),
        429 => AttemptFailure {
            error: LlmError::RateLimited { retry_after },
            retryable: true,
            retry_after,
        },
        500..=599 => AttemptFailure {
            error: LlmError::Unavailable(detail),
            retryable: true,
            retry_after,
        },
        _ => AttemptFailure::fatal(LlmError::BadRequest(detail)),
    }
}

/// `Retry-After` (seconds or an HTTP date) or OpenAI's `retry-after-ms`.
pub(crate) fn retry_after_header(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

/// Google's `google.protobuf.Duration` JSON form, e.g. `"22s"` or `"0.5s"`.
pub(crate) fn parse_proto_duration(text: &str) -> Option<Duration> {
    duration_from_secs(text.trim().strip_suffix('s')?.parse().ok()?)
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0)
        .then(|| Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64())))
}

/// `message` cut to a loggable length.
pub(crate) fn clip(message: &str) -> String {
    let message = message.trim();
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    }
}

/// A stream event's data as JSON.
pub(crate) fn event_json(data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data)
        .map_err(|e| LlmError::InvalidOutput(format!("a stream event is not JSON: {e}")))
}

/// An error the provider reports inside a stream it had started.
pub(crate) fn mid_stream_error(message: &str) -> LlmError {
    LlmError::Unavailable(format!("error mid-stream: {}", clip(message)))
}

/// A successful JSON response and how many attempts it took.
#[derive(Debug)]
pub(crate) struct JsonReply {
    pub body: Value,
    pub attempts: u32,
}

/// The shared client: one connection pool per provider for the life of the
/// process (warm Lambda invocations reuse it).
#[derive(Debug, Clone)]
pub(crate) struct HttpJson {
    client: reqwest::Client,
    pub retry: RetryPolicy,
}

impl HttpJson {
    pub fn new(retry: RetryPolicy) -> Self {
        HttpJson {
            client: crate::http_client::shared(),
            retry,
        }
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends the request `build` makes (afresh for every attempt) until it
    /// succeeds, fails for good, runs out of attempts or of time.
    /// `classify` reads a provider's error responses.
    pub async fn send(
        &self,
        build: impl Fn() -> RequestBuilder,
        deadline: Instant,
        classify: impl Fn(StatusCode, &HeaderMap, &str) -> AttemptFailure,
    ) -> Result<JsonReply, LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let now = Instant::now();
            if now >= deadline {
                return Err(LlmError::Timeout);
            }
            let failure = match build().timeout(deadline - now).send().await {
                Err(e) if e.is_timeout() => return Err(LlmError::Timeout),
                Err(e) => {
                    AttemptFailure::retryable(LlmError::Unavailable(clip(&transport_error(&e))))
                }
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    match read_body(response).await {
                        Err(BodyError::Timeout) => return Err(LlmError::Timeout),
                        Err(BodyError::TooLarge) => {
                            return Err(LlmError::InvalidOutput(format!(
                                "the response body is larger than {MAX_BODY_BYTES} bytes"
                            )));
                        }
                        Err(BodyError::Transport(message)) => {
                            AttemptFailure::retryable(LlmError::Unavailable(clip(&message)))
                        }
                        Ok(text) if status.is_success() => {
                            return serde_json::from_str(&text)
                                .map(|body| JsonReply {
                                    body,
                                    attempts: attempt,
                                })
                                .map_err(|e| {
                                    LlmError::InvalidOutput(format!(
                                        "the response body is not JSON: {e}"
                                    ))
                                });
                        }
                        Ok(text) => classify(status, &headers, &text),
                    }
                }
            };
            if !failure.retryable || attempt >= self.retry.max_attempts {
                return Err(failure.error);
            }
            let delay = failure
                .retry_after
                .unwrap_or_else(|| self.retry.backoff(attempt));
            if Instant::now() + delay >= deadline {
                return Err(failure.error);
            }
            tracing::debug!(
                attempt,
                delay_ms = delay.as_millis() as u64,
                reason = failure.error.kind(),
                "retrying LLM request"
            );
            tokio::time::sleep(delay).await;
        }
    }
}

impl HttpJson {
    /// Opens a streamed response: the same retries as [`send`](Self::send)
    /// until the provider answers with a success status, none after — once
    /// its first byte is on the way, a retry would repeat what the student
    /// has already seen.
    pub async fn open_stream(
        &self,
        build: impl Fn() -> RequestBuilder,
        deadline: Instant,
        classify: impl Fn(StatusCode, &HeaderMap, &str) -> AttemptFailure,
    ) -> Result<(Response, u32), LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let now = Instant::now();
            if now >= deadline {
                return Err(LlmError::Timeout);
            }
            let failure = match build().timeout(deadline - now).send().await {
                Err(e) if e.is_timeout() => return Err(LlmError::Timeout),
                Err(e) => {
                    AttemptFailure::retryable(LlmError::Unavailable(clip(&transport_error(&e))))
                }
                Ok(response) if response.status().is_success() => {
                    return Ok((response, attempt));
                }
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    match read_body(response).await {
                        Err(BodyError::Timeout) => return Err(LlmError::Timeout),
                        Err(BodyError::TooLarge) => AttemptFailure::fatal(LlmError::Unavailable(
                            format!("HTTP {}: an oversized error body", status.as_u16()),
                        )),
                        Err(BodyError::Transport(message)) => {
                            AttemptFailure::retryable(LlmError::Unavailable(clip(&message)))
                        }
                        Ok(text) => classify(status, &headers, &text),
                    }
                }
            };
            if !failure.retryable || attempt >= self.retry.max_attempts {
                return Err(failure.error);
            }
            let delay = failure
                .retry_after
                .unwrap_or_else(|| self.retry.backoff(attempt));
            if Instant::now() + delay >= deadline {
                return Err(failure.error);
            }
            tokio::time::sleep(delay).await;
        }
    }
}

/// Reads a streamed response's events until `on_event` says the reply is
/// complete (`Ok(true)`) or fails. A stream that ends first is an error: a
/// cut-short reply is never taken for a whole one.
pub(crate) async fn read_events(
    mut response: Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, LlmError>,
) -> Result<(), LlmError> {
    let mut parser = SseParser::default();
    let mut read = 0usize;
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) if e.is_timeout() => return Err(LlmError::Timeout),
            Err(e) => return Err(LlmError::Unavailable(clip(&transport_error(&e)))),
        };
        read += chunk.len();
        if read > MAX_BODY_BYTES {
            return Err(LlmError::InvalidOutput(format!(
                "the streamed response is larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        for event in parser.push(&chunk) {
            if on_event(event)? {
                return Ok(());
            }
        }
    }
    if let Some(event) = parser.finish()
        && on_event(event)?
    {
        return Ok(());
    }
    Err(LlmError::Unavailable(
        "the stream ended before the reply was complete".into(),
    ))
}

enum BodyError {
    Timeout,
    TooLarge,
    Transport(String),
}

async fn read_body(mut response: Response) -> Result<String, BodyError> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(BodyError::TooLarge);
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.is_timeout() => return Err(BodyError::Timeout),
            Err(e) => return Err(BodyError::Transport(transport_error(&e))),
        }
    }
}

/// A transport error with its causes (reqwest's own text names only the URL).
fn transport_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_grows_jittered_and_capped() {
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for _ in 0..50 {
            let first = policy.backoff(1);
            assert!((50..=100).contains(&first.as_millis()), "{first:?}");
            let second = policy.backoff(2);
            assert!((100..=200).contains(&second.as_millis()), "{second:?}");
            let capped = policy.backoff(30);
            assert!((150..=300).contains(&capped.as_millis()), "{capped:?}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after_header(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after_header(&headers),
            Some(Duration::from_millis(1500))
        );
        let mut dated = HeaderMap::new();
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        dated.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let wait = retry_after_header(&dated).unwrap();
        assert!((28..=30).contains(&wait.as_secs()), "{wait:?}");
        let mut junk = HeaderMap::new();
        junk.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after_header(&junk), None);
        junk.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after_header(&junk), None);
    }

    #[test]
    fn proto_durations_parse() {
        assert_eq!(parse_proto_duration("22s"), Some(Duration::from_secs(22)));
        assert_eq!(
            parse_proto_duration("0.5s"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_proto_duration("22"), None);
        assert_eq!(parse_proto_duration("NaNs"), None);
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        let f = failure_for_status(StatusCode::UNAUTHORIZED, "bad key", None);
        assert!(matches!(f.error, LlmError::Auth(_)) && !f.retryable);
        let f = failure_for_status(StatusCode::BAD_REQUEST, "bad", None);
        assert!(matches!(f.error, LlmError::BadRequest(_)) && !f.retryable);
        let f = failure_for_status(StatusCode::TOO_MANY_REQUESTS, "slow down", None);
        assert!(matches!(f.error, LlmError::RateLimited { .. }) && f.retryable);
        let f = failure_for_status(StatusCode::from_u16(529).unwrap(), "overloaded", None);
        assert!(matches!(f.error, LlmError::Unavailable(_)) && f.retryable);
    }

    #[test]
    fn long_messages_are_clipped() {
        let long = "é".repeat(1000);
        assert_eq!(clip(&long).chars().count(), MAX_MESSAGE_CHARS + 1);
        assert_eq!(clip(" short "), "short");
    }
}
