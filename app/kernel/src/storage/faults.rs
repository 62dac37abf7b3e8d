//! A fault-injecting wrapper around a real store: chosen operations fail, or are delayed, on
//! demand (tests of "S3 down", "delete keeps failing", slow storage). Everything else goes to the
//! real backend unchanged.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;

use super::{Blob, BlobError, BlobStore, ByteStream, Head, Listing, Namespace, Stored};

/// The operations a fault can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Put,
    Head,
    Open,
    Delete,
    List,
    AbandonedUploads,
}

impl Op {
    pub const ALL: [Op; 6] = [Op::Put, Op::Head, Op::Open, Op::Delete, Op::List, Op::AbandonedUploads];
}

/// The faults in force; shared between a test and the store it wraps.
#[derive(Debug, Default)]
pub struct Faults {
    failing: Mutex<HashSet<Op>>,
    failing_keys: Mutex<HashSet<(Op, String)>>,
    delays: Mutex<HashMap<Op, Duration>>,
    calls: Mutex<HashMap<Op, u64>>,
    /// Puts lose the service after this many bytes of their body.
    cut_after: Mutex<Option<u64>>,
    /// Puts find the disk full after this many bytes of their body.
    full_after: Mutex<Option<u64>>,
    /// Completed puts are corrupted in the store right after (one byte flipped).
    corrupt: Mutex<bool>,
}

impl Faults {
    pub fn new() -> Arc<Self> {
        Arc::new(Faults::default())
    }

    /// Every call of `op` fails until [`Faults::heal`].
    pub fn fail(&self, op: Op) {
        self.failing.lock().unwrap().insert(op);
    }

    /// Every operation fails (the service is down).
    pub fn fail_all(&self) {
        self.failing.lock().unwrap().extend(Op::ALL);
    }

    /// Calls of `op` on `key` fail.
    pub fn fail_key(&self, op: Op, key: &str) {
        self.failing_keys.lock().unwrap().insert((op, key.to_owned()));
    }

    /// Calls of `op` wait `delay` before going to the real store.
    pub fn delay(&self, op: Op, delay: Duration) {
        self.delays.lock().unwrap().insert(op, delay);
    }

    /// Every put loses the storage service after `bytes` bytes of its body (the upload fails in
    /// the middle, as when S3 goes down).
    pub fn cut_puts_after(&self, bytes: u64) {
        *self.cut_after.lock().unwrap() = Some(bytes);
    }

    /// Every put finds the disk full after `bytes` bytes of its body (ENOSPC, as a local disk
    /// answers the write).
    pub fn disk_full_after(&self, bytes: u64) {
        *self.full_after.lock().unwrap() = Some(bytes);
    }

    /// Every completed put is then corrupted in the store: one byte flipped, same size (bit rot,
    /// or someone writing over the object).
    pub fn corrupt_puts(&self) {
        *self.corrupt.lock().unwrap() = true;
    }

    /// No more faults.
    pub fn heal(&self) {
        *self.cut_after.lock().unwrap() = None;
        *self.full_after.lock().unwrap() = None;
        *self.corrupt.lock().unwrap() = false;
        self.failing.lock().unwrap().clear();
        self.failing_keys.lock().unwrap().clear();
        self.delays.lock().unwrap().clear();
    }

    /// How many calls of `op` were made (failed ones included).
    pub fn calls(&self, op: Op) -> u64 {
        self.calls.lock().unwrap().get(&op).copied().unwrap_or(0)
    }

    async fn enter(&self, op: Op, key: Option<&str>) -> Result<(), BlobError> {
        *self.calls.lock().unwrap().entry(op).or_default() += 1;
        let delay = self.delays.lock().unwrap().get(&op).copied();
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        let failing = self.failing.lock().unwrap().contains(&op) || key.is_some_and(|k| self.failing_keys.lock().unwrap().contains(&(op, k.to_owned())));
        if failing {
            return Err(BlobError::Service(format!("injected fault: {op:?} fails")));
        }
        Ok(())
    }
}

/// A real store with [`Faults`] in front of it.
pub struct FaultyStore<S> {
    inner: S,
    faults: Arc<Faults>,
}

impl<S: BlobStore> FaultyStore<S> {
    pub fn new(inner: S, faults: Arc<Faults>) -> Self {
        FaultyStore { inner, faults }
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: BlobStore> BlobStore for FaultyStore<S> {
    fn put_new<'a>(&'a self, key: &'a str, data: bytes::Bytes) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Put, Some(key)).await?;
            self.inner.put_new(key, data).await
        })
    }
    fn put_stream<'a>(&'a self, key: &'a str, body: ByteStream<'a>, max_len: u64) -> BoxFuture<'a, Result<Stored, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Put, Some(key)).await?;
            let cut = *self.faults.cut_after.lock().unwrap();
            let full = *self.faults.full_after.lock().unwrap();
            let fault = match (cut, full) {
                (Some(limit), _) => Some((limit, false)),
                (None, Some(limit)) => Some((limit, true)),
                (None, None) => None,
            };
            let body = match fault {
                None => body,
                Some((limit, full)) => {
                    use futures::StreamExt;
                    let mut seen = 0u64;
                    body.map(move |chunk| {
                        let chunk = chunk?;
                        seen += chunk.len() as u64;
                        if seen > limit {
                            return Err(if full {
                                std::io::Error::from(std::io::ErrorKind::StorageFull).into()
                            } else {
                                BlobError::Service("injected fault: the storage service went away during the upload".into())
                            });
                        }
                        Ok(chunk)
                    })
                    .boxed()
                }
            };
            let stored = self.inner.put_stream(key, body, max_len).await?;
            let corrupt = *self.faults.corrupt.lock().unwrap();
            if corrupt {
                if let Some(data) = self.inner.get(key).await? {
                    let mut data = data.to_vec();
                    let middle = data.len() / 2;
                    if let Some(b) = data.get_mut(middle) {
                        *b ^= 0x55;
                    }
                    self.inner.put(key, data.into()).await?;
                }
            }
            Ok(stored)
        })
    }
    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Head>, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Head, Some(key)).await?;
            self.inner.head(key).await
        })
    }
    fn open<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Open, Some(key)).await?;
            self.inner.open(key).await
        })
    }
    fn open_at<'a>(&'a self, key: &'a str, start: u64) -> BoxFuture<'a, Result<Option<Blob>, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Open, Some(key)).await?;
            self.inner.open_at(key, start).await
        })
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Delete, Some(key)).await?;
            self.inner.delete(key).await
        })
    }
    fn remove_abandoned_uploads(&self, age: Duration) -> BoxFuture<'_, Result<u64, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::AbandonedUploads, None).await?;
            self.inner.remove_abandoned_uploads(age).await
        })
    }
    fn list<'a>(&'a self, ns: Namespace, after: Option<&'a str>, limit: usize) -> BoxFuture<'a, Result<Listing, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::List, None).await?;
            self.inner.list(ns, after, limit).await
        })
    }
    fn presign<'a>(&'a self, key: &'a str, expires_in: Duration, file_name: &'a str) -> BoxFuture<'a, Result<Option<String>, BlobError>> {
        self.inner.presign(key, expires_in, file_name)
    }
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, BlobError>> {
        Box::pin(async move {
            self.faults.enter(Op::Head, Some(key)).await?;
            self.inner.exists(key).await
        })
    }
}
