//! Server-side application state, handed to routes (axum `State`) and server functions (context).
//!
//! Kernel: this module imports no domain. Each domain declares the settings and handles it needs
//! as its own type, which names its slot in [`Parts`] ([`Part`]); the composition root
//! (`server::build_state`) fills every slot — the compiler checks that none is missing and that
//! each holds its own type — and the domain reads its part back with [`AppState::domain`].

use std::{any::Any, future::Future, net::IpAddr, sync::Arc, time::Duration};

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::PgPool;
use tokio_util::task::TaskTracker;

/// Settings of the kernel itself; domains keep theirs in [`Parts`].
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

/// The slots of [`Parts`]: one marker per part. The kernel names the slots, not what goes in
/// them — each part's type says which slot is its own ([`Part::Slot`]), in its own module, so
/// this file imports no domain and no kernel module that reads the state.
pub mod slot {
    macro_rules! slots {
        ($($(#[$doc:meta])* $name:ident),* $(,)?) => { $($(#[$doc])* pub enum $name {})* };
    }
    slots! {
        /// The HTTP loop's connection and body limits (the server's).
        HttpLimits,
        /// The prune job's batch size and session lifetimes (kernel).
        Prune,
        /// The retention report's dry run of the inquiries' prune (contact's, typed by the kernel).
        PruneDryRun,
        /// Every lifecycle job (the composition root's registry).
        Jobs,
        /// The admin session lookup (auth's, typed by the kernel).
        AdminSessions,
        /// The file-event feed (shares', typed by the kernel).
        FileEvents,
        /// The owners of held items' flags (contact's and shares', typed by the kernel).
        HoldOwners,
        /// The page renderer (the server's, typed by the kernel).
        PageRenderer,
        /// Every personal-data source (the composition root's list).
        PersonalSources,
        /// Sign-in: relying party, session lifetimes, limits.
        Auth,
        /// The contact form: its limit and spam rules.
        Contact,
        /// The contact form's group-commit writer.
        ContactWriter,
        /// The inbox export's counters.
        InboxExport,
        /// New-inquiry notifications (the mailer).
        Notify,
        /// Shares: sizes, expiry, GC timing.
        Shares,
        /// The audit chain: signing key file, digests, log origin, witnesses.
        AuditChain,
        /// The audit archive's re-read period.
        AuditArchive,
        /// The audit partitions kept ahead.
        AuditUpkeep,
        /// The audit exports' stuck-after time.
        AuditExports,
        /// Data requests: deadline, warning, keep.
        Requests,
    }
}

/// A part of the state: a domain's settings or handle, or one of the kernel's. Its type names
/// its own slot in [`Parts`]; `state.domain::<T>()` then reads that field. One type per slot
/// (`scripts/check-tables.py` checks that no two declare the same one).
pub trait Part: Any + Send + Sync {
    /// Which field of [`Parts`] holds it.
    type Slot: Slot;
}

/// A slot marker's field in [`Parts`].
pub trait Slot: Sized + 'static {
    fn of(parts: &Parts) -> &Held<Self>;
}

/// One slot's part, shared (the state is cloned several times per request: a clone is one
/// reference count). Made only from a part whose type names this slot, so the compiler checks
/// that each field holds its own part.
pub struct Held<S>(Arc<dyn Any + Send + Sync>, std::marker::PhantomData<fn() -> S>);

impl<S> Clone for Held<S> {
    fn clone(&self) -> Self {
        Held(self.0.clone(), std::marker::PhantomData)
    }
}

impl<S: Slot> Held<S> {
    pub fn new<P: Part<Slot = S>>(part: P) -> Self {
        Held(Arc::new(part), std::marker::PhantomData)
    }

    /// A part already shared (a registry the tests also keep).
    pub fn shared<P: Part<Slot = S>>(part: Arc<P>) -> Self {
        Held(part, std::marker::PhantomData)
    }

    /// The part. It was made from a `P` whose slot is `S`, and one type declares each slot, so
    /// the cast always succeeds; it is checked all the same.
    pub fn get<P: Part<Slot = S>>(&self) -> &P {
        match self.0.downcast_ref::<P>() {
            Some(part) => part,
            None => unreachable!("two types declare the slot {} (one per slot)", std::any::type_name::<S>()),
        }
    }

    /// The part, shared (for a stream that outlives the request).
    pub fn shared_part<P: Part<Slot = S>>(&self) -> Arc<P> {
        match self.0.clone().downcast::<P>() {
            Ok(part) => part,
            Err(_) => unreachable!("two types declare the slot {} (one per slot)", std::any::type_name::<S>()),
        }
    }
}

macro_rules! parts {
    ($($(#[$doc:meta])* $field:ident: $slot:ident),* $(,)?) => {
        /// What the state is composed of: every domain's settings and handles and the kernel's
        /// own, each a field the composition root (`server::build_state`) must fill — a part it
        /// forgets is a compile error, not a panic at run time.
        #[derive(Clone)]
        pub struct Parts {
            $($(#[$doc])* pub $field: Held<slot::$slot>,)*
        }
        $(impl Slot for slot::$slot {
            fn of(parts: &Parts) -> &Held<Self> {
                &parts.$field
            }
        })*
    };
}

parts! {
    http_limits: HttpLimits,
    prune: Prune,
    prune_dry_run: PruneDryRun,
    jobs: Jobs,
    admin_sessions: AdminSessions,
    file_events: FileEvents,
    hold_owners: HoldOwners,
    page_renderer: PageRenderer,
    personal_sources: PersonalSources,
    auth: Auth,
    contact: Contact,
    contact_writer: ContactWriter,
    inbox_export: InboxExport,
    notify: Notify,
    shares: Shares,
    audit_chain: AuditChain,
    audit_archive: AuditArchive,
    audit_upkeep: AuditUpkeep,
    audit_exports: AuditExports,
    requests: Requests,
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
    /// Each domain's settings and handles, and the kernel's.
    pub parts: Parts,
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
    /// A part of the state: a domain's settings or handle (see [`Parts`]).
    pub fn domain<T: Part>(&self) -> &T {
        T::Slot::of(&self.parts).get::<T>()
    }

    /// A part of the state, shared (see [`Held::shared_part`]).
    pub fn shared<T: Part>(&self) -> Arc<T> {
        T::Slot::of(&self.parts).shared_part::<T>()
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
