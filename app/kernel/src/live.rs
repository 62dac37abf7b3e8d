//! The server side of live updates (see `common::live`): NOTIFY out, LISTEN in.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

pub use common::live::*;

/// Changes within this time go out as one notification per topic.
const GATHER: Duration = Duration::from_millis(100);
/// Pause before listening again after the database connection failed.
const RETRY: Duration = Duration::from_secs(1);

/// What an open admin page is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveMessage {
    Event(LiveEvent),
    /// Notifications may have been missed: fetch everything again.
    Resync,
}

/// This instance's end of the live updates (one per process, in the app state).
/// A topic's gathered change: the latest id, and the other ids of the same moment.
type Gathered = (Option<String>, Vec<String>);

pub struct Live {
    pool: PgPool,
    /// Per topic: `Some(latest id)` when something changed and is not yet notified.
    pending: Mutex<[Option<Gathered>; Topic::ALL.len()]>,
    wake: Notify,
    publisher: OnceLock<()>,
    listener: OnceLock<()>,
    tx: broadcast::Sender<LiveMessage>,
    /// Whether this instance's listener is listening now.
    listening: tokio::sync::watch::Sender<bool>,
    /// Cancelled at shutdown: open streams end so connections can drain.
    pub closing: CancellationToken,
}

impl Live {
    pub fn new(pool: PgPool) -> Arc<Live> {
        Arc::new(Live {
            pool,
            pending: Mutex::new(Default::default()),
            wake: Notify::new(),
            publisher: OnceLock::new(),
            listener: OnceLock::new(),
            tx: broadcast::channel(256).0,
            listening: tokio::sync::watch::channel(false).0,
            closing: CancellationToken::new(),
        })
    }

    /// Something under `topic` changed (call after its transaction committed). Never waits.
    pub fn touch(self: &Arc<Self>, topic: Topic, id: Option<String>) {
        // The latest change per topic stands for all of them (pages fetch everything anyway),
        // and names the others of the same moment.
        {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let slot = &mut pending[topic.index()];
            let also = match slot.take() {
                Some((Some(prev), mut also)) if Some(&prev) != id.as_ref() => {
                    if also.len() < ALSO_MAX && !also.contains(&prev) {
                        also.push(prev);
                    }
                    also
                }
                Some((_, also)) => also,
                None => Vec::new(),
            };
            *slot = Some((id, also));
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return; // outside a runtime (a CLI step after it stopped): nobody to tell
        }
        self.publisher.get_or_init(|| {
            tokio::spawn(publish(self.clone()));
        });
        self.wake.notify_one();
    }

    /// The events for one open page, from now on. Starts this instance's listener if needed.
    pub fn subscribe(self: &Arc<Self>) -> broadcast::Receiver<LiveMessage> {
        let rx = self.tx.subscribe();
        self.listener.get_or_init(|| {
            tokio::spawn(listen(self.clone()));
        });
        rx
    }

    /// Waits (at most `max`) until the listener listens, so a page told "ready" hears what
    /// happens from then on.
    pub async fn wait_listening(&self, max: Duration) -> bool {
        let mut rx = self.listening.subscribe();
        let listening = tokio::time::timeout(max, rx.wait_for(|on| *on)).await.is_ok_and(|r| r.is_ok());
        listening
    }

    fn take_pending(&self) -> Vec<LiveEvent> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        Topic::ALL.into_iter().filter_map(|t| pending[t.index()].take().map(|(id, also)| LiveEvent { topic: t, id, also })).collect()
    }
}

async fn publish(live: Arc<Live>) {
    loop {
        tokio::select! {
            () = live.wake.notified() => {}
            () = live.closing.cancelled() => {}
        }
        if !live.closing.is_cancelled() {
            tokio::time::sleep(GATHER).await;
        }
        for event in live.take_pending() {
            let payload = serde_json::to_string(&event).unwrap_or_default();
            if let Err(e) = sqlx::query("select pg_notify($1, $2)").bind(CHANNEL).bind(&payload).execute(&live.pool).await {
                tracing::warn!(error = %e, topic = event.topic.as_str(), "live update could not be sent");
            }
        }
        if live.closing.is_cancelled() {
            return;
        }
    }
}

async fn listen(live: Arc<Live>) {
    while !live.closing.is_cancelled() {
        // A connection of its own, outside the application's pool: a listener holds its
        // connection for as long as it listens, and must not take one of the pool's (with a
        // small pool, the first admin page would starve every request).
        let own = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_with((*live.pool.connect_options()).clone())
            .await;
        let own = match own {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "live updates: cannot connect to listen; retrying");
                pause(&live).await;
                continue;
            }
        };
        let mut listener = match PgListener::connect_with(&own).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "live updates: cannot connect to listen; retrying");
                pause(&live).await;
                continue;
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "live updates: LISTEN failed; retrying");
            pause(&live).await;
            continue;
        }
        tracing::debug!("live updates: listening");
        live.listening.send_replace(true);
        // Pages opened before (or while the connection was down) may have missed changes:
        // they fetch everything again.
        let _ = live.tx.send(LiveMessage::Resync);
        loop {
            let received = tokio::select! {
                r = listener.try_recv() => r,
                () = live.closing.cancelled() => return,
            };
            match received {
                Ok(Some(n)) => match serde_json::from_str::<LiveEvent>(n.payload()) {
                    Ok(event) => {
                        let _ = live.tx.send(LiveMessage::Event(event));
                    }
                    Err(_) => tracing::warn!("live updates: an unreadable notification was ignored"),
                },
                // The connection dropped: connect and listen again (the outer loop).
                Ok(None) => {
                    live.listening.send_replace(false);
                    tracing::info!("live updates: connection lost; reconnecting");
                    break;
                }
                Err(e) => {
                    live.listening.send_replace(false);
                    tracing::warn!(error = %e, "live updates: listening failed; reconnecting");
                    pause(&live).await;
                    break;
                }
            }
        }
    }
}

async fn pause(live: &Live) {
    tokio::select! {
        () = tokio::time::sleep(RETRY) => {}
        () = live.closing.cancelled() => {}
    }
}
