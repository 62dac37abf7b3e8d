//! The notification emails sent to the admins (`notify_digests`) as a kind of data tied to an
//! address: each row lists the keyed hashes of the senders whose inquiries it carried, never
//! their addresses. A data request finds the emails that carried a person's inquiries by the
//! hash; an erasure removes the person's hash from them (the emails themselves are in the
//! admins' mailboxes, outside Ebb, which the copy says). Rows go after [`KEEP_DAYS`].

use std::sync::Arc;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{PersonalCtx, PersonalData, Table};

/// Days a row of the list of notification emails is kept.
pub const KEEP_DAYS: i64 = 90;

fn promise<'a>(_ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
    Box::pin(async { Ok(Promise::NotifyDigests { days: KEEP_DAYS }) })
}

/// The notification emails that carried the address's inquiries, by its hash (`$2`).
pub const DIGESTS: Table = Table {
    kind: "notify_digests",
    columns: &["content", "recipients", "inquiries"],
    promise,
    find: "select count(*), 0::int8, min(sent_at), max(sent_at) from notify_digests where address_hashes @> array[$2]",
    kept_why: "select ''",
    page: "select id::text, sent_at, array[content, recipients::text, inquiries::text], null::text, sent_at + make_interval(hours => $7 * 24)
           from notify_digests where address_hashes @> array[$2] and (sent_at, id) > ($4, coalesce($5::bigint, '-9223372036854775808'::bigint))
           order by sent_at, id limit $6",
    erase: Some(
        "update notify_digests set address_hashes = array_remove(address_hashes, $2)
         where id in (select id from notify_digests where address_hashes @> array[$2] order by id limit $4 for update)
         returning id::text",
    ),
    redo: Some(
        "update notify_digests set address_hashes = array_remove(address_hashes, $2)
         where id in (select x::bigint from unnest($4::text[]) x where x ~ '^-?[0-9]{1,18}$') and address_hashes @> array[$2]",
    ),
};

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(DIGESTS)
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
