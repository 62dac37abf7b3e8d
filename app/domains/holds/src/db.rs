//! Hold queries. Every change takes one transaction-scoped advisory lock first, so two admins
//! placing and lifting holds at the same moment are serialised and each recomputes the items'
//! `held` flags from the committed holds (no lost update between a hold and a lift).

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{HeldItem, HoldTarget, HoldView};
use kernel::audit::Actor;
use kernel::audit::AuditKind;

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
pub async fn place(pool: &PgPool, actor: &Actor, target: HoldTarget, reason: &str) -> Result<i64, HoldError> {
    let mut tx = pool.begin().await?;
    let id = place_in(&mut tx, actor, target, reason).await?;
    tx.commit().await?;
    Ok(id)
}

/// [`place`] inside the caller's transaction (committed by the caller): the hold, its flags and
/// its event. Tests hold the transaction open to race a prune against a hold being placed.
pub async fn place_in(tx: &mut PgConnection, actor: &Actor, target: HoldTarget, reason: &str) -> Result<i64, HoldError> {
    lock(&mut *tx).await?;
    let (id, what) = match target {
        HoldTarget::Inquiry(inquiry) => hold_inquiry(&mut *tx, actor, inquiry, reason).await?,
        HoldTarget::Sender(inquiry) => hold_sender(&mut *tx, actor, inquiry, reason).await?,
        HoldTarget::Share(share) => hold_share(&mut *tx, actor, share, reason).await?,
    };
    let detail = format!("{what}; reason: {reason}");
    kernel::audit::record(&mut *tx, actor, AuditKind::HoldPlace, Some(("hold", &id.to_string())), Some(&detail)).await?;
    Ok(id)
}

/// Holds one inquiry (lock taken by the caller); returns the hold's id and what it holds, for
/// the event.
async fn hold_inquiry(tx: &mut PgConnection, actor: &Actor, inquiry: Uuid, reason: &str) -> Result<(i64, String), HoldError> {
    // The FK check locks the inquiry: a prune deleting it right now makes this fail
    // (NotFound) rather than hold nothing.
    let id = sqlx::query_scalar!(
        "insert into legal_holds (inquiry_id, reason, placed_by) select $1, $2, $3
                 where exists (select 1 from inquiries where id = $1)
                 on conflict (inquiry_id) where inquiry_id is not null do nothing
                 returning id",
        inquiry,
        reason,
        actor.admin,
    )
    .fetch_optional(&mut *tx)
    .await
    .map_err(|e| if is_foreign_key_violation(&e) { HoldError::NotFound } else { e.into() })?;
    let Some(id) = id else {
        let held = sqlx::query_scalar!("select exists (select 1 from legal_holds where inquiry_id = $1) as \"held!\"", inquiry).fetch_one(&mut *tx).await?;
        return Err(if held { HoldError::AlreadyHeld } else { HoldError::NotFound });
    };
    // An UPDATE of the row (not only a lock): a prune that already read the row re-checks
    // it under its lock and skips it.
    let r = sqlx::query!("update inquiries set held = true where id = $1", inquiry).execute(&mut *tx).await?;
    if r.rows_affected() != 1 {
        return Err(HoldError::NotFound);
    }
    Ok((id, format!("inquiry {inquiry}")))
}

/// Holds every inquiry from the sender of `inquiry`, by address (lock taken by the caller).
async fn hold_sender(tx: &mut PgConnection, actor: &Actor, inquiry: Uuid, reason: &str) -> Result<(i64, String), HoldError> {
    let email = sqlx::query_scalar!("select lower(email collate ucs_basic) as \"email!\" from inquiries where id = $1", inquiry)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(HoldError::NotFound)?;
    let id = sqlx::query_scalar!(
        "insert into legal_holds (email, reason, placed_by) values ($1, $2, $3)
                 on conflict (email) where email is not null do nothing
                 returning id",
        email,
        reason,
        actor.admin,
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(HoldError::AlreadyHeld)?;
    sqlx::query!("update inquiries set held = true where lower(email collate ucs_basic) = $1 and not held", email).execute(&mut *tx).await?;
    Ok((id, format!("every inquiry from the sender of inquiry {inquiry}")))
}

/// Holds one share (lock taken by the caller).
async fn hold_share(tx: &mut PgConnection, actor: &Actor, share: i64, reason: &str) -> Result<(i64, String), HoldError> {
    // Only an active, unexpired share: such a share is not eligible for the GC, so no
    // GC run can be deleting its file at this moment.
    let id = sqlx::query_scalar!(
        "insert into legal_holds (share_id, reason, placed_by) select $1, $2, $3
                 where exists (select 1 from shares where id = $1 and status = 'active' and expires_at > clock_timestamp())
                 on conflict (share_id) where share_id is not null do nothing
                 returning id",
        share,
        reason,
        actor.admin,
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else {
        let r = sqlx::query!(
            r#"select exists (select 1 from legal_holds where share_id = $1) as "held!",
                              exists (select 1 from shares where id = $1) as "exists!""#,
            share
        )
        .fetch_one(&mut *tx)
        .await?;
        return Err(if r.held {
            HoldError::AlreadyHeld
        } else if r.exists {
            HoldError::ShareNotActive
        } else {
            HoldError::NotFound
        });
    };
    sqlx::query!("update shares set held = true where id = $1", share).execute(&mut *tx).await?;
    Ok((id, format!("share {share}")))
}

/// Lifts a hold and records it: the items it kept are eligible again at once (unless another
/// hold keeps them).
pub async fn lift(pool: &PgPool, actor: &Actor, id: i64) -> Result<(), HoldError> {
    let mut tx = pool.begin().await?;
    lock(&mut tx).await?;
    let hold = sqlx::query!("delete from legal_holds where id = $1 returning inquiry_id, email, share_id", id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(HoldError::NotFound)?;
    let what = if let Some(inquiry) = hold.inquiry_id {
        sqlx::query!(
            "update inquiries i set held = exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))
             where id = $1",
            inquiry
        )
        .execute(&mut *tx)
        .await?;
        format!("inquiry {inquiry}")
    } else if let Some(email) = hold.email {
        sqlx::query!(
            "update inquiries i set held = exists (select 1 from legal_holds h where h.inquiry_id = i.id)
             where held and lower(email collate ucs_basic) = $1",
            email
        )
        .execute(&mut *tx)
        .await?;
        "every inquiry from one address".to_string()
    } else if let Some(share) = hold.share_id {
        sqlx::query!("update shares set held = false where id = $1", share).execute(&mut *tx).await?;
        format!("share {share}")
    } else {
        String::new()
    };
    kernel::audit::record(&mut tx, actor, AuditKind::HoldLift, Some(("hold", &id.to_string())), Some(&what)).await?;
    tx.commit().await?;
    Ok(())
}

/// Every hold, newest first, with what it keeps now.
pub async fn list(pool: &PgPool) -> Result<Vec<HoldView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select h.id, h.inquiry_id, h.email, h.share_id, h.reason, a.name as "placed_by?", h.placed_at,
                  i.name as "inquiry_from?", s.file_name as "share_file?",
                  case when h.email is not null then (select count(*) from inquiries x where lower(x.email collate ucs_basic) = h.email)
                       when h.inquiry_id is not null then (select count(*) from inquiries x where x.id = h.inquiry_id)
                       else (select count(*) from shares x where x.id = h.share_id and x.status <> 'purged') end as "covers!"
           from legal_holds h
           left join admin_names a on a.id = h.placed_by
           left join inquiries i on i.id = h.inquiry_id
           left join shares s on s.id = h.share_id
           order by h.placed_at desc, h.id desc"#
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| HoldView {
            id: r.id,
            item: match (r.inquiry_id, r.email, r.share_id) {
                (Some(id), _, _) => HeldItem::Inquiry { id, from: r.inquiry_from },
                (_, Some(email), _) => HeldItem::Email { email },
                (_, _, share) => HeldItem::Share { id: share.unwrap_or_default(), file_name: r.share_file },
            },
            reason: r.reason,
            placed_by: r.placed_by,
            placed_at: r.placed_at,
            covers: r.covers,
        })
        .collect())
}

/// Number of holds in force.
pub async fn count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"select count(*) as "n!" from legal_holds"#).fetch_one(pool).await
}

/// Clears `held` flags that no hold backs any more (a submission that read an address hold just
/// before it was lifted): serialised with hold changes by the same lock. Returns the rows fixed.
pub async fn clear_stale_flags(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    lock(&mut tx).await?;
    let inquiries = sqlx::query!(
        "update inquiries i set held = false
         where held
           and not exists (select 1 from legal_holds h where h.inquiry_id = i.id)
           and not exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))"
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let shares = sqlx::query!("update shares s set held = false where held and not exists (select 1 from legal_holds h where h.share_id = s.id)")
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(inquiries + shares)
}
