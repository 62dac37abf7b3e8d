//! The shared files, as the retention report reads them (see `kernel::retention`).

use std::time::Duration;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::retention::{Figures, Kind, ReadCtx, ReadError, Reading};

use crate::gc::{JOB, STEP_PURGE, STEP_REQUESTS};

/// Shares that still have a stored file (not purged).
pub fn kinds() -> Vec<Kind> {
    vec![
        Kind { kind: "share_files", job: JOB, step: STEP_PURGE, read: share_files },
        Kind { kind: "file_requests", job: JOB, step: STEP_REQUESTS, read: file_requests },
    ]
}

/// File requests: forgotten 30 days after they ended (used, expired or revoked).
fn file_requests<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(created_at) as oldest_at,
                      count(*) filter (where (status = 'used' or expires_at < $1)
                                         and greatest(expires_at, coalesce(used_at, expires_at)) < $1::timestamptz - make_interval(days => $2)) as "past!",
                      count(*) filter (where (status = 'used' or expires_at < $1)
                                         and greatest(expires_at, coalesce(used_at, expires_at)) < $1::timestamptz - make_interval(days => $2) - make_interval(secs => $3)) as "overdue!",
                      0::bigint as "held!"
               from file_requests"#,
            ctx.now,
            crate::requests::FORGET_AFTER_DAYS,
            ctx.every(JOB, Duration::from_secs(60)).as_seconds_f64(),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::FileRequests { days: crate::requests::FORGET_AFTER_DAYS as i64 }, figures, estimated: false })
    })
}

fn share_files<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let gc = ctx.state.domain::<crate::ShareSettings>().gc;
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(created_at) as oldest_at,
                      count(*) filter (where not held and ((status = 'consumed' and consumed_at <= $1::timestamptz - make_interval(secs => $2))
                                                           or (status = 'active' and expires_at <= $1))) as "past!",
                      count(*) filter (where not held and ((status = 'consumed' and consumed_at <= $1::timestamptz - make_interval(secs => $2 + $3))
                                                           or (status = 'active' and expires_at <= $1::timestamptz - make_interval(secs => $3)))) as "overdue!",
                      count(*) filter (where held) as "held!"
               from shares where status <> 'purged'"#,
            ctx.now,
            gc.delivery_grace.as_secs_f64(),
            ctx.every(JOB, Duration::from_secs(60)).as_seconds_f64(),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        let promise = Promise::ShareFiles { grace_mins: gc.delivery_grace.as_secs().div_ceil(60) as i64 };
        Ok(Reading { promise, figures, estimated: false })
    })
}
