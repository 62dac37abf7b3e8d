//! The audit writer in a request: the acting admin and the request's client, hashed. Apart from
//! the writer itself, which needs no application state (alerts and jobs write events too).

use sqlx::PgConnection;
use uuid::Uuid;

use super::{record, Actor, AuditKind};

impl Actor {
    /// `admin` (or Ebb, with `None`) acting in the current request, its client hashed.
    pub fn in_request(admin: Option<Uuid>) -> Self {
        Actor { admin, client_hash: current_client_hash() }
    }
}

/// The hashed client of the current request, when there is one (server functions).
pub fn current_client_hash() -> Option<String> {
    let state = leptos::prelude::use_context::<crate::state::AppState>()?;
    common::request::with_parts(|_| ())?;
    let client = crate::state::client_address(&state).map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
    Some(state.keyring.mac(crate::keyring::Purpose::Client, &client))
}

/// Records what an admin did (or Ebb, with `admin` `None`) in the current request, with the
/// same connection as the change; the subject's type follows from the kind.
pub async fn record_admin_action(conn: &mut PgConnection, admin: Option<Uuid>, kind: AuditKind, subject: Option<&str>) -> Result<(), sqlx::Error> {
    record_admin_detail(conn, admin, kind, subject, None).await
}

/// [`record_admin_action`] with a short detail (a passkey's name, a job's counts).
pub async fn record_admin_detail(
    conn: &mut PgConnection,
    admin: Option<Uuid>,
    kind: AuditKind,
    subject: Option<&str>,
    detail: Option<&str>,
) -> Result<(), sqlx::Error> {
    record(conn, &Actor::in_request(admin), kind, subject.map(|s| (kind.subject_type(), s)), detail).await
}
