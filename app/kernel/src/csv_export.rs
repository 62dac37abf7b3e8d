//! Streamed CSV downloads (the inquiry export, the audit log export, the archive): one query
//! per page of rows (keyset), each page written to the response as soon as it is read, so
//! memory stays flat for any table size. The pages are read by a task of their own on one
//! pooled connection while the response encodes and sends the pages before them; a client that
//! stops reading has that connection back in the pool within [`HOLD`]. When the client goes
//! away the response body is dropped and with it the stream: no further query. Kernel: it knows
//! no domain; each export brings its page query.

use std::future::Future;

use bytes::Bytes;
use futures::Stream;

/// Whether a spreadsheet would run `cell` as a formula: it starts with `=`, `+`, `-`, `@`, a tab
/// or a carriage return.
#[inline]
fn is_formula(cell: &str) -> bool {
    matches!(cell.as_bytes().first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'))
}

/// A cell as written to CSV: text a spreadsheet would run as a formula (leading `=`, `+`, `-`,
/// `@`, tab or carriage return) gets a leading apostrophe, so it is shown, not executed.
#[inline]
pub fn neutralise_formula(cell: &str) -> std::borrow::Cow<'_, str> {
    if is_formula(cell) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// What writing a cell gives: an error only if the writer fails.
pub type Written = csv::Result<()>;

/// One row being written: its cells in order, straight into the page's CSV writer (no owned
/// copy of a cell unless it must change).
pub struct RowWriter<'a> {
    w: &'a mut csv::Writer<Vec<u8>>,
    scratch: &'a mut Vec<u8>,
}

impl RowWriter<'_> {
    /// Text from outside (a visitor's, an admin's): neutralised against formulas.
    #[inline]
    pub fn text(&mut self, cell: &str) -> Written {
        if is_formula(cell) {
            self.scratch.clear();
            self.scratch.push(b'\'');
            self.scratch.extend_from_slice(cell.as_bytes());
            self.w.write_field(&*self.scratch)
        } else {
            self.w.write_field(cell)
        }
    }

    /// A value Ebb made (a kind, a hash, a number), written as it is.
    #[inline]
    pub fn plain(&mut self, cell: impl AsRef<[u8]>) -> Written {
        self.w.write_field(cell)
    }

    /// A number.
    #[inline]
    pub fn int(&mut self, n: i64) -> Written {
        use std::io::Write;
        self.scratch.clear();
        let _ = write!(self.scratch, "{n}");
        self.w.write_field(&*self.scratch)
    }

    /// An id, hyphenated and lower case.
    #[inline]
    pub fn uuid(&mut self, id: uuid::Uuid) -> Written {
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        self.w.write_field(id.hyphenated().encode_lower(&mut buf))
    }

    /// A time in RFC 3339 (empty for one RFC 3339 cannot write: a year past 9999).
    #[inline]
    pub fn time(&mut self, at: time::OffsetDateTime) -> Written {
        self.scratch.clear();
        if at.format_into(&mut *self.scratch, &time::format_description::well_known::Rfc3339).is_err() {
            self.scratch.clear();
        }
        self.w.write_field(&*self.scratch)
    }
}

/// Bytes reserved per row of a page (a page rarely grows its buffer).
const ROW_BYTES: usize = 512;

fn csv_chunk(rows: usize, write: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>) -> Result<Bytes, std::io::Error> {
    // RFC 4180: every field quoted when needed, CRLF line ends.
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::with_capacity(rows.max(1) * ROW_BYTES));
    write(&mut w).map_err(std::io::Error::other)?;
    w.into_inner().map(Bytes::from).map_err(|e| std::io::Error::other(e.to_string()))
}

/// How one export reads and writes its rows.
pub trait Pages: Send + Sync + 'static {
    type Row: Send;
    type Cursor: Clone + Send + Sync;
    /// Rows per query.
    const PAGE_ROWS: i64;
    fn header(&self) -> &'static [&'static str];
    /// Up to [`Pages::PAGE_ROWS`] rows after `after`, read on `conn`.
    fn page(&self, conn: &mut sqlx::PgConnection, after: Option<Self::Cursor>) -> impl Future<Output = Result<Vec<Self::Row>, sqlx::Error>> + Send;
    fn cursor(row: &Self::Row) -> Self::Cursor;
    /// The row's cells, in the header's order (text from outside through [`RowWriter::text`]).
    fn write_row(row: &Self::Row, out: &mut RowWriter<'_>) -> Written;
    /// A page of rows as CSV bytes: by default RFC 4180 through the `csv` crate, with the cells
    /// of [`Pages::write_row`].
    fn encode(rows: &[Self::Row]) -> Result<Bytes, std::io::Error>
    where
        Self: Sized,
    {
        let mut scratch = Vec::with_capacity(256);
        csv_chunk(rows.len(), |w| {
            for r in rows {
                Self::write_row(r, &mut RowWriter { w, scratch: &mut scratch })?;
                // Ends the record.
                w.write_record(None::<&[u8]>)?;
            }
            Ok(())
        })
    }
    /// Called after each page is read (metrics).
    fn on_page(&self, _rows: usize) {}
    /// A name for the log when a page query fails.
    fn name(&self) -> &'static str;
}

/// How long the page reader keeps its connection while the response has no room for the next
/// page: a client reading at full speed makes room within a page's time; one that stalls longer
/// gives the connection back to the pool (the reader takes one again when there is room).
pub const HOLD: std::time::Duration = std::time::Duration::from_millis(50);

/// Pages read ahead of the one being sent (the reader's channel): what the response holds.
const AHEAD: usize = 1;

/// The export as a stream of byte chunks: the (optional) BOM and header, then one chunk per page.
/// The pages are read by a task started here (on `pool`), one ahead of the response, which
/// encodes each page as it sends it: reading and sending overlap. A failed page query after the
/// headers were sent aborts the body (the download fails instead of looking complete).
pub fn stream<P: Pages>(pool: sqlx::PgPool, pages: P, bom: bool) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    use futures::StreamExt;
    let header = csv_chunk(1, |w| w.write_record(pages.header())).map(|b| {
        if bom {
            let mut with_bom = Vec::with_capacity(b.len() + 3);
            with_bom.extend_from_slice("\u{feff}".as_bytes());
            with_bom.extend_from_slice(&b);
            Bytes::from(with_bom)
        } else {
            b
        }
    });
    let (tx, rx) = futures::channel::mpsc::channel::<Result<Vec<P::Row>, ()>>(AHEAD);
    tokio::spawn(read_pages(pool, pages, tx));
    futures::stream::once(std::future::ready(header)).chain(rx.map(|page| match page {
        Ok(rows) => P::encode(&rows),
        Err(()) => Err(std::io::Error::other("export query failed")),
    }))
}

/// Waits until `tx` has room for one more item (an error: the receiver is gone).
fn ready<T>(tx: &mut futures::channel::mpsc::Sender<T>) -> impl Future<Output = Result<(), futures::channel::mpsc::SendError>> + '_ {
    std::future::poll_fn(move |cx| tx.poll_ready(cx))
}

/// Reads `pages` in order into `tx` until the last (short) page, a failed query (sent as
/// `Err`, then the end) or the response going away (`tx` closed).
async fn read_pages<P: Pages>(pool: sqlx::PgPool, pages: P, mut tx: futures::channel::mpsc::Sender<Result<Vec<P::Row>, ()>>) {
    use futures::SinkExt;
    let mut conn: Option<sqlx::pool::PoolConnection<sqlx::Postgres>> = None;
    let mut after = None;
    loop {
        let read = async {
            let c = match conn.as_mut() {
                Some(c) => c,
                None => conn.insert(pool.acquire().await?),
            };
            pages.page(c, after.clone()).await
        };
        let rows = match read.await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, export = pages.name(), "CSV export failed");
                let _ = tx.send(Err(())).await;
                return;
            }
        };
        if rows.is_empty() {
            return;
        }
        pages.on_page(rows.len());
        let full = rows.len() as i64 == P::PAGE_ROWS;
        after = rows.last().map(P::cursor);
        // Room for the page: at once while the client keeps up; after a stall, with the
        // connection given back first.
        let room = match tokio::time::timeout(HOLD, ready(&mut tx)).await {
            Ok(room) => room,
            Err(_stalled) => {
                conn = None;
                ready(&mut tx).await
            }
        };
        if room.is_err() || tx.start_send(Ok(rows)).is_err() || !full {
            return;
        }
    }
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

    #[test]
    fn rows_are_rfc4180_with_outside_text_neutralised() {
        let mut scratch = Vec::new();
        let id = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let at = time::macros::datetime!(2026-12-04 06:30:01.5 UTC);
        let bytes = csv_chunk(2, |w| {
            for text in ["=1+1", "a, \"b\"\nc"] {
                {
                    let mut row = RowWriter { w: &mut *w, scratch: &mut scratch };
                    row.uuid(id)?;
                    row.time(at)?;
                    row.text(text)?;
                    row.plain("-made-by-ebb")?;
                    row.int(-42)?;
                }
                w.write_record(None::<&[u8]>)?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            "01234567-89ab-cdef-0123-456789abcdef,2026-12-04T06:30:01.5Z,'=1+1,-made-by-ebb,-42\r\n\
             01234567-89ab-cdef-0123-456789abcdef,2026-12-04T06:30:01.5Z,\"a, \"\"b\"\"\nc\",-made-by-ebb,-42\r\n"
        );
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
