//! Legal holds as a kind of data tied to an address (kernel::personal): a hold on every inquiry
//! from the address names it, and a hold on one of its inquiries is tied to it through that
//! inquiry. An erasure never lifts a hold — that is an admin's decision — so every hold stays,
//! with its reason.

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{Address, After, Item, PersonalCtx, PersonalData};
use sqlx::PgConnection;
use time::OffsetDateTime;

/// id, placed at, inquiry held, address held, reason, placed by.
type HoldRow = (i64, OffsetDateTime, Option<uuid::Uuid>, Option<String>, String, Option<String>);

/// Holds naming the address, or holding one of its inquiries.
pub struct Holds;

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(Holds)
}

const TIED: &str = "(h.email = $1 or h.inquiry_id in (select id from inquiries where lower(email collate ucs_basic) = $1))";
const KEPT: &str = "a legal hold stays until an admin lifts it; an erasure does not lift it";

impl PersonalData for Holds {
    fn kind(&self) -> &'static str {
        "legal_holds"
    }
    fn columns(&self) -> &'static [&'static str] {
        &["holds", "reason", "placed_by"]
    }
    fn promise<'a>(&'a self, _ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        Box::pin(async { Ok(Promise::LegalHolds) })
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, _request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        Box::pin(async move {
            let (count, oldest, newest): (i64, Option<OffsetDateTime>, Option<OffsetDateTime>) =
                sqlx::query_as(&format!("select count(*), min(placed_at), max(placed_at) from legal_holds h where {TIED}"))
                    .bind(&who.email)
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
        _request: i64,
        after: Option<After>,
        limit: i64,
    ) -> BoxFuture<'a, Result<Vec<Item>, sqlx::Error>> {
        Box::pin(async move {
            let (at, id) = (After::at_or_start(after.as_ref()), after.as_ref().and_then(|a| a.id.parse::<i64>().ok()).unwrap_or(i64::MIN));
            let rows: Vec<HoldRow> = sqlx::query_as(&format!(
                "select h.id, h.placed_at, h.inquiry_id, h.email, h.reason, (select name from admin_names where id = h.placed_by)
                 from legal_holds h where {TIED} and (h.placed_at, h.id) > ($2, $3) order by h.placed_at, h.id limit $4"
            ))
            .bind(&who.email)
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(&ctx.state.pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, at, inquiry, email, reason, by)| {
                    let holds = match (inquiry, email) {
                        (Some(i), _) => format!("inquiry {i}"),
                        (None, Some(e)) => format!("every inquiry from {e}"),
                        _ => String::new(),
                    };
                    Item { id: id.to_string(), at, fields: vec![holds, reason, by.unwrap_or_default()], kept: Some(KEPT.into()), deleted_by: None }
                })
                .collect())
        })
    }
    fn erase<'a>(&'a self, _conn: &'a mut PgConnection, _who: &'a Address, _request: i64, _limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
