//! The contract every [`Store`] adapter must honour, as a runnable suite.
//!
//! [`run`] exercises a store that is empty at the start and leaves it empty. The native
//! tests run it against the memory and LSM adapters directly; `POST
//! /v0/admin/store-check` runs it inside every host against the live backend (D1 in the
//! worker, the WIT `store` import in the component), in a scratch namespace made with
//! [`super::Prefixed`].
//!
//! The remembered values ([`Store::remember`]) are a cache: a host may keep nothing, so
//! the checks ask only what every host must do: give back the bytes it was offered or
//! nothing, never read them as stored data, and forget them on a range delete.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde::Serialize;

use super::{Scan, Store, WriteBatch, WriteError};

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What the check establishes, as a sentence.
    pub name: &'static str,
    /// Whether the store honoured it.
    pub ok: bool,
    /// What went wrong, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The outcome of the whole suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Whether every check passed.
    pub ok: bool,
    /// Every check, in the order run.
    pub checks: Vec<Check>,
}

impl Report {
    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok)
    }
}

type Outcome = Result<(), String>;

fn expect_eq<T: PartialEq + core::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    if got == want { Ok(()) } else { Err(format!("{what}: got {got:?}, want {want:?}")) }
}

/// Keys in the bytewise order every adapter must return them in.
fn ordered_keys() -> Vec<Vec<u8>> {
    vec![
        vec![0x00],
        vec![0x00, 0x00],
        vec![0x00, 0x01],
        vec![0x01],
        b"A".to_vec(),
        b"a".to_vec(),
        b"a\x00".to_vec(),
        b"ab".to_vec(),
        b"b".to_vec(),
        vec![0x7f],
        vec![0x80],
        vec![0xc3, 0xa9],
        vec![0xfe, 0xff],
        vec![0xff],
        vec![0xff, 0x00],
        vec![0xff, 0xff, 0xff],
    ]
}

async fn clear<S: Store>(store: &S) -> Outcome {
    let mut batch = WriteBatch::new();
    batch.delete_range(Vec::new(), None);
    store.write(&batch).await.map_err(|e| format!("clearing the store: {e:?}"))
}

async fn all<S: Store>(store: &S) -> Result<Vec<(Vec<u8>, Vec<u8>)>, String> {
    store
        .scan(&Scan { start: Vec::new(), end: None, limit: u32::MAX, reverse: false })
        .await
        .map_err(|e| format!("scan: {e}"))
}

async fn keys<S: Store>(store: &S, scan: Scan) -> Result<Vec<Vec<u8>>, String> {
    Ok(store.scan(&scan).await.map_err(|e| format!("scan: {e}"))?.into_iter().map(|(k, _)| k).collect())
}

async fn put_all<S: Store>(store: &S, keys: &[Vec<u8>]) -> Outcome {
    let mut batch = WriteBatch::new();
    // Insert in a scrambled order so that ordering comes from the store, not from us.
    for (i, key) in keys.iter().enumerate().rev().step_by(2).chain(keys.iter().enumerate().rev().skip(1).step_by(2)) {
        batch.put(key.clone(), format!("v{i}").into_bytes());
    }
    store.write(&batch).await.map_err(|e| format!("write: {e:?}"))
}

async fn empty_store_reads_nothing<S: Store>(store: &S) -> Outcome {
    expect_eq("get of an absent key", store.get(b"absent").await.map_err(store_failed)?, None)?;
    expect_eq("scan of an empty store", all(store).await?, vec![])
}

async fn a_put_is_read_back_and_overwritten<S: Store>(store: &S) -> Outcome {
    let mut batch = WriteBatch::new();
    batch.put(b"k".to_vec(), b"one".to_vec());
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    expect_eq("get after put", store.get(b"k").await.map_err(store_failed)?, Some(b"one".to_vec()))?;
    let mut batch = WriteBatch::new();
    batch.put(b"k".to_vec(), b"two".to_vec());
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    expect_eq("get after overwrite", store.get(b"k").await.map_err(store_failed)?, Some(b"two".to_vec()))
}

async fn values_keep_every_byte<S: Store>(store: &S) -> Outcome {
    let every_byte: Vec<u8> = (0..=255u8).collect();
    let large: Vec<u8> = (0..256 * 1024).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut batch = WriteBatch::new();
    batch
        .put(b"bytes".to_vec(), every_byte.clone())
        .put(b"empty".to_vec(), Vec::new())
        .put(b"large".to_vec(), large.clone());
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    let got = store.get_many(&[b"bytes", b"empty", b"large"]).await.map_err(store_failed)?;
    expect_eq("every byte value", got.first().cloned().flatten(), Some(every_byte))?;
    expect_eq("an empty value is present, not absent", got.get(1).cloned().flatten(), Some(Vec::new()))?;
    expect_eq("a 256 KiB value", got.get(2).cloned().flatten().map(|v| v.len()), Some(large.len()))?;
    expect_eq("a 256 KiB value's bytes", got.get(2).cloned().flatten() == Some(large), true)
}

async fn get_many_keeps_order_and_reports_absent_keys<S: Store>(store: &S) -> Outcome {
    put_all(store, &[b"x".to_vec(), b"y".to_vec()]).await?;
    let got = store.get_many(&[b"y", b"nope", b"x", b"y"]).await.map_err(store_failed)?;
    let present: Vec<bool> = got.iter().map(Option::is_some).collect();
    expect_eq("presence, in request order", present, vec![true, false, true, true])?;
    expect_eq("first value is y's", got.first().cloned().flatten(), Some(b"v1".to_vec()))?;
    expect_eq("empty request", store.get_many(&[]).await.map_err(store_failed)?, vec![])
}

async fn binary_keys_sort_bytewise<S: Store>(store: &S) -> Outcome {
    let ordered = ordered_keys();
    put_all(store, &ordered).await?;
    let got: Vec<Vec<u8>> = all(store).await?.into_iter().map(|(k, _)| k).collect();
    expect_eq("forward order", got, ordered.clone())?;
    let mut reversed = ordered;
    reversed.reverse();
    expect_eq(
        "reverse order",
        keys(store, Scan { start: Vec::new(), end: None, limit: u32::MAX, reverse: true }).await?,
        reversed,
    )
}

async fn scans_honour_bounds_and_limits<S: Store>(store: &S) -> Outcome {
    let ordered = ordered_keys();
    put_all(store, &ordered).await?;
    let slice = |a: usize, b: usize| ordered.get(a..b).map(<[Vec<u8>]>::to_vec).unwrap_or_default();
    let between = Scan { start: b"a".to_vec(), end: Some(vec![0x80]), limit: 100, reverse: false };
    expect_eq("start inclusive, end exclusive", keys(store, between.clone()).await?, slice(5, 10))?;
    expect_eq("limit", keys(store, Scan { limit: 2, ..between.clone() }).await?, slice(5, 7))?;
    let mut last_two = slice(8, 10);
    last_two.reverse();
    expect_eq(
        "reverse from the end with a limit",
        keys(store, Scan { limit: 2, reverse: true, ..between.clone() }).await?,
        last_two,
    )?;
    expect_eq("limit zero", keys(store, Scan { limit: 0, ..between.clone() }).await?, vec![])?;
    expect_eq(
        "end before start",
        keys(store, Scan { start: b"b".to_vec(), end: Some(b"a".to_vec()), limit: 10, reverse: false }).await?,
        vec![],
    )?;
    expect_eq("prefix scan", keys(store, Scan::prefix(&[0x00], 10)).await?, slice(0, 3))?;
    expect_eq("prefix scan of 0xff", keys(store, Scan::prefix(&[0xff], 10)).await?, slice(13, 16))?;
    let mut ff = slice(13, 16);
    ff.reverse();
    expect_eq("reverse prefix scan of 0xff", keys(store, Scan::prefix(&[0xff], 10).reversed()).await?, ff)
}

async fn a_batch_applies_in_order<S: Store>(store: &S) -> Outcome {
    let mut batch = WriteBatch::new();
    batch
        .put(b"a".to_vec(), b"1".to_vec())
        .delete(b"a".to_vec())
        .put(b"a".to_vec(), b"2".to_vec())
        .put(b"b".to_vec(), b"1".to_vec())
        .put(b"c1".to_vec(), b"1".to_vec())
        .put(b"c2".to_vec(), b"1".to_vec())
        .delete_range(b"c".to_vec(), Some(b"d".to_vec()))
        .put_if_absent(b"d".to_vec(), b"1".to_vec())
        .delete(b"never-there".to_vec());
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    let got: Vec<(Vec<u8>, Vec<u8>)> = all(store).await?;
    expect_eq(
        "state after the batch",
        got,
        vec![(b"a".to_vec(), b"2".to_vec()), (b"b".to_vec(), b"1".to_vec()), (b"d".to_vec(), b"1".to_vec())],
    )
}

async fn a_failed_precondition_writes_nothing_and_names_the_key<S: Store>(store: &S) -> Outcome {
    put_all(store, &[b"taken".to_vec()]).await?;
    let before = all(store).await?;
    let mut batch = WriteBatch::new();
    batch
        .put(b"new1".to_vec(), b"x".to_vec())
        .delete(b"taken".to_vec())
        .put_if_absent(b"free".to_vec(), b"x".to_vec())
        .put(b"taken".to_vec(), b"changed".to_vec())
        .put_if_absent(b"taken".to_vec(), b"x".to_vec())
        .put(b"new2".to_vec(), b"x".to_vec());
    match store.write(&batch).await {
        Err(WriteError::PreconditionFailed { key }) => expect_eq("failed key", key, b"taken".to_vec())?,
        other => {
            return Err(format!("expected a failed precondition on `taken`, got {other:?}"));
        }
    }
    expect_eq("state after the failed batch", all(store).await?, before)?;
    // Of two failing preconditions, the first in the batch is named, wherever its key sorts.
    put_all(store, &[b"also taken".to_vec()]).await?;
    let mut batch = WriteBatch::new();
    batch.put_if_absent(b"taken".to_vec(), b"x".to_vec()).put_if_absent(b"also taken".to_vec(), b"x".to_vec());
    match store.write(&batch).await {
        Err(WriteError::PreconditionFailed { key }) => expect_eq("first failed key", key, b"taken".to_vec()),
        other => Err(format!("expected a failed precondition on `taken`, got {other:?}")),
    }
}

async fn a_precondition_sees_earlier_puts_of_its_batch<S: Store>(store: &S) -> Outcome {
    let mut batch = WriteBatch::new();
    batch.put(b"fresh".to_vec(), b"x".to_vec()).put_if_absent(b"fresh".to_vec(), b"y".to_vec());
    match store.write(&batch).await {
        Err(WriteError::PreconditionFailed { key }) => expect_eq("failed key", key, b"fresh".to_vec())?,
        other => {
            return Err(format!("expected a failed precondition on `fresh`, got {other:?}"));
        }
    }
    expect_eq("state after the failed batch", all(store).await?, vec![])?;
    let mut batch = WriteBatch::new();
    batch.put_if_absent(b"fresh".to_vec(), b"x".to_vec());
    store.write(&batch).await.map_err(|e| format!("put-if-absent of an absent key: {e:?}"))?;
    let mut batch = WriteBatch::new();
    batch.put_if_absent(b"fresh".to_vec(), b"y".to_vec());
    match store.write(&batch).await {
        Err(WriteError::PreconditionFailed { key }) => expect_eq("failed key", key, b"fresh".to_vec())?,
        other => return Err(format!("a second put-if-absent must fail, got {other:?}")),
    }
    expect_eq("value kept", store.get(b"fresh").await.map_err(store_failed)?, Some(b"x".to_vec()))
}

async fn a_range_delete_removes_exactly_its_range<S: Store>(store: &S) -> Outcome {
    let ordered = ordered_keys();
    put_all(store, &ordered).await?;
    let mut batch = WriteBatch::new();
    batch
        .delete_range(b"a".to_vec(), Some(b"b".to_vec()))
        .delete_range(vec![0xff], None)
        .delete_range(b"z".to_vec(), Some(b"y".to_vec()));
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    let mut want = ordered;
    want.retain(|k| !(k.as_slice() >= b"a".as_slice() && k.as_slice() < b"b".as_slice()) && k.first() != Some(&0xff));
    expect_eq("keys left", keys(store, Scan { start: Vec::new(), end: None, limit: 100, reverse: false }).await?, want)
}

/// A value to remember: every byte, then a few more.
fn rendered(seed: u8) -> Vec<u8> {
    (0..=255u8).chain([seed; 16]).collect()
}

/// What `store` recalls under `key`, which must be `want` or nothing.
fn recalled_as<S: Store>(store: &S, what: &str, key: &[u8], want: &[u8]) -> Outcome {
    match store.recall(key) {
        Some(got) if got != want => Err(format!("{what}: recalled {} other bytes", got.len())),
        _ => Ok(()),
    }
}

async fn a_remembered_value_is_recalled_as_it_was_or_not_at_all<S: Store>(store: &S) -> Outcome {
    expect_eq("recall of a key never remembered", store.recall(b"r"), None)?;
    store.remember(b"r", &rendered(1));
    recalled_as(store, "after remember", b"r", &rendered(1))?;
    store.remember(b"r", &rendered(2));
    recalled_as(store, "after remembering another value", b"r", &rendered(2))?;
    store.remember(b"empty", b"");
    recalled_as(store, "an empty value", b"empty", b"")?;
    // A write that removes nothing leaves what is kept as it was.
    put_all(store, &[b"r".to_vec()]).await?;
    recalled_as(store, "after a put", b"r", &rendered(2))
}

async fn a_remembered_value_is_never_stored<S: Store>(store: &S) -> Outcome {
    store.remember(b"r", &rendered(3));
    expect_eq("get of a remembered key", store.get(b"r").await.map_err(store_failed)?, None)?;
    expect_eq("scan after remember", all(store).await?, vec![])?;
    recalled_as(store, "a stored value of the same key", b"r", &rendered(3))
}

async fn a_range_delete_forgets_every_remembered_value<S: Store>(store: &S) -> Outcome {
    store.remember(b"r", &rendered(4));
    store.remember(b"s", &rendered(5));
    let mut batch = WriteBatch::new();
    batch.delete_range(b"x".to_vec(), Some(b"y".to_vec()));
    store.write(&batch).await.map_err(|e| format!("{e:?}"))?;
    expect_eq("recall after a range delete of other keys", (store.recall(b"r"), store.recall(b"s")), (None, None))
}

fn store_failed(e: super::StoreError) -> String {
    format!("store error: {e}")
}

/// Runs every check against `store`, which must be empty; leaves it empty.
pub async fn run<S: Store>(store: &S) -> Report {
    let mut checks = Vec::new();
    macro_rules! check {
        ($name:ident) => {{
            let outcome = match clear(store).await {
                Ok(()) => $name(store).await,
                Err(e) => Err(e),
            };
            checks.push(Check { name: stringify!($name), ok: outcome.is_ok(), detail: outcome.err() });
        }};
    }
    check!(empty_store_reads_nothing);
    check!(a_put_is_read_back_and_overwritten);
    check!(values_keep_every_byte);
    check!(get_many_keeps_order_and_reports_absent_keys);
    check!(binary_keys_sort_bytewise);
    check!(scans_honour_bounds_and_limits);
    check!(a_batch_applies_in_order);
    check!(a_failed_precondition_writes_nothing_and_names_the_key);
    check!(a_precondition_sees_earlier_puts_of_its_batch);
    check!(a_range_delete_removes_exactly_its_range);
    check!(a_remembered_value_is_recalled_as_it_was_or_not_at_all);
    check!(a_remembered_value_is_never_stored);
    check!(a_range_delete_forgets_every_remembered_value);
    if let Err(e) = clear(store).await {
        checks.push(Check { name: "the store is left empty", ok: false, detail: Some(e) });
    }
    Report { ok: checks.iter().all(|c| c.ok), checks }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::exec::block_on;
    use crate::storage::store::{MemoryStore, Prefixed};

    #[test]
    fn the_memory_store_honours_the_contract() {
        let store = MemoryStore::without_access_rules();
        let report = block_on(run(&store));
        assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
        assert!(store.is_empty());
    }

    /// A store that gives back other bytes than it was offered, and keeps them through
    /// a range delete.
    struct Misremembering(MemoryStore);

    impl Store for Misremembering {
        async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, super::super::StoreError> {
            self.0.get(key).await
        }
        async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, super::super::StoreError> {
            self.0.get_many(keys).await
        }
        async fn scan(&self, scan: &Scan) -> Result<Vec<super::super::Entry>, super::super::StoreError> {
            self.0.scan(scan).await
        }
        async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
            self.0.write(batch).await
        }
        fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
            (key != b"empty").then(|| rendered(9))
        }
        fn remember(&self, _: &[u8], _: &[u8]) {}
    }

    #[test]
    fn a_store_that_misremembers_fails_the_contract() {
        let report = block_on(run(&Misremembering(MemoryStore::without_access_rules())));
        let failed: Vec<&str> = report.failures().map(|c| c.name).collect();
        assert_eq!(
            failed,
            [
                "a_remembered_value_is_recalled_as_it_was_or_not_at_all",
                "a_remembered_value_is_never_stored",
                "a_range_delete_forgets_every_remembered_value"
            ]
        );
    }

    #[test]
    fn a_prefixed_namespace_honours_the_contract_and_leaves_its_neighbours_alone() {
        let store = MemoryStore::new();
        let mut batch = WriteBatch::new();
        batch
            .put(b"ns".to_vec(), b"below".to_vec())
            .put(b"nt".to_vec(), b"above".to_vec())
            .put(b"ns\xff".to_vec(), b"inside?".to_vec());
        block_on(store.write(&batch)).unwrap();
        let ns = Prefixed::new(&store, b"ns/".to_vec());
        let report = block_on(run(&ns));
        assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
        assert_eq!(store.len(), 3);
    }
}
