//! Live updates for the admin pages: when an inquiry arrives, a share changes or a job runs, the
//! instance where it happened sends a PostgreSQL `NOTIFY` (ids only, never personal data); every
//! instance `LISTEN`s and forwards what it hears to its open admin pages as server-sent events;
//! the pages fetch what they show again. So a page on one instance follows what happens on all.
//!
//! Notifications are sent after the change is committed, from a task that gathers what happened
//! in the last tenth of a second into one `NOTIFY` per topic: the submission path never waits for
//! it, and `NOTIFY`'s commit-time lock never serialises the inserts. They are a hint, not a
//! record: a page that missed some (a dropped connection, a restarted instance) is told to fetch
//! everything again (`resync`).

use serde::{Deserialize, Serialize};

/// The PostgreSQL channel every instance listens on.
pub const CHANNEL: &str = "ebb_live";
/// The server-sent event stream for admin pages.
pub const PATH: &str = "/admin/live";

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topic {
    /// An inquiry arrived or was deleted.
    Inquiry,
    /// A share was created, downloaded, revoked or purged.
    Share,
    /// A lifecycle job finished a run.
    Job,
}

impl Topic {
    pub const ALL: [Topic; 3] = [Topic::Inquiry, Topic::Share, Topic::Job];

    /// The SSE event name.
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::Inquiry => "inquiry",
            Topic::Share => "share",
            Topic::Job => "job",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One notification: the topic and the id of the latest thing that changed (no names, no text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveEvent {
    pub topic: Topic,
    pub id: Option<String>,
    /// The other ids of the same topic that changed in the same gathering moment (up to
    /// [`ALSO_MAX`]): one event stands for them all, and none is lost from what it names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

/// The most ids one event names besides its own.
pub const ALSO_MAX: usize = 50;

#[cfg(feature = "ssr")]
pub use server_side::{Live, LiveMessage};

#[cfg(feature = "ssr")]
mod server_side {
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Duration;

    use sqlx::postgres::PgListener;
    use sqlx::PgPool;
    use tokio::sync::{broadcast, Notify};
    use tokio_util::sync::CancellationToken;

    use super::{LiveEvent, Topic, CHANNEL};

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
        pending: Mutex<[Option<Gathered>; 3]>,
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
                pending: Mutex::new([None, None, None]),
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
                        if also.len() < super::ALSO_MAX && !also.contains(&prev) {
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
}

/// Per topic, how many changes this page has heard of (grows on `resync` too). Provided once per
/// page frame (the admin layout), so a page opens one stream whatever it shows.
#[derive(Clone, Copy)]
pub struct LiveVersions([leptos::prelude::RwSignal<u64>; 3]);

/// Opens the page's live stream (hydrated only) and provides its counters to the page's parts.
/// On the server, and until the stream opens, the counters stay 0: hydration matches the HTML.
pub fn provide_live() {
    use leptos::prelude::*;
    let versions = LiveVersions([RwSignal::new(0), RwSignal::new(0), RwSignal::new(0)]);
    provide_context(versions);
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{closure::Closure, JsCast};
        let Ok(source) = web_sys::EventSource::new(PATH) else {
            return;
        };
        let bump_all = move || versions.0.iter().for_each(|v| v.update(|n| *n += 1));
        let mut callbacks = Vec::new();
        for topic in Topic::ALL {
            let bump = Closure::<dyn Fn(web_sys::Event)>::new(move |_| versions.0[topic.index()].update(|n| *n += 1));
            let _ = source.add_event_listener_with_callback(topic.as_str(), bump.as_ref().unchecked_ref());
            callbacks.push(bump);
        }
        let resync = Closure::<dyn Fn(web_sys::Event)>::new(move |_| bump_all());
        let _ = source.add_event_listener_with_callback("resync", resync.as_ref().unchecked_ref());
        callbacks.push(resync);
        // The server's first event on every (re)connection. After a dropped connection the
        // browser reconnects by itself; anything may have changed meanwhile, so fetch again.
        let connected_before = std::rc::Rc::new(std::cell::Cell::new(false));
        let ready = Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
            if connected_before.replace(true) {
                bump_all();
            }
            // A mark for people's tools and tests: live updates are on.
            if let Some(root) = document().document_element() {
                let _ = root.set_attribute("data-live", "on");
            }
        });
        let _ = source.add_event_listener_with_callback("ready", ready.as_ref().unchecked_ref());
        callbacks.push(ready);
        let dropped = Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
            if let Some(root) = document().document_element() {
                let _ = root.set_attribute("data-live", "reconnecting");
            }
        });
        source.set_onerror(Some(dropped.as_ref().unchecked_ref()));
        callbacks.push(dropped);
        let keep = send_wrapper::SendWrapper::new((source, callbacks));
        on_cleanup(move || {
            keep.0.close();
            if let Some(root) = document().document_element() {
                let _ = root.remove_attribute("data-live");
            }
        });
    }
}

/// A number that grows whenever one of `topics` changes: a source for a resource, so it fetches
/// again. 0 outside a live page.
pub fn live_version(topics: &'static [Topic]) -> impl Fn() -> u64 + Copy + Send + Sync + 'static {
    use leptos::prelude::*;
    let versions = use_context::<LiveVersions>();
    move || versions.map(|v| topics.iter().map(|t| v.0[t.index()].get()).sum()).unwrap_or(0)
}
