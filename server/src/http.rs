//! The HTTP server loop: hyper (HTTP/1.1 and HTTP/2) with the limits a public server needs,
//! which `axum::serve` does not set (issue 54: slow clients must not exhaust the server).
//!
//! - A cap on open connections ([`Limits::max_connections`]) and one per client network
//!   ([`Limits::per_client`]; the machine itself — a local proxy — counts only against the
//!   total). A refused connection is closed at once, before a byte is read; the refusal is
//!   logged once per client per ten minutes, not per connection.
//! - A client that sends its request line and headers slowly (slowloris) is disconnected after
//!   [`HEADER_READ_TIMEOUT`]; hyper arms the same timer while a kept-alive connection waits for
//!   its next request, so an idle HTTP/1.1 connection ends then too.
//! - A connection with no byte in either direction for [`IDLE_TIMEOUT`] ends (a client that
//!   never sends its first byte, an idle HTTP/2 connection); HTTP/2 pings find dead peers and
//!   bound streams and header lists.
//! - Request bodies are paced by the router's layers ([`crate::pace`]): small bodies have a
//!   total deadline, uploads a minimum rate.
//!
//! Shutdown stops accepting, then lets open requests finish.

use std::{
    collections::HashMap,
    convert::Infallible,
    future::Future,
    net::IpAddr,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{extract::ConnectInfo, Router};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto::Builder, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

/// Longest time a client may take to send its request line and headers (also: the longest a
/// kept-alive HTTP/1.1 connection waits for its next request).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest pause inside a request body (the router's layer; uploads also have a minimum rate).
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest time a connection may pass without a byte read or written.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long open connections may take to finish after the shutdown signal.
const DRAIN: Duration = Duration::from_secs(30);
/// Largest request head (request line and headers) read into memory.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The connection limits (from the configuration; see `EBB_MAX_CONNECTIONS`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most connections open at once; beyond it new ones are closed at once.
    pub max_connections: usize,
    /// Most connections open at once from one client network (an IPv4 address, an IPv6 prefix
    /// of `ipv6_prefix` bits). Loopback clients count only against the total.
    pub per_client: usize,
    /// Bits of an IPv6 address that make one client (the rate limits' prefix).
    pub ipv6_prefix: u8,
    /// Slowest upload accepted, in bytes per second, averaged over `rate_window`.
    pub min_upload_rate: u64,
    /// The window an upload's minimum rate is measured over.
    pub rate_window: Duration,
    /// Longest time a small request body (every route but the uploads) may take to arrive.
    pub small_body_deadline: Duration,
}

impl app::state::Part for Limits {
    type Slot = app::state::slot::HttpLimits;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 10_000,
            per_client: 256,
            ipv6_prefix: 64,
            min_upload_rate: 4096,
            rate_window: Duration::from_secs(30),
            small_body_deadline: Duration::from_secs(60),
        }
    }
}

impl Limits {
    /// The total cap, lowered to what the process's file-descriptor limit allows (with room for
    /// the database pool, the store and the log).
    fn effective_max(&self) -> usize {
        let fds = rlimit::getrlimit(rlimit::Resource::NOFILE).map(|(soft, _)| soft).unwrap_or(1024);
        let room = (fds as usize).saturating_sub(128).max(16);
        self.max_connections.min(room)
    }
}

/// Raises the soft file-descriptor limit to the hard one (systemd's default soft limit is 1,024;
/// each connection is one descriptor). Returns the limit now in force.
pub fn raise_fd_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "could not raise the file-descriptor limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map(|(soft, _)| soft).unwrap_or(1024)
        }
    }
}

/// Open connections, in all and per client network.
struct Counts {
    limits: Limits,
    max: usize,
    open: Mutex<(usize, HashMap<String, usize>)>,
}

/// A connection's place in [`Counts`]; given back when the connection ends.
struct Slot {
    counts: Arc<Counts>,
    client: Option<String>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().unwrap_or_else(|e| e.into_inner());
        open.0 -= 1;
        if let Some(c) = &self.client {
            if let Some(n) = open.1.get_mut(c) {
                *n -= 1;
                if *n == 0 {
                    open.1.remove(c);
                }
            }
        }
        metrics::gauge!("ebb_http_connections_open").set(open.0 as f64);
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    Total,
    Client,
}

impl Counts {
    fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Counts { limits, max: limits.effective_max(), open: Mutex::new((0, HashMap::new())) })
    }

    /// Takes a slot for a connection from `ip`, or says which cap it is over.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refused> {
        let client = (!is_loopback(ip)).then(|| app::ratelimit::client_network(ip, self.limits.ipv6_prefix));
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.0 >= self.max {
            return Err(Refused::Total);
        }
        if let Some(c) = &client {
            let n = open.1.entry(c.clone()).or_insert(0);
            if *n >= self.limits.per_client {
                return Err(Refused::Client);
            }
            *n += 1;
        }
        open.0 += 1;
        metrics::gauge!("ebb_http_connections_open").set(open.0 as f64);
        Ok(Slot { counts: self.clone(), client })
    }

    /// Logs a refusal once per client network per ten minutes (the address itself is personal
    /// data: only its network, and the counter, are kept).
    fn note_refusal(&self, ip: IpAddr, why: Refused) {
        let (reason, cap) = match why {
            Refused::Total => ("total", self.max),
            Refused::Client => ("client", self.limits.per_client),
        };
        metrics::counter!("ebb_http_connections_refused_total", "cap" => reason).increment(1);
        if !first_in_a_while(ip) {
            return;
        }
        match why {
            Refused::Total => tracing::warn!(cap, "connection refused: the server has as many open connections as EBB_MAX_CONNECTIONS allows"),
            Refused::Client => {
                tracing::warn!(cap, "connection refused: one client network has as many open connections as EBB_MAX_CONNECTIONS_PER_CLIENT allows")
            }
        }
    }
}

/// Whether a refusal or cut from `ip`'s network is the first in ten minutes (what is logged:
/// a flood of refusals is one line per client, and the counters carry the rest).
pub fn first_in_a_while(ip: IpAddr) -> bool {
    static LOGGED: std::sync::LazyLock<Mutex<HashMap<String, Instant>>> = std::sync::LazyLock::new(Default::default);
    let network = app::ratelimit::client_network(ip, 64);
    let mut logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    if logged.get(&network).is_some_and(|at| now.duration_since(*at) < Duration::from_secs(600)) {
        return false;
    }
    if logged.len() > 10_000 {
        logged.clear();
    }
    logged.insert(network, now);
    true
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// Serves `app` on `listener` until `shutdown` resolves. Each request carries the peer's address
/// (`ConnectInfo<SocketAddr>`).
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT).max_buf_size(MAX_HEAD_BYTES.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20))
        .max_concurrent_streams(100)
        .max_header_list_size(MAX_HEAD_BYTES as u32)
        .max_pending_accept_reset_streams(50);
    let counts = Counts::new(limits);
    tracing::debug!(max_connections = counts.max, per_client = limits.per_client, "connection limits");
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let slot = match counts.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(why) => {
                // Closed before a byte is read: the cheapest refusal there is.
                drop(stream);
                counts.note_refusal(peer.ip(), why);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = tower::service_fn(move |mut req: axum::extract::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.oneshot(req.map(axum::body::Body::new)).await.unwrap_or_else(|e| match e {})) }
        });
        let io = TokioIo::new(Idle::new(stream, IDLE_TIMEOUT));
        let conn = builder.serve_connection_with_upgrades(io, TowerToHyperService::new(service)).into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _slot = slot;
            // A client that goes away or sends garbage ends its own connection: not our error.
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open {} s after shutdown; closing them", DRAIN.as_secs());
    }
    Ok(())
}

/// A socket that fails with `TimedOut` once no byte went either way for its timeout.
struct Idle {
    inner: TcpStream,
    timeout: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Idle {
    fn new(inner: TcpStream, timeout: Duration) -> Self {
        Idle { inner, timeout, timer: Box::pin(tokio::time::sleep(timeout)) }
    }

    fn active(&mut self) {
        let at = tokio::time::Instant::now() + self.timeout;
        self.timer.as_mut().reset(at);
    }

    /// On a pending read or write: whether the connection has been idle too long.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.timer.as_mut().poll(cx).is_ready()
    }

    /// A write's outcome: bytes written count as activity; a pending write of an idle connection
    /// fails.
    fn wrote(&mut self, cx: &mut Context<'_>, polled: Poll<std::io::Result<usize>>) -> Poll<std::io::Result<usize>> {
        match polled {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.active();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            other => other,
        }
    }
}

fn idle_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "connection idle")
}

impl AsyncRead for Idle {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.active();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            other => other,
        }
    }
}

impl AsyncWrite for Idle {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(cx, polled)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_client: usize) -> Limits {
        Limits { max_connections: max, per_client, ..Limits::default() }
    }

    #[test]
    fn a_client_network_is_capped_and_its_slots_come_back() {
        let counts = Counts::new(limits(100, 3));
        let a: IpAddr = "203.0.113.7".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b_same_64: IpAddr = "2001:db8:1:2::ffff".parse().unwrap();
        let held: Vec<Slot> = (0..3).map(|_| counts.admit(a).unwrap()).collect();
        assert_eq!(counts.admit(a).err(), Some(Refused::Client));
        let v6: Vec<Slot> = (0..3).map(|_| counts.admit(b).unwrap()).collect();
        assert_eq!(counts.admit(b_same_64).err(), Some(Refused::Client), "one /64 is one client");
        drop(held);
        assert!(counts.admit(a).is_ok(), "closed connections give their slots back");
        drop(v6);
        assert!(counts.open.lock().unwrap().1.len() <= 1, "no empty entries kept");
    }

    #[test]
    fn the_total_caps_everyone_and_loopback_counts_only_there() {
        let counts = Counts::new(limits(20, 2));
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let held: Vec<Slot> = (0..20).map(|_| counts.admit(local).unwrap()).collect();
        assert_eq!(counts.admit(local).err(), Some(Refused::Total));
        assert_eq!(counts.admit("198.51.100.1".parse().unwrap()).err(), Some(Refused::Total));
        drop(held);
        assert!(counts.admit("198.51.100.1".parse().unwrap()).is_ok());
    }
}
