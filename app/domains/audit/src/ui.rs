//! The audit log viewer (`/admin/audit`) and the dashboard's upkeep card.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::texts::AuditT;
use super::{AuditFilter, AuditKind, AuditRow, ExportStatus, MonthStatus};
use common::error::AppError;
use common::i18n::{num, t, tf, T};
use common::time::format_time;
use common::ui::{describe, ListEnd, ListTable, Loaded, UiT};

/// The filter form's fields, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Fields {
    kind: String,
    admin: String,
    subject: String,
    from: String,
    to: String,
}

impl Fields {
    fn filter(&self) -> Result<AuditFilter, std::collections::BTreeMap<String, String>> {
        AuditFilter::parse(&self.kind, &self.admin, &self.subject, &self.from, &self.to)
    }
}

fn field_error(err: &Option<AppError>, field: &'static str) -> Option<String> {
    match err {
        Some(AppError::Invalid(fields)) => fields.get(field).cloned(),
        _ => None,
    }
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let form = RwSignal::new(Fields::default());
    let applied = RwSignal::new(Fields::default());
    let first_page = Resource::new(move || applied.get(), |f| async move { audit_events(f.kind, f.admin, f.subject, f.from, f.to, None).await });
    let admins = Resource::new(|| (), |_| audit_admins());
    let more = RwSignal::new(Vec::<AuditRow>::new());
    let next = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<AppError>);

    Effect::new(move |_| match first_page.get() {
        Some(Ok(page)) => {
            more.set(Vec::new());
            next.set(page.next.clone());
            error.set(None);
        }
        Some(Err(e)) => error.set(Some(e)),
        None => {}
    });

    let load_more = move || {
        let (f, cursor) = (applied.get_untracked(), next.get_untracked());
        leptos::task::spawn_local(async move {
            match audit_events(f.kind, f.admin, f.subject, f.from, f.to, cursor).await {
                Ok(page) => {
                    more.update(|m| m.extend(page.rows));
                    next.set(page.next);
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };

    let rows = Signal::derive(move || {
        let mut all = first_page.get().and_then(Result::ok).map(|p| p.rows).unwrap_or_default();
        all.extend(more.get());
        all
    });

    view! {
        <Title text=format!("{}{}", t(AuditT::AuditLog), t(UiT::AdminTitleSuffix))/>
        <h1>{t(AuditT::AuditLog)}</h1>
        <p class="muted">{t(AuditT::IntroBefore)} <a href="/admin/audit/archive" data-testid="archive-nav">{t(AuditT::IntroArchive)}</a> {t(AuditT::IntroAfter)}</p>
        <AuditFilters form applied admins error/>
        <AuditTable first_page rows next on_more=load_more/>
        <TrailSection/>
    }
}

/// Tamper evidence: the chain's state, the signing keys, the latest digests, and "Verify now".
#[component]
fn TrailSection() -> impl IntoView {
    let overview = Resource::new(|| (), |_| audit_trail());
    let verify = ServerAction::<VerifyTrail>::new();
    Effect::new(move |_| {
        if verify.value().get().is_some() {
            overview.refetch();
        }
    });
    view! {
        <section aria-labelledby="trail-title" data-testid="audit-trail">
            <h2 id="trail-title">{t(AuditT::TrailHeading)}</h2>
            <p class="muted">{t(AuditT::TrailIntro)}</p>
            <Loaded value=move || overview.get() describe=describe ok=move |o| view! { <TrailState o/> }.into_any()/>
            <div class="verify">
                <ActionForm action=verify>
                    <button type="submit" data-testid="verify-trail" disabled=move || verify.pending().get()>{t(AuditT::VerifyNow)}</button>
                </ActionForm>
            </div>
            {move || verify.pending().get().then(|| view! { <p class="notice" role="status">{t(AuditT::Verifying)}</p> })}
            {move || verify.value().get().map(|r| match r {
                Ok(o) if o.ok => view! {
                    <p class="notice success" role="status" data-testid="verify-result">
                        {tf(AuditT::VerifyOk, &[("events", &num(o.events as i64)), ("archived", &num(o.archived as i64)), ("digests", &num(o.digests as i64))])}
                    </p>
                }.into_any(),
                Ok(o) => {
                    let (place, what) = o.first.unwrap_or_default();
                    view! { <p class="notice error" role="alert" data-testid="verify-result">{tf(AuditT::VerifyBroken, &[("place", &place), ("what", &what)])}</p> }.into_any()
                }
                Err(e) => view! { <p class="notice error" role="alert" data-testid="verify-result">{describe(&e)}</p> }.into_any(),
            })}
            {move || verify.value().get().and_then(Result::ok).filter(|o| !o.warnings.is_empty()).map(|o| view! {
                <div class="notice warning" data-testid="verify-warnings">
                    <p>{t(AuditT::VerifyWarnings)}</p>
                    <ul>{o.warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                </div>
            })}
        </section>
    }
}

#[component]
fn TrailState(o: super::TrailOverview) -> impl IntoView {
    let keys = if o.keys.is_empty() {
        view! { <p class="muted">{t(AuditT::NoKeyYet)}</p> }.into_any()
    } else {
        view! {
            <ul class="keys" data-testid="signing-keys">
                {o.keys.into_iter().rev().map(|k| view! {
                    <li>
                        <code>{k.key_id}</code> " — " {t(if k.retired { AuditT::KeyRetired } else { AuditT::KeyCurrent })}
                        <br/><code class="wrap" data-testid="public-key">{k.public_key}</code>
                    </li>
                }).collect_view()}
            </ul>
        }
        .into_any()
    };
    let digests = if o.digests.is_empty() {
        view! { <p class="muted">{t(AuditT::NoDigestYet)}</p> }.into_any()
    } else {
        view! {
            <h3>{t(AuditT::LatestDigests)}</h3>
            <table class="list" data-testid="digests">
                <thead><tr><th scope="col">{t(AuditT::DigestNumber)}</th><th scope="col">{t(AuditT::WrittenUtc)}</th><th scope="col">{t(AuditT::Why)}</th><th scope="col">{t(AuditT::Events)}</th><th scope="col">{t(AuditT::Key)}</th></tr></thead>
                <tbody>
                    {o.digests.into_iter().map(|d| view! {
                        <tr><td><code>{d.object_key}</code></td><td class="nowrap">{format_time(d.created_at)}</td><td>{d.reason}</td><td>{num(d.events)}</td><td><code>{d.key_id}</code></td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        }.into_any()
    };
    view! {
        <dl class="counts">
            <div><dt>{t(AuditT::SealedEvents)}</dt><dd data-testid="sealed-events">{num(o.sealed)}</dd></div>
            <div><dt>{t(AuditT::WaitingSeal)}</dt><dd data-testid="pending-events">{num(o.pending)}</dd></div>
        </dl>
        <h3>{t(AuditT::PublicKeys)}</h3>
        {keys}
        <p><a href="/audit/keys.json" download="ebb-audit-keys.json" rel="external">{t(AuditT::KeysDownload)}</a></p>
        {digests}
    }
}

/// The filters (what, who, subject, dates) and the export of what they find.
#[component]
fn AuditFilters(
    form: RwSignal<Fields>,
    applied: RwSignal<Fields>,
    admins: Resource<Result<Vec<super::AuditAdmin>, AppError>>,
    error: RwSignal<Option<AppError>>,
) -> impl IntoView {
    let export_href = move || match applied.get().filter() {
        Ok(f) => format!("/admin/audit/export.csv?{}", f.query()),
        Err(_) => "/admin/audit/export.csv".to_string(),
    };
    let set = move |update: fn(&mut Fields, String)| move |ev: leptos::ev::Event| form.update(|f| update(f, event_target_value(&ev)));
    let err_of = move |field: &'static str| move || field_error(&error.get(), field);
    view! {
    <form class="filters" data-testid="audit-filters" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); applied.set(form.get_untracked()); }>
        <div class="field">
            <label for="audit-kind">{t(AuditT::What)}</label>
            <select id="audit-kind" on:change=set(|f, v| f.kind = v) aria-describedby="audit-kind-error">
                <option value="">{t(AuditT::Everything)}</option>
                {AuditKind::ALL.iter().map(|k| view! { <option value=k.as_str()>{k.label()}</option> }).collect_view()}
            </select>
            <p class="field-error" id="audit-kind-error" aria-live="polite">{err_of("kind")}</p>
        </div>
        <div class="field">
            <label for="audit-admin">{t(AuditT::Who)}</label>
            <select id="audit-admin" on:change=set(|f, v| f.admin = v) aria-describedby="audit-admin-error">
                <option value="">{t(AuditT::Anyone)}</option>
                <Transition fallback=|| ()>
                    {move || admins.get().and_then(Result::ok).map(|list| list.into_iter().map(|a| view! { <option value=a.id.to_string()>{a.name}</option> }).collect_view())}
                </Transition>
            </select>
            <p class="field-error" id="audit-admin-error" aria-live="polite">{err_of("admin")}</p>
        </div>
        <div class="field">
            <label for="audit-subject">{t(AuditT::SubjectId)}</label>
            <input id="audit-subject" type="text" maxlength="200" placeholder=t(AuditT::SubjectPlaceholder) prop:value=move || form.get().subject on:input=set(|f, v| f.subject = v) aria-describedby="audit-subject-error"/>
            <p class="field-error" id="audit-subject-error" aria-live="polite">{err_of("subject")}</p>
        </div>
        <div class="field">
            <label for="audit-from">{t(AuditT::From)}</label>
            <input id="audit-from" type="date" prop:value=move || form.get().from on:input=set(|f, v| f.from = v) aria-describedby="audit-from-error"/>
            <p class="field-error" id="audit-from-error" aria-live="polite">{err_of("from")}</p>
        </div>
        <div class="field">
            <label for="audit-to">{t(AuditT::To)}</label>
            <input id="audit-to" type="date" prop:value=move || form.get().to on:input=set(|f, v| f.to = v) aria-describedby="audit-to-error"/>
            <p class="field-error" id="audit-to-error" aria-live="polite">{err_of("to")}</p>
        </div>
        <div class="field actions">
            <button type="submit">{t(AuditT::Filter)}</button>
            <a class="button secondary" data-testid="audit-export" href=export_href download>{t(AuditT::ExportCsv)}</a>
        </div>
    </form>
    }
}

/// The events found, newest first, and "Show older".
#[component]
fn AuditTable(
    first_page: Resource<Result<super::AuditPage, AppError>>,
    rows: Signal<Vec<AuditRow>>,
    next: RwSignal<Option<String>>,
    on_more: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
    <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
        {move || first_page.get().map(|r| match r {
            Err(AppError::Invalid(_)) => view! { <p class="notice error" role="alert">{t(AuditT::CheckFilters)}</p> }.into_any(),
            Err(e) => view! { <p class="notice error" role="alert">{describe(&e)}</p> }.into_any(),
            Ok(_) => view! {
                <table class="list audit" data-testid="audit-log">
                    <thead><tr><th>{t(AuditT::WhenUtc)}</th><th>{t(AuditT::WhatHappened)}</th><th><span class="sr-only">{t(AuditT::Details)}</span></th></tr></thead>
                    <tbody>
                        <For each=move || rows.get() key=|r| r.id let:row>
                            <EventRow row/>
                        </For>
                    </tbody>
                </table>
                <ListEnd empty=move || rows.get().is_empty() empty_text=|| t(AuditT::NoEvent) more=move || next.get().is_some() on_more/>
            }.into_any(),
        })}
    </Transition>
    }
}

#[component]
fn EventRow(row: AuditRow) -> impl IntoView {
    let sentence = row.sentence();
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    view! {
        <tr data-testid="audit-row" data-kind=row.kind.clone()>
            <td class="nowrap"><common::time::LocalTime at={row.occurred_at}/></td>
            <td>{sentence}</td>
            <td>
                <details>
                    <summary>{t(AuditT::Details)}</summary>
                    <dl class="facts">
                        <dt>{t(AuditT::Event)}</dt><dd>{row.id}</dd>
                        <dt>{t(AuditT::Kind)}</dt><dd><code>{row.kind.clone()}</code></dd>
                        <dt>{t(AuditT::Admin)}</dt><dd>{dash(&row.admin_name)} {row.admin_id.map(|a| format!(" ({a})"))}</dd>
                        <dt>{t(AuditT::Subject)}</dt><dd>{dash(&row.subject_type)} " " {dash(&row.subject_id)}</dd>
                        <dt>{t(AuditT::Detail)}</dt><dd>{dash(&row.detail)}</dd>
                        <dt>{t(AuditT::ClientHashed)}</dt><dd><code>{dash(&row.client_hash)}</code></dd>
                    </dl>
                </details>
            </td>
        </tr>
    }
}

/// The dashboard's view of the audit upkeep: partitions ahead, months waiting for the archive,
/// rows in the default partition.
#[component]
pub fn UpkeepCard() -> impl IntoView {
    let state = Resource::new(|| (), |_| audit_upkeep_state());
    view! {
        <section class="card" aria-labelledby="upkeep-title" data-testid="audit-upkeep">
            <h2 id="upkeep-title">{t(AuditT::AuditLog)}</h2>
            <Loaded value=move || state.get() describe=describe ok=move |s| {
                    let ahead_ok = s.partitions_ahead >= s.partitions_wanted;
                    view! {
                        <dl class="counts">
                            <div class=if ahead_ok { "" } else { "bad" }><dt>{t(AuditT::MonthsAhead)}</dt><dd data-testid="partitions-ahead">{tf(AuditT::AheadOfWanted, &[("ahead", &num(s.partitions_ahead)), ("wanted", &num(s.partitions_wanted))])}</dd></div>
                            <div><dt>{t(AuditT::MonthsPending)}</dt><dd data-testid="months-pending">{num(s.months_pending)}</dd></div>
                            <div class=if s.default_rows == 0 { "" } else { "bad" }><dt>{t(AuditT::DefaultRows)}</dt><dd data-testid="default-rows">{num(s.default_rows)}</dd></div>
                            <div><dt>{t(AuditT::MonthsArchived)}</dt><dd data-testid="months-archived">{num(s.months_archived)}</dd></div>
                            <div class=if s.months_failed == 0 { "" } else { "bad" }><dt>{t(AuditT::MonthsFailed)}</dt><dd data-testid="months-failed">{num(s.months_failed)}</dd></div>
                        </dl>
                        <p class="muted"><a href="/admin/audit">{t(AuditT::OpenAuditLog)}</a> " · " <a href="/admin/audit/archive">{t(AuditT::ArchiveAndExports)}</a></p>
                    }.into_any()
                }/>
        </section>
    }
}

/// Takes a download link off the page shortly before it stops working (a link on screen must
/// download).
fn forget_when_expired(forget: impl FnOnce() + 'static) {
    #[cfg(feature = "hydrate")]
    set_timeout(forget, std::time::Duration::from_secs(super::LINK_MINUTES as u64 * 60 - 10));
    #[cfg(not(feature = "hydrate"))]
    let _ = forget;
}

/// Asking for a 15-minute link to an archived month (with a reason, recorded).
#[derive(Clone, Copy)]
struct LinkAsk {
    month: RwSignal<String>,
    reason: RwSignal<String>,
    link: RwSignal<Option<super::DownloadLink>>,
    link_error: RwSignal<Option<AppError>>,
    /// The server function's action (pending while it runs).
    asking: ServerAction<ArchiveLink>,
    overview: Resource<Result<super::ArchiveOverview, AppError>>,
}

impl LinkAsk {
    fn ask(self) {
        let LinkAsk { month, reason, link, asking, .. } = self;
        link.set(None);
        asking.dispatch(ArchiveLink { month: month.get_untracked(), reason: reason.get_untracked() });
    }

    /// What is wrong with the reason given, if that was the answer.
    fn reason_error(self) -> Option<String> {
        match self.link_error.get() {
            Some(AppError::Invalid(f)) => f.get("reason").cloned(),
            _ => None,
        }
    }

    /// Any other refusal, in words.
    fn other_error(self) -> Option<String> {
        match self.link_error.get() {
            Some(AppError::Invalid(_)) | None => None,
            Some(AppError::NotFound) => Some(t(AuditT::MonthNotArchived).to_string()),
            Some(e) => Some(describe(&e)),
        }
    }

    /// What the answer changes on the page.
    fn answered(self, answer: Result<super::DownloadLink, AppError>) {
        let LinkAsk { link, link_error, overview, .. } = self;
        match answer {
            Ok(l) => {
                forget_when_expired(move || link.set(None));
                link.set(Some(l));
                link_error.set(None);
                overview.refetch();
            }
            Err(e) => link_error.set(Some(e)),
        }
    }
}

/// `/admin/audit/archive`: archived months (a 15-minute link, with a reason) and export requests.
#[component]
pub fn ArchivePage() -> impl IntoView {
    let overview = Resource::new(|| (), |_| archive_months());
    let month = RwSignal::new(String::new());
    let reason = RwSignal::new(String::new());
    let link = RwSignal::new(None::<super::DownloadLink>);
    let link_error = RwSignal::new(None::<AppError>);
    let asking = ServerAction::<ArchiveLink>::new();

    let links = LinkAsk { month, reason, link, link_error, asking, overview };
    Effect::new(move |_| {
        if let Some(answer) = asking.value().get() {
            links.answered(answer);
        }
    });
    let get_link = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        links.ask();
    };
    let (reason_error, other_error) = (move || links.reason_error(), move || links.other_error());

    view! {
        <Title text=format!("{}{}", t(AuditT::ArchiveAndExports), t(UiT::AdminTitleSuffix))/>
        <h1>{t(AuditT::ArchiveAndExports)}</h1>
        <p class="muted">
            {t(AuditT::ArchiveIntro)}
            <a href="/admin/audit">{t(AuditT::BackToAuditLog)}</a>
        </p>
        <section aria-labelledby="archive-title">
            <h2 id="archive-title">{t(AuditT::ArchivedMonths)}</h2>
            <Loaded value=move || overview.get() describe=describe ok=move |o| {
                    let verified: Vec<String> = o.months.iter().filter(|m| m.status == MonthStatus::Verified).map(|m| m.month.clone()).collect();
                    if month.get_untracked().is_empty() {
                        if let Some(first) = verified.first() {
                            month.set(first.clone());
                        }
                    }
                    view! {
                        <MonthsTable months=o.months.clone()/>
                        <h3>{t(AuditT::DownloadMonth)}</h3>
                        <form class="stack" data-testid="archive-link-form" on:submit=get_link>
                            <div class="field">
                                <label for="archive-month">{t(AuditT::Month)}</label>
                                <select id="archive-month" on:change=move |ev| month.set(event_target_value(&ev)) prop:value=move || month.get()>
                                    {verified.into_iter().map(|m| view! { <option value=m.clone()>{m.clone()}</option> }).collect_view()}
                                </select>
                            </div>
                            <div class="field">
                                <label for="archive-reason">{t(AuditT::WhyNeeded)}</label>
                                <textarea id="archive-reason" rows="2" aria-describedby="archive-reason-hint archive-reason-error"
                                    prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev))></textarea>
                                <p class="muted" id="archive-reason-hint">{t(AuditT::ReasonHint)}</p>
                                <p class="field-error" id="archive-reason-error" aria-live="polite" data-testid="archive-reason-error">{reason_error}</p>
                            </div>
                            <button type="submit" prop:disabled=move || asking.pending().get()>{t(AuditT::GetMonthLink)}</button>
                        </form>
                        {move || other_error().map(|m| view! { <p class="notice error" role="alert" data-testid="archive-link-error">{m}</p> })}
                        {move || link.get().map(|l| view! {
                            <p class="notice success" role="status">
                                {t(AuditT::LinkReadyBefore)} <common::time::LocalTime at={l.expires_at}/> {t(AuditT::LinkReadyAfter)}
                                <a data-testid="archive-download" href=l.url.clone() download=l.file_name.clone()>{tf(AuditT::DownloadFile, &[("file", &l.file_name)])}</a>
                            </p>
                        })}
                        <h3>{t(AuditT::RecentDownloads)}</h3>
                        <RetrievalsTable retrievals=o.retrievals.clone()/>
                    }.into_any()
                }/>
        </section>
        <ExportsSection/>
    }
}

/// The archived months and where each is (written, verified, dropped from the database, failed).
#[component]
fn MonthsTable(months: Vec<super::ArchivedMonth>) -> impl IntoView {
    if months.is_empty() {
        return view! { <p class="empty" data-testid="archive-empty">{t(AuditT::ArchiveEmpty)}</p> }.into_any();
    }
    view! {
        <ListTable testid="archive-months" heads=vec![t(AuditT::Month), t(AuditT::Events), t(AuditT::Size), t(AuditT::VerifiedUtc), t(AuditT::State)]>
                {months.into_iter().map(|m| {
                    let state = match (m.status, m.dropped) {
                        (MonthStatus::Verified, true) => t(AuditT::MonthDropped),
                        (MonthStatus::Verified, false) => t(AuditT::MonthVerified),
                        (MonthStatus::Written, _) => t(AuditT::MonthWritten),
                        (MonthStatus::Failed, _) => t(AuditT::MonthFailed),
                    };
                    view! {
                        <tr data-testid="archive-month" data-month=m.month.clone() data-status=m.status.as_str()>
                            <td>{m.month.clone()}</td>
                            <td>{m.events.map(num).unwrap_or_else(|| "—".into())}</td>
                            <td>{m.bytes.map(|b| common::ui::format_bytes(b as u64)).unwrap_or_else(|| "—".into())}</td>
                            <td class="nowrap">{m.verified_at.map(format_time).unwrap_or_else(|| "—".into())}</td>
                            <td>{state}</td>
                        </tr>
                    }
                }).collect_view()}
        </ListTable>
    }
    .into_any()
}

/// Who downloaded which archived month, and why.
#[component]
fn RetrievalsTable(retrievals: Vec<super::RetrievalView>) -> impl IntoView {
    if retrievals.is_empty() {
        return view! { <p class="empty">{t(AuditT::NoneYet)}</p> }.into_any();
    }
    view! {
        <ListTable testid="archive-retrievals" heads=vec![t(AuditT::WhenUtc), t(AuditT::Who), t(AuditT::Month), t(AuditT::Reason)]>
                {retrievals.into_iter().map(|r| view! {
                    <tr data-testid="archive-retrieval">
                        <td class="nowrap"><common::time::LocalTime at={r.issued_at}/></td>
                        <td>{r.admin_name.unwrap_or_else(|| t(AuditT::RemovedAdmin).into())}</td>
                        <td>{r.month}</td>
                        <td>{r.reason}</td>
                    </tr>
                }).collect_view()}
        </ListTable>
    }
    .into_any()
}

/// The export requests, refreshed in place.
#[component]
fn ExportsTable(list: RwSignal<Option<Vec<super::ExportView>>>) -> impl IntoView {
    view! {
    {move || match list.get() {
        None => view! { <p>{t(T::Loading)}</p> }.into_any(),
        Some(l) if l.is_empty() => view! { <p class="empty">{t(AuditT::NoExports)}</p> }.into_any(),
        Some(_) => view! {
            <table class="list" data-testid="export-requests">
                <thead><tr><th>{t(AuditT::RequestedUtc)}</th><th>{t(AuditT::Range)}</th><th>{t(AuditT::By)}</th><th>{t(AuditT::State)}</th><th>{t(AuditT::Events)}</th><th>{t(AuditT::Size)}</th><th><span class="sr-only">{t(AuditT::Download)}</span></th></tr></thead>
                <tbody>
                    // Keyed: a row (and a link just asked for) stays while the list refreshes.
                    <For each=move || list.get().unwrap_or_default() key=|r| (r.id, r.status, r.expired) let:r>
                        <ExportRow r/>
                    </For>
                </tbody>
            </table>
        }.into_any(),
    }}
    }
}

#[component]
fn ExportsSection() -> impl IntoView {
    let requests = Resource::new(|| (), |_| export_requests());
    // The rows live in a signal, so a refresh updates them instead of rebuilding the table.
    let list = RwSignal::new(None::<Vec<super::ExportView>>);
    let load_error = RwSignal::new(None::<AppError>);
    Effect::new(move |_| match requests.get() {
        Some(Ok(l)) => {
            list.set(Some(l));
            load_error.set(None);
        }
        Some(Err(e)) => load_error.set(Some(e)),
        None => {}
    });
    let from = RwSignal::new(String::new());
    let to = RwSignal::new(String::new());
    let error = RwSignal::new(None::<AppError>);
    let sent = RwSignal::new(false);

    // While a request waits or runs, look again every two seconds.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let open = list.get().is_some_and(|list| list.iter().any(|r| matches!(r.status, ExportStatus::Pending | ExportStatus::Running)));
        if open {
            set_timeout(move || requests.refetch(), std::time::Duration::from_secs(2));
        }
    });

    // Requesting goes through the server function's action: its value says how it went.
    let request = ServerAction::<RequestExport>::new();
    Effect::new(move |_| match request.value().get() {
        Some(Ok(())) => {
            error.set(None);
            sent.set(true);
            requests.refetch();
        }
        Some(Err(e)) => error.set(Some(e)),
        None => {}
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        sent.set(false);
        request.dispatch(RequestExport { from: from.get_untracked(), to: to.get_untracked() });
    };
    let field_err = move |field: &'static str| move || field_error(&error.get(), field);

    view! {
        <section aria-labelledby="exports-title">
            <h2 id="exports-title">{t(AuditT::ExportHeading)}</h2>
            <p class="muted">{t(AuditT::ExportIntro)}</p>
            <form class="filters" data-testid="export-form" on:submit=submit>
                <div class="field">
                    <label for="export-from">{t(AuditT::From)}</label>
                    <input id="export-from" type="date" required prop:value=move || from.get() on:input=move |ev| from.set(event_target_value(&ev)) aria-describedby="export-from-error"/>
                    <p class="field-error" id="export-from-error" aria-live="polite">{field_err("from")}</p>
                </div>
                <div class="field">
                    <label for="export-to">{t(AuditT::To)}</label>
                    <input id="export-to" type="date" required prop:value=move || to.get() on:input=move |ev| to.set(event_target_value(&ev)) aria-describedby="export-to-error"/>
                    <p class="field-error" id="export-to-error" aria-live="polite">{field_err("to")}</p>
                </div>
                <div class="field actions">
                    <button type="submit">{t(AuditT::RequestExport)}</button>
                </div>
            </form>
            {move || match error.get() {
                Some(AppError::Invalid(_)) | None => None,
                Some(e) => Some(view! { <p class="notice error" role="alert" data-testid="export-error">{describe(&e)}</p> }),
            }}
            {move || sent.get().then(|| view! { <p class="notice success" role="status">{t(AuditT::ExportRequested)}</p> })}
            {move || load_error.get().map(|e| view! { <p class="notice error" role="alert">{describe(&e)}</p> })}
            <ExportsTable list/>
        </section>
    }
}

#[component]
fn ExportRow(r: super::ExportView) -> impl IntoView {
    let link = RwSignal::new(None::<Result<super::DownloadLink, AppError>>);
    let id = r.id.to_string();
    let state = match (r.status, r.expired) {
        (ExportStatus::Done, true) => t(AuditT::ExportExpiredState),
        (ExportStatus::Done, false) => t(AuditT::ExportReady),
        (ExportStatus::Pending, _) => t(AuditT::ExportWaiting),
        (ExportStatus::Running, _) => t(AuditT::ExportRunning),
        (ExportStatus::Failed, _) => t(AuditT::ExportFailed),
    };
    let downloadable = r.status == ExportStatus::Done && !r.expired;
    // A link is asked for through the server function's action (recorded: who, when).
    let action = ServerAction::<ExportLink>::new();
    Effect::new(move |_| {
        let Some(answer) = action.value().get() else { return };
        if answer.is_ok() {
            forget_when_expired(move || link.set(None));
        }
        link.set(Some(answer));
    });
    let get = move |_| {
        action.dispatch(ExportLink { id: id.clone() });
    };
    view! {
        <tr data-testid="export-request" data-status=r.status.as_str() data-expired=r.expired.to_string()>
            <td class="nowrap"><common::time::LocalTime at={r.requested_at}/></td>
            <td class="nowrap">{tf(AuditT::RangeFromTo, &[("from", &r.from), ("to", &r.to)])}</td>
            <td>{r.admin_name.clone().unwrap_or_else(|| t(AuditT::RemovedAdmin).into())}</td>
            <td>{state}</td>
            <td>{r.events.map(num).unwrap_or_else(|| "—".into())}</td>
            <td>{r.bytes.map(|b| common::ui::format_bytes(b as u64)).unwrap_or_else(|| "—".into())}</td>
            <td>
                {move || match link.get() {
                    Some(Ok(l)) => view! { <a data-testid="export-download" href=l.url.clone() download=l.file_name.clone()>{tf(AuditT::DownloadFile, &[("file", &l.file_name)])}</a> }.into_any(),
                    Some(Err(AppError::Gone)) => view! { <span>{t(AuditT::Expired)}</span> }.into_any(),
                    Some(Err(e)) => view! { <span class="field-error" role="alert">{describe(&e)}</span> }.into_any(),
                    None if downloadable => view! { <button type="button" class="small" data-testid="export-get-link" on:click=get.clone()>{t(AuditT::GetLink)}</button> }.into_any(),
                    None => ().into_any(),
                }}
            </td>
        </tr>
    }
}
