//! The tamper-evident audit trail (issue 31): every event sealed once into its month's chain,
//! signed digests in the store, and a verification that names the first broken place — in the
//! database, in an archived object, among the digests — agreed with by an independent verifier
//! (scripts/audit-verify.py, which shares no code with Ebb).

use std::io::{Read, Write};
use std::time::Duration;

use app::audit::chain::{self, digest, seal, verify};
use app::audit::AuditKind;
use app::kernel::audit::{record, Actor};
use sqlx::PgPool;

use crate::archive::{month_back, run_archive};
use crate::helpers::*;

const LATE: Duration = Duration::from_secs(3600);

/// `n` events, each in its own transaction (as Ebb writes them). Returns their ids, in order.
async fn events(pool: &PgPool, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let mut tx = pool.begin().await.unwrap();
        record(&mut tx, &Actor::system(), AuditKind::ShareCreate, Some(("share", &format!("s{i}"))), Some(&format!("event {i}, \"quoted\""))).await.unwrap();
        ids.push(sqlx::query_scalar::<_, i64>("select max(id) from audit_events").fetch_one(&mut *tx).await.unwrap());
        tx.commit().await.unwrap();
    }
    ids
}

/// Seals everything waiting (a transaction of this database still open holds sealing back: it
/// is waited for, up to 30 s).
pub(crate) async fn seal_now(pool: &PgPool) -> seal::Batch {
    let mut total = seal::Batch::default();
    for _ in 0..300 {
        let b = seal::seal_all(pool, 1000, LATE, std::time::Instant::now() + Duration::from_secs(60)).await.unwrap();
        total.sealed += b.sealed;
        total.refused += b.refused;
        let waiting: i64 =
            sqlx::query_scalar("select count(*) from audit_events e, audit_seal_cursor c where (e.tx, e.id) > (c.tx, c.id)").fetch_one(pool).await.unwrap();
        if waiting == 0 {
            return total;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("events stayed unsealed for 30 s")
}

async fn check(app: &TestApp, archive: bool) -> verify::Report {
    verify::in_database(&app.state.pool, &*app.state.blobs, archive).await.unwrap()
}

/// A trail of `n` sealed events with a digest; returns their ids.
async fn sealed_trail(app: &TestApp, n: usize) -> Vec<i64> {
    let ids = events(&app.state.pool, n).await;
    assert_eq!(seal_now(&app.state.pool).await.sealed as usize, n);
    digest::write(&app.state, digest::Reason::Asked, true).await.unwrap().expect("a digest");
    let report = check(app, false).await;
    assert!(report.ok(), "{report:?}");
    ids
}

fn first(report: &verify::Report) -> &verify::Problem {
    report.problems.first().unwrap_or_else(|| panic!("the break was not detected: {report:?}"))
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_event_is_sealed_once_in_order_and_the_trail_verifies(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 30).await;
    // Places 1..n in (tx, id) order, each once; the chain head is the last event's hash.
    let rows: Vec<(i64, i64)> = sqlx::query_as("select id, seq from audit_events where seq is not null order by seq").fetch_all(&pool).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), ids);
    assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), (1..=30).collect::<Vec<_>>());
    // Sealing again is a no-op: nothing re-hashed.
    let before: Vec<Vec<u8>> = sqlx::query_scalar("select hash from audit_events order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(seal_now(&pool).await.sealed, 0);
    let after: Vec<Vec<u8>> = sqlx::query_scalar("select hash from audit_events order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(before, after);
    // The digest is in the store, signed by the published key, and the key is served.
    let keys: serde_json::Value = app.client.get(app.url("/audit/keys.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(keys["keys"].as_array().unwrap().len(), 1);
    let stored = app.read_stored("audit-digests/000000000001.json").await.expect("digest 1 stored");
    let trusted: Vec<chain::keys::PublicKey> = serde_json::from_value(keys["keys"].clone()).unwrap();
    let checked = digest::check(&stored, &trusted).unwrap();
    assert_eq!(checked.body.months.len(), 1);
    assert_eq!(checked.body.months[0].count, 30);
    // A digest is never overwritten: the next one is number 2, linked to 1.
    events(&pool, 2).await;
    seal_now(&pool).await;
    assert_eq!(digest::write(&app.state, digest::Reason::Asked, true).await.unwrap(), Some(2));
    let two = digest::check(&app.read_stored("audit-digests/000000000002.json").await.unwrap(), &trusted).unwrap();
    assert_eq!(two.body.previous, Some(hex::encode(checked.sha256)));
    assert_eq!(app.read_stored("audit-digests/000000000001.json").await.unwrap(), stored);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_changed_column_is_named_by_its_event(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 10).await;
    sqlx::query("update audit_events set admin_name = 'Mallory' where id = $1").bind(ids[4]).execute(&pool).await.unwrap();
    let report = check(&app, false).await;
    let p = first(&report);
    assert_eq!((p.event, p.source.as_str()), (Some(ids[4]), "database"), "{p:?}");
    assert!(p.what.contains("does not match its hash"), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_deleted_event_is_named_by_the_gap_it_leaves(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 10).await;
    sqlx::query("delete from audit_events where id = $1").bind(ids[3]).execute(&pool).await.unwrap();
    let p = first(&check(&app, false).await).clone();
    assert_eq!(p.event, Some(ids[4]), "{p:?}");
    assert!(p.what.contains("missing") && p.what.contains(&format!("after event {}", ids[2])), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_inserted_event_is_named_whether_forged_into_the_chain_or_dated_into_the_past(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 10).await;
    // Forged into place 3, with a hash of its own.
    let forged: i64 = sqlx::query_scalar(
        "insert into audit_events (occurred_at, kind, subject_type, subject_id, seq, hash)
         select occurred_at, 'share.revoke', 'share', 'forged', 3, sha256('x') from audit_events where id = $1 returning id",
    )
    .bind(ids[2])
    .fetch_one(&pool)
    .await
    .unwrap();
    let p = first(&check(&app, false).await).clone();
    assert_eq!(p.event, Some(forged), "{p:?}");
    sqlx::query("delete from audit_events where id = $1").bind(forged).execute(&pool).await.unwrap();
    assert!(check(&app, false).await.ok());
    // Unsealed, dated an hour and more before the events around it: the sealer refuses it.
    let past: i64 = sqlx::query_scalar(
        "insert into audit_events (occurred_at, kind, subject_type, subject_id) values (now() - interval '3 hours', 'auth.signin', 'auth', 'backdated') returning id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let sealed = seal_now(&pool).await;
    assert_eq!((sealed.sealed, sealed.refused), (0, 1));
    let p = first(&check(&app, false).await).clone();
    assert_eq!(p.event, Some(past), "{p:?}");
    assert!(p.what.contains("not in any chain"), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_events_swapped_are_named_at_the_first_place_that_changed(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 10).await;
    // Their places (and hashes) exchanged: the order of the chain changed.
    sqlx::query(
        "update audit_events e set seq = o.seq, hash = o.hash from audit_events o
         where (e.id, o.id) in (($1, $2), ($2, $1))",
    )
    .bind(ids[5])
    .bind(ids[6])
    .execute(&pool)
    .await
    .unwrap();
    let p = first(&check(&app, false).await).clone();
    assert_eq!(p.event, Some(ids[6]), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_newest_events_removed_are_found_by_the_head_and_the_digest(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 10).await;
    sqlx::query("delete from audit_events where id >= $1").bind(ids[7]).execute(&pool).await.unwrap();
    let report = check(&app, false).await;
    let p = first(&report);
    assert!(p.what.contains("records 10 events") && p.what.contains(&format!("the last is event {}", ids[6])), "{p:?}");
    assert_eq!(p.digest, Some(1), "the digest that saw them is named: {p:?}");
    // The head row rewritten to match as well: the signed digest still knows.
    sqlx::query("update audit_chains set seq = 7, digested_seq = 7, last_id = $1, head = (select hash from audit_events where id = $1)")
        .bind(ids[6])
        .execute(&pool)
        .await
        .unwrap();
    let p = first(&check(&app, false).await).clone();
    assert_eq!(p.digest, Some(1), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_chain_rebuilt_after_a_change_is_caught_by_the_signed_digest(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = sealed_trail(&app, 6).await;
    chain::tlog::checkpoint(&app.state).await.unwrap();
    // Someone with the database changes an event and recomputes every hash after it (and the
    // head): the chain is consistent again, but not the one the digest signed.
    sqlx::query("update audit_events set detail = 'nothing happened' where id = $1").bind(ids[2]).execute(&pool).await.unwrap();
    let rows: Vec<chain::ChainRow> = sqlx::query_as(
        "select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash, seq, hash from audit_events order by seq",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut prev = chain::GENESIS;
    let mut linker = chain::Linker::default();
    for r in &rows {
        prev = linker.link(&prev, r, r.seq.unwrap());
        sqlx::query("update audit_events set hash = $2 where id = $1").bind(r.event.id).bind(prev.to_vec()).execute(&pool).await.unwrap();
    }
    sqlx::query("update audit_chains set head = $1").bind(prev.to_vec()).execute(&pool).await.unwrap();
    let report = check(&app, false).await;
    // Named at the changed event (the transparency log recorded each hash when it was sealed)…
    let p = first(&report).clone();
    assert_eq!((p.event, p.source.as_str()), (Some(ids[2]), "database"), "{p:?}");
    assert!(p.what.contains("the transparency log recorded another hash"), "{p:?}");
    // …and where the signed digest's head no longer matches.
    assert!(report.problems.iter().any(|p| (p.digest, p.event) == (Some(1), Some(ids[5])) && p.what.contains("not the one digest 1 signed")), "{report:#?}");
    // A failed check through the job raises the critical alert naming the place.
    let report = chain::job::run(&app.state, false, &Actor::system()).await.unwrap();
    assert!(!report.ok());
    let alert: String =
        sqlx::query_scalar("select message from alerts where kind = 'audit.chain_broken' and resolved_at is null").fetch_one(&pool).await.unwrap();
    assert!(alert.contains(&format!("event {}", ids[2])), "{alert}");
}

/// Unpacks an archived object's CSV.
fn unpack(packed: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(packed).read_to_string(&mut text).unwrap();
    text
}

fn pack(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// The independent verifier's verdict on the store's folder: (ok, first event named).
pub(crate) fn python_verdict(app: &TestApp) -> (bool, Option<i64>) {
    let keys = app.storage.path().join("keys.json");
    let python = if std::path::Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/audit-verify.py");
    let out = std::process::Command::new(python)
        .args([script, "--store", app.storage.path().to_str().unwrap(), "--json"])
        .args(if keys.exists() { vec!["--keys".to_string(), keys.display().to_string()] } else { vec![] })
        .output()
        .unwrap();
    assert!(out.status.code() == Some(0) || out.status.code() == Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["ok"].as_bool().unwrap(), v["first"]["event"].as_i64())
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn archived_months_verify_offline_and_a_changed_or_rebuilt_object_is_caught(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    // A month sealed while it was current, then detached and archived as in production.
    let old = month_back(27);
    let table = pending_month_sealed(&pool, old, 2_500).await;
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert!(!crate::archive::table_exists(&pool, &table).await);
    // The archive's digest lists the object; everything verifies, in the database and offline,
    // and the independent verifier agrees.
    let report = check(&app, true).await;
    assert!(report.ok() && report.archived == 1 && report.events >= 2_500, "{report:?}");
    let offline = verify::offline(&*app.raw, None).await.unwrap();
    assert!(offline.ok() && offline.events == 2_500, "{offline:?}");
    let keys = app.client.get(app.url("/audit/keys.json")).send().await.unwrap().bytes().await.unwrap();
    std::fs::write(app.storage.path().join("keys.json"), &keys).unwrap();
    assert_eq!(python_verdict(&app), (true, None));

    // One value changed in the object: both verifiers name the same event.
    let key = app::audit::archive::key_of(old);
    let original = app.read_stored(&key).await.unwrap();
    let text = unpack(&original);
    let line = text.lines().nth(1234).unwrap().to_string();
    let id: i64 = line.split(',').next().unwrap().parse().unwrap();
    let changed = text.replacen(&line, &line.replacen("\"share.create\"", "\"share.revoke\"", 1), 1);
    app.write_stored(&key, &pack(&changed)).await;
    let p = first(&verify::offline(&*app.raw, None).await.unwrap()).clone();
    assert_eq!((p.event, p.source.as_str()), (Some(id), "archive"), "{p:?}");
    assert_eq!(python_verdict(&app), (false, Some(id)));
    let report = check(&app, true).await;
    assert_eq!(first(&report).event, Some(id), "{report:#?}");
    // The daily step reads one archived month in turn (no --archive asked): it finds it too.
    let job = app.state.jobs().get(chain::job::JOB).unwrap();
    let app::jobs::RunOutcome::Ran(run) = app::jobs::run_job(&app.state, job, app::jobs::Trigger::Cli, true).await.unwrap() else { panic!("ran") };
    assert_ne!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    let details: String =
        sqlx::query_scalar("select details from alerts where kind = 'audit.chain_broken' and resolved_at is null").fetch_one(&pool).await.unwrap();
    assert!(details.contains(&format!("event {id}")), "{details}");

    // The object rebuilt, internally consistent: the signed digest catches it.
    let rebuilt = rebuild_chain(&changed);
    app.write_stored(&key, &pack(&rebuilt)).await;
    let p = first(&verify::offline(&*app.raw, None).await.unwrap()).clone();
    assert_eq!((p.digest.is_some(), p.month.as_deref()), (true, Some(&app::audit::archive::period_label(old)[..])), "{p:?}");
    assert!(!python_verdict(&app).0);
    app.write_stored(&key, &original).await;
    assert!(verify::offline(&*app.raw, None).await.unwrap().ok());
}

/// A month from before the chain (none of its events ever sealed) is archived as such: an empty
/// chain (no events, the genesis head) recorded in the ledger and in its signed digest. Every
/// verifier reads it the same way — the database check, `--offline` and the independent verifier
/// all pass it — and an edit to its object, which has no chain to walk, is caught by all three
/// through the digest's checksum.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_month_from_before_the_chain_is_archived_as_such_and_every_verifier_agrees(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let old = month_back(27);
    let table = crate::archive::pending_month(&pool, old, 300).await;
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert!(!crate::archive::table_exists(&pool, &table).await);
    let (count, head): (i64, Vec<u8>) =
        sqlx::query_as("select chain_count, chain_head from audit_partition_archives where period = $1").bind(old).fetch_one(&pool).await.unwrap();
    assert_eq!((count, head), (0, chain::GENESIS.to_vec()), "recorded with an empty chain");
    // The newest digest (the archive's) records the month with its object and its empty chain.
    let digest_key: String = sqlx::query_scalar("select object_key from audit_digests order by number desc limit 1").fetch_one(&pool).await.unwrap();
    let envelope: serde_json::Value = serde_json::from_slice(&app.read_stored(&digest_key).await.unwrap()).unwrap();
    let body: serde_json::Value = serde_json::from_str(envelope["body"].as_str().unwrap()).unwrap();
    let label = app::audit::archive::period_label(old);
    let signed =
        body["months"].as_array().unwrap().iter().find(|m| m["month"] == label.as_str() && m["archived"].is_object()).expect("the month in the digest");
    assert_eq!((signed["count"].as_i64(), signed["head"].as_str()), (Some(0), Some(&hex::encode(chain::GENESIS)[..])), "{signed}");

    let report = check(&app, true).await;
    assert!(report.ok() && report.archived == 1, "{report:?}");
    assert!(verify::offline(&*app.raw, None).await.unwrap().ok());
    let keys = app.client.get(app.url("/audit/keys.json")).send().await.unwrap().bytes().await.unwrap();
    std::fs::write(app.storage.path().join("keys.json"), &keys).unwrap();
    assert_eq!(python_verdict(&app), (true, None));

    // One value changed in the object: no chain to name an event, the digest's checksum fails it.
    let key = app::audit::archive::key_of(old);
    let text = unpack(&app.read_stored(&key).await.unwrap());
    let line = text.lines().nth(100).unwrap().to_string();
    let changed = text.replacen(&line, &line.replacen("\"share.create\"", "\"share.revoke\"", 1), 1);
    assert_ne!(changed, text);
    app.write_stored(&key, &pack(&changed)).await;
    let offline = verify::offline(&*app.raw, None).await.unwrap();
    assert!(!offline.ok(), "{offline:?}");
    assert!(!python_verdict(&app).0);
    let report = check(&app, true).await;
    assert!(!report.ok(), "{report:?}");
}

/// Recomputes every hash of an archived month's CSV (the one `seq`/`hash` columns), as a forger
/// with the format would.
fn rebuild_chain(text: &str) -> String {
    let mut out = String::new();
    let mut prev = chain::GENESIS;
    let mut linker = chain::Linker::default();
    for (i, line) in text.split("\r\n").enumerate() {
        if line.is_empty() {
            continue;
        }
        if i == 0 {
            out.push_str(line);
            out.push_str("\r\n");
            continue;
        }
        // The rows of the test month have no commas or line breaks inside their quoted fields
        // except the detail's; split on the last three commas (seq, prev_hash, hash).
        let mut parts = line.rsplitn(4, ',');
        let (_, prev_hex, seq, head) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let fields = parse_fields(head);
        let f = chain::encode::Fields {
            id: fields[0].as_deref().unwrap(),
            occurred_at: fields[1].as_deref().unwrap(),
            kind: fields[2].as_deref().unwrap(),
            admin_id: fields[3].as_deref(),
            admin_name: fields[4].as_deref(),
            subject_type: fields[5].as_deref(),
            subject_id: fields[6].as_deref(),
            detail: fields[7].as_deref(),
            client_hash: fields[8].as_deref(),
            seq,
        };
        prev = linker.link_fields(&prev, &f);
        out.push_str(&format!("{head},{seq},{prev_hex},{}\r\n", hex::encode(prev)));
    }
    out
}

/// The nine leading fields of an archive line (quoted text, unquoted empty = NULL).
fn parse_fields(s: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut v = String::new();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        v.push('"');
                    } else {
                        break;
                    }
                } else {
                    v.push(c);
                }
            }
            out.push(Some(v));
        } else {
            let mut v = String::new();
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                v.push(c);
                chars.next();
            }
            out.push((!v.is_empty()).then_some(v));
        }
        if chars.next().is_none() {
            return out;
        }
    }
}

/// [`pending_month`], with the month's events sealed before upkeep detaches it (they were
/// written while the month was current). Their detail has no line break (see [`rebuild_chain`]).
async fn pending_month_sealed(pool: &PgPool, period: time::Date, rows: i64) -> String {
    let name = format!("audit_events_{:04}_{:02}", period.year(), period.month() as u8);
    let next = app::audit::upkeep::add_months(period.midnight().assume_utc(), 1);
    sqlx::query(&format!("create table {name} partition of audit_events for values from ('{} 00:00:00+00') to ('{}')", period, next.date()))
        .execute(pool)
        .await
        .unwrap();
    seal_now(pool).await;
    sqlx::query(
        "insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
         select $1::timestamptz + (i * interval '1 second'), 'share.create', case when i % 3 = 0 then gen_random_uuid() end,
                case i % 5 when 0 then null when 1 then '' else 'Ann' end, 'share', 's' || i,
                case i % 4 when 0 then '=HYPERLINK(\"x\")' when 1 then null when 2 then '' else 'said \"hi\", twice' end,
                case when i % 2 = 0 then md5(i::text) end
         from generate_series(1, $2) i",
    )
    .bind(period.midnight().assume_utc())
    .bind(rows)
    .execute(pool)
    .await
    .unwrap();
    // Written when the month was current: nothing was dated before it then.
    sqlx::query("update audit_seal_cursor set max_at = null").execute(pool).await.unwrap();
    let sealed = seal_now(pool).await;
    assert_eq!(sealed.refused, 0);
    let report = app::audit::upkeep::run(pool, time::OffsetDateTime::now_utc(), 3).await.unwrap();
    assert!(report.detached.contains(&name), "{report:?}");
    name
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_deleted_digest_is_found_by_the_next_ones_back_link_and_the_newest_by_the_database(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    for _ in 0..3 {
        sealed_trail(&app, 2).await;
    }
    app.remove_stored("audit-digests/000000000002.json").await;
    let report = verify::offline(&*app.raw, None).await.unwrap();
    let p = first(&report);
    assert_eq!(p.digest, Some(2), "{p:?}");
    assert!(!python_verdict(&app).0);
    // The newest one removed: the database remembers it was written.
    app.remove_stored("audit-digests/000000000003.json").await;
    let report = check(&app, false).await;
    assert!(report.problems.iter().any(|p| p.digest == Some(3) && p.what.contains("missing from the store")), "{report:?}");
}

/// Two instances writing events concurrently, committing out of id order, while both seal: the
/// chain verifies and every event has exactly one place.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_instances_writing_while_sealing_seal_every_event_exactly_once(pool: PgPool) {
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    // First, one by one: an event whose transaction is still open when a later one commits and
    // sealing runs. Sealing must not pass it (it would never get a place).
    let mut early = a.state.pool.begin().await.unwrap();
    record(&mut early, &Actor::system(), AuditKind::ShareDownload, Some(("share", "early")), None).await.unwrap();
    let mut late = b.state.pool.begin().await.unwrap();
    record(&mut late, &Actor::system(), AuditKind::ShareDownload, Some(("share", "late")), None).await.unwrap();
    late.commit().await.unwrap();
    seal::seal_batch(&pool, 100, LATE).await.unwrap();
    early.commit().await.unwrap();
    seal_now(&pool).await;
    let unsealed: Vec<String> = sqlx::query_scalar("select subject_id from audit_events where seq is null").fetch_all(&pool).await.unwrap();
    assert!(unsealed.is_empty(), "left out of the chain for good: {unsealed:?}");
    let writers: Vec<_> = (0..100)
        .map(|i| {
            let pool = if i % 2 == 0 { a.state.pool.clone() } else { b.state.pool.clone() };
            tokio::spawn(async move {
                let mut tx = pool.begin().await.unwrap();
                record(&mut tx, &Actor::system(), AuditKind::ShareDownload, Some(("share", &format!("c{i}"))), None).await.unwrap();
                // Held open for a while: later ids commit first.
                sqlx::query("select pg_sleep($1)").bind(f64::from((100 - i) % 7) * 0.02).execute(&mut *tx).await.unwrap();
                tx.commit().await.unwrap();
            })
        })
        .collect();
    let sealers: Vec<_> = [a.state.pool.clone(), b.state.pool.clone()]
        .into_iter()
        .map(|pool| {
            tokio::spawn(async move {
                for _ in 0..40 {
                    seal::seal_batch(&pool, 7, LATE).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    for s in sealers {
        s.await.unwrap();
    }
    seal_now(&pool).await;
    let (total, sealed, places): (i64, i64, i64) =
        sqlx::query_as("select count(*), count(seq), count(distinct (date_trunc('month', occurred_at at time zone 'UTC'), seq)) from audit_events")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((sealed, places), (total, total), "every event sealed, each place once");
    assert!(total >= 100);
    digest::write(&a.state, digest::Reason::Asked, true).await.unwrap();
    let report = check(&b, false).await;
    assert!(report.ok() && report.events == total as u64, "{report:?}");
}

#[cfg(feature = "failpoints")]
mod killed {
    //! SIGKILL while sealing and while writing a digest: the next run finishes; nothing is sealed
    //! twice, no digest overwritten.
    use super::*;
    use crate::archive::crash;

    /// Runs `ebb audit digest` paused at `point` and kills it there — only once `reached` says
    /// the point was reached (the test fails if it is not within 30 s: a kill elsewhere proves
    /// nothing).
    async fn kill_at<F: std::future::Future<Output = bool>>(pool: &PgPool, app: &TestApp, point: &str, reached: impl Fn() -> F) {
        let failpoints = format!("{point}=sleep(120000)");
        let mut child = crash::ebb(pool, app.storage.path(), &["audit", "digest"], &[("FAILPOINTS", &failpoints)]).spawn().unwrap();
        let start = std::time::Instant::now();
        let reached_it = loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            if reached().await {
                break true;
            }
            if start.elapsed() > Duration::from_secs(30) {
                break false;
            }
        };
        let _ = child.kill();
        child.wait().unwrap();
        assert!(reached_it, "{point} was not reached within 30 s (or ebb ended before it)");
    }

    #[sqlx::test(migrator = "server::MIGRATOR")]
    async fn killed_while_sealing_the_next_run_seals_each_event_once(pool: PgPool) {
        let app = spawn_app(pool.clone()).await;
        events(&pool, 12).await;
        // Paused inside its batch: its transaction has updated the rows (and grown the log) and
        // waits, uncommitted.
        let watcher = pool.clone();
        kill_at(&pool, &app, "audit-seal-batch", move || {
            let watcher = watcher.clone();
            async move {
                sqlx::query_scalar::<_, bool>(
                    // The batch's last statement before the fault point: the log's head moved.
                    "select exists (select 1 from pg_stat_activity where datname = current_database() and state = 'idle in transaction'
                                    and query like 'update audit_tlog_head set size%')",
                )
                .fetch_one(&watcher)
                .await
                .unwrap()
            }
        })
        .await;
        let sealed: i64 = sqlx::query_scalar("select count(seq) from audit_events").fetch_one(&pool).await.unwrap();
        assert_eq!(sealed, 0, "the killed batch left nothing");
        assert_eq!(seal_now(&pool).await.sealed, 12);
        let places: Vec<i64> = sqlx::query_scalar("select seq from audit_events order by seq").fetch_all(&pool).await.unwrap();
        assert_eq!(places, (1..=12).collect::<Vec<_>>());
        digest::write(&app.state, digest::Reason::Asked, true).await.unwrap();
        assert!(check(&app, false).await.ok());
    }

    #[sqlx::test(migrator = "server::MIGRATOR")]
    async fn killed_after_writing_a_digest_the_next_run_records_it_and_overwrites_nothing(pool: PgPool) {
        let app = spawn_app(pool.clone()).await;
        events(&pool, 5).await;
        let path = app.storage.path().join("audit-digests/000000000001.json");
        kill_at(&pool, &app, "audit-digest-after-put", || std::future::ready(path.exists())).await;
        let written = std::fs::read(&path).expect("the object was written before the kill");
        let rows: i64 = sqlx::query_scalar("select count(*) from audit_digests").fetch_one(&pool).await.unwrap();
        assert_eq!(rows, 0, "killed before it was recorded");
        // The next digest run finds it, checks it and records it — the same bytes.
        assert_eq!(digest::write(&app.state, digest::Reason::Scheduled, false).await.unwrap(), Some(1));
        assert_eq!(std::fs::read(&path).unwrap(), written);
        events(&pool, 1).await;
        seal_now(&pool).await;
        assert_eq!(digest::write(&app.state, digest::Reason::Asked, true).await.unwrap(), Some(2));
        let report = check(&app, false).await;
        assert!(report.ok() && report.digests == 2, "{report:?}");
    }
}
