//! Lazily loaded routes — the admin pages, and the public pages but `/`: in the browser, their
//! code is in separate wasm modules fetched when a page is first opened (directly, or by
//! navigation), so the public pages (`/`, `/s/{token}`, `/signin`, `/invite/{token}`) never
//! download the admin UI, and `/` carries only the contact form. On the server they render as
//! before.
//!
//! Which page goes into which module is chosen here, not per page: the splitter puts the code two
//! modules both use into a chunk of its own, one chunk for every set of modules that shares code,
//! so thirteen modules (one per page, as `#[lazy_route]` makes them) came to 296 chunks, and a
//! visitor's `/s/{token}` fetched 70 of them before it could hydrate. Each public page is a module
//! (a visitor gets only the page they opened); the admin pages are one (an admin who opens one
//! opens the others next, and then has them at once): 21 modules and chunks, `/s/{token}` 10.

use leptos::prelude::*;
use leptos_router::LazyRoute;

/// A lazily loaded route: `$route`'s view is the split point `$view`, in the wasm module
/// `$module` (every split point naming the same module is in it), and `$preload` fetches that
/// module without rendering (the router calls it, e.g. on a link's hover).
macro_rules! lazy_route {
    ($(#[$doc:meta])* $route:ident in $module:ident: $view:ident, $preload:ident => $page:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $route;

        #[::leptos::wasm_split::wasm_split($module, wasm_split_path = ::leptos::wasm_split, preload(#[doc(hidden)] $preload))]
        fn $view(_route: $route) -> AnyView {
            $page.into_any()
        }

        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }
            async fn view(this: Self) -> AnyView {
                $view(this).await
            }
            async fn preload() {
                $preload().await
            }
        }
    };
}

lazy_route! {
    /// The frame around every admin page (navigation, who is signed in, the alert banner, the
    /// live stream).
    AdminLayoutRoute in ebb_admin: admin_layout_view, preload_admin_layout => crate::pages::AdminLayout()
}
lazy_route! {
    /// `/admin`.
    DashboardRoute in ebb_admin: dashboard_view, preload_dashboard => crate::pages::DashboardPage()
}
lazy_route! {
    /// `/admin/inbox`.
    InboxRoute in ebb_admin: inbox_view, preload_inbox => contact::inbox::ui::InboxPage()
}
lazy_route! {
    /// `/admin/shares`.
    SharesRoute in ebb_admin: shares_view, preload_shares => shares::ui::SharesPage()
}
lazy_route! {
    /// `/admin/audit`.
    AuditRoute in ebb_admin: audit_view, preload_audit => audit::ui::AuditPage()
}
lazy_route! {
    /// `/admin/audit/archive`.
    ArchiveRoute in ebb_admin: archive_view, preload_archive => audit::ui::ArchivePage()
}
lazy_route! {
    /// `/admin/retention`.
    RetentionRoute in ebb_admin: retention_view, preload_retention => crate::retention::ui::RetentionPage()
}
lazy_route! {
    /// `/admin/requests`.
    RequestsRoute in ebb_admin: requests_view, preload_requests => requests::ui::RequestsPage()
}
lazy_route! {
    /// `/admin/requests/{id}`.
    RequestRoute in ebb_admin: request_view, preload_request => requests::ui::RequestPage()
}
lazy_route! {
    /// `/admin/settings`.
    SettingsRoute in ebb_admin: settings_view, preload_settings => maintenance::ui::SettingsPage()
}
lazy_route! {
    /// `/admin/account`.
    AccountRoute in ebb_admin: account_view, preload_account => auth::ui::AccountPage()
}

// The public pages other than `/`, one module each: the contact form (the first visit) carries
// neither passkeys nor the share page, and a share's recipient does not get the sign-in page.

lazy_route! {
    /// `/signin`.
    SignInRoute in ebb_signin: sign_in_view, preload_sign_in => auth::ui::SignInPage()
}
lazy_route! {
    /// `/invite/{token}`.
    InviteRoute in ebb_invite: invite_view, preload_invite => auth::ui::InvitePage()
}
lazy_route! {
    /// `/s/{token}`.
    ShareRoute in ebb_share: share_view, preload_share => shares::ui::SharePage()
}
lazy_route! {
    /// `/r/{token}`: a file request's upload page.
    FileRequestRoute in ebb_file_request: file_request_view, preload_file_request => shares::ui::RequestUploadPage()
}
lazy_route! {
    /// `/retention`: the promises, for visitors.
    PublicRetentionRoute in ebb_public_retention: public_retention_view, preload_public_retention => crate::retention::ui::PublicRetentionPage()
}
