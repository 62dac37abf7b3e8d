//! The CSV export: one query per page of 200 rows (keyset on (created_at, id)), each page
//! written to the response as soon as it is read, so memory stays flat for any table size. When
//! the client goes away the response body is dropped and with it the stream: no further query.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::Stream;
use sqlx::PgPool;

use super::{db, neutralise_formula, Cursor};

/// Rows per export query.
pub const EXPORT_PAGE_ROWS: i64 = 200;
/// The header row.
pub const HEADER: [&str; 5] = ["id", "received_at", "name", "email", "message"];

/// Counts export page queries (a metric; tests use it to prove the paging).
#[derive(Debug, Default)]
pub struct ExportMetrics {
    pub page_queries: AtomicU64,
    pub rows: AtomicU64,
}

fn csv_chunk(write: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>) -> Result<Bytes, std::io::Error> {
    // RFC 4180: every field quoted when needed, CRLF line ends.
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::with_capacity(64 * 1024));
    write(&mut w).map_err(std::io::Error::other)?;
    w.into_inner().map(Bytes::from).map_err(|e| std::io::Error::other(e.to_string()))
}

enum State {
    Header,
    Page(Option<Cursor>),
    Done,
}

/// The export as a stream of byte chunks: the (optional) BOM and header, then one chunk per page.
pub fn stream(pool: PgPool, search: Option<String>, bom: bool, metrics: Arc<ExportMetrics>) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    futures::stream::unfold(State::Header, move |state| {
        let (pool, search, metrics) = (pool.clone(), search.clone(), metrics.clone());
        async move {
            match state {
                State::Done => None,
                State::Header => {
                    let chunk = csv_chunk(|w| w.write_record(HEADER)).map(|b| {
                        if bom {
                            let mut with_bom = Vec::with_capacity(b.len() + 3);
                            with_bom.extend_from_slice("\u{feff}".as_bytes());
                            with_bom.extend_from_slice(&b);
                            Bytes::from(with_bom)
                        } else {
                            b
                        }
                    });
                    Some((chunk, State::Page(None)))
                }
                State::Page(after) => {
                    metrics.page_queries.fetch_add(1, Ordering::Relaxed);
                    let rows = match db::export_page(&pool, search.as_deref(), after, EXPORT_PAGE_ROWS).await {
                        Ok(rows) => rows,
                        Err(e) => {
                            // Headers are sent already: the only honest signal left is to abort
                            // the body, so the download fails instead of looking complete.
                            tracing::error!(error = %e, "inquiry export failed");
                            return Some((Err(std::io::Error::other("export query failed")), State::Done));
                        }
                    };
                    if rows.is_empty() {
                        return None;
                    }
                    metrics.rows.fetch_add(rows.len() as u64, Ordering::Relaxed);
                    ::metrics::counter!("ebb_export_rows_total").increment(rows.len() as u64);
                    let last = rows.last().map(|r| Cursor { created_at: r.created_at, id: r.id });
                    let full = rows.len() as i64 == EXPORT_PAGE_ROWS;
                    let chunk = csv_chunk(|w| {
                        for r in &rows {
                            let received = r.created_at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
                            w.write_record([
                                r.id.to_string().as_str(),
                                received.as_str(),
                                &neutralise_formula(&r.name),
                                &neutralise_formula(&r.email),
                                &neutralise_formula(&r.message),
                            ])?;
                        }
                        Ok(())
                    });
                    Some((chunk, if full { State::Page(last) } else { State::Done }))
                }
            }
        }
    })
}
