//! The contact server function: a thin adapter over parse, rate limit, insert and prune.

use leptos::prelude::*;

use common::error::AppError;

/// Honeypot field name: hidden from people, tempting to form-filling bots.
pub const HONEYPOT_FIELD: &str = "website";

/// Receives the contact form. Works as a plain form post (no JavaScript: the browser is
/// redirected to `/?sent=1`, or back to the form with the error) and from the hydrated page.
#[server(prefix = "/api", endpoint = "contact")]
pub async fn submit_inquiry(name: String, email: String, message: String, website: Option<String>) -> Result<(), AppError> {
    use crate::{db, parse_inquiry, ContactForm};
    use kernel::request::{client_key, is_plain_form_post};
    use kernel::state::AppState;

    let state = use_context::<AppState>().ok_or_else(|| AppError::internal("contact", "AppState missing from context"))?;

    // A bot filled the hidden field: answer exactly as for a real submission, store nothing.
    if website.as_deref().is_some_and(|w| !w.trim().is_empty()) {
        tracing::info!(event = "contact.honeypot", "submission dropped by honeypot");
        return finish_success(is_plain_form_post());
    }

    let inquiry = parse_inquiry(&ContactForm { name, email, message }).map_err(AppError::Invalid)?;

    // The rate limit's count and the insert: one statement, shared with the submissions that
    // arrive at the same time (group commit), answered once it has committed.
    let submission = db::Submission::new(&state.domain::<super::ContactSettings>().limit, &client_key(&state), inquiry);
    let id = match state.domain::<super::writer::Writer>().submit(submission).await {
        Ok(db::Submitted::Stored(id)) => id,
        Ok(db::Submitted::Limited { retry_after_secs }) => {
            tracing::info!(event = "contact.rate_limited", "contact submission rate-limited");
            return Err(AppError::RateLimited { retry_after_secs });
        }
        Err(e) => return Err(AppError::internal("contact submission", e)),
    };
    tracing::info!(inquiry.id = %id, "inquiry received");
    state.live.touch(common::live::Topic::Inquiry, Some(id.to_string()));

    // Best-effort after the response: prune if due (seed 000). Never affects this response.
    kernel::jobs::nudge_named(&state, kernel::jobs::PRUNE, kernel::jobs::Trigger::Contact);
    // And email the admins if they asked for it (a digest at most once per period).
    kernel::jobs::nudge_named(&state, crate::notify::JOB, kernel::jobs::Trigger::Contact);

    finish_success(is_plain_form_post())
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
