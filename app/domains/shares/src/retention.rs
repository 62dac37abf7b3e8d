//! The shared files, as the retention report reads them (see `kernel::retention`).

use std::time::Duration;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::retention::{Figures, Kind, ReadCtx, ReadError, Reading};

use crate::gc::{JOB, STEP_PURGE};

/// Shares that still have a stored file (not purged).
pub fn kinds() -> Vec<Kind> {
    vec![Kind { kind: "share_files", job: JOB, step: STEP_PURGE, read: share_files }]
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
