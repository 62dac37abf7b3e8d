//! Data requests as the retention report reads them: a request keeps the person's address until
//! it has been closed for the retention period; prune's step then removes it (the row stays with
//! the keyed hash, as the record of the answer). What is past that is the addresses still kept.

use std::time::Duration;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::retention::{Kind, ReadCtx, ReadError, Reading};

use super::erase::STEP_FORGET;
use super::RequestSettings;

/// Prune's claim interval when the registry has no prune (a test's own registry).
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The one kind this domain keeps.
pub fn kinds() -> Vec<Kind> {
    vec![Kind { kind: "data_requests", job: kernel::jobs::PRUNE, step: STEP_FORGET, read: data_requests }]
}

fn data_requests<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let days = ctx.state.domain::<RequestSettings>().keep_days;
        let keep = time::Duration::days(days);
        let (count, oldest_at, past, overdue): (i64, Option<time::OffsetDateTime>, i64, i64) = sqlx::query_as(
            "select count(*), min(recorded_at) filter (where email is not null),
                    count(*) filter (where status = 'done' and email is not null and closed_at < $1),
                    count(*) filter (where status = 'done' and email is not null and closed_at < $2)
             from data_requests",
        )
        .bind(ctx.now - keep)
        .bind(ctx.now - keep - ctx.every(kernel::jobs::PRUNE, PRUNE_EVERY))
        .fetch_one(&ctx.state.pool)
        .await?;
        let figures = kernel::retention::Figures { count, oldest_at, past, overdue, held: 0 };
        Ok(Reading { promise: Promise::DataRequests { days }, figures, estimated: false })
    })
}
