//! The blob store's contract, the same on both backends (a local folder; S3 on a real garage):
//! streamed puts with size and CRC32C, head read back from the store, multipart uploads that
//! leave nothing when refused or abandoned, idempotent deletes, paged listings per namespace,
//! signed read URLs, the start-up self-check naming the setting, and an S3 outage at run time.

use std::time::Duration;

use app::storage::faults::Op;
use app::storage::{BlobError, BlobStore, ByteStream, Namespace};
use bytes::Bytes;
use futures::StreamExt;
use sqlx::PgPool;

use crate::backend::{open_store, open_store_with, storage_args, Backend};
use crate::helpers::*;

/// `n` bytes in chunks of odd sizes, so part boundaries never line up with chunks.
fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()
}

fn stream_of(bytes: Vec<u8>) -> ByteStream<'static> {
    let chunks: Vec<Result<Bytes, BlobError>> = bytes.chunks(77_777).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    futures::stream::iter(chunks).boxed()
}

async fn keys_in(store: &dyn BlobStore, ns: Namespace) -> Vec<String> {
    store.list(ns, None, 1000).await.unwrap().objects.into_iter().map(|o| o.key).collect()
}

/// Open multipart uploads are aborted in the background after a failed put: wait for it.
async fn no_unfinished_uploads(store: &dyn BlobStore) -> bool {
    for _ in 0..50 {
        if store.remove_abandoned_uploads(Duration::ZERO).await.unwrap() == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn put_head_get_and_delete_with_checksums(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(backend, dir.path());
    // Empty, small, exactly one part, and several parts with a short last one (multipart on S3).
    for (i, size) in [0usize, 5, 8 << 20, (8 << 20) * 2 + 12_345].into_iter().enumerate() {
        let key = format!("shares/obj{i}");
        let bytes = data(size);
        let stored = store.put_stream(&key, stream_of(bytes.clone()), u64::MAX).await.unwrap();
        assert_eq!((stored.size, stored.crc32c), (size as u64, crc32c::crc32c(&bytes)), "{size}");
        let head = store.head(&key).await.unwrap().expect("the object exists");
        assert_eq!((head.size, head.crc32c), (size as u64, Some(stored.crc32c)), "{size}: size and CRC32C read back from the store");
        let blob = store.open(&key).await.unwrap().unwrap();
        assert_eq!(blob.len, size as u64);
        let read: Vec<Bytes> = blob.body.map(|c| c.unwrap()).collect().await;
        assert_eq!(read.concat(), bytes, "{size}");
        store.delete(&key).await.unwrap();
        store.delete(&key).await.unwrap();
        assert!(store.head(&key).await.unwrap().is_none());
        assert!(store.open(&key).await.unwrap().is_none());
        assert!(!store.exists(&key).await.unwrap());
    }
    assert!(keys_in(&*store, Namespace::Shares).await.is_empty());
}

async fn a_put_over_the_limit_or_abandoned_leaves_nothing(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(backend, dir.path());
    // Over the limit in the first part, and after two parts went up (multipart on S3).
    for size in [100_001usize, (8 << 20) * 2 + 1] {
        let limit = size as u64 - 1;
        let err = store.put_stream("shares/big", stream_of(data(size)), limit).await.unwrap_err();
        assert!(matches!(err, BlobError::TooLarge { limit: l } if l == limit), "{err:?}");
    }
    // A source that fails after 20 MiB.
    let failing = stream_of(data(20 << 20)).chain(futures::stream::once(async { Err(BlobError::Source("client went away".into())) })).boxed();
    assert!(matches!(store.put_stream("shares/broken", failing, u64::MAX).await, Err(BlobError::Source(_))));
    // A client that stalls after 17 MiB: the request is dropped.
    let stalled = stream_of(data(17 << 20)).chain(futures::stream::pending()).boxed();
    assert!(tokio::time::timeout(Duration::from_secs(5), store.put_stream("shares/stalled", stalled, u64::MAX)).await.is_err());
    assert!(keys_in(&*store, Namespace::Shares).await.is_empty(), "no object appeared");
    assert!(no_unfinished_uploads(&*store).await, "every unfinished upload was aborted");
    // The keys still work.
    store.put("shares/big", Bytes::from_static(b"fine")).await.unwrap();
    assert_eq!(store.get("shares/big").await.unwrap().unwrap().as_ref(), b"fine");
}

async fn listing_pages_through_a_namespace_only(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(backend, dir.path());
    for i in 0..7 {
        store.put(&format!("shares/k{i}"), Bytes::from_static(b"x")).await.unwrap();
    }
    store.put("exports/e1.csv.gz", Bytes::from_static(b"x")).await.unwrap();
    store.put("audit-archive/2024-05.csv.gz", Bytes::from_static(b"month")).await.unwrap();
    let (mut seen, mut after) = (Vec::new(), None::<String>);
    loop {
        let page = store.list(Namespace::Shares, after.as_deref(), 3).await.unwrap();
        assert!(page.objects.len() <= 3);
        seen.extend(page.objects.into_iter().map(|o| o.key));
        after = page.next;
        if after.is_none() {
            break;
        }
    }
    assert_eq!(seen, (0..7).map(|i| format!("shares/k{i}")).collect::<Vec<_>>());
    let archive = store.list(Namespace::AuditArchive, None, 10).await.unwrap().objects;
    assert_eq!(archive.len(), 1);
    assert_eq!((archive[0].key.as_str(), archive[0].size), ("audit-archive/2024-05.csv.gz", 5));
    assert_eq!(keys_in(&*store, Namespace::Exports).await, ["exports/e1.csv.gz"]);
}

/// Objects in the namespace that are not Ebb's (an operator's file, another tool's) are skipped,
/// and the listing goes on past them: a short page is not the end. Here the first page holds only
/// foreign keys, and the export GC still deletes the expired export behind them.
async fn a_listing_goes_on_past_objects_that_are_not_ebbs(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = storage_args(backend, dir.path());
    let store = open_store_with(&args);
    match backend {
        Backend::Local => {
            std::fs::create_dir_all(dir.path().join("exports")).unwrap();
            for i in 0..5 {
                std::fs::write(dir.path().join(format!("exports/0-foreign {i}.txt")), b"not Ebb's").unwrap();
            }
        }
        Backend::S3 => {
            // A second store one folder down writes `exports/exports/…`: keys the first one
            // does not accept as its own, listed under its `exports/` prefix, before its own.
            let i = args.iter().position(|a| a == "--s3-prefix").unwrap() + 1;
            args[i] = format!("{}exports/", args[i]);
            let foreign = open_store_with(&args);
            for i in 0..5 {
                foreign.put(&format!("exports/0-foreign-{i}.csv"), Bytes::from_static(b"not Ebb's")).await.unwrap();
            }
        }
    }
    store.put("exports/zz-ebb.csv.gz", Bytes::from_static(b"x")).await.unwrap();
    let first = store.list(Namespace::Exports, None, 3).await.unwrap();
    if backend == Backend::S3 {
        // S3 pages by raw keys: this page held only the foreign ones.
        assert!(first.objects.is_empty(), "foreign keys are not Ebb's objects: {:?}", first.objects);
        assert!(first.next.is_some(), "an empty page with more behind it is not the end");
    } else {
        assert_eq!(first.objects.len(), 1, "a folder's foreign names are skipped before paging");
    }
    let later = std::time::SystemTime::now() + Duration::from_secs(8 * 86_400);
    let (deleted, more) = app::audit::exports::delete_expired_files(&*store, later, 100).await.unwrap();
    assert_eq!((deleted, more), (1, false), "the expired export behind the foreign keys is deleted");
    assert!(keys_in(&*store, Namespace::Exports).await.is_empty());
}

async fn keys_outside_the_namespaces_never_reach_the_backend(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(backend, dir.path());
    for bad in ["../escape", "shares/../../escape", "/etc/passwd", "shares/a/b", "exports/x.exe", "audit-archive/2024-13.csv.gz", "ebb-store-marker/x"] {
        assert!(matches!(store.put(bad, Bytes::from_static(b"x")).await, Err(BlobError::InvalidKey)), "{bad}");
        assert!(matches!(store.delete(bad).await, Err(BlobError::InvalidKey)), "{bad}");
        assert!(matches!(store.head(bad).await, Err(BlobError::InvalidKey)), "{bad}");
    }
}

async fn signed_read_urls_work_once_signed_and_not_when_changed_or_expired(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool, backend, &[], |_| {}).await;
    let bytes = data(300_000);
    app.write_stored("exports/report-1.csv.gz", &bytes).await;
    let url =
        app.state.blobs.signed_url("exports/report-1.csv.gz", Duration::from_secs(600), "Report «Q3».csv.gz", time::OffsetDateTime::now_utc()).await.unwrap();
    // Local: served by Ebb at the public URL; S3: presigned by the server itself.
    let url = match backend {
        Backend::Local => url.replace("http://localhost:3000", &app.base),
        Backend::S3 => {
            assert!(url.starts_with(&std::env::var("EBB_TEST_S3_ENDPOINT").unwrap()), "{url}");
            url
        }
    };
    let res = app.client.get(&url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let disposition = res.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.starts_with("attachment; filename=\"Report _Q3_.csv.gz\"; filename*=UTF-8''Report%20%C2%ABQ3%C2%BB.csv.gz"), "{disposition}");
    assert_eq!(res.bytes().await.unwrap().as_ref(), bytes.as_slice());

    // Any changed part of the URL is refused without the file.
    let tampered =
        [url.replace("report-1", "report-2"), url.replace("Q3", "Q4"), url.replace("expires=", "expires=1").replace("X-Amz-Expires=600", "X-Amz-Expires=6000")];
    for t in tampered {
        assert_ne!(t, url);
        let res = app.client.get(&t).send().await.unwrap();
        assert!(res.status().is_client_error(), "{t}: {}", res.status());
        assert!(res.headers().get("content-disposition").is_none());
    }
    // Expired.
    let short = app
        .state
        .blobs
        .signed_url("exports/report-1.csv.gz", Duration::from_secs(1), "r.csv.gz", time::OffsetDateTime::now_utc())
        .await
        .unwrap()
        .replace("http://localhost:3000", &app.base);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let res = app.client.get(&short).send().await.unwrap();
    assert!(res.status().is_client_error(), "expired: {}", res.status());
    assert!(app.state.blobs.signed_url("../etc/passwd", Duration::from_secs(60), "x", time::OffsetDateTime::now_utc()).await.is_err());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_ebb_signed_link_says_what_is_wrong(pool: PgPool) {
    let app = spawn_app(pool).await;
    app.write_stored("exports/x.csv", b"a,b\n").await;
    let url = app
        .state
        .blobs
        .signed_url("exports/x.csv", Duration::from_secs(60), "x.csv", time::OffsetDateTime::now_utc())
        .await
        .unwrap()
        .replace("http://localhost:3000", &app.base);
    let forged = url.rsplit_once("sig=").map(|(head, _)| format!("{head}sig={}", "0".repeat(64))).unwrap();
    let res = app.client.get(&forged).send().await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("not valid"));
    let res = app.client.get(app.url("/blob?key=exports%2Fx.csv")).send().await.unwrap();
    assert_eq!(res.status(), 400, "incomplete link");
    app.remove_stored("exports/x.csv").await;
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 404);
}

/// The start-up self-check stops Ebb with a message naming the setting to fix.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn s3_misconfiguration_stops_start_up_naming_the_setting(pool: PgPool) {
    let dir = tempfile::tempdir().unwrap();
    let good = storage_args(Backend::S3, dir.path());
    let with = |flag: &str, value: &str| {
        let mut args = good.clone();
        let i = args.iter().position(|a| a == flag).unwrap();
        args[i + 1] = value.to_owned();
        args
    };
    let cases = [
        (with("--s3-endpoint", "http://127.0.0.1:1"), "EBB_S3_ENDPOINT"),
        (with("--s3-bucket", "no-such-bucket-here"), "EBB_S3_BUCKET"),
        (with("--s3-access-key-id", "GK00000000000000000000000f"), "EBB_S3_ACCESS_KEY_ID"),
        (with("--s3-secret-access-key", &"0".repeat(64)), "EBB_S3_SECRET_ACCESS_KEY"),
    ];
    for (args, setting) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let config = test_config(&args);
        let state = server::build_state(&config, pool.clone()).await.unwrap();
        let started = std::time::Instant::now();
        let err = server::check_storage(&state, &config).await.unwrap_err();
        assert!(err.contains("storage self-check failed for EBB_STORAGE=s3") && err.contains(setting), "{setting}: {err}");
        assert!(!err.contains(&"0".repeat(64)) && !err.contains(&std::env::var("EBB_TEST_S3_SECRET_ACCESS_KEY").unwrap()), "no secret in: {err}");
        assert!(started.elapsed() < Duration::from_secs(30), "{setting}: took {:?}", started.elapsed());
    }
    // Missing settings are named before any request.
    let err = server::open_store(&test_config(&["--storage", "s3"])).err().unwrap();
    assert!(err.contains("EBB_S3_BUCKET"), "{err}");
}

/// S3 (or the folder) down at run time: downloads answer 503 and keep the link usable, the GC
/// backs off and marks nothing purged; once it is back, both recover.
async fn a_store_outage_keeps_links_and_purges_nothing(pool: PgPool, backend: Backend) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let upload = |name: &'static str| {
        let form = reqwest::multipart::Form::new()
            .text("expires_hours", "24")
            .part("file", reqwest::multipart::Part::bytes(data(50_000)).file_name(name).mime_str("application/pdf").unwrap());
        app.client.post(app.url("/api/admin/shares/upload")).header("cookie", &cookie).header("accept", "application/json").multipart(form).send()
    };
    let res = upload("live.pdf").await.unwrap();
    assert_eq!(res.status(), 201);
    let link = res.json::<serde_json::Value>().await.unwrap()["url"].as_str().unwrap().replace("http://localhost:3000", "");
    assert_eq!(upload("old.pdf").await.unwrap().status(), 201);
    app.state.background.settle().await;
    let old_id: i64 = sqlx::query_scalar("select id from shares where file_name = 'old.pdf'").fetch_one(&pool).await.unwrap();
    sqlx::query("update shares set expires_at = now() - interval '1 minute' where file_name = 'old.pdf'").execute(&pool).await.unwrap();

    app.faults.fail_all();
    let res = app.client.post(app.url(&link)).send().await.unwrap();
    assert_eq!(res.status(), 503);
    assert!(res.text().await.unwrap().contains("Your link still works"));
    let mut out = Vec::new();
    let _ = server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await;
    let status: String = sqlx::query_scalar("select status from shares where id = $1").bind(old_id).fetch_one(&pool).await.unwrap();
    assert_eq!(status, "active", "nothing counts as deleted while the store is down: {}", String::from_utf8_lossy(&out));
    let uploaded = upload("during.pdf").await.unwrap();
    assert!(uploaded.status().is_server_error(), "an upload while the store is down fails: {}", uploaded.status());
    assert!(app.faults.calls(Op::Open) >= 1);

    app.faults.heal();
    let res = app.client.post(app.url(&link)).send().await.unwrap();
    assert_eq!(res.status(), 200, "the link still works once the store is back");
    assert_eq!(res.bytes().await.unwrap().len(), 50_000);
    sqlx::query("update shares set next_purge_attempt_at = null").execute(&pool).await.unwrap();
    let mut out = Vec::new();
    server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await.unwrap();
    let status: String = sqlx::query_scalar("select status from shares where id = $1").bind(old_id).fetch_one(&pool).await.unwrap();
    assert_eq!(status, "purged", "{}", String::from_utf8_lossy(&out));
    let key: String = sqlx::query_scalar("select blob_key from shares where id = $1").bind(old_id).fetch_one(&pool).await.unwrap();
    assert!(app.read_stored(&key).await.is_none(), "purged means deleted");
}

/// Deletes that keep failing (only deletes) back off and never mark the share purged.
async fn failing_deletes_back_off_and_purge_nothing(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let (_, key) = expired_share(&app).await;
    app.faults.fail(Op::Delete);
    let mut out = Vec::new();
    let _ = server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await;
    let (status, attempts, backoff): (String, i32, bool) =
        sqlx::query_as("select status, purge_attempts, next_purge_attempt_at > now() from shares").fetch_one(&pool).await.unwrap();
    assert_eq!((status.as_str(), attempts, backoff), ("active", 1, true), "{}", String::from_utf8_lossy(&out));
    assert!(app.read_stored(&key).await.is_some());
}

/// A store whose marker vanished (another bucket or prefix, a swapped folder) is not trusted:
/// nothing is purged and the alert is raised, until the marker is back.
async fn a_store_without_its_marker_purges_nothing(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let (_, key) = expired_share(&app).await;
    let marker = app.raw.get(app::storage::MARKER_KEY).await.unwrap().expect("the marker was written at start-up");
    app.raw.delete(app::storage::MARKER_KEY).await.unwrap();
    let mut out = Vec::new();
    let _ = server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await;
    let status: String = sqlx::query_scalar("select status from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(status, "active");
    let alerts: i64 =
        sqlx::query_scalar("select count(*) from alerts where kind = 'storage.marker_missing' and resolved_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(alerts, 1);
    app.raw.put(app::storage::MARKER_KEY, marker).await.unwrap();
    server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut Vec::new()).await.unwrap();
    let status: String = sqlx::query_scalar("select status from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(status, "purged");
    assert!(app.read_stored(&key).await.is_none());
}

/// Storage classes per namespace reach the server (garage accepts and drops them; AWS keeps
/// them), and `ebb storage setup` applies the exports lifecycle rule.
/// The tests that change the test bucket's lifecycle configuration take turns: it is one
/// document, and S3 has no conditional write for it.
static BUCKET_SETUP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn storage_classes_are_accepted_and_storage_setup_applies_the_lifecycle_rule() {
    let _turn = BUCKET_SETUP.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let mut args = storage_args(Backend::S3, dir.path());
    args.extend(["--s3-archive-storage-class", "STANDARD", "--s3-exports-storage-class", "STANDARD"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let config = test_config(&args);
    let store = server::open_store(&config).unwrap();
    let stored = store.put_stream("audit-archive/2024-05.csv.gz", stream_of(data(9 << 20)), u64::MAX).await.unwrap();
    assert_eq!(store.head("audit-archive/2024-05.csv.gz").await.unwrap().unwrap().crc32c, Some(stored.crc32c));
    store.put("exports/e.csv", Bytes::from_static(b"a")).await.unwrap();
    let mut out = Vec::new();
    server::storage_setup(&config, &mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("applied: lifecycle rule: delete test-") && out.contains("exports/* after 7 days"), "{out}");
    assert!(out.contains("applied: lifecycle rule read back"), "{out}");
}

/// The bucket's lifecycle configuration is one document shared by everyone using the bucket:
/// `ebb storage setup` of a second installation (another prefix) keeps the first one's rules,
/// and running it again changes nothing but its own.
#[tokio::test]
async fn storage_setup_changes_only_this_installations_lifecycle_rules() {
    let _turn = BUCKET_SETUP.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let setup = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let config = test_config(&args);
        server::storage_setup(&config, &mut Vec::new()).await.unwrap();
        server::s3::S3Store::new(config.s3.settings().unwrap())
    };
    let first = setup(storage_args(Backend::S3, dir.path())).await;
    let second = setup(storage_args(Backend::S3, dir.path())).await;
    let again = setup(storage_args(Backend::S3, dir.path())).await;
    let ids = again.lifecycle_rule_ids().await.unwrap();
    for store in [&first, &second, &again] {
        for id in store.rule_ids() {
            assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{id} kept once: {ids:?}");
        }
    }
    // Running it again for the first installation replaces its rules, not the others'.
    let first_again = setup({
        let mut a = storage_args(Backend::S3, dir.path());
        let i = a.iter().position(|x| x == "--s3-prefix").unwrap() + 1;
        a[i] = first.settings().prefix.clone();
        a
    })
    .await;
    let after = first_again.lifecycle_rule_ids().await.unwrap();
    for store in [&first, &second, &again] {
        for id in store.rule_ids() {
            assert_eq!(after.iter().filter(|i| **i == id).count(), 1, "{id} kept once: {after:?}");
        }
    }
}

/// Write-once (audit digests, restore statements): a second put of the key fails and leaves the
/// first object as it was; of two writers racing for one key, exactly one wins.
async fn a_write_once_put_never_replaces_and_one_of_two_racing_writers_wins(_pool: PgPool, backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(backend, dir.path());
    let key = "audit-digests/000000000001.json";
    let first = store.put_new(key, Bytes::from_static(b"first")).await.unwrap();
    assert_eq!(first.size, 5);
    let second = store.put_new(key, Bytes::from_static(b"second")).await;
    assert!(matches!(second, Err(BlobError::Exists)), "{second:?}");
    assert_eq!(store.get(key).await.unwrap().as_deref(), Some(&b"first"[..]));
    // Racing: both start before either finishes. Atomic in a folder and on S3 servers that
    // honour If-None-Match; garage 2.5 ignores it (the check before writing is all there is:
    // `ebb doctor` warns), which the probe must say.
    if backend == Backend::S3 {
        let args = storage_args(backend, dir.path());
        let s3 = server::s3::S3Store::new(crate::backend::config_of(&args).s3.settings().unwrap());
        assert!(!s3.honours_if_none_match().await.unwrap(), "garage 2.5 ignores If-None-Match on PutObject: the racing check below can now run on S3 too");
        return;
    }
    for round in 0..5 {
        let key = format!("audit-digests/{:012}.json", 100 + round);
        let (a, b) = tokio::join!(store.put_new(&key, Bytes::from(vec![b'a'; 1000])), store.put_new(&key, Bytes::from(vec![b'b'; 1000])));
        let won: Vec<bool> = [&a, &b].iter().map(|r| r.is_ok()).collect();
        assert_eq!(won.iter().filter(|w| **w).count(), 1, "round {round}: {a:?} {b:?}");
        assert!([&a, &b].iter().all(|r| matches!(r, Ok(_) | Err(BlobError::Exists))), "{a:?} {b:?}");
        let kept = store.get(&key).await.unwrap().unwrap();
        let want = vec![if won[0] { b'a' } else { b'b' }; 1000];
        assert_eq!(kept.as_ref(), &want[..], "the winner's bytes are kept");
    }
    // No partial file left behind by the loser (local) or unfinished upload (S3).
    assert!(keys_in(&*store, Namespace::AuditDigests).await.iter().all(|k| !k.contains(".part")));
}

on_both_backends!(
    a_write_once_put_never_replaces_and_one_of_two_racing_writers_wins,
    put_head_get_and_delete_with_checksums,
    a_put_over_the_limit_or_abandoned_leaves_nothing,
    listing_pages_through_a_namespace_only,
    a_listing_goes_on_past_objects_that_are_not_ebbs,
    keys_outside_the_namespaces_never_reach_the_backend,
    signed_read_urls_work_once_signed_and_not_when_changed_or_expired,
    a_store_outage_keeps_links_and_purges_nothing,
    failing_deletes_back_off_and_purge_nothing,
    a_store_without_its_marker_purges_nothing,
);
