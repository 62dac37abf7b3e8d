//! The one place where an error's HTTP status is decided for server functions: every server
//! function error response carries the serialized [`AppError`]; this layer reads it back and
//! answers with [`AppError::status`] (and `Retry-After` for rate limits). No handler sets a
//! status by hand, so a forgotten call cannot turn a 404 into a 500.

use app::error::AppError;
use app::state::AppState;
use axum::{
    body::{to_bytes, Body},
    extract::{Request, State},
    http::{
        header::{LOCATION, RETRY_AFTER},
        HeaderValue, StatusCode,
    },
    middleware::Next,
    response::Response,
};

/// The header server_fn puts on error responses (`server_fn::error::SERVER_FN_ERROR_HEADER`).
const SERVER_FN_ERROR_HEADER: &str = "serverfnerror";
/// Error bodies are a few hundred bytes; anything larger is not ours to rewrite.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub async fn server_fn_status(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    // Plain form posts are answered with a redirect carrying the error: left alone.
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR || !res.headers().contains_key(SERVER_FN_ERROR_HEADER) {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(err) = serde_json::from_slice::<AppError>(&bytes) {
        parts.status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let AppError::RateLimited { retry_after_secs } = err {
            parts.headers.insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// A plain form post that failed is redirected back to its page with the error in the URL
/// (`__path`, `__err`); this layer signs that redirect (`__sig`, see
/// [`app::server::sign_url_error`]), and pages show only errors signed so.
pub async fn sign_error_redirects(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    if !res.status().is_redirection() {
        return res;
    }
    let Some(location) = res.headers().get(LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return res;
    };
    // Absolute (the form's page, from its Referer) or relative to this site.
    const RELATIVE_BASE: &str = "http://relative.invalid";
    let relative = url::Url::parse(&location).is_err();
    let Some(mut url) = url::Url::parse(&location).or_else(|_| url::Url::parse(RELATIVE_BASE).and_then(|b| b.join(&location))).ok() else {
        return res;
    };
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    // The last ones are this failure's (the page's URL may carry an earlier one's).
    let last = |key: &str| pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let (Some(path), Some(err)) = (last("__path"), last("__err")) else {
        // A success sends the browser back to its page; Leptos leaves an empty query ("…?").
        if let Some(clean) = location.strip_suffix('?').and_then(|l| HeaderValue::from_str(l).ok()) {
            res.headers_mut().insert(LOCATION, clean);
        }
        return res;
    };
    let sig = app::server::sign_url_error(&state, &path, &err, time::OffsetDateTime::now_utc().unix_timestamp());
    let kept = pairs.iter().filter(|(k, _)| !matches!(k.as_str(), "__path" | "__err" | "__sig"));
    url.query_pairs_mut().clear().extend_pairs(kept).append_pair("__path", &path).append_pair("__err", &err).append_pair("__sig", &sig);
    let signed = if relative { url.as_str().trim_start_matches(RELATIVE_BASE).to_owned() } else { url.to_string() };
    if let Ok(value) = HeaderValue::from_str(&signed) {
        res.headers_mut().insert(LOCATION, value);
    }
    res
}
