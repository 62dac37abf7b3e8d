//! Raising and resolving alerts (the kinds and the banner's view are in `common::alerts`).

pub use common::alerts::{AlertKind, AlertMessage, AlertView};
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
pub async fn raise(pool: &PgPool, kind: AlertKind, subject: &str, message: &AlertMessage) -> Result<(), sqlx::Error> {
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
pub async fn raise_detailed(pool: &PgPool, kind: AlertKind, subject: &str, message: &AlertMessage, details: &str) -> Result<(), sqlx::Error> {
    let headline = message.english();
    let headline = headline.as_str();
    let params = serde_json::to_value(message).expect("an alert message is plain data");
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
        r#"insert into alerts (kind, subject, message, params, details) values ($1, $2, $3, $4, $5)
           on conflict (kind, subject) where resolved_at is null
           do update set last_raised_at = now(), times = alerts.times + 1, message = excluded.message, params = excluded.params,
                         details = excluded.details
           returning (xmax = 0) as "new!""#,
        kind.as_str(),
        subject,
        message,
        params,
        details,
    )
    .fetch_one(&mut *tx)
    .await?;
    if new {
        // A new alert is an event; a repeat of an open one is not.
        let subject = format!("{}{}{subject}", kind.as_str(), if subject.is_empty() { "" } else { ":" });
        crate::audit::record(&mut tx, &crate::audit::Actor::system(), crate::audit::AuditKind::AlertRaise, Some(("alert", &subject)), None).await?;
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
    let rows = sqlx::query!(
        "select id, kind, subject, message, params, details, raised_at, last_raised_at, times from alerts
         where resolved_at is null order by last_raised_at desc limit 50"
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| AlertView {
            id: r.id,
            kind: r.kind,
            subject: r.subject,
            message: r.message,
            // A message this version cannot read (written by a newer one) shows its English.
            params: r.params.and_then(|p| serde_json::from_value(p).ok()),
            details: r.details,
            raised_at: r.raised_at,
            last_raised_at: r.last_raised_at,
            times: r.times,
        })
        .collect())
}
