//! Writing and reading audit events.

use sqlx::PgPool;

use super::{AuditAdmin, AuditFilter, AuditRow, PROMISE_MONTHS};

/// A page of events of the last 24 months matching `filter`, newest first, older than `before`.
pub async fn page(
    db: impl sqlx::PgExecutor<'_>,
    filter: &AuditFilter,
    before: Option<(time::OffsetDateTime, i64)>,
    limit: i64,
) -> Result<Vec<AuditRow>, sqlx::Error> {
    let to_exclusive = filter.to.map(|d| d.next_day().unwrap_or(d).midnight().assume_utc());
    let from = filter.from.map(|d| d.midnight().assume_utc());
    let (before_at, before_id) = before.unzip();
    sqlx::query_as!(
        AuditRow,
        r#"select id as "id!", occurred_at as "occurred_at!", kind as "kind!", admin_id, admin_name, subject_type, subject_id, detail, client_hash
           from audit_events
           where occurred_at >= greatest(now() - make_interval(months => $1), coalesce($2, '-infinity'::timestamptz))
             and ($3::timestamptz is null or occurred_at < $3)
             and ($4::text is null or kind = $4)
             and ($5::uuid is null or admin_id = $5)
             and ($6::text is null or subject_id = $6)
             and ($7::timestamptz is null or (occurred_at, id) < ($7, $8))
           order by occurred_at desc, id desc
           limit $9"#,
        PROMISE_MONTHS as i32,
        from,
        to_exclusive,
        filter.kind,
        filter.admin,
        filter.subject,
        before_at,
        before_id,
        limit,
    )
    .fetch_all(db)
    .await
}

/// Admins that can be chosen in the filter: current admins and names found in events.
pub async fn admins(pool: &PgPool) -> Result<Vec<AuditAdmin>, sqlx::Error> {
    sqlx::query_as!(
        AuditAdmin,
        r#"select id as "id!", name as "name!" from admin_names
           union
           select distinct on (admin_id) admin_id as "id!", admin_name as "name!" from audit_events
           where admin_id is not null and admin_name is not null and admin_id not in (select id from admin_names)
             and occurred_at >= now() - make_interval(months => $1)
           order by 2"#,
        PROMISE_MONTHS as i32,
    )
    .fetch_all(pool)
    .await
}
