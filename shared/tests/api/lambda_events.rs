//! The API Gateway (HTTP API, payload v2) events in tests/events/, which
//! `cargo lambda invoke <function> --data-file tests/events/<function>/...`
//! sends, fed to the real Lambda handler: `lambda_http::request::from_str`
//! → `api::lambda::serve` on the function's own routes, as its binary
//! serves them, on an app configured the way `cargo lambda
//! watch` configures the functions (Cargo.toml `[workspace.metadata.lambda.env]`),
//! with a temporary SQLite store and this repository's content.
//!
//! The fixtures on one thread name it `FIXTURE_THREAD_ID`: sent as they
//! are, they answer 404. Played in [`SEQUENCE`], the id that
//! `turn/create-thread.json` returned replaces it, and the drill token of
//! `turn/turn-request-drill.json`'s drill card replaces `FIXTURE_DRILL_TOKEN`.

use crate::lambda_support;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue};
use lambda_http::{Body, Response};
use serde_json::Value;
use tempfile::TempDir;
use tutorflow::api::auth::Authenticator;
use tutorflow::api::lambda::serve;
use tutorflow::api::problem::PROBLEM_JSON;
use tutorflow::api::routes::{Function, Matched, ROUTES, Route, RouteSpec, match_route};
use tutorflow::api::webhook::{self, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use tutorflow::api::{
    App, DrillGradeRoutes, ExamSubmitRoutes, SummaryRoutes, SupportViewedRoutes, TranscribeRoutes,
    TurnRoutes,
};
use tutorflow::config::{Config, WebhookIntegration};

const THREAD_PLACEHOLDER: &str = "FIXTURE_THREAD_ID";
const NOTIFY_FOLDER: &str = "notify";
const DRILL_TOKEN_PLACEHOLDER: &str = "FIXTURE_DRILL_TOKEN";

/// Every fixture, in the order that makes each one meaningful, with the
/// status it answers on the local app.
const SEQUENCE: &[(&str, u16)] = &[
    ("turn/create-thread.json", 201),
    ("turn/turn.json", 200),
    ("turn/turn-request-drill.json", 200),
    ("drill-grade/drill-grade.json", 200),
    // The tutor has shown this student no exam card yet: a submission and
    // a memo view are refused (the exam flow is in shared/tests/e2e/http.rs).
    ("exam-submit/mcq-submit.json", 409),
    ("support-viewed/support-viewed.json", 409),
    ("summary/thread-summary.json", 200),
    ("summary/get-thread.json", 200),
    ("summary/list-threads.json", 200),
    ("summary/course-report.json", 200),
    ("summary/list-courses.json", 200),
    ("summary/get-course.json", 200),
    ("summary/thread-logs.json", 200),
    ("turn/put-profile.json", 200),
    ("summary/get-profile.json", 200),
    ("turn/pause-thread.json", 200),
    ("turn/resume-thread.json", 200),
    ("turn/end-thread.json", 200),
    // Signed when the fixture was written, so outside the replay window
    // (and no integration is configured locally); see
    // `the_webhook_fixture_is_accepted_when_signed_on_sending`.
    ("turn/webhook-turn.json", 401),
    // The local app has no transcription provider and no upload bucket.
    ("transcribe/transcribe-audio.json", 503),
    ("transcribe/transcribe-uploaded.json", 503),
    ("transcribe/transcribe-upload.json", 503),
];

/// The n8n integration the webhook fixture is signed for.
const WEBHOOK_INTEGRATION: &str = "n8n";
const WEBHOOK_SECRET: &str = "n8n-local-development-webhook-secret";

struct Fixture {
    /// Relative to tests/events/, e.g. `turn/turn.json`.
    name: String,
    text: String,
    event: Value,
    spec: &'static RouteSpec,
}

impl Fixture {
    fn str(&self, pointer: &str) -> &str {
        self.event
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{}: no string at {pointer}", self.name))
    }

    fn request_id(&self) -> &str {
        self.str("/requestContext/requestId")
    }

    fn bearer_token(&self) -> Option<&str> {
        self.event
            .pointer("/headers/authorization")
            .and_then(Value::as_str)
            .and_then(|v| v.strip_prefix("Bearer "))
    }

    fn authorizer_claims(&self) -> Option<&serde_json::Map<String, Value>> {
        self.event
            .pointer("/requestContext/authorizer/jwt/claims")
            .and_then(Value::as_object)
    }
}

fn events_dir() -> std::path::PathBuf {
    lambda_support::repo_root().join("tests/events")
}

/// Every `tests/events/<function>/<name>.json`, with the route it calls.
fn fixtures() -> Vec<Fixture> {
    let mut fixtures = Vec::new();
    for folder in read_dir(&events_dir()) {
        // `notify` is fed by SQS and `sweep` by a schedule, not API Gateway.
        if !folder.is_dir() || folder.ends_with(NOTIFY_FOLDER) || folder.ends_with("sweep") {
            continue;
        }
        for path in read_dir(&folder) {
            let name = path
                .strip_prefix(events_dir())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert_eq!(
                path.extension().and_then(|e| e.to_str()),
                Some("json"),
                "{name}: event fixtures are .json files"
            );
            let text = std::fs::read_to_string(&path).unwrap();
            let event: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
            let method = event["requestContext"]["http"]["method"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: no requestContext.http.method"));
            let raw_path = event["rawPath"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: no rawPath"));
            let spec = match match_route(&method.parse().unwrap(), raw_path) {
                Matched::Found(spec, _) => spec,
                other => panic!("{name}: {method} {raw_path} is no route of the app: {other:?}"),
            };
            fixtures.push(Fixture {
                name,
                text,
                event,
                spec,
            });
        }
    }
    fixtures
}

fn read_dir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    paths
}

/// An app as `cargo lambda watch` starts each function, on a fresh store.
async fn watch_app(store: &TempDir, overrides: &[(&str, &str)], webhooks: bool) -> App {
    let mut env = lambda_support::watch_env();
    env.insert(
        "TUTORFLOW_SQLITE_PATH".into(),
        store.path().join("lambda.sqlite").display().to_string(),
    );
    env.insert(
        "TUTORFLOW_CONTENT_DIR".into(),
        lambda_support::repo_root().display().to_string(),
    );
    env.insert("N8N_WEBHOOK_SECRET".into(), WEBHOOK_SECRET.into());
    for (name, value) in overrides {
        env.insert((*name).into(), (*value).into());
    }
    let env = move |name: &str| env.get(name).cloned();
    let mut config = Config::load(None, &env).unwrap();
    if webhooks {
        config.auth.webhooks.push(WebhookIntegration {
            id: WEBHOOK_INTEGRATION.into(),
            secret: "env:N8N_WEBHOOK_SECRET".into(),
            student_prefix: "n8n:".into(),
            course_id: "prealgebra".into(),
            outbound_url: None,
        });
    }
    App::from_config(config, &env).await.unwrap()
}

/// The fixture's event, after `replacements`, through the Lambda handler.
async fn invoke(app: &App, fixture: &Fixture, replacements: &[(&str, String)]) -> Response<Body> {
    let mut text = fixture.text.clone();
    for (placeholder, value) in replacements {
        text = text.replace(placeholder, value);
    }
    send(app, fixture, &text).await
}

/// `event` (the fixture's, maybe changed) through the Lambda handler.
async fn send(app: &App, fixture: &Fixture, event: &str) -> Response<Body> {
    let request = lambda_http::request::from_str(event)
        .unwrap_or_else(|e| panic!("{}: not an API Gateway v2 event: {e}", fixture.name));
    serve_as(app, fixture.spec.function, request).await
}

/// `request` through the handler `function`'s binary runs: on its own routes.
async fn serve_as(app: &App, function: Function, request: lambda_http::Request) -> Response<Body> {
    match function {
        Function::Turn => serve(app, TurnRoutes, request).await,
        Function::DrillGrade => serve(app, DrillGradeRoutes, request).await,
        Function::ExamSubmit => serve(app, ExamSubmitRoutes, request).await,
        Function::SupportViewed => serve(app, SupportViewedRoutes, request).await,
        Function::Transcribe => serve(app, TranscribeRoutes, request).await,
        Function::Summary => serve(app, SummaryRoutes, request).await,
    }
}

fn body_json(fixture: &Fixture, response: &Response<Body>) -> Value {
    let text = match response.body() {
        Body::Text(text) => text.as_str(),
        other => panic!("{}: expected a text body, got {other:?}", fixture.name),
    };
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: body is not JSON: {e}", fixture.name))
}

/// The status, and for an error a problem+json body naming the request.
fn check_response(fixture: &Fixture, response: &Response<Body>, status: u16) -> Value {
    let body = body_json(fixture, response);
    assert_eq!(
        response.status().as_u16(),
        status,
        "{}: unexpected status; body: {body}",
        fixture.name
    );
    let content_type = response.headers().get(CONTENT_TYPE).unwrap();
    if status >= 400 {
        assert_eq!(content_type, PROBLEM_JSON, "{}", fixture.name);
        assert_eq!(body["status"], status, "{}", fixture.name);
        assert_eq!(
            body["requestId"],
            fixture.request_id(),
            "{}: the problem names the API Gateway request id",
            fixture.name
        );
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()));
    } else {
        assert_eq!(content_type, "application/json", "{}", fixture.name);
    }
    body
}

#[test]
fn every_route_has_a_fixture_in_its_functions_folder() {
    let fixtures = fixtures();
    for fixture in &fixtures {
        let folder = fixture.name.split('/').next().unwrap();
        assert_eq!(
            folder,
            fixture.spec.function.name(),
            "{}: {:?} is served by `{}`; put the fixture in tests/events/{}/",
            fixture.name,
            fixture.spec,
            fixture.spec.function.name(),
            fixture.spec.function.name()
        );
        // What API Gateway sends for this route.
        let route_key = format!("{} {}", fixture.spec.method, fixture.spec.path);
        assert_eq!(fixture.str("/routeKey"), route_key, "{}", fixture.name);
        assert_eq!(
            fixture.str("/requestContext/routeKey"),
            route_key,
            "{}",
            fixture.name
        );
        assert_eq!(fixture.str("/version"), "2.0", "{}", fixture.name);
        assert_eq!(
            fixture.str("/requestContext/http/path"),
            fixture.str("/rawPath"),
            "{}",
            fixture.name
        );
    }
    let covered: HashSet<Route> = fixtures.iter().map(|f| f.spec.route).collect();
    let missing: Vec<_> = ROUTES
        .iter()
        .filter(|r| !covered.contains(&r.route))
        .collect();
    assert!(
        missing.is_empty(),
        "routes without an event in tests/events/: {missing:?}"
    );
}

#[test]
fn the_sequence_plays_every_fixture_once() {
    let on_disk: BTreeSet<String> = fixtures().into_iter().map(|f| f.name).collect();
    let played: BTreeSet<String> = SEQUENCE.iter().map(|(n, _)| (*n).to_owned()).collect();
    assert_eq!(played.len(), SEQUENCE.len(), "a fixture is played twice");
    assert_eq!(
        on_disk, played,
        "every fixture in tests/events/ needs its place and status in SEQUENCE"
    );
}

#[tokio::test]
async fn student_fixtures_carry_the_dev_token_and_its_claims() {
    let dev_token = std::fs::read_to_string(events_dir().join("dev-token.jwt")).unwrap();
    let dev_token = dev_token.trim();
    let env = lambda_support::watch_env();
    let env = |name: &str| env.get(name).cloned();
    let config = Config::load(None, env).unwrap();
    let secret = env("TUTORFLOW_DEV_JWT_SECRET").unwrap();
    // Checked like a JWT authorizer would, so `exp` must be in the future.
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.validate_aud = false;
    let token_claims = jsonwebtoken::decode::<serde_json::Map<String, Value>>(
        dev_token,
        &jsonwebtoken::DecodingKey::from_secret(secret.as_bytes()),
        &validation,
    )
    .expect("tests/events/dev-token.jwt is signed with the watch environment's HS256 secret")
    .claims;
    // API Gateway hands a JWT authorizer's claims on as strings.
    let as_authorizer_claims: serde_json::Map<String, Value> = token_claims
        .iter()
        .map(|(k, v)| {
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (k.clone(), Value::String(text))
        })
        .collect();
    let hs256 = Authenticator::from_config(&config.auth, env).unwrap();

    for fixture in fixtures() {
        if fixture.spec.route == Route::WebhookTurn {
            // Integrations sign their requests; no JWT authorizer on this route.
            assert!(fixture.bearer_token().is_none(), "{}", fixture.name);
            assert!(fixture.authorizer_claims().is_none(), "{}", fixture.name);
            continue;
        }
        assert_eq!(
            fixture.bearer_token(),
            Some(dev_token),
            "{}: send tests/events/dev-token.jwt",
            fixture.name
        );
        assert_eq!(
            fixture.authorizer_claims(),
            Some(&as_authorizer_claims),
            "{}: requestContext.authorizer.jwt.claims are the dev token's claims",
            fixture.name
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_str(fixture.str("/headers/authorization")).unwrap(),
        );
        let who = hs256.authenticate(&headers, None).await.unwrap();
        assert_eq!(who.student_id, token_claims["sub"], "{}", fixture.name);
    }
}

/// Plays [`SEQUENCE`], checking each status; the thread id and drill token
/// that later fixtures need come from earlier responses.
async fn play_sequence(app: &App) {
    let fixtures: BTreeMap<String, Fixture> = fixtures()
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    let mut replacements: Vec<(&str, String)> = Vec::new();
    for (name, status) in SEQUENCE {
        let fixture = fixtures
            .get(*name)
            .unwrap_or_else(|| panic!("{name} is in SEQUENCE but not in tests/events/"));
        let response = invoke(app, fixture, &replacements).await;
        let body = check_response(fixture, &response, *status);
        match *name {
            "turn/create-thread.json" => {
                let thread_id = body["threadId"].as_str().unwrap().to_owned();
                replacements.push((THREAD_PLACEHOLDER, thread_id));
            }
            "turn/turn-request-drill.json" => {
                let token = body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find_map(|m| m.pointer("/card/drillToken")?.as_str())
                    .unwrap_or_else(|| panic!("{name}: no drill card in {body}"))
                    .to_owned();
                replacements.push((DRILL_TOKEN_PLACEHOLDER, token));
            }
            "turn/turn.json" => {
                assert!(!body["messages"].as_array().unwrap().is_empty(), "{body}");
            }
            "summary/list-threads.json" => {
                let listed = body.to_string();
                assert!(listed.contains(&replacements[0].1), "{listed}");
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn the_sequence_runs_on_the_watch_configuration() {
    // HS256: the functions check the bearer token, as under `cargo lambda watch`.
    let store = TempDir::new().unwrap();
    play_sequence(&watch_app(&store, &[], false).await).await;
}

#[tokio::test]
async fn the_sequence_runs_behind_an_api_gateway_authorizer() {
    // apigw: the functions trust the authorizer's claims, as deployed.
    let store = TempDir::new().unwrap();
    play_sequence(&watch_app(&store, &[("TUTORFLOW_AUTH_MODE", "apigw")], false).await).await;
}

/// Each function's binary serves its own routes only: another function's
/// event is not found there (its use case is not even linked).
#[tokio::test]
async fn a_function_answers_another_functions_route_404() {
    let store = TempDir::new().unwrap();
    let app = watch_app(&store, &[], false).await;
    for fixture in fixtures() {
        for function in Function::ALL {
            if function == fixture.spec.function {
                continue;
            }
            let request = lambda_http::request::from_str(&fixture.text).unwrap();
            let response = serve_as(&app, function, request).await;
            assert_eq!(
                response.status(),
                404,
                "{} sent to {}",
                fixture.name,
                function.name()
            );
        }
    }
}

#[tokio::test]
async fn thread_fixtures_sent_as_they_are_answer_a_clear_404() {
    let store = TempDir::new().unwrap();
    let app = watch_app(&store, &[], false).await;
    let on_a_thread: Vec<_> = fixtures()
        .into_iter()
        .filter(|f| f.spec.path.contains("{threadId}"))
        .collect();
    assert!(!on_a_thread.is_empty());
    for fixture in &on_a_thread {
        let response = invoke(&app, fixture, &[]).await;
        let problem = check_response(fixture, &response, 404);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains(THREAD_PLACEHOLDER),
            "{}: {detail}",
            fixture.name
        );
    }
}

#[tokio::test]
async fn the_webhook_fixture_is_accepted_when_signed_on_sending() {
    let store = TempDir::new().unwrap();
    let app = watch_app(&store, &[], true).await;
    let fixture = fixtures()
        .into_iter()
        .find(|f| f.spec.route == Route::WebhookTurn)
        .unwrap();
    let body = fixture.str("/body").to_owned();
    let timestamp_header = format!("/headers/{TIMESTAMP_HEADER}");
    let signature_header = format!("/headers/{SIGNATURE_HEADER}");
    let signed_at: i64 = fixture.str(&timestamp_header).parse().unwrap();
    assert_eq!(
        fixture.str(&signature_header),
        webhook::sign(WEBHOOK_SECRET.as_bytes(), signed_at, body.as_bytes()),
        "the fixture carries a valid signature of its body"
    );

    // As it is: a valid signature, but from long ago.
    let problem = check_response(&fixture, &invoke(&app, &fixture, &[]).await, 401);
    assert!(
        problem["detail"].as_str().unwrap().contains("window"),
        "{problem}"
    );

    // Signed now, as n8n signs each request it sends.
    let now = chrono::Utc::now().timestamp();
    let mut event = fixture.event.clone();
    event["headers"][TIMESTAMP_HEADER] = now.to_string().into();
    event["headers"][SIGNATURE_HEADER] =
        webhook::sign(WEBHOOK_SECRET.as_bytes(), now, body.as_bytes()).into();
    let reply = check_response(
        &fixture,
        &send(&app, &fixture, &event.to_string()).await,
        200,
    );
    assert!(
        reply["output"].as_str().is_some_and(|o| !o.is_empty()),
        "{reply}"
    );
    assert!(reply["session_status"].is_object(), "{reply}");
}

/// The turn function with response streaming on: `turn/turn.json` asking
/// for `text/event-stream` answers with delta events and the final
/// response; the same request asking for JSON is answered whole.
#[tokio::test]
async fn a_turn_streams_through_the_streaming_handler() {
    use http_body_util::BodyExt;
    use tutorflow::api::lambda::serve_streaming;
    use tutorflow::llm::sse::SseParser;

    let store = TempDir::new().unwrap();
    let app = std::sync::Arc::new(watch_app(&store, &[], false).await);
    let fixtures: BTreeMap<String, Fixture> = fixtures()
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    let created = invoke(&app, &fixtures["turn/create-thread.json"], &[]).await;
    let thread = check_response(&fixtures["turn/create-thread.json"], &created, 201)["threadId"]
        .as_str()
        .unwrap()
        .to_owned();
    let turn = &fixtures["turn/turn.json"];
    let event = turn.text.replace(THREAD_PLACEHOLDER, &thread);
    let streamed = event.replace(
        "\"accept\": \"application/json\"",
        "\"accept\": \"text/event-stream\"",
    );
    assert_ne!(streamed, event, "the fixture asks for JSON");
    let request = lambda_http::request::from_str(&streamed).unwrap();
    let response = serve_streaming(&app, TurnRoutes, request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let mut parser = SseParser::default();
    let events = parser.push(&bytes);
    let names: Vec<&str> = events.iter().filter_map(|e| e.event.as_deref()).collect();
    assert!(
        names.len() > 2 && names[..names.len() - 1].iter().all(|n| *n == "delta"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"final"));
    let last: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert!(!last["messages"].as_array().unwrap().is_empty(), "{last}");

    // Without the header: one JSON body, as from the buffered handler.
    let request = lambda_http::request::from_str(&event).unwrap();
    let response = serve_streaming(&app, TurnRoutes, request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let whole: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(whole["messages"].is_array(), "{whole}");
}

/// `notify/queued-notification.json`, the SQS batch Lambda hands the
/// notify function, delivers its notification signed with the
/// integration's secret, looked up by its id (the message holds none).
#[tokio::test]
async fn the_queued_notification_fixture_is_delivered_signed() {
    use wiremock::matchers::{header, method};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let receiver = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(header("x-tutorflow-event", "problem.advanced"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&receiver)
        .await;
    let integrations = serde_json::json!([{
        "id": WEBHOOK_INTEGRATION,
        "secret": "env:N8N_WEBHOOK_SECRET",
        "student_prefix": "n8n:",
        "course_id": "prealgebra",
        "outbound_url": receiver.uri(),
    }])
    .to_string();
    let store = TempDir::new().unwrap();
    let app = std::sync::Arc::new(
        watch_app(&store, &[("TUTORFLOW_WEBHOOKS", &integrations)], false).await,
    );
    let text = std::fs::read_to_string(
        events_dir()
            .join(NOTIFY_FOLDER)
            .join("queued-notification.json"),
    )
    .unwrap();
    let event: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_str(&text).unwrap();
    let response = tutorflow::api::lambda::deliver_batch(&app, event).await;
    assert!(response.batch_item_failures.is_empty(), "{response:?}");
    let requests = receiver.received_requests().await.unwrap();
    let r = &requests[0];
    let timestamp: i64 = r.headers["x-tutorflow-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        r.headers["x-tutorflow-signature"].to_str().unwrap(),
        webhook::sign(WEBHOOK_SECRET.as_bytes(), timestamp, &r.body)
    );
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["type"], "problem.advanced");
}
