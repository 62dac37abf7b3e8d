//! `ebb doctor [--after-restore]`: one command that says whether this installation is healthy —
//! configuration, database and migrations, clocks, storage and its marker, the S3 lifecycle
//! rule, SMTP, the public URL, open alerts and overdue retention — and, after a restore, checks
//! that nothing live was lost and redoes what must stay deleted. `ebb migrate --dry-run` lists
//! the pending migrations from here too.

use std::time::{Duration, SystemTime};

use sqlx::PgPool;

pub use crate::checks::{print, Check, Report, Status};
use crate::config::{Config, StorageKind};

/// Every check, in the order a person would fix them.
pub async fn run(config: &Config, after_restore: bool) -> Report {
    let mut report = Report::default();
    report.result("configuration", configuration(config));
    report.result("public URL", public_url(config));
    let pool = match crate::connect(config).await {
        Ok(pool) => pool,
        Err(e) => {
            report.push("database", Status::Fail, e);
            for name in ["secrets", "migrations", "clock", "storage marker", "alerts", "retention"] {
                report.push(name, Status::Skipped, "needs the database");
            }
            storage_checks_without_db(config, &mut report).await;
            return report;
        }
    };
    report.result("database", database(&pool).await);
    report.result("secrets", secrets(&pool).await);
    let mut plan = migration_plan(&pool).await;
    // A backup from before an upgrade: the repair brings its schema up to date first.
    if after_restore {
        if let Ok(p) = &plan {
            if !p.pending.is_empty() && p.unknown.is_empty() && p.changed.is_empty() {
                let n = p.pending.len();
                plan = match crate::MIGRATOR.run(&pool).await {
                    Ok(()) => migration_plan(&pool).await.map(|mut p| {
                        p.just_applied = n;
                        p
                    }),
                    Err(e) => Err(format!("the restored database could not be migrated: {e}")),
                };
            }
        }
    }
    let migrated = report_migrations(&pool, plan, &mut report).await;
    report.result("clock", clock(&pool).await);
    let store_ok = storage(config, &mut report).await;
    report.result("free space", free_space(config));
    if store_ok {
        report.result("storage marker", marker(config, &pool).await);
    } else {
        report.push("storage marker", Status::Skipped, "needs a working storage");
    }
    report.result("S3 lifecycle", lifecycle(config).await);
    report.result("write-once", write_once(config).await);
    report.result("SMTP", smtp(config).await);
    if !migrated {
        for name in ["alerts", "retention"] {
            report.push(name, Status::Skipped, "needs the migrations applied (ebb migrate)");
        }
        return report;
    }
    report.result("alerts", alerts(&pool).await);
    // The state needs a valid public URL (the passkeys' relying party) and a store.
    let state = match (config.webauthn(), crate::open_store(config)) {
        (Ok(_), Ok(store)) => match crate::build_state_with_store(config, pool.clone(), store).await {
            Ok(state) => state,
            Err(e) => {
                report.push("retention", Status::Skipped, format!("needs the keyring: {e}"));
                return report;
            }
        },
        _ => {
            report.push("retention", Status::Skipped, "needs a valid public URL and storage settings");
            return report;
        }
    };
    report.result("retention", retention(&state).await);
    report.result("audit signing key", signing_key(config, &state).await);
    let own_store = store_ok && !report.get("storage marker").is_some_and(|c| c.status == Status::Fail);
    match (after_restore, own_store) {
        // What `ebb serve` would refuse: a database restored from a backup.
        (false, true) => report.result("restored backup", crate::restore::restore_check(&state).await),
        (false, false) => {}
        (true, false) => report.push("after restore", Status::Skipped, "needs the installation's own storage (see the storage lines)"),
        (true, true) => crate::restore::after_restore(config, &state, &mut report).await,
    }
    report
}

/// The migrations line; whether the database is ready for the later checks. Migrations of a
/// newer Ebb that only expand the schema are a warning: this binary runs beside them (as
/// `ebb serve` does), so the doctor goes on.
async fn report_migrations(pool: &PgPool, plan: Result<MigrationPlan, String>, report: &mut Report) -> bool {
    let beside_newer = match &plan {
        Ok(p) if !p.unknown.is_empty() && p.pending.is_empty() && p.changed.is_empty() => {
            crate::contracting_unknown(pool, &p.unknown).await.is_ok_and(|c| c.is_empty())
        }
        _ => false,
    };
    let migrated = beside_newer || matches!(&plan, Ok(p) if p.pending.is_empty() && p.unknown.is_empty() && p.changed.is_empty());
    report.result(
        "migrations",
        plan.map(|p| match beside_newer {
            true => (
                Status::Warn,
                format!("migrated by a newer Ebb: {:?} only expand the schema, so this binary runs beside them; upgrade it to that release", p.unknown),
            ),
            false => p.status(),
        }),
    );
    migrated
}

/// The audit digest signing key: readable, owner-only, not retired — and kept apart from the
/// database and the store (whoever holds the key can sign forged digests).
async fn signing_key(config: &Config, state: &app::state::AppState) -> Result<(Status, String), String> {
    let found = app::audit::chain::keys::inspect(state).await?;
    match &config.audit_signing_key_file {
        None => Ok((
            Status::Warn,
            format!(
                "{found}: whoever can write the database can sign forged audit digests; keep the key in a file of its own (EBB_AUDIT_SIGNING_KEY_FILE; the packages use systemd's LoadCredential) — the next start moves it there"
            ),
        )),
        Some(path) if config.storage == StorageKind::Local && path.starts_with(&config.storage_dir) => Ok((
            Status::Warn,
            format!("{found}: the key is inside the storage folder, so one copy of it holds both the digests and the key that signs them; keep it elsewhere"),
        )),
        Some(_) => Ok((Status::Ok, found)),
    }
}

/// Without a database: the store can still be probed.
async fn storage_checks_without_db(config: &Config, report: &mut Report) {
    let _ = storage(config, report).await;
}

fn configuration(config: &Config) -> Result<(Status, String), String> {
    config.notify_settings()?;
    config.witnesses()?;
    config.check_storage_outside_site()?;
    config.s3_settings_if_used()?;
    Ok((Status::Ok, format!("storage {}; notifications {}", storage_words(config), if config.smtp_url.0.trim().is_empty() { "off" } else { "on" })))
}

fn storage_words(config: &Config) -> String {
    match config.storage {
        StorageKind::Local => format!("local folder {}", config.storage_dir.display()),
        StorageKind::S3 => format!("S3 bucket {:?}", config.s3.bucket),
    }
}

/// Passkeys need a secure context: https, or http on this machine only; and a host name (a
/// relying party id cannot be an IP address).
fn public_url(config: &Config) -> Result<(Status, String), String> {
    let url = &config.public_url;
    let host = url.host_str().unwrap_or_default();
    // (An IP address is refused when the settings are read: passkeys need a host name.)
    config.webauthn()?;
    match url.scheme() {
        "https" => Ok((Status::Ok, format!("{url} (https, host {host})"))),
        _ if host == "localhost" || host.ends_with(".localhost") => {
            Ok((Status::Warn, format!("{url}: plain http works on this machine only; set EBB_PUBLIC_URL to the https address people will use")))
        }
        _ => Err(format!("EBB_PUBLIC_URL={url} is not https: browsers refuse passkeys there; serve Ebb behind an https proxy and set its https address")),
    }
}

/// The oldest PostgreSQL Ebb can run on (`gen_random_uuid()` in core), and the one it is tested on.
pub const PG_MINIMUM: i64 = 130_000;
pub const PG_TESTED: i64 = 150_000;

async fn database(pool: &PgPool) -> Result<(Status, String), String> {
    let (version, num): (String, String) = sqlx::query_as("select current_setting('server_version'), current_setting('server_version_num')")
        .fetch_one(pool)
        .await
        .map_err(|e| format!("database error: {e}"))?;
    postgres_version(&version, num.parse().unwrap_or(0))
}

/// What a server version means for Ebb: too old fails, older than the tested one warns.
fn postgres_version(version: &str, num: i64) -> Result<(Status, String), String> {
    match num {
        n if n < PG_MINIMUM => Err(format!("PostgreSQL {version} is older than 13, which Ebb needs: upgrade PostgreSQL (Ebb is tested on 15)")),
        n if n < PG_TESTED => Ok((Status::Warn, format!("PostgreSQL {version} reachable; Ebb is tested on 15 and later: upgrade when you can"))),
        _ => Ok((Status::Ok, format!("PostgreSQL {version} reachable"))),
    }
}

/// The secrets Ebb keeps in `settings`: each readable (an unreadable one stops `ebb serve`).
async fn secrets(pool: &PgPool) -> Result<(Status, String), String> {
    let mut found = 0;
    for key in app::settings::SECRETS {
        let stored: Option<String> =
            sqlx::query_scalar("select value from settings where key = $1").bind(key).fetch_optional(pool).await.map_err(|e| format!("database error: {e}"))?;
        if let Some(stored) = stored {
            app::settings::parse_secret(key, &stored)?;
            found += 1;
        }
    }
    Ok((Status::Ok, format!("{found} of {} readable (the others are made on first start)", app::settings::SECRETS.len())))
}

/// Free space where a local store keeps its files: below one largest share it fails (an
/// upload would not fit), below four it warns.
fn free_space(config: &Config) -> Result<(Status, String), String> {
    if config.storage != StorageKind::Local {
        return Ok((Status::Skipped, "S3: the bucket's space is the provider's".into()));
    }
    let stat = rustix::fs::statvfs(&config.storage_dir).map_err(|e| format!("{}: {e}", config.storage_dir.display()))?;
    let free = stat.f_bavail.saturating_mul(stat.f_frsize);
    space_status(free, config.share_max_bytes, &config.storage_dir.display().to_string())
}

fn space_status(free: u64, largest: u64, dir: &str) -> Result<(Status, String), String> {
    let mib = |b: u64| format!("{} MiB", b / (1024 * 1024));
    if free < largest {
        return Err(format!("{} free in {dir}, less than one largest share ({}): uploads will fail; free space or move the store", mib(free), mib(largest)));
    }
    if free < largest.saturating_mul(4) {
        return Ok((Status::Warn, format!("{} free in {dir}: room for fewer than four largest shares ({} each)", mib(free), mib(largest))));
    }
    Ok((Status::Ok, format!("{} free in {dir}", mib(free))))
}

/// Migrations this binary has, compared with what the database applied.
#[derive(Debug, Default)]
pub struct MigrationPlan {
    pub applied: usize,
    /// Known here, not applied yet: (version, description).
    pub pending: Vec<(i64, String)>,
    /// Applied in the database, unknown here (a newer Ebb migrated it).
    pub unknown: Vec<i64>,
    /// Applied with other contents than this binary's file.
    pub changed: Vec<i64>,
    /// Applied by this run (`--after-restore` on an older backup).
    pub just_applied: usize,
}

impl MigrationPlan {
    /// For `ebb migrate --dry-run`.
    pub fn describe(&self) -> String {
        let mut s = format!("{} migrations applied; {} pending\n", self.applied, self.pending.len());
        for (v, d) in &self.pending {
            s.push_str(&format!("  pending  {v} {d}\n"));
        }
        for v in &self.unknown {
            s.push_str(&format!("  UNKNOWN  {v} (applied by a newer Ebb; upgrade this binary)\n"));
        }
        for v in &self.changed {
            s.push_str(&format!("  CHANGED  {v} (applied with other contents than this binary's)\n"));
        }
        s
    }

    fn status(&self) -> (Status, String) {
        if !self.unknown.is_empty() {
            (
                Status::Fail,
                format!("the database has {} migration(s) this binary does not know ({:?}): it belongs to a newer Ebb", self.unknown.len(), self.unknown),
            )
        } else if !self.changed.is_empty() {
            (Status::Fail, format!("migration(s) {:?} were applied with other contents than this binary's", self.changed))
        } else if !self.pending.is_empty() {
            (
                Status::Warn,
                format!(
                    "{} applied, {} pending (`ebb migrate --dry-run` lists them; `ebb migrate` or `ebb serve` applies them)",
                    self.applied,
                    self.pending.len()
                ),
            )
        } else if self.just_applied > 0 {
            (Status::Ok, format!("{} applied, none pending ({} applied now: the backup was older than this version)", self.applied, self.just_applied))
        } else {
            (Status::Ok, format!("{} applied, none pending", self.applied))
        }
    }
}

pub async fn migration_plan(pool: &PgPool) -> Result<MigrationPlan, String> {
    let exists: bool =
        sqlx::query_scalar("select to_regclass('_sqlx_migrations') is not null").fetch_one(pool).await.map_err(|e| format!("database error: {e}"))?;
    let applied: Vec<(i64, Vec<u8>)> = if exists {
        sqlx::query_as("select version, checksum from _sqlx_migrations where success order by version")
            .fetch_all(pool)
            .await
            .map_err(|e| format!("database error: {e}"))?
    } else {
        Vec::new()
    };
    let known: Vec<_> = crate::MIGRATOR.iter().filter(|m| !m.migration_type.is_down_migration()).collect();
    let mut plan = MigrationPlan { applied: applied.len(), ..Default::default() };
    for m in &known {
        match applied.iter().find(|(v, _)| *v == m.version) {
            None => plan.pending.push((m.version, m.description.to_string())),
            Some((_, sum)) if sum.as_slice() != &*m.checksum => plan.changed.push(m.version),
            Some(_) => {}
        }
    }
    plan.unknown = applied.iter().map(|(v, _)| *v).filter(|v| !known.iter().any(|m| m.version == *v)).collect();
    Ok(plan)
}

/// Ebb's clock against PostgreSQL's: deadlines are decided in the database, but times shown
/// and sent are Ebb's.
async fn clock(pool: &PgPool) -> Result<(Status, String), String> {
    let before = SystemTime::now();
    let db: f64 =
        sqlx::query_scalar("select extract(epoch from clock_timestamp())::float8").fetch_one(pool).await.map_err(|e| format!("database error: {e}"))?;
    let after = SystemTime::now();
    let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let mid = (secs(before) + secs(after)) / 2.0;
    let diff = mid - db;
    let words = format!("Ebb's clock is {:.3} s {} PostgreSQL's", diff.abs(), if diff >= 0.0 { "ahead of" } else { "behind" });
    match diff.abs() {
        d if d <= 1.0 => Ok((Status::Ok, words)),
        d if d <= 30.0 => Ok((Status::Warn, format!("{words}; keep both machines on NTP (systemd-timesyncd or chrony)"))),
        _ => Err(format!("{words}: times shown and sent will be wrong; set up NTP on both machines")),
    }
}

/// Write, read back and delete a probe object. True when the store works.
async fn storage(config: &Config, report: &mut Report) -> bool {
    let r = async {
        config.check_storage_outside_site()?;
        let store = crate::open_store(config)?;
        app::storage::self_check(&*store).await.map_err(|e| format!("storage check failed ({}): {e}", storage_words(config)))?;
        Ok::<_, String>((Status::Ok, format!("{}: a probe was written, read back (size and CRC32C) and deleted", storage_words(config))))
    }
    .await;
    let ok = r.is_ok();
    report.result("storage", r);
    ok
}

/// The marker proves the store is this installation's (read only: nothing is adopted here).
async fn marker(config: &Config, pool: &PgPool) -> Result<(Status, String), String> {
    let store = crate::open_store(config)?;
    let db: Option<String> = sqlx::query_scalar("select value from settings where key = 'storage_marker_id'")
        .fetch_optional(pool)
        .await
        .map_err(|e| format!("database error: {e}"))?;
    let stored = store.get(app::storage::MARKER_KEY).await.map_err(|e| format!("cannot read the storage marker: {e}"))?;
    let stored = stored.map(|b| String::from_utf8_lossy(&b).trim().to_owned());
    match (db, stored) {
        (Some(d), Some(s)) if d == s => Ok((Status::Ok, "the storage's marker is this database's".into())),
        (Some(_), Some(_)) => Err("the storage holds another installation's marker: this database and this storage do not belong together (check EBB_STORAGE_DIR or the EBB_S3_* settings)".into()),
        (Some(_), None) => Err("the storage marker is missing: this is not the storage Ebb wrote to (an unmounted folder, another bucket?), or it was emptied; restore the storage backup".into()),
        (None, _) => Ok((Status::Warn, "no marker yet: the first `ebb serve` writes it".into())),
    }
}

/// Digests are written once: a local folder makes it atomic (a hard link); an S3 server must
/// honour `If-None-Match: *`, which is probed.
async fn write_once(config: &Config) -> Result<(Status, String), String> {
    if config.storage != StorageKind::S3 {
        return Ok((Status::Ok, "audit digests are written once (a hard link that fails when the name exists)".into()));
    }
    let store = crate::s3::S3Store::new(config.s3.settings()?);
    match store.honours_if_none_match().await {
        Ok(true) => Ok((Status::Ok, "the S3 server refuses to replace an object written with If-None-Match: * (audit digests)".into())),
        Ok(false) => Ok((
            Status::Warn,
            "the S3 server ignores If-None-Match on PutObject (garage 2.5 does): Ebb checks before writing a digest, but two writers at the same instant could still replace one; use a server that honours it (AWS S3, MinIO, Ceph) or an object lock on audit-digests/".into(),
        )),
        Err(e) => Ok((Status::Warn, format!("could not probe conditional writes ({e})"))),
    }
}

async fn lifecycle(config: &Config) -> Result<(Status, String), String> {
    if config.storage != StorageKind::S3 {
        return Ok((Status::Ok, "not needed for a local folder (Ebb's own jobs delete expired objects)".into()));
    }
    let store = crate::s3::S3Store::new(config.s3.settings()?);
    match store.lifecycle_rule_ids().await {
        Ok(ids) => {
            let missing: Vec<String> = store.rule_ids().into_iter().filter(|r| !ids.contains(r)).collect();
            if missing.is_empty() {
                Ok((Status::Ok, "the bucket expires exports/ after 7 days and abandoned uploads after 2".into()))
            } else {
                Ok((Status::Warn, format!("rule(s) {missing:?} missing: run `ebb storage setup` (Ebb's jobs still delete what expires)")))
            }
        }
        Err(e) => Ok((Status::Warn, format!("cannot read the bucket's lifecycle rules ({e}); Ebb's jobs still delete what expires"))),
    }
}

async fn smtp(config: &Config) -> Result<(Status, String), String> {
    let settings = config.notify_settings()?;
    let Some(mailer) = settings.mailer else {
        return Ok((Status::Ok, "off (EBB_SMTP_URL unset: no notification emails)".into()));
    };
    match tokio::time::timeout(Duration::from_secs(20), mailer.transport.test_connection()).await {
        Ok(Ok(true)) => Ok((Status::Ok, format!("the SMTP server answers; notifications go to {} address(es)", mailer.to.len()))),
        Ok(Ok(false)) => Err("the SMTP server did not accept a connection (check EBB_SMTP_URL)".into()),
        Ok(Err(e)) => Err(format!("cannot reach the SMTP server ({e}); check EBB_SMTP_URL")),
        Err(_) => Err("the SMTP server did not answer within 20 s; check EBB_SMTP_URL and the firewall".into()),
    }
}

async fn alerts(pool: &PgPool) -> Result<(Status, String), String> {
    let open = app::alerts::open(pool).await.map_err(|e| format!("database error: {e}"))?;
    if open.is_empty() {
        return Ok((Status::Ok, "no open alerts".into()));
    }
    let list: Vec<String> = open.iter().take(5).map(|a| format!("{} ({}×)", a.message, a.times)).collect();
    Err(format!("{} open alert(s), shown on the dashboard: {}", open.len(), list.join("; ")))
}

async fn retention(state: &app::state::AppState) -> Result<(Status, String), String> {
    let report = app::retention::report::compute(state).await.map_err(|e| format!("retention report failed: {e}"))?;
    match report.overdue() {
        0 => Ok((Status::Ok, format!("every kind of data within its promise ({} kinds)", report.kinds.len()))),
        n => Err(format!("{n} item(s) past their promise by more than one job interval (`ebb retention report` says which)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Migrations after this one follow "expand, then contract" (docs/operator.md, *Upgrade*): a new
    /// migration never removes or narrows what the running older binary uses, unless its first
    /// line says `-- contract:` and why (a later release, once no old binary runs).
    const EXPAND_ONLY_AFTER: &str = "20261203000007";

    #[test]
    fn the_runtime_expand_only_rule_is_the_tests() {
        assert_eq!(EXPAND_ONLY_AFTER.parse::<i64>().unwrap(), crate::EXPAND_ONLY_AFTER);
        for m in crate::MIGRATOR.migrations.iter() {
            let contract = m.sql.lines().next().is_some_and(|l| l.starts_with("-- contract:"));
            assert_eq!(crate::expand_only(m), m.version > crate::EXPAND_ONLY_AFTER && !contract, "{}", m.version);
        }
    }

    /// What would break an old binary still running beside the new schema.
    fn contracts(sql: &str) -> Vec<&'static str> {
        let text = sql.lines().map(|l| l.split("--").next().unwrap_or("")).collect::<Vec<_>>().join(" ").to_lowercase();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut found = Vec::new();
        for (needle, what) in [
            ("drop table", "drops a table"),
            ("drop column", "drops a column"),
            ("rename column", "renames a column"),
            (" rename to ", "renames a table"),
            ("set not null", "makes a column NOT NULL"),
            (" type ", "changes a column's type"),
            ("drop constraint", "drops a constraint (one it replaces may be narrower)"),
        ] {
            if text.contains(needle) {
                found.push(what);
            }
        }
        found
    }

    #[test]
    fn migrations_expand_only() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        let mut bad = Vec::new();
        for name in names.iter().filter(|n| n.as_str() > EXPAND_ONLY_AFTER && !n.starts_with(EXPAND_ONLY_AFTER)) {
            let sql = std::fs::read_to_string(dir.join(name)).unwrap();
            if sql.lines().next().is_some_and(|l| l.starts_with("-- contract:")) {
                continue;
            }
            for what in contracts(&sql) {
                bad.push(format!("{name} {what}"));
            }
        }
        assert!(bad.is_empty(), "migrations that contract without `-- contract:` on their first line: {bad:?}");
    }

    #[test]
    fn the_expand_only_check_sees_contractions() {
        assert_eq!(contracts("alter table shares add column x text;\ncreate index i on shares (x);"), Vec::<&str>::new());
        assert_eq!(contracts("ALTER TABLE shares\n  DROP COLUMN note;"), vec!["drops a column"]);
        assert_eq!(contracts("alter table shares alter column note set not null;"), vec!["makes a column NOT NULL"]);
        assert_eq!(contracts("alter table a rename to b;"), vec!["renames a table"]);
        assert_eq!(contracts("-- we never drop table here\nselect 1;"), Vec::<&str>::new());
    }

    #[test]
    fn postgres_versions_and_free_space_are_judged() {
        assert!(postgres_version("12.9", 120_009).is_err());
        assert_eq!(postgres_version("14.1", 140_001).unwrap().0, Status::Warn);
        assert_eq!(postgres_version("15.20", 150_020).unwrap().0, Status::Ok);
        let mib = 1024 * 1024;
        assert!(space_status(24 * 1024, 100 * mib, "/s").unwrap_err().contains("uploads will fail"));
        assert_eq!(space_status(300 * mib, 100 * mib, "/s").unwrap().0, Status::Warn);
        assert_eq!(space_status(500 * mib, 100 * mib, "/s").unwrap().0, Status::Ok);
    }

    #[test]
    fn a_failed_check_fails_the_command() {
        let mut r = Report::default();
        r.push("a", Status::Ok, "fine");
        r.push("b", Status::Warn, "look");
        let mut out = Vec::new();
        assert!(print(&r, false, &mut out).is_ok());
        r.push("c", Status::Fail, "broken");
        let mut out = Vec::new();
        assert!(print(&r, false, &mut out).is_err());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("FAIL  c"), "{text}");
        assert!(text.contains("3 checks: 1 failed, 1 warnings"), "{text}");
    }
}
