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
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(local) = browser_local(at, crate::i18n::lang().code()) {
            shown.set(local);
        }
    });
    view! { <time datetime=iso title=utc>{shown}</time> }
}

/// `at` in the browser's time zone, written the way `lang` writes dates ("Dec 1, 2026, 3:30 PM
/// GMT+9", "2026年12月1日 15:30 JST").
#[cfg(feature = "hydrate")]
fn browser_local(at: OffsetDateTime, lang: &str) -> Option<String> {
    use wasm_bindgen::JsValue;
    let date = js_sys::Date::new(&JsValue::from_f64(at.unix_timestamp() as f64 * 1000.0));
    let options = js_sys::Object::new();
    for (key, value) in [("year", "numeric"), ("month", "short"), ("day", "numeric"), ("hour", "numeric"), ("minute", "2-digit"), ("timeZoneName", "short")] {
        js_sys::Reflect::set(&options, &JsValue::from_str(key), &JsValue::from_str(value)).ok()?;
    }
    Some(String::from(date.to_locale_string(lang, &options)))
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
