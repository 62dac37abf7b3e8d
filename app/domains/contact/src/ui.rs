//! The contact form. Server-rendered, it posts as a plain form; hydrated, it validates as you type,
//! submits without a reload and shows a pending state.

use leptos::prelude::*;
use leptos::server::SharedValue;
use leptos::server_fn::ServerFn;
use leptos_router::hooks::use_query_map;

use super::api::{SubmitInquiry, HONEYPOT_FIELD, PROOF_FIELD, STAMP_FIELD};
use super::{parse_email, parse_message, parse_name, MESSAGE_MAX_CHARS};
use common::error::{AppError, FieldErrors};
use common::i18n::{t, tf, T};

/// The error a no-JavaScript submission was redirected back with, only when this server signed
/// it for that redirect (`__sig`); anything else in the URL is ignored. Decided on the server and
/// sent with the page, so hydration shows the same.
fn error_from_url() -> Option<AppError> {
    let checked = SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return kernel::request::verified_url_error(SubmitInquiry::PATH).map(|e| leptos::server_fn::error::ServerFnUrlError::<AppError>::decode_err(&e));
        #[cfg(not(feature = "ssr"))]
        None
    });
    checked.into_inner()
}

/// The page's signed time stamp (when the form was served), for the minimum fill time: made by
/// the server and sent with the page, so hydration keeps the same value.
fn page_stamp() -> String {
    let stamp = SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return use_context::<kernel::state::AppState>().map(|s| crate::spam::stamp(&s, time::OffsetDateTime::now_utc())).unwrap_or_default();
        #[cfg(not(feature = "ssr"))]
        String::new()
    });
    stamp.into_inner()
}

/// The proof of work as the hydrated form holds it: solved in the background from the moment the
/// client runs (while the visitor types); a submit before it is ready waits for it. A proof is
/// used once: each send starts the next one.
#[derive(Clone, Copy)]
struct Pow {
    /// The payload and when its challenge expires (ms since 1970).
    solved: RwSignal<Option<(String, f64)>>,
    solving: RwSignal<bool>,
    /// Which solve is current (an older one's result is dropped).
    generation: StoredValue<u32>,
    /// A submit waiting for the proof.
    queued: StoredValue<Option<SubmitInquiry>>,
    waiting: RwSignal<bool>,
}

impl Pow {
    fn new() -> Self {
        Pow {
            solved: RwSignal::new(None),
            solving: RwSignal::new(false),
            generation: StoredValue::new(0),
            queued: StoredValue::new(None),
            waiting: RwSignal::new(false),
        }
    }

    /// Starts solving a new challenge; when done, sends a waiting submit with the proof or, if
    /// none could be had, without (it is then only quarantined: nothing typed is lost).
    fn start(self, action: ServerAction<SubmitInquiry>) {
        self.generation.update_value(|g| *g += 1);
        self.solving.set(true);
        self.solved.set(None);
        #[cfg(feature = "hydrate")]
        {
            let mine = self.generation.get_value();
            leptos::task::spawn_local(async move {
                let solved = crate::pow::fetch_and_solve().await.map(|s| (s.payload, s.expires_ms));
                if self.generation.try_get_value() != Some(mine) {
                    return;
                }
                self.solving.set(false);
                self.solved.set(solved);
                if let Some(input) = self.queued.try_update_value(Option::take).flatten() {
                    self.waiting.set(false);
                    self.send(input, action);
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = action;
    }

    /// Sends with the proof when one is ready (and not about to expire), else waits for it.
    fn send(self, mut input: SubmitInquiry, action: ServerAction<SubmitInquiry>) {
        #[cfg(feature = "hydrate")]
        let fresh = |expires: f64| expires - 60_000.0 > js_sys::Date::now();
        #[cfg(not(feature = "hydrate"))]
        let fresh = |_: f64| true;
        let solved = self.solved.get_untracked();
        if let Some((payload, _)) = solved.clone().filter(|(_, e)| fresh(*e)) {
            input.altcha = Some(payload);
        } else if self.solving.get_untracked() || solved.is_some() {
            // Being solved (or about to expire: solve a new one): send when it is ready.
            self.queued.set_value(Some(input));
            self.waiting.set(true);
            if !self.solving.get_untracked() {
                self.start(action);
            }
            return;
        }
        action.dispatch(input);
        // A proof is used once: the next send needs a new one.
        self.start(action);
    }
}

/// The value a field holds in the page when the form is hydrated: what the visitor typed before
/// the client had loaded. Empty on the server, and when the form is rendered by the client.
fn typed_value(id: &str) -> String {
    #[cfg(feature = "hydrate")]
    if let Some(value) = document()
        .get_element_by_id(id)
        .and_then(|field| js_sys::Reflect::get(&field, &wasm_bindgen::JsValue::from_str("value")).ok())
        .and_then(|value| value.as_string())
    {
        return value;
    }
    let _ = id;
    String::new()
}

/// A message for errors that do not belong to one field.
fn general_message(err: &AppError) -> String {
    match err {
        AppError::Invalid(_) => t(T::ContactFixFields).into(),
        AppError::RateLimited { retry_after_secs } => tf(T::ContactRateLimited, &[("n", &retry_after_secs.div_ceil(60))]),
        AppError::BadRequest(_) => t(T::ContactIncomplete).into(),
        _ => t(T::ContactFailed).into(),
    }
}

/// What the visitor typed, and which fields they have left (their own validation shows then).
#[derive(Clone, Copy)]
struct Fields {
    name: ReadSignal<String>,
    email: ReadSignal<String>,
    message: ReadSignal<String>,
    touched: RwSignal<std::collections::BTreeSet<&'static str>>,
}

impl Fields {
    /// What a field shows: the server's verdict until the visitor has left the field; then its
    /// own validation, which replaces the server's (a fixed field shows nothing).
    fn error(self, field: &'static str, server: Option<String>) -> Option<String> {
        if !self.touched.read().contains(field) {
            return server;
        }
        match field {
            "name" => parse_name(&self.name.read()).err(),
            "email" => parse_email(&self.email.read()).err(),
            _ => parse_message(&self.message.read()).err(),
        }
    }

    /// Hydrated submit: validate with the shared parse functions first (instant feedback,
    /// nothing sent while a field is wrong), then call the server function without a page load.
    /// Without JavaScript this never runs and the browser posts the form itself.
    fn submit(self, ev: leptos::ev::SubmitEvent, action: ServerAction<SubmitInquiry>, pow: Pow) {
        ev.prevent_default();
        self.touched.update(|t| t.extend(["name", "email", "message"]));
        let invalid = parse_name(&self.name.get_untracked()).is_err()
            || parse_email(&self.email.get_untracked()).is_err()
            || parse_message(&self.message.get_untracked()).is_err();
        if invalid || action.pending().get_untracked() || pow.waiting.get_untracked() {
            return;
        }
        match <SubmitInquiry as leptos::form::FromFormData>::from_event(&ev) {
            Ok(input) => pow.send(input, action),
            Err(e) => leptos::logging::error!("contact form could not be read: {e}"),
        }
    }
}

#[component]
pub fn ContactForm() -> impl IntoView {
    // The router hands every action the error in the page's URL (`__err`), whoever wrote it; this
    // form shows only one this server signed (`error_from_url`), so the action starts empty.
    provide_context(leptos::server::ServerActionError::new("", ""));
    let action = ServerAction::<SubmitInquiry>::new();
    let sent_via_redirect = use_query_map().read_untracked().get("sent").is_some();
    let url_error = error_from_url();

    #[cfg(feature = "ssr")]
    if let Some(err) = &url_error {
        // The no-JavaScript result page carries the error's status, like the API answer would.
        common::error::set_status(err);
    }

    // Hydration writes every field from its signal: each starts from what the field holds, so
    // what a visitor typed while the client was loading stays.
    let (name, set_name) = signal(typed_value("contact-name"));
    let (email, set_email) = signal(typed_value("contact-email"));
    let (message, set_message) = signal(typed_value("contact-message"));
    // A field's own validation is shown once the visitor has left it (or tried to submit).
    let touched = RwSignal::new(std::collections::BTreeSet::<&'static str>::new());
    let hydrated = RwSignal::new(false);
    let (pow, stamp) = (Pow::new(), page_stamp());
    // Once the client runs: hydrated, and the first proof of work solves while the visitor types.
    Effect::new(move |_| (hydrated.set(true), pow.start(action)));

    // The latest server answer: from the action (hydrated) or from the URL (plain form post).
    let server_error = Memo::new(move |_| match action.value().get() {
        Some(Err(e)) => Some(e),
        Some(Ok(())) => None,
        None => url_error.clone(),
    });
    let sent = move || matches!(action.value().get(), Some(Ok(()))) || (sent_via_redirect && action.value().get().is_none());
    let server_field_errors = move || match server_error.get() {
        Some(AppError::Invalid(fields)) => fields,
        _ => FieldErrors::new(),
    };

    let fields = Fields { name, email, message, touched };
    let field_error = move |field: &'static str| move || fields.error(field, server_field_errors().get(field).cloned());
    let touch = move |field: &'static str| touched.update(|t| _ = t.insert(field));

    let on_submit = move |ev: leptos::ev::SubmitEvent| fields.submit(ev, action, pow);
    let pending = Signal::derive(move || action.pending().get() || pow.waiting.get());

    let send_another = move || {
        action.value().set(None);
        set_message.set(String::new());
        touched.set(Default::default());
    };

    // Until hydrated, the count the server rendered (0), which hydration keeps; then the message's,
    // also of what was typed before.
    let message_count = move || if hydrated.get() { message.with(|m| m.replace("\r\n", "\n").chars().count()) } else { 0 };

    view! {
        <section id="contact" class="contact" aria-labelledby="contact-title">
            <h2 id="contact-title">{t(T::ContactHeading)}</h2>
            <Show
                when=move || !sent()
                fallback=move || view! { <ContactSent hydrated on_another=send_another/> }
            >
                {move || server_error.get().map(|e| view! {
                    <div class="notice error" role="alert" data-testid="contact-error">{general_message(&e)}</div>
                })}
                <form action=SubmitInquiry::url() method="post" on:submit=on_submit
                    novalidate=move || hydrated.get() data-hydrated=move || hydrated.get().to_string()>
                    <SpamFields stamp=stamp.clone() pow/>
                    <ContactFields name set_name email set_email message set_message touch
                        errors=[Signal::derive(field_error("name")), Signal::derive(field_error("email")), Signal::derive(field_error("message"))]
                        message_count=Signal::derive(message_count) pending/>
                </form>
            </Show>
        </section>
    }
    // Type erasure keeps the view's type shallow enough for the compiler's default limits.
    .into_any()
}

/// The spam defence's hidden fields: the page's signed time stamp and the proof of work.
#[component]
fn SpamFields(stamp: String, pow: Pow) -> impl IntoView {
    view! {
        <input type="hidden" name=STAMP_FIELD value=stamp/>
        <input type="hidden" name=PROOF_FIELD prop:value=move || pow.solved.get().map(|(p, _)| p).unwrap_or_default()
            data-testid="contact-proof" data-solving=move || pow.solving.get().to_string()/>
    }
}

/// One line of the form (`contact-{field}`): its label, the input (autocompleted as `field`) and
/// the message of its own validation, announced as it changes.
#[component]
fn LineField(
    field: &'static str,
    kind: &'static str,
    max: u32,
    label: &'static str,
    value: ReadSignal<String>,
    set: WriteSignal<String>,
    touch: impl Fn(&'static str) + Copy + Send + Sync + 'static,
    error: Signal<Option<String>>,
) -> impl IntoView {
    let (id, error_id) = (format!("contact-{field}"), format!("contact-{field}-error"));
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <input id=id name=field type=kind autocomplete=field required maxlength=max
                prop:value=value
                on:input=move |ev| set.set(event_target_value(&ev))
                on:blur=move |_| touch(field)
                aria-invalid=move || error.get().is_some().to_string()
                aria-describedby=error_id.clone()/>
            <p id=error_id class="field-error" aria-live="polite">{move || error.get()}</p>
        </div>
    }
}

/// The form's fields: each with its label and the message of its own validation (`errors`, in
/// the order name, email, message), the message's character count, the honeypot and the button.
#[component]
fn ContactFields(
    name: ReadSignal<String>,
    set_name: WriteSignal<String>,
    email: ReadSignal<String>,
    set_email: WriteSignal<String>,
    message: ReadSignal<String>,
    set_message: WriteSignal<String>,
    touch: impl Fn(&'static str) + Copy + Send + Sync + 'static,
    errors: [Signal<Option<String>>; 3],
    message_count: Signal<usize>,
    pending: Signal<bool>,
) -> impl IntoView {
    view! {
        <LineField field="name" kind="text" max=100 label=t(T::ContactName) value=name set=set_name touch=touch error=errors[0]/>
        <LineField field="email" kind="email" max=254 label=t(T::ContactEmail) value=email set=set_email touch=touch error=errors[1]/>
        <div class="field">
            <label for="contact-message">{t(T::ContactMessage)}</label>
            <textarea id="contact-message" name="message" rows="7" required maxlength="5000"
                prop:value=message
                on:input=move |ev| set_message.set(event_target_value(&ev))
                on:blur=move |_| touch("message")
                aria-invalid=move || errors[2].get().is_some().to_string()
                aria-describedby="contact-message-error contact-message-count"></textarea>
            <p id="contact-message-count" class="hint" data-testid="message-count">
                {move || tf(T::ContactCount, &[("n", &message_count.get()), ("max", &MESSAGE_MAX_CHARS)])}
            </p>
            <p id="contact-message-error" class="field-error" aria-live="polite">{move || errors[2].get()}</p>
        </div>
        // Honeypot: hidden from people and assistive technology; bots fill it in.
        <div class="hp" aria-hidden="true">
            <label for="contact-website">{t(T::ContactHoneypot)}</label>
            <input id="contact-website" name=HONEYPOT_FIELD type="text" tabindex="-1" autocomplete="off"/>
        </div>
        <button type="submit" disabled=move || pending.get() aria-busy=move || pending.get().to_string()>
            {move || if pending.get() { t(T::ContactSending) } else { t(T::ContactSend) }}
        </button>
        <p class="hint"><a href="/retention">{t(T::ContactRetentionLink)}</a></p>
    }
}

/// What the visitor sees once the message is sent (and how to write another).
#[component]
fn ContactSent(hydrated: RwSignal<bool>, on_another: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    view! {
        <div class="notice success" role="status" data-testid="contact-success">
            <p><strong>{t(T::ContactSent)}</strong></p>
            <p>{t(T::ContactSentReply)}</p>
            {move || hydrated.get().then(|| view! {
                <button type="button" class="secondary" on:click=move |_| on_another()>{t(T::ContactSendAnother)}</button>
            })}
            {move || (!hydrated.get()).then(|| view! { <a href="/#contact">{t(T::ContactSendAnother)}</a> })}
        </div>
    }
}
