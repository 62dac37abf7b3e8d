//! Hold server functions (admin only: every one starts with `require`, with its role).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::{HoldTarget, HoldView};
use common::error::AppError;

#[cfg(feature = "ssr")]
use super::texts::HoldsT;
#[cfg(feature = "ssr")]
use common::i18n::t;
#[cfg(feature = "ssr")]
use kernel::request::internal;

#[cfg(feature = "ssr")]
fn hold_error(e: super::db::HoldError) -> AppError {
    use super::db::HoldError;
    match e {
        HoldError::NotFound => AppError::NotFound,
        HoldError::AlreadyHeld => AppError::Conflict(t(HoldsT::AlreadyHeld).into()),
        HoldError::ShareNotActive => AppError::Conflict(t(HoldsT::ShareNotActive).into()),
        HoldError::Database(e) => internal("legal hold")(e),
    }
}

/// Puts an inquiry, every inquiry from its sender, or an active share on legal hold.
#[server(prefix = "/api", endpoint = "admin/holds/place", input = leptos::server_fn::codec::Json)]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn place_hold(target: HoldTarget, reason: String) -> Result<i64, AppError> {
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let reason = super::parse_reason(&reason).map_err(|m| AppError::Invalid([("reason".to_string(), m)].into()))?;
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    let id = super::db::place(&state.pool, state.domain(), &actor, target, &reason).await.map_err(hold_error)?;
    tracing::info!(admin.id = %admin.id, hold.id = id, "legal hold placed");
    Ok(id)
}

/// Lifts a hold: what it kept is eligible for deletion again at once.
#[server(prefix = "/api", endpoint = "admin/holds/lift")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn lift_hold(id: common::id::Id) -> Result<(), AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require_fresh(Role::Admin).await?;
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    super::db::lift(&state.pool, state.domain(), &actor, id).await.map_err(hold_error)?;
    tracing::info!(admin.id = %admin.id, hold.id = id, "legal hold lifted");
    Ok(())
}

/// Every hold in force.
#[server(prefix = "/api", endpoint = "admin/holds")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_holds() -> Result<Vec<HoldView>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::list(&state.pool, state.domain()).await.map_err(internal("holds list"))
}
