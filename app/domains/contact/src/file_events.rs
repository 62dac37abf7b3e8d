//! Email to admins about files (issue 33), opt-in (`EBB_NOTIFY_FILES`) and only when an SMTP
//! server is configured: a share's download completed (from the server's own stream, see the
//! shares' delivery receipts) and a file received through a file request. A step of the
//! `notify` job; one message per run for everything new.
//!
//! Events are sent within a day or not at all: those still unsent a day after they happened (the
//! SMTP server refused every try) are given up, counted (`ebb_notify_given_up_total`) and named
//! in a `notify.unsent` alert — never dropped silently. Events from before the option was
//! switched on are given up without an alert (nobody was promised them). At most once: the events are marked notified in a short transaction before the message is
//! sent, and unmarked again when the SMTP server refuses it. The message names files only when
//! `EBB_NOTIFY_CONTENT=full`; by default it gives counts and a link to the shares page.

use kernel::file_events::FileEvent;
use kernel::jobs::{StepCtx, StepError, StepReport};

use super::mailer::{Mailer, NotifyContent, NotifySettings};

/// At most this many events in one message (the rest go in the next run).
const MAX_PER_MESSAGE: i64 = 50;

pub(crate) async fn files_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let Some(mailer) = ctx.state.domain::<NotifySettings>().mailer.clone().filter(|m| m.files) else {
        sqlx::query("delete from settings where key = $1").bind(FILES_ON_SINCE_KEY).execute(pool).await?;
        return Ok(StepReport::rows("sent", 0).with("off", 1));
    };
    note_files_on(pool).await?;
    give_up_stale(&ctx.state).await?;
    // 1. Claim (mark) in one short transaction (shares' rows, through the kernel's trait); the
    // rows are skipped by a concurrent run.
    let source = ctx.state.domain::<kernel::file_events::FileEvents>().0.clone();
    let events = source.claim(pool, MAX_PER_MESSAGE).await?;
    if events.is_empty() {
        return Ok(StepReport::rows("sent", 0));
    }
    // 2. Send, holding nothing in the database; a refusal unmarks them for the next run.
    let sent = match compose(&mailer, &events) {
        Ok(message) => lettre::AsyncTransport::send(&mailer.transport, message)
            .await
            .map(|_| ())
            .map_err(|e| format!("the SMTP server did not take the file notification: {e}")),
        Err(e) => Err(format!("the file notification could not be built: {e}")),
    };
    if let Err(e) = sent {
        metrics::counter!("ebb_notify_failures_total").increment(1);
        let _ = source.release(pool, &events).await;
        return Err(StepError::new(e));
    }
    metrics::counter!("ebb_notify_sent_total").increment(1);
    tracing::info!(events = events.len(), recipients = mailer.to.len(), "file notification sent");
    Ok(StepReport::rows("sent", events.len() as u64))
}

/// Marks events still unsent a day after they happened as handled, and says so: a counter and,
/// for events that happened while file emails were on, a `notify.unsent` alert.
async fn give_up_stale(state: &kernel::state::AppState) -> Result<(), sqlx::Error> {
    let on_since: Option<time::OffsetDateTime> =
        sqlx::query_scalar("select updated_at from settings where key = $1").bind(FILES_ON_SINCE_KEY).fetch_optional(&state.pool).await?;
    let source = state.domain::<kernel::file_events::FileEvents>().0.clone();
    let (given_up, alerted) = source.give_up_stale(&state.pool, on_since).await?;
    if given_up > 0 {
        metrics::counter!("ebb_notify_given_up_total").increment(given_up as u64);
        tracing::warn!(given_up, promised = alerted, "file notifications still unsent a day after their event were given up");
    }
    if alerted > 0 {
        kernel::alerts::raise(&state.pool, common::alerts::AlertKind::NotifyUnsent, "", &common::alerts::AlertMessage::NotifyUnsent { n: alerted }).await?;
    }
    Ok(())
}

/// Notes when file emails were first found switched on (its `updated_at`): events from before
/// were never promised an email.
async fn note_files_on(pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
    sqlx::query("insert into settings (key, value, updated_at) values ($1, 'on', clock_timestamp()) on conflict (key) do nothing")
        .bind(FILES_ON_SINCE_KEY)
        .execute(pool)
        .await?;
    Ok(())
}

/// The `settings` key whose `updated_at` says since when file emails are on.
const FILES_ON_SINCE_KEY: &str = "notify_files_on_since";

/// The message: counts (and, with full content, the files' names), and the shares page's link.
fn compose(mailer: &Mailer, events: &[FileEvent]) -> Result<lettre::Message, lettre::error::Error> {
    use common::i18n::{fill, Text};
    let lang = mailer.lang;
    let downloads = events.iter().filter(|e| !e.received).count();
    let received = events.len() - downloads;
    let subject = fill(FilesT::Subject.get(lang), &[("n", &events.len())]);
    let mut body = String::new();
    if downloads > 0 {
        body.push_str(&fill(FilesT::Downloaded.get(lang), &[("n", &downloads)]));
        body.push('\n');
    }
    if received > 0 {
        body.push_str(&fill(FilesT::Received.get(lang), &[("n", &received)]));
        body.push('\n');
    }
    if mailer.content == NotifyContent::Full {
        body.push('\n');
        for e in events {
            let line = if e.received { FilesT::ReceivedOne } else { FilesT::DownloadedOne };
            body.push_str(&fill(line.get(lang), &[("name", &e.file_name), ("id", &e.share_id)]));
            body.push('\n');
        }
    }
    let shares = format!("{}/admin/shares", mailer.public_url.trim_end_matches('/'));
    body.push_str(&format!("\n{}\n", fill(FilesT::SeeShares.get(lang), &[("url", &shares)])));
    let mut builder = lettre::Message::builder().from(mailer.from.clone()).subject(subject);
    for to in &mailer.to {
        builder = builder.to(to.clone());
    }
    builder.header(lettre::message::header::ContentType::TEXT_PLAIN).body(body)
}

common::i18n::texts! {
    enum FilesT {
        Subject { en: "Ebb: {n} file event(s)", ja: "Ebb: ファイルの通知 {n} 件" }
        Downloaded { en: "Shares downloaded completely: {n}", ja: "最後までダウンロードされた共有ファイル: {n} 件" }
        Received { en: "Files received through file requests: {n}", ja: "ファイル依頼で受信したファイル: {n} 件" }
        DownloadedOne { en: "- downloaded completely: “{name}” (share #{id})", ja: "- ダウンロード完了: 「{name}」（共有 #{id}）" }
        ReceivedOne { en: "- received: “{name}” (file #{id})", ja: "- 受信: 「{name}」（ファイル #{id}）" }
        SeeShares { en: "See them on the shares page: {url}", ja: "共有ファイルのページで確認してください: {url}" }
    }
}
