//! The copy of a data request, behind the admin gate: `GET /admin/requests/{id}/copy.json` (the
//! cover sheet and every kind's items, one streamed document), `…/cover.txt` (the cover sheet
//! alone, to send with it) and `…/copy/{kind}.csv` (one kind, for a spreadsheet). Each download
//! is an audit event (the request's id and the address's keyed hash), written before the first
//! byte: a copy whose record cannot be written is not sent.

use kernel::audit::Actor;
use kernel::http::prelude::*;
use kernel::personal::Address;

use crate::{db, RequestView};

/// This domain's routes.
pub fn routes() -> Routes {
    Routes::new()
        .admin(Role::Admin, "/admin/requests/{id}/copy.json", get(copy_json))
        .admin(Role::Admin, "/admin/requests/{id}/cover.txt", get(cover_txt))
        .admin(Role::Admin, "/admin/requests/{id}/copy/{file}", get(copy_csv))
}

fn plain(status: StatusCode, text: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], text.to_string()).into_response()
}

/// The request and its person, or the answer that says why there is none.
async fn request_of(state: &AppState, id: &str) -> Result<(RequestView, Address), Response> {
    let not_found = || plain(StatusCode::NOT_FOUND, "There is no data request with this number. Open Data requests to find it.");
    let id: i64 = id.parse().map_err(|_| not_found())?;
    let request = match db::get(&state.pool, id).await {
        Ok(Some(r)) => r,
        Ok(None) => return Err(not_found()),
        Err(e) => {
            tracing::warn!(error = %e, "data request copy: the request could not be read");
            return Err(plain(StatusCode::SERVICE_UNAVAILABLE, "The database is busy. Try again in a few seconds."));
        }
    };
    let Some(email) = request.email.clone() else {
        return Err(plain(StatusCode::GONE, "This request was closed long ago and its address has been removed: there is nothing to copy."));
    };
    let who = Address::new(state, &email);
    Ok((request, who))
}

/// Records the download; `Err` (nothing sent) when the record cannot be written.
async fn record(state: &AppState, actor: &Actor, r: &RequestView, who: &Address, what: &str) -> Result<(), Response> {
    db::record_step(&state.pool, actor, kernel::audit::AuditKind::RequestExport, r.id, r.kind, &who.hash, what).await.map_err(|e| {
        tracing::warn!(error = %e, "data request copy refused: its audit record could not be written");
        plain(StatusCode::SERVICE_UNAVAILABLE, "The copy could not be recorded, so it was not sent. Try again in a few seconds.")
    })
}

fn attachment(content_type: &str, filename: String, body: Body) -> Response {
    (kernel::http::attachment(content_type, &filename), body).into_response()
}

/// The request, its person and its cover sheet (in the admin's language), once the download
/// `what` is recorded; or the answer that says why not.
async fn prepared(state: &AppState, headers: &HeaderMap, actor: &Actor, id: &str, what: &str) -> Result<(RequestView, Address, crate::copy::Cover), Response> {
    let (r, who) = request_of(state, id).await?;
    let cover = async {
        let found = crate::personal::find_all(state, &who, r.id).await?;
        crate::copy::cover(state, &r, &who, &found, common::i18n::lang_of_headers(headers)).await
    };
    let cover = cover.await.map_err(|e| {
        tracing::warn!(error = %e, "data request copy: the search failed");
        plain(StatusCode::SERVICE_UNAVAILABLE, "The database is busy. Try again in a few seconds.")
    })?;
    record(state, actor, &r, &who, what).await?;
    Ok((r, who, cover))
}

async fn copy_json(State(state): State<AppState>, AdminCall { actor, .. }: FreshAdminCall, headers: HeaderMap, Path(id): Path<String>) -> Response {
    match prepared(&state, &headers, &actor, &id, "copy as JSON").await {
        Ok((r, who, cover)) => {
            let stream = crate::copy::json_stream(state.clone(), who, r.id, cover.value);
            attachment("application/json", format!("data-request-{}.json", r.id), Body::from_stream(stream))
        }
        Err(answer) => answer,
    }
}

async fn cover_txt(State(state): State<AppState>, AdminCall { actor, .. }: FreshAdminCall, headers: HeaderMap, Path(id): Path<String>) -> Response {
    match prepared(&state, &headers, &actor, &id, "cover sheet").await {
        Ok((r, _, cover)) => attachment("text/plain; charset=utf-8", format!("data-request-{}-cover.txt", r.id), Body::from(cover.text)),
        Err(answer) => answer,
    }
}

async fn copy_csv(State(state): State<AppState>, AdminCall { actor, .. }: FreshAdminCall, Path((id, file)): Path<(String, String)>) -> Response {
    let (r, who) = match request_of(&state, &id).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let sources = crate::personal::sources(&state);
    let Some(source) = file.strip_suffix(".csv").and_then(|kind| sources.get(kind)).cloned() else {
        return plain(StatusCode::NOT_FOUND, "There is no such kind of data. The request's page links each one.");
    };
    if let Err(answer) = record(&state, &actor, &r, &who, &format!("copy of {} as CSV", source.kind())).await {
        return answer;
    }
    let stream = crate::copy::csv_stream(state.clone(), who, r.id, source.clone());
    attachment("text/csv; charset=utf-8", format!("data-request-{}-{}.csv", r.id, source.kind()), Body::from_stream(stream))
}
