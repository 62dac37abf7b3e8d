//! The HTTP server loop: hyper (HTTP/1.1 and HTTP/2) with the timeouts a public server needs,
//! which `axum::serve` does not set. A client that sends its request headers slowly (slowloris)
//! is disconnected after [`HEADER_READ_TIMEOUT`]; a body that stalls for [`BODY_IDLE_TIMEOUT`]
//! ends its request (the router's layer). Shutdown stops accepting, then lets open requests
//! finish.

use std::{convert::Infallible, future::Future, time::Duration};

use axum::{extract::ConnectInfo, Router};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto::Builder, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Longest time a client may take to send its request line and headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest pause inside a request body (uploads stream: a pause, not the total, is bounded).
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long open connections may take to finish after the shutdown signal.
const DRAIN: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `shutdown` resolves. Each request carries the peer's address
/// (`ConnectInfo<SocketAddr>`).
pub async fn serve(listener: TcpListener, app: Router, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    builder.http2().timer(TokioTimer::new());
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
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = tower::service_fn(move |mut req: axum::extract::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.oneshot(req.map(axum::body::Body::new)).await.unwrap_or_else(|e| match e {})) }
        });
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service)).into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A client that goes away or sends garbage ends its own connection: not our error.
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open {} s after shutdown; closing them", DRAIN.as_secs());
    }
    Ok(())
}
