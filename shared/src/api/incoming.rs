//! One HTTP request as every entry point (the local server, a Lambda
//! event) hands it to the handler, and the headers the API reads or sets
//! on every route.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Method, Uri};

pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// Set on a response replayed from an earlier request with the same key.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// One HTTP request as every entry point hands it over.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub request_id: String,
    /// Claims an API Gateway JWT authorizer verified, when there is one.
    pub authorizer_claims: Option<BTreeMap<String, String>>,
}
