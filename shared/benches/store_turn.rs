//! The store's share of one turn on the embedded SQLite store: consistent
//! reads of thread (+20 recent messages), snapshot and idempotency key, then
//! one unit of work with the thread, two messages, the snapshot, the turn
//! log and the idempotency completion.
//!
//! Run: `cargo bench -p tutorflow --bench store_turn`

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{Duration, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use tutorflow::model::{
    Mode, Role, SessionState, StudentSnapshot, Thread, ThreadStatus, TutorMessage,
};
use tutorflow::store::{
    Begin, Committer, IdempotencyKey, Retention, SqliteStore, Store, StoredResponse, ThreadChange,
    TurnLog, UnitOfWork, WriteCondition,
};

fn message(thread_id: &str, n: u64, role: Role) -> TutorMessage {
    TutorMessage {
        id: format!("m{n}"),
        thread_id: thread_id.to_owned(),
        role,
        text: "Let's look at the equation 3x + 4 = 19 together. What would you undo first?"
            .repeat(3),
        latex: Some("3x + 4 = 19".into()),
        card: None,
        card_state: None,
        event: None,
        safety: None,
        created_at: Utc::now(),
    }
}

async fn turn(store: &dyn Store, n: u64) {
    let key = IdempotencyKey::for_student("s1", &format!("turn-{n}")).unwrap();
    let Begin::Acquired(lock) = store
        .begin_idempotency(&key, "hash", Utc::now(), Duration::seconds(30))
        .await
        .unwrap()
    else {
        panic!("fresh key")
    };
    let record = store.get_thread("t1", 20).await.unwrap().unwrap();
    let snapshot = store
        .get_snapshot("s1", "prealgebra")
        .await
        .unwrap()
        .unwrap();
    let mut thread = record.thread.clone();
    thread.updated_at = Utc::now();
    thread.session.turn_count += 1;
    let mut work = UnitOfWork::new();
    work.put_thread(record.update(
        thread,
        vec![
            message("t1", 2 * n, Role::Student),
            message("t1", 2 * n + 1, Role::Assistant),
        ],
    ))
    .put_snapshot(snapshot.value.clone(), snapshot.expected())
    .log_turn(TurnLog {
        thread_id: "t1".into(),
        turn_id: format!("turn-{n}"),
        student_id: "s1".into(),
        created_at: Utc::now(),
        committed_at: Utc::now(),
        entry: serde_json::json!({"focus": "one-step-equations", "action": "SOCRATIC"}),
    })
    .complete_idempotency(
        lock,
        StoredResponse {
            status: 200,
            content_type: "application/json".into(),
            body: "{\"turnId\":\"x\"}".repeat(40),
        },
    );
    store.commit(work).await.unwrap();
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = runtime
        .block_on(SqliteStore::open(
            &dir.path().join("bench.sqlite"),
            Retention {
                idempotency: Duration::hours(24),
                turn_logs: Duration::days(30),
            },
        ))
        .unwrap();
    let now = Utc::now();
    let mut setup = UnitOfWork::new();
    setup
        .put_thread(ThreadChange::create(
            Thread {
                thread_id: "t1".into(),
                student_id: "s1".into(),
                course_id: "prealgebra".into(),
                mode: Mode::Guided,
                status: ThreadStatus::Active,
                goal: None,
                unit_id: None,
                created_at: now,
                updated_at: now,
                title: None,
                preview: None,
                paused_at: None,
                ended_at: None,
                session: SessionState::default(),
            },
            vec![],
        ))
        .put_snapshot(
            StudentSnapshot::new("s1", "prealgebra", "whole-numbers"),
            WriteCondition::New,
        );
    runtime.block_on(store.commit(setup)).unwrap();
    let counter = AtomicU64::new(0);
    c.bench_function("sqlite turn: 3 reads + 1 commit of 6 items", |b| {
        b.iter(|| runtime.block_on(turn(&store, counter.fetch_add(1, Ordering::Relaxed))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
