//! Sign-in machinery over HTTP: rate limits, the Origin check, challenge replay, sessions,
//! passkey management. Full ceremonies with an authenticator are in end2end/.

use serde_json::json;
use sqlx::PgPool;

use crate::helpers::{add_placeholder_passkey, call, call_form, create_admin, session_cookie_for, spawn_app, spawn_app_with, VALID};

/// A structurally valid assertion that no passkey of ours produced.
fn bogus_assertion() -> serde_json::Value {
    json!({
        "id": "AAAAAAAAAAAAAAAAAAAAAA",
        "rawId": "AAAAAAAAAAAAAAAAAAAAAA",
        "response": {
            "authenticatorData": "AAAA",
            "clientDataJSON": "AAAA",
            "signature": "AAAA",
            "userHandle": "AAAAAAAAAAAAAAAAAAAAAA"
        },
        "extensions": {},
        "type": "public-key"
    })
}

async fn start_signin(app: &crate::helpers::TestApp) -> uuid::Uuid {
    let res = call_form(app, "/api/auth/signin/start", None, &[]).await;
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body[1]["publicKey"]["challenge"].is_string(), "{body}");
    body[0].as_str().unwrap().parse().unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_used_challenge_cannot_be_replayed(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let challenge = start_signin(&app).await;
    let first = call(&app, "/api/auth/signin/finish", None, json!({ "challenge": challenge, "credential": bogus_assertion() })).await;
    assert_eq!(first.status(), 400);
    let body: serde_json::Value = first.json().await.unwrap();
    assert!(body["BadRequest"].as_str().unwrap().contains("not accepted"), "{body}");
    let left: i64 = sqlx::query_scalar("select count(*) from passkey_challenges").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the challenge was deleted when it was used, even though the answer failed");

    let replay = call(&app, "/api/auth/signin/finish", None, json!({ "challenge": challenge, "credential": bogus_assertion() })).await;
    assert_eq!(replay.status(), 400);
    let body: serde_json::Value = replay.json().await.unwrap();
    assert!(body["BadRequest"].as_str().unwrap().contains("already used"), "{body}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_expired_challenge_is_refused(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let challenge = start_signin(&app).await;
    sqlx::query("update passkey_challenges set expires_at = now() - interval '1 second'").execute(&pool).await.unwrap();
    let res = call(&app, "/api/auth/signin/finish", None, json!({ "challenge": challenge, "credential": bogus_assertion() })).await;
    assert_eq!(res.status(), 400);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body["BadRequest"].as_str().unwrap().contains("expired"), "{body}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn sign_in_beyond_the_per_client_limit_gets_429(pool: PgPool) {
    let app = spawn_app_with(pool, &["--auth-rate-limit", "3"], |_| {}).await;
    for _ in 0..3 {
        assert_eq!(call_form(&app, "/api/auth/signin/start", None, &[]).await.status(), 200);
    }
    let res = call_form(&app, "/api/auth/signin/start", None, &[]).await;
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    // The finish endpoint has its own counter and is limited too.
    for _ in 0..3 {
        call(&app, "/api/auth/signin/finish", None, json!({ "challenge": uuid::Uuid::new_v4(), "credential": bogus_assertion() })).await;
    }
    let res = call(&app, "/api/auth/signin/finish", None, json!({ "challenge": uuid::Uuid::new_v4(), "credential": bogus_assertion() })).await;
    assert_eq!(res.status(), 429);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn sign_in_beyond_the_total_limit_gets_429_whoever_asks(pool: PgPool) {
    let app = spawn_app_with(pool, &["--auth-total-rate-limit", "2", "--trusted-proxy-hops", "1"], |_| {}).await;
    for (i, ip) in ["192.0.2.1", "192.0.2.2", "192.0.2.3"].iter().enumerate() {
        let res = app
            .client
            .post(app.url("/api/auth/signin/start"))
            .header("accept", "application/json")
            .header("x-forwarded-for", *ip)
            .body("")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), if i < 2 { 200 } else { 429 }, "client {ip}");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_request_from_a_foreign_origin_is_refused(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let post = |origin: Option<&'static str>, site: Option<&'static str>| {
        let mut req = app.client.post(app.url("/api/contact")).header("accept", "application/json").form(&VALID);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        if let Some(s) = site {
            req = req.header("sec-fetch-site", s);
        }
        req.send()
    };
    assert_eq!(post(Some("https://evil.example"), None).await.unwrap().status(), 403);
    assert_eq!(post(Some("null"), None).await.unwrap().status(), 403);
    assert_eq!(post(None, Some("cross-site")).await.unwrap().status(), 403);
    assert_eq!(post(Some("http://localhost:3000"), Some("same-origin")).await.unwrap().status(), 200);
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let res = app.client.post(app.url("/api/admin/signout")).header("cookie", &cookie).header("origin", "https://evil.example").body("").send().await.unwrap();
    assert_eq!(res.status(), 403, "a cross-site sign-out (or any admin action) is refused");
    let still: i64 = sqlx::query_scalar("select count(*) from admin_sessions").fetch_one(&pool).await.unwrap();
    assert_eq!(still, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn after_sign_out_the_old_cookie_is_refused(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    let me = call_form(&app, "/api/auth/me", Some(&cookie), &[]).await.json::<serde_json::Value>().await.unwrap();
    assert_eq!(me["name"], "Ada");
    assert_eq!(call_form(&app, "/api/admin/signout", Some(&cookie), &[]).await.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&cookie), &[]).await.status(), 401);
    let me = call_form(&app, "/api/auth/me", Some(&cookie), &[]).await.json::<serde_json::Value>().await.unwrap();
    assert!(me.is_null());
    let page = app.client.get(app.url("/admin")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(page.status(), 303);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_revoked_session_is_refused_and_the_others_stay(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let mine = session_cookie_for(&pool, admin).await;
    let other = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    let sessions: serde_json::Value = call_form(&app, "/api/admin/sessions", Some(&mine), &[]).await.json().await.unwrap();
    let list = sessions.as_array().unwrap();
    assert_eq!(list.len(), 2);
    let other_handle = list.iter().find(|s| s["current"] == false).unwrap()["handle"].as_str().unwrap().to_owned();
    assert_eq!(call_form(&app, "/api/admin/sessions/revoke", Some(&mine), &[("handle", &other_handle)]).await.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&other), &[]).await.status(), 401);
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&mine), &[]).await.status(), 200);
    let recorded: i64 =
        sqlx::query_scalar("select count(*) from audit_events where kind = 'session.revoke' and admin_id = $1").bind(admin).fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 1, "the change went through the admin action record");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_session_older_than_the_absolute_lifetime_is_refused(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    sqlx::query("update admin_sessions set created_at = now() - interval '7 days 1 minute'").execute(&pool).await.unwrap();
    let app = spawn_app(pool).await;
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&cookie), &[]).await.status(), 401);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_last_passkey_cannot_be_removed(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    let first: uuid::Uuid = sqlx::query_scalar("select id from passkeys where admin_id = $1").bind(admin).fetch_one(&pool).await.unwrap();
    let res = call_form(&app, "/api/admin/passkeys/remove", Some(&cookie), &[("id", &first.to_string())]).await;
    assert_eq!(res.status(), 400);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body["Invalid"]["passkey"].as_str().unwrap().contains("last passkey"), "{body}");

    let second = add_placeholder_passkey(&pool, admin, "Phone").await;
    assert_eq!(call_form(&app, "/api/admin/passkeys/remove", Some(&cookie), &[("id", &first.to_string())]).await.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/passkeys/remove", Some(&cookie), &[("id", &second.to_string())]).await.status(), 400);
    let left: Vec<String> = sqlx::query_scalar("select name from passkeys").fetch_all(&pool).await.unwrap();
    assert_eq!(left, ["Phone"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_admin_cannot_touch_another_admins_passkeys(pool: PgPool) {
    let ada = create_admin(&pool, "Ada").await;
    let bob = create_admin(&pool, "Bob").await;
    add_placeholder_passkey(&pool, bob, "Bob's phone").await;
    let bobs: uuid::Uuid = sqlx::query_scalar("select id from passkeys where admin_id = $1 limit 1").bind(bob).fetch_one(&pool).await.unwrap();
    let cookie = session_cookie_for(&pool, ada).await;
    let app = spawn_app(pool.clone()).await;
    assert_eq!(call_form(&app, "/api/admin/passkeys/rename", Some(&cookie), &[("id", &bobs.to_string()), ("name", "mine now")]).await.status(), 404);
    assert_eq!(call_form(&app, "/api/admin/passkeys/remove", Some(&cookie), &[("id", &bobs.to_string())]).await.status(), 400);
    let count: i64 = sqlx::query_scalar("select count(*) from passkeys where admin_id = $1").bind(bob).fetch_one(&pool).await.unwrap();
    assert_eq!(count, 2);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_invite_created_on_the_account_page_opens_the_invite_page_once(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    let invite: serde_json::Value = call_form(&app, "/api/admin/invites", Some(&cookie), &[("name", "Bob")]).await.json().await.unwrap();
    let url = invite["url"].as_str().unwrap();
    assert!(url.starts_with("http://localhost:3000/invite/"), "{url}");
    let token = url.rsplit('/').next().unwrap();
    assert_eq!(token.len(), 43, "256 bits in unpadded base64url");
    let stored: Vec<u8> = sqlx::query_scalar("select token_hash from admin_invites").fetch_one(&pool).await.unwrap();
    assert_ne!(stored, token.as_bytes(), "only the hash is stored");
    let info: serde_json::Value = call_form(&app, "/api/auth/invite", None, &[("token", token)]).await.json().await.unwrap();
    assert_eq!(info["suggested_name"], "Bob");
    assert_eq!(call_form(&app, "/api/auth/invite", None, &[("token", "guessed-token")]).await.status(), 404);
    sqlx::query("update admin_invites set expires_at = now() - interval '1 second'").execute(&pool).await.unwrap();
    assert_eq!(call_form(&app, "/api/auth/invite", None, &[("token", token)]).await.status(), 404, "an expired invite is refused");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn start_up_prints_an_invite_only_while_there_is_no_admin(pool: PgPool) {
    let config = crate::helpers::test_config(&[]);
    server::invite_first_admin_if_none(&pool, &config).await.unwrap();
    let invites: i64 = sqlx::query_scalar("select count(*) from admin_invites").fetch_one(&pool).await.unwrap();
    assert_eq!(invites, 1);
    create_admin(&pool, "Ada").await;
    server::invite_first_admin_if_none(&pool, &config).await.unwrap();
    let invites: i64 = sqlx::query_scalar("select count(*) from admin_invites").fetch_one(&pool).await.unwrap();
    assert_eq!(invites, 1, "no new invite once an admin exists");
}
