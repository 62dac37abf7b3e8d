//! The inquiry CSV export: pages of 200 rows (keyset on (created_at, id)) through the shared
//! streamed CSV writer ([`kernel::csv_export`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::Stream;
use sqlx::PgPool;

use super::{db, Cursor};
use kernel::csv_export::{Pages, RowWriter};

/// Rows per export query.
pub const EXPORT_PAGE_ROWS: i64 = 200;
/// The header row.
pub const HEADER: [&str; 5] = ["id", "received_at", "name", "email", "message"];

/// Counts export page queries (a metric; tests use it to prove the paging).
#[derive(Debug, Default)]
pub struct ExportMetrics {
    pub page_queries: AtomicU64,
    pub rows: AtomicU64,
    /// Exports whose stream is alive (ended, finished or dropped with its client: gone).
    pub open: AtomicU64,
}

impl kernel::state::Part for ExportMetrics {
    type Slot = kernel::state::slot::InboxExport;
}

struct Inquiries {
    search: Option<String>,
    metrics: Arc<ExportMetrics>,
}

impl Pages for Inquiries {
    type Row = db::ExportRow;
    type Cursor = Cursor;
    const PAGE_ROWS: i64 = EXPORT_PAGE_ROWS;

    fn header(&self) -> &'static [&'static str] {
        &HEADER
    }

    async fn page(&self, conn: &mut sqlx::PgConnection, after: Option<Cursor>) -> Result<Vec<db::ExportRow>, sqlx::Error> {
        self.metrics.page_queries.fetch_add(1, Ordering::Relaxed);
        db::export_page(conn, self.search.as_deref(), after, EXPORT_PAGE_ROWS).await
    }

    fn cursor(r: &db::ExportRow) -> Cursor {
        Cursor { created_at: r.created_at, id: r.id }
    }

    fn write_row(r: &db::ExportRow, out: &mut RowWriter<'_>) -> kernel::csv_export::Written {
        out.uuid(r.id)?;
        out.time(r.created_at)?;
        out.text(&r.name)?;
        out.text(&r.email)?;
        out.text(&r.message)
    }

    fn on_page(&self, rows: usize) {
        self.metrics.rows.fetch_add(rows as u64, Ordering::Relaxed);
        ::metrics::counter!("ebb_export_rows_total").increment(rows as u64);
    }

    fn name(&self) -> &'static str {
        "inquiries"
    }
}

/// The export as a stream of byte chunks: the (optional) BOM and header, then one chunk per page.
pub fn stream(pool: PgPool, search: Option<String>, bom: bool, metrics: Arc<ExportMetrics>) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    metrics.open.fetch_add(1, Ordering::SeqCst);
    kernel::csv_export::stream(pool, Inquiries { search, metrics }, bom)
}

impl Drop for Inquiries {
    fn drop(&mut self) {
        self.metrics.open.fetch_sub(1, Ordering::SeqCst);
    }
}
