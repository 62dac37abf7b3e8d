//! Spam defence over HTTP: the proof of work (accepted once, a replay quarantined on any
//! instance; expired, forged and wrong-difficulty proofs quarantined), the no-JavaScript form
//! quarantined behind the normal thank-you, "Not spam" counted once, the quarantine's own
//! retention, and the per-day figures on the dashboard's API (`/metrics`: the metrics binary).

use app::jobs::{run_job, RunOutcome, Trigger};
use sqlx::PgPool;

use crate::helpers::{
    call_form, create_admin, inquiry_count, session_cookie_for, solve_challenge, spam_count, spawn_app, spawn_app_with, spawn_second_instance, TestApp, VALID,
};

fn with_proof<'a>(proof: &'a str, stamp: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut f = VALID.to_vec();
    f.push(("altcha", proof));
    f.push(("started", stamp));
    f
}

async fn signals(pool: &PgPool) -> Vec<Vec<String>> {
    sqlx::query_scalar("select signals from suspected_spam order by created_at, id").fetch_all(pool).await.unwrap()
}

async fn figure(pool: &PgPool, name: &str) -> i64 {
    sqlx::query_scalar("select coalesce(sum(n), 0)::int8 from contact_daily where figure = $1").bind(name).fetch_one(pool).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_solved_challenge_is_accepted_once_and_its_replay_is_quarantined_on_another_instance(pool: PgPool) {
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    let res = a.client.get(a.url("/api/contact/challenge")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store", "a challenge is never cached");
    let proof = solve_challenge(&res.json().await.unwrap());
    let stamp = a.page_stamp(60);

    let first = a.post_contact_as_bot(&with_proof(&proof, &stamp)).await;
    assert_eq!(first.status(), 200);
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (1, 0), "the first use reaches the inbox");

    // The same proof again, on the other instance: the same answer, but kept as suspected spam.
    let replay = b.post_contact_as_bot(&with_proof(&proof, &stamp)).await;
    assert_eq!(replay.status(), 200, "no oracle: the replay gets the same answer");
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (1, 1));
    assert_eq!(signals(&pool).await, vec![vec!["proof_replayed".to_string()]]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn of_twelve_concurrent_uses_of_one_proof_on_two_instances_exactly_one_reaches_the_inbox(pool: PgPool) {
    let a = spawn_app_with(pool.clone(), &["--contact-rate-limit", "100"], |_| {}).await;
    let b = spawn_second_instance(pool.clone(), &a, &["--contact-rate-limit", "100"]).await;
    let proof = a.solved_proof();
    let stamp = a.page_stamp(60);
    let fields = with_proof(&proof, &stamp);
    let posts = (0..12).map(|i| if i % 2 == 0 { a.post_contact_as_bot(&fields) } else { b.post_contact_as_bot(&fields) });
    for res in futures::future::join_all(posts).await {
        assert_eq!(res.status(), 200);
    }
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (1, 11));
    assert_eq!(figure(&pool, "signal:proof_replayed").await, 11);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn expired_forged_and_wrong_difficulty_proofs_are_quarantined(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let settings = app.state.domain::<app::contact::ContactSettings>().spam;
    let stamp = app.page_stamp(60);
    let now = time::OffsetDateTime::now_utc();

    // Expired: issued by this server two hours ago (challenges live an hour).
    let old = app::contact::spam::challenge(&app.state, &settings, now - time::Duration::hours(2)).unwrap();
    app.post_contact_as_bot(&with_proof(&solve_challenge(&old), &stamp)).await;
    // Forged: the same shape, signed with a key guessed by the bot.
    let forged = altcha_lib_rs::create_challenge(altcha_lib_rs::ChallengeOptions {
        hmac_key: "guessed-key",
        max_number: Some(settings.difficulty),
        salt: Some(format!("0123456789abcdef.{}", settings.difficulty)),
        params: Some([("expires".to_string(), (now.unix_timestamp() + 600).to_string())].into()),
        ..Default::default()
    })
    .unwrap();
    let forged = app::contact::PowChallenge {
        algorithm: "SHA-256".into(),
        challenge: forged.challenge,
        maxnumber: forged.maxnumber,
        salt: forged.salt,
        signature: forged.signature,
    };
    app.post_contact_as_bot(&with_proof(&solve_challenge(&forged), &stamp)).await;
    // Wrong difficulty: solved for an instance that asks for less work.
    let easy = spawn_second_instance(pool.clone(), &app, &["--spam-pow-difficulty", "1500"]).await;
    let easy_proof = easy.solved_proof();
    assert_eq!(app.post_contact_as_bot(&with_proof(&easy_proof, &stamp)).await.status(), 200);
    // Garbage in the field.
    app.post_contact_as_bot(&with_proof("bm90IGpzb24=", &stamp)).await;

    assert_eq!(inquiry_count(&pool).await, 0);
    let s = signals(&pool).await;
    assert_eq!(s, vec![vec!["proof_expired".to_string()], vec!["proof_invalid".into()], vec!["proof_invalid".into()], vec!["proof_invalid".into()]]);
    // The same proof is fine where it was issued.
    assert_eq!(easy.post_contact_as_bot(&with_proof(&easy_proof, &stamp)).await.status(), 200);
    assert_eq!(inquiry_count(&pool).await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn without_javascript_a_submission_is_quarantined_behind_the_same_thank_you(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    // A browser without JavaScript sends the page's stamp, but no proof.
    let (proof, stamp) = (app.solved_proof(), app.page_stamp(60));
    let mut no_js = VALID.to_vec();
    no_js.push(("started", &stamp));
    let bot = app.post_contact_plain(&no_js).await;
    let mut human_fields = no_js.clone();
    human_fields.push(("altcha", &proof));
    let human = app.post_contact_plain(&human_fields).await;
    assert_eq!((bot.status(), human.status()), (reqwest::StatusCode::SEE_OTHER, reqwest::StatusCode::SEE_OTHER));
    assert_eq!(bot.headers()["location"], human.headers()["location"], "the visitor sees the same thank-you");
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (1, 1));
    assert_eq!(signals(&pool).await, vec![vec!["proof_missing".to_string()]]);
    // The JSON answer is the same too.
    let bot_json = app.post_contact_as_bot(&VALID).await;
    let human_json = app.post_contact(&VALID).await;
    assert_eq!(bot_json.status(), human_json.status());
    assert_eq!(bot_json.text().await.unwrap(), human_json.text().await.unwrap());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_honeypot_a_forged_stamp_with_markup_and_a_link_farm_are_quarantined_and_a_fast_person_is_not(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let mut honeypot = VALID.to_vec();
    honeypot.push(("website", "http://spam.example"));
    app.post_contact(&honeypot).await;
    // A stamp this server did not sign, and markup: two weak signals together.
    let p = app.solved_proof();
    let forged = [
        ("name", "Bot"),
        ("email", "bot@example.org"),
        ("message", "<a href=x>cheap</a>"),
        ("altcha", p.as_str()),
        ("started", "1700000000.00000000000000000000000000000000"),
    ];
    app.post_contact_as_bot(&forged).await;
    // Markup alone (a person pasting a snippet) stays in the inbox.
    app.post_contact(&[("name", "Dev"), ("email", "dev@example.org"), ("message", "my page shows <b>bold</b> wrong")]).await;
    // Sent at once after the page was served: a fast fill alone (autofill, a test suite) is
    // not enough either.
    let (p2, fresh) = (app.solved_proof(), app.page_stamp(0));
    let mut fast = VALID.to_vec();
    fast.extend([("altcha", p2.as_str()), ("started", fresh.as_str())]);
    app.post_contact_as_bot(&fast).await;
    let links = "Cheap: http://a.example http://b.example https://c.example";
    app.post_contact(&[("name", "Bot"), ("email", "bot@example.org"), ("message", links)]).await;
    let mut s = signals(&pool).await;
    s.sort();
    assert_eq!(s, vec![vec!["honeypot".to_string()], vec!["links".into()], vec!["stamp_invalid".into(), "markup".into()]]);
    assert_eq!(inquiry_count(&pool).await, 2, "the snippet and the fast person reached the inbox");
    assert_eq!(figure(&pool, "signal:too_fast").await, 1, "the fast fill is counted as a signal that fired");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn not_spam_moves_the_submission_to_the_inbox_and_counts_it_once(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    app.post_contact_as_bot(&VALID).await;
    let id: uuid::Uuid = sqlx::query_scalar("select id from suspected_spam").fetch_one(&pool).await.unwrap();
    let created: time::OffsetDateTime = sqlx::query_scalar("select created_at from suspected_spam").fetch_one(&pool).await.unwrap();

    // The inbox's figures do not count it.
    let counts: serde_json::Value = call_form(&app, "/api/admin/inbox/counts", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(counts["total"], 0);
    let list: serde_json::Value = call_form(&app, "/api/admin/spam", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["signals"], serde_json::json!(["proof_missing", "stamp_invalid"]));
    // Not for anyone without a session.
    assert_eq!(call_form(&app, "/api/admin/spam/release", None, &[("id", &id.to_string())]).await.status(), 401);

    let id_text = id.to_string();
    let form = [("id", id_text.as_str())];
    let a = call_form(&app, "/api/admin/spam/release", Some(&cookie), &form);
    let b = call_form(&app, "/api/admin/spam/release", Some(&cookie), &form);
    let (a, b) = tokio::join!(a, b);
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 404], "the second press finds nothing to move");
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (1, 0));
    let (moved_id, moved_at): (uuid::Uuid, time::OffsetDateTime) = sqlx::query_as("select id, created_at from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!((moved_id, moved_at), (id, created), "the same submission, with when it arrived");
    assert_eq!(figure(&pool, "released").await, 1);
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'inquiry.release'").fetch_one(&pool).await.unwrap();
    assert_eq!(events, 1);
    let counts: serde_json::Value = call_form(&app, "/api/admin/inbox/counts", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(counts["total"], 1);
}

async fn insert_spam(pool: &PgPool, email: &str, age_days: i32) {
    sqlx::query(
        "insert into suspected_spam (id, name, email, message, created_at, signals, score)
         values (gen_random_uuid(), 'Bot', $1, 'buy', now() - make_interval(days => $2), '{proof_missing}', 10)",
    )
    .bind(email)
    .bind(age_days)
    .execute(pool)
    .await
    .unwrap();
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn quarantine_is_pruned_after_its_own_retention_while_inbox_items_stay(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    insert_spam(&pool, "old@example.org", 15).await;
    insert_spam(&pool, "young@example.org", 10).await;
    insert_spam(&pool, "held@example.org", 30).await;
    sqlx::query("insert into legal_holds (email, reason) values ('held@example.org', 'Case 7: keep until decided')").execute(&pool).await.unwrap();
    sqlx::query("insert into inquiries (name, email, message, created_at) values ('Ann', 'ann@example.org', 'hi', now() - interval '20 days')")
        .execute(&pool)
        .await
        .unwrap();

    let run = |app: &TestApp| {
        let state = app.state.clone();
        async move {
            let job = state.jobs().get("prune").unwrap();
            assert!(matches!(run_job(&state, job, Trigger::Cli, true).await.unwrap(), RunOutcome::Ran(_)));
        }
    };
    run(&app).await;
    let left: Vec<String> = sqlx::query_scalar("select email from suspected_spam order by email").fetch_all(&pool).await.unwrap();
    assert_eq!(left, ["held@example.org", "young@example.org"], "14 days by default; a legal hold keeps its item");
    assert_eq!(inquiry_count(&pool).await, 1, "a 20-day-old inquiry stays (180 days)");

    // The retention report lists the quarantine with its promise.
    let report: serde_json::Value = call_form(&app, "/api/admin/retention", Some(&cookie), &[]).await.json().await.unwrap();
    let kind = report["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "suspected_spam").expect("a suspected_spam row").clone();
    assert_eq!((kind["count"].as_i64(), kind["held"].as_i64()), (Some(2), Some(1)), "{kind}");

    // A shorter retention, set by an admin (validated, recorded), applies at the next run.
    assert_eq!(call_form(&app, "/api/admin/spam/retention", Some(&cookie), &[("days", "0")]).await.status(), 400);
    assert_eq!(call_form(&app, "/api/admin/spam/retention", Some(&cookie), &[("days", "5")]).await.status(), 200);
    sqlx::query("delete from settings where key = 'last_cleanup_at'").execute(&pool).await.unwrap();
    run(&app).await;
    let left: Vec<String> = sqlx::query_scalar("select email from suspected_spam").fetch_all(&pool).await.unwrap();
    assert_eq!(left, ["held@example.org"]);
    assert_eq!(inquiry_count(&pool).await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_days_figures_count_accepted_quarantined_refused_and_the_signals(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--contact-rate-limit", "3"], |_| {}).await;
    let cookie = session_cookie_for(&pool, create_admin(&pool, "Ada").await).await;
    app.post_contact(&VALID).await;
    app.post_contact(&VALID).await;
    app.post_contact_as_bot(&VALID).await;
    assert_eq!(app.post_contact(&VALID).await.status(), 429);

    let days: serde_json::Value = call_form(&app, "/api/admin/contact/figures", Some(&cookie), &[]).await.json().await.unwrap();
    let today = &days[0];
    assert_eq!((today["accepted"].as_i64(), today["quarantined"].as_i64(), today["refused"].as_i64()), (Some(2), Some(1), Some(1)), "{today}");
    assert_eq!(today["signals"], serde_json::json!([["proof_missing", 1], ["stamp_invalid", 1]]));
    assert_eq!(days.as_array().unwrap().len(), 14);
    assert_eq!(call_form(&app, "/api/admin/contact/figures", None, &[]).await.status(), 401);
}
