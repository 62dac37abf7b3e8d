//! Suspected spam (the inbox's "Spam" tab): the quarantine's list, "Not spam" (moves the
//! submission to the inbox in one statement, so it is counted once however often it is pressed),
//! delete, the quarantine's own retention; and the contact form's figures per day.

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use common::error::AppError;
use common::spam::DayFigures;

#[cfg(feature = "ssr")]
use super::texts::InboxT;
#[cfg(feature = "ssr")]
use common::i18n::t;
#[cfg(feature = "ssr")]
use kernel::request::internal;

/// A submission in quarantine: the submission as the inbox would show it, and why it was held
/// back (its fields are those of an inquiry in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpamItem {
    #[serde(flatten)]
    pub submission: super::InquiryDetail,
    /// The names of the signals that fired.
    pub signals: Vec<String>,
    pub score: i32,
}

/// A page of suspected spam, newest first; how many there are; the retention in days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpamPage {
    pub items: Vec<SpamItem>,
    pub next: Option<String>,
    pub total: i64,
    pub retention_days: u32,
}

/// Days of figures the dashboard shows.
pub const FIGURE_DAYS: i64 = 14;

#[cfg(feature = "ssr")]
pub mod db {
    use sqlx::{PgConnection, PgPool};
    use uuid::Uuid;

    use super::SpamItem;
    use crate::inbox::Cursor;
    use common::spam::DayFigures;

    pub async fn retention_days(pool: &PgPool) -> Result<u32, sqlx::Error> {
        let stored: Option<String> =
            sqlx::query_scalar("select value from settings where key = $1").bind(common::spam::RETENTION_KEY).fetch_optional(pool).await?;
        Ok(common::spam::retention_days_or_default(stored.as_deref()))
    }

    pub async fn set_retention_days(conn: &mut PgConnection, days: u32) -> Result<(), sqlx::Error> {
        sqlx::query(
            "insert into settings (key, value, updated_at) values ($1, $2, now())
             on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(common::spam::RETENTION_KEY)
        .bind(days.to_string())
        .execute(conn)
        .await?;
        Ok(())
    }

    type Row = (Uuid, String, String, String, time::OffsetDateTime, Vec<String>, i32, bool);

    /// One page, newest first, strictly older than `before`.
    pub async fn page(pool: &PgPool, before: Option<Cursor>, limit: i64) -> Result<Vec<SpamItem>, sqlx::Error> {
        let before = before.unwrap_or(Cursor { created_at: time::macros::datetime!(9999-12-31 23:59:59 UTC), id: Uuid::from_u128(u128::MAX) });
        let rows: Vec<Row> = sqlx::query_as(
            "select id, name, email, message, created_at, signals, score,
                    held or exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic))
             from suspected_spam s where (created_at, id) < ($1, $2) order by created_at desc, id desc limit $3",
        )
        .bind(before.created_at)
        .bind(before.id)
        .bind(limit)
        .fetch_all(pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, email, message, created_at, signals, score, held)| SpamItem {
                submission: super::super::InquiryDetail { id, name, email, message, created_at, held },
                signals,
                score,
            })
            .collect())
    }

    pub async fn total(pool: &PgPool) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("select count(*) from suspected_spam").fetch_one(pool).await
    }

    /// Moves one submission to the inbox (keeping when it arrived) and counts it as released
    /// today: one statement, so a second press (or another admin) finds nothing to move.
    pub async fn release(conn: &mut PgConnection, id: Uuid) -> Result<bool, sqlx::Error> {
        let moved: i64 = sqlx::query_scalar(
            "with moved as (delete from suspected_spam where id = $1 returning *),
                  ins as (insert into inquiries (id, name, email, message, created_at, held)
                          select id, name, email, message, created_at,
                                 held or exists (select 1 from holds_in_force h where h.email = lower(moved.email collate ucs_basic))
                          from moved returning id),
                  fig as (insert into contact_daily (day, figure, shard, n)
                          select (clock_timestamp() at time zone 'UTC')::date, 'released', (pg_backend_pid() % 16)::int2, count(*) from ins having count(*) > 0
                          on conflict (day, figure, shard) do update set n = contact_daily.n + excluded.n)
             select count(*) from ins",
        )
        .bind(id)
        .fetch_one(conn)
        .await?;
        Ok(moved > 0)
    }

    /// Which of `ids` are on legal hold (their flag or a hold on their address).
    /// The last `days` UTC days of figures, newest first (days without a submission included).
    pub async fn figures(pool: &PgPool, days: i64) -> Result<Vec<DayFigures>, sqlx::Error> {
        let rows: Vec<(time::Date, String, i64)> = sqlx::query_as(
            "select day, figure, sum(n)::int8 from contact_daily
             where day > (clock_timestamp() at time zone 'UTC')::date - $1::int4 group by day, figure",
        )
        .bind(days as i32)
        .fetch_all(pool)
        .await?;
        let today: time::Date = sqlx::query_scalar("select (clock_timestamp() at time zone 'UTC')::date").fetch_one(pool).await?;
        let mut out = Vec::new();
        for back in 0..days {
            let day = today - time::Duration::days(back);
            let mut f = DayFigures { day: day.to_string(), accepted: 0, quarantined: 0, refused: 0, released: 0, signals: Vec::new() };
            for (_, figure, n) in rows.iter().filter(|r| r.0 == day) {
                match figure.as_str() {
                    "accepted" => f.accepted = *n,
                    "quarantined" => f.quarantined = *n,
                    "refused" => f.refused = *n,
                    "released" => f.released = *n,
                    other => {
                        if let Some(signal) = other.strip_prefix("signal:") {
                            f.signals.push((signal.to_string(), *n));
                        }
                    }
                }
            }
            f.signals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            out.push(f);
        }
        Ok(out)
    }
}

/// Rows per page of the Spam tab.
pub const PAGE_SIZE: i64 = 50;

/// A page of suspected spam, newest first.
#[server(prefix = "/api", endpoint = "admin/spam")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn list_spam(after: Option<String>) -> Result<SpamPage, AppError> {
    use super::Cursor;
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    let cursor = match after.as_deref().filter(|a| !a.is_empty()) {
        Some(raw) => Some(Cursor::decode(raw).ok_or_else(|| AppError::BadRequest(t(InboxT::InvalidCursor).into()))?),
        None => None,
    };
    let mut items = db::page(&state.pool, cursor, PAGE_SIZE + 1).await.map_err(internal("spam list"))?;
    let next = if items.len() as i64 > PAGE_SIZE {
        items.truncate(PAGE_SIZE as usize);
        items.last().map(|i| Cursor { created_at: i.submission.created_at, id: i.submission.id }.encode())
    } else {
        None
    };
    let total = db::total(&state.pool).await.map_err(internal("spam total"))?;
    let retention_days = db::retention_days(&state.pool).await.map_err(internal("spam retention"))?;
    Ok(SpamPage { items, next, total, retention_days })
}

/// "Not spam": moves the submission to the inbox. `NotFound` when it is no longer in quarantine
/// (moved or deleted meanwhile): it is never counted twice.
#[server(prefix = "/api", endpoint = "admin/spam/release")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn release_spam(id: Uuid) -> Result<(), AppError> {
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if !db::release(&mut tx, id).await.map_err(internal("spam release"))? {
        return Err(AppError::NotFound);
    }
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::InquiryRelease, Some(&id.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    tracing::info!(admin.id = %admin.id, inquiry.id = %id, "suspected spam moved to the inbox");
    state.live.touch(common::live::Topic::Inquiry, Some(id.to_string()));
    Ok(())
}

/// Deletes suspected spam (never what is on legal hold); returns how many were deleted.
#[server(prefix = "/api", endpoint = "admin/spam/delete", input = leptos::server_fn::codec::Json)]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn delete_spam(ids: Vec<Uuid>) -> Result<u64, AppError> {
    super::api::delete_selected(super::db::Listed::Spam, ids).await
}

/// Sets how long suspected spam is kept (1–365 days).
#[server(prefix = "/api", endpoint = "admin/spam/retention")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn save_spam_retention(days: i64) -> Result<u32, AppError> {
    let (state, session, admin) = kernel::session::require(Role::Owner).await?;
    let days = u32::try_from(days)
        .ok()
        .filter(|d| common::spam::RETENTION_DAYS_RANGE.contains(d))
        .ok_or_else(|| AppError::Invalid([("spam_retention_days".to_string(), t(InboxT::SpamRetentionInvalid).to_string())].into()))?;
    // Lowering the period deletes sooner: a sensitive action (a fresh passkey check).
    if days < db::retention_days(&state.pool).await.map_err(internal("spam retention"))? {
        kernel::session::fresh(&state, &session, &admin).await?;
    }
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    db::set_retention_days(&mut tx, days).await.map_err(internal("save spam retention"))?;
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::SpamRetentionChange, Some(&days.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(days)
}

/// The contact form's figures for the last [`FIGURE_DAYS`] days, newest first.
#[server(prefix = "/api", endpoint = "admin/contact/figures")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn contact_figures() -> Result<Vec<DayFigures>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    db::figures(&state.pool, FIGURE_DAYS).await.map_err(internal("contact figures"))
}
