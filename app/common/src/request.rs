//! The current request, as the server renders a page or runs a server function.

/// Runs `f` on the current request's parts (method, URI, headers, extensions) where they are,
/// or returns `None` outside a request. Leptos' `use_context` would clone them all, header map
/// and extensions included, on every call; the contact form's path asked four times per
/// submission. `f` must not use the reactive context itself: the owner's lock is held while it
/// runs.
pub fn with_parts<R>(f: impl FnOnce(&axum::http::request::Parts) -> R) -> Option<R> {
    leptos::prelude::with_context(f)
}
