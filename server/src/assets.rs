//! The client's files and response compression.
//!
//! `scripts/build-client.sh` writes the wasm, its JS and the stylesheet into
//! `<site root>/pkg/<hash>/` (the hash of their contents, named in `pkg/ASSETS`) with `.br` and
//! `.gz` copies. A hashed URL never changes content, so it is cached for a year (`immutable`);
//! anything else under `/pkg` is revalidated. Pages and JSON are compressed on the fly; downloads
//! (share files, CSV exports, signed blobs — all sent as attachments) never are: they are large or
//! compressed already, and keep their `Content-Length` and streaming.

use std::path::Path;

use axum::{
    extract::Request,
    http::{header, Extensions, HeaderMap, HeaderValue, StatusCode, Version},
    middleware::Next,
    response::Response,
};
use leptos::config::LeptosOptions;
use tower_http::services::ServeDir;

/// Length of the hash in an asset folder's name.
const HASH_LEN: usize = 16;

fn is_hash(s: &str) -> bool {
    s.len() == HASH_LEN && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The URL folder of the client's files: `pkg/<hash>` when the build wrote one, else `pkg`.
pub fn pkg_dir(site_root: &Path) -> String {
    match std::fs::read_to_string(site_root.join("pkg/ASSETS")) {
        Ok(hash) if is_hash(hash.trim()) && site_root.join("pkg").join(hash.trim()).is_dir() => format!("pkg/{}", hash.trim()),
        _ => "pkg".to_string(),
    }
}

/// Serves `<site root>/pkg`, choosing the precompressed copy the client accepts.
pub fn pkg_service(options: &LeptosOptions) -> ServeDir {
    ServeDir::new(Path::new(options.site_root.as_ref()).join("pkg")).precompressed_br().precompressed_gzip()
}

/// Longest name of one path segment the file systems Ebb runs on take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// Refuses, as not found, a path the file system could not even look up: a segment longer than
/// [`NAME_MAX`] makes the lookup fail with "file name too long", which `ServeDir` answers with a
/// 500 (and an ERROR line) for what is a client's mistake.
pub async fn refuse_impossible_names(req: Request, next: Next) -> Response {
    if req.uri().path().split('/').any(|segment| segment.len() > NAME_MAX) {
        let mut res = Response::new(axum::body::Body::from("Not found"));
        *res.status_mut() = StatusCode::NOT_FOUND;
        return res;
    }
    next.run(req).await
}

/// `Cache-Control` of the client's files: a year for hashed URLs, revalidation for the rest.
pub async fn cache_control(req: Request, next: Next) -> Response {
    // Only the client's files are looked at: a page's path is not copied.
    let Some(hashed) = req.uri().path().strip_prefix("/pkg/").map(|rest| rest.split_once('/').is_some_and(|(dir, _)| is_hash(dir))) else {
        return next.run(req).await;
    };
    let mut res = next.run(req).await;
    let value = if hashed && res.status() == StatusCode::OK { "public, max-age=31536000, immutable" } else { "no-cache" };
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    res
}

/// Whether a response is compressed on the fly: pages and JSON only, never an attachment.
pub fn compressible(_: StatusCode, _: Version, headers: &HeaderMap, _: &Extensions) -> bool {
    if headers.contains_key(header::CONTENT_DISPOSITION) || headers.contains_key(header::CONTENT_ENCODING) {
        return false;
    }
    let kind = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    kind.starts_with("text/html") || kind.starts_with("application/json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pages_and_json_are_compressed_on_the_fly() {
        let with = |pairs: &[(header::HeaderName, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
            }
            compressible(StatusCode::OK, Version::HTTP_11, &h, &Extensions::new())
        };
        assert!(with(&[(header::CONTENT_TYPE, "text/html; charset=utf-8")]));
        assert!(with(&[(header::CONTENT_TYPE, "application/json")]));
        assert!(!with(&[(header::CONTENT_TYPE, "text/html"), (header::CONTENT_DISPOSITION, "attachment; filename=\"a.html\"")]));
        assert!(!with(&[(header::CONTENT_TYPE, "text/csv; charset=utf-8"), (header::CONTENT_DISPOSITION, "attachment")]));
        assert!(!with(&[(header::CONTENT_TYPE, "application/wasm")]));
        assert!(!with(&[]));
        assert!(is_hash("0123456789abcdef") && !is_hash("0123456789ABCDEF") && !is_hash("pkg") && !is_hash("0123456789abcdef0"));
    }
}
