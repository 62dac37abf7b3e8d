//! Alerts: the one way any code raises one. An alert is an ERROR log line with a stable
//! `alert.kind`, a counter (`ebb_alerts_raised_total`), and a row in `alerts` shown as a banner
//! on every admin page until it is resolved — automatically when the condition clears, or by an
//! admin. Kernel: it imports no domain; the kinds are listed here so they stay stable.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// Every kind of alert Ebb raises (stable names: dashboards and log searches use them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertKind {
    /// A share's file could not be deleted 3 times; subject: the share id.
    ShareDeleteFailing,
    /// The blob store's marker object is missing or foreign: the store in use may not be the real
    /// one, so no delete counts as done; subject: empty.
    StorageMarkerMissing,
    /// A job failed twice in a row; subject: the job name.
    JobFailing,
    /// A live share's stored file is missing (its download would fail); subject: the share id.
    ShareFileMissing,
    /// The audit log has fewer monthly partitions ahead than wanted, or a hole: critical.
    AuditPartitionsMissing,
    /// Audit events landed in the default partition.
    AuditDefaultRows,
    /// An audit partition with an unexpected name or bounds was left alone.
    AuditUnexpectedPartition,
    /// A run of the audit archive failed (critical: months wait in the database, or an archived
    /// object is missing or changed); subject: the job name.
    ArchiveFailed,
    /// Items of one kind are past their retention promise by more than one interval of the job
    /// that removes them; subject: the kind (`inquiries`, `share_files`…).
    RetentionOverdue,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::ShareDeleteFailing => "share.delete_failing",
            AlertKind::StorageMarkerMissing => "storage.marker_missing",
            AlertKind::JobFailing => "job.failing",
            AlertKind::ShareFileMissing => "share.file_missing",
            AlertKind::AuditPartitionsMissing => "audit.partitions_missing",
            AlertKind::AuditDefaultRows => "audit.default_rows",
            AlertKind::AuditUnexpectedPartition => "audit.unexpected_partition",
            AlertKind::ArchiveFailed => "archive.failed",
            AlertKind::RetentionOverdue => "retention.overdue",
        }
    }
}

/// An open alert, as the banner shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertView {
    pub id: i64,
    pub kind: String,
    pub subject: String,
    pub message: String,
    #[serde(with = "time::serde::rfc3339")]
    pub raised_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_raised_at: OffsetDateTime,
    pub times: i32,
}

#[cfg(feature = "ssr")]
pub use db::*;

#[cfg(feature = "ssr")]
mod db {
    use super::{AlertKind, AlertView};
    use sqlx::PgPool;

    /// Raises (or refreshes) the alert `kind` about `subject`: ERROR log line, counter, row.
    /// `message` is for admins: what happened and what to do; never personal data.
    pub async fn raise(pool: &PgPool, kind: AlertKind, subject: &str, message: &str) -> Result<(), sqlx::Error> {
        tracing::error!(alert.kind = kind.as_str(), alert.subject = subject, "{message}");
        metrics::counter!("ebb_alerts_raised_total", "kind" => kind.as_str()).increment(1);
        let mut tx = pool.begin().await?;
        let new = sqlx::query_scalar!(
            r#"insert into alerts (kind, subject, message) values ($1, $2, $3)
               on conflict (kind, subject) where resolved_at is null
               do update set last_raised_at = now(), times = alerts.times + 1, message = excluded.message
               returning (xmax = 0) as "new!""#,
            kind.as_str(),
            subject,
            message,
        )
        .fetch_one(&mut *tx)
        .await?;
        if new {
            // A new alert is an event; a repeat of an open one is not.
            let subject = format!("{}{}{subject}", kind.as_str(), if subject.is_empty() { "" } else { ":" });
            crate::audit::db::record(&mut tx, &crate::audit::db::Actor::system(), crate::audit::AuditKind::AlertRaise, Some(("alert", &subject)), None).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Resolves the open alert `kind` about `subject` because its condition cleared (no-op when
    /// none is open).
    pub async fn resolve(pool: &PgPool, kind: AlertKind, subject: &str) -> Result<(), sqlx::Error> {
        resolve_each(pool, &[kind], subject).await
    }

    /// Resolves the open alerts of any of `kinds` about `subject` in one statement (a purged
    /// share clears every alert about it).
    pub async fn resolve_each(pool: &PgPool, kinds: &[AlertKind], subject: &str) -> Result<(), sqlx::Error> {
        let kinds: Vec<String> = kinds.iter().map(|k| k.as_str().to_owned()).collect();
        let resolved = sqlx::query_scalar!(
            "update alerts set resolved_at = now(), resolved_by = 'auto' where kind = any($1) and subject = $2 and resolved_at is null
             returning kind",
            &kinds[..],
            subject,
        )
        .fetch_all(pool)
        .await?;
        for kind in resolved {
            tracing::info!(alert.kind = kind, alert.subject = subject, "alert resolved: the condition cleared");
        }
        Ok(())
    }

    /// An admin resolves alert `id` (it is raised again if its condition persists). True when
    /// an open alert was resolved.
    pub async fn resolve_by_admin(pool: &PgPool, id: i64, admin: uuid::Uuid) -> Result<bool, sqlx::Error> {
        let r = sqlx::query!("update alerts set resolved_at = now(), resolved_by = $2 where id = $1 and resolved_at is null", id, admin.to_string(),)
            .execute(pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Open alerts, newest first.
    pub async fn open(pool: &PgPool) -> Result<Vec<AlertView>, sqlx::Error> {
        sqlx::query_as!(
            AlertView,
            "select id, kind, subject, message, raised_at, last_raised_at, times from alerts
             where resolved_at is null order by last_raised_at desc limit 50"
        )
        .fetch_all(pool)
        .await
    }
}
