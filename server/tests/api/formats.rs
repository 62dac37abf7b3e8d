//! Issue 56: the formats other programs read, pinned whole. A data request's copy (JSON and its
//! cover sheet), a signed digest (envelope and body), the transparency log's checkpoint,
//! `/audit/keys.json` and the retention report are each compared with a reviewed snapshot
//! (insta, `tests/api/snapshots/`): a field renamed, added, dropped or retyped fails here, not in a
//! reader's script. What differs from run to run — times, ids, hashes, keys, signatures — is
//! replaced by a placeholder that still says what it was (`[time]`, `[hex64]`, `[id]`…), so
//! the shape and every fixed value stay pinned.
//!
//! A change that is meant: `INSTA_UPDATE=always` once, review the `.snap` diff, commit it with a
//! line in the format's changelog (docs/auditor.md for the audit formats).

use std::sync::LazyLock;

use app::audit::chain::{digest, tlog};
use regex::Regex;
use serde_json::Value;

use crate::helpers::*;
use crate::trail::seal_now;

/// Placeholders for what is made fresh in every run, most specific first.
static VOLATILE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2}(:\d{2})?)?( UTC)?", "[time]"),
        (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "[uuid]"),
        (r"\b[0-9a-f]{64}\b", "[hex64]"),
        (r"\b[0-9a-f]{16}\b", "[hex16]"),
        (r"\b[0-9a-f]{8}\b", "[hex8]"),
        (r"\d{4}-\d{2}-\d{2}", "[date]"),
        (r"\b\d{4}-\d{2}\b", "[month]"),
        (r"[A-Za-z0-9+/]{40,}={0,2}", "[base64]"),
        (r"127\.0\.0\.1:\d+", "[host]"),
        // How many events a digest's month or a checkpoint covers depends on what the run did.
        (r#""(number|count|first_id|last_id)":\d+"#, r#""$1":"[n]""#),
        (r"(?m)^\d+$", "[size]"),
    ]
    .into_iter()
    .map(|(re, to)| (Regex::new(re).unwrap(), to))
    .collect()
});

fn scrub_text(text: &str) -> String {
    VOLATILE.iter().fold(text.to_string(), |t, (re, to)| re.replace_all(&t, *to).into_owned())
}

/// Numbers under these keys are database ids or sequence numbers: kept as their type.
fn is_id(key: &str) -> bool {
    key == "id" || key == "number" || key == "request" || key.ends_with("_id") || key.ends_with("_ids") || key == "size"
}

/// The value with every volatile string replaced and ids kept as their type.
fn scrub(key: &str, v: Value) -> Value {
    scrub_keys(key, v, &[])
}

/// [`scrub`], with the numbers under `counts` (figures that depend on the run) kept as their type.
fn scrub_keys(key: &str, v: Value, counts: &[&str]) -> Value {
    match v {
        Value::String(s) => Value::String(scrub_text(&s)),
        Value::Number(_) if is_id(key) => Value::String("[id]".into()),
        Value::Number(_) if counts.contains(&key) => Value::String("[n]".into()),
        Value::Array(items) => Value::Array(items.into_iter().map(|i| scrub_keys(key, i, counts)).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k.clone(), scrub_keys(&k, v, counts))).collect()),
        other => other,
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_formats_other_programs_read_keep_their_shape(pool: sqlx::PgPool) {
    // No job runs by itself (after a response): the report's runs are the ones started below.
    let app = spawn_app_with(pool.clone(), &["--after-response-jobs", "false"], |_| {}).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let fields = [("name", "Ann Example"), ("email", "ann.person@example.org"), ("message", "=HYPERLINK(\"x\")\n<b>hello</b>")];
    assert_eq!(app.post_contact(&fields).await.status(), 200);
    app.state.background.settle().await;

    // A data request's copy: the JSON and the cover sheet, as the person receives them.
    let res =
        call_form(&app, "/api/admin/requests/record", Some(&cookie), &[("kind", "copy"), ("email", "ann.person@example.org"), ("received", ""), ("note", "")])
            .await;
    assert_eq!(res.status(), 200);
    let id: i64 = res.json().await.unwrap();
    let copy: Value = app.client.get(app.url(&format!("/admin/requests/{id}/copy.json"))).header("cookie", &cookie).send().await.unwrap().json().await.unwrap();
    insta::assert_json_snapshot!("copy_json", scrub("", copy));
    let cover = app.client.get(app.url(&format!("/admin/requests/{id}/cover.txt"))).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    insta::assert_snapshot!("cover_txt", scrub_text(&cover));

    // The retention report's JSON (for the auditor's and the operator's scripts), after every
    // job ran once from the command line.
    for job in app.state.jobs().jobs() {
        let outcome = app::jobs::run_job(&app.state, job, app::jobs::Trigger::Cli, true).await.unwrap();
        assert!(matches!(outcome, app::jobs::RunOutcome::Ran(_)), "{} ran", job.name);
    }
    let report: Value = app.client.get(app.url("/admin/retention/report.json")).header("cookie", &cookie).send().await.unwrap().json().await.unwrap();
    insta::assert_json_snapshot!("retention_report_json", scrub("", report));

    // A signed digest as stored: the envelope, and the body it signs (parsed, so its fields show).
    seal_now(&pool).await;
    let number = digest::write(&app.state, digest::Reason::Asked, true).await.unwrap().expect("a digest is written");
    let key = format!("audit-digests/{number:012}.json");
    let stored: Value = serde_json::from_slice(&app.read_stored(&key).await.expect("the digest is in the store")).unwrap();
    let body: Value = serde_json::from_str(stored["body"].as_str().unwrap()).unwrap();
    insta::assert_json_snapshot!("digest_envelope", scrub_keys("", serde_json::json!({ "envelope": stored, "body": body }), &["count"]));

    // The log's checkpoint (C2SP tlog-checkpoint in a signed note) and the published keys.
    tlog::checkpoint(&app.state).await.unwrap();
    let note = app.client.get(app.url("/audit/checkpoint")).send().await.unwrap().text().await.unwrap();
    insta::assert_snapshot!("checkpoint", scrub_text(&note));
    let keys: Value = app.client.get(app.url("/audit/keys.json")).send().await.unwrap().json().await.unwrap();
    insta::assert_json_snapshot!("audit_keys_json", scrub("", keys));
}

/// The placeholders themselves: a fixed value is kept, a volatile one named by its kind.
#[test]
fn placeholders_keep_fixed_values_and_name_volatile_ones() {
    let v = serde_json::json!({
        "format": "ebb-audit-digest-v1",
        "created_at": "2026-12-07T08:00:01.123456Z",
        "head": "a".repeat(64),
        "month": "2026-12",
        "id": 42,
        "count": 3,
    });
    let s = scrub("", v);
    assert_eq!(s["format"], "ebb-audit-digest-v1");
    assert_eq!(s["created_at"], "[time]");
    assert_eq!(s["head"], "[hex64]");
    assert_eq!(s["month"], "[month]");
    assert_eq!(s["id"], "[id]");
    assert_eq!(s["count"], 3, "counts are not ids: they stay pinned");
}
