//! The notification emails sent to the admins (`notify_digests`) as a kind of data tied to an
//! address: each row lists the keyed hashes of the senders whose inquiries it carried, never
//! their addresses. A data request finds the emails that carried a person's inquiries by the
//! hash; an erasure removes the person's hash from them (the emails themselves are in the
//! admins' mailboxes, outside Ebb, which the copy says). Rows go after [`KEEP_DAYS`].

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{Address, After, Item, PersonalCtx, PersonalData};
use sqlx::PgConnection;
use time::OffsetDateTime;

/// Days a row of the list of notification emails is kept.
pub const KEEP_DAYS: i64 = 90;

/// The notification emails that carried the address's inquiries.
pub struct Digests;

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(Digests)
}

impl PersonalData for Digests {
    fn kind(&self) -> &'static str {
        "notify_digests"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["content", "recipients", "inquiries"]
    }
    fn promise<'a>(&'a self, _ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        Box::pin(async { Ok(Promise::NotifyDigests { days: KEEP_DAYS }) })
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, _request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        Box::pin(async move {
            let (count, oldest, newest): (i64, Option<OffsetDateTime>, Option<OffsetDateTime>) =
                sqlx::query_as("select count(*), min(sent_at), max(sent_at) from notify_digests where address_hashes @> array[$1]")
                    .bind(&who.hash)
                    .fetch_one(&ctx.state.pool)
                    .await?;
            Ok(Found { kind: self.kind().into(), count, kept: 0, kept_why: Vec::new(), oldest, newest })
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
            let (at, id) = (After::at_or_start(after.as_ref()), after.as_ref().and_then(|a| a.id.parse::<i64>().ok()).unwrap_or(i64::MIN));
            let rows: Vec<(i64, OffsetDateTime, String, i32, i32)> = sqlx::query_as(
                "select id, sent_at, content, recipients, inquiries from notify_digests
                 where address_hashes @> array[$1] and (sent_at, id) > ($2, $3) order by sent_at, id limit $4",
            )
            .bind(&who.hash)
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(&ctx.state.pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, at, content, recipients, inquiries)| Item {
                    id: id.to_string(),
                    at,
                    fields: vec![content, recipients.to_string(), inquiries.to_string()],
                    kept: None,
                    deleted_by: Some(at + time::Duration::days(KEEP_DAYS)),
                })
                .collect())
        })
    }
    fn erase<'a>(&'a self, conn: &'a mut PgConnection, who: &'a Address, _request: i64, limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<i64> = sqlx::query_scalar(
                "update notify_digests set address_hashes = array_remove(address_hashes, $1)
                 where id in (select id from notify_digests where address_hashes @> array[$1] order by id limit $2 for update)
                 returning id",
            )
            .bind(&who.hash)
            .bind(limit)
            .fetch_all(conn)
            .await?;
            Ok(ids.into_iter().map(|i| i.to_string()).collect())
        })
    }
    fn redo<'a>(&'a self, conn: &'a mut PgConnection, hash: &'a str, ids: &'a [String]) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<i64> = ids.iter().filter_map(|i| i.parse().ok()).collect();
            let r =
                sqlx::query("update notify_digests set address_hashes = array_remove(address_hashes, $1) where id = any($2) and address_hashes @> array[$1]")
                    .bind(hash)
                    .bind(&ids)
                    .execute(conn)
                    .await?;
            Ok(r.rows_affected())
        })
    }
}

/// The notify job's step that deletes rows older than [`KEEP_DAYS`].
pub async fn forget_old(ctx: kernel::jobs::StepCtx) -> Result<kernel::jobs::StepReport, kernel::jobs::StepError> {
    let n = sqlx::query(
        "delete from notify_digests where id in (select id from notify_digests where sent_at < $1 - make_interval(days => $2) order by sent_at limit $3)",
    )
    .bind(ctx.now)
    .bind(KEEP_DAYS as i32)
    .bind(ctx.rows.min(100_000) as i64)
    .execute(&ctx.state.pool)
    .await?
    .rows_affected();
    Ok(kernel::jobs::StepReport::rows("deleted", n))
}

/// The notify job's step name that removes old rows.
pub const STEP_FORGET: &str = "forget";
