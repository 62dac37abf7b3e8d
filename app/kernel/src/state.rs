//! Server-side application state, handed to routes (axum `State`) and server functions (context).
//!
//! Kernel: this module imports no domain. Each domain declares the settings and handles it needs
//! as its own type; the composition root (`server::build_state`) puts them into [`Domains`], and
//! the domain reads them back with [`AppState::domain`].

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    future::Future,
    net::IpAddr,
    sync::Arc,
    time::Duration,
};

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::PgPool;
use tokio_util::task::TaskTracker;

/// Settings of the kernel itself; domains keep theirs in [`Domains`].
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// How many reverse proxies in front of Ebb append to `X-Forwarded-For`; 0 means the header
    /// is ignored and the peer address is the client.
    pub trusted_proxy_hops: usize,
    /// How long a best-effort background task may run before it is abandoned.
    pub background_timeout: Duration,
    /// The public origin (`http://localhost:3000`), without a trailing slash.
    pub public_url: String,
    /// Whether every response asks the jobs' in-memory "next due" (design card: best-effort
    /// pruning after each response). Off only to measure its cost.
    pub after_response_jobs: bool,
    /// How many leading bits of an IPv6 address make one client for rate limits (48–128).
    pub ipv6_prefix: u8,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            trusted_proxy_hops: 0,
            background_timeout: Duration::from_secs(60),
            public_url: "http://localhost:3000".into(),
            after_response_jobs: true,
            ipv6_prefix: 64,
        }
    }
}

/// Each domain's settings and handles, by type (a type map filled once by the composition root).
/// Shared: `AppState` is cloned several times per request (extractors, contexts), so a clone is
/// one reference count, not a copy of the map (a profile of the contact form found the copies at
/// about a tenth of the server's CPU).
#[derive(Clone, Default)]
pub struct Domains(Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl Domains {
    /// Adds (or replaces) a domain's part.
    pub fn with<T: Any + Send + Sync>(mut self, part: T) -> Self {
        Arc::make_mut(&mut self.0).insert(TypeId::of::<T>(), Arc::new(part));
        self
    }

    /// Replaces a domain's part (tests change settings this way).
    pub fn set<T: Any + Send + Sync>(&mut self, part: T) {
        Arc::make_mut(&mut self.0).insert(TypeId::of::<T>(), Arc::new(part));
    }

    /// A domain's part. The composition root adds every part: a missing one is a wiring bug.
    pub fn get<T: Any + Send + Sync>(&self) -> &T {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|p| p.downcast_ref::<T>())
            .unwrap_or_else(|| panic!("{} is not in AppState's domains (server::build_state adds every part)", std::any::type_name::<T>()))
    }
}

/// Everything a request handler may need: one reference count to clone (every middleware layer
/// and server function takes a copy of the state; a struct of shared fields cost one count per
/// field, the contact form's profile found their clones and drops at about 3 % of the server's CPU).
/// Fields are read through `Deref` (`state.pool`); a test that swaps one (`state.live = …`)
/// gets its own copy of the fields through `DerefMut`.
#[derive(Clone)]
pub struct AppState(Arc<AppStateInner>);

/// The fields of [`AppState`].
#[derive(Clone)]
pub struct AppStateInner {
    pub leptos_options: Arc<LeptosOptions>,
    pub pool: PgPool,
    pub config: Arc<AppConfig>,
    pub background: Background,
    /// Where files are stored (checked against its marker before any delete).
    pub blobs: Arc<crate::storage::MarkedStore>,
    /// The keyed hashes and MACs (loaded before the state is built).
    pub keyring: Arc<crate::keyring::Keyring>,
    /// Each domain's settings and handles.
    pub domains: Domains,
    /// Live updates for admin pages (NOTIFY out, LISTEN in).
    pub live: Arc<crate::live::Live>,
}

/// Puts the state into the context of a request's rendering or server function, with what
/// `common` reads from it (whether cookies are `Secure`).
pub fn provide(state: &AppState) {
    leptos::prelude::provide_context(state.clone());
    leptos::prelude::provide_context(common::prefs::SecureCookies(state.config.public_url.starts_with("https://")));
    // The request's language, on the request's own owner: a server function's messages then
    // never take a `Lang` from an owner above it (a Japanese no-JavaScript form post once got
    // its field error in English in CI). Pages provide the same value again in `App`.
    if let Some(lang) = common::request::with_parts(|p| common::i18n::lang_of_headers(&p.headers)) {
        leptos::prelude::provide_context(lang);
    }
}

impl From<AppStateInner> for AppState {
    fn from(inner: AppStateInner) -> Self {
        AppState(Arc::new(inner))
    }
}

impl std::ops::Deref for AppState {
    type Target = AppStateInner;
    fn deref(&self) -> &AppStateInner {
        &self.0
    }
}

impl std::ops::DerefMut for AppState {
    fn deref_mut(&mut self) -> &mut AppStateInner {
        Arc::make_mut(&mut self.0)
    }
}

/// leptos_axum extracts the options from the state.
impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        (*state.leptos_options).clone()
    }
}

/// Routes that only need the database (`State<PgPool>`).
impl FromRef<AppState> for PgPool {
    fn from_ref(state: &AppState) -> Self {
        state.pool.clone()
    }
}

impl AppState {
    /// A domain's settings or handles (see [`Domains`]).
    pub fn domain<T: Any + Send + Sync>(&self) -> &T {
        self.domains.get::<T>()
    }
}

/// Best-effort work that runs after a response: tracked so shutdown can drain it, bounded by a
/// timeout, and never able to change the response. Failures are logged and counted.
#[derive(Clone)]
pub struct Background {
    tracker: TaskTracker,
    timeout: Duration,
    failures: Arc<std::sync::atomic::AtomicU64>,
}

impl Background {
    pub fn new(timeout: Duration) -> Self {
        Background { tracker: TaskTracker::new(), timeout, failures: Default::default() }
    }

    /// Starts a named best-effort task. Its error is logged as a warning, never returned.
    pub fn spawn<F, E>(&self, name: &'static str, work: F)
    where
        F: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        self.spawn_with_timeout(name, self.timeout, work)
    }

    /// [`Background::spawn`] with a timeout of at least `timeout` (long jobs).
    pub fn spawn_with_timeout<F, E>(&self, name: &'static str, timeout: Duration, work: F)
    where
        F: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        let timeout = timeout.max(self.timeout);
        let failures = self.failures.clone();
        self.tracker.spawn(async move {
            let failed = match tokio::time::timeout(timeout, work).await {
                Ok(Ok(())) => false,
                Ok(Err(e)) => {
                    tracing::warn!(task = name, error = %e, "best-effort task failed");
                    true
                }
                Err(_) => {
                    tracing::warn!(task = name, timeout_secs = timeout.as_secs(), "best-effort task timed out");
                    true
                }
            };
            if failed {
                failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                metrics::counter!("ebb_background_task_failures_total", "task" => name).increment(1);
            }
        });
    }

    /// How many best-effort tasks have failed or timed out since start.
    pub fn failures(&self) -> u64 {
        self.failures.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits until no task is running (for tests and the CLI; new tasks may still be spawned).
    pub async fn settle(&self) {
        while !self.tracker.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stops accepting tasks and waits up to `grace` for the running ones (graceful shutdown).
    pub async fn drain(&self, grace: Duration) -> bool {
        self.tracker.close();
        tokio::time::timeout(grace, self.tracker.wait()).await.is_ok()
    }
}

/// The client's address: the peer, or — only when `trusted_proxy_hops` > 0 — the address that
/// many hops from the right of `X-Forwarded-For` (the rightmost entries are the ones our own
/// proxies appended, so they cannot be forged by the client).
/// The current request's client address (the peer, or the trusted proxies' `X-Forwarded-For`);
/// `None` outside a request.
pub fn client_address(state: &AppState) -> Option<IpAddr> {
    common::request::with_parts(|parts| {
        let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
        client_ip(&parts.headers, peer, state.config.trusted_proxy_hops)
    })?
}

pub fn client_ip(headers: &axum::http::HeaderMap, peer: Option<IpAddr>, trusted_proxy_hops: usize) -> Option<IpAddr> {
    if trusted_proxy_hops == 0 {
        return peer;
    }
    let forwarded: Vec<&str> =
        headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).map(str::trim).filter(|s| !s.is_empty()).collect();
    // With N trusted proxies, the last N-1 entries are proxies and the N-th from the right is
    // the client as seen by the outermost proxy.
    forwarded.len().checked_sub(trusted_proxy_hops).and_then(|i| forwarded.get(i)).and_then(|s| s.parse().ok()).or(peer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    fn xff(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", v.parse().unwrap());
        h
    }

    #[test]
    fn forwarded_for_is_ignored_unless_proxies_are_trusted() {
        let peer = Some("10.0.0.1".parse().unwrap());
        assert_eq!(client_ip(&xff("1.2.3.4"), peer, 0), peer);
    }

    #[test]
    fn with_one_trusted_proxy_the_rightmost_entry_is_the_client() {
        let peer = Some("10.0.0.1".parse().unwrap());
        // The client forged "6.6.6.6"; our proxy appended the real address.
        assert_eq!(client_ip(&xff("6.6.6.6, 1.2.3.4"), peer, 1), Some("1.2.3.4".parse().unwrap()));
        assert_eq!(client_ip(&xff("6.6.6.6, 1.2.3.4, 10.0.0.2"), peer, 2), Some("1.2.3.4".parse().unwrap()));
    }

    #[test]
    fn a_missing_or_garbled_header_falls_back_to_the_peer() {
        let peer = Some("10.0.0.1".parse().unwrap());
        assert_eq!(client_ip(&HeaderMap::new(), peer, 1), peer);
        assert_eq!(client_ip(&xff("not-an-ip"), peer, 1), peer);
    }
}
