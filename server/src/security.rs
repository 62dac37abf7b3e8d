//! Request-level protections: sessions, the admin page gate and the cross-site request check.

use app::state::AppState;
use axum::{
    extract::{Request, State},
    http::{header, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use tower_sessions::{cookie::SameSite, Expiry, Session, SessionManagerLayer};
use tower_sessions_sqlx_store::PostgresStore;

/// Sessions in PostgreSQL (the table comes from our migrations). The cookie is HttpOnly,
/// SameSite=Lax, Secure when the public URL is https, and expires after the idle lifetime.
pub fn session_layer(state: &AppState) -> SessionManagerLayer<PostgresStore> {
    let idle = time::Duration::seconds(state.domain::<app::auth::AuthSettings>().session_idle.as_secs() as i64);
    SessionManagerLayer::new(PostgresStore::new(state.pool.clone()))
        .with_name("ebb_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.config.public_url.starts_with("https://"))
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(idle))
        // Save on every request that has a session, so the idle expiry moves with activity
        // (only admins have sessions; visitors never get a session row).
        .with_always_save(true)
}

/// True for the paths of admin pages.
pub fn is_admin_page(path: &str) -> bool {
    path == "/admin" || path.starts_with("/admin/")
}

/// Prefix of every admin server function and admin API route.
pub const ADMIN_API_PREFIX: &str = "/api/admin/";

/// Admin pages and admin API calls need a live admin session. Without one, a page request goes
/// to sign-in (and comes back afterwards) and an API call gets 401 before its arguments are even
/// read. Every admin server function also checks the session itself (defence in depth).
pub async fn admin_gate(State(state): State<AppState>, session: Session, mut req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let api = path.starts_with(ADMIN_API_PREFIX);
    if !api && !is_admin_page(path) {
        return next.run(req).await;
    }
    match app::auth::service::session_admin(&state, &session).await {
        Ok(Some(admin)) => {
            // A page the admin's role does not open (its links are not in their navigation):
            // refused here, before anything of it renders.
            let needs = app::auth::page_role(path);
            if !api && admin.role < needs {
                return not_allowed_page(admin.role, needs);
            }
            // Handlers behind the gate read the admin from here instead of querying again.
            req.extensions_mut().insert(admin);
            next.run(req).await
        }
        Ok(None) if api => {
            let body = serde_json::to_string(&app::error::AppError::Unauthorized).unwrap_or_default();
            (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        Ok(None) => {
            let target = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/admin");
            let next_param: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
            Redirect::to(&format!("/signin?next={next_param}")).into_response()
        }
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong; please try again.").into_response(),
    }
}

/// The answer to an admin page the admin's role does not open: 403, a short page in English
/// and Japanese that says which role it needs and leads back to the dashboard.
fn not_allowed_page(role: app::auth::Role, needs: app::auth::Role) -> Response {
    let body = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Not allowed — Ebb admin</title></head><body><main style=\"max-width:40rem;margin:3rem auto;font-family:system-ui,sans-serif;line-height:1.5\">\
         <h1>This page needs the {needs} role</h1><p>You are signed in as {role}. An owner can change your role on the Account page.</p>\
         <p lang=\"ja\">このページには {needs} のロールが必要です（現在のロール: {role}）。ロールはオーナーがアカウントページで変更できます。</p>\
         <p><a href=\"/admin\">Back to the dashboard</a></p></main></body></html>"
    );
    (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// GET routes that write an audit row (downloads that are recorded).
pub const WRITING_GETS: &[&str] = &["/admin/inbox/export.csv", "/admin/audit/export.csv", "/admin/retention/report.json"];

/// Whether a GET of `path` writes an audit event (the fixed paths, a data request's copies, a
/// received file's download).
fn is_writing_get(path: &str) -> bool {
    WRITING_GETS.contains(&path)
        || (path.starts_with("/admin/requests/") && (path.contains("/copy") || path.ends_with("/cover.txt")))
        || (path.starts_with("/admin/shares/") && path.ends_with("/file"))
}

/// Refuses state-changing requests from other sites: the `Origin` must be the public origin;
/// without `Origin`, `Sec-Fetch-Site` must say same-origin (or none: typed by the user). Requests
/// with neither header come from non-browser clients, which cannot carry a victim's cookies.
///
/// A few GETs also write (an export or a report is recorded in the audit log): they are refused
/// when the browser says the request came from another site (`Sec-Fetch-Site: cross-site` or
/// `same-site`) — a link or an image on another site must not make a signed-in admin's browser
/// write audit rows. Following a link within Ebb, or typing the address, still works.
pub async fn same_origin_only(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let fetch_site_ok = || match headers.get("sec-fetch-site").map(|v| v.to_str().unwrap_or("")) {
        Some(site) => site == "same-origin" || site == "none",
        None => true,
    };
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        if is_writing_get(req.uri().path()) && !fetch_site_ok() {
            tracing::info!(event = "csrf.refused", method = %req.method(), "cross-site request for a recorded download refused");
            return (StatusCode::FORBIDDEN, "This download was asked for by another site and was refused. Open it from Ebb's own pages.").into_response();
        }
        return next.run(req).await;
    }
    let allowed = match headers.get(header::ORIGIN).map(|v| v.to_str().unwrap_or("")) {
        Some(origin) => origin == state.config.public_url,
        None => fetch_site_ok(),
    };
    if allowed {
        next.run(req).await
    } else {
        tracing::info!(event = "csrf.refused", method = %req.method(), "cross-site request refused");
        (StatusCode::FORBIDDEN, "This request came from another site and was refused. Open Ebb at its own address and try again.").into_response()
    }
}

/// The audit actor of a plain (non-server-function) admin request: the admin and the hashed client.
pub fn audit_actor(state: &AppState, headers: &axum::http::HeaderMap, peer: std::net::SocketAddr, admin: &app::auth::AdminInfo) -> app::kernel::audit::Actor {
    app::kernel::http::audit_actor(state, headers, Some(peer.ip()), admin)
}
