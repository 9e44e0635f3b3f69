//! The IAM actions behind the store's AWS calls, so the infrastructure
//! template grants each function what the code calls and nothing more.
//! shared/tests/api/infra_template.rs holds these lists to the SDK calls in
//! `dynamo.rs` and `s3_content.rs`, and every policy in the template to
//! these lists.

/// Reads on the table: GetItem (snapshots, idempotency records) and Query
/// (a thread with its latest messages, message and turn-log pages, a
/// student's lockouts in a course; on the threads index, a student's
/// threads; on the active-threads index, the idle sweep's list).
pub const DYNAMODB_READS: &[&str] = &["dynamodb:GetItem", "dynamodb:Query"];

/// Writes on the table: PutItem — an idempotency lock, and each Put of a
/// unit of work's TransactWriteItems, which IAM authorises item by item as
/// PutItem (there is no TransactWriteItems action) — DeleteItem
/// (releasing an idempotency lock) and UpdateItem (taking and releasing a
/// turn's lease on its thread).
pub const DYNAMODB_WRITES: &[&str] = &[
    "dynamodb:PutItem",
    "dynamodb:DeleteItem",
    "dynamodb:UpdateItem",
];

/// What the calls that take an idempotency lock need (`begin_idempotency`:
/// a conditional put, then a read of the record that blocked it;
/// `release_idempotency`: a conditional delete): every function serving a
/// mutating route.
pub const IDEMPOTENCY_ACTIONS: &[&str] = &[
    "dynamodb:PutItem",
    "dynamodb:GetItem",
    "dynamodb:DeleteItem",
];

/// What the calls on a turn's lease on its thread need
/// (`take_thread_lease`: a conditional update, then, when the refusal did
/// not bring the item back, a read of it; `release_thread_lease`: a
/// conditional update): every function serving `POST /threads/{id}/turn`.
pub const THREAD_LEASE_ACTIONS: &[&str] = &["dynamodb:UpdateItem", "dynamodb:GetItem"];

/// Reading the published content bundle: GetObject authorises the GetObject
/// and HeadObject calls; ListBucket makes S3 answer a missing manifest with
/// 404 ("nothing published yet") instead of 403.
pub const CONTENT_READS: &[&str] = &["s3:GetObject", "s3:ListBucket"];

/// `tutorflow publish`, run by a person or CI — never by a function.
pub const CONTENT_PUBLISH: &[&str] = &["s3:PutObject"];
