//! The configured mailer: what the notify job's steps send with (absent: notifications are off).

use std::time::Duration;

/// What a notification says about the inquiries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyContent {
    /// "You have N new inquiries" and a link to the inbox: no personal data in the mail.
    Count,
    /// Each inquiry's name, email address and message.
    Full,
}

/// The configured mailer (absent: notifications are off).
#[derive(Clone)]
pub struct NotifySettings {
    pub mailer: Option<std::sync::Arc<Mailer>>,
}

impl kernel::state::Part for NotifySettings {
    type Slot = kernel::state::slot::Notify;
}

pub struct Mailer {
    pub transport: lettre::AsyncSmtpTransport<lettre::Tokio1Executor>,
    pub from: lettre::message::Mailbox,
    pub to: Vec<lettre::message::Mailbox>,
    pub content: NotifyContent,
    /// At most one message per this period.
    pub digest: Duration,
    /// The site's public URL (for the inbox link).
    pub public_url: String,
    /// The messages' language.
    pub lang: common::i18n::Lang,
    /// Also email about files (a share downloaded completely, a file received): opt-in.
    pub files: bool,
}
