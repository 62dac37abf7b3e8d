//! The `held` flag of shares, which the holds domain sets and recomputes through
//! [`kernel::holds::HeldFlags`] in a hold's own transaction. The share GC reads the flag under
//! the row's lock; the holds themselves are read from `holds_in_force`.

use std::collections::HashMap;

use futures::future::BoxFuture;
use kernel::holds::{Described, HeldFlags, HoldKey, HoldTarget};
use sqlx::PgConnection;

/// Shares' side of legal holds (the composition root puts it into the state).
pub struct Flags;

impl HeldFlags for Flags {
    fn key<'a>(&'a self, _conn: &'a mut PgConnection, target: HoldTarget) -> BoxFuture<'a, Result<Option<HoldKey>, sqlx::Error>> {
        Box::pin(async move {
            Ok(match target {
                HoldTarget::Share(id) => Some(HoldKey::Share(id)),
                HoldTarget::Inquiry(_) | HoldTarget::Sender(_) => None,
            })
        })
    }

    /// Only an active, unexpired share: such a share is not eligible for the GC, so no GC run can
    /// be deleting its file at this moment.
    fn hold<'a>(&'a self, conn: &'a mut PgConnection, key: &'a HoldKey) -> BoxFuture<'a, Result<bool, sqlx::Error>> {
        Box::pin(async move {
            let HoldKey::Share(id) = key else { return Ok(false) };
            let r =
                sqlx::query!("update shares set held = true where id = $1 and status = 'active' and expires_at > clock_timestamp()", id).execute(conn).await?;
            Ok(r.rows_affected() == 1)
        })
    }

    fn refresh<'a>(&'a self, conn: &'a mut PgConnection, key: Option<&'a HoldKey>) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async move {
            let r = match key {
                Some(HoldKey::Share(id)) => {
                    sqlx::query!(
                        "update shares s set held = not held
                         where id = $1 and held <> exists (select 1 from holds_in_force h where h.share_id = s.id)",
                        id
                    )
                    .execute(conn)
                    .await?
                }
                Some(_) => return Ok(0),
                None => {
                    sqlx::query!("update shares s set held = false where held and not exists (select 1 from holds_in_force h where h.share_id = s.id)")
                        .execute(conn)
                        .await?
                }
            };
            Ok(r.rows_affected())
        })
    }

    fn describe<'a>(&'a self, conn: &'a mut PgConnection, keys: &'a [HoldKey]) -> BoxFuture<'a, Result<Vec<Described>, sqlx::Error>> {
        Box::pin(async move {
            let ids: Vec<i64> = keys.iter().filter_map(|k| if let HoldKey::Share(id) = k { Some(*id) } else { None }).collect();
            let found: HashMap<i64, Described> = sqlx::query!(r#"select id, file_name, status <> 'purged' as "live!" from shares where id = any($1)"#, &ids)
                .fetch_all(conn)
                .await?
                .into_iter()
                .map(|r| (r.id, (Some(r.file_name), i64::from(r.live))))
                .collect();
            Ok(keys.iter().map(|k| if let HoldKey::Share(id) = k { found.get(id).cloned().unwrap_or((None, 0)) } else { (None, 0) }).collect())
        })
    }
}
