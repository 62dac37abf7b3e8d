//! Request rows: recording, reading, closing and the start of an erasure. Every change is one
//! conditional statement (two admins closing, or erasing, the same request: one wins, the other
//! is told who did it) and its audit event in the same transaction.

use sqlx::{PgConnection, PgPool, Row};
use time::{Date, OffsetDateTime};

use super::{NewRequest, Overview, RequestKind, RequestSettings, RequestStatus, RequestView};
use kernel::audit::{Actor, AuditKind};

/// Why a request could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("no such request")]
    NotFound,
    /// Already closed (by whom, when).
    #[error("already closed")]
    Closed { by: Option<String>, at: Option<OffsetDateTime> },
    /// The erasure has started (by another admin): it goes on by itself.
    #[error("already being erased")]
    Erasing,
    /// Only an erasure request is erased; an erasure request is closed by its erasure.
    #[error("wrong kind of request")]
    WrongKind,
    /// The request's address was removed after its retention period.
    #[error("the address was forgotten")]
    Forgotten,
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

const COLUMNS: &str = "r.id, r.kind, r.email, r.received_on, r.due_on, r.note, r.status, r.recorded_at, r.closed_at, r.erased, r.kept,
     (select name from admin_names where id = r.recorded_by) as recorded_by,
     (select name from admin_names where id = r.closed_by) as closed_by,
     (r.due_on - current_date)::bigint as days_left";

fn counts(value: serde_json::Value) -> Vec<(String, i64)> {
    match value {
        serde_json::Value::Object(map) => map.into_iter().map(|(k, v)| (k, v.as_i64().unwrap_or(0))).collect(),
        _ => Vec::new(),
    }
}

fn view(row: &sqlx::postgres::PgRow) -> Result<RequestView, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    Ok(RequestView {
        id: row.try_get("id")?,
        kind: RequestKind::parse(&kind).unwrap_or(RequestKind::Access),
        email: row.try_get("email")?,
        received_on: row.try_get("received_on")?,
        due_on: row.try_get("due_on")?,
        note: row.try_get("note")?,
        status: RequestStatus::parse(&status),
        recorded_by: row.try_get("recorded_by")?,
        recorded_at: row.try_get("recorded_at")?,
        closed_at: row.try_get("closed_at")?,
        closed_by: row.try_get("closed_by")?,
        erased: counts(row.try_get("erased")?),
        kept: counts(row.try_get("kept")?),
        days_left: row.try_get("days_left")?,
    })
}

/// The audit event's detail: the request's kind and the address's keyed hash (never the address).
pub fn detail(kind: RequestKind, hash: &str, more: &str) -> String {
    let more = if more.is_empty() { String::new() } else { format!("; {more}") };
    format!("{} request; address {hash}{more}", kind.as_str())
}

/// Records a new request (its deadline from the settings) and its event; its id.
pub async fn record(pool: &PgPool, actor: &Actor, new: &NewRequest, hash: &str, settings: RequestSettings) -> Result<i64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let (id, due): (i64, Date) = sqlx::query_as(
        "insert into data_requests (kind, email, email_hash, received_on, due_on, note, recorded_by)
         select $1, $2, $3, d, d + $4::int, $5, $6 from (select coalesce($7::date, current_date) as d) r
         returning id, due_on",
    )
    .bind(new.kind.as_str())
    .bind(&new.email)
    .bind(hash)
    .bind(settings.deadline_days as i32)
    .bind(&new.note)
    .bind(actor.admin)
    .bind(new.received_on)
    .fetch_one(&mut *tx)
    .await?;
    let detail = detail(new.kind, hash, &format!("due {due}"));
    kernel::audit::record(&mut tx, actor, AuditKind::RequestRecord, Some(("data_request", &id.to_string())), Some(&detail)).await?;
    tx.commit().await?;
    Ok(id)
}

/// After a restore (`ebb doctor --after-restore`): an erasure the deletion journal records whose
/// request the restored database lacks (recorded after the backup) is recorded again — closed,
/// with what the journal says it erased (`erased`: kind → rows) — so the proof that the person
/// was erased is not lost with the backup. The journal keeps ids and the address's keyed hash
/// only: the address stays unknown, and the day the erasure was journaled (`at`) stands for the
/// days it was received and due. Returns whether it was missing (and is now recorded).
pub async fn recreate_erasure(
    conn: &mut PgConnection,
    id: i64,
    hash: &str,
    at: OffsetDateTime,
    erased: &std::collections::BTreeMap<String, i64>,
) -> Result<bool, sqlx::Error> {
    const NOTE: &str = "Recorded again after a restore, from the deletion journal: the address and the days it was received and due are not known (the journal keeps ids and the address's keyed hash only).";
    let erased = serde_json::to_value(erased).unwrap_or_default();
    let inserted = sqlx::query(
        "insert into data_requests (id, kind, email, email_hash, received_on, due_on, note, status, recorded_at, erase_started_at, erased, closed_at, forgotten_at)
         overriding system value
         values ($1, 'erasure', null, $2, ($3::timestamptz at time zone 'UTC')::date, ($3::timestamptz at time zone 'UTC')::date, $4, 'done', $3, $3, $5, now(), now())
         on conflict (id) do nothing",
    )
    .bind(id)
    .bind(hash)
    .bind(at)
    .bind(NOTE)
    .bind(erased)
    .execute(&mut *conn)
    .await?
    .rows_affected()
        == 1;
    if inserted {
        // New requests are numbered after it.
        sqlx::query("select setval(pg_get_serial_sequence('data_requests', 'id'), (select max(id) from data_requests))").execute(&mut *conn).await?;
        let detail = detail(RequestKind::Erasure, hash, "recorded again after a restore (deletion journal)");
        kernel::audit::record(conn, &Actor::system(), AuditKind::RequestRecord, Some(("data_request", &id.to_string())), Some(&detail)).await?;
    }
    Ok(inserted)
}

/// One request.
pub async fn get(pool: &PgPool, id: i64) -> Result<Option<RequestView>, sqlx::Error> {
    let row = sqlx::query(&format!("select {COLUMNS} from data_requests r where r.id = $1")).bind(id).fetch_optional(pool).await?;
    row.as_ref().map(view).transpose()
}

/// The address and its hash of a request (`None`: no such request).
pub async fn address(conn: &mut PgConnection, id: i64) -> Result<Option<(RequestKind, Option<String>, String)>, sqlx::Error> {
    let row: Option<(String, Option<String>, String)> =
        sqlx::query_as("select kind, email, email_hash from data_requests where id = $1").bind(id).fetch_optional(conn).await?;
    Ok(row.map(|(k, e, h)| (RequestKind::parse(&k).unwrap_or(RequestKind::Access), e, h)))
}

/// The open requests by deadline, then the latest closed ones.
pub async fn list(pool: &PgPool, closed: i64) -> Result<Vec<RequestView>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "(select {COLUMNS} from data_requests r where r.status <> 'done' order by r.due_on, r.id)
         union all
         (select {COLUMNS} from data_requests r where r.status = 'done' order by r.closed_at desc, r.id desc limit $1)"
    ))
    .bind(closed)
    .fetch_all(pool)
    .await?;
    rows.iter().map(view).collect()
}

/// Open requests at a glance.
pub async fn overview(pool: &PgPool, settings: RequestSettings) -> Result<Overview, sqlx::Error> {
    let (open, due_soon, overdue, next_due): (i64, i64, i64, Option<Date>) = sqlx::query_as(
        "select count(*), count(*) filter (where due_on - current_date between 0 and $1), count(*) filter (where due_on < current_date), min(due_on)
         from data_requests where status <> 'done'",
    )
    .bind(settings.warn_days as i32)
    .fetch_one(pool)
    .await?;
    Ok(Overview { open, due_soon, overdue, next_due })
}

/// A request's kind, status, who closed it and when, and its address.
type Standing = (String, String, Option<String>, Option<OffsetDateTime>, Option<String>);

/// Why a conditional change found nothing to change: the request as it is now.
async fn refusal(conn: &mut PgConnection, id: i64) -> Result<RequestError, sqlx::Error> {
    let row: Option<Standing> =
        sqlx::query_as("select kind, status, (select name from admin_names where id = closed_by), closed_at, email from data_requests where id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    Ok(match row {
        None => RequestError::NotFound,
        Some((_, status, by, at, _)) if status == "done" => RequestError::Closed { by, at },
        Some((_, status, ..)) if status == "erasing" => RequestError::Erasing,
        Some((_, _, _, _, None)) => RequestError::Forgotten,
        Some(_) => RequestError::WrongKind,
    })
}

/// Closes an access or copy request (answered). One conditional UPDATE: a second admin closing
/// the same request gets [`RequestError::Closed`] with who closed it.
pub async fn close(pool: &PgPool, actor: &Actor, id: i64) -> Result<(), RequestError> {
    let mut tx = pool.begin().await?;
    let row: Option<(String, String)> = sqlx::query_as(
        "update data_requests set status = 'done', closed_at = now(), closed_by = $2
         where id = $1 and status = 'open' and kind <> 'erasure' returning kind, email_hash",
    )
    .bind(id)
    .bind(actor.admin)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((kind, hash)) = row else {
        return Err(refusal(&mut tx, id).await?);
    };
    let kind = RequestKind::parse(&kind).unwrap_or(RequestKind::Access);
    kernel::audit::record(&mut tx, actor, AuditKind::RequestClose, Some(("data_request", &id.to_string())), Some(&detail(kind, &hash, "answered"))).await?;
    tx.commit().await?;
    Ok(())
}

/// Starts the erasure of an erasure request: one conditional UPDATE (`open` → `erasing`), so
/// two admins pressing Erase at once start it once; the other gets [`RequestError::Erasing`].
/// `preview` (what the dry run said would go) goes into the event.
pub async fn start_erase(pool: &PgPool, actor: &Actor, id: i64, preview: &str) -> Result<(), RequestError> {
    let mut tx = pool.begin().await?;
    let hash: Option<String> = sqlx::query_scalar(
        "update data_requests set status = 'erasing', erase_started_at = now(), erase_started_by = $2
         where id = $1 and status = 'open' and kind = 'erasure' and email is not null returning email_hash",
    )
    .bind(id)
    .bind(actor.admin)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(hash) = hash else {
        return Err(refusal(&mut tx, id).await?);
    };
    kernel::audit::record(
        &mut tx,
        actor,
        AuditKind::RequestErase,
        Some(("data_request", &id.to_string())),
        Some(&detail(RequestKind::Erasure, &hash, preview)),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Records a step that changes nothing (a search, a preview, a download) as an audit event.
pub async fn record_step(pool: &PgPool, actor: &Actor, kind: AuditKind, id: i64, request: RequestKind, hash: &str, more: &str) -> Result<(), sqlx::Error> {
    let mut conn = pool.acquire().await?;
    kernel::audit::record(&mut conn, actor, kind, Some(("data_request", &id.to_string())), Some(&detail(request, hash, more))).await
}
