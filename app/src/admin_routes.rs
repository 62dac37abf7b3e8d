//! Lazily loaded routes — the admin pages, and the public pages but `/`: in the browser, each
//! page's code is a separate wasm chunk fetched when the page is first opened (directly, or by
//! navigation), so the public pages (`/`, `/s/{token}`, `/signin`, `/invite/{token}`) never
//! download the admin UI, and `/` carries only the contact form. On the server
//! they render as before. Each route is written out (no macro): the split manifest keys a chunk
//! by the source position of its `#[lazy_route]`.

use leptos::prelude::*;
use leptos_router::{lazy_route, LazyRoute};

/// The frame around every admin page (navigation, who is signed in, the alert banner, the live
/// stream): a chunk of its own too, so a visitor's first visit does not carry it.
#[derive(Debug)]
pub struct AdminLayoutRoute;

#[lazy_route]
impl LazyRoute for AdminLayoutRoute {
    fn data() -> Self {
        AdminLayoutRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::pages::AdminLayout().into_any()
    }
}

/// `/admin`.
#[derive(Debug)]
pub struct DashboardRoute;

#[lazy_route]
impl LazyRoute for DashboardRoute {
    fn data() -> Self {
        DashboardRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::pages::DashboardPage().into_any()
    }
}

/// `/admin/inbox`.
#[derive(Debug)]
pub struct InboxRoute;

#[lazy_route]
impl LazyRoute for InboxRoute {
    fn data() -> Self {
        InboxRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::inbox::ui::InboxPage().into_any()
    }
}

/// `/admin/shares`.
#[derive(Debug)]
pub struct SharesRoute;

#[lazy_route]
impl LazyRoute for SharesRoute {
    fn data() -> Self {
        SharesRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::shares::ui::SharesPage().into_any()
    }
}

/// `/admin/audit`.
#[derive(Debug)]
pub struct AuditRoute;

#[lazy_route]
impl LazyRoute for AuditRoute {
    fn data() -> Self {
        AuditRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::audit::ui::AuditPage().into_any()
    }
}

/// `/admin/audit/archive`.
#[derive(Debug)]
pub struct ArchiveRoute;

#[lazy_route]
impl LazyRoute for ArchiveRoute {
    fn data() -> Self {
        ArchiveRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::audit::ui::ArchivePage().into_any()
    }
}

/// `/admin/retention`.
#[derive(Debug)]
pub struct RetentionRoute;

#[lazy_route]
impl LazyRoute for RetentionRoute {
    fn data() -> Self {
        RetentionRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::retention::ui::RetentionPage().into_any()
    }
}

/// `/admin/settings`.
#[derive(Debug)]
pub struct SettingsRoute;

#[lazy_route]
impl LazyRoute for SettingsRoute {
    fn data() -> Self {
        SettingsRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::maintenance::ui::SettingsPage().into_any()
    }
}

/// `/admin/account`.
#[derive(Debug)]
pub struct AccountRoute;

#[lazy_route]
impl LazyRoute for AccountRoute {
    fn data() -> Self {
        AccountRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::auth::ui::AccountPage().into_any()
    }
}

// The public pages other than `/` load their own code on demand too: the contact form (the
// first visit) carries neither passkeys nor the share page.

/// `/signin`.
#[derive(Debug)]
pub struct SignInRoute;

#[lazy_route]
impl LazyRoute for SignInRoute {
    fn data() -> Self {
        SignInRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::auth::ui::SignInPage().into_any()
    }
}

/// `/invite/{token}`.
#[derive(Debug)]
pub struct InviteRoute;

#[lazy_route]
impl LazyRoute for InviteRoute {
    fn data() -> Self {
        InviteRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::auth::ui::InvitePage().into_any()
    }
}

/// `/s/{token}`.
#[derive(Debug)]
pub struct ShareRoute;

#[lazy_route]
impl LazyRoute for ShareRoute {
    fn data() -> Self {
        ShareRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::shares::ui::SharePage().into_any()
    }
}

/// `/retention`: the promises, for visitors.
#[derive(Debug)]
pub struct PublicRetentionRoute;

#[lazy_route]
impl LazyRoute for PublicRetentionRoute {
    fn data() -> Self {
        PublicRetentionRoute
    }
    fn view(_this: Self) -> AnyView {
        crate::retention::ui::PublicRetentionPage().into_any()
    }
}
