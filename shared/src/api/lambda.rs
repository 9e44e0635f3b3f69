//! The Lambda entry point every function's `main` calls: build the app
//! once at cold start, then serve each API Gateway (HTTP API v2) event
//! through the shared handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Error, Request, RequestExt, Response, service_fn};

use super::handler::Incoming;
use super::logging;
use super::routes::Function;
use crate::config::Config;
use crate::service::App;

/// Runs `function` until the Lambda runtime stops it.
pub async fn run(function: Function) -> Result<(), Error> {
    let env = |k: &str| std::env::var(k).ok();
    logging::init(env);
    let config = Config::load(None, env)?;
    let app = Arc::new(App::from_config(config, &env).await.map_err(|e| {
        tracing::error!(error = %e, "cold start failed");
        e
    })?);
    tracing::info!(function = function.name(), "ready");
    lambda_http::run(service_fn(move |event: Request| {
        let app = app.clone();
        async move { Ok::<_, Error>(handle(&app, function, event).await) }
    }))
    .await
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
