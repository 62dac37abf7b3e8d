//! Pages compose domain components; they own no logic.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::contact::ui::ContactForm;
use crate::ui::describe;

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

/// The admin dashboard: inbox counts and maintenance at a glance.
#[component]
pub fn DashboardPage() -> impl IntoView {
    use crate::inbox::{api::count_inquiries, ui::CountsBar};
    use crate::maintenance::ui::JobsPanel;
    let counts = Resource::new(|| (), |_| count_inquiries());
    let shares = Resource::new(|| (), |_| crate::shares::api::get_share_overview());
    view! {
        <Title text="Dashboard — Ebb admin"/>
        <h1>"Dashboard"</h1>
        <section class="card" aria-labelledby="dash-inbox">
            <h2 id="dash-inbox">"Inbox"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || counts.get().map(|r| match r {
                    Ok(c) => view! { <CountsBar counts=c/> <a href="/admin/inbox">"Open the inbox"</a> }.into_any(),
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
        </section>
        <section class="card" aria-labelledby="dash-shares">
            <h2 id="dash-shares">"Shares"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || shares.get().map(|r| match r {
                    Ok(o) => view! { <crate::shares::ui::SharesSummary overview=o/> <a href="/admin/shares">"Open shares"</a> }.into_any(),
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
        </section>
        <crate::retention::ui::RetentionCard/>
        <crate::audit::ui::UpkeepCard/>
        <section class="card" aria-labelledby="dash-maintenance">
            <h2 id="dash-maintenance">"Cleanup jobs"</h2>
            <JobsPanel/>
            <a href="/admin/settings">"Settings"</a>
        </section>
    }
}

/// The frame of every admin page with the alert banner above the page (composes auth's shell and
/// maintenance's banner, so neither domain imports the other's UI).
#[component]
pub fn AdminLayout() -> impl IntoView {
    view! {
        <crate::auth::ui::AdminShell>
            <crate::maintenance::ui::AlertBanner/>
        </crate::auth::ui::AdminShell>
    }
}
