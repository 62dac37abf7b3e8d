//! `GET /blob?key&expires&name&sig`: reads signed by Ebb (the local backend's answer to S3
//! presigned URLs). The signature is the only authorisation: it covers key, expiry and the
//! download name, and is checked in constant time before anything else.

use app::state::AppState;
use app::storage::BlobStore;
use axum::{
    body::Body,
    extract::{Query, State},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct SignedRead {
    key: String,
    expires: i64,
    name: String,
    sig: String,
}

fn refuse(status: StatusCode, text: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], text).into_response()
}

pub async fn serve(State(state): State<AppState>, query: Result<Query<SignedRead>, axum::extract::rejection::QueryRejection>) -> Response {
    let Ok(Query(q)) = query else {
        return refuse(StatusCode::BAD_REQUEST, "This download link is incomplete. Copy the whole link, or ask for a new one.");
    };
    let Some(signer) = state.blobs.signer() else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "Downloads are not available yet; try again in a minute.");
    };
    // The database's clock: the link was signed with it, maybe by another instance.
    let now = match app::jobs::claim::db_now(&state.pool).await {
        Ok(now) => now.unix_timestamp(),
        Err(e) => {
            tracing::warn!(error = %e, "signed read: the database clock could not be read");
            return refuse(StatusCode::SERVICE_UNAVAILABLE, "Downloads are not available right now; try again in a minute.");
        }
    };
    match signer.verify(&q.key, q.expires, &q.name, &q.sig, now) {
        Ok(()) => {}
        Err(app::storage::signed::SignedUrlError::Invalid) => {
            return refuse(StatusCode::FORBIDDEN, "This download link is not valid. Copy the whole link, or ask for a new one.")
        }
        Err(app::storage::signed::SignedUrlError::Expired) => return refuse(StatusCode::GONE, "This download link has expired. Ask for a new one."),
    }
    let blob = match state.blobs.open(&q.key).await {
        Ok(Some(b)) => b,
        Ok(None) => return refuse(StatusCode::NOT_FOUND, "The file of this link no longer exists."),
        Err(e) => {
            tracing::error!(error = %e, "signed read failed");
            return refuse(StatusCode::SERVICE_UNAVAILABLE, "The file cannot be read right now; try again in a few minutes.");
        }
    };
    let mut res = Response::new(Body::from_stream(blob.body));
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(blob.len));
    h.insert(header::CONTENT_DISPOSITION, app::shares::download::content_disposition(&q.name));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    res
}
