//! The Lambda entry point every function's `main` calls: load the
//! configuration and open the store and content during init, read the
//! secrets and build the app on the first invocation (the Parameters and
//! Secrets extension serves only then), then serve each API Gateway (HTTP
//! API v2) event through the shared handler.
//!
//! With `TUTORFLOW_RESPONSE_STREAMING=true` the turn function answers
//! through Lambda response streaming instead, behind a function URL whose
//! invoke mode is `RESPONSE_STREAM` (function URL events have the HTTP API
//! v2 shape): a turn that asks for `text/event-stream` reaches the student
//! word by word; every other request is answered whole, as before.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use bytes::Bytes;
use http_body_util::{Either, Full};
use lambda_http::lambda_runtime::{self, LambdaEvent};
use lambda_http::request::RequestContext;
use lambda_http::{Body, Error, Request, RequestExt, Response, service_fn};
use tokio::sync::OnceCell;

use super::handler::Incoming;
use super::logging;
use super::routes::Function;
use super::stream::{Answer, EventBody};
use crate::config::Config;
use crate::secrets::SecretResolver;
use crate::service::{App, Resources};

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// What the init phase prepares for the first invocation.
struct ColdStart {
    config: Config,
    resources: Resources,
    secrets: SecretResolver,
    app: OnceCell<Arc<App>>,
}

impl ColdStart {
    /// Configuration, store, content and the secret resolver, read once
    /// per sandbox; a failure ends the init phase.
    async fn open() -> Result<Arc<ColdStart>, Error> {
        let cold = async {
            let config = Config::load(None, env)?;
            let resources = Resources::open(&config).await?;
            let secrets = SecretResolver::from_env(env)?;
            Ok::<_, Error>(ColdStart {
                config,
                resources,
                secrets,
                app: OnceCell::new(),
            })
        };
        Ok(Arc::new(cold.await.inspect_err(
            |e| tracing::error!(error = %e, "cold start failed"),
        )?))
    }

    /// The app, built on first use. A failure is not kept: the next
    /// invocation tries again (a secret created after the deploy, a
    /// throttled read).
    async fn app(&self) -> Result<&Arc<App>, Error> {
        self.app
            .get_or_try_init(|| async {
                let secrets = self.secrets.fetch(&self.config).await?;
                let app = App::from_resources(
                    self.config.clone(),
                    self.resources.clone(),
                    &secrets.lookup(env),
                )?;
                Ok::<_, Error>(Arc::new(app))
            })
            .await
            .inspect_err(|e| tracing::error!(error = %e, "startup failed"))
    }
}

/// Runs `function` until the Lambda runtime stops it.
pub async fn run(function: Function) -> Result<(), Error> {
    logging::init(env);
    let cold = ColdStart::open().await?;
    let streaming = function == Function::Turn
        && env(STREAMING_ENV).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    tracing::info!(function = function.name(), streaming, "ready");
    if streaming {
        return lambda_http::run_with_streaming_response(service_fn(move |event: Request| {
            let cold = cold.clone();
            async move {
                let app = cold.app().await?;
                Ok::<_, Error>(handle_streaming(app, function, event).await)
            }
        }))
        .await;
    }
    lambda_http::run(service_fn(move |event: Request| {
        let cold = cold.clone();
        async move {
            let app = cold.app().await?;
            Ok::<_, Error>(handle(app, function, event).await)
        }
    }))
    .await
}

/// Runs the `notify` function: SQS batches of queued notifications.
pub async fn run_notify() -> Result<(), Error> {
    logging::init(env);
    let cold = ColdStart::open().await?;
    tracing::info!(function = "notify", "ready");
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: LambdaEvent<SqsEvent>| {
            let cold = cold.clone();
            async move {
                let app = cold.app().await?;
                Ok::<_, Error>(deliver_batch(app, event.payload).await)
            }
        },
    ))
    .await
}

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
                Some(body) => app.deliver_queued(&body).await.map_err(|e| e.to_string()),
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

/// One API Gateway event through the shared handler.
pub async fn handle(app: &App, function: Function, event: Request) -> Response<Body> {
    let response = app.handle(incoming(event), Some(function)).await;
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

/// One function URL event through the shared handler, streamed when asked.
pub async fn handle_streaming(
    app: &Arc<App>,
    function: Function,
    event: Request,
) -> Response<StreamedBody> {
    match app.handle_streaming(incoming(event), Some(function)).await {
        Answer::Whole(response) => response.map(|b| Either::Left(Full::new(b))),
        Answer::Streamed(response) => response.map(Either::Right),
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
