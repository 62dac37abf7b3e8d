//! The audit log's upkeep with injected time (month and year ends, a leap February, exactly 24
//! and 25 months, re-runs, holes, the default partition, unexpected tables), and the rule that an
//! event and its change commit or roll back together.

use app::audit::upkeep::{run, UpkeepReport};
use app::audit::AuditKind;
use app::kernel::audit::{record, Actor};
use sqlx::PgPool;
use time::macros::datetime;
use time::OffsetDateTime;

/// Removes every monthly partition (the migration made some around today): each test starts
/// from a log with only its default partition, then runs upkeep "in" its own month.
async fn reset(pool: &PgPool) {
    let names: Vec<String> = sqlx::query_scalar(
        "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'public.audit_events'::regclass and c.relname <> 'audit_events_default'",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    for n in names {
        sqlx::query(&format!("drop table {n}")).execute(pool).await.unwrap();
    }
}

async fn attached(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar(
        "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'public.audit_events'::regclass and c.relname <> 'audit_events_default' order by 1",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn pending(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("select tablename::text from pg_tables where schemaname = 'audit_pending' order by 1").fetch_all(pool).await.unwrap()
}

async fn open_alert(pool: &PgPool, kind: &str) -> bool {
    sqlx::query_scalar("select exists (select 1 from alerts where kind = $1 and resolved_at is null)").bind(kind).fetch_one(pool).await.unwrap()
}

async fn month(pool: &PgPool, name: &str, from: &str, to: &str) {
    sqlx::query(&format!("create table {name} partition of audit_events for values from ('{from}') to ('{to}')")).execute(pool).await.unwrap();
}

async fn upkeep(pool: &PgPool, now: OffsetDateTime) -> UpkeepReport {
    run(pool, now, 3).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn upkeep_creates_the_current_month_and_three_ahead_once(pool: PgPool) {
    reset(&pool).await;
    let r = upkeep(&pool, datetime!(2026-11-15 10:00 UTC)).await;
    assert_eq!(r.created, ["audit_events_2026_11", "audit_events_2026_12", "audit_events_2027_01", "audit_events_2027_02"]);
    assert_eq!((r.partitions_ahead, r.default_rows, r.stopped), (3, 0, false));
    // Idempotent: a second run in the same week changes nothing.
    let again = upkeep(&pool, datetime!(2026-11-16 10:00 UTC)).await;
    assert!(again.created.is_empty() && again.detached.is_empty(), "{again:?}");
    // Bounds are whole UTC months.
    let bound: String =
        sqlx::query_scalar("select pg_get_expr(relpartbound, oid) from pg_class where relname = 'audit_events_2027_02'").fetch_one(&pool).await.unwrap();
    assert!(bound.contains("2027-02-01 00:00:00") && bound.contains("2027-03-01 00:00:00"), "{bound}");
    // Each creation is an event.
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'upkeep.partition_create'").fetch_one(&pool).await.unwrap();
    assert_eq!(events, 4);
    // A new month extends the horizon by one.
    let next_month = upkeep(&pool, datetime!(2026-12-01 00:00 UTC)).await;
    assert_eq!(next_month.created, ["audit_events_2027_03"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn upkeep_crosses_the_year_end_and_a_leap_february(pool: PgPool) {
    reset(&pool).await;
    let r = upkeep(&pool, datetime!(2027-12-31 23:59:59 UTC)).await;
    assert_eq!(r.created, ["audit_events_2027_12", "audit_events_2028_01", "audit_events_2028_02", "audit_events_2028_03"]);
    let r = upkeep(&pool, datetime!(2028-02-29 12:00 UTC)).await;
    assert_eq!(r.created, ["audit_events_2028_04", "audit_events_2028_05"]);
    // 29 February lands in February's partition, 1 March in March's.
    for (at, part) in [("2028-02-29 23:59:59.999999+00", "audit_events_2028_02"), ("2028-03-01 00:00:00+00", "audit_events_2028_03")] {
        sqlx::query("insert into audit_events (occurred_at, kind) values ($1::timestamptz, 'auth.signin')").bind(at).execute(&pool).await.unwrap();
        let n: i64 = sqlx::query_scalar(&format!("select count(*) from {part} where occurred_at = $1::timestamptz")).bind(at).fetch_one(&pool).await.unwrap();
        assert_eq!(n, 1, "{at} in {part}");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn months_are_detached_at_exactly_25_months_and_never_deleted(pool: PgPool) {
    reset(&pool).await;
    month(&pool, "audit_events_2024_09", "2024-09-01 00:00+00", "2024-10-01 00:00+00").await;
    month(&pool, "audit_events_2024_10", "2024-10-01 00:00+00", "2024-11-01 00:00+00").await;
    month(&pool, "audit_events_2024_11", "2024-11-01 00:00+00", "2024-12-01 00:00+00").await;
    for at in ["2024-09-15", "2024-09-30 23:59:59", "2024-10-10", "2024-11-20"] {
        sqlx::query("insert into audit_events (occurred_at, kind, detail) values ($1::timestamptz, 'auth.signin', 'kept')")
            .bind(format!("{at}+00"))
            .execute(&pool)
            .await
            .unwrap();
    }
    // 2026-11-01: September 2024 ended exactly 25 months ago → detached. October 2024 ended 24
    // months ago → a promised month's neighbour, kept; November 2024 holds promised events.
    let r = upkeep(&pool, datetime!(2026-11-01 00:00 UTC)).await;
    assert_eq!(r.detached, ["audit_events_2024_09"], "{r:?}");
    assert_eq!(pending(&pool).await, ["audit_events_2024_09"]);
    let kept: i64 = sqlx::query_scalar("select count(*) from audit_pending.audit_events_2024_09").fetch_one(&pool).await.unwrap();
    assert_eq!(kept, 2, "detaching never deletes");
    // The month's range stays with the table (for the archive to prove its period).
    let check: String = sqlx::query_scalar(
        "select pg_get_constraintdef(c.oid) from pg_constraint c join pg_class t on t.oid = c.conrelid
         join pg_namespace n on n.oid = t.relnamespace where n.nspname = 'audit_pending' and t.relname = 'audit_events_2024_09' and c.conname = 'audit_month_bounds'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(check.contains("2024-09-01") && check.contains("2024-10-01"), "{check}");
    assert!(attached(&pool).await.contains(&"audit_events_2024_10".to_string()));
    // One second short of 25 months for October: still kept.
    let r = upkeep(&pool, datetime!(2026-11-30 23:59:59 UTC)).await;
    assert!(r.detached.is_empty(), "{r:?}");
    // A month later, October goes too; re-running changes nothing more.
    let r = upkeep(&pool, datetime!(2026-12-01 00:00 UTC)).await;
    assert_eq!(r.detached, ["audit_events_2024_10"]);
    assert!(upkeep(&pool, datetime!(2026-12-02 00:00 UTC)).await.detached.is_empty());
    assert_eq!(pending(&pool).await, ["audit_events_2024_09", "audit_events_2024_10"]);
    let events: Vec<String> =
        sqlx::query_scalar("select subject_id from audit_events where kind = 'upkeep.partition_detach' order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(events, ["2024-09", "2024-10"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_missing_future_month_stops_upkeep_with_an_alert_and_is_not_recreated(pool: PgPool) {
    reset(&pool).await;
    upkeep(&pool, datetime!(2026-11-10 00:00 UTC)).await;
    month(&pool, "audit_events_2024_01", "2024-01-01 00:00+00", "2024-02-01 00:00+00").await;
    // Someone dropped a month ahead (below the horizon).
    sqlx::query("drop table audit_events_2027_01").execute(&pool).await.unwrap();
    let r = upkeep(&pool, datetime!(2026-11-17 00:00 UTC)).await;
    assert!(r.stopped && r.holes == ["2027-01"], "{r:?}");
    assert_eq!(r.partitions_ahead, 2);
    assert!(r.detached.is_empty(), "nothing is detached while upkeep is unhealthy");
    assert!(!attached(&pool).await.contains(&"audit_events_2027_01".to_string()), "a hole is not silently recreated");
    assert!(open_alert(&pool, "audit.partitions_missing").await);
    // A person fixes it: the next run is healthy, detaches the old month and clears the alert.
    month(&pool, "audit_events_2027_01", "2027-01-01 00:00+00", "2027-02-01 00:00+00").await;
    let r = upkeep(&pool, datetime!(2026-11-24 00:00 UTC)).await;
    assert!(!r.stopped, "{r:?}");
    assert_eq!(r.detached, ["audit_events_2024_01"]);
    assert!(!open_alert(&pool, "audit.partitions_missing").await);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn rows_in_the_default_partition_are_counted_exactly_and_alerted(pool: PgPool) {
    reset(&pool).await;
    let r = upkeep(&pool, datetime!(2026-11-10 00:00 UTC)).await;
    assert_eq!(r.default_rows, 0);
    assert!(!open_alert(&pool, "audit.default_rows").await);
    // Events in a month without a partition land in the default partition.
    for _ in 0..3 {
        sqlx::query("insert into audit_events (occurred_at, kind) values ('2031-05-05 00:00+00', 'auth.signin')").execute(&pool).await.unwrap();
    }
    let r = upkeep(&pool, datetime!(2026-11-17 00:00 UTC)).await;
    assert_eq!(r.default_rows, 3, "count(*), not statistics");
    assert!(open_alert(&pool, "audit.default_rows").await);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_unexpected_partition_is_left_alone_and_reported(pool: PgPool) {
    reset(&pool).await;
    // Old enough to detach, but not named like Ebb's months; and a properly named one whose
    // bounds are two months.
    month(&pool, "audit_events_legacy", "2020-01-01 00:00+00", "2020-02-01 00:00+00").await;
    month(&pool, "audit_events_2020_03", "2020-03-01 00:00+00", "2020-05-01 00:00+00").await;
    let r = upkeep(&pool, datetime!(2026-11-10 00:00 UTC)).await;
    assert_eq!(r.untouched, ["audit_events_2020_03", "audit_events_legacy"]);
    assert!(r.detached.is_empty());
    assert!(pending(&pool).await.is_empty());
    assert!(open_alert(&pool, "audit.unexpected_partition").await);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_event_rolls_back_with_its_change(pool: PgPool) {
    let mut tx = pool.begin().await.unwrap();
    sqlx::query("update settings set value = '30' where key = 'retention_days'").execute(&mut *tx).await.unwrap();
    record(&mut tx, &Actor::system(), AuditKind::RetentionChange, Some(("days", "30")), None).await.unwrap();
    tx.rollback().await.unwrap();
    let n: i64 = sqlx::query_scalar("select count(*) from audit_events").fetch_one(&pool).await.unwrap();
    assert_eq!(n, 0, "a change that rolls back leaves no event");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_existing_admin_actions_were_moved_into_the_log(pool: PgPool) {
    // The migration dropped admin_actions after copying it; new writes go to audit_events.
    let exists: bool = sqlx::query_scalar("select to_regclass('public.admin_actions') is not null").fetch_one(&pool).await.unwrap();
    assert!(!exists);
    let admin = uuid::Uuid::new_v4();
    sqlx::query("insert into admins (id, name) values ($1, 'Ana')").bind(admin).execute(&pool).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    record(&mut conn, &Actor { admin: Some(admin), client_hash: Some("abc".into()) }, AuditKind::PasskeyRemove, Some(("passkey", "7")), Some("Phone"))
        .await
        .unwrap();
    sqlx::query("update admins set name = 'Ana B.' where id = $1").bind(admin).execute(&pool).await.unwrap();
    let (name, kind): (String, String) = sqlx::query_as("select admin_name, kind from audit_events").fetch_one(&pool).await.unwrap();
    assert_eq!((name.as_str(), kind.as_str()), ("Ana", "passkey.remove"), "the name as it was");
}

#[sqlx::test(migrations = false)]
async fn the_migration_moves_earlier_admin_actions_into_the_log(pool: PgPool) {
    // The schema as it was before the audit log, with admin actions recorded in it.
    let earlier = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.as_str() < "20261130000006" {
            std::fs::copy(&path, earlier.path().join(&name)).unwrap();
        }
    }
    sqlx::migrate::Migrator::new(earlier.path()).await.unwrap().run(&pool).await.unwrap();
    let admin = uuid::Uuid::new_v4();
    sqlx::query("insert into admins (id, name) values ($1, 'Ana')").bind(admin).execute(&pool).await.unwrap();
    sqlx::query(
        "insert into admin_actions (admin_id, action, subject, occurred_at) values
         ($1, 'share.create', '12', now() - interval '3 months'), ($1, 'passkey.remove', 'p-1', now() - interval '1 day'), (null, 'invite.create', 'i-1', now())",
    )
    .bind(admin)
    .execute(&pool)
    .await
    .unwrap();
    server::MIGRATOR.run(&pool).await.unwrap();
    let rows: Vec<String> =
        sqlx::query_scalar("select concat_ws('|', kind, coalesce(admin_name, '-'), subject_type, subject_id) from audit_events order by occurred_at")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(rows, ["share.create|Ana|share|12", "passkey.remove|Ana|passkey|p-1", "invite.create|-|invite|i-1"]);
    // The oldest one has its own month's partition, not the default one.
    let in_default: i64 = sqlx::query_scalar("select count(*) from audit_events_default").fetch_one(&pool).await.unwrap();
    assert_eq!(in_default, 0);
}

/// The archive finds a detached month's period whatever the database's time zone: its bounds are
/// read in UTC even on a connection outside a transaction (the archive and the retention report
/// read them so), where `set local` alone would change nothing.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_detached_month_keeps_its_period_in_a_database_set_to_another_time_zone(pool: PgPool) {
    reset(&pool).await;
    month(&pool, "audit_events_2024_09", "2024-09-01 00:00+00", "2024-10-01 00:00+00").await;
    upkeep(&pool, datetime!(2026-11-01 00:00 UTC)).await;
    assert_eq!(pending(&pool).await, ["audit_events_2024_09"]);
    let mut conn = pool.acquire().await.unwrap();
    sqlx::query("set timezone = 'Asia/Tokyo'").execute(&mut *conn).await.unwrap();
    let tables = app::audit::archive::pending(&mut conn).await.unwrap();
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].period, Ok(time::macros::date!(2024 - 09 - 01)), "{:?}", tables[0]);
    let parts = app::audit::upkeep::partitions(&mut conn).await.unwrap();
    assert!(!parts.is_empty() && parts.iter().all(|p| !matches!(p.bounds, Some(app::audit::upkeep::Bounds::Other))), "{parts:?}");
    // The connection's own time zone is left as it was.
    let tz: String = sqlx::query_scalar("show timezone").fetch_one(&mut *conn).await.unwrap();
    assert_eq!(tz, "Asia/Tokyo");
}

/// Creating a month fails when the default partition already holds rows of it (PostgreSQL
/// refuses the new partition). That run still raises upkeep's own alerts — partitions missing,
/// rows in the default partition — at once, not one or two weekly runs later.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_month_that_cannot_be_created_still_raises_upkeeps_alerts_on_the_first_run(pool: PgPool) {
    reset(&pool).await;
    // Events of December land in the default partition before its month exists.
    sqlx::query("insert into audit_events (occurred_at, kind) values ('2026-12-05 00:00+00', 'auth.signin')").execute(&pool).await.unwrap();
    let err = run(&pool, datetime!(2026-11-15 10:00 UTC), 3).await.expect_err("December cannot be created over the default partition's rows");
    assert!(err.to_string().contains("default partition"), "{err}");
    assert!(open_alert(&pool, "audit.partitions_missing").await, "too few months ahead: alerted on this run");
    assert!(open_alert(&pool, "audit.default_rows").await, "the rows in the default partition: alerted on this run");
    assert!(attached(&pool).await.is_empty(), "nothing half-made");
}

/// A detached month's CHECK is added without a scan and validated while only that month is
/// locked: an event written meanwhile into the current month is not held up by the scan.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn detaching_a_month_validates_its_bounds_without_locking_the_log(pool: PgPool) {
    reset(&pool).await;
    month(&pool, "audit_events_2024_09", "2024-09-01 00:00+00", "2024-10-01 00:00+00").await;
    sqlx::query("insert into audit_events (occurred_at, kind) select '2024-09-01 00:00+00'::timestamptz + i * interval '1 second', 'auth.signin' from generate_series(1, 1000) i")
        .execute(&pool)
        .await
        .unwrap();
    let r = upkeep(&pool, datetime!(2026-11-15 10:00 UTC)).await;
    assert_eq!(r.detached, ["audit_events_2024_09"]);
    assert_eq!(pending(&pool).await, ["audit_events_2024_09"]);
    let validated: bool = sqlx::query_scalar(
        "select convalidated from pg_constraint where conrelid = 'audit_pending.audit_events_2024_09'::regclass and conname = 'audit_month_bounds'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(validated, "the archive needs a validated bounds constraint");
    // Repeating a half-done detach (the CHECK added, the process killed) finishes it.
    month(&pool, "audit_events_2024_08", "2024-08-01 00:00+00", "2024-09-01 00:00+00").await;
    sqlx::query("alter table audit_events_2024_08 add constraint audit_month_bounds check (occurred_at >= '2024-08-01 00:00+00' and occurred_at < '2024-09-01 00:00+00') not valid")
        .execute(&pool)
        .await
        .unwrap();
    let r = upkeep(&pool, datetime!(2026-11-16 10:00 UTC)).await;
    assert_eq!(r.detached, ["audit_events_2024_08"]);
}

/// One list of kinds: the Rust list is the database's table (`audit_kinds`), which a migration
/// adds a kind to with one row; a kind in one and not the other fails here. The database refuses
/// a kind it does not know.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_kinds_of_events_are_one_list(pool: PgPool) {
    let stored: Vec<String> = sqlx::query_scalar("select kind from audit_kinds order by kind").fetch_all(&pool).await.unwrap();
    let mut ours: Vec<String> = AuditKind::ALL.iter().map(|k| k.as_str().to_string()).collect();
    ours.sort();
    assert_eq!(ours, stored);
    let refused = sqlx::query("insert into audit_events (kind) values ('made.up')").execute(&pool).await.unwrap_err();
    assert!(refused.to_string().contains("audit_events_kind_fkey"), "{refused}");
}
