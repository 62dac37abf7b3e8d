//! Inquiries as a kind of data that holds addresses (kernel::personal): prune removes them after
//! the retention period, so this domain says what a person's inquiries are, when each goes
//! anyway, and erases them for a data request — never one on legal hold (its own hold, or a hold
//! on every inquiry from the address), which stays with the hold's reason.

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{Address, After, Item, PersonalCtx, PersonalData};
use sqlx::PgConnection;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::prune;

/// A person's inquiries, by `lower(email collate ucs_basic)` (the index `inquiries_email_time_idx`).
pub struct Inquiries;

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(Inquiries)
}

type Row = (Uuid, OffsetDateTime, String, String, String, bool, bool, Option<String>);

impl PersonalData for Inquiries {
    fn kind(&self) -> &'static str {
        "inquiries"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["name", "email", "message", "on_legal_hold", "admins_notified"]
    }
    fn promise<'a>(&'a self, ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        Box::pin(async move { Ok(Promise::Inquiries { days: i64::from(prune::retention_days(&ctx.state.pool).await?) }) })
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, _request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        Box::pin(async move {
            let pool = &ctx.state.pool;
            let (count, kept, oldest, newest): (i64, i64, Option<OffsetDateTime>, Option<OffsetDateTime>) = sqlx::query_as(
                "select count(*), count(*) filter (where held or exists (select 1 from holds_in_force h where h.email = $1)), min(created_at), max(created_at)
                 from inquiries where lower(email collate ucs_basic) = $1",
            )
            .bind(&who.email)
            .fetch_one(pool)
            .await?;
            let kept_why: Vec<String> = sqlx::query_scalar(
                "select distinct 'legal hold: ' || h.reason from holds_in_force h
                 where h.email = $1 or h.inquiry_id in (select id from inquiries where lower(email collate ucs_basic) = $1 and held) order by 1",
            )
            .bind(&who.email)
            .fetch_all(pool)
            .await?;
            Ok(Found { kind: self.kind().into(), count, kept, kept_why, oldest, newest })
        })
    }
    fn page<'a>(
        &'a self,
        ctx: &'a PersonalCtx<'a>,
        who: &'a Address,
        _request: i64,
        after: Option<After>,
        limit: i64,
    ) -> BoxFuture<'a, Result<Vec<Item>, sqlx::Error>> {
        Box::pin(async move {
            let pool = &ctx.state.pool;
            let days = i64::from(prune::retention_days(pool).await?);
            let (at, id) = (After::at_or_start(after.as_ref()), after.as_ref().and_then(|a| a.id.parse().ok()).unwrap_or(Uuid::nil()));
            let rows: Vec<Row> = sqlx::query_as(
                "select i.id, i.created_at, i.name, i.email, i.message, i.notified,
                        i.held or h.reason is not null, coalesce(h.reason, hi.reason)
                 from inquiries i left join holds_in_force h on h.email = $1 left join holds_in_force hi on hi.inquiry_id = i.id
                 where lower(i.email collate ucs_basic) = $1 and (i.created_at, i.id) > ($2, $3)
                 order by i.created_at, i.id limit $4",
            )
            .bind(&who.email)
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, at, name, email, message, notified, held, reason)| Item {
                    id: id.to_string(),
                    at,
                    fields: vec![name, email, message, held.to_string(), notified.to_string()],
                    kept: held.then(|| format!("legal hold: {}", reason.unwrap_or_default())),
                    deleted_by: (!held).then(|| at + time::Duration::days(days)),
                })
                .collect())
        })
    }
    fn erase<'a>(&'a self, conn: &'a mut PgConnection, who: &'a Address, _request: i64, limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async move {
            // The outer `not held` is checked again on each locked row: a hold placed meanwhile
            // (an UPDATE of the row) keeps the inquiry, as with prune.
            let ids: Vec<uuid::Uuid> = sqlx::query_scalar(
                "delete from inquiries where id in (
                     select id from inquiries where lower(email collate ucs_basic) = $1 and not held
                        and not exists (select 1 from holds_in_force h where h.email = $1)
                      order by created_at, id limit $2 for update skip locked)
                   and not held
                 returning id",
            )
            .bind(&who.email)
            .bind(limit)
            .fetch_all(conn)
            .await?;
            Ok(ids.into_iter().map(|i| i.to_string()).collect())
        })
    }
    fn redo<'a>(&'a self, conn: &'a mut PgConnection, _hash: &'a str, ids: &'a [String]) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<uuid::Uuid> = ids.iter().filter_map(|i| i.parse().ok()).collect();
            let r = sqlx::query("delete from inquiries where id = any($1)").bind(&ids).execute(conn).await?;
            Ok(r.rows_affected())
        })
    }
}

/// A person's suspected spam (the contact form's quarantine), by `lower(email collate ucs_basic)`: pruned after
/// the spam retention, found, copied and erased for a data request like inquiries.
pub struct SuspectedSpam;

/// The quarantine's source, for the composition root's list.
pub fn spam_source() -> Arc<dyn PersonalData> {
    Arc::new(SuspectedSpam)
}

type SpamRow = (Uuid, OffsetDateTime, String, String, String, bool, Vec<String>);

impl PersonalData for SuspectedSpam {
    fn kind(&self) -> &'static str {
        "suspected_spam"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["name", "email", "message", "on_legal_hold", "signals"]
    }
    fn promise<'a>(&'a self, ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        Box::pin(async move { Ok(Promise::SuspectedSpam { days: i64::from(prune::spam_retention_days(&ctx.state.pool).await?) }) })
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, _request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        Box::pin(async move {
            let (count, kept, oldest, newest): (i64, i64, Option<OffsetDateTime>, Option<OffsetDateTime>) = sqlx::query_as(
                "select count(*), count(*) filter (where held or exists (select 1 from holds_in_force h where h.email = $1)), min(created_at), max(created_at)
                 from suspected_spam where lower(email collate ucs_basic) = $1",
            )
            .bind(&who.email)
            .fetch_one(&ctx.state.pool)
            .await?;
            let kept_why = if kept > 0 { vec!["legal hold".to_string()] } else { Vec::new() };
            Ok(Found { kind: self.kind().into(), count, kept, kept_why, oldest, newest })
        })
    }
    fn page<'a>(
        &'a self,
        ctx: &'a PersonalCtx<'a>,
        who: &'a Address,
        _request: i64,
        after: Option<After>,
        limit: i64,
    ) -> BoxFuture<'a, Result<Vec<Item>, sqlx::Error>> {
        Box::pin(async move {
            let pool = &ctx.state.pool;
            let days = i64::from(prune::spam_retention_days(pool).await?);
            let (at, id) = (After::at_or_start(after.as_ref()), after.as_ref().and_then(|a| a.id.parse().ok()).unwrap_or(Uuid::nil()));
            let rows: Vec<SpamRow> = sqlx::query_as(
                "select s.id, s.created_at, s.name, s.email, s.message,
                        s.held or exists (select 1 from holds_in_force h where h.email = $1), s.signals
                 from suspected_spam s
                 where lower(s.email collate ucs_basic) = $1 and (s.created_at, s.id) > ($2, $3)
                 order by s.created_at, s.id limit $4",
            )
            .bind(&who.email)
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, at, name, email, message, held, signals)| Item {
                    id: id.to_string(),
                    at,
                    fields: vec![name, email, message, held.to_string(), signals.join(" ")],
                    kept: held.then(|| "legal hold".to_string()),
                    deleted_by: (!held).then(|| at + time::Duration::days(days)),
                })
                .collect())
        })
    }
    fn erase<'a>(&'a self, conn: &'a mut PgConnection, who: &'a Address, _request: i64, limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<uuid::Uuid> = sqlx::query_scalar(
                "delete from suspected_spam where id in (
                     select id from suspected_spam where lower(email collate ucs_basic) = $1 and not held
                        and not exists (select 1 from holds_in_force h where h.email = $1)
                      order by created_at, id limit $2 for update skip locked)
                   and not held
                 returning id",
            )
            .bind(&who.email)
            .bind(limit)
            .fetch_all(conn)
            .await?;
            Ok(ids.into_iter().map(|i| i.to_string()).collect())
        })
    }
    fn redo<'a>(&'a self, conn: &'a mut PgConnection, _hash: &'a str, ids: &'a [String]) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<uuid::Uuid> = ids.iter().filter_map(|i| i.parse().ok()).collect();
            let r = sqlx::query("delete from suspected_spam where id = any($1)").bind(&ids).execute(conn).await?;
            Ok(r.rows_affected())
        })
    }
}
