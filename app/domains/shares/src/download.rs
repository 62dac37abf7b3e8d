//! Server-side pieces of the recipient's download: its response headers.

use axum::http::HeaderValue;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// RFC 8187 `attr-char`: everything else in `filename*` is percent-encoded.
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// `Content-Disposition: attachment` per RFC 6266: an ASCII `filename` fallback (anything
/// outside printable ASCII, quotes, backslashes and percent signs become `_`) and the exact name
/// in `filename*` (UTF-8, percent-encoded). Whatever the stored name holds — CR/LF, quotes,
/// `../` — the header is one line of printable ASCII, and the name has no path.
pub fn content_disposition(stored_name: &str) -> HeaderValue {
    let name = super::clean_file_name(stored_name);
    let fallback: String = name.chars().map(|c| if (c.is_ascii_graphic() || c == ' ') && !matches!(c, '"' | '\\' | '%') { c } else { '_' }).collect();
    let encoded = utf8_percent_encode(&name, ATTR_CHAR);
    HeaderValue::from_str(&format!("attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

/// The stored content type when it is a well-formed MIME type, else `application/octet-stream`.
pub fn served_content_type(stored: &str) -> HeaderValue {
    stored
        .parse::<mime::Mime>()
        .ok()
        .and_then(|m| HeaderValue::from_str(m.essence_str()).ok())
        .unwrap_or_else(|| HeaderValue::from_static("application/octet-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_give_one_safe_header_line() {
        for name in ["../../etc/passwd", "a\"; filename=evil.exe", "x\r\nSet-Cookie: a=b", "報告 2026.pdf", &"é".repeat(300)] {
            let h = content_disposition(name);
            let s = h.to_str().expect("visible ASCII only");
            assert!(s.starts_with("attachment; filename=\""), "{s}");
            assert!(!s.contains('\r') && !s.contains('\n') && !s.contains('/'), "{s}");
            // Exactly two quotes: the fallback's own.
            assert_eq!(s.matches('"').count(), 2, "{s}");
        }
        let h = content_disposition("報告 2026.pdf");
        assert_eq!(h.to_str().unwrap(), "attachment; filename=\"__ 2026.pdf\"; filename*=UTF-8''%E5%A0%B1%E5%91%8A%202026.pdf");
    }

    #[test]
    fn content_types_are_passed_only_when_well_formed() {
        assert_eq!(served_content_type("application/pdf"), "application/pdf");
        assert_eq!(served_content_type("text/plain; charset=utf-8"), "text/plain");
        assert_eq!(served_content_type("nonsense"), "application/octet-stream");
        assert_eq!(served_content_type("text/html\r\nX: y"), "application/octet-stream");
    }
}
