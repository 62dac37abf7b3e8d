//! `GET /admin/inbox/export.csv[?q=…][&bom=1]`: the streamed CSV export (behind the admin gate).

use app::auth::AdminInfo;
use app::state::AppState;
use axum::{
    body::Body,
    extract::{Extension, Query, State},
    http::{header, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct ExportQuery {
    q: Option<String>,
    bom: Option<String>,
}

/// Behind the admin gate, which hands over the signed-in admin (a request without one never gets here).
pub async fn inquiries_csv(State(state): State<AppState>, Extension(admin): Extension<AdminInfo>, Query(query): Query<ExportQuery>) -> Response {
    let search = app::inbox::normalise_search(query.q.as_deref());
    let bom = matches!(query.bom.as_deref(), Some("1" | "true" | "on"));
    if let Ok(mut conn) = state.pool.acquire().await {
        // Exports copy personal data out of Ebb: who did it, and when, is kept.
        if let Err(e) = app::audit::db::record_admin_action(&mut conn, Some(admin.id), app::audit::AuditAction::InquiryExport, None).await {
            tracing::error!(error = %e, "could not record the export");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    }
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
