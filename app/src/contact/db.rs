//! Inquiry queries.

use sqlx::PgConnection;
use uuid::Uuid;

use super::ValidInquiry;

/// Stores a validated inquiry and returns its id.
pub async fn insert_inquiry(conn: &mut PgConnection, inquiry: &ValidInquiry) -> Result<Uuid, sqlx::Error> {
    sqlx::query_scalar!("insert into inquiries (name, email, message) values ($1, $2, $3) returning id", inquiry.name(), inquiry.email(), inquiry.message(),)
        .fetch_one(conn)
        .await
}
