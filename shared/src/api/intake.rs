//! Reading a request off a local-server connection without letting a
//! client hold the server: a body larger than its route takes is refused
//! from its declared length, one that arrives too slowly is cut off, and a
//! route that takes a large body (audio) authenticates the caller on the
//! headers before reading it. Lambda needs none of this: API Gateway
//! buffers and limits requests before they arrive.

use std::time::Duration;

use bytes::Bytes;
use http::request::Parts;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming as Body;

use super::App;
use super::incoming::Incoming;
use super::problem::Problem;
use super::routes::{Matched, Route, match_route};

/// What a route accepts as a body.
struct BodyRule {
    limit: usize,
    /// Whether the caller is authenticated before the body is read.
    authenticate_first: bool,
}

fn body_rule(app: &App, parts: &Parts) -> BodyRule {
    let json = app.service.config.limits.max_body_bytes;
    match match_route(&parts.method, parts.uri.path()) {
        Matched::Found(spec, _) if spec.route == Route::Transcribe => {
            let audio = usize::try_from(app.service.config.transcription.max_inline_bytes)
                .unwrap_or(usize::MAX);
            BodyRule {
                limit: json.max(audio),
                authenticate_first: true,
            }
        }
        _ => BodyRule {
            limit: json,
            authenticate_first: false,
        },
    }
}

/// The request, read whole, or the response that refuses it.
pub async fn read_request(
    app: &App,
    parts: Parts,
    body: Body,
    request_id: String,
) -> Result<Incoming, Box<Response<Bytes>>> {
    let refuse =
        |problem: Problem| Err(Box::new(problem.to_response(parts.uri.path(), &request_id)));
    let rule = body_rule(app, &parts);
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > rule.limit as u64) {
        return refuse(too_large(rule.limit));
    }
    if rule.authenticate_first
        && let Err(problem) = app.auth.authenticate(&parts.headers, None).await
    {
        return refuse(problem);
    }
    let timeout = Duration::from_millis(app.service.config.server.body_timeout_ms);
    let collected = tokio::time::timeout(timeout, Limited::new(body, rule.limit).collect());
    let body = match collected.await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return refuse(too_large(rule.limit));
        }
        Ok(Err(e)) => {
            return refuse(Problem::bad_request(format!(
                "the request body could not be read: {e}"
            )));
        }
        Err(_) => {
            return refuse(Problem::new(
                StatusCode::REQUEST_TIMEOUT,
                "request-timeout",
                "Request timeout",
                format!(
                    "the request body did not arrive within {} ms",
                    timeout.as_millis()
                ),
            ));
        }
    };
    Ok(Incoming {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body,
        request_id,
        authorizer_claims: None,
    })
}

fn too_large(limit: usize) -> Problem {
    Problem::too_large(format!("the body is larger than {limit} bytes"))
}
