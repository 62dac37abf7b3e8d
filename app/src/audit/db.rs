//! Writing admin actions.

use sqlx::PgConnection;
use uuid::Uuid;

/// Records that `admin` did `action` (e.g. `AuditAction::PasskeyRemove`) to `subject` (an id, never
/// personal data). Call it with the same connection/transaction as the change it records.
pub async fn record_admin_action(conn: &mut PgConnection, admin: Option<Uuid>, action: super::AuditAction, subject: Option<&str>) -> Result<(), sqlx::Error> {
    sqlx::query!("insert into admin_actions (admin_id, action, subject) values ($1, $2, $3)", admin, action.as_str(), subject,).execute(conn).await?;
    Ok(())
}
