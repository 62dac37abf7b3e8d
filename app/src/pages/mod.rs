//! Pages compose domain components; they own no logic.

use leptos::prelude::*;
use leptos_meta::Title;

use common::i18n::{t, texts, T};
use common::ui::{describe, Card, Loaded, UiT};
use contact::ui::ContactForm;

/// The public home page with the contact form.
#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <Title text=format!("{}{}", t(T::HomeTitle), t(T::TitleSuffix))/>
        <div class="page narrow">
            <h1>{t(T::HomeHeading)}</h1>
            <p class="lead">{t(T::HomeLead)}</p>
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
        <Title text=format!("{}{}", t(T::NotFoundTitle), t(T::TitleSuffix))/>
        <div class="page narrow">
            <h1>{t(T::NotFoundHeading)}</h1>
            <p>{t(T::NotFoundText)} <a href="/">{t(T::NotFoundHome)}</a> {t(T::NotFoundEnd)}</p>
        </div>
    }
}

/// The admin dashboard: what the admin's role may see, at a glance — people's data (inbox,
/// shares, data requests) for admins and owners; the promises, the audit trail and the jobs for
/// every role.
#[component]
pub fn DashboardPage() -> impl IntoView {
    use maintenance::ui::JobsPanel;
    let me = Resource::new(|| (), |_| auth::api::current_admin());
    let works_with_data = move || me.get().and_then(Result::ok).flatten().is_some_and(|a| a.role >= auth::Role::Admin);
    view! {
        <Title text=format!("{}{}", t(DashboardT::Title), t(UiT::AdminTitleSuffix))/>
        <h1>{t(DashboardT::Title)}</h1>
        <Transition fallback=|| ()>
            <Show when=works_with_data>
                <DataCards/>
            </Show>
        </Transition>
        <crate::retention::ui::RetentionCard/>
        <audit::ui::UpkeepCard/>
        <Card id="dash-maintenance" title=t(DashboardT::CleanupJobs)>
            <JobsPanel/>
            <Transition fallback=|| ()>
                <Show when=works_with_data>
                    <a href="/admin/settings">{t(DashboardT::Settings)}</a>
                </Show>
            </Transition>
        </Card>
    }
}

/// The dashboard's cards about people's data (admins and owners).
#[component]
fn DataCards() -> impl IntoView {
    use common::live::{live_version, Topic};
    use contact::inbox::{api::count_inquiries, ui::CountsBar};
    // Fetched again when an inquiry arrives or a share changes, here or on another instance.
    let inquiries = live_version(&[Topic::Inquiry, Topic::Job]);
    let shares_changed = live_version(&[Topic::Share, Topic::Job]);
    let counts = Resource::new(inquiries, |_| count_inquiries());
    let shares = Resource::new(shares_changed, |_| shares::api::get_share_overview());
    view! {
        <Card id="dash-inbox" title=t(DashboardT::Inbox)>
            <Loaded value=move || counts.get() describe=describe ok=move |c| view! { <CountsBar counts=c/> <a href="/admin/inbox">{t(DashboardT::OpenInbox)}</a> }.into_any()/>
        </Card>
        <contact::inbox::spam_ui::ContactFiguresCard/>
        <Card id="dash-shares" title=t(DashboardT::Shares)>
            <Loaded value=move || shares.get() describe=describe ok=move |o| view! { <shares::ui::SharesSummary overview=o/> <a href="/admin/shares">{t(DashboardT::OpenShares)}</a> }.into_any()/>
        </Card>
        <requests::ui::RequestsCard/>
    }
}

/// The frame of every admin page with the alert banner above the page (composes auth's shell and
/// maintenance's banner, so neither domain imports the other's UI).
#[component]
pub fn AdminLayout() -> impl IntoView {
    // One live stream for every admin page (the layout stays while the admin navigates).
    common::live::provide_live();
    // The inbox and the shares pages offer the legal-hold form of the holds domain.
    provide_context(common::holds::HoldFormSlot(holds::ui::hold_form_view));
    view! {
        <auth::ui::AdminShell>
            <maintenance::ui::AlertBanner/>
        </auth::ui::AdminShell>
    }
}

texts! {
    pub(crate) enum DashboardT {
    Title { en: "Dashboard", ja: "ダッシュボード" }
    Inbox { en: "Inbox", ja: "受信箱" }
    OpenInbox { en: "Open the inbox", ja: "受信箱を開く" }
    Shares { en: "Shares", ja: "共有ファイル" }
    OpenShares { en: "Open shares", ja: "共有ファイルを開く" }
    CleanupJobs { en: "Cleanup jobs", ja: "クリーンアップジョブ" }
    Settings { en: "Settings", ja: "設定" }
}
}
