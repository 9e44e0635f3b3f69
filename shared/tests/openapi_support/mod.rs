//! Reading the OpenAPI documents, validating JSON against their schemas,
//! and a real App to send requests to.

pub mod schemas;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};
use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::incoming::Incoming;
use tutorflow::api::routes::{Matched, match_route};
use tutorflow::config::{Config, TranscriptionProvider, WebhookIntegration};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixture(name: &str) -> Value {
    let path = repo_root().join("tests/fixtures/contracts").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The methods an OpenAPI path item may hold operations for.
pub const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// An OpenAPI document and the validators compiled from it.
pub struct Spec {
    pub doc: Value,
    validators: Mutex<HashMap<String, std::sync::Arc<jsonschema::Validator>>>,
}

impl Spec {
    pub fn load(relative: &str) -> Spec {
        let path = repo_root().join(relative);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Spec::parse(&text)
    }

    pub fn parse(text: &str) -> Spec {
        let doc: Value = serde_yaml::from_str(text).expect("the document is valid YAML");
        Spec {
            doc,
            validators: Mutex::new(HashMap::new()),
        }
    }

    /// Every (method, path) with an operation.
    pub fn operations(&self) -> Vec<(String, String, &Value)> {
        let mut found = Vec::new();
        for (path, item) in self.doc["paths"].as_object().expect("paths") {
            for method in HTTP_METHODS {
                if let Some(operation) = item.get(method) {
                    found.push((method.to_owned(), path.clone(), operation));
                }
            }
        }
        found
    }

    pub fn operation(&self, method: &str, path: &str) -> Option<&Value> {
        self.doc["paths"]
            .get(path)?
            .get(method.to_ascii_lowercase())
    }

    /// `value`, or what its `$ref` (a local JSON pointer) points to, with
    /// the JSON pointer of where it was found.
    pub fn resolve<'a>(&'a self, value: &'a Value, at: String) -> (&'a Value, String) {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.strip_prefix('#').unwrap_or_else(|| {
                    panic!("{at}: only local references are used, not {reference}")
                });
                let target = self
                    .doc
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("{at}: {reference} does not exist"));
                self.resolve(target, pointer.to_owned())
            }
            None => (value, at),
        }
    }

    /// An operation's response for `status`, resolved; `None` when the
    /// status is not listed.
    pub fn response(&self, method: &str, path: &str, status: u16) -> Option<(&Value, String)> {
        let operation = self.operation(method, path)?;
        let response = operation["responses"].get(status.to_string())?;
        let at = format!(
            "/paths/{}/{}/responses/{status}",
            escape(path),
            method.to_ascii_lowercase()
        );
        Some(self.resolve(response, at))
    }

    /// Validates `instance` against the schema at JSON pointer `pointer`
    /// (references inside it resolve against the whole document).
    pub fn validate_at(&self, pointer: &str, instance: &Value) -> Result<(), String> {
        let validator = self.validator(pointer);
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at `{}`: {e}", e.schema_path(), e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "does not match {pointer}:\n  {}\ninstance: {instance}",
                errors.join("\n  ")
            ))
        }
    }

    pub fn validate_schema(&self, name: &str, instance: &Value) -> Result<(), String> {
        self.validate_at(&format!("/components/schemas/{name}"), instance)
    }

    fn validator(&self, pointer: &str) -> std::sync::Arc<jsonschema::Validator> {
        let mut cache = self.validators.lock().unwrap();
        cache
            .entry(pointer.to_owned())
            .or_insert_with(|| {
                assert!(
                    self.doc.pointer(pointer).is_some(),
                    "{pointer} does not exist"
                );
                // The document itself is the schema resource, so `#/components/…`
                // references resolve; its own keywords (`openapi`, `paths`, …) are
                // not JSON Schema keywords and are ignored.
                let mut root = self.doc.clone();
                root["$ref"] = json!(format!("#{}", fragment(pointer)));
                let validator = jsonschema::draft202012::options()
                    .should_validate_formats(true)
                    .build(&root)
                    .unwrap_or_else(|e| panic!("{pointer} does not compile: {e}"));
                std::sync::Arc::new(validator)
            })
            .clone()
    }

    /// Every example in the document (of a media type or a parameter),
    /// with the JSON pointer of the schema it illustrates.
    pub fn examples(&self) -> Vec<(String, Value)> {
        fn walk(value: &Value, at: &str, found: &mut Vec<(String, Value)>) {
            match value {
                Value::Object(map) => {
                    if map.contains_key("schema") {
                        let schema = format!("{at}/schema");
                        if let Some(example) = map.get("example") {
                            found.push((schema.clone(), example.clone()));
                        }
                        for named in map.get("examples").and_then(Value::as_object).into_iter() {
                            for example in named.values() {
                                found.push((schema.clone(), example["value"].clone()));
                            }
                        }
                    }
                    for (key, child) in map {
                        walk(child, &format!("{at}/{}", escape(key)), found);
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        walk(child, &format!("{at}/{i}"), found);
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        walk(&self.doc, "", &mut found);
        found
    }

    /// The problem's kind is one the `Problem` schema's table lists.
    pub fn check_problem_kind(&self, problem: &Value) -> Result<(), String> {
        let kind = problem["type"]
            .as_str()
            .and_then(|t| t.strip_prefix("urn:tutorflow:problem:"))
            .ok_or_else(|| format!("not a tutorflow problem type: {problem}"))?;
        let table =
            self.doc["components"]["schemas"]["Problem"]["properties"]["type"]["description"]
                .as_str()
                .unwrap_or_default();
        if table.contains(&format!("| `{kind}` |")) {
            Ok(())
        } else {
            Err(format!(
                "problem kind `{kind}` is not in the Problem schema's table"
            ))
        }
    }

    /// Checks a real response against what the operation documents: the
    /// status is listed, the body matches the media type's schema, and the
    /// documented headers it carries are documented for it.
    pub fn check(&self, method: &Method, path: &str, reply: &Reply) -> Result<(), String> {
        let template = template_of(method, path);
        let method = method.as_str().to_ascii_lowercase();
        let context = format!("{} {template} -> {}", method.to_uppercase(), reply.status);
        let (response, at) = self
            .response(&method, &template, reply.status)
            .ok_or_else(|| format!("{context}: status not documented\nbody: {}", reply.text()))?;
        let media = reply
            .content_type()
            .ok_or_else(|| format!("{context}: no content type"))?;
        let schema_at = format!("{at}/content/{}/schema", escape(&media));
        if response["content"].get(&media).is_none() {
            return Err(format!(
                "{context}: `{media}` is not documented (documented: {:?})",
                response["content"]
                    .as_object()
                    .map(|c| c.keys().collect::<Vec<_>>())
            ));
        }
        let body: Value = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("{context}: the body is not JSON: {e}"))?;
        self.validate_at(&schema_at, &body)
            .map_err(|e| format!("{context}: {e}"))?;
        if media == "application/problem+json" {
            self.check_problem_kind(&body)
                .map_err(|e| format!("{context}: {e}"))?;
        }
        let documented: BTreeSet<String> = response["headers"]
            .as_object()
            .map(|h| h.keys().map(|k| k.to_ascii_lowercase()).collect())
            .unwrap_or_default();
        for name in ["x-request-id", "idempotent-replayed", "retry-after"] {
            if reply.headers.contains_key(name) && !documented.contains(name) {
                return Err(format!(
                    "{context}: header {name} is sent but not documented"
                ));
            }
        }
        Ok(())
    }
}

/// A JSON pointer as a URI fragment: characters a fragment may not hold
/// (the braces of path templates) percent-encoded.
fn fragment(pointer: &str) -> String {
    pointer
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A JSON pointer token: `~` and `/` escaped.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The route template (`/threads/{threadId}/turn`) a concrete path matches.
pub fn template_of(method: &Method, path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    match match_route(method, path) {
        Matched::Found(spec, _) => spec.path.to_owned(),
        other => panic!("{method} {path} is not a route: {other:?}"),
    }
}

/// One response as the handler returned it.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{} is not JSON ({e}): {}", self.status, self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn content_type(&self) -> Option<String> {
        self.headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A request to send through `App::handle`.
pub struct Call {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Call {
    pub fn new(method: Method, path: &str) -> Call {
        Call {
            method,
            path: path.to_owned(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    pub fn get(path: &str) -> Call {
        Call::new(Method::GET, path)
    }

    pub fn put(path: &str, body: &Value) -> Call {
        Call::new(Method::PUT, path).body("application/json", body.to_string())
    }

    pub fn post(path: &str, body: &Value) -> Call {
        Call::new(Method::POST, path).body("application/json", body.to_string())
    }

    pub fn body(mut self, content_type: &str, body: impl Into<Bytes>) -> Call {
        self.body = body.into();
        self.header(CONTENT_TYPE.as_str(), content_type)
    }

    pub fn header(mut self, name: &str, value: &str) -> Call {
        self.headers.insert(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
        self
    }

    pub fn bearer(self, token: &str) -> Call {
        self.header(AUTHORIZATION.as_str(), &format!("Bearer {token}"))
    }
}

const JWT_SECRET: &str = "openapi-test-jwt-secret";
pub const WEBHOOK_SECRET: &str = "openapi-test-webhook-secret";
pub const WEBHOOK_INTEGRATION: &str = "n8n";
pub const WEBHOOK_STUDENT_PREFIX: &str = "n8n:";
pub const EXAM_API_KEY: &str = "openapi-test-exam-key";
pub const COURSE: &str = "prealgebra";

/// The real application on a temporary SQLite store and the repository's
/// content, with the offline tutor; `configure` adds external services.
pub struct Api {
    app: App,
    _dir: tempfile::TempDir,
}

impl Api {
    pub async fn start(configure: impl FnOnce(&mut Config)) -> Api {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.store.sqlite_path = dir.path().join("tutorflow.sqlite");
        config.content.dir = repo_root();
        config.auth.hs256_secret = Some("env:JWT".into());
        config.drills.token_secret = Some("env:DRILL".into());
        config.auth.webhooks = vec![WebhookIntegration {
            id: WEBHOOK_INTEGRATION.into(),
            secret: "env:WEBHOOK".into(),
            student_prefix: WEBHOOK_STUDENT_PREFIX.into(),
            course_id: COURSE.into(),
            outbound_url: None,
        }];
        configure(&mut config);
        let env = |name: &str| {
            match name {
                "JWT" => Some(JWT_SECRET),
                "DRILL" => Some("openapi-test-drill-secret"),
                "WEBHOOK" => Some(WEBHOOK_SECRET),
                "TRANSCRIPTION_KEY" => Some("sk-transcription"),
                "EXAM_API_KEY" => Some(EXAM_API_KEY),
                _ => None,
            }
            .map(str::to_owned)
        };
        let app = App::from_config(config, &env)
            .await
            .expect("the app starts");
        Api { app, _dir: dir }
    }

    pub fn token(student_id: &str) -> String {
        dev_token(JWT_SECRET, student_id, Duration::from_secs(600))
    }

    /// Records exam cards as shown on `thread`, as the tutor does when it
    /// shows them, so their questions can be submitted.
    pub async fn show_exam_cards(&self, thread: &str, question_ids: &[&str]) {
        use tutorflow::store::{Committer, Retention, SqliteStore, ThreadStore, UnitOfWork};
        let config = Config::default();
        let store = SqliteStore::open(
            &self._dir.path().join("tutorflow.sqlite"),
            Retention::from_config(&config.store),
        )
        .await
        .unwrap();
        let record = store.get_thread(thread, 0).await.unwrap().unwrap();
        let mut updated = record.thread.clone();
        for id in question_ids {
            tutorflow::engine::exam::cards::record_shown(
                &mut updated.session,
                id,
                chrono::Utc::now(),
            );
        }
        let mut work = UnitOfWork::new();
        work.put_thread(record.update(updated, Vec::new()));
        store.commit(work).await.unwrap();
    }

    pub async fn send(&self, call: Call) -> Reply {
        let response = self
            .app
            .handle(
                Incoming {
                    method: call.method,
                    uri: call.path.parse::<Uri>().unwrap(),
                    headers: call.headers,
                    body: call.body,
                    request_id: uuid::Uuid::new_v4().to_string(),
                    authorizer_claims: None,
                },
                None,
            )
            .await;
        let (parts, body) = response.into_parts();
        Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        }
    }
}

/// Sends calls and checks every response against the spec, remembering
/// which (method, route, status) were seen.
pub struct Checked<'a> {
    pub api: &'a Api,
    pub spec: &'a Spec,
    pub seen: Mutex<BTreeMap<(String, String), BTreeSet<u16>>>,
}

impl<'a> Checked<'a> {
    pub fn new(api: &'a Api, spec: &'a Spec) -> Self {
        Checked {
            api,
            spec,
            seen: Mutex::new(BTreeMap::new()),
        }
    }

    /// Sends `call`, checks the response against the spec, and insists on
    /// the `expected` status.
    pub async fn send(&self, call: Call, expected: u16) -> Reply {
        let (method, path) = (call.method.clone(), call.path.clone());
        let reply = self.api.send(call).await;
        assert_eq!(
            reply.status,
            expected,
            "{method} {path}: expected {expected}, got {}: {}",
            reply.status,
            reply.text()
        );
        if let Err(e) = self.spec.check(&method, &path, &reply) {
            panic!("{e}");
        }
        self.seen
            .lock()
            .unwrap()
            .entry((method.to_string(), template_of(&method, &path)))
            .or_default()
            .insert(reply.status);
        reply
    }
}

/// Configures transcription against a fake OpenAI-style server.
pub fn with_transcription(config: &mut Config, base_url: &str) {
    config.transcription.provider = TranscriptionProvider::Openai;
    config.transcription.base_url = base_url.to_owned();
    config.transcription.api_key = Some("env:TRANSCRIPTION_KEY".into());
}

/// Configures the external exam API.
pub fn with_exam_api(config: &mut Config, base_url: &str) {
    config.exam_api.base_url = Some(base_url.to_owned());
    config.exam_api.api_key = Some("env:EXAM_API_KEY".into());
}
