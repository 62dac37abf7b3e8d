//! The contact server function: a thin adapter over parse, rate limit, insert and prune.

use leptos::prelude::*;

use common::error::AppError;

/// A timeout or a lost connection, not a fault in the statement: worth sending again.
#[cfg(feature = "ssr")]
fn db_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed | sqlx::Error::PoolClosed => true,
        // query_canceled (the statement timeout), admin_shutdown, cannot_connect_now.
        sqlx::Error::Database(d) => matches!(d.code().as_deref(), Some("57014" | "57P01" | "57P03")),
        _ => false,
    }
}

/// Honeypot field name: hidden from people, tempting to form-filling bots.
pub const HONEYPOT_FIELD: &str = "website";

/// The form field carrying the page's signed time stamp (minimum fill time).
pub const STAMP_FIELD: &str = "started";
/// The form field carrying the proof of work (ALTCHA's field name).
pub const PROOF_FIELD: &str = "altcha";

/// Receives the contact form. Works as a plain form post (no JavaScript: the browser is
/// redirected to `/?sent=1`, or back to the form with the error) and from the hydrated page.
///
/// The spam defence never refuses: a submission whose signals weigh enough (no proof of work,
/// which includes every submission without JavaScript; the honeypot; a replayed proof…) is kept
/// as suspected spam, and the visitor sees the same thank-you either way.
#[server(prefix = "/api", endpoint = "contact")]
pub async fn submit_inquiry(
    name: String,
    email: String,
    message: String,
    website: Option<String>,
    started: Option<String>,
    altcha: Option<String>,
) -> Result<(), AppError> {
    use crate::{db, parse_inquiry, spam, ContactForm};
    use common::spam::Signal;
    use kernel::request::{client_key, is_plain_form_post};
    use kernel::state::AppState;

    let state = use_context::<AppState>().ok_or_else(|| AppError::internal("contact", "AppState missing from context"))?;
    let inquiry = parse_inquiry(&ContactForm { name, email, message }).map_err(AppError::Invalid)?;

    let settings = state.domain::<super::ContactSettings>();
    let now = time::OffsetDateTime::now_utc();
    let mut signals = Vec::new();
    // A bot filled the hidden field.
    if website.as_deref().is_some_and(|w| !w.trim().is_empty()) {
        signals.push(Signal::Honeypot);
    }
    let proof = spam::verify(&state, &settings.spam, altcha.as_deref(), now).map_err(|signal| signals.push(signal)).ok();
    signals.extend(spam::check_stamp(&state, &settings.spam, started.as_deref(), now));
    signals.extend(spam::content_signals(inquiry.message()));

    // The rate limit's count, the replay check and the insert: one statement, shared with the
    // submissions that arrive at the same time (group commit), answered once it has committed.
    let submission = db::Submission::new(&settings.limit, &client_key(&state), inquiry).judged(signals, proof);
    let id = match state.domain::<super::writer::Writer>().submit(submission).await {
        Ok(db::Submitted::Stored(id)) => {
            tracing::info!(inquiry.id = %id, "inquiry received");
            id
        }
        Ok(db::Submitted::Quarantined(id)) => {
            tracing::info!(spam.id = %id, event = "contact.quarantined", "submission kept as suspected spam");
            id
        }
        Ok(db::Submitted::Limited { retry_after_secs }) => {
            tracing::info!(event = "contact.rate_limited", "contact submission rate-limited");
            return Err(AppError::RateLimited { retry_after_secs });
        }
        // A database that does not answer in time (the writer's statement or connect timeout):
        // the visitor is told to send again, nothing was kept.
        Err(e) if db_unavailable(&e) => {
            tracing::warn!(error = %e, "contact submission: the database did not answer in time");
            return Err(AppError::Unavailable);
        }
        Err(e) => return Err(AppError::internal("contact submission", e)),
    };
    state.live.touch(common::live::Topic::Inquiry, Some(id.to_string()));

    // Best-effort after the response: prune if due (seed 000). Never affects this response.
    kernel::jobs::nudge_named(&state, kernel::jobs::PRUNE, kernel::jobs::Trigger::Contact);
    // And email the admins if they asked for it (a digest at most once per period).
    kernel::jobs::nudge_named(&state, crate::notify::JOB, kernel::jobs::Trigger::Contact);

    finish_success(is_plain_form_post())
}

/// A proof-of-work challenge for the contact form (ALTCHA's challenge JSON). Never cached: each
/// one can be used once.
#[server(prefix = "/api", endpoint = "contact/challenge", input = leptos::server_fn::codec::GetUrl)]
pub async fn contact_challenge() -> Result<crate::PowChallenge, AppError> {
    use kernel::state::AppState;
    let state = use_context::<AppState>().ok_or_else(|| AppError::internal("contact", "AppState missing from context"))?;
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.insert_header(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    }
    let settings = state.domain::<super::ContactSettings>();
    crate::spam::challenge(&state, &settings.spam, time::OffsetDateTime::now_utc()).map_err(|e| AppError::internal("contact challenge", e))
}

/// For a plain form post, sends the browser to the thank-you state of the page (303, so a reload
/// does not post again); the hydrated page shows its own success message.
#[cfg(feature = "ssr")]
fn finish_success(plain_form_post: bool) -> Result<(), AppError> {
    if plain_form_post {
        kernel::request::redirect_plain_form_post("/?sent=1#contact");
    }
    Ok(())
}
