//! Retention server functions: the report (admin only) and the promises (public).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::{PublicPromises, RetentionReport};
use common::error::AppError;

/// The retention report, read now.
#[server(prefix = "/api", endpoint = "admin/retention")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn get_retention_report() -> Result<RetentionReport, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    super::report::compute(&state).await.map_err(|e| {
        tracing::error!(error = %e, "retention report failed");
        AppError::Internal
    })
}

/// What the public retention page states, from the live settings.
#[server(prefix = "/api", endpoint = "retention")]
pub async fn get_public_promises() -> Result<PublicPromises, AppError> {
    let state = use_context::<kernel::state::AppState>().ok_or_else(|| AppError::internal("retention", "AppState missing from context"))?;
    super::report::public_promises(&state).await.map_err(kernel::request::internal("retention promises"))
}
