use std::collections::BTreeSet;

use app::inbox::db::list_page;
use app::inbox::Cursor;
use sqlx::PgPool;
use uuid::Uuid;

/// 90 rows: 60 with distinct times and 30 sharing one timestamp (ties are ordered by id).
async fn seed(pool: &PgPool) -> Vec<Uuid> {
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'R' || g, 'r@example.org', 'm', timestamptz '2026-11-01 12:00Z' - make_interval(mins => g) from generate_series(1, 60) g",
    )
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'T' || g, 't@example.org', 'm', timestamptz '2026-11-01 11:30Z' from generate_series(1, 30) g",
    )
    .execute(pool)
    .await
    .unwrap();
    sqlx::query_scalar("select id from inquiries").fetch_all(pool).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn keyset_pages_neither_skip_nor_repeat_when_rows_change_between_pages(pool: PgPool) {
    let original: BTreeSet<Uuid> = seed(&pool).await.into_iter().collect();
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut deleted_unseen = BTreeSet::new();
    for page_no in 0.. {
        let page = list_page(&pool, None, cursor, 20).await.unwrap();
        if page.is_empty() {
            break;
        }
        seen.extend(page.iter().map(|r| r.id));
        let last = page.last().unwrap();
        cursor = Some(Cursor { created_at: last.created_at, id: last.id });
        // Between pages: a newer inquiry arrives, a seen one and an unseen one are deleted.
        sqlx::query("insert into inquiries (name, email, message) values ('New', 'n@example.org', 'm')").execute(&pool).await.unwrap();
        sqlx::query("delete from inquiries where id = $1").bind(page[0].id).execute(&pool).await.unwrap();
        let unseen: Option<Uuid> = sqlx::query_scalar("select id from inquiries where (created_at, id) < ($1, $2) order by created_at, id limit 1")
            .bind(last.created_at)
            .bind(last.id)
            .fetch_optional(&pool)
            .await
            .unwrap();
        if let Some(u) = unseen {
            sqlx::query("delete from inquiries where id = $1").bind(u).execute(&pool).await.unwrap();
            deleted_unseen.insert(u);
        }
        assert!(page_no < 20, "pagination must end");
    }
    let seen_set: BTreeSet<Uuid> = seen.iter().copied().collect();
    assert_eq!(seen.len(), seen_set.len(), "no row repeated");
    let expected: BTreeSet<Uuid> = original.difference(&deleted_unseen).copied().collect();
    assert_eq!(seen_set, expected, "every original row not deleted before its page was shown, and nothing newer");
}
