//! The admin gate, enumerated: every server function in the registry and every page in the
//! router is either on the public list below or refused without a session. A new admin
//! endpoint cannot be forgotten: it appears here by itself.

use leptos::server_fn::axum::server_fn_paths;
use sqlx::PgPool;

use crate::helpers::{call_form, create_admin, session_cookie_for, spawn_app};

/// Server functions anyone may call. Everything else must be under /api/admin/.
const PUBLIC_SERVER_FNS: &[&str] = &[
    "/api/contact",
    // A proof-of-work challenge for the contact form (signed, single use; nothing stored).
    "/api/contact/challenge",
    "/api/auth/me",
    "/api/auth/invite",
    "/api/auth/invite/start",
    "/api/auth/invite/finish",
    "/api/auth/signin/start",
    "/api/auth/signin/finish",
    "/api/share",
    "/api/file-request",
    // The retention promises a visitor reads at /retention (settings, no personal data).
    "/api/retention",
    // A visitor's colour scheme (a cookie; nothing stored).
    "/api/prefs/theme",
    // A visitor's language (a cookie; nothing stored).
    "/api/prefs/lang",
];

/// Pages anyone may open. Everything else must be under /admin.
const PUBLIC_PAGES: &[&str] = &["/", "/signin", "/invite/{token}", "/s/{token}", "/r/{token}", "/retention"];

fn admin_server_fns() -> Vec<String> {
    let mut paths: Vec<String> = server_fn_paths().map(|(p, _)| p.to_string()).collect();
    paths.sort();
    paths.dedup();
    for p in &paths {
        assert!(
            PUBLIC_SERVER_FNS.contains(&p.as_str()) || p.starts_with(server::security::ADMIN_API_PREFIX),
            "server function {p} is neither public (listed in gate.rs) nor under /api/admin/"
        );
    }
    paths.into_iter().filter(|p| p.starts_with(server::security::ADMIN_API_PREFIX)).collect()
}

fn admin_pages() -> Vec<String> {
    let routes = server::route_list();
    let mut pages: Vec<String> = routes.iter().map(|r| r.path().to_string()).collect();
    pages.sort();
    pages.dedup();
    for p in &pages {
        assert!(PUBLIC_PAGES.contains(&p.as_str()) || server::security::is_admin_page(p), "page {p} is neither public (listed in gate.rs) nor under /admin");
    }
    // A page with a parameter (`/admin/requests/{id}`) is asked for with a sample value.
    let sample = |p: &str| p.split('/').map(|seg| if seg.starts_with('{') { "1" } else { seg }).collect::<Vec<_>>().join("/");
    pages.into_iter().filter(|p| server::security::is_admin_page(p)).map(|p| sample(&p)).collect()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_admin_server_function_refuses_a_request_without_a_session(pool: PgPool) {
    let app = spawn_app(pool).await;
    let fns = admin_server_fns();
    assert!(fns.len() >= 9, "the registry lists the admin functions: {fns:?}");
    for path in &fns {
        for cookie in [None, Some("ebb_session=forged-or-expired")] {
            let mut req = app.client.post(app.url(path)).header("accept", "application/json").body("");
            if let Some(c) = cookie {
                req = req.header("cookie", c);
            }
            let res = req.send().await.unwrap();
            assert_eq!(res.status(), 401, "{path} with cookie {cookie:?}");
            let body: serde_json::Value = res.json().await.unwrap();
            assert_eq!(body, "Unauthorized", "{path}");
        }
    }
    println!("gate: {} admin server functions refused: {}", fns.len(), fns.join(", "));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_admin_page_redirects_a_visitor_to_sign_in_and_back(pool: PgPool) {
    let app = spawn_app(pool).await;
    let pages = admin_pages();
    assert!(pages.len() >= 6, "{pages:?}");
    for page in &pages {
        let res = app.client.get(app.url(page)).send().await.unwrap();
        assert_eq!(res.status(), 303, "{page}");
        let location = res.headers()["location"].to_str().unwrap();
        let expected: String = url::form_urlencoded::byte_serialize(page.as_bytes()).collect();
        assert_eq!(location, format!("/signin?next={expected}"), "{page}");
    }
    for (path, admin) in server::plain_routes() {
        let res = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status() == 303 || res.status() == 401, admin, "{path}");
    }
    println!("gate: {} admin pages redirected: {}", pages.len(), pages.join(", "));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_signed_in_admin_passes_the_gate(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool).await;
    // The data request whose page is among them (an unknown one is a 404).
    let res =
        call_form(&app, "/api/admin/requests/record", Some(&cookie), &[("kind", "access"), ("email", "ann@example.org"), ("received", ""), ("note", "")]).await;
    assert_eq!(res.status(), 200);
    for page in admin_pages() {
        let res = app.client.get(app.url(&page)).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(res.status(), 200, "{page}");
    }
    let res = app.client.post(app.url("/api/admin/passkeys")).header("accept", "application/json").header("cookie", &cookie).body("").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let list: serde_json::Value = res.json().await.unwrap();
    assert_eq!(list[0]["name"], "Laptop");
}

/// Behind the gate, each admin route still refuses on its own: were the gate ever to miss one,
/// it answers 401, never 500 (axum's `Extension` extractor would fail with 500).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn admin_routes_answer_401_not_500_if_the_gate_missed_them(pool: PgPool) {
    use tower::ServiceExt;
    let app = spawn_app(pool.clone()).await;
    // The handlers alone, with no gate and no session layer: every admin route of the router.
    let bare = server::bare_plain_routes().with_state(app.state.clone());
    let admin_routes: Vec<String> = server::plain_routes().into_iter().filter(|(_, admin)| *admin).map(|(p, _)| sample_path(p)).collect();
    assert!(admin_routes.len() >= 8, "{admin_routes:?}");
    for path in admin_routes {
        let method = if path == app::shares::routes::UPLOAD_PATH { "POST" } else { "GET" };
        let mut req = axum::http::Request::builder().method(method).uri(&path).body(axum::body::Body::empty()).unwrap();
        req.extensions_mut().insert(axum::extract::ConnectInfo(std::net::SocketAddr::from(([127, 0, 0, 1], 9))));
        let res = bare.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 401, "{path}");
    }
}

/// A route template with its parameters filled (`{id}` → 1, `{file}` → a kind's CSV).
fn sample_path(template: &str) -> String {
    template.replace("{id}", "1").replace("{file}", "inquiries.csv")
}
