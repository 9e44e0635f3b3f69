//! Shared by the storage test files: the stores under test, the emulator
//! switch and small fixtures.
#![allow(dead_code)] // each test file uses its own part of this module

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use chrono::{DateTime, Duration, Utc};
use tutorflow::model::{
    Mode, Role, SessionState, StudentSnapshot, Thread, ThreadStatus, TutorMessage, UnitProgress,
};
use tutorflow::store::{DynamoStore, Retention, SqliteStore, Store};

/// Where moto (or another emulator) listens, exported by scripts/test.sh.
pub const ENDPOINT_VAR: &str = "TUTORFLOW_TEST_AWS_ENDPOINT";

/// The emulator's URL. Without one the test is skipped locally with a note,
/// but in CI (CI=true) a missing emulator fails the test.
pub fn emulator(test: &str) -> Option<String> {
    match std::env::var(ENDPOINT_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!(
                "{ENDPOINT_VAR} is not set: CI must run the storage suite against the emulator (scripts/test.sh starts it)"
            )
        }
        _ => {
            eprintln!(
                "note: {test} skipped: set {ENDPOINT_VAR} (scripts/test.sh starts moto) to run it"
            );
            None
        }
    }
}

pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

pub fn retention() -> Retention {
    Retention {
        idempotency: Duration::hours(1),
        turn_logs: Duration::days(1),
    }
}

/// A store under test and whatever must live as long as it.
pub struct Backend {
    pub store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
}

pub async fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("nested/state.sqlite"), retention())
        .await
        .unwrap();
    Backend {
        store: Arc::new(store),
        _dir: Some(dir),
    }
}

/// SDK settings for the emulator: fixed region and dummy credentials.
pub async fn emulator_sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .load()
        .await
}

/// A DynamoDB store on a fresh table of the emulator (or of real AWS: see
/// README "Running the storage suite against real AWS").
pub async fn dynamo_store(endpoint: &str) -> DynamoStore {
    let client = aws_sdk_dynamodb::Client::new(&emulator_sdk_config(endpoint).await);
    let store = DynamoStore::new(client, &unique("tutorflow-test"), retention());
    store.create_table_if_missing().await.unwrap();
    store
}

pub async fn dynamo(test: &str) -> Option<Backend> {
    let endpoint = emulator(test)?;
    Some(Backend {
        store: Arc::new(dynamo_store(&endpoint).await),
        _dir: None,
    })
}

pub fn t(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
}

pub fn snapshot(student: &str, course: &str, counter: u32) -> StudentSnapshot {
    let mut s = StudentSnapshot::new(student, course, "unit-a");
    let mut progress = UnitProgress::default();
    progress.drill.attempts = counter;
    s.unit_progress = BTreeMap::from([("unit-a".to_owned(), progress)]);
    s
}

pub fn counter(s: &StudentSnapshot) -> u32 {
    s.unit_progress["unit-a"].drill.attempts
}

pub fn thread(id: &str, student: &str, updated: i64) -> Thread {
    Thread {
        thread_id: id.to_owned(),
        student_id: student.to_owned(),
        course_id: "prealgebra".into(),
        mode: Mode::Guided,
        status: ThreadStatus::Active,
        goal: Some("fractions".into()),
        unit_id: None,
        created_at: t(0),
        updated_at: t(updated),
        session: SessionState::default(),
    }
}

pub fn message(thread_id: &str, n: u32) -> TutorMessage {
    TutorMessage {
        id: format!("m{n}"),
        thread_id: thread_id.to_owned(),
        role: if n.is_multiple_of(2) {
            Role::Student
        } else {
            Role::Assistant
        },
        text: format!("message {n}"),
        latex: None,
        card: None,
        created_at: t(i64::from(n)),
    }
}

pub fn texts(messages: &[TutorMessage]) -> Vec<String> {
    messages.iter().map(|m| m.text.clone()).collect()
}

/// A small valid bundle built from the shipped workflow, prompts and
/// blueprints plus a one-unit course, so content tests do not depend on
/// the whole shipped course being complete.
pub async fn valid_bundle() -> tutorflow::content::ContentFiles {
    use tutorflow::content::{ContentSource, FsSource};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shipped = FsSource::new(root).fetch().await.unwrap();
    let unit = "workflows/courses/prealgebra/units/one-step-equations.yaml";
    let mut files: BTreeMap<String, String> = shipped
        .files
        .iter()
        .filter(|(path, _)| {
            path.starts_with("prompts/")
                || path.starts_with("workflows/blueprints/")
                || (path.starts_with("workflows/") && path.matches('/').count() == 1)
        })
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect();
    files.insert(
        "workflows/courses/storetest/course.yaml".into(),
        "id: storetest\ntitle: Storage test course\nworkflow: default\n\
         entry_unit: one-step-equations\nunits:\n  - id: one-step-equations\n    requires: []\n"
            .into(),
    );
    files.insert(
        "workflows/courses/storetest/units/one-step-equations.yaml".into(),
        shipped.files[unit].clone(),
    );
    tutorflow::content::ContentFiles::new(files)
}

/// Writes `files` under `dir` as a bundle directory.
pub fn write_bundle(dir: &std::path::Path, files: &tutorflow::content::ContentFiles) {
    for (path, text) in &files.files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }
}

/// `files` with `from` replaced by `to` in `path`.
pub fn edited(
    files: &tutorflow::content::ContentFiles,
    path: &str,
    from: &str,
    to: &str,
) -> tutorflow::content::ContentFiles {
    let mut map = files.files.clone();
    let text = map.get_mut(path).unwrap();
    assert!(text.contains(from), "{path} does not contain {from:?}");
    *text = text.replacen(from, to, 1);
    tutorflow::content::ContentFiles::new(map)
}

/// An S3 client for the emulator and a fresh bucket on it.
pub async fn s3_bucket(endpoint: &str) -> (aws_sdk_s3::Client, String) {
    let shared = emulator_sdk_config(endpoint).await;
    let config = aws_sdk_s3::config::Builder::from(&shared)
        .force_path_style(true)
        .build();
    let client = aws_sdk_s3::Client::from_conf(config);
    let bucket = unique("tutorflow-content");
    client.create_bucket().bucket(&bucket).send().await.unwrap();
    (client, bucket)
}
