//! The hostile-input corpus (issue 14): what bots and odd clients send — malformed forms and JSON,
//! bytes that are not UTF-8, numbers past their types, NUL characters, overlong tokens, path
//! traversal, odd headers, wrong methods, broken chunked bodies and bodies that trickle in — against
//! every page, plain route and server function, admin ones both without and with a session (most
//! handlers sit behind the gate). A client's mistake is a 4xx: no answer is a 5xx, no ERROR line is
//! logged, and the server still serves afterwards. Every wrong answer is listed, so one run shows
//! them all.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use leptos::server_fn::axum::server_fn_paths;
use reqwest::header::HeaderValue;
use reqwest::multipart::{Form, Part};
use reqwest::{Method, RequestBuilder};
use sqlx::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

use crate::helpers::{create_admin, session_cookie_for, spawn_app_with, TestApp, VALID};

/// The public URL of the test configuration: state-changing requests carry it as `Origin`, as
/// Ebb's own pages do, so they reach the handlers.
const ORIGIN: &str = "http://localhost:3000";
/// Longest wait for an answer through the HTTP client, and on a raw connection.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
const RAW_ANSWER_WITHIN: Duration = Duration::from_secs(3);
/// Rate limits high enough that the corpus reaches the handlers instead of a 429 (the limits have
/// their own tests); one trusted proxy, so `X-Forwarded-For` is parsed.
const FLAGS: &[&str] = &["--contact-rate-limit", "100000", "--auth-rate-limit", "100000", "--auth-total-rate-limit", "1000000", "--trusted-proxy-hops", "1"];
/// Signing out ends the session it is called with: each such call gets a session of its own.
const SIGN_OUT: &str = "/api/admin/signout";
const NIL: &str = "00000000-0000-0000-0000-000000000000";
const FORM: Option<&str> = Some("application/x-www-form-urlencoded");
const JSON: Option<&str> = Some("application/json");
const MULTIPART: Option<&str> = Some("multipart/form-data; boundary=X");
const SLOW_CLIENTS: usize = 20;

/// Every argument name of the server functions but the contact form's honeypot (which skips
/// validation): a body that sets them all is read by every function.
const FIELDS: &[&str] = &[
    "token",
    "name",
    "passkey_name",
    "conditional",
    "challenge",
    "credential",
    "id",
    "handle",
    "kind",
    "admin",
    "subject",
    "from",
    "to",
    "before",
    "month",
    "reason",
    "days",
    "job",
    "email",
    "message",
    "search",
    "after",
    "ids",
];

/// Arguments that pass a function's parsing and take a NUL, an overflowing cursor or a date at
/// the calendar's start to its queries (the every-field bodies fail earlier, on another field).
const TARGETED: &[(&str, &[(&str, &str)])] = &[
    ("/api/contact", &[("name", "Ann\0"), ("email", "ann@example.org"), ("message", "a\0b")]),
    ("/api/admin/inbox", &[("search", "\0")]),
    ("/api/admin/inbox", &[("after", "170141183460469231731687303715884105727_00000000-0000-0000-0000-000000000000")]),
    ("/api/admin/audit", &[("kind", ""), ("admin", ""), ("subject", "\0"), ("from", ""), ("to", "")]),
    ("/api/admin/audit", &[("kind", ""), ("admin", ""), ("subject", ""), ("from", ""), ("to", ""), ("before", "170141183460469231731687303715884105727.1")]),
    ("/api/admin/passkeys/rename", &[("id", NIL), ("name", "a\0b")]),
    ("/api/admin/audit/archive/link", &[("month", "2024-01"), ("reason", "a reason\0 of ten")]),
    ("/api/admin/audit/exports/request", &[("from", "0001-01-01"), ("to", "0001-01-02")]),
    ("/api/auth/invite", &[("token", "\0")]),
    ("/api/share", &[("token", "\0")]),
];

/// JSON values that no field takes as they are: wrong types, numbers no integer type holds, a
/// lone surrogate.
const JSON_VALUES: &[&str] = &[
    "null",
    "5",
    "-1",
    "0.5",
    "1e400",
    "-9223372036854775809",
    "18446744073709551616",
    "true",
    "[]",
    "{}",
    "[null]",
    "\"\\ud800\"",
    "[\"00000000-0000-0000-0000-000000000000\"]",
];

/// Multipart bodies no browser sends.
const RAW_UPLOADS: &[(&str, Option<&str>, &[u8])] = &[
    ("cut off inside the file", MULTIPART, b"--X\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nabc"),
    ("of no parts", MULTIPART, b"--X--\r\n"),
    ("with a part without a name", MULTIPART, b"--X\r\nContent-Disposition: form-data\r\n\r\nabc\r\n--X--\r\n"),
    ("with an expiry that is not UTF-8", MULTIPART, b"--X\r\nContent-Disposition: form-data; name=\"expires_hours\"\r\n\r\n\xff\xfe\r\n--X--\r\n"),
    ("of bytes 0xff 0xfe", MULTIPART, b"\xff\xfe"),
    ("without a boundary", Some("multipart/form-data"), b"--X--\r\n"),
    ("of a form, not multipart", FORM, b"expires_hours=1"),
    ("empty, without a content type", None, b""),
];

/// Paths that climb out of the served folders or are not what a client library would send (it
/// would normalise them): only a raw connection sends them as written.
const RAW_TARGETS: &[&str] = &[
    "/pkg/../Cargo.toml",
    "/pkg/%2e%2e/%2e%2e/etc/passwd",
    "/pkg/..%2f..%2fCargo.toml",
    "/pkg/..%5c..%5cCargo.toml",
    "/pkg/%00",
    "/blob/..%2f..",
    "/../../etc/passwd",
    "//etc/passwd",
    "/s/../admin",
    "/admin/../api/admin/inbox",
    "/%ff%fe",
    "*",
    "http://evil.example/",
];

/// Header lines and lengths that break HTTP's framing, each on a contact form post of
/// `name=a` (6 bytes).
const ODD_FRAMING: &[(&str, &str)] = &[
    ("a header value with a bare CR", "X-Note: a\rb\r\nContent-Length: 6\r\n"),
    ("a header value with a bare LF", "X-Note: a\nInjected: yes\r\nContent-Length: 6\r\n"),
    ("a folded header line", "X-Note: a\r\n b\r\nContent-Length: 6\r\n"),
    ("a header line without a colon", "Injected\r\nContent-Length: 6\r\n"),
    ("a NUL in a header value", "X-Note: a\0b\r\nContent-Length: 6\r\n"),
    ("a negative Content-Length", "Content-Length: -1\r\n"),
    ("a Content-Length past u64", "Content-Length: 99999999999999999999999\r\n"),
    ("two different Content-Lengths", "Content-Length: 6\r\nContent-Length: 7\r\n"),
    ("a Content-Length shorter than the body", "Content-Length: 2\r\n"),
    ("Content-Length and chunked", "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n"),
    ("an unknown Transfer-Encoding", "Transfer-Encoding: gzip\r\n"),
];

/// The ERROR events logged on this thread. `#[sqlx::test]` runs each test on a current-thread
/// runtime of its own, so the server's tasks log here, and tests running in parallel do not.
#[derive(Clone, Default)]
struct ErrorLines(Arc<Mutex<Vec<String>>>);

impl ErrorLines {
    /// Collects until the guard is dropped.
    fn capture() -> (Self, tracing::subscriber::DefaultGuard) {
        let lines = Self::default();
        let subscriber = tracing_subscriber::registry().with(tracing_subscriber::filter::LevelFilter::ERROR).with(lines.clone());
        (lines, tracing::subscriber::set_default(subscriber))
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl<S: tracing::Subscriber> Layer<S> for ErrorLines {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = format!("ERROR logged by {}:", event.metadata().target());
        event.record(&mut FieldText(&mut line));
        self.0.lock().unwrap().push(line);
    }
}

struct FieldText<'a>(&'a mut String);

impl tracing::field::Visit for FieldText<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

/// One request of the corpus.
struct Case {
    req: RequestBuilder,
    label: String,
    /// The only right status, when there is one; otherwise anything below 500 is.
    expect: Option<u16>,
}

impl Case {
    fn new(req: RequestBuilder, label: impl Into<String>) -> Self {
        Case { req, label: label.into(), expect: None }
    }

    /// A request from another site: refused with 403 before any handler runs.
    fn cross_site(req: RequestBuilder, label: impl Into<String>) -> Self {
        Case { req, label: label.into(), expect: Some(403) }
    }
}

/// A request body of the corpus.
struct Body {
    label: String,
    content_type: Option<&'static str>,
    bytes: Bytes,
}

impl Body {
    fn new(label: impl Into<String>, content_type: Option<&'static str>, bytes: impl Into<Bytes>) -> Self {
        Body { label: label.into(), content_type, bytes: bytes.into() }
    }
}

/// The bodies every server function gets: `api` as the hydrated client sends them (asking for
/// JSON), `browser` also as a browser without JavaScript posts a form (answered with redirects).
struct Bodies {
    api: Vec<Body>,
    browser: Vec<Body>,
}

impl Bodies {
    fn new() -> Self {
        let mut api = value_bodies();
        api.extend(raw_forms());
        api.extend(raw_json());
        api.extend([
            Body::new("empty, without a content type", None, Bytes::new()),
            Body::new("JSON as text/plain", Some("text/plain"), "{}"),
            Body::new("a form as multipart without a boundary", Some("multipart/form-data"), "token=a"),
            Body::new("a form in UTF-7", Some("application/x-www-form-urlencoded; charset=utf-7"), "token=+ZeVnLIqe-"),
        ]);
        Bodies { api, browser: raw_forms() }
    }
}

/// Values for every field at once: numbers at and past the limits of their types, NUL
/// characters, odd Unicode, dates no calendar has, cursors whose arithmetic overflows, a
/// well-formed but unknown token, and text long enough to fill the body limit.
fn hostile_values() -> Vec<String> {
    let mut values: Vec<String> = [
        "",
        "-1",
        "0",
        "-9223372036854775808",
        "9223372036854775807",
        "99999999999999999999999999",
        "1e400",
        "NaN",
        "true",
        "\0",
        "a\0b",
        "\u{202e}\u{feff}💥<script>",
        "../../etc/passwd",
        NIL,
        "9999-12-31",
        "-99999-01-01",
        "999999999-12",
        // The audit log's cursor: i128::MAX microseconds, which it multiplies by 1,000.
        "170141183460469231731687303715884105727.1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    // The inbox's cursor, at both ends of i128.
    values.push(format!("170141183460469231731687303715884105727_{NIL}"));
    values.push(format!("-170141183460469231731687303715884105728_{NIL}"));
    values.push("A".repeat(43));
    // The whole body just under the 64 KiB limit.
    values.push("a".repeat(60_000 / FIELDS.len()));
    values
}

/// `{"field": value, …}` for every field.
fn every_field_json(value: &str) -> String {
    format!("{{{}}}", FIELDS.iter().map(|f| format!("\"{f}\":{value}")).collect::<Vec<_>>().join(","))
}

/// Each hostile value in every field, as a form and as a JSON string; each odd JSON value in
/// every field.
fn value_bodies() -> Vec<Body> {
    let mut out = Vec::new();
    for v in hostile_values() {
        let form = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(FIELDS.iter().map(|f| (*f, v.as_str()))).finish();
        out.push(Body::new(format!("form, every field {}", short(&format!("{v:?}"))), FORM, form));
        let json = serde_json::Value::from(v.as_str()).to_string();
        out.push(Body::new(format!("JSON, every field {}", short(&json)), JSON, every_field_json(&json)));
    }
    for v in JSON_VALUES {
        out.push(Body::new(format!("JSON, every field {v}"), JSON, every_field_json(v)));
    }
    out
}

/// Form bodies no browser sends: not UTF-8 (raw and escaped), fields twice, fields without
/// values or with brackets, stray `%` and `=`, one field past the body limit.
fn raw_forms() -> Vec<Body> {
    let each = |value: &str| FIELDS.iter().map(|f| format!("{f}={value}")).collect::<Vec<_>>().join("&");
    let form = |label: &str, bytes: Vec<u8>| Body::new(format!("form {label}"), FORM, bytes);
    vec![
        form("empty", Vec::new()),
        form("of bytes 0xff 0xfe", vec![0xff, 0xfe]),
        form("with every field raw 0xff 0xfe", FIELDS.iter().flat_map(|f| [f.as_bytes(), &b"=\xff\xfe&"[..]].concat()).collect()),
        form("with every field %FF%FE", each("%FF%FE").into_bytes()),
        form("with every field twice", format!("{}&{}", each("a"), each("b")).into_bytes()),
        form("with every field bracketed", FIELDS.iter().map(|f| format!("{f}[x][]=1")).collect::<Vec<_>>().join("&").into_bytes()),
        form("with fields without values", FIELDS.join("&").into_bytes()),
        form("of stray % and =", b"%&=&==&%zz&%%".to_vec()),
        form("with a 100 KB field", format!("token={}", "a".repeat(100 * 1024)).into_bytes()),
    ]
}

/// JSON bodies no function takes: cut off, not JSON, not UTF-8, of the wrong shape, nested past
/// any parser's depth, with a byte-order mark or duplicate keys, too many ids, a sign-in answer to
/// an unknown challenge, one string past the body limit.
fn raw_json() -> Vec<Body> {
    let json = |label: &str, bytes: Vec<u8>| Body::new(format!("JSON {label}"), JSON, bytes);
    let mut out: Vec<Body> = [
        ("empty", ""),
        ("cut off", "{\"challenge\":"),
        ("that is a form", "challenge=1&credential=2"),
        ("of a wrong type", "{\"challenge\": 5}"),
        ("array", "[]"),
        ("null", "null"),
        ("string", "\"x\""),
        ("number", "5"),
        ("object without fields", "{}"),
        ("with a byte-order mark", "\u{feff}{}"),
        ("with duplicate keys", "{\"token\":\"a\",\"token\":\"b\",\"name\":\"a\",\"name\":\"b\"}"),
        ("without its credential", "{\"challenge\":\"00000000-0000-0000-0000-000000000000\"}"),
    ]
    .into_iter()
    .map(|(label, text)| json(label, text.as_bytes().to_vec()))
    .collect();
    let sign_in_answer = serde_json::json!({
        "challenge": NIL,
        "credential": {
            "id": "AAAAAAAAAAAAAAAAAAAAAA",
            "rawId": "AAAAAAAAAAAAAAAAAAAAAA",
            "response": { "authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA", "userHandle": null },
            "extensions": {},
            "type": "public-key"
        }
    });
    out.extend([
        json("of bytes 0xff 0xfe", vec![0xff, 0xfe]),
        json("with a string that is not UTF-8", b"{\"token\":\"\xff\xfe\"}".to_vec()),
        json("nested 10,000 deep", "[".repeat(10_000).into_bytes()),
        json("with 1,001 ids", format!("{{\"ids\":[{}]}}", vec![format!("\"{NIL}\""); 1001].join(",")).into_bytes()),
        json("answering an unknown sign-in challenge", sign_in_answer.to_string().into_bytes()),
        json("with a 100 KB string", format!("{{\"token\":\"{}\"}}", "a".repeat(100 * 1024)).into_bytes()),
    ]);
    out
}

/// Values for a route's `{parameter}`: short, well-formed but unknown, 10 KB, escaped bytes that
/// are not UTF-8, an escaped NUL, an emoji, an escaped climb out of the folder.
fn tokens() -> Vec<String> {
    vec!["x".into(), "A".repeat(43), "A".repeat(10_000), "%ff%fe".into(), "%00".into(), "%F0%9F%92%A5".into(), "..%2f..%2fetc%2fpasswd".into()]
}

/// Query strings for every page and route: the contact form's error parameters (which only this
/// server's own errors may fill), sign-in's `next`, the exports' and signed reads' parameters, all
/// with hostile values.
fn queries() -> Vec<String> {
    let mut queries: Vec<String> = [
        "",
        "?%ff=%fe",
        "?__path=/api/contact&__err=x",
        "?__err=%ff",
        "?__path=/api/contact&__err=%ff%fe",
        "?__path=/api/contact&__err=%7B%22Invalid%22%3A5%7D",
        "?next=//evil.example",
        "?next=%00",
        "?sent=%ff",
        "?q=%00&bom=%ff",
        "?kind=%ff&admin=%00&subject=&from=-99999-01-01&to=99999-12-31",
        "?kind=&admin=&subject=&from=1970-01-01&to=9999-12-31",
        "?key=../../etc/passwd&expires=-1&name=%00&sig=00",
        "?key=a&expires=99999999999999999999&name=a&sig=zz",
        "?key=a&expires=-9223372036854775808&name=a&sig=",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    queries.push(format!("?__path=/api/contact&__err={}", "x".repeat(10_000)));
    queries.push(format!("?q={}", "x".repeat(10_000)));
    queries
}

fn who(cookie: Option<&str>) -> &'static str {
    if cookie.is_some() {
        "with a session"
    } else {
        "visitor"
    }
}

fn needs_session(path: &str) -> bool {
    server::security::is_admin_page(path) || path.starts_with(server::security::ADMIN_API_PREFIX)
}

/// The route with each `{parameter}` segment set to `value`.
fn fill(route: &str, value: &str) -> String {
    route.split('/').map(|s| if s.starts_with('{') { value } else { s }).collect::<Vec<_>>().join("/")
}

/// `s` as the report shows it: cut after 120 characters, with its length.
fn short(s: &str) -> String {
    if s.chars().count() <= 120 {
        s.to_owned()
    } else {
        format!("{}… ({} bytes)", s.chars().take(120).collect::<String>(), s.len())
    }
}

/// A request as Ebb's own pages send it: same-origin, with the admin's cookie if any.
fn request(app: &TestApp, method: Method, path: &str, cookie: Option<&str>, accept: &str) -> RequestBuilder {
    let req = app.client.request(method, app.url(path)).header("origin", ORIGIN).header("accept", accept);
    match cookie {
        Some(c) => req.header("cookie", c),
        None => req,
    }
}

fn with_body(req: RequestBuilder, body: &Body) -> RequestBuilder {
    let req = match body.content_type {
        Some(t) => req.header("content-type", t),
        None => req,
    };
    req.body(body.bytes.clone())
}

/// An admin's session, and what makes new ones.
#[derive(Clone, Copy)]
struct Session<'a> {
    pool: &'a PgPool,
    admin: uuid::Uuid,
    cookie: &'a str,
}

async fn cookie_for(session: Option<Session<'_>>, path: &str) -> Option<String> {
    let s = session?;
    Some(if path == SIGN_OUT { session_cookie_for(s.pool, s.admin).await } else { s.cookie.to_owned() })
}

/// The corpus for one server function, from a visitor or from `session`'s admin: every body,
/// the other methods, and the same request from other sites (403).
async fn server_fn_cases(app: &TestApp, path: &str, session: Option<Session<'_>>, bodies: &Bodies) -> Vec<Case> {
    let who = who(session.map(|s| s.cookie));
    let mut cases = Vec::new();
    for body in &bodies.api {
        let req = request(app, Method::POST, path, cookie_for(session, path).await.as_deref(), "application/json");
        cases.push(Case::new(with_body(req, body), format!("{}, {who}", body.label)));
    }
    for body in &bodies.browser {
        let req = request(app, Method::POST, path, cookie_for(session, path).await.as_deref(), "text/html").header("referer", app.url("/"));
        cases.push(Case::new(with_body(req, body), format!("{} without JavaScript, {who}", body.label)));
    }
    for method in [Method::GET, Method::PUT, Method::DELETE, Method::PATCH] {
        cases.push(Case::new(request(app, method, path, cookie_for(session, path).await.as_deref(), "application/json"), who));
    }
    let other_sites = [
        ("a foreign Origin", "origin", HeaderValue::from_static("https://evil.example")),
        ("Origin null", "origin", HeaderValue::from_static("null")),
        ("an Origin that is not UTF-8", "origin", HeaderValue::from_bytes(b"\xff\xfe").unwrap()),
        ("Sec-Fetch-Site cross-site", "sec-fetch-site", HeaderValue::from_static("cross-site")),
    ];
    for (what, name, value) in other_sites {
        let req = app.client.post(app.url(path)).header(name, value).header("accept", "application/json").form(&VALID);
        let req = match session {
            Some(s) => req.header("cookie", s.cookie),
            None => req,
        };
        cases.push(Case::cross_site(req, format!("{what}, {who}")));
    }
    cases
}

/// Every page and plain route: each `{parameter}` set to each hostile token, with each hostile
/// query, by a visitor and (under /admin and /api/admin) by an admin; then every other method;
/// then paths of 100 KB.
fn route_cases(app: &TestApp, session_cookie: &str) -> Vec<Case> {
    let mut routes: Vec<String> =
        server::route_list().iter().map(|r| r.path().to_string()).chain(server::plain_routes().into_iter().map(|(p, _)| p.to_string())).collect();
    routes.sort();
    routes.dedup();
    let (tokens, queries) = (tokens(), queries());
    let mut cases = Vec::new();
    for route in &routes {
        let sessions = if needs_session(route) { vec![None, Some(session_cookie)] } else { vec![None] };
        let paths: Vec<String> = if route.contains('{') { tokens.iter().map(|t| fill(route, t)).collect() } else { vec![route.clone()] };
        for path in &paths {
            for &cookie in &sessions {
                for query in &queries {
                    cases.push(Case::new(request(app, Method::GET, &format!("{path}{query}"), cookie, "text/html"), who(cookie)));
                }
                for method in [Method::HEAD, Method::OPTIONS, Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
                    let req = request(app, method, path, cookie, "text/html").header("content-type", "application/x-www-form-urlencoded").body("a=1");
                    cases.push(Case::new(req, who(cookie)));
                }
            }
        }
    }
    for prefix in ["/s/", "/invite/", "/admin/"] {
        // 60 KB: near the longest URI an HTTP client will send (the http crate's limit is 64 KiB).
        cases.push(Case::new(request(app, Method::GET, &format!("{prefix}{}", "A".repeat(60 * 1024)), None, "text/html"), "visitor"));
    }
    cases
}

/// Header values no browser sends, on pages and on a public and an admin server function.
fn odd_header_cases(app: &TestApp, session_cookie: &str) -> Vec<Case> {
    let long = "A".repeat(10_000);
    let headers = [
        ("a session cookie that is not UTF-8", "cookie", HeaderValue::from_bytes(b"ebb_session=\xff\xfe").unwrap()),
        ("an empty session cookie", "cookie", HeaderValue::from_static("ebb_session=")),
        ("a session cookie of escaped NULs", "cookie", HeaderValue::from_static("ebb_session=%00%00")),
        ("a 10 KB session cookie", "cookie", HeaderValue::from_str(&format!("ebb_session={long}")).unwrap()),
        ("the session cookie 50 times", "cookie", HeaderValue::from_str(&"ebb_session=x; ".repeat(50)).unwrap()),
        ("X-Forwarded-For of garbage", "x-forwarded-for", HeaderValue::from_static("garbage, , ::1%eth0, 999.1.1.1, [::1]:80")),
        ("X-Forwarded-For that is not UTF-8", "x-forwarded-for", HeaderValue::from_bytes(b"\xff\xfe").unwrap()),
        ("X-Forwarded-For of 1,000 hops", "x-forwarded-for", HeaderValue::from_str(&"192.0.2.1, ".repeat(1000)).unwrap()),
        ("Accept that is not UTF-8", "accept", HeaderValue::from_bytes(b"text/html\xff").unwrap()),
        ("Accept-Encoding of garbage", "accept-encoding", HeaderValue::from_static("br;q=NaN, gzip;q=-1, *;q=2, ;;;")),
        ("Referer that is not UTF-8", "referer", HeaderValue::from_bytes(b"http://localhost:3000/\xff").unwrap()),
        ("Host of another site", "host", HeaderValue::from_static("evil.example")),
        ("a 10 KB User-Agent", "user-agent", HeaderValue::from_str(&long).unwrap()),
    ];
    let share = format!("/s/{}", "A".repeat(43));
    let targets = [
        (Method::GET, "/", None),
        (Method::GET, share.as_str(), None),
        (Method::GET, "/admin", Some(session_cookie)),
        (Method::POST, "/api/contact", None),
        (Method::POST, "/api/admin/inbox", Some(session_cookie)),
    ];
    let mut cases = Vec::new();
    for (what, name, value) in &headers {
        for (method, path, cookie) in &targets {
            let mut req = app.client.request(method.clone(), app.url(path)).header("origin", ORIGIN).header(*name, value.clone());
            if let Some(c) = cookie {
                req = req.header("cookie", *c);
            }
            if *method == Method::POST {
                req = req.form(&VALID);
            }
            cases.push(Case::new(req, format!("{what}, {}", who(*cookie))));
        }
    }
    cases
}

/// Share uploads with a hostile expiry, note or file name, and bodies that are cut off or not
/// multipart at all.
fn upload_cases(app: &TestApp, cookie: Option<&str>) -> Vec<Case> {
    let upload = || request(app, Method::POST, app::shares::routes::UPLOAD_PATH, cookie, "application/json");
    let file = |name: &str| Part::bytes(b"file body".to_vec()).file_name(name.to_owned());
    let label = |what: String| format!("upload {what}, {}", who(cookie));
    let mut cases = Vec::new();
    for hours in ["-1", "0", "721", "4294967297", "99999999999999999999", "1e3", "1.5", "\0", ""] {
        let form = Form::new().text("expires_hours", hours).part("file", file("a.txt"));
        cases.push(Case::new(upload().multipart(form), label(format!("expiring in {hours:?} hours"))));
    }
    let long_name = "A".repeat(10_000);
    for name in ["../../etc/passwd", "a\0b.txt", "\u{202e}txt.exe", "", "..", long_name.as_str()] {
        let form = Form::new().text("expires_hours", "1").part("file", file(name));
        cases.push(Case::new(upload().multipart(form), label(format!("of a file named {}", short(&format!("{name:?}"))))));
    }
    let forms = [
        ("with a 100 KB note", Form::new().text("expires_hours", "1").text("note", "a".repeat(100 * 1024)).part("file", file("a.txt"))),
        ("with a NUL note", Form::new().text("expires_hours", "1").text("note", "\0").part("file", file("a.txt"))),
        ("of two files", Form::new().text("expires_hours", "1").part("file", file("a.txt")).part("file", file("b.txt"))),
        ("with two expiries", Form::new().text("expires_hours", "1").text("expires_hours", "-1").part("file", file("a.txt"))),
        ("without a file", Form::new().text("expires_hours", "1")),
    ];
    for (what, form) in forms {
        cases.push(Case::new(upload().multipart(form), label(what.to_owned())));
    }
    for (what, content_type, bytes) in RAW_UPLOADS {
        cases.push(Case::new(with_body(upload(), &Body::new(*what, *content_type, *bytes)), label(what.to_string())));
    }
    cases
}

/// Status and `Location` of the answer to `req`, its body read to the end (a body that breaks
/// off is a wrong answer too). An event stream never ends: its first chunk is enough.
async fn answer(app: &TestApp, req: reqwest::Request) -> Result<(u16, Option<String>), String> {
    let exchange = async {
        let mut res = app.client.execute(req).await?;
        let status = res.status().as_u16();
        let location = res.headers().get("location").and_then(|l| l.to_str().ok()).map(str::to_owned);
        let stream = res.headers().get("content-type").is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        if stream {
            res.chunk().await?;
        } else {
            res.bytes().await?;
        }
        Ok::<_, reqwest::Error>((status, location))
    };
    match tokio::time::timeout(ANSWER_WITHIN, exchange).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("no complete answer ({})", e.without_url())),
        Err(_) => Err(format!("no answer within {ANSWER_WITHIN:?}")),
    }
}

/// Sends `case` and describes a wrong answer. A redirect is followed once: its target (the form
/// page showing the error, sign-in) is part of the answer.
async fn check(app: &TestApp, case: Case) -> Option<String> {
    let req = case.req.build().expect("the corpus builds valid requests");
    let url = req.url();
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let what = format!("{} {} [{}]", req.method(), short(&target), case.label);
    let (status, location) = match answer(app, req).await {
        Ok(a) => a,
        Err(e) => return Some(format!("{what}: {e}")),
    };
    if case.expect.map_or(status >= 500, |expected| status != expected) {
        return Some(format!("{what}: {status}"));
    }
    let location = location.filter(|_| (300..400).contains(&status))?;
    let location = if location.starts_with('/') { app.url(&location) } else { location };
    if !location.starts_with(&app.base) {
        return None;
    }
    let follow = match app.client.get(&location).header("accept", "text/html").build() {
        Ok(r) => r,
        Err(e) => return Some(format!("{what}: {status} to an invalid location {} ({e})", short(&location))),
    };
    match answer(app, follow).await {
        Ok((s, _)) if s < 500 => None,
        Ok((s, _)) => Some(format!("{what}: {status}, then GET {}: {s}", short(&location))),
        Err(e) => Some(format!("{what}: {status}, then GET {}: {e}", short(&location))),
    }
}

/// Sends every case, eight at a time, and returns the wrong answers.
async fn run(app: &TestApp, cases: Vec<Case>) -> Vec<String> {
    futures::stream::iter(cases).map(|case| check(app, case)).buffer_unordered(8).filter_map(std::future::ready).collect().await
}

/// The server still serves (liveness, and a visitor's contact form, which needs the database),
/// then stops, waiting for its background tasks, whose ERROR lines count too. Fails listing every
/// wrong answer and every ERROR line.
async fn finish(app: TestApp, mut failures: Vec<String>, errors: &ErrorLines, sent: usize) {
    let health = answer(&app, app.client.get(app.url("/healthz")).build().unwrap()).await;
    if !matches!(health, Ok((200, _))) {
        failures.push(format!("afterwards, GET /healthz: {health:?}"));
    }
    let contact = answer(&app, app.client.post(app.url("/api/contact")).header("accept", "application/json").form(&VALID).build().unwrap()).await;
    if !matches!(contact, Ok((200, _))) {
        failures.push(format!("afterwards, a valid contact form: {contact:?}"));
    }
    if tokio::time::timeout(Duration::from_secs(40), app.shutdown()).await.is_err() {
        failures.push("the server did not stop within 40 s".into());
    }
    failures.extend(errors.take().iter().map(|line| short(line)));
    assert!(failures.is_empty(), "{} failure(s) in {sent} hostile requests:\n{}", failures.len(), failures.join("\n"));
    println!("hostile: {sent} requests, no 5xx, no ERROR line, healthy after");
}

fn addr(app: &TestApp) -> &str {
    app.base.trim_start_matches("http://")
}

/// Writes `request` as is on a new connection and reads the status line of the answer: `None`
/// when the server closed the connection without one.
async fn raw_status(app: &TestApp, request: &[u8]) -> Result<Option<u16>, String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr(app)).await?;
        stream.write_all(request).await?;
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.contains(&b'\n') {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(head)
    };
    let head = match tokio::time::timeout(RAW_ANSWER_WITHIN, exchange).await {
        Ok(Ok(head)) => head,
        Ok(Err(e)) if matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionAborted) => {
            return Ok(None)
        }
        Ok(Err(e)) => return Err(format!("connection failed: {e}")),
        Err(_) => return Err(format!("no answer within {RAW_ANSWER_WITHIN:?}")),
    };
    let text = String::from_utf8_lossy(&head);
    Ok(text.strip_prefix("HTTP/1.1 ").and_then(|rest| rest.get(..3)).and_then(|code| code.parse().ok()))
}

/// Requests no client library sends: paths as written, a path that is not UTF-8, broken header
/// lines and lengths, and chunked bodies whose chunk size is not a number or overflows, to public
/// and admin handlers that read their bodies.
fn raw_requests(cookie: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> =
        RAW_TARGETS.iter().map(|t| (format!("GET {t}"), format!("GET {t} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes())).collect();
    out.push(("GET /s/<bytes 0xff 0xfe>".into(), b"GET /s/\xff\xfe HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".to_vec()));
    // Names longer than the file system takes (ENAMETOOLONG), in the served folder and below it.
    for target in [format!("/pkg/{}", "a".repeat(300)), format!("/pkg/{}/{}.wasm", "0".repeat(16), "b".repeat(5000))] {
        out.push((
            format!("GET /pkg/<a {}-byte name>", target.len()),
            format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes(),
        ));
    }
    let post = |path: &str, headers: &str, body: &[u8]| {
        [format!("POST {path} HTTP/1.1\r\nHost: localhost\r\nOrigin: {ORIGIN}\r\nCookie: {cookie}\r\nConnection: close\r\n{headers}\r\n").as_bytes(), body]
            .concat()
    };
    for (what, headers) in ODD_FRAMING {
        out.push((
            format!("POST /api/contact with {what}"),
            post("/api/contact", &format!("Content-Type: application/x-www-form-urlencoded\r\n{headers}"), b"name=a"),
        ));
    }
    let share = format!("/s/{}", "A".repeat(43));
    let readers = [
        ("/api/contact", "application/x-www-form-urlencoded"),
        ("/api/auth/signin/finish", "application/json"),
        ("/api/admin/inbox", "application/x-www-form-urlencoded"),
        (app::shares::routes::UPLOAD_PATH, "multipart/form-data; boundary=X"),
        (share.as_str(), "application/x-www-form-urlencoded"),
    ];
    for (path, content_type) in readers {
        let headers = format!("Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n");
        out.push((format!("POST {path}, chunk size zz"), post(path, &headers, b"zz\r\nabc\r\n0\r\n\r\n")));
        out.push((format!("POST {path}, chunk size past u64"), post(path, &headers, b"fffffffffffffffffffff\r\nabc\r\n0\r\n\r\n")));
    }
    out
}

/// Clients that send their bodies a byte a second (slowloris), then give up: meanwhile the server
/// answers others, from liveness to a contact form, which needs the database.
async fn slow_bodies(app: &TestApp, failures: &mut Vec<String>) {
    let head = format!(
        "POST /api/contact HTTP/1.1\r\nHost: localhost\r\nOrigin: {ORIGIN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
    );
    let mut slow = Vec::new();
    for _ in 0..SLOW_CLIENTS {
        let mut stream = tokio::net::TcpStream::connect(addr(app)).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        slow.push(stream);
    }
    for second in 1..=4 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for stream in &mut slow {
            // A server that hangs up on a slow client does right: nothing to check.
            let _ = stream.write_all(b"a").await;
        }
        let health = answer(app, app.client.get(app.url("/healthz")).build().unwrap()).await;
        if !matches!(health, Ok((200, _))) {
            failures.push(format!("GET /healthz while bodies trickle in (second {second}): {health:?}"));
        }
    }
    let contact = answer(app, app.client.post(app.url("/api/contact")).header("accept", "application/json").form(&VALID).build().unwrap()).await;
    if !matches!(contact, Ok((200, _))) {
        failures.push(format!("a contact form while bodies trickle in: {contact:?}"));
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn no_server_function_answers_malformed_input_with_a_5xx(pool: PgPool) {
    let (errors, _log) = ErrorLines::capture();
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_with(pool.clone(), FLAGS, |_| {}).await;
    let mut paths: Vec<&str> = server_fn_paths().map(|(p, _)| p).collect();
    paths.sort();
    paths.dedup();
    assert!(paths.len() >= 30, "the registry lists the server functions: {paths:?}");
    let bodies = Bodies::new();
    let session = Session { pool: &pool, admin, cookie: &cookie };
    let mut cases = Vec::new();
    for path in &paths {
        cases.extend(server_fn_cases(&app, path, None, &bodies).await);
        if path.starts_with(server::security::ADMIN_API_PREFIX) {
            cases.extend(server_fn_cases(&app, path, Some(session), &bodies).await);
        }
    }
    for (path, fields) in TARGETED {
        let req = request(&app, Method::POST, path, Some(cookie.as_str()), "application/json").form(fields);
        cases.push(Case::new(req, format!("form {}, with a session", short(&format!("{fields:?}")))));
    }
    let sent = cases.len();
    let failures = run(&app, cases).await;
    finish(app, failures, &errors, sent).await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn no_page_route_or_upload_answers_hostile_input_with_a_5xx(pool: PgPool) {
    let (errors, _log) = ErrorLines::capture();
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_with(pool, FLAGS, |_| {}).await;
    let mut cases = route_cases(&app, &cookie);
    cases.extend(odd_header_cases(&app, &cookie));
    cases.extend(upload_cases(&app, None));
    cases.extend(upload_cases(&app, Some(cookie.as_str())));
    let sent = cases.len();
    let failures = run(&app, cases).await;
    finish(app, failures, &errors, sent).await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn broken_framing_and_slow_bodies_get_no_5xx_and_never_stall_the_server(pool: PgPool) {
    let (errors, _log) = ErrorLines::capture();
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_with(pool, FLAGS, |_| {}).await;
    let requests = raw_requests(&cookie);
    let sent = requests.len() + SLOW_CLIENTS;
    let mut failures = Vec::new();
    let within = Duration::from_secs(20);
    let bounded = tokio::time::timeout(within, async {
        for (what, request) in &requests {
            match raw_status(&app, request).await {
                Ok(Some(status)) if status >= 500 => failures.push(format!("{what}: {status}")),
                Ok(_) => {}
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
        slow_bodies(&app, &mut failures).await;
    })
    .await;
    if bounded.is_err() {
        failures.push(format!("the raw requests and slow bodies took longer than {within:?}"));
    }
    finish(app, failures, &errors, sent).await;
}

/// Brute force: 10,000 sign-in finishes with forged assertions from 100 clients. Every one is
/// refused (400) or slowed down (429), none signs anyone in, and nothing is logged as an error.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn ten_thousand_forged_sign_ins_are_all_refused_and_rate_limited(pool: PgPool) {
    let (errors, _log) = ErrorLines::capture();
    let admin = create_admin(&pool, "Ada").await;
    crate::helpers::add_placeholder_passkey(&pool, admin, "Ada's key").await;
    let app = spawn_app_with(pool.clone(), &["--trusted-proxy-hops", "1"], |_| {}).await;
    let forged = serde_json::json!({
        "challenge": NIL,
        "credential": {
            "id": "AAAAAAAAAAAAAAAAAAAAAA", "rawId": "AAAAAAAAAAAAAAAAAAAAAA", "type": "public-key", "extensions": {},
            "response": { "authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA", "userHandle": "AAAAAAAAAAAAAAAAAAAAAA" }
        }
    });
    let statuses: Vec<u16> = futures::stream::iter(0..10_000)
        .map(|i| {
            let req = app
                .client
                .post(app.url("/api/auth/signin/finish"))
                .header("accept", "application/json")
                .header("origin", ORIGIN)
                .header("x-forwarded-for", format!("198.18.{}.{}", i % 100, 1 + i % 100))
                .json(&forged);
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let count = |s: u16| statuses.iter().filter(|&&x| x == s).count();
    let (refused, limited) = (count(400), count(429));
    assert_eq!(refused + limited, 10_000, "only 400 and 429: {:?}", statuses.iter().filter(|&&s| s != 400 && s != 429).take(5).collect::<Vec<_>>());
    assert!(limited >= 9_000, "rate-limited: {limited} of 10,000");
    let sessions: i64 = sqlx::query_scalar("select count(*) from admin_sessions").fetch_one(&pool).await.unwrap_or(0);
    assert_eq!(sessions, 0, "nobody signed in");
    finish(app, Vec::new(), &errors, 10_000).await;
}

/// Slowloris: a client that never finishes its request headers is disconnected after the header
/// read timeout, so such clients cannot hold connections forever.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_client_that_never_finishes_its_headers_is_disconnected(pool: PgPool) {
    let app = spawn_app_with(pool, &[], |_| {}).await;
    let mut stream = tokio::net::TcpStream::connect(addr(&app)).await.unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await.unwrap();
    let started = std::time::Instant::now();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(server::http::HEADER_READ_TIMEOUT + Duration::from_secs(5), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                // hyper may answer 408 before closing.
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the connection was still open after {:?}", started.elapsed());
    assert!(started.elapsed() >= server::http::HEADER_READ_TIMEOUT - Duration::from_secs(1), "closed only once the timeout passed");
    // Meanwhile and after, the server serves.
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
}
