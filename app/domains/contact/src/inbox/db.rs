//! Inquiry queries for the admin side.

use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Cursor, InboxCounts, InquiryDetail, InquirySummary};

/// `ILIKE` pattern for a search, with its wildcards escaped.
pub fn like_pattern(search: &str) -> String {
    let escaped = search.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// Cursor before every row (export starts here): the keyset condition is always a plain range
/// on the (created_at, id) index, so every page is an index range scan, also in a generic plan.
fn first_cursor() -> Cursor {
    Cursor { created_at: time::macros::datetime!(0001-01-01 0:00 UTC), id: Uuid::nil() }
}

/// Cursor after every row (the newest-first list starts here).
fn last_cursor() -> Cursor {
    Cursor { created_at: time::macros::datetime!(9999-12-31 23:59:59 UTC), id: Uuid::from_u128(u128::MAX) }
}

/// One page, newest first, strictly older than `before` (keyset: no OFFSET, so rows inserted or
/// deleted meanwhile neither shift nor repeat the rest).
pub async fn list_page(pool: &PgPool, search: Option<&str>, before: Option<Cursor>, limit: i64) -> Result<Vec<InquirySummary>, sqlx::Error> {
    let pattern = search.map(like_pattern);
    let before = before.unwrap_or_else(last_cursor);
    sqlx::query_as!(
        InquirySummary,
        r#"select id, name, email, left(message, 160) as "preview!", created_at, held
           from inquiries
           where (created_at, id) < ($1, $2)
             and ($3::text is null or name ilike $3 or email ilike $3 or message ilike $3)
           order by created_at desc, id desc
           limit $4"#,
        before.created_at,
        before.id,
        pattern,
        limit,
    )
    .fetch_all(pool)
    .await
}

pub async fn detail(pool: &PgPool, id: Uuid) -> Result<Option<InquiryDetail>, sqlx::Error> {
    sqlx::query_as!(InquiryDetail, "select id, name, email, message, created_at, held from inquiries where id = $1", id).fetch_optional(pool).await
}

/// The two lists an admin deletes from by selection: the inbox and the quarantine (the same
/// columns and the same hold rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    Inquiries,
    Spam,
}

impl Listed {
    fn table(self) -> &'static str {
        match self {
            Listed::Inquiries => "inquiries",
            Listed::Spam => "suspected_spam",
        }
    }
}

/// Deletes the given rows of `list`, except those on legal hold, and returns the ids deleted.
/// The holds themselves are checked, not only the row's flag: a submission racing a hold on its
/// sender's address may have missed the flag (prune checks the same way).
pub async fn delete(conn: &mut PgConnection, list: Listed, ids: &[Uuid]) -> Result<Vec<Uuid>, sqlx::Error> {
    let sql = format!(
        "delete from {} t where id = any($1) and not held
           and not exists (select 1 from holds_in_force h where h.email = lower(t.email collate ucs_basic))
         returning id",
        list.table()
    );
    sqlx::query_scalar(&sql).bind(ids).fetch_all(conn).await
}

/// Which of the given rows of `list` are on legal hold (by their flag or by a hold on their address).
pub async fn held_among(conn: &mut PgConnection, list: Listed, ids: &[Uuid]) -> Result<Vec<Uuid>, sqlx::Error> {
    let sql = format!(
        "select id from {} t where id = any($1)
           and (held or exists (select 1 from holds_in_force h where h.email = lower(t.email collate ucs_basic)))",
        list.table()
    );
    sqlx::query_scalar(&sql).bind(ids).fetch_all(conn).await
}

pub async fn counts(pool: &PgPool) -> Result<InboxCounts, sqlx::Error> {
    let r = sqlx::query!(
        r#"select count(*) as "total!",
                  count(*) filter (where created_at > now() - interval '1 day') as "day!",
                  count(*) filter (where created_at > now() - interval '7 days') as "week!"
           from inquiries"#
    )
    .fetch_one(pool)
    .await?;
    Ok(InboxCounts { total: r.total, last_24h: r.day, last_7d: r.week })
}

/// A row of the CSV export.
pub struct ExportRow {
    pub id: Uuid,
    pub created_at: OffsetDateTime,
    pub name: String,
    pub email: String,
    pub message: String,
}

/// One export page: up to `limit` rows after `after` in (created_at, id) order.
pub async fn export_page(conn: &mut PgConnection, search: Option<&str>, after: Option<Cursor>, limit: i64) -> Result<Vec<ExportRow>, sqlx::Error> {
    let pattern = search.map(like_pattern);
    let after = after.unwrap_or_else(first_cursor);
    sqlx::query_as!(
        ExportRow,
        r#"select id, created_at, name, email, message
           from inquiries
           where (created_at, id) > ($1, $2)
             and ($3::text is null or name ilike $3 or email ilike $3 or message ilike $3)
           order by created_at, id
           limit $4"#,
        after.created_at,
        after.id,
        pattern,
        limit,
    )
    .fetch_all(conn)
    .await
}
