//! Streamed CSV downloads (the inquiry export, the audit log export): one query per page of
//! rows (keyset), each page written to the response as soon as it is read, so memory stays flat
//! for any table size. When the client goes away the response body is dropped and with it the
//! stream: no further query. Kernel: it knows no domain; each export brings its page query.

use std::future::Future;

use bytes::Bytes;
use futures::Stream;

/// A cell as written to CSV: text a spreadsheet would run as a formula (leading `=`, `+`, `-`,
/// `@`, tab or carriage return) gets a leading apostrophe, so it is shown, not executed.
pub fn neutralise_formula(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => std::borrow::Cow::Owned(format!("'{cell}")),
        _ => std::borrow::Cow::Borrowed(cell),
    }
}

fn csv_chunk(write: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>) -> Result<Bytes, std::io::Error> {
    // RFC 4180: every field quoted when needed, CRLF line ends.
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::with_capacity(64 * 1024));
    write(&mut w).map_err(std::io::Error::other)?;
    w.into_inner().map(Bytes::from).map_err(|e| std::io::Error::other(e.to_string()))
}

enum State<C> {
    Header,
    Page(Option<C>),
    Done,
}

/// How one export reads and writes its rows.
pub trait Pages: Send + Sync + 'static {
    type Row: Send;
    type Cursor: Clone + Send + Sync;
    /// Rows per query.
    const PAGE_ROWS: i64;
    fn header(&self) -> &'static [&'static str];
    /// Up to [`Pages::PAGE_ROWS`] rows after `after`.
    fn page(&self, after: Option<Self::Cursor>) -> impl Future<Output = Result<Vec<Self::Row>, sqlx::Error>> + Send;
    fn cursor(row: &Self::Row) -> Self::Cursor;
    /// The row's cells (pass text through [`neutralise_formula`]).
    fn cells(row: &Self::Row) -> Vec<String>;
    /// Called after each page is read (metrics).
    fn on_page(&self, _rows: usize) {}
    /// A name for the log when a page query fails.
    fn name(&self) -> &'static str;
}

/// The export as a stream of byte chunks: the (optional) BOM and header, then one chunk per page.
/// A failed page query after the headers were sent aborts the body (the download fails instead
/// of looking complete).
pub fn stream<P: Pages>(pages: P, bom: bool) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let pages = std::sync::Arc::new(pages);
    futures::stream::unfold(State::<P::Cursor>::Header, move |state| {
        let pages = pages.clone();
        async move {
            match state {
                State::Done => None,
                State::Header => {
                    let chunk = csv_chunk(|w| w.write_record(pages.header())).map(|b| {
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
                    let rows = match pages.page(after).await {
                        Ok(rows) => rows,
                        Err(e) => {
                            tracing::error!(error = %e, export = pages.name(), "CSV export failed");
                            return Some((Err(std::io::Error::other("export query failed")), State::Done));
                        }
                    };
                    if rows.is_empty() {
                        return None;
                    }
                    pages.on_page(rows.len());
                    let last = rows.last().map(P::cursor);
                    let full = rows.len() as i64 == P::PAGE_ROWS;
                    let chunk = csv_chunk(|w| {
                        for r in &rows {
                            w.write_record(P::cells(r))?;
                        }
                        Ok(())
                    });
                    Some((chunk, if full { State::Page(last) } else { State::Done }))
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_text_is_not() {
        for f in ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(neutralise_formula(f), format!("'{f}"));
        }
        assert_eq!(neutralise_formula("Hello = world"), "Hello = world");
        assert_eq!(neutralise_formula(""), "");
    }
}
