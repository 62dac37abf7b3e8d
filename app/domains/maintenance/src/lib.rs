//! Lifecycle work: claimed, best-effort, idempotent and bounded jobs (see design.md).

pub mod api;
pub(crate) mod texts;
pub mod ui;

use serde::{Deserialize, Serialize};

/// The inquiries' retention setting (its words and bounds are `common::retention`'s).
pub use common::retention::{parse_retention_input, retention_days_or_default, DEFAULT_RETENTION_DAYS, RETENTION_DAYS_MESSAGE, RETENTION_DAYS_RANGE};

/// The dry run shown before saving a retention value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionPreview {
    pub current_days: u32,
    pub days: u32,
    /// Inquiries the next prune would delete with `days`.
    pub would_delete: i64,
}
