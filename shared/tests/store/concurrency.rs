//! Concurrent writers: each increments one snapshot counter with
//! read–modify–CAS–retry. With correct conditional writes no increment is
//! lost and none is applied twice, so the final value is exactly the number
//! of increments.

use crate::store_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::sync::Barrier;
use tutorflow::store::{SqliteStore, Store, StoreError, UnitOfWork, WriteCondition};

use store_support::*;

const WRITERS: u32 = 50;
/// Set in child processes: the database file they write to.
const CHILD_DB_VAR: &str = "TUTORFLOW_TEST_CHILD_DB";
const CHILD_INCREMENTS: u32 = 40;

/// One increment; returns how many conflicts it took.
async fn increment(store: &dyn Store) -> u32 {
    let mut conflicts = 0;
    loop {
        let read = store.get_snapshot("s1", "c1").await.unwrap();
        let next = read.as_ref().map_or(1, |r| counter(&r.value) + 1);
        let mut work = UnitOfWork::new();
        work.put_snapshot(
            snapshot("s1", "c1", next),
            WriteCondition::of(read.as_ref()),
        );
        match store.commit(work).await {
            Ok(()) => return conflicts,
            Err(StoreError::Conflict(_)) => conflicts += 1,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
}

async fn final_count(store: &dyn Store) -> (u32, u64) {
    let read = store.get_snapshot("s1", "c1").await.unwrap().unwrap();
    (counter(&read.value), read.version)
}

/// Runs `WRITERS` tasks at once, spread over `stores`.
async fn race(stores: Vec<Arc<dyn Store>>) -> u32 {
    let start = Arc::new(Barrier::new(WRITERS as usize));
    let conflicts = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..WRITERS as usize)
        .map(|i| {
            let store = stores[i % stores.len()].clone();
            let (start, conflicts) = (start.clone(), conflicts.clone());
            tokio::spawn(async move {
                start.wait().await;
                conflicts.fetch_add(increment(store.as_ref()).await, Ordering::Relaxed);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    conflicts.load(Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_writers_on_sqlite_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    // Five stores with their own connection pools, like five processes.
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..5 {
        stores.push(Arc::new(
            SqliteStore::open(&path, retention()).await.unwrap(),
        ));
    }
    let started = std::time::Instant::now();
    let conflicts = race(stores.clone()).await;
    eprintln!(
        "sqlite: {WRITERS} increments, {conflicts} conflicts retried, {:?}",
        started.elapsed()
    );
    assert_eq!(
        final_count(stores[0].as_ref()).await,
        (WRITERS, u64::from(WRITERS))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_writers_on_dynamodb_lose_nothing() {
    let Some(aws) = aws("fifty_writers_on_dynamodb_lose_nothing") else {
        return;
    };
    let (store, _cleanup) = dynamo_store(&aws).await;
    let store: Arc<dyn Store> = Arc::new(store);
    let started = std::time::Instant::now();
    let conflicts = race(vec![store.clone()]).await;
    eprintln!(
        "dynamodb: {WRITERS} increments, {conflicts} conflicts retried, {:?}",
        started.elapsed()
    );
    assert_eq!(
        final_count(store.as_ref()).await,
        (WRITERS, u64::from(WRITERS))
    );
}

async fn increments(path: &Path, n: u32) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(path, retention()).await.unwrap());
    for _ in 0..n {
        increment(store.as_ref()).await;
    }
    store
}

/// A writer process. Run alone it checks its own increments; the test below
/// starts several of it on one shared file.
#[tokio::test]
async fn sqlite_writer_process() {
    match std::env::var(CHILD_DB_VAR) {
        Ok(path) => {
            increments(Path::new(&path), CHILD_INCREMENTS).await;
        }
        Err(_) => {
            let dir = tempfile::tempdir().unwrap();
            let store = increments(&dir.path().join("own.sqlite"), CHILD_INCREMENTS).await;
            assert_eq!(final_count(store.as_ref()).await.0, CHILD_INCREMENTS);
        }
    }
}

/// The writer's name as the test harness knows it: its path below the
/// crate root, which is this test binary.
fn writer_test() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_, below)| below);
    format!("{module}::sqlite_writer_process")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_sharing_one_sqlite_file_lose_nothing() {
    if std::env::var(CHILD_DB_VAR).is_ok() {
        return; // a child runs only its writer
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", &writer_test(), "--test-threads=1"])
                .env(CHILD_DB_VAR, &path)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // This process writes too, while the children do.
    let here = increments(&path, CHILD_INCREMENTS).await;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer process failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(final_count(here.as_ref()).await.0, 5 * CHILD_INCREMENTS);
}
