//! Hold queries. Every change takes one transaction-scoped advisory lock first, so two admins
//! placing and lifting holds at the same moment are serialised and each recomputes the items'
//! `held` flags from the committed holds (no lost update between a hold and a lift). The flags
//! are their owners' (contact's inquiries and spam, shares'): set and recomputed through
//! [`HoldOwners`], never by naming their tables.

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{HeldItem, HoldTarget, HoldView};
use kernel::audit::Actor;
use kernel::audit::AuditKind;
use kernel::holds::{HoldKey, HoldOwners};

/// The advisory lock every hold change takes (`"EbbHolds"` as bytes).
const HOLDS_LOCK: i64 = 0x4562_6248_6f6c_6473;

/// Why a hold was not placed or lifted.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// The inquiry, share or hold does not exist (any more).
    #[error("not found")]
    NotFound,
    /// The item is already held (by this kind of hold).
    #[error("already on hold")]
    AlreadyHeld,
    /// Only an active, unexpired share can be held.
    #[error("the share is not active")]
    ShareNotActive,
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

async fn lock(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query!("select pg_advisory_xact_lock($1)", HOLDS_LOCK).execute(conn).await?;
    Ok(())
}

fn is_foreign_key_violation(e: &sqlx::Error) -> bool {
    e.as_database_error().and_then(|d| d.code()).is_some_and(|c| c == "23503")
}

/// Places a hold and records it; returns the hold's id.
pub async fn place(pool: &PgPool, owners: &HoldOwners, actor: &Actor, target: HoldTarget, reason: &str) -> Result<i64, HoldError> {
    let mut tx = pool.begin().await?;
    let id = place_in(&mut tx, owners, actor, target, reason).await?;
    tx.commit().await?;
    Ok(id)
}

/// [`place`] inside the caller's transaction (committed by the caller): the hold, its flags and
/// its event. Tests hold the transaction open to race a prune against a hold being placed.
pub async fn place_in(tx: &mut PgConnection, owners: &HoldOwners, actor: &Actor, target: HoldTarget, reason: &str) -> Result<i64, HoldError> {
    lock(&mut *tx).await?;
    let owner = owners.of_target(target);
    let key = owner.key(&mut *tx, target).await?.ok_or(HoldError::NotFound)?;
    let (inquiry, email, share) = columns(&key);
    // The foreign key's check locks the inquiry or share: a prune deleting it right now makes
    // this fail (NotFound) rather than hold nothing.
    let id = sqlx::query_scalar!(
        "insert into legal_holds (inquiry_id, email, share_id, reason, placed_by) values ($1, $2, $3, $4, $5)
         on conflict do nothing
         returning id",
        inquiry,
        email,
        share,
        reason,
        actor.admin,
    )
    .fetch_optional(&mut *tx)
    .await
    .map_err(|e| if is_foreign_key_violation(&e) { HoldError::NotFound } else { e.into() })?
    .ok_or(HoldError::AlreadyHeld)?;
    if !owner.hold(&mut *tx, &key).await? {
        return Err(if share.is_some() { HoldError::ShareNotActive } else { HoldError::NotFound });
    }
    let what = match (&key, target) {
        (HoldKey::Sender(_), HoldTarget::Sender(inquiry)) => format!("every inquiry from the sender of inquiry {inquiry}"),
        _ => describe_key(&key),
    };
    let detail = format!("{what}; reason: {reason}");
    kernel::audit::record(&mut *tx, actor, AuditKind::HoldPlace, Some(("hold", &id.to_string())), Some(&detail)).await?;
    Ok(id)
}

/// `legal_holds`' three columns for `key` (one is set).
fn columns(key: &HoldKey) -> (Option<Uuid>, Option<&str>, Option<i64>) {
    match key {
        HoldKey::Inquiry(id) => (Some(*id), None, None),
        HoldKey::Sender(email) => (None, Some(email.as_str()), None),
        HoldKey::Share(id) => (None, None, Some(*id)),
    }
}

/// What a hold names, for its events (never the address).
fn describe_key(key: &HoldKey) -> String {
    match key {
        HoldKey::Inquiry(id) => format!("inquiry {id}"),
        HoldKey::Sender(_) => "every inquiry from one address".to_string(),
        HoldKey::Share(id) => format!("share {id}"),
    }
}

/// The key a stored hold was placed under.
fn key_of(inquiry: Option<Uuid>, email: Option<String>, share: Option<i64>) -> Option<HoldKey> {
    match (inquiry, email, share) {
        (Some(id), _, _) => Some(HoldKey::Inquiry(id)),
        (_, Some(email), _) => Some(HoldKey::Sender(email)),
        (_, _, Some(id)) => Some(HoldKey::Share(id)),
        _ => None,
    }
}

/// Lifts a hold and records it: the items it kept are eligible again at once (unless another
/// hold keeps them).
pub async fn lift(pool: &PgPool, owners: &HoldOwners, actor: &Actor, id: i64) -> Result<(), HoldError> {
    let mut tx = pool.begin().await?;
    lock(&mut tx).await?;
    let hold = sqlx::query!("delete from legal_holds where id = $1 returning inquiry_id, email, share_id", id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(HoldError::NotFound)?;
    let what = match key_of(hold.inquiry_id, hold.email, hold.share_id) {
        Some(key) => {
            owners.of(&key).refresh(&mut tx, Some(&key)).await?;
            describe_key(&key)
        }
        None => String::new(),
    };
    kernel::audit::record(&mut tx, actor, AuditKind::HoldLift, Some(("hold", &id.to_string())), Some(&what)).await?;
    tx.commit().await?;
    Ok(())
}

/// Every hold, newest first, with what it keeps now (each item described by its owner).
pub async fn list(pool: &PgPool, owners: &HoldOwners) -> Result<Vec<HoldView>, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let rows = sqlx::query!(
        r#"select h.id, h.inquiry_id, h.email, h.share_id, h.reason, a.name as "placed_by?", h.placed_at
           from legal_holds h
           left join admin_names a on a.id = h.placed_by
           order by h.placed_at desc, h.id desc"#
    )
    .fetch_all(&mut *conn)
    .await?;
    let rows: Vec<_> = rows.into_iter().filter_map(|r| Some((key_of(r.inquiry_id, r.email.clone(), r.share_id)?, r))).collect();
    let keys: Vec<HoldKey> = rows.iter().map(|(k, _)| k.clone()).collect();
    let described = owners.describe(&mut conn, &keys).await?;
    Ok(rows
        .into_iter()
        .zip(described)
        .map(|((key, r), (name, covers))| {
            let item = match key {
                HoldKey::Inquiry(id) => HeldItem::Inquiry { id, from: name },
                HoldKey::Sender(email) => HeldItem::Email { email },
                HoldKey::Share(id) => HeldItem::Share { id, file_name: name },
            };
            HoldView { id: r.id, item, reason: r.reason, placed_by: r.placed_by, placed_at: r.placed_at, covers }
        })
        .collect())
}

/// Number of holds in force.
pub async fn count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"select count(*) as "n!" from legal_holds"#).fetch_one(pool).await
}

/// Clears `held` flags that no hold backs any more (a submission that read an address hold just
/// before it was lifted): serialised with hold changes by the same lock. Returns the rows fixed.
pub async fn clear_stale_flags(pool: &PgPool, owners: &HoldOwners) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    lock(&mut tx).await?;
    let mut fixed = 0;
    for owner in owners.all() {
        fixed += owner.refresh(&mut tx, None).await?;
    }
    tx.commit().await?;
    Ok(fixed)
}
