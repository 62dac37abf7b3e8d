//! The admin's upload (`POST /api/admin/shares/upload`, behind the gate), streamed to the blob
//! store, and the pieces the file request's upload shares with it. Downloads are in `deliver`.

use crate::texts::SharesT;
use common::i18n::t;
use std::sync::Arc;

use crate::{self as shares, NewShare};
use axum::{
    extract::{
        multipart::{Field, MultipartError, MultipartRejection},
        ConnectInfo, Extension, Multipart, State,
    },
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use common::admin::AdminInfo;
use common::error::AppError;
use futures::{StreamExt, TryStreamExt};
use kernel::state::AppState;
use kernel::storage::{BlobError, BlobStore};
use kernel::token::new_token;

/// Where the admin page sends files.
pub const UPLOAD_PATH: &str = "/api/admin/shares/upload";

/// Room for the multipart framing and the small fields around the file.
pub const FORM_OVERHEAD: u64 = 64 * 1024;

/// Receives a multipart form (`expires_hours`, `note`, then `file`) and streams the file to the
/// blob store — never whole in memory. Answers 201 with the link (shown once), or an error as
/// JSON: 413 over the limit, 400 with field messages. A refused or failed upload leaves no file.
pub async fn upload(
    State(state): State<AppState>,
    admin: Option<Extension<AdminInfo>>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    // The gate put the admin here; without one (defence in depth) nothing is read.
    let Some(Extension(admin)) = admin else {
        return error_response(AppError::Unauthorized);
    };
    let actor = kernel::http::audit_actor(&state, &headers, Some(peer.ip()), &admin);
    // Field errors in the admin's language.
    match common::i18n::with_lang(common::i18n::lang_of_headers(&headers), receive(&state, &admin, &actor, &headers, multipart)).await {
        Ok(share) => (StatusCode::CREATED, Json(share)).into_response(),
        Err(e) => error_response(e),
    }
}

pub(crate) fn error_response(e: AppError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(e)).into_response()
}

pub(crate) fn field_error(field: &str, message: impl Into<String>) -> AppError {
    AppError::Invalid([(field.to_string(), message.into())].into())
}

/// A stored file that is deleted again unless the share row was committed — also when the
/// request is abandoned half-way (the future is dropped).
pub(crate) struct StoredFile {
    pub(crate) store: Arc<dyn BlobStore>,
    pub(crate) background: kernel::state::Background,
    pub(crate) key: String,
    /// Its share row may exist: from the moment the commit is sent (a request dropped while
    /// the commit is in flight may still have committed), the file is never deleted here; if
    /// the commit did not happen, the reconcile step removes the orphan after a day.
    pub(crate) committed: bool,
}

impl Drop for StoredFile {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let (store, key) = (self.store.clone(), std::mem::take(&mut self.key));
        self.background.spawn("upload-cleanup", async move { store.delete(&key).await });
    }
}

async fn receive(
    state: &AppState,
    admin: &AdminInfo,
    actor: &kernel::audit::Actor,
    headers: &HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<NewShare, AppError> {
    let settings = *state.domain::<shares::ShareSettings>();
    let limit = settings.max_bytes;
    // Refuse a declared oversize body before reading a byte of it.
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit + FORM_OVERHEAD) {
        return Err(AppError::TooLarge { limit_bytes: limit });
    }
    let mut multipart = multipart.map_err(|e| AppError::BadRequest(format!("send the form as multipart/form-data ({})", e.body_text())))?;
    let form = read_form(state, &settings, &mut multipart).await?;
    let expires_hours = form.expires_hours.ok_or_else(|| field_error("expires_hours", shares::expiry_message(settings.max_expiry_hours)))?;
    let Some(file) = form.file else {
        return Err(field_error("file", t(SharesT::ChooseFile)));
    };
    create_share(state, admin, actor, file, form.note, expires_hours, form.max_downloads.unwrap_or(1)).await
}

/// The upload form's fields as they came (any of them may be missing).
struct ShareForm {
    expires_hours: Option<u32>,
    note: Option<String>,
    max_downloads: Option<i32>,
    file: Option<ReceivedFile>,
}

/// The form's file, stored; its share row not written yet.
pub(crate) struct ReceivedFile {
    pub(crate) stored: StoredFile,
    pub(crate) file_name: String,
    pub(crate) content_type: String,
    pub(crate) size: u64,
}

async fn read_form(state: &AppState, settings: &shares::ShareSettings, multipart: &mut Multipart) -> Result<ShareForm, AppError> {
    let limit = settings.max_bytes;
    // Small fields are checked as they arrive, so a bad expiry sent first fails before any file
    // is stored.
    let mut form = ShareForm { expires_hours: None, note: None, max_downloads: None, file: None };
    while let Some(field) = multipart.next_field().await.map_err(|e| multipart_error(e, limit))? {
        match field.name().unwrap_or("") {
            "expires_hours" => {
                let raw = small_text(field, 32, limit).await?;
                form.expires_hours = Some(shares::parse_expiry_hours(&raw, settings.max_expiry_hours).map_err(|m| field_error("expires_hours", m))?);
            }
            "note" => {
                let raw = small_text(field, 4 * shares::NOTE_MAX_CHARS, limit).await?;
                form.note = shares::parse_note(&raw).map_err(|m| field_error("note", m))?;
            }
            "max_downloads" => {
                let raw = small_text(field, 32, limit).await?;
                form.max_downloads = Some(shares::parse_max_downloads(&raw).map_err(|m| field_error("max_downloads", m))?);
            }
            "file" => {
                if form.file.is_some() {
                    return Err(field_error("file", t(SharesT::OneFileAtATime)));
                }
                form.file = Some(store_file(state, field, limit).await?);
            }
            // Other fields are skipped (read through, not kept).
            _ => {}
        }
    }
    Ok(form)
}

/// Streams the file field to the blob store under a new key, at most `limit` bytes. The stored
/// file is deleted again unless its share row is committed.
pub(crate) async fn store_file(state: &AppState, field: Field<'_>, limit: u64) -> Result<ReceivedFile, AppError> {
    let file_name = shares::clean_file_name(field.file_name().unwrap_or(""));
    let content_type = field.content_type().unwrap_or("application/octet-stream").to_string();
    let key = kernel::storage::new_key(kernel::storage::Namespace::Shares);
    let body = field.map_err(move |e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => BlobError::TooLarge { limit },
        _ => BlobError::Source(e.body_text()),
    });
    let stored = StoredFile { store: state.blobs.clone(), background: state.background.clone(), key, committed: false };
    let size = match state.blobs.put_stream(&stored.key, body.boxed(), limit).await {
        Ok(stored) => stored.size,
        Err(BlobError::TooLarge { .. }) => return Err(AppError::TooLarge { limit_bytes: limit }),
        Err(BlobError::Source(msg)) => return Err(AppError::BadRequest(format!("the upload was interrupted or malformed ({msg}); try again"))),
        Err(BlobError::MarkerMissing) => {
            tracing::warn!("share upload refused: the storage marker is missing (the storage may not be the real one)");
            if let Err(e) = crate::gc::alert_marker_missing(&state.pool).await {
                tracing::warn!(error = %e, "could not raise the storage marker alert");
            }
            return Err(AppError::StorageUnavailable);
        }
        Err(BlobError::Full) => {
            tracing::warn!("upload refused: the storage is full");
            if let Err(e) = kernel::alerts::raise(&state.pool, common::alerts::AlertKind::StorageFull, "", &common::alerts::AlertMessage::StorageFull).await {
                tracing::warn!(error = %e, "could not raise the storage-full alert");
            }
            return Err(AppError::StorageFull);
        }
        Err(e) => return Err(AppError::internal("share upload: storing the file failed", e)),
    };
    Ok(ReceivedFile { stored, file_name, content_type, size })
}

/// Writes the share's row and its audit event in one transaction (the stored file is kept from
/// then on), and answers with the link.
async fn create_share(
    state: &AppState,
    admin: &AdminInfo,
    actor: &kernel::audit::Actor,
    file: ReceivedFile,
    note: Option<String>,
    expires_hours: u32,
    max_downloads: i32,
) -> Result<NewShare, AppError> {
    let ReceivedFile { mut stored, file_name, content_type, size } = file;
    let (token, token_hash) = new_token();
    let row = shares::db::NewShareRow {
        token_hash: &token_hash,
        blob_key: &stored.key,
        file_name: &file_name,
        size_bytes: size as i64,
        content_type: &content_type,
        note: note.as_deref(),
        created_by: admin.id,
        expires_hours,
        max_downloads,
    };
    // Crash tests stop here: the file is stored, its row not yet committed (an orphan for the GC).
    fail::fail_point!("share-upload-after-store");
    let db = |e: sqlx::Error| AppError::internal("share upload: saving the share failed", e);
    let mut tx = state.pool.begin().await.map_err(db)?;
    let (id, expires_at) = shares::db::insert(&mut tx, &row).await.map_err(db)?;
    kernel::audit::record(&mut tx, actor, kernel::audit::AuditKind::ShareCreate, Some(("share", &id.to_string())), None).await.map_err(db)?;
    // Set before the commit is sent: a future dropped during the commit must not delete the file
    // of a share that may have committed.
    stored.committed = true;
    tx.commit().await.map_err(db)?;
    state.live.touch(kernel::live::Topic::Share, Some(id.to_string()));
    tracing::info!(share.id = id, size_bytes = size, "share created");
    let url = format!("{}/s/{token}", state.config.public_url);
    let qr_svg = kernel::qr::svg(&url);
    Ok(NewShare { id, url, qr_svg, file_name, size_bytes: size as i64, expires_at })
}

/// Reads a small text field, refusing more than `max` bytes.
pub(crate) async fn small_text(mut field: Field<'_>, max: usize, limit: u64) -> Result<String, AppError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|e| multipart_error(e, limit))? {
        buf.extend_from_slice(&chunk);
        if buf.len() > max {
            return Err(AppError::BadRequest(format!("the form field {:?} is too long", field.name().unwrap_or(""))));
        }
    }
    String::from_utf8(buf).map_err(|_| AppError::BadRequest("form fields must be UTF-8 text".into()))
}

pub(crate) fn multipart_error(e: MultipartError, limit: u64) -> AppError {
    match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::TooLarge { limit_bytes: limit },
        _ => AppError::BadRequest(format!("the upload was interrupted or malformed ({}); try again", e.body_text())),
    }
}
