//! Issue 53: the transparency log. Sealed events grow an RFC 6962 tree served as C2SP tlog-tiles
//! with signed C2SP checkpoints; any tlog client proves inclusion and consistency without Ebb's
//! code. A database rolled back to an earlier state, or a log that forked, is caught by
//! `ebb audit watch`, by scripts/tlog-watch.py and by the Go reference code (x/mod's
//! sumdb/tlog, as Debian packages it) — three implementations that share nothing.

use std::path::Path;
use std::process::Command;

use app::audit::chain::{keys, tlog};
use app::audit::AuditKind;
use app::kernel::audit::{record, Actor};
use sqlx::PgPool;
use tlog_tiles::{check_record, prove_record, record_hash, stored_hash_index, Checkpoint, Tile, TileHashReader, TileReader};

use crate::helpers::*;
use crate::trail::seal_now;

async fn events(pool: &PgPool, n: usize, tag: &str) {
    for i in 0..n {
        let mut tx = pool.begin().await.unwrap();
        record(&mut tx, &Actor::system(), AuditKind::ShareCreate, Some(("share", &format!("{tag}{i}"))), None).await.unwrap();
        tx.commit().await.unwrap();
    }
}

/// Seals, signs a checkpoint, and returns it as served.
async fn grow(app: &TestApp, n: usize, tag: &str) -> String {
    events(&app.state.pool, n, tag).await;
    seal_now(&app.state.pool).await;
    tlog::checkpoint(&app.state).await.unwrap();
    let res = app.client.get(app.url("/audit/checkpoint")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

fn size_of(note: &str) -> u64 {
    let text = signed_note::Note::from_bytes(note.as_bytes()).unwrap();
    Checkpoint::from_bytes(text.text()).unwrap().size()
}

/// The tiles of a tree of `size` (< 65,536 entries), fetched up front, for the proof code.
struct Fetched(std::collections::HashMap<String, Vec<u8>>);

impl TileReader for Fetched {
    fn height(&self) -> u8 {
        8
    }
    fn read_tiles(&self, tiles: &[Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        tiles.iter().map(|t| self.0.get(&server::watch::c2sp_path(t)).cloned().ok_or(tlog_tiles::Error::InvalidProof)).collect()
    }
    fn save_tiles(&self, _: &[Tile], _: &[Vec<u8>]) {}
}

async fn fetch_tiles(app: &TestApp, size: u64) -> Fetched {
    let mut tiles = std::collections::HashMap::new();
    for level in 0..2u8 {
        let count = size >> (8 * u32::from(level));
        for n in 0..count.div_ceil(256) {
            let width = (count - n * 256).min(256);
            let path = format!("tile/{}", tlog::tile_path(tlog::TilePath::Hashes { level, index: n, width }));
            let res = app.client.get(app.url(&format!("/audit/{path}"))).send().await.unwrap();
            assert_eq!(res.status(), 200, "{path}");
            let data = res.bytes().await.unwrap().to_vec();
            assert_eq!(data.len() as u64, width * 32, "{path}");
            tiles.insert(path, data);
        }
    }
    Fetched(tiles)
}

/// Runs a command off the test's runtime thread (which serves the app the command talks to).
async fn output(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("the command runs")).await.unwrap()
}

async fn python_watch(app: &TestApp, keys: &Path, state: &Path) -> (bool, String) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/tlog-watch.py");
    let mut cmd = Command::new("python3");
    cmd.args([script, &app.base, "--keys", keys.to_str().unwrap(), "--state", state.to_str().unwrap()]);
    let out = output(cmd).await;
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The Go reference code: Debian's golang-go and golang-golang-x-mod-dev (scripts/setup.sh).
async fn go_check(app: &TestApp, vkey: &str, old: &Path, new: &Path) -> (bool, String) {
    let main = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/tlog-check/main.go");
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("go");
    cmd.args(["run", main, &app.base, vkey, old.to_str().unwrap(), new.to_str().unwrap()])
        .env("GO111MODULE", "off")
        .env("GOPATH", "/usr/share/gocode")
        .env("GOCACHE", cache.path())
        .env("GOFLAGS", "");
    let out = output(cmd).await;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{text}");
    (out.status.success(), text)
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_log_proves_inclusion_and_growth_and_three_watchers_catch_a_rollback_and_a_fork(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    // The test seals and signs; the job, nudged by its requests, would sign checkpoints between.
    app.state.jobs().get(app::audit::chain::job::JOB).unwrap().wait(std::time::Duration::from_secs(3600));
    let dir = tempfile::tempdir().unwrap();

    // 300 events: a full tile and a partial one. The key is made by the first signature: the
    // auditor downloads the key list then, once.
    let first = grow(&app, 300, "a").await;
    assert_eq!(size_of(&first), 300, "{first}");
    let keys_json = app.client.get(app.url("/audit/keys.json")).send().await.unwrap().bytes().await.unwrap();
    let keys_file = dir.path().join("keys.json");
    std::fs::write(&keys_file, &keys_json).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&keys_json).unwrap();
    let keys_now: Vec<keys::PublicKey> = serde_json::from_value(doc["keys"].clone()).unwrap();
    let note = signed_note::Note::from_bytes(first.as_bytes()).unwrap();
    let cp = Checkpoint::from_bytes(note.text()).unwrap();
    let vkey = tlog::verifier_key(cp.origin(), &keys_now[0].verifying_key().unwrap());
    assert_eq!(doc["log"]["verifier_keys"][0], vkey.as_str(), "keys.json names the checkpoint key");

    // Inclusion: entry 123 (from its bundle) is in the signed tree, by the served tiles.
    let bundle = app.client.get(app.url("/audit/tile/entries/000")).send().await.unwrap().bytes().await.unwrap();
    let mut entries = Vec::new();
    let mut at = 0;
    while at < bundle.len() {
        let len = u16::from_be_bytes([bundle[at], bundle[at + 1]]) as usize;
        entries.push(bundle[at + 2..at + 2 + len].to_vec());
        at += 2 + len;
    }
    assert_eq!(entries.len(), 256);
    let entry = String::from_utf8(entries[123].clone()).unwrap();
    let place: (i64, i64) =
        sqlx::query_as("select seq, id from audit_events where seq is not null order by tx, id offset 123 limit 1").fetch_one(&pool).await.unwrap();
    assert!(entry.contains(&format!(" {} {} ", place.0, place.1)), "{entry}");
    let fetched = fetch_tiles(&app, 300).await;
    let tree = TileHashReader::new(300, *cp.hash(), &fetched);
    let proof = prove_record(300, 123, &tree).unwrap();
    check_record(&proof, 300, *cp.hash(), 123, record_hash(&entries[123])).unwrap();
    assert!(check_record(&proof, 300, *cp.hash(), 124, record_hash(&entries[123])).is_err(), "a wrong place fails");
    // Tiles the tree does not have: 404, never made up.
    for missing in ["0/001", "0/001.p/45", "1/000.p/2", "entries/001", "0/x000/001", "9/000"] {
        assert_eq!(app.client.get(app.url(&format!("/audit/tile/{missing}"))).send().await.unwrap().status(), 404, "{missing}");
    }

    // The three watchers see it grow.
    let (state_rs, state_py) = (dir.path().join("rs.txt"), dir.path().join("py.txt"));
    let trusted: Vec<keys::PublicKey> = keys_now.clone();
    assert!(server::watch::watch(&app.base, &trusted, &state_rs).await.unwrap().starts_with("first checkpoint: 300"));
    assert!(python_watch(&app, &keys_file, &state_py).await.0);
    let old_file = dir.path().join("old.txt");
    std::fs::write(&old_file, &first).unwrap();
    let second = grow(&app, 100, "b").await;
    let grown = size_of(&second);
    assert!(grown >= 400, "{second}");
    let new_file = dir.path().join("new.txt");
    std::fs::write(&new_file, &second).unwrap();
    let said = server::watch::watch(&app.base, &trusted, &state_rs).await.unwrap();
    assert!(said.starts_with(&format!("consistent: 300 → {grown}")), "{said}");
    let (ok, said) = python_watch(&app, &keys_file, &state_py).await;
    assert!(ok && said.contains(&format!("300 -> {grown}")), "{said}");
    let (ok, said) = go_check(&app, &vkey, &old_file, &new_file).await;
    assert!(ok && said.contains(&format!("consistent: 300 -> {grown}")), "{said}");

    // A rollback: the database as it was at 300 entries (restored from a backup, no
    // --after-restore): the log is back at 300.
    sqlx::query("delete from audit_tlog_entries where index >= 300").execute(&pool).await.unwrap();
    sqlx::query("delete from audit_tlog_hashes where index >= $1").bind(stored_hash_index(0, 300) as i64).execute(&pool).await.unwrap();
    sqlx::query("delete from audit_tlog_checkpoints where size > 300").execute(&pool).await.unwrap();
    sqlx::query("update audit_tlog_head set size = 300, root = (select root from audit_tlog_checkpoints where size = 300)").execute(&pool).await.unwrap();
    let err = server::watch::watch(&app.base, &trusted, &state_rs).await.unwrap_err();
    assert!(err.contains("ROLLED BACK") && err.contains(&format!("{grown} entries")) && err.contains("now has 300"), "{err}");
    let (ok, said) = python_watch(&app, &keys_file, &state_py).await;
    assert!(!ok && said.contains("ROLLED BACK") && said.contains(&format!("{grown} entries")), "{said}");
    let rolled = dir.path().join("rolled.txt");
    std::fs::write(&rolled, reqwest::get(app.url("/audit/checkpoint")).await.unwrap().text().await.unwrap()).unwrap();
    let (ok, said) = go_check(&app, &vkey, &new_file, &rolled).await;
    assert!(!ok && said.contains("rolled back"), "{said}");

    // A fork: the rolled-back log grows past its old size with other events.
    let forked = grow(&app, 150, "c").await;
    let fork_size = size_of(&forked);
    assert!(fork_size > grown, "{forked}");
    let err = server::watch::watch(&app.base, &trusted, &state_rs).await.unwrap_err();
    assert!(err.contains("FORKED") && err.contains(&format!("{fork_size} entries")) && err.contains(&format!("{grown} entries")), "{err}");
    let (ok, said) = python_watch(&app, &keys_file, &state_py).await;
    assert!(!ok && said.contains("FORKED"), "{said}");
    let fork_file = dir.path().join("fork.txt");
    std::fs::write(&fork_file, &forked).unwrap();
    let (ok, said) = go_check(&app, &vkey, &new_file, &fork_file).await;
    assert!(!ok && said.contains("forked"), "{said}");
    // The watchers kept what they saw before: the fork is reported again, not adopted.
    assert_eq!(size_of(&std::fs::read_to_string(&state_rs).unwrap()), grown);
    assert!(server::watch::watch(&app.base, &trusted, &state_rs).await.is_err());

    // A checkpoint not signed by a trusted key is refused.
    let stranger = vec![keys::PublicKey::of(&ed25519_dalek::SigningKey::from_bytes(&[3u8; 32]).verifying_key())];
    let err = server::watch::watch(&app.base, &stranger, &dir.path().join("other.txt")).await.unwrap_err();
    assert!(err.contains("cannot be trusted"), "{err}");
}

/// An auditor's machine has no database: `ebb audit watch` runs without `DATABASE_URL` (it
/// fails here only at the key file it was given), and a command that needs the database says
/// what to set.
#[test]
fn the_watch_command_needs_no_database_url() {
    let out = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .env_clear()
        .args(["audit", "watch", "http://127.0.0.1:9/", "--key", "/nonexistent/ebb-audit-keys.json"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!said.contains("DATABASE_URL"), "{said}");
    assert!(said.contains("/nonexistent/ebb-audit-keys.json"), "{said}");
    let out = Command::new(env!("CARGO_BIN_EXE_ebb")).env_clear().args(["maintenance", "status"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("DATABASE_URL is not set"), "{said}");
}

/// A configured witness's cosignature (C2SP tlog-cosignature v1) on a checkpoint Ebb signed is
/// kept and served after Ebb's own signature; a line that does not verify, a checkpoint Ebb never
/// signed and an unconfigured witness are refused; with no witness configured the route is 404.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_witness_cosignature_is_kept_and_served_only_when_it_verifies(pool: PgPool) {
    use base64::Engine;
    use ed25519_dalek::Signer;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let witness = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let name = "witness.example/w1";
    let id = app::audit::chain::cosign::key_id(name, &witness.verifying_key());
    let vkey = format!("{name}+{id:08x}+{}", b64(&[&[0x04u8][..], witness.verifying_key().as_bytes()].concat()));
    let cosign = |key: &ed25519_dalek::SigningKey, note: &str, time: u64| {
        let (body, _) = app::audit::chain::cosign::split_note(note).unwrap();
        let sig = key.sign(&app::audit::chain::cosign::message(time, body.as_bytes()));
        let raw = [&id.to_be_bytes()[..], &time.to_be_bytes(), &sig.to_bytes()].concat();
        format!("{note}— {name} {}\n", b64(&raw))
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();

    let app = spawn_app_with(pool.clone(), &["--audit-witnesses", &vkey], |_| {}).await;
    let note = grow(&app, 3, "w").await;
    let post = |body: String| app.client.post(app.url("/audit/checkpoint")).body(body).send();
    let res = post(cosign(&witness, &note, now)).await.unwrap();
    assert_eq!(res.status(), 204, "{}", res.text().await.unwrap());
    let served = app.client.get(app.url("/audit/checkpoint")).send().await.unwrap().text().await.unwrap();
    assert!(served.starts_with(&note) && served.contains(&format!("— {name} ")), "{served}");
    // Still a checkpoint every client reads, Ebb's signature first.
    assert_eq!(size_of(&served), size_of(&note));

    // Refused: another key under the witness's name, another checkpoint's text, no witness line.
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[43; 32]);
    let res = post(cosign(&stranger, &note, now)).await.unwrap();
    assert_eq!(res.status(), 400);
    let forged = note.replacen(&format!("\n{}\n", size_of(&note)), &format!("\n{}\n", size_of(&note) + 1), 1);
    let res = post(cosign(&witness, &forged, now)).await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("signed no checkpoint"));
    assert_eq!(post(note.clone()).await.unwrap().status(), 400, "no cosignature in it");
    let kept: i64 = sqlx::query_scalar("select count(*) from audit_tlog_cosignatures").fetch_one(&pool).await.unwrap();
    assert_eq!(kept, 1);
    app.shutdown().await;

    // A second app with a fresh folder: adopted on purpose (the first wrote digests to its own).
    sqlx::query("delete from settings where key = 'storage_marker_id'").execute(&pool).await.unwrap();
    let app = spawn_app(pool.clone()).await;
    assert_eq!(app.client.post(app.url("/audit/checkpoint")).body(cosign(&witness, &note, now)).send().await.unwrap().status(), 404);
}
