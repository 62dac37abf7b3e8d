//! The `held` flags of the items a legal hold keeps. The holds domain owns the holds
//! (`legal_holds`, published read-only as `holds_in_force`); each kind of item keeps a `held` flag
//! on its own rows, which its prune, the share GC and erasure read under the row's lock. The
//! owner of those rows implements [`HeldFlags`] (contact for inquiries and suspected spam, shares
//! for shares), the composition root puts both into the state ([`HoldOwners`]), and holds sets and
//! recomputes the flags through it in the hold's own transaction — never naming another domain's
//! table.

use std::sync::Arc;

use futures::future::BoxFuture;
use sqlx::PgConnection;
use uuid::Uuid;

pub use common::holds::HoldTarget;

/// What a hold is stored under (one of `legal_holds`' three columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldKey {
    /// One inquiry.
    Inquiry(Uuid),
    /// A sender's address, lowercased: every inquiry and suspected spam message from it.
    Sender(String),
    /// One share.
    Share(i64),
}

/// What a hold names for the admin (`None`: gone) and how many items it keeps now.
pub type Described = (Option<String>, i64);

/// The owner of the rows a hold keeps. Every method runs on the caller's connection, inside the
/// hold's transaction, after holds took its advisory lock.
pub trait HeldFlags: Send + Sync {
    /// The key a new hold on `target` is stored under: `None` when the item does not exist (a
    /// sender hold names the address of an inquiry that is gone).
    fn key<'a>(&'a self, conn: &'a mut PgConnection, target: HoldTarget) -> BoxFuture<'a, Result<Option<HoldKey>, sqlx::Error>>;
    /// Flags what `key` covers, after its hold was inserted into the caller's transaction.
    /// `false` when the hold cannot stand: the item is gone, or not one a hold may keep (a share
    /// that is no longer active). The update (not only a lock) makes a prune that already read
    /// the row re-check it under its lock and skip it.
    fn hold<'a>(&'a self, conn: &'a mut PgConnection, key: &'a HoldKey) -> BoxFuture<'a, Result<bool, sqlx::Error>>;
    /// Recomputes the flags of what `key` covers from `holds_in_force` (after a lift), or of every
    /// flagged item when `None` (the daily clean-up of flags that no hold backs: a submission that
    /// read an address hold just before it was lifted). Returns the rows changed.
    fn refresh<'a>(&'a self, conn: &'a mut PgConnection, key: Option<&'a HoldKey>) -> BoxFuture<'a, Result<u64, sqlx::Error>>;
    /// For each of `keys` (in order), what it names for the admin's list (an inquiry's sender
    /// name, a share's file name) and how many items it keeps now; one query per kind of key,
    /// whatever the number of holds.
    fn describe<'a>(&'a self, conn: &'a mut PgConnection, keys: &'a [HoldKey]) -> BoxFuture<'a, Result<Vec<Described>, sqlx::Error>>;
}

/// The state's handle on the two owners of held items.
#[derive(Clone)]
pub struct HoldOwners {
    /// Inquiries and suspected spam (contact's).
    pub inquiries: Arc<dyn HeldFlags>,
    /// Shares (the shares domain's).
    pub shares: Arc<dyn HeldFlags>,
}

impl HoldOwners {
    /// The owner of what `key` names.
    pub fn of(&self, key: &HoldKey) -> &dyn HeldFlags {
        match key {
            HoldKey::Share(_) => &*self.shares,
            HoldKey::Inquiry(_) | HoldKey::Sender(_) => &*self.inquiries,
        }
    }

    /// The owner of what a new hold on `target` would keep.
    pub fn of_target(&self, target: HoldTarget) -> &dyn HeldFlags {
        match target {
            HoldTarget::Share(_) => &*self.shares,
            HoldTarget::Inquiry(_) | HoldTarget::Sender(_) => &*self.inquiries,
        }
    }

    /// Both owners.
    pub fn all(&self) -> [&dyn HeldFlags; 2] {
        [&*self.inquiries, &*self.shares]
    }

    /// [`HeldFlags::describe`] for keys of both owners, in order: each owner asked once.
    pub async fn describe(&self, conn: &mut PgConnection, keys: &[HoldKey]) -> Result<Vec<Described>, sqlx::Error> {
        let mut out = vec![(None, 0); keys.len()];
        for shares in [true, false] {
            let (at, mine): (Vec<usize>, Vec<HoldKey>) =
                keys.iter().enumerate().filter(|(_, k)| matches!(k, HoldKey::Share(_)) == shares).map(|(i, k)| (i, k.clone())).unzip();
            if mine.is_empty() {
                continue;
            }
            let owner = if shares { &*self.shares } else { &*self.inquiries };
            for (i, described) in at.into_iter().zip(owner.describe(&mut *conn, &mine).await?) {
                out[i] = described;
            }
        }
        Ok(out)
    }
}

impl crate::state::Part for HoldOwners {
    type Slot = crate::state::slot::HoldOwners;
}
