//! Shares' file events for the admins' emails (`kernel::file_events`): deliveries completed and
//! files received, each marked once notified (`notified_at`).

use futures::future::BoxFuture;
use kernel::file_events::{FileEvent, FileEventSource};
use sqlx::PgPool;

/// Shares' implementation, for the composition root.
pub struct Events;

impl FileEventSource for Events {
    fn claim<'a>(&'a self, pool: &'a PgPool, limit: i64) -> BoxFuture<'a, Result<Vec<FileEvent>, sqlx::Error>> {
        Box::pin(async move {
            let mut tx = pool.begin().await?;
            let delivered = sqlx::query_as::<_, (i64, i64, String)>(
                "with claimed as (
                     select id from share_deliveries where completed_at is not null and notified_at is null
                       and completed_at > now() - interval '1 day'
                     order by id limit $1 for update skip locked)
                 update share_deliveries d set notified_at = clock_timestamp() from claimed, shares s
                  where d.id = claimed.id and s.id = d.share_id
                 returning d.id, d.share_id, s.file_name",
            )
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
            let received = sqlx::query_as::<_, (i64, String)>(
                "with claimed as (
                     select id from shares where origin = 'request' and notified_at is null
                       and created_at > now() - interval '1 day'
                     order by id limit $1 for update skip locked)
                 update shares s set notified_at = clock_timestamp() from claimed where s.id = claimed.id
                 returning s.id, s.file_name",
            )
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
            tx.commit().await?;
            let mut events: Vec<FileEvent> =
                delivered.into_iter().map(|(event_id, share_id, file_name)| FileEvent { received: false, share_id, file_name, event_id }).collect();
            events.extend(received.into_iter().map(|(share_id, file_name)| FileEvent { received: true, share_id, file_name, event_id: share_id }));
            Ok(events)
        })
    }

    fn release<'a>(&'a self, pool: &'a PgPool, events: &'a [FileEvent]) -> BoxFuture<'a, Result<(), sqlx::Error>> {
        Box::pin(async move {
            let deliveries: Vec<i64> = events.iter().filter(|e| !e.received).map(|e| e.event_id).collect();
            let received: Vec<i64> = events.iter().filter(|e| e.received).map(|e| e.event_id).collect();
            sqlx::query("update share_deliveries set notified_at = null where id = any($1)").bind(&deliveries).execute(pool).await?;
            sqlx::query("update shares set notified_at = null where id = any($1)").bind(&received).execute(pool).await?;
            Ok(())
        })
    }

    fn give_up_stale<'a>(&'a self, pool: &'a PgPool, promised_since: Option<time::OffsetDateTime>) -> BoxFuture<'a, Result<(i64, i64), sqlx::Error>> {
        Box::pin(async move {
            sqlx::query_as(
                "with deliveries as (
                     update share_deliveries set notified_at = clock_timestamp()
                      where completed_at is not null and notified_at is null and completed_at <= now() - interval '1 day'
                     returning completed_at as at),
                 received as (
                     update shares set notified_at = clock_timestamp()
                      where origin = 'request' and notified_at is null and created_at <= now() - interval '1 day'
                     returning created_at as at),
                 stale as (select at from deliveries union all select at from received)
                 select count(*), count(*) filter (where at >= coalesce($1, '-infinity'::timestamptz)) from stale",
            )
            .bind(promised_since)
            .fetch_one(pool)
            .await
        })
    }
}
