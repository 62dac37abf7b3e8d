//! Inbox server functions (admin only: every one starts with `require`, with its role).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;
use uuid::Uuid;

use super::{InboxCounts, InquiryDetail, InquiryPage};
use common::error::AppError;

#[cfg(feature = "ssr")]
use super::texts::InboxT;
#[cfg(feature = "ssr")]
use common::i18n::{num, t, tf};
#[cfg(feature = "ssr")]
use kernel::request::internal;

/// A page of inquiries, newest first. Opening the list (the first page) also triggers prune,
/// best-effort (seed 000).
#[server(prefix = "/api", endpoint = "admin/inbox")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_inquiries(search: Option<String>, after: Option<String>) -> Result<InquiryPage, AppError> {
    use super::{db, normalise_search, Cursor, PAGE_SIZE};
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    let search = normalise_search(search.as_deref());
    let cursor = match after.as_deref().filter(|a| !a.is_empty()) {
        Some(raw) => Some(Cursor::decode(raw).ok_or_else(|| AppError::BadRequest(t(InboxT::InvalidCursor).into()))?),
        None => None,
    };
    let mut items = db::list_page(&state.pool, search.as_deref(), cursor, PAGE_SIZE + 1).await.map_err(internal("inbox list"))?;
    let next = if items.len() as i64 > PAGE_SIZE {
        items.truncate(PAGE_SIZE as usize);
        items.last().map(|i| Cursor { created_at: i.created_at, id: i.id }.encode())
    } else {
        None
    };
    if after.as_deref().is_none_or(str::is_empty) {
        // Best-effort, after this page was read: prune if due (seed 000).
        kernel::jobs::nudge_named(&state, kernel::jobs::PRUNE, kernel::jobs::Trigger::AdminInbox);
    }
    Ok(InquiryPage { items, next })
}

#[server(prefix = "/api", endpoint = "admin/inbox/detail")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn get_inquiry(id: Uuid) -> Result<InquiryDetail, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::detail(&state.pool, id).await.map_err(internal("inbox detail"))?.ok_or(AppError::NotFound)
}

/// Deletes one or many inquiries; returns how many were deleted. Each deletion is recorded.
#[server(prefix = "/api", endpoint = "admin/inbox/delete", input = leptos::server_fn::codec::Json)]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn delete_inquiries(ids: Vec<Uuid>) -> Result<u64, AppError> {
    delete_selected(super::db::Listed::Inquiries, ids).await
}

/// Deletes a selection (1–1,000) of the inbox or the quarantine in one transaction, each
/// deletion recorded — or nothing when any of it is on legal hold: that is said instead of
/// deleting part of a selection.
#[cfg(feature = "ssr")]
pub(crate) async fn delete_selected(list: super::db::Listed, ids: Vec<Uuid>) -> Result<u64, AppError> {
    use super::db::{self, Listed};
    let (state, session, admin) = kernel::session::require(Role::Admin).await?;
    if ids.is_empty() || ids.len() > 1000 {
        return Err(AppError::BadRequest(t(InboxT::SelectionSize).into()));
    }
    // Deleting in bulk is a sensitive action (a fresh passkey check); one at a time is not.
    if ids.len() > 1 {
        kernel::session::fresh(&state, &session, &admin).await?;
    }
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let held = db::held_among(&mut tx, list, &ids).await.map_err(internal("held among"))?;
    if !held.is_empty() {
        return Err(AppError::Conflict(if held.len() == 1 && ids.len() == 1 {
            t(InboxT::HeldOne).into()
        } else {
            tf(InboxT::HeldSome, &[("n", &num(held.len() as i64))])
        }));
    }
    let deleted = db::delete(&mut tx, list, &ids).await.map_err(internal("delete selection"))?;
    let kind = if list == Listed::Inquiries { kernel::audit::AuditKind::InquiryDelete } else { kernel::audit::AuditKind::SpamDelete };
    for id in &deleted {
        kernel::audit::record_admin_action(&mut tx, Some(admin.id), kind, Some(&id.to_string())).await.map_err(internal("record"))?;
    }
    tx.commit().await.map_err(internal("commit"))?;
    tracing::info!(admin.id = %admin.id, deleted = deleted.len(), list = ?list, "selection deleted");
    state.live.touch(common::live::Topic::Inquiry, None);
    Ok(deleted.len() as u64)
}

#[server(prefix = "/api", endpoint = "admin/inbox/counts")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn count_inquiries() -> Result<InboxCounts, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    super::db::counts(&state.pool).await.map_err(internal("inbox counts"))
}
