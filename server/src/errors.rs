//! The one place where an error's HTTP status is decided for server functions: every server
//! function error response carries the serialized [`AppError`]; this layer reads it back and
//! answers with [`AppError::status`] (and `Retry-After` for rate limits). No handler sets a
//! status by hand, so a forgotten call cannot turn a 404 into a 500.

use app::error::AppError;
use axum::{
    body::{to_bytes, Body},
    extract::Request,
    http::{header::RETRY_AFTER, HeaderValue, StatusCode},
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
