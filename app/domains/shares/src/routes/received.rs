//! Routes of file requests that stream bodies: the uploader's `POST /r/{token}` (public: the
//! token is the authorisation) and the admin's download of a received file
//! (`GET /admin/shares/{id}/file`, behind the gate).

use crate::{self as shares, requests, texts::SharesT, FileReceived, FileRequestState};
use axum::{
    body::Body,
    extract::{ConnectInfo, Extension, FromRequest, Multipart, Path, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode, Uri},
    response::{IntoResponse, Response},
    Json,
};
use common::admin::AdminInfo;
use common::error::AppError;
use common::i18n::t;
use kernel::state::AppState;
use kernel::storage::BlobStore;
use kernel::token::well_formed_hash;

use super::deliver::{render_get, unavailable};
use super::uploads::{error_response, field_error, multipart_error, store_file, ReceivedFile, FORM_OVERHEAD};

/// Why an upload through a file request did not store a file (each also has a page).
enum Refusal {
    NotFound,
    Used,
    Expired,
    /// Another upload to the same request is in flight.
    Busy,
    App(AppError),
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::NotFound => StatusCode::NOT_FOUND,
            Refusal::Used | Refusal::Busy => StatusCode::CONFLICT,
            Refusal::Expired => StatusCode::GONE,
            Refusal::App(e) => StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST),
        }
    }

    /// The `?error=` the page shows it with (no JavaScript), or `None`: the page's own state says it.
    fn page_code(&self) -> Option<&'static str> {
        match self {
            Refusal::NotFound | Refusal::Used | Refusal::Expired => None,
            Refusal::Busy => Some("busy"),
            Refusal::App(AppError::TooLarge { .. }) => Some("too_large"),
            Refusal::App(AppError::Invalid(_)) => Some("no_file"),
            Refusal::App(AppError::StorageUnavailable) | Refusal::App(AppError::Internal) => Some("unavailable"),
            Refusal::App(_) => Some("interrupted"),
        }
    }

    fn into_app_error(self) -> AppError {
        match self {
            Refusal::NotFound => AppError::NotFound,
            Refusal::Used => AppError::Conflict(t(SharesT::RequestUsedText).into()),
            Refusal::Busy => AppError::Conflict(t(SharesT::UploadBusy).into()),
            Refusal::Expired => AppError::Gone,
            Refusal::App(e) => e,
        }
    }
}

/// `POST /r/{token}`: a multipart form with one `file`, streamed to the blob store (at most the
/// request's size limit, never whole in memory). One upload at a time: an upload takes the
/// request's lease before it reads a byte of the body (a second one meanwhile gets 409 at once),
/// the whole body is capped at the request's limit plus the form's overhead, and the upload stops
/// reading when the request is revoked or expires. The upload consumes the request (one
/// conditional UPDATE, in the transaction of the received file's row). JSON clients get 201 with
/// the file's name and size; browsers without JavaScript get the page (303 to it on success).
pub async fn upload(State(state): State<AppState>, Path(token): Path<String>, ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>, req: Request) -> Response {
    let headers = req.headers().clone();
    let lang = common::i18n::lang_of_headers(&headers);
    let wants_json = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("application/json"));
    let client =
        kernel::state::client_ip(&headers, Some(peer.ip()), state.config.trusted_proxy_hops).map(|ip| ip.to_string()).unwrap_or_else(|| "unknown".into());
    let actor = kernel::audit::Actor { admin: None, client_hash: Some(state.keyring.mac(kernel::keyring::Purpose::Client, &client)) };
    let result = common::i18n::with_lang(lang, receive(&state, &token, &actor, req)).await;
    match (result, wants_json) {
        (Ok(received), true) => (StatusCode::CREATED, Json(received)).into_response(),
        (Ok(_), false) => (StatusCode::SEE_OTHER, [(header::LOCATION, format!("/r/{token}?sent=1"))]).into_response(),
        (Err(refusal), true) => {
            let status = refusal.status();
            let mut res = common::i18n::with_lang(lang, async { error_response(refusal.into_app_error()) }).await;
            *res.status_mut() = status;
            res
        }
        (Err(refusal), false) => {
            let status = refusal.status();
            let query = refusal.page_code().map(|c| format!("?error={c}")).unwrap_or_default();
            let Ok(uri) = format!("/r/{token}{query}").parse::<Uri>() else {
                return StatusCode::NOT_FOUND.into_response();
            };
            let mut req = axum::http::Request::get(uri).body(()).expect("a GET request");
            for name in [header::ACCEPT_LANGUAGE, header::COOKIE] {
                if let Some(v) = headers.get(&name) {
                    req.headers_mut().insert(name, v.clone());
                }
            }
            let (parts, ()) = req.into_parts();
            let mut res = render_get(&state, parts).await;
            *res.status_mut() = status;
            res
        }
    }
}

async fn receive(state: &AppState, token: &str, actor: &kernel::audit::Actor, req: Request) -> Result<FileReceived, Refusal> {
    let hash = well_formed_hash(token).ok_or(Refusal::NotFound)?;
    let request = requests::find_by_token_hash(&state.pool, &hash)
        .await
        .map_err(|e| Refusal::App(AppError::internal("file request lookup", e)))?
        .ok_or(Refusal::NotFound)?;
    match request.state() {
        FileRequestState::Open => {}
        FileRequestState::Used => return Err(Refusal::Used),
        FileRequestState::Expired => return Err(Refusal::Expired),
    }
    let limit = request.max_bytes.max(0) as u64;
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit + FORM_OVERHEAD) {
        return Err(Refusal::App(AppError::TooLarge { limit_bytes: limit }));
    }
    let lease = Lease::take(state, request.id).await?;
    // Given back before the answer, whatever the outcome: the sender's next try finds it free.
    let result = receive_leased(state, &request, &hash, limit, actor, &lease, req).await;
    lease.release().await;
    result
}

/// [`receive`] while holding the request's upload lease.
async fn receive_leased(
    state: &AppState,
    request: &requests::FileRequestRecord,
    hash: &[u8],
    limit: u64,
    actor: &kernel::audit::Actor,
    lease: &Lease,
    req: Request,
) -> Result<FileReceived, Refusal> {
    // The whole body, every field included, within the request's own limit.
    let req = req.map(|body| Body::new(http_body_util::Limited::new(body, (limit + FORM_OVERHEAD) as usize)));
    let multipart = Multipart::from_request(req, state).await;
    let mut multipart = multipart.map_err(|e| Refusal::App(AppError::BadRequest(format!("send the form as multipart/form-data ({})", e.body_text()))))?;
    let mut file: Option<ReceivedFile> = None;
    let read = async {
        while let Some(field) = multipart.next_field().await.map_err(|e| Refusal::App(multipart_error(e, limit)))? {
            if field.name() != Some("file") {
                continue;
            }
            if file.is_some() {
                return Err(Refusal::App(field_error("file", t(SharesT::OneFileAtATime))));
            }
            file = Some(store_file(state, field, limit).await.map_err(Refusal::App)?);
        }
        Ok(())
    };
    tokio::select! {
        done = read => done?,
        // Revoked or expired meanwhile: nothing more is read (a partly stored file is deleted by
        // its guard).
        () = lease.lost.cancelled() => return Err(Refusal::Expired),
    }
    let Some(ReceivedFile { mut stored, file_name, content_type, size }) = file else {
        return Err(Refusal::App(field_error("file", t(SharesT::ChooseFile))));
    };
    let keep_hours = state.domain::<shares::ShareSettings>().max_expiry_hours;
    let received = requests::Received { blob_key: &stored.key, file_name: &file_name, size_bytes: size as i64, content_type: &content_type, keep_hours };
    // Crash tests stop here: the file is stored, the request not consumed (an orphan for the GC).
    fail::fail_point!("request-upload-after-store");
    // From here the file is never deleted by the drop guard: a commit in flight may have won.
    stored.committed = true;
    match requests::receive(&state.pool, &*state.blobs, request.id, &received, actor).await {
        Ok(Some(share_id)) => {
            state.live.touch(kernel::live::Topic::Share, Some(share_id.to_string()));
            shares::gc::gc_in_background(state);
            tracing::info!(share.id = share_id, file_request.id = request.id, size_bytes = size, "file received through a file request");
            Ok(FileReceived { file_name, size_bytes: size as i64 })
        }
        Ok(None) => {
            // Another upload won (or the link expired meanwhile): this one leaves nothing stored.
            if let Err(e) = state.blobs.delete(&stored.key).await {
                tracing::warn!(error = %e, "a refused upload's file could not be deleted; reconciliation removes it");
            }
            let now_expired = matches!(requests::find_by_token_hash(&state.pool, hash).await, Ok(Some(r)) if r.state() == FileRequestState::Expired);
            Err(if now_expired { Refusal::Expired } else { Refusal::Used })
        }
        Err(e) => Err(Refusal::App(AppError::internal("file request: saving the received file failed", e))),
    }
}

/// An upload's hold on its file request, renewed while the body streams and given back when the
/// upload ends (a crashed process's lease runs out after [`requests::UPLOAD_LEASE`]).
struct Lease {
    state: AppState,
    id: i64,
    lease: String,
    /// Cancelled when the request is no longer open (or the lease was lost).
    lost: tokio_util::sync::CancellationToken,
    renewer: tokio::task::JoinHandle<()>,
    released: bool,
}

impl Lease {
    async fn take(state: &AppState, id: i64) -> Result<Lease, Refusal> {
        let (lease, _) = kernel::token::new_token();
        match requests::take_lease(&state.pool, id, &lease).await {
            Ok(true) => {}
            Ok(false) => return Err(Refusal::Busy),
            Err(e) => return Err(Refusal::App(AppError::internal("file request lease", e))),
        }
        let lost = tokio_util::sync::CancellationToken::new();
        let renewer = tokio::spawn({
            let (pool, lease, lost) = (state.pool.clone(), lease.clone(), lost.clone());
            async move {
                loop {
                    tokio::time::sleep(requests::UPLOAD_LEASE / 3).await;
                    match requests::renew_lease(&pool, id, &lease).await {
                        Ok(true) => {}
                        Ok(false) => return lost.cancel(),
                        // A database hiccup: the next renewal tries again (the lease lasts 3 periods).
                        Err(e) => tracing::warn!(error = %e, "renewing a file request's upload lease failed"),
                    }
                }
            }
        });
        Ok(Lease { state: state.clone(), id, lease, lost, renewer, released: false })
    }

    async fn release(mut self) {
        self.renewer.abort();
        self.released = true;
        if let Err(e) = requests::release_lease(&self.state.pool, self.id, &self.lease).await {
            tracing::warn!(error = %e, "giving back a file request's upload lease failed; it runs out by itself");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewer.abort();
        if !self.released {
            let (pool, id, lease) = (self.state.pool.clone(), self.id, std::mem::take(&mut self.lease));
            self.state.background.spawn("file-request-lease", async move { requests::release_lease(&pool, id, &lease).await });
        }
    }
}

/// `GET /admin/shares/{id}/file`: the admin downloads a received file (it stays until it
/// expires; the download is recorded). Only received files: an uploaded share is the
/// recipient's, delivered once.
pub async fn admin_file(
    State(state): State<AppState>,
    admin: Option<Extension<AdminInfo>>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let Some(Extension(admin)) = admin else {
        return error_response(AppError::Unauthorized);
    };
    let Ok(id) = id.parse::<i64>() else {
        return error_response(AppError::NotFound);
    };
    let row = match sqlx::query_as::<_, (String, String, i64, String)>(
        "select blob_key, file_name, size_bytes, content_type from shares
         where id = $1 and origin = 'request' and status = 'active' and expires_at > now()",
    )
    .bind(id)
    .fetch_optional(&state.pool)
    .await
    {
        Ok(Some(r)) => r,
        Ok(None) => return error_response(AppError::NotFound),
        Err(e) => return error_response(AppError::internal("received file lookup", e)),
    };
    let (blob_key, file_name, size, content_type) = row;
    let blob = match state.blobs.open(&blob_key).await {
        Ok(Some(b)) if b.len == size as u64 => b,
        Ok(_) => return unavailable("received file", "missing or wrong size"),
        Err(e) => return unavailable("received file", e),
    };
    let actor = kernel::http::audit_actor(&state, &headers, Some(peer.ip()), &admin);
    let recorded = async {
        let mut tx = state.pool.begin().await?;
        kernel::audit::record(&mut tx, &actor, kernel::audit::AuditKind::ShareFetch, Some(("share", &id.to_string())), None).await?;
        tx.commit().await
    };
    if let Err(e) = recorded.await {
        return error_response(AppError::internal("received file: recording the download failed", e));
    }
    let mut res = Response::new(Body::from_stream(blob.body));
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, shares::download::served_content_type(&content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(blob.len));
    h.insert(header::CONTENT_DISPOSITION, shares::download::content_disposition(&file_name));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    res
}
