//! Data requests (issue 32): find, copy and erase everything Ebb holds about one address, with
//! deadlines, records that never hold the address, and an erasure that survives a kill and runs
//! once however many admins press Erase.

use std::io::Read;
use std::time::Duration;

use app::jobs::{run_job, RunOutcome, Trigger};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::helpers::*;

const ADDRESS: &str = "ann.person@example.org";

/// The seeded database of the proof: the address in 3 inquiries (one held, one typed in
/// other case), a hold, a notification digest that carried them, plus `others` inquiries from
/// other people. Returns the ids of the address's inquiries (held one first).
async fn seed(app: &TestApp, others: i64) -> Vec<uuid::Uuid> {
    let pool = &app.state.pool;
    let mut ids = Vec::new();
    for (i, email) in [ADDRESS, "Ann.Person@Example.ORG", ADDRESS].iter().enumerate() {
        let id: uuid::Uuid = sqlx::query_scalar(
            "insert into inquiries (name, email, message, created_at) values ('Ann Person', $1, $2, now() - make_interval(days => $3)) returning id",
        )
        .bind(email)
        .bind(format!("=HYPERLINK(\"x\") message {i}"))
        .bind(10 - i as i32)
        .fetch_one(pool)
        .await
        .unwrap();
        ids.push(id);
    }
    let admin = create_admin(pool, "Hilda").await;
    let actor = app::kernel::audit::Actor { admin: Some(admin), client_hash: None };
    app::holds::db::place(pool, &app::hold_owners(), &actor, app::common::holds::HoldTarget::Inquiry(ids[0]), "court case 12/2026, keep everything")
        .await
        .unwrap();
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'Other ' || g, 'other' || g || '@example.net', 'hello', now() - make_interval(mins => g::int) from generate_series(1, $1::int) g",
    )
    .bind(others)
    .execute(pool)
    .await
    .unwrap();
    let hash = app::kernel::personal::Address::new(&app.state, ADDRESS).hash;
    let other = app::kernel::personal::Address::new(&app.state, "other1@example.net").hash;
    sqlx::query("insert into notify_digests (content, recipients, inquiries, address_hashes) values ('full', 2, 4, array[$1, $2]), ('count', 1, 1, array[$2])")
        .bind(&hash)
        .bind(&other)
        .execute(pool)
        .await
        .unwrap();
    ids
}

async fn record(app: &TestApp, cookie: &str, kind: &str, email: &str, received: &str) -> reqwest::Response {
    call_form(app, "/api/admin/requests/record", Some(cookie), &[("kind", kind), ("email", email), ("received", received), ("note", "by letter")]).await
}

async fn record_id(app: &TestApp, cookie: &str, kind: &str, email: &str) -> i64 {
    let res = record(app, cookie, kind, email, "").await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn find(app: &TestApp, cookie: &str, id: i64, preview: bool) -> Value {
    let res = call_form(app, "/api/admin/requests/find", Some(cookie), &[("id", &id.to_string()), ("preview", &preview.to_string())]).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

/// `{kind: (count, kept)}` of a find.
fn counts(findings: &Value) -> std::collections::BTreeMap<String, (i64, i64)> {
    findings["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_string(), (f["count"].as_i64().unwrap(), f["kept"].as_i64().unwrap())))
        .collect()
}

fn expect(pairs: &[(&str, (i64, i64))]) -> std::collections::BTreeMap<String, (i64, i64)> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

async fn status(pool: &PgPool, id: i64) -> String {
    sqlx::query_scalar("select status from data_requests where id = $1").bind(id).fetch_one(pool).await.unwrap()
}

async fn inquiries_of(pool: &PgPool, email: &str) -> i64 {
    sqlx::query_scalar("select count(*) from inquiries where lower(email) = $1").bind(email).fetch_one(pool).await.unwrap()
}

async fn events(pool: &PgPool, kind: &str) -> i64 {
    sqlx::query_scalar("select count(*) from audit_events where kind = $1").bind(kind).fetch_one(pool).await.unwrap()
}

/// Runs the requests job now, waiting while another holder has its lease.
async fn run_requests(app: &TestApp) -> app::jobs::RunRecord {
    let job = app.state.jobs().get(app::requests::erase::JOB).unwrap().clone();
    for _ in 0..600 {
        match run_job(&app.state, &job, Trigger::Cli, true).await.unwrap() {
            RunOutcome::Ran(r) => return r,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("the requests job's lease stayed taken")
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn find_copy_and_erase_cover_exactly_the_address_and_leave_what_is_held(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = seed(&app, 10_000).await;
    // One of their submissions is in the contact form's quarantine (suspected spam).
    sqlx::query(
        "insert into suspected_spam (id, name, email, message, signals, score) values (gen_random_uuid(), 'Ann', upper($1), 'hi', '{proof_missing}', 10)",
    )
    .bind(ADDRESS)
    .execute(&pool)
    .await
    .unwrap();
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    // Typed as the person wrote it: found as the form stores it, whatever the case.
    let id = record_id(&app, &cookie, "erasure", "  ANN.person@example.org ").await;

    let found = find(&app, &cookie, id, false).await;
    assert_eq!(found["request"]["email"], ADDRESS);
    assert_eq!(
        counts(&found),
        expect(&[("inquiries", (3, 1)), ("suspected_spam", (1, 0)), ("legal_holds", (1, 1)), ("notify_digests", (1, 0)), ("data_requests", (0, 0))])
    );
    let inquiries = &found["found"][0];
    assert!(inquiries["kept_why"][0].as_str().unwrap().contains("court case 12/2026"), "{inquiries}");
    assert!(inquiries["oldest"].as_str().unwrap() < inquiries["newest"].as_str().unwrap());

    // The copy, parsed back: exactly the three inquiries, the hold and the digest.
    let res = app.client.get(app.url(&format!("/admin/requests/{id}/copy.json"))).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-disposition"].to_str().unwrap().contains("attachment"));
    let copy: Value = res.json().await.unwrap();
    let mut got: Vec<String> = copy["data"]["inquiries"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_string()).collect();
    let mut want: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(copy["data"]["legal_holds"].as_array().unwrap().len(), 1);
    assert_eq!(copy["data"]["notify_digests"].as_array().unwrap().len(), 1);
    assert_eq!(copy["data"]["data_requests"].as_array().unwrap().len(), 0);
    let held = copy["data"]["inquiries"].as_array().unwrap().iter().find(|i| i["id"] == ids[0].to_string()).unwrap();
    assert!(held["deleted_by"].is_null() && held["kept_because"].as_str().unwrap().contains("legal hold"), "{held}");
    let free = copy["data"]["inquiries"].as_array().unwrap().iter().find(|i| i["id"] == ids[1].to_string()).unwrap();
    assert!(free["deleted_by"].as_str().is_some(), "an inquiry not held says when it goes anyway: {free}");
    let cover = &copy["cover"];
    assert_eq!(cover["address"], ADDRESS);
    assert!(cover["kinds"][0]["promise"].as_str().unwrap().contains("180 days"), "{cover}");
    assert_eq!(cover["not_searchable"].as_array().unwrap().len(), 4);

    // CSV per kind: the same three, formulas neutralised.
    let csv =
        app.client.get(app.url(&format!("/admin/requests/{id}/copy/inquiries.csv"))).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.get(4).unwrap().starts_with("'=HYPERLINK")), "{csv}");
    let cover_txt = app.client.get(app.url(&format!("/admin/requests/{id}/cover.txt"))).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert!(cover_txt.contains(ADDRESS) && cover_txt.contains("keyed hashes"), "{cover_txt}");

    // The dry run says what would go and what stays; nothing is erased by it.
    let preview = find(&app, &cookie, id, true).await;
    assert_eq!(counts(&preview), counts(&found));
    assert_eq!(inquiries_of(&pool, ADDRESS).await, 3);

    // Erase: all but the held inquiry (and the hold itself), then closed.
    let res = call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200);
    app.state.background.settle().await;
    assert_eq!(status(&pool, id).await, "done");
    let after = find(&app, &cookie, id, false).await;
    assert_eq!(
        counts(&after),
        expect(&[("inquiries", (1, 1)), ("suspected_spam", (0, 0)), ("legal_holds", (1, 1)), ("notify_digests", (0, 0)), ("data_requests", (0, 0))])
    );
    let left: Vec<uuid::Uuid> = sqlx::query_scalar("select id from inquiries where lower(email) = $1").bind(ADDRESS).fetch_all(&pool).await.unwrap();
    assert_eq!(left, [ids[0]]);
    assert_eq!(inquiry_count(&pool).await, 10_001, "nobody else's inquiry was touched");
    let other_digests: i64 = sqlx::query_scalar("select count(*) from notify_digests where cardinality(address_hashes) = 1").fetch_one(&pool).await.unwrap();
    assert_eq!(other_digests, 2, "the digests keep the other senders' hashes");
    assert_eq!(after["request"]["erased"], json!([["inquiries", 2], ["notify_digests", 1], ["suspected_spam", 1]]));
    assert_eq!(after["request"]["kept"], json!([["inquiries", 1], ["legal_holds", 1]]));
    assert_eq!(events(&pool, "request.erased").await, 1);

    // Erasing again is refused, and says the request is closed.
    let again = call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(again.status(), 409);
    assert!(again.text().await.unwrap().contains("already closed"));
    // The closed request's page refreshing (live updates) records no new search or dry run.
    let before = (events(&pool, "request.find").await, events(&pool, "request.erase_preview").await);
    for preview in [false, true, false, true] {
        find(&app, &cookie, id, preview).await;
    }
    assert_eq!((events(&pool, "request.find").await, events(&pool, "request.erase_preview").await), before);
}

/// An address with a non-ASCII capital (`İ`), accepted by the contact form, is found and erased
/// by a data request typed in any case: one rule (ASCII letters lower-cased) on both sides.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_address_with_a_dotted_capital_i_is_found_and_erased(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    for email in ["İNCİ@Example.ORG", "İnCİ@EXAMPLE.org"] {
        let res = app.post_contact(&[("name", "İnci"), ("email", email), ("message", "Merhaba, lütfen beni arayın.")]).await;
        assert_eq!(res.status(), 200, "{email}: {}", res.text().await.unwrap());
    }
    assert_eq!(inquiry_count(&pool).await, 2);
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let id = record_id(&app, &cookie, "erasure", "İNCİ@EXAMPLE.org").await;
    let found = find(&app, &cookie, id, false).await;
    assert_eq!(found["request"]["email"], "İncİ@example.org", "the address as compared: ASCII letters lower-cased, İ kept");
    assert_eq!(counts(&found)["inquiries"], (2, 0), "{found}");
    find(&app, &cookie, id, true).await;
    let res = call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200);
    app.state.background.settle().await;
    assert_eq!(status(&pool, id).await, "done");
    assert_eq!(inquiry_count(&pool).await, 0, "both inquiries erased");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn no_audit_event_log_line_or_archived_object_holds_the_address(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    seed(&app, 10).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let id = record_id(&app, &cookie, "erasure", ADDRESS).await;
    find(&app, &cookie, id, false).await;
    find(&app, &cookie, id, true).await;
    for path in ["copy.json", "cover.txt", "copy/inquiries.csv"] {
        let res = app.client.get(app.url(&format!("/admin/requests/{id}/{path}"))).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(res.status(), 200);
        res.bytes().await.unwrap();
    }
    assert_eq!(call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &id.to_string())]).await.status(), 200);
    app.state.background.settle().await;
    let copy_id = record_id(&app, &cookie, "copy", ADDRESS).await;
    assert_eq!(call_form(&app, "/api/admin/requests/close", Some(&cookie), &[("id", &copy_id.to_string())]).await.status(), 200);

    // Every step is an event carrying the request's id and the address's keyed hash.
    let hash = app::kernel::personal::Address::new(&app.state, ADDRESS).hash;
    let kinds: Vec<String> = sqlx::query_scalar(
        "select kind from audit_events where subject_type = 'data_request' and subject_id = $1 and detail like '%' || $2 || '%' order by id",
    )
    .bind(id.to_string())
    .bind(&hash)
    .fetch_all(&pool)
    .await
    .unwrap();
    for kind in ["request.record", "request.find", "request.erase_preview", "request.export", "request.erase", "request.erased"] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} event with the hash: {kinds:?}");
    }
    // Scan every event for the address (any case, and its local part alone).
    let all = |needle: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("select count(*) from audit_events e where strpos(lower(e::text), $1) > 0")
                .bind(needle)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert!(all("request.").await > 0);
    assert_eq!(all("ann.person@example.org").await, 0);
    assert_eq!(all("ann.person").await, 0);

    // Archive a month holding copies of these events and scan the archived object.
    let period = crate::archive::month_back(27);
    let name = format!("audit_events_{:04}_{:02}", period.year(), period.month() as u8);
    let next = app::audit::upkeep::add_months(period.midnight().assume_utc(), 1);
    sqlx::query(&format!("create table {name} partition of audit_events for values from ('{} 00:00:00+00') to ('{}')", period, next.date()))
        .execute(&pool)
        .await
        .unwrap();
    app.state.background.settle().await;
    crate::trail::seal_now(&pool).await;
    sqlx::query(
        "insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
         select $1::timestamptz + make_interval(secs => row_number() over (order by id)), kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash
         from audit_events where occurred_at > now() - interval '1 day'",
    )
    .bind(period.midnight().assume_utc())
    .execute(&pool)
    .await
    .unwrap();
    // As if written when the month was current (the sealer refuses events dated in its past).
    sqlx::query("update audit_seal_cursor set max_at = null").execute(&pool).await.unwrap();
    assert_eq!(crate::trail::seal_now(&pool).await.refused, 0);
    app::audit::upkeep::run(&pool, time::OffsetDateTime::now_utc(), 3).await.unwrap();
    let run = crate::archive::run_archive(&app).await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    let key: String = sqlx::query_scalar("select object_key from audit_partition_archives where period = $1").bind(period).fetch_one(&pool).await.unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&app.read_stored(&key).await.unwrap()[..]).read_to_string(&mut text).unwrap();
    assert!(text.contains(&hash) && text.contains("request.erased"), "the archived month holds the request's events");
    assert!(!text.to_lowercase().contains("ann.person"), "the archived object holds the address");
    // And every other stored object.
    for key in app.stored_files().await {
        let bytes = app.read_stored(&key).await.unwrap();
        assert!(!String::from_utf8_lossy(&bytes).to_lowercase().contains("ann.person"), "{key} holds the address");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_admins_erasing_the_same_request_at_once_do_the_work_once(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    seed(&app, 0).await;
    sqlx::query("insert into inquiries (name, email, message) select 'Ann', $1, 'm' || g from generate_series(1, 1200) g")
        .bind(ADDRESS)
        .execute(&pool)
        .await
        .unwrap();
    let ada = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let bea = session_cookie_for(&pool, create_admin(&pool, "Bea").await).await;
    let id = record_id(&app, &ada, "erasure", ADDRESS).await;
    let id_text = id.to_string();
    let form = [("id", id_text.as_str())];
    let (a, b) = tokio::join!(call_form(&app, "/api/admin/requests/erase", Some(&ada), &form), call_form(&app, "/api/admin/requests/erase", Some(&bea), &form));
    let mut codes = [a.status().as_u16(), b.status().as_u16()];
    codes.sort();
    assert_eq!(codes, [200, 409]);
    // Runs racing (the ticker, a CLI, the button) share one lease and close it once.
    let (r1, r2, r3) = tokio::join!(run_requests(&app), run_requests(&app), run_requests(&app));
    for r in [r1, r2, r3] {
        assert_ne!(r.outcome, app::jobs::Outcome::Failed, "{:?}", r.steps);
    }
    app.state.background.settle().await;
    assert_eq!(status(&pool, id).await, "done");
    assert_eq!(inquiries_of(&pool, ADDRESS).await, 1);
    let erased: Value = sqlx::query_scalar("select erased from data_requests where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(erased, json!({ "inquiries": 1202, "notify_digests": 1 }), "each item counted once");
    assert_eq!(events(&pool, "request.erase").await, 1);
    assert_eq!(events(&pool, "request.erased").await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn bad_input_gets_a_clear_error_and_changes_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let long = format!("{}@example.org", "a".repeat(10_000));
    for (kind, email, received, field) in [
        ("erasure", "not an address", "", "email"),
        ("erasure", long.as_str(), "", "email"),
        ("erasure", "a@b.org?bcc=c@d.org", "", "email"),
        ("wipe", ADDRESS, "", "kind"),
        ("access", ADDRESS, "2999-01-01", "received"),
        ("access", ADDRESS, "yesterday", "received"),
    ] {
        let res = record(&app, &cookie, kind, email, received).await;
        assert_eq!(res.status(), 400, "{kind} {received}");
        let body: Value = res.json().await.unwrap();
        assert!(body["Invalid"][field].as_str().is_some_and(|m| !m.is_empty()), "{field}: {body}");
    }
    // The note outlives the address (forgotten when the request closes): no address in it.
    let res = call_form(
        &app,
        "/api/admin/requests/record",
        Some(&cookie),
        &[("kind", "erasure"), ("email", ADDRESS), ("received", ""), ("note", "cc Ann.B@Example.org")],
    )
    .await;
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert!(body["Invalid"]["note"].as_str().is_some_and(|m| m.contains("email address")), "{body}");
    let rows: i64 = sqlx::query_scalar("select count(*) from data_requests").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 0);
    // Wrong types and unknown ids.
    // A bad id is refused naming the field, on every action that takes one.
    for path in [
        "/api/admin/requests/find",
        "/api/admin/requests/erase",
        "/api/admin/requests/close",
        "/api/admin/shares/revoke",
        "/api/admin/shares/publish",
        "/api/admin/file-requests/revoke",
        "/api/admin/holds/lift",
        "/api/admin/alerts/resolve",
    ] {
        for bad in ["seven", "1.5", "99999999999999999999"] {
            let form: &[(&str, &str)] = if path.ends_with("/find") { &[("id", bad), ("preview", "false")] } else { &[("id", bad)] };
            let res = call_form(&app, path, Some(&cookie), form).await;
            assert_eq!(res.status(), 400, "{path} {bad}");
            let text = res.text().await.unwrap();
            assert!(text.contains("`id` must be a whole number"), "{path} {bad}: {text}");
        }
    }
    // The page of an unknown request, or of a request id that is not a number: 404.
    for path in ["/admin/requests/999", "/admin/requests/seven", "/admin/requests/999?step=preview"] {
        let res = app.client.get(app.url(path)).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
        assert!(res.text().await.unwrap().contains("request-error"), "{path}: the page says so");
    }
    assert_eq!(call_form(&app, "/api/admin/requests/find", Some(&cookie), &[("id", "999"), ("preview", "false")]).await.status(), 404);
    assert_eq!(call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &999.to_string())]).await.status(), 404);
    assert_eq!(call_form(&app, "/api/admin/requests/close", Some(&cookie), &[("id", &999.to_string())]).await.status(), 404);
    for path in ["/admin/requests/999/copy.json", "/admin/requests/x/copy.json", "/admin/requests/999/cover.txt", "/admin/requests/1/copy/passwords.csv"] {
        let res = app.client.get(app.url(path)).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    // Another admin's close at the same moment: one closes it, the other is told who did.
    let id = record_id(&app, &cookie, "access", ADDRESS).await;
    let bea = session_cookie_for(&pool, create_admin(&pool, "Bea").await).await;
    let id_text = id.to_string();
    let form = [("id", id_text.as_str())];
    let (a, b) =
        tokio::join!(call_form(&app, "/api/admin/requests/close", Some(&cookie), &form), call_form(&app, "/api/admin/requests/close", Some(&bea), &form));
    let (ok, refused) = if a.status() == 200 { (a, b) } else { (b, a) };
    assert_eq!(ok.status(), 200);
    assert_eq!(refused.status(), 409);
    let text = refused.text().await.unwrap();
    assert!(text.contains("already closed by"), "{text}");
    assert_eq!(events(&pool, "request.close").await, 1);
    // An access request is not erased.
    let access = record_id(&app, &cookie, "access", ADDRESS).await;
    assert_eq!(call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", &access.to_string())]).await.status(), 409);
    // Without a session: nothing.
    assert_eq!(record(&app, "ebb_session=forged", "erasure", ADDRESS, "").await.status(), 401);
    assert!(app.client.get(app.url(&format!("/admin/requests/{id}/copy.json"))).send().await.unwrap().status().is_redirection(), "no session: sent to sign in");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_plain_form_records_a_request_and_an_error_comes_back_signed(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let post = |email: &'static str| {
        app.client
            .post(app.url("/api/admin/requests/record"))
            .header("cookie", &cookie)
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
            .header("referer", app.url("/admin/requests"))
            .form(&[("kind", "copy"), ("email", email), ("received", ""), ("note", "")])
            .send()
    };
    let res = post(ADDRESS).await.unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());
    assert_eq!(res.headers()["location"], app.url("/admin/requests").as_str());
    let res = post("nobody").await.unwrap();
    let location = res.headers()["location"].to_str().unwrap().to_string();
    assert!(location.contains("__err") && location.contains("__sig"), "{location}");
    let page = app.client.get(&location).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("valid email address"), "the page shows the error beside the field");
    assert!(page.contains(ADDRESS), "the recorded request is listed");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn deadlines_raise_alerts_and_a_closed_request_forgets_its_address(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let today = app::jobs::claim::db_now(&pool).await.unwrap().date();
    let soon = record(&app, &cookie, "access", ADDRESS, &(today - time::Duration::days(25)).to_string()).await.json::<i64>().await.unwrap();
    let late = record(&app, &cookie, "copy", "late@example.org", &(today - time::Duration::days(31)).to_string()).await.json::<i64>().await.unwrap();
    let calm = record_id(&app, &cookie, "access", "calm@example.org").await;
    run_requests(&app).await;
    let alerts: Vec<(String, String)> =
        sqlx::query_as("select subject, message from alerts where kind = 'data_request.due' and resolved_at is null order by subject")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(alerts.len(), 2, "{alerts:?}");
    assert!(alerts.iter().any(|(s, m)| *s == soon.to_string() && m.contains("5 days left")), "{alerts:?}");
    assert!(alerts.iter().any(|(s, m)| *s == late.to_string() && m.contains("past its deadline")), "{alerts:?}");
    assert!(!alerts.iter().any(|(s, _)| *s == calm.to_string()));
    // Not raised again by the next run (the same day): one log line a day, not one a minute.
    run_requests(&app).await;
    let times: i64 = sqlx::query_scalar("select sum(times) from alerts where kind = 'data_request.due'").fetch_one(&pool).await.unwrap();
    assert_eq!(times, 2);
    // The dashboard's figures.
    let overview: Value = call_form(&app, "/api/admin/requests/overview", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!((overview["open"].as_i64(), overview["due_soon"].as_i64(), overview["overdue"].as_i64()), (Some(3), Some(1), Some(1)));

    // Closing resolves the alert; the deadline was met.
    assert_eq!(call_form(&app, "/api/admin/requests/close", Some(&cookie), &[("id", &soon.to_string())]).await.status(), 200);
    let open: i64 = sqlx::query_scalar("select count(*) from alerts where kind = 'data_request.due' and subject = $1 and resolved_at is null")
        .bind(soon.to_string())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(open, 0);
    let found = find(&app, &cookie, soon, false).await;
    assert_eq!(found["request"]["status"], "done");

    // 91 days after closing, prune removes the address and the note; the hash stays.
    sqlx::query("update data_requests set closed_at = now() - interval '91 days' where id = $1").bind(soon).execute(&pool).await.unwrap();
    let prune = app.state.jobs().get("prune").unwrap().clone();
    let RunOutcome::Ran(run) = run_job(&app.state, &prune, Trigger::Cli, true).await.unwrap() else { panic!("prune did not run") };
    assert_eq!(run.step("forget_requests").unwrap().counts, vec![("forgotten", 1)]);
    let (email, note, hash): (Option<String>, String, String) =
        sqlx::query_as("select email, note, email_hash from data_requests where id = $1").bind(soon).fetch_one(&pool).await.unwrap();
    assert_eq!((email, note.as_str()), (None, ""));
    assert_eq!(hash, app::kernel::personal::Address::new(&app.state, ADDRESS).hash);
    assert_eq!(tables_containing(&pool, ADDRESS).await, Vec::<String>::new());
    let gone = app.client.get(app.url(&format!("/admin/requests/{soon}/copy.json"))).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(gone.status(), 410);
    // The retention report lists data requests with their promise.
    let report: Value = app.client.get(app.url("/admin/retention/report.json")).header("cookie", &cookie).send().await.unwrap().json().await.unwrap();
    let kind = report["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "data_requests").expect("data requests in the report");
    assert!(kind["promise"].as_str().unwrap().contains("90 days after the request is closed"), "{kind}");
    assert!(report["kinds"].as_array().unwrap().iter().any(|k| k["kind"] == "notify_digests"));
}

#[cfg(feature = "failpoints")]
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_erasure_killed_mid_way_finishes_with_the_same_result(pool: PgPool) {
    use std::process::Stdio;
    let app = spawn_app(pool.clone()).await;
    seed(&app, 100).await;
    sqlx::query("insert into inquiries (name, email, message) select 'Ann', $1, 'm' || g from generate_series(1, 1500) g")
        .bind(ADDRESS)
        .execute(&pool)
        .await
        .unwrap();
    let mut child = crate::archive::crash::ebb(
        &pool,
        app.storage.path(),
        &["requests", "erase", ADDRESS, "--yes"],
        &[("FAILPOINTS", "requests-after-batch=sleep(120000)")],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let start = std::time::Instant::now();
    while inquiries_of(&pool, ADDRESS).await != 1503 - 500 {
        assert!(start.elapsed() < Duration::from_secs(60), "the first batch never committed");
        assert!(child.try_wait().unwrap().is_none(), "the CLI ended before its first batch");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let id: i64 = sqlx::query_scalar("select id from data_requests").fetch_one(&pool).await.unwrap();
    assert_eq!(status(&pool, id).await, "erasing");
    let erased: Value = sqlx::query_scalar("select erased from data_requests where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(erased, json!({ "inquiries": 500 }), "the killed batch's count was committed with it");

    // Restarted: the next run goes on and closes it, each item counted once.
    let run = run_requests(&app).await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert_eq!(status(&pool, id).await, "done");
    assert_eq!(inquiries_of(&pool, ADDRESS).await, 1, "only the held inquiry stays");
    let erased: Value = sqlx::query_scalar("select erased from data_requests where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(erased, json!({ "inquiries": 1502, "notify_digests": 1 }));
    assert_eq!(inquiry_count(&pool).await, 101);
    assert_eq!(events(&pool, "request.erased").await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_command_line_finds_exports_and_erases_with_the_same_records(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = seed(&app, 5).await;
    let mut out = Vec::new();
    server::requests::cli(&app.state, server::requests::CliAction::Find, "Ann.Person@example.org", &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.lines().any(|l| l.starts_with("inquiries") && l.contains(" 3 ") && l.contains(" 1 ")), "{text}");
    let mut out = Vec::new();
    server::requests::cli(&app.state, server::requests::CliAction::Export, ADDRESS, &mut out).await.unwrap();
    let copy: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(copy["data"]["inquiries"].as_array().unwrap().len(), 3);
    let mut out = Vec::new();
    server::requests::cli(&app.state, server::requests::CliAction::Erase { yes: false }, ADDRESS, &mut out).await.unwrap();
    assert!(String::from_utf8(out).unwrap().contains("dry run: 3 items would be erased"));
    assert_eq!(inquiries_of(&pool, ADDRESS).await, 3);
    let mut out = Vec::new();
    server::requests::cli(&app.state, server::requests::CliAction::Erase { yes: true }, ADDRESS, &mut out).await.unwrap();
    let left: Vec<uuid::Uuid> = sqlx::query_scalar("select id from inquiries where lower(email) = $1").bind(ADDRESS).fetch_all(&pool).await.unwrap();
    assert_eq!(left, [ids[0]]);
    let err = server::requests::cli(&app.state, server::requests::CliAction::Find, "nobody", &mut Vec::new()).await.unwrap_err();
    assert!(err.contains("not an address"), "{err}");
    for kind in ["request.find", "request.erase_preview", "request.record", "request.export", "request.close", "request.erase", "request.erased"] {
        assert!(events(&pool, kind).await >= 1, "{kind}");
    }
    let with_address: i64 =
        sqlx::query_scalar("select count(*) from audit_events e where strpos(lower(e::text), 'ann.person') > 0").fetch_one(&pool).await.unwrap();
    assert_eq!(with_address, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_real_binary_logs_no_address_while_it_finds_copies_and_erases(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    seed(&app, 20).await;
    let out = app.storage.path().join("copy.json");
    let out = out.to_str().unwrap();
    for args in [
        vec!["requests", "find", ADDRESS],
        vec!["requests", "export", ADDRESS, "--out", out],
        vec!["requests", "erase", ADDRESS],
        vec!["requests", "erase", ADDRESS, "--yes"],
    ] {
        let run = crate::archive::crash::ebb(&pool, app.storage.path(), &args, &[("RUST_LOG", "debug,sqlx=debug,h2=info,hyper=info")]).output().unwrap();
        assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
        let printed = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr)).to_lowercase();
        assert!(printed.contains("\"level\":\"info\"") || printed.contains("\"level\":\"debug\""), "the logs were captured: {printed}");
        assert!(!printed.contains("ann.person"), "{args:?} printed or logged the address: {printed}");
    }
    // The copy itself holds it, as it must.
    assert!(std::fs::read_to_string(out).unwrap().contains(ADDRESS));
    assert_eq!(inquiries_of(&pool, ADDRESS).await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_copy_larger_than_a_page_holds_every_item_once(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    seed(&app, 0).await;
    let extra = app::requests::copy::PAGE * 2 + 1;
    // Many with the same time: the keyset's id breaks the ties.
    sqlx::query(
        "insert into inquiries (name, email, message, created_at) select 'Ann', $1, 'm' || g, date_trunc('day', now()) from generate_series(1, $2::int) g",
    )
    .bind(ADDRESS)
    .bind(extra as i32)
    .execute(&pool)
    .await
    .unwrap();
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    let id = record_id(&app, &cookie, "copy", ADDRESS).await;
    let copy: Value = app.client.get(app.url(&format!("/admin/requests/{id}/copy.json"))).header("cookie", &cookie).send().await.unwrap().json().await.unwrap();
    let ids: std::collections::BTreeSet<&str> = copy["data"]["inquiries"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(copy["data"]["inquiries"].as_array().unwrap().len() as i64, extra + 3);
    assert_eq!(ids.len() as i64, extra + 3, "no item twice");
    let csv =
        app.client.get(app.url(&format!("/admin/requests/{id}/copy/inquiries.csv"))).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert_eq!(csv::Reader::from_reader(csv.as_bytes()).records().count() as i64, extra + 3);
}

/// Every kind of personal data has a label in both languages (none shows its table name, as
/// `suspected_spam` did on the request page and the person's cover sheet).
#[test]
fn every_kind_of_personal_data_has_a_label_in_both_languages() {
    let sources = app::personal_sources();
    let mut n = 0;
    for source in sources.iter() {
        for lang in [app::i18n::Lang::En, app::i18n::Lang::Ja] {
            let label = app::common::personal::kind_label(source.kind(), lang);
            assert_ne!(label, source.kind(), "{} has no {lang:?} label", source.kind());
        }
        n += 1;
    }
    assert!(n >= 5, "{n} kinds");
}
