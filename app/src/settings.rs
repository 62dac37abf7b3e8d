//! Rows of the `settings` table that are written once and then only read (secrets, ids).

/// The value of settings row `key`, inserting `candidate` when there is none: the first writer
/// wins, so every instance ends up with the same value.
pub async fn get_or_insert(pool: &sqlx::PgPool, key: &str, candidate: &str) -> Result<String, sqlx::Error> {
    sqlx::query!("insert into settings (key, value) values ($1, $2) on conflict (key) do nothing", key, candidate).execute(pool).await?;
    sqlx::query_scalar!("select value from settings where key = $1", key).fetch_one(pool).await
}
