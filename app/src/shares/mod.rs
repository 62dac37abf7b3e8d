//! One-time file shares (seed 002). So far: the lifecycle (conditional transitions) and the
//! self-healing GC; upload, landing page, download and the admin list come next.

#[cfg(feature = "ssr")]
pub mod gc;
#[cfg(feature = "ssr")]
pub mod lifecycle;
