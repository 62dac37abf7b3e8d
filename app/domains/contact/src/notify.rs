//! Email to admins when inquiries arrive (issue 15): off unless an SMTP server is configured.
//!
//! A lifecycle job (`notify`, at most once a minute over all instances, nudged after each
//! accepted submission, so it runs after the response and never holds up the form) takes the
//! inquiries not yet notified and sends one message for all of them — at most one per digest
//! period, so a burst of submissions becomes one digest. The message carries what the operator
//! chose: only "N new inquiries" (the default) or each inquiry in full.
//!
//! Delivery is best-effort and at least once. No transaction or row lock is held across the SMTP
//! conversation (a slow mail server must not hold rows the form and the inbox touch): a short
//! transaction claims the inquiries (`notify_claimed_at`), the message is sent, and a second one
//! marks them notified once the server accepted it. A failed send releases the claim; a claim
//! left by a process that died is taken over after [`CLAIM_STALE`]. Inquiries older than a day
//! when notifications are first switched on are never sent.

use std::time::Duration;

use kernel::jobs::{Budget, Job, Step, StepCtx, StepError, StepReport};

pub const JOB: &str = "notify";
/// A claim on inquiries older than this is taken for abandoned (its sender died mid-send).
pub const CLAIM_STALE: Duration = Duration::from_secs(600);
const CLAIM_KEY: &str = "notify_claim_at";
/// When the last message went out (epoch milliseconds, in `settings`).
const LAST_SENT_KEY: &str = "notify_last_sent_at";
/// At most this many inquiries in one message (the rest go in the next one).
const MAX_PER_MESSAGE: i64 = 50;

pub use super::mailer::{Mailer, NotifyContent, NotifySettings};

/// The job: claimed at most once a minute; one step.
pub fn job() -> Job {
    Job::new(
        JOB,
        "Notifications",
        "Emails the admins about new inquiries (one digest per period), and, opted in, about files downloaded completely or received, when an SMTP server is configured.",
        CLAIM_KEY,
        Duration::from_secs(60),
    )
    .budget(Budget { rows_per_step: MAX_PER_MESSAGE as u64, time: Duration::from_secs(60) })
    .traffic_budget(Budget { rows_per_step: MAX_PER_MESSAGE as u64, time: Duration::from_secs(30) })
    .step(Step::new("send", send_step).labelled("new inquiries emailed"))
    .step(Step::new("files", super::file_events::files_step).labelled("file events emailed"))
    .step(Step::new(super::personal::STEP_FORGET, super::personal::forget_old).labelled("old entries of the list of emails sent"))
}

struct Pending {
    id: uuid::Uuid,
    name: String,
    email: String,
    message: String,
    created_at: time::OffsetDateTime,
}

async fn send_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let Some(mailer) = ctx.state.domain::<NotifySettings>().mailer.clone() else {
        return Ok(StepReport::rows("sent", 0).with("off", 1));
    };
    let pool = &ctx.state.pool;
    // 1. Claim, in a short transaction: the digest period checked under the row lock of its
    //    setting (one sender at a time over all instances), the inquiries taken by a claim time.
    let mut tx = pool.begin().await?;
    let last_sent: Option<String> =
        sqlx::query_scalar("select value from settings where key = $1 for update").bind(LAST_SENT_KEY).fetch_optional(&mut *tx).await?;
    let now_ms: i64 = sqlx::query_scalar("select (extract(epoch from clock_timestamp()) * 1000)::bigint").fetch_one(&mut *tx).await?;
    if let Some(last) = last_sent.and_then(|v| v.parse::<i64>().ok()) {
        let since = now_ms.saturating_sub(last);
        // Within the digest period (and not a timestamp from a wrong clock in the future).
        if since >= 0 && (since as u128) < mailer.digest.as_millis() {
            return Ok(StepReport::rows("sent", 0).with("waiting", 1));
        }
    }
    let rows = sqlx::query_as::<_, (uuid::Uuid, String, String, String, time::OffsetDateTime)>(
        "with claimed as (
             select id from inquiries
              where not notified and created_at > now() - interval '1 day'
                and (notify_claimed_at is null or notify_claimed_at < clock_timestamp() - make_interval(secs => $2))
              order by created_at, id limit $1 for update skip locked)
         update inquiries i set notify_claimed_at = clock_timestamp() from claimed where i.id = claimed.id
         returning i.id, i.name, i.email, i.message, i.created_at",
    )
    .bind(MAX_PER_MESSAGE)
    .bind(CLAIM_STALE.as_secs_f64())
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    if rows.is_empty() {
        return Ok(StepReport::rows("sent", 0));
    }
    let mut pending: Vec<Pending> = rows.into_iter().map(|(id, name, email, message, created_at)| Pending { id, name, email, message, created_at }).collect();
    pending.sort_by_key(|p| (p.created_at, p.id));
    let ids: Vec<uuid::Uuid> = pending.iter().map(|p| p.id).collect();
    let release = |ids: Vec<uuid::Uuid>| async move {
        // Best effort: a claim left here expires after CLAIM_STALE anyway.
        let _ = sqlx::query("update inquiries set notify_claimed_at = null where id = any($1) and not notified").bind(&ids).execute(pool).await;
    };
    // 2. Send, holding nothing in the database.
    let message = match compose(&mailer, &pending) {
        Ok(m) => m,
        Err(e) => {
            release(ids).await;
            return Err(StepError::new(format!("the notification could not be built: {e}")));
        }
    };
    if let Err(e) = lettre::AsyncTransport::send(&mailer.transport, message).await {
        metrics::counter!("ebb_notify_failures_total").increment(1);
        release(ids).await;
        return Err(StepError::new(format!("the SMTP server did not take the notification: {e}")));
    }
    // 3. Record, in a short transaction: these were sent, and when.
    let mut tx = pool.begin().await?;
    sqlx::query("update inquiries set notified = true, notify_claimed_at = null where id = any($1)").bind(&ids).execute(&mut *tx).await?;
    record_digest(&mut tx, &ctx.state, &mailer, &pending).await?;
    sqlx::query(
        "insert into settings (key, value, updated_at) values ($1, $2, clock_timestamp())
         on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
    )
    .bind(LAST_SENT_KEY)
    .bind(now_ms.to_string())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    metrics::counter!("ebb_notify_sent_total").increment(1);
    tracing::info!(inquiries = ids.len(), recipients = mailer.to.len(), "inquiry notification sent");
    Ok(StepReport::rows("sent", ids.len() as u64))
}

/// The list of emails sent: whose inquiries this one carried, as keyed hashes (a data request
/// finds it by the person's hash; the address itself is not kept here).
async fn record_digest(tx: &mut sqlx::PgConnection, state: &kernel::state::AppState, mailer: &Mailer, pending: &[Pending]) -> Result<(), sqlx::Error> {
    let mut hashes: Vec<String> = pending.iter().map(|p| kernel::personal::Address::new(state, &p.email).hash).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let content = if mailer.content == NotifyContent::Full { "full" } else { "count" };
    sqlx::query("insert into notify_digests (content, recipients, inquiries, address_hashes) values ($1, $2, $3, $4)")
        .bind(content)
        .bind(mailer.to.len() as i32)
        .bind(pending.len() as i32)
        .bind(&hashes)
        .execute(tx)
        .await?;
    Ok(())
}

/// The message: plain text, one to all recipients, in the configured language.
fn compose(mailer: &Mailer, pending: &[Pending]) -> Result<lettre::Message, lettre::error::Error> {
    use common::i18n::{fill, Text};
    let lang = mailer.lang;
    let text = |key: NotifyT| key.get(lang);
    let n = pending.len();
    let subject = if n == 1 { text(NotifyT::SubjectOne).to_string() } else { fill(text(NotifyT::SubjectMany), &[("n", &n)]) };
    let inbox = format!("{}/admin/inbox", mailer.public_url.trim_end_matches('/'));
    let mut body = if n == 1 { text(NotifyT::BodyOne).to_string() } else { fill(text(NotifyT::BodyMany), &[("n", &n)]) };
    body.push('\n');
    if mailer.content == NotifyContent::Full {
        for p in pending {
            body.push_str(&format!(
                "\n----\n{}: {} <{}>\n{}: {}\n\n{}\n",
                text(NotifyT::From),
                p.name,
                p.email,
                text(NotifyT::Received),
                common::time::format_time(p.created_at),
                p.message.replace("\r\n", "\n")
            ));
        }
        body.push_str("----\n");
    }
    body.push_str(&format!("\n{}\n", fill(text(NotifyT::ReadInInbox), &[("url", &inbox)])));
    let mut builder = lettre::Message::builder().from(mailer.from.clone()).subject(subject);
    for to in &mailer.to {
        builder = builder.to(to.clone());
    }
    builder.header(lettre::message::header::ContentType::TEXT_PLAIN).body(body)
}

/// The list of notification emails as the retention report reads it.
pub fn retention_kinds() -> Vec<kernel::retention::Kind> {
    vec![kernel::retention::Kind { kind: "notify_digests", job: JOB, step: super::personal::STEP_FORGET, read: read_digests }]
}

fn read_digests<'a>(
    ctx: &'a kernel::retention::ReadCtx<'a>,
) -> futures::future::BoxFuture<'a, Result<kernel::retention::Reading, kernel::retention::ReadError>> {
    Box::pin(async move {
        let keep = time::Duration::days(super::personal::KEEP_DAYS);
        let every = ctx.every(JOB, std::time::Duration::from_secs(60));
        let (count, oldest_at, past, overdue): (i64, Option<time::OffsetDateTime>, i64, i64) =
            sqlx::query_as("select count(*), min(sent_at), count(*) filter (where sent_at < $1), count(*) filter (where sent_at < $2) from notify_digests")
                .bind(ctx.now - keep)
                .bind(ctx.now - keep - every)
                .fetch_one(&ctx.state.pool)
                .await?;
        let figures = kernel::retention::Figures { count, oldest_at, past, overdue, held: 0 };
        Ok(kernel::retention::Reading { promise: common::retention::Promise::NotifyDigests { days: super::personal::KEEP_DAYS }, figures, estimated: false })
    })
}

common::i18n::texts! {
    enum NotifyT {
        SubjectOne { en: "New inquiry on Ebb", ja: "Ebb に新しいお問い合わせがあります" }
        SubjectMany { en: "{n} new inquiries on Ebb", ja: "Ebb に新しいお問い合わせが {n} 件あります" }
        BodyOne { en: "You have 1 new inquiry.", ja: "新しいお問い合わせが 1 件あります。" }
        BodyMany { en: "You have {n} new inquiries.", ja: "新しいお問い合わせが {n} 件あります。" }
        From { en: "From", ja: "送信者" }
        Received { en: "Received", ja: "受信日時" }
        ReadInInbox { en: "Read and answer them in the inbox: {url}", ja: "受信箱で確認して返信してください: {url}" }
    }
}
