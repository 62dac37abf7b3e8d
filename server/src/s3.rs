//! The S3 backend of the blob store, through aws-sdk-s3 (any S3-compatible server; tested against
//! garage 2.5.0).
//!
//! - Checksums are computed here, never by the SDK: a streamed body with an SDK checksum goes as
//!   aws-chunked with a signed trailer, which garage refuses. Each request carries its CRC32C and
//!   the server verifies it before the object exists.
//! - A body shorter than one part is a single PutObject. A longer one is a multipart upload with
//!   [`PART_SIZE`] parts (each with its CRC32C, at most [`PARTS_IN_FLIGHT`] at once, so memory
//!   stays flat whatever the size) and a full-object CRC32C (`FULL_OBJECT`) that the server
//!   checks at completion; HeadObject then returns the whole object's CRC32C.
//! - An upload that fails, is refused or is abandoned (the future dropped) is aborted: no object
//!   appears. A crash mid-upload leaves an open upload, aborted later by
//!   [`BlobStore::remove_abandoned_uploads`].
//! - Errors name the setting to check; the secret key never appears in them or in logs.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use app::storage::{check_key, Blob, BlobError, BlobStore, ByteStream, Head, Listing, Namespace, ObjectInfo, Stored, MARKER_KEY};
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::config::{timeout::TimeoutConfig, BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream as S3Body;
use aws_sdk_s3::types::{ChecksumAlgorithm, ChecksumMode, ChecksumType, CompletedMultipartUpload, CompletedPart, StorageClass};
use aws_sdk_s3::Client;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use futures::{future::BoxFuture, StreamExt};

/// Size of a multipart part (S3 wants at least 5 MiB but for the last).
pub const PART_SIZE: usize = 8 << 20;
/// Parts uploading at once (the next part is read meanwhile): memory is about (this + 1) ×
/// [`PART_SIZE`]. Each part's buffer is exactly [`PART_SIZE`] (see [`fill`]): a chunk that
/// overran it used to grow the buffer to twice its size (two then measured 67.7 MiB above idle).
/// Against a release build of garage (`benches/s3.sh`, 1 GiB, alternated with one in flight in
/// the same run), two upload 177.7 / 177.5 / 201.3 MB/s against 145.9 / 156.7 / 176.8 MB/s for
/// one, at 41.6–54.6 MiB above idle (goal ≤ 64 MiB).
pub const PARTS_IN_FLIGHT: usize = 2;

/// Settings of the S3 backend (validated by the configuration).
#[derive(Clone)]
pub struct S3Settings {
    /// `None`: AWS's endpoint for the region.
    pub endpoint: Option<String>,
    pub region: String,
    pub bucket: String,
    pub path_style: bool,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Prepended to every key (several installations in one bucket); empty or ending in `/`.
    pub prefix: String,
    /// Storage class per namespace; empty = the server's default.
    pub archive_class: String,
    pub exports_class: String,
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("bucket", &self.bucket)
            .field("path_style", &self.path_style)
            .field("access_key_id", &self.access_key_id)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Objects in one S3 bucket (under an optional prefix).
#[derive(Clone)]
pub struct S3Store {
    client: Client,
    settings: Arc<S3Settings>,
}

fn b64(crc: u32) -> String {
    base64::engine::general_purpose::STANDARD.encode(crc.to_be_bytes())
}

/// A full-object CRC32C header value; `None` for a composite one (`…-N`) or garbage.
fn decode_crc(value: &str) -> Option<u32> {
    let raw = base64::engine::general_purpose::STANDARD.decode(value).ok()?;
    Some(u32::from_be_bytes(raw.try_into().ok()?))
}

fn to_system_time(t: Option<&aws_sdk_s3::primitives::DateTime>) -> SystemTime {
    t.and_then(|t| SystemTime::try_from(*t).ok()).unwrap_or(SystemTime::UNIX_EPOCH)
}

impl S3Store {
    pub fn new(settings: S3Settings) -> Self {
        let credentials = Credentials::new(&settings.access_key_id, &settings.secret_access_key, None, None, "ebb-settings");
        let https = aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https();
        let mut config = aws_sdk_s3::Config::builder()
            .http_client(https)
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(settings.region.clone()))
            .credentials_provider(credentials)
            .force_path_style(settings.path_style)
            // Checksums are ours (see the module notes); the SDK validates full-object CRC32Cs
            // on reads.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenSupported)
            // A server that is down must fail a request in seconds (a download answers 503), not
            // hang it; a body in flight is not limited (large files take long).
            .timeout_config(TimeoutConfig::builder().connect_timeout(Duration::from_secs(3)).build());
        if let Some(endpoint) = &settings.endpoint {
            config = config.endpoint_url(endpoint);
        }
        S3Store { client: Client::from_conf(config.build()), settings: Arc::new(settings) }
    }

    pub fn settings(&self) -> &S3Settings {
        &self.settings
    }

    fn full(&self, key: &str) -> String {
        format!("{}{key}", self.settings.prefix)
    }

    fn class_for(&self, key: &str) -> Option<StorageClass> {
        let class = match check_key(key) {
            Ok(Namespace::AuditArchive) => &self.settings.archive_class,
            Ok(Namespace::Exports) => &self.settings.exports_class,
            _ => return None,
        };
        (!class.is_empty()).then(|| StorageClass::from(class.as_str()))
    }

    fn valid(key: &str) -> Result<(), BlobError> {
        if key == MARKER_KEY {
            return Ok(());
        }
        check_key(key).map(|_| ())
    }

    /// A failed request as a [`BlobError`] whose message says which setting to check.
    fn fail<E>(&self, what: &str, err: SdkError<E, HttpResponse>) -> BlobError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let s = &self.settings;
        let endpoint = s.endpoint.as_deref().unwrap_or("AWS");
        let hint = match &err {
            SdkError::DispatchFailure(_) | SdkError::TimeoutError(_) => {
                format!("cannot reach the S3 server at {endpoint} (check EBB_S3_ENDPOINT and that the server is up)")
            }
            SdkError::ServiceError(se) => match se.err().code() {
                Some("NoSuchBucket") => format!("the bucket {:?} does not exist on {endpoint} (check EBB_S3_BUCKET)", s.bucket),
                Some("InvalidAccessKeyId") => format!("the server does not know the access key {:?} (check EBB_S3_ACCESS_KEY_ID)", s.access_key_id),
                Some("SignatureDoesNotMatch") => "the secret key does not match the access key (check EBB_S3_SECRET_ACCESS_KEY)".to_string(),
                Some("AuthorizationHeaderMalformed") => format!("the server refused the region {:?} (check EBB_S3_REGION)", s.region),
                // garage says AccessDenied for both: "Forbidden: Invalid signature", "Forbidden: No such key: …".
                Some("AccessDenied") | Some("Forbidden") if se.err().message().is_some_and(|m| m.to_ascii_lowercase().contains("signature")) => {
                    "the secret key does not match the access key (check EBB_S3_SECRET_ACCESS_KEY)".to_string()
                }
                Some("AccessDenied") | Some("Forbidden") if se.err().message().is_some_and(|m| m.to_ascii_lowercase().contains("no such key")) => {
                    format!("the server does not know the access key {:?} (check EBB_S3_ACCESS_KEY_ID)", s.access_key_id)
                }
                Some("AccessDenied") | Some("Forbidden") => format!(
                    "access denied: {} (check that the key EBB_S3_ACCESS_KEY_ID={:?} exists and may read and write EBB_S3_BUCKET={:?})",
                    se.err().message().unwrap_or("no details"),
                    s.access_key_id,
                    s.bucket
                ),
                Some(code) => format!("{code}: {}", se.err().message().unwrap_or("no details")),
                None => format!("HTTP {} from {endpoint}", se.raw().status().as_u16()),
            },
            _ => DisplayErrorContext(&err).to_string(),
        };
        BlobError::Service(format!("S3 {what} failed: {hint}"))
    }

    /// The ids of this installation's lifecycle rules: scoped to its prefix, so installations
    /// sharing a bucket (each with its own prefix) never replace each other's rules.
    pub fn rule_ids(&self) -> [String; 2] {
        let scope = if self.settings.prefix.is_empty() { String::new() } else { format!(":{}", self.settings.prefix.trim_end_matches('/')) };
        [format!("ebb-exports-expire-7-days{scope}"), format!("ebb-abort-incomplete-uploads-2-days{scope}")]
    }

    /// The ids of every lifecycle rule of the bucket (none when it has no configuration).
    /// Whether the server refuses a `PutObject` with `If-None-Match: *` over an existing object
    /// (AWS S3, MinIO, Ceph do; garage 2.5 ignores the header). Writes and deletes a probe.
    pub async fn honours_if_none_match(&self) -> Result<bool, BlobError> {
        let key = app::storage::new_key(Namespace::SelfCheck);
        let probe = Bytes::from_static(b"probe");
        let crc = crc32c::crc32c(&probe);
        self.put_one(&key, probe.clone(), crc, true).await?;
        let again = self.put_one(&key, probe, crc, true).await;
        BlobStore::delete(self, &key).await?;
        match again {
            Err(BlobError::Exists) => Ok(true),
            Ok(()) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn lifecycle_rule_ids(&self) -> Result<Vec<String>, BlobError> {
        Ok(self.lifecycle_rules().await?.iter().filter_map(|r| r.id().map(str::to_owned)).collect())
    }

    async fn lifecycle_rules(&self) -> Result<Vec<aws_sdk_s3::types::LifecycleRule>, BlobError> {
        match self.client.get_bucket_lifecycle_configuration().bucket(&self.settings.bucket).send().await {
            Ok(r) => Ok(r.rules().to_vec()),
            // No configuration yet (S3: NoSuchLifecycleConfiguration; some servers answer 404).
            Err(e)
                if e.as_service_error().and_then(|s| s.meta().code()).is_some_and(|c| c == "NoSuchLifecycleConfiguration")
                    || e.raw_response().is_some_and(|r| r.status().as_u16() == 404) =>
            {
                Ok(Vec::new())
            }
            Err(e) => Err(self.fail("GetBucketLifecycleConfiguration", e)),
        }
    }

    /// Applies the bucket settings Ebb relies on where the server supports them; returns one line
    /// per setting, saying whether it was applied. The bucket's lifecycle configuration is one
    /// document: it is read first, and only Ebb's own rules for this prefix are replaced — other
    /// installations' and the operator's rules are kept as they are.
    pub async fn setup(&self) -> Vec<(String, Result<(), String>)> {
        use aws_sdk_s3::types::{
            AbortIncompleteMultipartUpload, BucketLifecycleConfiguration, ExpirationStatus, LifecycleExpiration, LifecycleRule, LifecycleRuleFilter,
        };
        let [exports_id, uploads_id] = self.rule_ids();
        let existing = match self.lifecycle_rules().await {
            Ok(rules) => rules,
            Err(e) => return vec![("lifecycle rules (reading the bucket's current rules)".into(), Err(e.to_string()))],
        };
        // Ebb's rules for this prefix: by their scoped ids, and the unscoped ids earlier versions
        // used when their filter is this prefix's.
        let ours = |r: &LifecycleRule| {
            let id = r.id().unwrap_or_default();
            let prefix = r.filter().and_then(|f| f.prefix()).unwrap_or_default();
            id == exports_id
                || id == uploads_id
                || (id == "ebb-exports-expire-7-days" && prefix == self.full(Namespace::Exports.prefix()))
                || (id == "ebb-abort-incomplete-uploads-2-days" && prefix == self.settings.prefix)
        };
        let kept: Vec<LifecycleRule> = existing.into_iter().filter(|r| !ours(r)).collect();
        let exports = LifecycleRule::builder()
            .id(&exports_id)
            .filter(LifecycleRuleFilter::builder().prefix(self.full(Namespace::Exports.prefix())).build())
            .expiration(LifecycleExpiration::builder().days(7).build())
            .status(ExpirationStatus::Enabled)
            .build();
        let uploads = LifecycleRule::builder()
            .id(&uploads_id)
            .filter(LifecycleRuleFilter::builder().prefix(self.settings.prefix.clone()).build())
            .abort_incomplete_multipart_upload(AbortIncompleteMultipartUpload::builder().days_after_initiation(2).build())
            .status(ExpirationStatus::Enabled)
            .build();
        let rules = match (exports, uploads) {
            (Ok(a), Ok(b)) => kept.into_iter().chain([a, b]).collect::<Vec<_>>(),
            (Err(e), _) | (_, Err(e)) => return vec![("lifecycle rules".into(), Err(e.to_string()))],
        };
        let config = BucketLifecycleConfiguration::builder().set_rules(Some(rules)).build().map_err(|e| e.to_string());
        let applied = match config {
            Ok(config) => self
                .client
                .put_bucket_lifecycle_configuration()
                .bucket(&self.settings.bucket)
                .lifecycle_configuration(config)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| self.fail("PutBucketLifecycleConfiguration", e).to_string()),
            Err(e) => Err(e),
        };
        let mut out = vec![(
            format!("lifecycle rule: delete {}* after 7 days; abort unfinished uploads after 2 days", self.full(Namespace::Exports.prefix())),
            applied.clone(),
        )];
        if applied.is_ok() {
            let read = self.client.get_bucket_lifecycle_configuration().bucket(&self.settings.bucket).send().await;
            let check = match read {
                Ok(r) if r.rules().iter().any(|r| r.id() == Some(exports_id.as_str())) => Ok(()),
                Ok(_) => Err("the server accepted the rule but does not report it back".to_string()),
                Err(e) => Err(self.fail("GetBucketLifecycleConfiguration", e).to_string()),
            };
            out.push(("lifecycle rule read back".into(), check));
        }
        out
    }

    async fn put_single(&self, key: &str, data: Bytes, crc: u32) -> Result<(), BlobError> {
        self.put_one(key, data, crc, false).await
    }

    /// One PutObject; `only_new`: with `If-None-Match: *`, so the server refuses (412, or 409
    /// when another conditional write of the key is in flight) instead of replacing an object.
    async fn put_one(&self, key: &str, data: Bytes, crc: u32, only_new: bool) -> Result<(), BlobError> {
        let taken = |e: &SdkError<_, HttpResponse>| matches!(e, SdkError::ServiceError(se) if matches!(se.raw().status().as_u16(), 409 | 412));
        let sent = self
            .client
            .put_object()
            .set_if_none_match(only_new.then(|| "*".to_string()))
            .bucket(&self.settings.bucket)
            .key(self.full(key))
            .set_storage_class(self.class_for(key))
            .content_length(data.len() as i64)
            .checksum_algorithm(ChecksumAlgorithm::Crc32C)
            .checksum_crc32_c(b64(crc))
            .body(S3Body::from(data))
            .customize()
            .disable_payload_signing()
            .send()
            .await;
        match sent {
            Ok(_) => Ok(()),
            Err(e) if only_new && taken(&e) => Err(BlobError::Exists),
            Err(e) => Err(self.fail("PutObject", e)),
        }
    }
}

/// Reads from `body` until `buf` holds exactly [`PART_SIZE`] bytes or the body ends; counts size
/// and CRC32C. What a chunk brings beyond the part waits in `carry` for the next part, so a
/// part's buffer is never outgrown (and reallocated at twice its size). Returns whether the body
/// ended.
async fn fill(body: &mut ByteStream<'_>, buf: &mut BytesMut, carry: &mut Bytes, size: &mut u64, crc: &mut u32, max_len: u64) -> Result<bool, BlobError> {
    loop {
        if !carry.is_empty() {
            let take = carry.len().min(PART_SIZE - buf.len());
            buf.extend_from_slice(&carry.split_to(take));
        }
        if buf.len() >= PART_SIZE {
            return Ok(false);
        }
        match body.next().await {
            None => return Ok(true),
            Some(chunk) => {
                let chunk = chunk?;
                *size += chunk.len() as u64;
                if *size > max_len {
                    return Err(BlobError::TooLarge { limit: max_len });
                }
                *crc = crc32c::crc32c_append(*crc, &chunk);
                *carry = chunk;
            }
        }
    }
}

type PartResult = Result<CompletedPart, BlobError>;

/// An open multipart upload: aborted (with its parts in flight) unless it completed — also when
/// the future driving it is dropped.
struct OpenUpload {
    store: S3Store,
    full_key: String,
    id: String,
    in_flight: std::collections::VecDeque<tokio::task::JoinHandle<PartResult>>,
    done: bool,
}

impl Drop for OpenUpload {
    fn drop(&mut self) {
        for h in &self.in_flight {
            h.abort();
        }
        if self.done {
            return;
        }
        let (client, bucket, key, id) =
            (self.store.client.clone(), self.store.settings.bucket.clone(), std::mem::take(&mut self.full_key), std::mem::take(&mut self.id));
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = client.abort_multipart_upload().bucket(bucket).key(key).upload_id(id).send().await {
                    tracing::warn!(error = %DisplayErrorContext(&e), "could not abort an unfinished upload; maintenance will");
                }
            });
        }
    }
}

impl OpenUpload {
    async fn next_done(&mut self) -> PartResult {
        let handle = self.in_flight.pop_front().expect("a part in flight");
        handle.await.map_err(|e| BlobError::Service(format!("a part upload task failed: {e}")))?
    }

    fn start_part(&mut self, number: i32, data: Bytes) {
        let store = self.store.clone();
        let (key, id) = (self.full_key.clone(), self.id.clone());
        self.in_flight.push_back(tokio::spawn(async move {
            let crc = crc32c::crc32c(&data);
            let out = store
                .client
                .upload_part()
                .bucket(&store.settings.bucket)
                .key(&key)
                .upload_id(&id)
                .part_number(number)
                .content_length(data.len() as i64)
                .checksum_algorithm(ChecksumAlgorithm::Crc32C)
                .checksum_crc32_c(b64(crc))
                .body(S3Body::from(data))
                .customize()
                .disable_payload_signing()
                .send()
                .await
                .map_err(|e| store.fail("UploadPart", e))?;
            let etag = out.e_tag().ok_or_else(|| BlobError::Service("S3 UploadPart returned no ETag".into()))?;
            Ok(CompletedPart::builder().part_number(number).e_tag(etag).checksum_crc32_c(b64(crc)).build())
        }));
    }
}

/// An object's body as a stream of chunks; a failed read ends it with an error.
fn object_body(body: S3Body) -> ByteStream<'static> {
    futures::stream::unfold(Some(body), |state| async move {
        let mut body = state?;
        match body.try_next().await {
            Ok(Some(bytes)) => Some((Ok(bytes), Some(body))),
            Ok(None) => None,
            Err(e) => Some((Err(BlobError::Service(format!("S3 GetObject body failed: {}", DisplayErrorContext(&e)))), None)),
        }
    })
    .boxed()
}

impl BlobStore for S3Store {
    fn put_new<'a>(&'a self, key: &'a str, data: Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            Self::valid(key)?;
            // A server that ignores `If-None-Match` (garage 2.5 does, for PutObject) would
            // replace: the check first keeps one writer after another from it; only two at the
            // same instant still race there (`ebb doctor` says which kind this server is).
            if self.head(key).await?.is_some() {
                return Err(BlobError::Exists);
            }
            let crc = crc32c::crc32c(&data);
            let size = data.len() as u64;
            self.put_one(key, data, crc, true).await?;
            Ok(Stored { size, crc32c: crc })
        })
    }
    fn put_stream<'a>(&'a self, key: &'a str, mut body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            Self::valid(key)?;
            let (mut size, mut crc) = (0u64, 0u32);
            let (mut buf, mut carry) = (BytesMut::with_capacity(PART_SIZE), Bytes::new());
            if fill(&mut body, &mut buf, &mut carry, &mut size, &mut crc, max_len).await? {
                // Shorter than a part (empty included): one request, verified by the server.
                self.put_single(key, buf.freeze(), crc).await?;
                return Ok(Stored { size, crc32c: crc });
            }
            let created = self
                .client
                .create_multipart_upload()
                .bucket(&self.settings.bucket)
                .key(self.full(key))
                .set_storage_class(self.class_for(key))
                .checksum_algorithm(ChecksumAlgorithm::Crc32C)
                .checksum_type(ChecksumType::FullObject)
                .send()
                .await
                .map_err(|e| self.fail("CreateMultipartUpload", e))?;
            let id = created.upload_id().ok_or_else(|| BlobError::Service("S3 CreateMultipartUpload returned no upload id".into()))?.to_owned();
            let mut upload = OpenUpload { store: self.clone(), full_key: self.full(key), id, in_flight: Default::default(), done: false };
            let mut parts = Vec::new();
            let mut number = 0;
            loop {
                let data = std::mem::replace(&mut buf, BytesMut::with_capacity(PART_SIZE)).freeze();
                if !data.is_empty() {
                    number += 1;
                    upload.start_part(number, data);
                }
                while upload.in_flight.len() >= PARTS_IN_FLIGHT {
                    parts.push(upload.next_done().await?);
                }
                if number > 10_000 {
                    return Err(BlobError::TooLarge { limit: (PART_SIZE as u64) * 10_000 });
                }
                if fill(&mut body, &mut buf, &mut carry, &mut size, &mut crc, max_len).await? {
                    if !buf.is_empty() {
                        number += 1;
                        upload.start_part(number, buf.split().freeze());
                    }
                    break;
                }
            }
            while !upload.in_flight.is_empty() {
                parts.push(upload.next_done().await?);
            }
            self.client
                .complete_multipart_upload()
                .bucket(&self.settings.bucket)
                .key(self.full(key))
                .upload_id(&upload.id)
                .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(parts)).build())
                .checksum_crc32_c(b64(crc))
                .checksum_type(ChecksumType::FullObject)
                .send()
                .await
                .map_err(|e| self.fail("CompleteMultipartUpload", e))?;
            upload.done = true;
            Ok(Stored { size, crc32c: crc })
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>> {
        Box::pin(async move {
            Self::valid(key)?;
            let res = self.client.head_object().bucket(&self.settings.bucket).key(self.full(key)).checksum_mode(ChecksumMode::Enabled).send().await;
            match res {
                Ok(o) => Ok(Some(Head {
                    size: o.content_length().unwrap_or(0).max(0) as u64,
                    crc32c: o.checksum_crc32_c().and_then(decode_crc),
                    modified: to_system_time(o.last_modified()),
                })),
                Err(e) if e.as_service_error().is_some_and(|e| e.is_not_found()) => Ok(None),
                Err(e) => Err(self.fail("HeadObject", e)),
            }
        })
    }

    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            Self::valid(key)?;
            let res = self.client.get_object().bucket(&self.settings.bucket).key(self.full(key)).checksum_mode(ChecksumMode::Enabled).send().await;
            let out = match res {
                Ok(o) => o,
                Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => return Ok(None),
                Err(e) => return Err(self.fail("GetObject", e)),
            };
            let len = out.content_length().unwrap_or(0).max(0) as u64;
            // The SDK checks a full-object CRC32C as the body is read: a damaged object ends in
            // an error instead of its last byte.
            let body = object_body(out.body);
            Ok(Some(Blob { len, body }))
        })
    }

    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            if start == 0 {
                return self.open(key).await;
            }
            Self::valid(key)?;
            // A range past the end is an error on S3 (416): the size is read first.
            let Some(head) = self.head(key).await? else { return Ok(None) };
            if start >= head.size {
                return Ok(Some(Blob { len: 0, body: futures::stream::empty().boxed() }));
            }
            // A part has no full-object checksum to check; the range is read as it is.
            let res = self.client.get_object().bucket(&self.settings.bucket).key(self.full(key)).range(format!("bytes={start}-")).send().await;
            let out = match res {
                Ok(o) => o,
                Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => return Ok(None),
                Err(e) => return Err(self.fail("GetObject", e)),
            };
            let len = out.content_length().unwrap_or(0).max(0) as u64;
            let body = object_body(out.body);
            Ok(Some(Blob { len, body }))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            Self::valid(key)?;
            // DeleteObject succeeds for an absent key: idempotent as the contract wants.
            self.client.delete_object().bucket(&self.settings.bucket).key(self.full(key)).send().await.map(|_| ()).map_err(|e| self.fail("DeleteObject", e))
        })
    }

    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>> {
        Box::pin(async move {
            let cutoff = SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH);
            let (mut key_marker, mut id_marker) = (None::<String>, None::<String>);
            let mut removed = 0;
            loop {
                let page = self
                    .client
                    .list_multipart_uploads()
                    .bucket(&self.settings.bucket)
                    .prefix(&self.settings.prefix)
                    .set_key_marker(key_marker.clone())
                    .set_upload_id_marker(id_marker.clone())
                    .send()
                    .await
                    .map_err(|e| self.fail("ListMultipartUploads", e))?;
                for u in page.uploads() {
                    let (Some(key), Some(id)) = (u.key(), u.upload_id()) else { continue };
                    if to_system_time(u.initiated()) > cutoff {
                        continue;
                    }
                    match self.client.abort_multipart_upload().bucket(&self.settings.bucket).key(key).upload_id(id).send().await {
                        Ok(_) => removed += 1,
                        Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_upload()) => {}
                        Err(e) => return Err(self.fail("AbortMultipartUpload", e)),
                    }
                }
                if page.is_truncated() != Some(true) {
                    return Ok(removed);
                }
                key_marker = page.next_key_marker().map(str::to_owned);
                id_marker = page.next_upload_id_marker().map(str::to_owned);
                if key_marker.is_none() {
                    return Ok(removed);
                }
            }
        })
    }

    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>> {
        Box::pin(async move {
            let res = self
                .client
                .list_objects_v2()
                .bucket(&self.settings.bucket)
                .prefix(self.full(ns.prefix()))
                .set_start_after(after.map(|a| self.full(a)))
                .max_keys(limit.min(1000) as i32)
                .send()
                .await
                .map_err(|e| self.fail("ListObjectsV2", e))?;
            let mut out = Vec::new();
            for o in res.contents() {
                let Some(key) = o.key().and_then(|k| k.strip_prefix(&self.settings.prefix)) else { continue };
                if check_key(key).is_ok_and(|n| n == ns) {
                    out.push(ObjectInfo { key: key.to_owned(), size: o.size().unwrap_or(0).max(0) as u64, modified: to_system_time(o.last_modified()) });
                }
            }
            // The next page starts after the last key the store returned, Ebb's or not: a foreign
            // object skipped above must not end the listing.
            let next = if res.is_truncated() == Some(true) {
                res.contents().last().and_then(|o| o.key()).and_then(|k| k.strip_prefix(&self.settings.prefix)).map(str::to_owned)
            } else {
                None
            };
            Ok(Listing { objects: out, next })
        })
    }

    fn presign<'a>(&'a self, key: &'a str, expires_in: Duration, file_name: &'a str) -> BoxFuture<'a, Result<Option<String>, BlobError>> {
        Box::pin(async move {
            check_key(key)?;
            let disposition = app::shares::download::content_disposition(file_name);
            let config = PresigningConfig::expires_in(expires_in).map_err(|e| BlobError::Service(format!("cannot presign for {expires_in:?}: {e}")))?;
            let req = self
                .client
                .get_object()
                .bucket(&self.settings.bucket)
                .key(self.full(key))
                .response_content_disposition(disposition.to_str().unwrap_or("attachment"))
                .presigned(config)
                .await
                .map_err(|e| self.fail("presigning GetObject", e))?;
            Ok(Some(req.uri().to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parts_are_filled_to_exactly_their_size_and_never_outgrow_their_buffer() {
        // Chunks that do not divide the part size: the one crossing a part's end is split.
        let chunk = 3 << 20;
        let total = PART_SIZE * 2 + 12_345;
        let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
        let mut body: ByteStream<'_> = futures::stream::iter(data.chunks(chunk).map(|c| Ok(Bytes::copy_from_slice(c))).collect::<Vec<_>>()).boxed();
        let (mut size, mut crc, mut carry) = (0u64, 0u32, Bytes::new());
        let mut parts = Vec::new();
        loop {
            let mut buf = BytesMut::with_capacity(PART_SIZE);
            let ended = fill(&mut body, &mut buf, &mut carry, &mut size, &mut crc, u64::MAX).await.unwrap();
            assert_eq!(buf.capacity(), PART_SIZE, "the part's buffer was never reallocated");
            if !buf.is_empty() {
                parts.push(buf.freeze());
            }
            if ended {
                break;
            }
        }
        assert_eq!(parts.iter().map(Bytes::len).collect::<Vec<_>>(), [PART_SIZE, PART_SIZE, 12_345]);
        assert_eq!(parts.concat(), data);
        assert_eq!((size, crc), (total as u64, crc32c::crc32c(&data)));
    }

    #[test]
    fn crc_headers_decode_only_full_object_values() {
        assert_eq!(decode_crc(&b64(0xdead_beef)), Some(0xdead_beef));
        assert_eq!(decode_crc("AlIBnw==-7"), None, "a composite checksum is not the object's CRC32C");
        assert_eq!(decode_crc("!!"), None);
    }

    #[test]
    fn settings_never_show_the_secret() {
        let s = S3Settings {
            endpoint: None,
            region: "us-east-1".into(),
            bucket: "b".into(),
            path_style: false,
            access_key_id: "AKID".into(),
            secret_access_key: "very-secret".into(),
            prefix: String::new(),
            archive_class: String::new(),
            exports_class: String::new(),
        };
        assert!(!format!("{s:?}").contains("very-secret"));
    }
}
