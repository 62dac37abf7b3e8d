//! The viewer's server functions (admin only).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::{ArchiveOverview, AuditAdmin, AuditPage, DownloadLink, ExportView, TrailOverview, UpkeepState, VerifyOutcome};
use common::error::AppError;

#[cfg(feature = "ssr")]
use super::texts::AuditT;
#[cfg(feature = "ssr")]
use common::i18n::{t, tf};

/// Events per viewer page.
pub const VIEW_PAGE_ROWS: i64 = 50;

/// A page of events matching the filters (form fields as typed), older than `before`.
#[server(prefix = "/api", endpoint = "admin/audit")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn audit_events(kind: String, admin: String, subject: String, from: String, to: String, before: Option<String>) -> Result<AuditPage, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    let filter = super::AuditFilter::parse(&kind, &admin, &subject, &from, &to).map_err(AppError::Invalid)?;
    let before = match before.as_deref().filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => Some(super::decode_cursor(b).ok_or_else(|| AppError::BadRequest(t(AuditT::InvalidCursor).into()))?),
    };
    let rows = super::db::page(&state.pool, &filter, before, VIEW_PAGE_ROWS).await.map_err(kernel::request::internal("audit page"))?;
    let next = (rows.len() as i64 == VIEW_PAGE_ROWS).then(|| rows.last().map(|r| super::encode_cursor(r.occurred_at, r.id))).flatten();
    Ok(AuditPage { rows, next })
}

/// The admins the filter offers.
#[server(prefix = "/api", endpoint = "admin/audit/admins")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn audit_admins() -> Result<Vec<AuditAdmin>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    super::db::admins(&state.pool).await.map_err(kernel::request::internal("audit admins"))
}

/// The upkeep's state (dashboard).
#[server(prefix = "/api", endpoint = "admin/audit/upkeep")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn audit_upkeep_state() -> Result<UpkeepState, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    let wanted = state.domain::<super::upkeep::UpkeepSettings>().partitions_ahead;
    super::upkeep::state(&state.pool, wanted).await.map_err(kernel::request::internal("audit upkeep state"))
}

/// The archive's months and the latest retrievals.
#[server(prefix = "/api", endpoint = "admin/audit/archive")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn archive_months() -> Result<ArchiveOverview, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    super::archive::overview(&state.pool).await.map_err(kernel::request::internal("archive overview"))
}

/// A 15-minute download link for archived month `month` (`YYYY-MM`), with a reason of 10–256
/// characters. A month that is not in the ledger is 404.
#[server(prefix = "/api", endpoint = "admin/audit/archive/link")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn archive_link(month: String, reason: String) -> Result<DownloadLink, AppError> {
    use super::archive::RetrievalError;
    let (state, _, admin) = kernel::session::require(Role::Auditor).await?;
    let reason = super::check_reason(&reason).map_err(|e| AppError::Invalid([("reason".to_string(), e)].into()))?;
    let period = super::archive::parse_period(month.trim()).ok_or(AppError::NotFound)?;
    match super::archive::retrieval_link(&state, &kernel::audit::Actor::in_request(Some(admin.id)), period, &reason).await {
        Ok(link) => Ok(link),
        Err(RetrievalError::NotFound) => Err(AppError::NotFound),
        Err(RetrievalError::Missing) => Err(AppError::Conflict(t(AuditT::ArchiveFileMissing).into())),
        Err(e) => Err(AppError::internal("archive link", e)),
    }
}

/// The latest export requests, newest first.
#[server(prefix = "/api", endpoint = "admin/audit/exports")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn export_requests() -> Result<Vec<ExportView>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    super::exports::list(&state.pool, 50).await.map_err(kernel::request::internal("export requests"))
}

/// Requests a CSV export of the audit events from `from` to `to` (UTC days, inclusive); it is
/// written in the background.
#[server(prefix = "/api", endpoint = "admin/audit/exports/request")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn request_export(from: String, to: String) -> Result<(), AppError> {
    use super::exports::RequestError;
    let (state, _, admin) = kernel::session::require(Role::Auditor).await?;
    let today = time::OffsetDateTime::now_utc().date();
    let (from, to) = super::exports::parse_range(&from, &to, today).map_err(AppError::Invalid)?;
    match super::exports::request(&state.pool, &kernel::audit::Actor::in_request(Some(admin.id)), from, to).await {
        Ok(_) => {
            super::exports::start(&state);
            Ok(())
        }
        Err(RequestError::TooMany) => Err(AppError::Conflict(tf(AuditT::TooManyExports, &[("n", &super::exports::MAX_OPEN)]))),
        Err(e) => Err(AppError::internal("export request", e)),
    }
}

/// A 15-minute download link for a finished export (410 once its file has expired).
#[server(prefix = "/api", endpoint = "admin/audit/exports/link")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn export_link(id: String) -> Result<DownloadLink, AppError> {
    use super::exports::LinkError;
    let (state, _, admin) = kernel::session::require(Role::Auditor).await?;
    let id = uuid::Uuid::parse_str(id.trim()).map_err(|_| AppError::NotFound)?;
    match super::exports::link(&state, &kernel::audit::Actor::in_request(Some(admin.id)), id).await {
        Ok(link) => Ok(link),
        Err(LinkError::NotFound) => Err(AppError::NotFound),
        Err(LinkError::NotReady) => Err(AppError::Conflict(t(AuditT::ExportNotReady).into())),
        Err(LinkError::Expired) => Err(AppError::Gone),
        Err(e) => Err(AppError::internal("export link", e)),
    }
}

/// The tamper-evidence section: signing keys, latest digests, sealed and waiting events.
#[server(prefix = "/api", endpoint = "admin/audit/trail")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn audit_trail() -> Result<TrailOverview, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    let internal = kernel::request::internal("audit trail");
    let keys = super::chain::keys::published(&state.pool).await.map_err(internal)?;
    let digests = super::chain::digest::latest(&state.pool, 5).await.map_err(kernel::request::internal("audit digests"))?;
    let counts = sqlx::query!(
        r#"select coalesce((select sum(seq) from audit_chains), 0)::bigint as "sealed!",
                  (select count(*) from audit_events e, audit_seal_cursor c where (e.tx, e.id) > (c.tx, c.id)) as "pending!""#
    )
    .fetch_one(&state.pool)
    .await
    .map_err(kernel::request::internal("audit seal counts"))?;
    Ok(TrailOverview {
        keys: keys.into_iter().map(|k| super::SigningKeyView { key_id: k.key_id, public_key: k.public_key, retired: k.retired_at.is_some() }).collect(),
        digests,
        sealed: counts.sealed,
        pending: counts.pending,
    })
}

/// "Verify now": seals what is waiting, then checks the database, the archive and the digests;
/// a break raises `audit.chain_broken`. Recorded in the audit log with its result.
#[server(prefix = "/api", endpoint = "admin/audit/verify")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn verify_trail() -> Result<VerifyOutcome, AppError> {
    let (state, _, admin) = kernel::session::require(Role::Auditor).await?;
    let late = state.domain::<super::chain::ChainSettings>().late_limit;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    super::chain::seal::seal_all(&state.pool, super::chain::seal::BATCH, late, until).await.map_err(kernel::request::internal("audit seal"))?;
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    let report = super::chain::job::run(&state, true, &actor).await.map_err(|e| AppError::internal("audit verify", e))?;
    Ok(VerifyOutcome {
        ok: report.ok(),
        events: report.events,
        archived: report.archived,
        digests: report.digests,
        first: report.problems.first().map(|p| (p.place(), p.what.clone())),
        warnings: report.warnings,
    })
}
