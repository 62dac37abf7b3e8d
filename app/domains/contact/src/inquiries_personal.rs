//! Inquiries and suspected spam as kinds of data that hold addresses (kernel::personal): prune
//! removes them after their retention periods, so this domain says what a person's are, when
//! each goes anyway, and erases them for a data request — never one on legal hold (its own hold,
//! or a hold on every inquiry from the address), which stays with the hold's reason. Both are
//! found by `lower(email collate ucs_basic)` (the indexes `inquiries_email_time_idx` and the
//! quarantine's).

use std::sync::Arc;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::personal::{PersonalCtx, PersonalData, Table};

use crate::prune;

fn inquiries_promise<'a>(ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
    Box::pin(async move { Ok(Promise::Inquiries { days: i64::from(prune::retention_days(&ctx.state.pool).await?) }) })
}

fn spam_promise<'a>(ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
    Box::pin(async move { Ok(Promise::SuspectedSpam { days: i64::from(prune::spam_retention_days(&ctx.state.pool).await?) }) })
}

/// What a person has in `$table`: how many rows, how many of them held (their own flag or a hold
/// on the address), the oldest and the newest.
macro_rules! find {
    ($table:literal) => {
        concat!(
            "select count(*), count(*) filter (where held or exists (select 1 from holds_in_force h where h.email = $1)), min(created_at), max(created_at)
             from ",
            $table,
            " where lower(email collate ucs_basic) = $1"
        )
    };
}

/// The erasure of a person's rows of `$table` (both tables have the same columns): never a held
/// row, nor any while a hold is on the address. The outer `not held` is checked again on each
/// locked row: a hold placed meanwhile (an UPDATE of the row) keeps it, as with prune.
macro_rules! erase {
    ($table:literal) => {
        concat!(
            "delete from ",
            $table,
            " where id in (
                 select id from ",
            $table,
            " where lower(email collate ucs_basic) = $1 and not held
                    and not exists (select 1 from holds_in_force h where h.email = $1)
                  order by created_at, id limit $4 for update skip locked)
               and not held
             returning id::text"
        )
    };
}

/// The erasure done again after a restore: the journal's ids (`$4`), whatever they hold now.
macro_rules! redo {
    ($table:literal) => {
        concat!("delete from ", $table, " where id in (select x::uuid from unnest($4::text[]) x where x ~ '^[0-9a-f-]{36}$')")
    };
}

/// A person's inquiries.
pub const INQUIRIES: Table = Table {
    kind: "inquiries",
    columns: &["name", "email", "message", "on_legal_hold", "admins_notified"],
    promise: inquiries_promise,
    find: find!("inquiries"),
    kept_why: "select distinct 'legal hold: ' || h.reason from holds_in_force h
               where h.email = $1 or h.inquiry_id in (select id from inquiries where lower(email collate ucs_basic) = $1 and held) order by 1",
    page: "select i.id::text, i.created_at, array[i.name, i.email, i.message, (i.held or h.reason is not null)::text, i.notified::text],
                  case when i.held or h.reason is not null then 'legal hold: ' || coalesce(h.reason, hi.reason, '') end,
                  case when not (i.held or h.reason is not null) then i.created_at + make_interval(hours => $7 * 24) end
           from inquiries i left join holds_in_force h on h.email = $1 left join holds_in_force hi on hi.inquiry_id = i.id
           where lower(i.email collate ucs_basic) = $1 and (i.created_at, i.id) > ($4, coalesce($5::uuid, '00000000-0000-0000-0000-000000000000'))
           order by i.created_at, i.id limit $6",
    erase: Some(erase!("inquiries")),
    redo: Some(redo!("inquiries")),
};

/// A person's suspected spam (the contact form's quarantine): pruned after the spam retention,
/// found, copied and erased for a data request like inquiries.
pub const SUSPECTED_SPAM: Table = Table {
    kind: "suspected_spam",
    columns: &["name", "email", "message", "on_legal_hold", "signals"],
    promise: spam_promise,
    find: find!("suspected_spam"),
    kept_why: "select 'legal hold'",
    page: "select s.id::text, s.created_at, array[s.name, s.email, s.message, s.on_hold::text, array_to_string(s.signals, ' ')],
                  case when s.on_hold then 'legal hold' end,
                  case when not s.on_hold then s.created_at + make_interval(hours => $7 * 24) end
           from (select *, held or exists (select 1 from holds_in_force h where h.email = $1) as on_hold from suspected_spam
                 where lower(email collate ucs_basic) = $1 and (created_at, id) > ($4, coalesce($5::uuid, '00000000-0000-0000-0000-000000000000'))) s
           order by s.created_at, s.id limit $6",
    erase: Some(erase!("suspected_spam")),
    redo: Some(redo!("suspected_spam")),
};

/// The inquiries' source, for the composition root's list.
pub fn source() -> Arc<dyn PersonalData> {
    Arc::new(INQUIRIES)
}

/// The quarantine's source, for the composition root's list.
pub fn spam_source() -> Arc<dyn PersonalData> {
    Arc::new(SUSPECTED_SPAM)
}
