//! Lambda events through the shared handler: API Gateway (HTTP API v2)
//! events, function URL events answered as a stream, and SQS batches of
//! queued notifications. A function's bootstrap (init, secrets, the
//! runtime loop) is the composition root's: `crate::startup::lambda`.
//!
//! With `TUTORFLOW_RESPONSE_STREAMING=true` the turn function answers
//! through Lambda response streaming, behind a function URL whose invoke
//! mode is `RESPONSE_STREAM` (function URL events have the HTTP API v2
//! shape): a turn that asks for `text/event-stream` reaches the student
//! word by word; every other request is answered whole, as before.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use bytes::Bytes;
use http_body_util::{Either, Full};
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt, Response};

use super::App;
use super::dispatch::Routes;
use super::incoming::Incoming;
use super::stream::{EventBody, HandlerResponse};

/// Delivers a batch of queued notifications side by side. A message that
/// cannot be read is reported failed, so SQS retries it and then moves it
/// to the dead-letter queue; a receiver's refusal is not (the delivery has
/// had its tries and is recorded as failed).
pub async fn deliver_batch(app: &Arc<App>, event: SqsEvent) -> SqsBatchResponse {
    let mut deliveries = tokio::task::JoinSet::new();
    let mut message_of = std::collections::HashMap::new();
    for message in event.records {
        let app = app.clone();
        let id = message.message_id.unwrap_or_default();
        let task = deliveries.spawn(async move {
            match message.body {
                Some(body) => app
                    .service
                    .deliver_queued(&body)
                    .await
                    .map_err(|e| e.to_string()),
                None => Err("the message has no body".to_owned()),
            }
        });
        message_of.insert(task.id(), id);
    }
    let mut response = SqsBatchResponse::default();
    while let Some(done) = deliveries.join_next_with_id().await {
        let (task, error) = match done {
            Ok((_, Ok(()))) => continue,
            Ok((task, Err(error))) => (task, error),
            Err(e) => (e.id(), e.to_string()),
        };
        let id = message_of.remove(&task).unwrap_or_default();
        tracing::warn!(message_id = %id, %error, "notification not delivered");
        response.add_failure(id);
    }
    response
}

/// One API Gateway event on `routes`: a deployed function's own set, so
/// that its binary links no other route's use case.
pub async fn serve<R: Routes>(app: &App, routes: R, event: Request) -> Response<Body> {
    let response = app.handle_routes(routes, incoming(event)).await;
    let (parts, body) = response.into_parts();
    let body = match String::from_utf8(body.to_vec()) {
        Ok(text) if text.is_empty() => Body::Empty,
        Ok(text) => Body::Text(text),
        Err(e) => Body::Binary(e.into_bytes()),
    };
    Response::from_parts(parts, body)
}

/// Turns on response streaming for the turn function.
pub const STREAMING_ENV: &str = "TUTORFLOW_RESPONSE_STREAMING";

/// A streamed function's response body: whole, or written as the turn runs.
pub type StreamedBody = Either<Full<bytes::Bytes>, EventBody>;

/// One function URL event on `routes`, streamed when asked.
pub async fn serve_streaming<R: Routes>(
    app: &Arc<App>,
    routes: R,
    event: Request,
) -> Response<StreamedBody> {
    match app.handle_streaming_routes(routes, incoming(event)).await {
        HandlerResponse::Whole(response) => response.map(|b| Either::Left(Full::new(b))),
        HandlerResponse::Streamed(response) => response.map(Either::Right),
    }
}

/// The event as the shared handler takes it, with the authorizer's claims.
pub fn incoming(event: Request) -> Incoming {
    let request_id = event
        .lambda_context_ref()
        .map(|c| c.request_id.clone())
        .filter(|id| !id.is_empty())
        .or_else(|| match event.request_context_ref() {
            Some(RequestContext::ApiGatewayV2(ctx)) => ctx.request_id.clone(),
            _ => None,
        })
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let claims = match event.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx
            .authorizer
            .as_ref()
            .and_then(|a| a.jwt.as_ref())
            .map(|jwt| {
                jwt.claims
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<_, _>>()
            }),
        _ => None,
    };
    let (parts, body) = event.into_parts();
    let body = match body {
        Body::Empty => Bytes::new(),
        Body::Text(text) => Bytes::from(text),
        Body::Binary(bytes) => Bytes::from(bytes),
        _ => Bytes::new(),
    };
    Incoming {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body,
        request_id,
        authorizer_claims: claims,
    }
}
