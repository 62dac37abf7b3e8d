//! The home page, rendered once per variant and reused.
//!
//! `GET /` is what most visitors ask for, and every answer is the same page but for:
//! - the language (the `ebb_lang` cookie, else `Accept-Language`) and the colour scheme (the
//!   `ebb_theme` cookie): the variant, the cache's key;
//! - the CSP nonce: fresh for every answer, in the header and on every `<script>`;
//! - the contact form's signed time stamp (`contact::spam::stamp`, whole seconds): in the hidden
//!   field and in the hydration data.
//!
//! A miss renders the page as always (that answer goes out as rendered) and keeps it as a
//! template: the bytes with the nonce and the stamp cut out. A hit fills in a new nonce and the
//! stamp of this second, so a cached answer is byte for byte what a render at that moment gives
//! (the test `cached_home_page_is_the_rendered_page` compares them). Requests with a query (a
//! form's result, an error), another cookie (an admin's session) or another method are not
//! cached. Templates are dropped when a setting changes, on every instance (the live channel's
//! `Topic::Settings`), and when notifications may have been missed.
//! Figures: `make bench` (`benches/ssr.sh`), beside nginx serving the same HTML.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use app::common::i18n::{self, header_cookies, LANG_COOKIE};
use app::common::prefs::{Theme, THEME_COOKIE};
use app::state::AppState;
use time::OffsetDateTime;

/// The largest page kept (the home page is about 5 KB).
const MAX_PAGE: usize = 256 * 1024;

/// One variant of a page: which language and colour scheme it is rendered in.
type Key = (&'static str, &'static str);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(Bytes),
    Nonce,
    Stamp,
}

/// A rendered page with the per-answer values cut out.
#[derive(Debug)]
struct Template {
    status: StatusCode,
    /// Every header the page was rendered with; the CSP's nonce cut out.
    headers: Vec<(header::HeaderName, Vec<Piece>)>,
    body: Vec<Piece>,
    /// The body's length less its cut-out values.
    text_len: usize,
}

/// The templates of one process. Cheap to clone.
#[derive(Clone)]
pub struct PageCache {
    state: AppState,
    inner: Arc<Inner>,
}

struct Inner {
    pages: RwLock<HashMap<Key, Arc<Template>>>,
    /// Grows on every clear: a render that started before a clear is not kept.
    generation: AtomicU64,
}

impl PageCache {
    pub fn new(state: AppState) -> Self {
        PageCache { state, inner: Arc::new(Inner { pages: RwLock::new(HashMap::new()), generation: AtomicU64::new(0) }) }
    }

    /// Drops every template (the next request per variant renders again).
    pub fn clear(&self) {
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        self.inner.pages.write().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// How many variants are kept now.
    pub fn len(&self) -> usize {
        self.inner.pages.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Follows the live channel: a setting changed (here or on another instance), or
    /// notifications may have been missed: drop everything. Runs until the server closes.
    pub async fn follow_settings(self) {
        use app::live::{LiveMessage, Topic};
        use tokio::sync::broadcast::error::RecvError;
        let live = self.state.live.clone();
        let mut rx = live.subscribe();
        loop {
            let message = tokio::select! {
                m = rx.recv() => m,
                () = live.closing.cancelled() => return,
            };
            match message {
                Ok(LiveMessage::Event(e)) if e.topic == Topic::Settings => self.clear(),
                Ok(LiveMessage::Resync) | Err(RecvError::Lagged(_)) => self.clear(),
                Ok(LiveMessage::Event(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    }

    fn stamp(&self, now: OffsetDateTime) -> String {
        app::contact::spam::stamp(&self.state, now)
    }
}

/// The variant a request asks for, or `None` when it is not served from the cache.
fn key_of(req: &Request) -> Option<Key> {
    if req.method() != Method::GET || req.uri().path() != "/" || req.uri().query().is_some() {
        return None;
    }
    let headers = req.headers();
    // Only the preference cookies: any other (a session) may change what is rendered.
    for value in headers.get_all(header::COOKIE) {
        let Ok(value) = value.to_str() else { return None };
        for pair in value.split(';') {
            let name = pair.split_once('=').map_or(pair, |(n, _)| n).trim();
            if !name.is_empty() && name != LANG_COOKIE && name != THEME_COOKIE {
                return None;
            }
        }
    }
    let theme = header_cookies(headers, THEME_COOKIE).find_map(Theme::parse).unwrap_or_default();
    Some((i18n::lang_of_headers(headers).code(), theme.as_str()))
}

/// The middleware: serves `GET /` from its template, or renders it and keeps the template.
pub async fn serve(State(cache): State<PageCache>, req: Request, next: Next) -> Response {
    let Some(key) = key_of(&req) else {
        return next.run(req).await;
    };
    let template = cache.inner.pages.read().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
    if let Some(template) = template {
        metrics::counter!("ebb_page_cache_total", "result" => "hit").increment(1);
        return fill(&template, &leptos::nonce::Nonce::new().to_string(), &cache.stamp(OffsetDateTime::now_utc()));
    }
    metrics::counter!("ebb_page_cache_total", "result" => "miss").increment(1);
    let generation = cache.inner.generation.load(Ordering::SeqCst);
    let before = OffsetDateTime::now_utc();
    let response = next.run(req).await;
    if response.status() != StatusCode::OK || response.headers().contains_key(header::SET_COOKIE) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_PAGE).await {
        Ok(b) => b,
        // Larger than a page we keep, or the render failed midway: the answer is lost either
        // way; say so as the render would have.
        Err(e) => {
            tracing::warn!(error = %e, "home page could not be read for the page cache");
            return Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .body(Body::from("The page could not be shown. Try again."))
                .unwrap_or_default();
        }
    };
    let after = OffsetDateTime::now_utc();
    let stamps: Vec<String> =
        (before.unix_timestamp()..=after.unix_timestamp()).filter_map(|s| OffsetDateTime::from_unix_timestamp(s).ok()).map(|t| cache.stamp(t)).collect();
    if let Some(template) = cut(parts.status, &parts.headers, &bytes, &stamps) {
        // Kept unless a clear happened while it rendered (it may be from before the change).
        let mut pages = cache.inner.pages.write().unwrap_or_else(|p| p.into_inner());
        if cache.inner.generation.load(Ordering::SeqCst) == generation {
            pages.insert(key, Arc::new(template));
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// The nonce a page was rendered with, from its Content-Security-Policy.
fn nonce_of(headers: &HeaderMap) -> Option<&str> {
    let csp = headers.get(header::CONTENT_SECURITY_POLICY)?.to_str().ok()?;
    let start = csp.find("'nonce-")? + "'nonce-".len();
    let len = csp[start..].find('\'')?;
    Some(&csp[start..start + len]).filter(|n| n.len() >= 16)
}

/// Splits `text` at every `nonce` and `stamp`.
fn pieces(text: &[u8], nonce: &[u8], stamp: Option<&[u8]>) -> Vec<Piece> {
    let mut out = Vec::new();
    let (mut i, mut from) = (0, 0);
    while i < text.len() {
        let hit = if text[i..].starts_with(nonce) {
            Some((Piece::Nonce, nonce.len()))
        } else {
            stamp.filter(|s| text[i..].starts_with(s)).map(|s| (Piece::Stamp, s.len()))
        };
        match hit {
            Some((piece, len)) => {
                if from < i {
                    out.push(Piece::Text(Bytes::copy_from_slice(&text[from..i])));
                }
                out.push(piece);
                i += len;
                from = i;
            }
            None => i += 1,
        }
    }
    if from < text.len() {
        out.push(Piece::Text(Bytes::copy_from_slice(&text[from..])));
    }
    out
}

/// The template of a rendered page, or `None` when it cannot be one: no nonce, or not exactly
/// one of the possible stamps in it (a page kept with a stale stamp would defeat the
/// minimum fill time).
fn cut(status: StatusCode, headers: &HeaderMap, body: &[u8], stamps: &[String]) -> Option<Template> {
    let nonce = nonce_of(headers)?.as_bytes().to_vec();
    let found: Vec<&String> = stamps.iter().filter(|s| memchr_find(body, s.as_bytes())).collect();
    let [stamp] = found.as_slice() else { return None };
    let body = pieces(body, &nonce, Some(stamp.as_bytes()));
    if !body.contains(&Piece::Nonce) || !body.contains(&Piece::Stamp) {
        return None;
    }
    let text_len = body.iter().map(|p| if let Piece::Text(t) = p { t.len() } else { 0 }).sum();
    let headers = headers
        .iter()
        .filter(|(name, _)| **name != header::CONTENT_LENGTH && **name != header::DATE)
        .map(|(name, value)| (name.clone(), pieces(value.as_bytes(), &nonce, None)))
        .collect();
    Some(Template { status, headers, body, text_len })
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The answer from a template with this answer's nonce and stamp.
fn fill(template: &Template, nonce: &str, stamp: &str) -> Response {
    let join = |pieces: &[Piece], extra: usize| {
        let mut out = Vec::with_capacity(extra);
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Nonce => out.extend_from_slice(nonce.as_bytes()),
                Piece::Stamp => out.extend_from_slice(stamp.as_bytes()),
            }
        }
        out
    };
    let mut response = Response::new(Body::from(join(&template.body, template.text_len + 8 * (nonce.len() + stamp.len()))));
    *response.status_mut() = template.status;
    let headers = response.headers_mut();
    for (name, value) in &template.headers {
        if let Ok(value) = HeaderValue::from_bytes(&join(value, 0)) {
            headers.append(name.clone(), value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cut_every_nonce_and_the_stamp() {
        let p = pieces(b"<a n=\"NNNN\">1.ab</a><b n=\"NNNN\">", b"NNNN", Some(b"1.ab"));
        assert_eq!(
            p,
            vec![
                Piece::Text(Bytes::from_static(b"<a n=\"")),
                Piece::Nonce,
                Piece::Text(Bytes::from_static(b"\">")),
                Piece::Stamp,
                Piece::Text(Bytes::from_static(b"</a><b n=\"")),
                Piece::Nonce,
                Piece::Text(Bytes::from_static(b"\">")),
            ]
        );
    }

    #[test]
    fn a_page_without_its_stamp_or_nonce_is_not_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("script-src 'nonce-AAAAAAAAAAAAAAAAAAAAAA'"));
        let stamps = vec!["10.aa".to_owned(), "11.bb".to_owned()];
        assert!(cut(StatusCode::OK, &headers, b"<script nonce=\"AAAAAAAAAAAAAAAAAAAAAA\">10.aa</script>", &stamps).is_some());
        assert!(cut(StatusCode::OK, &headers, b"<script nonce=\"AAAAAAAAAAAAAAAAAAAAAA\">12.cc</script>", &stamps).is_none(), "stale stamp");
        assert!(cut(StatusCode::OK, &headers, b"<script nonce=\"AAAAAAAAAAAAAAAAAAAAAA\">10.aa 11.bb</script>", &stamps).is_none(), "two stamps");
        assert!(cut(StatusCode::OK, &HeaderMap::new(), b"10.aa", &stamps).is_none(), "no nonce");
        let t = cut(StatusCode::OK, &headers, b"<script nonce=\"AAAAAAAAAAAAAAAAAAAAAA\">10.aa</script>", &stamps).unwrap();
        let r = fill(&t, "BBBBBBBBBBBBBBBBBBBBBB", "12.cc");
        assert_eq!(r.headers()[header::CONTENT_SECURITY_POLICY], "script-src 'nonce-BBBBBBBBBBBBBBBBBBBBBB'");
    }
}
