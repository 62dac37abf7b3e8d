//! Server-side application state, handed to routes (axum `State`) and server functions (context).

use std::{future::Future, net::IpAddr, sync::Arc, time::Duration};

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::PgPool;
use tokio_util::task::TaskTracker;

use crate::maintenance::prune::PruneStep;
use crate::ratelimit::Limit;

/// Settings the app needs at run time; the server builds it from validated configuration.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// How many reverse proxies in front of Ebb append to `X-Forwarded-For`; 0 means the header
    /// is ignored and the peer address is the client.
    pub trusted_proxy_hops: usize,
    /// Contact submissions allowed per client per window.
    pub contact_limit: Limit,
    /// Largest file a share may hold, in bytes.
    pub share_max_bytes: u64,
    /// Longest expiry an admin may choose for a share, in hours (at most 720).
    pub share_max_expiry_hours: u32,
    /// The share GC's timing (delivery grace, retry backoff).
    pub share_gc: crate::shares::gc::GcRules,
    /// How long a best-effort background task may run before it is abandoned.
    pub background_timeout: Duration,
    /// Rows deleted per statement by prune (each batch is its own short transaction).
    pub prune_batch_size: i64,
    /// Batches per step per run; the rest waits for the next run.
    pub prune_max_batches: u32,
    /// The public origin (`http://localhost:3000`), without a trailing slash.
    pub public_url: String,
    /// A session unused this long ends (tower-sessions' inactivity expiry).
    pub session_idle: Duration,
    /// A session ends this long after sign-in, however active.
    pub session_absolute: Duration,
    /// Per-client limit of each authentication endpoint.
    pub auth_limit: Limit,
    /// Limit of each authentication endpoint over all clients together.
    pub auth_total_limit: Limit,
}

impl AppConfig {
    /// The bounds and clock of one prune run.
    pub fn prune_ctx(&self, now: time::OffsetDateTime) -> crate::maintenance::prune::PruneCtx {
        crate::maintenance::prune::PruneCtx {
            now,
            batch_size: self.prune_batch_size,
            max_batches: self.prune_max_batches,
            session_absolute: self.session_absolute,
        }
    }
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            trusted_proxy_hops: 0,
            contact_limit: Limit { name: "contact", max: 5, window: Duration::from_secs(600) },
            share_max_bytes: 1 << 30,
            share_max_expiry_hours: crate::shares::MAX_EXPIRY_HOURS,
            share_gc: Default::default(),
            background_timeout: Duration::from_secs(60),
            prune_batch_size: 1000,
            prune_max_batches: 200,
            public_url: "http://localhost:3000".into(),
            session_idle: Duration::from_secs(12 * 3600),
            session_absolute: Duration::from_secs(7 * 24 * 3600),
            auth_limit: Limit { name: "auth", max: 20, window: Duration::from_secs(300) },
            auth_total_limit: Limit { name: "auth", max: 300, window: Duration::from_secs(300) },
        }
    }
}

/// Everything a request handler may need.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub pool: PgPool,
    pub config: Arc<AppConfig>,
    pub background: Background,
    /// The prune job's steps; tests swap in a failing one to prove prune is best-effort.
    pub prune_steps: Arc<Vec<PruneStep>>,
    /// The WebAuthn relying party (id and origin from the public URL).
    pub webauthn: Arc<webauthn_rs::Webauthn>,
    /// Epoch milliseconds before which traffic-triggered prune need not ask for its claim (see
    /// `maintenance::api::prune_in_background`).
    pub prune_hint: crate::maintenance::claim::ClaimHint,
    /// The same for the traffic-triggered share GC.
    #[from_ref(skip)]
    pub share_gc_hint: crate::maintenance::claim::ClaimHint,
    /// Where shared files are stored.
    pub blobs: Arc<dyn crate::storage::BlobStore>,
    /// Counters of the CSV export (queries issued, rows written).
    pub export_metrics: Arc<crate::inbox::export::ExportMetrics>,
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
        let timeout = self.timeout;
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
pub fn client_ip(headers: &axum::http::HeaderMap, peer: Option<IpAddr>, trusted_proxy_hops: usize) -> Option<IpAddr> {
    if trusted_proxy_hops == 0 {
        return peer;
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    // With N trusted proxies, the last N-1 entries are proxies and the N-th from the right is
    // the client as seen by the outermost proxy.
    forwarded
        .len()
        .checked_sub(trusted_proxy_hops)
        .and_then(|i| forwarded.get(i))
        .and_then(|s| s.parse().ok())
        .or(peer)
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
