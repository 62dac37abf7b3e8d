//! Authentication server functions: thin adapters over `service` and `db`.
//!
//! Public: `current_admin`, the invite ceremony and the sign-in ceremony. Every other function
//! here starts with `require_admin()` (the gate test in server/tests/api/gate.rs checks all of
//! them, and every server function not on its public list).

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
    use super::{db, service, AuthT};
    use common::i18n::t;
    let state = service::state()?;
    service::limit_auth(&state, "auth.signin").await?;
    let refused = || AppError::BadRequest(t(AuthT::PasskeyNotAccepted).into());
    let taken = db::take_challenge(&state.pool, challenge, "signin").await.map_err(internal("take challenge"))?;
    let Some(taken) = taken.filter(|t| !t.expired) else {
        let expired = AppError::BadRequest(t(AuthT::SignInExpired).into());
        return Err(service::refuse(&state, "auth.signin", expired).await);
    };
    let auth: webauthn_rs::prelude::DiscoverableAuthentication = serde_json::from_value(taken.state).map_err(|e| AppError::internal("signin state", e))?;
    let Ok((user, cred_id)) = state.domain::<super::AuthSettings>().webauthn.identify_discoverable_authentication(&credential) else {
        return Err(service::refuse(&state, "auth.signin", refused()).await);
    };
    let stored = db::passkey_by_credential(&state.pool, cred_id).await.map_err(internal("passkey lookup"))?;
    let Some(stored) = stored.filter(|s| s.admin_id == user) else {
        tracing::info!("sign-in with an unknown passkey refused");
        record_refused(&state, None, "unknown passkey").await?;
        return Err(service::refuse(&state, "auth.signin", refused()).await);
    };
    let mut passkey: webauthn_rs::prelude::Passkey = serde_json::from_value(stored.passkey).map_err(|e| AppError::internal("stored passkey", e))?;
    let result = match state.domain::<super::AuthSettings>().webauthn.finish_discoverable_authentication_v2(&credential, auth, &passkey) {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(passkey.id = %stored.id, error = %e, "passkey sign-in refused");
            record_refused(&state, Some(stored.admin_id), "the passkey's answer did not verify").await?;
            return Err(service::refuse(&state, "auth.signin", refused()).await);
        }
    };
    // Keep the counter and backup state current.
    let changed = passkey.update_credential(&result).unwrap_or(false);
    let updated = if changed { Some(serde_json::to_value(&passkey).map_err(|e| AppError::internal("passkey json", e))?) } else { None };
    let mut conn = state.pool.acquire().await.map_err(internal("acquire"))?;
    db::update_passkey_after_signin(&mut conn, stored.id, updated.as_ref()).await.map_err(internal("update passkey"))?;
    drop(conn);
    let session = service::session().await?;
    service::start_admin_session(&state, &session, stored.admin_id).await
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
pub async fn sign_out() -> Result<(), AppError> {
    let (state, session, admin) = super::service::require_admin().await?;
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
pub async fn list_passkeys() -> Result<Vec<PasskeyView>, AppError> {
    let (state, _, admin) = super::service::require_admin().await?;
    super::db::list_passkeys(&state.pool, admin.id).await.map_err(internal("list passkeys"))
}

#[server(prefix = "/api", endpoint = "admin/passkeys/start")]
pub async fn start_add_passkey(passkey_name: String) -> Result<(Uuid, CreationChallengeResponse), AppError> {
    use super::{parse_label, service, LabelField};
    let (state, _, admin) = service::require_admin().await?;
    let passkey_name = parse_label(&passkey_name, LabelField::PasskeyName).map_err(|e| AppError::Invalid([("passkey_name".to_string(), e)].into()))?;
    service::begin_registration(&state, admin.id, &admin.name, None, passkey_name, Some(admin.id), None).await
}

#[server(prefix = "/api", endpoint = "admin/passkeys/finish", input = Json)]
pub async fn finish_add_passkey(challenge: Uuid, credential: RegisterPublicKeyCredential) -> Result<(), AppError> {
    use super::{db, service};
    let (state, _, admin) = service::require_admin().await?;
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
pub async fn rename_passkey(id: Uuid, name: String) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require_admin().await?;
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
pub async fn remove_passkey(id: Uuid) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require_admin().await?;
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
pub async fn list_sessions() -> Result<Vec<SessionView>, AppError> {
    let (state, session, admin) = super::service::require_admin().await?;
    let current = session.id().map(|i| i.to_string()).unwrap_or_default();
    super::db::list_sessions(&state.pool, admin.id, &current).await.map_err(internal("list sessions"))
}

#[server(prefix = "/api", endpoint = "admin/sessions/revoke")]
pub async fn revoke_session(handle: Uuid) -> Result<(), AppError> {
    let (state, _, admin) = super::service::require_admin().await?;
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

/// Creates an invite for another admin; the link is returned once and never stored.
#[server(prefix = "/api", endpoint = "admin/invites")]
pub async fn create_invite(name: Option<String>) -> Result<NewInvite, AppError> {
    let (state, _, admin) = super::service::require_admin().await?;
    let name = match name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => Some(super::parse_label(n, super::LabelField::InviteName).map_err(|e| AppError::Invalid([("name".to_string(), e)].into()))?),
        None => None,
    };
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    let invite = super::service::create_invite(&mut tx, &state.config.public_url, name.as_deref(), Some(admin.id)).await.map_err(internal("invite"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(invite)
}
