//! The one request handler behind every Lambda function and the local
//! server: CORS, routing, authentication, body parsing, idempotency, the
//! use case, and problem+json for anything that goes wrong.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode, Uri};
use serde::de::DeserializeOwned;
use tracing::Instrument;

use super::App;
use super::body::parse_json;
use super::failure::Failure;
use super::problem::Problem;
use super::routes::{Function, Matched, PathParams, Route, RouteSpec, match_route};
use crate::config::WebhookIntegration;
use crate::model::{Mode, Principal, ThreadStatus};
use crate::service::lifecycle::LifecycleChange;
use crate::service::{Begun, Idempotency, Output};
use crate::service::{LogFormat, ThreadFilter};
use crate::store::PageRequest;

pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// Set on a response replayed from an earlier request with the same key.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// Default and largest page of a listing.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 100;

/// Who a request acts for.
pub(super) enum Caller<'a> {
    Student(Principal),
    Integration(&'a WebhookIntegration),
}

/// One HTTP request as every entry point hands it over.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub request_id: String,
    /// Claims an API Gateway JWT authorizer verified, when there is one.
    pub authorizer_claims: Option<BTreeMap<String, String>>,
}

impl App {
    /// Handles one request. `only` restricts the routes to one function's
    /// (a Lambda function serves its own routes; the local server all).
    pub async fn handle(&self, incoming: Incoming, only: Option<Function>) -> Response<Bytes> {
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
                match self.route(&incoming, only).await {
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

    async fn route(
        &self,
        incoming: &Incoming,
        only: Option<Function>,
    ) -> Result<Response<Bytes>, Failure> {
        let (spec, params) = match match_route(&incoming.method, incoming.uri.path()) {
            Matched::Found(spec, params) if only.is_none_or(|f| f == spec.function) => {
                (spec, params)
            }
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
            return self
                .read(spec.route, who, &params, incoming)
                .await
                .map(ok_response);
        }
        // Mutating: an Idempotency-Key (or client turn id) makes a retry safe.
        let idempotency = match self.begin_request(spec, &caller, incoming).await? {
            Begun::Replay(stored) => return Ok(replayed(stored)),
            Begun::Run(idempotency) => idempotency,
        };
        let result = self
            .mutate(spec.route, &caller, &params, incoming, &idempotency)
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

    async fn read(
        &self,
        route: Route,
        who: &Principal,
        params: &PathParams,
        incoming: &Incoming,
    ) -> Result<Output, Failure> {
        Ok(match route {
            Route::Summary => {
                self.service
                    .thread_summary(who, param(params, "threadId")?)
                    .await?
            }
            Route::GetThread => {
                self.service
                    .get_thread(who, param(params, "threadId")?, page(&incoming.uri)?)
                    .await?
            }
            Route::ListThreads => {
                self.service
                    .list_threads(who, page(&incoming.uri)?, thread_filter(&incoming.uri)?)
                    .await?
            }
            Route::ThreadLogs => {
                let format = match query(&incoming.uri, "format").as_deref() {
                    None | Some("json") => LogFormat::Json,
                    Some("text") => LogFormat::Text,
                    Some(other) => {
                        return Err(Problem::invalid_body(format!(
                            "unknown format `{other}`; use json or text"
                        ))
                        .with_field("format")
                        .into());
                    }
                };
                self.service
                    .thread_logs(
                        who,
                        param(params, "threadId")?,
                        page(&incoming.uri)?,
                        format,
                    )
                    .await?
            }
            Route::CourseReport => {
                self.service
                    .course_report(who, param(params, "courseId")?)
                    .await?
            }
            Route::GetProfile => self.service.get_profile(who).await?,
            Route::ListCourses => self.service.list_courses().await?,
            Route::GetCourse => {
                self.service
                    .get_course(who, param(params, "courseId")?)
                    .await?
            }
            _ => {
                return Err(Failure::internal(format!("{route:?} is not a read route")));
            }
        })
    }

    async fn mutate(
        &self,
        route: Route,
        caller: &Caller<'_>,
        params: &PathParams,
        incoming: &Incoming,
        idempotency: &Idempotency,
    ) -> Result<Output, Failure> {
        let limit = self.service.config.limits.max_body_bytes;
        Ok(match (route, caller) {
            (Route::WebhookTurn, Caller::Integration(integration)) => {
                let request = parse_json(&incoming.headers, &incoming.body, limit)?;
                self.service
                    .webhook_turn(integration, request, idempotency)
                    .await?
            }
            (_, Caller::Integration(_)) => {
                return Err(Problem::not_found("no such route for integrations").into());
            }
            (route, Caller::Student(who)) => match route {
                Route::CreateThread => {
                    self.service
                        .create_thread(who, body(incoming, limit)?, idempotency)
                        .await?
                }
                Route::PutProfile => {
                    self.service
                        .put_profile(who, body(incoming, limit)?, idempotency)
                        .await?
                }
                Route::Turn => {
                    self.service
                        .turn(
                            who,
                            param(params, "threadId")?,
                            body(incoming, limit)?,
                            idempotency,
                        )
                        .await?
                }
                Route::PauseThread | Route::ResumeThread | Route::EndThread => {
                    let change = match route {
                        Route::PauseThread => LifecycleChange::Pause,
                        Route::ResumeThread => LifecycleChange::Resume,
                        _ => LifecycleChange::End,
                    };
                    self.service
                        .change_lifecycle(who, param(params, "threadId")?, change, idempotency)
                        .await?
                }
                Route::DrillGrade => {
                    self.service
                        .grade_drill(
                            who,
                            param(params, "threadId")?,
                            body(incoming, limit)?,
                            idempotency,
                        )
                        .await?
                }
                Route::McqSubmit => {
                    self.service
                        .mcq_submit(
                            who,
                            param(params, "threadId")?,
                            body(incoming, limit)?,
                            idempotency,
                        )
                        .await?
                }
                Route::SupportViewed => {
                    self.service
                        .support_viewed(
                            who,
                            param(params, "threadId")?,
                            body(incoming, limit)?,
                            idempotency,
                        )
                        .await?
                }
                Route::TranscribeUpload => {
                    self.service
                        .transcription_upload(who, body(incoming, limit)?)
                        .await?
                }
                Route::Transcribe => {
                    let content_type = incoming
                        .headers
                        .get(header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok());
                    if content_type.is_some_and(|t| t.starts_with("application/json")) {
                        self.service
                            .transcribe_uploaded(who, body(incoming, limit)?)
                            .await?
                    } else {
                        let language = query(&incoming.uri, "language");
                        self.service
                            .transcribe_inline(
                                content_type,
                                incoming.body.clone(),
                                language.as_deref(),
                            )
                            .await?
                    }
                }
                _ => {
                    return Err(Failure::internal(format!(
                        "{route:?} is not a mutating route"
                    )));
                }
            },
        })
    }

    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        self.service.clock.now()
    }
}

fn body<T: DeserializeOwned>(incoming: &Incoming, limit: usize) -> Result<T, Failure> {
    Ok(parse_json(&incoming.headers, &incoming.body, limit)?)
}

fn param<'p>(params: &'p PathParams, name: &str) -> Result<&'p str, Failure> {
    params
        .get(name)
        .ok_or_else(|| Failure::internal(format!("route without {{{name}}}")))
}

/// `?status=` and `?mode=` of `GET /me/threads`.
fn thread_filter(uri: &Uri) -> Result<ThreadFilter, Problem> {
    let status = match query(uri, "status").as_deref() {
        None => None,
        Some("active") => Some(ThreadStatus::Active),
        Some("paused") => Some(ThreadStatus::Paused),
        Some("completed") => Some(ThreadStatus::Completed),
        Some(other) => {
            return Err(Problem::invalid_body(format!(
                "unknown status `{other}`; use active, paused or completed"
            ))
            .with_field("status"));
        }
    };
    let mode = match query(uri, "mode") {
        None => None,
        Some(name) => Some(
            Mode::ALL
                .into_iter()
                .find(|m| m.as_str() == name)
                .ok_or_else(|| {
                    Problem::invalid_body(format!(
                        "unknown mode `{name}`; use one of {}",
                        Mode::ALL.map(Mode::as_str).join(", ")
                    ))
                    .with_field("mode")
                })?,
        ),
    };
    Ok(ThreadFilter { status, mode })
}

fn query(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.replace('+', " "))
        .map(|v| percent_decode(&v))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `?limit=&cursor=` of a listing.
fn page(uri: &Uri) -> Result<PageRequest, Problem> {
    let limit = match query(uri, "limit") {
        None => DEFAULT_PAGE,
        Some(raw) => raw
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| {
                Problem::bad_request(format!("limit must be a whole number from 1 to {MAX_PAGE}"))
                    .with_field("limit")
            })?,
    };
    Ok(match query(uri, "cursor") {
        Some(cursor) if !cursor.is_empty() => PageRequest::after(cursor, limit),
        _ => PageRequest::first(limit),
    })
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
