//! Share server functions: the recipient's page data (public) and the admin list, revoke and
//! overview (admin only: each starts with `require`, with its role). Upload and download are plain routes
//! in the server crate: they stream bodies.

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::{ShareLanding, ShareList, ShareOverview};
use common::error::AppError;

#[cfg(feature = "ssr")]
use super::texts::SharesT;
#[cfg(feature = "ssr")]
use common::i18n::t;
#[cfg(feature = "ssr")]
use kernel::request::internal;

/// What the recipient's page shows for `token`. A look never consumes the share (link previewers
/// fetch URLs). Unknown and malformed tokens are the same 404. Triggers the GC after reading.
#[server(prefix = "/api", endpoint = "share")]
pub async fn fetch_share_landing(token: String) -> Result<ShareLanding, AppError> {
    let state = kernel::session::state()?;
    let Some(hash) = kernel::token::well_formed_hash(&token) else {
        return Err(AppError::NotFound);
    };
    let share = super::db::find_by_token_hash(&state.pool, &hash).await.map_err(internal("share lookup"))?;
    super::gc::gc_in_background(&state);
    let share = share.ok_or(AppError::NotFound)?;
    let resume_until = match share.state() {
        super::ShareState::Active => None,
        _ => resumable_until(&state, &share).await?,
    };
    Ok(match share.state() {
        super::ShareState::Active => {
            ShareLanding::Active { file_name: super::clean_file_name(&share.file_name), size_bytes: share.size_bytes, expires_at: share.expires_at }
        }
        super::ShareState::Downloaded | super::ShareState::Purged { downloaded: true } => ShareLanding::Gone { downloaded: true, resume_until },
        super::ShareState::Expired | super::ShareState::Purged { downloaded: false } => ShareLanding::Gone { downloaded: false, resume_until },
    })
}

/// Until when this browser can resume its unfinished download of `share` (its receipt cookie,
/// scoped to the share's path, comes with the page's request), if it can.
#[cfg(feature = "ssr")]
async fn resumable_until(state: &kernel::state::AppState, share: &super::db::ShareRecord) -> Result<Option<time::OffsetDateTime>, AppError> {
    if share.revoked_at.is_some() || matches!(share.state(), super::ShareState::Purged { .. }) {
        return Ok(None);
    }
    let Ok(headers) = leptos_axum::extract::<axum::http::HeaderMap>().await else {
        return Ok(None);
    };
    let Some(receipt) = common::i18n::header_cookies(&headers, super::receipts::COOKIE).find(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let grace = state.domain::<super::ShareSettings>().gc.delivery_grace;
    let found = super::receipts::find(&state.pool, share.id, &kernel::token::hash_token(receipt), grace).await.map_err(internal("receipt lookup"))?;
    Ok(found.filter(|d| d.in_grace && d.completed_at.is_none() && d.resumes < super::receipts::MAX_RESUMES).map(|d| d.started_at + grace))
}

/// The upload limits. The upload form gets them once: were they part of the live list, every
/// change elsewhere would rebuild the form and lose a chosen file or an upload in progress.
#[server(prefix = "/api", endpoint = "admin/shares/limits")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn get_share_limits() -> Result<super::ShareLimits, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    let settings = state.domain::<super::ShareSettings>();
    Ok(super::ShareLimits { max_bytes: settings.max_bytes, max_expiry_hours: settings.max_expiry_hours })
}

/// A page of shares, newest first (`before`: the last id of the previous page). Opening the list
/// triggers the GC.
#[server(prefix = "/api", endpoint = "admin/shares")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_shares(before: Option<i64>) -> Result<ShareList, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    let grace = state.domain::<super::ShareSettings>().gc.delivery_grace;
    let mut items = super::db::list_page(&state.pool, before, super::PAGE_SIZE + 1, grace).await.map_err(internal("share list"))?;
    let next = if items.len() as i64 > super::PAGE_SIZE {
        items.truncate(super::PAGE_SIZE as usize);
        items.last().map(|s| s.id)
    } else {
        None
    };
    if before.is_none() {
        super::gc::gc_in_background(&state);
    }
    let settings = state.domain::<super::ShareSettings>();
    let limits = super::ShareLimits { max_bytes: settings.max_bytes, max_expiry_hours: settings.max_expiry_hours };
    Ok(ShareList { items, next, limits })
}

/// Revokes an active share: it expires now and the GC deletes its file. Recorded.
#[server(prefix = "/api", endpoint = "admin/shares/revoke")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn revoke_share(id: common::id::Id) -> Result<(), AppError> {
    end_link(Link::Share, id.0).await
}

/// An admin's link that can be ended at once: a share's download link or a file request's
/// upload link.
#[cfg(feature = "ssr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Share,
    Request,
}

/// Ends `link` `id` now (it expires by the statement's clock), recorded, and journaled before the
/// commit: a restored database does not bring the link back. A share's file then goes with the GC.
#[cfg(feature = "ssr")]
async fn end_link(link: Link, id: i64) -> Result<(), AppError> {
    use kernel::audit::AuditKind;
    use kernel::storage::journal::{self, Deletion};
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let ended = match link {
        Link::Share => super::db::revoke(&mut tx, id).await,
        Link::Request => super::requests::revoke(&mut tx, id).await,
    };
    if !ended.map_err(internal("revoke"))? {
        return Err(AppError::BadRequest(t(if link == Link::Share { SharesT::NoLongerActive } else { SharesT::RequestNoLongerOpen }).into()));
    }
    let (kind, deletion, topic_id) = match link {
        Link::Share => (AuditKind::ShareRevoke, Deletion::ShareRevoke { ids: vec![id] }, id.to_string()),
        Link::Request => (AuditKind::FileRequestRevoke, Deletion::FileRequestEnd { ids: vec![id] }, format!("r{id}")),
    };
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kind, Some(&id.to_string())).await.map_err(internal("record"))?;
    journal::record_in_request(&mut *tx, &*state.blobs, deletion).await?;
    tx.commit().await.map_err(internal("commit"))?;
    state.live.touch(common::live::Topic::Share, Some(topic_id));
    if link == Link::Share {
        super::gc::gc_in_background(&state);
    }
    Ok(())
}

/// Counts and the shares whose file could not be deleted three times or more.
#[server(prefix = "/api", endpoint = "admin/shares/overview")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn get_share_overview() -> Result<ShareOverview, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::overview(&state.pool).await.map_err(internal("share overview"))
}

/// What the uploader's page shows for a file request. A look never consumes it (link scanners
/// fetch URLs). Unknown and malformed tokens are the same 404.
#[server(prefix = "/api", endpoint = "file-request")]
pub async fn fetch_request_landing(token: String) -> Result<super::FileRequestLanding, AppError> {
    let state = kernel::session::state()?;
    let Some(hash) = kernel::token::well_formed_hash(&token) else {
        return Err(AppError::NotFound);
    };
    let request = super::requests::find_by_token_hash(&state.pool, &hash).await.map_err(internal("file request lookup"))?;
    Ok(request.ok_or(AppError::NotFound)?.landing())
}

/// Creates a file request: a one-time upload link (shown once; only its hash is stored) that
/// expires after `expires_hours`, takes one file of at most `max_mib` MiB, and shows `note` to
/// the person who uploads.
#[server(prefix = "/api", endpoint = "admin/file-requests/create")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn create_file_request(expires_hours: String, max_mib: String, note: String) -> Result<super::NewFileRequest, AppError> {
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let settings = *state.domain::<super::ShareSettings>();
    let mut errors = common::error::FieldErrors::new();
    let hours = super::parse_expiry_hours(&expires_hours, settings.max_expiry_hours).map_err(|m| errors.insert("expires_hours".into(), m)).ok();
    let max_bytes = super::parse_size_limit_mib(&max_mib, settings.max_bytes).map_err(|m| errors.insert("max_mib".into(), m)).ok();
    let note = super::parse_note(&note).map_err(|m| errors.insert("note".into(), m)).ok();
    let (Some(hours), Some(max_bytes), Some(note)) = (hours, max_bytes, note) else {
        return Err(AppError::Invalid(errors));
    };
    let (token, hash) = kernel::token::new_token();
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let (id, expires_at) =
        super::requests::insert(&mut tx, &hash, note.as_deref(), max_bytes as i64, hours, admin.id).await.map_err(internal("file request"))?;
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::FileRequestCreate, Some(&id.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    state.live.touch(common::live::Topic::Share, Some(format!("r{id}")));
    let url = format!("{}/r/{token}", state.config.public_url);
    let qr_svg = kernel::qr::svg(&url);
    Ok(super::NewFileRequest { id, url, qr_svg, max_bytes: max_bytes as i64, expires_at })
}

/// The newest file requests.
#[server(prefix = "/api", endpoint = "admin/file-requests")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_file_requests() -> Result<Vec<super::FileRequestSummary>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::requests::list(&state.pool, 50).await.map_err(internal("file request list"))
}

/// Revokes an open file request: its link stops working now. Recorded.
#[server(prefix = "/api", endpoint = "admin/file-requests/revoke")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn revoke_file_request(id: common::id::Id) -> Result<(), AppError> {
    end_link(Link::Request, id.0).await
}

/// Makes a share of a received file: a copy of it gets a one-time public link (shown once), valid
/// until the received file's own expiry. The received file is untouched: downloading the link
/// deletes the copy only. Recorded.
#[server(prefix = "/api", endpoint = "admin/shares/publish")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn publish_received(id: common::id::Id) -> Result<super::NewShare, AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let cannot = || AppError::BadRequest(t(SharesT::CannotPublish).into());
    let source = super::requests::publishable(&state.pool, id).await.map_err(internal("publish"))?.ok_or_else(cannot)?;
    // The copy is stored first, outside any transaction; it is deleted again unless its row
    // commits (a crash in between leaves an orphan, which the GC's sweep removes).
    let key = kernel::storage::new_key(kernel::storage::Namespace::Shares);
    let copied = copy_blob(&state, &source.blob_key, &key, source.size_bytes).await;
    let committed = match copied {
        Ok(()) => commit_copy(&state, id, &key, admin.id).await,
        Err(e) => Err(e),
    };
    let (new_id, token, file_name, size_bytes, expires_at) = match committed {
        Ok(Some(done)) => done,
        other => {
            if let Err(e) = kernel::storage::BlobStore::delete(&*state.blobs, &key).await {
                tracing::warn!(error = %e, "publishing a received file: its unused copy could not be deleted (the GC's sweep will)");
            }
            return Err(other.err().unwrap_or_else(cannot));
        }
    };
    state.live.touch(common::live::Topic::Share, Some(new_id.to_string()));
    let url = format!("{}/s/{token}", state.config.public_url);
    let qr_svg = kernel::qr::svg(&url);
    Ok(super::NewShare { id: new_id, url, qr_svg, file_name, size_bytes, expires_at })
}

/// Streams the received file `from` into `to`, checking that all of it arrived.
#[cfg(feature = "ssr")]
async fn copy_blob(state: &kernel::state::AppState, from: &str, to: &str, size: i64) -> Result<(), AppError> {
    use kernel::storage::BlobStore as _;
    let source = state.blobs.open(from).await.map_err(|e| AppError::internal("publish: reading the received file failed", e))?;
    let Some(source) = source else {
        tracing::warn!("publishing a received file: its stored file is missing");
        return Err(AppError::BadRequest(t(SharesT::CannotPublish).into()));
    };
    let stored = match state.blobs.put_stream(to, source.body, source.len).await {
        Ok(stored) => stored,
        Err(kernel::storage::BlobError::MarkerMissing) => return Err(AppError::StorageUnavailable),
        Err(e) => return Err(AppError::internal("publish: storing the copy failed", e)),
    };
    if stored.size != size as u64 {
        return Err(AppError::internal("publish: the copy's size differs from the received file's", format!("{} of {size} bytes", stored.size)));
    }
    Ok(())
}

/// Writes the copy's share row and its audit event; `None` when the received file ended meanwhile.
#[cfg(feature = "ssr")]
async fn commit_copy(
    state: &kernel::state::AppState,
    id: i64,
    key: &str,
    admin: uuid::Uuid,
) -> Result<Option<(i64, String, String, i64, time::OffsetDateTime)>, AppError> {
    let (token, hash) = kernel::token::new_token();
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let Some((new_id, file_name, size_bytes, expires_at)) = super::requests::publish_copy(&mut tx, id, &hash, key, admin).await.map_err(internal("publish"))?
    else {
        return Ok(None);
    };
    let detail = format!("copy of received file {id}");
    kernel::audit::record_admin_detail(&mut tx, Some(admin), kernel::audit::AuditKind::SharePublish, Some(&new_id.to_string()), Some(&detail))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(Some((new_id, token, file_name, size_bytes, expires_at)))
}
