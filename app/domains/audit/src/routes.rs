//! The audit domain's plain routes: the audit log's CSV export for admins, and the public files
//! an auditor reads — the keys that sign the digests, the transparency log's checkpoint and tiles
//! (and a witness's cosignature).

use kernel::http::prelude::*;
use serde::Deserialize;

/// This domain's routes.
pub fn routes() -> Routes {
    Routes::new()
        .admin(Role::Auditor, "/admin/audit/export.csv", get(audit_csv))
        // The public keys that sign the audit trail's digests (for auditors; no secret).
        .public("/audit/keys.json", get(audit_keys))
        // The transparency log (C2SP tlog-checkpoint and tlog-tiles): public, for any client.
        .public("/audit/checkpoint", get(audit_checkpoint).post(audit_cosignature))
        .public("/audit/tile/{*path}", get(audit_tile))
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
async fn audit_csv(
    State(state): State<AppState>,
    AdminCall { actor, .. }: AdminCall,
    query: Result<Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return (StatusCode::BAD_REQUEST, "The export link is malformed; use the Export CSV button of the audit log.").into_response();
    };
    let filter = match crate::AuditFilter::parse(&q.kind, &q.admin, &q.subject, &q.from, &q.to) {
        Ok(f) => f,
        Err(errors) => {
            let text = errors.into_iter().map(|(field, msg)| format!("{field}: {msg}")).collect::<Vec<_>>().join("\n");
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response();
        }
    };
    let bom = matches!(q.bom.as_deref(), Some("1" | "true" | "on"));
    let filters: Vec<&str> = [("kind", &q.kind), ("admin", &q.admin), ("subject", &q.subject), ("from", &q.from), ("to", &q.to)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, _)| name)
        .collect();
    let detail = (!filters.is_empty()).then(|| format!("filtered by {}", filters.join(", ")));
    if let Err(refused) =
        record_first(&state, &actor, crate::AuditKind::AuditExport, None, detail.as_deref(), "The export could not be recorded, so it did not run.").await
    {
        return refused;
    }
    let today = time::OffsetDateTime::now_utc().date();
    (attachment("text/csv; charset=utf-8", &format!("audit-{today}.csv")), Body::from_stream(crate::export::stream(state.pool.clone(), filter, bom)))
        .into_response()
}

/// `GET /audit/keys.json`: every public key that signs or signed the audit trail's digests, with
/// when it was made and retired — and the transparency log's origin with each key as a signed-note
/// verifier key. Public: an auditor downloads it once and keeps it.
async fn audit_keys(State(state): State<AppState>) -> Response {
    match crate::chain::keys::published(&state.pool).await {
        Ok(keys) => {
            let origin = &state.domain::<crate::chain::ChainSettings>().log_origin;
            let verifiers: Vec<String> = keys.iter().filter_map(|k| k.verifying_key()).map(|k| crate::chain::tlog::verifier_key(origin, &k)).collect();
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
async fn audit_checkpoint(State(state): State<AppState>) -> Response {
    match crate::chain::cosign::latest_cosigned(&state.pool).await {
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
async fn audit_cosignature(State(state): State<AppState>, body: String) -> Response {
    let witnesses = &state.domain::<crate::chain::ChainSettings>().witnesses;
    if witnesses.is_empty() {
        return (StatusCode::NOT_FOUND, "No witnesses are configured (EBB_AUDIT_WITNESSES).").into_response();
    }
    match crate::chain::cosign::accept(&state.pool, witnesses, &body).await {
        Ok(kept) => {
            tracing::info!(witnesses = ?kept, "witness cosignature kept");
            StatusCode::NO_CONTENT.into_response()
        }
        Err(crate::chain::cosign::CosignError::Refused(why)) => (StatusCode::BAD_REQUEST, format!("Cosignature refused: {why}.")).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a cosignature could not be stored");
            (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "5")], "The cosignature could not be stored. Try again later.").into_response()
        }
    }
}

/// `GET /audit/tile/{path}`: a hash tile or an entry bundle of the transparency log (C2SP
/// tlog-tiles). Immutable once served (a full tile never changes; a partial one is named by its
/// width), so cacheable for good; 404 for what the tree does not have.
async fn audit_tile(State(state): State<AppState>, axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    let Some(tile) = crate::chain::tlog::parse_tile_path(&path) else {
        return (StatusCode::NOT_FOUND, "Not a tile path: tile/<level>/<N>[.p/<width>] or tile/entries/<N>[.p/<width>].").into_response();
    };
    match crate::chain::tlog::tile(&state.pool, tile).await {
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
