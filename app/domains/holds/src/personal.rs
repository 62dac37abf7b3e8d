//! Legal holds as a kind of data tied to an address (kernel::personal): a hold on every inquiry
//! from the address names it, and a hold on one of its inquiries is tied to it through that
//! inquiry. An erasure never lifts a hold — that is an admin's decision — so every hold stays,
//! with its reason.

use std::sync::Arc;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{PersonalCtx, PersonalData, Table};

/// Holds naming the address, or holding one of its inquiries.
macro_rules! tied {
    () => {
        "(h.email = $1 or h.inquiry_id in (select id from inquiry_senders where sender = $1))"
    };
}
/// Why every hold stays.
macro_rules! kept {
    () => {
        "'a legal hold stays until an admin lifts it; an erasure does not lift it'"
    };
}

fn promise<'a>(_ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
    Box::pin(async { Ok(Promise::LegalHolds) })
}

/// Legal holds tied to the address; an erasure leaves them all.
pub const HOLDS: Table = Table {
    kind: "legal_holds",
    columns: &["holds", "reason", "placed_by"],
    promise,
    find: concat!("select count(*), count(*), min(placed_at), max(placed_at) from legal_holds h where ", tied!()),
    kept_why: concat!("select ", kept!()),
    page: concat!(
        "select h.id::text, h.placed_at,
                array[case when h.inquiry_id is not null then 'inquiry ' || h.inquiry_id
                           when h.email is not null then 'every inquiry from ' || h.email else '' end,
                      h.reason, coalesce((select name from admin_names where id = h.placed_by), '')],
                ",
        kept!(),
        ", null::timestamptz
         from legal_holds h where ",
        tied!(),
        " and (h.placed_at, h.id) > ($4, coalesce($5::bigint, '-9223372036854775808'::bigint)) order by h.placed_at, h.id limit $6"
    ),
    erase: None,
    redo: None,
};

/// This domain's source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(HOLDS)
}
