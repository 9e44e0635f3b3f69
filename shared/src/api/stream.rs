//! Streamed turns: `POST /threads/{threadId}/turn` with
//! `Accept: text/event-stream` answers with Server-Sent Events — `delta`
//! events with the tutor's text as it is written, then one `final` event
//! with the stored `TurnResponse`, or `replaced` when that response is not
//! what was streamed (the reply failed validation or sanitization) so the
//! client must replace what it showed. A refusal before the first event is
//! an ordinary problem+json response; a failure after it, an `error` event
//! carrying the problem. An idempotent replay is a single `final` event.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode};
use hyper::body::{Body, Frame};
use serde_json::json;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tracing::Instrument;

use super::App;
use super::body::parse_json;
use super::dispatch::{AllRoutes, Caller, Routes};
use super::failure::Failure;
use super::incoming::{Incoming, REPLAYED_HEADER, REQUEST_ID_HEADER};
use super::problem::Problem;
use super::routes::{Function, Matched, ROUTES, Route, match_route};
use crate::service::Begun;

pub const EVENT_STREAM: &str = "text/event-stream";

/// What the handler answers: a whole response, or the head of one whose
/// body is written as the turn runs.
#[derive(Debug)]
pub enum HandlerResponse {
    Whole(Response<Bytes>),
    Streamed(Response<EventBody>),
}

/// An event stream's body: each item one or more whole events.
#[derive(Debug)]
pub struct EventBody(UnboundedReceiver<Bytes>);

impl EventBody {
    /// The next piece of the stream; `None` at its end.
    pub async fn next(&mut self) -> Option<Bytes> {
        self.0.recv().await
    }
}

impl Body for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|piece| piece.map(|b| Ok(Frame::data(b))))
    }
}

/// One event in the wire format; data with line breaks becomes several
/// `data:` lines, which the client joins back.
pub fn event(name: &str, data: &str) -> Bytes {
    let mut out = format!("event: {name}\n");
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// Whether the request is a turn that asks to be streamed.
pub fn wants_stream(incoming: &Incoming) -> bool {
    incoming.method == Method::POST
        && matches!(
            match_route(&incoming.method, incoming.uri.path()),
            Matched::Found(spec, _) if spec.route == Route::Turn
        )
        && accepts_event_stream(&incoming.headers)
}

fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            media
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case(EVENT_STREAM))
        })
}

/// What the turn task tells the response.
enum Progress {
    /// Refused before anything was streamed: the whole answer.
    Refused(Response<Bytes>),
    /// Events, the first of which starts the stream.
    Events(Bytes),
}

impl App {
    /// [`handle`](App::handle), streaming a turn that asks for it.
    pub fn handle_streaming(
        self: &Arc<Self>,
        incoming: Incoming,
        only: Option<Function>,
    ) -> impl Future<Output = HandlerResponse> + Send + '_ {
        self.handle_streaming_routes(AllRoutes { only }, incoming)
    }

    /// [`handle_routes`](App::handle_routes), streaming a turn that asks
    /// for it when `routes` serves turns.
    pub async fn handle_streaming_routes<R: Routes>(
        self: &Arc<Self>,
        routes: R,
        incoming: Incoming,
    ) -> HandlerResponse {
        let turns = ROUTES.iter().find(|spec| spec.route == Route::Turn);
        if !wants_stream(&incoming) || !turns.is_some_and(|spec| routes.serves(spec)) {
            return HandlerResponse::Whole(self.handle_routes(routes, incoming).await);
        }
        let (progress, mut heard) = mpsc::unbounded_channel();
        let app = self.clone();
        let request_id = incoming.request_id.clone();
        let span = tracing::info_span!(
            "request",
            request_id = %incoming.request_id,
            method = %incoming.method,
            path = %incoming.uri.path(),
            streamed = true,
            student_id = tracing::field::Empty,
            status = tracing::field::Empty,
        );
        tokio::spawn(
            async move {
                let path = incoming.uri.path().to_owned();
                if let Err(e) = app.streamed_turn(&incoming, &progress).await {
                    let response = app.failure(e, &path, &incoming.request_id);
                    let _ = progress.send(Progress::Refused(response));
                }
                tracing::info!("handled");
            }
            .instrument(span),
        );
        let (events, body) = mpsc::unbounded_channel();
        let first = match heard.recv().await {
            Some(Progress::Refused(mut response)) => {
                self.decorate(&mut response, &request_id);
                return HandlerResponse::Whole(response);
            }
            Some(Progress::Events(first)) => first,
            None => {
                let e = Failure::internal("the streamed turn ended without an answer");
                let mut response = self.failure(e, "/", &request_id);
                self.decorate(&mut response, &request_id);
                return HandlerResponse::Whole(response);
            }
        };
        let _ = events.send(first);
        tokio::spawn(async move {
            while let Some(progress) = heard.recv().await {
                let bytes = match progress {
                    Progress::Events(bytes) => bytes,
                    // Refusals come only before the first event.
                    Progress::Refused(_) => continue,
                };
                if events.send(bytes).is_err() {
                    break;
                }
            }
        });
        let mut response = Response::new(EventBody(body));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        // Proxies such as nginx would otherwise buffer the whole stream.
        headers.insert(
            HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        );
        super::handler::cors(headers);
        if let Ok(v) = HeaderValue::from_str(&request_id) {
            headers.insert(REQUEST_ID_HEADER, v);
        }
        HandlerResponse::Streamed(response)
    }

    /// The turn with its idempotency: an error returned is refused before
    /// anything was streamed.
    async fn streamed_turn(
        &self,
        incoming: &Incoming,
        progress: &UnboundedSender<Progress>,
    ) -> Result<(), Failure> {
        let Matched::Found(spec, params) = match_route(&incoming.method, incoming.uri.path())
        else {
            return Err(Failure::internal("a streamed turn without its route"));
        };
        let thread_id = params
            .get("threadId")
            .ok_or_else(|| Failure::internal("route without {threadId}"))?;
        let caller = self.authenticate(spec, incoming).await?;
        let Caller::Student(who) = &caller else {
            return Err(Problem::not_found("no such route for integrations").into());
        };
        tracing::Span::current().record("student_id", who.student_id.as_str());
        let idempotency = match self.begin_request(spec, &caller, incoming).await? {
            Begun::Replay(stored) if stored.status == StatusCode::OK.as_u16() => {
                tracing::Span::current().record("status", stored.status);
                let mut first = event("final", &stored.body).to_vec();
                first.splice(0..0, b": idempotent replay\n".iter().copied());
                let _ = progress.send(Progress::Events(Bytes::from(first)));
                return Ok(());
            }
            Begun::Replay(stored) => {
                let mut response = Response::new(Bytes::from(stored.body));
                *response.status_mut() =
                    StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
                if let Ok(v) = HeaderValue::from_str(&stored.content_type) {
                    response.headers_mut().insert(header::CONTENT_TYPE, v);
                }
                response.headers_mut().insert(
                    HeaderName::from_static(REPLAYED_HEADER),
                    HeaderValue::from_static("true"),
                );
                let _ = progress.send(Progress::Refused(response));
                return Ok(());
            }
            Begun::Run(idempotency) => idempotency,
        };
        let limit = self.service.config.limits.max_body_bytes;
        let request = match parse_json(&incoming.headers, &incoming.body, limit) {
            Ok(request) => request,
            Err(e) => {
                self.service.finish_idempotent(&idempotency, None).await;
                return Err(e.into());
            }
        };
        let (deltas, mut delta_read) = mpsc::unbounded_channel::<String>();
        let turn = async {
            let deltas = deltas;
            self.service
                .turn_streaming(who, thread_id, request, &idempotency, &deltas)
                .await
        };
        let relay = async {
            let mut started = false;
            while let Some(text) = delta_read.recv().await {
                started = true;
                let data = json!({ "text": text }).to_string();
                let _ = progress.send(Progress::Events(event("delta", &data)));
            }
            started
        };
        let (result, started) = tokio::join!(turn, relay);
        let replaced = result.as_ref().is_ok_and(|done| done.replaced);
        let result = result.map(|done| done.output);
        self.service
            .finish_idempotent(&idempotency, result.as_ref().ok())
            .await;
        match result {
            Ok(output) => {
                tracing::Span::current().record("status", output.status);
                let name = if replaced { "replaced" } else { "final" };
                let _ = progress.send(Progress::Events(event(name, &output.body)));
                Ok(())
            }
            Err(e) if !started => Err(e.into()),
            Err(e) => {
                let problem = self.failure(e.into(), incoming.uri.path(), &incoming.request_id);
                let body = String::from_utf8_lossy(problem.body()).into_owned();
                let _ = progress.send(Progress::Events(event("error", &body)));
                Ok(())
            }
        }
    }
}
