//! The inbox's "Spam" tab (suspected spam: "Not spam", "Delete", the quarantine's retention) and
//! the dashboard's card of the contact form's figures per day.

use leptos::prelude::*;
use uuid::Uuid;

use super::spam::{contact_figures, delete_spam, list_spam, release_spam, save_spam_retention, SpamItem};
use super::texts::InboxT;
use common::error::AppError;
use common::i18n::{num, t, tf};
use common::live::{live_version, Topic};
use common::ui::{describe, Card, ListEnd, Loaded, Outcome};

fn describe_spam(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(InboxT::SpamGone).into(),
        other => describe(other),
    }
}

/// The quarantine: newest first, each with the signals that put it there.
#[component]
pub fn SpamTab() -> impl IntoView {
    let live = live_version(&[Topic::Inquiry, Topic::Job]);
    let reload = RwSignal::new(0u32);
    let page = Resource::new(move || (reload.get(), live()), |_| list_spam(None));
    let more = RwSignal::new(Vec::<SpamItem>::new());
    let next = RwSignal::new(None::<String>);
    let removed = RwSignal::new(std::collections::BTreeSet::<Uuid>::new());
    let message = RwSignal::new(None::<Result<String, String>>);
    Effect::new(move |_| {
        if let Some(Ok(p)) = page.get() {
            more.set(Vec::new());
            next.set(p.next.clone());
        }
    });
    let load_more = move || {
        let cursor = next.get_untracked();
        leptos::task::spawn_local_scoped(async move {
            match list_spam(cursor).await {
                Ok(p) => {
                    more.update(|m| m.extend(p.items));
                    next.set(p.next);
                }
                Err(e) => message.set(Some(Err(describe_spam(&e)))),
            }
        });
    };
    let (release, delete) = row_actions(removed, message);
    let rows = Signal::derive(move || {
        let gone = removed.get();
        let mut all = page.get().and_then(Result::ok).map(|p| p.items).unwrap_or_default();
        all.extend(more.get());
        all.into_iter().filter(|r| !gone.contains(&r.submission.id)).collect::<Vec<_>>()
    });
    view! {
        <Outcome message testid="spam-message"/>
        <Loaded value=move || page.get() describe=describe_spam ok=move |p| view! {
                <p class="intro" data-testid="spam-intro">{tf(InboxT::SpamIntro, &[("n", &num(p.total)), ("days", &p.retention_days)])}</p>
                <SpamRetention days=p.retention_days message reload/>
                <table class="list spam" data-testid="spam">
                    <thead><tr>
                        <th>{t(InboxT::ColReceived)}</th><th>{t(InboxT::ColFrom)}</th><th>{t(InboxT::ColMessage)}</th><th>{t(InboxT::ColSignals)}</th><th><span class="sr-only">{t(InboxT::ColActions)}</span></th>
                    </tr></thead>
                    <tbody>
                        <For each=move || rows.get() key=|r| r.submission.id let:row>
                            <SpamRow row on_release=release on_delete=delete/>
                        </For>
                    </tbody>
                </table>
                <ListEnd empty=move || rows.get().is_empty() empty_text=|| t(InboxT::SpamEmpty) more=move || next.get().is_some() on_more=load_more/>
            }.into_any()/>
    }
}

/// "Not spam" and "Delete" for one row: the row goes from the list, the outcome is said.
fn row_actions(
    removed: RwSignal<std::collections::BTreeSet<Uuid>>,
    message: RwSignal<Option<Result<String, String>>>,
) -> (impl Fn(Uuid) + Copy + Send + Sync + 'static, impl Fn(Uuid) + Copy + Send + Sync + 'static) {
    let released_text = t(InboxT::SpamReleased);
    let deleted_text = t(InboxT::SpamDeleted);
    let gone = move |id: Uuid| {
        removed.update(|r| {
            r.insert(id);
        })
    };
    let release = move |id: Uuid| {
        leptos::task::spawn_local_scoped(async move {
            let result = release_spam(id).await;
            // Moved now, or by someone else before: either way it is no longer here.
            gone(id);
            message.set(Some(result.map(|()| released_text.to_string()).map_err(|e| describe_spam(&e))));
        });
    };
    let delete = move |id: Uuid| {
        leptos::task::spawn_local_scoped(async move {
            match delete_spam(vec![id]).await {
                Ok(_) => {
                    gone(id);
                    message.set(Some(Ok(deleted_text.to_string())));
                }
                Err(e) => message.set(Some(Err(describe_spam(&e)))),
            }
        });
    };
    (release, delete)
}

#[component]
fn SpamRow(row: SpamItem, on_release: impl Fn(Uuid) + Copy + Send + Sync + 'static, on_delete: impl Fn(Uuid) + Copy + Send + Sync + 'static) -> impl IntoView {
    let s = &row.submission;
    let (id, held) = (s.id, s.held);
    view! {
        <tr data-testid="spam-row">
            <td class="nowrap"><common::time::LocalTime at={s.created_at}/></td>
            <td>
                <div class="name">{s.name.clone()}</div><div class="muted">{s.email.clone()}</div>
                {held.then(|| view! { <span class="badge held">{t(InboxT::OnHold)}</span> })}
            </td>
            // Text, never HTML (spam carries markup on purpose).
            <td class="message">{s.message.clone()}</td>
            <td data-testid="spam-signals">
                <ul class="signals">
                    {row.signals.iter().map(|s| view! { <li><span class="badge info" title=s.clone()>{common::spam::label_of(s)}</span></li> }).collect_view()}
                </ul>
            </td>
            <td class="actions">
                <button type="button" class="secondary small" on:click=move |_| on_release(id)>{t(InboxT::NotSpam)}</button>
                <button type="button" class="danger small" disabled=held on:click=move |_| on_delete(id)>{t(InboxT::Delete)}</button>
            </td>
        </tr>
    }
}

/// The quarantine's retention, in days.
#[component]
fn SpamRetention(days: u32, message: RwSignal<Option<Result<String, String>>>, reload: RwSignal<u32>) -> impl IntoView {
    let value = RwSignal::new(days.to_string());
    let saved = t(InboxT::SpamRetentionSaved);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let days = value.get_untracked().trim().parse::<i64>().unwrap_or(0);
        leptos::task::spawn_local_scoped(async move {
            match save_spam_retention(days).await {
                Ok(d) => {
                    message.set(Some(Ok(common::i18n::fill(saved, &[("days", &d)]))));
                    reload.update(|n| *n += 1);
                }
                Err(AppError::Invalid(fields)) => message.set(Some(Err(fields.values().next().cloned().unwrap_or_default()))),
                Err(e) => message.set(Some(Err(describe(&e)))),
            }
        });
    };
    view! {
        <form class="inline tight" on:submit=save>
            <label for="spam-retention">{t(InboxT::SpamRetentionLabel)}</label>
            <input id="spam-retention" type="number" min="1" max="365" required inputmode="numeric" class="narrow"
                prop:value=value on:input=move |ev| value.set(event_target_value(&ev))/>
            <button type="submit" class="small">{t(InboxT::Save)}</button>
        </form>
    }
}

/// The dashboard's card: the last week of the contact form, per day.
#[component]
pub fn ContactFiguresCard() -> impl IntoView {
    let live = live_version(&[Topic::Inquiry]);
    let figures = Resource::new(live, |_| contact_figures());
    view! {
        <Card id="dash-contact" title=t(InboxT::FiguresHeading)>
            <Loaded value=move || figures.get() describe=describe ok=move |days| view! {
                    <table class="list figures" data-testid="contact-figures">
                        <thead><tr>
                            <th scope="col">{t(InboxT::FiguresDay)}</th>
                            <th scope="col" class="num">{t(InboxT::FiguresAccepted)}</th>
                            <th scope="col" class="num">{t(InboxT::FiguresQuarantined)}</th>
                            <th scope="col" class="num">{t(InboxT::FiguresRefused)}</th>
                            <th scope="col">{t(InboxT::FiguresSignals)}</th>
                        </tr></thead>
                        <tbody>
                            {days.into_iter().take(7).map(|d| {
                                let signals = d.signals.iter().map(|(s, n)| format!("{} ({})", common::spam::label_of(s), num(*n))).collect::<Vec<_>>().join(", ");
                                view! {
                                    <tr data-testid="figures-row" data-day=d.day.clone()>
                                        <th scope="row" class="nowrap">{d.day.clone()}</th>
                                        <td class="num" data-testid="fig-accepted">{num(d.accepted)}</td>
                                        <td class="num" data-testid="fig-quarantined">{num(d.quarantined)}</td>
                                        <td class="num" data-testid="fig-refused">{num(d.refused)}</td>
                                        <td class="muted" data-testid="fig-signals">{signals}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                    <a href="/admin/inbox?tab=spam">{t(InboxT::OpenSpam)}</a>
                }.into_any()/>
        </Card>
    }
}
