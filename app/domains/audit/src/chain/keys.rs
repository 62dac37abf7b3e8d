//! The digest signing key (Ed25519). Generated once and kept outside the database: in the file
//! named by `EBB_AUDIT_SIGNING_KEY_FILE` (created with mode 0600 on the first start only; refused
//! when readable by group or others; never re-made once digests exist), else — the weaker
//! choice, which `ebb doctor` warns about — in the `settings` row `audit_signing_key`. Its public
//! key is registered in `audit_signing_keys`, written once to the store
//! (`audit-digests/key-<id>.json`), shown on the audit page and served at `/audit/keys.json`.
//! Rotation ([`rotate`]) makes a new key and retires every other one — never deleted, so the
//! digests they signed stay verifiable; an instance holding a retired key signs nothing more.

use std::io::Write;
use std::path::Path;

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use kernel::state::AppState;
use kernel::storage::digest_public_key;
use kernel::storage::BlobStore as _;

/// The settings row that holds the key when no file is configured.
pub const SETTING: &str = "audit_signing_key";

/// A public key's id: the first 8 bytes of its SHA-256, in hex.
pub fn key_id(public: &VerifyingKey) -> String {
    hex::encode(&Sha256::digest(public.as_bytes())[..8])
}

/// A public key as published (the store's `key-<id>.json`, `/audit/keys.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKey {
    pub key_id: String,
    pub algorithm: String,
    /// The 32-byte Ed25519 public key, hex.
    pub public_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired_at: Option<String>,
}

impl PublicKey {
    pub fn of(key: &VerifyingKey) -> Self {
        PublicKey { key_id: key_id(key), algorithm: "ed25519".into(), public_key: hex::encode(key.as_bytes()), created_at: None, retired_at: None }
    }

    /// The key, when it is a well-formed Ed25519 key whose id matches.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        let bytes: [u8; 32] = hex::decode(&self.public_key).ok()?.try_into().ok()?;
        let key = VerifyingKey::from_bytes(&bytes).ok()?;
        (self.algorithm == "ed25519" && key_id(&key) == self.key_id).then_some(key)
    }
}

/// The key that signs digests now.
pub struct Signer {
    pub key: SigningKey,
    pub key_id: String,
}

fn parse_seed(text: &str, origin: &str) -> Result<[u8; 32], String> {
    hex::decode(text.trim()).ok().and_then(|b| b.try_into().ok()).ok_or_else(|| {
        format!(
            "the audit signing key in {origin} is unreadable (not 64 hex characters). Restore it from a backup; Ebb does not sign with a key it cannot read"
        )
    })
}

/// Whether digests were ever signed here: a digest recorded or in the store, or a key registered.
/// Then a missing key is lost, not new: Ebb refuses to mint another one in silence.
async fn signed_before(state: &AppState) -> Result<bool, String> {
    let db: bool = sqlx::query_scalar!(r#"select exists (select 1 from audit_digests) or exists (select 1 from audit_signing_keys) as "any!""#)
        .fetch_one(&state.pool)
        .await
        .map_err(|e| format!("database: {e}"))?;
    Ok(db || state.blobs.exists(&kernel::storage::digest_key(1)).await.map_err(|e| format!("storage: {e}"))?)
}

/// Why a key file is refused: readable by group or others (the key signs the audit trail's
/// digests; whoever reads it can sign forgeries).
fn check_mode(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the audit signing key {} ({e})", path.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "the audit signing key {} may be read by its group or by others (mode {mode:03o}); whoever reads it can sign forged audit digests. Run `chmod 600 {}` (Ebb does not sign with it until then)",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

/// Reads the key file; creates it (mode 0600) with a new key only when nothing was ever signed.
async fn key_from_file(state: &AppState, path: &Path) -> Result<[u8; 32], String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            check_mode(path)?;
            parse_seed(&text, &path.display().to_string())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A key kept in the database before a key file was configured: moved, not replaced.
            if move_out_of_database(state, path).await? {
                return key_from_file_existing(path);
            }
            if signed_before(state).await? {
                return Err(format!(
                    "the audit signing key {} is missing, but digests were signed before (this database records them, or the storage holds them: check that EBB_STORAGE_DIR or the bucket is this installation's): Ebb does not make a new key in its place. Restore the file from your backup (or point EBB_AUDIT_SIGNING_KEY_FILE at it); if it is lost for good, run `ebb audit rotate-key`, which records the loss in the audit trail",
                    path.display()
                ));
            }
            let seed: [u8; 32] = rand::random();
            write_key_file(path, &seed)?;
            tracing::info!(file = %path.display(), "audit: created the digest signing key (first start)");
            // Another instance may have created it first: the file decides.
            key_from_file_existing(path)
        }
        Err(e) => Err(format!("cannot read the audit signing key {} ({e})", path.display())),
    }
}

fn key_from_file_existing(path: &Path) -> Result<[u8; 32], String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the audit signing key {} ({e})", path.display()))?;
    check_mode(path)?;
    parse_seed(&text, &path.display().to_string())
}

/// Writes a new key file (never replacing one: `create_new`), readable by its owner only.
fn write_key_file(path: &Path, seed: &[u8; 32]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(format!("cannot create the audit signing key {} ({e})", path.display())),
    };
    writeln!(f, "{}", hex::encode(seed)).and_then(|_| f.sync_all()).map_err(|e| format!("cannot write the audit signing key {} ({e})", path.display()))
}

/// The seed of the configured key (file, or settings row when no file is configured).
async fn seed(state: &AppState) -> Result<[u8; 32], String> {
    let settings = state.domain::<super::ChainSettings>();
    match &settings.key_file {
        Some(path) => key_from_file(state, path).await,
        None => {
            let stored = sqlx::query_scalar!("select value from settings where key = $1", SETTING)
                .fetch_optional(&state.pool)
                .await
                .map_err(|e| format!("database: {e}"))?;
            if stored.is_none() && signed_before(state).await? {
                return Err(format!(
                    "the audit signing key (settings row '{SETTING}') is missing, but digests were signed before (this database records them, or the storage holds them: check that EBB_STORAGE_DIR or the bucket is this installation's): Ebb does not make a new key in its place. Restore the row from a backup, or run `ebb audit rotate-key`, which records the loss"
                ));
            }
            let secret = kernel::settings::secret(&state.pool, SETTING).await?;
            Ok(secret[..32].try_into().expect("secrets are 32 bytes"))
        }
    }
}

/// Moves a key kept in the database (`settings`) into the key file now configured, once: the
/// same key, so nothing is re-signed. Only a key registered and live is moved (never a row put
/// there by hand); the row is deleted. `Ok(false)`: nothing to move.
async fn move_out_of_database(state: &AppState, path: &Path) -> Result<bool, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let Some(text) = sqlx::query_scalar!("select value from settings where key = $1", SETTING).fetch_optional(&state.pool).await.map_err(db)? else {
        return Ok(false);
    };
    let seed = parse_seed(&text, &format!("settings row '{SETTING}'"))?;
    let id = key_id(&SigningKey::from_bytes(&seed).verifying_key());
    let live: Option<bool> = sqlx::query_scalar!(r#"select retired_at is null as "live!" from audit_signing_keys where key_id = $1"#, id)
        .fetch_optional(&state.pool)
        .await
        .map_err(db)?;
    if live != Some(true) {
        return Ok(false);
    }
    write_key_file(path, &seed)?;
    if key_from_file_existing(path)? != seed {
        return Err(format!("{} appeared with another key while the key was being moved out of the database; a person must look", path.display()));
    }
    sqlx::query!("delete from settings where key = $1", SETTING).execute(&state.pool).await.map_err(db)?;
    tracing::warn!(file = %path.display(), key = %id, "audit: the digest signing key moved out of the database into its file");
    Ok(true)
}

/// For `ebb doctor`: the configured key checked — readable, owner-only, not retired — without
/// creating, moving or registering anything. `Ok` says where it is.
pub async fn inspect(state: &AppState) -> Result<String, String> {
    let settings = state.domain::<super::ChainSettings>();
    let (seed, place) = match &settings.key_file {
        Some(path) if !path.exists() => {
            if signed_before(state).await? {
                return Err(format!(
                    "the audit signing key {} is missing, but digests were signed before: restore it from your backup (Ebb will not start without it)",
                    path.display()
                ));
            }
            return Ok(format!("{} does not exist yet; the first start creates it", path.display()));
        }
        Some(path) => (key_from_file_existing(path)?, format!("file {}", path.display())),
        None => {
            let text = sqlx::query_scalar!("select value from settings where key = $1", SETTING)
                .fetch_optional(&state.pool)
                .await
                .map_err(|e| format!("database: {e}"))?;
            match text {
                None => return Ok(format!("kept in the database (settings row '{SETTING}'); none made yet")),
                Some(t) => (parse_seed(&t, &format!("settings row '{SETTING}'"))?, format!("kept in the database (settings row '{SETTING}')")),
            }
        }
    };
    let id = key_id(&SigningKey::from_bytes(&seed).verifying_key());
    let retired = sqlx::query_scalar!("select retired_at is not null as \"r!\" from audit_signing_keys where key_id = $1", id)
        .fetch_optional(&state.pool)
        .await
        .map_err(|e| format!("database: {e}"))?;
    if retired == Some(true) {
        return Err(format!("the audit signing key {id} ({place}) was retired by `ebb audit rotate-key`: give this installation the current key"));
    }
    Ok(format!("key {id}, {place}"))
}

/// The signing key in use (file or settings row), registered with its public key. A key that
/// `rotate-key` retired is refused: an instance still holding it signs nothing.
pub async fn signer(state: &AppState) -> Result<Signer, String> {
    let key = SigningKey::from_bytes(&seed(state).await?);
    let id = key_id(&key.verifying_key());
    register(state, &key.verifying_key()).await?;
    Ok(Signer { key, key_id: id })
}

/// Records a public key (the first time it signs): the table row and the store's
/// `key-<id>.json`, written once. Registering never retires another key — several instances may
/// each hold their own, and all stay valid; only [`rotate`] retires one. A retired key is refused.
async fn register(state: &AppState, public: &VerifyingKey) -> Result<(), String> {
    let id = key_id(public);
    let db = |e: sqlx::Error| format!("database: {e}");
    let known = sqlx::query!("select retired_at from audit_signing_keys where key_id = $1", id).fetch_optional(&state.pool).await.map_err(db)?;
    match known {
        Some(r) if r.retired_at.is_some() => {
            return Err(format!(
                "this instance's audit signing key {id} was retired by `ebb audit rotate-key`; it signs nothing more. Give this instance the current key file (every instance shares one)"
            ))
        }
        Some(_) => {}
        None => {
            let mut tx = state.pool.begin().await.map_err(db)?;
            let added = sqlx::query!("insert into audit_signing_keys (key_id, public_key) values ($1, $2) on conflict (key_id) do nothing", id, public.as_bytes().as_slice())
                .execute(&mut *tx)
                .await
                .map_err(db)?
                .rows_affected();
            // The first key is just the installation's; another one beside it is news.
            let others: bool = sqlx::query_scalar!(r#"select exists (select 1 from audit_signing_keys where key_id <> $1) as "o!""#, id)
                .fetch_one(&mut *tx)
                .await
                .map_err(db)?;
            if added == 1 && others {
                kernel::audit::record(&mut tx, &kernel::audit::Actor::system(), super::super::AuditKind::AuditKeyRotate, Some(("key", &id)), Some("a new signing key was registered"))
                    .await
                    .map_err(db)?;
            }
            tx.commit().await.map_err(db)?;
        }
    }
    // Every digest run passes here: a key already published costs one existence check, not a
    // write (the write-once put stays the guard when it is not there yet).
    let object = digest_public_key(&id);
    if state.blobs.exists(&object).await.map_err(|e| format!("storage: {e}"))? {
        return Ok(());
    }
    let body = serde_json::to_vec_pretty(&PublicKey::of(public)).expect("serialises");
    match state.blobs.put_new(&object, body.into()).await {
        Ok(_) | Err(kernel::storage::BlobError::Exists) => Ok(()),
        Err(e) => Err(format!("storage: {e}")),
    }
}

/// Every public key that ever signed, oldest first (the page and `/audit/keys.json`).
pub async fn published(pool: &PgPool) -> Result<Vec<PublicKey>, sqlx::Error> {
    let rows = sqlx::query!("select key_id, public_key, created_at, retired_at from audit_signing_keys order by created_at, key_id").fetch_all(pool).await?;
    let at = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    Ok(rows
        .into_iter()
        .map(|r| PublicKey {
            key_id: r.key_id,
            algorithm: "ed25519".into(),
            public_key: hex::encode(&r.public_key),
            created_at: Some(at(r.created_at)),
            retired_at: r.retired_at.map(at),
        })
        .collect())
}

/// Makes a new signing key (the file is replaced, the old one kept beside it as
/// `<file>.retired-<id>`; or the settings row is replaced), registers it and retires the old one:
/// the next digest is signed with the new key, the old public key stays published, and an
/// instance still holding the old key refuses to sign. A lost old key (its file missing) is
/// recorded as lost. Returns the new key's id.
pub async fn rotate(state: &AppState) -> Result<String, String> {
    let old = match seed(state).await {
        Ok(seed) => Some(key_id(&SigningKey::from_bytes(&seed).verifying_key())),
        Err(e) if e.contains("is missing") => None,
        Err(e) => return Err(e),
    };
    let seed: [u8; 32] = rand::random();
    match &state.domain::<super::ChainSettings>().key_file {
        Some(path) => {
            if let Some(old) = &old {
                let kept = path.with_file_name(format!("{}.retired-{old}", path.file_name().and_then(|n| n.to_str()).unwrap_or("key")));
                std::fs::rename(path, &kept).map_err(|e| format!("cannot move the old key aside ({e})"))?;
            }
            write_key_file(path, &seed)?;
        }
        None => {
            sqlx::query!(
                "insert into settings (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value",
                SETTING,
                hex::encode(seed)
            )
            .execute(&state.pool)
            .await
            .map_err(|e| format!("database: {e}"))?;
        }
    }
    let public = SigningKey::from_bytes(&seed).verifying_key();
    let new = key_id(&public);
    let db = |e: sqlx::Error| format!("database: {e}");
    let mut tx = state.pool.begin().await.map_err(db)?;
    sqlx::query!("insert into audit_signing_keys (key_id, public_key) values ($1, $2) on conflict (key_id) do nothing", new, public.as_bytes().as_slice())
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    // Every other key is retired: instances still holding one stop signing.
    sqlx::query!("update audit_signing_keys set retired_at = now() where key_id <> $1 and retired_at is null", new).execute(&mut *tx).await.map_err(db)?;
    let detail = match &old {
        Some(old) => format!("replaces {old}"),
        None => "the previous key was lost (its file was missing)".to_string(),
    };
    kernel::audit::record(&mut tx, &kernel::audit::Actor::system(), super::super::AuditKind::AuditKeyRotate, Some(("key", &new)), Some(&detail))
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    tracing::warn!(new = %new, old = ?old, "audit: the digest signing key was rotated; every other key is retired");
    register(state, &public).await?;
    Ok(new)
}
