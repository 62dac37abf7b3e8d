//! Verification: the digests in the store (signatures, numbering, back-links), each month's chain
//! in the database, and — with `archive` — every archived month's object, all against each other.
//! The first break of each month is named (event id, month, digest); the report lists them in
//! order, the first one first.
//!
//! Offline ([`offline`]) needs only the blob store and the public keys: the digests and the
//! archived objects are checked without the database.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Write;

use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use sqlx::PgPool;

use super::digest::{self, ArchivedObject};
use super::encode::{Fields, Linker, GENESIS};
use super::keys::PublicKey;
use super::{month_label, ChainRow};
use kernel::storage::{BlobError, BlobStore, Namespace};

/// One break, as precisely as it can be named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The first event that does not verify (or the first one after a gap).
    pub event: Option<i64>,
    /// `YYYY-MM`.
    pub month: Option<String>,
    /// The digest whose record disagrees (or that is missing or forged).
    pub digest: Option<i64>,
    /// Where: `database`, `archive` or `digests`.
    pub source: String,
    /// What is wrong, in a sentence.
    pub what: String,
}

impl Problem {
    /// "event 123, month 2026-12, digest 7": the place, for the alert and the CLI.
    pub fn place(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = self.event {
            parts.push(format!("event {e}"));
        }
        if let Some(m) = &self.month {
            parts.push(format!("month {m}"));
        }
        if let Some(d) = self.digest {
            parts.push(format!("digest {d}"));
        }
        if parts.is_empty() {
            parts.push(self.source.clone());
        }
        format!("{} ({})", parts.join(", "), self.source)
    }
}

/// What a verification checked and found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Events whose hash was recomputed (database and archive).
    pub events: u64,
    /// Months checked in the database.
    pub months: u64,
    /// Archived objects checked.
    pub archived: u64,
    /// Digests whose signature and back-link were checked.
    pub digests: u64,
    /// Events not sealed yet (newer than the last sealing; not a problem).
    pub pending: u64,
    pub problems: Vec<Problem>,
    /// Not breaks, but an auditor must read them: digests superseded by a signed restore
    /// statement (events after a backup were lost).
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        let checked = format!(
            "{} events in {} months, {} archived months and {} digests checked; {} events wait for sealing",
            self.events, self.months, self.archived, self.digests, self.pending
        );
        let checked = match self.warnings.len() {
            0 => checked,
            n => format!("{checked}; {n} warning(s): {}", self.warnings.join("; ")),
        };
        match self.problems.first() {
            None => format!("the audit trail verifies: {checked}"),
            Some(p) => format!("the audit trail does NOT verify — first break at {}: {}; {checked}", p.place(), p.what),
        }
    }
}

/// What the digests say about one month, in digest order.
#[derive(Debug, Clone, Default)]
pub struct MonthRecord {
    /// (digest number, events, head hex): every point a digest signed.
    pub checkpoints: Vec<(i64, i64, String)>,
    /// The latest archived object a digest recorded, with its digest number, events and head.
    pub archived: Option<(i64, ArchivedObject, i64, String)>,
}

/// The digests read and checked.
#[derive(Debug, Clone, Default)]
pub struct Digests {
    pub months: BTreeMap<String, MonthRecord>,
    /// Number → SHA-256 of each digest found.
    pub found: BTreeMap<i64, [u8; 32]>,
    /// Digests superseded by a signed restore statement.
    pub superseded: std::collections::BTreeSet<i64>,
    /// The public keys the store has published for over a day (`key-*.json`): digests were due.
    pub store_keys: usize,
    pub problems: Vec<Problem>,
    pub warnings: Vec<String>,
}

fn digest_problem(digest: i64, what: String) -> Problem {
    Problem { event: None, month: None, digest: Some(digest), source: "digests".into(), what }
}

/// Every key in namespace `ns` of the store.
async fn list_all(store: &dyn BlobStore, ns: Namespace) -> Result<Vec<String>, BlobError> {
    Ok(list_objects(store, ns).await?.into_iter().map(|o| o.key).collect())
}

/// Every object in namespace `ns` of the store.
async fn list_objects(store: &dyn BlobStore, ns: Namespace) -> Result<Vec<kernel::storage::ObjectInfo>, BlobError> {
    let mut keys = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.list(ns, after.as_deref(), 1000).await?;
        keys.extend(page.objects);
        match page.next {
            Some(n) => after = Some(n),
            None => return Ok(keys),
        }
    }
}

/// The public keys the store publishes (`audit-digests/key-*.json`).
pub async fn store_keys(store: &dyn BlobStore) -> Result<Vec<PublicKey>, BlobError> {
    let mut keys = Vec::new();
    for key in list_all(store, Namespace::AuditDigests).await?.into_iter().filter(|k| k.contains("/key-")) {
        if let Some(bytes) = store.get(&key).await? {
            if let Ok(k) = serde_json::from_slice::<PublicKey>(&bytes) {
                keys.push(k);
            }
        }
    }
    Ok(keys)
}

/// Reads and checks every digest in the store: signature by a trusted key, numbers without gaps
/// from 1, each one's back-link to the previous one's bytes. Digests a signed restore statement
/// supersedes (written after the backup a database was restored from; `ebb doctor
/// --after-restore`) are checked the same way and listed as warnings; of what they recorded, only
/// a month's chain up to its restored length is compared (the rest was lost with the restore).
pub async fn digests(store: &dyn BlobStore, keys: &[PublicKey]) -> Result<Digests, BlobError> {
    let mut out = Digests::default();
    let objects = list_objects(store, Namespace::AuditDigests).await?;
    // A key is published when it is first used; a day later, its digests are due for sure.
    let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    out.store_keys = objects.iter().filter(|o| o.key.contains("/key-") && o.modified < day_ago).count();
    let all: Vec<String> = objects.into_iter().map(|o| o.key).collect();
    let statements = read_statements(store, &all, keys, &mut out).await?;
    let superseded = super::statement::superseded_by(&statements);
    let mut numbered: Vec<(i64, String)> =
        all.into_iter().filter_map(|k| k.strip_prefix("audit-digests/")?.strip_suffix(".json")?.parse::<i64>().ok().map(|n| (n, k))).collect();
    numbered.sort();
    let mut expected = 1;
    let mut previous: Option<[u8; 32]> = None;
    for (n, key) in numbered {
        if n != expected {
            out.problems.push(digest_problem(
                expected,
                format!("digests {expected} to {} are missing from the store (digest {n} follows digest {})", n - 1, expected - 1),
            ));
        }
        expected = n + 1;
        let Some(bytes) = store.get(&key).await? else { continue };
        let checked = match digest::check(&bytes, keys) {
            Ok(c) => c,
            Err(why) => {
                out.problems.push(digest_problem(n, format!("digest {n} cannot be trusted: {why}")));
                previous = Some(Sha256::digest(&bytes).into());
                continue;
            }
        };
        if checked.body.number != n {
            out.problems.push(digest_problem(n, format!("the object of digest {n} says it is digest {}", checked.body.number)));
        }
        let back = checked.body.previous.as_deref();
        let want = if n == 1 { None } else { previous.map(hex::encode) };
        if n > 1 && back != want.as_deref() {
            out.problems.push(digest_problem(
                n,
                format!("digest {n}'s back-link does not match digest {}'s bytes: the digest before it was replaced or removed", n - 1),
            ));
        }
        previous = Some(checked.sha256);
        out.found.insert(n, checked.sha256);
        let restored = superseded.get(&n);
        if restored.is_some() {
            out.superseded.insert(n);
        }
        for m in checked.body.months {
            // Superseded: only what the restored database still holds is compared.
            if restored.is_some_and(|st| m.count > st.restored(&m.month)) {
                continue;
            }
            let rec = out.months.entry(m.month.clone()).or_default();
            rec.checkpoints.push((n, m.count, m.head.clone()));
            if let Some(a) = m.archived {
                rec.archived = Some((n, a, m.count, m.head));
            }
        }
    }
    statements_follow(&statements, &mut out);
    Ok(out)
}

/// The signed restore statements in the store; one that cannot be trusted is a problem.
async fn read_statements(store: &dyn BlobStore, all: &[String], keys: &[PublicKey], out: &mut Digests) -> Result<Vec<super::statement::Statement>, BlobError> {
    let mut statements = Vec::new();
    for key in all.iter().filter(|k| k.contains("/restore-")) {
        let Some(bytes) = store.get(key).await? else { continue };
        match super::statement::check_statement(key, &bytes, keys) {
            Ok(st) => statements.push(st),
            Err(why) => out.problems.push(Problem {
                event: None,
                month: None,
                digest: None,
                source: "digests".into(),
                what: format!("the restore statement {key} cannot be trusted: {why}"),
            }),
        }
    }
    Ok(statements)
}

/// Each restore statement hangs on the digest before the ones it supersedes; each is a warning.
fn statements_follow(statements: &[super::statement::Statement], out: &mut Digests) {
    for st in statements {
        let follows = if st.first == 1 { None } else { out.found.get(&(st.first - 1)).map(hex::encode) };
        if st.first > 1 && follows.as_deref() != st.previous.as_deref() {
            out.problems.push(digest_problem(
                st.first,
                format!("the restore statement for digests {} to {} does not follow digest {} (its back-link differs)", st.first, st.last, st.first - 1),
            ));
        }
        out.warnings.push(format!(
            "digests {} to {} are superseded: the database was restored from a backup on {} (restore statement signed by key {}); events recorded after the backup were lost",
            st.first, st.last, st.created_at, st.key_id
        ));
    }
}

/// Zero digests is a pass only where none was ever due: `signs` names what shows that digests
/// were written (a published key, an archived month, events sealed long ago).
fn no_digests(found: &Digests, signs: &[String], report: &mut Report) {
    if found.found.is_empty() && !signs.is_empty() {
        report.problems.push(Problem {
            event: None,
            month: None,
            digest: Some(1),
            source: "digests".into(),
            what: format!("no digest is in the store, but digests were written ({}): they were deleted", signs.join(", ")),
        });
    }
}

/// Walks one month's chain, event by event in chain order, and names its first break.
pub struct Walker<'a> {
    month: String,
    source: &'static str,
    expected: i64,
    prev: [u8; 32],
    last_id: Option<i64>,
    checkpoints: &'a [(i64, i64, String)],
    /// The checkpoints' indexes by the chain length they record, and the next one to reach: each
    /// event looks at the checkpoints of its own place only (a month has hundreds of digests).
    by_count: Vec<usize>,
    next_checkpoint: usize,
    pub linker: Linker,
    pub problem: Option<Problem>,
    pub events: u64,
}

impl<'a> Walker<'a> {
    pub fn new(month: &str, source: &'static str, checkpoints: &'a [(i64, i64, String)]) -> Self {
        let mut by_count: Vec<usize> = (0..checkpoints.len()).collect();
        by_count.sort_by_key(|&i| checkpoints[i].1);
        Walker {
            month: month.into(),
            source,
            expected: 1,
            prev: GENESIS,
            last_id: None,
            checkpoints,
            by_count,
            next_checkpoint: 0,
            linker: Linker::default(),
            problem: None,
            events: 0,
        }
    }

    fn fail(&mut self, event: Option<i64>, digest: Option<i64>, what: String) {
        if self.problem.is_none() {
            self.problem = Some(Problem { event, month: Some(self.month.clone()), digest, source: self.source.into(), what });
        }
    }

    /// Where the walk is, for a problem's text: after the last good event, or at the start.
    fn after(&self) -> String {
        self.last_id.map_or_else(|| "at the month's start".to_string(), |l| format!("after event {l}"))
    }

    /// The next event: its id, place and stored hash; `link` computes its hash from a previous one.
    /// False once the chain is broken (the rest of the month is not checked).
    pub fn feed(&mut self, id: i64, seq: Option<i64>, stored: Option<&[u8]>, link: impl FnOnce(&mut Linker, &[u8; 32], i64) -> [u8; 32]) -> bool {
        if self.problem.is_some() {
            return false;
        }
        let Some(seq) = seq else {
            let what = format!("event {id} has no place in the chain ({})", self.after());
            self.fail(Some(id), None, what);
            return false;
        };
        if seq != self.expected {
            let after = self.after();
            let what = if seq > self.expected {
                format!("{} event(s) of the chain are missing {after}, before event {id} (places {} to {})", seq - self.expected, self.expected, seq - 1)
            } else {
                format!("event {id} claims place {seq}, which is taken ({after}): an event was inserted or moved")
            };
            self.fail(Some(id), None, what);
            return false;
        }
        let hash = link(&mut self.linker, &self.prev, seq);
        if stored != Some(hash.as_slice()) {
            let what = format!("event {id} does not match its hash ({}): it was changed, inserted or moved after it was sealed", self.after());
            self.fail(Some(id), None, what);
            return false;
        }
        self.events += 1;
        let checkpoints = self.checkpoints;
        while let Some(&i) = self.by_count.get(self.next_checkpoint) {
            let (n, count, head) = &checkpoints[i];
            if *count > seq {
                break;
            }
            self.next_checkpoint += 1;
            if *count == seq && *head != hex::encode(hash) {
                self.fail(
                    Some(id),
                    Some(*n),
                    format!("the chain up to event {id} ({count} events) is not the one digest {n} signed: it was rebuilt after a change"),
                );
                return false;
            }
        }
        self.prev = hash;
        self.last_id = Some(id);
        self.expected += 1;
        true
    }

    /// The chain's length and head.
    pub fn head(&self) -> (i64, [u8; 32]) {
        (self.expected - 1, self.prev)
    }

    /// After the last event: the chain must be as long as every record of it says.
    pub fn finish(mut self, recorded: &[(Option<i64>, i64, &str)]) -> (u64, Option<Problem>) {
        if self.problem.is_none() {
            let (count, _) = self.head();
            let last = self.last_id.map_or_else(|| "none".to_string(), |l| l.to_string());
            if let Some((digest, n, by)) = recorded.iter().filter(|(_, n, _)| *n > count).max_by_key(|(d, n, _)| (*n, d.is_some())) {
                self.fail(
                    None,
                    *digest,
                    format!("{by} records {n} events in the chain but only {count} are here (the last is event {last}): the newest were removed"),
                );
            }
        }
        (self.events, self.problem)
    }
}

/// Verifies the database: the digests, each month's chain (attached and detached months; archived
/// ones with `archive`), events sealing skipped, and the digests recorded against the store.
/// The months checked are every month anything knows of — a signed digest, `audit_chains`, a
/// partition with events, the archive ledger — so deleting a month's records hides nothing.
pub async fn in_database(pool: &PgPool, store: &dyn BlobStore, archive: bool) -> Result<Report, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let storage = |e: BlobError| format!("storage: {e}");
    let keys = super::keys::published(pool).await.map_err(db)?;
    // The database's record first: a digest is in the store before it is recorded, so one
    // written while this runs is never taken for one missing from the store.
    let recorded = sqlx::query!("select number, sha256, superseded_at is not null as \"superseded!\" from audit_digests order by number")
        .fetch_all(pool)
        .await
        .map_err(db)?;
    let found = digests(store, &keys).await.map_err(storage)?;
    let mut report = Report { digests: found.found.len() as u64, problems: found.problems.clone(), warnings: found.warnings.clone(), ..Report::default() };
    // The newest digests: recorded here, so their removal from the store is seen too.
    for r in recorded {
        match found.found.get(&r.number) {
            None => report.problems.push(digest_problem(r.number, format!("digest {} was written but is missing from the store", r.number))),
            Some(sha) if sha.as_slice() != r.sha256.as_slice() => {
                report.problems.push(digest_problem(r.number, format!("digest {} in the store is not the one that was written", r.number)))
            }
            _ => {}
        }
        if r.superseded && !found.superseded.contains(&r.number) {
            report.problems.push(digest_problem(
                r.number,
                format!("digest {} is marked superseded in the database, but no signed restore statement supersedes it: the mark was set by hand", r.number),
            ));
        }
    }
    let signs = signs_of_digests(pool, &found).await.map_err(db)?;
    no_digests(&found, &signs, &mut report);
    unsealable_events(pool, &mut report).await.map_err(db)?;
    // The transparency log, against its newest signed checkpoint; trusted, it names the event a
    // rebuilt chain changed.
    let logged = match super::tlog::check_entries(pool, &keys).await.map_err(db)? {
        Ok(size) => size,
        Err(what) => {
            report.problems.push(Problem { event: None, month: None, digest: None, source: "log".into(), what });
            0
        }
    };
    months_in_database(pool, store, &found, archive, logged, &mut report).await?;
    if archive {
        archived_objects(store, &found, &mut report).await.map_err(storage)?;
    }
    Ok(report)
}

/// What shows that digests were written here (for [`no_digests`]): a key registered over a day
/// ago, a published key in the store, an archived month, an event sealed over a day ago.
async fn signs_of_digests(pool: &PgPool, found: &Digests) -> Result<Vec<String>, sqlx::Error> {
    let mut signs = Vec::new();
    let r = sqlx::query!(
        r#"select exists (select 1 from audit_signing_keys where created_at < now() - interval '1 day') as "old_key!",
                  exists (select 1 from audit_partition_archives where sha256 is not null) as "archived!",
                  (select min(first_id) from audit_chains where sealed_at < now() - interval '1 day') as old_event"#
    )
    .fetch_one(pool)
    .await?;
    if r.old_key {
        signs.push("a signing key registered over a day ago".to_string());
    }
    if found.store_keys > 0 {
        signs.push(format!("{} public key(s) published in the store over a day ago", found.store_keys));
    }
    if r.archived {
        signs.push("months were archived".to_string());
    }
    if let Some(id) = r.old_event {
        signs.push(format!("event {id} was sealed over a day ago"));
    }
    Ok(signs)
}

/// Events that can never be sealed, named: skipped by sealing (inserted behind the cursor, or
/// dated long before the events around them), or carrying a transaction id no transaction has
/// had yet (set by hand: it would wait for sealing for ever). The others wait (`pending`).
async fn unsealable_events(pool: &PgPool, report: &mut Report) -> Result<(), sqlx::Error> {
    let cursor = sqlx::query!("select tx, id from audit_seal_cursor").fetch_one(pool).await?;
    let skipped =
        sqlx::query!("select id, occurred_at from audit_events where seq is null and (tx, id) <= ($1, $2) order by tx, id limit 20", cursor.tx, cursor.id)
            .fetch_all(pool)
            .await?;
    for r in skipped {
        report.problems.push(Problem {
            event: Some(r.id),
            month: Some(month_label(super::period_of(r.occurred_at))),
            digest: None,
            source: "database".into(),
            what: format!("event {} is not in any chain though sealing passed it: it was inserted afterwards, or dated long before the events around it", r.id),
        });
    }
    // One statement each: the rows read and the snapshot whose next transaction id they are
    // compared with are the same (a transaction that commits between two statements is not
    // "from nowhere").
    let forged = sqlx::query!(
        r#"select id, occurred_at, tx, pg_snapshot_xmax(pg_current_snapshot())::text::bigint as "next!"
           from audit_events where seq is null and tx >= pg_snapshot_xmax(pg_current_snapshot())::text::bigint order by tx, id limit 20"#
    )
    .fetch_all(pool)
    .await?;
    for r in forged {
        let next = r.next;
        report.problems.push(Problem {
            event: Some(r.id),
            month: Some(month_label(super::period_of(r.occurred_at))),
            digest: None,
            source: "database".into(),
            what: format!(
                "event {} carries transaction id {}, which no transaction has had yet (the next is {next}): it was inserted by hand and can never be sealed",
                r.id, r.tx
            ),
        });
    }
    report.pending = sqlx::query_scalar!(
        r#"select count(*) as "n!" from audit_events
           where seq is null and (tx, id) > ($1, $2) and tx < pg_snapshot_xmax(pg_current_snapshot())::text::bigint"#,
        cursor.tx,
        cursor.id
    )
    .fetch_one(pool)
    .await? as u64;
    Ok(())
}

/// A month as the database's records know it.
#[derive(Default)]
struct MonthState {
    /// `audit_chains`: length and head.
    chain: Option<(i64, Vec<u8>)>,
    /// The archive ledger says it was archived and dropped.
    dropped: bool,
    /// Detached for the archive: its table in `audit_pending`.
    pending_table: Option<String>,
    /// Sealed events are in the database (attached or detached).
    has_events: bool,
}

async fn months_in_database(pool: &PgPool, store: &dyn BlobStore, found: &Digests, archive: bool, logged: i64, report: &mut Report) -> Result<(), String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let months = month_states(pool, found).await.map_err(db)?;
    for (label, m) in months {
        let Some(period) = super::parse_period(&label) else { continue };
        let empty = MonthRecord::default();
        let rec = found.months.get(&label).unwrap_or(&empty);
        let problem = |digest: Option<i64>, what: String| Problem { event: None, month: Some(label.clone()), digest, source: "database".into(), what };
        if m.dropped {
            if rec.archived.is_none() {
                report
                    .problems
                    .push(problem(None, format!("the archive ledger says {label} was archived and dropped, but no signed digest records its archived object")));
            } else if !archive {
                let key = kernel::storage::archive_key(period.year(), period.month() as u8);
                if !store.exists(&key).await.map_err(|e| format!("storage: {e}"))? {
                    let n = rec.archived.as_ref().map(|a| a.0);
                    report.problems.push(problem(n, format!("{label} was archived and dropped, but its object {key} is missing from the store")));
                }
            }
            if !m.has_events {
                continue; // in the archive: checked there
            }
            report.problems.push(problem(None, format!("the archive ledger says {label} was archived and dropped, but its events are still in the database")));
        }
        if !m.has_events && m.chain.as_ref().is_none_or(|c| c.0 == 0) {
            // Nothing here: a month a signed digest recorded must be in the archive.
            if let Some((n, count, _)) = rec.checkpoints.iter().filter(|c| c.1 > 0).max_by_key(|c| c.1) {
                if !m.dropped && rec.archived.is_none() {
                    report.problems.push(problem(
                        Some(*n),
                        format!("digest {n} records {count} events of {label}, but neither the database nor the archive holds them: the month was deleted"),
                    ));
                }
            }
            continue;
        }
        let table = match &m.pending_table {
            Some(name) => format!("audit_pending.\"{}\"", name.replace('"', "\"\"")),
            None => "audit_events".to_string(),
        };
        let (seq, head) = m.chain.clone().unwrap_or((0, GENESIS.to_vec()));
        let (events, walked) = walk_table(pool, &table, period, &label, rec, seq, &head).await.map_err(db)?;
        report.months += 1;
        report.events += events;
        if walked.is_some() && logged > 0 {
            report.problems.extend(changed_event(pool, &table, period, &label, logged).await.map_err(db)?);
        }
        report.problems.extend(walked);
        if m.chain.is_none() {
            report.problems.push(problem(None, format!("{label} has sealed events but no chain record (audit_chains): it was deleted")));
        }
    }
    Ok(())
}

/// Every month anything knows of: the digests, `audit_chains`, the partitions (attached and
/// detached) that hold sealed events, and the archive ledger.
async fn month_states(pool: &PgPool, found: &Digests) -> Result<BTreeMap<String, MonthState>, sqlx::Error> {
    // Read in the order the writers commit, so that work finishing meanwhile reads as done, not
    // as broken: the ledger's drops before the tables (a month dropped meanwhile is taken as
    // dropped), the events before the chain heads (sealing commits both together).
    let dropped_before = dropped_months(pool).await?;
    let mut months: BTreeMap<String, MonthState> = found.months.keys().map(|m| (m.clone(), MonthState::default())).collect();
    // Months detached for the archive and not dropped yet, by their tables' names (upkeep names
    // them `audit_events_YYYY_MM`; a table whose name says nothing is not walked here — the
    // archive refuses to write it, and its chain is checked before any month is archived).
    let pending: Vec<String> = sqlx::query_scalar(
        "select c.relname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'audit_pending' and c.relkind = 'r'",
    )
    .fetch_all(pool)
    .await?;
    for name in pending {
        let Some(period) = name.strip_prefix("audit_events_").and_then(|p| super::parse_period(&p.replace('_', "-"))) else { continue };
        let sealed: bool = sqlx::query_scalar(&format!("select exists (select 1 from audit_pending.\"{}\" where seq is not null)", name.replace('"', "\"\"")))
            .fetch_one(pool)
            .await?;
        let m = months.entry(month_label(period)).or_default();
        m.pending_table = Some(name);
        m.has_events |= sealed;
    }
    // Attached months with sealed events: one probe per partition, and the default partition's
    // few rows by month.
    let attached: Vec<String> =
        sqlx::query_scalar("select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'audit_events'::regclass")
            .fetch_all(pool)
            .await?;
    for name in attached {
        let Some(period) = name.strip_prefix("audit_events_").and_then(|p| super::parse_period(&p.replace('_', "-"))) else { continue };
        let from = period.midnight().assume_utc();
        let to = super::super::upkeep::add_months(from, 1);
        let sealed: bool = sqlx::query_scalar!(
            r#"select exists (select 1 from audit_events where occurred_at >= $1 and occurred_at < $2 and seq is not null) as "e!""#,
            from,
            to
        )
        .fetch_one(pool)
        .await?;
        if sealed {
            months.entry(month_label(period)).or_default().has_events = true;
        }
    }
    let stray: Vec<time::Date> = sqlx::query_scalar!(
        r#"select distinct (date_trunc('month', occurred_at at time zone 'UTC'))::date as "p!" from audit_events_default where seq is not null"#
    )
    .fetch_all(pool)
    .await?;
    for p in stray {
        months.entry(month_label(p)).or_default().has_events = true;
    }
    for c in sqlx::query!("select period, seq, head from audit_chains").fetch_all(pool).await? {
        months.entry(month_label(c.period)).or_default().chain = Some((c.seq, c.head));
    }
    for label in dropped_months(pool).await? {
        let m = months.entry(label.clone()).or_default();
        m.dropped = true;
        if !dropped_before.contains(&label) {
            // Archived and dropped while this ran: its events are in the archive now.
            (m.has_events, m.pending_table) = (false, None);
        }
    }
    Ok(months)
}

/// The months the archive ledger has as archived and dropped.
async fn dropped_months(pool: &PgPool) -> Result<std::collections::BTreeSet<String>, sqlx::Error> {
    let rows = sqlx::query_scalar!("select period from audit_partition_archives where dropped_at is not null").fetch_all(pool).await?;
    Ok(rows.into_iter().map(month_label).collect())
}

/// A broken month, against the hashes the (trusted) transparency log recorded when its events
/// were sealed: the first event whose hash is not the one sealed at its place is the one a
/// rebuilt chain changed (or moved). `None` when every hash is as sealed (the break is then the
/// walk's to name).
async fn changed_event(pool: &PgPool, table: &str, period: time::Date, label: &str, logged: i64) -> Result<Option<Problem>, sqlx::Error> {
    let sealed = super::tlog::sealed_hashes(pool, label, logged).await?;
    if sealed.is_empty() {
        return Ok(None);
    }
    let from = period.midnight().assume_utc();
    let to = super::super::upkeep::add_months(from, 1);
    let sql = format!("select id, seq, hash from {table} where occurred_at >= $1 and occurred_at < $2 and seq is not null order by seq, id");
    let mut rows = sqlx::query_as::<_, (i64, i64, Vec<u8>)>(&sql).bind(from).bind(to).fetch(pool);
    while let Some((id, seq, hash)) = rows.try_next().await? {
        if sealed.get(&seq).is_some_and(|h| *h != hex::encode(&hash)) {
            return Ok(Some(Problem {
                event: Some(id),
                month: Some(label.to_string()),
                digest: None,
                source: "database".into(),
                what: format!("event {id} is not the event sealed at place {seq}: the transparency log recorded another hash there, so it was changed, inserted or moved and the chain rebuilt after it"),
            }));
        }
    }
    Ok(None)
}

/// Walks month `period` of `table` (sealed events, by place) against its records.
pub async fn walk_table(
    pool: &PgPool,
    table: &str,
    period: time::Date,
    label: &str,
    rec: &MonthRecord,
    chain_seq: i64,
    chain_head: &[u8],
) -> Result<(u64, Option<Problem>), sqlx::Error> {
    let from = period.midnight().assume_utc();
    let to = super::super::upkeep::add_months(from, 1);
    let sql = format!(
        "select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash, seq, hash
         from {table} where occurred_at >= $1 and occurred_at < $2 and seq is not null order by seq, id"
    );
    let mut walker = Walker::new(label, "database", &rec.checkpoints);
    let mut rows = sqlx::query_as::<_, ChainRow>(&sql).bind(from).bind(to).fetch(pool);
    while let Some(r) = rows.try_next().await? {
        if !walker.feed(r.event.id, r.seq, r.hash.as_deref(), |l, prev, seq| l.link(prev, &r, seq)) {
            break;
        }
    }
    drop(rows);
    let (count, head) = walker.head();
    let mut recorded: Vec<(Option<i64>, i64, &str)> = rec.checkpoints.iter().map(|(n, c, _)| (Some(*n), *c, "a digest")).collect();
    recorded.push((None, chain_seq, "the database's chain head (audit_chains)"));
    let same_length_other_head = walker.problem.is_none() && count == chain_seq && head.as_slice() != chain_head;
    let (events, mut problem) = walker.finish(&recorded);
    if problem.is_none() && same_length_other_head {
        problem = Some(Problem {
            event: None,
            month: Some(label.to_string()),
            digest: None,
            source: "database".into(),
            what: "the chain's last hash differs from the chain head recorded at sealing".into(),
        });
    }
    Ok((events, problem))
}

/// The daily step's rolling check of the archive: the next archived object after `after` (in
/// key order, wrapping round), read whole and checked against the digests. Returns its month
/// (`None`: nothing archived) and what it found, into `report`.
pub async fn next_archived(pool: &PgPool, store: &dyn BlobStore, after: Option<&str>, report: &mut Report) -> Result<Option<String>, String> {
    let storage = |e: BlobError| format!("storage: {e}");
    let keys = super::keys::published(pool).await.map_err(|e| format!("database: {e}"))?;
    let labels: Vec<String> = list_all(store, Namespace::AuditArchive)
        .await
        .map_err(storage)?
        .into_iter()
        .filter_map(|k| Some(k.strip_prefix("audit-archive/")?.strip_suffix(".csv.gz")?.to_string()))
        .collect();
    let Some(label) = labels.iter().find(|l| after.is_none_or(|a| l.as_str() > a)).or(labels.first()).cloned() else { return Ok(None) };
    let found = digests(store, &keys).await.map_err(storage)?;
    archived_month(store, &format!("audit-archive/{label}.csv.gz"), &label, &found, report).await.map_err(storage)?;
    Ok(Some(label))
}

/// Checks one archived object against the digests, into `report`: its chain and what the
/// digest of its archive recorded, and that a signed digest records it at all.
async fn archived_month(store: &dyn BlobStore, key: &str, label: &str, found: &Digests, report: &mut Report) -> Result<(), BlobError> {
    let empty = MonthRecord::default();
    let rec = found.months.get(label).unwrap_or(&empty);
    let (events, problem) = check_object(store, key, label, rec).await?;
    report.archived += 1;
    report.events += events;
    report.problems.extend(problem);
    if rec.archived.is_none() {
        report.problems.push(Problem {
            event: None,
            month: Some(label.to_string()),
            digest: None,
            source: "archive".into(),
            what: format!("{key} is in the archive, but no signed digest records it: it cannot be told from a forgery"),
        });
    }
    Ok(())
}

/// Checks every archived object in the store against the digests.
pub async fn archived_objects(store: &dyn BlobStore, found: &Digests, report: &mut Report) -> Result<(), BlobError> {
    let keys = list_all(store, Namespace::AuditArchive).await?;
    let mut seen = std::collections::BTreeSet::new();
    for key in keys {
        let Some(label) = key.strip_prefix("audit-archive/").and_then(|k| k.strip_suffix(".csv.gz")) else { continue };
        seen.insert(label.to_string());
        archived_month(store, &key, label, found, report).await?;
    }
    // A month a digest recorded as archived whose object is gone.
    for (label, rec) in &found.months {
        if let Some((n, a, _, _)) = &rec.archived {
            if !seen.contains(label) {
                report.problems.push(Problem {
                    event: None,
                    month: Some(label.clone()),
                    digest: Some(*n),
                    source: "archive".into(),
                    what: format!("digest {n} records {} as archived, but the object is missing", a.key),
                });
            }
        }
    }
    Ok(())
}

/// Checks one archived object: its chain event by event, then its length, head and SHA-256
/// against the digest that recorded it. Returns (events checked, first problem).
pub async fn check_object(store: &dyn BlobStore, key: &str, label: &str, rec: &MonthRecord) -> Result<(u64, Option<Problem>), BlobError> {
    let Some(blob) = store.open(key).await? else { return Ok((0, None)) };
    let mut sha = Sha256::new();
    let mut parser = ArchiveParser::new(label, &rec.checkpoints);
    {
        let mut gz = flate2::write::MultiGzDecoder::new(&mut parser);
        let mut body = blob.body;
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            sha.update(&chunk);
            if gz.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = gz.finish();
    }
    parser.finish();
    let sha: [u8; 32] = sha.finalize().into();
    let problem = |digest: Option<i64>, what: String| Problem { event: None, month: Some(label.into()), digest, source: "archive".into(), what };
    let mut recorded: Vec<(Option<i64>, i64, &str)> = rec.checkpoints.iter().map(|(n, c, _)| (Some(*n), *c, "a digest")).collect();
    // Archived before the chain: the old format, or the columns with no place filled — the
    // digest of its archive says so (an empty chain) and pins its SHA-256. Every verifier reads
    // the month this way.
    let mut rows = parser.rows;
    let legacy = rows.legacy || rec.archived.as_ref().is_some_and(|a| a.2 == 0);
    let bad = rows.error.take();
    let (count, head) = rows.walker.head();
    if let Some((_, _, n, _)) = &rec.archived {
        recorded.push((rec.archived.as_ref().map(|a| a.0), *n, "the digest of the archive"));
    }
    if legacy {
        // Archived before the chain: only its digest's SHA-256 can vouch for it.
        let outcome = match &rec.archived {
            Some((n, a, _, _)) if a.sha256 != hex::encode(sha) => {
                Some(problem(Some(*n), format!("the object is not the one digest {n} recorded (its SHA-256 differs)")))
            }
            _ => None,
        };
        return Ok((0, outcome));
    }
    let (events, mut first) = rows.walker.finish(&recorded);
    if first.is_none() {
        first = bad.map(|what| problem(None, what));
    }
    if first.is_none() {
        if let Some((n, a, c, h)) = &rec.archived {
            if *c != count || *h != hex::encode(head) {
                first = Some(problem(Some(*n), format!("the object's chain ({count} events) is not the one digest {n} recorded ({c} events): it was rebuilt")));
            } else if a.sha256 != hex::encode(sha) {
                first = Some(problem(Some(*n), format!("the object is not the one digest {n} recorded (its SHA-256 differs)")));
            }
        }
    }
    Ok((events, first))
}

/// Parses an archived month (PostgreSQL CSV, as `archive_line` writes it) as it is decompressed,
/// feeding each row to a [`Walker`].
///
/// The work is shared out: this side cuts the text into blocks of whole records (a CRLF after an
/// even number of quotes ends a record) and hands them to worker threads, which parse each row, make its canonical
/// bytes and hash them onto the hash the row before it stores; the rows come back in order and
/// the [`Walker`] takes each one's link as computed when the chain's previous hash is that one —
/// so whenever the row before was good — else it hashes the row's canonical bytes itself. Call [`ArchiveParser::finish`] after the
/// last byte.
pub struct ArchiveParser<'a> {
    buf: Vec<u8>,
    pool: Pool,
    /// What the rows said.
    pub rows: ArchiveRows<'a>,
}

/// The rows of an archived month, as [`ArchiveParser`] finds them.
pub struct ArchiveRows<'a> {
    header: bool,
    /// The object has no chain columns (archived before the chain).
    pub legacy: bool,
    pub walker: Walker<'a>,
    pub error: Option<String>,
    first: bool,
}

/// The columns of an archived month with its chain.
const COLUMNS: usize = 12;
/// A block handed to a worker: about this many bytes of whole records.
pub(crate) const BLOCK_BYTES: usize = 1 << 20;
/// The chain's start as the first row's `prev_hash` column spells it.
pub(crate) const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One row as a worker read it.
struct Row {
    fields: usize,
    id: i64,
    seq: Option<i64>,
    stored: Option<[u8; 32]>,
    /// Its `prev_hash` column is the chain's start (only a month's first row has one).
    genesis: bool,
    /// The hash the row before it in the block stores, and `SHA-256(prev ‖ canonical)` over it:
    /// the row's link whenever that row was found good.
    prev: Option<[u8; 32]>,
    link: [u8; 32],
    /// Its canonical bytes in the block's buffer.
    canonical: std::ops::Range<usize>,
}

/// A block's rows, and their canonical bytes.
struct Checked {
    rows: Vec<Row>,
    canonical: Vec<u8>,
    /// The block's bytes, for the next block to reuse (fresh megabytes cost more to map and
    /// clear than to fill).
    block: Vec<u8>,
}

/// A block to read: its number, its bytes, and buffers to reuse for what it says.
struct Job {
    number: u64,
    block: Vec<u8>,
    rows: Vec<Row>,
    canonical: Vec<u8>,
}

/// Where each record of `block` (whole records, the first starting at its first byte) ends:
/// after a CRLF outside quotes.
fn record_ends(block: &[u8]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(block.len() / 128);
    let (mut in_quotes, mut start, mut i) = (false, 0, 0);
    while let Some(k) = memchr::memchr2(b'"', b'\n', &block[i..]) {
        let j = i + k;
        if block[j] == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes && j > start && block[j - 1] == b'\r' {
            ends.push(j + 1);
            start = j + 1;
        }
        i = j + 1;
    }
    ends
}

/// The quotes in `bytes`.
fn quotes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'"').count()
}

/// Where the last whole record of `buf` (records from its first byte on) ends: after the last
/// CRLF with an even number of quotes before it.
fn last_record_end(buf: &[u8]) -> Option<usize> {
    let total = quotes(buf);
    let (mut end, mut after) = (buf.len(), 0);
    while let Some(nl) = memchr::memrchr(b'\n', &buf[..end]) {
        after += quotes(&buf[nl..end]);
        if nl > 0 && buf[nl - 1] == b'\r' && (total - after).is_multiple_of(2) {
            return Some(nl + 1);
        }
        end = nl;
    }
    None
}

/// Reads the rows of a block of whole records.
fn check_block(job: Job) -> Checked {
    let Job { block, mut rows, mut canonical, .. } = job;
    let ends = record_ends(&block);
    rows.clear();
    canonical.clear();
    let mut out = Checked { rows, canonical, block: Vec::new() };
    let mut start = 0;
    let mut before: Option<[u8; 32]> = None;
    for end in ends {
        let line = &block[start..end.saturating_sub(2).max(start)];
        start = end;
        let mut fields: [Option<Cow<'_, str>>; COLUMNS] = Default::default();
        let n = split_record(line, |i, f| {
            if let Some(slot) = fields.get_mut(i) {
                *slot = f;
            }
        });
        let field = |i: usize| fields[i].as_deref();
        let hash = |i: usize| {
            field(i).and_then(|h| {
                let mut out = [0u8; 32];
                hex::decode_to_slice(h, &mut out).ok().map(|()| out)
            })
        };
        let from = out.canonical.len();
        let mut row = Row { fields: n, id: -1, seq: None, stored: None, genesis: false, prev: before.take(), link: [0; 32], canonical: from..from };
        if n == COLUMNS {
            row.id = field(0).and_then(|v| v.parse().ok()).unwrap_or(-1);
            row.seq = field(9).and_then(|v| v.parse().ok());
            row.stored = hash(11);
            row.genesis = field(10) == Some(ZEROS);
            let f = Fields {
                id: field(0).unwrap_or(""),
                occurred_at: field(1).unwrap_or(""),
                kind: field(2).unwrap_or(""),
                admin_id: field(3),
                admin_name: field(4),
                subject_type: field(5),
                subject_id: field(6),
                detail: field(7),
                client_hash: field(8),
                seq: field(9).unwrap_or(""),
            };
            super::encode::canonical_fields(&mut out.canonical, &f);
            row.canonical = from..out.canonical.len();
            if let Some(prev) = &row.prev {
                row.link = Linker::hash(prev, &out.canonical[row.canonical.clone()]);
            }
        }
        before = row.stored;
        out.rows.push(row);
    }
    out.block = block;
    out
}

/// The worker threads, and the blocks handed out whose rows have not been taken yet.
struct Pool {
    jobs: Option<std::sync::mpsc::SyncSender<Job>>,
    /// Buffers of blocks whose rows were taken.
    spare: Vec<Checked>,
    results: std::sync::mpsc::Receiver<(u64, Checked)>,
    workers: Vec<std::thread::JoinHandle<()>>,
    sent: u64,
    next: u64,
    arrived: BTreeMap<u64, Checked>,
}

impl Pool {
    /// As many workers as the machine has cores (at most four); none when no thread can be
    /// started (the blocks are then read here).
    fn new() -> Pool {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
        let (jobs, inbox) = std::sync::mpsc::sync_channel::<Job>(2 * n);
        let (done, results) = std::sync::mpsc::channel();
        let inbox = std::sync::Arc::new(std::sync::Mutex::new(inbox));
        let mut workers = Vec::new();
        for i in 0..n {
            let (inbox, done) = (inbox.clone(), done.clone());
            let spawned = std::thread::Builder::new().name(format!("audit-verify-{i}")).spawn(move || loop {
                let job = inbox.lock().map_or(None, |rx| rx.recv().ok());
                let Some(job) = job else { return };
                if done.send((job.number, check_block(job))).is_err() {
                    return;
                }
            });
            match spawned {
                Ok(w) => workers.push(w),
                Err(_) => break,
            }
        }
        Pool { jobs: (!workers.is_empty()).then_some(jobs), spare: Vec::new(), results, workers, sent: 0, next: 0, arrived: BTreeMap::new() }
    }
}

impl<'a> ArchiveParser<'a> {
    pub fn new(label: &str, checkpoints: &'a [(i64, i64, String)]) -> Self {
        ArchiveParser {
            buf: Vec::new(),
            pool: Pool::new(),
            rows: ArchiveRows { header: true, legacy: false, walker: Walker::new(label, "archive", checkpoints), error: None, first: true },
        }
    }

    /// Whether the rows still matter (not an old-format month, nothing found wrong yet).
    fn reading(&self) -> bool {
        !self.rows.legacy && self.rows.walker.problem.is_none() && self.rows.error.is_none()
    }

    /// Hands the complete records in `buf` to a worker (or reads them here without workers).
    fn ship(&mut self) {
        let Some(cut) = last_record_end(&self.buf) else { return };
        let Checked { rows, canonical, block: mut rest } =
            self.pool.spare.pop().unwrap_or(Checked { rows: Vec::new(), canonical: Vec::new(), block: Vec::new() });
        rest.clear();
        rest.extend_from_slice(&self.buf[cut..]);
        self.buf.truncate(cut);
        let block = std::mem::replace(&mut self.buf, rest);
        let job = Job { number: self.pool.sent, block, rows, canonical };
        if !self.reading() {
            return;
        }
        match &self.pool.jobs {
            Some(jobs) => match jobs.send(job) {
                Ok(()) => self.pool.sent += 1,
                // Every worker is gone (one panicked): what they had cannot be vouched for.
                Err(_) => {
                    self.rows.error.get_or_insert_with(|| "the archive could not be read to the end".into());
                }
            },
            None => {
                let checked = check_block(job);
                self.take(checked);
            }
        }
        self.take_arrived(false);
    }

    /// Takes the rows of blocks that came back, in order; with `all`, waits for every one.
    fn take_arrived(&mut self, all: bool) {
        while self.pool.next < self.pool.sent {
            let next = self.pool.next;
            if let Some(checked) = self.pool.arrived.remove(&next) {
                self.pool.next += 1;
                self.take(checked);
                continue;
            }
            let got = if all { self.pool.results.recv().ok() } else { self.pool.results.try_recv().ok() };
            match got {
                Some((k, checked)) => {
                    self.pool.arrived.insert(k, checked);
                }
                None if all => {
                    // A worker is gone (it panicked): what it had cannot be vouched for.
                    self.rows.error.get_or_insert_with(|| "the archive could not be read to the end".into());
                    return;
                }
                None => return,
            }
        }
    }

    fn take(&mut self, checked: Checked) {
        for row in &checked.rows {
            if !self.reading() {
                break;
            }
            self.rows.take(row, &checked.canonical);
        }
        self.pool.spare.push(checked);
    }

    /// After the last byte: the last records are read and every row is taken. (Bytes after
    /// the last line end are not a record.)
    pub fn finish(&mut self) {
        self.ship();
        self.pool.jobs = None;
        self.take_arrived(true);
        for w in self.pool.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl ArchiveRows<'_> {
    fn header(&mut self, line: &[u8]) {
        self.header = false;
        let mut names = Vec::new();
        split_record(line, |_, f| names.push(f.unwrap_or_default()));
        self.legacy = !names.ends_with(&["seq".into(), "prev_hash".into(), "hash".into()]);
    }

    fn take(&mut self, row: &Row, canonical: &[u8]) {
        if row.fields != COLUMNS {
            self.error = Some(format!("a row has {} fields, not {COLUMNS}", row.fields));
            return;
        }
        if self.first {
            self.first = false;
            if !row.genesis {
                self.error = Some("the month's first prev_hash is not the chain's start".into());
            }
        }
        let bytes = &canonical[row.canonical.clone()];
        self.walker.feed(row.id, row.seq, row.stored.as_ref().map(|h| h.as_slice()), |_, prev, _| {
            // The worker linked the row onto the hash the row before it stores; onto another
            // one (the block's first row, or after a break), it is linked here.
            if row.prev.as_ref() == Some(prev) {
                row.link
            } else {
                Linker::hash(prev, bytes)
            }
        });
    }
}

/// Splits one CSV record into its fields, handing each to `each` with its index: quoted →
/// `Some(text)` (quotes undone), unquoted empty → `None` (NULL). Returns how many there were.
fn split_record<'l>(line: &'l [u8], mut each: impl FnMut(usize, Option<Cow<'l, str>>)) -> usize {
    let mut count = 0;
    let mut i = 0;
    let n = line.len();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    loop {
        if i < n && line[i] == b'"' {
            let start = i + 1;
            let mut j = start;
            let mut doubled = false;
            // The closing quote: the next one not doubled (none: the field runs to the end).
            loop {
                let Some(k) = memchr::memchr(b'"', &line[j..]) else {
                    j = n;
                    break;
                };
                j += k;
                if j + 1 < n && line[j + 1] == b'"' {
                    doubled = true;
                    j += 2;
                    continue;
                }
                break;
            }
            let raw = &line[start..j];
            each(
                count,
                Some(match (doubled, std::str::from_utf8(raw)) {
                    (false, Ok(s)) => Cow::Borrowed(s),
                    (true, Ok(s)) => Cow::Owned(s.replace("\"\"", "\"")),
                    (_, Err(_)) => Cow::Owned(text(raw)),
                }),
            );
            i = j + 1;
        } else {
            let start = i;
            i = memchr::memchr(b',', &line[i..]).map_or(n, |k| i + k);
            let raw = &line[start..i];
            each(count, if raw.is_empty() { None } else { Some(std::str::from_utf8(raw).map_or_else(|_| Cow::Owned(text(raw)), Cow::Borrowed)) });
        }
        count += 1;
        if i >= n {
            return count;
        }
        i += 1; // the comma
    }
}

impl Write for ArchiveParser<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.rows.header {
            // The header: up to the first CRLF outside quotes.
            let Some(&end) = record_ends(&self.buf).first() else { return Ok(data.len()) };
            self.rows.header(&self.buf[..end - 2]);
            self.buf.drain(..end);
        }
        if self.buf.len() >= BLOCK_BYTES {
            self.ship();
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Offline: the digests and every archived object, with only the store and the public keys
/// (`keys`; `None`: the keys the store publishes, which proves less — pass the key you downloaded).
pub async fn offline(store: &dyn BlobStore, keys: Option<Vec<PublicKey>>) -> Result<Report, String> {
    let storage = |e: BlobError| format!("storage: {e}");
    let keys = match keys {
        Some(k) => k,
        None => store_keys(store).await.map_err(storage)?,
    };
    let found = digests(store, &keys).await.map_err(storage)?;
    let mut report = Report { digests: found.found.len() as u64, problems: found.problems.clone(), warnings: found.warnings.clone(), ..Report::default() };
    let archived = list_all(store, Namespace::AuditArchive).await.map_err(storage)?.len();
    let mut signs = Vec::new();
    if found.store_keys > 0 {
        signs.push(format!("{} public key(s) published in the store over a day ago", found.store_keys));
    }
    if archived > 0 {
        signs.push(format!("{archived} archived month(s) in the store"));
    }
    no_digests(&found, &signs, &mut report);
    archived_objects(store, &found, &mut report).await.map_err(storage)?;
    Ok(report)
}
