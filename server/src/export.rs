//! Streamed CSV exports behind the admin gate: `GET /admin/inbox/export.csv[?q=…][&bom=1]` and
//! `GET /admin/audit/export.csv?kind&admin&subject&from&to[&bom=1]`.

use app::state::AppState;
use axum::{
    body::Body,
    extract::{ConnectInfo, Query, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct ExportQuery {
    q: Option<String>,
    bom: Option<String>,
}

/// Behind the admin gate, which hands over the signed-in admin (a request without one never gets here).
pub async fn inquiries_csv(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Query(query): Query<ExportQuery>,
) -> Response {
    let search = app::inbox::normalise_search(query.q.as_deref());
    let bom = matches!(query.bom.as_deref(), Some("1" | "true" | "on"));
    // Exports copy personal data out of Ebb: who did it, and when, is kept, and an export whose
    // record cannot be written does not run.
    let mut conn = match state.pool.acquire().await {
        Ok(conn) => conn,
        Err(e) => {
            tracing::warn!(error = %e, "inquiry export refused: no database connection to record it");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                "The export could not start because the database is busy. Try again in a few seconds.",
            )
                .into_response();
        }
    };
    let actor = crate::security::audit_actor(&state, &headers, peer, &admin);
    let detail = search.as_deref().map(|q| format!("search of {} characters", q.chars().count()));
    if let Err(e) = app::kernel::audit::record(&mut conn, &actor, app::audit::AuditKind::InquiryExport, None, detail.as_deref()).await {
        tracing::error!(error = %e, "could not record the export");
        return (StatusCode::INTERNAL_SERVER_ERROR, "The export could not be recorded, so it did not run. Try again later.").into_response();
    }
    drop(conn);
    let today = time::OffsetDateTime::now_utc().date();
    let filename = format!("inquiries-{today}.csv");
    let stream = app::inbox::export::stream(state.pool.clone(), search, bom, state.domain::<std::sync::Arc<app::inbox::export::ExportMetrics>>().clone());
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{filename}\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
pub struct AuditQuery {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    admin: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    bom: Option<String>,
}

/// The audit viewer's filtered view as CSV (the viewer's filters; 24 months).
/// Recorded in the audit log first, like every export; an export whose record cannot be written
/// does not run.
pub async fn audit_csv(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    query: Result<Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return (StatusCode::BAD_REQUEST, "The export link is malformed; use the Export CSV button of the audit log.").into_response();
    };
    let filter = match app::audit::AuditFilter::parse(&q.kind, &q.admin, &q.subject, &q.from, &q.to) {
        Ok(f) => f,
        Err(errors) => {
            let text = errors.into_iter().map(|(field, msg)| format!("{field}: {msg}")).collect::<Vec<_>>().join("\n");
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response();
        }
    };
    let bom = matches!(q.bom.as_deref(), Some("1" | "true" | "on"));
    let actor = crate::security::audit_actor(&state, &headers, peer, &admin);
    let filters: Vec<&str> = [("kind", &q.kind), ("admin", &q.admin), ("subject", &q.subject), ("from", &q.from), ("to", &q.to)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, _)| name)
        .collect();
    let detail = (!filters.is_empty()).then(|| format!("filtered by {}", filters.join(", ")));
    if let Err(refused) =
        record_first(&state, &actor, app::audit::AuditKind::AuditExport, detail.as_deref(), "The export could not be recorded, so it did not run.").await
    {
        return refused;
    }
    let today = time::OffsetDateTime::now_utc().date();
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"audit-{today}.csv\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        Body::from_stream(app::audit::export::stream(state.pool.clone(), filter, bom)),
    )
        .into_response()
}

/// `GET /admin/retention/report.json`: the retention report read now, as a timestamped JSON
/// download. Recorded in the audit log first; a report whose record cannot be written is not
/// given.
pub async fn retention_report(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let report = match app::retention::report::compute(&state).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "retention report failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, "The report could not be read. Try again later; the server log has the cause.").into_response();
        }
    };
    let actor = crate::security::audit_actor(&state, &headers, peer, &admin);
    if let Err(refused) =
        record_first(&state, &actor, app::audit::AuditKind::RetentionReport, None, "The report could not be recorded, so it was not given.").await
    {
        return refused;
    }
    let stamp = report.generated_at.format(&time::macros::format_description!("[year][month][day]T[hour][minute][second]Z")).unwrap_or_default();
    let body = match serde_json::to_vec_pretty(&report) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "retention report did not serialise");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    (
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"ebb-retention-{stamp}.json\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response()
}

/// `GET /audit/keys.json`: every public key that signs or signed the audit trail's digests, with
/// when it was made and retired — and the transparency log's origin with each key as a signed-note
/// verifier key. Public: an auditor downloads it once and keeps it.
pub async fn audit_keys(State(state): State<AppState>) -> Response {
    match app::audit::chain::keys::published(&state.pool).await {
        Ok(keys) => {
            let origin = &state.domain::<app::audit::chain::ChainSettings>().log_origin;
            let verifiers: Vec<String> = keys.iter().filter_map(|k| k.verifying_key()).map(|k| app::audit::chain::tlog::verifier_key(origin, &k)).collect();
            let doc = serde_json::json!({ "format": "ebb-audit-keys-v1", "keys": keys, "log": { "origin": origin, "verifier_keys": verifiers } });
            ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-cache")], serde_json::to_vec_pretty(&doc).unwrap_or_default())
                .into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "audit keys could not be read");
            (StatusCode::SERVICE_UNAVAILABLE, "The keys could not be read. Try again later.").into_response()
        }
    }
}

/// `GET /audit/checkpoint`: the transparency log's newest signed checkpoint (C2SP
/// tlog-checkpoint, a signed note). 404 until the first one is signed.
pub async fn audit_checkpoint(State(state): State<AppState>) -> Response {
    match app::audit::chain::cosign::latest_cosigned(&state.pool).await {
        Ok(Some(note)) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], note).into_response(),
        Ok(None) => (StatusCode::NOT_FOUND, "No checkpoint yet: the log is signed within a minute of its first event.").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "the log's checkpoint could not be read");
            (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], "The checkpoint could not be read. Try again later.").into_response()
        }
    }
}

/// `POST /audit/checkpoint`: a witness gives back a checkpoint Ebb signed with its cosignature
/// line (C2SP tlog-cosignature v1). Kept when the witness is configured and the line verifies
/// (204); refused with why (400); 404 when no witness is configured.
pub async fn audit_cosignature(State(state): State<AppState>, body: String) -> Response {
    let witnesses = &state.domain::<app::audit::chain::ChainSettings>().witnesses;
    if witnesses.is_empty() {
        return (StatusCode::NOT_FOUND, "No witnesses are configured (EBB_AUDIT_WITNESSES).").into_response();
    }
    match app::audit::chain::cosign::accept(&state.pool, witnesses, &body).await {
        Ok(kept) => {
            tracing::info!(witnesses = ?kept, "witness cosignature kept");
            StatusCode::NO_CONTENT.into_response()
        }
        Err(app::audit::chain::cosign::CosignError::Refused(why)) => (StatusCode::BAD_REQUEST, format!("Cosignature refused: {why}.")).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a cosignature could not be stored");
            (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], "The cosignature could not be stored. Try again later.").into_response()
        }
    }
}

/// `GET /audit/tile/{path}`: a hash tile or an entry bundle of the transparency log (C2SP
/// tlog-tiles). Immutable once served (a full tile never changes; a partial one is named by its
/// width), so cacheable for good; 404 for what the tree does not have.
pub async fn audit_tile(State(state): State<AppState>, axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    let Some(tile) = app::audit::chain::tlog::parse_tile_path(&path) else {
        return (StatusCode::NOT_FOUND, "Not a tile path: tile/<level>/<N>[.p/<width>] or tile/entries/<N>[.p/<width>].").into_response();
    };
    match app::audit::chain::tlog::tile(&state.pool, tile).await {
        Ok(Some(bytes)) => {
            ([(header::CONTENT_TYPE, "application/octet-stream"), (header::CACHE_CONTROL, "public, max-age=31536000, immutable")], bytes).into_response()
        }
        Ok(None) => (StatusCode::NOT_FOUND, "The log does not have this tile (yet).").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a tile of the log could not be read");
            (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], "The tile could not be read. Try again later.").into_response()
        }
    }
}

/// Records `kind` before a download is given: a download whose audit record cannot be written is
/// refused (503, `refused` said to the admin), so nothing leaves Ebb unrecorded.
async fn record_first(
    state: &AppState,
    actor: &app::kernel::audit::Actor,
    kind: app::audit::AuditKind,
    detail: Option<&str>,
    refused: &'static str,
) -> Result<(), Response> {
    let recorded = async {
        let mut conn = state.pool.acquire().await?;
        app::kernel::audit::record(&mut conn, actor, kind, None, detail).await
    };
    recorded.await.map_err(|e| {
        tracing::warn!(error = %e, kind = kind.as_str(), "download refused: its audit record could not be written");
        (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], format!("{refused} Try again in a few seconds.")).into_response()
    })
}
