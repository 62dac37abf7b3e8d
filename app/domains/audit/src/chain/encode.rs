//! The canonical bytes of an event and the chain's link (encoding `ebb-audit-v1`, written down in
//! docs/auditor.md):
//!
//! ```text
//! canonical(e) = "ebb-audit-v1" ‖ field(id) ‖ field(occurred_at) ‖ field(kind) ‖ field(admin_id)
//!                ‖ field(admin_name) ‖ field(subject_type) ‖ field(subject_id) ‖ field(detail)
//!                ‖ field(client_hash) ‖ field(seq)
//! field(NULL)  = 0x00
//! field(text)  = 0x01 ‖ u32 big-endian byte length ‖ UTF-8 bytes
//! hash(e)      = SHA-256(prev_hash ‖ canonical(e)); the first event of a month: prev_hash = 32 × 0x00
//! ```
//!
//! Numbers are decimal; `occurred_at` is UTC as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (always six digits);
//! `admin_id` is the lowercase hyphenated UUID; `seq` is the event's place in its month's chain
//! (1, 2, …). Every column the archive keeps is covered, so changing, removing, adding or
//! reordering anything breaks the chain at that event.

use sha2::{Digest, Sha256};
use time::OffsetDateTime;

/// The encoding's name, the first bytes of every canonical record.
pub const VERSION: &[u8] = b"ebb-audit-v1";
/// The `prev_hash` of a month's first event.
pub const GENESIS: [u8; 32] = [0; 32];

/// An event as the chain sees it (every column the archive keeps).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ChainRow {
    /// The event as the audit log shows it.
    #[sqlx(flatten)]
    pub event: crate::AuditRow,
    /// The event's place in its month's chain; `None` before sealing.
    pub seq: Option<i64>,
    /// Its link; `None` before sealing.
    pub hash: Option<Vec<u8>>,
}

/// `occurred_at` as the encoding writes it (and the archive stores it).
pub fn timestamp(at: OffsetDateTime, out: &mut String) {
    use std::fmt::Write;
    let at = at.to_offset(time::UtcOffset::UTC);
    let _ =
        write!(out, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", at.year(), at.month() as u8, at.day(), at.hour(), at.minute(), at.second(), at.microsecond());
}

fn field(out: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        None => out.push(0),
        Some(b) => {
            out.push(1);
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
    }
}

/// An event's fields as text, as the encoding and the archive write them.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    pub id: &'a str,
    pub occurred_at: &'a str,
    pub kind: &'a str,
    pub admin_id: Option<&'a str>,
    pub admin_name: Option<&'a str>,
    pub subject_type: Option<&'a str>,
    pub subject_id: Option<&'a str>,
    pub detail: Option<&'a str>,
    pub client_hash: Option<&'a str>,
    pub seq: &'a str,
}

/// The canonical bytes of `f`, appended to `out`.
pub fn canonical_fields(out: &mut Vec<u8>, f: &Fields<'_>) {
    out.extend_from_slice(VERSION);
    field(out, Some(f.id.as_bytes()));
    field(out, Some(f.occurred_at.as_bytes()));
    field(out, Some(f.kind.as_bytes()));
    for v in [f.admin_id, f.admin_name, f.subject_type, f.subject_id, f.detail, f.client_hash] {
        field(out, v.map(str::as_bytes));
    }
    field(out, Some(f.seq.as_bytes()));
}

/// The canonical bytes of `r` at place `seq`, appended to `out` (`scratch` is reused).
pub fn canonical(out: &mut Vec<u8>, r: &ChainRow, seq: i64, scratch: &mut String) {
    scratch.clear();
    timestamp(r.event.occurred_at, scratch);
    let (id, seq) = (r.event.id.to_string(), seq.to_string());
    let admin = r.event.admin_id.map(|a| a.hyphenated().to_string());
    let f = Fields {
        id: &id,
        occurred_at: scratch,
        kind: &r.event.kind,
        admin_id: admin.as_deref(),
        admin_name: r.event.admin_name.as_deref(),
        subject_type: r.event.subject_type.as_deref(),
        subject_id: r.event.subject_id.as_deref(),
        detail: r.event.detail.as_deref(),
        client_hash: r.event.client_hash.as_deref(),
        seq: &seq,
    };
    canonical_fields(out, &f);
}

/// Links events: feed them in chain order, get each one's hash.
#[derive(Default)]
pub struct Linker {
    buf: Vec<u8>,
    scratch: String,
}

impl Linker {
    /// `SHA-256(prev ‖ canonical(r at seq))`.
    pub fn link(&mut self, prev: &[u8; 32], r: &ChainRow, seq: i64) -> [u8; 32] {
        self.buf.clear();
        canonical(&mut self.buf, r, seq, &mut self.scratch);
        Self::hash(prev, &self.buf)
    }

    /// `SHA-256(prev ‖ canonical(f))`.
    pub fn link_fields(&mut self, prev: &[u8; 32], f: &Fields<'_>) -> [u8; 32] {
        self.buf.clear();
        canonical_fields(&mut self.buf, f);
        Self::hash(prev, &self.buf)
    }

    /// `SHA-256(prev ‖ canonical)`, for canonical bytes made already.
    pub fn hash(prev: &[u8; 32], canonical: &[u8]) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(prev);
        h.update(canonical);
        h.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> ChainRow {
        ChainRow {
            event: crate::AuditRow {
                id: 42,
                occurred_at: time::macros::datetime!(2026-12-03 10:00:01.5 UTC),
                kind: "share.create".into(),
                admin_id: Some(uuid::uuid!("6f1c8f1e-0b7e-4c1a-9d7e-1f2e3d4c5b6a")),
                admin_name: Some("Ana".into()),
                subject_type: Some("share".into()),
                subject_id: Some("abc".into()),
                detail: None,
                client_hash: Some(String::new()),
            },
            seq: None,
            hash: None,
        }
    }

    /// The bytes, spelled out: what the auditor guide's Python reproduces.
    #[test]
    fn the_canonical_bytes_are_the_documented_ones() {
        let mut out = Vec::new();
        canonical(&mut out, &row(), 7, &mut String::new());
        let mut want = b"ebb-audit-v1".to_vec();
        for f in ["42", "2026-12-03T10:00:01.500000Z", "share.create", "6f1c8f1e-0b7e-4c1a-9d7e-1f2e3d4c5b6a", "Ana", "share", "abc"] {
            want.push(1);
            want.extend_from_slice(&(f.len() as u32).to_be_bytes());
            want.extend_from_slice(f.as_bytes());
        }
        want.push(0); // detail NULL
        want.extend_from_slice(&[1, 0, 0, 0, 0]); // client_hash: empty text, not NULL
        want.extend_from_slice(&[1, 0, 0, 0, 1, b'7']);
        assert_eq!(out, want);
        let h = Linker::default().link(&GENESIS, &row(), 7);
        let mut s = Sha256::new();
        s.update(GENESIS);
        s.update(&want);
        assert_eq!(h, <[u8; 32]>::from(s.finalize()));
    }

    /// Every column counts: changing any one (NULL against empty text included) or the place
    /// changes the hash.
    #[test]
    fn every_column_and_the_place_change_the_hash() {
        let mut l = Linker::default();
        let base = l.link(&GENESIS, &row(), 1);
        type Change = Box<dyn Fn(&mut ChainRow)>;
        let changes: Vec<Change> = vec![
            Box::new(|r| r.event.id += 1),
            Box::new(|r| r.event.occurred_at += time::Duration::microseconds(1)),
            Box::new(|r| r.event.kind = "share.revoke".into()),
            Box::new(|r| r.event.admin_id = None),
            Box::new(|r| r.event.admin_name = Some("Anb".into())),
            Box::new(|r| r.event.subject_type = None),
            Box::new(|r| r.event.subject_id = Some("abd".into())),
            Box::new(|r| r.event.detail = Some(String::new())),
            Box::new(|r| r.event.client_hash = None),
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut r = row();
            change(&mut r);
            assert_ne!(l.link(&GENESIS, &r, 1), base, "change {i}");
        }
        assert_ne!(l.link(&GENESIS, &row(), 2), base);
        assert_ne!(l.link(&[1; 32], &row(), 1), base);
    }
}
