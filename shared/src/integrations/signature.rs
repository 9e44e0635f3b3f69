//! The signature on webhooks in both directions: `sha256=<hex>` of
//! HMAC-SHA256 over `{timestamp}.{body}`, the unix timestamp in
//! `x-tutorflow-timestamp` and the signature in `x-tutorflow-signature`.
//! Integrations sign the turns they post (checked by `api::webhook`);
//! tutorflow signs its notifications and teacher alerts the same way.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub const TIMESTAMP_HEADER: &str = "x-tutorflow-timestamp";
pub const SIGNATURE_HEADER: &str = "x-tutorflow-signature";

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &[u8], timestamp: i64, body: &[u8]) -> HmacSha256 {
    let mut mac =
        <HmacSha256 as KeyInit>::new_from_slice(secret).expect("HMAC accepts any key length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// `sha256=<hex>` over `{timestamp}.{body}`.
pub fn sign(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let tag = mac(secret, timestamp, body).finalize().into_bytes();
    format!(
        "sha256={}",
        tag.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Whether `tag` (the signature's bytes) signs `{timestamp}.{body}` with
/// `secret`, compared in constant time.
pub fn verify(secret: &[u8], timestamp: i64, body: &[u8], tag: &[u8]) -> bool {
    mac(secret, timestamp, body).verify_slice(tag).is_ok()
}
