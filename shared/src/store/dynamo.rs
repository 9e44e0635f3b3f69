//! The DynamoDB store: one table, single-table design (README "State
//! storage" documents keys, item shapes, the GSI and TTL attributes).
//!
//! Values are stored as JSON in a `data` attribute, so an item round-trips
//! exactly the wire shape; keys, version, expiry and the listing summary are
//! top-level attributes. A unit of work is one TransactWriteItems with a
//! condition per item and an idempotency token, so an SDK retry of a commit
//! that went through does not turn into a false conflict.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{DisplayErrorContext, SdkError};
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, Put, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType, TableStatus, TimeToLiveSpecification, TransactWriteItem,
};
use chrono::{DateTime, Duration, Utc};

use super::cursor::{self, paginate, seq_key};
use super::error::{ItemRef, StoreError};
use super::idempotency::{
    self, Begin, Existing, IdempotencyKey, IdempotencyLock, IdempotencyRecord, RecordStatus,
    StoredResponse,
};
use super::types::{
    ExamLockout, IdleThread, LeaseTake, Order, Page, PageRequest, SavedProfile, ThreadLease,
    ThreadRecord, ThreadSummary, TurnLog, Versioned, WriteCondition, check_id, check_idle_listing,
    check_limit, from_millis, list_key, millis, plus, time_key, turn_log_key,
};
use super::unit_of_work::{Change, Encoder, UnitOfWork, decode};
use super::{
    Committer, IdempotencyStore, LockoutStore, ProfileStore, Retention, SnapshotStore,
    ThreadLeases, ThreadStore, TurnLogStore,
};
use crate::model::{Mode, StudentSnapshot, ThreadStatus, TutorMessage};

/// The index listing a student's threads by recency.
pub const THREADS_INDEX: &str = "GSI1";
/// The sparse index listing the active threads of modes whose sessions
/// expire when idle, by last activity (the idle sweep reads it).
pub const ACTIVE_INDEX: &str = "GSI2";
/// Partitions of [`ACTIVE_INDEX`] per mode: every turn of such a thread
/// rewrites its entry, so the entries are spread over this many partitions
/// rather than all written to one.
const ACTIVE_INDEX_SHARDS: u32 = 4;

/// The table's keys, index and expiry attribute: the store writes these
/// attributes, [`DynamoStore::create_table_if_missing`] creates exactly this
/// table, and the infrastructure test holds the SAM template to it. The
/// condition and key-condition expressions spell the key names too; the
/// conformance suite runs them against a table created from this layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLayout {
    pub partition_key: &'static str,
    pub sort_key: &'static str,
    pub index_name: &'static str,
    pub index_partition_key: &'static str,
    pub index_sort_key: &'static str,
    /// Non-key attributes the index carries (INCLUDE projection).
    pub index_projection: &'static [&'static str],
    /// The active-threads index (keys only).
    pub active_index_name: &'static str,
    pub active_index_partition_key: &'static str,
    pub active_index_sort_key: &'static str,
    /// Epoch seconds after which DynamoDB may delete the item.
    pub ttl_attribute: &'static str,
}

pub const TABLE_LAYOUT: TableLayout = TableLayout {
    partition_key: "PK",
    sort_key: "SK",
    index_name: THREADS_INDEX,
    index_partition_key: "GSI1PK",
    index_sort_key: "GSI1SK",
    index_projection: &[SUMMARY_ATTRIBUTE],
    active_index_name: ACTIVE_INDEX,
    active_index_partition_key: "GSI2PK",
    active_index_sort_key: "GSI2SK",
    ttl_attribute: "ttl",
};
/// A thread's listing summary, the one attribute the index projects.
const SUMMARY_ATTRIBUTE: &str = "summary";
/// Sort key of a thread's metadata item: it sorts after `MSG#…`, so one
/// descending query returns the thread and its latest messages.
const THREAD_SK: &str = "THREAD";
const MSG_PREFIX: &str = "MSG#";
/// A turn's lease on its thread, on the thread's item: the holder's token
/// and when it lapses (epoch milliseconds).
const LEASE_TOKEN: &str = "leaseToken";
const LEASE_UNTIL: &str = "leaseUntil";
const LOG_PREFIX: &str = "LOG#";

#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
    retention: Retention,
}

type Item = HashMap<String, AttributeValue>;

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn student_pk(student_id: &str) -> String {
    format!("STUDENT#{student_id}")
}

fn thread_pk(thread_id: &str) -> String {
    format!("THREAD#{thread_id}")
}

/// The active-threads index partition of a thread of `mode`.
fn active_pk(mode: Mode, shard: u32) -> String {
    format!("ACTIVE#{}#{shard}", mode.as_str())
}

/// A thread's shard of the active-threads index: FNV-1a of its id, stable
/// across builds (std's hasher is not).
fn active_shard(thread_id: &str) -> u32 {
    let hash = thread_id.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    hash % ACTIVE_INDEX_SHARDS
}

fn snapshot_sk(course_id: &str) -> String {
    format!("SNAPSHOT#{course_id}")
}

fn idempotency_sk(digest: &str) -> String {
    format!("IDEMPOTENCY#{digest}")
}

fn lockout_sk(course_id: &str, question_id: &str) -> String {
    format!("LOCKOUT#{course_id}#{question_id}")
}

const PROFILE_SK: &str = "PROFILE";

fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        (TABLE_LAYOUT.partition_key.to_owned(), s(pk)),
        (TABLE_LAYOUT.sort_key.to_owned(), s(sk)),
    ])
}

fn ttl_seconds(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

fn sdk_error<E, R>(op: &str, e: SdkError<E, R>) -> StoreError
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    StoreError::Unavailable(format!("dynamodb {op}: {}", DisplayErrorContext(&e)))
}

fn attr_s<'a>(item: &'a Item, name: &str, of: &ItemRef) -> Result<&'a str, StoreError> {
    match item.get(name) {
        Some(AttributeValue::S(v)) => Ok(v),
        _ => Err(StoreError::serialization(
            of,
            format!("missing string attribute `{name}`"),
        )),
    }
}

/// The id of the thread an index entry stands for (its table key names it).
fn indexed_thread_id(item: &Item) -> Result<String, StoreError> {
    let unknown = ItemRef::Thread {
        thread_id: String::new(),
    };
    Ok(attr_s(item, TABLE_LAYOUT.partition_key, &unknown)?
        .trim_start_matches("THREAD#")
        .to_owned())
}

fn attr_n<T: std::str::FromStr>(item: &Item, name: &str, of: &ItemRef) -> Result<T, StoreError> {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v.parse().map_err(|_| {
            StoreError::serialization(of, format!("attribute `{name}` is not a number"))
        }),
        _ => Err(StoreError::serialization(
            of,
            format!("missing number attribute `{name}`"),
        )),
    }
}

fn versioned<T: serde::de::DeserializeOwned>(
    item: &Item,
    of: &ItemRef,
) -> Result<Versioned<T>, StoreError> {
    Ok(Versioned {
        value: decode(attr_s(item, "data", of)?, of)?,
        version: attr_n(item, "version", of)?,
    })
}

/// A conditioned put: `expected` decides between "must not exist" and
/// "must be at this version".
struct Conditioned {
    item: Item,
    condition: String,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Conditioned {
    fn versioned(mut item: Item, expected: WriteCondition) -> Self {
        item.insert("version".into(), n(expected.next_version()));
        match expected {
            WriteCondition::New => Conditioned::new_item(item),
            WriteCondition::Version(v) => Conditioned {
                item,
                condition: "#version = :expected".into(),
                names: HashMap::from([("#version".into(), "version".into())]),
                values: HashMap::from([(":expected".into(), n(v))]),
            },
        }
    }

    /// Also requires the thread's lease to be the one read (`None`: no
    /// lease), so a write that read before a turn took the lease does not
    /// wipe it out: it conflicts and reads again.
    fn also_lease(&mut self, read: Option<&ThreadLease>) {
        self.names.insert("#leaseToken".into(), LEASE_TOKEN.into());
        match read {
            Some(lease) => {
                self.condition.push_str(" AND #leaseToken = :leaseRead");
                self.values.insert(":leaseRead".into(), s(&lease.token));
            }
            None => self
                .condition
                .push_str(" AND attribute_not_exists(#leaseToken)"),
        }
    }

    fn new_item(item: Item) -> Self {
        Conditioned {
            item,
            condition: "attribute_not_exists(PK)".into(),
            names: HashMap::new(),
            values: HashMap::new(),
        }
    }

    fn into_put(self, table: &str) -> Result<Put, StoreError> {
        Put::builder()
            .table_name(table)
            .set_item(Some(self.item))
            .condition_expression(self.condition)
            .set_expression_attribute_names((!self.names.is_empty()).then_some(self.names))
            .set_expression_attribute_values((!self.values.is_empty()).then_some(self.values))
            .build()
            .map_err(|e| StoreError::InvalidInput(e.to_string()))
    }
}

/// The lease a thread item carries, if any.
fn lease_of(item: &Item, of: &ItemRef) -> Result<Option<ThreadLease>, StoreError> {
    if !item.contains_key(LEASE_TOKEN) {
        return Ok(None);
    }
    Ok(Some(ThreadLease {
        token: attr_s(item, LEASE_TOKEN, of)?.to_owned(),
        until: from_millis(attr_n(item, LEASE_UNTIL, of)?),
    }))
}

fn idempotency_item(key: &IdempotencyKey, record: &IdempotencyRecord) -> Result<Item, StoreError> {
    let mut item = key_of_idempotency(key);
    item.insert("entity".into(), s("idempotency"));
    item.insert("clientKey".into(), s(key.key()));
    item.insert("status".into(), s(record.status.as_str()));
    item.insert("payloadHash".into(), s(&record.payload_hash));
    item.insert("lockToken".into(), s(&record.lock_token));
    item.insert("lockExpiresAt".into(), n(millis(record.lock_expires_at)));
    item.insert("expiresAt".into(), n(millis(record.expires_at)));
    item.insert(
        TABLE_LAYOUT.ttl_attribute.into(),
        n(ttl_seconds(record.expires_at)),
    );
    if let Some(response) = &record.response {
        let text = serde_json::to_string(response)
            .map_err(|e| StoreError::serialization(&key.item_ref(), e))?;
        item.insert("response".into(), s(text));
    }
    Ok(item)
}

fn key_of_idempotency(key: &IdempotencyKey) -> Item {
    self::key(student_pk(key.student_id()), idempotency_sk(&key.digest()))
}

fn read_idempotency(item: &Item, of: &ItemRef) -> Result<IdempotencyRecord, StoreError> {
    let response = match item.get("response") {
        Some(AttributeValue::S(text)) => Some(decode::<StoredResponse>(text, of)?),
        _ => None,
    };
    Ok(IdempotencyRecord {
        status: RecordStatus::parse(attr_s(item, "status", of)?)
            .ok_or_else(|| StoreError::serialization(of, "unknown status"))?,
        payload_hash: attr_s(item, "payloadHash", of)?.to_owned(),
        lock_token: attr_s(item, "lockToken", of)?.to_owned(),
        lock_expires_at: from_millis(attr_n(item, "lockExpiresAt", of)?),
        expires_at: from_millis(attr_n(item, "expiresAt", of)?),
        response,
    })
}

impl DynamoStore {
    pub fn new(client: Client, table: &str, retention: Retention) -> Self {
        DynamoStore {
            client,
            table: table.to_owned(),
            retention,
        }
    }

    /// Creates the table (keys, GSI, on-demand billing, TTL) unless it
    /// exists, and waits until it is active. For emulators and the storage
    /// test suite; on AWS the infrastructure template owns the table.
    pub async fn create_table_if_missing(&self) -> Result<(), StoreError> {
        let described = self
            .client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await;
        match described {
            Ok(_) => return self.wait_until_active().await,
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) => {}
            Err(e) => return Err(sdk_error("DescribeTable", e)),
        }
        let attr = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
        };
        let key_part = |name: &str, kind: KeyType| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
                .build()
        };
        let build_error = |e: aws_sdk_dynamodb::error::BuildError| {
            StoreError::InvalidInput(format!("table definition: {e}"))
        };
        let index = GlobalSecondaryIndex::builder()
            .index_name(TABLE_LAYOUT.index_name)
            .key_schema(
                key_part(TABLE_LAYOUT.index_partition_key, KeyType::Hash).map_err(build_error)?,
            )
            .key_schema(key_part(TABLE_LAYOUT.index_sort_key, KeyType::Range).map_err(build_error)?)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::Include)
                    .set_non_key_attributes(Some(
                        TABLE_LAYOUT
                            .index_projection
                            .iter()
                            .map(|a| (*a).to_owned())
                            .collect(),
                    ))
                    .build(),
            )
            .build()
            .map_err(build_error)?;
        let active_index = GlobalSecondaryIndex::builder()
            .index_name(TABLE_LAYOUT.active_index_name)
            .key_schema(
                key_part(TABLE_LAYOUT.active_index_partition_key, KeyType::Hash)
                    .map_err(build_error)?,
            )
            .key_schema(
                key_part(TABLE_LAYOUT.active_index_sort_key, KeyType::Range)
                    .map_err(build_error)?,
            )
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::KeysOnly)
                    .build(),
            )
            .build()
            .map_err(build_error)?;
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .set_attribute_definitions(Some(
                [
                    TABLE_LAYOUT.partition_key,
                    TABLE_LAYOUT.sort_key,
                    TABLE_LAYOUT.index_partition_key,
                    TABLE_LAYOUT.index_sort_key,
                    TABLE_LAYOUT.active_index_partition_key,
                    TABLE_LAYOUT.active_index_sort_key,
                ]
                .into_iter()
                .map(attr)
                .collect::<Result<_, _>>()
                .map_err(build_error)?,
            ))
            .key_schema(key_part(TABLE_LAYOUT.partition_key, KeyType::Hash).map_err(build_error)?)
            .key_schema(key_part(TABLE_LAYOUT.sort_key, KeyType::Range).map_err(build_error)?)
            .global_secondary_indexes(index)
            .global_secondary_indexes(active_index)
            .send()
            .await;
        match created {
            Ok(_) => {}
            // Another process created it first.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_in_use_exception()) => {}
            Err(e) => return Err(sdk_error("CreateTable", e)),
        }
        self.wait_until_active().await?;
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name(TABLE_LAYOUT.ttl_attribute)
                    .build()
                    .map_err(build_error)?,
            )
            .send()
            .await
            .map_err(|e| sdk_error("UpdateTimeToLive", e))?;
        Ok(())
    }

    /// Polls DescribeTable: the SDK waiter sleeps at least 20 s.
    async fn wait_until_active(&self) -> Result<(), StoreError> {
        for _ in 0..300 {
            let table = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(|e| sdk_error("DescribeTable", e))?;
            if table.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {} did not become active",
            self.table
        )))
    }

    fn encode(
        &self,
        work: &UnitOfWork,
    ) -> Result<(Vec<TransactWriteItem>, Vec<ItemRef>), StoreError> {
        let mut enc = Encoder::default();
        let mut puts = Vec::with_capacity(work.item_count());
        let mut items = Vec::with_capacity(work.item_count());
        for change in work.changes() {
            let of = change.item();
            match change {
                Change::Snapshot { snapshot, expected } => {
                    let mut item = key(
                        student_pk(&snapshot.student_id),
                        snapshot_sk(&snapshot.course_id),
                    );
                    item.insert("entity".into(), s("snapshot"));
                    item.insert("data".into(), s(enc.json(snapshot, &of)?));
                    puts.push(Conditioned::versioned(item, *expected));
                    items.push(of);
                }
                Change::Thread(t) => {
                    let thread = &t.thread;
                    let mut item = key(thread_pk(&thread.thread_id), THREAD_SK.into());
                    item.insert("entity".into(), s("thread"));
                    item.insert("data".into(), s(enc.json(thread, &of)?));
                    let summary = ThreadSummary::from(thread);
                    item.insert(SUMMARY_ATTRIBUTE.into(), s(enc.json(&summary, &of)?));
                    item.insert("messageCount".into(), n(t.message_count_after()));
                    item.insert(
                        TABLE_LAYOUT.index_partition_key.into(),
                        s(student_pk(&thread.student_id)),
                    );
                    item.insert(TABLE_LAYOUT.index_sort_key.into(), s(list_key(thread)));
                    // A Put replaces the item: a thread that ended or
                    // paused leaves the sparse index by not carrying these.
                    if thread.status == ThreadStatus::Active && thread.mode.expires_when_idle() {
                        item.insert(
                            TABLE_LAYOUT.active_index_partition_key.into(),
                            s(active_pk(thread.mode, active_shard(&thread.thread_id))),
                        );
                        item.insert(
                            TABLE_LAYOUT.active_index_sort_key.into(),
                            s(list_key(thread)),
                        );
                    }
                    if let Some(lease) = &t.lease_after {
                        item.insert(LEASE_TOKEN.into(), s(&lease.token));
                        item.insert(LEASE_UNTIL.into(), n(millis(lease.until)));
                    }
                    let mut put = Conditioned::versioned(item, t.expected);
                    if t.expected != WriteCondition::New {
                        put.also_lease(t.lease_read.as_ref());
                    }
                    puts.push(put);
                    items.push(of);
                    for (seq, message) in t.appended() {
                        let msg_of = ItemRef::Message {
                            thread_id: thread.thread_id.clone(),
                            seq,
                        };
                        let mut item = key(
                            thread_pk(&thread.thread_id),
                            format!("{MSG_PREFIX}{}", seq_key(seq)),
                        );
                        item.insert("entity".into(), s("message"));
                        item.insert("data".into(), s(enc.json(message, &msg_of)?));
                        puts.push(Conditioned::new_item(item));
                        items.push(msg_of);
                    }
                }
                Change::CompleteIdempotency { lock, response } => {
                    enc.json(response, &of)?;
                    let record =
                        IdempotencyRecord::completed(lock, response, self.retention.idempotency);
                    puts.push(Conditioned {
                        item: idempotency_item(&lock.key, &record)?,
                        condition: "#token = :token AND #status = :inprogress".into(),
                        names: HashMap::from([
                            ("#token".into(), "lockToken".into()),
                            ("#status".into(), "status".into()),
                        ]),
                        values: HashMap::from([
                            (":token".into(), s(&lock.token)),
                            (":inprogress".into(), s(RecordStatus::InProgress.as_str())),
                        ]),
                    });
                    items.push(of);
                }
                Change::TurnLog(log) => {
                    let expires = plus(log.created_at, self.retention.turn_logs);
                    let mut item = key(
                        thread_pk(&log.thread_id),
                        format!("{LOG_PREFIX}{}", turn_log_key(log)),
                    );
                    item.insert("entity".into(), s("turnLog"));
                    item.insert("data".into(), s(enc.json(log, &of)?));
                    item.insert("expiresAt".into(), n(millis(expires)));
                    item.insert(TABLE_LAYOUT.ttl_attribute.into(), n(ttl_seconds(expires)));
                    puts.push(Conditioned::new_item(item));
                    items.push(of);
                }
                Change::Lockout { lockout, expected } => {
                    let mut item = key(
                        student_pk(&lockout.student_id),
                        lockout_sk(&lockout.course_id, &lockout.question_id),
                    );
                    item.insert("entity".into(), s("lockout"));
                    item.insert("data".into(), s(enc.json(lockout, &of)?));
                    item.insert("lockedUntil".into(), n(millis(lockout.locked_until)));
                    item.insert(
                        TABLE_LAYOUT.ttl_attribute.into(),
                        n(ttl_seconds(lockout.locked_until)),
                    );
                    puts.push(Conditioned::versioned(item, *expected));
                    items.push(of);
                }
                Change::Profile { profile, expected } => {
                    let mut item = key(student_pk(&profile.student_id), PROFILE_SK.to_owned());
                    item.insert("entity".into(), s("profile"));
                    item.insert("data".into(), s(enc.json(profile, &of)?));
                    puts.push(Conditioned::versioned(item, *expected));
                    items.push(of);
                }
            }
        }
        let writes = puts
            .into_iter()
            .map(|p| {
                Ok(TransactWriteItem::builder()
                    .put(p.into_put(&self.table)?)
                    .build())
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((writes, items))
    }

    async fn get_item(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem", e))?;
        Ok(out.item)
    }

    /// Queries a thread's partition until `want` items are collected or
    /// the partition is exhausted.
    async fn query_thread(
        &self,
        thread_id: &str,
        q: ThreadQuery<'_>,
    ) -> Result<Vec<Item>, StoreError> {
        let mut values = q.values;
        values.insert(":pk".into(), s(thread_pk(thread_id)));
        let filter = q.filter.map(|(expr, filter_values)| {
            values.extend(filter_values);
            expr.to_owned()
        });
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression(format!("PK = :pk AND {}", q.condition))
            .set_filter_expression(filter)
            .set_expression_attribute_values(Some(values))
            .scan_index_forward(q.forward)
            .consistent_read(true);
        query_pages(query, q.start, Some(q.want)).await
    }
}

/// Runs `query` page by page from `start` until `want` items are collected
/// (every match when `None`) or nothing matches past the last page.
async fn query_pages(
    query: QueryFluentBuilder,
    mut start: Option<Item>,
    want: Option<usize>,
) -> Result<Vec<Item>, StoreError> {
    let mut items = Vec::new();
    loop {
        let mut page = query.clone().set_exclusive_start_key(start.take());
        if let Some(want) = want {
            page = page.limit(i32::try_from(want - items.len()).unwrap_or(i32::MAX));
        }
        let out = page.send().await.map_err(|e| sdk_error("Query", e))?;
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key {
            Some(last) if want.is_none_or(|want| items.len() < want) => start = Some(last),
            _ => return Ok(items),
        }
    }
}

/// A query within one thread's partition.
struct ThreadQuery<'a> {
    /// Sort key condition, added to `PK = :pk`.
    condition: &'a str,
    values: HashMap<String, AttributeValue>,
    forward: bool,
    /// Exclusive start (the last item of the previous page).
    start: Option<Item>,
    filter: Option<(&'a str, HashMap<String, AttributeValue>)>,
    want: usize,
}

fn conflict_from(
    e: SdkError<TransactWriteItemsError, impl std::fmt::Debug>,
    items: &[ItemRef],
) -> StoreError {
    if let Some(TransactWriteItemsError::TransactionCanceledException(cancel)) =
        e.as_service_error()
    {
        let failed = cancel
            .cancellation_reasons()
            .iter()
            .enumerate()
            .find(|(_, r)| {
                matches!(
                    r.code(),
                    Some("ConditionalCheckFailed") | Some("TransactionConflict")
                )
            });
        if let Some((index, _)) = failed
            && let Some(item) = items.get(index)
        {
            return StoreError::Conflict(item.clone());
        }
    }
    sdk_error("TransactWriteItems", e)
}

#[async_trait]
impl Committer for DynamoStore {
    async fn commit(&self, work: UnitOfWork) -> Result<(), StoreError> {
        work.check()?;
        if work.is_empty() {
            return Ok(());
        }
        let (writes, items) = self.encode(&work)?;
        self.client
            .transact_write_items()
            .set_transact_items(Some(writes))
            .client_request_token(uuid::Uuid::new_v4().to_string())
            .send()
            .await
            .map_err(|e| conflict_from(e, &items))?;
        Ok(())
    }
}

#[async_trait]
impl SnapshotStore for DynamoStore {
    async fn get_snapshot(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<Option<Versioned<StudentSnapshot>>, StoreError> {
        check_id("student id", student_id)?;
        check_id("course id", course_id)?;
        let of = ItemRef::Snapshot {
            student_id: student_id.to_owned(),
            course_id: course_id.to_owned(),
        };
        self.get_item(key(student_pk(student_id), snapshot_sk(course_id)))
            .await?
            .map(|item| versioned(&item, &of))
            .transpose()
    }
}

fn message_of(thread_id: &str, item: &Item) -> Result<(String, TutorMessage), StoreError> {
    let thread_of = ItemRef::Thread {
        thread_id: thread_id.to_owned(),
    };
    let sk = attr_s(item, TABLE_LAYOUT.sort_key, &thread_of)?;
    let position = sk.strip_prefix(MSG_PREFIX).unwrap_or(sk).to_owned();
    let of = ItemRef::Message {
        thread_id: thread_id.to_owned(),
        seq: position.parse().unwrap_or_default(),
    };
    Ok((position, decode(attr_s(item, "data", &of)?, &of)?))
}

#[async_trait]
impl ThreadStore for DynamoStore {
    async fn get_thread(
        &self,
        thread_id: &str,
        recent: usize,
    ) -> Result<Option<ThreadRecord>, StoreError> {
        check_id("thread id", thread_id)?;
        if recent > 0 {
            check_limit(recent, "recent messages")?;
        }
        // Descending from THREAD: the metadata first, then the latest messages.
        let items = self
            .query_thread(
                thread_id,
                ThreadQuery {
                    condition: "SK BETWEEN :lo AND :hi",
                    values: HashMap::from([
                        (":lo".into(), s(MSG_PREFIX)),
                        (":hi".into(), s(THREAD_SK)),
                    ]),
                    forward: false,
                    start: None,
                    filter: None,
                    want: recent + 1,
                },
            )
            .await?;
        let of = ItemRef::Thread {
            thread_id: thread_id.to_owned(),
        };
        let Some((meta, messages)) = items.split_first() else {
            return Ok(None);
        };
        if attr_s(meta, TABLE_LAYOUT.sort_key, &of)? != THREAD_SK {
            return Ok(None);
        }
        let mut recent_messages = messages
            .iter()
            .map(|m| message_of(thread_id, m).map(|(_, m)| m))
            .collect::<Result<Vec<_>, _>>()?;
        recent_messages.reverse();
        let thread = versioned(meta, &of)?;
        Ok(Some(ThreadRecord {
            thread: thread.value,
            version: thread.version,
            message_count: attr_n(meta, "messageCount", &of)?,
            recent_messages,
            lease: lease_of(meta, &of)?,
        }))
    }

    async fn list_messages(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
    ) -> Result<Page<TutorMessage>, StoreError> {
        check_id("thread id", thread_id)?;
        let listing = cursor::messages_listing(thread_id, order);
        let (limit, from) = page.open(&listing)?;
        let start = match from {
            Some(position) => {
                let seq: u64 = position
                    .parse()
                    .map_err(|_| StoreError::InvalidInput("malformed page cursor".into()))?;
                Some(key(
                    thread_pk(thread_id),
                    format!("{MSG_PREFIX}{}", seq_key(seq)),
                ))
            }
            None => None,
        };
        let items = self
            .query_thread(
                thread_id,
                ThreadQuery {
                    condition: "begins_with(SK, :msg)",
                    values: HashMap::from([(":msg".into(), s(MSG_PREFIX))]),
                    forward: order == Order::OldestFirst,
                    start,
                    filter: None,
                    want: limit + 1,
                },
            )
            .await?;
        let rows = items
            .iter()
            .map(|item| message_of(thread_id, item))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(paginate(rows, limit, &listing))
    }

    async fn list_threads(
        &self,
        student_id: &str,
        page: &PageRequest,
    ) -> Result<Page<ThreadSummary>, StoreError> {
        check_id("student id", student_id)?;
        let listing = cursor::threads_listing(student_id);
        let (limit, before) = page.open(&listing)?;
        let mut values = HashMap::from([(":pk".to_owned(), s(student_pk(student_id)))]);
        let condition = match before {
            Some(before) => {
                values.insert(":before".into(), s(before));
                "GSI1PK = :pk AND GSI1SK < :before"
            }
            None => "GSI1PK = :pk",
        };
        let items = self
            .query_index(TABLE_LAYOUT.index_name, condition, values, false, limit + 1)
            .await?;
        let mut rows = Vec::with_capacity(items.len());
        for item in items {
            let of = ItemRef::Thread {
                thread_id: indexed_thread_id(&item)?,
            };
            let position = attr_s(&item, TABLE_LAYOUT.index_sort_key, &of)?.to_owned();
            rows.push((
                position,
                decode(attr_s(&item, SUMMARY_ATTRIBUTE, &of)?, &of)?,
            ));
        }
        Ok(paginate(rows, limit, &listing))
    }

    async fn list_idle_threads(
        &self,
        mode: Mode,
        idle_before: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<IdleThread>, StoreError> {
        let limit = check_idle_listing(mode, limit)?;
        // Each shard's oldest `limit` past `after`; together they hold the
        // oldest `limit` of the mode.
        // The sweep runs in the background: one shard after another is fast enough.
        let mut idle = Vec::new();
        for shard in 0..ACTIVE_INDEX_SHARDS {
            idle.extend(
                self.idle_in_shard(active_pk(mode, shard), &idle_before, after, limit)
                    .await?,
            );
        }
        idle.sort_by(|a, b| a.position.cmp(&b.position));
        idle.truncate(limit);
        Ok(idle)
    }

    fn thread_leases(&self) -> Option<&dyn ThreadLeases> {
        Some(self)
    }
}

#[async_trait]
impl ThreadLeases for DynamoStore {
    async fn take_thread_lease(
        &self,
        thread_id: &str,
        student_id: &str,
        lease: &ThreadLease,
        now: DateTime<Utc>,
    ) -> Result<LeaseTake, StoreError> {
        check_id("thread id", thread_id)?;
        check_id("student id", student_id)?;
        let of = ItemRef::Thread {
            thread_id: thread_id.to_owned(),
        };
        let owner = student_pk(student_id);
        // A lease can lapse or be released between the failed update and
        // the look that explains it: then the update is simply tried again.
        for _ in 0..3 {
            let update = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(thread_pk(thread_id), THREAD_SK.into())))
                .update_expression("SET #leaseToken = :token, #leaseUntil = :until")
                // The owner is the threads index's partition: a stranger's
                // turn cannot hold someone else's thread.
                .condition_expression(
                    "attribute_exists(PK) AND #owner = :owner \
                     AND (attribute_not_exists(#leaseToken) OR #leaseUntil <= :now)",
                )
                .expression_attribute_names("#owner", TABLE_LAYOUT.index_partition_key)
                .expression_attribute_names("#leaseToken", LEASE_TOKEN)
                .expression_attribute_names("#leaseUntil", LEASE_UNTIL)
                .expression_attribute_values(":owner", s(&owner))
                .expression_attribute_values(":token", s(&lease.token))
                .expression_attribute_values(":until", n(millis(lease.until)))
                .expression_attribute_values(":now", n(millis(now)))
                // What blocked the update comes back with its refusal.
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            let blocking = match update {
                Ok(_) => return Ok(LeaseTake::Taken),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
                {
                    match e.into_service_error() {
                        UpdateItemError::ConditionalCheckFailedException(failed) => failed.item,
                        _ => None,
                    }
                }
                Err(e) => return Err(sdk_error("UpdateItem", e)),
            };
            // No item came back: no thread (or an emulator that does not
            // return one), looked at to be sure.
            let blocking = match blocking {
                Some(item) => Some(item),
                None => {
                    self.get_item(key(thread_pk(thread_id), THREAD_SK.into()))
                        .await?
                }
            };
            let Some(item) = blocking else {
                return Ok(LeaseTake::NoThread);
            };
            if attr_s(&item, TABLE_LAYOUT.index_partition_key, &of)? != owner {
                return Ok(LeaseTake::NoThread);
            }
            if let Some(held) = lease_of(&item, &of)?.filter(|l| !l.lapsed(now)) {
                return Ok(LeaseTake::Held { until: held.until });
            }
        }
        Err(StoreError::Conflict(of))
    }

    async fn release_thread_lease(&self, thread_id: &str, token: &str) -> Result<(), StoreError> {
        check_id("thread id", thread_id)?;
        let released = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(thread_pk(thread_id), THREAD_SK.into())))
            .update_expression("REMOVE #leaseToken, #leaseUntil")
            .condition_expression("#leaseToken = :token")
            .expression_attribute_names("#leaseToken", LEASE_TOKEN)
            .expression_attribute_names("#leaseUntil", LEASE_UNTIL)
            .expression_attribute_values(":token", s(token))
            .send()
            .await;
        match released {
            Ok(_) => Ok(()),
            // Taken over after it lapsed, or already gone.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(sdk_error("UpdateItem", e)),
        }
    }
}

impl DynamoStore {
    /// Up to `want` items of `index` matching `condition`, in index order
    /// (`forward`: ascending), read page by page.
    async fn query_index(
        &self,
        index: &str,
        condition: &str,
        values: HashMap<String, AttributeValue>,
        forward: bool,
        want: usize,
    ) -> Result<Vec<Item>, StoreError> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(index)
            .key_condition_expression(condition)
            .set_expression_attribute_values(Some(values))
            .scan_index_forward(forward);
        query_pages(query, None, Some(want)).await
    }

    /// Up to `limit` entries of one active-index partition updated before
    /// `idle_before` and positioned after `after`, oldest first.
    async fn idle_in_shard(
        &self,
        partition: String,
        idle_before: &DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<IdleThread>, StoreError> {
        let mut values = HashMap::from([
            (":pk".to_owned(), s(partition)),
            (":before".to_owned(), s(time_key(*idle_before))),
        ]);
        // One sort-key condition per query: BETWEEN is inclusive, so the
        // entry at `after` itself is dropped below.
        let condition = match after {
            Some(after) => {
                values.insert(":after".into(), s(after));
                "GSI2PK = :pk AND GSI2SK BETWEEN :after AND :before"
            }
            None => "GSI2PK = :pk AND GSI2SK < :before",
        };
        let items = self
            .query_index(
                TABLE_LAYOUT.active_index_name,
                condition,
                values,
                true,
                limit + 1,
            )
            .await?;
        let mut idle = Vec::with_capacity(items.len());
        for item in items {
            let thread_id = indexed_thread_id(&item)?;
            let of = ItemRef::Thread {
                thread_id: thread_id.clone(),
            };
            let position = attr_s(&item, TABLE_LAYOUT.active_index_sort_key, &of)?.to_owned();
            if Some(position.as_str()) != after {
                idle.push(IdleThread {
                    thread_id,
                    position,
                });
            }
        }
        idle.truncate(limit);
        Ok(idle)
    }
}

#[async_trait]
impl IdempotencyStore for DynamoStore {
    async fn begin_idempotency(
        &self,
        key: &IdempotencyKey,
        payload_hash: &str,
        now: DateTime<Utc>,
        lock_for: Duration,
    ) -> Result<Begin, StoreError> {
        idempotency::check_lock_duration(lock_for)?;
        let of = key.item_ref();
        // A record can vanish (expiry, release) between the failed put and
        // the read that explains it: then the put is simply tried again.
        for _ in 0..3 {
            let lock = idempotency::new_lock(key, payload_hash, now)?;
            let record =
                IdempotencyRecord::in_progress(&lock, lock_for, self.retention.idempotency);
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(idempotency_item(key, &record)?))
                .condition_expression(
                    "attribute_not_exists(PK) OR #expires <= :now \
                     OR (#status = :inprogress AND #lockExpires <= :now)",
                )
                .expression_attribute_names("#expires", "expiresAt")
                .expression_attribute_names("#status", "status")
                .expression_attribute_names("#lockExpires", "lockExpiresAt")
                .expression_attribute_values(":now", n(millis(now)))
                .expression_attribute_values(":inprogress", s(RecordStatus::InProgress.as_str()))
                .send()
                .await;
            match put {
                Ok(_) => return Ok(Begin::Acquired(lock)),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) => {}
                Err(e) => return Err(sdk_error("PutItem", e)),
            }
            let Some(item) = self.get_item(key_of_idempotency(key)).await? else {
                continue;
            };
            let existing = idempotency::resolve(&read_idempotency(&item, &of)?, payload_hash, now);
            if existing != Existing::Vacant
                && let Some(answer) = idempotency::outcome(key, existing)
            {
                return answer;
            }
        }
        Err(StoreError::Conflict(of))
    }

    async fn release_idempotency(&self, lock: &IdempotencyLock) -> Result<(), StoreError> {
        let deleted = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key_of_idempotency(&lock.key)))
            .condition_expression("#token = :token AND #status = :inprogress")
            .expression_attribute_names("#token", "lockToken")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":token", s(&lock.token))
            .expression_attribute_values(":inprogress", s(RecordStatus::InProgress.as_str()))
            .send()
            .await;
        match deleted {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(sdk_error("DeleteItem", e)),
        }
    }
}

#[async_trait]
impl TurnLogStore for DynamoStore {
    async fn list_turn_logs(
        &self,
        thread_id: &str,
        order: Order,
        page: &PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<TurnLog>, StoreError> {
        check_id("thread id", thread_id)?;
        let listing = cursor::turn_logs_listing(thread_id, order);
        let (limit, from) = page.open(&listing)?;
        let start =
            from.map(|position| key(thread_pk(thread_id), format!("{LOG_PREFIX}{position}")));
        // TTL deletes late: expired logs are filtered out here.
        let items = self
            .query_thread(
                thread_id,
                ThreadQuery {
                    condition: "begins_with(SK, :log)",
                    values: HashMap::from([(":log".into(), s(LOG_PREFIX))]),
                    forward: order == Order::OldestFirst,
                    start,
                    filter: Some((
                        "expiresAt > :now",
                        HashMap::from([(":now".into(), n(millis(now)))]),
                    )),
                    want: limit + 1,
                },
            )
            .await?;
        let rows = items
            .iter()
            .map(|item| {
                let of = ItemRef::Thread {
                    thread_id: thread_id.to_owned(),
                };
                let sk = attr_s(item, TABLE_LAYOUT.sort_key, &of)?;
                let position = sk.strip_prefix(LOG_PREFIX).unwrap_or(sk).to_owned();
                let of = ItemRef::TurnLog {
                    thread_id: thread_id.to_owned(),
                    turn_id: position.clone(),
                };
                Ok((position, decode(attr_s(item, "data", &of)?, &of)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(rows, limit, &listing))
    }
}

#[async_trait]
impl LockoutStore for DynamoStore {
    async fn list_lockouts(
        &self,
        student_id: &str,
        course_id: &str,
    ) -> Result<BTreeMap<String, Versioned<ExamLockout>>, StoreError> {
        check_id("student id", student_id)?;
        check_id("course id", course_id)?;
        let values = HashMap::from([
            (":pk".to_owned(), s(student_pk(student_id))),
            (":lockouts".to_owned(), s(lockout_sk(course_id, ""))),
        ]);
        let of = ItemRef::Lockout {
            student_id: student_id.to_owned(),
            course_id: course_id.to_owned(),
            question_id: String::new(),
        };
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND begins_with(SK, :lockouts)")
            .set_expression_attribute_values(Some(values))
            .consistent_read(true);
        let mut found = BTreeMap::new();
        for item in query_pages(query, None, None).await? {
            let lockout: Versioned<ExamLockout> = versioned(&item, &of)?;
            // The prefix also matches a course whose id continues
            // after a `#`: its lockouts are not this course's.
            if lockout.value.course_id == course_id {
                found.insert(lockout.value.question_id.clone(), lockout);
            }
        }
        Ok(found)
    }
}

#[async_trait]
impl ProfileStore for DynamoStore {
    async fn get_profile(
        &self,
        student_id: &str,
    ) -> Result<Option<Versioned<SavedProfile>>, StoreError> {
        check_id("student id", student_id)?;
        let of = ItemRef::Profile {
            student_id: student_id.to_owned(),
        };
        self.get_item(key(student_pk(student_id), PROFILE_SK.to_owned()))
            .await?
            .map(|item| versioned(&item, &of))
            .transpose()
    }
}
