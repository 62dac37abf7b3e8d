//! The deletion journal: what erasures and purges removed, by id, written to the store *before*
//! the deletion commits. The database is backed up and restored as a whole; a restore brings
//! back everything deleted since the backup was taken. The journal lives in the store (which a
//! restore does not roll back: see docs/operator.md, Back up and restore), so `ebb doctor --after-restore`
//! can redo each entry on the restored database. Written before the commit, an entry may name a
//! deletion that then failed and was retried: redoing it removes what was to be removed anyway.
//!
//! Entries hold ids and keyed address hashes only: no names, addresses or messages.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{BlobError, BlobStore, Namespace};

/// One recorded deletion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Deletion {
    /// A batch of an erasure: the rows `source` (a personal-data kind) erased for the address
    /// whose keyed hash is `hash`, in data request `request`.
    Erasure { request: i64, source: String, hash: String, ids: Vec<String> },
    /// Shares whose files the GC deletes (ids and their objects).
    SharePurge { ids: Vec<i64>, keys: Vec<String> },
    /// Admin sessions ended (signed out or revoked), by their handles (never the session id,
    /// which is the cookie's secret).
    SessionEnd { handles: Vec<uuid::Uuid> },
    /// Passkeys removed.
    PasskeyRemove { ids: Vec<uuid::Uuid> },
    /// Shares revoked before their time.
    ShareRevoke { ids: Vec<i64> },
    /// File requests that ended early: revoked, or used by the upload they were for.
    FileRequestEnd { ids: Vec<i64> },
    /// Invites redeemed: a restore from before would make their links work again.
    InviteRedeem { ids: Vec<uuid::Uuid> },
    /// Admins removed (with their passkeys and sessions): a restore from before would let them
    /// sign in again.
    AdminRemove { ids: Vec<uuid::Uuid> },
}

/// A journal entry as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The entry's number from the database's `deletion_journal_seq`, taken before the entry was
    /// written (absent in entries written before entries were numbered). An entry
    /// numbered past the database's counter was written after the database's backup: see
    /// [`restored`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<i64>,
    #[serde(flatten)]
    pub deletion: Deletion,
}

/// `<YYYYMMDDhhmmss>-<32 hex>.json`: listing order is time order.
pub(super) fn is_entry_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else { return false };
    let b = stem.as_bytes();
    b.len() == 14 + 1 + 32 && b[14] == b'-' && b[..14].iter().all(u8::is_ascii_digit) && b[15..].iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// `deletions/<YYYYMMDDhhmmss>`: every entry written before `at`'s second sorts below it, every
/// one written in or after it above.
fn second_prefix(at: OffsetDateTime) -> String {
    let key = entry_key(at);
    key[..Namespace::Deletions.prefix().len() + 14].to_owned()
}

fn entry_key(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{}{:04}{:02}{:02}{:02}{:02}{:02}-{}.json",
        Namespace::Deletions.prefix(),
        at.year(),
        at.month() as u8,
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Writes one entry (before the deletion it names commits), numbered from the database's
/// `deletion_journal_seq` on the caller's connection (its transaction: no second connection is
/// held meanwhile). A sequence is not rolled back with the transaction, so the database is never
/// behind an entry of its own timeline, whatever becomes of the deletion — only a restore puts it
/// behind. (An aborted deletion followed at once by a power loss, before PostgreSQL flushed the
/// sequence's step, can leave it behind too: `ebb serve` then asks for the doctor, which redoes
/// the entry.)
pub async fn record<'c>(conn: impl sqlx::PgExecutor<'c>, store: &dyn BlobStore, deletion: Deletion) -> Result<(), BlobError> {
    let number: i64 = sqlx::query_scalar("select nextval('deletion_journal_seq')")
        .fetch_one(conn)
        .await
        .map_err(|e| BlobError::Service(format!("deletion journal number: {e}")))?;
    let entry = Entry { at: OffsetDateTime::now_utc(), number: Some(number), deletion };
    let body = serde_json::to_vec(&entry).map_err(|e| BlobError::Service(format!("journal entry: {e}")))?;
    store.put(&entry_key(entry.at), Bytes::from(body)).await.map(|_| ())
}

/// The newest entry number the database has handed out (0: none).
async fn numbered(pool: &sqlx::PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("select case when is_called then last_value else 0 end from deletion_journal_seq").fetch_one(pool).await
}

/// Whether the database is behind the journal — restored from a backup taken before entries the
/// store holds: `Some((newest entry's number, the database's newest))`. Entries from before
/// entries were numbered carry no number and never count.
pub async fn restored(pool: &sqlx::PgPool, entries: &[Entry]) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let Some(newest) = entries.iter().filter_map(|e| e.number).max() else { return Ok(None) };
    let counter = numbered(pool).await?;
    Ok((newest > counter).then_some((newest, counter)))
}

/// After the entries were redone on a restored database (`ebb doctor --after-restore`): its
/// sequence moves up to the newest of them, so `ebb serve` starts again (never moving back).
pub async fn caught_up(pool: &sqlx::PgPool, entries: &[Entry]) -> Result<(), sqlx::Error> {
    let Some(newest) = entries.iter().filter_map(|e| e.number).max() else { return Ok(()) };
    if numbered(pool).await? < newest {
        sqlx::query("select setval('deletion_journal_seq', $1)").bind(newest).execute(pool).await?;
    }
    Ok(())
}

/// [`record`] for a request handler, before the commit of what it records: a store without its
/// marker is "storage unavailable" (503, try again), any other failure an internal error; either
/// way the caller does not commit.
pub async fn record_in_request<'c>(conn: impl sqlx::PgExecutor<'c>, store: &dyn BlobStore, deletion: Deletion) -> Result<(), common::error::AppError> {
    match record(conn, store, deletion).await {
        Ok(()) => Ok(()),
        Err(BlobError::MarkerMissing) => Err(common::error::AppError::StorageUnavailable),
        Err(e) => Err(common::error::AppError::internal("cannot write the deletion journal", e)),
    }
}

/// Every entry, oldest first; `(entries, unreadable keys)`.
pub async fn read_all(store: &dyn BlobStore) -> Result<(Vec<Entry>, Vec<String>), BlobError> {
    read_since(store, None).await
}

/// The entries written at or after `since` (all when `None`), oldest first; `(entries,
/// unreadable keys)`.
pub async fn read_since(store: &dyn BlobStore, since: Option<OffsetDateTime>) -> Result<(Vec<Entry>, Vec<String>), BlobError> {
    let mut entries = Vec::new();
    let mut unreadable = Vec::new();
    // Names sort by time: the listing starts after the name of `since`'s second, before any
    // entry written in that second.
    let mut after: Option<String> = since.map(second_prefix);
    loop {
        let page = store.list(Namespace::Deletions, after.as_deref(), 1000).await?;
        for o in &page.objects {
            if let Some(bytes) = store.get(&o.key).await? {
                match serde_json::from_slice::<Entry>(&bytes) {
                    Ok(e) => entries.push(e),
                    Err(_) => unreadable.push(o.key.clone()),
                }
            }
        }
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    Ok((entries, unreadable))
}

/// How long entries are kept: a restore of a backup older than this is not redone (docs/operator.md's
/// backup section says so; keep backups for less, or restore within it).
pub const KEEP_DAYS: i64 = 400;

/// Deletes up to `limit` entries written before `before`, oldest first. Returns how many went,
/// and whether older entries are left for the next call.
pub async fn forget_before(store: &dyn BlobStore, before: OffsetDateTime, limit: usize) -> Result<(u64, bool), BlobError> {
    // Entry names sort by time: every name below the cut-off's own name is older.
    let cutoff = second_prefix(before);
    let cutoff = cutoff.as_str();
    let page = store.list(Namespace::Deletions, None, limit.max(1)).await?;
    let mut deleted = 0;
    for o in page.objects.iter().filter(|o| o.key.as_str() < cutoff) {
        store.delete(&o.key).await?;
        deleted += 1;
    }
    let all_old = page.objects.last().is_some_and(|o| o.key.as_str() < cutoff);
    Ok((deleted, all_old && page.next.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_sort_by_time_and_are_valid_keys() {
        let a = entry_key(time::macros::datetime!(2026-12-04 09:05:07 UTC));
        let b = entry_key(time::macros::datetime!(2026-12-04 10:00:00 UTC));
        assert!(a.starts_with("deletions/20261204090507-"), "{a}");
        assert!(a < b);
        assert_eq!(super::super::check_key(&a).unwrap(), Namespace::Deletions);
        assert!(super::super::check_key("deletions/../x.json").is_err());
        assert!(super::super::check_key("deletions/2026120409050-x.json").is_err());
    }

    #[test]
    fn entries_round_trip() {
        let e = Entry {
            at: time::macros::datetime!(2026-12-04 09:05:07 UTC),
            number: Some(7),
            deletion: Deletion::SharePurge { ids: vec![1, 2], keys: vec!["shares/a".into(), "shares/b".into()] },
        };
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains(r#""kind":"share_purge""#) && text.contains(r#""number":7"#), "{text}");
        assert_eq!(serde_json::from_str::<Entry>(&text).unwrap(), e);
        // An entry written before entries were numbered still reads.
        let old = r#"{"at":"2026-12-04T09:05:07Z","kind":"passkey_remove","ids":[]}"#;
        assert_eq!(serde_json::from_str::<Entry>(old).unwrap().number, None);
    }
}
