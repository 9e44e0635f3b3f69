//! Opaque page cursors. A cursor names the listing it belongs to, so one
//! taken from another student's (or thread's) listing is refused rather
//! than used as a starting point.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Cursor {
    /// The listing, e.g. `messages|<threadId>|asc`.
    l: String,
    /// Position: the sort key of the last item returned.
    p: String,
}

pub(crate) fn encode(listing: &str, position: &str) -> String {
    let cursor = Cursor {
        l: listing.to_owned(),
        p: position.to_owned(),
    };
    // A two-string struct always serializes.
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
}

/// The position stored in `cursor`, which must belong to `listing`.
pub(crate) fn decode(listing: &str, cursor: &str) -> Result<String, StoreError> {
    let malformed = || StoreError::InvalidInput("malformed page cursor".into());
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| malformed())?;
    let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| malformed())?;
    if cursor.l != listing {
        return Err(StoreError::InvalidInput(
            "page cursor belongs to another listing".into(),
        ));
    }
    Ok(cursor.p)
}

/// A page from up to `limit + 1` rows in listing order, each with its sort
/// position: the extra row only tells that another page follows.
pub(crate) fn paginate<T>(
    mut rows: Vec<(String, T)>,
    limit: usize,
    listing: &str,
) -> super::Page<T> {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = if more {
        rows.last().map(|(position, _)| encode(listing, position))
    } else {
        None
    };
    super::Page {
        items: rows.into_iter().map(|(_, item)| item).collect(),
        next_cursor,
    }
}

/// The position of a message: its sequence number, zero-padded so text
/// order is number order.
pub(crate) fn seq_key(seq: u64) -> String {
    format!("{seq:020}")
}

pub(crate) fn messages_listing(thread_id: &str, order: super::Order) -> String {
    format!("messages|{thread_id}|{}", order.tag())
}

pub(crate) fn turn_logs_listing(thread_id: &str, order: super::Order) -> String {
    format!("turnlogs|{thread_id}|{}", order.tag())
}

pub(crate) fn threads_listing(student_id: &str) -> String {
    format!("threads|{student_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_within_its_listing_only() {
        let c = encode("threads|s1", "2026-01-01T00:00:00.000000Z#t1");
        assert_eq!(
            decode("threads|s1", &c).unwrap(),
            "2026-01-01T00:00:00.000000Z#t1"
        );
        assert!(decode("threads|s2", &c).is_err());
    }

    #[test]
    fn garbage_is_refused() {
        for bad in [
            "",
            "!!!",
            "bm90IGpzb24",
            &URL_SAFE_NO_PAD.encode(b"{\"l\":1}"),
        ] {
            assert!(matches!(
                decode("threads|s1", bad),
                Err(StoreError::InvalidInput(_))
            ));
        }
    }
}
