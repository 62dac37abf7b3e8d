//! The viewer's server functions (admin only).

use leptos::prelude::*;

use super::{AuditAdmin, AuditPage, UpkeepState};
use crate::error::AppError;

/// Events per viewer page.
pub const VIEW_PAGE_ROWS: i64 = 50;

/// A page of events matching the filters (form fields as typed), older than `before`.
#[server(prefix = "/api", endpoint = "admin/audit")]
pub async fn audit_events(kind: String, admin: String, subject: String, from: String, to: String, before: Option<String>) -> Result<AuditPage, AppError> {
    let (state, _, _) = crate::auth::service::require_admin().await?;
    let filter = super::AuditFilter::parse(&kind, &admin, &subject, &from, &to).map_err(AppError::Invalid)?;
    let before = match before.as_deref().filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => Some(super::decode_cursor(b).ok_or_else(|| AppError::BadRequest("invalid page cursor".into()))?),
    };
    let rows = super::db::page(&state.pool, &filter, before, VIEW_PAGE_ROWS).await.map_err(crate::server::internal("audit page"))?;
    let next = (rows.len() as i64 == VIEW_PAGE_ROWS).then(|| rows.last().map(|r| super::encode_cursor(r.occurred_at, r.id))).flatten();
    Ok(AuditPage { rows, next })
}

/// The admins the filter offers.
#[server(prefix = "/api", endpoint = "admin/audit/admins")]
pub async fn audit_admins() -> Result<Vec<AuditAdmin>, AppError> {
    let (state, _, _) = crate::auth::service::require_admin().await?;
    super::db::admins(&state.pool).await.map_err(crate::server::internal("audit admins"))
}

/// The upkeep's state (dashboard).
#[server(prefix = "/api", endpoint = "admin/audit/upkeep")]
pub async fn audit_upkeep_state() -> Result<UpkeepState, AppError> {
    let (state, _, _) = crate::auth::service::require_admin().await?;
    let wanted = state.domain::<super::upkeep::UpkeepSettings>().partitions_ahead;
    super::upkeep::state(&state.pool, wanted).await.map_err(crate::server::internal("audit upkeep state"))
}
