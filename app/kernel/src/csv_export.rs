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
    /// A page of rows as CSV bytes: by default RFC 4180 through the `csv` crate, with the cells
    /// of [`Pages::cells`].
    fn encode(rows: &[Self::Row]) -> Result<Bytes, std::io::Error>
    where
        Self: Sized,
    {
        csv_chunk(|w| {
            for r in rows {
                w.write_record(Self::cells(r))?;
            }
            Ok(())
        })
    }
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
                    let chunk = P::encode(&rows);
                    Some((chunk, if full { State::Page(last) } else { State::Done }))
                }
            }
        }
    })
}

/// `inner` compressed with gzip as it streams (one compressed chunk per input chunk, when the
/// compressor had something to emit; the trailer at the end). An error of `inner` ends the
/// stream with that error: a truncated archive never looks complete.
pub fn gzip<S>(inner: S) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send,
{
    use flate2::{write::GzEncoder, Compression};
    use futures::StreamExt;
    use std::io::Write;

    let encoder = GzEncoder::new(Vec::with_capacity(256 * 1024), Compression::default());
    futures::stream::unfold((Box::pin(inner), Some(encoder)), |(mut inner, mut encoder)| async move {
        loop {
            let enc = encoder.as_mut()?;
            match inner.next().await {
                Some(Ok(chunk)) => {
                    if let Err(e) = enc.write_all(&chunk) {
                        return Some((Err(e), (inner, None)));
                    }
                    let out = std::mem::take(enc.get_mut());
                    if !out.is_empty() {
                        return Some((Ok(Bytes::from(out)), (inner, encoder)));
                    }
                }
                Some(Err(e)) => return Some((Err(e), (inner, None))),
                None => {
                    let last = encoder.take().map(|enc| enc.finish().map(Bytes::from))?;
                    return Some((last, (inner, None)));
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

    #[tokio::test]
    async fn gzip_streams_what_gunzip_reads_back_and_keeps_errors() {
        use futures::{StreamExt, TryStreamExt};
        use std::io::Read;
        let chunks: Vec<Result<Bytes, std::io::Error>> = (0..200).map(|i| Ok(Bytes::from(format!("{i},row {i}\r\n").repeat(50)))).collect();
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.as_ref().unwrap().to_vec()).collect();
        let packed: Vec<Bytes> = gzip(futures::stream::iter(chunks)).try_collect().await.unwrap();
        let mut unpacked = Vec::new();
        flate2::read::GzDecoder::new(&packed.concat()[..]).read_to_end(&mut unpacked).unwrap();
        assert_eq!(unpacked, expected);

        let failing = futures::stream::iter(vec![Ok(Bytes::from_static(b"a,b\r\n")), Err(std::io::Error::other("page query failed"))]);
        let out: Vec<Result<Bytes, std::io::Error>> = gzip(failing).collect().await;
        assert!(out.last().unwrap().is_err(), "the error ends the stream");
        assert!(out.iter().filter(|r| r.is_err()).count() == 1);
    }
}
