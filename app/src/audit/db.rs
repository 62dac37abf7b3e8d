//! Writing and reading audit events.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{AuditAdmin, AuditFilter, AuditKind, AuditRow, PROMISE_MONTHS};

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

    /// `admin` (or Ebb, with `None`) acting in the current request, its client hashed.
    pub fn in_request(admin: Option<Uuid>) -> Self {
        Actor { admin, client_hash: current_client_hash() }
    }
}

/// The server secret that keys client hashes (generated once, kept in `settings`).
#[derive(Debug, Default)]
pub struct ClientSecret(std::sync::OnceLock<Vec<u8>>);

impl ClientSecret {
    /// Loads (or creates, first writer wins) the secret. Start-up calls it after migrations.
    /// An unreadable stored secret is refused (Ebb does not start), never replaced by a constant.
    pub async fn load(&self, pool: &PgPool) -> Result<(), String> {
        let secret = crate::settings::secret(pool, "audit_client_secret").await?;
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

/// A page of events of the last 24 months matching `filter`, newest first, older than `before`.
pub async fn page(pool: &PgPool, filter: &AuditFilter, before: Option<(time::OffsetDateTime, i64)>, limit: i64) -> Result<Vec<AuditRow>, sqlx::Error> {
    let to_exclusive = filter.to.map(|d| d.next_day().unwrap_or(d).midnight().assume_utc());
    let from = filter.from.map(|d| d.midnight().assume_utc());
    let (before_at, before_id) = before.unzip();
    sqlx::query_as!(
        AuditRow,
        r#"select id as "id!", occurred_at as "occurred_at!", kind as "kind!", admin_id, admin_name, subject_type, subject_id, detail, client_hash
           from audit_events
           where occurred_at >= greatest(now() - make_interval(months => $1), coalesce($2, '-infinity'::timestamptz))
             and ($3::timestamptz is null or occurred_at < $3)
             and ($4::text is null or kind = $4)
             and ($5::uuid is null or admin_id = $5)
             and ($6::text is null or subject_id = $6)
             and ($7::timestamptz is null or (occurred_at, id) < ($7, $8))
           order by occurred_at desc, id desc
           limit $9"#,
        PROMISE_MONTHS as i32,
        from,
        to_exclusive,
        filter.kind,
        filter.admin,
        filter.subject,
        before_at,
        before_id,
        limit,
    )
    .fetch_all(pool)
    .await
}

/// Admins that can be chosen in the filter: current admins and names found in events.
pub async fn admins(pool: &PgPool) -> Result<Vec<AuditAdmin>, sqlx::Error> {
    sqlx::query_as!(
        AuditAdmin,
        r#"select id as "id!", name as "name!" from admins
           union
           select distinct on (admin_id) admin_id as "id!", admin_name as "name!" from audit_events
           where admin_id is not null and admin_name is not null and admin_id not in (select id from admins)
             and occurred_at >= now() - make_interval(months => $1)
           order by 2"#,
        PROMISE_MONTHS as i32,
    )
    .fetch_all(pool)
    .await
}

/// The hashed client of the current request, when there is one (server functions).
pub fn current_client_hash() -> Option<String> {
    let state = leptos::prelude::use_context::<crate::state::AppState>()?;
    leptos::prelude::use_context::<axum::http::request::Parts>()?;
    let client = crate::state::client_address(&state).map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
    state.domain::<std::sync::Arc<ClientSecret>>().hash(&client)
}

/// Records what an admin did (or Ebb, with `admin` `None`) in the current request, with the
/// same connection as the change; the subject's type follows from the kind.
pub async fn record_admin_action(conn: &mut PgConnection, admin: Option<Uuid>, kind: AuditKind, subject: Option<&str>) -> Result<(), sqlx::Error> {
    record_admin_detail(conn, admin, kind, subject, None).await
}

/// [`record_admin_action`] with a short detail (a passkey's name, a job's counts).
pub async fn record_admin_detail(
    conn: &mut PgConnection,
    admin: Option<Uuid>,
    kind: AuditKind,
    subject: Option<&str>,
    detail: Option<&str>,
) -> Result<(), sqlx::Error> {
    record(conn, &Actor::in_request(admin), kind, subject.map(|s| (kind.subject_type(), s)), detail).await
}
