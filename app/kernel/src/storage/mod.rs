//! Where objects live: one interface, two backends — a local folder ([`LocalDirStore`], the
//! default) and S3 (the server crate's `S3Store`, through aws-sdk-s3).
//!
//! Keys live in namespaces (`shares/…`, `audit-archive/YYYY-MM.csv.gz`, `exports/…`) and are
//! validated by every backend before anything is touched ([`check_key`]): no `..`, no absolute
//! path, nothing outside a namespace. Objects are written and read as streams, never held whole
//! in memory; a put returns the size and CRC32C computed while streaming, and [`BlobStore::head`]
//! reads both back from the store (the archive's "verified elsewhere" check). Contract of
//! `delete`: afterwards the object does not exist; an absent object counts as deleted
//! (idempotent); a delete that could not remove it is an error, never hidden.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::{future::BoxFuture, stream::BoxStream, StreamExt, TryStreamExt};

pub mod faults;
pub mod journal;
mod local;
mod marked;
pub mod signed;

pub use local::LocalDirStore;
pub use marked::{MarkedStore, MARKER_KEY};

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("invalid object key")]
    InvalidKey,
    /// The incoming stream passed the size limit; nothing was kept.
    #[error("the object is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    /// The incoming stream failed (the client went away, a malformed upload); nothing was kept.
    #[error("the upload stream failed: {0}")]
    Source(String),
    #[error("storage I/O failed: {0}")]
    Io(#[source] std::io::Error),
    /// The storage service could not be reached or refused the request (S3: network, HTTP
    /// status, a checksum the server rejected). The message never holds a secret.
    #[error("the storage service failed: {0}")]
    Service(String),
    /// The store's marker object is missing or foreign: this may not be the real store (an
    /// unmounted or swapped folder, another bucket), so nothing is deleted or stored.
    #[error("the storage marker is missing or belongs to another installation; check the storage settings (EBB_STORAGE_DIR, or the EBB_S3_* settings)")]
    MarkerMissing,
    /// The store has no room left (a full disk): nothing was kept.
    #[error("the storage is full")]
    Full,
    /// A write-once put ([`BlobStore::put_new`]) found the key taken: nothing was replaced.
    #[error("the object exists already and is never replaced")]
    Exists,
}

/// An I/O error: a full disk is [`BlobError::Full`] (the client is told, not given a 500).
impl From<std::io::Error> for BlobError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::StorageFull {
            BlobError::Full
        } else {
            BlobError::Io(e)
        }
    }
}

/// The namespaces objects live in, each with its own rules for names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Namespace {
    /// `shares/<id>`: files shared once (id: 1–128 of `[a-z0-9_-]`).
    Shares,
    /// `audit-archive/YYYY-MM.csv.gz`: archived months of the audit log.
    AuditArchive,
    /// `exports/<name>[.csv|.csv.gz|.json]`: exports made on request (expire after 7 days).
    Exports,
    /// `selfcheck/<id>`: start-up probes, deleted at once.
    SelfCheck,
    /// `audit-digests/NNNNNNNNNNNN.json` (signed digests of the audit trail, numbered) and
    /// `audit-digests/key-<16 hex>.json` (the public keys that signed them): written once, never
    /// overwritten or deleted by Ebb.
    AuditDigests,
    /// `deletions/<YYYYMMDDhhmmss>-<32 hex>.json`: the deletion journal — what erasures and
    /// purges removed, by id, written before they commit, so `ebb doctor --after-restore` can
    /// redo them on a database restored from an older backup ([`journal`]).
    Deletions,
}

impl Namespace {
    pub const ALL: [Namespace; 6] =
        [Namespace::Shares, Namespace::AuditArchive, Namespace::Exports, Namespace::SelfCheck, Namespace::AuditDigests, Namespace::Deletions];

    /// The key prefix, with its slash.
    pub fn prefix(self) -> &'static str {
        match self {
            Namespace::Shares => "shares/",
            Namespace::AuditArchive => "audit-archive/",
            Namespace::Exports => "exports/",
            Namespace::SelfCheck => "selfcheck/",
            Namespace::AuditDigests => "audit-digests/",
            Namespace::Deletions => "deletions/",
        }
    }

    /// The folder name (prefix without its slash).
    pub fn dir(self) -> &'static str {
        self.prefix().trim_end_matches('/')
    }
}

fn is_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn is_archive_name(s: &str) -> bool {
    let Some(period) = s.strip_suffix(".csv.gz") else { return false };
    let b = period.as_bytes();
    b.len() == 7 && b[4] == b'-' && b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit) && matches!(period[5..].parse::<u8>(), Ok(1..=12))
}

fn is_digest_name(s: &str) -> bool {
    let numbered = s.strip_suffix(".json").is_some_and(|n| n.len() == 12 && n.bytes().all(|b| b.is_ascii_digit()));
    let key = s
        .strip_prefix("key-")
        .and_then(|k| k.strip_suffix(".json"))
        .is_some_and(|k| k.len() == 16 && k.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    let restore = s.strip_prefix("restore-").and_then(|n| n.strip_suffix(".json")).is_some_and(|n| n.len() == 12 && n.bytes().all(|b| b.is_ascii_digit()));
    numbered || key || restore
}

/// The key of the signed restore statement that supersedes digests from number `first` on
/// (`ebb doctor --after-restore`).
pub fn restore_statement_key(first: i64) -> String {
    format!("audit-digests/restore-{first:012}.json")
}

/// The key of digest number `n` (`audit-digests/000000000012.json`: listing order is number order).
pub fn digest_key(n: i64) -> String {
    format!("audit-digests/{n:012}.json")
}

/// The key of the public key `key_id` that signed digests.
pub fn digest_public_key(key_id: &str) -> String {
    format!("audit-digests/key-{key_id}.json")
}

fn is_export_name(s: &str) -> bool {
    let stem = [".csv.gz", ".csv", ".json", ".json.gz"].iter().find_map(|ext| s.strip_suffix(ext)).unwrap_or(s);
    is_id(stem)
}

/// The namespace of a valid key; anything else (a path, `..`, a name outside the namespaces'
/// rules) is refused before a backend touches a disk or a bucket.
pub fn check_key(key: &str) -> Result<Namespace, BlobError> {
    if key == MARKER_KEY {
        // The marker is addressed only through MarkedStore; it has no namespace.
        return Err(BlobError::InvalidKey);
    }
    let (ns, name) = Namespace::ALL.iter().find_map(|ns| key.strip_prefix(ns.prefix()).map(|n| (*ns, n))).ok_or(BlobError::InvalidKey)?;
    let ok = match ns {
        Namespace::Shares | Namespace::SelfCheck => is_id(name),
        Namespace::AuditArchive => is_archive_name(name),
        Namespace::Exports => is_export_name(name),
        Namespace::AuditDigests => is_digest_name(name),
        Namespace::Deletions => journal::is_entry_name(name),
    };
    ok.then_some(ns).ok_or(BlobError::InvalidKey)
}

/// A key that is either a namespaced key or the marker (backends store both).
pub(crate) fn check_key_or_marker(key: &str) -> Result<Option<Namespace>, BlobError> {
    if key == MARKER_KEY {
        Ok(None)
    } else {
        check_key(key).map(Some)
    }
}

/// The key of an audit archive month.
pub fn archive_key(year: i32, month: u8) -> String {
    format!("audit-archive/{year:04}-{month:02}.csv.gz")
}

/// A fresh random key in `ns` (`shares/3f2a…`).
pub fn new_key(ns: Namespace) -> String {
    format!("{}{}", ns.prefix(), uuid::Uuid::new_v4().simple())
}

/// What a completed put stored: computed while streaming, before the object appeared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub size: u64,
    pub crc32c: u32,
}

/// What the store says about an object, read back from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub size: u64,
    /// The whole object's CRC32C as the store has it (`None` when the store keeps none for this
    /// object, e.g. an S3 object uploaded without one).
    pub crc32c: Option<u32>,
    pub modified: SystemTime,
}

/// One page of a listing: the objects found, and where the next page starts. `next` is `Some`
/// whenever the store said more keys follow — even when this page holds fewer objects than asked
/// for (keys that are not Ebb's are skipped, not returned) or none at all. Callers page by `next`,
/// never by a page's length: a short page is not the end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub objects: Vec<ObjectInfo>,
    pub next: Option<String>,
}

/// An object found by [`BlobStore::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
    /// Last modification (for "older than a day" decisions).
    pub modified: SystemTime,
}

/// A stream of an object's bytes.
pub type ByteStream<'a> = BoxStream<'a, Result<Bytes, BlobError>>;

/// An object opened for reading: its length (known before the first byte is sent) and its bytes.
pub struct Blob {
    pub len: u64,
    pub body: ByteStream<'static>,
}

/// A store of objects named by keys Ebb generates.
pub trait BlobStore: Send + Sync {
    /// Streams `body` into `key`, replacing any previous object, and returns its size and CRC32C.
    /// More than `max_len` bytes → [`BlobError::TooLarge`]. An object appears only when complete
    /// (and, on S3, verified by the server against the CRC32C): a failed, refused or abandoned
    /// put leaves nothing behind.
    fn put_stream<'a>(&'a self, key: &'a str, body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>>;
    /// Size and CRC32C of an object as the store has them (`None` when absent).
    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>>;
    /// Size and CRC32C of the object's bytes as read back now, the whole object (`None` when
    /// absent). Costly: the archive's verification and its rolling re-read use it, never a
    /// request.
    fn read_back<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<(u64, u32)>, BlobError>> {
        Box::pin(async move {
            let Some(mut blob) = self.open(key).await? else { return Ok(None) };
            let (mut size, mut crc) = (0u64, 0u32);
            while let Some(chunk) = blob.body.next().await {
                let chunk = chunk?;
                size += chunk.len() as u64;
                crc = crc32c::crc32c_append(crc, &chunk);
            }
            Ok(Some((size, crc)))
        })
    }
    /// Opens an object for streaming (`None` when absent).
    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>>;
    /// Opens an object from byte `start` on (a resumed download): `Blob::len` is what is left
    /// (0 when `start` is at or past the end). `None` when absent. Backends read only the part
    /// asked for; this default reads through the start and is for tests' wrappers.
    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            let Some(blob) = self.open(key).await? else { return Ok(None) };
            let len = blob.len.saturating_sub(start);
            let mut skip = start;
            let body = blob
                .body
                .map_ok(move |mut chunk| {
                    let cut = skip.min(chunk.len() as u64) as usize;
                    skip -= cut as u64;
                    chunk.split_off(cut)
                })
                .try_filter(|c| futures::future::ready(!c.is_empty()))
                .boxed();
            Ok(Some(Blob { len, body }))
        })
    }
    /// Deletes `key`; an absent object counts as deleted.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>>;

    /// Removes what interrupted uploads left behind (older than `age`, so uploads in progress are
    /// untouched); returns how many. Maintenance runs it.
    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>>;

    /// Up to `limit` objects in `ns` whose keys sort after `after`, in key order (a page of a
    /// listing; unfinished uploads are not objects), and the cursor of the next page.
    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>>;

    /// A URL that reads `key` until `expires_in` has passed, downloaded as `file_name`, signed by
    /// the store itself (S3 presigning). `None`: the store cannot sign, Ebb signs and serves
    /// ([`MarkedStore::signed_url`]).
    fn presign<'a>(&'a self, _key: &'a str, _expires_in: Duration, _file_name: &'a str) -> BoxFuture<'a, Result<Option<String>, BlobError>> {
        Box::pin(async { Ok(None) })
    }

    /// Whether `key` exists.
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, BlobError>> {
        Box::pin(async move { Ok(self.head(key).await?.is_some()) })
    }

    /// Checks that this is the store the database knows (its marker object is there). Stores
    /// without a marker (tests' bare stores) have nothing to check.
    fn verify_marker(&self) -> BoxFuture<'_, Result<(), BlobError>> {
        Box::pin(async { Ok(()) })
    }

    /// Stores a small object held in memory (probes, markers, tests).
    fn put<'a>(&'a self, key: &'a str, data: Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            let len = data.len() as u64;
            self.put_stream(key, futures::stream::once(async move { Ok(data) }).boxed(), len).await
        })
    }

    /// Stores a small object only if `key` is free: write-once (audit digests and restore
    /// statements). A taken key → [`BlobError::Exists`], the existing object untouched. The
    /// backends make the check and the write one step (a hard link locally, `If-None-Match: *`
    /// on S3), so of two writers exactly one succeeds; this default (for tests' wrappers only)
    /// checks first and is not atomic.
    fn put_new<'a>(&'a self, key: &'a str, data: Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            if self.exists(key).await? {
                return Err(BlobError::Exists);
            }
            self.put(key, data).await
        })
    }

    /// Reads a whole (small) object into memory.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Bytes>, BlobError>> {
        Box::pin(async move {
            let Some(blob) = self.open(key).await? else { return Ok(None) };
            let parts: Vec<Bytes> = blob.body.try_collect().await?;
            Ok(Some(parts.concat().into()))
        })
    }
}

impl<T: BlobStore + ?Sized> BlobStore for Box<T> {
    fn put_new<'a>(&'a self, key: &'a str, data: Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        (**self).put_new(key, data)
    }
    fn put_stream<'a>(&'a self, key: &'a str, body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>> {
        (**self).put_stream(key, body, max_len)
    }
    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>> {
        (**self).head(key)
    }
    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        (**self).open(key)
    }
    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        (**self).open_at(key, start)
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>> {
        (**self).delete(key)
    }
    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>> {
        (**self).remove_abandoned_uploads(age)
    }
    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>> {
        (**self).list(ns, after, limit)
    }
    fn presign<'a>(&'a self, key: &'a str, expires_in: Duration, file_name: &'a str) -> BoxFuture<'a, Result<Option<String>, BlobError>> {
        (**self).presign(key, expires_in, file_name)
    }
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, BlobError>> {
        (**self).exists(key)
    }
    fn verify_marker(&self) -> BoxFuture<'_, Result<(), BlobError>> {
        (**self).verify_marker()
    }
}

/// The CRC32C of a whole (small) buffer, as [`Stored::crc32c`] has it.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Start-up self-check: write, read back (head and get) and delete a probe. A misconfigured store
/// must fail loudly here — otherwise every GC delete of a missing file would "succeed".
pub async fn self_check(store: &dyn BlobStore) -> Result<(), String> {
    let key = new_key(Namespace::SelfCheck);
    let probe = Bytes::from_static(b"ebb storage self-check");
    let stored = store.put(&key, probe.clone()).await.map_err(|e| format!("cannot write a probe object: {e}"))?;
    let expected = Stored { size: probe.len() as u64, crc32c: crc32c(&probe) };
    if stored != expected {
        return Err(format!("the store reported {stored:?} for a probe object of {expected:?}"));
    }
    match store.head(&key).await {
        Ok(Some(h)) if h.size == expected.size && h.crc32c.is_none_or(|c| c == expected.crc32c) => {}
        Ok(Some(h)) => return Err(format!("a probe object reads back as {} bytes, CRC32C {:?}; written {expected:?}", h.size, h.crc32c)),
        Ok(None) => return Err("a probe object written just now is not there".into()),
        Err(e) => return Err(format!("cannot read a probe object's size and checksum: {e}")),
    }
    match store.get(&key).await {
        Ok(Some(read)) if read == probe => {}
        Ok(_) => return Err("a probe object written just now could not be read back".into()),
        Err(e) => return Err(format!("cannot read a probe object: {e}")),
    }
    store.delete(&key).await.map_err(|e| format!("cannot delete a probe object: {e}"))?;
    match store.head(&key).await {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err("a deleted probe object is still there".into()),
        Err(e) => Err(format!("cannot check a deleted probe object: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_outside_the_namespaces_are_refused() {
        for bad in [
            "",
            "../etc/passwd",
            "/etc/passwd",
            "shares/../x",
            "shares/",
            "shares/a/b",
            "shares/.hidden",
            "shares/a b",
            "shares/x.part",
            "shares/ABC",
            &format!("shares/{}", "x".repeat(129)),
            "audit-archive/2024-13.csv.gz",
            "audit-archive/2024-00.csv.gz",
            "audit-archive/24-05.csv.gz",
            "audit-archive/2024-05.csv",
            "audit-archive/2024-05.csv.gz.part",
            "exports/../../x.csv",
            "exports/a.exe",
            "exports/a.csv.part",
            "other/abc",
            "abc",
            MARKER_KEY,
            "shares\\abc",
            "audit-digests/12.json",
            "audit-digests/00000000001a.json",
            "audit-digests/000000000001.json.part",
            "audit-digests/key-ABCDEF0123456789.json",
            "audit-digests/key-0123.json",
        ] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
        assert_eq!(check_key("shares/3f2a_b-9").unwrap(), Namespace::Shares);
        assert_eq!(check_key("audit-archive/2024-05.csv.gz").unwrap(), Namespace::AuditArchive);
        assert_eq!(check_key("exports/2026-11-30-x1.csv.gz").unwrap(), Namespace::Exports);
        assert_eq!(check_key(&new_key(Namespace::Shares)).unwrap(), Namespace::Shares);
        assert_eq!(archive_key(2024, 5), "audit-archive/2024-05.csv.gz");
        assert!(check_key(&archive_key(2024, 5)).is_ok());
        assert_eq!(check_key(&digest_key(12)).unwrap(), Namespace::AuditDigests);
        assert_eq!(digest_key(12), "audit-digests/000000000012.json");
        assert_eq!(check_key(&digest_public_key("0123456789abcdef")).unwrap(), Namespace::AuditDigests);
    }
}
