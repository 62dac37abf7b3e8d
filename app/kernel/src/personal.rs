//! What a data request (the requests domain) reads from each domain: every kind of data that can
//! hold a person's email address is one implementation of [`PersonalData`] in the domain that
//! owns it — what it holds for an address (counts, the oldest and newest item, what an erasure
//! must leave and why), its items one page at a time for the copy, and the erasure of one bounded
//! batch. The composition root lists them ([`PersonalSources`]); a new kind of data that holds
//! addresses is one more implementation there.

use std::sync::Arc;

use common::personal::Found;
use common::retention::Promise;
use futures::future::BoxFuture;
use sqlx::PgConnection;
use time::OffsetDateTime;

use crate::state::AppState;

/// The person a request is about: the address as inquiries are compared (trimmed, lower-case)
/// and its keyed hash (what audit events and digests carry instead of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub email: String,
    pub hash: String,
}

impl Address {
    /// `email` normalised (trimmed, lower-case) with its keyed hash under the state's secret.
    pub fn new(state: &AppState, email: &str) -> Address {
        let email = email.trim().to_ascii_lowercase();
        let hash = state.keyring.mac(crate::keyring::Purpose::Address, &email);
        Address { email, hash }
    }
}

/// One item for the copy: when it was made, its fields (in the kind's column order), why an
/// erasure leaves it (if it does), and when Ebb deletes it anyway (if it will).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub id: String,
    pub at: OffsetDateTime,
    pub fields: Vec<String>,
    pub kept: Option<String>,
    pub deleted_by: Option<OffsetDateTime>,
}

/// Where a page of items starts: after the item made at `at` with id `id` (the copy's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    pub at: OffsetDateTime,
    pub id: String,
}

/// Before every item (where the first page starts).
pub const BEFORE_ALL: OffsetDateTime = time::macros::datetime!(1900-01-01 0:00 UTC);

impl After {
    /// When the page starts: after `after`, or before every item.
    pub fn at_or_start(after: Option<&After>) -> OffsetDateTime {
        after.map_or(BEFORE_ALL, |a| a.at)
    }
}

impl Item {
    pub fn after(&self) -> After {
        After { at: self.at, id: self.id.clone() }
    }
}

/// What every source reads with.
pub struct PersonalCtx<'a> {
    pub state: &'a AppState,
}

/// A page of a source's items, as [`PersonalData::page`] reads it.
pub type Items<'a> = BoxFuture<'a, Result<Vec<Item>, sqlx::Error>>;

/// One kind of data that can hold a person's address.
pub trait PersonalData: Send + Sync {
    /// The stable identifier (`inquiries`, `legal_holds`…), as `common::personal::kind_label`
    /// names it.
    fn kind(&self) -> &'static str;
    /// The names of [`Item::fields`], for the copy's CSV header and JSON keys.
    fn columns(&self) -> &'static [&'static str];
    /// The promise in force for this kind (the copy's cover sheet).
    fn promise<'a>(&'a self, ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>>;
    /// What it holds for `who`, now. `request` is the data request asking (a source may leave
    /// the request's own record out).
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>>;
    /// Up to `limit` items for `who` after `after`, oldest first.
    fn page<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, request: i64, after: Option<After>, limit: i64) -> Items<'a>;
    /// Erases up to `limit` of the items an erasure removes, in the caller's transaction; the
    /// ids of the rows erased (the deletion journal keeps them). Items on hold (or kept as a
    /// record) are never touched.
    fn erase<'a>(&'a self, conn: &'a mut PgConnection, who: &'a Address, request: i64, limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>>;
    /// After a restore (`ebb doctor --after-restore`): erases again the rows an erasure erased
    /// (`ids`, as [`PersonalData::erase`] returned them, for the address hashed `hash`); how
    /// many were back. Sources that erase nothing keep the default.
    fn redo<'a>(&'a self, _conn: &'a mut PgConnection, _hash: &'a str, _ids: &'a [String]) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async { Ok(0) })
    }
}

/// A kind of data described by its statements — what a source over one table is. Every statement
/// binds the same parameters: `$1` the address (normalised), `$2` its keyed hash, `$3` the asking
/// request's id; `page` and `erase` bind more (below).
pub struct Table {
    /// [`PersonalData::kind`].
    pub kind: &'static str,
    /// [`PersonalData::columns`].
    pub columns: &'static [&'static str],
    /// The promise in force; its [`Promise::days`] is `page`'s `$7`.
    pub promise: for<'a> fn(&'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>>,
    /// `(count, kept, oldest, newest)` of what the kind holds for the address.
    pub find: &'static str,
    /// Why the kept items stay (one text per reason), run when `find` counted any kept.
    pub kept_why: &'static str,
    /// Up to `$6` items after `($4` time, `$5` id as text — null before the first`)`, oldest
    /// first, with `$7` the promise's days (null when it counts none): rows of
    /// `(id text, at, fields text[], kept text or null, deleted_by or null)`.
    pub page: &'static str,
    /// Erases up to `$4` items (in the caller's transaction; never one on hold), returning their
    /// ids as text. `None`: an erasure leaves every item of this kind.
    pub erase: Option<&'static str>,
    /// After a restore: erases again the rows whose ids (text) are `$4`; how many were back.
    pub redo: Option<&'static str>,
}

type PageRow = (String, OffsetDateTime, Vec<String>, Option<String>, Option<OffsetDateTime>);

impl Table {
    fn bind<'q>(&self, sql: &'q str, who: &'q Address, request: i64) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
        sqlx::query(sql).bind(&who.email).bind(&who.hash).bind(request)
    }
}

impl PersonalData for Table {
    fn kind(&self) -> &'static str {
        self.kind
    }
    fn columns(&self) -> &'static [&'static str] {
        self.columns
    }
    fn promise<'a>(&'a self, ctx: &'a PersonalCtx<'a>) -> BoxFuture<'a, Result<Promise, sqlx::Error>> {
        (self.promise)(ctx)
    }
    fn find<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, request: i64) -> BoxFuture<'a, Result<Found, sqlx::Error>> {
        use sqlx::Row as _;
        Box::pin(async move {
            let row = self.bind(self.find, who, request).fetch_one(&ctx.state.pool).await?;
            let (count, kept): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            let kept_why = if kept > 0 {
                self.bind(self.kept_why, who, request).fetch_all(&ctx.state.pool).await?.iter().map(|r| r.try_get::<String, _>(0)).collect::<Result<_, _>>()?
            } else {
                Vec::new()
            };
            Ok(Found { kind: self.kind.into(), count, kept, kept_why, oldest: row.try_get(2)?, newest: row.try_get(3)? })
        })
    }
    fn page<'a>(&'a self, ctx: &'a PersonalCtx<'a>, who: &'a Address, request: i64, after: Option<After>, limit: i64) -> Items<'a> {
        Box::pin(async move {
            let days = (self.promise)(ctx).await?.days().map(|d| d.clamp(0, i64::from(i32::MAX / 24)) as i32);
            let rows: Vec<PageRow> = sqlx::query_as(self.page)
                .bind(&who.email)
                .bind(&who.hash)
                .bind(request)
                .bind(After::at_or_start(after.as_ref()))
                .bind(after.map(|a| a.id))
                .bind(limit)
                .bind(days)
                .fetch_all(&ctx.state.pool)
                .await?;
            Ok(rows.into_iter().map(|(id, at, fields, kept, deleted_by)| Item { id, at, fields, kept, deleted_by }).collect())
        })
    }
    fn erase<'a>(&'a self, conn: &'a mut PgConnection, who: &'a Address, request: i64, limit: i64) -> BoxFuture<'a, Result<Vec<String>, sqlx::Error>> {
        Box::pin(async move {
            let Some(sql) = self.erase else { return Ok(Vec::new()) };
            sqlx::query_scalar(sql).bind(&who.email).bind(&who.hash).bind(request).bind(limit).fetch_all(conn).await
        })
    }
    fn redo<'a>(&'a self, conn: &'a mut PgConnection, hash: &'a str, ids: &'a [String]) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            let Some(sql) = self.redo else { return Ok(0) };
            // The address is not known after a restore: its hash is.
            Ok(sqlx::query(sql).bind(None::<String>).bind(hash).bind(0i64).bind(ids).execute(conn).await?.rows_affected())
        })
    }
}

/// Every kind of data that can hold an address, in the order the page and the copy list them.
#[derive(Clone, Default)]
pub struct PersonalSources(pub Arc<Vec<Arc<dyn PersonalData>>>);

impl crate::state::Part for PersonalSources {
    type Slot = crate::state::slot::PersonalSources;
}

impl PersonalSources {
    pub fn new(sources: Vec<Arc<dyn PersonalData>>) -> Self {
        PersonalSources(Arc::new(sources))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn PersonalData>> {
        self.0.iter()
    }

    pub fn get(&self, kind: &str) -> Option<&Arc<dyn PersonalData>> {
        self.0.iter().find(|s| s.kind() == kind)
    }
}

/// A time as the copy writes it (RFC 3339, UTC).
pub fn rfc3339(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}
