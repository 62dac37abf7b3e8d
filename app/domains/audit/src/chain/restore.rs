//! After a restore (`ebb doctor --after-restore`): the signed digests the store holds past the
//! restored database's last one are kept as superseded, and the restore is recorded.

use kernel::state::AppState;
use kernel::storage::digest_key;
use kernel::storage::BlobStore as _;
use time::OffsetDateTime;

use super::digest::{check, LOCK};
use super::keys;
use crate::AuditKind;

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
    kernel::audit::record(&mut tx, actor, AuditKind::AuditRestore, Some(("digests", &format!("{first}-{}", number - 1))), Some(&detail)).await.map_err(db)?;
    tx.commit().await.map_err(db)?;
    tracing::warn!(first, last = number - 1, "audit digests written after the restored backup are kept as superseded");
    Ok(Some((first, number - 1)))
}
