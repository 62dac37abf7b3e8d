//! Request bodies that arrive too slowly end their request (issue 54). The router's idle
//! timeout ([`crate::http::BODY_IDLE_TIMEOUT`]) bounds a *pause*; one byte every 29 s never
//! pauses that long, so:
//!
//! - a small body (every route but the two uploads: the contact form, server functions) must
//!   arrive whole within a deadline of the request's start (`EBB_SMALL_BODY_DEADLINE_SECS`, a
//!   minute: the contact form's 64 KiB needs no more);
//! - an upload must bring at least the configured minimum rate (`EBB_MIN_UPLOAD_BYTES_PER_SEC`)
//!   in every window (`EBB_UPLOAD_RATE_WINDOW_SECS`).
//!
//! A cut request is answered 408 with `Connection: close`, whatever the handler made of its
//! broken body, and counted; it is logged once per client network per ten minutes.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    task::{Context, Poll},
    time::Duration,
};

use app::state::AppState;
use axum::{
    body::Body,
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderValue, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// How a body is paced.
enum Rule {
    /// Whole by this time.
    Deadline(Pin<Box<Sleep>>),
    /// At least `min` bytes in each window (the timer ends the current one).
    Rate { min: u64, got: u64, window: Duration, window_end: Pin<Box<Sleep>> },
}

impl Rule {
    /// Whether the body broke its rule (polling the timer, so the task wakes when it would).
    fn broken(&mut self, cx: &mut Context<'_>) -> bool {
        match self {
            Rule::Deadline(at) => at.as_mut().poll(cx).is_ready(),
            Rule::Rate { min, got, window, window_end } => {
                while window_end.as_mut().poll(cx).is_ready() {
                    if *got < *min {
                        return true;
                    }
                    *got = 0;
                    window_end.as_mut().reset(Instant::now() + *window);
                }
                false
            }
        }
    }
}

/// A request body under a [`Rule`]; `cut` says it was ended for breaking it.
struct Paced {
    inner: Body,
    rule: Rule,
    cut: Arc<AtomicBool>,
    ended: bool,
}

#[derive(Debug)]
struct TooSlow;

impl std::fmt::Display for TooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived too slowly")
    }
}

impl std::error::Error for TooSlow {}

impl http_body::Body for Paced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        let next = Pin::new(&mut this.inner).poll_frame(cx);
        match next {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Rule::Rate { got, .. }) = (frame.data_ref(), &mut this.rule) {
                    *got += data.len() as u64;
                }
                if this.rule.broken(cx) {
                    return this.cut();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending if this.rule.broken(cx) => this.cut(),
            Poll::Ready(None) => {
                this.ended = true;
                Poll::Ready(None)
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Paced {
    fn cut(&mut self) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        self.cut.store(true, Ordering::Relaxed);
        self.ended = true;
        Poll::Ready(Some(Err(axum::Error::new(TooSlow))))
    }
}

/// The router's layer for small bodies: whole within the deadline.
pub async fn small_bodies(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let deadline = state.domain::<crate::http::Limits>().small_body_deadline;
    paced(req, next, Rule::Deadline(Box::pin(tokio::time::sleep(deadline)))).await
}

/// The router's layer for uploads: at least the minimum rate in each window.
pub async fn uploads(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limits = state.domain::<crate::http::Limits>();
    let min = (limits.min_upload_rate as f64 * limits.rate_window.as_secs_f64()) as u64;
    let window = limits.rate_window;
    paced(req, next, Rule::Rate { min, got: 0, window, window_end: Box::pin(tokio::time::sleep(window)) }).await
}

async fn paced(req: Request, next: Next, rule: Rule) -> Response {
    // A request without a body has nothing to pace.
    let bodiless = req.headers().get(header::CONTENT_LENGTH).is_some_and(|v| v.as_bytes() == b"0")
        || (req.headers().get(header::CONTENT_LENGTH).is_none()
            && req.headers().get(header::TRANSFER_ENCODING).is_none()
            && req.version() < axum::http::Version::HTTP_2);
    if bodiless {
        return next.run(req).await;
    }
    let lang = app::i18n::lang_of_headers(req.headers());
    let peer = req.extensions().get::<ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    let cut = Arc::new(AtomicBool::new(false));
    let req = req.map(|inner| Body::new(Paced { inner, rule, cut: cut.clone(), ended: false }));
    let res = next.run(req).await;
    if !cut.load(Ordering::Relaxed) {
        return res;
    }
    metrics::counter!("ebb_http_slow_bodies_cut_total").increment(1);
    if let Some(ip) = peer {
        if crate::http::first_in_a_while(ip) {
            tracing::warn!("a request body arrived too slowly and was cut (logged once per client network per ten minutes)");
        }
    }
    let text = app::i18n::Text::get(app::i18n::T::RequestTooSlow, lang);
    let mut res = (StatusCode::REQUEST_TIMEOUT, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response();
    res.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}
