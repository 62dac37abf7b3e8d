//! Server-side sign-in machinery shared by the auth server functions and the admin gate.

use std::time::Duration;

use tower_sessions::Session;
use uuid::Uuid;

use super::{db, AdminInfo, Role};
use common::error::AppError;
use kernel::ratelimit::{self, Decision, Limit};
use kernel::request::client_key;
use kernel::state::AppState;
use kernel::token::new_token;

/// How long a ceremony may take.
pub const CHALLENGE_TTL: time::Duration = time::Duration::minutes(5);
/// How long an invite link is valid.
pub const INVITE_TTL: time::Duration = time::Duration::minutes(30);
/// Session key holding the admin id.
const SESSION_ADMIN_KEY: &str = "admin_id";

pub use kernel::session::{require, require_fresh, session, session_admin, state};

/// The auth domain's answer to the session gate: the admin of a live session.
pub struct Sessions;

impl kernel::session::SessionAdmins for Sessions {
    fn admin_of<'a>(&'a self, state: &'a AppState, session_id: &'a str) -> futures::future::BoxFuture<'a, Result<Option<AdminInfo>, sqlx::Error>> {
        Box::pin(db::session_admin(&state.pool, session_id, state.domain::<super::AuthSettings>().session_absolute))
    }
    fn verified_recently<'a>(&'a self, state: &'a AppState, session_id: &'a str) -> futures::future::BoxFuture<'a, Result<bool, sqlx::Error>> {
        Box::pin(db::verified_within(&state.pool, session_id, state.domain::<super::AuthSettings>().step_up))
    }
}

/// Counts one attempt against the per-client limit of an authentication endpoint (IPv4 clients by
/// address, IPv6 clients by prefix). There is no total limit here: a flood from many addresses
/// must never keep a real admin from signing in (see [`refuse`]).
pub async fn limit_auth(state: &AppState, endpoint: &'static str) -> Result<(), AppError> {
    let limit = Limit { name: endpoint, ..state.domain::<super::AuthSettings>().limit };
    match ratelimit::hit(&state.pool, &limit, &client_key(state)).await {
        Ok(Decision::Allowed) => Ok(()),
        Ok(Decision::Limited { retry_after_secs }) => {
            tracing::info!(event = "auth.rate_limited", endpoint, "authentication attempt rate-limited");
            Err(AppError::RateLimited { retry_after_secs })
        }
        Err(e) => Err(AppError::internal("auth rate limit", e)),
    }
}

/// Answers a refused attempt (an unknown or failed passkey, a used or expired challenge, an
/// unknown invite) with `error`, counting it against the total limit of refusals from all
/// clients. Beyond that limit refusals answer 429 with `Retry-After`, which slows a distributed
/// guesser; an attempt that succeeds (a registered passkey, a valid invite) is never counted
/// nor refused by it, so a flood cannot lock a real admin out.
pub async fn refuse(state: &AppState, endpoint: &'static str, error: AppError) -> AppError {
    let total = Limit { name: "auth.refused", ..state.domain::<super::AuthSettings>().total_limit };
    match ratelimit::hit(&state.pool, &total, "*").await {
        Ok(Decision::Limited { retry_after_secs }) => {
            tracing::info!(event = "auth.rate_limited", endpoint, "refused authentication attempt beyond the total limit");
            AppError::RateLimited { retry_after_secs }
        }
        Ok(Decision::Allowed) => error,
        Err(e) => AppError::internal("auth rate limit", e),
    }
}

/// Signs `admin` in on this session: a new session id (no fixation), the admin id in the
/// session, and our row describing it (for the account page and revocation).
pub async fn start_admin_session(state: &AppState, session: &Session, admin: Uuid) -> Result<(), AppError> {
    session.cycle_id().await.map_err(|e| AppError::internal("session cycle", e))?;
    session.insert(SESSION_ADMIN_KEY, admin).await.map_err(|e| AppError::internal("session insert", e))?;
    // Save now: the store row must exist (and the id be assigned) before our row refers to it.
    session.save().await.map_err(|e| AppError::internal("session save", e))?;
    let id = session.id().ok_or_else(|| AppError::internal("session", "no id after save"))?;
    let user_agent = common::request::with_parts(|p| {
        p.headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok()).map(|s| s.chars().take(300).collect::<String>())
    })
    .flatten()
    .unwrap_or_default();
    let mut tx = state.pool.begin().await.map_err(|e| AppError::internal("session tx", e))?;
    db::insert_admin_session(&mut tx, &id.to_string(), admin, &user_agent).await.map_err(|e| AppError::internal("admin session insert", e))?;
    kernel::audit::record_admin_action(&mut tx, Some(admin), kernel::audit::AuditKind::SignIn, None)
        .await
        .map_err(|e| AppError::internal("record signin", e))?;
    tx.commit().await.map_err(|e| AppError::internal("session commit", e))?;
    tracing::info!(admin.id = %admin, "admin signed in");
    Ok(())
}

/// Best-effort after a sign-in attempt: prune if due (seed 000).
pub fn prune_after_signin(state: &AppState) {
    kernel::jobs::nudge_named(state, kernel::jobs::PRUNE, kernel::jobs::Trigger::Signin);
}

/// Webauthn-rs keeps the discoverable sign-in state private and refuses any change of the
/// backup-eligible flag. Ebb allows the one safe change — a credential that becomes backup
/// eligible (e.g. a passkey provider starts syncing it) — by setting the state's
/// `allow_backup_eligible_upgrade`. Fails loudly if webauthn-rs renames the field.
pub fn allow_backup_eligible_upgrade(state: &mut serde_json::Value) -> Result<(), AppError> {
    match state.get_mut("ast").and_then(|a| a.get_mut("allow_backup_eligible_upgrade")) {
        Some(flag) => {
            *flag = serde_json::Value::Bool(true);
            Ok(())
        }
        None => Err(AppError::internal("webauthn state", "allow_backup_eligible_upgrade not found in state")),
    }
}

/// A duration as the `time` crate's.
pub fn to_time(d: Duration) -> time::Duration {
    time::Duration::seconds(d.as_secs() as i64)
}

/// Creates a one-time invite valid for 30 minutes for an admin with `role`, and returns its link
/// (the only copy of the token). Used by the CLI, the start-up message and the account page.
pub async fn create_invite(
    conn: &mut sqlx::PgConnection,
    public_url: &str,
    name: Option<&str>,
    role: Role,
    created_by: Option<Uuid>,
) -> Result<super::NewInvite, sqlx::Error> {
    let (token, hash) = new_token();
    let (id, expires_at) = db::insert_invite(conn, &hash, name, role, created_by, INVITE_TTL).await?;
    kernel::audit::record_admin_action(conn, created_by, kernel::audit::AuditKind::InviteCreate, Some(&id.to_string())).await?;
    tracing::info!(invite.id = %id, "invite created");
    Ok(super::NewInvite { url: format!("{}/invite/{token}", public_url.trim_end_matches('/')), expires_at })
}

/// webauthn-rs' passkey registration leaves the resident-key choice to the authenticator; Ebb
/// signs in with discoverable credentials (no user name to type), so it asks for one.
pub fn require_discoverable(ccr: &mut webauthn_rs::prelude::CreationChallengeResponse) {
    use webauthn_rs_proto::{AuthenticatorSelectionCriteria, ResidentKeyRequirement, UserVerificationPolicy};
    let selection = ccr.public_key.authenticator_selection.get_or_insert(AuthenticatorSelectionCriteria {
        authenticator_attachment: None,
        require_resident_key: true,
        resident_key: None,
        user_verification: UserVerificationPolicy::Required,
    });
    selection.require_resident_key = true;
    selection.resident_key = Some(ResidentKeyRequirement::Required);
}

/// What a registration ceremony remembers between its two requests.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PendingRegistration {
    pub reg: webauthn_rs::prelude::PasskeyRegistration,
    /// The (new or existing) admin the passkey is for.
    pub admin_id: Uuid,
    /// The new admin's name (invites only).
    pub name: Option<String>,
    pub passkey_name: String,
}

/// Starts registering a discoverable passkey for `admin_id` and stores the ceremony state.
/// `owner` is the signed-in admin adding a passkey, `invite` the invite being redeemed.
pub async fn begin_registration(
    state: &AppState,
    admin_id: Uuid,
    user_name: &str,
    name: Option<String>,
    passkey_name: String,
    owner: Option<Uuid>,
    invite: Option<Uuid>,
) -> Result<(Uuid, webauthn_rs::prelude::CreationChallengeResponse), AppError> {
    let exclude = match owner {
        Some(owner) => {
            let ids = db::credential_ids(&state.pool, owner).await.map_err(|e| AppError::internal("credential ids", e))?;
            Some(ids.into_iter().collect())
        }
        None => None,
    };
    let (mut ccr, reg) = state
        .domain::<super::AuthSettings>()
        .webauthn
        .start_passkey_registration(admin_id, user_name, user_name, exclude)
        .map_err(|e| AppError::internal("start registration", e))?;
    require_discoverable(&mut ccr);
    let pending = PendingRegistration { reg, admin_id, name, passkey_name };
    let stored = serde_json::to_value(&pending).map_err(|e| AppError::internal("registration state", e))?;
    let challenge = Uuid::new_v4();
    db::insert_challenge(&state.pool, challenge, "register", &stored, owner, invite, CHALLENGE_TTL)
        .await
        .map_err(|e| AppError::internal("store challenge", e))?;
    Ok((challenge, ccr))
}

/// Takes a registration challenge (once) and verifies the new passkey. `owner` must match the
/// admin who started it (None for invites).
pub async fn complete_registration(
    state: &AppState,
    challenge: Uuid,
    credential: &webauthn_rs::prelude::RegisterPublicKeyCredential,
    owner: Option<Uuid>,
) -> Result<(webauthn_rs::prelude::Passkey, PendingRegistration, Option<Uuid>), AppError> {
    let taken = db::take_challenge(&state.pool, challenge, "register").await.map_err(|e| AppError::internal("take challenge", e))?;
    let Some(taken) = taken.filter(|t| !t.expired && t.admin_id == owner) else {
        return Err(AppError::BadRequest(common::i18n::t(super::AuthT::RegisterExpired).into()));
    };
    let pending: PendingRegistration = serde_json::from_value(taken.state).map_err(|e| AppError::internal("registration state", e))?;
    let passkey = state.domain::<super::AuthSettings>().webauthn.finish_passkey_registration(credential, &pending.reg).map_err(|e| {
        tracing::info!(error = %e, "passkey registration refused");
        AppError::BadRequest(common::i18n::t(super::AuthT::RegisterNotVerified).into())
    })?;
    Ok((passkey, pending, taken.invite_id))
}

/// Changes an admin — a role, or a removal — and records it as `actor`'s (an owner, or the
/// operator on the host: [`kernel::audit::Actor::system`]), with `how` in the event's detail, in
/// one transaction. A removal is journaled before the commit: a restore of an older backup
/// cannot bring the admin back (`ebb doctor --after-restore` removes them again). There is always
/// an owner, and always an admin ([`db::change_admin`]).
pub async fn change_admin(state: &AppState, actor: &kernel::audit::Actor, how: &str, id: Uuid, change: db::Change) -> Result<db::Changed, AppError> {
    use kernel::audit::AuditKind;
    let db = |e: sqlx::Error| AppError::internal("change admin", e);
    let mut tx = state.pool.begin().await.map_err(db)?;
    let changed = db::change_admin(&mut tx, id, change).await.map_err(db)?;
    let (kind, detail) = match (&changed, change) {
        // The role they already had: nothing changed, nothing to record.
        (db::Changed::Role { was, .. }, db::Change::Role(role)) if *was == role => return Ok(changed),
        (db::Changed::Role { name, was }, db::Change::Role(role)) => (AuditKind::AdminRole, format!("{name}: {was} → {role}, {how}")),
        (db::Changed::Removed { name, passkeys, sessions }, _) => {
            (AuditKind::AdminRemove, format!("{name}, {how}; {passkeys} passkey(s) deleted, {sessions} session(s) ended"))
        }
        _ => return Ok(changed),
    };
    kernel::audit::record(&mut tx, actor, kind, Some((kind.subject_type(), &id.to_string())), Some(&detail)).await.map_err(db)?;
    if kind == AuditKind::AdminRemove {
        kernel::storage::journal::record_in_request(&mut *tx, &*state.blobs, kernel::storage::journal::Deletion::AdminRemove { ids: vec![id] }).await?;
    }
    tx.commit().await.map_err(db)?;
    tracing::info!(admin.id = %id, change = ?change, "admin changed");
    Ok(changed)
}
