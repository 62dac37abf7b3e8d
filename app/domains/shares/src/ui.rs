//! Share pages: the admin's `/admin/shares` (upload, the link shown once, the list) and the
//! recipient's `/s/{token}` (file, size, expiry, Download).

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::cards::{error_notice, EndCard};
use super::texts::SharesT;
#[cfg(feature = "hydrate")]
use super::upload::UploadError;
use super::{NewShare, ShareLanding, ShareLimits, ShareOverview, ShareState, ShareSummary, EXPIRY_CHOICES};
use common::error::AppError;
use common::i18n::{num, t, tf, T};
use common::time::format_time;
use common::ui::{describe, format_bytes, Card, CopyableLink, Loaded, Outcome, UiT};

pub use super::ui_requests::RequestUploadPage;

/// A failed call on the admin's shares page: what can vanish there is a share, and a file
/// above the limit is answered with the way out.
fn describe_shares(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(SharesT::NotFound).into(),
        AppError::TooLarge { limit_bytes } => tf(SharesT::TooLarge, &[("limit", &format_bytes(*limit_bytes))]),
        other => describe(other),
    }
}

/// A share's state in words (the admin's list).
fn state_label(state: ShareState) -> &'static str {
    t(match state {
        ShareState::Active => SharesT::StateActive,
        ShareState::Downloaded => SharesT::StateDownloaded,
        ShareState::Expired => SharesT::StateExpired,
        ShareState::Purged { downloaded: true } => SharesT::StateDownloadedDeleted,
        ShareState::Purged { downloaded: false } => SharesT::StateExpiredDeleted,
    })
}

/// The upload's progress: bytes sent and bytes in all.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Progress {
    loaded: f64,
    total: f64,
}

/// Loads the shares older than the cursor `next` into `more`.
fn load_older(more: RwSignal<Vec<ShareSummary>>, next: RwSignal<Option<i64>>, message: RwSignal<Option<Result<String, String>>>) {
    let before = next.get_untracked();
    // Scoped: the texts set after the call are in the page's language (its context).
    leptos::task::spawn_local_scoped(async move {
        match list_shares(before).await {
            Ok(page) => {
                more.update(|m| m.extend(page.items));
                next.set(page.next);
            }
            Err(e) => message.set(Some(Err(describe_shares(&e)))),
        }
    });
}

#[component]
pub fn SharesPage() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    // Fetched again when a share is downloaded, revoked or purged (here or on another instance).
    let live = common::live::live_version(&[common::live::Topic::Share, common::live::Topic::Job]);
    let list = Resource::new(move || (reload.get(), live()), |_| list_shares(None));
    let more = RwSignal::new(Vec::<ShareSummary>::new());
    let next = RwSignal::new(None::<i64>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let created = RwSignal::new(None::<NewShare>);
    // Looked up here: the hold form calls back from a task, outside this page's context.
    let held_message = t(SharesT::Held);

    Effect::new(move |_| {
        if let Some(Ok(page)) = list.get() {
            more.set(Vec::new());
            next.set(page.next);
        }
    });

    let load_more = move |_| load_older(more, next, message);

    // Revoking goes through the server function's action: its value says how it went.
    let revoke_action = ServerAction::<RevokeShare>::new();
    let revoking = RwSignal::new(String::new());
    Effect::new(move |_| match revoke_action.value().get() {
        Some(Ok(())) => {
            message.set(Some(Ok(tf(SharesT::Revoked, &[("name", &revoking.get_untracked())]))));
            reload.update(|n| *n += 1);
        }
        Some(Err(e)) => message.set(Some(Err(describe_shares(&e)))),
        None => {}
    });
    let revoke = move |share: ShareSummary| {
        #[cfg(feature = "hydrate")]
        {
            let question = tf(SharesT::ConfirmRevoke, &[("name", &share.file_name)]);
            if !common::ui::confirmed(&question) {
                return;
            }
        }
        revoking.set(share.file_name);
        revoke_action.dispatch(RevokeShare { id: share.id.into() });
    };

    let rows = Signal::derive(move || {
        let mut all = list.get().and_then(Result::ok).map(|p| p.items).unwrap_or_default();
        all.extend(more.get());
        all
    });
    let on_held = move || {
        message.set(Some(Ok(held_message.into())));
        reload.update(|n| *n += 1)
    };
    let on_published = Callback::new(move |link: NewShare| {
        created.set(Some(link));
        reload.update(|n| *n += 1);
        #[cfg(feature = "hydrate")]
        if let Some(el) = document().get_element_by_id("share-new") {
            el.scroll_into_view();
        }
    });

    view! {
        <Title text=format!("{}{}", t(SharesT::Heading), t(UiT::AdminTitleSuffix))/>
        <h1>{t(SharesT::Heading)}</h1>
        <p class="lead">{t(SharesT::Lead)}</p>
        <NewShareCard created reload/>
        <super::ui_requests::FileRequestCard/>
        <Outcome message testid="shares-message"/>
        <h2>{t(SharesT::AllShares)}</h2>
        // The table stays while the list is fetched again (live updates): only rows whose share
        // changed are drawn anew, so an open hold form and what is typed in it are kept.
        <SharesTable rows revoke on_held on_published/>
        <Show when=move || next.get().is_some()>
            <button type="button" class="secondary" on:click=load_more>{t(UiT::ShowOlder)}</button>
        </Show>
    }
}

/// The form for a new share, and the link once it is made.
#[component]
fn NewShareCard(created: RwSignal<Option<NewShare>>, reload: RwSignal<u32>) -> impl IntoView {
    let limits = Resource::new(|| (), |_| get_share_limits());
    view! {
    <Card id="share-new" title=t(SharesT::NewHeading)>
        <Loaded value=move || limits.get() describe=describe_shares ok=move |limits| view! { <UploadForm limits created reload/> }.into_any()/>
        {move || created.get().map(|share| view! { <ShareLink share/> })}
    </Card>
    }
}

/// Every share, newest first, with what can be done to each.
#[component]
fn SharesTable(
    rows: Signal<Vec<ShareSummary>>,
    revoke: impl Fn(ShareSummary) + Copy + Send + Sync + 'static,
    on_held: impl Fn() + Copy + Send + Sync + 'static,
    on_published: Callback<NewShare>,
) -> impl IntoView {
    view! {
    <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
        <Show when=move || !rows.get().is_empty() fallback=|| view! { <p class="empty">{t(SharesT::Empty)}</p> }>
            <table class="list shares" data-testid="shares">
                <thead><tr>
                    <th>{t(SharesT::File)}</th><th>{t(SharesT::ColStatus)}</th><th>{t(SharesT::ColExpires)}</th><th>{t(SharesT::ColFailedDeletes)}</th><th>{t(SharesT::ColCreated)}</th><th><span class="sr-only">{t(SharesT::ColActions)}</span></th>
                </tr></thead>
                <tbody>
                    <For each=move || rows.get() key=|s| (s.id, s.state, s.purge_attempts, s.held, s.public, s.deliveries.clone()) let:share>
                        <ShareRow share=share.clone() revoke=move || revoke(share.clone()) on_held on_published/>
                    </For>
                </tbody>
            </table>
        </Show>
    </Transition>
    }
}

#[component]
fn ShareRow(
    share: ShareSummary,
    revoke: impl Fn() + Send + Sync + 'static,
    on_held: impl Fn() + Copy + Send + Sync + 'static,
    on_published: Callback<NewShare>,
) -> impl IntoView {
    use common::holds::{hold_form, HoldTarget};
    let active = share.state == ShareState::Active;
    // A download that can still be resumed: the admin can revoke it (the resume ends).
    let resumable = share.deliveries.iter().any(|d| d.resumable);
    let id = share.id;
    let received = share.received;
    let publish = ServerAction::<PublishReceived>::new();
    let publish_error = RwSignal::new(None::<String>);
    #[cfg(feature = "hydrate")]
    let (publish_name, publish_until) = (share.file_name.clone(), format_time(share.expires_at));
    Effect::new(move |_| match publish.value().get() {
        Some(Ok(link)) => on_published.run(link),
        Some(Err(e)) => publish_error.set(Some(describe_shares(&e))),
        None => {}
    });
    let expires = match share.state {
        ShareState::Purged { .. } => share.purged_at.map(|at| tf(SharesT::FileDeletedAt, &[("time", &format_time(at))])).unwrap_or_default(),
        ShareState::Downloaded => share.consumed_at.map(|at| tf(SharesT::DownloadedAt, &[("time", &format_time(at))])).unwrap_or_default(),
        _ => format_time(share.expires_at),
    };
    let attempts = match (share.purge_attempts, share.next_purge_attempt_at) {
        (0, _) => "—".to_string(),
        (n, Some(at)) if !matches!(share.state, ShareState::Purged { .. }) => tf(SharesT::AttemptsNextTry, &[("n", &num(n)), ("time", &format_time(at))]),
        (n, _) => num(n),
    };
    let attempts_class = if share.purge_attempts >= super::PROBLEM_ATTEMPTS { "bad" } else { "" };
    view! {
        <tr data-testid="share-row" data-share-id=share.id>
            <td>
                {received.then(|| view! { <span class="badge info" data-testid="received-badge">{t(SharesT::ReceivedBadge)}</span> " " })}
                <span class="file-name">{if matches!(share.state, ShareState::Purged { .. }) { t(SharesT::NameForgotten).to_string() } else { share.file_name.clone() }}</span>
                <span class="muted nowrap">" · " {format_bytes(share.size_bytes.max(0) as u64)}</span>
                {share.note.clone().map(|n| view! { <div class="muted note">{n}</div> })}
            </td>
            <td>
                <span class=share.state.badge() data-testid="share-status">{state_label(share.state)}</span>
                {share.held.then(|| view! { <span class="badge held" data-testid="held-badge">{t(SharesT::OnHold)}</span> })}
                {(share.public && share.max_downloads > 1).then(|| view! {
                    <div class="muted" data-testid="share-downloads">{tf(SharesT::DownloadsOf, &[("n", &share.downloads), ("max", &share.max_downloads)])}</div>
                })}
                <Deliveries deliveries=share.deliveries.clone() size=share.size_bytes/>
            </td>
            <td class="nowrap">{expires}</td>
            <td class=attempts_class>{attempts}</td>
            <td class="nowrap"><common::time::LocalTime at={share.created_at}/> {share.created_by.clone().map(|n| view! { <div class="muted">{n}</div> })}</td>
            <td class="actions">
                {(active && received).then(|| view! {
                    <a class="button secondary small" href=format!("/admin/shares/{id}/file") rel="external" download data-testid="received-download">{t(SharesT::DownloadReceived)}</a>
                })}
                {(active && received).then(|| view! {
                    <button type="button" class="secondary small" data-testid="publish" on:click=move |_| {
                        #[cfg(feature = "hydrate")]
                        {
                            let question = tf(SharesT::ConfirmPublish, &[("name", &publish_name), ("time", &publish_until)]);
                            if !common::ui::confirmed(&question) {
                                return;
                            }
                        }
                        publish.dispatch(PublishReceived { id: id.into() });
                    }>{t(SharesT::Publish)}</button>
                })}
                {move || publish_error.get().map(|m| view! { <p class="field-error" role="alert">{m}</p> })}
                {(active || resumable).then(|| view! { <button type="button" class="danger small" on:click=move |_| revoke()>{if received { t(SharesT::DeleteNow) } else { t(SharesT::Revoke) }}</button> })}
                {(active && !share.held).then(|| view! {
                    <details class="hold">
                        <summary>{t(SharesT::LegalHold)}</summary>
                        {hold_form(format!("share-{id}"), vec![(t(SharesT::HoldFile), HoldTarget::Share(id))], Callback::new(move |_| on_held()))}
                    </details>
                })}
            </td>
        </tr>
    }
}

/// The delivery receipts of a share: when each download started, what the server's stream sent,
/// and whether it completed (after resuming or not).
#[component]
fn Deliveries(deliveries: Vec<super::Delivery>, size: i64) -> impl IntoView {
    (!deliveries.is_empty()).then(|| {
        view! {
            <ul class="deliveries muted" data-testid="deliveries">
                {deliveries.into_iter().map(|d| {
                    let sent = tf(SharesT::BytesSent, &[("sent", &format_bytes(d.bytes_sent.max(0) as u64)), ("size", &format_bytes(size.max(0) as u64))]);
                    let outcome = match (d.completed_at, d.resumes) {
                        (Some(at), 0) => tf(SharesT::DeliveryComplete, &[("time", &format_time(at))]),
                        (Some(at), n) => tf(SharesT::DeliveryCompleteResumed, &[("time", &format_time(at)), ("n", &n)]),
                        (None, _) if d.resumable => t(SharesT::DeliveryIncomplete).to_string(),
                        (None, _) => t(SharesT::DeliveryIncompleteOver).to_string(),
                    };
                    let done = d.completed_at.is_some();
                    view! {
                        <li data-testid="delivery" data-complete=done.to_string()>
                            {tf(SharesT::DeliveryStarted, &[("time", &format_time(d.started_at))])} " · " {sent} " · "
                            <span class=if done { "ok" } else { "bad" }>{outcome}</span>
                        </li>
                    }
                }).collect_view()}
            </ul>
        }
    })
}

/// The browser's checks before an upload starts (the file's size, and the checks of `super`
/// shared with the server, in the page's language).
#[cfg(feature = "hydrate")]
fn check_upload(file: Option<&web_sys::File>, expiry: &str, note: &str, limits: ShareLimits) -> common::error::FieldErrors {
    let mut errs = common::error::FieldErrors::new();
    match file {
        None => {
            errs.insert("file".into(), t(SharesT::ChooseFile).into());
        }
        Some(f) if f.size() > limits.max_bytes as f64 => {
            errs.insert("file".into(), tf(SharesT::FileOverLimit, &[("size", &format_bytes(f.size() as u64)), ("limit", &format_bytes(limits.max_bytes))]));
        }
        Some(_) => {}
    }
    if let Err(m) = super::parse_expiry_hours(expiry, limits.max_expiry_hours) {
        errs.insert("expires_hours".into(), m);
    }
    if let Err(m) = super::parse_note(note) {
        errs.insert("note".into(), m);
    }
    errs
}

/// An upload in the browser: what it updates as it goes and when it ends.
#[cfg(feature = "hydrate")]
#[derive(Clone, Copy)]
struct Upload {
    created: RwSignal<Option<NewShare>>,
    note: RwSignal<String>,
    downloads: RwSignal<String>,
    errors: RwSignal<common::error::FieldErrors>,
    progress: RwSignal<Option<Progress>>,
    failure: RwSignal<Option<String>>,
    file_input: NodeRef<leptos::html::Input>,
    reload: RwSignal<u32>,
    current: StoredValue<Option<web_sys::XmlHttpRequest>, leptos::prelude::LocalStorage>,
}

#[cfg(feature = "hydrate")]
impl Upload {
    fn start(self, file: &web_sys::File, expiry: &str) {
        let Upload { progress, current, failure, .. } = self;
        progress.set(Some(Progress { loaded: 0.0, total: file.size() }));
        // The upload ends in a browser callback, outside this form's context: its texts are
        // written under this owner so they are in the page's language.
        let owner = Owner::current();
        let started = super::upload::start(
            file,
            &[("expires_hours", expiry), ("max_downloads", &self.downloads.get_untracked()), ("note", &self.note.get_untracked())],
            move |loaded, total| progress.set(Some(Progress { loaded, total })),
            move |result: Result<NewShare, UploadError>| match owner {
                Some(owner) => owner.with(|| self.finish(result)),
                None => self.finish(result),
            },
        );
        match started {
            Ok(xhr) => current.set_value(Some(xhr)),
            Err(m) => {
                progress.set(None);
                failure.set(Some(m));
            }
        }
    }

    fn finish(self, result: Result<NewShare, UploadError>) {
        self.progress.set(None);
        self.current.set_value(None);
        match result {
            Ok(share) => {
                self.created.set(Some(share));
                self.note.set(String::new());
                if let Some(input) = self.file_input.get_untracked() {
                    input.set_value("");
                }
                self.reload.update(|n| *n += 1);
            }
            Err(UploadError::Server(AppError::Invalid(fields))) => self.errors.set(fields),
            Err(UploadError::Server(e)) => self.failure.set(Some(describe_shares(&e))),
            Err(UploadError::Other(m)) => self.failure.set(Some(m)),
        }
    }
}

/// How far the upload is.
#[component]
fn UploadProgress(p: Progress) -> impl IntoView {
    let pct = if p.total > 0.0 { (p.loaded / p.total * 100.0).floor() } else { 0.0 };
    view! {
        <div class="progress" role="status" aria-live="polite" data-testid="upload-progress">
            <progress max="100" value=pct.to_string() aria-label=t(SharesT::UploadProgress)></progress>
            <span>{tf(SharesT::ProgressText, &[("pct", &format!("{pct:.0}")), ("sent", &format_bytes(p.loaded as u64)), ("total", &format_bytes(p.total as u64))])}</span>
        </div>
    }
}

/// The form: file, expiry, note; the upload shows its progress and can be cancelled.
#[component]
fn UploadForm(limits: ShareLimits, created: RwSignal<Option<NewShare>>, reload: RwSignal<u32>) -> impl IntoView {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    #[cfg(not(feature = "hydrate"))]
    let _ = reload;
    let choices: Vec<(u32, String)> =
        EXPIRY_CHOICES.iter().map(|(h, _)| *h).filter(|h| *h <= limits.max_expiry_hours).map(|h| (h, super::describe_hours(h))).collect();
    let default_hours = choices.iter().map(|(h, _)| *h).filter(|h| *h <= 168).max().unwrap_or(limits.max_expiry_hours);
    let expiry = RwSignal::new(default_hours.to_string());
    let note = RwSignal::new(String::new());
    let downloads = RwSignal::new("1".to_string());
    let errors = RwSignal::new(common::error::FieldErrors::new());
    let progress = RwSignal::new(None::<Progress>);
    let failure = RwSignal::new(None::<String>);
    let file_input = NodeRef::<leptos::html::Input>::new();
    #[cfg(feature = "hydrate")]
    let current = StoredValue::new_local(None::<web_sys::XmlHttpRequest>);

    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        failure.set(None);
        created.set(None);
        #[cfg(feature = "hydrate")]
        {
            let file = file_input.get_untracked().and_then(|i| i.files()).and_then(|f| f.get(0));
            let mut errs = check_upload(file.as_ref(), &expiry.get_untracked(), &note.get_untracked(), limits);
            if let Err(m) = super::parse_max_downloads(&downloads.get_untracked()) {
                errs.insert("max_downloads".into(), m);
            }
            errors.set(errs.clone());
            let Some(file) = file.filter(|_| errs.is_empty()) else { return };
            let upload = Upload { created, note, downloads, errors, progress, failure, file_input, reload, current };
            upload.start(&file, &expiry.get_untracked());
        }
    };
    let cancel = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(xhr) = current.get_value() {
            let _ = xhr.abort();
        }
    };
    let uploading = move || progress.get().is_some();
    let error_of = move |field: &'static str| move || errors.get().get(field).cloned().unwrap_or_default();
    let invalid = move |field: &'static str| move || errors.get().contains_key(field).to_string();

    view! {
        <form class="upload" on:submit=on_submit novalidate data-hydrated=move || hydrated.get().to_string() data-testid="upload-form">
            <div class="field">
                <label for="share-file">{t(SharesT::File)}</label>
                <input id="share-file" name="file" type="file" node_ref=file_input aria-describedby="share-file-hint share-file-error"
                    aria-invalid=invalid("file") disabled=uploading/>
                <p class="hint left" id="share-file-hint">{tf(SharesT::UpTo, &[("size", &format_bytes(limits.max_bytes))])}</p>
                <p class="field-error" id="share-file-error" role="alert">{error_of("file")}</p>
            </div>
            <div class="field">
                <label for="share-expiry">{t(SharesT::ExpiresAfter)}</label>
                <select id="share-expiry" name="expires_hours" prop:value=expiry on:change=move |ev| expiry.set(event_target_value(&ev))
                    aria-describedby="share-expiry-error" disabled=uploading>
                    {choices.into_iter().map(|(h, label)| view! { <option value=h.to_string() selected=h == default_hours>{label}</option> }).collect_view()}
                </select>
                <p class="field-error" id="share-expiry-error" role="alert">{error_of("expires_hours")}</p>
            </div>
            <div class="field">
                <label for="share-downloads">{t(SharesT::DownloadsAllowed)}</label>
                <input id="share-downloads" name="max_downloads" type="number" min="1" max=super::MAX_DOWNLOADS.to_string() step="1" inputmode="numeric"
                    prop:value=downloads on:input=move |ev| downloads.set(event_target_value(&ev))
                    aria-invalid=invalid("max_downloads") aria-describedby="share-downloads-hint share-downloads-error" disabled=uploading/>
                <p class="hint left" id="share-downloads-hint">{tf(SharesT::DownloadsHint, &[("max", &super::MAX_DOWNLOADS)])}</p>
                <p class="field-error" id="share-downloads-error" role="alert">{error_of("max_downloads")}</p>
            </div>
            <div class="field">
                <label for="share-note">{t(SharesT::Note)} <span class="muted">{t(SharesT::NoteHint)}</span></label>
                <textarea id="share-note" name="note" rows="2" maxlength="500" prop:value=note on:input=move |ev| note.set(event_target_value(&ev))
                    aria-invalid=invalid("note") aria-describedby="share-note-error" disabled=uploading></textarea>
                <p class="field-error" id="share-note-error" role="alert">{error_of("note")}</p>
            </div>
            <div class="inline tight">
                <button type="submit" class="primary" disabled=move || uploading() || !hydrated.get()>{t(SharesT::Upload)}</button>
                <Show when=uploading>
                    <button type="button" class="secondary" on:click=cancel>{t(SharesT::CancelUpload)}</button>
                </Show>
            </div>
            {move || progress.get().map(|p| view! { <UploadProgress p/> })}
            {move || failure.get().map(|m| view! { <p class="notice error" role="alert" data-testid="upload-error">{m}</p> })}
        </form>
    }
}

/// The new link, shown once, with a Copy button.
#[component]
fn ShareLink(share: NewShare) -> impl IntoView {
    view! {
        <div class="notice success" role="status" data-testid="share-created">
            <p>
                <strong>{share.file_name.clone()}</strong> {tf(SharesT::ReadySize, &[("size", &format_bytes(share.size_bytes.max(0) as u64))])}
                {t(SharesT::WorksUntilBefore)} <common::time::LocalTime at={share.expires_at}/> {t(SharesT::WorksUntilAfter)}
            </p>
            <label for="share-url">{t(SharesT::CopyNow)}</label>
            <CopyableLink input_id="share-url" testid="share-url" url=share.url button=t(SharesT::CopyLink)/>
            // Drawn by the server from the link alone (no user text), so it is safe to insert.
            {(!share.qr_svg.is_empty()).then(|| view! {
                <figure class="qr">
                    <div role="img" aria-label=t(SharesT::QrLabel) data-testid="share-qr" inner_html=share.qr_svg.clone()></div>
                    <figcaption class="muted">{t(SharesT::QrCaption)}</figcaption>
                </figure>
            })}
        </div>
    }
}

/// Dashboard card: counts, and the shares whose file could not be deleted three times or more.
#[component]
pub fn SharesSummary(overview: ShareOverview) -> impl IntoView {
    let problems = overview.problems.clone();
    view! {
        <dl class="counts" data-testid="share-counts">
            <div><dt>{t(SharesT::ActiveLinks)}</dt><dd data-testid="shares-active">{num(overview.active)}</dd></div>
            <div><dt>{t(SharesT::AwaitingDeletion)}</dt><dd data-testid="shares-awaiting">{num(overview.awaiting_deletion)}</dd></div>
        </dl>
        {if problems.is_empty() {
            view! { <p class="muted" data-testid="share-problems-none">{t(SharesT::NoProblems)}</p> }.into_any()
        } else {
            view! {
                <div class="notice error" data-testid="share-problems">
                    <p><strong>{tf(SharesT::ProblemsHeading, &[("n", &super::PROBLEM_ATTEMPTS)])}</strong>
                    {t(SharesT::ProblemsText)}</p>
                    <ul>
                        {problems.into_iter().map(|p| view! {
                            <li>{p.file_name} {tf(SharesT::ProblemAttempts, &[("id", &p.id), ("n", &num(p.purge_attempts))])}
                                {p.next_purge_attempt_at.map(|at| tf(SharesT::ProblemNextTry, &[("time", &format_time(at))]))}</li>
                        }).collect_view()}
                    </ul>
                </div>
            }.into_any()
        }}
    }
}

/// The recipient's page. A GET never consumes the share: only the Download button's POST does.
#[component]
pub fn SharePage() -> impl IntoView {
    let params = leptos_router::hooks::use_params_map();
    let token = move || params.read().get("token").unwrap_or_default();
    let landing = Resource::new(token, fetch_share_landing);
    let started = RwSignal::new(false);
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    view! {
        <div class="page narrow" data-hydrated=move || hydrated.get().to_string()>
            <Suspense fallback=|| view! { <p>{t(T::Loading)}</p> }>
                {move || landing.get().map(|r| match r {
                    Ok(ShareLanding::Active { file_name, size_bytes, expires_at }) => view! {
                        <Title text=format!("{}{}", t(T::ShareTitle), t(T::TitleSuffix))/>
                        <section class="card share-landing">
                            <h1>{t(T::ShareHeading)}</h1>
                            <dl class="facts">
                                <div><dt>{t(T::ShareFile)}</dt><dd data-testid="share-file-name">{file_name}</dd></div>
                                <div><dt>{t(T::ShareSize)}</dt><dd data-testid="share-size">{format_bytes(size_bytes.max(0) as u64)}</dd></div>
                                <div><dt>{t(T::ShareExpires)}</dt><dd><common::time::LocalTime at={expires_at}/></dd></div>
                            </dl>
                            <form method="post" action=format!("/s/{}", token()) on:submit=move |_| started.set(true)>
                                <button type="submit" class="primary" data-testid="download">{t(T::ShareDownload)}</button>
                            </form>
                            <p class="muted">
                                {move || if started.get() { t(T::ShareStarted) } else { t(T::ShareOnce) }}
                            </p>
                            <p class="muted"><a href="/retention">{t(T::ShareWhenDeleted)}</a></p>
                        </section>
                    }.into_any(),
                    Ok(ShareLanding::Gone { resume_until: Some(until), .. }) => view! { <ShareResume until=until/> }.into_any(),
                    Ok(ShareLanding::Gone { downloaded, resume_until: None }) => {
                        #[cfg(feature = "ssr")]
                        gone();
                        let (title, text) = if downloaded {
                            (t(T::ShareDownloadedTitle), t(T::ShareDownloadedText))
                        } else {
                            (t(T::ShareExpiredTitle), t(T::ShareExpiredText))
                        };
                        view! { <EndCard title text testid="share-gone"/> }.into_any()
                    }
                    // The page request accepts HTML, so the server function left the status alone.
                    Err(AppError::NotFound) => view! {
                        <EndCard status=AppError::NotFound title=t(T::ShareNotFoundTitle) heading=t(T::ShareNotFoundHeading)
                            text=t(T::ShareNotFoundText) testid="share-not-found"/>
                    }.into_any(),
                    Err(e) => error_notice(&e),
                })}
            </Suspense>
        </div>
    }
}

/// The share page for a browser whose download broke: how to finish it, and until when.
#[component]
fn ShareResume(until: time::OffsetDateTime) -> impl IntoView {
    #[cfg(feature = "ssr")]
    gone();
    view! {
        <Title text=format!("{}{}", t(T::ShareResumeTitle), t(T::TitleSuffix))/>
        <section class="card" data-testid="share-resume">
            <h1>{t(T::ShareResumeTitle)}</h1>
            <p>{t(T::ShareResumeBrowser)}</p>
            <p>{t(T::ShareResumeUntil)}" "<strong><common::time::LocalTime at={until}/></strong></p>
            <p class="muted">{t(T::ShareResumeCommand)}</p>
            <pre class="command">{format!("curl -C - -H \"Cookie: $(grep -o 'ebb_receipt=[^;]*' receipt.txt)\" -o FILE {}", t(T::ShareResumeLinkPlaceholder))}</pre>
        </section>
    }
}

/// 410 Gone on the page's response (server render only).
#[cfg(feature = "ssr")]
fn gone() {
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(axum::http::StatusCode::GONE);
    }
}
