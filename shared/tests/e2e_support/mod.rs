//! The end-to-end harness: the local server on a real port over a real
//! store, and a client with helpers for the API's flows.
#![allow(dead_code)] // each test file uses its own part of this module

#[path = "../store_support/mod.rs"]
mod store_support;

use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as ChronoDuration;
use serde_json::{Value, json};
use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::server;
use tutorflow::config::{Config, ContentSourceKind, StoreBackend, WebhookIntegration};
use tutorflow::content::{ContentSource, FsSource};
use tutorflow::engine::practice::{drill, drill_token};

pub use store_support::{Aws, Cleanup, aws, sdk_config};

pub const JWT_SECRET: &str = "e2e-jwt-secret-0123456789abcdef";
pub const DRILL_SECRET: &str = "e2e-drill-secret-0123456789abcdef";
pub const HOOK_SECRET: &str = "e2e-webhook-secret";

pub fn repo_root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn env(key: &str) -> Option<String> {
    match key {
        "TUTORFLOW_DEV_JWT_SECRET" => Some(JWT_SECRET.into()),
        "TUTORFLOW_DEV_DRILL_SECRET" => Some(DRILL_SECRET.into()),
        "E2E_HOOK_SECRET" => Some(HOOK_SECRET.into()),
        _ => None,
    }
}

/// A running server and a client for it.
pub struct Harness {
    pub base: String,
    pub http: reqwest::Client,
    /// The server's state store, opened a second time, to look behind the API.
    pub store: Arc<dyn tutorflow::store::Store>,
    /// The server's configuration, for a second process over the same store.
    pub config: Config,
    _dir: tempfile::TempDir,
    _cleanup: Option<Cleanup>,
}

pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub replayed: bool,
}

/// The server's clock, moved by the test.
pub struct HandedClock(pub std::sync::Mutex<chrono::DateTime<chrono::Utc>>);

impl tutorflow::service::Clock for HandedClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        *self.0.lock().unwrap()
    }
}

impl HandedClock {
    pub fn starting_now() -> Arc<HandedClock> {
        Arc::new(HandedClock(std::sync::Mutex::new(chrono::Utc::now())))
    }

    pub fn advance(&self, minutes: i64) {
        *self.0.lock().unwrap() += ChronoDuration::minutes(minutes);
    }
}

pub fn base_config(dir: &std::path::Path) -> Config {
    let mut config = Config::default();
    config.store.sqlite_path = dir.join("tutorflow.sqlite");
    config.content.dir = repo_root();
    config.auth.webhooks = vec![WebhookIntegration {
        id: "n8n".into(),
        secret: "env:E2E_HOOK_SECRET".into(),
        student_prefix: "n8n:".into(),
        course_id: "prealgebra".into(),
        outbound_url: None,
    }];
    config
}

/// An app on `store` with the repository's content and `clock`: the
/// server of [`Harness::with_clock`], or a second process beside it.
pub async fn app_with_clock(
    config: &Config,
    store: Arc<dyn tutorflow::store::Store>,
    clock: Arc<HandedClock>,
) -> App {
    let content = tutorflow::store::ContentCache::load(
        Arc::new(FsSource::new(&config.content.dir)),
        Duration::from_secs(3600),
    )
    .await
    .expect("content loads");
    App::assemble(
        tutorflow::service::AppParts {
            config: config.clone(),
            store,
            content: Arc::new(content),
            clock,
            ids: Arc::new(tutorflow::service::RandomIds),
        },
        &env,
    )
    .expect("app assembles")
}

impl Harness {
    pub async fn start(
        config: Config,
        dir: tempfile::TempDir,
        cleanup: Option<Cleanup>,
    ) -> Harness {
        Harness::start_with_env(config, dir, cleanup, env).await
    }

    /// Like [`Harness::start`], reading secrets through `secrets`.
    pub async fn start_with_env(
        config: Config,
        dir: tempfile::TempDir,
        cleanup: Option<Cleanup>,
        secrets: fn(&str) -> Option<String>,
    ) -> Harness {
        let store = tutorflow::store::open(&config.store)
            .await
            .expect("store opens");
        let kept = config.clone();
        let app = Arc::new(
            App::from_config(config, &secrets)
                .await
                .expect("app starts"),
        );
        Harness::serve(app, kept, store, dir, cleanup).await
    }

    /// Like [`Harness::start`] on a SQLite store, with the server's clock
    /// the test's.
    pub async fn with_clock(
        config: Config,
        dir: tempfile::TempDir,
        clock: Arc<HandedClock>,
    ) -> Harness {
        let store = tutorflow::store::open(&config.store)
            .await
            .expect("store opens");
        let app = app_with_clock(&config, store.clone(), clock).await;
        Harness::serve(Arc::new(app), config, store, dir, None).await
    }

    /// Serves an app assembled by the test from `config`; `store` is its
    /// state store, for looking behind the API.
    pub async fn serve(
        app: Arc<App>,
        config: Config,
        store: Arc<dyn tutorflow::store::Store>,
        dir: tempfile::TempDir,
        cleanup: Option<Cleanup>,
    ) -> Harness {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server::serve(app, listener, std::future::pending()));
        Harness {
            base,
            http: reqwest::Client::new(),
            store,
            config,
            _dir: dir,
            _cleanup: cleanup,
        }
    }

    pub async fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let config = base_config(dir.path());
        Harness::start(config, dir, None).await
    }

    /// DynamoDB and S3 on the emulator; `None` when it is not running (and not CI).
    pub async fn aws(test: &str) -> Option<Harness> {
        Harness::aws_with(test, |_| {}).await
    }

    /// [`Harness::aws`] with the configuration changed by `configure`.
    pub async fn aws_with(test: &str, configure: impl FnOnce(&mut Config)) -> Option<Harness> {
        let Aws::Emulator(endpoint) = aws(test)? else {
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        let table = format!("e2e-{}", &suffix[..12]);
        let bucket = format!("e2e-content-{}", &suffix[..12]);
        let sdk = sdk_config(&Aws::Emulator(endpoint.clone())).await;
        let s3 = tutorflow::store::s3_client(Some(&endpoint), Some("us-east-1")).await;
        s3.create_bucket()
            .bucket(&bucket)
            .send()
            .await
            .expect("bucket");
        let files = FsSource::new(repo_root()).fetch().await.unwrap();
        tutorflow::store::publish(&s3, &bucket, "live", &files, chrono::Utc::now())
            .await
            .expect("publish");
        let mut config = base_config(dir.path());
        config.store.backend = StoreBackend::Dynamodb;
        config.store.table = table.clone();
        config.store.endpoint_url = Some(endpoint.clone());
        config.store.region = Some("us-east-1".into());
        config.content.source = ContentSourceKind::S3;
        config.content.bucket = Some(bucket.clone());
        config.content.prefix = "live".into();
        config.content.endpoint_url = Some(endpoint);
        configure(&mut config);
        let cleanup = Cleanup::table(sdk, &table).and_bucket(&bucket);
        Some(Harness::start(config, dir, Some(cleanup)).await)
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn token(&self, student: &str) -> String {
        dev_token(JWT_SECRET, student, Duration::from_secs(3600))
    }

    pub async fn send(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let replayed = response.headers().contains_key("idempotent-replayed");
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Reply {
            status,
            body,
            replayed,
        }
    }

    pub async fn post(&self, student: &str, path: &str, body: Value) -> Reply {
        let request = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.token(student))
            .json(&body);
        self.send(request).await
    }

    pub async fn get(&self, student: &str, path: &str) -> Reply {
        self.send(
            self.http
                .get(format!("{}{path}", self.base))
                .bearer_auth(self.token(student)),
        )
        .await
    }

    /// A GET answered in another format than JSON: status, content type, body.
    pub async fn get_text(&self, student: &str, path: &str) -> (u16, String, String) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(self.token(student))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let content_type = r
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (status, content_type, r.text().await.unwrap())
    }

    pub async fn new_thread(&self, student: &str) -> String {
        let r = self
            .post(student, "/threads", json!({"courseId": "prealgebra"}))
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["threadId"].as_str().unwrap().to_owned()
    }

    /// Stores a copy of thread `from` (state and messages) under the id
    /// `to`, as the store would hold a thread whose id was drawn in
    /// another form (before thread ids carried their course, say).
    pub async fn copy_thread(&self, from: &str, to: &str) {
        let record = self
            .store
            .get_thread(from, tutorflow::store::MAX_PAGE_SIZE)
            .await
            .unwrap()
            .expect("the thread to copy");
        let mut thread = record.thread;
        thread.thread_id = to.to_owned();
        let messages = record
            .recent_messages
            .into_iter()
            .map(|mut m| {
                m.thread_id = to.to_owned();
                m
            })
            .collect();
        let mut work = tutorflow::store::UnitOfWork::new();
        work.put_thread(tutorflow::store::ThreadChange::create(thread, messages));
        self.store.commit(work).await.unwrap();
    }

    pub async fn turn(&self, student: &str, thread: &str, body: Value) -> Value {
        let r = self
            .post(student, &format!("/threads/{thread}/turn"), body)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// The drill card of the turn's tutor message.
    pub fn card<'a>(turn: &'a Value, kind: &str) -> Option<&'a Value> {
        turn["messages"]
            .as_array()?
            .iter()
            .filter_map(|m| m.get("card"))
            .find(|c| c["type"] == kind)
    }

    pub async fn grade(&self, student: &str, thread: &str, token: &str, answer: &str) -> Value {
        let r = self
            .post(
                student,
                &format!("/threads/{thread}/drill/grade"),
                json!({"drillToken": token, "studentAnswer": answer}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    pub async fn message_count(&self, student: &str, thread: &str) -> usize {
        let r = self
            .get(student, &format!("/threads/{thread}?limit=100"))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body["messages"].as_array().unwrap().len()
    }

    /// Drills a fresh thread's student to exam-ready on whole numbers and
    /// returns the exam card the tutor then shows.
    pub async fn exam_card(&self, student: &str, thread: &str) -> Value {
        self.turn(
            student,
            thread,
            json!({"messageText": "I want to practise adding whole numbers"}),
        )
        .await;
        let unit = json!({"type": "REQUEST_DRILL", "unitId": "whole-numbers"});
        for _ in 0..2 {
            let turn = self
                .turn(student, thread, json!({"clientEvent": unit}))
                .await;
            let card =
                Harness::card(&turn, "DRILL").unwrap_or_else(|| panic!("a drill card: {turn}"));
            let token = card["drillToken"].as_str().unwrap();
            let graded = self
                .grade(student, thread, token, &drill_answer(thread, token))
                .await;
            assert_eq!(graded["isCorrect"], true, "{graded}");
        }
        let ready = self
            .turn(student, thread, json!({"clientEvent": {"type": "DRILL_CONTINUE", "unitId": "whole-numbers", "lastResult": "correct"}}))
            .await;
        Harness::card(&ready, "EXAM")
            .unwrap_or_else(|| panic!("exam-ready → exam block: {ready}"))
            .clone()
    }

    /// Records exam cards as shown on `thread`, as the tutor does when it
    /// shows them: for tests about questions the policy would take many
    /// turns to reach.
    pub async fn show_exam_cards(&self, thread: &str, question_ids: &[&str]) {
        let record = self
            .store
            .get_thread(thread, 0)
            .await
            .unwrap()
            .expect("the thread exists");
        let mut updated = record.thread.clone();
        for id in question_ids {
            tutorflow::engine::exam::cards::record_shown(
                &mut updated.session,
                id,
                chrono::Utc::now(),
            );
        }
        let mut work = tutorflow::store::UnitOfWork::new();
        work.put_thread(record.update(updated, Vec::new()));
        self.store.commit(work).await.unwrap();
    }

    pub async fn report(&self, student: &str) -> Value {
        let r = self.get(student, "/me/courses/prealgebra/report").await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }
}

/// The right answer to a drill card, read back the way drill-grade does.
/// Everything the tutor said in a response, its messages joined.
pub fn tutor_text(reply: &Value) -> String {
    reply["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn drill_answer(thread: &str, token: &str) -> String {
    let verified = drill_token::verify(
        token,
        &drill_token::TokenKeys::single(DRILL_SECRET.as_bytes()).unwrap(),
        thread,
        chrono::Utc::now(),
        ChronoDuration::hours(24),
    )
    .unwrap();
    match drill::expected(&verified, &bundle().blueprints).unwrap() {
        drill::Expected::Generated(item) => item.answer.text.clone(),
        drill::Expected::Authored {
            expected_answer, ..
        } => expected_answer,
    }
}

/// The shipped bundle, loaded once for the tests' own look-ups.
pub fn bundle() -> &'static tutorflow::content::Bundle {
    static BUNDLE: std::sync::OnceLock<tutorflow::content::Bundle> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| tutorflow::content::Bundle::load(&bundle_files()).unwrap())
}

/// A wrong answer to a drill card: another option, or for a typed drill
/// a number far from the right one.
pub fn wrong_answer(card: &Value, right: &str) -> String {
    match card["options"].as_array() {
        Some(options) => options
            .iter()
            .filter_map(Value::as_str)
            .find(|o| *o != right)
            .unwrap()
            .to_owned(),
        None => format!("{}", right.parse::<f64>().map_or(1000.0, |v| v + 1000.0)),
    }
}

/// The correct option id of a bank question.
pub fn correct_option(question_id: &str) -> String {
    let (_, item) = bundle()
        .course("prealgebra")
        .unwrap()
        .exam_item(question_id)
        .unwrap();
    item.answer.clone()
}

pub fn wrong_option(question_id: &str) -> String {
    let right = correct_option(question_id);
    if right == "A" { "B".into() } else { "A".into() }
}

/// The shipped bundle, copied, with `(file, from, to)` replacements.
pub fn bundle_patched(dir: &std::path::Path, edits: &[(&str, &str, &str)]) -> std::path::PathBuf {
    let root = dir.join("bundle");
    for (path, text) in &bundle_files().files {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let mut text = text.clone();
        for (file, from, to) in edits {
            if path == file {
                assert!(text.contains(from), "{file} has no {from:?}");
                text = text.replace(from, to);
            }
        }
        std::fs::write(target, text).unwrap();
    }
    root
}

/// The shipped bundle, copied, with a one-second tutor timeout so a
/// timing-out model fails fast.
pub fn bundle_with_short_tutor_timeout(dir: &std::path::Path) -> std::path::PathBuf {
    bundle_patched(
        dir,
        &[(
            "workflows/default.yaml",
            "max_tokens: 900, timeout_ms: 20000",
            "max_tokens: 900, timeout_ms: 1000",
        )],
    )
}

pub fn bundle_files() -> tutorflow::content::ContentFiles {
    std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(FsSource::new(repo_root()).fetch())
            .unwrap()
    })
    .join()
    .unwrap()
}

/// Runs every request at once and waits for them all.
pub async fn join_all<F: std::future::Future<Output = Reply>>(futures: Vec<F>) -> Vec<Reply> {
    let mut pending: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<Reply>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (i, f) in pending.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(r) => results[i] = Some(r),
                    std::task::Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results.into_iter().map(Option::unwrap).collect()
}
