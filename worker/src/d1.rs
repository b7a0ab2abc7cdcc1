//! The core's storage port over Cloudflare D1 (binding `DB`).
//!
//! The node's state is one table, created by `worker/migrations/0001_create_kv.sql`
//! (the other, `cache_generation`, is the body cache's):
//!
//! ```sql
//! CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;
//! ```
//!
//! SQLite compares BLOBs with `memcmp`, shorter first on a common prefix: exactly the
//! port's key order, so a scan is an `ORDER BY k` walk of the primary key. Keys and
//! values are bound as byte arrays (D1 stores them as BLOBs) and read back as
//! `hex(...)` text, which crosses D1's JSON wire at two characters a byte where a BLOB
//! column would come back as an array of numbers.
//!
//! A [`WriteBatch`] is one `db.batch(...)`, which D1 runs as one transaction; other
//! statements can join it ([`D1Store::write_with`]: the body cache replaces its
//! generation in the transaction of a reset, see [`crate::cache`]).
//! Consecutive operations of one kind share a statement (a multi-row `INSERT`, a
//! `DELETE ... IN`) within D1's limit of [`MAX_BOUND_PARAMETERS`]; reads of many keys
//! are chunked the same way and sent as one batch, so every port call is one round
//! trip (plus one after a failed precondition).
//!
//! ## Shorter keys
//!
//! D1 stores some of the core's keys shorter than the core writes them, where the
//! core's use of their table allows ([`layout`]): keys of `C` and `H` by hash, and the
//! leading id of keys of `J` and `R`; and a contract's tombstone as the empty value.
//! Every key of an operation is mapped with
//! [`stored_key`], every range with [`layout::map_range`], and a scan gives back the
//! keys as the core wrote them.
//!
//! A put-if-absent is a plain `INSERT`: a present key violates the primary key and D1
//! rolls the whole batch back, reporting only that it failed. The adapter then reads
//! which of the batch's put-if-absent keys are present and names the failed one with
//! [`store::first_failed_precondition`].

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use js_sys::Uint8Array;
use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{self, Entry, Op, Scan, Store, WriteBatch, WriteError};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result};

mod layout;

pub use layout::stored_key;
use layout::{StoredRange, map_range, stored_value, value_back};

/// D1 refuses statements with more bound parameters than this.
pub const MAX_BOUND_PARAMETERS: usize = 100;

/// Rows stop joining a multi-row statement once their bound bytes reach this (D1's
/// largest row; a single larger row still goes alone, and D1 judges it).
const MAX_STATEMENT_BYTES: usize = 1_000_000;

/// The node's key-value store in a D1 database.
#[derive(Debug)]
pub struct D1Store {
    db: D1Database,
}

impl D1Store {
    /// The store in `db`, whose schema is `migrations/0001_create_kv.sql`.
    pub fn new(db: D1Database) -> Self {
        D1Store { db }
    }

    /// The entries of the keys present among `keys`, by their [`stored_key`]; values
    /// are left empty unless `with_values`. One batch of `SELECT ... IN` statements.
    async fn select<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k [u8]>,
        with_values: bool,
    ) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, StoreError> {
        let stored: BTreeSet<Cow<'k, [u8]>> = keys.into_iter().map(stored_key).collect();
        let unique: Vec<&[u8]> = stored.iter().map(|key| key.as_ref()).collect();
        if unique.is_empty() {
            return Ok(BTreeMap::new());
        }
        let columns = if with_values { "hex(k) AS k, hex(v) AS v" } else { "hex(k) AS k, '' AS v" };
        let statements = unique
            .chunks(MAX_BOUND_PARAMETERS)
            .map(|chunk| {
                let sql = format!("SELECT {columns} FROM kv WHERE k IN ({})", placeholders(chunk.len()));
                statement(&self.db, &sql, chunk)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let results = self.db.batch(statements).await.map_err(|e| StoreError::new(format!("D1 read: {e}")))?;
        let mut found = BTreeMap::new();
        for result in results {
            let rows: Vec<Row> =
                result.results().map_err(|e| StoreError::new(format!("D1 read: unexpected rows: {e}")))?;
            for row in rows {
                let (key, value) = row.decode()?;
                let value = value_back(&key, value);
                found.insert(key, value);
            }
        }
        Ok(found)
    }

    /// The statements of `batch`, bound.
    fn statements(&self, batch: &WriteBatch) -> Result<Vec<D1PreparedStatement>, StoreError> {
        plan(batch)?
            .iter()
            .map(|planned| {
                let params: Vec<&[u8]> = planned.params.iter().map(|param| param.as_ref()).collect();
                statement(&self.db, &planned.sql, &params)
            })
            .collect()
    }

    /// The database.
    pub fn database(&self) -> &D1Database {
        &self.db
    }

    /// Applies `batch` and then `also` in one transaction (all or nothing), and returns
    /// the results of `also`'s statements. [`Store::write`] is this without `also`.
    pub async fn write_with(
        &self,
        batch: &WriteBatch,
        also: Vec<D1PreparedStatement>,
    ) -> Result<Vec<D1Result>, WriteError> {
        let extra = also.len();
        let mut statements = self.statements(batch)?;
        statements.extend(also);
        if statements.is_empty() {
            return Ok(Vec::new());
        }
        let error = match self.db.batch(statements).await {
            Ok(mut results) => return Ok(results.split_off(results.len().saturating_sub(extra))),
            Err(error) => error,
        };
        let failure = StoreError::new(format!("D1 write: {error}"));
        let guarded: Vec<&[u8]> = batch
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::PutIfAbsent { key, .. } => Some(key.as_slice()),
                _ => None,
            })
            .collect();
        if guarded.is_empty() {
            return Err(failure.into());
        }
        // D1 rolled the batch back, so what is present now is what was present before.
        let present = self.select(guarded, false).await.map_err(|e| {
            StoreError::new(format!("{failure}; then, reading which put-if-absent keys were present: {e}"))
        })?;
        match store::first_failed_precondition(batch, |key| present.contains_key(stored_key(key).as_ref())) {
            Some(key) => Err(WriteError::PreconditionFailed { key }),
            None => Err(failure.into()),
        }
    }
}

impl Store for D1Store {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.select([key], true).await?.remove(stored_key(key).as_ref()))
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let found = self.select(keys.iter().copied(), true).await?;
        Ok(keys.iter().map(|key| found.get(stored_key(key).as_ref()).cloned()).collect())
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        if scan.limit == 0 {
            return Ok(Vec::new());
        }
        let range = map_range(&scan.start, scan.end.as_deref(), true)?;
        let (filter, params) = match &range {
            StoredRange::AsIs => range_filter(&scan.start, scan.end.as_deref()),
            StoredRange::Within { start, end, .. } => range_filter(start, Some(end)),
        };
        let order = if scan.reverse { "DESC" } else { "ASC" };
        let sql = format!("SELECT hex(k) AS k, hex(v) AS v FROM kv{filter} ORDER BY k {order} LIMIT {}", scan.limit);
        let rows: Vec<Row> = statement(&self.db, &sql, &params)?
            .all()
            .await
            .and_then(|result| result.results())
            .map_err(|e| StoreError::new(format!("D1 scan: {e}")))?;
        rows.into_iter()
            .map(|row| row.decode().map(|(key, value)| (range.key_back(key.clone()), value_back(&key, value))))
            .collect()
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        self.write_with(batch, Vec::new()).await.map(drop)
    }

    /// D1 is the database alone and keeps nothing in memory; the worker remembers in
    /// the isolate's memory, in the [`crate::CachedStore`] that wraps this store.
    fn recall(&self, _: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn remember(&self, _: &[u8], _: &[u8]) {}
}

/// A row as selected: key and value in hex (SQLite's `hex()` is upper case).
#[derive(Deserialize)]
struct Row {
    k: String,
    v: String,
}

impl Row {
    fn decode(self) -> Result<Entry, StoreError> {
        Ok((decode_hex(&self.k)?, decode_hex(&self.v)?))
    }
}

fn decode_hex(text: &str) -> Result<Vec<u8>, StoreError> {
    let digit = |c: u8| char::from(c).to_digit(16);
    let bytes = text.as_bytes();
    let decoded: Option<Vec<u8>> = bytes
        .chunks(2)
        .map(|pair| match pair {
            // Two hex digits make at most 255.
            &[hi, lo] => Some((digit(hi)? * 16 + digit(lo)?) as u8),
            _ => None,
        })
        .collect();
    decoded.ok_or_else(|| StoreError::new(format!("D1 answered `{text:.40}`, not hex")))
}

/// One statement of a write batch, before binding.
#[derive(Debug, PartialEq, Eq)]
struct Planned<'a> {
    sql: String,
    params: Vec<Cow<'a, [u8]>>,
}

/// The statements of `batch`, in order, consecutive operations of one kind merged,
/// keys as D1 stores them ([`stored_key`]).
fn plan(batch: &WriteBatch) -> Result<Vec<Planned<'_>>, StoreError> {
    let mut planned = Vec::new();
    let mut pending = Pending::default();
    for op in &batch.ops {
        let (kind, params): (Kind, Vec<Cow<'_, [u8]>>) = match op {
            Op::Put { key, value } => (Kind::Replace, vec![stored_key(key), Cow::Borrowed(stored_value(key, value))]),
            Op::PutIfAbsent { key, value } => {
                (Kind::Insert, vec![stored_key(key), Cow::Borrowed(stored_value(key, value))])
            }
            Op::Delete { key } => (Kind::Delete, vec![stored_key(key)]),
            Op::DeleteRange { start, end } => {
                planned.extend(pending.take());
                let (filter, params) = match map_range(start, end.as_deref(), false)? {
                    StoredRange::AsIs => {
                        let (filter, params) = range_filter(start, end.as_deref());
                        (filter, params.into_iter().map(Cow::Borrowed).collect())
                    }
                    StoredRange::Within { start, end, .. } => {
                        let (filter, params) = range_filter(&start, Some(&end));
                        (filter, params.into_iter().map(|p| Cow::Owned(p.to_vec())).collect())
                    }
                };
                planned.push(Planned { sql: format!("DELETE FROM kv{filter}"), params });
                continue;
            }
        };
        if !pending.admits(kind, &params) {
            planned.extend(pending.take());
        }
        pending.push(kind, params);
    }
    planned.extend(pending.take());
    Ok(planned)
}

/// What a run of merged operations does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `Op::Put`: rows of `INSERT OR REPLACE`.
    Replace,
    /// `Op::PutIfAbsent`: rows of a plain `INSERT`.
    Insert,
    /// `Op::Delete`: keys of a `DELETE ... IN`.
    Delete,
}

/// Operations of one kind waiting to become one statement.
#[derive(Default)]
struct Pending<'a> {
    kind: Option<Kind>,
    params: Vec<Cow<'a, [u8]>>,
    bytes: usize,
}

impl<'a> Pending<'a> {
    /// Whether an operation of `kind` binding `params` can join this statement.
    fn admits(&self, kind: Kind, params: &[Cow<'_, [u8]>]) -> bool {
        let bytes: usize = params.iter().map(|p| p.len()).sum();
        self.kind.is_none()
            || (self.kind == Some(kind)
                && self.params.len() + params.len() <= MAX_BOUND_PARAMETERS
                && self.bytes + bytes <= MAX_STATEMENT_BYTES)
    }

    fn push(&mut self, kind: Kind, params: Vec<Cow<'a, [u8]>>) {
        self.kind = Some(kind);
        self.bytes += params.iter().map(|p| p.len()).sum::<usize>();
        self.params.extend(params);
    }

    /// The statement of the pending operations, if any; starts afresh.
    fn take(&mut self) -> Option<Planned<'a>> {
        let kind = self.kind.take()?;
        let params = std::mem::take(&mut self.params);
        self.bytes = 0;
        let rows = || vec!["(?, ?)"; params.len() / 2].join(", ");
        let sql = match kind {
            Kind::Replace => format!("INSERT OR REPLACE INTO kv (k, v) VALUES {}", rows()),
            Kind::Insert => format!("INSERT INTO kv (k, v) VALUES {}", rows()),
            Kind::Delete => format!("DELETE FROM kv WHERE k IN ({})", placeholders(params.len())),
        };
        Some(Planned { sql, params })
    }
}

/// A `WHERE` clause (with its leading space, or empty) for the keys in
/// `start..end`, and its parameters.
fn range_filter<'a>(start: &'a [u8], end: Option<&'a [u8]>) -> (String, Vec<&'a [u8]>) {
    // Every key is at least the empty key, so an empty start bounds nothing.
    match (start.is_empty(), end) {
        (true, None) => (String::new(), vec![]),
        (true, Some(end)) => (" WHERE k < ?".into(), vec![end]),
        (false, None) => (" WHERE k >= ?".into(), vec![start]),
        (false, Some(end)) => (" WHERE k >= ? AND k < ?".into(), vec![start, end]),
    }
}

/// `?, ?, ...`, `count` times.
fn placeholders(count: usize) -> String {
    vec!["?"; count].join(", ")
}

/// `sql` prepared with `params` bound as BLOBs.
fn statement(db: &D1Database, sql: &str, params: &[&[u8]]) -> Result<D1PreparedStatement, StoreError> {
    let values: Vec<JsValue> = params.iter().map(|param| Uint8Array::from(*param).into()).collect();
    db.prepare(sql)
        .bind(&values)
        .map_err(|e| StoreError::new(format!("D1: binding the parameters of `{sql:.80}`: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(batch: &WriteBatch) -> Vec<(String, usize)> {
        plan(batch)
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.sql.split(" (").next().unwrap_or_default().to_owned(), p.params.len()))
            .collect()
    }

    #[test]
    fn consecutive_operations_of_one_kind_share_a_statement() {
        let mut batch = WriteBatch::new();
        batch
            .put(b"a".to_vec(), b"1".to_vec())
            .put(b"b".to_vec(), b"1".to_vec())
            .put_if_absent(b"c".to_vec(), b"1".to_vec())
            .delete(b"a".to_vec())
            .delete(b"d".to_vec())
            .put(b"e".to_vec(), b"1".to_vec());
        assert_eq!(
            shapes(&batch),
            vec![
                ("INSERT OR REPLACE INTO kv".to_owned(), 4),
                ("INSERT INTO kv".to_owned(), 2),
                ("DELETE FROM kv WHERE k IN".to_owned(), 2),
                ("INSERT OR REPLACE INTO kv".to_owned(), 2),
            ]
        );
        let first = plan(&batch).unwrap_or_default().into_iter().next();
        assert_eq!(first.map(|p| p.sql), Some("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?), (?, ?)".to_owned()));
    }

    #[test]
    fn statements_stay_within_the_bound_parameter_limit() {
        let mut batch = WriteBatch::new();
        for i in 0..120u32 {
            batch.put(i.to_be_bytes().to_vec(), b"v".to_vec());
        }
        for i in 0..150u32 {
            batch.delete(i.to_be_bytes().to_vec());
        }
        let counts: Vec<usize> = plan(&batch).unwrap_or_default().iter().map(|p| p.params.len()).collect();
        assert_eq!(counts, vec![100, 100, 40, 100, 50]);
    }

    #[test]
    fn large_values_split_statements_by_bytes() {
        let mut batch = WriteBatch::new();
        for key in [b"a", b"b", b"c"] {
            batch.put(key.to_vec(), vec![0; 400_000]);
        }
        batch.put(b"d".to_vec(), vec![0; 2 * MAX_STATEMENT_BYTES]);
        let counts: Vec<usize> = plan(&batch).unwrap_or_default().iter().map(|p| p.params.len()).collect();
        assert_eq!(counts, vec![4, 2, 2]);
    }

    #[test]
    fn range_deletes_bound_only_what_they_must() {
        let mut batch = WriteBatch::new();
        batch
            .put(b"a".to_vec(), b"1".to_vec())
            .delete_range(Vec::new(), None)
            .delete_range(Vec::new(), Some(b"m".to_vec()))
            .delete_range(b"m".to_vec(), None)
            .delete_range(b"m".to_vec(), Some(b"n".to_vec()));
        let sql: Vec<String> = plan(&batch).unwrap_or_default().into_iter().skip(1).map(|p| p.sql).collect();
        assert_eq!(
            sql,
            vec![
                "DELETE FROM kv",
                "DELETE FROM kv WHERE k < ?",
                "DELETE FROM kv WHERE k >= ?",
                "DELETE FROM kv WHERE k >= ? AND k < ?",
            ]
        );
    }

    #[test]
    fn hex_from_sqlite_decodes_and_garbage_is_refused() {
        assert_eq!(decode_hex("00FFa07F"), Ok(vec![0x00, 0xff, 0xa0, 0x7f]));
        assert_eq!(decode_hex(""), Ok(vec![]));
        assert!(decode_hex("0").is_err());
        assert!(decode_hex("zz").is_err());
    }

    #[test]
    fn an_empty_batch_plans_nothing() {
        assert_eq!(plan(&WriteBatch::new()), Ok(vec![]));
    }

    #[test]
    fn writes_store_keys_shorter_and_ranges_into_part_of_a_hashed_table_are_refused() {
        let contract =
            ledger_node_core::storage::keys::Key::new(ledger_node_core::storage::keys::CONTRACT).str("c").into_bytes();
        let mut batch = WriteBatch::new();
        batch.put(contract.clone(), b"{}".to_vec()).delete(contract.clone());
        let params: Vec<Vec<u8>> =
            plan(&batch).unwrap_or_default().iter().flat_map(|p| p.params.iter().map(|k| k.to_vec())).collect();
        let stored = stored_key(&contract).to_vec();
        assert_eq!(params, vec![stored.clone(), b"{}".to_vec(), stored]);

        let mut partial = WriteBatch::new();
        partial.delete_range(b"Hz".to_vec(), Some(b"J".to_vec()));
        assert!(plan(&partial).is_err());
    }
}
