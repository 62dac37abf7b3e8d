//! Sign-in, invite and account pages, and the admin shell.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::{Outlet, A};
use leptos_router::hooks::{use_params_map, use_query_map};

use super::api::*;
use super::texts::AccountT;
use super::{PasskeyView, Role, SessionView};
use common::error::AppError;
use common::i18n::{t, tf, T};
use common::time::format_time;
use common::ui::{describe, Card, CopyableLink, ListTable, Loaded, Outcome, UiT};

/// A failed call on the invite page: a missing invite is a bad link, and only an admin can
/// make a new one.
fn describe_invite(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(T::InviteInvalid).into(),
        other => describe(other),
    }
}

/// A failed call on the account page: what can vanish there is a passkey or a session (ended
/// in another browser, or removed by the cleanup).
fn describe_account(err: &AppError) -> String {
    match err {
        AppError::NotFound => t(AccountT::AccountGone).into(),
        other => describe(other),
    }
}

/// Sends the browser to `path` with a full page load (the server renders the signed-in state).
#[cfg(feature = "hydrate")]
fn go(path: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.location().set_href(path);
    }
}

/// Only admin paths are valid return targets (no open redirect).
fn safe_next(next: Option<String>) -> String {
    next.filter(|n| (n == "/admin" || n.starts_with("/admin/")) && !n.starts_with("//")).unwrap_or_else(|| "/admin".into())
}

/// Shown inside forms that need the hydrated client.
#[component]
fn NeedsJavascript() -> impl IntoView {
    view! {
        <noscript><p class="notice error">{t(T::NeedsJavascript)}</p></noscript>
    }
}

/// Joins with an invite: the browser makes the passkey, the server checks it and signs in.
#[cfg(feature = "hydrate")]
async fn register_with_invite(token: String, name: String, passkey_name: String) -> Result<(), String> {
    let (challenge, ccr) = start_invite_registration(token, name, passkey_name).await.map_err(|e| describe_invite(&e))?;
    let credential = super::browser::create_passkey(ccr).await?;
    finish_invite_registration(challenge, credential).await.map_err(|e| describe_invite(&e))
}

/// The sign-in page. It is rendered by the server only and never hydrated: its client is
/// [`crate::SIGNIN_JS`], a script of a few KB the shell puts in the page, which reads the
/// page to return to and its texts, in the page's language, from the card's data attributes.
/// Every way here is a full page load; were the app's router ever to render it in the browser,
/// it loads the page from the server.
#[component]
pub fn SignInPage() -> impl IntoView {
    let next = safe_next(use_query_map().read_untracked().get("next"));
    #[cfg(feature = "hydrate")]
    Effect::new(|_| {
        if let Some(w) = web_sys::window() {
            let _ = w.location().reload();
        }
    });
    view! {
        <Title text=format!("{}{}", t(T::SignInTitle), t(T::TitleSuffix))/>
        <div class="page narrow">
            <div class="card" data-signin="" data-next=next data-texts=signin_texts()>
                <h1>{t(T::SignInTitle)}</h1>
                <p>{t(T::SignInIntro)}</p>
                <p class="notice error" role="alert" data-testid="signin-error" hidden=true></p>
                <NeedsJavascript/>
                <div class="field" data-autofill="" hidden=true>
                    <label for="signin-passkey">{t(T::SignInAutofill)}</label>
                    <input id="signin-passkey" name="username" type="text" autocomplete="username webauthn"
                        placeholder=t(T::SignInAutofillHint)/>
                </div>
                // Enabled by the script once it runs.
                <button type="button" class="primary" data-testid="signin" disabled=true aria-busy="false">
                    {t(T::SignInButton)}
                </button>
                <p class="hint left">{t(T::SignInNoPasskey)}</p>
            </div>
        </div>
    }
}

/// What the sign-in script says, in the page's language: its button's two labels, the words
/// for a WebAuthn error (by the DOMException's name), and for each error the server can answer
/// (by `AppError` variant; `{n}` in the rate limit's is the minutes to wait).
fn signin_texts() -> String {
    use super::AuthT;
    let errors: std::collections::BTreeMap<&str, String> = [
        ("Unauthorized", AppError::Unauthorized),
        ("Forbidden", AppError::Forbidden),
        ("NotFound", AppError::NotFound),
        ("Gone", AppError::Gone),
        ("StorageUnavailable", AppError::StorageUnavailable),
        ("StorageFull", AppError::StorageFull),
        ("Unavailable", AppError::Unavailable),
        ("Internal", AppError::Internal),
    ]
    .into_iter()
    .map(|(kind, e)| (kind, describe(&e)))
    .chain([("RateLimited", t(T::ErrRateLimited).to_string())])
    .collect();
    serde_json::json!({
        "idle": t(T::SignInButton),
        "busy": t(T::WaitingForPasskey),
        "NotAllowedError": t(AuthT::PromptClosed),
        "SecurityError": t(AuthT::WrongAddress),
        "NotSupportedError": t(AuthT::NoPasskeySupport),
        "failed": t(AuthT::PasskeyFailed),
        "errors": errors,
    })
    .to_string()
}

#[component]
pub fn InvitePage() -> impl IntoView {
    let token = use_params_map().read_untracked().get("token").unwrap_or_default();
    let info = {
        let token = token.clone();
        Resource::new(|| (), move |_| lookup_invite(token.clone()))
    };
    let name = RwSignal::new(String::new());
    let passkey_name = RwSignal::new(t(T::InviteDefaultPasskey).to_string());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));

    let register = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            let token = token.clone();
            leptos::task::spawn_local(async move {
                busy.set(true);
                error.set(None);
                let result = register_with_invite(token, name.get_untracked(), passkey_name.get_untracked()).await;
                match result {
                    Ok(()) => go("/admin"),
                    Err(msg) => {
                        error.set(Some(msg));
                        busy.set(false);
                    }
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &token;
    };

    view! {
        <Title text=format!("{}{}", t(T::InviteTitle), t(T::TitleSuffix))/>
        <div class="page narrow">
            <div class="card">
                <h1>{t(T::InviteHeading)}</h1>
                <Suspense fallback=|| view! { <p>{t(T::InviteChecking)}</p> }>
                    {move || info.get().map(|r| match r {
                        Err(e) => view! { <p class="notice error" role="alert" data-testid="invite-invalid">{describe_invite(&e)}</p> }.into_any(),
                        Ok(invite) => {
                            if let Some(n) = invite.suggested_name.clone() {
                                if name.get_untracked().is_empty() { name.set(n); }
                            }
                            view! {
                                <p>{tf(T::InviteIntro, &[("time", &format_time(invite.expires_at))])}</p>
                                {move || error.get().map(|m| view! { <p class="notice error" role="alert" data-testid="invite-error">{m}</p> })}
                                <NeedsJavascript/>
                                <form on:submit=register.clone()>
                                    <div class="field">
                                        <label for="invite-name">{t(T::InviteYourName)}</label>
                                        <input id="invite-name" type="text" required maxlength="100" autocomplete="name"
                                            prop:value=name on:input=move |ev| name.set(event_target_value(&ev))/>
                                    </div>
                                    <div class="field">
                                        <label for="invite-passkey-name">{t(T::InvitePasskeyName)}</label>
                                        <input id="invite-passkey-name" type="text" required maxlength="100"
                                            prop:value=passkey_name on:input=move |ev| passkey_name.set(event_target_value(&ev))/>
                                        <p class="hint left">{t(T::InvitePasskeyNameHint)}</p>
                                    </div>
                                    <button type="submit" class="primary" disabled=move || busy.get() || !hydrated.get()>
                                        {move || if busy.get() { t(T::WaitingForPasskey) } else { t(T::InviteButton) }}
                                    </button>
                                </form>
                            }.into_any()
                        }
                    })}
                </Suspense>
            </div>
        </div>
    }
}

/// The frame of every admin page: navigation, who is signed in, sign out; `children` (the alert
/// banner) above the page.
#[component]
pub fn AdminShell(children: Children) -> impl IntoView {
    let me = Resource::new(|| (), |_| current_admin());
    // Sensitive actions ask for a fresh passkey check here, on whichever page they are.
    let prompt = common::ui::StepUpPrompt(RwSignal::new(false), RwSignal::new(None));
    provide_context(prompt);
    // Marks the page as hydrated (tests wait for it before typing).
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    // A plain form: signing out works before hydration and without JavaScript too.
    let sign_out_action = ServerAction::<SignOut>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = sign_out_action.value().get() {
            #[cfg(feature = "hydrate")]
            go("/signin");
        }
    });
    view! {
        <div class="admin" data-hydrated=move || hydrated.get().to_string()>
            <nav class="admin-nav" aria-label=t(AccountT::NavLabel)>
                // Only the pages the admin's role opens (the server's gate refuses the others).
                <Suspense fallback=|| ()>
                    {move || me.get().and_then(Result::ok).flatten().map(|a| {
                        let role = a.role;
                        common::admin::PAGES
                            .iter()
                            .filter(move |(_, needs)| role >= *needs)
                            .filter_map(|(path, _)| nav_label(path).map(|label| view! { <A href={*path} exact={*path == "/admin"}>{t(label)}</A> }))
                            .collect_view()
                    })}
                </Suspense>
                <span class="spacer"></span>
                <Suspense fallback=|| ()>
                    {move || me.get().and_then(Result::ok).flatten().map(|a| view! {
                        <span class="who" data-testid="admin-name">{a.name}</span>
                        // An owner sees every page; another role is named (why some pages are not listed).
                        {(a.role != Role::Owner).then(|| view! { <span class="badge" data-testid="admin-role">{a.role.label()}</span> })}
                    })}
                </Suspense>
                <ActionForm action=sign_out_action>
                    <button type="submit" class="secondary small" data-testid="signout">{t(AccountT::SignOut)}</button>
                </ActionForm>
            </nav>
            <div class="admin-main">
                <StepUpBox prompt/>
                {children()}
                <Outlet/>
            </div>
        </div>
    }
}

/// The step-up prompt: shown when a sensitive action needs a fresh passkey check. A download
/// asked for meanwhile is checked first and goes on by itself after the confirmation; another
/// action is done again by the admin (the prompt says so).
#[component]
fn StepUpBox(prompt: common::ui::StepUpPrompt) -> impl IntoView {
    let common::ui::StepUpPrompt(asked, download) = prompt;
    let status = RwSignal::new(None::<Result<String, String>>);
    let busy = RwSignal::new(false);
    // The prompt takes the focus when it appears (wherever the page was scrolled to, it stays
    // in view: see `.step-up` in the style).
    let confirm_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if let Some(button) = confirm_button.get() {
            let _ = button.focus();
        }
    });
    // A download waits for the check: it goes at once when the session may, else asks.
    Effect::new(move |_| {
        let Some(_href) = download.get() else { return };
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local_scoped(async move {
            match check_step_up().await {
                Ok(()) => {
                    download.set(None);
                    go(&_href);
                }
                Err(AppError::StepUp) => asked.set(true),
                Err(e) => {
                    download.set(None);
                    status.set(Some(Err(describe_account(&e))));
                }
            }
        });
    });
    #[cfg_attr(not(feature = "hydrate"), allow(unused_variables))]
    let (confirmed, confirmed_download) = (t(AccountT::StepUpDone), t(AccountT::StepUpDoneDownload));
    let confirm = move |_| {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local_scoped(async move {
            busy.set(true);
            let result: Result<(), String> = async {
                let (challenge, rcr) = start_step_up().await.map_err(|e| describe_account(&e))?;
                let credential = super::browser::get_passkey(rcr).await?;
                finish_step_up(challenge, credential).await.map_err(|e| describe_account(&e))
            }
            .await;
            busy.set(false);
            match result {
                Ok(()) => {
                    asked.set(false);
                    match download.get_untracked() {
                        Some(href) => {
                            download.set(None);
                            status.set(Some(Ok(confirmed_download.to_string())));
                            go(&href);
                        }
                        None => status.set(Some(Ok(confirmed.to_string()))),
                    }
                }
                Err(message) => status.set(Some(Err(message))),
            }
        });
    };
    let dismiss = move |_| {
        asked.set(false);
        download.set(None);
    };
    view! {
        <Show when=move || asked.get()>
            <section class="card step-up" role="alertdialog" aria-labelledby="step-up-title" aria-describedby="step-up-text" data-testid="step-up">
                <h2 id="step-up-title">{t(AccountT::StepUpHeading)}</h2>
                <p id="step-up-text">{t(AccountT::StepUpText)}</p>
                <div class="actions">
                    <button type="button" class="primary" node_ref=confirm_button disabled=move || busy.get() aria-busy=move || busy.get().to_string() on:click=confirm data-testid="step-up-confirm">
                        {t(AccountT::StepUpConfirm)}
                    </button>
                    <button type="button" class="secondary" on:click=dismiss>{t(AccountT::StepUpCancel)}</button>
                </div>
            </section>
        </Show>
        <Outcome message=status testid="step-up-status"/>
    }
}

/// Reports each result of `action` on the page (`done`: what a success says).
fn report_each<S>(action: ServerAction<S>, done: &'static str, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static)
where
    S: leptos::server_fn::ServerFn<Output = (), Error = AppError> + Clone + Send + Sync + 'static,
{
    Effect::new(move |_| {
        if let Some(r) = action.value().get() {
            report(r.map(|_| done.to_string()));
        }
    });
}

/// A page's name in the navigation (`None`: not in it). The navigation lists
/// `common::admin::PAGES` in their order, so a page and the role that opens it are declared once.
fn nav_label(path: &str) -> Option<AccountT> {
    Some(match path {
        "/admin" => AccountT::NavDashboard,
        "/admin/inbox" => AccountT::NavInbox,
        "/admin/shares" => AccountT::NavShares,
        "/admin/audit" => AccountT::NavAudit,
        "/admin/retention" => AccountT::NavRetention,
        "/admin/requests" => AccountT::NavRequests,
        "/admin/settings" => AccountT::NavSettings,
        "/admin/account" => AccountT::NavAccount,
        _ => return None,
    })
}

#[component]
pub fn ComingSoon(title: &'static str) -> impl IntoView {
    view! {
        <Title text=format!("{title}{}", t(UiT::AdminTitleSuffix))/>
        <h1>{title}</h1>
        <p class="notice">{t(AccountT::ComingSoon)}</p>
    }
}

#[component]
pub fn AccountPage() -> impl IntoView {
    let changed = RwSignal::new(0u32);
    let message = RwSignal::new(None::<Result<String, String>>);
    let report = move |r: Result<String, AppError>| {
        message.set(Some(r.map_err(|e| describe_account(&e))));
        changed.update(|n| *n += 1);
    };
    view! {
        <Title text=format!("{}{}", t(AccountT::Title), t(UiT::AdminTitleSuffix))/>
        <h1>{t(AccountT::Title)}</h1>
        <Outcome message testid="account-message"/>
        <PasskeysCard changed message report/>
        <SessionsCard changed report/>
        <OwnersCards changed message report/>
    }
}

/// What only owners see: the admins with their roles, and the invite.
#[component]
fn OwnersCards(
    changed: RwSignal<u32>,
    message: RwSignal<Option<Result<String, String>>>,
    report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let me = Resource::new(|| (), |_| current_admin());
    view! {
        <Transition fallback=|| ()>
            {move || me.get().and_then(Result::ok).flatten().filter(|a| a.role == Role::Owner).map(|_| view! {
                <AdminsCard changed report/>
                <InviteCard message/>
            })}
        </Transition>
    }
}

/// Every admin with their role; an owner changes a role or removes an admin here.
#[component]
fn AdminsCard(changed: RwSignal<u32>, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static) -> impl IntoView {
    let admins = Resource::new(move || changed.get(), |_| list_admins());
    view! {
    <Card id="admins-title" title=t(AccountT::AdminsHeading)>
        <p class="muted">{t(AccountT::AdminsExplain)}</p>
        <Loaded value=move || admins.get() describe=describe_account ok=move |list| view! {
                <ListTable testid="admins" actions=t(AccountT::Actions) heads=vec![t(AccountT::ColAdmin), t(AccountT::ColRole), t(AccountT::ColJoined), t(AccountT::ColPasskeys)]>
                    {list.into_iter().map(|a| view! { <AdminRow admin=a report/> }).collect_view()}
                </ListTable>
            }.into_any()/>
    </Card>
    }
}

#[component]
fn AdminRow(admin: super::AdminView, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static) -> impl IntoView {
    let id = admin.id;
    let role = RwSignal::new(admin.role.as_str().to_string());
    let (changed_text, removed_text) = (t(AccountT::RoleChanged), t(AccountT::AdminRemoved));
    let confirm_remove = t(AccountT::ConfirmRemoveAdmin);
    let (role_action, remove_action) = (ServerAction::<SetAdminRole>::new(), ServerAction::<RemoveAdmin>::new());
    report_each(role_action, changed_text, report);
    report_each(remove_action, removed_text, report);
    let change_role = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        role_action.dispatch(SetAdminRole { id, role: role.get_untracked() });
    };
    let remove = move |_| {
        if !common::ui::confirmed(confirm_remove) {
            return;
        }
        remove_action.dispatch(RemoveAdmin { id });
    };
    let select_id = format!("role-{id}");
    let role_label = tf(AccountT::RoleOf, &[("name", &admin.name)]);
    let remove_label = tf(AccountT::RemoveAdminLabel, &[("name", &admin.name)]);
    view! {
        <tr data-testid="admin-row" data-role=admin.role.as_str()>
            <td>{admin.name.clone()} {admin.me.then(|| view! { <span class="badge">{t(AccountT::You)}</span> })}</td>
            <td>
                <form class="inline" on:submit=change_role>
                    <label for=select_id.clone() class="sr-only">{role_label}</label>
                    <select id=select_id prop:value=move || role.get() on:change=move |ev| role.set(event_target_value(&ev))>
                        {Role::ALL.map(|r| view! { <option value=r.as_str() selected={r == admin.role}>{r.label()}</option> }).into_iter().collect_view()}
                    </select>
                    <button type="submit" class="secondary small">{t(AccountT::ChangeRole)}</button>
                </form>
            </td>
            <td class="nowrap"><common::time::LocalTime at={admin.joined}/></td>
            <td>{admin.passkeys}</td>
            <td class="actions">
                {(!admin.me).then(|| view! {
                    <button type="button" class="danger small" aria-label=remove_label on:click=remove>{t(AccountT::RemoveAdmin)}</button>
                })}
            </td>
        </tr>
    }
}

/// The admin's passkeys, and adding one (a ceremony in the browser).
#[component]
fn PasskeysCard(
    changed: RwSignal<u32>,
    message: RwSignal<Option<Result<String, String>>>,
    report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let passkeys = Resource::new(move || changed.get(), |_| list_passkeys());
    let new_passkey_name = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    // Read now, while rendering: the task below runs outside the page's context.
    #[cfg_attr(not(feature = "hydrate"), allow(unused_variables))]
    let passkey_added = t(AccountT::PasskeyAdded);
    let add_passkey = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            busy.set(true);
            let result: Result<(), String> = async {
                let (challenge, ccr) = start_add_passkey(new_passkey_name.get_untracked()).await.map_err(|e| describe_account(&e))?;
                let credential = super::browser::create_passkey(ccr).await?;
                finish_add_passkey(challenge, credential).await.map_err(|e| describe_account(&e))
            }
            .await;
            message.set(Some(result.map(|_| passkey_added.to_string())));
            if message.get_untracked().is_some_and(|m| m.is_ok()) {
                new_passkey_name.set(String::new());
            }
            busy.set(false);
            changed.update(|n| *n += 1);
        });
    };
    #[cfg(not(feature = "hydrate"))]
    let _ = (message, busy);
    view! {
    <Card id="passkeys-title" title=t(AccountT::PasskeysHeading)>
        <Loaded value=move || passkeys.get() describe=describe_account ok=move |list| {
                let only_one = list.len() <= 1;
                view! {
                    <ListTable testid="passkeys" actions=t(AccountT::Actions) heads=vec![t(AccountT::Name), t(AccountT::Created), t(AccountT::LastUsed)]>
                        {list.into_iter().map(|p| view! { <PasskeyRow passkey=p only_one report/> }).collect_view()}
                    </ListTable>
                    {only_one.then(|| view! { <p class="hint left">{t(AccountT::OnlyPasskeyHint)}</p> })}
                }.into_any()
            }/>
        <form class="inline" on:submit=add_passkey>
            <label for="new-passkey-name">{t(AccountT::NewPasskeyName)}</label>
            <input id="new-passkey-name" type="text" maxlength="100" required placeholder=t(AccountT::NewPasskeyPlaceholder)
                prop:value=new_passkey_name on:input=move |ev| new_passkey_name.set(event_target_value(&ev))/>
            <button type="submit" class="primary" disabled=move || busy.get()>{t(AccountT::AddPasskey)}</button>
        </form>
    </Card>
    }
}

/// Where the admin is signed in, with Sign out for each.
#[component]
fn SessionsCard(changed: RwSignal<u32>, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static) -> impl IntoView {
    let sessions = Resource::new(move || changed.get(), |_| list_sessions());
    view! {
    <Card id="sessions-title" title=t(AccountT::SessionsHeading)>
        <Loaded value=move || sessions.get() describe=describe_account ok=move |list| view! {
                <ListTable testid="sessions" actions=t(AccountT::Actions) heads=vec![t(AccountT::Browser), t(AccountT::SignedIn), t(AccountT::LastSeen)]>
                    {list.into_iter().map(|s| view! { <SessionRow session=s report/> }).collect_view()}
                </ListTable>
            }.into_any()/>
    </Card>
    }
}

/// A one-time invite for another admin, through its server action.
#[component]
fn InviteCard(message: RwSignal<Option<Result<String, String>>>) -> impl IntoView {
    let invite_name = RwSignal::new(String::new());
    let invite_role = RwSignal::new(Role::Admin.as_str().to_string());
    let create = ServerAction::<CreateInvite>::new();
    Effect::new(move |_| match create.value().get() {
        Some(Ok(_)) => message.set(None),
        Some(Err(e)) => message.set(Some(Err(describe_account(&e)))),
        None => {}
    });
    let make_invite = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        create.dispatch(CreateInvite { name: Some(invite_name.get_untracked()).filter(|n| !n.trim().is_empty()), role: Some(invite_role.get_untracked()) });
    };
    view! {
    <Card id="invite-title" title=t(AccountT::InviteHeading)>
        <p>{t(AccountT::InviteExplain)}</p>
        <form class="inline" on:submit=make_invite>
            <label for="invite-for">{t(AccountT::InviteFor)}</label>
            <input id="invite-for" type="text" maxlength="100" prop:value=invite_name on:input=move |ev| invite_name.set(event_target_value(&ev))/>
            <label for="invite-role">{t(AccountT::InviteRole)}</label>
            <select id="invite-role" prop:value=move || invite_role.get() on:change=move |ev| invite_role.set(event_target_value(&ev))>
                {Role::ALL.map(|r| view! { <option value=r.as_str() selected={r == Role::Admin}>{r.label()}</option> }).into_iter().collect_view()}
            </select>
            <button type="submit" class="primary">{t(AccountT::CreateInvite)}</button>
        </form>
        {move || create.value().get().and_then(Result::ok).map(|i| view! { <InviteLink invite=i/> })}
    </Card>
    }
}

#[component]
fn PasskeyRow(passkey: PasskeyView, only_one: bool, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static) -> impl IntoView {
    let id = passkey.id;
    let name = RwSignal::new(passkey.name.clone());
    let editing = RwSignal::new(false);
    let (renamed, removed) = (t(AccountT::PasskeyRenamed), t(AccountT::PasskeyRemoved));
    let confirm_remove = t(AccountT::ConfirmRemove);
    // Renaming and removing go through the server functions' actions.
    let (rename_action, remove_action) = (ServerAction::<RenamePasskey>::new(), ServerAction::<RemovePasskey>::new());
    Effect::new(move |_| {
        if let Some(r) = rename_action.value().get() {
            editing.set(false);
            report(r.map(|_| renamed.to_string()));
        }
    });
    report_each(remove_action, removed, report);
    let rename = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        rename_action.dispatch(RenamePasskey { id, name: name.get_untracked() });
    };
    let remove = move |_| {
        if !common::ui::confirmed(confirm_remove) {
            return;
        }
        remove_action.dispatch(RemovePasskey { id });
    };
    view! {
        <tr data-testid="passkey-row">
            <td>
                <Show when=move || editing.get() fallback=move || view! { <span class="name">{move || name.get()}</span> }>
                    <form class="inline tight" on:submit=rename>
                        <label class="sr-only" for=format!("rename-{id}")>{t(AccountT::NewName)}</label>
                        <input id=format!("rename-{id}") type="text" maxlength="100" required prop:value=name on:input=move |ev| name.set(event_target_value(&ev))/>
                        <button type="submit" class="small">{t(AccountT::Save)}</button>
                    </form>
                </Show>
            </td>
            <td><common::time::LocalTime at={passkey.created_at}/></td>
            <td>{passkey.last_used_at.map(format_time).unwrap_or_else(|| t(AccountT::Never).into())}</td>
            <td class="actions">
                <button type="button" class="secondary small" on:click=move |_| editing.update(|e| *e = !*e)>{t(AccountT::Rename)}</button>
                <button type="button" class="danger small" disabled=only_one on:click=remove
                    title=if only_one { t(AccountT::OnlyPasskeyTitle) } else { t(AccountT::RemoveTitle) }>{t(AccountT::Remove)}</button>
            </td>
        </tr>
    }
}

#[component]
fn SessionRow(session: SessionView, report: impl Fn(Result<String, AppError>) + Copy + Send + Sync + 'static) -> impl IntoView {
    let handle = session.handle;
    let current = session.current;
    let ended = t(AccountT::SessionEnded);
    // Ending a session goes through the server function's action; ending this one signs out.
    let action = ServerAction::<RevokeSession>::new();
    Effect::new(move |_| {
        let Some(r) = action.value().get() else { return };
        #[cfg(feature = "hydrate")]
        if current && r.is_ok() {
            go("/signin");
            return;
        }
        report(r.map(|_| ended.to_string()));
    });
    let revoke = move |_| {
        action.dispatch(RevokeSession { handle });
    };
    view! {
        <tr data-testid="session-row">
            <td>{session.browser.clone()} {current.then(|| view! { <span class="badge">{t(AccountT::ThisBrowser)}</span> })}</td>
            <td><common::time::LocalTime at={session.created_at}/></td>
            <td><common::time::LocalTime at={session.last_seen_at}/></td>
            <td class="actions"><button type="button" class="secondary small" on:click=revoke>{if current { t(AccountT::SignOutHere) } else { t(AccountT::Revoke) }}</button></td>
        </tr>
    }
}

#[component]
fn InviteLink(invite: super::NewInvite) -> impl IntoView {
    view! {
        <div class="notice success" role="status">
            <label for="invite-url">{t(AccountT::InviteLinkBefore)} <common::time::LocalTime at={invite.expires_at}/> {t(AccountT::InviteLinkAfter)}</label>
            <CopyableLink input_id="invite-url" testid="invite-url" url=invite.url button=t(AccountT::Copy)/>
        </div>
    }
}
