//! The keyspace's access rules ([`crate::storage::keys::TABLES`]) checked against a store's
//! operations, as the worker's store enforces them (it stores keys shorter, and bodies
//! elsewhere, on their strength). [`MemoryStore`](super::MemoryStore) refuses what
//! [`scan`] or [`write()`] refuses, so a core change that breaks a rule fails the core's
//! own tests.
//!
//! A range *meets* a table when some key of the table could lie in it, and *covers* it
//! when every key could. For each table a range meets:
//!
//! - a scan of a [`Point`](Access::Point) table is refused, whatever else it covers;
//! - a scan of a [`ScanWithin`](Access::ScanWithin) table must start at a key that holds
//!   the leading components whole and end within the keys that share them;
//! - a range delete must cover the table, or stay within one such prefix of a table
//!   scanned within one whose values may change. The reset's delete of everything
//!   covers every table.
//!
//! And an [immutable](crate::storage::keys::Table::immutable) table takes no delete of a key and no
//! put of a value other than the one its key holds. Keys of no table (no tag in
//! [`TABLES`]) are not checked.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Op, Scan, StoreError, WriteBatch, prefix_end};
use crate::storage::keys::{Access, TABLES, Table};

/// Whether the core may scan `scan` (see the [module docs](self)).
pub fn scan(scan: &Scan) -> Result<(), StoreError> {
    let (start, end) = (scan.start.as_slice(), scan.end.as_deref());
    for table in TABLES.iter().filter(|table| meets(table.tag, start, end)) {
        let allowed = match table.access {
            Access::Point => false,
            Access::ScanWithin { .. } => within_one_prefix(table, start, end),
            Access::Scan => true,
        };
        if !allowed {
            return Err(refused(table, true, start, end));
        }
    }
    Ok(())
}

/// Whether the core may write `batch` onto a store whose keys hold `held` (see the
/// [module docs](self)).
pub fn write<'h>(batch: &WriteBatch, held: impl Fn(&[u8]) -> Option<&'h [u8]>) -> Result<(), StoreError> {
    // What the batch has done so far to keys of immutable tables, and the ranges it
    // deleted.
    let mut written: BTreeMap<&[u8], Option<&[u8]>> = BTreeMap::new();
    let mut deleted: Vec<(&[u8], Option<&[u8]>)> = Vec::new();
    for op in &batch.ops {
        match op {
            Op::Put { key, value } | Op::PutIfAbsent { key, value } => {
                let Some(table) = immutable(key) else { continue };
                let now = match written.get(key.as_slice()) {
                    Some(now) => *now,
                    None if deleted.iter().any(|(start, end)| in_range(key, start, *end)) => None,
                    None => held(key),
                };
                // A put-if-absent of a present key fails its precondition and writes nothing.
                if let (Op::Put { .. }, Some(now)) = (op, now)
                    && now != value.as_slice()
                {
                    return Err(StoreError::new(format!(
                        "table {} ({}) is immutable: refused a put of another value under {}",
                        tag(table.tag),
                        table.name,
                        show(key)
                    )));
                }
                written.insert(key, Some(value));
            }
            Op::Delete { key } => {
                if let Some(table) = immutable(key) {
                    return Err(StoreError::new(format!(
                        "table {} ({}) is immutable: refused a delete of {}",
                        tag(table.tag),
                        table.name,
                        show(key)
                    )));
                }
            }
            Op::DeleteRange { start, end } => {
                let end = end.as_deref();
                for table in TABLES.iter().filter(|table| meets(table.tag, start, end)) {
                    let allowed = covers(table.tag, start, end)
                        || !table.immutable
                            && match table.access {
                                Access::Point => false,
                                Access::ScanWithin { .. } => within_one_prefix(table, start, end),
                                Access::Scan => true,
                            };
                    if !allowed {
                        return Err(refused(table, false, start, end));
                    }
                }
                for (_, now) in written.iter_mut().filter(|(key, _)| in_range(key, start, end)) {
                    *now = None;
                }
                deleted.push((start, end));
            }
        }
    }
    Ok(())
}

/// The immutable table of `key`, if it is of one.
fn immutable(key: &[u8]) -> Option<&'static Table> {
    crate::storage::keys::table(*key.first()?).filter(|table| table.immutable)
}

fn in_range(key: &[u8], start: &[u8], end: Option<&[u8]>) -> bool {
    key >= start && end.is_none_or(|end| key < end)
}

/// Whether `start..end` meets the table of `tag`: some key of it could lie in it.
fn meets(tag: u8, start: &[u8], end: Option<&[u8]>) -> bool {
    let table_end = prefix_end(&[tag]);
    table_end.as_deref().is_none_or(|table_end| start < table_end) && end.is_none_or(|end| end > [tag].as_slice())
}

/// Whether `start..end` covers the table of `tag`: every key of it lies in it.
fn covers(tag: u8, start: &[u8], end: Option<&[u8]>) -> bool {
    start <= [tag].as_slice()
        && match (end, prefix_end(&[tag])) {
            (None, _) => true,
            (Some(end), Some(table_end)) => end >= table_end.as_slice(),
            (Some(_), None) => false,
        }
}

/// Whether `start..end` lies within the keys that share one scan prefix of `table`:
/// `start` holds the prefix whole, and `end` holds the same one or is its end.
fn within_one_prefix(table: &Table, start: &[u8], end: Option<&[u8]>) -> bool {
    let (Some(prefix), Some(end)) = (table.scan_prefix(start), end) else { return false };
    end.starts_with(prefix) || prefix_end(prefix).as_deref() == Some(end)
}

/// The error of a range the rules of `table` refuse.
fn refused(table: &Table, scanned: bool, start: &[u8], end: Option<&[u8]>) -> StoreError {
    let rule = match (table.access, scanned, table.immutable) {
        (Access::Point, true, _) => "is read one key at a time, never scanned",
        (Access::ScanWithin { .. }, true, _) => "is scanned only within the keys that share its leading components",
        (_, false, true) => "is immutable: a range delete must cover it whole",
        (Access::Point, false, false) => "is read one key at a time: a range delete must cover it whole",
        (Access::ScanWithin { .. }, false, false) => {
            "is scanned only within the keys that share its leading components: a range delete must cover it \
             whole or stay within one such prefix"
        }
        (Access::Scan, _, _) => "takes any range",
    };
    let what = if scanned { "scan" } else { "delete" };
    let end = end.map_or_else(|| String::from("the end of the keyspace"), show);
    StoreError::new(format!(
        "table {} ({}) {rule}; refused the {what} of {}..{end}",
        tag(table.tag),
        table.name,
        show(start)
    ))
}

/// A table's tag as the keyspace's docs write it.
fn tag(tag: u8) -> String {
    if tag.is_ascii_uppercase() { String::from(char::from(tag)) } else { format!("0x{tag:02x}") }
}

/// `key`, its bytes outside printable ASCII written `\xNN`.
fn show(key: &[u8]) -> String {
    let mut shown = String::with_capacity(key.len() + 2);
    shown.push('"');
    for &byte in key {
        if (byte.is_ascii_graphic() && byte != b'\\' && byte != b'"') || byte == b' ' {
            shown.push(char::from(byte));
        } else {
            shown.push_str(&format!("\\x{byte:02x}"));
        }
    }
    shown.push('"');
    shown
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;
    use crate::storage::exec::block_on;
    use crate::storage::keys::{self, Key};
    use crate::storage::store::{MemoryStore, Store, WriteError};

    fn stream(synchronizer: &str, record_time: i64) -> Key {
        Key::new(keys::SYNCHRONIZER_STREAM).i64(0).str(synchronizer).i64(record_time)
    }

    fn refusal(result: Result<Vec<crate::storage::store::Entry>, StoreError>) -> String {
        match result {
            Err(e) => e.to_string(),
            Ok(entries) => panic!("the scan was allowed and read {} entries", entries.len()),
        }
    }

    #[test]
    fn a_scan_of_a_point_table_is_refused_naming_the_table_and_the_range() {
        let store = MemoryStore::new();
        let contracts = Key::new(keys::CONTRACT).into_bytes();
        let error = refusal(block_on(store.scan(&Scan::prefix(&contracts, 10))));
        assert_eq!(
            error,
            "table C (contracts) is read one key at a time, never scanned; refused the scan of \"C\"..\"D\""
        );
        // A scan of everything reads the point tables too.
        let everything = Scan { start: Vec::new(), end: None, limit: 10, reverse: false };
        let error = refusal(block_on(store.scan(&everything)));
        assert!(error.starts_with("table H (update hashes) is read one key at a time"), "{error}");
        assert!(error.ends_with("refused the scan of \"\"..the end of the keyspace"), "{error}");
    }

    #[test]
    fn a_scan_across_prefixes_of_a_prefix_scanned_table_is_refused_naming_the_table() {
        let store = MemoryStore::new();
        let one = stream("sync-1", 5).into_bytes();
        let other = stream("sync-2", 5).into_bytes();
        let error =
            refusal(block_on(store.scan(&Scan { start: one.clone(), end: Some(other), limit: 10, reverse: false })));
        assert!(error.starts_with("table J (the update stream per synchronizer) is scanned only within"), "{error}");
        assert!(error.contains("refused the scan of \"J\\x80"), "{error}");
        let migration = Key::new(keys::SYNCHRONIZER_STREAM).i64(0).into_bytes();
        refusal(block_on(store.scan(&Scan::prefix(&migration, 10))));
        refusal(block_on(store.scan(&Scan { start: one.clone(), end: None, limit: 10, reverse: false })));

        // Within one synchronizer: from a record time to another, or to its end.
        let synchronizer = Key::new(keys::SYNCHRONIZER_STREAM).i64(0).str("sync-1").into_bytes();
        let to_time =
            Scan { start: one.clone(), end: Some(stream("sync-1", 9).into_bytes()), limit: 10, reverse: true };
        assert_eq!(block_on(store.scan(&to_time)), Ok(vec![]));
        assert_eq!(block_on(store.scan(&Scan::prefix(&synchronizer, 10))), Ok(vec![]));
        // Tables scanned over any range, and keys of no table.
        assert_eq!(block_on(store.scan(&Scan::prefix(&[keys::STREAM], 10))), Ok(vec![]));
        assert_eq!(block_on(store.scan(&Scan::prefix(b"a", 10))), Ok(vec![]));
    }

    #[test]
    fn an_immutable_value_is_never_replaced_and_goes_only_with_everything() {
        let store = MemoryStore::new();
        let body = Key::new(keys::UPDATE).str("tx-1").into_bytes();
        let write = |ops: &[Op]| block_on(store.write(&WriteBatch { ops: ops.to_vec() }));
        let put = |value: &[u8]| Op::Put { key: body.clone(), value: value.to_vec() };
        assert_eq!(write(&[put(b"one")]), Ok(()));
        assert_eq!(write(&[put(b"one")]), Ok(()), "the same value again");
        let Err(WriteError::Store(e)) = write(&[put(b"two")]) else { panic!("another value was put") };
        assert_eq!(
            e.to_string(),
            "table U (update forms) is immutable: refused a put of another value under \"Utx-1\\x00\\x01\""
        );
        assert!(write(&[Op::Delete { key: body.clone() }]).is_err());
        let part = Op::DeleteRange { start: body.clone(), end: Some(b"V".to_vec()) };
        assert!(write(&[part]).is_err());
        assert_eq!(store.get_now(&body), Some(b"one".to_vec()), "every refused batch wrote nothing");
        // The reset: everything goes, and the key may then take any value.
        let everything = Op::DeleteRange { start: Vec::new(), end: None };
        assert_eq!(write(&[everything.clone(), put(b"two")]), Ok(()));
        assert_eq!(write(&[everything, put(b"three"), put(b"three")]), Ok(()));
        assert_eq!(store.get_now(&body), Some(b"three".to_vec()));
    }

    #[test]
    fn a_range_delete_covers_a_point_table_whole_or_misses_it() {
        let store = MemoryStore::new();
        let delete = |start: &[u8], end: Option<&[u8]>| {
            let mut batch = WriteBatch::new();
            batch.delete_range(start.to_vec(), end.map(<[u8]>::to_vec));
            block_on(store.write(&batch))
        };
        assert_eq!(delete(b"C", Some(b"D")), Ok(()));
        assert_eq!(delete(b"A", Some(b"C")), Ok(()));
        assert!(delete(b"C", Some(b"C\x01")).is_err());
        // Within one prefix of a table scanned within one, or anywhere in one scanned freely.
        let kind = Key::new(keys::SCAN_CONTRACT).byte(3).into_bytes();
        assert_eq!(delete(&kind, prefix_end(&kind).as_deref()), Ok(()));
        assert_eq!(delete(b"D\x00", Some(b"D\x05")), Ok(()));
    }
}
