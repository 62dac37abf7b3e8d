//! The `held` flags of inquiries and suspected spam, which the holds domain sets and recomputes
//! through [`kernel::holds::HeldFlags`] in a hold's own transaction. A flag is what prune and
//! erasure read under the row's lock; the holds themselves are read from `holds_in_force`.

use std::collections::HashMap;

use futures::future::BoxFuture;
use kernel::holds::{Described, HeldFlags, HoldKey, HoldTarget};
use sqlx::PgConnection;
use uuid::Uuid;

/// Contact's side of legal holds (the composition root puts it into the state).
pub struct Flags;

/// Whether a hold keeps the inquiry `i`: its own, or one on its sender's address.
const INQUIRY_HELD: &str = "(exists (select 1 from holds_in_force h where h.inquiry_id = i.id)
                            or exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic)))";
/// Whether a hold keeps the suspected spam message `i` (only an address hold can).
const SPAM_HELD: &str = "exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic))";

/// Sets each row's flag in `scope` to what the holds say, on the rows where it differs.
async fn refresh_table(conn: &mut PgConnection, table: &str, held: &str, scope: &str, bind: Option<&HoldKey>) -> Result<u64, sqlx::Error> {
    let sql = format!("update {table} i set held = not held where {scope} and held <> {held}");
    let query = sqlx::query(&sql);
    let query = match bind {
        Some(HoldKey::Inquiry(id)) => query.bind(id),
        Some(HoldKey::Sender(email)) => query.bind(email),
        Some(HoldKey::Share(id)) => query.bind(id),
        None => query,
    };
    Ok(query.execute(conn).await?.rows_affected())
}

impl HeldFlags for Flags {
    fn key<'a>(&'a self, conn: &'a mut PgConnection, target: HoldTarget) -> BoxFuture<'a, Result<Option<HoldKey>, sqlx::Error>> {
        Box::pin(async move {
            Ok(match target {
                HoldTarget::Inquiry(id) => Some(HoldKey::Inquiry(id)),
                HoldTarget::Sender(id) => sqlx::query_scalar!("select lower(email collate ucs_basic) as \"email!\" from inquiries where id = $1", id)
                    .fetch_optional(conn)
                    .await?
                    .map(HoldKey::Sender),
                HoldTarget::Share(_) => None,
            })
        })
    }

    fn hold<'a>(&'a self, conn: &'a mut PgConnection, key: &'a HoldKey) -> BoxFuture<'a, Result<bool, sqlx::Error>> {
        Box::pin(async move {
            match key {
                HoldKey::Inquiry(id) => Ok(sqlx::query!("update inquiries set held = true where id = $1", id).execute(conn).await?.rows_affected() == 1),
                HoldKey::Sender(email) => {
                    sqlx::query!("update inquiries set held = true where lower(email collate ucs_basic) = $1 and not held", email).execute(&mut *conn).await?;
                    sqlx::query!("update suspected_spam set held = true where lower(email collate ucs_basic) = $1 and not held", email)
                        .execute(&mut *conn)
                        .await?;
                    Ok(true)
                }
                HoldKey::Share(_) => Ok(false),
            }
        })
    }

    fn refresh<'a>(&'a self, conn: &'a mut PgConnection, key: Option<&'a HoldKey>) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            Ok(match key {
                Some(HoldKey::Inquiry(_)) => refresh_table(conn, "inquiries", INQUIRY_HELD, "i.id = $1", key).await?,
                Some(HoldKey::Sender(_)) => {
                    let scope = "lower(i.email collate ucs_basic) = $1";
                    refresh_table(&mut *conn, "inquiries", INQUIRY_HELD, scope, key).await?
                        + refresh_table(conn, "suspected_spam", SPAM_HELD, scope, key).await?
                }
                Some(HoldKey::Share(_)) => 0,
                // Only flagged rows: a flag no hold backs any more is cleared.
                None => {
                    refresh_table(&mut *conn, "inquiries", INQUIRY_HELD, "i.held", None).await?
                        + refresh_table(conn, "suspected_spam", SPAM_HELD, "i.held", None).await?
                }
            })
        })
    }

    fn describe<'a>(&'a self, conn: &'a mut PgConnection, keys: &'a [HoldKey]) -> BoxFuture<'a, Result<Vec<Described>, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<Uuid> = keys.iter().filter_map(|k| if let HoldKey::Inquiry(id) = k { Some(*id) } else { None }).collect();
            let senders: Vec<String> = keys.iter().filter_map(|k| if let HoldKey::Sender(e) = k { Some(e.clone()) } else { None }).collect();
            let names: HashMap<Uuid, String> = sqlx::query!("select id, name from inquiries where id = any($1)", &ids)
                .fetch_all(&mut *conn)
                .await?
                .into_iter()
                .map(|r| (r.id, r.name))
                .collect();
            let counts: HashMap<String, i64> = sqlx::query!(
                r#"select lower(email collate ucs_basic) as "sender!", count(*) as "n!" from inquiries
                   where lower(email collate ucs_basic) = any($1) group by 1"#,
                &senders
            )
            .fetch_all(conn)
            .await?
            .into_iter()
            .map(|r| (r.sender, r.n))
            .collect();
            Ok(keys
                .iter()
                .map(|k| match k {
                    HoldKey::Inquiry(id) => names.get(id).map_or((None, 0), |n| (Some(n.clone()), 1)),
                    HoldKey::Sender(email) => (None, counts.get(email).copied().unwrap_or(0)),
                    HoldKey::Share(_) => (None, 0),
                })
                .collect())
        })
    }
}
