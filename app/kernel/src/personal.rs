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
    fn page<'a>(
        &'a self,
        ctx: &'a PersonalCtx<'a>,
        who: &'a Address,
        request: i64,
        after: Option<After>,
        limit: i64,
    ) -> BoxFuture<'a, Result<Vec<Item>, sqlx::Error>>;
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

/// Every kind of data that can hold an address, in the order the page and the copy list them.
#[derive(Clone, Default)]
pub struct PersonalSources(pub Arc<Vec<Arc<dyn PersonalData>>>);

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
