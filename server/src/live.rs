//! `GET /admin/live`: the admin pages' server-sent event stream (behind the admin gate). Each
//! event names what changed (`inquiry`, `share`, `job`) with an id and nothing else; `resync`
//! means "fetch everything again". The stream ends at shutdown; browsers reconnect by themselves.

use std::convert::Infallible;
use std::time::Duration;

use app::live::LiveMessage;
use app::state::AppState;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

/// How soon a browser reconnects after the stream dropped.
const RECONNECT: Duration = Duration::from_secs(2);

/// Behind the admin gate; the extractor refuses (401) a request the gate did not pass.
pub async fn events(
    State(state): State<AppState>,
    _admin: app::kernel::http::AdminCall,
) -> ([(&'static str, &'static str); 1], Sse<impl Stream<Item = Result<Event, Infallible>>>) {
    let rx = state.live.subscribe();
    // "ready" means listening: what happens after it reaches this page. A database that does not
    // answer delays it by at most a few seconds (the page then works without live updates).
    if !state.live.wait_listening(Duration::from_secs(5)).await {
        tracing::warn!("live updates: not listening yet; the page may miss changes until it is");
    }
    let ready = Event::default().retry(RECONNECT).event("ready").data("{}");
    let changes = futures::stream::unfold(rx, |mut rx| async move {
        let event = match rx.recv().await {
            Ok(LiveMessage::Event(e)) => Event::default().event(e.topic.as_str()).data(serde_json::to_string(&e).unwrap_or_default()),
            // Missed notifications (a slow page, a reconnected listener): fetch everything.
            Ok(LiveMessage::Resync) | Err(RecvError::Lagged(_)) => Event::default().event("resync").data("{}"),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(event), rx))
    });
    let stream = futures::stream::once(async { Ok(ready) }).chain(changes).take_until(state.live.closing.clone().cancelled_owned());
    // A reverse proxy must pass each event on at once (nginx buffers responses unless told).
    ([("x-accel-buffering", "no")], Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
