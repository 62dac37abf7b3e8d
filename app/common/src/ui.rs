//! Pieces of the interface used by several domains: error descriptions, the outcome line of an
//! admin action, the copyable link, and sizes as people read them.

use leptos::prelude::*;

use crate::error::AppError;
use crate::i18n::{t, texts, tf, T};

/// What to tell a person about a failed call, in words that fit any page. A domain whose
/// errors mean something more specific there (a `NotFound` on the invite page is a bad link)
/// matches those first and falls back to this.
pub fn describe(err: &AppError) -> String {
    // No `_` arm: a new variant must get its own words here.
    match err {
        AppError::BadRequest(msg) => msg.clone(),
        AppError::Invalid(fields) => fields.values().cloned().collect::<Vec<_>>().join(" "),
        AppError::RateLimited { retry_after_secs } => tf(T::ErrRateLimited, &[("n", &retry_after_secs.div_ceil(60))]),
        AppError::TooLarge { limit_bytes } => tf(T::ErrTooLarge, &[("limit", &format_bytes(*limit_bytes))]),
        AppError::Unauthorized => t(T::ErrUnauthorized).into(),
        AppError::Forbidden => t(T::ErrForbidden).into(),
        AppError::NotAllowed { needs } => tf(T::ErrNotAllowed, &[("role", &needs.label())]),
        AppError::StepUp => {
            // The admin pages' prompt asks for the passkey (see `StepUpPrompt`).
            if let Some(prompt) = use_context::<StepUpPrompt>() {
                prompt.0.set(true);
            }
            t(T::ErrStepUp).into()
        }
        AppError::NotFound => t(T::ErrNotFound).into(),
        AppError::Gone => t(T::ErrGone).into(),
        AppError::Conflict(msg) => msg.clone(),
        AppError::StorageUnavailable => t(T::ErrStorageUnavailable).into(),
        AppError::StorageFull => t(T::ErrStorageFull).into(),
        AppError::Unavailable => t(T::ErrUnavailable).into(),
        AppError::Internal => t(T::ErrInternal).into(),
    }
}

/// The admin pages' request for a fresh passkey check (the admin frame provides it and shows the
/// prompt while `0` is set): set when a call answers [`AppError::StepUp`] (through [`describe`]),
/// or when a sensitive download is asked for ([`checked_download`]) — `download` then waits for
/// the check, and goes on by itself once the passkey confirmed.
#[derive(Debug, Clone, Copy)]
pub struct StepUpPrompt(pub RwSignal<bool>, pub RwSignal<Option<String>>);

/// The click handler of a link to a sensitive download (an export, a copy): with JavaScript in an
/// admin page, the frame first checks that the session may (a fresh passkey check) and asks for
/// the passkey when not, then downloads; without the frame, the link is followed as it is (the
/// server refuses a stale session with a 403 that says what to do).
pub fn checked_download(href: impl Fn() -> String + 'static) -> impl Fn(leptos::ev::MouseEvent) + 'static {
    let prompt = use_context::<StepUpPrompt>();
    move |ev: leptos::ev::MouseEvent| {
        if let Some(StepUpPrompt(_, download)) = prompt {
            ev.prevent_default();
            download.set(Some(href()));
        }
    }
}

/// Whether the person confirms `question` (the browser's own dialog, which every assistive
/// technology reads). Without the browser (server rendering) there is no one to ask: `true`.
pub fn confirmed(question: &str) -> bool {
    #[cfg(feature = "hydrate")]
    return web_sys::window().and_then(|w| w.confirm_with_message(question).ok()).unwrap_or(false);
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = question;
        true
    }
}

/// A query-string value: everything but RFC 3986 unreserved characters percent-encoded.
pub fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// "0 B", "12.3 KiB", "1.0 GiB".
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The outcome of an admin action: a success (status) or an error (alert) line, or nothing.
#[component]
pub fn Outcome(message: RwSignal<Option<Result<String, String>>>, testid: &'static str) -> impl IntoView {
    move || {
        message.get().map(|m| {
            let (class, role, text) = match m {
                Ok(text) => ("notice success", "status", text),
                Err(text) => ("notice error", "alert", text),
            };
            view! { <p class=class role=role data-testid=testid>{text}</p> }
        })
    }
}

/// A card of an admin page: a section named by its heading (`id` links the two for assistive
/// technology).
#[component]
pub fn Card(id: &'static str, title: &'static str, children: Children) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby=id>
            <h2 id=id>{title}</h2>
            {children()}
        </section>
    }
}

/// A list of an admin page as a table: its column heads, a last column of buttons when `actions`
/// names it (for screen readers), then the rows.
#[component]
pub fn ListTable(testid: &'static str, heads: Vec<&'static str>, #[prop(optional)] actions: Option<&'static str>, children: Children) -> impl IntoView {
    view! {
        <table class="list" data-testid=testid>
            <thead><tr>
                {heads.into_iter().map(|head| view! { <th>{head}</th> }).collect_view()}
                {actions.map(|name| view! { <th><span class="sr-only">{name}</span></th> })}
            </tr></thead>
            <tbody>{children()}</tbody>
        </table>
    }
}

/// What a page shows of a value it loads: "Loading…" until the value first arrives (the last
/// one stays while it reloads), a failure as an alert in the page's own words (`describe`), and
/// otherwise what `ok` makes of the value. Every admin card and list loads through it.
#[component]
pub fn Loaded<Item, V>(
    value: impl Fn() -> Option<Result<Item, AppError>> + Send + Sync + 'static,
    describe: fn(&AppError) -> String,
    ok: impl Fn(Item) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    Item: 'static,
    V: IntoView + 'static,
{
    view! {
        <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
            {move || value().map(|r| match r {
                Err(e) => view! { <p class="notice error" role="alert">{describe(&e)}</p> }.into_any(),
                Ok(item) => ok(item).into_any(),
            })}
        </Transition>
    }
}

/// The end of a paged list: what the list says when it is `empty` (`empty_text`), and "Show
/// older" while there is a next page (`more`), which calls `on_more`.
#[component]
pub fn ListEnd(
    empty: impl Fn() -> bool + Send + Sync + 'static,
    empty_text: impl Fn() -> &'static str + Copy + Send + Sync + 'static,
    more: impl Fn() -> bool + Send + Sync + 'static,
    on_more: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Show when=empty>
            <p class="empty">{move || empty_text()}</p>
        </Show>
        <Show when=more>
            <button type="button" class="secondary" on:click=move |_| on_more()>{t(UiT::ShowOlder)}</button>
        </Show>
    }
}

/// A read-only field holding a link that is shown once, with a button that copies it.
#[component]
pub fn CopyableLink(input_id: &'static str, testid: &'static str, url: String, button: &'static str) -> impl IntoView {
    let copied = RwSignal::new(false);
    let value = url.clone();
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(w) = web_sys::window() {
            let _ = w.navigator().clipboard().write_text(&url);
            copied.set(true);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &url;
    };
    view! {
        <div class="inline tight">
            <input id=input_id type="text" readonly data-testid=testid prop:value=value/>
            <button type="button" class="small" on:click=copy>{move || if copied.get() { t(UiT::Copied) } else { button }}</button>
        </div>
    }
}

texts! {
    pub enum UiT {
    // The end of every admin page's <Title> (the visitor pages end with `T::TitleSuffix`)
    AdminTitleSuffix { en: " — Ebb admin", ja: " — Ebb 管理画面" }
    // The copyable link's button once the link is copied
    Copied { en: "Copied", ja: "コピーしました" }
    // The button under a paged list that loads the next (older) page
    ShowOlder { en: "Show older", ja: "さらに古いものを表示" }
}
}

/// A `mailto:` link to `email`, percent-encoded: whatever is stored, the link opens a mail to
/// that address and nothing else (no `?bcc=`, no `&body=`).
pub fn mailto_href(email: &str) -> String {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    const KEEP: &percent_encoding::AsciiSet = &NON_ALPHANUMERIC.remove(b'@').remove(b'.').remove(b'-').remove(b'_').remove(b'+');
    format!("mailto:{}", utf8_percent_encode(email, KEEP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(1 << 30), "1.0 GiB");
    }

    #[test]
    fn the_generic_texts_speak_of_no_domain() {
        let text = describe(&AppError::NotFound);
        assert!(!text.contains("invite") && !text.contains("inquiry") && !text.contains("share"), "{text}");
    }
}
