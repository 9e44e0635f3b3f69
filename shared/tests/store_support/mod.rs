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
/// Set to 1 to run the AWS tests against the real account of the default
/// credential chain (README "Running the storage suite against real AWS").
pub const REAL_AWS_VAR: &str = "TUTORFLOW_TEST_REAL_AWS";

/// Where the AWS tests run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aws {
    Emulator(String),
    Real,
}

/// The AWS target. Without one the test is skipped locally with a note,
/// but in CI (CI=true) a missing emulator fails the test.
pub fn aws(test: &str) -> Option<Aws> {
    if std::env::var(REAL_AWS_VAR).is_ok_and(|v| v == "1") {
        return Some(Aws::Real);
    }
    match std::env::var(ENDPOINT_VAR) {
        Ok(url) if !url.is_empty() => Some(Aws::Emulator(url)),
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

/// SDK settings: the emulator with a fixed region and dummy credentials,
/// or the default chain for real AWS.
pub async fn sdk_config(aws: &Aws) -> aws_config::SdkConfig {
    match aws {
        Aws::Emulator(endpoint) => {
            aws_config::defaults(BehaviorVersion::latest())
                .endpoint_url(endpoint)
                .region(Region::new("us-east-1"))
                .credentials_provider(Credentials::new("test", "test", None, None, "static"))
                .load()
                .await
        }
        Aws::Real => aws_config::load_defaults(BehaviorVersion::latest()).await,
    }
}

/// Deletes what a test created on AWS when the test ends, passed or not.
pub struct Cleanup {
    config: aws_config::SdkConfig,
    table: Option<String>,
    bucket: Option<String>,
}

impl Cleanup {
    pub fn table(config: aws_config::SdkConfig, table: &str) -> Self {
        Cleanup {
            config,
            table: Some(table.to_owned()),
            bucket: None,
        }
    }

    /// Empties and deletes `bucket`.
    pub fn bucket(config: aws_config::SdkConfig, bucket: &str) -> Self {
        Cleanup {
            config,
            table: None,
            bucket: Some(bucket.to_owned()),
        }
    }

    /// Also empties and deletes `bucket`.
    pub fn and_bucket(mut self, bucket: &str) -> Self {
        self.bucket = Some(bucket.to_owned());
        self
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let (config, table, bucket) = (self.config.clone(), self.table.take(), self.bucket.take());
        // Drop runs inside the test's runtime: clean up on a thread of its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                if let Some(table) = table {
                    let client = aws_sdk_dynamodb::Client::new(&config);
                    let _ = client.delete_table().table_name(table).send().await;
                }
                if let Some(bucket) = bucket {
                    let client = s3_client_for(&config);
                    let listed = client.list_objects_v2().bucket(&bucket).send().await;
                    for object in listed.ok().and_then(|l| l.contents).unwrap_or_default() {
                        if let Some(key) = object.key {
                            let _ = client.delete_object().bucket(&bucket).key(key).send().await;
                        }
                    }
                    let _ = client.delete_bucket().bucket(&bucket).send().await;
                }
            });
        })
        .join();
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
    _cleanup: Option<Cleanup>,
}

pub async fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("nested/state.sqlite"), retention())
        .await
        .unwrap();
    Backend {
        store: Arc::new(store),
        _dir: Some(dir),
        _cleanup: None,
    }
}

/// A DynamoDB store on a fresh table, deleted when the cleanup drops.
pub async fn dynamo_store(aws: &Aws) -> (DynamoStore, Cleanup) {
    let config = sdk_config(aws).await;
    let table = unique("tutorflow-test");
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(&config), &table, retention());
    let cleanup = Cleanup {
        config,
        table: Some(table),
        bucket: None,
    };
    store.create_table_if_missing().await.unwrap();
    (store, cleanup)
}

pub async fn dynamo(test: &str) -> Option<Backend> {
    let (store, cleanup) = dynamo_store(&aws(test)?).await;
    Some(Backend {
        store: Arc::new(store),
        _dir: None,
        _cleanup: Some(cleanup),
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
        title: None,
        preview: None,
        paused_at: None,
        ended_at: None,
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
        card_state: None,
        event: None,
        safety: None,
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

fn s3_client_for(config: &aws_config::SdkConfig) -> aws_sdk_s3::Client {
    let path_style = config.endpoint_url().is_some();
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(config)
            .force_path_style(path_style)
            .build(),
    )
}

/// An S3 client and a fresh bucket, deleted with its objects when the
/// cleanup drops.
pub async fn s3_bucket(aws: &Aws) -> (aws_sdk_s3::Client, String, Cleanup) {
    let config = sdk_config(aws).await;
    let client = s3_client_for(&config);
    let bucket = unique("tutorflow-content");
    let mut create = client.create_bucket().bucket(&bucket);
    // Outside us-east-1 AWS wants the region named.
    if let Some(region) = config.region().map(|r| r.to_string())
        && region != "us-east-1"
    {
        create = create.create_bucket_configuration(
            aws_sdk_s3::types::CreateBucketConfiguration::builder()
                .location_constraint(region.as_str().into())
                .build(),
        );
    }
    create.send().await.unwrap();
    let cleanup = Cleanup {
        config,
        table: None,
        bucket: Some(bucket.clone()),
    };
    (client, bucket, cleanup)
}
