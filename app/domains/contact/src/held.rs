//! The `held` flags of inquiries and suspected spam, which the holds domain sets and recomputes
//! through [`kernel::holds::HeldFlags`] in a hold's own transaction. A flag is what prune and
//! erasure read under the row's lock; the holds themselves are read from `holds_in_force`.

use futures::future::BoxFuture;
use kernel::holds::{HeldFlags, HoldKey, HoldTarget};
use sqlx::PgConnection;

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

    fn describe<'a>(&'a self, conn: &'a mut PgConnection, key: &'a HoldKey) -> BoxFuture<'a, Result<(Option<String>, i64), sqlx::Error>> {
        Box::pin(async move {
            match key {
                HoldKey::Inquiry(id) => {
                    let name = sqlx::query_scalar!("select name from inquiries where id = $1", id).fetch_optional(conn).await?;
                    Ok((name.clone(), i64::from(name.is_some())))
                }
                HoldKey::Sender(email) => {
                    let n = sqlx::query_scalar!(r#"select count(*) as "n!" from inquiries where lower(email collate ucs_basic) = $1"#, email)
                        .fetch_one(conn)
                        .await?;
                    Ok((None, n))
                }
                HoldKey::Share(_) => Ok((None, 0)),
            }
        })
    }
}
