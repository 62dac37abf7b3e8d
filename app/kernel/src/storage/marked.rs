//! The marker that proves a store is the real one, checked before every delete and put: when the
//! folder was swapped for an empty one (an unmounted mount point looks like that) or the bucket
//! is another one, an absent object must not count as deleted, and new objects must not go where
//! they would be lost. Also where signed read URLs are made.

use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;

use super::signed::UrlSigner;
use super::{Blob, BlobError, BlobStore, ByteStream, Head, Listing, Namespace, Stored};

/// The key of the marker object that proves a store is the real one.
pub const MARKER_KEY: &str = "ebb-store-marker";
/// The `settings` row holding the marker's id (the database's side of the proof).
const MARKER_SETTING: &str = "storage_marker_id";

/// The store Ebb uses: a backend behind the marker check.
pub struct MarkedStore {
    inner: Box<dyn BlobStore>,
    /// The marker's id, once [`MarkedStore::ensure_marker`] has checked or written it.
    expected: std::sync::OnceLock<String>,
    /// Signs read URLs for backends that cannot presign (the local folder).
    signer: std::sync::OnceLock<UrlSigner>,
}

impl MarkedStore {
    pub fn new(inner: impl BlobStore + 'static) -> Self {
        MarkedStore { inner: Box::new(inner), expected: std::sync::OnceLock::new(), signer: std::sync::OnceLock::new() }
    }

    /// The store without the marker check (for the start-up probe, which runs before it).
    pub fn inner(&self) -> &dyn BlobStore {
        &*self.inner
    }

    /// Start-up: checks the store's marker against the database, writing it on first use.
    /// `written` says whether Ebb ever wrote objects to its store (shares, archived months,
    /// exports): a store without a marker then is not the real one (refused); when it never did,
    /// nothing can be lost, so the marker is (re)written. A marker of another installation is
    /// refused either way.
    pub async fn ensure_marker(&self, pool: &sqlx::PgPool, written: bool) -> Result<(), String> {
        let db_id = sqlx::query_scalar!("select value from settings where key = $1", MARKER_SETTING)
            .fetch_optional(pool)
            .await
            .map_err(|e| format!("database error: {e}"))?;
        let stored = match self.inner.get(MARKER_KEY).await {
            Ok(v) => v.map(|b| String::from_utf8_lossy(&b).trim().to_owned()),
            Err(e) => return Err(format!("cannot read the storage marker: {e}")),
        };
        let id = match (db_id, stored) {
            (Some(db), Some(found)) if db == found => db,
            (Some(_), Some(_)) => {
                return Err("the storage holds the marker of another Ebb installation (another database); point it at this installation's storage".into())
            }
            (Some(_), None) if written => {
                return Err("the storage marker is missing, but Ebb has written files to its storage before (shares, archived months, exports or signed audit digests): this is not the storage they were written to (an unmounted or wrong folder, or another bucket?). If you emptied the storage on purpose, delete the settings row 'storage_marker_id' to make Ebb adopt it".into())
            }
            (db, _) => {
                // First use (or nothing stored that could be lost): adopt the database's id, or
                // a new one; the database row wins a race between instances.
                let candidate = db.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                let id = crate::settings::get_or_insert(pool, MARKER_SETTING, &candidate).await.map_err(|e| format!("database error: {e}"))?;
                self.inner.put(MARKER_KEY, Bytes::from(id.clone())).await.map_err(|e| format!("cannot write the storage marker: {e}"))?;
                tracing::info!("storage marker written");
                id
            }
        };
        let _ = self.expected.set(id);
        Ok(())
    }

    /// Start-up: the secret and base URL of Ebb-signed read URLs (the secret is generated once and
    /// kept in the database, so every instance signs alike and links survive a restart).
    pub async fn ensure_signer(&self, pool: &sqlx::PgPool, public_url: &str) -> Result<(), String> {
        let secret = crate::settings::secret(pool, crate::settings::BLOB_URL_SECRET).await?;
        let _ = self.signer.set(UrlSigner::new(secret, public_url));
        Ok(())
    }

    /// The signer of Ebb-served read URLs (after [`MarkedStore::ensure_signer`]).
    pub fn signer(&self) -> Option<&UrlSigner> {
        self.signer.get()
    }

    /// A URL that reads `key` for `expires_in`, downloaded as `file_name`: presigned by S3, or
    /// signed by Ebb (HMAC over key, expiry and name) and served by Ebb at `/blob`. `now` is the
    /// database's time: an Ebb-signed link expires by the one clock every instance shares.
    pub async fn signed_url(&self, key: &str, expires_in: Duration, file_name: &str, now: time::OffsetDateTime) -> Result<String, BlobError> {
        super::check_key(key)?;
        if let Some(url) = self.inner.presign(key, expires_in, file_name).await? {
            return Ok(url);
        }
        let signer = self.signer.get().ok_or_else(|| BlobError::Service("read URLs are not set up yet".into()))?;
        let expires = now.unix_timestamp() + expires_in.as_secs() as i64;
        Ok(signer.url(key, expires, file_name))
    }

    async fn check(&self) -> Result<(), BlobError> {
        let Some(expected) = self.expected.get() else { return Err(BlobError::MarkerMissing) };
        match self.inner.get(MARKER_KEY).await {
            Ok(Some(found)) if found.as_ref() == expected.as_bytes() => Ok(()),
            Ok(_) => Err(BlobError::MarkerMissing),
            // A folder that vanished reads as "not found" or as an I/O error: either way, unproven.
            Err(BlobError::Io(_)) => Err(BlobError::MarkerMissing),
            Err(e) => Err(e),
        }
    }
}

impl BlobStore for MarkedStore {
    fn put_stream<'a>(&'a self, key: &'a str, body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            super::check_key(key)?;
            self.check().await?;
            self.inner.put_stream(key, body, max_len).await
        })
    }

    fn put_new<'a>(&'a self, key: &'a str, data: Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            super::check_key(key)?;
            self.check().await?;
            self.inner.put_new(key, data).await
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>> {
        self.inner.head(key)
    }

    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        self.inner.open(key)
    }

    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        self.inner.open_at(key, start)
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            super::check_key(key)?;
            self.check().await?;
            self.inner.delete(key).await
        })
    }

    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>> {
        Box::pin(async move {
            self.check().await?;
            self.inner.remove_abandoned_uploads(age).await
        })
    }

    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>> {
        self.inner.list(ns, after, limit)
    }

    fn presign<'a>(&'a self, key: &'a str, expires_in: Duration, file_name: &'a str) -> BoxFuture<'a, Result<Option<String>, BlobError>> {
        self.inner.presign(key, expires_in, file_name)
    }

    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, BlobError>> {
        self.inner.exists(key)
    }

    fn verify_marker(&self) -> BoxFuture<'_, Result<(), BlobError>> {
        Box::pin(self.check())
    }
}
