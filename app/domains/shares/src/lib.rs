//! One-time file shares (seed 002): an admin uploads a file and gets a link that delivers it
//! once. Lifecycle `active → consumed → purged`, forward only; the self-healing GC deletes the
//! file first and only then marks the share purged.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub mod api;
cfg_if::cfg_if! {
    // What runs on the server only.
    if #[cfg(feature = "ssr")] {
        pub mod db;
        pub mod download;
        pub mod file_events;
        pub mod gc;
        pub mod held;
        pub mod lifecycle;
        pub mod prune;
        pub mod receipts;
        pub mod requests;
        pub mod retention;
        pub mod routes;
    }
}
mod cards;
pub mod texts;
pub mod ui;
mod ui_requests;
#[cfg(feature = "hydrate")]
mod upload;

/// What shares need at run time (put into `AppState` by the composition root).
#[cfg(feature = "ssr")]
#[derive(Debug, Clone, Copy)]
pub struct ShareSettings {
    /// Largest file a share may hold, in bytes.
    pub max_bytes: u64,
    /// Longest expiry an admin may choose, in hours (at most 720).
    pub max_expiry_hours: u32,
    /// The GC's timing (delivery grace, retry backoff).
    pub gc: gc::GcRules,
}

#[cfg(feature = "ssr")]
impl kernel::state::Part for ShareSettings {
    type Slot = kernel::state::slot::Shares;
}

/// Where a share stands, as people see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ShareState {
    /// Not downloaded yet and not expired: the link works.
    Active,
    /// Downloaded; the file is deleted after the delivery grace.
    Downloaded,
    /// Expired (or revoked) before anyone downloaded it; the file is deleted by the GC.
    Expired,
    /// The file is gone (after a download or after expiry).
    Purged { downloaded: bool },
}

impl ShareState {
    /// Derives the state from the stored columns at `now`.
    pub fn of(status: &str, expires_at: OffsetDateTime, consumed: bool, now: OffsetDateTime) -> Self {
        match status {
            "purged" => ShareState::Purged { downloaded: consumed },
            "consumed" => ShareState::Downloaded,
            _ if expires_at <= now => ShareState::Expired,
            _ => ShareState::Active,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ShareState::Active => "Active",
            ShareState::Downloaded => "Downloaded",
            ShareState::Expired => "Expired",
            ShareState::Purged { downloaded: true } => "Downloaded · file deleted",
            ShareState::Purged { downloaded: false } => "Expired · file deleted",
        }
    }

    /// CSS class of the status badge.
    pub fn badge(self) -> &'static str {
        match self {
            ShareState::Active => "badge ok",
            ShareState::Downloaded | ShareState::Expired => "badge pending",
            ShareState::Purged { .. } => "badge done",
        }
    }
}

/// One row of the admin list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareSummary {
    pub id: i64,
    pub file_name: String,
    pub size_bytes: i64,
    pub note: Option<String>,
    pub state: ShareState,
    pub created_at: OffsetDateTime,
    pub created_by: Option<String>,
    pub expires_at: OffsetDateTime,
    pub consumed_at: Option<OffsetDateTime>,
    pub purged_at: Option<OffsetDateTime>,
    pub purge_attempts: i32,
    pub next_purge_attempt_at: Option<OffsetDateTime>,
    /// On legal hold: the file is kept until the hold is lifted.
    pub held: bool,
    /// Received through a file request (a private item: the admin downloads it).
    pub received: bool,
    /// Has a public link (every uploaded share; a received file once the admin shared it).
    pub public: bool,
    /// Downloads the link allows, and won so far.
    pub max_downloads: i32,
    pub downloads: i32,
    /// What the server's own stream delivered, per won download (oldest first).
    pub deliveries: Vec<Delivery>,
}

/// One won download of a share, as the server streamed it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Delivery {
    pub started_at: OffsetDateTime,
    /// The contiguous bytes from the start that were sent (a resume extends them).
    pub bytes_sent: i64,
    /// Requests that resumed it (Range).
    pub resumes: i32,
    pub completed_at: Option<OffsetDateTime>,
    /// Whether its receipt can still resume it (not complete, in the grace, resumes left, the
    /// share neither revoked nor its file deleted).
    pub resumable: bool,
}

/// Downloads a share may allow at most.
pub const MAX_DOWNLOADS: i32 = 20;

/// Validates the number of downloads a link allows: 1 to [`MAX_DOWNLOADS`]; empty means 1.
pub fn parse_max_downloads(raw: &str) -> Result<i32, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(1);
    }
    raw.parse::<i32>()
        .ok()
        .filter(|n| (1..=MAX_DOWNLOADS).contains(n))
        .ok_or_else(|| common::i18n::tf(texts::SharesT::DownloadsRange, &[("max", &MAX_DOWNLOADS)]))
}

/// Where a file request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileRequestState {
    /// The link works: nobody has sent a file yet.
    Open,
    /// A file was received.
    Used,
    /// Expired or revoked before a file came.
    Expired,
}

/// One file request in the admin's list.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileRequestSummary {
    pub id: i64,
    pub note: Option<String>,
    pub max_bytes: i64,
    pub state: FileRequestState,
    pub expires_at: OffsetDateTime,
    pub used_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub created_by: Option<String>,
    /// The received file's share id (its row in the shares list).
    pub share_id: Option<i64>,
}

/// A new file request: its link, shown once (only its hash is stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewFileRequest {
    pub id: i64,
    pub url: String,
    pub qr_svg: String,
    pub max_bytes: i64,
    pub expires_at: OffsetDateTime,
}

/// What the uploader's page (`/r/{token}`) shows. A closed request carries nothing of the
/// request (its note is for the person it was sent to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FileRequestLanding {
    Open {
        note: Option<String>,
        max_bytes: i64,
        expires_at: OffsetDateTime,
    },
    /// A file was already sent through this link.
    Used,
    Expired,
}

/// What a completed upload through a file request answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileReceived {
    pub file_name: String,
    pub size_bytes: i64,
}

/// Size limits offered for a file request, in MiB (those above the share limit are hidden).
pub const REQUEST_SIZE_CHOICES_MIB: &[u64] = &[10, 100, 1024, 5 * 1024, 10 * 1024, 50 * 1024];

/// Validates a file request's size limit in MiB: 1 MiB up to the share limit.
pub fn parse_size_limit_mib(raw: &str, max_bytes: u64) -> Result<u64, String> {
    let max_mib = (max_bytes / (1024 * 1024)).max(1);
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|m| (1..=max_mib).contains(m))
        .map(|m| (m * 1024 * 1024).min(max_bytes))
        .ok_or_else(|| common::i18n::tf(texts::SharesT::SizeLimitRange, &[("max", &common::ui::format_bytes(max_bytes))]))
}

/// What the upload form may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareLimits {
    pub max_bytes: u64,
    pub max_expiry_hours: u32,
}

/// A page of the admin list, newest first; `next` is the id to continue below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareList {
    pub items: Vec<ShareSummary>,
    pub next: Option<i64>,
    pub limits: ShareLimits,
}

/// The answer to an upload. The link is in it once and never stored (only its hash is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewShare {
    pub id: i64,
    pub url: String,
    /// The link as a QR code (an SVG document drawn by the server from `url` alone).
    pub qr_svg: String,
    pub file_name: String,
    pub size_bytes: i64,
    pub expires_at: OffsetDateTime,
}

/// What the recipient's page shows. Only a working link carries the file's facts: a page that
/// refuses (revoked, expired, downloaded) must not carry, in its HTML or the data serialised for
/// hydration, what it refuses to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ShareLanding {
    Active {
        file_name: String,
        size_bytes: i64,
        expires_at: OffsetDateTime,
    },
    /// The link no longer works; `downloaded` says whether it was used. `resume_until`: this
    /// browser holds the receipt of a download that did not finish, which it can resume until
    /// then (the browser's own Resume, or `curl -C -`).
    Gone {
        downloaded: bool,
        resume_until: Option<OffsetDateTime>,
    },
}

/// A share whose file the GC has failed to delete several times (shown on the dashboard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareProblem {
    pub id: i64,
    pub file_name: String,
    pub purge_attempts: i32,
    pub next_purge_attempt_at: Option<OffsetDateTime>,
}

/// Shares at a glance, for the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareOverview {
    pub active: i64,
    pub awaiting_deletion: i64,
    pub problems: Vec<ShareProblem>,
}

/// The dashboard lists shares with at least this many failed deletes.
pub const PROBLEM_ATTEMPTS: i32 = 3;

/// Rows per page of the admin list.
pub const PAGE_SIZE: i64 = 50;

/// Expiry choices offered by the form (hours, label); those above the configured cap are hidden.
pub const EXPIRY_CHOICES: &[(u32, &str)] = &[(1, "1 hour"), (6, "6 hours"), (24, "1 day"), (72, "3 days"), (168, "7 days"), (336, "14 days"), (720, "30 days")];

/// Longest expiry Ebb allows at all (the configuration may lower it).
pub const MAX_EXPIRY_HOURS: u32 = 720;

/// Longest note, in characters.
pub const NOTE_MAX_CHARS: usize = 500;

/// Longest stored file name, in bytes of UTF-8 (what file systems allow: a name a recipient can
/// save, whatever its script).
pub const FILE_NAME_MAX_BYTES: usize = 255;

/// Validates the expiry in hours: 1 hour up to the configured cap.
pub fn parse_expiry_hours(raw: &str, max_hours: u32) -> Result<u32, String> {
    raw.trim().parse::<u32>().ok().filter(|h| (1..=max_hours).contains(h)).ok_or_else(|| expiry_message(max_hours))
}

/// What to choose, for a missing or invalid expiry (in the page's or request's language).
pub fn expiry_message(max_hours: u32) -> String {
    common::i18n::tf(texts::SharesT::ExpiryRange, &[("max", &describe_hours(max_hours))])
}

/// "1 hour", "6 hours", "1 day", "3 days" (in the page's or request's language).
pub fn describe_hours(hours: u32) -> String {
    if hours.is_multiple_of(24) {
        common::i18n::days(i64::from(hours / 24))
    } else {
        common::i18n::hours(i64::from(hours))
    }
}

/// An optional private note: at most [`NOTE_MAX_CHARS`] printable characters.
pub fn parse_note(raw: &str) -> Result<Option<String>, String> {
    let note = raw.trim();
    if note.is_empty() {
        return Ok(None);
    }
    if note.chars().count() > NOTE_MAX_CHARS {
        return Err(common::i18n::tf(texts::SharesT::NoteTooLong, &[("max", &NOTE_MAX_CHARS)]));
    }
    if note.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
        return Err(common::i18n::t(texts::SharesT::NoteControl).into());
    }
    // Notes are not found, copied or erased by data requests: no person's address in them.
    if common::email::contains_address(note) {
        return Err(common::i18n::t(texts::SharesT::NoteNoAddress).into());
    }
    Ok(Some(note.to_string()))
}

/// Turns the name a browser sent into a safe display and download name: the last path
/// component only, no control or bidirectional-override characters, no leading dots, at most
/// 255 bytes of UTF-8, cut on a character boundary (keeping a short extension), never empty.
pub fn clean_file_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String =
        last.chars().filter(|c| !c.is_control() && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')).collect();
    let trimmed = cleaned.trim().trim_start_matches('.').trim();
    if trimmed.is_empty() {
        return "download".into();
    }
    if trimmed.len() <= FILE_NAME_MAX_BYTES {
        return trimmed.to_string();
    }
    // Too long: keep the extension (when it is short) and cut the stem.
    let ext = trimmed.rsplit_once('.').map(|(_, e)| e).filter(|e| !e.is_empty() && e.len() <= 16);
    match ext {
        Some(ext) => {
            let stem = &trimmed[..trimmed.len() - ext.len() - 1];
            format!("{}.{ext}", prefix_within(stem, FILE_NAME_MAX_BYTES - ext.len() - 1).trim_end())
        }
        None => prefix_within(trimmed, FILE_NAME_MAX_BYTES).to_string(),
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix_within(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_one_hour_to_the_configured_cap() {
        assert_eq!(parse_expiry_hours("1", 720), Ok(1));
        assert_eq!(parse_expiry_hours("720", 720), Ok(720));
        for bad in ["0", "721", "-1", "", "1.5", "abc", "99999999999"] {
            assert!(parse_expiry_hours(bad, 720).is_err(), "{bad:?}");
        }
        let err = parse_expiry_hours("168", 72).unwrap_err();
        assert!(err.contains("3 days"), "{err}");
    }

    #[test]
    fn notes_are_optional_short_and_printable() {
        assert_eq!(parse_note("  "), Ok(None));
        assert_eq!(parse_note(" For Ann\nthanks "), Ok(Some("For Ann\nthanks".into())));
        assert!(parse_note(&"x".repeat(501)).is_err());
        assert!(parse_note("bell\u{7}").is_err());
        assert_eq!(parse_note("for ann@example.org"), Err(common::i18n::t(texts::SharesT::NoteNoAddress).into()));
        assert_eq!(parse_note("for Ann (case 12)"), Ok(Some("for Ann (case 12)".into())));
    }

    #[test]
    fn file_names_lose_paths_controls_and_spoofing() {
        assert_eq!(clean_file_name("../../etc/passwd"), "passwd");
        assert_eq!(clean_file_name("C:\\Users\\ann\\report.pdf"), "report.pdf");
        assert_eq!(clean_file_name("a\r\nSet-Cookie: x.txt"), "aSet-Cookie: x.txt");
        assert_eq!(clean_file_name("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
        assert_eq!(clean_file_name(".htaccess"), "htaccess");
        assert_eq!(clean_file_name(""), "download");
        assert_eq!(clean_file_name("../"), "download");
        assert_eq!(clean_file_name("Grüße \"quoted\" 報告.pdf"), "Grüße \"quoted\" 報告.pdf");
    }

    #[test]
    fn long_file_names_are_cut_to_255_bytes_on_a_character_boundary_keeping_the_extension() {
        let long = format!("{}.pdf", "é".repeat(300));
        let cleaned = clean_file_name(&long);
        assert!(cleaned.len() <= 255 && cleaned.len() >= 250, "{}", cleaned.len());
        assert!(cleaned.ends_with(".pdf"));
        // A Japanese name of 304 bytes (three bytes a character) fits a file system once cut.
        let japanese = format!("{}.pdf", "報".repeat(100));
        assert_eq!(japanese.len(), 304);
        let cut = clean_file_name(&japanese);
        assert!(cut.len() <= 255 && cut.ends_with(".pdf"), "{} bytes", cut.len());
        assert_eq!(cut.chars().filter(|c| *c == '報').count(), (255 - 4) / 3);
        let no_ext = "x".repeat(300);
        assert_eq!(clean_file_name(&no_ext).len(), 255);
        assert_eq!(clean_file_name(&"ü".repeat(200)).len(), 254, "never half a character");
    }

    #[test]
    fn downloads_allowed_are_one_to_twenty() {
        assert_eq!(parse_max_downloads(""), Ok(1));
        assert_eq!(parse_max_downloads(" 3 "), Ok(3));
        assert_eq!(parse_max_downloads("20"), Ok(20));
        for bad in ["0", "21", "-1", "1.5", "x"] {
            assert!(parse_max_downloads(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn request_size_limits_are_one_mib_to_the_share_limit() {
        let gib = 1024 * 1024 * 1024;
        assert_eq!(parse_size_limit_mib("10", gib), Ok(10 * 1024 * 1024));
        assert_eq!(parse_size_limit_mib("1024", gib), Ok(gib));
        for bad in ["0", "1025", "", "-5", "1e3"] {
            assert!(parse_size_limit_mib(bad, gib).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_state_follows_status_expiry_and_download() {
        let now = OffsetDateTime::now_utc();
        let later = now + time::Duration::hours(1);
        let earlier = now - time::Duration::hours(1);
        assert_eq!(ShareState::of("active", later, false, now), ShareState::Active);
        assert_eq!(ShareState::of("active", earlier, false, now), ShareState::Expired);
        assert_eq!(ShareState::of("consumed", later, true, now), ShareState::Downloaded);
        assert_eq!(ShareState::of("purged", earlier, true, now), ShareState::Purged { downloaded: true });
        assert_eq!(ShareState::of("purged", earlier, false, now), ShareState::Purged { downloaded: false });
    }
}
