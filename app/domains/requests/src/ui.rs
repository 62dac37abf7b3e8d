//! The data requests pages: `/admin/requests` (record a request, the list with deadlines) and
//! `/admin/requests/{id}` (what Ebb holds for the address, the copy, the erasure with its dry run,
//! closing). Every change is a form posting its server function: it works without JavaScript
//! (the page reloads with the new state, or with the error signed into its URL), and hydrated it
//! updates in place.

use leptos::prelude::*;
use leptos::server::SharedValue;
use leptos::server_fn::ServerFn;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::api::{find_request, list_requests, request_overview, CloseRequest, EraseRequest, RecordRequest};
use super::texts::{CopyT, RequestsT};
use super::{Findings, Overview, RequestKind, RequestStatus, RequestView};
use common::error::AppError;
use common::i18n::{num, t, tf, T};
use common::personal::{kind_label, Found};
use common::time::format_time;
use common::ui::{describe, Card, Loaded, UiT};

/// The error a plain form post of `path` was redirected back with, when this server signed it.
fn error_from_url(path: &'static str) -> Option<AppError> {
    let checked = SharedValue::new(move || {
        #[cfg(feature = "ssr")]
        return kernel::request::verified_url_error(path).map(|e| leptos::server_fn::error::ServerFnUrlError::<AppError>::decode_err(&e));
        #[cfg(not(feature = "ssr"))]
        {
            let _ = path;
            None
        }
    });
    checked.into_inner()
}

fn kind_short(kind: RequestKind) -> &'static str {
    t(match kind {
        RequestKind::Access => RequestsT::KindShortAccess,
        RequestKind::Copy => RequestsT::KindShortCopy,
        RequestKind::Erasure => RequestsT::KindShortErasure,
    })
}

fn status_text(status: RequestStatus) -> &'static str {
    t(match status {
        RequestStatus::Open => RequestsT::StatusOpen,
        RequestStatus::Erasing => RequestsT::StatusErasing,
        RequestStatus::Done => RequestsT::StatusDone,
    })
}

/// The deadline in words, and a class for its urgency.
fn deadline(r: &RequestView) -> (String, &'static str) {
    if let Some(met) = r.met_deadline() {
        return if met { (t(RequestsT::MetDeadline).into(), "ok") } else { (t(RequestsT::MissedDeadline).into(), "late") };
    }
    match r.days_left {
        d if d < 0 => (tf(RequestsT::DaysOverdue, &[("n", &num(-d))]), "late"),
        0 => (t(RequestsT::DueToday).into(), "soon"),
        1 => (t(RequestsT::OneDayLeft).into(), "soon"),
        d if d <= 7 => (tf(RequestsT::DaysLeft, &[("n", &num(d))]), "soon"),
        d => (tf(RequestsT::DaysLeft, &[("n", &num(d))]), ""),
    }
}

/// `/admin/requests`.
#[component]
pub fn RequestsPage() -> impl IntoView {
    let record = ServerAction::<RecordRequest>::new();
    let list = Resource::new(move || record.version().get(), |_| list_requests());
    view! {
        <Title text=format!("{}{}", t(RequestsT::Title), t(UiT::AdminTitleSuffix))/>
        <h1>{t(RequestsT::Title)}</h1>
        <p class="lead">{t(RequestsT::Intro)}</p>
        <RecordForm record/>
        <Card id="requests-list" title=t(RequestsT::ListHeading)>
            <Loaded value=move || list.get() describe=describe ok=move |v| match v {
                list if list.is_empty() => view! { <p class="empty" data-testid="no-requests">{t(RequestsT::NoRequests)}</p> }.into_any(),
                list => view! { <RequestsTable list/> }.into_any(),
            }/>
        </Card>
    }
}

#[component]
fn RequestsTable(list: Vec<RequestView>) -> impl IntoView {
    view! {
        <table class="list" data-testid="requests">
            <thead><tr>
                <th scope="col">{t(RequestsT::ColRequest)}</th><th scope="col">{t(RequestsT::ColAddress)}</th>
                <th scope="col">{t(RequestsT::ColReceived)}</th><th scope="col">{t(RequestsT::ColDeadline)}</th>
                <th scope="col">{t(RequestsT::ColStatus)}</th>
            </tr></thead>
            <tbody>
                {list.into_iter().map(|r| {
                    let (due, class) = deadline(&r);
                    let href = format!("/admin/requests/{}", r.id);
                    view! {
                        <tr data-testid="request-row">
                            <td><a href=href>{format!("#{} ", r.id)}{kind_short(r.kind)}</a></td>
                            <td>{r.email.clone().unwrap_or_else(|| t(RequestsT::ForgottenShort).into())}</td>
                            <td class="nowrap">{r.received_on.to_string()}</td>
                            <td class="nowrap"><span class=format!("deadline {class}")>{r.due_on.to_string()}" · "{due}</span></td>
                            <td>{status_text(r.status)}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The form that records a request: a plain form (works without JavaScript); hydrated, it opens
/// the new request's page.
#[component]
fn RecordForm(record: ServerAction<RecordRequest>) -> impl IntoView {
    let from_url = error_from_url(RecordRequest::PATH);
    let error = Memo::new(move |_| match record.value().get() {
        Some(Err(e)) => Some(e),
        Some(Ok(_)) => None,
        None => from_url.clone(),
    });
    let field = move |name: &'static str| {
        move || match error.get() {
            Some(AppError::Invalid(fields)) => fields.get(name).cloned(),
            _ => None,
        }
    };
    let general = move || error.get().filter(|e| !matches!(e, AppError::Invalid(_))).map(|e| describe(&e));
    Effect::new(move |_| {
        if let Some(Ok(id)) = record.value().get() {
            leptos_router::hooks::use_navigate()(&format!("/admin/requests/{id}"), Default::default());
        }
    });
    let days = SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return kernel::session::state().map(|s| s.domain::<super::RequestSettings>().deadline_days).unwrap_or(30);
        #[cfg(not(feature = "ssr"))]
        30i64
    })
    .into_inner();
    view! {
        <Card id="record-heading" title=t(RequestsT::RecordHeading)>
            <ActionForm action=record attr:data-testid="record-request">
                <RecordFields field_error=field days/>
                {move || general().map(|m| view! { <p class="notice error" role="alert">{m}</p> })}
                <button type="submit" disabled=move || record.pending().get()>
                    {move || if record.pending().get() { t(RequestsT::Recording) } else { t(RequestsT::Record) }}
                </button>
            </ActionForm>
        </Card>
    }
}

#[component]
fn RecordFields<F, G>(field_error: F, days: i64) -> impl IntoView
where
    F: Fn(&'static str) -> G + Copy + Send + Sync + 'static,
    G: Fn() -> Option<String> + Send + Sync + 'static,
{
    let invalid = move |name: &'static str| {
        let e = field_error(name);
        move || if e().is_some() { "true" } else { "false" }
    };
    view! {
        <fieldset class="choices">
            <legend>{t(RequestsT::KindLabel)}</legend>
            {RequestKind::ALL.into_iter().map(|k| view! {
                <label class="choice"><input type="radio" name="kind" value=k.as_str() required=true/>" "{k.label()}</label>
            }).collect_view()}
            <p id="kind-error" class="field-error" aria-live="polite">{field_error("kind")}</p>
        </fieldset>
        <label for="request-email">{t(RequestsT::EmailLabel)}</label>
        <input id="request-email" name="email" type="email" required=true maxlength="254" autocomplete="off"
            aria-invalid=invalid("email") aria-describedby="request-email-hint request-email-error"/>
        <p id="request-email-hint" class="hint left">{t(RequestsT::EmailHint)}</p>
        <p id="request-email-error" class="field-error" aria-live="polite">{field_error("email")}</p>
        <label for="request-received">{t(RequestsT::ReceivedLabel)}</label>
        <input id="request-received" name="received" type="date" aria-invalid=invalid("received") aria-describedby="request-received-hint request-received-error"/>
        <p id="request-received-hint" class="hint left">{tf(RequestsT::ReceivedHint, &[("days", &days)])}</p>
        <p id="request-received-error" class="field-error" aria-live="polite">{field_error("received")}</p>
        <label for="request-note">{t(RequestsT::NoteLabel)}</label>
        <textarea id="request-note" name="note" rows="3" maxlength="1000" aria-invalid=invalid("note") aria-describedby="request-note-hint request-note-error"></textarea>
        <p id="request-note-hint" class="hint left">{t(RequestsT::NoteHint)}</p>
        <p id="request-note-error" class="field-error" aria-live="polite">{field_error("note")}</p>
    }
}

/// `/admin/requests/{id}` (`?step=preview`: the erasure's dry run).
#[component]
pub fn RequestPage() -> impl IntoView {
    // Both follow client-side navigation (the dry run is a link to `?step=preview`).
    let params = use_params_map();
    let query = use_query_map();
    // Not a whole number: no such request (404), like an unknown one.
    let id = Memo::new(move |_| params.with(|p| p.get("id").and_then(|s| s.parse::<i64>().ok())));
    let preview = Memo::new(move |_| query.with(|q| q.get("step").as_deref() == Some("preview")));
    let erase = ServerAction::<EraseRequest>::new();
    let close = ServerAction::<CloseRequest>::new();
    // Fetched again after a change here, and while an erasure runs, after each run of its job.
    let jobs = common::live::live_version(&[common::live::Topic::Job]);
    let erasing = RwSignal::new(false);
    let trigger = move || (id.get(), preview.get(), erase.version().get(), close.version().get(), if erasing.get() { jobs() } else { 0 });
    let findings = Resource::new(trigger, move |(id, preview, ..)| async move {
        match id {
            Some(id) => find_request(id.into(), preview).await,
            None => Err(AppError::NotFound),
        }
    });
    // `try_get`: the document's title may be read after a HEAD request's page was dropped (its
    // signals disposed); that must not panic the render.
    let title = move || tf(RequestsT::RequestTitle, &[("id", &id.try_get().flatten().map(|id| id.to_string()).unwrap_or_default())]);
    view! {
        <Title text=move || format!("{}{}", title(), t(UiT::AdminTitleSuffix))/>
        <p><a href="/admin/requests">{t(RequestsT::Back)}</a></p>
        <h1>{title}</h1>
        <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
            {move || findings.get().map(|r| match r {
                Err(e) => {
                    // An unknown request is a 404 page, not a 200 with "not found" inside.
                    #[cfg(feature = "ssr")]
                    common::error::set_status(&e);
                    view! { <p class="notice error" role="alert" data-testid="request-error">{describe(&e)}</p> }.into_any()
                }
                Ok(f) => {
                    erasing.set(f.request.status == RequestStatus::Erasing);
                    view! { <RequestBody f preview=preview.get_untracked() erase close/> }.into_any()
                }
            })}
        </Transition>
    }
}

#[component]
fn RequestBody(f: Findings, preview: bool, erase: ServerAction<EraseRequest>, close: ServerAction<CloseRequest>) -> impl IntoView {
    let r = f.request.clone();
    let forgotten = r.email.is_none();
    let answer = match (r.kind, r.status) {
        (_, RequestStatus::Done) | (_, RequestStatus::Erasing) => view! { <ErasureState r=r.clone()/> }.into_any(),
        (RequestKind::Erasure, RequestStatus::Open) => view! { <EraseSection f=f.clone() preview erase/> }.into_any(),
        (_, RequestStatus::Open) => view! { <CloseSection id=r.id close/> }.into_any(),
    };
    view! {
        <RequestSummary r=r.clone()/>
        {forgotten.then(|| view! { <p class="notice">{t(RequestsT::Forgotten)}</p> })}
        {(!forgotten).then(|| view! { <FoundSection f=f.clone()/> <CopySection f=f.clone()/> })}
        {answer}
    }
}

#[component]
fn RequestSummary(r: RequestView) -> impl IntoView {
    let (due, class) = deadline(&r);
    let by = |name: Option<String>| name.unwrap_or_else(|| t(RequestsT::Ebb).into());
    view! {
        <section class="card" aria-labelledby="request-summary">
            <h2 id="request-summary" class="sr-only">{t(RequestsT::Summary)}</h2>
            <dl class="facts" data-testid="request-summary">
                <dt>{t(RequestsT::KindLabel)}</dt><dd>{r.kind.label()}</dd>
                <dt>{t(RequestsT::ColAddress)}</dt><dd data-testid="request-email">{r.email.clone().unwrap_or_else(|| t(RequestsT::ForgottenShort).into())}</dd>
                <dt>{t(RequestsT::ColReceived)}</dt><dd>{r.received_on.to_string()}</dd>
                <dt>{t(RequestsT::ColDeadline)}</dt><dd><span class=format!("deadline {class}") data-testid="request-deadline">{r.due_on.to_string()}" · "{due}</span></dd>
                <dt>{t(RequestsT::ColStatus)}</dt><dd data-testid="request-status">{status_text(r.status)}</dd>
            </dl>
            {(!r.note.is_empty()).then(|| view! { <p class="note">{r.note.clone()}</p> })}
            <p class="muted">{tf(RequestsT::RecordedBy, &[("at", &format_time(r.recorded_at)), ("name", &by(r.recorded_by.clone()))])}</p>
            {r.closed_at.map(|at| view! { <p class="muted">{tf(RequestsT::ClosedBy, &[("at", &format_time(at)), ("name", &by(r.closed_by.clone()))])}</p> })}
        </section>
    }
}

fn when(at: Option<time::OffsetDateTime>) -> String {
    at.map(format_time).unwrap_or_else(|| "—".into())
}

#[component]
fn FoundSection(f: Findings) -> impl IntoView {
    let lang = common::i18n::lang();
    let total = f.total();
    view! {
        <Card id="found-heading" title=t(RequestsT::FoundHeading)>
            <p class="muted">{tf(RequestsT::FoundChecked, &[("at", &format_time(f.checked_at))])}</p>
            {(total == 0).then(|| view! { <p data-testid="nothing-found">{t(RequestsT::NothingFound)}</p> })}
            <table class="list" data-testid="found">
                <thead><tr>
                    <th scope="col">{t(RequestsT::ColKind)}</th><th scope="col" class="num">{t(RequestsT::ColItems)}</th>
                    <th scope="col">{t(RequestsT::ColKept)}</th><th scope="col">{t(RequestsT::ColOldest)}</th><th scope="col">{t(RequestsT::ColNewest)}</th>
                </tr></thead>
                <tbody>
                    {f.found.into_iter().map(|k| view! {
                        <tr data-testid="found-row" data-kind=k.kind.clone()>
                            <th scope="row">{kind_label(&k.kind, lang)}</th>
                            <td class="num" data-testid="found-count">{num(k.count)}</td>
                            <td>{kept_text(&k)}</td>
                            <td class="nowrap">{when(k.oldest)}</td>
                            <td class="nowrap">{when(k.newest)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <h3>{t(RequestsT::NotSearchableHeading)}</h3>
            <ul data-testid="not-searchable">
                {[CopyT::NotSearchableClients, CopyT::NotSearchableAudit, CopyT::NotSearchableFiles, CopyT::NotSearchableMail]
                    .into_iter().map(|k| view! { <li>{t(k)}</li> }).collect_view()}
            </ul>
        </Card>
    }
}

fn kept_text(k: &Found) -> String {
    if k.kept == 0 {
        return "—".into();
    }
    format!("{}: {}", num(k.kept), k.kept_why.join("; "))
}

/// A link to a part of the copy: a sensitive download, so the page checks first that the session
/// may (a fresh passkey check) and asks for the passkey when not.
#[component]
fn CopyLink(href: String, testid: &'static str, text: String) -> impl IntoView {
    let target = href.clone();
    let click = common::ui::checked_download(move || target.clone());
    view! { <a href=href download="" data-testid=testid on:click=click>{text}</a> }
}

#[component]
fn CopySection(f: Findings) -> impl IntoView {
    let id = f.request.id;
    let lang = common::i18n::lang();
    view! {
        <Card id="copy-heading" title=t(RequestsT::CopyHeading)>
            <p>{t(RequestsT::CopyIntro)}</p>
            <ul class="links" data-testid="copy-links">
                <li><CopyLink href=format!("/admin/requests/{id}/copy.json") testid="copy-json" text=t(RequestsT::CopyJson).to_string()/></li>
                <li><CopyLink href=format!("/admin/requests/{id}/cover.txt") testid="copy-cover" text=t(RequestsT::CopyCover).to_string()/></li>
                {f.found.into_iter().filter(|k| k.count > 0).map(|k| {
                    let label = kind_label(&k.kind, lang);
                    let text = tf(RequestsT::CopyCsv, &[("label", &label)]);
                    view! { <li><CopyLink href=format!("/admin/requests/{id}/copy/{}.csv", k.kind) testid="copy-csv" text/></li> }
                }).collect_view()}
            </ul>
        </Card>
    }
}

/// An open erasure request: the dry run first (a link, so it works without JavaScript), then the
/// form that starts the erasure.
#[component]
fn EraseSection(f: Findings, preview: bool, erase: ServerAction<EraseRequest>) -> impl IntoView {
    let from_url = error_from_url(EraseRequest::PATH);
    let error = move || match erase.value().get() {
        Some(Err(e)) => Some(describe(&e)),
        Some(Ok(())) => None,
        None => from_url.as_ref().map(describe),
    };
    let body = if preview {
        view! { <DryRun f erase/> }.into_any()
    } else {
        let href = format!("/admin/requests/{}?step=preview", f.request.id);
        view! { <p>{t(RequestsT::PreviewIntro)}</p> <a class="button" href=href data-testid="preview-erasure">{t(RequestsT::Preview)}</a> }.into_any()
    };
    view! {
        <Card id="erase-heading" title=t(RequestsT::EraseHeading)>
            {body}
            {move || error().map(|m| view! { <p class="notice error" role="alert" data-testid="erase-error">{m}</p> })}
        </Card>
    }
}

#[component]
fn DryRun(f: Findings, erase: ServerAction<EraseRequest>) -> impl IntoView {
    let lang = common::i18n::lang();
    let erasable = f.erasable();
    let goes: Vec<_> = f.found.iter().filter(|k| k.erasable() > 0).map(|k| format!("{}: {}", kind_label(&k.kind, lang), num(k.erasable()))).collect();
    let stays: Vec<_> = f.found.iter().filter(|k| k.kept > 0).map(|k| format!("{}: {}", kind_label(&k.kind, lang), kept_text(k))).collect();
    let list = |items: Vec<String>| {
        if items.is_empty() {
            view! { <p>{t(RequestsT::ErasedNone)}</p> }.into_any()
        } else {
            view! { <ul>{items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view()}</ul> }.into_any()
        }
    };
    let id = f.request.id;
    let confirm = move |ev: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        if !common::ui::confirmed(t(RequestsT::EraseConfirm)) {
            ev.prevent_default();
        }
        let _ = ev;
    };
    view! {
        <div data-testid="dry-run">
            <h3>{t(RequestsT::DryRunHeading)}</h3>
            <h4>{t(RequestsT::WouldErase)}</h4>
            {list(goes)}
            <h4>{t(RequestsT::WouldStay)}</h4>
            {list(stays)}
            <ActionForm action=erase on:submit=confirm attr:data-testid="erase-form">
                <input type="hidden" name="id" value=id/>
                <button type="submit" class="danger" data-testid="erase" disabled=move || erase.pending().get()>
                    {if erasable > 0 { tf(RequestsT::EraseButton, &[("n", &num(erasable))]) } else { t(RequestsT::EraseNothingButton).into() }}
                </button>
            </ActionForm>
        </div>
    }
}

/// An erasure under way or finished, and a closed request's outcome.
#[component]
fn ErasureState(r: RequestView) -> impl IntoView {
    let lang = common::i18n::lang();
    let words = |counts: &[(String, i64)]| {
        let parts: Vec<String> = counts.iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{} {}", kind_label(k, lang), num(*n))).collect();
        if parts.is_empty() {
            t(RequestsT::ErasedNone).to_string()
        } else {
            parts.join(", ")
        }
    };
    let so_far: i64 = r.erased.iter().map(|(_, n)| n).sum();
    let text = match r.status {
        RequestStatus::Erasing => tf(RequestsT::Erasing, &[("n", &num(so_far))]),
        _ if r.kind == RequestKind::Erasure => tf(RequestsT::Erased, &[("erased", &words(&r.erased)), ("kept", &words(&r.kept))]),
        _ => t(RequestsT::ClosedNow).into(),
    };
    let role = if r.status == RequestStatus::Erasing { "status" } else { "note" };
    view! {
        <section class="card" aria-labelledby="outcome-heading">
            <h2 id="outcome-heading">{if r.kind == RequestKind::Erasure { t(RequestsT::EraseHeading) } else { t(RequestsT::CloseHeading) }}</h2>
            <p class="notice success" role=role data-testid="request-outcome">{text}</p>
        </section>
    }
}

#[component]
fn CloseSection(id: i64, close: ServerAction<CloseRequest>) -> impl IntoView {
    let from_url = error_from_url(CloseRequest::PATH);
    let error = move || match close.value().get() {
        Some(Err(e)) => Some(describe(&e)),
        Some(Ok(())) => None,
        None => from_url.as_ref().map(describe),
    };
    view! {
        <Card id="close-heading" title=t(RequestsT::CloseHeading)>
            <p>{t(RequestsT::CloseIntro)}</p>
            <ActionForm action=close attr:data-testid="close-form">
                <input type="hidden" name="id" value=id/>
                <button type="submit" data-testid="close-request" disabled=move || close.pending().get()>{t(RequestsT::CloseButton)}</button>
            </ActionForm>
            {move || error().map(|m| view! { <p class="notice error" role="alert" data-testid="close-error">{m}</p> })}
        </Card>
    }
}

/// The dashboard's card: open requests, the nearest deadline, the urgent ones.
#[component]
pub fn RequestsCard() -> impl IntoView {
    let overview = Resource::new(|| (), |_| request_overview());
    view! {
        <Card id="dash-requests" title=t(RequestsT::Title)>
            <Loaded value=move || overview.get() describe=describe ok=move |o| view! { <OverviewLine o/> }.into_any()/>
            <a href="/admin/requests">{t(RequestsT::DashOpenPage)}</a>
        </Card>
    }
}

#[component]
fn OverviewLine(o: Overview) -> impl IntoView {
    if o.open == 0 {
        return view! { <p data-testid="requests-overview">{t(RequestsT::DashNone)}</p> }.into_any();
    }
    let mut parts = vec![tf(RequestsT::DashOpen, &[("n", &num(o.open))])];
    if let Some(next) = o.next_due {
        parts.push(tf(RequestsT::DashNext, &[("date", &next)]));
    }
    let urgent = o.overdue > 0 || o.due_soon > 0;
    if o.due_soon > 0 {
        parts.push(tf(RequestsT::DashSoon, &[("n", &num(o.due_soon))]));
    }
    if o.overdue > 0 {
        parts.push(tf(RequestsT::DashOverdue, &[("n", &num(o.overdue))]));
    }
    let class = if urgent { "notice error" } else { "" };
    view! { <p class=class data-testid="requests-overview">{parts.join(" · ")}</p> }.into_any()
}
