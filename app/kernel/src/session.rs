//! The session gate every admin server function passes ([`require`], with its role). Who a session
//! belongs to is the auth domain's to say: it implements [`SessionAdmins`], and the composition
//! root puts that implementation into the state ([`AdminSessions`]). So an admin domain depends
//! on the kernel, never on auth.

use std::sync::Arc;

use common::admin::{AdminInfo, Role};
use common::error::AppError;
use futures::future::BoxFuture;
use leptos::prelude::*;
use tower_sessions::Session;

use crate::state::AppState;

/// Looks up the admin signed in on a session (the auth domain's implementation).
pub trait SessionAdmins: Send + Sync {
    /// The admin of the session `session_id`, if it is signed in and not expired.
    fn admin_of<'a>(&'a self, state: &'a AppState, session_id: &'a str) -> BoxFuture<'a, Result<Option<AdminInfo>, sqlx::Error>>;
    /// Whether the session `session_id` checked its admin's passkey recently enough for a
    /// sensitive action (the sign-in, or a step-up since).
    fn verified_recently<'a>(&'a self, state: &'a AppState, session_id: &'a str) -> BoxFuture<'a, Result<bool, sqlx::Error>>;
}

/// The state's handle on the [`SessionAdmins`] implementation.
#[derive(Clone)]
pub struct AdminSessions(pub Arc<dyn SessionAdmins>);

impl crate::state::Part for AdminSessions {
    type Slot = crate::state::slot::AdminSessions;
}

/// The context's state, or an opaque error.
pub fn state() -> Result<AppState, AppError> {
    use_context::<AppState>().ok_or_else(|| AppError::internal("session", "AppState missing from context"))
}

/// The request's session (the session layer wraps every route).
pub async fn session() -> Result<Session, AppError> {
    leptos_axum::extract::<Session>().await.map_err(|e| AppError::internal("session extractor", e))
}

/// The admin signed in on `session`, if any.
pub async fn session_admin(state: &AppState, session: &Session) -> Result<Option<AdminInfo>, AppError> {
    let Some(id) = session.id() else { return Ok(None) };
    state.domain::<AdminSessions>().0.admin_of(state, &id.to_string()).await.map_err(|e| AppError::internal("session lookup", e))
}

/// The gate of every admin server function, with the least role it needs: the signed-in admin,
/// 401 without one, 403 ([`AppError::NotAllowed`]) when their role is below `role`. Each server
/// function names its role here; the gate test calls every one with each role.
pub async fn require(role: Role) -> Result<(AppState, Session, AdminInfo), AppError> {
    let state = state()?;
    let session = session().await?;
    // The admin gate already looked the session up for this request (one query, not two).
    let checked = common::request::with_parts(|p| p.extensions.get::<AdminInfo>().cloned()).flatten();
    let admin = match checked {
        Some(admin) => admin,
        None => session_admin(&state, &session).await?.ok_or(AppError::Unauthorized)?,
    };
    allowed(&admin, role)?;
    Ok((state, session, admin))
}

/// The gate of a sensitive action (an export or copy, an erasure, lifting a hold, deleting in
/// bulk, lowering a retention period, adding a passkey or an admin, changing a role): as
/// [`require`], and the session must have checked its admin's passkey within the last few
/// minutes (`EBB_STEP_UP_MINUTES`) — else [`AppError::StepUp`], and the page asks for the passkey.
/// A session cookie alone, copied or left open, cannot do these.
pub async fn require_fresh(role: Role) -> Result<(AppState, Session, AdminInfo), AppError> {
    let (state, session, admin) = require(role).await?;
    fresh(&state, &session, &admin).await?;
    Ok((state, session, admin))
}

/// [`AppError::StepUp`] unless `session` checked its admin's passkey recently.
pub async fn fresh(state: &AppState, session: &Session, admin: &AdminInfo) -> Result<(), AppError> {
    let Some(id) = session.id() else { return Err(AppError::Unauthorized) };
    let recent = state.domain::<AdminSessions>().0.verified_recently(state, &id.to_string()).await.map_err(|e| AppError::internal("step-up lookup", e))?;
    if recent {
        return Ok(());
    }
    tracing::info!(event = "step_up.needed", admin.id = %admin.id, "a sensitive action needs a fresh passkey check");
    Err(AppError::StepUp)
}

/// Whether `admin`'s role is at least `role` (`NotAllowed` when not, logged without the name).
pub fn allowed(admin: &AdminInfo, role: Role) -> Result<(), AppError> {
    if admin.role >= role {
        return Ok(());
    }
    tracing::info!(event = "role.refused", admin.id = %admin.id, role = %admin.role, needs = %role, "refused: the admin's role is below the one needed");
    Err(AppError::NotAllowed { needs: role })
}

/// The role a server function needs, checked before anything of the request is read (its
/// arguments included): `#[middleware(kernel::session::Needs(Role::Admin))]` under `#[server]`.
/// The admin gate in front has put the signed-in admin into the request; an admin whose role is
/// below gets 403 ([`AppError::NotAllowed`]), as the function's own [`require`] would answer.
#[derive(Debug, Clone, Copy)]
pub struct Needs(pub Role);

impl<S> tower::Layer<S> for Needs {
    type Service = NeedsService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        NeedsService { inner, role: self.0 }
    }
}

/// The service of [`Needs`].
#[derive(Debug, Clone)]
pub struct NeedsService<S> {
    inner: S,
    role: Role,
}

impl<S> tower::Service<axum::extract::Request> for NeedsService<S>
where
    S: tower::Service<axum::extract::Request, Response = axum::response::Response>,
    S::Future: Send + 'static,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: axum::extract::Request) -> Self::Future {
        use axum::response::IntoResponse;
        let refused = match req.extensions().get::<AdminInfo>() {
            Some(admin) => allowed(admin, self.role).err(),
            None => Some(AppError::Unauthorized),
        };
        match refused {
            None => Box::pin(self.inner.call(req)),
            Some(err) => {
                let status = axum::http::StatusCode::from_u16(err.status()).unwrap_or(axum::http::StatusCode::FORBIDDEN);
                let body = serde_json::to_string(&err).unwrap_or_default();
                let response = (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response();
                Box::pin(async move { Ok(response) })
            }
        }
    }
}
