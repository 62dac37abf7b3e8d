//! Pages compose domain components; they own no logic.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::contact::ui::ContactForm;

/// The public home page with the contact form.
#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <Title text="Contact — Ebb"/>
        <div class="page narrow">
            <h1>"Get in touch"</h1>
            <p class="lead">"Write to us with the form below. We answer by email, usually within two working days."</p>
            <ContactForm/>
        </div>
    }
}

/// Shown for any unknown path.
#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found — Ebb"/>
        <div class="page narrow">
            <h1>"Page not found"</h1>
            <p>"There is nothing at this address. Check the link, or go to the " <a href="/">"home page"</a> "."</p>
        </div>
    }
}
