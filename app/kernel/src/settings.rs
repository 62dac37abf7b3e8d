//! Rows of the `settings` table: those written once and then only read (secrets, ids), and the
//! admins' settings (read and stored by the domain they belong to).

/// The value of settings row `key`, inserting `candidate` when there is none: the first writer
/// wins, so every instance ends up with the same value.
pub async fn get_or_insert(pool: &sqlx::PgPool, key: &str, candidate: &str) -> Result<String, sqlx::Error> {
    sqlx::query!("insert into settings (key, value) values ($1, $2) on conflict (key) do nothing", key, candidate).execute(pool).await?;
    sqlx::query_scalar!("select value from settings where key = $1", key).fetch_one(pool).await
}

/// The value of settings row `key`, if there is one (an admin's setting: a retention period…).
pub async fn read(pool: &sqlx::PgPool, key: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("select value from settings where key = $1").bind(key).fetch_optional(pool).await
}

/// Stores settings row `key` (an admin's setting, validated by the caller).
pub async fn put(conn: &mut sqlx::PgConnection, key: &str, value: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into settings (key, value, updated_at) values ($1, $2, now())
         on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
    )
    .bind(key)
    .bind(value)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every secret Ebb keeps in `settings` (`ebb doctor` checks that each is readable).
pub const SECRETS: [&str; 2] = [CLIENT_SECRET, BLOB_URL_SECRET];
/// Keys client hashes, rate limits, receipts and address hashes.
pub const CLIENT_SECRET: &str = "audit_client_secret";
/// Signs the local store's download URLs.
pub const BLOB_URL_SECRET: &str = "blob_url_secret";

/// Bytes in every secret Ebb generates (HMAC keys).
pub const SECRET_BYTES: usize = 32;

/// The secret kept in settings row `key`, generated on first use (first writer wins, so every
/// instance has the same). Fails closed: a stored value that is not the hex of at least
/// [`SECRET_BYTES`] bytes — corrupted, truncated, hand-edited — is refused with a message naming
/// the row, and Ebb does not start; it never falls back to a value anyone could compute.
pub async fn secret(pool: &sqlx::PgPool, key: &str) -> Result<Vec<u8>, String> {
    let fresh = hex::encode(rand::random::<[u8; SECRET_BYTES]>());
    let stored = get_or_insert(pool, key, &fresh).await.map_err(|e| format!("database error: {e}"))?;
    parse_secret(key, &stored)
}

/// A stored secret's bytes, or why it is refused (naming the settings row).
pub fn parse_secret(key: &str, stored: &str) -> Result<Vec<u8>, String> {
    match hex::decode(stored.trim()) {
        Ok(bytes) if bytes.len() >= SECRET_BYTES => Ok(bytes),
        _ => Err(format!(
            "the secret in settings row '{key}' is unreadable (not {} hex characters): it was corrupted or edited. Ebb will not start with a secret anyone could guess. Restore the row from a backup; or delete it to make a new secret (what it signed or keyed stops matching)",
            SECRET_BYTES * 2
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_that_are_not_long_hex_are_refused_by_name() {
        assert_eq!(parse_secret("k", &"ab".repeat(32)).unwrap(), vec![0xab; 32]);
        for bad in ["", "zz", "abcd", &"g".repeat(64), &"ab".repeat(31)] {
            let e = parse_secret("audit_client_secret", bad).unwrap_err();
            assert!(e.contains("'audit_client_secret'"), "{bad}: {e}");
        }
    }
}
