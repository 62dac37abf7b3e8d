//! The digest signing key (Ed25519). Generated once and kept outside the audit tables: in the file
//! named by `EBB_AUDIT_SIGNING_KEY_FILE` (created with mode 0600 on first use), else in the
//! `settings` row `audit_signing_key`. Its public key is registered in `audit_signing_keys`, written
//! once to the store (`audit-digests/key-<id>.json`), shown on the audit page and served at
//! `/audit/keys.json`. Rotation ([`rotate`]) makes a new key; the old one is retired, never
//! deleted, so the digests it signed stay verifiable.

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

/// Reads the key file, creating it (mode 0600) with a new key when it does not exist.
fn key_from_file(path: &Path) -> Result<[u8; 32], String> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_seed(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let seed: [u8; 32] = rand::random();
            write_key_file(path, &seed)?;
            tracing::info!(file = %path.display(), "audit: created a new digest signing key");
            // Another instance may have created it first: the file decides.
            key_from_file_existing(path)
        }
        Err(e) => Err(format!("cannot read the audit signing key {} ({e})", path.display())),
    }
}

fn key_from_file_existing(path: &Path) -> Result<[u8; 32], String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the audit signing key {} ({e})", path.display()))?;
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

/// The signing key in use (file or settings row), registered with its public key.
pub async fn signer(state: &AppState) -> Result<Signer, String> {
    let settings = state.domain::<super::ChainSettings>();
    let seed = match &settings.key_file {
        Some(path) => key_from_file(path)?,
        None => {
            let secret = kernel::settings::secret(&state.pool, SETTING).await?;
            secret[..32].try_into().expect("secrets are 32 bytes")
        }
    };
    let key = SigningKey::from_bytes(&seed);
    let id = key_id(&key.verifying_key());
    register(state, &key.verifying_key()).await?;
    Ok(Signer { key, key_id: id })
}

/// Records a public key (the first time it signs): the table row (retiring every other key) and
/// the store's `key-<id>.json`, written once.
async fn register(state: &AppState, public: &VerifyingKey) -> Result<(), String> {
    let id = key_id(public);
    let db = |e: sqlx::Error| format!("database: {e}");
    let known = sqlx::query_scalar!("select retired_at is null as \"live!\" from audit_signing_keys where key_id = $1", id)
        .fetch_optional(&state.pool)
        .await
        .map_err(db)?;
    if known != Some(true) {
        let mut tx = state.pool.begin().await.map_err(db)?;
        sqlx::query!(
            "insert into audit_signing_keys (key_id, public_key) values ($1, $2) on conflict (key_id) do update set retired_at = null",
            id,
            public.as_bytes().as_slice()
        )
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        sqlx::query!("update audit_signing_keys set retired_at = now() where key_id <> $1 and retired_at is null", id).execute(&mut *tx).await.map_err(db)?;
        tx.commit().await.map_err(db)?;
    }
    let object = digest_public_key(&id);
    if !state.blobs.exists(&object).await.map_err(|e| format!("storage: {e}"))? {
        let body = serde_json::to_vec_pretty(&PublicKey::of(public)).expect("serialises");
        state.blobs.put(&object, body.into()).await.map_err(|e| format!("storage: {e}"))?;
    }
    Ok(())
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
/// `<file>.retired-<id>`; or the settings row is replaced) and registers it: the next digest is
/// signed with it, the old public key stays published. Returns the new key's id.
pub async fn rotate(state: &AppState) -> Result<String, String> {
    let old = signer(state).await?;
    let seed: [u8; 32] = rand::random();
    match &state.domain::<super::ChainSettings>().key_file {
        Some(path) => {
            let kept = path.with_file_name(format!("{}.retired-{}", path.file_name().and_then(|n| n.to_str()).unwrap_or("key"), old.key_id));
            std::fs::rename(path, &kept).map_err(|e| format!("cannot move the old key aside ({e})"))?;
            write_key_file(path, &seed)?;
        }
        None => {
            sqlx::query!("update settings set value = $2 where key = $1", SETTING, hex::encode(seed))
                .execute(&state.pool)
                .await
                .map_err(|e| format!("database: {e}"))?;
        }
    }
    let new = signer(state).await?;
    let mut tx = state.pool.begin().await.map_err(|e| e.to_string())?;
    kernel::audit::record(
        &mut tx,
        &kernel::audit::Actor::system(),
        super::super::AuditKind::AuditKeyRotate,
        Some(("key", &new.key_id)),
        Some(&format!("replaces {}", old.key_id)),
    )
    .await
    .map_err(|e| e.to_string())?;
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(new.key_id)
}
