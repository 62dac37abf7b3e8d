//! The one error type the browser ever sees.
//!
//! Each variant is something a visitor or admin can act on. Internal causes (database, I/O)
//! are logged once where they are handled and become [`AppError::Internal`], so no internal
//! text ever reaches a response.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use server_fn_error::{FromServerFnError, ServerFnErrorErr};

/// Re-exports under a short name so the rest of the crate does not depend on leptos' layout.
mod server_fn_error {
    pub use leptos::server_fn::codec::JsonEncoding;
    pub use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
}

/// Field name → message, for errors shown beside form fields.
pub type FieldErrors = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    /// The input failed validation; each message belongs beside its field (HTTP 400).
    #[error("please correct the highlighted fields")]
    Invalid(FieldErrors),
    /// The request itself was malformed (missing or mistyped fields) (HTTP 400).
    #[error("the request was malformed: {0}")]
    BadRequest(String),
    /// The upload is larger than the configured limit (HTTP 413).
    #[error("the file is larger than the limit of {limit_bytes} bytes")]
    TooLarge { limit_bytes: u64 },
    /// Too many requests from this client; retry after this many seconds (HTTP 429).
    #[error("too many requests; try again in {retry_after_secs} seconds")]
    RateLimited { retry_after_secs: u64 },
    /// A sign-in is required (HTTP 401).
    #[error("please sign in")]
    Unauthorized,
    /// The request came from another site (HTTP 403).
    #[error("this request came from another site and was refused")]
    Forbidden,
    /// The signed-in admin's role does not allow this; `needs` is the least role that does
    /// (HTTP 403).
    #[error("this needs the {needs} role")]
    NotAllowed { needs: crate::admin::Role },
    /// A sensitive action needs a fresh passkey check (HTTP 403): confirm with a passkey, then
    /// the action is done.
    #[error("confirm with your passkey first")]
    StepUp,
    /// Nothing here (HTTP 404).
    #[error("not found")]
    NotFound,
    /// It was here and is gone for good: used up, expired or deleted (HTTP 410).
    #[error("this is no longer available")]
    Gone,
    /// The change conflicts with what is stored, e.g. a duplicate (HTTP 409); the text says what.
    #[error("{0}")]
    Conflict(String),
    /// A part Ebb needs is not usable right now (the storage's marker is missing: an unmounted
    /// folder, a wrong bucket); nothing was kept, an admin has been alerted (HTTP 503).
    #[error("the storage is unavailable; nothing was kept")]
    StorageUnavailable,
    /// The database did not answer in time (a statement timed out, no connection could be had);
    /// nothing was kept, the person can send again in a moment (HTTP 503).
    #[error("the service is busy; nothing was kept")]
    Unavailable,
    /// The storage has no room left for this file (a full disk); nothing was kept, an admin
    /// has been alerted (HTTP 507).
    #[error("the storage is full; nothing was kept")]
    StorageFull,
    /// Something went wrong on our side; the cause is in the server log (HTTP 500).
    #[error("something went wrong on our side; please try again later")]
    Internal,
}

impl AppError {
    /// The HTTP status this error is answered with.
    pub fn status(&self) -> u16 {
        match self {
            AppError::Invalid(_) | AppError::BadRequest(_) => 400,
            AppError::Unauthorized => 401,
            AppError::Forbidden | AppError::NotAllowed { .. } | AppError::StepUp => 403,
            AppError::NotFound => 404,
            AppError::Conflict(_) => 409,
            AppError::Gone => 410,
            AppError::TooLarge { .. } => 413,
            AppError::RateLimited { .. } => 429,
            AppError::StorageUnavailable => 503,
            AppError::StorageFull => 507,
            AppError::Unavailable => 503,
            AppError::Internal => 500,
        }
    }

    /// Logs an internal cause once and turns it into the opaque [`AppError::Internal`].
    pub fn internal(context: &'static str, cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "{context}");
        AppError::Internal
    }

    /// Maps a database error: a unique-constraint violation is the client's conflict (409, with
    /// a clear message); anything else is logged once and becomes `Internal`.
    #[cfg(feature = "ssr")]
    pub fn db(context: &'static str) -> impl Fn(sqlx::Error) -> AppError {
        move |e| match &e {
            sqlx::Error::Database(d) if d.is_unique_violation() => {
                tracing::debug!(constraint = d.constraint().unwrap_or(""), "{context}: duplicate refused");
                AppError::Conflict(crate::i18n::t(crate::i18n::T::ErrConflict).into())
            }
            _ => AppError::internal(context, e),
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = server_fn_error::JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            // Argument errors are the client's fault (a form missing a field or a value of the
            // wrong type).
            ServerFnErrorErr::Args(msg) | ServerFnErrorErr::MissingArg(msg) => {
                tracing::debug!(error = %msg, "malformed server function arguments");
                AppError::BadRequest(msg)
            }
            // On the server, deserialization is of the request body (empty, truncated, not JSON,
            // not UTF-8): the client's mistake, never an ERROR line. In the browser it is of our
            // own response: a real failure.
            #[cfg(feature = "ssr")]
            ServerFnErrorErr::Deserialization(msg) => {
                tracing::debug!(error = %msg, "malformed server function request body");
                AppError::BadRequest("the request body could not be read; send the form again".into())
            }
            ServerFnErrorErr::Request(msg) => {
                // Only happens in the browser: the server could not be reached.
                tracing::warn!(error = %msg, "server function request failed");
                AppError::Internal
            }
            other => {
                tracing::error!(error = %other, "server function failed");
                AppError::Internal
            }
        }
    }
}

/// Puts the error's HTTP status (and `Retry-After` for rate limits) on a server-rendered page's
/// response. Server functions need no call: the server's status layer applies
/// [`AppError::status`] to every server function error response.
#[cfg(feature = "ssr")]
pub fn set_status(err: &AppError) {
    use axum::http::{header::RETRY_AFTER, HeaderValue, StatusCode};
    if let Some(res) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
        if let AppError::RateLimited { retry_after_secs } = err {
            res.insert_header(RETRY_AFTER, HeaderValue::from(*retry_after_secs));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_one_status() {
        let cases = [
            (AppError::Invalid(FieldErrors::new()), 400),
            (AppError::BadRequest("x".into()), 400),
            (AppError::Unauthorized, 401),
            (AppError::Forbidden, 403),
            (AppError::NotAllowed { needs: crate::admin::Role::Owner }, 403),
            (AppError::StepUp, 403),
            (AppError::NotFound, 404),
            (AppError::Conflict("x".into()), 409),
            (AppError::Gone, 410),
            (AppError::TooLarge { limit_bytes: 1 }, 413),
            (AppError::RateLimited { retry_after_secs: 1 }, 429),
            (AppError::Internal, 500),
        ];
        for (err, status) in cases {
            assert_eq!(err.status(), status, "{err:?}");
        }
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn a_malformed_request_body_is_the_clients_mistake() {
        let err = AppError::from_server_fn_error(ServerFnErrorErr::Deserialization("EOF while parsing".into()));
        assert_eq!(err.status(), 400);
        let err = AppError::from_server_fn_error(ServerFnErrorErr::Args("missing field".into()));
        assert_eq!(err.status(), 400);
    }
}
