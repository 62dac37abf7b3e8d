//! Times as people read them, the same on every page.

use time::OffsetDateTime;

/// Formats a timestamp for people, in UTC ("2026-11-30 14:05 UTC").
pub fn format_time(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc_to_the_minute() {
        let t = OffsetDateTime::from_unix_timestamp(1_796_047_500).unwrap().to_offset(time::UtcOffset::from_hms(2, 0, 0).unwrap());
        assert_eq!(format_time(t), "2026-11-30 14:05 UTC");
    }
}
