//! Data requests as a kind of data that holds addresses (a person's other requests), and the
//! search over every kind: what Ebb holds for one address, now.

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{Address, PersonalCtx, PersonalData, PersonalSources, Table};
use kernel::state::AppState;

use super::RequestSettings;

/// Why a request's record stays.
macro_rules! kept {
    () => {
        "'the record of a data request is kept, as proof of its answer, until its address is removed after it is closed'"
    };
}

fn promise<'a>(ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
    Box::pin(async move { Ok(Promise::DataRequests { days: ctx.state.domain::<RequestSettings>().keep_days }) })
}

/// A person's other data requests (`$3`, the asking one, left out): kept as the record of how
/// each was answered, until their address is removed a retention period after they were closed.
/// `closed_at` is written as RFC 3339 in UTC, as the copy writes every time.
pub const OTHER_REQUESTS: Table = Table {
    kind: "data_requests",
    columns: &["kind", "received_on", "due_on", "status", "closed_at"],
    promise,
    find: "select count(*), count(*), min(recorded_at), max(recorded_at) from data_requests where email = $1 and id <> $3",
    kept_why: concat!("select ", kept!()),
    page: concat!(
        "select id::text, recorded_at,
                array[kind, received_on::text, due_on::text, status,
                      coalesce(regexp_replace(to_char(closed_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), '\\.?0+$', '') || 'Z', '')],
                ",
        kept!(),
        ", closed_at + make_interval(hours => $7 * 24)
         from data_requests where email = $1 and id <> $3 and (recorded_at, id) > ($4, coalesce($5::bigint, '-9223372036854775808'::bigint))
         order by recorded_at, id limit $6"
    ),
    erase: None,
    redo: None,
};

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
    Arc::new(OTHER_REQUESTS)
}
