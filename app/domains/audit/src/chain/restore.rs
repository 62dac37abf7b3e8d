//! After a restore (`ebb doctor --after-restore`): the signed digests the store holds past the
//! restored database's last one are kept as superseded, and the restore is recorded — in the
//! audit log, and as a **signed restore statement** in the store
//! (`audit-digests/restore-<first digest, 12 digits>.json`, the same envelope as a digest):
//!
//! ```json
//! {"format": "ebb-audit-restore-v1", "created_at": "…", "key_id": "…", "first": 8, "last": 11,
//!  "previous": "<SHA-256 of digest 7's object, hex; null when first = 1>",
//!  "chains": [{"month": "2026-12", "count": 120, "head": "<hex>"}], "reason": "…"}
//! ```
//!
//! Every verifier (the database check, `--offline`, scripts/audit-verify.py) treats digests
//! `first..=last` as superseded only because such a statement, signed by a trusted key, says so:
//! what they recorded of a month up to the restored chain's length (`chains`) is still compared,
//! what lies past it is not (those events were lost with the restore), and every report lists
//! them as warnings. A `superseded_at` set in the database by hand supersedes nothing.

use kernel::state::AppState;
use kernel::storage::BlobStore as _;
use kernel::storage::{digest_key, restore_statement_key};
use time::OffsetDateTime;

use super::digest::{check, LOCK};
use super::keys;
use crate::AuditKind;

pub use super::statement::{check_statement, RestoredChain, Statement, FORMAT};

/// After a restore (`ebb doctor --after-restore`): the digests in the store numbered past the
/// restored database's last one were written after the backup, and cover events lost with it.
/// Each is checked (signature, number, back-link; the public keys the store publishes are
/// registered as retired keys when the database lost them) and recorded as superseded, so the
/// next digest follows the last of them; the restore is an audit event. Returns the range, or
/// `None` when the store ends where the database does.
pub async fn supersede_after_restore(state: &AppState, actor: &kernel::audit::Actor) -> Result<Option<(i64, i64)>, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let storage = |e: kernel::storage::BlobError| format!("storage: {e}");
    for k in super::verify::store_keys(&*state.blobs).await.map_err(storage)? {
        let Some(public) = k.verifying_key() else { continue };
        sqlx::query!(
            "insert into audit_signing_keys (key_id, public_key, retired_at) values ($1, $2, now()) on conflict do nothing",
            k.key_id,
            public.as_bytes().as_slice()
        )
        .execute(&state.pool)
        .await
        .map_err(db)?;
    }
    // Connections of their own before the transaction (a pool of one must not wait on itself).
    let signer = keys::signer(state).await?;
    let trusted = keys::published(&state.pool).await.map_err(db)?;
    let mut tx = state.pool.begin().await.map_err(db)?;
    sqlx::query!("select pg_advisory_xact_lock($1)", LOCK).execute(&mut *tx).await.map_err(db)?;
    let last = sqlx::query!("select number, sha256 from audit_digests order by number desc limit 1").fetch_optional(&mut *tx).await.map_err(db)?;
    let first = last.as_ref().map_or(1, |l| l.number + 1);
    let mut previous = last.as_ref().map(|l| hex::encode(&l.sha256));
    let mut number = first;
    let mut events = 0;
    while let Some(bytes) = state.blobs.get(&digest_key(number)).await.map_err(storage)? {
        let checked = check(&bytes, &trusted).map_err(|why| format!("digest {number} in the store cannot be trusted: {why}; a person must look"))?;
        if checked.body.number != number || checked.body.previous != previous {
            return Err(format!("digest {number} in the store does not follow digest {} (number or back-link); a person must look", number - 1));
        }
        let n: i64 = checked.body.months.iter().map(|m| m.count).sum();
        let created_at = OffsetDateTime::parse(&checked.body.created_at, &time::format_description::well_known::Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH);
        sqlx::query!(
            "insert into audit_digests (number, object_key, sha256, key_id, reason, events, created_at, superseded_at) values ($1, $2, $3, $4, $5, $6, $7, now())",
            number,
            digest_key(number),
            checked.sha256.as_slice(),
            checked.body.key_id,
            checked.body.reason,
            n,
            created_at
        )
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        events = events.max(n);
        previous = Some(hex::encode(checked.sha256));
        number += 1;
    }
    if number == first {
        return Ok(None);
    }
    let detail = format!(
        "digests {first} to {} were written after the backup and are kept as superseded; they covered up to {events} events, those recorded after the backup are lost",
        number - 1
    );
    // The signed statement: without it, no verifier sets these digests aside.
    let chains = sqlx::query!("select period, seq, head from audit_chains order by period").fetch_all(&mut *tx).await.map_err(db)?;
    let now: OffsetDateTime = sqlx::query_scalar!(r#"select now() as "now!""#).fetch_one(&mut *tx).await.map_err(db)?;
    let statement = Statement {
        format: FORMAT.into(),
        created_at: now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        key_id: String::new(),
        first,
        last: number - 1,
        previous: last.as_ref().map(|l| hex::encode(&l.sha256)),
        chains: chains.into_iter().map(|c| RestoredChain { month: super::month_label(c.period), count: c.seq, head: hex::encode(c.head) }).collect(),
        reason: format!("the database was restored from a backup (ebb doctor --after-restore): {detail}"),
    };
    write_statement(state, &signer, &trusted, statement).await?;
    kernel::audit::record(&mut tx, actor, AuditKind::AuditRestore, Some(("digests", &format!("{first}-{}", number - 1))), Some(&detail)).await.map_err(db)?;
    tx.commit().await.map_err(db)?;
    tracing::warn!(first, last = number - 1, "audit digests written after the restored backup are kept as superseded");
    Ok(Some((first, number - 1)))
}

/// Signs and stores a restore statement, write-once. One already there for the same digests (a
/// run killed after writing it) is kept when it verifies and names the same range.
async fn write_statement(state: &AppState, signer: &keys::Signer, trusted: &[keys::PublicKey], mut statement: Statement) -> Result<(), String> {
    statement.key_id = signer.key_id.clone();
    let key = restore_statement_key(statement.first);
    let bytes = super::digest::seal_envelope(signer, serde_json::to_string(&statement).expect("serialises"));
    match state.blobs.put_new(&key, bytes.into()).await {
        Ok(_) => Ok(()),
        Err(kernel::storage::BlobError::Exists) => {
            let theirs = state.blobs.get(&key).await.map_err(|e| format!("storage: {e}"))?.unwrap_or_default();
            match check_statement(&key, &theirs, trusted) {
                Ok(st) if st.last == statement.last && st.previous == statement.previous => Ok(()),
                Ok(_) => Err(format!("the store already holds a different restore statement {key}; a person must look (nothing was overwritten)")),
                Err(why) => Err(format!("the store already holds a restore statement {key}, but {why}; a person must look (nothing was overwritten)")),
            }
        }
        Err(e) => Err(format!("storage: {e}")),
    }
}
