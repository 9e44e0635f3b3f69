//! Which use case answers each route. Each deployed function serves a set
//! of routes named by a type ([`TurnRoutes`], [`SummaryRoutes`], …): its
//! binary hands that set to the bootstrap, so the handler it links calls
//! only those routes' use cases and link-time optimisation leaves every
//! other route's code out of its package. The local server serves
//! [`AllRoutes`]; under `cargo lambda watch` each function is its own
//! binary, as deployed.

use std::future::Future;

use http::Uri;
use http::header;
use serde::de::DeserializeOwned;

use super::App;
use super::body::parse_json;
use super::failure::Failure;
use super::incoming::Incoming;
use super::problem::Problem;
use super::routes::{Function, PathParams, Route, RouteSpec};
use crate::config::WebhookIntegration;
use crate::model::{Mode, Principal, ThreadStatus};
use crate::service::lifecycle::LifecycleChange;
use crate::service::{Idempotency, LogFormat, Output, ThreadFilter};
use crate::store::PageRequest;

/// Default and largest page of a listing.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 100;

/// Who a request acts for.
pub enum Caller<'a> {
    Student(Principal),
    Integration(&'a WebhookIntegration),
}

/// A set of routes and the use case behind each. A route the set does not
/// serve is answered 404 before anything else is done.
pub trait Routes: Copy + Send + Sync + 'static {
    /// The deployed function whose routes these are; `None` for routes of
    /// several functions (the local server).
    const FUNCTION: Option<Function>;

    /// Whether `spec` is one of these routes.
    fn serves(&self, spec: &RouteSpec) -> bool;

    /// A read-only route, for a student.
    fn read(
        &self,
        app: &App,
        spec: &RouteSpec,
        who: &Principal,
        params: &PathParams,
        incoming: &Incoming,
    ) -> impl Future<Output = Result<Output, Failure>> + Send;

    /// A route that changes state, under the request's idempotency records.
    fn mutate(
        &self,
        app: &App,
        spec: &RouteSpec,
        caller: &Caller<'_>,
        params: &PathParams,
        incoming: &Incoming,
        idempotency: &Idempotency,
    ) -> impl Future<Output = Result<Output, Failure>> + Send;
}

/// Every route, or one function's when `only` names it (what the local
/// server and the tests serve; a deployed function serves its own set).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllRoutes {
    pub only: Option<Function>,
}

/// `POST /threads`, turns, pause / resume / end, webhook turns and
/// `PUT /me/profile`: the `turn` function.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnRoutes;

/// `POST /threads/{threadId}/drill/grade`: the `drill-grade` function.
#[derive(Debug, Clone, Copy, Default)]
pub struct DrillGradeRoutes;

/// `POST /threads/{threadId}/exam/mcq-submit`: the `exam-submit` function.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExamSubmitRoutes;

/// `POST /threads/{threadId}/exam/support-viewed`: the `support-viewed`
/// function.
#[derive(Debug, Clone, Copy, Default)]
pub struct SupportViewedRoutes;

/// `POST /transcribe` and `POST /transcribe/uploads`: the `transcribe`
/// function.
#[derive(Debug, Clone, Copy, Default)]
pub struct TranscribeRoutes;

/// The read-only routes: the `summary` function.
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryRoutes;

impl Routes for AllRoutes {
    const FUNCTION: Option<Function> = None;

    fn serves(&self, spec: &RouteSpec) -> bool {
        self.only.is_none_or(|f| f == spec.function)
    }

    fn read(
        &self,
        app: &App,
        spec: &RouteSpec,
        who: &Principal,
        params: &PathParams,
        incoming: &Incoming,
    ) -> impl Future<Output = Result<Output, Failure>> + Send {
        read(app, spec.route, who, params, incoming)
    }

    async fn mutate(
        &self,
        app: &App,
        spec: &RouteSpec,
        caller: &Caller<'_>,
        params: &PathParams,
        incoming: &Incoming,
        idempotency: &Idempotency,
    ) -> Result<Output, Failure> {
        match spec.function {
            Function::Turn => {
                turn_routes(app, spec.route, caller, params, incoming, idempotency).await
            }
            Function::DrillGrade => {
                grade_drill(app, spec.route, caller, params, incoming, idempotency).await
            }
            Function::ExamSubmit => {
                submit_mcq(app, spec.route, caller, params, incoming, idempotency).await
            }
            Function::SupportViewed => {
                view_support(app, spec.route, caller, params, incoming, idempotency).await
            }
            Function::Transcribe => {
                transcribe(app, spec.route, caller, params, incoming, idempotency).await
            }
            Function::Summary => Err(not_mutating(spec.route)),
        }
    }
}

/// The routes of one function; `$read` and `$mutate` answer them.
macro_rules! function_routes {
    ($set:ty, $function:expr, read: $read:expr, mutate: $mutate:expr) => {
        impl Routes for $set {
            const FUNCTION: Option<Function> = Some($function);

            fn serves(&self, spec: &RouteSpec) -> bool {
                spec.function == $function
            }

            fn read(
                &self,
                app: &App,
                spec: &RouteSpec,
                who: &Principal,
                params: &PathParams,
                incoming: &Incoming,
            ) -> impl Future<Output = Result<Output, Failure>> + Send {
                $read(app, spec.route, who, params, incoming)
            }

            fn mutate(
                &self,
                app: &App,
                spec: &RouteSpec,
                caller: &Caller<'_>,
                params: &PathParams,
                incoming: &Incoming,
                idempotency: &Idempotency,
            ) -> impl Future<Output = Result<Output, Failure>> + Send {
                $mutate(app, spec.route, caller, params, incoming, idempotency)
            }
        }
    };
}

function_routes!(TurnRoutes, Function::Turn, read: no_reads, mutate: turn_routes);
function_routes!(DrillGradeRoutes, Function::DrillGrade, read: no_reads, mutate: grade_drill);
function_routes!(ExamSubmitRoutes, Function::ExamSubmit, read: no_reads, mutate: submit_mcq);
function_routes!(SupportViewedRoutes, Function::SupportViewed, read: no_reads, mutate: view_support);
function_routes!(TranscribeRoutes, Function::Transcribe, read: no_reads, mutate: transcribe);
function_routes!(SummaryRoutes, Function::Summary, read: read, mutate: no_mutations);

fn not_read(route: Route) -> Failure {
    Failure::internal(format!("{route:?} is not a read route"))
}

fn not_mutating(route: Route) -> Failure {
    Failure::internal(format!("{route:?} is not a mutating route"))
}

async fn no_reads(
    _app: &App,
    route: Route,
    _who: &Principal,
    _params: &PathParams,
    _incoming: &Incoming,
) -> Result<Output, Failure> {
    Err(not_read(route))
}

async fn no_mutations(
    _app: &App,
    route: Route,
    _caller: &Caller<'_>,
    _params: &PathParams,
    _incoming: &Incoming,
    _idempotency: &Idempotency,
) -> Result<Output, Failure> {
    Err(not_mutating(route))
}

/// The student a route other than the webhook acts for.
fn student<'c>(caller: &'c Caller<'_>) -> Result<&'c Principal, Failure> {
    match caller {
        Caller::Student(who) => Ok(who),
        Caller::Integration(_) => Err(Problem::not_found("no such route for integrations").into()),
    }
}

/// The read-only routes.
async fn read(
    app: &App,
    route: Route,
    who: &Principal,
    params: &PathParams,
    incoming: &Incoming,
) -> Result<Output, Failure> {
    let service = &app.service;
    Ok(match route {
        Route::Summary => {
            service
                .thread_summary(who, param(params, "threadId")?)
                .await?
        }
        Route::GetThread => {
            service
                .get_thread(who, param(params, "threadId")?, page(&incoming.uri)?)
                .await?
        }
        Route::ListThreads => {
            service
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
            service
                .thread_logs(
                    who,
                    param(params, "threadId")?,
                    page(&incoming.uri)?,
                    format,
                )
                .await?
        }
        Route::CourseReport => {
            service
                .course_report(who, param(params, "courseId")?)
                .await?
        }
        Route::GetProfile => service.get_profile(who).await?,
        Route::ListCourses => service.list_courses().await?,
        Route::GetCourse => service.get_course(who, param(params, "courseId")?).await?,
        _ => return Err(not_read(route)),
    })
}

/// The turn function's routes: threads, turns, webhook turns, the profile.
async fn turn_routes(
    app: &App,
    route: Route,
    caller: &Caller<'_>,
    params: &PathParams,
    incoming: &Incoming,
    idempotency: &Idempotency,
) -> Result<Output, Failure> {
    let service = &app.service;
    let limit = service.config.limits.max_body_bytes;
    if let (Route::WebhookTurn, Caller::Integration(integration)) = (route, caller) {
        let request = parse_json(&incoming.headers, &incoming.body, limit)?;
        return Ok(service
            .webhook_turn(integration, request, idempotency)
            .await?);
    }
    let who = student(caller)?;
    Ok(match route {
        Route::CreateThread => {
            service
                .create_thread(who, body(incoming, limit)?, idempotency)
                .await?
        }
        Route::PutProfile => {
            service
                .put_profile(who, body(incoming, limit)?, idempotency)
                .await?
        }
        Route::Turn => {
            service
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
            service
                .change_lifecycle(who, param(params, "threadId")?, change, idempotency)
                .await?
        }
        _ => return Err(not_mutating(route)),
    })
}

async fn grade_drill(
    app: &App,
    route: Route,
    caller: &Caller<'_>,
    params: &PathParams,
    incoming: &Incoming,
    idempotency: &Idempotency,
) -> Result<Output, Failure> {
    let (who, thread_id, request) =
        card_request(app, route, Route::DrillGrade, caller, params, incoming)?;
    Ok(app
        .service
        .grade_drill(who, thread_id, request, idempotency)
        .await?)
}

async fn submit_mcq(
    app: &App,
    route: Route,
    caller: &Caller<'_>,
    params: &PathParams,
    incoming: &Incoming,
    idempotency: &Idempotency,
) -> Result<Output, Failure> {
    let (who, thread_id, request) =
        card_request(app, route, Route::McqSubmit, caller, params, incoming)?;
    Ok(app
        .service
        .mcq_submit(who, thread_id, request, idempotency)
        .await?)
}

async fn view_support(
    app: &App,
    route: Route,
    caller: &Caller<'_>,
    params: &PathParams,
    incoming: &Incoming,
    idempotency: &Idempotency,
) -> Result<Output, Failure> {
    let (who, thread_id, request) =
        card_request(app, route, Route::SupportViewed, caller, params, incoming)?;
    Ok(app
        .service
        .support_viewed(who, thread_id, request, idempotency)
        .await?)
}

/// The student, thread and JSON body of a request to `served`, the one
/// route of a card's function (drill grade, MCQ submit, support viewed).
fn card_request<'a, T: DeserializeOwned>(
    app: &App,
    route: Route,
    served: Route,
    caller: &'a Caller<'_>,
    params: &'a PathParams,
    incoming: &Incoming,
) -> Result<(&'a Principal, &'a str, T), Failure> {
    let who = student(caller)?;
    if route != served {
        return Err(not_mutating(route));
    }
    let limit = app.service.config.limits.max_body_bytes;
    Ok((who, param(params, "threadId")?, body(incoming, limit)?))
}

async fn transcribe(
    app: &App,
    route: Route,
    caller: &Caller<'_>,
    _params: &PathParams,
    incoming: &Incoming,
    _idempotency: &Idempotency,
) -> Result<Output, Failure> {
    let who = student(caller)?;
    let service = &app.service;
    let limit = service.config.limits.max_body_bytes;
    Ok(match route {
        Route::TranscribeUpload => {
            service
                .transcription_upload(who, body(incoming, limit)?)
                .await?
        }
        Route::Transcribe => {
            let content_type = incoming
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok());
            if content_type.is_some_and(|t| t.starts_with("application/json")) {
                service
                    .transcribe_uploaded(who, body(incoming, limit)?)
                    .await?
            } else {
                let language = query(&incoming.uri, "language");
                service
                    .transcribe_inline(content_type, incoming.body.clone(), language.as_deref())
                    .await?
            }
        }
        _ => return Err(not_mutating(route)),
    })
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
