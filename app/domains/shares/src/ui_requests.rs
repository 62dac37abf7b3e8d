//! File requests' pages: the admin's card on `/admin/shares` ("Request a file", the link shown
//! once, the requests) and the uploader's `/r/{token}` (the note, the limit, one upload with
//! progress and cancel; a plain form without JavaScript).

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::cards::{error_notice, EndCard};
use super::texts::SharesT;
use super::{FileReceived, FileRequestLanding, FileRequestState, FileRequestSummary, NewFileRequest, EXPIRY_CHOICES, REQUEST_SIZE_CHOICES_MIB};
use common::error::AppError;
use common::i18n::{t, tf, T};
use common::time::format_time;
use common::ui::{describe, format_bytes, CopyableLink, Loaded};

/// "Request a file": the form, the new link (once), and the newest requests.
#[component]
pub fn FileRequestCard() -> impl IntoView {
    let limits = Resource::new(|| (), |_| get_share_limits());
    let reload = RwSignal::new(0u32);
    let live = common::live::live_version(&[common::live::Topic::Share]);
    let list = Resource::new(move || (reload.get(), live()), |_| list_file_requests());
    let create = ServerAction::<CreateFileRequest>::new();
    let revoke = ServerAction::<RevokeFileRequest>::new();
    let revoke_error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        if let Some(Ok(_)) = create.value().get() {
            reload.update(|n| *n += 1);
        }
    });
    Effect::new(move |_| match revoke.value().get() {
        Some(Ok(())) => {
            revoke_error.set(None);
            reload.update(|n| *n += 1);
        }
        Some(Err(e)) => revoke_error.set(Some(describe(&e))),
        None => {}
    });
    let field_error = move |name: &'static str| {
        move || match create.value().get() {
            Some(Err(AppError::Invalid(fields))) => fields.get(name).cloned().unwrap_or_default(),
            _ => String::new(),
        }
    };
    view! {
        <section class="card" aria-labelledby="request-new" data-testid="file-requests">
            <h2 id="request-new">{t(SharesT::RequestHeading)}</h2>
            <p class="muted">{t(SharesT::RequestLead)}</p>
            <Loaded value=move || limits.get() describe=describe ok=move |limits| {
                    let hours: Vec<(u32, String)> = EXPIRY_CHOICES.iter().map(|(h, _)| *h).filter(|h| *h <= limits.max_expiry_hours).map(|h| (h, super::describe_hours(h))).collect();
                    let default_hours = hours.iter().map(|(h, _)| *h).filter(|h| *h <= 168).max().unwrap_or(limits.max_expiry_hours);
                    let max_mib = (limits.max_bytes / (1024 * 1024)).max(1);
                    let mut sizes: Vec<u64> = REQUEST_SIZE_CHOICES_MIB.iter().copied().filter(|m| *m < max_mib).collect();
                    sizes.push(max_mib);
                    let default_size = *sizes.last().unwrap_or(&max_mib);
                    view! {
                        <ActionForm action=create attr:class="upload" attr:data-testid="request-form">
                            <div class="field">
                                <label for="request-expiry">{t(SharesT::RequestExpiresAfter)}</label>
                                <select id="request-expiry" name="expires_hours" aria-describedby="request-expiry-error">
                                    {hours.into_iter().map(|(h, label)| view! { <option value=h.to_string() selected=h == default_hours>{label}</option> }).collect_view()}
                                </select>
                                <p class="field-error" id="request-expiry-error" role="alert">{field_error("expires_hours")}</p>
                            </div>
                            <div class="field">
                                <label for="request-size">{t(SharesT::RequestSizeLimit)}</label>
                                <select id="request-size" name="max_mib" aria-describedby="request-size-error">
                                    {sizes.into_iter().map(|m| view! { <option value=m.to_string() selected=m == default_size>{format_bytes(m * 1024 * 1024)}</option> }).collect_view()}
                                </select>
                                <p class="field-error" id="request-size-error" role="alert">{field_error("max_mib")}</p>
                            </div>
                            <div class="field">
                                <label for="request-note">{t(SharesT::RequestNote)} <span class="muted">{t(SharesT::RequestNoteHint)}</span></label>
                                <textarea id="request-note" name="note" rows="2" maxlength="500" aria-describedby="request-note-error"></textarea>
                                <p class="field-error" id="request-note-error" role="alert">{field_error("note")}</p>
                            </div>
                            <button type="submit" class="primary" disabled=move || create.pending().get()>{t(SharesT::RequestCreate)}</button>
                        </ActionForm>
                    }.into_any()
                }/>
            {move || match create.value().get() {
                Some(Ok(request)) => Some(view! { <RequestLink request/> }.into_any()),
                Some(Err(AppError::Invalid(_))) | None => None,
                Some(Err(e)) => Some(view! { <p class="notice error" role="alert">{describe(&e)}</p> }.into_any()),
            }}
            {move || revoke_error.get().map(|m| view! { <p class="notice error" role="alert">{m}</p> })}
            <h3>{t(SharesT::RequestsList)}</h3>
            <Loaded value=move || list.get() describe=describe ok=move |v| match v {
                items if items.is_empty() => view! { <p class="empty">{t(SharesT::RequestsEmpty)}</p> }.into_any(),
                items => view! { <RequestsTable items revoke/> }.into_any(),
            }/>
        </section>
    }
}

/// The file requests, newest first.
#[component]
fn RequestsTable(items: Vec<FileRequestSummary>, revoke: ServerAction<RevokeFileRequest>) -> impl IntoView {
    view! {
        <table class="list" data-testid="request-rows">
            <thead><tr>
                <th>{t(SharesT::RequestColNote)}</th><th>{t(SharesT::ColStatus)}</th><th>{t(SharesT::RequestSizeLimit)}</th><th>{t(SharesT::ColExpires)}</th><th><span class="sr-only">{t(SharesT::ColActions)}</span></th>
            </tr></thead>
            <tbody>
                {items.into_iter().map(|r| {
                    let (label, badge) = match r.state {
                        FileRequestState::Open => (t(SharesT::RequestOpen), "badge ok"),
                        FileRequestState::Used => (t(SharesT::RequestUsed), "badge done"),
                        FileRequestState::Expired => (t(SharesT::RequestExpired), "badge pending"),
                    };
                    let id = r.id;
                    let when = match (r.state, r.used_at) {
                        (FileRequestState::Used, Some(at)) => tf(SharesT::ReceivedAt, &[("time", &format_time(at))]),
                        _ => format_time(r.expires_at),
                    };
                    view! {
                        <tr data-testid="request-row" data-request-id=r.id>
                            <td>{r.note.clone().unwrap_or_else(|| "—".into())}</td>
                            <td><span class=badge data-testid="request-status">{label}</span>
                                {r.share_id.map(|s| view! { <div class="muted">{tf(SharesT::RequestShareRow, &[("id", &s)])}</div> })}</td>
                            <td class="nowrap">{format_bytes(r.max_bytes.max(0) as u64)}</td>
                            <td class="nowrap">{when}</td>
                            <td class="actions">
                                {(r.state == FileRequestState::Open).then(|| view! {
                                    <button type="button" class="danger small" on:click=move |_| { revoke.dispatch(RevokeFileRequest { id: id.into() }); }>{t(SharesT::Revoke)}</button>
                                })}
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The new upload link, shown once, with a Copy button and its QR code.
#[component]
fn RequestLink(request: NewFileRequest) -> impl IntoView {
    view! {
        <div class="notice success" role="status" data-testid="request-created">
            <p>{tf(SharesT::RequestReady, &[("size", &format_bytes(request.max_bytes.max(0) as u64))])} " "
               {t(SharesT::WorksUntilBefore)} <common::time::LocalTime at={request.expires_at}/> {t(SharesT::WorksUntilAfter)}</p>
            <label for="request-url">{t(SharesT::CopyNow)}</label>
            <CopyableLink input_id="request-url" testid="request-url" url=request.url button=t(SharesT::CopyLink)/>
            // Drawn by the server from the link alone (no user text), so it is safe to insert.
            {(!request.qr_svg.is_empty()).then(|| view! {
                <figure class="qr">
                    <div role="img" aria-label=t(SharesT::QrLabel) inner_html=request.qr_svg.clone()></div>
                </figure>
            })}
        </div>
    }
}

/// The words for an upload refused by the server, by its `?error=` code (no JavaScript) or error.
fn refusal_text(code: &str) -> &'static str {
    t(match code {
        "too_large" => SharesT::UploadTooLargeHere,
        "no_file" => SharesT::ChooseFile,
        "unavailable" => SharesT::UploadUnavailable,
        "busy" => SharesT::UploadBusy,
        _ => SharesT::UploadInterrupted,
    })
}

/// How an upload on the uploader's page is going.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Sending {
    Idle,
    Progress {
        loaded: f64,
        total: f64,
    },
    Done(FileReceived),
    /// The link was used by another upload meanwhile (409) or expired (410).
    Closed(bool),
    Failed(String),
}

/// `/r/{token}`: the uploader's page. A GET never consumes the request.
#[component]
pub fn RequestUploadPage() -> impl IntoView {
    let params = leptos_router::hooks::use_params_map();
    let query = leptos_router::hooks::use_query_map();
    let token = move || params.read().get("token").unwrap_or_default();
    let landing = Resource::new(token, fetch_request_landing);
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    let sent = move || query.read().get("sent").is_some();
    let error = move || query.read().get("error");
    view! {
        <div class="page narrow" data-hydrated=move || hydrated.get().to_string()>
            <Suspense fallback=|| view! { <p>{t(T::Loading)}</p> }>
                {move || landing.get().map(|r| match r {
                    Ok(FileRequestLanding::Open { note, max_bytes, expires_at }) => view! {
                        <Title text=format!("{}{}", t(SharesT::UploaderTitle), t(T::TitleSuffix))/>
                        <section class="card request-landing">
                            <h1>{t(SharesT::UploaderHeading)}</h1>
                            {note.map(|n| view! { <p class="note" data-testid="request-note">{n}</p> })}
                            <dl class="facts">
                                <div><dt>{t(SharesT::RequestSizeLimit)}</dt><dd data-testid="request-limit">{format_bytes(max_bytes.max(0) as u64)}</dd></div>
                                <div><dt>{t(T::ShareExpires)}</dt><dd><common::time::LocalTime at={expires_at}/></dd></div>
                            </dl>
                            {error().map(|code| view! { <p class="notice error" role="alert" data-testid="upload-error">{refusal_text(&code)}</p> })}
                            <UploaderForm token=token() max_bytes/>
                            <p class="muted">{t(SharesT::UploaderOnce)}</p>
                        </section>
                    }.into_any(),
                    Ok(FileRequestLanding::Used) if sent() => view! {
                        <EndCard title=t(SharesT::ThanksTitle) text=t(SharesT::ThanksText) testid="request-thanks"/>
                    }.into_any(),
                    Ok(FileRequestLanding::Used) => view! {
                        <EndCard status=AppError::Conflict(String::new()) title=t(SharesT::RequestUsedTitle) text=t(SharesT::RequestUsedText) testid="request-used"/>
                    }.into_any(),
                    Ok(FileRequestLanding::Expired) => view! {
                        <EndCard status=AppError::Gone title=t(SharesT::RequestExpiredTitle) text=t(SharesT::RequestExpiredText) testid="request-expired"/>
                    }.into_any(),
                    Err(AppError::NotFound) => view! {
                        <EndCard status=AppError::NotFound title=t(SharesT::RequestNotFoundTitle) text=t(SharesT::RequestNotFoundText) testid="request-not-found"/>
                    }.into_any(),
                    Err(e) => error_notice(&e),
                })}
            </Suspense>
        </div>
    }
}

/// The upload form: a plain multipart POST without JavaScript; with it, the file is sent with
/// progress and a Cancel button, and the answer is shown in place.
#[component]
fn UploaderForm(token: String, max_bytes: i64) -> impl IntoView {
    let sending = RwSignal::new(Sending::Idle);
    let field_error = RwSignal::new(String::new());
    let file_input = NodeRef::<leptos::html::Input>::new();
    let action = format!("/r/{token}");
    #[cfg(feature = "hydrate")]
    let current = StoredValue::new_local(None::<web_sys::XmlHttpRequest>);
    #[cfg(not(feature = "hydrate"))]
    let _ = max_bytes;
    let path = action.clone();
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            let file = file_input.get_untracked().and_then(|i| i.files()).and_then(|f| f.get(0));
            let Some(file) = file else {
                field_error.set(t(SharesT::ChooseFile).into());
                return;
            };
            if file.size() > max_bytes as f64 {
                field_error.set(tf(SharesT::FileOverLimit, &[("size", &format_bytes(file.size() as u64)), ("limit", &format_bytes(max_bytes.max(0) as u64))]));
                return;
            }
            field_error.set(String::new());
            sending.set(Sending::Progress { loaded: 0.0, total: file.size() });
            let owner = Owner::current();
            let finish = move |result: Result<FileReceived, super::upload::UploadError>| {
                let run = move || {
                    current.set_value(None);
                    sending.set(match result {
                        Ok(received) => Sending::Done(received),
                        Err(super::upload::UploadError::Server(AppError::Conflict(_))) => Sending::Closed(true),
                        Err(super::upload::UploadError::Server(AppError::Gone)) => Sending::Closed(false),
                        Err(super::upload::UploadError::Server(AppError::TooLarge { .. })) => Sending::Failed(t(SharesT::UploadTooLargeHere).into()),
                        Err(super::upload::UploadError::Server(e)) => Sending::Failed(describe(&e)),
                        Err(super::upload::UploadError::Other(m)) => Sending::Failed(m),
                    });
                };
                match &owner {
                    Some(owner) => owner.with(run),
                    None => run(),
                }
            };
            match super::upload::send(&path, &file, &[], move |loaded, total| sending.set(Sending::Progress { loaded, total }), finish) {
                Ok(xhr) => current.set_value(Some(xhr)),
                Err(m) => sending.set(Sending::Failed(m)),
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &path;
    };
    let cancel = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(xhr) = current.get_value() {
            let _ = xhr.abort();
        }
    };
    let busy = move || matches!(sending.get(), Sending::Progress { .. });
    view! {
        {move || match sending.get() {
            Sending::Done(received) => view! {
                <div class="notice success" role="status" data-testid="request-thanks">
                    <p><strong>{t(SharesT::ThanksTitle)}</strong></p>
                    <p>{tf(SharesT::ThanksFile, &[("name", &received.file_name), ("size", &format_bytes(received.size_bytes.max(0) as u64))])}</p>
                </div>
            }.into_any(),
            Sending::Closed(used) => view! {
                <p class="notice error" role="alert" data-testid="request-closed">{if used { t(SharesT::RequestUsedText) } else { t(SharesT::RequestExpiredText) }}</p>
            }.into_any(),
            _ => ().into_any(),
        }}
        <Show when=move || !matches!(sending.get(), Sending::Done(_) | Sending::Closed(_))>
            <form class="upload" method="post" action=action.clone() enctype="multipart/form-data" on:submit=on_submit.clone() data-testid="uploader-form">
                <div class="field">
                    <label for="request-file">{t(SharesT::UploaderChoose)}</label>
                    <input id="request-file" name="file" type="file" required node_ref=file_input disabled=busy
                        aria-describedby="request-file-hint request-file-error" aria-invalid=move || (!field_error.get().is_empty()).to_string()/>
                    <p class="hint left" id="request-file-hint">{tf(SharesT::UpTo, &[("size", &format_bytes(max_bytes.max(0) as u64))])}</p>
                    <p class="field-error" id="request-file-error" role="alert">{move || field_error.get()}</p>
                </div>
                <div class="inline tight">
                    <button type="submit" class="primary" disabled=busy data-testid="send-file">{t(SharesT::UploaderSend)}</button>
                    <Show when=busy>
                        <button type="button" class="secondary" on:click=cancel data-testid="cancel-upload">{t(SharesT::CancelUpload)}</button>
                    </Show>
                </div>
                {move || match sending.get() {
                    Sending::Progress { loaded, total } => {
                        let pct = if total > 0.0 { (loaded / total * 100.0).floor() } else { 0.0 };
                        Some(view! {
                            <div class="progress" role="status" aria-live="polite" data-testid="upload-progress">
                                <progress max="100" value=pct.to_string() aria-label=t(SharesT::UploadProgress)></progress>
                                <span>{tf(SharesT::ProgressText, &[("pct", &format!("{pct:.0}")), ("sent", &format_bytes(loaded as u64)), ("total", &format_bytes(total as u64))])}</span>
                            </div>
                        }.into_any())
                    }
                    Sending::Failed(m) => Some(view! { <p class="notice error" role="alert" data-testid="upload-error">{m}</p> }.into_any()),
                    _ => None,
                }}
            </form>
        </Show>
    }
}
