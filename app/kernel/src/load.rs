//! How busy the server is with requests, for background work that yields to them: prune rests
//! longer between its batches while requests keep coming (`make bench`'s lifecycle figures).
//! One relaxed atomic increment per request, counted by the HTTP metrics layer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static STARTED: AtomicU64 = AtomicU64::new(0);

/// At or above this many requests per second the server counts as busy.
pub const BUSY_PER_SECOND: f64 = 50.0;

/// Counts one request (called as each request starts).
pub fn request_started() {
    STARTED.fetch_add(1, Ordering::Relaxed);
}

/// A stretch of time over which requests are counted.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    started: u64,
    at: Instant,
}

impl Window {
    /// Starts counting now.
    pub fn start() -> Self {
        Window { started: STARTED.load(Ordering::Relaxed), at: Instant::now() }
    }

    /// Requests per second since the window started.
    pub fn per_second(&self) -> f64 {
        let requests = STARTED.load(Ordering::Relaxed).saturating_sub(self.started);
        requests as f64 / self.at.elapsed().as_secs_f64().max(1e-3)
    }

    /// True when requests came at [`BUSY_PER_SECOND`] or more since the window started.
    pub fn busy(&self) -> bool {
        self.per_second() >= BUSY_PER_SECOND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_the_requests_started_after_it() {
        request_started();
        let window = Window::start();
        assert_eq!(window.per_second(), 0.0, "a request before the window does not count");
        for _ in 0..1000 {
            request_started();
        }
        // 1,000 requests within well under a second (the window's elapsed time is at most what
        // this test took): far above the busy threshold.
        assert!(window.busy(), "{} per second", window.per_second());
        std::thread::sleep(std::time::Duration::from_millis(30));
        let quiet = Window::start();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!quiet.busy(), "no request since: {} per second", quiet.per_second());
    }
}
