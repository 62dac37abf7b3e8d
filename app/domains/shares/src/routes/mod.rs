//! The shares domain's plain routes: the one-time download (`POST /s/{token}`, and the resume of a
//! broken one through [`resume_gate`]), the admin's upload (`POST /api/admin/shares/upload`), the
//! visitor's upload to a file request (`POST /r/{token}`) and the admin's download of a received
//! file. Their rules are this crate's (`lifecycle`, `receipts`, `download`, `requests`); the
//! pages for the same URLs are in `ui`.

pub mod deliver;
pub mod received;
pub mod uploads;

use axum::routing::{get, post};
use common::admin::Role;
use kernel::http::Routes;

pub use deliver::resume_gate;
pub use uploads::{FORM_OVERHEAD, UPLOAD_PATH};

/// The routes with small bodies (the server's general body limit).
pub fn routes() -> Routes {
    Routes::new()
        // GET /s/{token} is the share page (a Leptos route); the POST downloads.
        .public("/s/{token}", post(deliver::download))
        // A received file, for the admin (it stays until it expires).
        .admin(Role::Admin, "/admin/shares/{id}/file", get(received::admin_file))
}

/// The upload routes: the server gives them their own body limit (the largest share, plus the
/// form) and minimum rate. GET /r/{token} is the uploader's page (a Leptos route); the POST
/// uploads.
pub fn upload_routes() -> Routes {
    Routes::new().admin(Role::Admin, UPLOAD_PATH, post(uploads::upload)).public("/r/{token}", post(received::upload))
}
