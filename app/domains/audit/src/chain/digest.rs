//! Signed digests of the chains, written to the blob store as `audit-digests/NNNNNNNNNNNN.json`,
//! numbered without gaps and never overwritten. Each is
//!
//! ```json
//! {"body": "<the digest, as JSON text>", "key_id": "<16 hex>", "signature": "<Ed25519 over body's UTF-8 bytes, hex>"}
//! ```
//!
//! and the body names the format, its number, when, why, the signing key, the SHA-256 of the
//! previous digest object (so a deleted digest is found by the next one's back-link), and for each
//! month whose chain grew since the previous digest: its length, first and last sealed ids and its
//! head — plus, for a month just archived, the archived object's key, size, CRC32C and SHA-256.
//!
//! Written by the `audit_seal` job at least every `EBB_AUDIT_DIGEST_MINUTES` when something was
//! sealed and at least daily when nothing was, and whenever a month is archived. One writer at a
//! time (an advisory lock); a digest whose object was written by a run killed before it recorded
//! it is adopted by the next run (its signature checked), never written again.

use ed25519_dalek::{Signature, Signer as _, Verifier as _, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use time::{Date, OffsetDateTime};

use super::keys;
use super::month_label;
use kernel::state::AppState;
use kernel::storage::digest_key;
use kernel::storage::BlobStore as _;

/// The body's format name.
pub const FORMAT: &str = "ebb-audit-digest-v1";
/// The advisory lock that makes digest writers take turns.
pub(super) const LOCK: i64 = 0x0ebb_0031_0001;

/// A digest object as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub body: String,
    pub key_id: String,
    pub signature: String,
}

/// What a digest says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Body {
    pub format: String,
    pub number: i64,
    pub created_at: String,
    /// `scheduled`, `archive YYYY-MM` or `asked`.
    pub reason: String,
    pub key_id: String,
    /// SHA-256 (hex) of the previous digest object's bytes; `None` for digest 1.
    pub previous: Option<String>,
    pub months: Vec<MonthHead>,
}

/// One month's chain as a digest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthHead {
    /// `YYYY-MM`.
    pub month: String,
    /// Events sealed in the month's chain (the last one's `seq`).
    pub count: i64,
    pub first_id: Option<i64>,
    pub last_id: Option<i64>,
    /// The last event's hash (hex).
    pub head: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<ArchivedObject>,
}

/// An archived month's object as a digest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedObject {
    pub key: String,
    pub bytes: i64,
    /// CRC32C as 8 hex digits.
    pub crc32c: String,
    /// SHA-256 of the object's bytes (hex).
    pub sha256: String,
}

/// Why a digest is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The job's regular digest.
    Scheduled,
    /// A month was archived (it is listed with its object).
    Archived(Date),
    /// An admin or the CLI asked.
    Asked,
}

impl Reason {
    fn text(self) -> String {
        match self {
            Reason::Scheduled => "scheduled".into(),
            Reason::Archived(p) => format!("archive {}", month_label(p)),
            Reason::Asked => "asked".into(),
        }
    }
}

/// A digest object read and checked: its number, body and SHA-256.
#[derive(Debug, Clone)]
pub struct Checked {
    pub body: Body,
    pub sha256: [u8; 32],
}

/// Reads a digest object: the envelope, the signature by `key` (one of `keys`, by id) and the body.
pub fn check(bytes: &[u8], keys: &[keys::PublicKey]) -> Result<Checked, String> {
    let env = open(bytes, keys)?;
    let body: Body = serde_json::from_str(&env.body).map_err(|e| format!("its body is not a digest ({e})"))?;
    if body.format != FORMAT || body.key_id != env.key_id {
        return Err(format!("unknown format {} or key mismatch", body.format));
    }
    Ok(Checked { body, sha256: Sha256::digest(bytes).into() })
}

/// Signs `body` (JSON text) as an envelope's bytes: `{"body", "key_id", "signature"}`.
pub fn seal_envelope(signer: &keys::Signer, body: String) -> Vec<u8> {
    let signature = hex::encode(signer.key.sign(body.as_bytes()).to_bytes());
    serde_json::to_vec(&Envelope { body, key_id: signer.key_id.clone(), signature }).expect("serialises")
}

/// Reads a signed envelope (a digest or a restore statement) and checks its signature by one of
/// `keys` (by id); the body is returned as signed, unparsed.
pub fn open(bytes: &[u8], keys: &[keys::PublicKey]) -> Result<Envelope, String> {
    let env: Envelope = serde_json::from_slice(bytes).map_err(|e| format!("not a digest ({e})"))?;
    let key: VerifyingKey = keys
        .iter()
        .find(|k| k.key_id == env.key_id)
        .and_then(keys::PublicKey::verifying_key)
        .ok_or_else(|| format!("signed by key {}, which is not among the trusted public keys", env.key_id))?;
    let sig: [u8; 64] = hex::decode(&env.signature).ok().and_then(|s| s.try_into().ok()).ok_or("its signature is malformed")?;
    key.verify(env.body.as_bytes(), &Signature::from_bytes(&sig)).map_err(|_| "its signature does not verify".to_string())?;
    Ok(env)
}

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// Writes the next digest when one is due (`force`: always). Returns its number, or `None` when
/// none was due.
pub async fn write(state: &AppState, reason: Reason, force: bool) -> Result<Option<i64>, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let storage = |e: kernel::storage::BlobError| format!("storage: {e}");
    let settings = state.domain::<super::ChainSettings>();
    if !force && !due(state, settings.digest_every).await.map_err(db)? {
        return Ok(None);
    }
    // Everything that needs a connection of its own comes before the transaction (a pool of one
    // connection must not wait on itself).
    let signer = keys::signer(state).await?;
    let Next { trusted, mut tx, number, previous } = next(state).await?;
    let key = digest_key(number);
    if let Some(bytes) = state.blobs.get(&key).await.map_err(storage)? {
        // A run killed after writing the object and before recording it: finish that one.
        adopt(&mut tx, number, &bytes, previous.as_deref(), &trusted).await?;
        tx.commit().await.map_err(db)?;
        tracing::info!(number, "audit digest: recorded a digest an interrupted run had written");
        return Ok(Some(number));
    }
    let now: OffsetDateTime = sqlx::query_scalar!(r#"select now() as "now!""#).fetch_one(&mut *tx).await.map_err(db)?;
    let months = grown_months(&mut tx).await.map_err(db)?;
    let body = Body { format: FORMAT.into(), number, created_at: rfc3339(now), reason: reason.text(), key_id: signer.key_id.clone(), previous, months };
    let bytes = seal_envelope(&signer, serde_json::to_string(&body).expect("serialises"));
    fail::fail_point!("audit-digest-before-put");
    // Write-once at the store: a digest object that appeared meanwhile (a writer that did not
    // take this database's lock) is never replaced — it is checked and adopted, or refused.
    match state.blobs.put_new(&key, bytes.clone().into()).await {
        Ok(_) => {}
        Err(kernel::storage::BlobError::Exists) => {
            let theirs = state.blobs.get(&key).await.map_err(storage)?.unwrap_or_default();
            adopt(&mut tx, number, &theirs, body.previous.as_deref(), &trusted).await?;
            tx.commit().await.map_err(db)?;
            tracing::warn!(number, "audit digest: another writer stored this digest first; recorded theirs, replaced nothing");
            return Ok(Some(number));
        }
        Err(e) => return Err(storage(e)),
    }
    fail::fail_point!("audit-digest-after-put");
    record(&mut tx, &key, &body, &Sha256::digest(&bytes).into()).await.map_err(db)?;
    tx.commit().await.map_err(db)?;
    tracing::info!(number, months = body.months.len(), reason = %body.reason, "audit digest: written and signed");
    Ok(Some(number))
}

/// At start (`ebb serve`) and in `ebb doctor`: whether the store holds a digest past this
/// database's last one. `Ok(None)`: it does not. `Ok(Some(n))`: digest `n` is one an interrupted
/// run wrote for this very database (it describes these chains); recorded when `adopt_it`, as the
/// digest step would. `Err`: it belongs to another timeline — the database was restored from a
/// backup taken before it — and only `ebb doctor --after-restore` may set it aside.
pub async fn store_ahead(state: &AppState, adopt_it: bool) -> Result<Option<i64>, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let Next { trusted, mut tx, number, previous } = next(state).await?;
    let Some(bytes) = state.blobs.get(&digest_key(number)).await.map_err(|e| format!("storage: {e}"))? else { return Ok(None) };
    adopt(&mut tx, number, &bytes, previous.as_deref(), &trusted)
        .await
        .map_err(|why| format!("the store holds audit digest {number}, past this database's last ({}): {why}", number - 1))?;
    if adopt_it {
        tx.commit().await.map_err(db)?;
    }
    Ok(Some(number))
}

/// Where the next digest goes, under the digests' lock (held until `tx` ends): the trusted
/// public keys (read first, on a connection of their own), the number after this database's last
/// digest and that digest's SHA-256.
struct Next {
    trusted: Vec<keys::PublicKey>,
    tx: sqlx::Transaction<'static, sqlx::Postgres>,
    number: i64,
    previous: Option<String>,
}

async fn next(state: &AppState) -> Result<Next, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let trusted = keys::published(&state.pool).await.map_err(db)?;
    let mut tx = state.pool.begin().await.map_err(db)?;
    sqlx::query!("select pg_advisory_xact_lock($1)", LOCK).execute(&mut *tx).await.map_err(db)?;
    let last = sqlx::query!("select number, sha256 from audit_digests order by number desc limit 1").fetch_optional(&mut *tx).await.map_err(db)?;
    let number = last.as_ref().map_or(1, |l| l.number + 1);
    let previous = last.as_ref().map(|l| hex::encode(&l.sha256));
    Ok(Next { trusted, tx, number, previous })
}

/// Whether a digest is due: none yet; something grew (or was archived) and the last one is
/// `every` old; or nothing grew and the last one is a day (or `every`) old.
async fn due(state: &AppState, every: std::time::Duration) -> Result<bool, sqlx::Error> {
    let every = time::Duration::try_from(every).unwrap_or(time::Duration::HOUR);
    let r = sqlx::query!(
        r#"select now() - (select created_at from audit_digests order by number desc limit 1) as age,
                  exists (select 1 from audit_chains where seq > digested_seq)
                  or exists (select 1 from audit_partition_archives where status = 'verified' and digest_number is null and sha256 is not null) as "grown!""#
    )
    .fetch_one(&state.pool)
    .await?;
    let age =
        r.age.map(|a| time::Duration::microseconds(a.microseconds) + time::Duration::days(i64::from(a.days)) + time::Duration::days(30 * i64::from(a.months)));
    Ok(match age {
        None => true,
        Some(age) if r.grown => age >= every,
        Some(age) => age >= time::Duration::DAY.max(every),
    })
}

/// Months whose chain grew since the last digest (and the archived month, with its object).
async fn grown_months(tx: &mut sqlx::PgConnection) -> Result<Vec<MonthHead>, sqlx::Error> {
    // Archived months are listed by the first digest after their verification, whichever writes it.
    let rows = sqlx::query!(
        r#"select c.period, c.seq, c.head, c.first_id, c.last_id,
                  a.object_key as "object_key?", a.bytes, a.crc32c, a.sha256, a.chain_count, a.chain_head
           from audit_chains c
           left join audit_partition_archives a on a.period = c.period and a.status = 'verified' and a.digest_number is null and a.sha256 is not null
           where c.seq > c.digested_seq or a.period is not null
           order by c.period"#
    )
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let archived = match (r.object_key, r.bytes, r.crc32c, r.sha256) {
                (Some(key), Some(bytes), Some(crc), Some(sha)) => Some(ArchivedObject { key, bytes, crc32c: format!("{crc:08x}"), sha256: hex::encode(sha) }),
                _ => None,
            };
            // An archived month is recorded as the object holds it.
            let (count, head) = match (&archived, r.chain_count, r.chain_head) {
                (Some(_), Some(n), Some(h)) => (n, h),
                _ => (r.seq, r.head),
            };
            MonthHead { month: month_label(r.period), count, first_id: r.first_id, last_id: r.last_id, head: hex::encode(head), archived }
        })
        .collect())
}

/// Records a digest: its row, and how far it saw each month.
async fn record(tx: &mut sqlx::PgConnection, key: &str, body: &Body, sha256: &[u8; 32]) -> Result<(), sqlx::Error> {
    let created_at = OffsetDateTime::parse(&body.created_at, &time::format_description::well_known::Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let events: i64 = body.months.iter().map(|m| m.count).sum();
    sqlx::query!(
        "insert into audit_digests (number, object_key, sha256, key_id, reason, events, created_at) values ($1, $2, $3, $4, $5, $6, $7)",
        body.number,
        key,
        sha256.as_slice(),
        body.key_id,
        body.reason,
        events,
        created_at
    )
    .execute(&mut *tx)
    .await?;
    for m in &body.months {
        let Some(period) = super::parse_period(&m.month) else { continue };
        sqlx::query!("update audit_chains set digested_seq = greatest(digested_seq, least($2, seq)) where period = $1", period, m.count)
            .execute(&mut *tx)
            .await?;
        if m.archived.is_some() {
            sqlx::query!("update audit_partition_archives set digest_number = $2 where period = $1 and digest_number is null", period, body.number)
                .execute(&mut *tx)
                .await?;
        }
    }
    Ok(())
}

/// Records digest `number` found in the store (written by a killed run), after checking it.
async fn adopt(tx: &mut sqlx::PgConnection, number: i64, bytes: &[u8], previous: Option<&str>, keys: &[keys::PublicKey]) -> Result<(), String> {
    let checked =
        check(bytes, keys).map_err(|why| format!("digest object {number} is in the store but {why}; a person must look (nothing was overwritten)"))?;
    if checked.body.number != number || checked.body.previous.as_deref() != previous {
        return Err(format!("digest object {number} in the store does not follow digest {} (number or back-link); a person must look", number - 1));
    }
    // Signed by us and linked to our last digest, but it must also describe this database's
    // chains: after a restore, the store holds digests of the lost timeline, which only
    // `ebb doctor --after-restore` may set aside (signed), never adopted as ours.
    for m in &checked.body.months {
        let Some(period) = super::parse_period(&m.month) else { continue };
        if m.archived.is_some() || m.count == 0 {
            continue;
        }
        let from = period.midnight().assume_utc();
        let to = crate::upkeep::add_months(from, 1);
        let ours: Option<Vec<u8>> =
            sqlx::query_scalar!("select hash from audit_events where occurred_at >= $1 and occurred_at < $2 and seq = $3", from, to, m.count)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| format!("database: {e}"))?
                .flatten();
        if ours.map(hex::encode).as_deref() != Some(m.head.as_str()) {
            return Err(format!(
                "digest object {number} in the store records {} events of {} that this database does not hold: it belongs to another timeline (was the database restored from a backup? then run `ebb doctor --after-restore`); nothing was adopted or overwritten",
                m.count, m.month
            ));
        }
    }
    record(tx, &digest_key(number), &checked.body, &checked.sha256).await.map_err(|e| format!("database: {e}"))
}

/// The digests recorded in the database, newest first (the audit page).
pub async fn latest(pool: &sqlx::PgPool, limit: i64) -> Result<Vec<super::super::DigestView>, sqlx::Error> {
    sqlx::query_as!(
        super::super::DigestView,
        "select number, object_key, key_id, reason, events, created_at from audit_digests order by number desc limit $1",
        limit
    )
    .fetch_all(pool)
    .await
}
