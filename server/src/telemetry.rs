//! Metrics (Prometheus text format on a separate listener) and the after-response job check.

use std::{net::SocketAddr, sync::OnceLock, time::Instant};

use app::state::AppState;
use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::Response,
    routing::get,
    Router,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Latency buckets (seconds) for requests and jobs.
const BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Buckets for how many contact submissions one statement wrote (group commit).
const BATCH_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Buckets (seconds) for one group-commit statement: a millisecond or two under load.
const STATEMENT_BUCKETS: &[f64] = &[0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.25, 1.0];

/// Installs the process-wide Prometheus recorder once (tests start many apps in one process)
/// and returns its handle.
pub fn recorder() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full("ebb_contact_statement_seconds".into()), STATEMENT_BUCKETS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS))
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full("ebb_contact_batch_size".into()), BATCH_BUCKETS))
                .expect("valid buckets")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder (a test harness's) may be installed already: ours still renders.
            let _ = metrics::set_global_recorder(recorder);
            app::kernel::metrics::describe();
            handle
        })
        .clone()
}

/// `GET /metrics` on its own listener (never on the public one).
pub fn metrics_router(handle: PrometheusHandle) -> Router {
    Router::new().route("/metrics", get(move || std::future::ready(handle.render())))
}

/// Serves metrics on `addr` until the process ends.
pub async fn serve_metrics(addr: SocketAddr) -> Result<tokio::task::JoinHandle<()>, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for metrics on {addr} ({e}); set EBB_METRICS_BIND, or empty to disable"))?;
    let router = metrics_router(recorder());
    tracing::info!(addr = %addr, "metrics on /metrics");
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::warn!(error = %e, "metrics listener stopped");
        }
    }))
}

/// Counts requests by route template (never the raw path: it may hold tokens) and status, and
/// records their latency. A layer of the router's (`with_request_layers`): the route is matched
/// before it runs, so every answer is counted under its template, a cached page's too.
pub async fn http_metrics(req: Request, next: Next) -> Response {
    let start = Instant::now();
    app::kernel::load::request_started();
    let method = method_label(req.method());
    let route = req.extensions().get::<MatchedPath>().map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let res = next.run(req).await;
    let status = res.status().as_u16().to_string();
    metrics::counter!("ebb_http_requests_total", "method" => method, "route" => route.clone(), "status" => status).increment(1);
    metrics::histogram!("ebb_http_request_duration_seconds", "method" => method, "route" => route).record(start.elapsed().as_secs_f64());
    res
}

/// The method as a metric label, from a closed set: a client can send any method string, and
/// every new label value would be a new series kept forever.
pub fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// After any response: asks each job's in-memory "next due" (no database access when nothing is
/// due) and starts the due ones in the background. Never changes or delays the response.
pub async fn after_response(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    if state.config.after_response_jobs {
        app::jobs::nudge_all(&state);
    }
    res
}

/// The request id of the request being served (in its extensions): on its log lines (the `http`
/// span) and in its `x-request-id` response header, so an operator can find a person's failed
/// request in the log.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Gives every request an id: the trusted proxy's `x-request-id` when proxy hops are trusted and
/// it is a plain token (letters, digits, `-`, `_`, `.`; at most 64), else a new one. What a client
/// sends itself is never believed (it could make another request's id).
pub async fn request_id(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let given = (state.config.trusted_proxy_hops > 0)
        .then(|| req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).filter(|v| plain_token(v)).map(str::to_owned))
        .flatten();
    let id = given.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut res = next.run(req).await;
    if let Ok(value) = axum::http::HeaderValue::from_str(&id) {
        res.headers_mut().insert("x-request-id", value);
    }
    if res.status().is_server_error() {
        res = with_id_shown(res, &id).await;
    }
    res
}

/// The largest error body the id is written into (an error page or message is far smaller).
const SHOWN_MAX: u64 = 64 * 1024;

/// A server error's page or message with its request id written in, so the person who saw it can
/// quote it and the operator finds the request's log lines: before `</main>` (or `</body>`) of an
/// HTML page, at the end of a plain-text message. Other bodies (JSON the pages read, streams)
/// keep the `x-request-id` header only.
pub async fn with_id_shown(res: Response, id: &str) -> Response {
    let kind = res.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    let (html, text) = (kind.starts_with("text/html"), kind.starts_with("text/plain"));
    let small = http_body::Body::size_hint(res.body()).upper().is_some_and(|n| n <= SHOWN_MAX);
    if !(html || text) || !small || res.headers().contains_key(axum::http::header::CONTENT_ENCODING) {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, SHOWN_MAX as usize).await else {
        return Response::from_parts(parts, axum::body::Body::empty());
    };
    let body = String::from_utf8_lossy(&bytes);
    let shown = if html {
        let line = format!("<p class=\"request-id\">Request id: <code>{id}</code> (quote it when you report this)</p>");
        match body.rfind("</main>").or_else(|| body.rfind("</body>")) {
            Some(at) => format!("{}{line}{}", &body[..at], &body[at..]),
            None => format!("{body}{line}"),
        }
    } else {
        format!("{}\n\nRequest id: {id} (quote it when you report this).\n", body.trim_end())
    };
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(shown))
}

fn plain_token(v: &str) -> bool {
    (1..=64).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod request_id_tests {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;

    async fn text_of(res: axum::response::Response) -> String {
        String::from_utf8(axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_server_errors_page_and_message_show_the_request_id() {
        let page =
            (StatusCode::INTERNAL_SERVER_ERROR, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], "<html><body><main><h1>Error</h1></main></body></html>");
        let shown = text_of(super::with_id_shown(page.into_response(), "abc123").await).await;
        assert!(shown.contains("<h1>Error</h1><p class=\"request-id\">Request id: <code>abc123</code>"), "{shown}");
        assert!(shown.ends_with("</main></body></html>"), "{shown}");
        let message = (StatusCode::SERVICE_UNAVAILABLE, "The keys could not be read. Try again later.");
        let shown = text_of(super::with_id_shown(message.into_response(), "abc123").await).await;
        assert_eq!(shown, "The keys could not be read. Try again later.\n\nRequest id: abc123 (quote it when you report this).\n");
        // JSON the pages read keeps its shape (the header carries the id).
        let json = (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(serde_json::json!("Internal")));
        assert_eq!(text_of(super::with_id_shown(json.into_response(), "abc123").await).await, "\"Internal\"");
    }

    #[test]
    fn only_plain_short_tokens_are_taken() {
        assert!(super::plain_token("4bf92f3577b34da6a3ce929d0e0e4736"));
        assert!(super::plain_token("req-1.a_b"));
        for bad in ["", "a b", "x\u{7}", &"a".repeat(65), "a;b", "ä"] {
            assert!(!super::plain_token(bad), "{bad:?}");
        }
    }
}
