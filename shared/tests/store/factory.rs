//! Building the configured store and content cache from `Config`.

use crate::store_support;

use tutorflow::config::{ContentConfig, ContentSourceKind, StoreBackend, StoreConfig};
use tutorflow::store::{self, UnitOfWork, WriteCondition};

use store_support::*;

#[tokio::test]
async fn the_default_store_is_sqlite_in_a_created_directory() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig {
        sqlite_path: dir.path().join("a/b/state.sqlite"),
        ..StoreConfig::default()
    };
    assert_eq!(config.backend, StoreBackend::Sqlite);
    let store = store::open(&config).await.unwrap();
    let mut work = UnitOfWork::new();
    work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New);
    store.commit(work).await.unwrap();
    assert!(dir.path().join("a/b/state.sqlite").is_file());
    // A second process opening the same file sees the data.
    let again = store::open(&config).await.unwrap();
    assert_eq!(
        again
            .get_snapshot("s1", "c1")
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );
}

#[tokio::test]
async fn a_sqlite_path_that_cannot_be_created_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let config = StoreConfig {
        sqlite_path: blocker.join("state.sqlite"),
        ..StoreConfig::default()
    };
    let err = store::open(&config)
        .await
        .err()
        .expect("a file where a directory must be");
    assert!(err.to_string().contains("cannot create"), "{err}");
}

#[tokio::test]
async fn dynamodb_behind_an_endpoint_creates_its_table() {
    let Some(Aws::Emulator(endpoint)) = aws("dynamodb_behind_an_endpoint_creates_its_table") else {
        return; // on real AWS the table comes from the infrastructure template
    };
    // The factory uses the default credential chain: scripts/test.sh sets
    // dummy credentials for the emulator.
    let config = StoreConfig {
        backend: StoreBackend::Dynamodb,
        table: unique("tutorflow-factory"),
        endpoint_url: Some(endpoint),
        region: Some("us-east-1".into()),
        ..StoreConfig::default()
    };
    let store = store::open(&config).await.unwrap();
    let _cleanup = Cleanup::table(
        sdk_config(&Aws::Emulator(config.endpoint_url.clone().unwrap())).await,
        &config.table,
    );
    let mut work = UnitOfWork::new();
    work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New);
    store.commit(work).await.unwrap();
    // Opening again finds the table and its data.
    let again = store::open(&config).await.unwrap();
    assert!(again.get_snapshot("s1", "c1").await.unwrap().is_some());
}

#[tokio::test]
async fn content_opens_from_the_configured_directory() {
    let dir = tempfile::tempdir().unwrap();
    let files = valid_bundle().await;
    write_bundle(dir.path(), &files);
    let config = ContentConfig {
        dir: dir.path().to_path_buf(),
        ..ContentConfig::default()
    };
    let cache = store::open_content(&config).await.unwrap();
    assert_eq!(cache.current().version, files.version);

    let s3_without_bucket = ContentConfig {
        source: ContentSourceKind::S3,
        ..ContentConfig::default()
    };
    let err = store::open_content(&s3_without_bucket).await.unwrap_err();
    assert!(err.to_string().contains("content.bucket"), "{err}");
}
