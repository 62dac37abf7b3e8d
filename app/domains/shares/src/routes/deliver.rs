//! The recipient's download (`POST /s/{token}`) and its resume.
//!
//! A won claim (one conditional UPDATE, so exactly `max_downloads` of any number of concurrent
//! downloads win) starts a *delivery*: a row holding the hash of a receipt that is given to this
//! client only, as an HttpOnly cookie scoped to the share's path, valid until the delivery grace
//! after the claim ends. With it (and from the same client: its keyed address and browser), that
//! client may resume with `Range` (`206`, `Content-Range`, `ETag`/`If-Range`), as `curl -C -` and
//! Chromium's download resume do; nobody else can. What the server's own stream sent is counted
//! per delivery (the shares list's receipts). The GC still deletes the file after the grace.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::{self as shares, lifecycle::claim_delivery, receipts, ShareState};
use axum::{
    body::Body,
    extract::{Path, Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use common::i18n::t;
use futures::{Stream, StreamExt};
use kernel::state::AppState;
use kernel::storage::{BlobStore, ByteStream};
use kernel::token::{hash_token, new_token, well_formed_hash};

/// `POST /s/{token}`: authorise by the token's hash → open the file → claim the share with one
/// autocommit conditional UPDATE → only then stream the file, with a receipt for resuming.
/// Consumed or expired: the share page with 410; unknown: 404. No byte of the file is sent unless
/// this request won a claim — or asks for a range with this share's receipt (a resume). A
/// `Range` never claims (a resume without its receipt gets 403), and neither does a request that
/// carries the receipt of an unfinished delivery of this share: a second click on Download gets
/// the share page, which says how to finish the download that started.
pub async fn download(State(state): State<AppState>, Path(token): Path<String>, req: Request) -> Response {
    // What the recipient reads (a 503's text) in their language.
    let lang = common::i18n::lang_of_headers(req.headers());
    common::i18n::with_lang(lang, async move {
        if req.headers().contains_key(header::RANGE) {
            return resume(&state, &token, req).await;
        }
        if let Some(receipt) = receipt_of(req.headers()) {
            if unfinished(&state, &token, &receipt).await {
                return share_page(&state, req).await;
            }
        }
        deliver(state, token, req).await
    })
    .await
}

/// `GET /s/{token}` with `Range` and a receipt is a resume (a browser resumes with a GET);
/// every other GET is the share page.
pub async fn resume_gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let is_resume = matches!(*req.method(), Method::GET | Method::HEAD) && req.headers().contains_key(header::RANGE) && receipt_of(req.headers()).is_some();
    let token = req.uri().path().strip_prefix("/s/").filter(|t| !t.is_empty() && !t.contains('/')).map(str::to_owned);
    match (is_resume, token) {
        (true, Some(token)) => {
            let lang = common::i18n::lang_of_headers(req.headers());
            common::i18n::with_lang(lang, resume(&state, &token, req)).await
        }
        _ => next.run(req).await,
    }
}

/// Whether `receipt` is of a delivery of this share that can still be resumed: pressing Download
/// again then claims nothing (the share page says how to finish). A finished delivery's receipt
/// does not stop a new download of a share that allows several.
async fn unfinished(state: &AppState, token: &str, receipt: &str) -> bool {
    let Some(hash) = well_formed_hash(token) else { return false };
    let Ok(Some(share)) = shares::db::find_by_token_hash(&state.pool, &hash).await else { return false };
    let grace = state.domain::<shares::ShareSettings>().gc.delivery_grace;
    matches!(
        receipts::find(&state.pool, share.id, &hash_token(receipt), grace).await,
        Ok(Some(d)) if d.in_grace && d.completed_at.is_none() && d.resumes < receipts::MAX_RESUMES && share.revoked_at.is_none()
    )
}

/// The receipt cookie's value, if the request carries one.
fn receipt_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| common::i18n::cookie_value(c, receipts::COOKIE))
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The keyed hash of the client a receipt is bound to: its network (as the trusted proxies give
/// it) and its browser. The network, not the address: a rotating IPv6 address or a phone that
/// moves within its carrier's network keeps its receipt; another network does not.
fn client_key(state: &AppState, req: &Request) -> String {
    let peer = req.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    let net = kernel::state::client_ip(req.headers(), peer, state.config.trusted_proxy_hops)
        .map(|ip| receipt_network(ip, state.config.ipv6_prefix))
        .unwrap_or_default();
    let agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    state.keyring.mac(kernel::keyring::Purpose::Receipt, &format!("{net}\0{agent}"))
}

/// The network a receipt is bound to: an IPv4 address's /24, an IPv6 address's rate-limit prefix
/// (an IPv4-mapped address is its IPv4 address).
fn receipt_network(ip: std::net::IpAddr, ipv6_prefix: u8) -> String {
    use std::net::{IpAddr, Ipv4Addr};
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    };
    match v4 {
        Some(v4) => format!("{}/24", Ipv4Addr::from(u32::from(v4) & 0xffff_ff00)),
        None => kernel::ratelimit::client_network(ip, ipv6_prefix),
    }
}

/// The visitor as the audit log keeps them: the keyed hash of their address.
fn visitor(state: &AppState, req: &Request) -> kernel::audit::Actor {
    let peer = req.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    let ip = kernel::state::client_ip(req.headers(), peer, state.config.trusted_proxy_hops).map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
    kernel::audit::Actor { admin: None, client_hash: Some(state.keyring.mac(kernel::keyring::Purpose::Client, &ip)) }
}

/// The share's strong validator: a share's file never changes (one object per share).
fn etag(share: &shares::db::ShareRecord) -> HeaderValue {
    HeaderValue::from_str(&format!("\"s{}-{}\"", share.id, share.size_bytes)).unwrap_or_else(|_| HeaderValue::from_static("\"s\""))
}

async fn deliver(state: AppState, token: String, req: Request) -> Response {
    let Some(hash) = well_formed_hash(&token) else {
        return share_page(&state, req).await;
    };
    let share = match shares::db::find_by_token_hash(&state.pool, &hash).await {
        Ok(Some(s)) if s.state() == ShareState::Active => s,
        Ok(_) => return share_page(&state, req).await,
        Err(e) => return unavailable("share lookup", e),
    };
    // Open before claiming: a missing or damaged file must not use the share up.
    let blob = match state.blobs.open(&share.blob_key).await {
        Ok(Some(b)) if b.len == share.size_bytes as u64 => b,
        Ok(found) => {
            tracing::error!(share.id = share.id, found = found.is_some(), "a share's file is missing or has the wrong size");
            return unavailable("share file", "missing or wrong size");
        }
        Err(e) => return unavailable("share file", e),
    };
    let (receipt, receipt_hash) = new_token();
    // The claim commits before the first byte: "never delivered more than allowed".
    let delivery = match claim_delivery(&state.pool, share.id, &receipt_hash, &client_key(&state, &req)).await {
        Ok(Some(d)) => d,
        Ok(None) => return share_page(&state, req).await,
        Err(e) => return unavailable("share claim", e),
    };
    // Crash tests stop here: claimed, not a byte sent.
    fail::fail_point!("share-download-after-claim");
    state.live.touch(kernel::live::Topic::Share, Some(share.id.to_string()));
    shares::gc::gc_in_background(&state);
    tracing::info!(share.id = share.id, "share downloaded");
    let grace = state.domain::<shares::ShareSettings>().gc.delivery_grace;
    let body = Metered::new(blob.body, Meter { state: state.clone(), delivery, share: share.id, start: 0, size: share.size_bytes });
    let mut res = Response::new(Body::from_stream(body));
    file_headers(res.headers_mut(), &share, blob.len);
    let secure = if state.config.public_url.starts_with("https://") { "; Secure" } else { "" };
    let cookie = format!("{}={receipt}; Path=/s/{token}; Max-Age={}; HttpOnly; SameSite=Lax{secure}", receipts::COOKIE, grace.as_secs());
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

/// The headers of a file response (whole or part).
fn file_headers(h: &mut HeaderMap, share: &shares::db::ShareRecord, len: u64) {
    h.insert(header::CONTENT_TYPE, shares::download::served_content_type(&share.content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CONTENT_DISPOSITION, shares::download::content_disposition(&share.file_name));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::ETAG, etag(share));
}

/// A refusal of a resume, in words (plain text: it answers a download, not a page).
fn refuse(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], text).into_response()
}

/// A resume: only with this share's receipt, from the client it was given to, within the grace,
/// of a delivery not yet complete, of a share not revoked, at most [`receipts::MAX_RESUMES`]
/// times, and only for what was not yet sent (a range from byte 0 once bytes were sent, a whole
/// file for an `If-Range` that does not match, or no range at all are refused). HEAD answers
/// the headers and records nothing.
async fn resume(state: &AppState, token: &str, req: Request) -> Response {
    use common::i18n::T;
    let Some(receipt) = receipt_of(req.headers()) else {
        // A Range without a receipt never claims a download.
        return refuse(StatusCode::FORBIDDEN, t(T::ShareReceiptInvalid));
    };
    let Some(hash) = well_formed_hash(token) else {
        return share_page(state, req).await;
    };
    let share = match shares::db::find_by_token_hash(&state.pool, &hash).await {
        Ok(Some(s)) => s,
        Ok(None) => return share_page(state, req).await,
        Err(e) => return unavailable("share lookup", e),
    };
    let grace = state.domain::<shares::ShareSettings>().gc.delivery_grace;
    let delivery = match receipts::find(&state.pool, share.id, &hash_token(&receipt), grace).await {
        Ok(Some(d)) => d,
        Ok(None) => return refuse(StatusCode::FORBIDDEN, t(T::ShareReceiptInvalid)),
        Err(e) => return unavailable("receipt lookup", e),
    };
    if let Some(refused) = refusal(&share, &delivery, delivery.client_hash == client_key(state, &req)) {
        return refused;
    }
    let size = share.size_bytes.max(0) as u64;
    let tag = etag(&share);
    // An If-Range that does not match would mean the whole file again (RFC 9110 §13.1.5): refused.
    if req.headers().get(header::IF_RANGE).is_some_and(|v| v.as_bytes() != tag.as_bytes()) {
        return refuse(StatusCode::PRECONDITION_FAILED, t(T::ShareResumeFromStart));
    }
    let range = req.headers().get(header::RANGE).and_then(|v| v.to_str().ok()).map(|r| parse_range(r, size));
    let (start, end) = match range {
        Some(Range::Bytes(a, b)) if a > 0 || delivery.bytes_sent == 0 => (a, b),
        None | Some(Range::Ignore) | Some(Range::Bytes(..)) => return refuse(StatusCode::RANGE_NOT_SATISFIABLE, t(T::ShareResumeFromStart)),
        Some(Range::Unsatisfiable) => {
            let mut res = refuse(StatusCode::RANGE_NOT_SATISFIABLE, t(T::ShareRangeBad));
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                res.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            return res;
        }
    };
    let len = if size == 0 { 0 } else { end - start + 1 };
    let head = req.method() == Method::HEAD;
    let body = if head {
        Body::empty()
    } else {
        let blob = match state.blobs.open_at(&share.blob_key, start).await {
            Ok(Some(b)) => b,
            Ok(None) => return refuse(StatusCode::GONE, t(T::ShareResumeOver)),
            Err(e) => return unavailable("share file", e),
        };
        match receipts::note_resume(&state.pool, delivery.id, share.id, &visitor(state, &req)).await {
            Ok(true) => {}
            // Completed, revoked or out of resumes since it was read.
            Ok(false) => return refuse(StatusCode::GONE, t(T::ShareResumeTooMany)),
            Err(e) => return unavailable("resume record", e),
        }
        // Crash tests stop here: the resume is recorded, not a byte sent.
        fail::fail_point!("share-resume-before-send");
        tracing::info!(share.id = share.id, "share download resumed");
        let limited = take_bytes(blob.body, len);
        Body::from_stream(Metered::new(
            limited,
            Meter { state: state.clone(), delivery: delivery.id, share: share.id, start: start as i64, size: share.size_bytes },
        ))
    };
    let mut res = Response::new(body);
    file_headers(res.headers_mut(), &share, len);
    *res.status_mut() = StatusCode::PARTIAL_CONTENT;
    if let Ok(v) = HeaderValue::from_str(&format!("bytes {start}-{end}/{size}")) {
        res.headers_mut().insert(header::CONTENT_RANGE, v);
    }
    res
}

/// Why a receipt resumes nothing now, if it does not: another client, a revoked share, a
/// complete delivery, the grace over, or its resumes used up.
fn refusal(share: &shares::db::ShareRecord, delivery: &receipts::DeliveryRecord, same_client: bool) -> Option<Response> {
    use common::i18n::T;
    let (status, text) = if !same_client {
        (StatusCode::FORBIDDEN, T::ShareReceiptInvalid)
    } else if share.revoked_at.is_some() {
        (StatusCode::GONE, T::ShareResumeRevoked)
    } else if delivery.completed_at.is_some() {
        (StatusCode::GONE, T::ShareResumeDone)
    } else if !delivery.in_grace || matches!(share.state(), ShareState::Purged { .. }) {
        (StatusCode::GONE, T::ShareResumeOver)
    } else if delivery.resumes >= receipts::MAX_RESUMES {
        (StatusCode::GONE, T::ShareResumeTooMany)
    } else {
        return None;
    };
    Some(refuse(status, t(text)))
}

/// A `Range` header, as this server answers it: one byte range, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Range {
    /// Inclusive first and last byte.
    Bytes(u64, u64),
    /// Not one range of bytes (several ranges, another unit, malformed): the whole file.
    Ignore,
    /// Starts at or past the end: 416.
    Unsatisfiable,
}

fn parse_range(raw: &str, size: u64) -> Range {
    let Some(spec) = raw.trim().strip_prefix("bytes=") else { return Range::Ignore };
    if spec.contains(',') {
        return Range::Ignore;
    }
    let Some((a, b)) = spec.trim().split_once('-') else { return Range::Ignore };
    let (a, b) = (a.trim(), b.trim());
    let parse = |s: &str| s.parse::<u64>().ok();
    match (a.is_empty(), b.is_empty()) {
        // bytes=-N: the last N bytes.
        (true, false) => match parse(b) {
            Some(0) => Range::Unsatisfiable,
            Some(n) if size > 0 => Range::Bytes(size.saturating_sub(n), size - 1),
            Some(_) => Range::Unsatisfiable,
            None => Range::Ignore,
        },
        (false, _) => {
            let Some(first) = parse(a) else { return Range::Ignore };
            let last = if b.is_empty() { Some(u64::MAX) } else { parse(b) };
            match last {
                None => Range::Ignore,
                Some(last) if last < first => Range::Ignore,
                Some(_) if first >= size => Range::Unsatisfiable,
                Some(last) => Range::Bytes(first, last.min(size - 1)),
            }
        }
        (true, true) => Range::Ignore,
    }
}

/// At most `len` bytes of `body`.
fn take_bytes(body: ByteStream<'static>, len: u64) -> ByteStream<'static> {
    futures::stream::unfold((body, len), |(mut body, left)| async move {
        if left == 0 {
            return None;
        }
        match body.next().await? {
            Ok(mut chunk) => {
                if chunk.len() as u64 > left {
                    chunk.truncate(left as usize);
                }
                let left = left - chunk.len() as u64;
                Some((Ok(chunk), (body, left)))
            }
            Err(e) => Some((Err(e), (body, 0))),
        }
    })
    .boxed()
}

/// Where a response's byte count is recorded when its stream ends (completed, failed or dropped
/// because the client went away).
struct Meter {
    state: AppState,
    delivery: i64,
    share: i64,
    start: i64,
    size: i64,
}

/// A file's bytes as the server hands them to the connection, counted.
struct Metered {
    inner: ByteStream<'static>,
    sent: u64,
    meter: Option<Meter>,
}

impl Metered {
    fn new(inner: ByteStream<'static>, meter: Meter) -> Self {
        Metered { inner, sent: 0, meter: Some(meter) }
    }

    fn finish(&mut self) {
        let Some(m) = self.meter.take() else { return };
        let sent = self.sent as i64;
        let state = m.state.clone();
        m.state.background.spawn("delivery-receipt", async move {
            let completed = receipts::record_sent(&state.pool, m.delivery, m.start, sent, m.size).await?;
            state.live.touch(kernel::live::Topic::Share, Some(m.share.to_string()));
            if completed {
                tracing::info!(share.id = m.share, "share delivered completely");
            }
            Ok::<(), sqlx::Error>(())
        });
    }
}

impl Stream for Metered {
    type Item = Result<Bytes, kernel::storage::BlobError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.poll_next_unpin(cx);
        match &next {
            Poll::Ready(Some(Ok(chunk))) => self.sent += chunk.len() as u64,
            Poll::Ready(Some(Err(_))) | Poll::Ready(None) => self.finish(),
            Poll::Pending => {}
        }
        next
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The share page for this URL (it says "already downloaded", "expired" or "not found", with
/// 410 or 404), rendered as the GET would be.
pub(crate) async fn share_page(state: &AppState, req: Request) -> Response {
    let (mut parts, _) = req.into_parts();
    parts.method = Method::GET;
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::RANGE);
    render_get(state, parts).await
}

/// Renders the page at `parts`' URI as its GET would be (the composition root's pages).
pub(crate) async fn render_get(state: &AppState, parts: axum::http::request::Parts) -> Response {
    kernel::http::render_page(state, parts).await
}

/// The file cannot be sent now; the share was not used up.
pub(crate) fn unavailable(context: &'static str, cause: impl std::fmt::Display) -> Response {
    tracing::error!(error = %cause, "download failed: {context}");
    (StatusCode::SERVICE_UNAVAILABLE, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::RETRY_AFTER, "60")], t(common::i18n::T::ShareUnavailable))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::{parse_range, Range};

    #[test]
    fn ranges_are_one_byte_range_or_the_whole_file() {
        assert_eq!(parse_range("bytes=0-", 10), Range::Bytes(0, 9));
        assert_eq!(parse_range("bytes=5-", 10), Range::Bytes(5, 9));
        assert_eq!(parse_range("bytes=2-4", 10), Range::Bytes(2, 4));
        assert_eq!(parse_range("bytes=2-400", 10), Range::Bytes(2, 9));
        assert_eq!(parse_range("bytes=-3", 10), Range::Bytes(7, 9));
        assert_eq!(parse_range("bytes=-30", 10), Range::Bytes(0, 9));
        assert_eq!(parse_range("bytes=10-", 10), Range::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 10), Range::Unsatisfiable);
        for whole in ["items=0-1", "bytes=0-1,3-4", "bytes=4-2", "bytes=x-", "bytes=-", "bytes=1-y"] {
            assert_eq!(parse_range(whole, 10), Range::Ignore, "{whole}");
        }
    }
}
