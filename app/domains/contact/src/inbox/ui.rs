//! The inbox page.

use leptos::prelude::*;
use leptos_meta::Title;
use uuid::Uuid;

use super::api::*;
use super::texts::InboxT;
use super::{InboxCounts, InquiryDetail, InquiryPage, InquirySummary};
use common::error::AppError;
use common::i18n::{num, t, tf, T};
use common::ui::{describe, url_encode, ListEnd, Outcome, UiT};

/// A failed inbox call: what can vanish here is an inquiry (deleted in another tab, by another
/// admin, or by the retention cleanup).
fn describe_inbox(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(InboxT::NotFound).into(),
        other => describe(other),
    }
}

/// Total, last 24 hours and last 7 days.
#[component]
pub fn CountsBar(counts: InboxCounts) -> impl IntoView {
    view! {
        <dl class="counts" data-testid="inbox-counts">
            <div><dt>{t(InboxT::CountTotal)}</dt><dd data-testid="count-total">{num(counts.total)}</dd></div>
            <div><dt>{t(InboxT::CountLast24h)}</dt><dd data-testid="count-24h">{num(counts.last_24h)}</dd></div>
            <div><dt>{t(InboxT::CountLast7d)}</dt><dd data-testid="count-7d">{num(counts.last_7d)}</dd></div>
        </dl>
    }
}

/// The inbox page's state, and what its buttons do.
#[derive(Clone, Copy)]
struct Inbox {
    applied: RwSignal<String>,
    /// Rows loaded by "Show older" and the cursor after them.
    more: RwSignal<Vec<InquirySummary>>,
    next: RwSignal<Option<String>>,
    selected: RwSignal<std::collections::BTreeSet<Uuid>>,
    removed: RwSignal<std::collections::BTreeSet<Uuid>>,
    open: RwSignal<Option<InquiryDetail>>,
    message: RwSignal<Option<Result<String, String>>>,
    counts: Resource<Result<InboxCounts, AppError>>,
    /// Deleting goes through the server function's action; the ids it was asked for.
    delete_action: ServerAction<DeleteInquiries>,
    deleting: RwSignal<Vec<Uuid>>,
}

impl Inbox {
    fn load_more(self) {
        let cursor = self.next.get_untracked();
        // Scoped: the texts set after the call are in the page's language (its context).
        leptos::task::spawn_local_scoped(async move {
            match list_inquiries(Some(self.applied.get_untracked()), cursor).await {
                Ok(page) => {
                    self.more.update(|m| m.extend(page.items));
                    self.next.set(page.next);
                }
                Err(e) => self.message.set(Some(Err(describe_inbox(&e)))),
            }
        });
    }

    /// Deletes `ids` after the admin confirms; one delete at a time (its ids are what the
    /// finished action's count is about).
    fn delete(self, ids: Vec<Uuid>) {
        if ids.is_empty() || self.delete_action.pending().get_untracked() {
            return;
        }
        #[cfg(feature = "hydrate")]
        {
            let question =
                if ids.len() == 1 { t(InboxT::ConfirmDeleteOne).to_string() } else { tf(InboxT::ConfirmDeleteMany, &[("n", &num(ids.len() as i64))]) };
            if !common::ui::confirmed(&question) {
                return;
            }
        }
        self.deleting.set(ids.clone());
        self.delete_action.dispatch(DeleteInquiries { ids });
    }

    /// What a finished delete changes on the page.
    fn deleted(self, result: Result<u64, AppError>) {
        let ids = self.deleting.get_untracked();
        match result {
            Ok(n) => {
                let text = if n == 1 { t(InboxT::DeletedOne).to_string() } else { tf(InboxT::DeletedMany, &[("n", &num(n as i64))]) };
                self.removed.update(|r| r.extend(ids.iter().copied()));
                self.selected.update(|s| {
                    ids.iter().for_each(|id| {
                        s.remove(id);
                    })
                });
                if self.open.get_untracked().is_some_and(|d| ids.contains(&d.id)) {
                    self.open.set(None);
                }
                self.message.set(Some(Ok(text)));
                self.counts.refetch();
            }
            Err(e) => self.message.set(Some(Err(describe_inbox(&e)))),
        }
    }

    fn show(self, id: Uuid) {
        leptos::task::spawn_local_scoped(async move {
            match get_inquiry(id).await {
                Ok(d) => self.open.set(Some(d)),
                Err(e) => self.message.set(Some(Err(describe_inbox(&e)))),
            }
        });
    }
}

/// The inbox page: the inquiries, or (`?tab=spam`) the suspected spam.
#[component]
pub fn InboxPage() -> impl IntoView {
    let query = leptos_router::hooks::use_query_map();
    let spam = move || query.read().get("tab").as_deref() == Some("spam");
    view! {
        <Title text=format!("{}{}", t(InboxT::Heading), t(UiT::AdminTitleSuffix))/>
        <h1>{t(InboxT::Heading)}</h1>
        <nav class="tabs" aria-label=t(InboxT::TabsLabel)>
            <a href="/admin/inbox" aria-current=move || (!spam()).then_some("page")>{t(InboxT::TabInbox)}</a>
            <a href="/admin/inbox?tab=spam" aria-current=move || spam().then_some("page") data-testid="spam-tab">{t(InboxT::TabSpam)}</a>
        </nav>
        {move || if spam() { view! { <super::spam_ui::SpamTab/> }.into_any() } else { view! { <InboxList/> }.into_any() }}
    }
}

/// The inquiries: counts, search, export, the list and the detail.
#[component]
fn InboxList() -> impl IntoView {
    let search = RwSignal::new(String::new());
    let applied = RwSignal::new(String::new());
    let reload = RwSignal::new(0u32);
    // Fetched again when inquiries arrive or go (here or on another instance, or by prune).
    let live = common::live::live_version(&[common::live::Topic::Inquiry, common::live::Topic::Job]);
    let first_page = Resource::new(move || (applied.get(), reload.get(), live()), |(q, _, _)| list_inquiries(Some(q), None));
    let counts = Resource::new(move || (reload.get(), live()), |_| count_inquiries());
    // Rows loaded by "Show older" and the cursor after them; reset whenever the first page changes.
    let more = RwSignal::new(Vec::<InquirySummary>::new());
    let next = RwSignal::new(None::<String>);
    let selected = RwSignal::new(std::collections::BTreeSet::<Uuid>::new());
    let removed = RwSignal::new(std::collections::BTreeSet::<Uuid>::new());
    let open = RwSignal::new(None::<InquiryDetail>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let bom = RwSignal::new(false);
    // Said once a hold is placed (the detail is read again, so the form's own line goes with it).
    // Looked up here: the hold form calls back from a task, outside this page's context.
    let held_message = t(InboxT::Held);

    Effect::new(move |_| {
        if let Some(Ok(page)) = first_page.get() {
            more.set(Vec::new());
            next.set(page.next.clone());
            // A fresh first page (a search, or new inquiries) keeps the selection it still shows.
            selected.update(|s| s.retain(|id| page.items.iter().any(|i| i.id == *id)));
        }
    });

    let (delete_action, deleting) = (ServerAction::<DeleteInquiries>::new(), RwSignal::new(Vec::new()));
    let inbox = Inbox { applied, more, next, selected, removed, open, message, counts, delete_action, deleting };
    Effect::new(move |_| {
        if let Some(result) = delete_action.value().get() {
            inbox.deleted(result);
        }
    });
    let (load_more, delete, show) = (move || inbox.load_more(), move |ids| inbox.delete(ids), move |id| inbox.show(id));

    let rows = Signal::derive(move || {
        let gone = removed.get();
        let mut all = first_page.get().and_then(Result::ok).map(|p| p.items).unwrap_or_default();
        all.extend(more.get());
        all.into_iter().filter(|r| !gone.contains(&r.id)).collect::<Vec<_>>()
    });

    view! {
        <Transition fallback=|| ()>
            {move || counts.get().and_then(Result::ok).map(|c| view! { <CountsBar counts=c/> })}
        </Transition>
        <Outcome message testid="inbox-message"/>
        <InboxToolbar search applied removed bom selected on_delete=delete/>
        <InboxTable first_page applied next rows on_open=show on_delete=delete on_more=load_more selected/>
        {move || open.get().map(|d| view! { <InquiryView detail=d on_close=move || open.set(None) on_delete=delete on_held=move || { message.set(Some(Ok(held_message.into()))); reload.update(|n| *n += 1); show(open.get_untracked().map(|d| d.id).unwrap_or_default()); }/> })}
    }
}

/// The inbox's search, export and bulk delete.
#[component]
fn InboxToolbar(
    search: RwSignal<String>,
    applied: RwSignal<String>,
    removed: RwSignal<std::collections::BTreeSet<Uuid>>,
    bom: RwSignal<bool>,
    selected: RwSignal<std::collections::BTreeSet<Uuid>>,
    on_delete: impl Fn(Vec<Uuid>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let export_href = move || {
        let q: String = url_encode(&applied.get());
        format!("/admin/inbox/export.csv?q={q}{}", if bom.get() { "&bom=1" } else { "" })
    };
    let export_click = common::ui::checked_download(export_href);
    view! {
        <div class="toolbar">
            <form class="inline tight" role="search" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); applied.set(search.get_untracked()); removed.set(Default::default()); }>
                <label class="sr-only" for="inbox-search">{t(InboxT::SearchLabel)}</label>
                <input id="inbox-search" type="search" placeholder=t(InboxT::SearchPlaceholder) maxlength="200"
                    prop:value=search on:input=move |ev| search.set(event_target_value(&ev))/>
                <button type="submit" class="small">{t(InboxT::Search)}</button>
            </form>
            <span class="spacer"></span>
            <label class="check"><input type="checkbox" prop:checked=bom on:change=move |ev| bom.set(event_target_checked(&ev))/>{t(InboxT::Bom)}</label>
            <a class="button small" data-testid="export" href=export_href download on:click=export_click>{move || if applied.get().is_empty() { t(InboxT::ExportCsv) } else { t(InboxT::ExportResults) }}</a>
            <button type="button" class="danger small" data-testid="delete-selected"
                disabled=move || selected.get().is_empty()
                on:click=move |_| on_delete(selected.get_untracked().into_iter().collect())>
                {move || tf(InboxT::DeleteSelected, &[("n", &num(selected.get().len() as i64))])}
            </button>
        </div>
    }
}

/// The inquiries found (first page and those loaded by "Show older").
#[component]
fn InboxTable(
    first_page: Resource<Result<InquiryPage, AppError>>,
    applied: RwSignal<String>,
    next: RwSignal<Option<String>>,
    rows: Signal<Vec<InquirySummary>>,
    selected: RwSignal<std::collections::BTreeSet<Uuid>>,
    on_open: impl Fn(Uuid) + Copy + Send + Sync + 'static,
    on_delete: impl Fn(Vec<Uuid>) + Copy + Send + Sync + 'static,
    on_more: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
            {
                // Whether the first page loaded, or its error — a memo, so a refetch that loads
                // again (a live update: another inquiry arrived) keeps the table, and the focus
                // of a keyboard user on one of its buttons; the rows change in the keyed `For`,
                // keyed by what can change in a row (its hold), so a held row shows it.
                let loaded = Memo::new(move |_| first_page.get().map(|r| r.err()));
                move || loaded.get().map(|err| match err {
                Some(e) => view! { <p class="notice error">{describe_inbox(&e)}</p> }.into_any(),
                None => view! {
                    <table class="list inbox" data-testid="inbox">
                        <thead><tr>
                            <th><span class="sr-only">{t(InboxT::ColSelect)}</span></th><th>{t(InboxT::ColReceived)}</th><th>{t(InboxT::ColFrom)}</th><th>{t(InboxT::ColMessage)}</th><th><span class="sr-only">{t(InboxT::ColActions)}</span></th>
                        </tr></thead>
                        <tbody>
                            <For each=move || rows.get() key=|r| (r.id, r.held) let:row>
                                <InquiryRow row selected on_open on_delete/>
                            </For>
                        </tbody>
                    </table>
                    <ListEnd
                        empty=move || rows.get().is_empty()
                        empty_text=move || if applied.get().is_empty() { t(InboxT::Empty) } else { t(InboxT::NoMatch) }
                        more=move || next.get().is_some()
                        on_more/>
                }.into_any(),
            })
            }
        </Transition>
    }
}

#[component]
fn InquiryRow(
    row: InquirySummary,
    selected: RwSignal<std::collections::BTreeSet<Uuid>>,
    on_open: impl Fn(Uuid) + Copy + Send + Sync + 'static,
    on_delete: impl Fn(Vec<Uuid>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let id = row.id;
    view! {
        <tr data-testid="inquiry-row">
            <td><input type="checkbox" aria-label=tf(InboxT::SelectRow, &[("name", &row.name)])
                prop:checked=move || selected.read().contains(&id)
                on:change=move |ev| { let on = event_target_checked(&ev); selected.update(|s| { if on { s.insert(id); } else { s.remove(&id); } }); }/></td>
            <td class="nowrap"><common::time::LocalTime at={row.created_at}/></td>
            <td>
                <div class="name">{row.name.clone()}</div><div class="muted">{row.email.clone()}</div>
                {row.held.then(|| view! { <span class="badge held" data-testid="held-badge">{t(InboxT::OnHold)}</span> })}
            </td>
            <td class="preview">{row.preview.clone()}</td>
            <td class="actions">
                <button type="button" class="secondary small" on:click=move |_| on_open(id)>{t(InboxT::Open)}</button>
                <button type="button" class="danger small" on:click=move |_| on_delete(vec![id])>{t(InboxT::Delete)}</button>
            </td>
        </tr>
    }
}

#[component]
fn InquiryView(
    detail: InquiryDetail,
    on_close: impl Fn() + Copy + Send + Sync + 'static,
    on_delete: impl Fn(Vec<Uuid>) + Copy + Send + Sync + 'static,
    on_held: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    use common::holds::{hold_form, HoldTarget};
    let id = detail.id;
    let held = detail.held;
    let mailto = common::ui::mailto_href(&detail.email);
    view! {
        <section class="card detail" aria-labelledby="detail-title" data-testid="inquiry-detail">
            <h2 id="detail-title">{tf(InboxT::InquiryFrom, &[("name", &detail.name)])}</h2>
            <p class="muted"><common::time::LocalTime at={detail.created_at}/> " · " <a href=mailto>{detail.email.clone()}</a></p>
            // Text, never HTML: the message is a text node, with line breaks kept by CSS.
            <div class="message" data-testid="inquiry-message">{detail.message.clone()}</div>
            {held.then(|| view! {
                <p class="notice" data-testid="inquiry-held">{t(InboxT::HeldNoticeBefore)} <a href="/admin/retention">{t(InboxT::HeldNoticeLink)}</a> {t(InboxT::HeldNoticeAfter)}</p>
            })}
            <div class="actions">
                <button type="button" class="secondary small" on:click=move |_| on_close()>{t(InboxT::Close)}</button>
                <button type="button" class="danger small" disabled=held on:click=move |_| on_delete(vec![id])>{t(InboxT::Delete)}</button>
            </div>
            <details class="hold">
                <summary>{t(InboxT::LegalHold)}</summary>
                {hold_form(
                    id.to_string(),
                    vec![(t(InboxT::HoldThis), HoldTarget::Inquiry(id)), (t(InboxT::HoldSender), HoldTarget::Sender(id))],
                    Callback::new(move |_| on_held()),
                )}
            </details>
        </section>
    }
}
