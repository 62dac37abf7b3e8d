//! The audit log's writer: every part of Ebb records what it did through [`record`], in the
//! transaction of the change it records. The kinds are in `common::audit_kind`; the viewer, the
//! archive and the exports are the audit domain's.

use sqlx::PgConnection;
use uuid::Uuid;

pub use common::audit_kind::AuditKind;

mod in_request;
pub use in_request::{current_client_hash, record_admin_action, record_admin_detail};

/// Who did it and from where. The client address is kept only as an HMAC with a server secret
/// (`Keyring`, `Purpose::Client`):
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

/// Records an event with the connection (transaction) of the change it records: a change that
/// rolls back leaves no event, and an event never exists without its change. The admin's name is
/// copied as it is now (the event must read the same after a rename or a removal). `subject` is an
/// id (never a visitor's personal data); `detail` a short plain text (a passkey's name, counts).
pub async fn record(conn: &mut PgConnection, actor: &Actor, kind: AuditKind, subject: Option<(&str, &str)>, detail: Option<&str>) -> Result<(), sqlx::Error> {
    let (subject_type, subject_id) = subject.unzip();
    let detail = detail.map(|d| d.chars().take(2000).collect::<String>());
    sqlx::query!(
        "insert into audit_events (kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
         values ($1, $2, (select name from admin_names where id = $2), $3, $4, $5, $6)",
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
