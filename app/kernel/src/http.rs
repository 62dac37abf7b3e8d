//! The plain HTTP routes a domain serves (downloads, uploads, the public audit files: what is
//! neither a page nor a server function), and the prologue every admin one shares.
//!
//! A domain hands the server its routes as [`Routes`]: each added with whether it needs an admin
//! session, so the list the gate test walks (and the metrics' route labels) is the router itself,
//! never a second list kept by hand. Admin routes sit under `/admin/`, behind the server's
//! session gate, which puts the signed-in admin in the request; the handler takes it with
//! [`AdminCall`], which also names the audit actor (the admin and the keyed client address), and
//! records what it gives away with [`record_first`].

/// What a domain's `routes.rs` starts from: the axum pieces its handlers use, and ours.
pub mod prelude {
    pub use super::{attachment, record_first, AdminCall, FreshAdminCall, Routes};
    pub use crate::state::AppState;
    pub use axum::body::Body;
    pub use axum::extract::{Path, Query, State};
    pub use axum::http::{header, HeaderMap, StatusCode};
    pub use axum::response::{IntoResponse, Response};
    pub use axum::routing::get;
    pub use common::admin::Role;
}

use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use axum::Router;
use common::admin::{AdminInfo, Role};

use crate::audit::{Actor, AuditKind};
use crate::state::AppState;

/// A domain's plain routes, each with the least role it needs (`None`: anyone).
pub struct Routes {
    router: Router<AppState>,
    listed: Vec<(&'static str, Option<Role>)>,
}

impl Default for Routes {
    fn default() -> Self {
        Routes { router: Router::new(), listed: Vec::new() }
    }
}

impl Routes {
    pub fn new() -> Self {
        Self::default()
    }

    /// A route anyone may call (a visitor's download, the public audit files).
    pub fn public(mut self, path: &'static str, route: MethodRouter<AppState>) -> Self {
        self.listed.push((path, None));
        self.router = self.router.route(path, route);
        self
    }

    /// A route for signed-in admins whose role is at least `role`: under `/admin/` or
    /// `/api/admin/`, where the server's session gate stands (401 without a session); an admin
    /// below `role` gets 403 before the handler runs.
    pub fn admin(mut self, role: Role, path: &'static str, route: MethodRouter<AppState>) -> Self {
        assert!(path.starts_with("/admin/") || path.starts_with("/api/admin/"), "admin route {path} is not under /admin/, where the session gate stands");
        self.listed.push((path, Some(role)));
        let route = route.route_layer(axum::middleware::from_fn(move |req: axum::extract::Request, next: axum::middleware::Next| async move {
            match req.extensions().get::<AdminInfo>().map(|admin| crate::session::allowed(admin, role)) {
                Some(Ok(())) => next.run(req).await,
                Some(Err(e)) => (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], e.to_string()).into_response(),
                None => (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "Sign in as an admin first.").into_response(),
            }
        }));
        self.router = self.router.route(path, route);
        self
    }

    /// Both sets of routes.
    pub fn merge(mut self, other: Routes) -> Self {
        self.listed.extend(other.listed);
        self.router = self.router.merge(other.router);
        self
    }

    /// `(path, the least role it needs)` of every route (`None`: anyone).
    pub fn listed(&self) -> &[(&'static str, Option<Role>)] {
        &self.listed
    }

    /// The router, for the server to layer and serve.
    pub fn into_router(self) -> Router<AppState> {
        self.router
    }
}

/// The signed-in admin of a plain admin route, as the gate found them, and the audit actor of
/// the request (the admin and the keyed client address). Should the gate ever miss a route, the
/// route answers 401 rather than 500 (axum's `Extension` would fail with 500). `FRESH`: the
/// session must also have checked its admin's passkey recently ([`FreshAdminCall`]).
pub struct AdminCall<const FRESH: bool = false> {
    pub admin: AdminInfo,
    pub actor: Actor,
}

impl<const FRESH: bool> FromRequestParts<AppState> for AdminCall<FRESH> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let Some(admin) = parts.extensions.get::<AdminInfo>().cloned() else {
            return Err((StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "Sign in as an admin first.").into_response());
        };
        if FRESH {
            let session = tower_sessions::Session::from_request_parts(parts, state).await.map_err(IntoResponse::into_response)?;
            crate::session::fresh(state, &session, &admin).await.map_err(stale)?;
        }
        let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
        let actor = audit_actor(state, &parts.headers, peer, &admin);
        Ok(AdminCall { admin, actor })
    }
}

/// An [`AdminCall`] for a sensitive download (an export of the inbox, a data request's copy):
/// the session must also have checked its admin's passkey within the last few minutes
/// (`EBB_STEP_UP_MINUTES`), else 403 with what to do. The pages check before they link
/// (`common::ui::checked_download`), so a person sees the passkey prompt rather than this.
pub type FreshAdminCall = AdminCall<true>;

/// The answer to a sensitive download without a recent passkey check.
fn stale(e: common::error::AppError) -> Response {
    let text = match e {
        common::error::AppError::StepUp => {
            "This download needs a passkey check from the last few minutes. Open the page again, start the download there and confirm with your passkey when asked."
        }
        _ => "Something went wrong; please try again.",
    };
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::FORBIDDEN);
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// The audit actor of a plain admin request: the admin and the hashed client.
pub fn audit_actor(state: &AppState, headers: &axum::http::HeaderMap, peer: Option<std::net::IpAddr>, admin: &AdminInfo) -> Actor {
    let client = crate::state::client_ip(headers, peer, state.config.trusted_proxy_hops).map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
    Actor { admin: Some(admin.id), client_hash: Some(state.keyring.mac(crate::keyring::Purpose::Client, &client)) }
}

/// Records `kind` (about `subject`) before a download is given: a download whose audit record
/// cannot be written is refused (503, `refused` said to the admin), so nothing leaves Ebb
/// unrecorded.
pub async fn record_first(
    state: &AppState,
    actor: &Actor,
    kind: AuditKind,
    subject: Option<(&str, &str)>,
    detail: Option<&str>,
    refused: &'static str,
) -> Result<(), Response> {
    let recorded = async {
        let mut conn = state.pool.acquire().await?;
        crate::audit::record(&mut conn, actor, kind, subject, detail).await
    };
    recorded.await.map_err(|e| {
        tracing::warn!(error = %e, kind = kind.as_str(), "download refused: its audit record could not be written");
        (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], format!("{refused} Try again in a few seconds.")).into_response()
    })
}

/// Renders a page as its GET would be: the composition root's shell, which a domain cannot name
/// (a refused download answers with the share's page). The server puts it into the state.
#[derive(Clone)]
pub struct PageRenderer(pub std::sync::Arc<dyn Fn(AppState, Parts) -> futures::future::BoxFuture<'static, Response> + Send + Sync>);

impl crate::state::Part for PageRenderer {
    type Slot = crate::state::slot::PageRenderer;
}

/// The page at `parts`' URI, rendered as its GET would be.
pub async fn render_page(state: &AppState, parts: Parts) -> Response {
    let render = state.domain::<PageRenderer>().0.clone();
    render(state.clone(), parts).await
}

/// A download's headers: its type, an attachment named `filename`, never cached.
pub fn attachment(content_type: &str, filename: &str) -> [(header::HeaderName, String); 3] {
    [
        (header::CONTENT_TYPE, content_type.to_string()),
        (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{filename}\"")),
        (header::CACHE_CONTROL, "no-store".to_string()),
    ]
}
