//! Lifecycle work: claimed, best-effort, idempotent and bounded jobs (see design.md).

#[cfg(feature = "ssr")]
pub mod claim;
#[cfg(feature = "ssr")]
pub mod prune;

/// Retention when the setting is missing or invalid.
pub const DEFAULT_RETENTION_DAYS: u32 = 180;
/// Allowed retention range, in days.
pub const RETENTION_DAYS_RANGE: std::ops::RangeInclusive<u32> = 1..=3650;

/// Reads the `retention_days` setting: 1–3,650, and 180 when missing or invalid.
pub fn retention_days_or_default(stored: Option<&str>) -> u32 {
    stored
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|d| RETENTION_DAYS_RANGE.contains(d))
        .unwrap_or(DEFAULT_RETENTION_DAYS)
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
    fn retention_bounds_1_and_3650_are_honoured() {
        assert_eq!(retention_days_or_default(Some("1")), 1);
        assert_eq!(retention_days_or_default(Some("3650")), 3650);
        assert_eq!(retention_days_or_default(Some(" 30 ")), 30);
    }
}
