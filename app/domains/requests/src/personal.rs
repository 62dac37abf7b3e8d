//! Data requests as a kind of data that holds addresses (a person's other requests), and the
//! search over every kind: what Ebb holds for one address, now.

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{Address, After, Item, PersonalCtx, PersonalData, PersonalSources};
use kernel::state::AppState;
use sqlx::PgConnection;
use time::OffsetDateTime;

use super::RequestSettings;

/// id, recorded at, kind, received, due, status, closed at.
type RequestRow = (i64, OffsetDateTime, String, time::Date, time::Date, String, Option<OffsetDateTime>);

/// A person's other data requests: kept as the record of how each was answered, until their
/// address is removed a retention period after they were closed.
pub struct OtherRequests;

const KEPT: &str = "the record of a data request is kept, as proof of its answer, until its address is removed after it is closed";

impl PersonalData for OtherRequests {
    fn kind(&self) -> &'static str {
        "data_requests"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["kind", "received_on", "due_on", "status", "closed_at"]
    }
    fn promise<'a>(&'a self, ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        Box::pin(async move { Ok(Promise::DataRequests { days: ctx.state.domain::<RequestSettings>().keep_days }) })
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        Box::pin(async move {
            let (count, oldest, newest): (i64, Option<OffsetDateTime>, Option<OffsetDateTime>) =
                sqlx::query_as("select count(*), min(recorded_at), max(recorded_at) from data_requests where email = $1 and id <> $2")
                    .bind(&who.email)
                    .bind(request)
                    .fetch_one(&ctx.state.pool)
                    .await?;
            let kept_why = if count > 0 { vec![KEPT.to_string()] } else { Vec::new() };
            Ok(Found { kind: self.kind().into(), count, kept: count, kept_why, oldest, newest })
        })
    }
    fn page<'a>(
        &'a self,
        ctx: &'a PersonalCtx<'a>,
        who: &'a Address,
        request: i64,
        after: Option<After>,
        limit: i64,
    ) -> BoxFuture<'a, Result<Vec<Item>, sqlx::Error>> {
        Box::pin(async move {
            let keep = ctx.state.domain::<RequestSettings>().keep_days;
            let after_id: i64 = after.as_ref().and_then(|a| a.id.parse().ok()).unwrap_or(i64::MIN);
            let rows: Vec<RequestRow> = sqlx::query_as(
                "select id, recorded_at, kind, received_on, due_on, status, closed_at from data_requests
                 where email = $1 and id <> $2 and (recorded_at, id) > ($3, $4) order by recorded_at, id limit $5",
            )
            .bind(&who.email)
            .bind(request)
            .bind(After::at_or_start(after.as_ref()))
            .bind(after_id)
            .bind(limit)
            .fetch_all(&ctx.state.pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, at, kind, received, due, status, closed)| Item {
                    id: id.to_string(),
                    at,
                    fields: vec![kind, received.to_string(), due.to_string(), status, closed.map(kernel::personal::rfc3339).unwrap_or_default()],
                    kept: Some(KEPT.into()),
                    deleted_by: closed.map(|c| c + time::Duration::days(keep)),
                })
                .collect())
        })
    }
    fn erase<'a>(&'a self, _conn: &'a mut PgConnection, _who: &'a Address, _request: i64, _limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// What every kind of data holds for `who` now (the request `request` left out of its own kind).
pub async fn find_all(state: &AppState, who: &Address, request: i64) -> Result<Vec<Found>, sqlx::Error> {
    let ctx = PersonalCtx { state };
    let mut found = Vec::new();
    for source in sources(state).iter() {
        found.push(source.find(&ctx, who, request).await?);
    }
    Ok(found)
}

/// The sources the composition root listed.
pub fn sources(state: &AppState) -> PersonalSources {
    state.domain::<PersonalSources>().clone()
}

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(OtherRequests)
}
