//! Sign-in machinery over HTTP: rate limits, the Origin check, challenge replay, sessions,
//! passkey management. Full ceremonies with an authenticator are in end2end/.

use serde_json::json;
use sqlx::PgPool;

use crate::helpers::{add_placeholder_passkey, call, call_form, create_admin, create_admin_with_role, session_cookie_for, spawn_app, spawn_app_with, VALID};

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

/// Posts to an authentication endpoint as the client `ip` (behind one trusted proxy).
async fn post_as(app: &crate::helpers::TestApp, ip: &str, path: &str, json_body: Option<serde_json::Value>) -> reqwest::Response {
    let req = app.client.post(app.url(path)).header("accept", "application/json").header("x-forwarded-for", ip);
    let req = match json_body {
        Some(b) => req.json(&b),
        None => req.header("content-type", "application/x-www-form-urlencoded").body(""),
    };
    req.send().await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_flood_from_a_thousand_addresses_cannot_lock_an_admin_out(pool: PgPool) {
    let app = spawn_app_with(pool, &["--trusted-proxy-hops", "1"], |_| {}).await;
    let mut limited = 0;
    for i in 0..1000 {
        let ip = format!("198.51.{}.{}", i / 250, i % 250 + 1);
        assert_eq!(post_as(&app, &ip, "/api/auth/signin/start", None).await.status(), 200, "a challenge for {ip}");
        let answer = json!({ "challenge": uuid::Uuid::new_v4(), "credential": bogus_assertion() });
        let status = post_as(&app, &ip, "/api/auth/signin/finish", Some(answer)).await.status();
        assert!(status == 400 || status == 429, "{ip}: {status}");
        limited += usize::from(status == 429);
    }
    // Refusals beyond the total limit (300 per 5 minutes by default) are slowed down...
    assert_eq!(limited, 700, "refusals beyond the total limit answer 429");
    // ...but an admin arriving now still gets a challenge to sign in with, and their answer is
    // checked (a real sign-in after such a flood: end2end/tests/admin-auth.spec.ts).
    let res = post_as(&app, "203.0.113.9", "/api/auth/signin/start", None).await;
    assert_eq!(res.status(), 200);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn clients_in_one_ipv6_64_share_one_limit(pool: PgPool) {
    let app = spawn_app_with(pool, &["--auth-rate-limit", "3", "--trusted-proxy-hops", "1"], |_| {}).await;
    for ip in ["2001:db8:7:1::1", "2001:db8:7:1::2", "2001:db8:7:1:ffff::3"] {
        assert_eq!(post_as(&app, ip, "/api/auth/signin/start", None).await.status(), 200, "{ip}");
    }
    assert_eq!(post_as(&app, "2001:db8:7:1:abcd::4", "/api/auth/signin/start", None).await.status(), 429, "a fourth address of the same /64");
    assert_eq!(post_as(&app, "2001:db8:7:2::1", "/api/auth/signin/start", None).await.status(), 200, "the next /64 is another client");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn rate_limit_buckets_are_keyed_with_the_server_secret(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--trusted-proxy-hops", "1"], |_| {}).await;
    assert_eq!(post_as(&app, "192.0.2.44", "/api/auth/signin/start", None).await.status(), 200);
    let buckets: Vec<String> = sqlx::query_scalar("select bucket from rate_limit_counters").fetch_all(&pool).await.unwrap();
    assert_eq!(buckets.len(), 1);
    // What an unkeyed hash of the address would give (anyone can compute it for all of IPv4).
    let unkeyed = app::ratelimit::bucket(&app::ratelimit::Limit { name: "auth.signin", max: 1, window: std::time::Duration::from_secs(1) }, "192.0.2.44");
    assert_ne!(buckets[0], unkeyed);
    // The key is the secret's HMAC of the address: recomputed with the secret it matches.
    let secret = app.state.keyring.mac(app::kernel::keyring::Purpose::RateLimit, "192.0.2.44");
    let keyed = app::ratelimit::bucket(&app::ratelimit::Limit { name: "auth.signin", max: 1, window: std::time::Duration::from_secs(1) }, &secret);
    assert_eq!(buckets[0], keyed);
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

/// `ebb admin remove` (the operator's break-glass path): the admin's sessions and passkeys end
/// at once, the removal is journaled and recorded as the operator's with the admin's name, the
/// last admin stays, and a name two admins share is refused.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_admin_removed_by_the_operator_is_locked_out_at_once_and_the_last_admin_stays(pool: PgPool) {
    let ada = create_admin(&pool, "Ada").await;
    let bob = create_admin(&pool, "Bob").await;
    add_placeholder_passkey(&pool, bob, "Bob's phone").await;
    let (ada_cookie, bob_cookie) = (session_cookie_for(&pool, ada).await, session_cookie_for(&pool, bob).await);
    let app = spawn_app(pool.clone()).await;
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&bob_cookie), &[]).await.status(), 200);

    let said = server::remove_admin(&app.state, "Bob").await.unwrap();
    assert!(said.contains("Bob") && said.contains("2 passkey(s)") && said.contains("1 session(s)"), "{said}");
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&bob_cookie), &[]).await.status(), 401, "the session ended at once");
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&ada_cookie), &[]).await.status(), 200, "the other admin's stays");
    let left: i64 = sqlx::query_scalar("select count(*) from passkeys where admin_id = $1").bind(bob).fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "no passkey of Bob's can sign in");
    let (admin, detail): (Option<uuid::Uuid>, String) =
        sqlx::query_as("select admin_id, detail from audit_events where kind = 'admin.remove' and subject_id = $1")
            .bind(bob.to_string())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(admin, None, "recorded as the operator's, not an admin's");
    assert!(detail.starts_with("Bob, by the operator on the host"), "{detail}");
    let (journal, _) = app::storage::journal::read_all(&*app.state.blobs).await.unwrap();
    assert!(
        journal.iter().any(|e| e.deletion == app::storage::journal::Deletion::AdminRemove { ids: vec![bob] }),
        "journaled: a restore cannot bring Bob back"
    );

    let err = server::remove_admin(&app.state, &ada.to_string()).await.unwrap_err();
    assert!(err.contains("only admin") && err.contains("ebb admin invite"), "{err}");
    assert!(server::remove_admin(&app.state, "Bob").await.unwrap_err().contains("no admin is named"));
    let carl = create_admin(&pool, "Ada").await;
    let err = server::remove_admin(&app.state, "Ada").await.unwrap_err();
    assert!(err.contains("2 admins are named"), "{err}");
    server::remove_admin(&app.state, &carl.to_string()).await.unwrap();
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&ada_cookie), &[]).await.status(), 200);
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
    assert_eq!(stored, app::token::hash_token(token), "the invite's hash is stored");
    assert_eq!(crate::helpers::tables_containing(&pool, token).await, Vec::<String>::new(), "the token itself is stored nowhere");
    let info: serde_json::Value = call_form(&app, "/api/auth/invite", None, &[("token", token)]).await.json().await.unwrap();
    assert_eq!(info["suggested_name"], "Bob");
    assert_eq!(call_form(&app, "/api/auth/invite", None, &[("token", "guessed-token")]).await.status(), 404);
    sqlx::query("update admin_invites set expires_at = now() - interval '1 second'").execute(&pool).await.unwrap();
    assert_eq!(call_form(&app, "/api/auth/invite", None, &[("token", token)]).await.status(), 404, "an expired invite is refused");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn start_up_prints_an_invite_only_while_there_is_no_admin(pool: PgPool) {
    let config = crate::helpers::test_config(&[]);
    let mut terminal = Vec::new();
    server::invite_first_admin_if_none(&pool, &config, &mut terminal).await.unwrap();
    let invites: i64 = sqlx::query_scalar("select count(*) from admin_invites").fetch_one(&pool).await.unwrap();
    assert_eq!(invites, 1);
    let printed = String::from_utf8(terminal).unwrap();
    assert!(printed.contains("http://localhost:3000/invite/"), "{printed}");
    create_admin(&pool, "Ada").await;
    let mut terminal = Vec::new();
    server::invite_first_admin_if_none(&pool, &config, &mut terminal).await.unwrap();
    let invites: i64 = sqlx::query_scalar("select count(*) from admin_invites").fetch_one(&pool).await.unwrap();
    assert_eq!(invites, 1, "no new invite once an admin exists");
    assert!(terminal.is_empty());
}

/// The value of the first `name="…"` attribute in `html`, unescaped.
fn attribute(html: &str, name: &str) -> String {
    let start = html.find(&format!(r#"{name}=""#)).unwrap_or_else(|| panic!("no {name} in {html}")) + name.len() + 2;
    let value = &html[start..start + html[start..].find('"').unwrap()];
    value.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'").replace("&amp;", "&")
}

/// `/signin` does not load the app's client: the passkey ceremony is its own inline script,
/// which finds the page to return to (an admin page only) and its texts, in the visitor's
/// language, on the card.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_signin_page_brings_its_own_script_with_its_texts_and_a_safe_return_page(pool: PgPool) {
    let app = spawn_app(pool).await;
    let page = |query: &'static str, lang: &'static str| {
        let req = app.client.get(app.url(&format!("/signin{query}"))).header("accept-language", lang);
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let ja = page("?next=%2Fadmin%2Fsettings", "ja").await;
    assert!(!ja.contains("modulepreload") && !ja.contains(".hydrate()"), "no hydration on /signin: {ja}");
    assert!(ja.contains("navigator.credentials.get") && ja.contains(r#"<script type="module" nonce=""#), "the sign-in script, with the nonce: {ja}");
    assert_eq!(attribute(&ja, "data-next"), "/admin/settings");
    let texts: serde_json::Value = serde_json::from_str(&attribute(&ja, "data-texts")).unwrap();
    assert_eq!(texts["idle"], "パスキーでサインイン");
    assert_eq!(texts["NotAllowedError"], "パスキーの確認画面が閉じられたか、時間切れになりました。もう一度お試しください。");
    assert!(texts["errors"]["RateLimited"].as_str().unwrap().contains("{n}"), "{texts}");
    assert!(texts["errors"]["Internal"].is_string(), "{texts}");
    // The button waits for the script; the autofill field and the error line are hidden until used.
    assert!(ja.contains(r#"data-testid="signin" disabled"#), "{ja}");
    for other_site in ["?next=%2F%2Fevil.example%2Fadmin", "?next=https%3A%2F%2Fevil.example%2Fadmin", "?next=%2Fs%2Fx", ""] {
        assert_eq!(attribute(&page(other_site, "en").await, "data-next"), "/admin", "{other_site}");
    }
    let en: serde_json::Value = serde_json::from_str(&attribute(&page("", "en").await, "data-texts")).unwrap();
    assert_eq!(en["idle"], "Sign in with a passkey");
}

/// An owner manages the others' roles on the Account page: a change applies to the admin's
/// session at its next request, is recorded with both roles, and the last owner stays one.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_owner_changes_a_role_and_it_applies_at_once_but_the_last_owner_stays(pool: PgPool) {
    let owner = create_admin(&pool, "Olga").await;
    let aud = create_admin_with_role(&pool, "Aud", "auditor").await;
    let (owner_cookie, aud_cookie) = (session_cookie_for(&pool, owner).await, session_cookie_for(&pool, aud).await);
    let app = spawn_app(pool.clone()).await;
    assert_eq!(call_form(&app, "/api/admin/inbox", Some(&aud_cookie), &[]).await.status(), 403, "an auditor does not read the inbox");
    assert_eq!(call_form(&app, "/api/admin/admins", Some(&aud_cookie), &[]).await.status(), 403, "nor the admins");

    let aud_id = aud.to_string();
    let res = call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &aud_id), ("role", "admin")]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/inbox", Some(&aud_cookie), &[]).await.status(), 200, "the same session, now an admin's");
    let detail: String = sqlx::query_scalar("select detail from audit_events where kind = 'admin.role' and subject_id = $1 and admin_id = $2")
        .bind(&aud_id)
        .bind(owner)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(detail, "Aud: auditor → admin, by Olga");
    // The role they already have: answered, nothing recorded.
    let res = call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &aud_id), ("role", "admin")]).await;
    assert_eq!(res.status(), 200);
    let events: i64 =
        sqlx::query_scalar("select count(*) from audit_events where kind = 'admin.role' and subject_id = $1").bind(&aud_id).fetch_one(&pool).await.unwrap();
    assert_eq!(events, 1, "a change to the same role is no change");

    // A role that is not one, and an admin who is not one.
    let res = call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &aud_id), ("role", "root")]).await;
    assert_eq!(res.status(), 400);
    let res = call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &uuid::Uuid::new_v4().to_string()), ("role", "admin")]).await;
    assert_eq!(res.status(), 404);
    // The only owner cannot stop being one, nor remove themselves.
    let res = call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &owner.to_string()), ("role", "admin")]).await;
    assert_eq!(res.status(), 409);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body["Conflict"].as_str().unwrap().contains("only owner"), "{body}");
    assert_eq!(call_form(&app, "/api/admin/admins/remove", Some(&owner_cookie), &[("id", &owner.to_string())]).await.status(), 400);
    // With a second owner, the first may step down; the list says who is what.
    call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &aud_id), ("role", "owner")]).await;
    assert_eq!(call_form(&app, "/api/admin/admins/role", Some(&owner_cookie), &[("id", &owner.to_string()), ("role", "auditor")]).await.status(), 200);
    let res = call_form(&app, "/api/admin/admins", Some(&aud_cookie), &[]).await;
    let list: serde_json::Value = res.json().await.unwrap();
    let roles: Vec<(&str, &str)> = list.as_array().unwrap().iter().map(|a| (a["name"].as_str().unwrap(), a["role"].as_str().unwrap())).collect();
    assert_eq!(roles, [("Olga", "auditor"), ("Aud", "owner")]);
    assert_eq!(call_form(&app, "/api/admin/admins", Some(&owner_cookie), &[]).await.status(), 403, "Olga is an auditor now");

    // The operator's break-glass path, from the host.
    let said = server::change_admin(&app.state, "Olga", app::auth::db::Change::Role(app::auth::Role::Owner)).await.unwrap();
    assert!(said.contains("is now owner (was auditor)"), "{said}");
    let (actor, detail): (Option<uuid::Uuid>, String) =
        sqlx::query_as("select admin_id, detail from audit_events where kind = 'admin.role' and subject_id = $1 order by id desc limit 1")
            .bind(owner.to_string())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(actor, None, "recorded as the operator's");
    assert!(detail.ends_with("by the operator on the host (ebb admin role)"), "{detail}");
}

/// An owner removes an admin: their session ends at once, the removal is theirs in the audit log
/// and journaled (a restore cannot bring the admin back).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_owner_removes_an_admin_and_their_session_ends_at_once(pool: PgPool) {
    let owner = create_admin(&pool, "Olga").await;
    let bob = create_admin_with_role(&pool, "Bob", "admin").await;
    let (owner_cookie, bob_cookie) = (session_cookie_for(&pool, owner).await, session_cookie_for(&pool, bob).await);
    let app = spawn_app(pool.clone()).await;
    // An admin cannot remove anyone.
    assert_eq!(call_form(&app, "/api/admin/admins/remove", Some(&bob_cookie), &[("id", &owner.to_string())]).await.status(), 403);
    assert_eq!(call_form(&app, "/api/admin/admins/remove", Some(&owner_cookie), &[("id", &bob.to_string())]).await.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/passkeys", Some(&bob_cookie), &[]).await.status(), 401, "Bob's session ended");
    let actor: Option<uuid::Uuid> = sqlx::query_scalar("select admin_id from audit_events where kind = 'admin.remove' and subject_id = $1")
        .bind(bob.to_string())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(actor, Some(owner));
    let (journal, _) = app::storage::journal::read_all(&*app.state.blobs).await.unwrap();
    assert!(journal.iter().any(|e| e.deletion == app::storage::journal::Deletion::AdminRemove { ids: vec![bob] }));
}

/// An invite carries the role its admin gets; only an owner makes one.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_invite_carries_its_role_and_only_an_owner_makes_one(pool: PgPool) {
    let owner = create_admin(&pool, "Olga").await;
    let adam = create_admin_with_role(&pool, "Adam", "admin").await;
    let (owner_cookie, adam_cookie) = (session_cookie_for(&pool, owner).await, session_cookie_for(&pool, adam).await);
    let app = spawn_app(pool.clone()).await;
    assert_eq!(call_form(&app, "/api/admin/invites", Some(&adam_cookie), &[("name", "Eve")]).await.status(), 403);
    assert_eq!(call_form(&app, "/api/admin/invites", Some(&owner_cookie), &[("name", "Aud"), ("role", "auditor")]).await.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/invites", Some(&owner_cookie), &[("name", "Ann")]).await.status(), 200);
    let roles: Vec<(String, String)> =
        sqlx::query_as("select name, role from admin_invites where created_by = $1 order by name").bind(owner).fetch_all(&pool).await.unwrap();
    assert_eq!(roles, [("Ann".to_string(), "admin".to_string()), ("Aud".to_string(), "auditor".to_string())]);
    let invite: uuid::Uuid = sqlx::query_scalar("select id from admin_invites where name = 'Aud'").fetch_one(&pool).await.unwrap();
    let passkey = serde_json::json!({});
    let new = app::auth::db::NewAdmin { id: uuid::Uuid::new_v4(), name: "Aud", credential_id: &[7, 7], passkey: &passkey, passkey_name: "Key" };
    assert!(app::auth::db::create_admin_from_invite(&pool, &*app.state.blobs, invite, new).await.unwrap());
    let role: String = sqlx::query_scalar("select role from admins where name = 'Aud'").fetch_one(&pool).await.unwrap();
    assert_eq!(role, "auditor");
}

/// A session whose passkey check is older than the step-up window (5 minutes) can still read, but
/// not do what is sensitive: export, copy, erase, lift a hold, delete in bulk, lower a retention
/// period, add a passkey or an admin, change a role. Each answers 403 `StepUp` and changes nothing;
/// one inquiry deleted alone, a raised retention period and reading still work.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_stale_session_cookie_cannot_do_what_is_sensitive(pool: PgPool) {
    let owner = create_admin(&pool, "Olga").await;
    let cookie = session_cookie_for(&pool, owner).await;
    sqlx::query("update admin_sessions set verified_at = now() - interval '6 minutes'").execute(&pool).await.unwrap();
    let app = spawn_app(pool.clone()).await;
    let ids: Vec<uuid::Uuid> = (0..3).map(|_| uuid::Uuid::new_v4()).collect();
    for id in &ids {
        sqlx::query("insert into inquiries (id, name, email, message) values ($1, 'Ann', 'ann@example.org', 'Hello')").bind(id).execute(&pool).await.unwrap();
    }
    let step_up = |res: reqwest::Response, what: &'static str| async move {
        assert_eq!(res.status(), 403, "{what}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body, json!("StepUp"), "{what}");
    };
    step_up(call(&app, "/api/admin/inbox/delete", Some(&cookie), json!({ "ids": ids[..2] })).await, "bulk delete").await;
    step_up(call_form(&app, "/api/admin/invites", Some(&cookie), &[("name", "Eve")]).await, "invite").await;
    step_up(call_form(&app, "/api/admin/passkeys/start", Some(&cookie), &[("passkey_name", "Key")]).await, "add a passkey").await;
    step_up(call_form(&app, "/api/admin/admins/role", Some(&cookie), &[("id", &owner.to_string()), ("role", "owner")]).await, "role").await;
    step_up(call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", "30")]).await, "lower the retention").await;
    step_up(call_form(&app, "/api/admin/spam/retention", Some(&cookie), &[("days", "7")]).await, "lower the spam retention").await;
    step_up(call_form(&app, "/api/admin/holds/lift", Some(&cookie), &[("id", "1")]).await, "lift a hold").await;
    step_up(call_form(&app, "/api/admin/requests/erase", Some(&cookie), &[("id", "1")]).await, "erase").await;
    step_up(call_form(&app, "/api/admin/step-up/check", Some(&cookie), &[]).await, "the pages' check").await;
    let res = app.client.get(app.url("/admin/inbox/export.csv")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 403, "export");
    assert!(res.text().await.unwrap().contains("confirm with your passkey"));
    let res = app.client.get(app.url("/admin/requests/1/copy.json")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 403, "copy");
    let left: i64 = sqlx::query_scalar("select count(*) from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 3, "nothing was deleted");
    let invites: i64 = sqlx::query_scalar("select count(*) from admin_invites").fetch_one(&pool).await.unwrap();
    assert_eq!(invites, 0);

    // What is not sensitive still works with the same cookie.
    assert_eq!(call(&app, "/api/admin/inbox/delete", Some(&cookie), json!({ "ids": [ids[2]] })).await.status(), 200, "one at a time");
    assert_eq!(call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", "365")]).await.status(), 200, "a longer retention");
    assert_eq!(call_form(&app, "/api/admin/inbox", Some(&cookie), &[]).await.status(), 200, "reading");

    // After a passkey check (the step-up ceremony sets this; Playwright runs it with a virtual
    // authenticator), the same cookie may, for the window only.
    sqlx::query("update admin_sessions set verified_at = now() - interval '4 minutes'").execute(&pool).await.unwrap();
    assert_eq!(call_form(&app, "/api/admin/step-up/check", Some(&cookie), &[]).await.status(), 200);
    assert_eq!(call(&app, "/api/admin/inbox/delete", Some(&cookie), json!({ "ids": ids[..2] })).await.status(), 200);
    let res = app.client.get(app.url("/admin/inbox/export.csv")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 200);
}
