//! The stores: one conformance suite run against the embedded SQLite store
//! and DynamoDB (moto server in scripts/test.sh, or real AWS), concurrent
//! writers, the content bundle on S3 and its cache, and the store built
//! from the configuration.

#[path = "../store_support/mod.rs"]
mod store_support;

mod concurrency;
mod conformance;
mod content;
mod factory;
