//! Authentication server functions: thin adapters over `service` and `db`.
//!
//! Public: `current_admin`, the invite ceremony and the sign-in ceremony. Every other function
//! here starts with `require(role)` (the gate test in server/tests/api/gate.rs checks all of
//! them, and every server function not on its public list).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use uuid::Uuid;
use webauthn_rs_proto::{CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse};

use super::{AdminInfo, InviteInfo, NewInvite, PasskeyView, SessionView};
use common::error::AppError;

#[cfg(feature = "ssr")]
use kernel::request::internal;

/// The signed-in admin, or `None`.
#[server(prefix = "/api", endpoint = "auth/me")]
pub async fn current_admin() -> Result<Option<AdminInfo>, AppError> {
    let state = super::service::state()?;
    let session = super::service::session().await?;
    super::service::session_admin(&state, &session).await
}

/// What the invite page shows; 404 for an unknown, used or expired link (all look the same).
#[server(prefix = "/api", endpoint = "auth/invite")]
pub async fn lookup_invite(token: String) -> Result<InviteInfo, AppError> {
    use super::{db, service};
    let state = service::state()?;
    service::limit_auth(&state, "auth.invite").await?;
    let invite = db::open_invite(&state.pool, &kernel::token::hash_token(&token)).await.map_err(internal("invite lookup"))?;
    match invite {
        Some(i) => Ok(InviteInfo { suggested_name: i.name, expires_at: i.expires_at }),
        None => Err(service::refuse(&state, "auth.invite", AppError::NotFound).await),
    }
}

/// Starts registering the first passkey of a new admin from an invite.
#[server(prefix = "/api", endpoint = "auth/invite/start", input = Json)]
pub async fn start_invite_registration(token: String, name: String, passkey_name: String) -> Result<(Uuid, CreationChallengeResponse), AppError> {
    use super::{db, parse_label, service, LabelField};
    let state = service::state()?;
    service::limit_auth(&state, "auth.register").await?;
    let mut errors = common::error::FieldErrors::new();
    let name = parse_label(&name, LabelField::YourName).map_err(|e| errors.insert("name".into(), e)).ok();
    let passkey_name = parse_label(&passkey_name, LabelField::PasskeyName).map_err(|e| errors.insert("passkey_name".into(), e)).ok();
    let (Some(name), Some(passkey_name)) = (name, passkey_name) else {
        return Err(AppError::Invalid(errors));
    };
    let Some(invite) = db::open_invite(&state.pool, &kernel::token::hash_token(&token)).await.map_err(internal("invite lookup"))? else {
        return Err(service::refuse(&state, "auth.register", AppError::NotFound).await);
    };
    service::begin_registration(&state, Uuid::new_v4(), &name.clone(), Some(name), passkey_name, None, Some(invite.id)).await
}

/// Finishes an invite registration: verifies the new passkey, redeems the invite (at most once),
/// creates the admin and signs them in.
#[server(prefix = "/api", endpoint = "auth/invite/finish", input = Json)]
pub async fn finish_invite_registration(challenge: Uuid, credential: RegisterPublicKeyCredential) -> Result<(), AppError> {
    use super::{db, service};
    let state = service::state()?;
    service::limit_auth(&state, "auth.register").await?;
    let (passkey, pending, invite_id) = service::complete_registration(&state, challenge, &credential, None).await?;
    let invite_id = invite_id.ok_or_else(|| AppError::internal("finish invite", "challenge without invite"))?;
    let (admin_id, name, passkey_name) = (pending.admin_id, pending.name.unwrap_or_default(), pending.passkey_name);
    let passkey_json = serde_json::to_value(&passkey).map_err(|e| AppError::internal("passkey json", e))?;
    let new_admin = db::NewAdmin { id: admin_id, name: &name, credential_id: passkey.cred_id().as_ref(), passkey: &passkey_json, passkey_name: &passkey_name };
    if !db::create_admin_from_invite(&state.pool, &*state.blobs, invite_id, new_admin).await? {
        // Someone else redeemed it first (or it expired meanwhile): no admin is created.
        return Err(AppError::NotFound);
    }
    tracing::info!(admin.id = %admin_id, invite.id = %invite_id, "invite redeemed; admin created");

    let session = service::session().await?;
    service::start_admin_session(&state, &session, admin_id).await
}

/// Starts a passkey sign-in (discoverable credentials: no user name needed). `conditional`
/// asks for the autofill form (the browser lists passkeys in the field's suggestions); otherwise
/// the browser shows its passkey dialog.
#[server(prefix = "/api", endpoint = "auth/signin/start")]
pub async fn start_signin(conditional: Option<bool>) -> Result<(Uuid, RequestChallengeResponse), AppError> {
    use super::{db, service};
    let state = service::state()?;
    service::limit_auth(&state, "auth.signin").await?;
    let (mut rcr, auth) =
        state.domain::<super::AuthSettings>().webauthn.start_discoverable_authentication().map_err(|e| AppError::internal("start signin", e))?;
    if !conditional.unwrap_or(false) {
        // A button-started sign-in shows the browser's passkey dialog (not the autofill mode).
        rcr.mediation = None;
    }
    let mut stored = serde_json::to_value(&auth).map_err(|e| AppError::internal("signin state", e))?;
    service::allow_backup_eligible_upgrade(&mut stored)?;
    let challenge = Uuid::new_v4();
    db::insert_challenge(&state.pool, challenge, "signin", &stored, None, None, service::CHALLENGE_TTL).await.map_err(internal("store challenge"))?;
    // Best-effort, once the answer is ready: prune if due (seed 000).
    service::prune_after_signin(&state);
    Ok((challenge, rcr))
}

/// Finishes a passkey sign-in. The challenge is deleted before anything is checked, so neither a
/// failed nor a successful answer can be replayed.
#[server(prefix = "/api", endpoint = "auth/signin/finish", input = Json)]
pub async fn finish_signin(challenge: Uuid, credential: PublicKeyCredential) -> Result<(), AppError> {
    use super::service;
    let state = service::state()?;
    service::limit_auth(&state, "auth.signin").await?;
    let admin = verified_admin(&state, challenge, None, &credential).await?;
    let session = service::session().await?;
    service::start_admin_session(&state, &session, admin).await
}

/// Checks a passkey's answer to a sign-in challenge (taken, so it cannot be replayed) and returns
/// the admin whose passkey answered. `expected`: the admin the challenge was made for (a step-up);
/// any other admin's passkey is refused. Every refusal is an event and counts against the limit.
#[cfg(feature = "ssr")]
async fn verified_admin(state: &kernel::state::AppState, challenge: Uuid, expected: Option<Uuid>, credential: &PublicKeyCredential) -> Result<Uuid, AppError> {
    use super::{db, service, AuthT};
    use common::i18n::t;
    let refused = || AppError::BadRequest(t(AuthT::PasskeyNotAccepted).into());
    let taken = db::take_challenge(&state.pool, challenge, "signin").await.map_err(internal("take challenge"))?;
    let Some(taken) = taken.filter(|t| !t.expired && t.admin_id == expected) else {
        let expired = AppError::BadRequest(t(AuthT::SignInExpired).into());
        return Err(service::refuse(state, "auth.signin", expired).await);
    };
    let auth: webauthn_rs::prelude::DiscoverableAuthentication = serde_json::from_value(taken.state).map_err(|e| AppError::internal("signin state", e))?;
    let Ok((user, cred_id)) = state.domain::<super::AuthSettings>().webauthn.identify_discoverable_authentication(credential) else {
        return Err(service::refuse(state, "auth.signin", refused()).await);
    };
    let stored = db::passkey_by_credential(&state.pool, cred_id).await.map_err(internal("passkey lookup"))?;
    let Some(stored) = stored.filter(|s| s.admin_id == user) else {
        tracing::info!("sign-in with an unknown passkey refused");
        record_refused(state, None, "unknown passkey").await?;
        return Err(service::refuse(state, "auth.signin", refused()).await);
    };
    if expected.is_some_and(|admin| admin != stored.admin_id) {
        tracing::info!("a step-up answered by another admin's passkey refused");
        record_refused(state, Some(stored.admin_id), "another admin's passkey answered a step-up").await?;
        return Err(service::refuse(state, "auth.signin", refused()).await);
    }
    let mut passkey: webauthn_rs::prelude::Passkey = serde_json::from_value(stored.passkey).map_err(|e| AppError::internal("stored passkey", e))?;
    let result = match state.domain::<super::AuthSettings>().webauthn.finish_discoverable_authentication_v2(credential, auth, &passkey) {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(passkey.id = %stored.id, error = %e, "passkey sign-in refused");
            record_refused(state, Some(stored.admin_id), "the passkey's answer did not verify").await?;
            return Err(service::refuse(state, "auth.signin", refused()).await);
        }
    };
    // Keep the counter and backup state current.
    let changed = passkey.update_credential(&result).unwrap_or(false);
    let updated = if changed { Some(serde_json::to_value(&passkey).map_err(|e| AppError::internal("passkey json", e))?) } else { None };
    let mut conn = state.pool.acquire().await.map_err(internal("acquire"))?;
    db::update_passkey_after_signin(&mut conn, stored.id, updated.as_ref()).await.map_err(internal("update passkey"))?;
    drop(conn);
    Ok(stored.admin_id)
}

/// Starts a step-up: the signed-in admin confirms with one of their passkeys (user verification
/// required) that it is still them, before a sensitive action.
#[server(prefix = "/api", endpoint = "admin/step-up/start")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn start_step_up() -> Result<(Uuid, RequestChallengeResponse), AppError> {
    use super::{db, service};
    let (state, _, admin) = service::require(Role::Auditor).await?;
    service::limit_auth(&state, "auth.step_up").await?;
    let (mut rcr, auth) =
        state.domain::<super::AuthSettings>().webauthn.start_discoverable_authentication().map_err(|e| AppError::internal("start step-up", e))?;
    rcr.mediation = None;
    let mut stored = serde_json::to_value(&auth).map_err(|e| AppError::internal("step-up state", e))?;
    service::allow_backup_eligible_upgrade(&mut stored)?;
    let challenge = Uuid::new_v4();
    db::insert_challenge(&state.pool, challenge, "signin", &stored, Some(admin.id), None, service::CHALLENGE_TTL).await.map_err(internal("store challenge"))?;
    Ok((challenge, rcr))
}

/// Finishes a step-up: the answer must come from a passkey of the signed-in admin. The session
/// may then do sensitive things for `EBB_STEP_UP_MINUTES`. Recorded (`auth.step_up`).
#[server(prefix = "/api", endpoint = "admin/step-up/finish", input = Json)]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn finish_step_up(challenge: Uuid, credential: PublicKeyCredential) -> Result<(), AppError> {
    use super::{db, service};
    let (state, session, admin) = service::require(Role::Auditor).await?;
    service::limit_auth(&state, "auth.step_up").await?;
    verified_admin(&state, challenge, Some(admin.id), &credential).await?;
    let id = session.id().ok_or(AppError::Unauthorized)?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if !db::mark_verified(&mut tx, &id.to_string(), admin.id).await.map_err(internal("step-up"))? {
        return Err(AppError::Unauthorized);
    }
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::StepUp, None).await.map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    tracing::info!(admin.id = %admin.id, "admin confirmed with a passkey (step-up)");
    Ok(())
}

/// Whether the session may do a sensitive thing now (`StepUp` when not): the pages ask before a
/// download that needs it, so the prompt appears in place rather than a refused download.
#[server(prefix = "/api", endpoint = "admin/step-up/check")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn check_step_up() -> Result<(), AppError> {
    kernel::session::require_fresh(Role::Auditor).await.map(|_| ())
}

/// A refused sign-in is an event (which admin's passkey, if known; the hashed client).
#[cfg(feature = "ssr")]
async fn record_refused(state: &kernel::state::AppState, admin: Option<Uuid>, reason: &str) -> Result<(), AppError> {
    let mut conn = state.pool.acquire().await.map_err(internal("acquire"))?;
    kernel::audit::record_admin_detail(&mut conn, admin, kernel::audit::AuditKind::SignInRefused, admin.map(|a| a.to_string()).as_deref(), Some(reason))
        .await
        .map_err(internal("record"))
}

/// Signs out: the session is deleted from the store, so its cookie is refused from now on.
#[server(prefix = "/api", endpoint = "admin/signout")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn sign_out() -> Result<(), AppError> {
    let (state, session, admin) = super::service::require(Role::Auditor).await?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if let Some(id) = session.id() {
        let handle = super::db::delete_session(&mut tx, &id.to_string()).await.map_err(internal("signout"))?;
        // Journaled (its handle only), so a database restored from an older backup does not
        // bring the session back. Signing out never fails for it: a store that cannot take the
        // entry is logged, and that restore gap is in docs/operator.md.
        if let Some(handle) = handle {
            if let Err(e) =
                kernel::storage::journal::record(&mut *tx, &*state.blobs, kernel::storage::journal::Deletion::SessionEnd { handles: vec![handle] }).await
            {
                tracing::warn!(error = %e, "signing out: the deletion journal could not take the session's end");
            }
        }
    }
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::SignOut, None).await.map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    session.flush().await.map_err(|e| AppError::internal("session flush", e))?;
    tracing::info!(admin.id = %admin.id, "admin signed out");
    if kernel::request::is_plain_form_post() {
        kernel::request::redirect_plain_form_post("/signin");
    }
    Ok(())
}

#[server(prefix = "/api", endpoint = "admin/passkeys")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn list_passkeys() -> Result<Vec<PasskeyView>, AppError> {
    let (state, _, admin) = super::service::require(Role::Auditor).await?;
    super::db::list_passkeys(&state.pool, admin.id).await.map_err(internal("list passkeys"))
}

#[server(prefix = "/api", endpoint = "admin/passkeys/start")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn start_add_passkey(passkey_name: String) -> Result<(Uuid, CreationChallengeResponse), AppError> {
    use super::{parse_label, service, LabelField};
    let (state, _, admin) = service::require_fresh(Role::Auditor).await?;
    let passkey_name = parse_label(&passkey_name, LabelField::PasskeyName).map_err(|e| AppError::Invalid([("passkey_name".to_string(), e)].into()))?;
    service::begin_registration(&state, admin.id, &admin.name, None, passkey_name, Some(admin.id), None).await
}

#[server(prefix = "/api", endpoint = "admin/passkeys/finish", input = Json)]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn finish_add_passkey(challenge: Uuid, credential: RegisterPublicKeyCredential) -> Result<(), AppError> {
    use super::{db, service};
    let (state, _, admin) = service::require(Role::Auditor).await?;
    let (passkey, pending, _) = service::complete_registration(&state, challenge, &credential, Some(admin.id)).await?;
    let passkey_name = pending.passkey_name;
    let passkey_json = serde_json::to_value(&passkey).map_err(|e| AppError::internal("passkey json", e))?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let id = db::insert_passkey(&mut tx, admin.id, passkey.cred_id().as_ref(), &passkey_json, &passkey_name).await.map_err(internal("insert passkey"))?;
    kernel::audit::record_admin_detail(&mut tx, Some(admin.id), kernel::audit::AuditKind::PasskeyAdd, Some(&id.to_string()), Some(&passkey_name))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(())
}

#[server(prefix = "/api", endpoint = "admin/passkeys/rename")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn rename_passkey(id: Uuid, name: String) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require(Role::Auditor).await?;
    let name = super::parse_label(&name, super::LabelField::PasskeyName).map_err(|e| AppError::Invalid([("name".to_string(), e)].into()))?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if !super::db::rename_passkey(&mut tx, admin.id, id, &name).await.map_err(internal("rename"))? {
        return Err(AppError::NotFound);
    }
    kernel::audit::record_admin_detail(&mut tx, Some(admin.id), kernel::audit::AuditKind::PasskeyRename, Some(&id.to_string()), Some(&name))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))
}

#[server(prefix = "/api", endpoint = "admin/passkeys/remove")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn remove_passkey(id: Uuid) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require(Role::Auditor).await?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let Some(removed_name) = super::db::remove_passkey(&mut tx, admin.id, id).await.map_err(internal("remove"))? else {
        return Err(AppError::Invalid([("passkey".to_string(), common::i18n::t(super::texts::AccountT::LastPasskey).to_string())].into()));
    };
    kernel::audit::record_admin_detail(&mut tx, Some(admin.id), kernel::audit::AuditKind::PasskeyRemove, Some(&id.to_string()), Some(&removed_name))
        .await
        .map_err(internal("record"))?;
    // Journaled before the commit: a restored database does not get the passkey back.
    kernel::storage::journal::record_in_request(&mut *tx, &*state.blobs, kernel::storage::journal::Deletion::PasskeyRemove { ids: vec![id] }).await?;
    tx.commit().await.map_err(internal("commit"))
}

#[server(prefix = "/api", endpoint = "admin/sessions")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn list_sessions() -> Result<Vec<SessionView>, AppError> {
    let (state, session, admin) = super::service::require(Role::Auditor).await?;
    let current = session.id().map(|i| i.to_string()).unwrap_or_default();
    super::db::list_sessions(&state.pool, admin.id, &current).await.map_err(internal("list sessions"))
}

#[server(prefix = "/api", endpoint = "admin/sessions/revoke")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn revoke_session(handle: Uuid) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require(Role::Auditor).await?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if !super::db::revoke_session(&mut tx, admin.id, handle).await.map_err(internal("revoke"))? {
        return Err(AppError::NotFound);
    }
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::SessionRevoke, Some(&handle.to_string()))
        .await
        .map_err(internal("record"))?;
    // Journaled before the commit: a restored database does not bring the session back.
    kernel::storage::journal::record_in_request(&mut *tx, &*state.blobs, kernel::storage::journal::Deletion::SessionEnd { handles: vec![handle] }).await?;
    tx.commit().await.map_err(internal("commit"))
}

/// Creates an invite for another admin with `role` (`admin` when not given); the link is returned
/// once and never stored.
#[server(prefix = "/api", endpoint = "admin/invites")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn create_invite(name: Option<String>, role: Option<String>) -> Result<NewInvite, AppError> {
    let (state, _, admin) = super::service::require_fresh(Role::Owner).await?;
    let role = parse_role(role.as_deref().unwrap_or("admin"))?;
    let name = match name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => Some(super::parse_label(n, super::LabelField::InviteName).map_err(|e| AppError::Invalid([("name".to_string(), e)].into()))?),
        None => None,
    };
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let invite = super::service::create_invite(&mut tx, &state.config.public_url, name.as_deref(), role, Some(admin.id)).await.map_err(internal("invite"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(invite)
}

/// A role from a form: `owner`, `admin` or `auditor`.
#[cfg(feature = "ssr")]
fn parse_role(raw: &str) -> Result<Role, AppError> {
    Role::parse(raw.trim()).ok_or_else(|| AppError::Invalid([("role".to_string(), common::i18n::t(super::AuthT::RoleUnknown).to_string())].into()))
}

/// Every admin with their role, for the owners (the Account page).
#[server(prefix = "/api", endpoint = "admin/admins")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn list_admins() -> Result<Vec<super::AdminView>, AppError> {
    let (state, _, me) = super::service::require(Role::Owner).await?;
    let admins = super::db::list_admins(&state.pool).await.map_err(internal("admin list"))?;
    Ok(admins
        .into_iter()
        .map(|a| super::AdminView { me: a.id == me.id, id: a.id, name: a.name, role: a.role, joined: a.created_at, passkeys: a.passkeys, sessions: a.sessions })
        .collect())
}

/// Changes an admin's role (an owner's act; their sessions have the new role at their next
/// request). The last owner stays an owner.
#[server(prefix = "/api", endpoint = "admin/admins/role")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn set_admin_role(id: Uuid, role: String) -> Result<(), AppError> {
    let (state, _, owner) = super::service::require_fresh(Role::Owner).await?;
    let role = parse_role(&role)?;
    change(&state, &owner, id, super::db::Change::Role(role)).await
}

/// Removes an admin at once (an owner's act): their sessions end and their passkeys go. An owner
/// does not remove themselves here (the last owner stays).
#[server(prefix = "/api", endpoint = "admin/admins/remove")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn remove_admin(id: Uuid) -> Result<(), AppError> {
    let (state, _, owner) = super::service::require_fresh(Role::Owner).await?;
    if id == owner.id {
        return Err(AppError::BadRequest(common::i18n::t(super::AuthT::NotYourself).into()));
    }
    change(&state, &owner, id, super::db::Change::Remove).await
}

/// An owner's change of an admin, recorded as theirs.
#[cfg(feature = "ssr")]
async fn change(state: &kernel::state::AppState, owner: &super::AdminInfo, id: Uuid, change: super::db::Change) -> Result<(), AppError> {
    use super::db::Changed;
    use super::AuthT;
    use common::i18n::t;
    let actor = kernel::audit::Actor::in_request(Some(owner.id));
    match super::service::change_admin(state, &actor, &format!("by {}", owner.name), id, change).await? {
        Changed::Role { .. } | Changed::Removed { .. } => {
            state.live.touch(common::live::Topic::Settings, None);
            Ok(())
        }
        Changed::NotFound => Err(AppError::NotFound),
        Changed::LastOwner => Err(AppError::Conflict(t(AuthT::LastOwner).into())),
        Changed::LastAdmin => Err(AppError::Conflict(t(AuthT::LastAdmin).into())),
    }
}
