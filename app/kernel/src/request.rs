//! Server-only helpers shared by server functions.

use leptos::prelude::*;

use crate::state::AppState;
use common::error::AppError;

/// True when the current request is a plain HTML form post (no JavaScript): such requests are
/// answered with redirects, not with status codes the browser would show as an error page.
pub fn is_plain_form_post() -> bool {
    common::request::with_parts(|p| p.headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("text/html")))
        .unwrap_or(false)
}

/// The current client's rate-limit key: its network (IPv4 address, IPv6 prefix), keyed with the
/// server secret so a stored bucket cannot be turned back into an address.
pub fn client_key(state: &AppState) -> String {
    let network =
        crate::state::client_address(state).map(|ip| crate::ratelimit::client_network(ip, state.config.ipv6_prefix)).unwrap_or_else(|| "unknown".into());
    state.keyring.mac(crate::keyring::Purpose::RateLimit, &network)
}

/// Answers a plain form post with a 303 to `path` (so a reload does not post again).
pub fn redirect_plain_form_post(path: &'static str) {
    use axum::http::{header::LOCATION, HeaderValue, StatusCode};
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(StatusCode::SEE_OTHER);
        res.insert_header(LOCATION, HeaderValue::from_static(path));
    }
}

/// Maps a database error (a duplicate → 409 `Conflict`, else logged once → `Internal`).
pub fn internal(context: &'static str) -> impl Fn(sqlx::Error) -> AppError {
    AppError::db(context)
}

/// How long a signed error redirect (a plain form post's `__err`) is believed.
const URL_ERROR_TTL_SECS: i64 = 600;

/// The signature Ebb appends (`__sig`) to a plain form post's error redirect: the server
/// function's path and its encoded error, with the time, keyed with the server secret. A page
/// shows an error from its URL only when the signature is Ebb's and recent, so a link cannot put
/// words of its author's choice into the page.
pub fn sign_url_error(state: &AppState, path: &str, err: &str, issued: i64) -> String {
    let mac = state.keyring.mac(crate::keyring::Purpose::UrlError, &format!("{path}\0{err}\0{issued}"));
    format!("{issued}.{mac}")
}

/// The current request's `__err`, when `__path` is `path` and `__sig` is this server's recent
/// signature of both.
pub fn verified_url_error(path: &str) -> Option<String> {
    let state = use_context::<AppState>()?;
    let query: std::collections::HashMap<String, String> =
        common::request::with_parts(|parts| parts.uri.query().map(|q| url_pairs(q).collect()))?.unwrap_or_default();
    let (err, sig) = (query.get("__err")?, query.get("__sig")?);
    if query.get("__path").map(String::as_str) != Some(path) {
        return None;
    }
    let issued: i64 = sig.split_once('.')?.0.parse().ok()?;
    let age = time::OffsetDateTime::now_utc().unix_timestamp() - issued;
    let genuine = (0..=URL_ERROR_TTL_SECS).contains(&age) && constant_time_eq(sign_url_error(&state, path, err, issued).as_bytes(), sig.as_bytes());
    genuine.then(|| err.clone())
}

/// Decoded `application/x-www-form-urlencoded` pairs of a query string.
fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8().ok().map(|c| c.into_owned());
        Some((decode(k)?, decode(v)?))
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
