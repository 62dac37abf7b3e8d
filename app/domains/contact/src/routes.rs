//! The contact domain's plain routes: the inbox as a streamed CSV download for admins
//! (`GET /admin/inbox/export.csv[?q=…][&bom=1]`).

use kernel::http::prelude::*;
use serde::Deserialize;

use crate::inbox;

/// This domain's routes.
pub fn routes() -> Routes {
    Routes::new().admin(Role::Admin, "/admin/inbox/export.csv", get(inquiries_csv))
}

#[derive(Debug, Deserialize)]
struct ExportQuery {
    q: Option<String>,
    bom: Option<String>,
}

/// Behind the admin gate, which hands over the signed-in admin (a request without one never gets here).
async fn inquiries_csv(State(state): State<AppState>, AdminCall { actor, .. }: FreshAdminCall, Query(query): Query<ExportQuery>) -> Response {
    let search = inbox::normalise_search(query.q.as_deref());
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
    let detail = search.as_deref().map(|q| format!("search of {} characters", q.chars().count()));
    if let Err(e) = kernel::audit::record(&mut conn, &actor, kernel::audit::AuditKind::InquiryExport, None, detail.as_deref()).await {
        tracing::error!(error = %e, "could not record the export");
        return (StatusCode::INTERNAL_SERVER_ERROR, "The export could not be recorded, so it did not run. Try again later.").into_response();
    }
    drop(conn);
    let today = time::OffsetDateTime::now_utc().date();
    let stream = inbox::export::stream(state.pool.clone(), search, bom, state.shared::<inbox::export::ExportMetrics>());
    (attachment("text/csv; charset=utf-8", &format!("inquiries-{today}.csv")), Body::from_stream(stream)).into_response()
}
