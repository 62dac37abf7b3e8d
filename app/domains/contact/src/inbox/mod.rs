//! The admin inbox: inquiries newest first (keyset pages), search, detail, delete, counts and
//! the streamed CSV export.

pub mod api;
#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod export;
pub mod spam;
pub mod spam_ui;
pub(crate) mod texts;
pub mod ui;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Rows per page in the admin list.
pub const PAGE_SIZE: i64 = 50;
/// Longest search text accepted.
pub const SEARCH_MAX_CHARS: usize = 200;

/// A row of the inbox list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InquirySummary {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    /// The first 160 characters of the message.
    pub preview: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// On legal hold: kept past retention, and cannot be deleted.
    pub held: bool,
}

/// One inquiry in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InquiryDetail {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    pub message: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// On legal hold: kept past retention, and cannot be deleted.
    pub held: bool,
}

/// A page of the list and the cursor of the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InquiryPage {
    pub items: Vec<InquirySummary>,
    pub next: Option<String>,
}

/// How many inquiries there are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxCounts {
    pub total: i64,
    pub last_24h: i64,
    pub last_7d: i64,
}

/// A keyset cursor: the (created_at, id) of the last row shown, as an opaque string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: OffsetDateTime,
    pub id: Uuid,
}

impl Cursor {
    pub fn encode(&self) -> String {
        format!("{}_{}", self.created_at.unix_timestamp_nanos() / 1000, self.id)
    }

    /// `None` for anything [`Cursor::encode`] cannot have produced: not two parts, a number that
    /// overflows, or a time outside what a stored row can have (PostgreSQL refuses some).
    pub fn decode(raw: &str) -> Option<Cursor> {
        let (micros, id) = raw.split_once('_')?;
        let micros: i64 = micros.parse().ok()?;
        let created_at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros).checked_mul(1000)?).ok()?;
        if !(1900..=9999).contains(&created_at.year()) {
            return None;
        }
        Some(Cursor { created_at, id: id.parse().ok()? })
    }
}

/// Normalises a search: control characters (a NUL, which PostgreSQL text cannot hold) become
/// spaces, then trimmed, at most 200 characters, `None` when empty.
pub fn normalise_search(raw: Option<&str>) -> Option<String> {
    let cleaned: String = raw?.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    Some(cleaned.trim().chars().take(SEARCH_MAX_CHARS).collect::<String>()).filter(|s| !s.is_empty())
}

#[cfg(feature = "ssr")]
pub use kernel::csv_export::neutralise_formula;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_to_the_microsecond() {
        let c = Cursor { created_at: OffsetDateTime::from_unix_timestamp_nanos(1_764_460_800_123_456_000).unwrap(), id: Uuid::nil() };
        assert_eq!(Cursor::decode(&c.encode()), Some(c));
        assert_eq!(Cursor::decode("garbage"), None);
        assert_eq!(Cursor::decode("12_not-a-uuid"), None);
        let nil = Uuid::nil();
        for hostile in [format!("{}_{nil}", i128::MAX), format!("{}_{nil}", i64::MAX), format!("-{}_{nil}", i64::MAX), format!("-62135596800000000_{nil}")] {
            assert_eq!(Cursor::decode(&hostile), None, "{hostile}");
        }
    }

    #[test]
    fn searches_are_trimmed_bounded_and_empty_means_none() {
        assert_eq!(normalise_search(Some("  ")), None);
        assert_eq!(normalise_search(Some("\0")), None);
        assert_eq!(normalise_search(Some("ann\0lee")).as_deref(), Some("ann lee"));
        assert_eq!(normalise_search(Some(" ann ")), Some("ann".into()));
        assert_eq!(normalise_search(Some(&"x".repeat(500))).unwrap().chars().count(), 200);
    }
}
