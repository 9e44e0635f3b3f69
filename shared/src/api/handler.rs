//! The one request handler behind every Lambda function and the local
//! server: CORS, routing, authentication, body parsing, idempotency, the
//! use case, and problem+json for anything that goes wrong.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode};
use tracing::Instrument;

use super::App;
use super::dispatch::{AllRoutes, Caller, Routes};
use super::failure::Failure;
use super::incoming::{Incoming, REPLAYED_HEADER, REQUEST_ID_HEADER};
use super::problem::Problem;
use super::routes::{Function, Matched, Route, RouteSpec, match_route};
use crate::service::{Begun, Output};

impl App {
    /// Handles one request. `only` restricts the routes to one function's
    /// (the local server serves all).
    pub fn handle(
        &self,
        incoming: Incoming,
        only: Option<Function>,
    ) -> impl Future<Output = Response<Bytes>> + Send + '_ {
        self.handle_routes(AllRoutes { only }, incoming)
    }

    /// Handles one request on `routes`; any other route is not found. A
    /// deployed function names its own set, so that it links no other
    /// route's use case (see `super::dispatch`).
    pub async fn handle_routes<R: Routes>(&self, routes: R, incoming: Incoming) -> Response<Bytes> {
        let path = incoming.uri.path().to_owned();
        let span = tracing::info_span!(
            "request",
            request_id = %incoming.request_id,
            method = %incoming.method,
            path = %path,
            student_id = tracing::field::Empty,
            thread_id = tracing::field::Empty,
            status = tracing::field::Empty,
        );
        let request_id = incoming.request_id.clone();
        async move {
            let mut response = if incoming.method == Method::OPTIONS {
                preflight()
            } else {
                match self.route(&routes, &incoming).await {
                    Ok(response) => response,
                    Err(e) => self.failure(e, &path, &request_id),
                }
            };
            self.decorate(&mut response, &request_id);
            tracing::Span::current().record("status", response.status().as_u16());
            tracing::info!("handled");
            response
        }
        .instrument(span)
        .await
    }

    /// The problem+json response for `e`, logged as its kind deserves.
    pub(super) fn failure(&self, e: Failure, path: &str, request_id: &str) -> Response<Bytes> {
        e.log();
        e.to_problem().to_response(path, request_id)
    }

    /// The headers every response carries: CORS and the request id.
    pub(super) fn decorate(&self, response: &mut Response<Bytes>, request_id: &str) {
        cors(response.headers_mut());
        if let Ok(v) = HeaderValue::from_str(request_id) {
            response.headers_mut().insert(REQUEST_ID_HEADER, v);
        }
    }

    async fn route<R: Routes>(
        &self,
        routes: &R,
        incoming: &Incoming,
    ) -> Result<Response<Bytes>, Failure> {
        let (spec, params) = match match_route(&incoming.method, incoming.uri.path()) {
            Matched::Found(spec, params) if routes.serves(spec) => (spec, params),
            Matched::WrongMethod(allow) => return Err(Problem::method_not_allowed(allow).into()),
            _ => {
                return Err(Problem::not_found(format!(
                    "no route {} {}",
                    incoming.method,
                    incoming.uri.path()
                ))
                .into());
            }
        };
        if let Some(thread_id) = params.get("threadId") {
            tracing::Span::current().record("thread_id", thread_id);
        }
        let caller = self.authenticate(spec, incoming).await?;
        if let Caller::Student(who) = &caller {
            tracing::Span::current().record("student_id", who.student_id.as_str());
        }
        if !spec.mutating {
            let Caller::Student(who) = &caller else {
                return Err(Problem::not_found("no such route for integrations").into());
            };
            return routes
                .read(self, spec, who, &params, incoming)
                .await
                .map(ok_response);
        }
        // Mutating: an Idempotency-Key (or client turn id) makes a retry safe.
        let idempotency = match self.begin_request(spec, &caller, incoming).await? {
            Begun::Replay(stored) => return Ok(replayed(stored)),
            Begun::Run(idempotency) => idempotency,
        };
        let result = routes
            .mutate(self, spec, &caller, &params, incoming, &idempotency)
            .await;
        self.service
            .finish_idempotent(&idempotency, result.as_ref().ok())
            .await;
        result.map(ok_response)
    }

    pub(super) async fn authenticate<'a>(
        &'a self,
        spec: &RouteSpec,
        incoming: &Incoming,
    ) -> Result<Caller<'a>, Failure> {
        if spec.route == Route::WebhookTurn {
            let integration = self.webhooks.verify(
                &incoming.headers,
                &incoming.body,
                self.clock_now().timestamp(),
            )?;
            return Ok(Caller::Integration(integration));
        }
        let who = self
            .auth
            .authenticate(&incoming.headers, incoming.authorizer_claims.as_ref())
            .await?;
        Ok(Caller::Student(who))
    }

    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        self.service.clock.now()
    }
}

fn ok_response(output: Output) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from(output.body));
    *response.status_mut() = StatusCode::from_u16(output.status).unwrap_or(StatusCode::OK);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(output.content_type),
    );
    response
}

fn replayed(stored: crate::store::StoredResponse) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from(stored.body));
    *response.status_mut() = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    if let Ok(v) = HeaderValue::from_str(&stored.content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    response.headers_mut().insert(
        HeaderName::from_static(REPLAYED_HEADER),
        HeaderValue::from_static("true"),
    );
    response
}

fn preflight() -> Response<Bytes> {
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// Apps call the API from browsers; tokens travel in a header, not cookies,
/// so any origin may call it.
pub(super) fn cors(headers: &mut HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, PUT, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "authorization, content-type, idempotency-key, x-tutorflow-integration, x-tutorflow-timestamp, x-tutorflow-signature",
        ),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("x-request-id, idempotent-replayed, retry-after"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
}
