//! Times as people read them, the same on every page.

use leptos::prelude::*;
use time::OffsetDateTime;

/// Formats a timestamp for people, in UTC ("2026-11-30 14:05 UTC").
pub fn format_time(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute())
}

/// A time as the reader expects it: in their own time zone and language (the browser's), once
/// the page has hydrated. The server's HTML — and a page without JavaScript, and the first
/// hydrated render, so hydration matches — shows UTC. `<time datetime>` carries the instant and
/// the tooltip keeps the UTC form. Times are stored in UTC throughout.
#[component]
pub fn LocalTime(at: OffsetDateTime) -> impl IntoView {
    let utc = format_time(at);
    let iso = at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    let shown = RwSignal::new(utc.clone());
    // In a task of its own after hydration: the browser's first date formatter loads its locale
    // data (about 20 ms on these machines), which would otherwise lengthen the hydration task
    // that keeps the page from answering input (Lighthouse's total blocking time).
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let lang = crate::i18n::lang().code();
        set_timeout(
            move || {
                if let Some(local) = browser_local(at, lang) {
                    // The page may have moved on: a signal already disposed is left alone.
                    let _ = shown.try_set(local);
                }
            },
            std::time::Duration::ZERO,
        );
    });
    view! { <time datetime=iso title=utc>{shown}</time> }
}

/// `at` in the browser's time zone, written the way `lang` writes dates ("Dec 1, 2026, 3:30 PM
/// GMT+9", "2026年12月1日 15:30 JST").
/// One formatter per language, made once: a page of fifty rows formats fifty times.
#[cfg(feature = "hydrate")]
fn browser_local(at: OffsetDateTime, lang: &'static str) -> Option<String> {
    use std::cell::RefCell;
    use wasm_bindgen::JsValue;
    thread_local! {
        static FORMAT: RefCell<Option<(&'static str, js_sys::Function)>> = const { RefCell::new(None) };
    }
    let format = FORMAT.with_borrow_mut(|cached| -> Option<js_sys::Function> {
        if let Some((_, format)) = cached.as_ref().filter(|(cached_lang, _)| *cached_lang == lang) {
            return Some(format.clone());
        }
        let options = js_sys::Object::new();
        for (key, value) in [("year", "numeric"), ("month", "short"), ("day", "numeric"), ("hour", "numeric"), ("minute", "2-digit"), ("timeZoneName", "short")]
        {
            js_sys::Reflect::set(&options, &JsValue::from_str(key), &JsValue::from_str(value)).ok()?;
        }
        let locales = js_sys::Array::of1(&JsValue::from_str(lang));
        let format = js_sys::Intl::DateTimeFormat::new(&locales, &options).format();
        *cached = Some((lang, format.clone()));
        Some(format)
    })?;
    let date = js_sys::Date::new(&JsValue::from_f64(at.unix_timestamp() as f64 * 1000.0));
    format.call1(&JsValue::NULL, &date).ok()?.as_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc_to_the_minute() {
        let t = OffsetDateTime::from_unix_timestamp(1_796_047_500).unwrap().to_offset(time::UtcOffset::from_hms(2, 0, 0).unwrap());
        assert_eq!(format_time(t), "2026-11-30 14:05 UTC");
    }
}
