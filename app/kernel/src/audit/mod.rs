//! The audit log's writer: every part of Ebb records what it did through [`record`], in the
//! transaction of the change it records. The kinds are in `common::audit_kind`; the viewer, the
//! archive and the exports are the audit domain's.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

pub use common::audit_kind::AuditKind;

mod in_request;
pub use in_request::{current_client_hash, record_admin_action, record_admin_detail};

/// Who did it and from where. The client address is kept only as an HMAC with a server secret:
/// the same client gives the same value (events can be correlated) but the address cannot be
/// recovered from it.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub admin: Option<Uuid>,
    pub client_hash: Option<String>,
}

impl Actor {
    /// Ebb itself (jobs, upkeep): no admin, no client.
    pub fn system() -> Self {
        Actor::default()
    }
}

/// The server secret that keys client hashes (generated once, kept in `settings`).
#[derive(Debug, Default)]
pub struct ClientSecret(std::sync::OnceLock<Vec<u8>>);

impl ClientSecret {
    /// Loads (or creates, first writer wins) the secret. Start-up calls it after migrations.
    /// An unreadable stored secret is refused (Ebb does not start), never replaced by a constant.
    pub async fn load(&self, pool: &PgPool) -> Result<(), String> {
        let secret = crate::settings::secret(pool, crate::settings::CLIENT_SECRET).await?;
        let _ = self.0.set(secret);
        Ok(())
    }

    /// HMAC-SHA256(secret, client address), 128 bits in hex; `None` before [`ClientSecret::load`].
    pub fn hash(&self, client: &str) -> Option<String> {
        let secret = self.0.get()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
        mac.update(client.as_bytes());
        Some(hex::encode(&mac.finalize().into_bytes()[..16]))
    }

    /// HMAC-SHA256(secret, purpose ‖ 0 ‖ data), 128 bits in hex: a key for `data` that nobody
    /// without the secret can compute or reverse (rate-limit buckets, signed redirects). Before
    /// [`ClientSecret::load`] (tools that never serve), a per-process random secret stands in.
    pub fn keyed(&self, purpose: &str, data: &str) -> String {
        static FALLBACK: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
        let secret = self.0.get().map(Vec::as_slice).unwrap_or_else(|| FALLBACK.get_or_init(rand::random));
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac.update(data.as_bytes());
        hex::encode(&mac.finalize().into_bytes()[..16])
    }
}

/// Records an event with the connection (transaction) of the change it records: a change that
/// rolls back leaves no event, and an event never exists without its change. The admin's name is
/// copied as it is now (the event must read the same after a rename or a removal). `subject` is an
/// id (never a visitor's personal data); `detail` a short plain text (a passkey's name, counts).
pub async fn record(conn: &mut PgConnection, actor: &Actor, kind: AuditKind, subject: Option<(&str, &str)>, detail: Option<&str>) -> Result<(), sqlx::Error> {
    let (subject_type, subject_id) = subject.unzip();
    let detail = detail.map(|d| d.chars().take(2000).collect::<String>());
    sqlx::query!(
        "insert into audit_events (kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
         values ($1, $2, (select name from admins where id = $2), $3, $4, $5, $6)",
        kind.as_str(),
        actor.admin,
        subject_type,
        subject_id,
        detail,
        actor.client_hash,
    )
    .execute(conn)
    .await?;
    Ok(())
}
