//! The audit log's CSV export: the viewer's filtered view, newest first, in pages of 200 rows
//! through the shared streamed CSV writer.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use bytes::Bytes;
use futures::Stream;
use sqlx::PgPool;

use super::{AuditFilter, AuditRow};
use kernel::csv_export::{Pages, RowWriter};

/// Rows per query.
pub const PAGE_ROWS: i64 = 200;
/// Column names: stable identifiers (programs read them).
pub const HEADER: [&str; 9] = ["id", "occurred_at", "kind", "admin_id", "admin_name", "subject_type", "subject_id", "detail", "client_hash"];

struct Events {
    filter: AuditFilter,
    /// Rows written so far (exports count them as they go).
    rows: Option<Arc<AtomicU64>>,
}

/// An event's CSV cells, in [`HEADER`]'s order (text cells neutralised against formulas). The
/// export, the export requests and the archive write the same columns.
pub fn write_row(r: &AuditRow, out: &mut RowWriter<'_>) -> kernel::csv_export::Written {
    out.int(r.id)?;
    out.time(r.occurred_at)?;
    out.plain(&r.kind)?;
    match r.admin_id {
        Some(a) => out.uuid(a)?,
        None => out.plain("")?,
    }
    out.text(r.admin_name.as_deref().unwrap_or(""))?;
    out.text(r.subject_type.as_deref().unwrap_or(""))?;
    out.text(r.subject_id.as_deref().unwrap_or(""))?;
    out.text(r.detail.as_deref().unwrap_or(""))?;
    out.plain(r.client_hash.as_deref().unwrap_or(""))
}

impl Pages for Events {
    type Row = AuditRow;
    type Cursor = (time::OffsetDateTime, i64);
    const PAGE_ROWS: i64 = PAGE_ROWS;

    fn header(&self) -> &'static [&'static str] {
        &HEADER
    }

    async fn page(&self, conn: &mut sqlx::PgConnection, after: Option<Self::Cursor>) -> Result<Vec<AuditRow>, sqlx::Error> {
        super::db::page(conn, &self.filter, after, PAGE_ROWS).await
    }

    fn cursor(r: &AuditRow) -> Self::Cursor {
        (r.occurred_at, r.id)
    }

    fn write_row(r: &AuditRow, out: &mut RowWriter<'_>) -> kernel::csv_export::Written {
        write_row(r, out)
    }

    fn on_page(&self, rows: usize) {
        if let Some(n) = &self.rows {
            n.fetch_add(rows as u64, Ordering::Relaxed);
        }
    }

    fn name(&self) -> &'static str {
        "audit"
    }
}

/// The filtered events as CSV chunks.
pub fn stream(pool: PgPool, filter: AuditFilter, bom: bool) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    kernel::csv_export::stream(pool, Events { filter, rows: None }, bom)
}

/// [`stream`] without a BOM, adding each page's rows to `rows` as it is written.
pub fn counted_stream(pool: PgPool, filter: AuditFilter, rows: Arc<AtomicU64>) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    kernel::csv_export::stream(pool, Events { filter, rows: Some(rows) }, false)
}
