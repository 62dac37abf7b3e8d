//! The file events the admins may be emailed about (a share downloaded completely, a file
//! received through a file request). The events are the shares domain's rows; the email is the
//! contact domain's notifications. Shares implements [`FileEventSource`], the composition root
//! puts it into the state ([`FileEvents`]), and the notifier claims, releases and gives up events
//! through it — never naming shares' tables.

use std::sync::Arc;

use futures::future::BoxFuture;
use sqlx::PgPool;

/// One event to tell the admins about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEvent {
    /// Received through a file request (else: a share downloaded completely).
    pub received: bool,
    pub share_id: i64,
    pub file_name: String,
    /// The owner's id of the event (a delivery's, or the received share's): what a release names.
    pub event_id: i64,
}

/// The owner of file events.
pub trait FileEventSource: Send + Sync {
    /// Marks up to `limit` of each kind of the last day's unnotified events notified, in one
    /// short transaction, and returns them (concurrent claims skip each other's rows).
    fn claim<'a>(&'a self, pool: &'a PgPool, limit: i64) -> BoxFuture<'a, Result<Vec<FileEvent>, sqlx::Error>>;
    /// Unmarks `events` (the message was refused): the next run tries them again.
    fn release<'a>(&'a self, pool: &'a PgPool, events: &'a [FileEvent]) -> BoxFuture<'a, Result<(), sqlx::Error>>;
    /// Marks events still unnotified a day after they happened as handled; returns how many,
    /// and how many of those happened at or after `promised_since` (their email was promised).
    fn give_up_stale<'a>(&'a self, pool: &'a PgPool, promised_since: Option<time::OffsetDateTime>) -> BoxFuture<'a, Result<(i64, i64), sqlx::Error>>;
}

/// The state's handle on the [`FileEventSource`] implementation.
#[derive(Clone)]
pub struct FileEvents(pub Arc<dyn FileEventSource>);

impl crate::state::Part for FileEvents {
    type Slot = crate::state::slot::FileEvents;
}
