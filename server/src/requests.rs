//! The copy of a data request, behind the admin gate: `GET /admin/requests/{id}/copy.json` (the
//! cover sheet and every kind's items, one streamed document), `…/cover.txt` (the cover sheet
//! alone, to send with it) and `…/copy/{kind}.csv` (one kind, for a spreadsheet). Each download
//! is an audit event (the request's id and the address's keyed hash), written before the first
//! byte: a copy whose record cannot be written is not sent.

use app::auth::AdminInfo;
use app::kernel::personal::Address;
use app::requests::{db, RequestView};
use app::state::AppState;
use axum::{
    body::Body,
    extract::{ConnectInfo, Path, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

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
async fn record(
    state: &AppState,
    headers: &HeaderMap,
    peer: std::net::SocketAddr,
    admin: &AdminInfo,
    r: &RequestView,
    who: &Address,
    what: &str,
) -> Result<(), Response> {
    let actor = crate::security::audit_actor(state, headers, peer, admin);
    db::record_step(&state.pool, &actor, app::audit::AuditKind::RequestExport, r.id, r.kind, &who.hash, what).await.map_err(|e| {
        tracing::warn!(error = %e, "data request copy refused: its audit record could not be written");
        plain(StatusCode::SERVICE_UNAVAILABLE, "The copy could not be recorded, so it was not sent. Try again in a few seconds.")
    })
}

fn attachment(content_type: &str, filename: String, body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{filename}\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response()
}

/// The request, its person and its cover sheet (in the admin's language), once the download
/// `what` is recorded; or the answer that says why not.
async fn prepared(
    state: &AppState,
    headers: &HeaderMap,
    peer: std::net::SocketAddr,
    admin: &AdminInfo,
    id: &str,
    what: &str,
) -> Result<(RequestView, Address, app::requests::copy::Cover), Response> {
    let (r, who) = request_of(state, id).await?;
    let cover = async {
        let found = app::requests::personal::find_all(state, &who, r.id).await?;
        app::requests::copy::cover(state, &r, &who, &found, app::i18n::lang_of_headers(headers)).await
    };
    let cover = cover.await.map_err(|e| {
        tracing::warn!(error = %e, "data request copy: the search failed");
        plain(StatusCode::SERVICE_UNAVAILABLE, "The database is busy. Try again in a few seconds.")
    })?;
    record(state, headers, peer, admin, &r, &who, what).await?;
    Ok((r, who, cover))
}

pub async fn copy_json(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    match prepared(&state, &headers, peer, &admin, &id, "copy as JSON").await {
        Ok((r, who, cover)) => {
            let stream = app::requests::copy::json_stream(state.clone(), who, r.id, cover.value);
            attachment("application/json", format!("data-request-{}.json", r.id), Body::from_stream(stream))
        }
        Err(answer) => answer,
    }
}

pub async fn cover_txt(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    match prepared(&state, &headers, peer, &admin, &id, "cover sheet").await {
        Ok((r, _, cover)) => attachment("text/plain; charset=utf-8", format!("data-request-{}-cover.txt", r.id), Body::from(cover.text)),
        Err(answer) => answer,
    }
}

pub async fn copy_csv(
    State(state): State<AppState>,
    crate::security::Admin(admin): crate::security::Admin,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Path((id, file)): Path<(String, String)>,
) -> Response {
    let (r, who) = match request_of(&state, &id).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    let sources = app::requests::personal::sources(&state);
    let Some(source) = file.strip_suffix(".csv").and_then(|kind| sources.get(kind)).cloned() else {
        return plain(StatusCode::NOT_FOUND, "There is no such kind of data. The request's page links each one.");
    };
    if let Err(answer) = record(&state, &headers, peer, &admin, &r, &who, &format!("copy of {} as CSV", source.kind())).await {
        return answer;
    }
    let stream = app::requests::copy::csv_stream(state.clone(), who, r.id, source.clone());
    attachment("text/csv; charset=utf-8", format!("data-request-{}-{}.csv", r.id, source.kind()), Body::from_stream(stream))
}

/// What `ebb requests` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliAction {
    Find,
    Export,
    Erase { yes: bool },
}

/// `ebb requests find|export|erase EMAIL`: the operator's way to the same flow, with the same
/// rules and records (a copy or an erasure is recorded as a request, received today; every step
/// is an audit event with the address's keyed hash). `out` receives the report (or the copy).
pub async fn cli(state: &AppState, action: CliAction, email: &str, out: &mut (dyn std::io::Write + Send)) -> Result<(), String> {
    let email = app::common::email::normalise(email).map_err(|e| format!("{email:?} is not an address Ebb can look up: {e}"))?;
    let who = Address::new(state, &email);
    let db = |e: sqlx::Error| format!("database error: {e}");
    let actor = app::kernel::audit::Actor::system();
    let w = |e: std::io::Error| format!("cannot write the output ({e})");
    match action {
        CliAction::Find | CliAction::Erase { yes: false } => {
            let found = app::requests::personal::find_all(state, &who, 0).await.map_err(db)?;
            let (kind, verb) = if action == CliAction::Find {
                (app::audit::AuditKind::RequestFind, "found")
            } else {
                (app::audit::AuditKind::RequestErasePreview, "would erase")
            };
            let n: i64 = if action == CliAction::Find { found.iter().map(|f| f.count).sum() } else { found.iter().map(|f| f.erasable()).sum() };
            let mut conn = state.pool.acquire().await.map_err(db)?;
            let detail = format!("address {}; via the command line; {verb} {n}", who.hash);
            app::kernel::audit::record(&mut conn, &actor, kind, None, Some(&detail)).await.map_err(db)?;
            write_found(out, &found).map_err(w)?;
            if action != CliAction::Find {
                writeln!(out, "dry run: {n} items would be erased; nothing was changed. Run again with --yes to record the request and erase them.")
                    .map_err(w)?;
            }
            Ok(())
        }
        CliAction::Export => {
            let id = record_cli_request(state, &actor, app::requests::RequestKind::Copy, &email, &who).await?;
            let r = db::get(&state.pool, id).await.map_err(db)?.ok_or("the request vanished")?;
            let found = app::requests::personal::find_all(state, &who, id).await.map_err(db)?;
            let cover = app::requests::copy::cover(state, &r, &who, &found, app::i18n::Lang::En).await.map_err(db)?;
            db::record_step(&state.pool, &actor, app::audit::AuditKind::RequestExport, id, r.kind, &who.hash, "copy as JSON, via the command line")
                .await
                .map_err(db)?;
            let mut stream = std::pin::pin!(app::requests::copy::json_stream(state.clone(), who, id, cover.value));
            while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
                out.write_all(&chunk.map_err(w)?).map_err(w)?;
            }
            db::close(&state.pool, &actor, id).await.map_err(|e| e.to_string())?;
            Ok(())
        }
        CliAction::Erase { yes: true } => erase_cli(state, &actor, &email, &who, out).await,
    }
}

async fn record_cli_request(
    state: &AppState,
    actor: &app::kernel::audit::Actor,
    kind: app::requests::RequestKind,
    email: &str,
    who: &Address,
) -> Result<i64, String> {
    let new = app::requests::NewRequest { kind, email: email.to_string(), received_on: None, note: "recorded with the command line".into() };
    db::record(&state.pool, actor, &new, &who.hash, *state.domain::<app::requests::RequestSettings>()).await.map_err(|e| format!("database error: {e}"))
}

async fn erase_cli(
    state: &AppState,
    actor: &app::kernel::audit::Actor,
    email: &str,
    who: &Address,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), String> {
    let w = |e: std::io::Error| format!("cannot write the output ({e})");
    let id = record_cli_request(state, actor, app::requests::RequestKind::Erasure, email, who).await?;
    let found = app::requests::personal::find_all(state, who, id).await.map_err(|e| e.to_string())?;
    let erasable: i64 = found.iter().map(|f| f.erasable()).sum();
    db::start_erase(&state.pool, actor, id, &format!("to erase {erasable}")).await.map_err(|e| e.to_string())?;
    writeln!(out, "request #{id} recorded; erasing {erasable} items").map_err(w)?;
    let job = state.jobs().get(app::requests::erase::JOB).cloned().ok_or("the requests job is not in the registry")?;
    for _ in 0..1000 {
        let r = db::get(&state.pool, id).await.map_err(|e| e.to_string())?.ok_or("the request vanished")?;
        if r.status == app::requests::RequestStatus::Done {
            let after = app::requests::personal::find_all(state, who, id).await.map_err(|e| e.to_string())?;
            write_found(out, &after).map_err(w)?;
            writeln!(out, "request #{id} closed: erased {:?}, kept {:?}", r.erased, r.kept).map_err(w)?;
            return Ok(());
        }
        app::jobs::run_job(state, &job, app::jobs::Trigger::Cli, true).await.map_err(|e| e.to_string())?;
    }
    Err(format!("request #{id} is still being erased; the job goes on with the next runs"))
}

fn write_found(out: &mut (dyn std::io::Write + Send), found: &[app::common::personal::Found]) -> std::io::Result<()> {
    writeln!(out, "{:<16} {:>8} {:>8}  oldest / newest", "kind", "items", "stays")?;
    for f in found {
        let at = |t: Option<time::OffsetDateTime>| t.map(app::time::format_time).unwrap_or_else(|| "-".into());
        writeln!(out, "{:<16} {:>8} {:>8}  {} / {}", f.kind, f.count, f.kept, at(f.oldest), at(f.newest))?;
        for why in &f.kept_why {
            writeln!(out, "{:<16} stays: {why}", "")?;
        }
    }
    Ok(())
}
