//! Ebb's Leptos application: pages, components and server functions. Server-only code sits
//! behind the `ssr` feature; the browser build uses `hydrate`.
#![recursion_limit = "256"]

mod admin_routes; // lazily loaded routes (admin pages, and the public pages but `/`)
#[cfg(feature = "ssr")]
pub mod jobs;
pub mod pages;
pub mod retention;

// The server and the tests reach every part through the composition root.
pub use common;
pub use common::{error, i18n, prefs, time, ui};
/// The admins' inbox is contact's (the inquiries it reads are contact's table).
pub use contact::inbox;
#[cfg(feature = "ssr")]
pub use contact::notify;
#[cfg(feature = "ssr")]
pub use kernel;
#[cfg(feature = "ssr")]
pub use kernel::{alerts, csv_export, live, ratelimit, request as server, settings, state, storage, token};
pub use {audit, auth, contact, holds, maintenance, requests, shares};

/// Every kind of data that can hold a person's address, in the order data requests list and
/// erase them (one entry per domain's `kernel::personal::PersonalData`).
#[cfg(feature = "ssr")]
pub fn personal_sources() -> kernel::personal::PersonalSources {
    kernel::personal::PersonalSources::new(vec![
        contact::inquiries_personal::source(),
        contact::inquiries_personal::spam_source(),
        holds::personal::source(),
        contact::personal::source(),
        requests::personal::source(),
    ])
}

/// The owners of the rows a legal hold keeps: holds sets and recomputes their `held` flags
/// through them.
#[cfg(feature = "ssr")]
pub fn hold_owners() -> kernel::holds::HoldOwners {
    kernel::holds::HoldOwners { inquiries: std::sync::Arc::new(contact::held::Flags), shares: std::sync::Arc::new(shares::held::Flags) }
}

/// Every domain's plain routes (downloads, uploads, the public audit files): what is neither a
/// page nor a server function, each with whether it needs an admin session. The server layers
/// and serves them; the gate test walks their list.
#[cfg(feature = "ssr")]
pub fn plain_routes() -> kernel::http::Routes {
    kernel::http::Routes::new()
        .merge(contact::routes::routes())
        .merge(audit::routes::routes())
        .merge(requests::routes::routes())
        .merge(retention::routes::routes())
        .merge(shares::routes::routes())
}

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::{
    components::{ParentRoute, Route, Router, Routes},
    path, Lazy, SsrMode,
};

/// The HTML document around the app (server side only renders it).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    set_content_security_policy();
    // The chosen colour scheme is on the root element from the first byte: no flash.
    #[cfg(feature = "ssr")]
    let theme = match prefs::theme_of_request() {
        prefs::Theme::Auto => None,
        chosen => Some(chosen.as_str()),
    };
    #[cfg(not(feature = "ssr"))]
    let theme: Option<&str> = None;
    // The home page, a recipient's share page and the dashboard hydrate when first used (see
    // `InlineClientScript`), the sign-in page has a small script of its own, and every other page
    // hydrates as soon as it loads.
    #[cfg(feature = "ssr")]
    let client = common::request::with_parts(|p| client_of(p.uri.path())).unwrap_or(Client::Eager);
    #[cfg(not(feature = "ssr"))]
    let client = Client::Eager;
    let stylesheet = format!("/{}/ebb.css", options.site_pkg_dir);
    let scripts = match client {
        Client::Eager => view! { <HydrationScripts options/> }.into_any(),
        Client::OnFirstUse => view! { <InlineClientScript options script=include_str!("hydrate_on_first_use.js")/> }.into_any(),
        Client::DashboardOnFirstUse => {
            let more = vec![common::live::PATH.to_string()];
            view! { <InlineClientScript options script=include_str!("dashboard_on_first_use.js") more/> }.into_any()
        }
        Client::SignIn => view! { <InlineClientScript options script=auth::SIGNIN_JS/> }.into_any(),
    };
    let page = view! {
        <!DOCTYPE html>
        <html lang=i18n::lang().code() data-theme=theme>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <link rel="icon" href="data:,"/>
                <meta name="description" content=i18n::t(i18n::T::MetaDescription)/>
                // In the shell (rendered by the server only): the folder carries the assets' hash.
                <link rel="stylesheet" href=stylesheet/>
                {scripts}
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    };
    #[cfg(feature = "ssr")]
    no_chunk_preloads();
    page
}

/// How a page gets its client (the shell is rendered by the server only).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "ssr"), allow(dead_code))]
enum Client {
    /// Hydrated as soon as it loads (`HydrationScripts`): the admin pages but the dashboard, the
    /// invite page, a file request's upload page.
    Eager,
    /// Hydrated when first used (`InlineClientScript`): the home page, and a recipient's share
    /// page `/s/{token}` (its download is a plain form; the client only adds the "download
    /// started" note). Both are what a visitor who never signs in sees.
    OnFirstUse,
    /// Hydrated when first used, or when an inquiry, a share or a setting changes (a job's run
    /// alone waits for the first use): the dashboard, opened by a page load (after signing in,
    /// or directly). Rendered with its data, its reading and its links need no client;
    /// `dashboard_on_first_use.js` follows the live stream until the client's takes over and
    /// holds a button pressed before the client until it can act. The admin who only looks
    /// downloads no wasm (the 1 MB of the admin client came with every dashboard before).
    DashboardOnFirstUse,
    /// Never hydrated: `/signin` runs its passkey ceremony in a script of a few KB
    /// (`auth::SIGNIN_JS`), so an admin about to sign in does not wait for the app's client.
    /// Every way to the page is a full page load (sign-out, the admin gate's redirect).
    SignIn,
}

#[cfg(feature = "ssr")]
fn client_of(path: &str) -> Client {
    if path == "/" || path.starts_with("/s/") {
        Client::OnFirstUse
    } else if path == "/signin" {
        Client::SignIn
    } else if path == "/admin" || path == "/admin/" {
        Client::DashboardOnFirstUse
    } else {
        Client::Eager
    }
}

/// The client's JS glue and main wasm module, as `HydrationScripts` names them.
fn client_urls(options: &LeptosOptions) -> (String, String) {
    let pkg = format!("/{}", options.site_pkg_dir);
    let name = options.output_name.to_string();
    // As `HydrationScripts`: the wasm is `<name>_bg.wasm` unless the build named it.
    let wasm_suffix = if std::option_env!("LEPTOS_OUTPUT_NAME").is_none() { "_bg" } else { "" };
    (format!("{pkg}/{name}.js"), format!("{pkg}/{name}{wasm_suffix}.wasm"))
}

/// A page's client as one inline module script (under the response's nonce): `script` is a JS
/// function expression, called with the URLs of the client's JS glue and main wasm module, and
/// `more` (a list of strings, empty unless given; what each script reads in it is below).
/// - the sign-in page's (`auth::SIGNIN_JS`): the passkey ceremony, and no wasm at all, not even
///   prefetched: the dashboard that follows works before its client and gets it on first use
///   (an earlier prefetch of the whole admin client, about 1 MB brotli, made signing in cost
///   more than the 150 KB that an interactive dashboard needs);
/// - the home and share pages' (`hydrate_on_first_use.js`): the client (its JS glue and the main
///   wasm module, nearly all of it Leptos' runtime) is fetched on the visitor's first pointer,
///   touch, key or focus, not with the page and with no preload hint. The page works before
///   (and without) it: the contact form and the language switch are HTML forms, the fields keep
///   what was typed when it hydrates (`contact::ui`). Same files and entry point as Leptos'
///   `HydrationScripts`;
/// - the dashboard's (`dashboard_on_first_use.js`): the same, and until the client is there it
///   follows the live stream (its path in `more`) and holds a pressed button (see the script).
#[component]
fn InlineClientScript(options: LeptosOptions, script: &'static str, #[prop(optional)] more: Vec<String>) -> impl IntoView {
    let nonce = leptos::nonce::use_nonce();
    let (js, wasm) = client_urls(&options);
    // The URLs are the server's own paths (no quote or `<`): Rust's `{:?}` writes them as JS strings.
    view! {
        <script type="module" nonce=nonce>
            {format!("{script}({js:?}, {wasm:?}, {more:?});")}
        </script>
    }
}

/// A lazily loaded page's wasm module and shared chunks are fetched by the client when it needs
/// them, not hinted in the HTML: the hints compete with the page's own HTML and stylesheet and
/// with the main module for the visitor's connection (when every page was a module of its own and
/// a page 40 to 150 chunks, Lighthouse put `/signin`'s largest paint at 3.5 s with them, 2.0 s
/// for `/` without; a page is now 8 to 14 files, see `admin_routes`). `HydrationScripts`
/// provides the split manifest the server integration turns into those hints; this puts in its
/// place one with the same folder and chunk loader and no chunks, so only the small loader is
/// hinted.
#[cfg(feature = "ssr")]
fn no_chunk_preloads() {
    let Some(loader) = use_context::<leptos::WasmSplitManifest>().and_then(|m| m.0.try_with_value(|(pkg, _, js)| (pkg.clone(), js.clone()))) else {
        return;
    };
    provide_context(leptos::WasmSplitManifest(ArcStoredValue::new((loader.0, Default::default(), loader.1))));
}

/// The page's Content-Security-Policy: scripts only from this origin and with this response's
/// nonce (Leptos puts it on the hydration scripts), WebAssembly compiled from those, no plugins,
/// no framing, forms posting only here. An injected `<script>` or `on*=` attribute does not run.
#[cfg(feature = "ssr")]
fn set_content_security_policy() {
    let (Some(nonce), Some(res)) = (leptos::nonce::use_nonce(), use_context::<leptos_axum::ResponseOptions>()) else {
        return;
    };
    let policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&policy) {
        res.insert_header(axum::http::header::CONTENT_SECURITY_POLICY, value);
    }
}

/// The application: routes to pages.
#[component]
pub fn App() -> impl IntoView {
    use i18n::{t, T};
    provide_meta_context();
    // The page's language, decided by the server for this request and sent with the page, so
    // hydration renders the same words.
    let lang = leptos::server::SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return i18n::lang_of_request();
        #[cfg(not(feature = "ssr"))]
        i18n::Lang::En
    })
    .into_inner();
    i18n::set_page_lang(lang);
    provide_context(lang);
    view! {
        <Title text="Ebb"/>
        <Router>
            <a class="skip-link" href="#main">{t(T::SkipToContent)}</a>
            <header class="site-header">
                <a class="brand" href="/">"Ebb"</a>
                <span class="spacer"></span>
                <div class="prefs-bar">
                    <prefs::LanguageSwitch/>
                    <prefs::ThemeSwitch/>
                </div>
            </header>
            <main id="main">
                <Routes fallback=pages::NotFound>
                    <Route path=path!("/") view=pages::HomePage/>
                    <Route path=path!("/signin") view={Lazy::<admin_routes::SignInRoute>::new()}/>
                    <Route path=path!("/retention") view={Lazy::<admin_routes::PublicRetentionRoute>::new()} ssr=SsrMode::Async/>
                    // Async: the page's data (and its status: 404, 410) is in the HTML itself, so
                    // these pages work without JavaScript (out-of-order streaming needs a script
                    // to put late data in place).
                    <Route path=path!("/invite/:token") view={Lazy::<admin_routes::InviteRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/s/:token") view={Lazy::<admin_routes::ShareRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/r/:token") view={Lazy::<admin_routes::FileRequestRoute>::new()} ssr=SsrMode::Async/>
                    <ParentRoute path=path!("/admin") view={Lazy::<admin_routes::AdminLayoutRoute>::new()} ssr=SsrMode::Async>
                        // Loaded on demand in the browser (admin_routes): public pages do not carry them.
                        <Route path=path!("") view={Lazy::<admin_routes::DashboardRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("inbox") view={Lazy::<admin_routes::InboxRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("shares") view={Lazy::<admin_routes::SharesRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("audit") view={Lazy::<admin_routes::AuditRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("audit/archive") view={Lazy::<admin_routes::ArchiveRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("retention") view={Lazy::<admin_routes::RetentionRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("requests") view={Lazy::<admin_routes::RequestsRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("requests/:id") view={Lazy::<admin_routes::RequestRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("settings") view={Lazy::<admin_routes::SettingsRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("account") view={Lazy::<admin_routes::AccountRoute>::new()} ssr=SsrMode::Async/>
                    </ParentRoute>
                </Routes>
            </main>
            <footer class="site-footer">
                <p>{t(T::FooterDeleted)} <a href="/retention">{t(T::FooterRetentionLink)}</a></p>
            </footer>
        </Router>
    }
}
