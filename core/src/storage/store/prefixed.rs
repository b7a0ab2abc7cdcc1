//! A [`Store`] seen through a key prefix: a namespace inside another store.
//!
//! Remembered values ([`Store::remember`]) are kept by the inner store under the
//! prefixed key too, so a namespace's values never meet another's, and a write that
//! forgets in the namespace forgets in the inner store (a range delete stays one).

use alloc::vec::Vec;

use super::{Entry, Op, Scan, Store, StoreError, WriteBatch, WriteError, prefix_end};

/// Every key of the inner store that starts with `prefix`, with the prefix removed.
#[derive(Debug)]
pub struct Prefixed<S> {
    inner: S,
    prefix: Vec<u8>,
}

impl<S: Store> Prefixed<S> {
    /// The namespace `prefix` of `inner`.
    pub fn new(inner: S, prefix: Vec<u8>) -> Self {
        Prefixed { inner, prefix }
    }

    fn key(&self, key: &[u8]) -> Vec<u8> {
        let mut full = Vec::with_capacity(self.prefix.len() + key.len());
        full.extend_from_slice(&self.prefix);
        full.extend_from_slice(key);
        full
    }

    /// The end of a range inside the namespace (`None`: the namespace's end).
    fn end(&self, end: Option<&[u8]>) -> Option<Vec<u8>> {
        match end {
            Some(end) => Some(self.key(end)),
            None => prefix_end(&self.prefix),
        }
    }

    /// A batch that removes the whole namespace.
    pub fn clear_batch(&self) -> WriteBatch {
        let mut batch = WriteBatch::new();
        batch.delete_range(self.prefix.clone(), prefix_end(&self.prefix));
        batch
    }

    /// The inner store.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Store> Store for Prefixed<S> {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(&self.key(key)).await
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let full: Vec<Vec<u8>> = keys.iter().map(|k| self.key(k)).collect();
        let refs: Vec<&[u8]> = full.iter().map(Vec::as_slice).collect();
        self.inner.get_many(&refs).await
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        let inner = Scan {
            start: self.key(&scan.start),
            end: self.end(scan.end.as_deref()),
            limit: scan.limit,
            reverse: scan.reverse,
        };
        let strip = self.prefix.len();
        Ok(self
            .inner
            .scan(&inner)
            .await?
            .into_iter()
            .map(|(mut k, v)| {
                // Every key in the scanned range starts with the prefix.
                k.drain(..strip.min(k.len()));
                (k, v)
            })
            .collect())
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let ops = batch
            .ops
            .iter()
            .map(|op| match op {
                Op::Put { key, value } => Op::Put { key: self.key(key), value: value.clone() },
                Op::PutIfAbsent { key, value } => Op::PutIfAbsent { key: self.key(key), value: value.clone() },
                Op::Delete { key } => Op::Delete { key: self.key(key) },
                Op::DeleteRange { start, end } => {
                    Op::DeleteRange { start: self.key(start), end: self.end(end.as_deref()) }
                }
            })
            .collect();
        let strip = self.prefix.len();
        self.inner.write(&WriteBatch { ops }).await.map_err(|e| match e {
            WriteError::PreconditionFailed { mut key } => {
                key.drain(..strip.min(key.len()));
                WriteError::PreconditionFailed { key }
            }
            other => other,
        })
    }

    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.recall(&self.key(key))
    }

    fn remember(&self, key: &[u8], value: &[u8]) {
        self.inner.remember(&self.key(key), value);
    }
}
