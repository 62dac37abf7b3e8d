//! Server-only helpers shared by server functions.

use leptos::prelude::*;

use crate::error::AppError;
use crate::state::{client_ip, AppState};

/// True when the current request is a plain HTML form post (no JavaScript): such requests are
/// answered with redirects, not with status codes the browser would show as an error page.
pub fn is_plain_form_post() -> bool {
    use_context::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).map(|v| v.contains("text/html")))
        .unwrap_or(false)
}

/// A stable key for the current client, for rate limits (hashed before it is stored).
pub fn client_key(state: &AppState) -> String {
    let Some(parts) = use_context::<axum::http::request::Parts>() else {
        return "unknown".into();
    };
    let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    match client_ip(&parts.headers, peer, state.config.trusted_proxy_hops) {
        Some(ip) => ip.to_string(),
        None => "unknown".into(),
    }
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
