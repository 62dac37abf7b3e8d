//! Sealing: the `audit_seal` job's first step hashes new events into their months' chains.
//!
//! One batch is one REPEATABLE READ transaction: it reads its snapshot's oldest transaction still
//! in flight in this database (every transaction below it has ended), takes the cursor (the last sealed `(tx, id)`) for update, and
//! reads the next events in `(tx, id)` order whose `tx` is below `xmin`. Each gets the next place
//! in its month's chain and `hash = SHA-256(head ‖ canonical bytes)`; the events, the months'
//! heads and the cursor are written in the same transaction. A batch killed at any point leaves
//! nothing (the next one redoes it); a batch that commits is never redone (`seq is null` guards
//! the update, the cursor only moves forward). A second sealer elsewhere fails on the cursor row
//! (serialisation error) and does nothing.

use std::collections::BTreeMap;

use sqlx::PgPool;
use time::{Date, OffsetDateTime};

use super::{period_of, ChainRow, Linker, GENESIS};

/// Events per batch (one transaction).
pub const BATCH: i64 = 5_000;

#[derive(sqlx::FromRow)]
struct SealRow {
    #[sqlx(flatten)]
    row: ChainRow,
    tx: i64,
}

/// A month's chain as the sealer carries it.
#[derive(Debug, Clone)]
struct Head {
    seq: i64,
    head: [u8; 32],
    first_id: Option<i64>,
    last_id: Option<i64>,
}

/// What one batch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Events hashed into a chain.
    pub sealed: u64,
    /// Events left unsealed: dated too far before events already sealed ahead of them (an
    /// insertion into the past); every verification reports them.
    pub refused: u64,
    /// The batch was full: more may be waiting.
    pub more: bool,
}

fn is_serialisation_failure(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if matches!(d.code().as_deref(), Some("40001") | Some("40P01") | Some("55P03")))
}

/// Seals one batch of at most `limit` events. `late_limit`: see [`super::ChainSettings`].
pub async fn seal_batch(pool: &PgPool, limit: i64, late_limit: std::time::Duration) -> Result<Batch, sqlx::Error> {
    match seal_batch_inner(pool, limit, late_limit).await {
        // Another sealer committed first: its work stands, this batch did nothing.
        Err(e) if is_serialisation_failure(&e) => Ok(Batch::default()),
        other => other,
    }
}

/// A batch's transaction: REPEATABLE READ, a lock waited for at most 5 s, and the next events
/// read in the chain's index order, never sorted — when the statistics say nothing lies past the
/// cursor (the events since the last ANALYZE, or one transaction's thousands), the planner would
/// sort everything past the cursor to take each batch, so sealing a backlog took time in the
/// square of its size.
async fn begin(pool: &PgPool) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read").execute(&mut *tx).await?;
    sqlx::query("set local lock_timeout = '5s'").execute(&mut *tx).await?;
    sqlx::query("set local enable_sort = off").execute(&mut *tx).await?;
    Ok(tx)
}

async fn seal_batch_inner(pool: &PgPool, limit: i64, late_limit: std::time::Duration) -> Result<Batch, sqlx::Error> {
    let mut tx = begin(pool).await?;
    // The snapshot's oldest transaction still in flight — among those that could write here:
    // one running in another database of the cluster cannot, and a long one there must not hold
    // sealing back. Unknown ones (finished since, or hidden) count as ours: the horizon only errs
    // low, never past an event that could still commit.
    let horizon: i64 = sqlx::query_scalar(
        "select coalesce(
             (select min(x) from pg_snapshot_xip(pg_current_snapshot()) x
              where not exists (select 1 from pg_stat_activity a where a.datname is distinct from current_database() and a.backend_xid = x::xid)),
             pg_snapshot_xmax(pg_current_snapshot()))::text::bigint",
    )
    .fetch_one(&mut *tx)
    .await?;
    let cursor = sqlx::query!("select tx, id, max_at from audit_seal_cursor for update").fetch_one(&mut *tx).await?;
    let rows: Vec<SealRow> = sqlx::query_as(
        "select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash, seq, hash, tx
         from audit_events where (tx, id) > ($1, $2) and tx < $3 order by tx, id limit $4",
    )
    .bind(cursor.tx)
    .bind(cursor.id)
    .bind(horizon)
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    let Some(last) = rows.last() else {
        tx.rollback().await?;
        return Ok(Batch::default());
    };
    let (last_tx, last_id) = (last.tx, last.row.event.id);
    let (first_tx, first_id) = (rows[0].tx, rows[0].row.event.id);
    let periods: Vec<Date> = {
        let mut p: Vec<Date> = rows.iter().map(|r| period_of(r.row.event.occurred_at)).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    let mut heads: BTreeMap<Date, Head> =
        sqlx::query!("select period, seq, head, first_id, last_id from audit_chains where period = any($1) for update", &periods)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .map(|r| (r.period, Head { seq: r.seq, head: r.head.try_into().unwrap_or([0xff; 32]), first_id: r.first_id, last_id: r.last_id }))
            .collect();
    let late = time::Duration::try_from(late_limit).unwrap_or(time::Duration::HOUR);
    let Linked { ids, ats, seqs, hashes, refused, max_at } = link(&rows, &mut heads, cursor.max_at, late);
    let updated = sqlx::query(
        "update audit_events e set seq = u.seq, hash = u.hash
         from unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bytea[]) as u(id, at, seq, hash)
         where e.id = u.id and e.occurred_at = u.at and e.seq is null
           and (e.tx, e.id) >= ($5, $6) and (e.tx, e.id) <= ($7, $8)",
    )
    .bind(&ids)
    .bind(&ats)
    .bind(&seqs)
    .bind(&hashes)
    // The batch's range in chain order: the events are found by the chain's index, not by a
    // scan of their whole month.
    .bind(first_tx)
    .bind(first_id)
    .bind(last_tx)
    .bind(last_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated != ids.len() as u64 {
        // Two rows share an (id, occurred_at) or one changed under the snapshot: nothing is kept.
        tx.rollback().await?;
        return Err(sqlx::Error::Protocol(format!("sealing updated {updated} events of {}; nothing was sealed", ids.len())));
    }
    // The transparency log grows in the same transaction, by the same events in the same order.
    super::tlog::append(&mut tx, &log_entries(&ids, &ats, &seqs, &hashes)).await?;
    fail::fail_point!("audit-seal-batch");
    write_heads(&mut tx, &heads).await?;
    sqlx::query!("update audit_seal_cursor set tx = $1, id = $2, max_at = $3, sealed_at = now()", last_tx, last_id, max_at).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(Batch { sealed: ids.len() as u64, refused, more: rows.len() as i64 == limit })
}

/// The sealed events as the transparency log takes them: (id, month, place, hash), in order.
fn log_entries(ids: &[i64], ats: &[OffsetDateTime], seqs: &[i64], hashes: &[Vec<u8>]) -> Vec<(i64, String, i64, Vec<u8>)> {
    ids.iter().zip(ats).zip(seqs).zip(hashes).map(|(((id, at), seq), hash)| (*id, super::month_label(period_of(*at)), *seq, hash.clone())).collect()
}

/// A batch hashed: the places and hashes to write, in the events' order.
struct Linked {
    ids: Vec<i64>,
    ats: Vec<OffsetDateTime>,
    seqs: Vec<i64>,
    hashes: Vec<Vec<u8>>,
    refused: u64,
    max_at: Option<OffsetDateTime>,
}

/// Gives each row the next place in its month's chain (`heads` advance) and its hash. A row that
/// already has a place, or is dated `late` before the latest date sealed so far, is left out.
fn link(rows: &[SealRow], heads: &mut BTreeMap<Date, Head>, mut max_at: Option<OffsetDateTime>, late: time::Duration) -> Linked {
    let (mut ids, mut ats, mut seqs, mut hashes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut linker = Linker::default();
    let mut refused = 0u64;
    for SealRow { row, .. } in rows {
        if row.seq.is_some() {
            // Sealed already though the cursor is behind it: only a hand-made row does this.
            refused += 1;
            tracing::warn!(
                event = row.event.id,
                "audit seal: an event past the cursor already has a place in a chain; left as it is for verification to report"
            );
            continue;
        }
        if max_at.is_some_and(|m: OffsetDateTime| row.event.occurred_at < m - late) {
            refused += 1;
            tracing::warn!(event = row.event.id, "audit seal: an event is dated long before events written before it; not sealed (verification reports it)");
            continue;
        }
        max_at = Some(max_at.map_or(row.event.occurred_at, |m| m.max(row.event.occurred_at)));
        let h = heads.entry(period_of(row.event.occurred_at)).or_insert(Head { seq: 0, head: GENESIS, first_id: None, last_id: None });
        let seq = h.seq + 1;
        let hash = linker.link(&h.head, row, seq);
        *h = Head { seq, head: hash, first_id: h.first_id.or(Some(row.event.id)), last_id: Some(row.event.id) };
        ids.push(row.event.id);
        ats.push(row.event.occurred_at);
        seqs.push(seq);
        hashes.push(hash.to_vec());
    }
    Linked { ids, ats, seqs, hashes, refused, max_at }
}

/// Writes the months' heads (never moving one back).
async fn write_heads(tx: &mut sqlx::PgConnection, heads: &BTreeMap<Date, Head>) -> Result<(), sqlx::Error> {
    for (period, h) in heads {
        sqlx::query!(
            "insert into audit_chains (period, seq, head, first_id, last_id, sealed_at) values ($1, $2, $3, $4, $5, now())
             on conflict (period) do update set seq = excluded.seq, head = excluded.head,
                 first_id = coalesce(audit_chains.first_id, excluded.first_id), last_id = excluded.last_id, sealed_at = now()
             where audit_chains.seq <= excluded.seq",
            period,
            h.seq,
            h.head.as_slice(),
            h.first_id,
            h.last_id
        )
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// Seals until nothing is left or `until` passes (at least one batch). Events still ahead of the
/// horizon (their transaction, or one the snapshot could not place in another database, was in
/// flight) are waited for a little — up to two seconds — before giving up until the next run.
pub async fn seal_all(pool: &PgPool, limit: i64, late_limit: std::time::Duration, until: std::time::Instant) -> Result<Batch, sqlx::Error> {
    let mut total = Batch::default();
    let mut waits = 0;
    loop {
        let b = seal_batch(pool, limit, late_limit).await?;
        total.sealed += b.sealed;
        total.refused += b.refused;
        total.more = b.more;
        if std::time::Instant::now() >= until {
            return Ok(total);
        }
        if !b.more {
            if waits >= 20 || !waiting(pool).await? {
                return Ok(total);
            }
            waits += 1;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// Whether committed events wait past the cursor.
async fn waiting(pool: &PgPool) -> Result<bool, sqlx::Error> {
    // The cursor first: compared with its values, the chain's index finds the first event past
    // it at once (joined to the cursor's row, the planner may scan every event).
    let cursor = sqlx::query!("select tx, id from audit_seal_cursor").fetch_one(pool).await?;
    sqlx::query_scalar!(r#"select exists (select 1 from audit_events where (tx, id) > ($1, $2)) as "waiting!""#, cursor.tx, cursor.id).fetch_one(pool).await
}
