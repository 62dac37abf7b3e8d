//! The admin gate, enumerated: every server function in the registry and every page in the
//! router is either on the public list below or refused without a session. A new admin
//! endpoint cannot be forgotten: it appears here by itself.

use leptos::server_fn::axum::server_fn_paths;
use sqlx::PgPool;

use crate::helpers::{call_form, create_admin, create_admin_with_role, session_cookie_for, spawn_app};

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
    for (path, role) in server::plain_routes() {
        let res = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status() == 303 || res.status() == 401, role.is_some(), "{path}");
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
    let admin_routes: Vec<String> = server::plain_routes().into_iter().filter(|(_, role)| role.is_some()).map(|(p, _)| sample_path(p)).collect();
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

/// What an auditor may call (reading the audit trail and the retention report, their own
/// passkeys and sessions): every other admin server function needs an admin or an owner.
const AUDITOR_MAY: &[&str] = &[
    "/api/admin/signout",
    "/api/admin/passkeys",
    "/api/admin/passkeys/start",
    "/api/admin/passkeys/finish",
    "/api/admin/passkeys/rename",
    "/api/admin/passkeys/remove",
    "/api/admin/sessions",
    "/api/admin/sessions/revoke",
    "/api/admin/step-up/start",
    "/api/admin/step-up/finish",
    "/api/admin/step-up/check",
    "/api/admin/audit",
    "/api/admin/audit/admins",
    "/api/admin/audit/upkeep",
    "/api/admin/audit/archive",
    "/api/admin/audit/archive/link",
    "/api/admin/audit/exports",
    "/api/admin/audit/exports/request",
    "/api/admin/audit/exports/link",
    "/api/admin/audit/trail",
    "/api/admin/audit/verify",
    "/api/admin/retention",
    "/api/admin/jobs",
    "/api/admin/alerts",
];

/// What only an owner may call: the admins, their invites and roles, and the retention settings.
const OWNER_ONLY: &[&str] = &[
    "/api/admin/invites",
    "/api/admin/admins",
    "/api/admin/admins/role",
    "/api/admin/admins/remove",
    "/api/admin/retention/save",
    "/api/admin/spam/retention",
];

/// The least role each admin server function needs, by the lists above.
fn needs(path: &str) -> &'static str {
    if AUDITOR_MAY.contains(&path) {
        "auditor"
    } else if OWNER_ONLY.contains(&path) {
        "owner"
    } else {
        "admin"
    }
}

/// Every admin server function, called by an auditor and by an admin (no arguments: the role is
/// checked before they are read): one below its role gets 403 with the role it needs, and
/// nothing of the call runs; one at or above it gets past the gate (an answer that is not 403).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_admin_server_function_refuses_a_role_below_its_own(pool: PgPool) {
    let auditor = create_admin_with_role(&pool, "Aud", "auditor").await;
    let admin = create_admin_with_role(&pool, "Adam", "admin").await;
    let cookies = [("auditor", session_cookie_for(&pool, auditor).await), ("admin", session_cookie_for(&pool, admin).await)];
    let app = spawn_app(pool).await;
    let rank = |r: &str| ["auditor", "admin", "owner"].iter().position(|x| *x == r).unwrap();
    let mut refused = 0;
    for path in admin_server_fns() {
        // Signing out ends the session the other calls use: it is an auditor's, checked last.
        if path == "/api/admin/signout" {
            continue;
        }
        for (role, cookie) in &cookies {
            let res = app.client.post(app.url(&path)).header("accept", "application/json").header("cookie", cookie).body("").send().await.unwrap();
            let status = res.status();
            if rank(role) < rank(needs(&path)) {
                assert_eq!(status, 403, "{path} called by an {role}");
                let body: serde_json::Value = res.json().await.unwrap();
                assert_eq!(body, serde_json::json!({ "NotAllowed": { "needs": needs(&path) } }), "{path}");
                refused += 1;
            } else {
                assert!(status != 403 && status != 401, "{path} called by an {role}: {status}");
            }
        }
    }
    assert!(refused >= 40, "{refused} refusals");
    let res = call_form(&app, "/api/admin/signout", Some(&cookies[0].1), &[]).await;
    assert_eq!(res.status(), 200, "an auditor signs out");
}

/// The plain admin routes and the admin pages, opened by an auditor: the ones for admins answer
/// 403 before anything runs or renders; the auditor's own ones open.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_auditor_opens_only_the_auditors_pages_and_routes(pool: PgPool) {
    let auditor = create_admin_with_role(&pool, "Aud", "auditor").await;
    let cookie = session_cookie_for(&pool, auditor).await;
    let app = spawn_app(pool).await;
    let auditor_pages = ["/admin", "/admin/audit", "/admin/audit/archive", "/admin/retention", "/admin/account"];
    for page in admin_pages() {
        let res = app.client.get(app.url(&page)).header("cookie", &cookie).send().await.unwrap();
        let expected = if auditor_pages.contains(&page.as_str()) { 200 } else { 403 };
        assert_eq!(res.status(), expected, "{page}");
        if expected == 403 {
            let html = res.text().await.unwrap();
            assert!(html.contains("needs the admin role") && html.contains("/admin\""), "{page}: {html}");
        }
    }
    let mut refused = Vec::new();
    for (path, role) in server::plain_routes() {
        let Some(role) = role else { continue };
        let path = sample_path(path);
        let method = if path == app::shares::routes::UPLOAD_PATH { reqwest::Method::POST } else { reqwest::Method::GET };
        let res = app.client.request(method, app.url(&path)).header("cookie", &cookie).send().await.unwrap();
        if role > app::auth::Role::Auditor {
            assert_eq!(res.status(), 403, "{path}");
            refused.push(path);
        } else {
            assert_ne!(res.status(), 403, "{path}");
        }
    }
    assert!(refused.len() >= 5, "{refused:?}");
}

/// Each admin server function states its role in its source twice — the `Needs` middleware that
/// answers before the arguments are read, and `require` in its body — and both say what the
/// lists above say. Read from the source: a function with no `Needs`, or two roles that differ,
/// fails here.
#[test]
fn each_admin_server_function_states_one_role_in_its_source() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app");
    let mut sources = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let role_in = |text: &str, before: &str| text.split(before).nth(1).and_then(|rest| rest.split(')').next()).map(str::to_lowercase);
    let mut seen = 0;
    for source in &sources {
        for block in source.split("#[server(").skip(1) {
            let Some(endpoint) = block.split("endpoint = \"").nth(1).and_then(|r| r.split('"').next()) else { continue };
            if !endpoint.starts_with("admin/") {
                continue;
            }
            let path = format!("/api/{endpoint}");
            let header = block.split("pub async fn").next().unwrap();
            let needs_role = role_in(header, "Needs(Role::").unwrap_or_else(|| panic!("{path} has no #[middleware(Needs(…))]"));
            assert_eq!(needs_role, needs(&path), "{path}: its Needs says {needs_role}");
            let body = block.split("pub async fn").nth(1).unwrap();
            let body = body.split("\n}\n").next().unwrap();
            if let Some(required) = role_in(body, "require(Role::").or_else(|| role_in(body, "require_fresh(Role::")) {
                assert_eq!(required, needs_role, "{path}: require and Needs differ");
            }
            seen += 1;
        }
    }
    assert!(seen >= 50, "{seen} admin server functions read");
}
