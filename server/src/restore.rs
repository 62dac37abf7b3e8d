//! `ebb doctor --after-restore`: after the database was restored from a backup, redo what was
//! deleted since (the deletion journal in the store), run every job once (what passed its promise
//! since the backup goes again), and check that nothing live was lost: every live share's file,
//! every archived month's object against the ledger.

use app::storage::journal::{self, Deletion};
use app::storage::{BlobError, BlobStore};

use crate::checks::{Report, Status};
use crate::config::Config;

/// The after-restore checks, added to `report`.
pub async fn after_restore(config: &Config, state: &app::state::AppState, report: &mut Report) {
    // The marker (adopted by nothing here: a wrong store fails), the signing and hashing secrets.
    if let Err(e) = crate::check_storage(state, config).await {
        report.push("after restore", Status::Fail, e);
        return;
    }
    let redo = redo_deletions(state).await;
    let redone_ok = redo.is_ok();
    report.result("deletions redone", redo);
    let digests = audit_digests(state).await;
    let digests_ok = digests.is_ok();
    report.result("audit digests", digests);
    if !redone_ok || !digests_ok {
        report.push("jobs re-run", Status::Skipped, "the deletion journal and the audit digests must be in order first");
    } else {
        let mut out = Vec::new();
        match crate::maintenance::run_now(state, &[], true, &mut out).await {
            Ok(()) => report.push("jobs re-run", Status::Ok, "every job ran once: what passed its promise since the backup was removed again"),
            Err(e) => report.push("jobs re-run", Status::Fail, format!("{e}: {}", String::from_utf8_lossy(&out).trim())),
        }
    }
    report.result("live shares", live_shares(state).await);
    report.result("archived months", archived_months(state).await);
}

/// Every journal entry applied to the restored database. Idempotent: a row already gone is
/// skipped, so the doctor can run again.
async fn redo_deletions(state: &app::state::AppState) -> Result<(Status, String), String> {
    let (entries, unreadable) = journal::read_all(&*state.blobs).await.map_err(|e| format!("cannot read the deletion journal: {e}"))?;
    let (erased, purged) = redo(state, &entries).await?;
    note_redone(state, &entries).await?;
    journal::caught_up(&state.pool, &entries).await.map_err(db)?;
    let words = format!("{} journal entries read: {erased} erased or ended row(s) and {purged} purged share(s) were back and are deleted again", entries.len());
    if unreadable.is_empty() {
        Ok((Status::Ok, words))
    } else {
        Ok((Status::Warn, format!("{words}; {} entries could not be read ({})", unreadable.len(), unreadable.join(", "))))
    }
}

/// The `settings` row holding the time of the newest journal entry redone at a start (or by the
/// doctor): the next start reads the journal from an hour before it (an instance's clock may
/// lag another's).
const REDONE_SETTING: &str = "deletion_journal_redone_at";
const REDO_OVERLAP: time::Duration = time::Duration::hours(1);

/// At every start of `ebb serve`, before it listens. A database restored from a backup is
/// refused — detected, not assumed: the store's deletion journal holds entries numbered past the
/// database's counter, or the store holds a signed audit digest of another timeline past the
/// database's last — until `ebb doctor --after-restore` has redone what was deleted since and set
/// those digests aside. Otherwise the journal entries written since the last start are applied
/// again: on a database that saw them nothing is left to do (each is a deletion it committed, or
/// one in flight or cut short, which redoing finishes). Returns (rows erased again, shares purged
/// again).
pub async fn redo_since_last_start(state: &app::state::AppState) -> Result<(u64, u64), String> {
    let (entries, unreadable) = since_last_start(state).await?;
    if !unreadable.is_empty() {
        tracing::warn!(unreadable = unreadable.len(), "deletion-journal entries could not be read; `ebb doctor --after-restore` names them");
    }
    refuse_if_restored(state, &entries, true).await?;
    let done = redo(state, &entries).await?;
    note_redone(state, &entries).await?;
    Ok(done)
}

/// The journal entries written since the last start (from an hour before it, for clocks that
/// differ); all of them on a database that never started.
async fn since_last_start(state: &app::state::AppState) -> Result<(Vec<journal::Entry>, Vec<String>), String> {
    let since: Option<String> =
        sqlx::query_scalar("select value from settings where key = $1").bind(REDONE_SETTING).fetch_optional(&state.pool).await.map_err(db)?;
    let since = since.and_then(|v| time::OffsetDateTime::parse(&v, &time::format_description::well_known::Rfc3339).ok()).map(|at| at - REDO_OVERLAP);
    journal::read_since(&*state.blobs, since).await.map_err(|e| format!("cannot read the deletion journal: {e}"))
}

/// What `ebb serve` refuses: a database behind the deletion journal or behind the store's
/// digests (see [`redo_since_last_start`]). `adopt`: a digest an interrupted run of this very
/// database wrote is recorded (serve), or only looked at (the doctor).
pub async fn refuse_if_restored(state: &app::state::AppState, entries: &[journal::Entry], adopt: bool) -> Result<(), String> {
    const WHAT_TO_DO: &str = "Ebb does not serve it: what was erased, purged or revoked since the backup would be back. \
        Run `ebb doctor --after-restore` (it deletes those again, sets the other timeline's digests aside with a signed statement and checks the files), then start Ebb again";
    if let Some((newest, counter)) = journal::restored(&state.pool, entries).await.map_err(db)? {
        return Err(format!(
            "this database was restored from a backup: the store's deletion journal goes up to entry {newest}, the database has seen {counter}. {WHAT_TO_DO}"
        ));
    }
    if let Err(why) = app::audit::chain::digest::store_ahead(state, adopt).await {
        return Err(format!("this database looks restored from a backup: {why}. {WHAT_TO_DO}"));
    }
    Ok(())
}

/// `ebb doctor` (without `--after-restore`): whether `ebb serve` would refuse this database as a
/// restored one.
pub async fn restore_check(state: &app::state::AppState) -> Result<(Status, String), String> {
    let (entries, _) = since_last_start(state).await?;
    refuse_if_restored(state, &entries, false).await?;
    Ok((Status::Ok, "the database is not behind the store's deletion journal or its signed digests (not a restored backup)".into()))
}

/// Remembers the newest entry redone (never moving back).
async fn note_redone(state: &app::state::AppState, entries: &[journal::Entry]) -> Result<(), String> {
    let Some(newest) = entries.iter().map(|e| e.at).max() else { return Ok(()) };
    let text = newest.format(&time::format_description::well_known::Rfc3339).map_err(|e| e.to_string())?;
    sqlx::query(
        "insert into settings (key, value, updated_at) values ($1, $2, now())
         on conflict (key) do update set value = excluded.value, updated_at = now()
         where settings.value::timestamptz < excluded.value::timestamptz",
    )
    .bind(REDONE_SETTING)
    .bind(text)
    .execute(&state.pool)
    .await
    .map_err(db)?;
    Ok(())
}

/// Applies `entries` again: (rows erased again, shares purged again).
async fn redo(state: &app::state::AppState, entries: &[journal::Entry]) -> Result<(u64, u64), String> {
    let sources = state.domain::<app::kernel::personal::PersonalSources>().clone();
    let (mut erased, mut purged) = (0u64, 0u64);
    // Each erasure's request, with what the journal says it erased: recorded again below when
    // the restored database lacks it.
    let mut requests: std::collections::BTreeMap<i64, (String, time::OffsetDateTime, std::collections::BTreeMap<String, i64>)> = Default::default();
    for entry in entries {
        match &entry.deletion {
            Deletion::Erasure { request, source, hash, ids } => {
                let r = requests.entry(*request).or_insert_with(|| (hash.clone(), entry.at, Default::default()));
                *r.2.entry(source.clone()).or_default() += ids.len() as i64;
                let Some(s) = sources.get(source) else { continue };
                let mut tx = state.pool.begin().await.map_err(db)?;
                let n = s.redo(&mut tx, hash, ids).await.map_err(db)?;
                if n > 0 {
                    // Recorded like the erasure itself: which request, which kind, how many (the
                    // request's own row may be gone with the restore; its id is kept here).
                    let detail = format!("erased again after a restore (deletion journal): {n} {source}");
                    app::kernel::audit::record(
                        &mut tx,
                        &app::kernel::audit::Actor::system(),
                        app::kernel::audit::AuditKind::RequestErased,
                        Some((app::kernel::audit::AuditKind::RequestErased.subject_type(), &request.to_string())),
                        Some(&detail),
                    )
                    .await
                    .map_err(db)?;
                }
                tx.commit().await.map_err(db)?;
                erased += n;
            }
            Deletion::SharePurge { ids, keys } => {
                for (id, key) in ids.iter().zip(keys) {
                    if purge_again(state, *id, key).await? {
                        purged += 1;
                    }
                }
            }
            other => erased += end_again(state, other).await?,
        }
    }
    for (id, (hash, at, counts)) in &requests {
        let mut tx = state.pool.begin().await.map_err(db)?;
        app::requests::db::recreate_erasure(&mut tx, *id, hash, *at, counts).await.map_err(db)?;
        tx.commit().await.map_err(db)?;
    }
    Ok((erased, purged))
}

/// Ends again what an entry says ended (sessions, passkeys, removed admins, revoked shares and file requests,
/// redeemed invites: a redeemed invite the restore made unredeemed again is ended, not redeemed —
/// the admin it made is not in the restored database);
/// returns how many rows it changed (0 on a database that saw the entry's own commit).
async fn end_again(state: &app::state::AppState, deletion: &Deletion) -> Result<u64, String> {
    use app::kernel::audit::AuditKind;
    fn strings<T: ToString>(ids: &[T]) -> Vec<String> {
        ids.iter().map(ToString::to_string).collect()
    }
    // The kind the first time was recorded under, its subjects, and the statement that ends them
    // again (bound, not yet run: one shape whatever the ids' type).
    let (kind, subjects, query) = match deletion {
        Deletion::SessionEnd { handles } => (
            AuditKind::SessionRevoke,
            strings(handles),
            sqlx::query("delete from tower_sessions.session where id in (select session_id from admin_sessions where handle = any($1))").bind(handles),
        ),
        Deletion::PasskeyRemove { ids } => (AuditKind::PasskeyRemove, strings(ids), sqlx::query("delete from passkeys where id = any($1)").bind(ids)),
        Deletion::ShareRevoke { ids } => (
            AuditKind::ShareRevoke,
            strings(ids),
            sqlx::query(
                "update shares set expires_at = least(expires_at, clock_timestamp()), revoked_at = clock_timestamp()
                  where id = any($1) and status <> 'purged' and revoked_at is null",
            )
            .bind(ids),
        ),
        Deletion::FileRequestEnd { ids } => (
            AuditKind::FileRequestRevoke,
            strings(ids),
            sqlx::query("update file_requests set expires_at = clock_timestamp() where id = any($1) and status = 'open' and expires_at > clock_timestamp()")
                .bind(ids),
        ),
        Deletion::InviteRedeem { ids } => (
            AuditKind::InviteRedeem,
            strings(ids),
            sqlx::query("update admin_invites set expires_at = least(expires_at, clock_timestamp()) where id = any($1) and redeemed_at is null and expires_at > clock_timestamp()")
                .bind(ids),
        ),
        // Their passkeys, sessions and challenges go with them (on delete cascade).
        Deletion::AdminRemove { ids } => (AuditKind::AdminRemove, strings(ids), sqlx::query("delete from admins where id = any($1)").bind(ids)),
        Deletion::Erasure { .. } | Deletion::SharePurge { .. } => return Ok(0),
    };
    let mut tx = state.pool.begin().await.map_err(db)?;
    let n = query.execute(&mut *tx).await.map_err(db)?.rows_affected();
    if n > 0 {
        // Each redo recorded, as the first time was (by the system now).
        for subject in &subjects {
            app::kernel::audit::record(
                &mut tx,
                &app::kernel::audit::Actor::system(),
                kind,
                Some((kind.subject_type(), subject)),
                Some("ended again after a restore (deletion journal)"),
            )
            .await
            .map_err(db)?;
        }
    }
    tx.commit().await.map_err(db)?;
    Ok(n)
}

/// A share the journal says was purged: its file deleted (again) and its row marked purged.
async fn purge_again(state: &app::state::AppState, id: i64, key: &str) -> Result<bool, String> {
    let live: Option<String> =
        sqlx::query_scalar("select blob_key from shares where id = $1 and status <> 'purged'").bind(id).fetch_optional(&state.pool).await.map_err(db)?;
    match live {
        Some(k) if k == key => {}
        _ => return Ok(false),
    }
    // A file already absent counts as deleted (the store's marker proved it is the real store).
    state.blobs.delete(key).await.map_err(|e: BlobError| format!("cannot delete share {id}'s file again: {e}"))?;
    let mut tx = state.pool.begin().await.map_err(db)?;
    sqlx::query(
        "update shares set status = 'purged', purged_at = coalesce(purged_at, now()), file_name = '-', note = null where id = $1 and status <> 'purged'",
    )
    .bind(id)
    .execute(&mut *tx)
    .await
    .map_err(db)?;
    app::kernel::audit::record(
        &mut tx,
        &app::kernel::audit::Actor::system(),
        app::kernel::audit::AuditKind::SharePurge,
        Some(("share", &id.to_string())),
        Some("purged again after a restore"),
    )
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(true)
}

/// The store's digests written after the backup: kept as superseded, the restore recorded.
async fn audit_digests(state: &app::state::AppState) -> Result<(Status, String), String> {
    match app::audit::chain::restore::supersede_after_restore(state, &app::kernel::audit::Actor::system()).await? {
        None => Ok((Status::Ok, "the store's signed digests end where the database's do".into())),
        Some((first, last)) => Ok((
            Status::Warn,
            format!(
                "digests {first} to {last} were signed after the backup: the audit events they covered since the backup are lost with it; \
                 they are kept as superseded by a signed restore statement (audit-digests/restore-{first:012}.json, which every verifier reads and reports) \
                 and the restore is recorded in the audit log (the next digest follows them)"
            ),
        )),
    }
}

/// Every share that can still be downloaded (or received) has its file.
async fn live_shares(state: &app::state::AppState) -> Result<(Status, String), String> {
    let rows: Vec<(i64, String)> =
        sqlx::query_as("select id, blob_key from shares where status <> 'purged' order by id").fetch_all(&state.pool).await.map_err(db)?;
    let mut missing = Vec::new();
    for (id, key) in &rows {
        if !state.blobs.exists(key).await.map_err(|e| format!("cannot check share {id}'s file: {e}"))? {
            missing.push(id.to_string());
        }
    }
    if missing.is_empty() {
        Ok((Status::Ok, format!("all {} live share(s) have their file", rows.len())))
    } else {
        Err(format!(
            "{} of {} live share(s) have no file (ids {}): restore the storage's shares/ folder from the same backup, or delete these shares",
            missing.len(),
            rows.len(),
            missing.join(", ")
        ))
    }
}

/// Every verified month of the audit archive: its object, with the size and CRC32C the ledger
/// recorded.
async fn archived_months(state: &app::state::AppState) -> Result<(Status, String), String> {
    let rows: Vec<(time::Date, String, Option<i64>, Option<i64>)> =
        sqlx::query_as("select period, object_key, bytes, crc32c from audit_partition_archives where status = 'verified' order by period")
            .fetch_all(&state.pool)
            .await
            .map_err(db)?;
    let mut bad = Vec::new();
    for (period, key, bytes, crc) in &rows {
        let head = state.blobs.head(key).await.map_err(|e| format!("cannot check {key}: {e}"))?;
        let month = format!("{}-{:02}", period.year(), period.month() as u8);
        match head {
            None => bad.push(format!("{month}: object missing")),
            Some(h) if Some(h.size as i64) != *bytes => bad.push(format!("{month}: {} bytes, the ledger says {}", h.size, bytes.unwrap_or(0))),
            Some(h) if h.crc32c.is_some_and(|c| Some(i64::from(c)) != *crc) => bad.push(format!("{month}: CRC32C differs from the ledger's")),
            Some(_) => {}
        }
    }
    if bad.is_empty() {
        Ok((Status::Ok, format!("all {} archived month(s) match the ledger (size and CRC32C)", rows.len())))
    } else {
        Err(format!("{} archived month(s) do not match the ledger: {}; restore audit-archive/ from the storage backup", bad.len(), bad.join("; ")))
    }
}

fn db(e: sqlx::Error) -> String {
    format!("database error: {e}")
}
