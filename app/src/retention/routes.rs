//! The retention report as a download for admins (`GET /admin/retention/report.json`).

use kernel::http::prelude::*;

/// The report's route.
pub fn routes() -> Routes {
    Routes::new().admin(Role::Auditor, "/admin/retention/report.json", get(retention_report))
}

/// `GET /admin/retention/report.json`: the retention report read now, as a timestamped JSON
/// download. Recorded in the audit log first; a report whose record cannot be written is not
/// given.
async fn retention_report(State(state): State<AppState>, AdminCall { actor, .. }: AdminCall) -> Response {
    let report = match super::report::compute(&state).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "retention report failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, "The report could not be read. Try again later; the server log has the cause.").into_response();
        }
    };
    if let Err(refused) =
        record_first(&state, &actor, kernel::audit::AuditKind::RetentionReport, None, None, "The report could not be recorded, so it was not given.").await
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
    (attachment("application/json", &format!("ebb-retention-{stamp}.json")), body).into_response()
}
