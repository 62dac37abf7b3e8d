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
    /// A job's runs end at their budget with work left (the archive's backlog of months);
    /// subject: the job name. Resolved by a run that finishes everything.
    ArchiveBehind,
    /// Audit upkeep failed (a partition could not be created or detached); subject: empty.
    /// Raised on the first failed run, resolved by a run that succeeds.
    AuditUpkeepFailed,
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
            AlertKind::ArchiveBehind => "archive.behind",
            AlertKind::AuditUpkeepFailed => "audit.upkeep_failed",
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
    /// Everything behind the headline (each failing month, each step's error); may be long.
    pub details: String,
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

    /// The longest headline kept (the column allows 1,000 characters); a longer one is cut at a
    /// character boundary and kept whole in the details.
    pub const HEADLINE_MAX: usize = 600;
    /// The longest details kept (a runaway list must not fill the table).
    pub const DETAILS_MAX: usize = 100_000;

    /// Raises (or refreshes) the alert `kind` about `subject`: ERROR log line, counter, row.
    /// `message` is for admins: what happened and what to do; never personal data. Raised
    /// whatever its length: a long message becomes a shortened headline and the whole text its
    /// details ([`raise_detailed`]).
    pub async fn raise(pool: &PgPool, kind: AlertKind, subject: &str, message: &str) -> Result<(), sqlx::Error> {
        raise_detailed(pool, kind, subject, message, "").await
    }

    /// Shortens `text` to at most `max` characters, ending with "…" when cut.
    fn shorten(text: &str, max: usize) -> String {
        match text.char_indices().nth(max.saturating_sub(1)) {
            Some((i, _)) if text[i..].chars().nth(1).is_some() => format!("{}…", &text[..i]),
            _ => text.to_owned(),
        }
    }

    /// Raises (or refreshes) the alert `kind` about `subject` with a short, stable `headline`
    /// (the banner) and `details` (no small limit). Never fails for the length of either.
    pub async fn raise_detailed(pool: &PgPool, kind: AlertKind, subject: &str, headline: &str, details: &str) -> Result<(), sqlx::Error> {
        let short = shorten(headline, HEADLINE_MAX);
        let details = match (short.len() < headline.len(), details.is_empty()) {
            (false, _) => details.to_owned(),
            (true, true) => headline.to_owned(),
            (true, false) => format!("{headline}\n{details}"),
        };
        let details = shorten(&details, DETAILS_MAX);
        let subject = shorten(subject, 200);
        let subject = subject.as_str();
        let message = short.as_str();
        tracing::error!(alert.kind = kind.as_str(), alert.subject = subject, alert.details = details.as_str(), "{message}");
        metrics::counter!("ebb_alerts_raised_total", "kind" => kind.as_str()).increment(1);
        let mut tx = pool.begin().await?;
        let new = sqlx::query_scalar!(
            r#"insert into alerts (kind, subject, message, details) values ($1, $2, $3, $4)
               on conflict (kind, subject) where resolved_at is null
               do update set last_raised_at = now(), times = alerts.times + 1, message = excluded.message, details = excluded.details
               returning (xmax = 0) as "new!""#,
            kind.as_str(),
            subject,
            message,
            details,
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
    pub async fn resolve_by_admin(conn: &mut sqlx::PgConnection, id: i64, admin: uuid::Uuid) -> Result<bool, sqlx::Error> {
        let r = sqlx::query!("update alerts set resolved_at = now(), resolved_by = $2 where id = $1 and resolved_at is null", id, admin.to_string(),)
            .execute(conn)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Open alerts, newest first.
    pub async fn open(pool: &PgPool) -> Result<Vec<AlertView>, sqlx::Error> {
        sqlx::query_as!(
            AlertView,
            "select id, kind, subject, message, details, raised_at, last_raised_at, times from alerts
             where resolved_at is null order by last_raised_at desc limit 50"
        )
        .fetch_all(pool)
        .await
    }
}
