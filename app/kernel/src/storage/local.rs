//! The local-folder backend: `<dir>/<namespace>/<name>`, the marker at `<dir>/ebb-store-marker`.
//! A put writes `<name>.<random>.part`, fsyncs it, renames it into place and fsyncs the folder;
//! `.part` never names an object (no key may contain it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{future::BoxFuture, StreamExt, TryStreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{check_key_or_marker, Blob, BlobError, BlobStore, ByteStream, Head, Listing, Namespace, ObjectInfo, Stored};

/// Read buffer of a download: large enough that the syscall count does not limit throughput.
const READ_CHUNK: usize = 256 * 1024;

/// Suffix of a file being written. No key contains it, so it never names an object.
const PARTIAL_SUFFIX: &str = ".part";
/// The extended attribute holding an object's CRC32C and size as computed while it was written
/// (`<crc32c hex> <size>`): what S3 keeps as its full-object checksum. `head` reads it, so an
/// existence check costs a `stat`, not a read of the whole object; content is re-read only by
/// [`BlobStore::read_back`] (the archive's verification and its rolling re-read).
const CRC_XATTR: &str = "user.ebb.crc32c";

/// The CRC32C recorded for `path` if its size still matches.
fn recorded_crc(path: &Path, size: u64) -> Option<u32> {
    let raw = xattr::get(path, CRC_XATTR).ok()??;
    let text = std::str::from_utf8(&raw).ok()?;
    let (crc, len) = text.split_once(' ')?;
    (len.parse::<u64>().ok()? == size).then_some(())?;
    u32::from_str_radix(crc, 16).ok()
}

/// Objects as files under one folder (outside any served folder). The folder must exist: Ebb
/// creates the namespace folders inside it, never the folder itself, so a mistyped or unmounted
/// path fails the self-check instead of silently starting empty.
#[derive(Debug, Clone)]
pub struct LocalDirStore {
    dir: PathBuf,
}

/// Removes a partly written file unless the write completed — also when the writing future is
/// dropped half-way (the client disconnected).
struct PartialFile(Option<PathBuf>);

impl Drop for PartialFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            if let Err(e) = std::fs::remove_file(&path) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(error = %e, "could not remove a partly written upload");
                }
            }
        }
    }
}

fn not_found(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
}

impl LocalDirStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LocalDirStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a key (validated: nothing outside the folder can be named).
    pub fn path(&self, key: &str) -> Result<PathBuf, BlobError> {
        check_key_or_marker(key)?;
        Ok(self.dir.join(key))
    }

    /// Earlier versions kept share files flat in the folder (`<dir>/<32 hex>`); they move to
    /// `shares/` (the database's keys are migrated to match). Idempotent; returns how many moved.
    pub async fn adopt_flat_layout(&self) -> Result<u64, BlobError> {
        let mut moved = 0;
        let mut entries = tokio::fs::read_dir(&self.dir).await?;
        let shares = self.dir.join(Namespace::Shares.dir());
        while let Some(entry) = entries.next_entry().await? {
            let name = entry.file_name().to_string_lossy().into_owned();
            let legacy = name.len() == 32 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if legacy && entry.file_type().await?.is_file() {
                ensure_dir(&shares).await?;
                tokio::fs::rename(entry.path(), shares.join(&name)).await?;
                moved += 1;
            }
        }
        if moved > 0 {
            sync_dir(&shares).await?;
            sync_dir(&self.dir).await?;
            tracing::info!(moved, "moved share files into the shares/ folder");
        }
        Ok(moved)
    }
}

async fn ensure_dir(dir: &Path) -> Result<(), BlobError> {
    match tokio::fs::create_dir(dir).await {
        Ok(()) => {
            // The new folder's entry must survive a crash like the files in it.
            if let Some(parent) = dir.parent() {
                sync_dir(parent).await?;
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn sync_dir(dir: &Path) -> Result<(), BlobError> {
    tokio::fs::File::open(dir).await?.sync_all().await?;
    Ok(())
}

/// Reads a file through, returning its length and CRC32C.
async fn checksum_file(mut file: tokio::fs::File) -> Result<(u64, u32), BlobError> {
    let mut buf = vec![0u8; READ_CHUNK];
    let (mut len, mut crc) = (0u64, 0u32);
    loop {
        let n = file.read(&mut buf).await?;
        if n == 0 {
            return Ok((len, crc));
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        len += n as u64;
    }
}

impl LocalDirStore {
    /// Streams `body` into `key` through a partial file; `replace`: an existing object is
    /// replaced (rename), else the write fails with [`BlobError::Exists`] (hard link).
    async fn write(&self, key: &str, mut body: ByteStream<'_>, max_len: u64, replace: bool) -> Result<Stored, BlobError> {
        let path = self.path(key)?;
        let folder = path.parent().expect("a key names a file in a folder").to_owned();
        if folder != self.dir {
            ensure_dir(&folder).await?;
        }
        let name = path.file_name().expect("a key names a file").to_string_lossy().into_owned();
        let partial_path = folder.join(format!("{name}.{}{PARTIAL_SUFFIX}", uuid::Uuid::new_v4().simple()));
        let mut file = tokio::fs::File::create(&partial_path).await?;
        let mut partial = PartialFile(Some(partial_path.clone()));
        let (mut size, mut crc) = (0u64, 0u32);
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            size += chunk.len() as u64;
            if size > max_len {
                return Err(BlobError::TooLarge { limit: max_len });
            }
            crc = crc32c::crc32c_append(crc, &chunk);
            file.write_all(&chunk).await?;
        }
        // The checksum beside the bytes (a file system without extended attributes just
        // has none: `head` then reads the file).
        if let Err(e) = xattr::set(&partial_path, CRC_XATTR, format!("{crc:08x} {size}").as_bytes()) {
            tracing::debug!(error = %e, "the storage folder keeps no extended attributes; checksums are read from the files");
        }
        // Durable before anyone is told the object is stored.
        file.sync_all().await?;
        drop(file);
        if replace {
            tokio::fs::rename(&partial_path, &path).await?;
            partial.0 = None;
        } else {
            // Write-once: a hard link fails when the name exists, so a second writer can
            // never replace the first one's object; the partial file is removed either way.
            match tokio::fs::hard_link(&partial_path, &path).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(BlobError::Exists),
                Err(e) => return Err(e.into()),
            }
        }
        // The rename itself must be durable before a row pointing at it commits: otherwise
        // a crash could leave a committed row whose file name never reached the disk.
        sync_dir(&folder).await?;
        Ok(Stored { size, crc32c: crc })
    }
}

impl BlobStore for LocalDirStore {
    /// Partly written files are normally removed at once; a crash mid-upload leaves one behind.
    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>> {
        Box::pin(async move {
            let mut removed = 0;
            let dirs = std::iter::once(self.dir.clone()).chain(Namespace::ALL.iter().map(|ns| self.dir.join(ns.dir())));
            for dir in dirs {
                let mut entries = match tokio::fs::read_dir(&dir).await {
                    Ok(e) => e,
                    Err(e) if not_found(&e) && dir != self.dir => continue,
                    Err(e) => return Err(e.into()),
                };
                while let Some(entry) = entries.next_entry().await? {
                    if !entry.file_name().to_string_lossy().ends_with(PARTIAL_SUFFIX) {
                        continue;
                    }
                    let old = entry.metadata().await?.modified()?.elapsed().is_ok_and(|e| e >= age);
                    if old {
                        match tokio::fs::remove_file(entry.path()).await {
                            Ok(()) => removed += 1,
                            Err(e) if not_found(&e) => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
            }
            Ok(removed)
        })
    }

    fn put_stream<'a>(&'a self, key: &'a str, body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(self.write(key, body, max_len, true))
    }

    fn put_new<'a>(&'a self, key: &'a str, data: bytes::Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            let len = data.len() as u64;
            self.write(key, futures::stream::once(async move { Ok(data) }).boxed(), len, false).await
        })
    }
    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>> {
        Box::pin(async move {
            // The size from the file system, the CRC32C recorded when it was written (as S3's
            // head gives the checksum it stored); read from the bytes only when none is recorded.
            let path = self.path(key)?;
            let file = match tokio::fs::File::open(&path).await {
                Ok(f) => f,
                Err(e) if not_found(&e) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let meta = file.metadata().await?;
            if !meta.is_file() {
                return Ok(None);
            }
            let modified = meta.modified()?;
            if let Some(crc) = recorded_crc(&path, meta.len()) {
                return Ok(Some(Head { size: meta.len(), crc32c: Some(crc), modified }));
            }
            let (size, crc) = checksum_file(file).await?;
            Ok(Some(Head { size, crc32c: Some(crc), modified }))
        })
    }

    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>> {
        Box::pin(async move {
            // A folder has no order: read the names, sort, page. Bounded by the folder's size,
            // which the GC keeps to live objects.
            let dir = self.dir.join(ns.dir());
            let mut entries = match tokio::fs::read_dir(&dir).await {
                Ok(e) => e,
                // The base folder is checked by the marker; a namespace folder appears on first put.
                Err(e) if not_found(&e) && tokio::fs::metadata(&self.dir).await.is_ok() => return Ok(Listing::default()),
                Err(e) => return Err(e.into()),
            };
            let mut keys = Vec::new();
            while let Some(entry) = entries.next_entry().await? {
                let key = format!("{}{}", ns.prefix(), entry.file_name().to_string_lossy());
                if super::check_key(&key).is_ok() && after.is_none_or(|a| key.as_str() > a) {
                    keys.push(key);
                }
            }
            keys.sort_unstable();
            let next = (keys.len() > limit && limit > 0).then(|| keys[limit - 1].clone());
            keys.truncate(limit);
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                match tokio::fs::metadata(self.dir.join(&key)).await {
                    Ok(m) if m.is_file() => out.push(ObjectInfo { key, size: m.len(), modified: m.modified()? }),
                    Ok(_) => {}
                    Err(e) if not_found(&e) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(Listing { objects: out, next })
        })
    }

    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, BlobError>> {
        Box::pin(async move {
            match tokio::fs::metadata(self.path(key)?).await {
                Ok(m) => Ok(m.is_file()),
                Err(e) if not_found(&e) => Ok(false),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            let file = match tokio::fs::File::open(self.path(key)?).await {
                Ok(f) => f,
                Err(e) if not_found(&e) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let len = file.metadata().await?.len();
            let body = tokio_util::io::ReaderStream::with_capacity(file, READ_CHUNK).map_err(BlobError::Io).boxed();
            Ok(Some(Blob { len, body }))
        })
    }

    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            use tokio::io::AsyncSeekExt;
            let mut file = match tokio::fs::File::open(self.path(key)?).await {
                Ok(f) => f,
                Err(e) if not_found(&e) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let total = file.metadata().await?.len();
            let start = start.min(total);
            file.seek(std::io::SeekFrom::Start(start)).await?;
            let body = tokio_util::io::ReaderStream::with_capacity(file, READ_CHUNK).map_err(BlobError::Io).boxed();
            Ok(Some(Blob { len: total - start, body }))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            match tokio::fs::remove_file(self.path(key)?).await {
                Ok(()) => Ok(()),
                // Already gone (another worker, or a crash after the delete): the goal is reached.
                Err(e) if not_found(&e) => Ok(()),
                Err(e) => Err(e.into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::storage::MARKER_KEY;

    fn chunks(n: usize, size: usize) -> ByteStream<'static> {
        futures::stream::iter((0..n).map(move |i| Ok(Bytes::from(vec![i as u8; size])))).boxed()
    }

    /// Every file under the folder, as relative paths.
    fn files_in(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                out.extend(files_in(&e.path()).into_iter().map(|f| format!("{name}/{f}")));
            } else {
                out.push(name);
            }
        }
        out.sort();
        out
    }

    #[tokio::test]
    async fn a_streamed_put_reads_back_whole_with_its_size_and_crc32c() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        let stored = store.put_stream("shares/k1", chunks(10, 1000), 10_000).await.unwrap();
        let data = store.get("shares/k1").await.unwrap().unwrap();
        assert_eq!(stored, Stored { size: 10_000, crc32c: crc32c::crc32c(&data) });
        assert_eq!(store.open("shares/k1").await.unwrap().unwrap().len, 10_000);
        assert_eq!(&data[..1000], &[0u8; 1000][..]);
        assert_eq!(&data[9000..], &[9u8; 1000][..]);
        let head = store.head("shares/k1").await.unwrap().unwrap();
        assert_eq!((head.size, head.crc32c), (10_000, Some(stored.crc32c)));
        assert_eq!(files_in(dir.path()), vec!["shares/k1".to_string()]);

        // `head` gives the checksum recorded when the object was written (it reads no bytes);
        // `read_back` reads the bytes on disk: a byte changed in place shows there.
        assert_eq!(store.read_back("shares/k1").await.unwrap(), Some((10_000, stored.crc32c)));
        let mut bytes = std::fs::read(dir.path().join("shares/k1")).unwrap();
        bytes[5000] ^= 1;
        {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(dir.path().join("shares/k1")).unwrap();
            f.write_all(&bytes).unwrap();
        }
        assert_eq!(store.head("shares/k1").await.unwrap().unwrap().crc32c, Some(stored.crc32c), "the recorded checksum");
        assert_ne!(store.read_back("shares/k1").await.unwrap().map(|(_, c)| c), Some(stored.crc32c), "the bytes");
        // A file replaced by another of a different size loses its record: head reads it.
        std::fs::write(dir.path().join("shares/k1"), b"other").unwrap();
        assert_eq!(store.head("shares/k1").await.unwrap().unwrap().crc32c, Some(crc32c::crc32c(b"other")));
        assert!(store.head("shares/absent").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn keys_never_leave_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path().join("inner"));
        std::fs::create_dir(store.dir()).unwrap();
        for bad in ["../outside", "shares/../../outside", "/tmp/outside", "shares/a/../../../outside"] {
            assert!(matches!(store.put(bad, Bytes::from_static(b"x")).await, Err(BlobError::InvalidKey)), "{bad}");
            assert!(matches!(store.delete(bad).await, Err(BlobError::InvalidKey)), "{bad}");
            assert!(matches!(store.open(bad).await, Err(BlobError::InvalidKey)), "{bad}");
        }
        assert_eq!(files_in(dir.path()), Vec::<String>::new());
    }

    #[tokio::test]
    async fn a_put_over_the_limit_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        let err = store.put_stream("shares/k1", chunks(10, 1000), 9_999).await.unwrap_err();
        assert!(matches!(err, BlobError::TooLarge { limit: 9_999 }), "{err:?}");
        assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));
        assert!(store.open("shares/k1").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_failing_or_abandoned_upload_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        let failing = futures::stream::iter(vec![Ok(Bytes::from_static(b"abc")), Err(BlobError::Source("client went away".into()))]).boxed();
        assert!(matches!(store.put_stream("shares/k1", failing, 100).await, Err(BlobError::Source(_))));
        assert!(files_in(dir.path()).is_empty());

        // A stream that never ends: the put future is dropped mid-write (the client disconnected).
        let endless = futures::stream::iter(vec![Ok(Bytes::from_static(b"abc"))]).chain(futures::stream::pending()).boxed();
        let put = store.put_stream("shares/k2", endless, 100);
        assert!(tokio::time::timeout(std::time::Duration::from_millis(100), put).await.is_err());
        assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));
    }

    #[tokio::test]
    async fn deleting_twice_or_an_absent_object_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        store.put("shares/k1", Bytes::from_static(b"x")).await.unwrap();
        store.delete("shares/k1").await.unwrap();
        store.delete("shares/k1").await.unwrap();
        assert!(store.open("shares/k1").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn listing_pages_through_one_namespace_in_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        assert_eq!(store.list(Namespace::Shares, None, 10).await.unwrap(), Listing::default(), "no folder yet: empty");
        for k in ["shares/c", "shares/a", "shares/b", "exports/a.csv", "audit-archive/2024-05.csv.gz"] {
            store.put(k, Bytes::from_static(b"x")).await.unwrap();
        }
        std::fs::write(dir.path().join("shares/d.1.part"), b"half").unwrap();
        let keys = |v: Listing| v.objects.into_iter().map(|o| o.key).collect::<Vec<_>>();
        assert_eq!(keys(store.list(Namespace::Shares, None, 2).await.unwrap()), ["shares/a", "shares/b"]);
        assert_eq!(keys(store.list(Namespace::Shares, Some("shares/b"), 2).await.unwrap()), ["shares/c"]);
        assert_eq!(keys(store.list(Namespace::AuditArchive, None, 5).await.unwrap()), ["audit-archive/2024-05.csv.gz"]);
    }

    #[tokio::test]
    async fn the_self_check_fails_on_a_missing_folder() {
        let dir = tempfile::tempdir().unwrap();
        assert!(super::super::self_check(&LocalDirStore::new(dir.path())).await.is_ok());
        let err = super::super::self_check(&LocalDirStore::new(dir.path().join("typo"))).await.unwrap_err();
        assert!(err.contains("cannot write a probe"), "{err}");
        assert!(!dir.path().join("typo").exists(), "the folder itself is never created");
    }

    #[tokio::test]
    async fn stale_partial_files_are_removed_but_objects_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        store.put("shares/kept", Bytes::from_static(b"x")).await.unwrap();
        std::fs::write(dir.path().join("shares/crashed.0a.part"), b"half").unwrap();
        std::fs::write(dir.path().join("legacy.part"), b"half").unwrap();
        assert_eq!(store.remove_abandoned_uploads(Duration::from_secs(3600)).await.unwrap(), 0);
        assert_eq!(store.remove_abandoned_uploads(Duration::ZERO).await.unwrap(), 2);
        assert_eq!(files_in(dir.path()), vec!["shares/kept".to_string()]);
    }

    #[tokio::test]
    async fn flat_share_files_of_earlier_versions_move_into_shares() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalDirStore::new(dir.path());
        let old = "0123456789abcdef0123456789abcdef";
        std::fs::write(dir.path().join(old), b"old file").unwrap();
        std::fs::write(dir.path().join(MARKER_KEY), b"id").unwrap();
        assert_eq!(store.adopt_flat_layout().await.unwrap(), 1);
        assert_eq!(store.adopt_flat_layout().await.unwrap(), 0);
        assert_eq!(store.get(&format!("shares/{old}")).await.unwrap().unwrap().as_ref(), b"old file");
        assert_eq!(files_in(dir.path()), vec![MARKER_KEY.to_string(), format!("shares/{old}")]);
    }
}
