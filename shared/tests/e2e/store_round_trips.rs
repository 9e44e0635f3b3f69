//! Store round trips per request, counted against the DynamoDB emulator.
//!
//! Every request a route makes to DynamoDB is a network round trip on
//! Lambda (a few milliseconds each, and billed). This test serves the real
//! app over a DynamoDB store whose SDK client records every operation it
//! sends, runs each route once, and holds each to its budget: how many
//! sequential read rounds (reads that overlap in time are one round), how
//! many writes, and no stored item read twice in one request. A route that
//! grows a round trip fails here; `-- --nocapture` prints the table that
//! BENCHMARKS.md "Store round trips" shows.

use crate::e2e_support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::operation::batch_get_item::{BatchGetItemInput, BatchGetItemOutput};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemInput;
use aws_sdk_dynamodb::operation::get_item::{GetItemInput, GetItemOutput};
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use e2e_support::*;
use serde_json::json;
use tutorflow::api::App;
use tutorflow::config::StoreBackend;
use tutorflow::content::FsSource;
use tutorflow::service::{AppParts, RandomIds, SystemClock};
use tutorflow::store::{ContentCache, DynamoStore, Retention, Store};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Item = std::collections::HashMap<String, AttributeValue>;

/// One DynamoDB operation a request sent.
#[derive(Debug, Clone)]
struct Call {
    operation: &'static str,
    /// The items it reads (`PK|SK`) or, for a query, its partition (`PK|*`).
    reads: Vec<String>,
    /// Items written (a transaction counts each of its items).
    writes: usize,
    /// Calls overlapping in time share a round.
    round: usize,
    /// Capacity units as DynamoDB bills them, from the items' sizes:
    /// a strongly consistent read is one unit per 4 KB, a write one per
    /// 1 KB, doubled inside a transaction.
    read_units: u64,
    write_units: u64,
    /// Bytes of the items written (DynamoDB's item size rules).
    bytes_written: usize,
    /// Set when the call has answered.
    done: bool,
}

#[derive(Debug, Default)]
struct Log {
    calls: Vec<Call>,
    in_flight: usize,
    rounds: usize,
    /// Each item's size as last put (`PK|SK`): an UpdateItem is billed on
    /// the item it changes, which its request does not carry.
    sizes: BTreeMap<String, usize>,
}

/// Records the operations the client sends (an SDK interceptor sees each
/// operation once, however many times the SDK retries it).
#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Log>>);

impl Recorder {
    fn take(&self) -> Vec<Call> {
        let mut log = self.0.lock().unwrap();
        log.rounds = 0;
        std::mem::take(&mut log.calls)
    }
}

fn text(value: Option<&AttributeValue>) -> String {
    match value {
        Some(AttributeValue::S(s)) => s.clone(),
        Some(AttributeValue::N(n)) => n.clone(),
        other => format!("{other:?}"),
    }
}

/// An attribute value's size as DynamoDB counts it.
fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        // Numbers: about one byte per two significant digits, plus one.
        AttributeValue::N(n) => n.len().div_ceil(2) + 1,
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::L(l) => 3 + l.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(m) => 3 + item_size(m) + m.len(),
        AttributeValue::Ss(v) => v.iter().map(String::len).sum(),
        AttributeValue::Ns(v) => v.iter().map(|n| n.len().div_ceil(2) + 1).sum(),
        other => format!("{other:?}").len(),
    }
}

fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + value_size(v)).sum()
}

/// Units of `unit` bytes, at least one.
fn units(bytes: usize, unit: usize) -> u64 {
    bytes.div_ceil(unit).max(1) as u64
}

/// A transaction's write units and bytes: each item twice its units.
fn transaction_cost(items: &[TransactWriteItem]) -> (u64, usize) {
    items.iter().fold((0, 0), |(wcu, bytes), item| {
        let size = match (&item.put, &item.update, &item.delete, &item.condition_check) {
            (Some(put), ..) => item_size(put.item()),
            (_, Some(update), ..) => item_size(update.key()),
            (_, _, Some(delete), _) => item_size(delete.key()),
            (_, _, _, Some(check)) => item_size(check.key()),
            _ => 0,
        };
        (wcu + 2 * units(size, 1024), bytes + size)
    })
}

fn item_key(key: &Item) -> String {
    format!("{}|{}", text(key.get("PK")), text(key.get("SK")))
}

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "RoundTripRecorder"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = context.input();
        let (mut write_units, mut bytes_written) = (0, 0);
        // The items it puts, by key, with their sizes.
        let mut put_sizes = Vec::new();
        let (operation, reads, writes) = if let Some(i) = input.downcast_ref::<GetItemInput>() {
            (
                "GetItem",
                vec![item_key(i.key().unwrap_or(&Item::new()))],
                0,
            )
        } else if let Some(i) = input.downcast_ref::<QueryInput>() {
            let pk = i
                .expression_attribute_values()
                .and_then(|v| v.get(":pk"))
                .map_or_else(|| "?".to_owned(), |v| text(Some(v)));
            ("Query", vec![format!("{pk}|*")], 0)
        } else if let Some(i) = input.downcast_ref::<BatchGetItemInput>() {
            let keys = i
                .request_items()
                .into_iter()
                .flat_map(|r| r.values())
                .flat_map(|k| k.keys())
                .map(item_key)
                .collect();
            ("BatchGetItem", keys, 0)
        } else if let Some(i) = input.downcast_ref::<PutItemInput>() {
            bytes_written = item_size(i.item().unwrap_or(&Item::new()));
            if let Some(item) = i.item() {
                put_sizes.push((item_key(item), bytes_written));
            }
            write_units = units(bytes_written, 1024);
            ("PutItem", Vec::new(), 1)
        } else if input.downcast_ref::<DeleteItemInput>().is_some() {
            write_units = 1;
            ("DeleteItem", Vec::new(), 1)
        } else if let Some(i) = input.downcast_ref::<UpdateItemInput>() {
            // Billed on the larger of the item before and after: the item
            // as last put, a few bytes of lease aside.
            let before = self
                .0
                .lock()
                .unwrap()
                .sizes
                .get(&item_key(i.key().unwrap_or(&Item::new())))
                .copied()
                .unwrap_or(0);
            let set: usize = i.expression_attribute_values().map_or(0, item_size);
            bytes_written = before + set;
            write_units = units(bytes_written, 1024);
            ("UpdateItem", Vec::new(), 1)
        } else if let Some(i) = input.downcast_ref::<TransactWriteItemsInput>() {
            (write_units, bytes_written) = transaction_cost(i.transact_items());
            put_sizes.extend(
                i.transact_items()
                    .iter()
                    .filter_map(|w| w.put.as_ref())
                    .map(|p| (item_key(p.item()), item_size(p.item()))),
            );
            ("TransactWriteItems", Vec::new(), i.transact_items().len())
        } else {
            ("other", Vec::new(), 0)
        };
        let mut log = self.0.lock().unwrap();
        log.sizes.extend(put_sizes);
        if log.in_flight == 0 {
            log.rounds += 1;
        }
        log.in_flight += 1;
        let round = log.rounds;
        log.calls.push(Call {
            operation,
            reads,
            writes,
            round,
            read_units: 0,
            write_units,
            bytes_written,
            done: false,
        });
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let output = context.output_or_error().and_then(Result::ok);
        let read = output.and_then(|o| {
            if let Some(o) = o.downcast_ref::<GetItemOutput>() {
                Some(("GetItem", units(o.item().map_or(0, item_size), 4096)))
            } else if let Some(o) = o.downcast_ref::<QueryOutput>() {
                Some(("Query", units(o.items().iter().map(item_size).sum(), 4096)))
            } else {
                o.downcast_ref::<BatchGetItemOutput>().map(|o| {
                    let items = o.responses().into_iter().flat_map(|r| r.values()).flatten();
                    (
                        "BatchGetItem",
                        items.map(|i| units(item_size(i), 4096)).sum(),
                    )
                })
            }
        });
        let mut log = self.0.lock().unwrap();
        log.in_flight = log.in_flight.saturating_sub(1);
        // Calls in flight together are of different operations here, so
        // the oldest unanswered call of the output's kind is this one.
        let kind = read.map(|(op, _)| op);
        if let Some(call) = log
            .calls
            .iter_mut()
            .find(|c| !c.done && kind.is_none_or(|k| k == c.operation))
        {
            call.done = true;
            if let Some((_, units)) = read {
                call.read_units = units;
            }
        }
        Ok(())
    }
}

/// What one request cost.
#[derive(Debug)]
struct Cost {
    route: &'static str,
    read_rounds: usize,
    reads: usize,
    transactions: usize,
    other_writes: usize,
    sequence: String,
    read_twice: Vec<String>,
    read_units: u64,
    write_units: u64,
    bytes_written: usize,
    millis: f64,
}

fn cost(route: &'static str, calls: &[Call], millis: f64) -> Cost {
    let mut by_round: BTreeMap<usize, Vec<&Call>> = BTreeMap::new();
    for call in calls {
        by_round.entry(call.round).or_default().push(call);
    }
    let is_read = |c: &&Call| c.writes == 0 && c.operation != "other";
    let read_rounds = by_round
        .values()
        .filter(|calls| calls.iter().any(is_read))
        .count();
    let mut seen = BTreeMap::<&str, usize>::new();
    for read in calls.iter().flat_map(|c| &c.reads) {
        *seen.entry(read).or_default() += 1;
    }
    let sequence = by_round
        .values()
        .map(|calls| {
            calls
                .iter()
                .map(|c| c.operation)
                .collect::<Vec<_>>()
                .join(" ‖ ")
        })
        .collect::<Vec<_>>()
        .join(" → ");
    Cost {
        route,
        read_rounds,
        reads: calls.iter().filter(is_read).count(),
        transactions: calls
            .iter()
            .filter(|c| c.operation == "TransactWriteItems")
            .count(),
        other_writes: calls
            .iter()
            .filter(|c| c.writes > 0 && c.operation != "TransactWriteItems")
            .count(),
        sequence,
        read_units: calls.iter().map(|c| c.read_units).sum(),
        write_units: calls.iter().map(|c| c.write_units).sum(),
        bytes_written: calls.iter().map(|c| c.bytes_written).sum(),
        millis,
        read_twice: seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect(),
    }
}

/// The most a route may spend: sequential read rounds, TransactWriteItems,
/// and single-item writes outside the transaction.
struct Budget {
    read_rounds: usize,
    transactions: usize,
    other_writes: usize,
}

const fn budget(read_rounds: usize, transactions: usize, other_writes: usize) -> Budget {
    Budget {
        read_rounds,
        transactions,
        other_writes,
    }
}

/// The routes' budgets: what BENCHMARKS.md "Store round trips" states.
/// A route on a thread reads the thread, the student's snapshot in its
/// course and the student's lockouts in that course together: the course
/// is known before the thread is read (the thread's id carries it; a
/// webhook turn's integration names it), and the thread confirms it. A
/// thread whose id does not carry its course reads the course's items
/// after it: two rounds. A turn's other writes are the lease (taken, then
/// released; a webhook turn's is its session's, taken before the session's
/// thread is looked up) and, with an Idempotency-Key, the key's record.
fn budget_of(route: &str) -> Budget {
    match route {
        "POST /threads" => budget(1, 1, 0),
        "POST /threads/{id}/turn" => budget(1, 1, 1),
        "POST /threads/{id}/turn (Idempotency-Key)" => budget(1, 1, 2),
        "POST /threads/{id}/turn (bare id)" => budget(2, 1, 1),
        "POST /webhooks/turn" => budget(1, 1, 3),
        "POST /threads/{id}/drill/grade" => budget(1, 1, 0),
        "POST …/exam/mcq-submit (correct)" => budget(1, 1, 0),
        "POST …/exam/mcq-submit (wrong)" => budget(1, 1, 0),
        "POST …/exam/support-viewed" => budget(1, 1, 0),
        other => panic!("no budget for {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_keeps_to_its_store_round_trips() {
    let Some(aws) = aws("store_round_trips") else {
        return;
    };
    let Aws::Emulator(_) = &aws else {
        // Counting is the same on real AWS; the emulator keeps it cheap.
        return;
    };
    let recorder = Recorder::default();
    let sdk = sdk_config(&aws).await;
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .interceptor(recorder.clone())
            .build(),
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.store.backend = StoreBackend::Dynamodb;
    config.store.table = format!(
        "round-trips-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let dynamo = DynamoStore::new(
        client,
        &config.store.table,
        Retention::from_config(&config.store),
    );
    dynamo.create_table_if_missing().await.unwrap();
    let cleanup = Cleanup::table(sdk, &config.store.table);
    let store: Arc<dyn Store> = Arc::new(dynamo);
    let content = ContentCache::load(
        Arc::new(FsSource::new(repo_root())),
        std::time::Duration::from_secs(3600),
    )
    .await
    .unwrap();
    let app = App::assemble(
        AppParts {
            config: config.clone(),
            store: store.clone(),
            content: Arc::new(content),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        },
        &env,
    )
    .unwrap();
    let h = Harness::serve(Arc::new(app), config, store, dir, Some(cleanup)).await;

    let mut costs = Vec::new();
    let begin = || {
        recorder.take();
        std::time::Instant::now()
    };
    let mut measure =
        |route: &'static str, started: std::time::Instant, reply: &Reply, expected: u16| {
            let millis = started.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(reply.status, expected, "{route}: {}", reply.body);
            costs.push(cost(route, &recorder.take(), millis));
        };

    let student = "student-round-trips";
    let started = begin();
    let created = h
        .post(student, "/threads", json!({"courseId": "prealgebra"}))
        .await;
    measure("POST /threads", started, &created, 201);
    let thread = created.body["threadId"].as_str().unwrap().to_owned();

    let started = begin();
    let turn = h
        .post(
            student,
            &format!("/threads/{thread}/turn"),
            json!({"messageText": "what is a ratio?"}),
        )
        .await;
    measure("POST /threads/{id}/turn", started, &turn, 200);

    // A retried request is answered from the idempotency record: the key
    // takes one conditional write before the turn's reads.
    let started = begin();
    let keyed = h
        .send(
            h.http
                .post(format!("{}/threads/{thread}/turn", h.base))
                .bearer_auth(h.token(student))
                .header("idempotency-key", "round-trips-1")
                .json(&json!({"messageText": "and what is a rate?"})),
        )
        .await;
    measure(
        "POST /threads/{id}/turn (Idempotency-Key)",
        started,
        &keyed,
        200,
    );

    // A thread whose id does not carry its course (ids drawn before they
    // did) still takes turns, its course's reads after the thread's.
    assert!(thread.starts_with("prealgebra."), "{thread}");
    let bare = uuid::Uuid::new_v4().to_string();
    h.copy_thread(&thread, &bare).await;
    let started = begin();
    let turn = h
        .post(
            student,
            &format!("/threads/{bare}/turn"),
            json!({"messageText": "what is a ratio?"}),
        )
        .await;
    measure("POST /threads/{id}/turn (bare id)", started, &turn, 200);

    let drill = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}}),
        )
        .await;
    let token = Harness::card(&drill, "DRILL")
        .and_then(|c| c["drillToken"].as_str())
        .unwrap_or_else(|| panic!("a drill card: {drill}"))
        .to_owned();
    let started = begin();
    let graded = h
        .post(
            student,
            &format!("/threads/{thread}/drill/grade"),
            json!({"drillToken": token, "studentAnswer": drill_answer(&thread, &token)}),
        )
        .await;
    measure("POST /threads/{id}/drill/grade", started, &graded, 200);

    let session = format!("round-trips-{}", uuid::Uuid::new_v4().simple());
    let body = serde_json::to_vec(&json!({
        "student_id": "n8n:round-trips", "session_id": session, "message": "what is 7 + 5?"
    }))
    .unwrap();
    let signed = |body: &[u8]| {
        let now = chrono::Utc::now().timestamp();
        h.http
            .post(format!("{}/webhooks/turn", h.base))
            .header("content-type", "application/json")
            .header("x-tutorflow-integration", "n8n")
            .header("x-tutorflow-timestamp", now.to_string())
            .header(
                "x-tutorflow-signature",
                tutorflow::api::webhook::sign(HOOK_SECRET.as_bytes(), now, body),
            )
            .body(body.to_vec())
    };
    // The first webhook turn of a session creates its thread; the second
    // is the common case, measured.
    let first = h.send(signed(&body)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let body = serde_json::to_vec(&json!({
        "student_id": "n8n:round-trips", "session_id": session, "message": "12"
    }))
    .unwrap();
    let started = begin();
    let hooked = h.send(signed(&body)).await;
    measure("POST /webhooks/turn", started, &hooked, 200);

    let exam_student = "student-round-trips-exam";
    let exam_thread = h.new_thread(exam_student).await;
    let card = h.exam_card(exam_student, &exam_thread).await;
    let question = card["questionId"].as_str().unwrap().to_owned();
    let submit = format!("/threads/{exam_thread}/exam/mcq-submit");
    let started = begin();
    let failed = h
        .post(
            exam_student,
            &submit,
            json!({"questionId": question, "selectedOption": wrong_option(&question)}),
        )
        .await;
    measure("POST …/exam/mcq-submit (wrong)", started, &failed, 200);
    let started = begin();
    let viewed = h
        .post(
            exam_student,
            &format!("/threads/{exam_thread}/exam/support-viewed"),
            json!({"questionId": question, "supportType": "memo"}),
        )
        .await;
    measure("POST …/exam/support-viewed", started, &viewed, 200);

    let passing_student = "student-round-trips-pass";
    let passing_thread = h.new_thread(passing_student).await;
    let card = h.exam_card(passing_student, &passing_thread).await;
    let question = card["questionId"].as_str().unwrap().to_owned();
    let started = begin();
    let passed = h
        .post(
            passing_student,
            &format!("/threads/{passing_thread}/exam/mcq-submit"),
            json!({"questionId": question, "selectedOption": correct_option(&question)}),
        )
        .await;
    measure("POST …/exam/mcq-submit (correct)", started, &passed, 200);

    let mut table = String::from(
        "| route | read rounds | reads | TransactWriteItems | other writes | read units | write units | bytes written | ms (moto) | sequence (‖ = in parallel) |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut over = Vec::new();
    for c in &costs {
        writeln!(
            table,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            c.route,
            c.read_rounds,
            c.reads,
            c.transactions,
            c.other_writes,
            c.read_units,
            c.write_units,
            c.bytes_written,
            c.millis,
            c.sequence
        )
        .unwrap();
        let b = budget_of(c.route);
        if c.read_rounds > b.read_rounds
            || c.transactions > b.transactions
            || c.other_writes > b.other_writes
        {
            over.push(format!(
                "{}: {} read rounds, {} transactions, {} other writes (budget {}, {}, {}): {}",
                c.route,
                c.read_rounds,
                c.transactions,
                c.other_writes,
                b.read_rounds,
                b.transactions,
                b.other_writes,
                c.sequence
            ));
        }
        if !c.read_twice.is_empty() {
            over.push(format!(
                "{} reads an item twice: {:?}",
                c.route, c.read_twice
            ));
        }
    }
    println!("{table}");
    assert!(over.is_empty(), "{}\n{table}", over.join("\n"));
}
