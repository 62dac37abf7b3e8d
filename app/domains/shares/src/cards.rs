//! The cards a landing page shows when there is nothing left to offer, shared by the share and
//! file-request pages.

use common::error::AppError;
use common::i18n::{t, T};
use common::ui::describe;
use leptos::prelude::*;
use leptos_meta::Title;

/// A landing page with nothing left to offer (gone, used, expired, not found): one card with a
/// heading and a sentence, its title in the tab, and the page's HTTP status from `status` (none:
/// 200, as for the thanks after an upload).
#[component]
pub(crate) fn EndCard(
    #[prop(optional)] status: Option<AppError>,
    title: &'static str,
    #[prop(optional)] heading: Option<&'static str>,
    text: &'static str,
    testid: &'static str,
) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(e) = &status {
        common::error::set_status(e);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
    view! {
        <Title text=format!("{title}{}", t(T::TitleSuffix))/>
        <section class="card" data-testid=testid>
            <h1>{heading.unwrap_or(title)}</h1>
            <p>{text}</p>
        </section>
    }
}

/// A server function's error in place of the page, with its HTTP status on the page's response.
pub(crate) fn error_notice(e: &AppError) -> AnyView {
    #[cfg(feature = "ssr")]
    common::error::set_status(e);
    view! { <p class="notice error">{describe(e)}</p> }.into_any()
}
