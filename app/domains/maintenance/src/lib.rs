//! Lifecycle work: claimed, best-effort, idempotent and bounded jobs (see design.md).

pub mod api;
#[cfg(feature = "ssr")]
pub mod personal;
#[cfg(feature = "ssr")]
pub mod prune;
#[cfg(feature = "ssr")]
pub mod retention;
pub(crate) mod texts;
pub mod ui;

use serde::{Deserialize, Serialize};

/// Retention when the setting is missing or invalid.
pub const DEFAULT_RETENTION_DAYS: u32 = 180;
/// Allowed retention range, in days.
pub const RETENTION_DAYS_RANGE: std::ops::RangeInclusive<u32> = 1..=3650;

/// What the settings page says when a retention value is out of range.
pub const RETENTION_DAYS_MESSAGE: &str = "Enter a whole number of days from 1 to 3,650 (ten years).";

/// Validates retention typed by an admin (browser and server): 1–3,650 whole days.
pub fn parse_retention_input(raw: &str) -> Result<u32, String> {
    raw.trim().parse::<u32>().ok().filter(|d| RETENTION_DAYS_RANGE.contains(d)).ok_or_else(|| RETENTION_DAYS_MESSAGE.to_string())
}

/// The dry run shown before saving a retention value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionPreview {
    pub current_days: u32,
    pub days: u32,
    /// Inquiries the next prune would delete with `days`.
    pub would_delete: i64,
}

/// Reads the `retention_days` setting: 1–3,650, and 180 when missing or invalid.
pub fn retention_days_or_default(stored: Option<&str>) -> u32 {
    stored.and_then(|s| s.trim().parse::<u32>().ok()).filter(|d| RETENTION_DAYS_RANGE.contains(d)).unwrap_or(DEFAULT_RETENTION_DAYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_zero_too_large_or_garbage_retention_means_180_days() {
        for stored in [None, Some("0"), Some("3651"), Some("abc"), Some("-5"), Some(""), Some("1.5")] {
            assert_eq!(retention_days_or_default(stored), 180, "{stored:?}");
        }
    }

    #[test]
    fn retention_typed_by_an_admin_must_be_1_to_3650_whole_days() {
        assert_eq!(parse_retention_input("1"), Ok(1));
        assert_eq!(parse_retention_input(" 3650 "), Ok(3650));
        for bad in ["0", "3651", "-1", "1.5", "", "ten"] {
            assert_eq!(parse_retention_input(bad), Err(RETENTION_DAYS_MESSAGE.to_string()), "{bad:?}");
        }
    }

    #[test]
    fn retention_bounds_1_and_3650_are_honoured() {
        assert_eq!(retention_days_or_default(Some("1")), 1);
        assert_eq!(retention_days_or_default(Some("3650")), 3650);
        assert_eq!(retention_days_or_default(Some(" 30 ")), 30);
    }
}
