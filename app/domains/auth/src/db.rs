//! Admin, passkey, invite, challenge and session queries. Lifecycle transitions are single
//! conditional statements whose WHERE holds the rule.

use serde_json::Value as Json;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

use common::admin::Role;
use common::error::AppError;

use super::{AdminInfo, PasskeyView, SessionView};

pub async fn admin_count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"select count(*) as "n!" from admins"#).fetch_one(pool).await
}

pub async fn insert_admin(conn: &mut PgConnection, id: Uuid, name: &str, role: Role) -> Result<(), sqlx::Error> {
    sqlx::query!("insert into admins (id, name, role) values ($1, $2, $3)", id, name, role as Role).execute(conn).await?;
    Ok(())
}

pub async fn admin_by_id(pool: &PgPool, id: Uuid) -> Result<Option<AdminInfo>, sqlx::Error> {
    sqlx::query_as!(AdminInfo, r#"select id, name, role as "role: Role" from admins where id = $1"#, id).fetch_optional(pool).await
}

/// Whether there is an owner (a fresh installation's first invite makes one).
pub async fn has_owner(pool: &PgPool) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(r#"select exists (select 1 from admins where role = 'owner') as "yes!""#).fetch_one(pool).await
}

/// An admin as the operator's list (`ebb admin list`) shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminListing {
    pub id: Uuid,
    pub name: String,
    pub role: Role,
    pub created_at: OffsetDateTime,
    pub passkeys: i64,
    /// Sessions signed in now (not expired).
    pub sessions: i64,
}

/// Every admin, oldest first.
pub async fn list_admins(pool: &PgPool) -> Result<Vec<AdminListing>, sqlx::Error> {
    sqlx::query_as!(
        AdminListing,
        r#"select a.id, a.name, a.role as "role: Role", a.created_at,
                  (select count(*) from passkeys p where p.admin_id = a.id) as "passkeys!",
                  (select count(*) from admin_sessions s join tower_sessions.session t on t.id = s.session_id
                    where s.admin_id = a.id and t.expiry_date > now()) as "sessions!"
           from admins a order by a.created_at, a.id"#
    )
    .fetch_all(pool)
    .await
}

/// What is done to an admin by an owner, or by the operator on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Their role becomes this one.
    Role(Role),
    /// They are removed: their sessions end, their passkeys go.
    Remove,
}

/// What a [`Change`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// The role changed (from `was`); the admin's sessions have the new role at their next request.
    Role { name: String, was: Role },
    /// Removed, with this many passkeys and sessions ended.
    Removed { name: String, passkeys: i64, sessions: i64 },
    /// No such admin (already removed).
    NotFound,
    /// They are the only owner: nobody could manage the admins afterwards. Another owner first.
    LastOwner,
    /// The only admin left: nobody could sign in afterwards.
    LastAdmin,
}

/// Changes an admin in the caller's transaction. Every admin row is locked first, so two changes
/// at once cannot each leave the other as "one more owner": there is always an owner. A removal
/// ends their sessions (the session rows go, so the cookie is refused at once), deletes their
/// passkeys (they cannot sign in again) and the admin row (what they did keeps their name: each
/// audit event holds a copy). The caller records it (and journals a removal) before it commits.
pub async fn change_admin(conn: &mut PgConnection, id: Uuid, change: Change) -> Result<Changed, sqlx::Error> {
    let admins = sqlx::query!(r#"select id, name, role as "role: Role" from admins order by id for update"#).fetch_all(&mut *conn).await?;
    let Some(target) = admins.iter().find(|a| a.id == id) else { return Ok(Changed::NotFound) };
    let owners = admins.iter().filter(|a| a.role == Role::Owner).count();
    let demoted = change != Change::Role(Role::Owner);
    if change == Change::Remove && admins.len() == 1 {
        return Ok(Changed::LastAdmin);
    }
    if target.role == Role::Owner && owners == 1 && demoted {
        return Ok(Changed::LastOwner);
    }
    let name = target.name.clone();
    match change {
        Change::Role(role) if role == target.role => Ok(Changed::Role { name, was: role }),
        Change::Role(role) => {
            sqlx::query!("update admins set role = $2 where id = $1", id, role as Role).execute(&mut *conn).await?;
            Ok(Changed::Role { name, was: target.role })
        }
        Change::Remove => {
            let sessions = sqlx::query!("delete from tower_sessions.session where id in (select session_id from admin_sessions where admin_id = $1)", id)
                .execute(&mut *conn)
                .await?
                .rows_affected() as i64;
            let passkeys = sqlx::query!("delete from passkeys where admin_id = $1", id).execute(&mut *conn).await?.rows_affected() as i64;
            sqlx::query!("delete from admins where id = $1", id).execute(&mut *conn).await?;
            Ok(Changed::Removed { name, passkeys, sessions })
        }
    }
}

// ---- invites ---------------------------------------------------------------------------------

pub async fn insert_invite(
    conn: &mut PgConnection,
    token_hash: &[u8],
    name: Option<&str>,
    role: Role,
    created_by: Option<Uuid>,
    ttl: time::Duration,
) -> Result<(Uuid, OffsetDateTime), sqlx::Error> {
    // Expiry on the database clock, like every other expiry (one clock for all instances).
    let r = sqlx::query!(
        "insert into admin_invites (token_hash, name, role, created_by, expires_at)
         values ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5)) returning id, expires_at",
        token_hash,
        name,
        role as Role,
        created_by,
        ttl.as_seconds_f64(),
    )
    .fetch_one(conn)
    .await?;
    Ok((r.id, r.expires_at))
}

/// An invite that can still be redeemed.
pub struct OpenInvite {
    pub id: Uuid,
    pub name: Option<String>,
    /// The role its admin gets.
    pub role: Role,
    pub expires_at: OffsetDateTime,
}

pub async fn open_invite(pool: &PgPool, token_hash: &[u8]) -> Result<Option<OpenInvite>, sqlx::Error> {
    sqlx::query_as!(
        OpenInvite,
        r#"select id, name, role as "role: Role", expires_at from admin_invites
         where token_hash = $1 and redeemed_at is null and expires_at > now()"#,
        token_hash,
    )
    .fetch_optional(pool)
    .await
}

/// Redeems an invite for `admin`: one conditional update, so of concurrent redemptions exactly
/// one sees `true`.
pub async fn redeem_invite(conn: &mut PgConnection, invite: Uuid, admin: Uuid) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!(
        "update admin_invites set redeemed_at = now(), redeemed_by = $2
         where id = $1 and redeemed_at is null and expires_at > now()",
        invite,
        admin,
    )
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// A new admin with their first passkey.
pub struct NewAdmin<'a> {
    pub id: Uuid,
    pub name: &'a str,
    pub credential_id: &'a [u8],
    pub passkey: &'a Json,
    pub passkey_name: &'a str,
}

/// Creates the admin, their passkey and the record in one transaction, only if this call
/// redeems the invite. Returns false (and creates nothing) when the invite was already redeemed
/// or has expired — so one invite makes at most one admin, however many requests race. The
/// redemption is journaled before it commits: a database restored from an earlier backup gets
/// the invite ended again by `ebb doctor --after-restore`, so its link does not work twice.
pub async fn create_admin_from_invite(pool: &PgPool, store: &dyn kernel::storage::BlobStore, invite: Uuid, admin: NewAdmin<'_>) -> Result<bool, AppError> {
    let db = |e: sqlx::Error| AppError::internal("create admin", e);
    let mut tx = pool.begin().await.map_err(db)?;
    // The invite's role (an invite that is gone makes nothing: its redemption below fails).
    let role = sqlx::query_scalar!(r#"select role as "role: Role" from admin_invites where id = $1"#, invite).fetch_optional(&mut *tx).await.map_err(db)?;
    insert_admin(&mut tx, admin.id, admin.name, role.unwrap_or(Role::Auditor)).await.map_err(db)?;
    if !redeem_invite(&mut tx, invite, admin.id).await.map_err(db)? {
        tx.rollback().await.map_err(db)?;
        return Ok(false);
    }
    insert_passkey(&mut tx, admin.id, admin.credential_id, admin.passkey, admin.passkey_name).await.map_err(db)?;
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::InviteRedeem, Some(&invite.to_string())).await.map_err(db)?;
    kernel::storage::journal::record_in_request(&mut *tx, store, kernel::storage::journal::Deletion::InviteRedeem { ids: vec![invite] }).await?;
    tx.commit().await.map_err(db)?;
    Ok(true)
}

// ---- challenges ------------------------------------------------------------------------------

pub async fn insert_challenge(
    pool: &PgPool,
    id: Uuid,
    kind: &str,
    state: &Json,
    admin: Option<Uuid>,
    invite: Option<Uuid>,
    ttl: time::Duration,
) -> Result<(), sqlx::Error> {
    // Expiry on the database clock (prune deletes by it, and instances' clocks may differ).
    sqlx::query!(
        "insert into passkey_challenges (id, kind, state, admin_id, invite_id, expires_at)
         values ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6))",
        id,
        kind,
        state,
        admin,
        invite,
        ttl.as_seconds_f64(),
    )
    .execute(pool)
    .await?;
    Ok(())
}

pub struct TakenChallenge {
    pub state: Json,
    pub admin_id: Option<Uuid>,
    pub invite_id: Option<Uuid>,
    /// Past its expiry by the database clock.
    pub expired: bool,
}

/// Takes (deletes and returns) a challenge: a challenge is used at most once, whatever the
/// outcome of the ceremony.
pub async fn take_challenge(pool: &PgPool, id: Uuid, kind: &str) -> Result<Option<TakenChallenge>, sqlx::Error> {
    sqlx::query_as!(
        TakenChallenge,
        r#"delete from passkey_challenges where id = $1 and kind = $2
           returning state, admin_id, invite_id, expires_at <= clock_timestamp() as "expired!""#,
        id,
        kind,
    )
    .fetch_optional(pool)
    .await
}

// ---- passkeys --------------------------------------------------------------------------------

pub async fn insert_passkey(conn: &mut PgConnection, admin: Uuid, credential_id: &[u8], passkey: &Json, name: &str) -> Result<Uuid, sqlx::Error> {
    sqlx::query_scalar!(
        "insert into passkeys (admin_id, credential_id, passkey, name) values ($1, $2, $3, $4) returning id",
        admin,
        credential_id,
        passkey,
        name,
    )
    .fetch_one(conn)
    .await
}

pub struct StoredPasskey {
    pub id: Uuid,
    pub admin_id: Uuid,
    pub passkey: Json,
}

pub async fn passkey_by_credential(pool: &PgPool, credential_id: &[u8]) -> Result<Option<StoredPasskey>, sqlx::Error> {
    sqlx::query_as!(StoredPasskey, "select id, admin_id, passkey from passkeys where credential_id = $1", credential_id,).fetch_optional(pool).await
}

/// After a sign-in: the credential (counter, backup state) as webauthn-rs updated it.
pub async fn update_passkey_after_signin(conn: &mut PgConnection, id: Uuid, passkey: Option<&Json>) -> Result<(), sqlx::Error> {
    sqlx::query!("update passkeys set last_used_at = now(), passkey = coalesce($2, passkey) where id = $1", id, passkey,).execute(conn).await?;
    Ok(())
}

pub async fn credential_ids(pool: &PgPool, admin: Uuid) -> Result<Vec<Vec<u8>>, sqlx::Error> {
    sqlx::query_scalar!("select credential_id from passkeys where admin_id = $1", admin).fetch_all(pool).await
}

pub async fn list_passkeys(pool: &PgPool, admin: Uuid) -> Result<Vec<PasskeyView>, sqlx::Error> {
    sqlx::query_as!(PasskeyView, "select id, name, created_at, last_used_at from passkeys where admin_id = $1 order by created_at, id", admin,)
        .fetch_all(pool)
        .await
}

pub async fn rename_passkey(conn: &mut PgConnection, admin: Uuid, id: Uuid, name: &str) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!("update passkeys set name = $3 where id = $2 and admin_id = $1", admin, id, name).execute(conn).await?;
    Ok(r.rows_affected() == 1)
}

/// Removes a passkey unless it is the admin's last one. The admin row is locked first so two
/// concurrent removals cannot each see "another one is left".
/// Removes a passkey unless it is the admin's last one; returns its name when removed.
pub async fn remove_passkey(conn: &mut PgConnection, admin: Uuid, id: Uuid) -> Result<Option<String>, sqlx::Error> {
    sqlx::query!("select id from admins where id = $1 for update", admin).fetch_optional(&mut *conn).await?;
    sqlx::query_scalar!(
        "delete from passkeys where id = $2 and admin_id = $1
         and (select count(*) from passkeys where admin_id = $1) > 1
         returning name",
        admin,
        id,
    )
    .fetch_optional(conn)
    .await
}

// ---- sessions --------------------------------------------------------------------------------

/// A new session, just signed in with a passkey: its admin was verified now.
pub async fn insert_admin_session(conn: &mut PgConnection, session_id: &str, admin: Uuid, user_agent: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("insert into admin_sessions (session_id, admin_id, user_agent, verified_at) values ($1, $2, $3, now())", session_id, admin, user_agent,)
        .execute(conn)
        .await?;
    Ok(())
}

/// The session's admin was verified now (a passkey assertion with user verification).
pub async fn mark_verified(conn: &mut PgConnection, session_id: &str, admin: Uuid) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!("update admin_sessions set verified_at = now() where session_id = $1 and admin_id = $2", session_id, admin).execute(conn).await?;
    Ok(r.rows_affected() == 1)
}

/// Whether the session's last passkey check is more recent than `window` (by the database clock).
pub async fn verified_within(pool: &PgPool, session_id: &str, window: std::time::Duration) -> Result<bool, sqlx::Error> {
    let fresh = sqlx::query_scalar!(
        r#"select coalesce(verified_at > now() - make_interval(secs => $2), false) as "fresh!" from admin_sessions where session_id = $1"#,
        session_id,
        window.as_secs_f64()
    )
    .fetch_optional(pool)
    .await?;
    Ok(fresh.unwrap_or(false))
}

/// The admin signed in with this session, if the session is live (stored, not expired, younger
/// than the absolute lifetime). Marks it seen (at most once a minute, to spare writes).
/// The cut-off comes from the database clock (as every lifecycle time does).
pub async fn session_admin(pool: &PgPool, session_id: &str, absolute: std::time::Duration) -> Result<Option<AdminInfo>, sqlx::Error> {
    sqlx::query_as!(
        AdminInfo,
        r#"with live as (
               select s.admin_id, s.last_seen_at from admin_sessions s
               join tower_sessions.session t on t.id = s.session_id
               where s.session_id = $1 and t.expiry_date > now() and s.created_at > now() - make_interval(secs => $2)),
           touched as (
               update admin_sessions set last_seen_at = now()
               where session_id = $1 and last_seen_at < now() - interval '1 minute'
                 and exists (select 1 from live))
           select a.id, a.name, a.role as "role: Role" from admins a join live on live.admin_id = a.id"#,
        session_id,
        absolute.as_secs_f64(),
    )
    .fetch_optional(pool)
    .await
}

pub async fn list_sessions(pool: &PgPool, admin: Uuid, current: &str) -> Result<Vec<SessionView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select s.handle, s.user_agent, s.created_at, s.last_seen_at, s.session_id = $2 as "current!"
           from admin_sessions s join tower_sessions.session t on t.id = s.session_id
           where s.admin_id = $1 and t.expiry_date > now()
           order by s.last_seen_at desc"#,
        admin,
        current,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| SessionView {
            handle: r.handle,
            browser: super::describe_browser(&r.user_agent),
            created_at: r.created_at,
            last_seen_at: r.last_seen_at,
            current: r.current,
        })
        .collect())
}

/// Ends one of the admin's sessions: its store row goes, and with it (cascade) our row.
pub async fn revoke_session(conn: &mut PgConnection, admin: Uuid, handle: Uuid) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!(
        "delete from tower_sessions.session where id = (select session_id from admin_sessions where handle = $2 and admin_id = $1)",
        admin,
        handle,
    )
    .execute(conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Ends a session; returns its handle when it was an admin's.
pub async fn delete_session(conn: &mut PgConnection, session_id: &str) -> Result<Option<Uuid>, sqlx::Error> {
    let handle: Option<Uuid> =
        sqlx::query_scalar("select handle from admin_sessions where session_id = $1").bind(session_id).fetch_optional(&mut *conn).await?;
    sqlx::query!("delete from tower_sessions.session where id = $1", session_id).execute(conn).await?;
    Ok(handle)
}
