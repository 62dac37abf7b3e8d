//! Data request server functions (admin only: every one starts with `require`, with its role). The ones
//! that change something take plain fields, so the page's forms post them without JavaScript.

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::{Findings, Overview, RequestView};
use common::error::AppError;

#[cfg(feature = "ssr")]
use super::texts::RequestsT;
#[cfg(feature = "ssr")]
use common::i18n::{t, tf};
#[cfg(feature = "ssr")]
use kernel::request::internal;

#[cfg(feature = "ssr")]
fn request_error(e: super::db::RequestError) -> AppError {
    use super::db::RequestError;
    match e {
        RequestError::NotFound => AppError::NotFound,
        RequestError::Closed { by, at } => AppError::Conflict(tf(
            RequestsT::AlreadyClosed,
            &[("by", &by.unwrap_or_else(|| t(RequestsT::Someone).into())), ("at", &at.map(common::time::format_time).unwrap_or_default())],
        )),
        RequestError::Erasing => AppError::Conflict(t(RequestsT::AlreadyErasing).into()),
        RequestError::WrongKind => AppError::Conflict(t(RequestsT::WrongKind).into()),
        RequestError::Forgotten => AppError::Conflict(t(RequestsT::Forgotten).into()),
        RequestError::Database(e) => internal("data request")(e),
    }
}

#[cfg(feature = "ssr")]
fn settings(state: &kernel::state::AppState) -> super::RequestSettings {
    *state.domain::<super::RequestSettings>()
}

/// Every open request (by deadline) and the latest closed ones.
#[server(prefix = "/api", endpoint = "admin/requests")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_requests() -> Result<Vec<RequestView>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::list(&state.pool, 50).await.map_err(internal("data requests list"))
}

/// Open requests at a glance (the dashboard).
#[server(prefix = "/api", endpoint = "admin/requests/overview")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn request_overview() -> Result<Overview, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::overview(&state.pool, settings(&state)).await.map_err(internal("data requests overview"))
}

/// Records a request; its id. The deadline starts from the received date.
#[server(prefix = "/api", endpoint = "admin/requests/record")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn record_request(kind: String, email: String, received: String, note: String) -> Result<i64, AppError> {
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let today = kernel::jobs::claim::db_now(&state.pool).await.map_err(internal("database clock"))?.date();
    let form = super::NewRequestForm { kind, email, received, note };
    let new = super::parse_new(&form, today).map_err(AppError::Invalid)?;
    let who = kernel::personal::Address::new(&state, &new.email);
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    let id = super::db::record(&state.pool, &actor, &new, &who.hash, settings(&state)).await.map_err(internal("data request record"))?;
    tracing::info!(admin.id = %admin.id, request.id = id, "data request recorded");
    Ok(id)
}

/// What is the request, and what does Ebb hold for its address now. `preview`: the erasure's dry
/// run (what would go, what stays and why), recorded as such; otherwise recorded as a search.
#[server(prefix = "/api", endpoint = "admin/requests/find")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn find_request(id: common::id::Id, preview: bool) -> Result<Findings, AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let request = super::db::get(&state.pool, id).await.map_err(internal("data request"))?.ok_or(AppError::NotFound)?;
    let checked_at = kernel::jobs::claim::db_now(&state.pool).await.map_err(internal("database clock"))?;
    let Some(email) = request.email.clone() else {
        return Ok(Findings { request, found: Vec::new(), checked_at });
    };
    let who = kernel::personal::Address::new(&state, &email);
    let found = super::personal::find_all(&state, &who, id).await.map_err(internal("data request search"))?;
    let findings = Findings { request, found, checked_at };
    // A closed request's page only shows what is left (its live refreshes are not new searches).
    if findings.request.closed_at.is_some() {
        return Ok(findings);
    }
    let (kind, more) = if preview {
        (kernel::audit::AuditKind::RequestErasePreview, format!("would erase {}; would keep {}", findings.erasable(), findings.total() - findings.erasable()))
    } else {
        (kernel::audit::AuditKind::RequestFind, format!("found {}", findings.total()))
    };
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    super::db::record_step(&state.pool, &actor, kind, id, findings.request.kind, &who.hash, &more).await.map_err(internal("data request event"))?;
    Ok(findings)
}

/// Starts the erasure of an erasure request (after its dry run): one admin wins; the work goes on
/// in the `requests` job, which closes the request once nothing erasable is left.
#[server(prefix = "/api", endpoint = "admin/requests/erase")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn erase_request(id: common::id::Id) -> Result<(), AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require_fresh(Role::Admin).await?;
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    let request = super::db::get(&state.pool, id).await.map_err(internal("data request"))?.ok_or(AppError::NotFound)?;
    let preview = match &request.email {
        Some(email) => {
            let who = kernel::personal::Address::new(&state, email);
            let found = super::personal::find_all(&state, &who, id).await.map_err(internal("data request search"))?;
            let erasable: i64 = found.iter().map(common::personal::Found::erasable).sum();
            format!("to erase {erasable}")
        }
        None => String::new(),
    };
    super::db::start_erase(&state.pool, &actor, id, &preview).await.map_err(request_error)?;
    tracing::info!(admin.id = %admin.id, request.id = id, "data request erasure started");
    super::erase::run_now(&state);
    Ok(())
}

/// Closes an access or copy request as answered.
#[server(prefix = "/api", endpoint = "admin/requests/close")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn close_request(id: common::id::Id) -> Result<(), AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    super::db::close(&state.pool, &actor, id).await.map_err(request_error)?;
    kernel::alerts::resolve(&state.pool, common::alerts::AlertKind::DataRequestDue, &id.to_string()).await.map_err(internal("data request alert"))?;
    tracing::info!(admin.id = %admin.id, request.id = id, "data request closed");
    Ok(())
}
