//! The session gate every admin server function passes ([`require_admin`]). Who a session
//! belongs to is the auth domain's to say: it implements [`SessionAdmins`], and the composition
//! root puts that implementation into the state ([`AdminSessions`]). So an admin domain depends
//! on the kernel, never on auth.

use std::sync::Arc;

use common::admin::AdminInfo;
use common::error::AppError;
use futures::future::BoxFuture;
use leptos::prelude::*;
use tower_sessions::Session;

use crate::state::AppState;

/// Looks up the admin signed in on a session (the auth domain's implementation).
pub trait SessionAdmins: Send + Sync {
    /// The admin of the session `session_id`, if it is signed in and not expired.
    fn admin_of<'a>(&'a self, state: &'a AppState, session_id: &'a str) -> BoxFuture<'a, Result<Option<AdminInfo>, sqlx::Error>>;
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

/// The gate of every admin server function: the signed-in admin, or 401.
pub async fn require_admin() -> Result<(AppState, Session, AdminInfo), AppError> {
    let state = state()?;
    let session = session().await?;
    // The admin gate already looked the session up for this request (one query, not two).
    let checked = common::request::with_parts(|p| p.extensions.get::<AdminInfo>().cloned()).flatten();
    if let Some(admin) = checked {
        return Ok((state, session, admin));
    }
    match session_admin(&state, &session).await? {
        Some(admin) => Ok((state, session, admin)),
        None => Err(AppError::Unauthorized),
    }
}
