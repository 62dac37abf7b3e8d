//! `ebb requests find|export|erase EMAIL`: the operator's way to a data request's flow (the
//! admin's routes and pages are the requests domain's).

use app::kernel::personal::Address;
use app::requests::db;
use app::state::AppState;

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
