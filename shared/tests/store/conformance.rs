//! One conformance suite, run against every store: the embedded SQLite
//! store and DynamoDB (moto server in scripts/test.sh; real AWS per README).
//! Each test gets a fresh database or table.

use crate::store_support;

use std::sync::Arc;

use chrono::Duration;
use tutorflow::model::{Mode, RevisitReason, Thread, ThreadStatus};
use tutorflow::store::{
    Begin, ExamLockout, IdempotencyKey, IdleThread, ItemRef, LeaseTake, MAX_TRANSACTION_ITEMS,
    Order, PageRequest, Store, StoreError, StoredResponse, ThreadChange, ThreadLease, ThreadLeases,
    TurnLog, UnitOfWork, WriteCondition,
};

use store_support::*;

type Dyn = Arc<dyn Store>;

fn snapshot_ref(student: &str, course: &str) -> ItemRef {
    ItemRef::Snapshot {
        student_id: student.into(),
        course_id: course.into(),
    }
}

fn assert_invalid<T: std::fmt::Debug>(result: Result<T, StoreError>, words: &str) {
    match result {
        Err(StoreError::InvalidInput(message)) => {
            assert!(
                message.contains(words),
                "`{message}` should mention `{words}`"
            )
        }
        other => panic!("expected InvalidInput mentioning `{words}`, got {other:?}"),
    }
}

fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, item: &ItemRef) {
    match result {
        Err(StoreError::Conflict(found)) => assert_eq!(&found, item),
        other => panic!("expected a conflict on {item}, got {other:?}"),
    }
}

async fn put_snapshot(
    store: &Dyn,
    counter: u32,
    expected: WriteCondition,
) -> Result<(), StoreError> {
    let mut work = UnitOfWork::new();
    work.put_snapshot(snapshot("s1", "c1", counter), expected);
    store.commit(work).await
}

fn response(body: &str) -> StoredResponse {
    StoredResponse {
        status: 200,
        content_type: "application/json".into(),
        body: body.into(),
    }
}

fn turn_log(thread: &str, turn: &str, created: i64) -> TurnLog {
    TurnLog {
        thread_id: thread.into(),
        turn_id: turn.into(),
        student_id: "s1".into(),
        created_at: t(created),
        // Committed after the model call, a few seconds on.
        committed_at: t(created + 3),
        entry: serde_json::json!({"chosenAction": "SOCRATIC", "turn": turn}),
    }
}

fn lease(token: &str, until: i64) -> ThreadLease {
    ThreadLease {
        token: token.to_owned(),
        until: t(until),
    }
}

async fn take(
    leases: &dyn ThreadLeases,
    thread_id: &str,
    student_id: &str,
    lease: ThreadLease,
    now: chrono::DateTime<chrono::Utc>,
) -> LeaseTake {
    leases
        .take_thread_lease(thread_id, student_id, &lease, now)
        .await
        .unwrap()
}

fn thread_ref(thread_id: &str) -> ItemRef {
    ItemRef::Thread {
        thread_id: thread_id.to_owned(),
    }
}

fn lockout(question: &str, until: i64) -> ExamLockout {
    ExamLockout {
        student_id: "s1".into(),
        course_id: "c1".into(),
        question_id: question.into(),
        locked_until: t(until),
        reason: RevisitReason::Failed,
    }
}

mod suite {
    use super::*;

    pub async fn snapshots_are_created_read_and_updated(store: Dyn) {
        assert!(store.get_snapshot("s1", "c1").await.unwrap().is_none());
        put_snapshot(&store, 1, WriteCondition::New).await.unwrap();
        let read = store.get_snapshot("s1", "c1").await.unwrap().unwrap();
        assert_eq!(read.version, 1);
        assert_eq!(read.value, snapshot("s1", "c1", 1));
        put_snapshot(&store, 2, read.expected()).await.unwrap();
        let read = store.get_snapshot("s1", "c1").await.unwrap().unwrap();
        assert_eq!((read.version, counter(&read.value)), (2, 2));
        // Other students and courses are separate items.
        assert!(store.get_snapshot("s1", "c2").await.unwrap().is_none());
        assert!(store.get_snapshot("s2", "c1").await.unwrap().is_none());
    }

    pub async fn a_stale_version_is_a_conflict_and_writes_nothing(store: Dyn) {
        put_snapshot(&store, 1, WriteCondition::New).await.unwrap();
        put_snapshot(&store, 2, WriteCondition::Version(1))
            .await
            .unwrap();
        let item = snapshot_ref("s1", "c1");
        assert_conflict(
            put_snapshot(&store, 9, WriteCondition::Version(1)).await,
            &item,
        );
        assert_conflict(put_snapshot(&store, 9, WriteCondition::New).await, &item);
        assert_conflict(
            put_snapshot(&store, 9, WriteCondition::Version(3)).await,
            &item,
        );
        let read = store.get_snapshot("s1", "c1").await.unwrap().unwrap();
        assert_eq!((read.version, counter(&read.value)), (2, 2));
        // Updating something that does not exist is a conflict too.
        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s9", "c1", 1), WriteCondition::Version(1));
        assert_conflict(store.commit(work).await, &snapshot_ref("s9", "c1"));
        let err = put_snapshot(&store, 9, WriteCondition::New)
            .await
            .unwrap_err();
        assert!(err.is_retryable());
        assert!(
            err.to_string().contains("snapshot of student `s1`"),
            "{err}"
        );
    }

    pub async fn one_failing_condition_leaves_every_item_unchanged(store: Dyn) {
        put_snapshot(&store, 1, WriteCondition::New).await.unwrap();
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(
            thread("t1", "s1", 10),
            vec![message("t1", 0)],
        ));
        store.commit(work).await.unwrap();
        let before = store.get_thread("t1", 10).await.unwrap().unwrap();

        // Every kind of change, the stale snapshot last.
        let mut work = UnitOfWork::new();
        work.put_thread(before.update(thread("t1", "s1", 20), vec![message("t1", 1)]))
            .put_snapshot(snapshot("s2", "c1", 1), WriteCondition::New)
            .log_turn(turn_log("t1", "turn-1", 20))
            .put_lockout(lockout("q1", 100), WriteCondition::New)
            .put_snapshot(snapshot("s1", "c1", 5), WriteCondition::Version(7));
        assert_conflict(store.commit(work).await, &snapshot_ref("s1", "c1"));

        let after = store.get_thread("t1", 10).await.unwrap().unwrap();
        assert_eq!(after, before);
        assert!(store.get_snapshot("s2", "c1").await.unwrap().is_none());
        let logs = store
            .list_turn_logs("t1", Order::OldestFirst, &PageRequest::first(10), t(0))
            .await
            .unwrap();
        assert!(logs.items.is_empty());
        let locks = store.list_lockouts("s1", "c1").await.unwrap();
        assert!(locks.is_empty());
        assert_eq!(
            counter(&store.get_snapshot("s1", "c1").await.unwrap().unwrap().value),
            1
        );
    }

    pub async fn a_unit_of_work_commits_everything_together(store: Dyn) {
        let key = IdempotencyKey::for_student("s1", "req-1").unwrap();
        let Begin::Acquired(lock) = store
            .begin_idempotency(&key, "hash", t(0), Duration::seconds(30))
            .await
            .unwrap()
        else {
            panic!("first use of a key must acquire it")
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(
            thread("t1", "s1", 5),
            vec![message("t1", 0), message("t1", 1)],
        ))
        .put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New)
        .log_turn(turn_log("t1", "turn-1", 5))
        .put_lockout(lockout("q1", 100), WriteCondition::New)
        .complete_idempotency(lock, response("{\"ok\":true}"));
        assert_eq!(work.item_count(), 7);
        store.commit(work).await.unwrap();

        let record = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!((record.version, record.message_count), (1, 2));
        assert_eq!(texts(&record.recent_messages), ["message 0", "message 1"]);
        // Saved as written, with the title and preview line a listing shows.
        let mut saved = thread("t1", "s1", 5);
        saved.title = Some("fractions".into());
        saved.preview = Some("message 1".into());
        assert_eq!(record.thread, saved);
        assert!(store.get_snapshot("s1", "c1").await.unwrap().is_some());
        let replay = store
            .begin_idempotency(&key, "hash", t(1), Duration::seconds(30))
            .await
            .unwrap();
        assert_eq!(replay, Begin::Replay(response("{\"ok\":true}")));
        // An empty unit of work is a no-op.
        store.commit(UnitOfWork::new()).await.unwrap();
    }

    pub async fn messages_keep_their_order_and_page(store: Dyn) {
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(
            thread("t1", "s1", 1),
            vec![message("t1", 0), message("t1", 1)],
        ));
        store.commit(work).await.unwrap();
        for turn in 0..2u32 {
            let record = store.get_thread("t1", 2).await.unwrap().unwrap();
            let n = 2 + turn * 2;
            let mut work = UnitOfWork::new();
            work.put_thread(record.update(
                thread("t1", "s1", 10 + i64::from(turn)),
                vec![message("t1", n), message("t1", n + 1)],
            ));
            store.commit(work).await.unwrap();
        }
        let record = store.get_thread("t1", 3).await.unwrap().unwrap();
        assert_eq!((record.version, record.message_count), (3, 6));
        assert_eq!(
            texts(&record.recent_messages),
            ["message 3", "message 4", "message 5"]
        );
        let none = store.get_thread("t1", 0).await.unwrap().unwrap();
        assert!(none.recent_messages.is_empty());
        assert_eq!(none.message_count, 6);

        let mut seen = Vec::new();
        let mut page = PageRequest::first(4);
        loop {
            let got = store
                .list_messages("t1", Order::OldestFirst, &page)
                .await
                .unwrap();
            assert!(got.items.len() <= 4);
            seen.extend(texts(&got.items));
            match got.next_cursor {
                Some(c) => page = PageRequest::after(c, 4),
                None => break,
            }
        }
        let all: Vec<String> = (0..6).map(|n| format!("message {n}")).collect();
        assert_eq!(seen, all);

        let newest = store
            .list_messages("t1", Order::NewestFirst, &PageRequest::first(3))
            .await
            .unwrap();
        assert_eq!(
            texts(&newest.items),
            ["message 5", "message 4", "message 3"]
        );
        let older = store
            .list_messages(
                "t1",
                Order::NewestFirst,
                &PageRequest::after(newest.next_cursor.unwrap(), 3),
            )
            .await
            .unwrap();
        assert_eq!(texts(&older.items), ["message 2", "message 1", "message 0"]);
        assert_eq!(older.next_cursor, None, "no cursor when nothing follows");
    }

    pub async fn a_stale_thread_update_appends_nothing(store: Dyn) {
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread("t1", "s1", 1), vec![]));
        store.commit(work).await.unwrap();
        let read = store.get_thread("t1", 5).await.unwrap().unwrap();
        let mut first = UnitOfWork::new();
        first.put_thread(read.update(thread("t1", "s1", 2), vec![message("t1", 0)]));
        let mut second = UnitOfWork::new();
        second.put_thread(read.update(thread("t1", "s1", 3), vec![message("t1", 9)]));
        store.commit(first).await.unwrap();
        assert_conflict(
            store.commit(second).await,
            &ItemRef::Thread {
                thread_id: "t1".into(),
            },
        );
        let after = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(texts(&after.recent_messages), ["message 0"]);
        assert_eq!(after.thread.updated_at, t(2));
        // Creating a thread that exists is a conflict too.
        let mut again = UnitOfWork::new();
        again.put_thread(ThreadChange::create(thread("t1", "s1", 9), vec![]));
        assert_conflict(
            store.commit(again).await,
            &ItemRef::Thread {
                thread_id: "t1".into(),
            },
        );
    }

    pub async fn a_thread_lease_is_taken_held_and_taken_over_once_lapsed(store: Dyn) {
        // A store one process uses holds no leases: its turns queue in memory.
        let Some(leases) = store.thread_leases() else {
            return;
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread("t1", "s1", 1), vec![]));
        store.commit(work).await.unwrap();

        assert_eq!(
            take(leases, "t1", "s1", lease("a", 100), t(10)).await,
            LeaseTake::Taken
        );
        let read = store.get_thread("t1", 0).await.unwrap().unwrap();
        assert_eq!(read.lease, Some(lease("a", 100)));
        assert_eq!(
            read.version, 1,
            "taking the lease is no change of the thread"
        );

        assert_eq!(
            take(leases, "t1", "s1", lease("b", 200), t(20)).await,
            LeaseTake::Held { until: t(100) }
        );
        // Its holder gone, the lease lapses and the next turn takes it over.
        assert_eq!(
            take(leases, "t1", "s1", lease("b", 200), t(100)).await,
            LeaseTake::Taken
        );

        // No thread, or someone else's: nothing is taken or written.
        assert_eq!(
            take(leases, "t9", "s1", lease("c", 300), t(30)).await,
            LeaseTake::NoThread
        );
        assert_eq!(store.get_thread("t9", 0).await.unwrap(), None);
        for now in [30, 500] {
            assert_eq!(
                take(leases, "t1", "s2", lease("c", 900), t(now)).await,
                LeaseTake::NoThread,
                "at {now}"
            );
        }
        let read = store.get_thread("t1", 0).await.unwrap().unwrap();
        assert_eq!(read.lease, Some(lease("b", 200)));
        assert_eq!(read.version, 1);
    }

    pub async fn thread_writes_keep_the_lease_and_its_holders_commit_releases_it(store: Dyn) {
        let Some(leases) = store.thread_leases() else {
            return;
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread("t1", "s1", 1), vec![]));
        store.commit(work).await.unwrap();
        // A drill grade reads, then a turn takes the lease.
        let before = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(
            take(leases, "t1", "s1", lease("a", 100), t(10)).await,
            LeaseTake::Taken
        );
        // Its write would drop the lease: it conflicts instead, and reads again.
        let mut stale = UnitOfWork::new();
        stale.put_thread(before.update(thread("t1", "s1", 2), vec![message("t1", 0)]));
        assert_conflict(store.commit(stale).await, &thread_ref("t1"));
        let fresh = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(fresh.version, 1);
        assert!(fresh.recent_messages.is_empty());
        let mut grade = UnitOfWork::new();
        grade.put_thread(fresh.update(thread("t1", "s1", 2), vec![message("t1", 0)]));
        store.commit(grade).await.unwrap();
        let graded = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(graded.version, 2);
        assert_eq!(graded.lease, Some(lease("a", 100)), "carried over");

        // Another turn's token releases nothing.
        let mut other = UnitOfWork::new();
        other.put_thread(graded.update(thread("t1", "s1", 3), vec![]).releasing("b"));
        store.commit(other).await.unwrap();
        let read = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(read.lease, Some(lease("a", 100)));

        // The holder's commit releases it, in the same transaction.
        let mut commit = UnitOfWork::new();
        commit.put_thread(
            read.update(thread("t1", "s1", 4), vec![message("t1", 1)])
                .releasing("a"),
        );
        store.commit(commit).await.unwrap();
        let committed = store.get_thread("t1", 5).await.unwrap().unwrap();
        assert_eq!(committed.version, 4);
        assert_eq!(committed.lease, None);
        assert_eq!(
            texts(&committed.recent_messages),
            ["message 0", "message 1"]
        );
        assert_eq!(
            take(leases, "t1", "s1", lease("b", 200), t(20)).await,
            LeaseTake::Taken
        );
    }

    pub async fn a_thread_lease_is_released_by_its_token(store: Dyn) {
        let Some(leases) = store.thread_leases() else {
            return;
        };
        let mut work = UnitOfWork::new();
        work.put_thread(ThreadChange::create(thread("t1", "s1", 1), vec![]));
        store.commit(work).await.unwrap();
        assert_eq!(
            take(leases, "t1", "s1", lease("a", 100), t(10)).await,
            LeaseTake::Taken
        );
        leases.release_thread_lease("t1", "b").await.unwrap();
        let held = store.get_thread("t1", 0).await.unwrap().unwrap();
        assert_eq!(held.lease, Some(lease("a", 100)), "not b's to release");
        leases.release_thread_lease("t1", "a").await.unwrap();
        let read = store.get_thread("t1", 0).await.unwrap().unwrap();
        assert_eq!(read.lease, None);
        assert_eq!(read.version, 1);
        // A write that read the lease conflicts once it is released.
        let mut late = UnitOfWork::new();
        late.put_thread(held.update(thread("t1", "s1", 2), vec![]));
        assert_conflict(store.commit(late).await, &thread_ref("t1"));
        // Released twice, or on no thread: nothing happens.
        leases.release_thread_lease("t1", "a").await.unwrap();
        leases.release_thread_lease("t9", "a").await.unwrap();
        assert_eq!(store.get_thread("t9", 0).await.unwrap(), None);
        assert_eq!(
            take(leases, "t1", "s1", lease("b", 200), t(20)).await,
            LeaseTake::Taken
        );
    }

    pub async fn threads_are_listed_per_student_newest_first(store: Dyn) {
        for (id, student, updated) in [
            ("t1", "s1", 10),
            ("t2", "s1", 30),
            ("t3", "s1", 20),
            ("t4", "s2", 40),
            ("t5", "s1", 5),
        ] {
            let mut work = UnitOfWork::new();
            work.put_thread(ThreadChange::create(thread(id, student, updated), vec![]));
            store.commit(work).await.unwrap();
        }
        // Touching t1 moves it to the top.
        let t1 = store.get_thread("t1", 0).await.unwrap().unwrap();
        let mut work = UnitOfWork::new();
        work.put_thread(t1.update(thread("t1", "s1", 50), vec![]));
        store.commit(work).await.unwrap();

        let first = store
            .list_threads("s1", &PageRequest::first(2))
            .await
            .unwrap();
        let ids: Vec<_> = first.items.iter().map(|s| s.thread_id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2"]);
        assert_eq!(first.items[0].updated_at, t(50));
        assert_eq!(first.items[0].goal.as_deref(), Some("fractions"));
        let cursor = first.next_cursor.unwrap();
        let second = store
            .list_threads("s1", &PageRequest::after(cursor.clone(), 2))
            .await
            .unwrap();
        let ids: Vec<_> = second.items.iter().map(|s| s.thread_id.as_str()).collect();
        assert_eq!(ids, ["t3", "t5"]);
        assert_eq!(second.next_cursor, None);

        let other = store
            .list_threads("s2", &PageRequest::first(10))
            .await
            .unwrap();
        assert_eq!(other.items.len(), 1);
        assert_eq!(other.items[0].thread_id, "t4");
        // A cursor from s1's listing cannot be used to read s2's.
        assert_invalid(
            store
                .list_threads("s2", &PageRequest::after(cursor, 2))
                .await,
            "another listing",
        );
        let nobody = store
            .list_threads("nobody", &PageRequest::first(10))
            .await
            .unwrap();
        assert!(nobody.items.is_empty() && nobody.next_cursor.is_none());
    }

    pub async fn idle_threads_are_listed_oldest_first(store: Dyn) {
        let problem_set = |id: &str, updated: i64, status: ThreadStatus| Thread {
            mode: Mode::ProblemSet,
            status,
            ..thread(id, "s1", updated)
        };
        for t in [
            problem_set("p1", 10, ThreadStatus::Active),
            problem_set("p2", 30, ThreadStatus::Active),
            problem_set("p3", 20, ThreadStatus::Active),
            problem_set("p4", 5, ThreadStatus::Active),
            problem_set("p5", 15, ThreadStatus::Active),
            // Recent: not idle yet.
            problem_set("p6", 90, ThreadStatus::Active),
            // Ended or waiting for their student: never idle.
            problem_set("p7", 1, ThreadStatus::Completed),
            problem_set("p8", 2, ThreadStatus::Paused),
            // A mode whose threads never expire.
            thread("g1", "s1", 3),
        ] {
            let mut work = UnitOfWork::new();
            work.put_thread(ThreadChange::create(t, vec![]));
            store.commit(work).await.unwrap();
        }
        let listed = |after: Option<String>, limit: usize| {
            let store = store.clone();
            async move {
                store
                    .list_idle_threads(Mode::ProblemSet, t(60), after.as_deref(), limit)
                    .await
                    .unwrap()
            }
        };
        let ids = |idle: &[IdleThread]| -> Vec<String> {
            idle.iter().map(|i| i.thread_id.clone()).collect()
        };
        assert_eq!(ids(&listed(None, 10).await), ["p4", "p1", "p5", "p3", "p2"]);
        // Page by page, each going on after the last position seen.
        let first = listed(None, 2).await;
        assert_eq!(ids(&first), ["p4", "p1"]);
        let second = listed(Some(first[1].position.clone()), 2).await;
        assert_eq!(ids(&second), ["p5", "p3"]);
        let third = listed(Some(second[1].position.clone()), 2).await;
        assert_eq!(ids(&third), ["p2"]);
        assert!(listed(Some(third[0].position.clone()), 2).await.is_empty());

        // A thread that ends leaves the listing; one touched moves on.
        let p4 = store.get_thread("p4", 0).await.unwrap().unwrap();
        let mut work = UnitOfWork::new();
        work.put_thread(p4.update(problem_set("p4", 6, ThreadStatus::Completed), vec![]));
        store.commit(work).await.unwrap();
        let p1 = store.get_thread("p1", 0).await.unwrap().unwrap();
        let mut work = UnitOfWork::new();
        work.put_thread(p1.update(problem_set("p1", 70, ThreadStatus::Active), vec![]));
        store.commit(work).await.unwrap();
        assert_eq!(ids(&listed(None, 10).await), ["p5", "p3", "p2"]);

        assert_invalid(
            store.list_idle_threads(Mode::Guided, t(60), None, 10).await,
            "never expire",
        );
        assert_invalid(
            store
                .list_idle_threads(Mode::ProblemSet, t(60), None, 0)
                .await,
            "between 1 and 100",
        );
    }

    pub async fn unknown_items_read_as_absent(store: Dyn) {
        assert!(store.get_thread("missing", 5).await.unwrap().is_none());
        let messages = store
            .list_messages("missing", Order::OldestFirst, &PageRequest::first(5))
            .await
            .unwrap();
        assert!(messages.items.is_empty());
        assert!(store.list_lockouts("s1", "c1").await.unwrap().is_empty());
    }

    pub async fn bad_input_is_refused_and_changes_nothing(store: Dyn) {
        assert_invalid(store.get_snapshot("", "c1").await, "student id is empty");
        assert_invalid(store.get_snapshot("s1", "").await, "course id is empty");
        assert_invalid(
            store.get_snapshot(&"x".repeat(300), "c1").await,
            "longer than",
        );
        assert_invalid(store.get_thread("t\u{0}", 1).await, "control character");
        assert_invalid(store.get_thread("t1", 101).await, "between 1 and 100");
        assert_invalid(
            store.list_threads("s1", &PageRequest::first(0)).await,
            "between 1 and 100",
        );
        assert_invalid(
            store
                .list_messages("t1", Order::OldestFirst, &PageRequest::first(101))
                .await,
            "between 1 and 100",
        );
        assert_invalid(
            store
                .list_messages("t1", Order::OldestFirst, &PageRequest::after("%%%", 5))
                .await,
            "malformed",
        );
        assert_invalid(
            store
                .list_turn_logs(
                    "t1",
                    Order::OldestFirst,
                    &PageRequest::after("eyJ9", 5),
                    t(0),
                )
                .await,
            "malformed",
        );
        assert_invalid(store.list_lockouts("s1", "").await, "course id is empty");

        // Too many items for one transaction: refused before anything is written.
        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New);
        let messages = (0..MAX_TRANSACTION_ITEMS as u32)
            .map(|n| message("t1", n))
            .collect();
        work.put_thread(ThreadChange::create(thread("t1", "s1", 1), messages));
        assert_invalid(store.commit(work).await, "at most 100 items");

        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New)
            .put_snapshot(snapshot("s1", "c1", 2), WriteCondition::New);
        assert_invalid(store.commit(work).await, "changed twice");

        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New)
            .put_thread(ThreadChange::create(
                thread("t1", "s1", 1),
                vec![message("t2", 0)],
            ));
        assert_invalid(store.commit(work).await, "belongs to thread `t2`");

        let mut huge = snapshot("s1", "c1", 1);
        huge.units_in_progress = vec!["u".repeat(1024); 400];
        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s2", "c1", 1), WriteCondition::New)
            .put_snapshot(huge, WriteCondition::New);
        assert_invalid(store.commit(work).await, "bytes");

        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("", "c1", 1), WriteCondition::New);
        assert_invalid(store.commit(work).await, "student id is empty");

        assert!(store.get_snapshot("s1", "c1").await.unwrap().is_none());
        assert!(store.get_snapshot("s2", "c1").await.unwrap().is_none());
        assert!(store.get_thread("t1", 1).await.unwrap().is_none());
    }

    pub async fn idempotency_goes_through_its_states(store: Dyn) {
        let key = IdempotencyKey::for_student("s1", "turn-42").unwrap();
        let lock_for = Duration::seconds(30);
        let Begin::Acquired(lock) = store
            .begin_idempotency(&key, "h1", t(0), lock_for)
            .await
            .unwrap()
        else {
            panic!("first request acquires")
        };
        // A concurrent duplicate while in progress: retryable conflict.
        match store.begin_idempotency(&key, "h1", t(1), lock_for).await {
            Err(e @ StoreError::IdempotencyInProgress { .. }) => {
                assert!(e.is_retryable());
                let StoreError::IdempotencyInProgress { retry_after, .. } = e else {
                    unreachable!()
                };
                assert_eq!(retry_after, t(30));
            }
            other => panic!("expected in progress, got {other:?}"),
        }
        // Same key, different payload: refused, not retryable.
        match store.begin_idempotency(&key, "h2", t(1), lock_for).await {
            Err(e @ StoreError::IdempotencyKeyReused { .. }) => assert!(!e.is_retryable()),
            other => panic!("expected key reuse, got {other:?}"),
        }
        let mut work = UnitOfWork::new();
        work.complete_idempotency(lock, response("first"));
        store.commit(work).await.unwrap();
        assert_eq!(
            store
                .begin_idempotency(&key, "h1", t(2), lock_for)
                .await
                .unwrap(),
            Begin::Replay(response("first"))
        );
        assert!(matches!(
            store.begin_idempotency(&key, "h2", t(2), lock_for).await,
            Err(StoreError::IdempotencyKeyReused { .. })
        ));
        // Keys are scoped: another student or an integration has its own record.
        for other in [
            IdempotencyKey::for_student("s2", "turn-42").unwrap(),
            IdempotencyKey::for_integration("n8n", "s1", "turn-42").unwrap(),
        ] {
            assert!(matches!(
                store
                    .begin_idempotency(&other, "h2", t(2), lock_for)
                    .await
                    .unwrap(),
                Begin::Acquired(_)
            ));
        }
        // An absurd lock duration saturates instead of overflowing.
        let forever = IdempotencyKey::for_student("s1", "forever").unwrap();
        assert!(matches!(
            store
                .begin_idempotency(&forever, "h1", t(0), Duration::MAX)
                .await
                .unwrap(),
            Begin::Acquired(_)
        ));
        assert!(matches!(
            store
                .begin_idempotency(&forever, "h1", t(1), lock_for)
                .await,
            Err(StoreError::IdempotencyInProgress { .. })
        ));
        // Bad input.
        assert_invalid(
            store.begin_idempotency(&key, "", t(2), lock_for).await,
            "payload hash",
        );
        assert_invalid(
            store
                .begin_idempotency(&key, "h1", t(2), Duration::zero())
                .await,
            "positive",
        );
    }

    pub async fn idempotency_records_expire_in_code(store: Dyn) {
        let key = IdempotencyKey::for_student("s1", "k").unwrap();
        let lock_for = Duration::seconds(30);
        let Begin::Acquired(stale) = store
            .begin_idempotency(&key, "h1", t(0), lock_for)
            .await
            .unwrap()
        else {
            panic!()
        };
        // The lock expired (the first request died): a retry takes over,
        // even with another payload.
        let Begin::Acquired(fresh) = store
            .begin_idempotency(&key, "h2", t(31), lock_for)
            .await
            .unwrap()
        else {
            panic!("an expired lock is taken over")
        };
        // The first request can no longer complete or release it.
        store.release_idempotency(&stale).await.unwrap();
        let mut work = UnitOfWork::new();
        work.put_snapshot(snapshot("s1", "c1", 1), WriteCondition::New)
            .complete_idempotency(stale, response("late"));
        assert_conflict(store.commit(work).await, &key.item_ref());
        assert!(store.get_snapshot("s1", "c1").await.unwrap().is_none());

        let mut work = UnitOfWork::new();
        work.complete_idempotency(fresh, response("second"));
        store.commit(work).await.unwrap();
        // Replayed while the record lives (retention: 1 hour from the start).
        assert_eq!(
            store
                .begin_idempotency(&key, "h2", t(31 + 3599), lock_for)
                .await
                .unwrap(),
            Begin::Replay(response("second"))
        );
        // After that the record no longer counts, whatever TTL has done.
        assert!(matches!(
            store
                .begin_idempotency(&key, "h3", t(31 + 3600), lock_for)
                .await
                .unwrap(),
            Begin::Acquired(_)
        ));
    }

    pub async fn a_released_lock_lets_the_retry_run(store: Dyn) {
        let key = IdempotencyKey::for_student("s1", "k").unwrap();
        let lock_for = Duration::seconds(30);
        let Begin::Acquired(lock) = store
            .begin_idempotency(&key, "h1", t(0), lock_for)
            .await
            .unwrap()
        else {
            panic!()
        };
        store.release_idempotency(&lock).await.unwrap();
        assert!(matches!(
            store
                .begin_idempotency(&key, "h1", t(1), lock_for)
                .await
                .unwrap(),
            Begin::Acquired(_)
        ));
    }

    pub async fn turn_logs_page_and_expire(store: Dyn) {
        let mut work = UnitOfWork::new();
        for (turn, created) in [("a", -200_000), ("b", 10), ("c", 20), ("d", 30)] {
            work.log_turn(turn_log("t1", turn, created));
        }
        work.log_turn(turn_log("t2", "x", 10));
        store.commit(work).await.unwrap();
        // "a" is older than the one-day retention at t(0).
        let now = t(0);
        let first = store
            .list_turn_logs("t1", Order::OldestFirst, &PageRequest::first(2), now)
            .await
            .unwrap();
        let turns: Vec<_> = first.items.iter().map(|l| l.turn_id.as_str()).collect();
        assert_eq!(turns, ["b", "c"]);
        assert_eq!(first.items[0], turn_log("t1", "b", 10));
        assert_eq!(
            first.items[0].committed_at,
            t(13),
            "the commit time is kept"
        );
        let rest = store
            .list_turn_logs(
                "t1",
                Order::OldestFirst,
                &PageRequest::after(first.next_cursor.unwrap(), 2),
                now,
            )
            .await
            .unwrap();
        let turns: Vec<_> = rest.items.iter().map(|l| l.turn_id.as_str()).collect();
        assert_eq!(turns, ["d"]);
        assert!(rest.next_cursor.is_none());
        let newest = store
            .list_turn_logs("t1", Order::NewestFirst, &PageRequest::first(10), now)
            .await
            .unwrap();
        let turns: Vec<_> = newest.items.iter().map(|l| l.turn_id.as_str()).collect();
        assert_eq!(turns, ["d", "c", "b"]);
        // A day after "b" was logged it is gone too.
        let later = store
            .list_turn_logs("t1", Order::OldestFirst, &PageRequest::first(10), t(86_415))
            .await
            .unwrap();
        let turns: Vec<_> = later.items.iter().map(|l| l.turn_id.as_str()).collect();
        assert_eq!(turns, ["c", "d"]);
        // A turn is logged once.
        let mut work = UnitOfWork::new();
        work.log_turn(turn_log("t1", "b", 10));
        assert_conflict(
            store.commit(work).await,
            &ItemRef::TurnLog {
                thread_id: "t1".into(),
                turn_id: "b".into(),
            },
        );
    }

    pub async fn lockouts_are_listed_per_course_and_versioned(store: Dyn) {
        let elsewhere = |student: &str, course: &str| ExamLockout {
            student_id: student.into(),
            course_id: course.into(),
            ..lockout("q9", 300)
        };
        let mut work = UnitOfWork::new();
        work.put_lockout(lockout("q1", 100), WriteCondition::New)
            .put_lockout(lockout("q2", 200), WriteCondition::New)
            .put_lockout(elsewhere("s2", "c1"), WriteCondition::New)
            .put_lockout(elsewhere("s1", "c2"), WriteCondition::New)
            // A course whose id starts with this one's and a `#`.
            .put_lockout(elsewhere("s1", "c1#2"), WriteCondition::New);
        store.commit(work).await.unwrap();
        let found = store.list_lockouts("s1", "c1").await.unwrap();
        assert_eq!(found.keys().collect::<Vec<_>>(), ["q1", "q2"]);
        assert_eq!(found["q1"].value, lockout("q1", 100));
        assert_eq!(found["q1"].version, 1);
        assert!(found["q1"].value.is_active(t(99)));
        assert!(!found["q1"].value.is_active(t(100)));
        // Other students and courses see only their own.
        let theirs = store.list_lockouts("s2", "c1").await.unwrap();
        assert_eq!(theirs.keys().collect::<Vec<_>>(), ["q9"]);
        assert!(store.list_lockouts("s3", "c1").await.unwrap().is_empty());
        // Extending a lockout is conditioned on its version.
        let mut work = UnitOfWork::new();
        work.put_lockout(lockout("q1", 500), found["q1"].expected());
        store.commit(work).await.unwrap();
        let mut work = UnitOfWork::new();
        work.put_lockout(lockout("q1", 900), found["q1"].expected());
        assert_conflict(
            store.commit(work).await,
            &ItemRef::Lockout {
                student_id: "s1".into(),
                course_id: "c1".into(),
                question_id: "q1".into(),
            },
        );
        // More than one transaction's worth, listed in one call.
        for chunk in (10..160).collect::<Vec<_>>().chunks(75) {
            let mut work = UnitOfWork::new();
            for i in chunk {
                work.put_lockout(lockout(&format!("q{i}"), 100), WriteCondition::New);
            }
            store.commit(work).await.unwrap();
        }
        let found = store.list_lockouts("s1", "c1").await.unwrap();
        assert_eq!(found.len(), 152);
        assert_eq!(found["q1"].value.locked_until, t(500));
        assert_eq!(found["q1"].version, 2);
    }
}

/// Instantiates every suite function once per store.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    let backend = super::sqlite().await;
                    super::suite::$name(backend.store.clone()).await;
                }
            )*
        }
        mod sqlite_in_memory {
            $(
                #[tokio::test]
                async fn $name() {
                    let store = tutorflow::store::SqliteStore::in_memory(super::retention())
                        .await
                        .unwrap();
                    super::suite::$name(std::sync::Arc::new(store)).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test]
                async fn $name() {
                    let Some(backend) = super::dynamo(stringify!($name)).await else { return };
                    super::suite::$name(backend.store.clone()).await;
                }
            )*
        }
    };
}

conformance!(
    snapshots_are_created_read_and_updated,
    a_stale_version_is_a_conflict_and_writes_nothing,
    one_failing_condition_leaves_every_item_unchanged,
    a_unit_of_work_commits_everything_together,
    messages_keep_their_order_and_page,
    a_stale_thread_update_appends_nothing,
    a_thread_lease_is_taken_held_and_taken_over_once_lapsed,
    thread_writes_keep_the_lease_and_its_holders_commit_releases_it,
    a_thread_lease_is_released_by_its_token,
    threads_are_listed_per_student_newest_first,
    idle_threads_are_listed_oldest_first,
    unknown_items_read_as_absent,
    bad_input_is_refused_and_changes_nothing,
    idempotency_goes_through_its_states,
    idempotency_records_expire_in_code,
    a_released_lock_lets_the_retry_run,
    turn_logs_page_and_expire,
    lockouts_are_listed_per_course_and_versioned,
);
