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
    /// An admin changed a setting: every instance drops the pages it keeps rendered
    /// (`server::page_cache`), and admin pages fetch again.
    Settings,
}

impl Topic {
    pub const ALL: [Topic; 4] = [Topic::Inquiry, Topic::Share, Topic::Job, Topic::Settings];

    /// The SSE event name.
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::Inquiry => "inquiry",
            Topic::Share => "share",
            Topic::Job => "job",
            Topic::Settings => "settings",
        }
    }

    pub fn index(self) -> usize {
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

/// Per topic, how many changes this page has heard of (grows on `resync` too). Provided once per
/// page frame (the admin layout), so a page opens one stream whatever it shows.
#[derive(Clone, Copy)]
pub struct LiveVersions([leptos::prelude::RwSignal<u64>; 4]);

/// Opens the page's live stream (hydrated only) and provides its counters to the page's parts.
/// On the server, and until the stream opens, the counters stay 0: hydration matches the HTML.
pub fn provide_live() {
    use leptos::prelude::*;
    let versions = LiveVersions([RwSignal::new(0), RwSignal::new(0), RwSignal::new(0), RwSignal::new(0)]);
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
            if connected_before.replace(true) || took_over_heard_change() {
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

/// The dashboard opened by a page load follows the live stream before its client is there
/// (`app/src/dashboard_on_first_use.js`): once this page's own stream is open, that one closes,
/// and if it heard of a change (which may be what brought the client) the page fetches again —
/// the hydrated data is what the server rendered. False on every other page.
#[cfg(feature = "hydrate")]
fn took_over_heard_change() -> bool {
    use wasm_bindgen::JsCast;
    let window = leptos::prelude::window();
    let Ok(handoff) = js_sys::Reflect::get(&window, &"__ebbLiveHandoff".into()) else {
        return false;
    };
    let Some(handoff) = handoff.dyn_ref::<js_sys::Function>() else {
        return false;
    };
    handoff.call0(&window).map(|heard| heard.as_bool() == Some(true)).unwrap_or(false)
}

/// A number that grows whenever one of `topics` changes: a source for a resource, so it fetches
/// again. 0 outside a live page.
pub fn live_version(topics: &'static [Topic]) -> impl Fn() -> u64 + Copy + Send + Sync + 'static {
    use leptos::prelude::*;
    let versions = use_context::<LiveVersions>();
    move || versions.map(|v| topics.iter().map(|t| v.0[t.index()].get()).sum()).unwrap_or(0)
}
