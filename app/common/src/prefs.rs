//! A visitor's display preferences: the colour scheme (follow the system, light or dark),
//! remembered in a cookie. The server reads the cookie and renders `<html data-theme>`, so the
//! first paint already has the chosen colours (no flash) and hydration sees the same choice.
//! Without JavaScript the switch is a plain form (the server function sets the cookie and sends
//! the browser back); hydrated, it changes the page at once and saves in the background.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
pub use crate::i18n::cookie_value;

/// The cookie holding the visitor's colour scheme (absent: follow the system).
pub const THEME_COOKIE: &str = "ebb_theme";

/// The colour scheme: `Auto` follows `prefers-color-scheme`, the others override it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::Auto, Theme::Light, Theme::Dark];

    /// The value in the cookie, the form and `<html data-theme>`.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// A value from a cookie or a form; anything else is `None`.
    pub fn parse(value: &str) -> Option<Theme> {
        Theme::ALL.into_iter().find(|t| t.as_str() == value)
    }

    /// The button's label.
    pub fn label(self) -> &'static str {
        use crate::i18n::{t, T};
        t(match self {
            Theme::Auto => T::ThemeAuto,
            Theme::Light => T::ThemeLight,
            Theme::Dark => T::ThemeDark,
        })
    }
}

/// The current request's theme (server side; `Auto` without a request or a valid cookie).
#[cfg(feature = "ssr")]
pub fn theme_of_request() -> Theme {
    crate::request::with_parts(|parts| crate::i18n::header_cookies(&parts.headers, THEME_COOKIE).find_map(Theme::parse)).flatten().unwrap_or_default()
}

/// Whether cookies are marked `Secure` (the site is served over https): in the request's
/// context, put there with the state (`kernel::state::provide`).
#[derive(Debug, Clone, Copy)]
pub struct SecureCookies(pub bool);

/// Sets (for a year) or removes (`None`) a preference cookie on the response: HttpOnly,
/// SameSite=Lax, Secure when the site is served over https.
#[cfg(feature = "ssr")]
fn set_pref_cookie(name: &str, value: Option<&str>) {
    use axum::http::{header::SET_COOKIE, HeaderValue};
    let secure = use_context::<SecureCookies>().is_some_and(|s| s.0);
    let secure = if secure { "; Secure" } else { "" };
    let cookie = match value {
        None => format!("{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax{secure}"),
        Some(v) => format!("{name}={v}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax{secure}"),
    };
    if let (Some(res), Ok(value)) = (use_context::<leptos_axum::ResponseOptions>(), HeaderValue::from_str(&cookie)) {
        res.append_header(SET_COOKIE, value);
    }
}

/// Saves the colour scheme in a cookie for a year (`auto` removes it). Public: a visitor's
/// choice; the same-origin check applies as to every post.
#[server(prefix = "/api", endpoint = "prefs/theme")]
pub async fn set_theme(theme: String) -> Result<(), AppError> {
    let theme = Theme::parse(&theme).ok_or_else(|| AppError::BadRequest("theme must be auto, light or dark".into()))?;
    set_pref_cookie(THEME_COOKIE, (theme != Theme::Auto).then_some(theme.as_str()));
    Ok(())
}

/// Saves the page language in a cookie for a year. Public, like the colour scheme.
#[server(prefix = "/api", endpoint = "prefs/lang")]
pub async fn set_language(lang: String) -> Result<(), AppError> {
    use crate::i18n::{Lang, LANG_COOKIE};
    let lang = Lang::ALL.into_iter().find(|l| l.code() == lang).ok_or_else(|| AppError::BadRequest("lang must be en or ja".into()))?;
    set_pref_cookie(LANG_COOKIE, Some(lang.code()));
    Ok(())
}

/// The language switch in the page header: one button per language, each labelled in its own
/// language. Choosing one reloads the page in it (hydrated: after saving; without JavaScript:
/// the form post comes back to the page).
#[component]
pub fn LanguageSwitch() -> impl IntoView {
    use crate::i18n::{lang, t, Lang, T};
    let current = lang();
    let action = ServerAction::<SetLanguage>::new();
    Effect::new(move |_| {
        if let Some(Ok(())) = action.value().get() {
            #[cfg(feature = "hydrate")]
            if let Some(w) = web_sys::window() {
                let _ = w.location().reload();
            }
        }
    });
    let choose = move |ev: leptos::ev::MouseEvent, chosen: Lang| {
        ev.prevent_default();
        if chosen != current {
            action.dispatch(SetLanguage { lang: chosen.code().into() });
        }
    };
    view! {
        <form class="prefs" method="post" action=SetLanguage::url() data-testid="lang-switch">
            <fieldset>
                <legend>{t(T::PrefsLanguage)}</legend>
                {Lang::ALL
                    .into_iter()
                    .map(|l| view! {
                        <button type="submit" name="lang" value=l.code() lang=l.code() aria-pressed=(l == current).to_string()
                            on:click=move |ev| choose(ev, l)>{l.native_name()}</button>
                    })
                    .collect_view()}
            </fieldset>
        </form>
    }
}

/// Sets `<html data-theme>` in the open page (hydrated only).
fn apply_theme(theme: Theme) {
    #[cfg(feature = "hydrate")]
    if let Some(root) = document().document_element() {
        let _ = match theme {
            Theme::Auto => root.remove_attribute("data-theme"),
            other => root.set_attribute("data-theme", other.as_str()),
        };
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = theme;
}

/// The colour-scheme switch in the page header: three buttons, the chosen one pressed.
#[component]
pub fn ThemeSwitch() -> impl IntoView {
    // Read from the cookie on the server and sent with the page: hydration starts from the same.
    let initial = leptos::server::SharedValue::new(|| {
        #[cfg(feature = "ssr")]
        return theme_of_request();
        #[cfg(not(feature = "ssr"))]
        Theme::Auto
    })
    .into_inner();
    let theme = RwSignal::new(initial);
    let action = ServerAction::<SetTheme>::new();
    let choose = move |ev: leptos::ev::MouseEvent, chosen: Theme| {
        ev.prevent_default();
        theme.set(chosen);
        apply_theme(chosen);
        action.dispatch(SetTheme { theme: chosen.as_str().into() });
    };
    view! {
        <form class="prefs" method="post" action=SetTheme::url() data-testid="theme-switch">
            <fieldset>
                <legend>{crate::i18n::t(crate::i18n::T::PrefsColours)}</legend>
                {Theme::ALL
                    .into_iter()
                    .map(|t| view! {
                        <button type="submit" name="theme" value=t.as_str() aria-pressed=move || (theme.get() == t).to_string()
                            on:click=move |ev| choose(ev, t)>{t.label()}</button>
                    })
                    .collect_view()}
            </fieldset>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_theme_cookie_is_read_among_others_and_unknown_values_mean_auto() {
        assert_eq!(cookie_value("id=abc; ebb_theme=dark; x=1", THEME_COOKIE).and_then(Theme::parse), Some(Theme::Dark));
        assert_eq!(cookie_value("ebb_theme=light", THEME_COOKIE).and_then(Theme::parse), Some(Theme::Light));
        assert_eq!(cookie_value("ebb_theme=<script>", THEME_COOKIE).and_then(Theme::parse), None);
        assert_eq!(cookie_value("xebb_theme=dark", THEME_COOKIE), None);
        for t in Theme::ALL {
            assert_eq!(Theme::parse(t.as_str()), Some(t));
        }
    }
}
