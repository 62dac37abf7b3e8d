//! Live updates (issue 15): a change on one instance reaches an admin page open on another, as
//! server-sent events carrying ids only; the listener comes back after its connection drops;
//! the stream is for admins only and ends at shutdown.

use std::time::Duration;

use futures::StreamExt;
use sqlx::PgPool;

use crate::helpers::*;
use crate::shares::admin_cookie;

/// An open event stream: reads whole events (`event:` name and `data:`), skipping comments.
struct Events {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Events {
    async fn open(app: &TestApp, cookie: &str) -> Events {
        let res = app.client.get(app.url("/admin/live")).header("cookie", cookie).header("accept", "text/event-stream").send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        assert!(res.headers().get("content-encoding").is_none(), "a stream is never compressed (it would be buffered)");
        assert_eq!(res.headers()["x-accel-buffering"], "no", "a proxy passes each event on at once");
        Events { body: res.bytes_stream().boxed(), buffer: String::new() }
    }

    /// The next event as (name, data); `None` when the stream ended. Fails after 20 s.
    async fn next(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim());
                    }
                }
                if data.is_empty() && name == "message" {
                    continue; // a keep-alive comment
                }
                return Some((name, data));
            }
            match tokio::time::timeout(Duration::from_secs(20), self.body.next()).await.expect("an event within 20 s") {
                Some(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap())),
                None => return None,
            }
        }
    }

    /// Skips events until one named `name` comes.
    async fn until(&mut self, name: &str) -> String {
        loop {
            let (n, data) = self.next().await.unwrap_or_else(|| panic!("stream ended before a {name} event"));
            if n == name {
                return data;
            }
        }
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_inquiry_on_one_instance_reaches_an_admin_page_on_another_with_ids_only(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    let mut events = Events::open(&b, &cookie).await;
    events.until("ready").await;

    let name = "Grace Hopper";
    let email = "grace@example.com";
    let message = "A private message about compilers.";
    let res = a.post_contact(&[("name", name), ("email", email), ("message", message)]).await;
    assert_eq!(res.status(), 200);
    let data = events.until("inquiry").await;
    let id: uuid::Uuid = sqlx::query_scalar("select id from inquiries").fetch_one(&pool).await.unwrap();
    let event: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(event, serde_json::json!({ "topic": "inquiry", "id": id.to_string() }));
    for secret in [name, email, message, "Grace", "example.com"] {
        assert!(!data.contains(secret), "personal data in the event: {data}");
    }

    // A share changing on B is heard on A's stream too.
    let mut on_a = Events::open(&a, &cookie).await;
    on_a.until("ready").await;
    crate::shares::share_via_upload(&b, &cookie, "live.pdf", vec![7; 1000]).await;
    let share_id: i64 = sqlx::query_scalar("select id from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&on_a.until("share").await).unwrap()["id"], share_id.to_string());
    b.shutdown().await;
    a.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn after_the_listening_connection_drops_pages_resync_and_updates_continue(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_with(pool.clone(), &["--contact-rate-limit", "1000"], |_| {}).await;
    let mut events = Events::open(&app, &cookie).await;
    events.until("ready").await;
    // The listener connects in the background: wait until it listens.
    for _ in 0..200 {
        let listening: i64 = sqlx::query_scalar("select count(*) from pg_stat_activity where datname = current_database() and query ilike 'listen%'")
            .fetch_one(&pool)
            .await
            .unwrap();
        if listening == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The database drops the listener's connection (a failover, a restart, an admin's kill).
    let killed: i64 =
        sqlx::query_scalar("select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = current_database() and query ilike 'listen%'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(killed, 1, "one listening connection");
    events.until("resync").await;
    // Listening again: a new inquiry still arrives (the listener may need a moment to reconnect,
    // so the form is posted until the event comes).
    let mut heard = false;
    for _ in 0..20 {
        assert_eq!(app.post_contact(&[("name", "Ada"), ("email", "ada@example.com"), ("message", "After the drop.")]).await.status(), 200);
        match tokio::time::timeout(Duration::from_millis(500), events.until("inquiry")).await {
            Ok(_) => {
                heard = true;
                break;
            }
            Err(_) => continue,
        }
    }
    assert!(heard, "no inquiry event after the listener reconnected");
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_stream_is_for_admins_only_and_ends_at_shutdown(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    for c in [None, Some("ebb_session=forged")] {
        let mut req = app.client.get(app.url("/admin/live")).header("accept", "text/event-stream");
        if let Some(c) = c {
            req = req.header("cookie", c);
        }
        let res = req.send().await.unwrap();
        assert_ne!(res.status(), 200);
        assert!(res.headers().get("content-type").is_none_or(|t| !t.to_str().unwrap().starts_with("text/event-stream")));
    }
    let mut events = Events::open(&app, &cookie).await;
    events.until("ready").await;
    // Shutdown does not wait for the open stream: it ends, and the server stops.
    tokio::time::timeout(Duration::from_secs(20), app.shutdown()).await.expect("shutdown with a stream open");
    while let Some((name, _)) = events.next().await {
        assert_ne!(name, "ready");
    }
}

/// The listener has a connection of its own: with a pool of one connection, an open admin page
/// does not starve every other request (before, the listener took the pool's only connection).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_open_live_page_takes_no_connection_from_the_pool(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let one = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect_with((*pool.connect_options()).clone()).await.unwrap();
    let app = spawn_app(one).await;
    let mut events = Events::open(&app, &cookie).await;
    events.until("ready").await;
    let res = tokio::time::timeout(Duration::from_secs(10), app.client.get(app.url("/readyz")).send()).await.expect("answered while a page listens").unwrap();
    assert_eq!(res.status(), 200);
    let res = tokio::time::timeout(Duration::from_secs(10), app.post_contact(&[("name", "Ada"), ("email", "ada@example.org"), ("message", "Hello there")]))
        .await
        .expect("the form works while a page listens");
    assert_eq!(res.status(), 200);
    events.until("inquiry").await;
}

/// Changes gathered into one notification are all named by it: two inquiries arriving together
/// make one event (one refetch) that carries both ids, so a page waiting for a given change
/// never loses it to another one of the same moment.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn changes_gathered_into_one_event_are_all_named(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    let mut events = Events::open(&app, &cookie).await;
    events.until("ready").await;
    let (a, b) = tokio::join!(
        app.post_contact(&[("name", "Ada"), ("email", "ada@example.org"), ("message", "First of two")]),
        app.post_contact(&[("name", "Bob"), ("email", "bob@example.org"), ("message", "Second of two")]),
    );
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar("select id from inquiries").fetch_all(&pool).await.unwrap();
    let mut named = std::collections::HashSet::new();
    while named.len() < 2 {
        let event: serde_json::Value = serde_json::from_str(&events.until("inquiry").await).unwrap();
        named.extend(event["id"].as_str().map(str::to_owned));
        named.extend(event["also"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)));
    }
    for id in ids {
        assert!(named.contains(&id.to_string()), "{id} was named: {named:?}");
    }
}
