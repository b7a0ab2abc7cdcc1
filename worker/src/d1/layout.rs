//! How D1 stores the core's keys: shorter than the core writes them, where the
//! core's use of a table allows. Bookkeeping only, no I/O: the tests run natively.
//!
//! Once bodies are in R2, most of what D1 holds is a few rows per update whose keys
//! repeat long ids (an update id is 68 characters, a contract id 104, a synchronizer
//! id about 90). D1 shortens the keys of the tables where that pays ([`SHORTENED`]:
//! `C` contracts, `H` update hashes, `J` the update stream per synchronizer, `R`
//! reassignments), each as the core's declaration of how it reads the table allows
//! ([`ledger_node_core::storage::keys::TABLES`]; the build fails when it allows neither):
//!
//! - **Hashed keys**, for a table the core reads one key at a time, never scanned
//!   (`C`, `H`, `R`). D1 stores such a key as its tag and the first [`HASHED_KEY_BYTES`]
//!   bytes of the BLAKE3 hash of the rest: 17 bytes instead of 71 or 107.
//! - **A hashed leading id**, for a table the core scans only within a prefix that ends
//!   in a string: `J migration synchronizer` of `J migration synchronizer record_time
//!   update_id`. D1 stores that string
//!   component as [`COMPONENT_HASH_BYTES`] bytes of its hash; the order within the
//!   prefix is unchanged, and a scan gives the component back from its own bounds.
//!
//! And one value is stored shorter: a contract's tombstone
//! ([`ledger_node_core::state::ledger::contracts::TOMBSTONE`], most of a long history's
//! contracts) is stored as the empty value, which no other value of `C` is (a record is
//! a JSON object) ([`stored_value`], [`value_back`]).
//!
//! Every operation on one key maps it ([`stored_key`]). A range ([`map_range`]) is
//! kept as it is when it misses these tables or covers them whole (the reset's delete
//! of everything), is mapped when it stays within one prefix of a table with a hashed
//! leading id, and is refused otherwise: D1 could not give its keys back.

use std::borrow::Cow;

use ledger_node_core::model::error::StoreError;
use ledger_node_core::state::ledger::contracts::TOMBSTONE;
use ledger_node_core::storage::keys::{self, Access, Component, Table};
use ledger_node_core::storage::store::prefix_end;

/// How many bytes of a BLAKE3 hash stand for the rest of a hashed key.
pub const HASHED_KEY_BYTES: usize = 16;

/// How many bytes of a BLAKE3 hash stand for a hashed leading id.
pub const COMPONENT_HASH_BYTES: usize = 8;

/// How D1 shortens the keys of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortening {
    /// The key after the tag, by hash.
    Hashed,
    /// The string that ends the table's scan prefix, by hash, after the components
    /// `before` it.
    LeadingId {
        /// The encodings of the components between the tag and the string.
        before: &'static [Component],
    },
}

/// The tables whose keys D1 stores shorter, and how.
const SHORTENED: [(u8, Shortening); 4] = [
    shortened(keys::CONTRACT),
    shortened(keys::UPDATE_HASH),
    shortened(keys::SYNCHRONIZER_STREAM),
    shortened(keys::REASSIGNMENT),
];

/// The table of `tag` and how D1 shortens its keys, from how the core reads it.
#[expect(
    clippy::panic,
    reason = "evaluated at compile time only: a table whose reads allow no shortening fails the build"
)]
const fn shortened(tag: u8) -> (u8, Shortening) {
    match keys::table(tag) {
        Some(Table { access: Access::Point, .. }) => (tag, Shortening::Hashed),
        Some(Table { access: Access::ScanWithin { prefix: [before @ .., Component::Str] }, .. }) => {
            (tag, Shortening::LeadingId { before })
        }
        _ => panic!("D1 shortens a table that the core scans other than within a prefix ending in a string"),
    }
}

/// How D1 shortens the keys of the table of `tag`, if it does.
fn shortening(tag: u8) -> Option<Shortening> {
    SHORTENED.iter().find(|(table, _)| *table == tag).map(|(_, shortening)| *shortening)
}

/// The first `n` bytes of the BLAKE3 hash of `bytes`.
fn hash(bytes: &[u8], n: usize) -> impl Iterator<Item = u8> {
    let hash = blake3::hash(bytes);
    (*hash.as_bytes()).into_iter().take(n)
}

/// A key of a table with a hashed leading id, split: the tag and the bytes before the component,
/// the component (as encoded, terminator included), and the rest.
struct Split<'a> {
    head: &'a [u8],
    component: &'a [u8],
    tail: &'a [u8],
}

impl<'a> Split<'a> {
    /// `key` split, if it is of a table with a hashed leading id and holds the whole
    /// component.
    fn of(key: &'a [u8]) -> Option<Self> {
        let Some(Shortening::LeadingId { before }) = shortening(*key.first()?) else { return None };
        let mut at = 1;
        for component in before {
            at += component.len_in(key.get(at..)?)?;
        }
        let (head, after) = key.split_at_checked(at)?;
        let (_, tail) = keys::decode_str(after)?;
        let component = after.get(..after.len().checked_sub(tail.len())?)?;
        Some(Split { head, component, tail })
    }

    /// The prefix D1 stores for the head and component.
    fn stored_prefix(&self) -> Vec<u8> {
        let mut stored = Vec::with_capacity(self.head.len() + COMPONENT_HASH_BYTES + self.tail.len());
        stored.extend_from_slice(self.head);
        stored.extend(hash(self.component, COMPONENT_HASH_BYTES));
        stored
    }

    /// The whole key as D1 stores it.
    fn stored(&self) -> Vec<u8> {
        let mut stored = self.stored_prefix();
        stored.extend_from_slice(self.tail);
        stored
    }

    /// The prefix every key of this head and component starts with.
    fn prefix(&self) -> Vec<u8> {
        [self.head, self.component].concat()
    }
}

/// `key` as D1 stores it (see the module docs).
pub fn stored_key(key: &[u8]) -> Cow<'_, [u8]> {
    match key.split_first() {
        Some((tag, rest)) if shortening(*tag) == Some(Shortening::Hashed) => {
            let mut stored = Vec::with_capacity(1 + HASHED_KEY_BYTES);
            stored.push(*tag);
            stored.extend(hash(rest, HASHED_KEY_BYTES));
            Cow::Owned(stored)
        }
        _ => match Split::of(key) {
            Some(split) => Cow::Owned(split.stored()),
            None => Cow::Borrowed(key),
        },
    }
}

/// The value under `key` as D1 stores it: a contract's tombstone as the empty value,
/// any other value as it is.
pub fn stored_value<'v>(key: &[u8], value: &'v [u8]) -> &'v [u8] {
    if key.first() == Some(&keys::CONTRACT) && value == TOMBSTONE { &[] } else { value }
}

/// A value found in D1 under `stored_key`, as the core wrote it.
pub fn value_back(stored_key: &[u8], value: Vec<u8>) -> Vec<u8> {
    if stored_key.first() == Some(&keys::CONTRACT) && value.is_empty() { TOMBSTONE.to_vec() } else { value }
}

/// A range of keys as D1 stores it.
#[derive(Debug, PartialEq, Eq)]
pub enum StoredRange {
    /// The same range: it misses every table D1 stores otherwise, or covers them.
    AsIs,
    /// The range within one prefix of a table with a hashed leading id, mapped: keys found in it
    /// are given back with [`StoredRange::key_back`].
    Within {
        /// The mapped start.
        start: Vec<u8>,
        /// The mapped end.
        end: Vec<u8>,
        /// The prefix of the keys as the core writes them.
        prefix: Vec<u8>,
        /// The length of the prefix as D1 stores it.
        stored_prefix_len: usize,
    },
}

impl StoredRange {
    /// A key found in D1 in this range, as the core wrote it.
    pub fn key_back(&self, stored: Vec<u8>) -> Vec<u8> {
        match self {
            StoredRange::AsIs => stored,
            StoredRange::Within { prefix, stored_prefix_len, .. } => {
                [prefix.as_slice(), stored.get(*stored_prefix_len..).unwrap_or_default()].concat()
            }
        }
    }
}

/// Where `start..end` (of one table or many) meets the table of `tag`: not at all,
/// all of it, or part of it.
fn meets(tag: u8, start: &[u8], end: Option<&[u8]>) -> (bool, bool) {
    let table_start = [tag];
    let table_end = prefix_end(&table_start);
    let reaches = table_end.as_deref().is_none_or(|table_end| start < table_end)
        && end.is_none_or(|end| end > table_start.as_slice());
    let covers = start <= table_start.as_slice()
        && match (end, &table_end) {
            (None, _) => true,
            (Some(end), Some(table_end)) => end >= table_end.as_slice(),
            (Some(_), None) => false,
        };
    (reaches, covers)
}

/// `start..end` as D1 stores it (see the module docs); `scanned` when its keys are to
/// be read back, which a range over a whole table D1 stores otherwise cannot be.
pub fn map_range(start: &[u8], end: Option<&[u8]>, scanned: bool) -> Result<StoredRange, StoreError> {
    let refused = |tag: u8| {
        StoreError::new(format!(
            "D1 stores the keys of table {} shortened: a range must stay within one of its prefixes, \
             or cover all of it without reading it",
            char::from(tag)
        ))
    };
    for (tag, shortening) in SHORTENED {
        match (shortening, meets(tag, start, end)) {
            (_, (false, _)) => {}
            (_, (true, true)) if !scanned => {}
            (Shortening::Hashed, _) | (Shortening::LeadingId { .. }, (true, true)) => return Err(refused(tag)),
            (Shortening::LeadingId { .. }, (true, false)) => {
                return within(start, end).ok_or_else(|| refused(tag));
            }
        }
    }
    Ok(StoredRange::AsIs)
}

/// `start..end` mapped, if both bounds lie within one prefix of a table with a hashed
/// leading id:
/// the start holds the whole component, and the end holds the same one or is the end
/// of its prefix.
fn within(start: &[u8], end: Option<&[u8]>) -> Option<StoredRange> {
    let from = Split::of(start)?;
    let prefix = from.prefix();
    let stored_prefix = from.stored_prefix();
    let end = end?;
    let end = if prefix_end(&prefix).as_deref() == Some(end) {
        prefix_end(&stored_prefix)?
    } else {
        let to = Split::of(end)?;
        if to.head != from.head || to.component != from.component {
            return None;
        }
        to.stored()
    };
    Some(StoredRange::Within { start: from.stored(), end, prefix, stored_prefix_len: stored_prefix.len() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_node_core::storage::keys::Key;

    fn stream(synchronizer: &str, record_time: i64, update_id: &str) -> Vec<u8> {
        Key::new(keys::SYNCHRONIZER_STREAM).i64(0).str(synchronizer).i64(record_time).str(update_id).into_bytes()
    }

    #[test]
    fn the_tables_d1_shortens_are_shortened_as_the_core_reads_them() {
        // What D1 holds: a change here changes the keys of every stored database.
        assert_eq!(shortening(keys::CONTRACT), Some(Shortening::Hashed));
        assert_eq!(shortening(keys::UPDATE_HASH), Some(Shortening::Hashed));
        assert_eq!(
            shortening(keys::SYNCHRONIZER_STREAM),
            Some(Shortening::LeadingId { before: &[Component::I64] }),
            "the synchronizer, after the migration"
        );
        assert_eq!(shortening(keys::REASSIGNMENT), Some(Shortening::Hashed), "one record a contract");
        for table in keys::TABLES.iter().filter(|table| shortening(table.tag).is_none()) {
            let key = [table.tag, b'k', 0x00, 0x01];
            assert_eq!(stored_key(&key), Cow::Borrowed(key.as_slice()), "table {} as it is", table.name);
        }
    }

    #[test]
    fn contract_and_update_hash_keys_are_stored_by_hash() {
        let contract = Key::new(keys::CONTRACT).str(&"00ab".repeat(26)).into_bytes();
        let held = Key::new(keys::UPDATE_HASH).str(&"1220".repeat(17)).into_bytes();
        let reassigned = Key::new(keys::REASSIGNMENT).str(&"00cd".repeat(26)).into_bytes();
        for key in [&contract, &held, &reassigned] {
            let stored = stored_key(key);
            assert_eq!(stored.len(), 1 + HASHED_KEY_BYTES);
            assert_eq!(stored.first(), key.first(), "the tag stays");
            assert_eq!(stored, stored_key(key), "the same key, the same stored key");
        }
        assert_ne!(stored_key(&contract).get(1..), stored_key(&held).get(1..));
        let position = Key::new(keys::STREAM).i64(0).str("u").into_bytes();
        assert_eq!(stored_key(&position), Cow::Borrowed(position.as_slice()), "other tables as they are");
    }

    #[test]
    fn the_synchronizer_of_a_stream_key_is_stored_by_hash_and_the_order_within_it_kept() {
        let keys =
            [stream("global::1220ab", 5, "b"), stream("global::1220ab", 7, "a"), stream("global::1220ab", 7, "b")];
        let stored: Vec<Vec<u8>> = keys.iter().map(|key| stored_key(key).into_owned()).collect();
        let mut sorted = stored.clone();
        sorted.sort();
        assert_eq!(stored, sorted);
        let head = 1 + 8 + COMPONENT_HASH_BYTES;
        let component = "global::1220ab".len() + 2;
        assert_eq!(stored.first().map(Vec::len), keys.first().map(|k| k.len() - component + COMPONENT_HASH_BYTES));
        let record_time = Key::new(0).i64(5).into_bytes();
        assert_eq!(stored.first().and_then(|k| k.get(head..head + 8)), record_time.get(1..), "then the rest as it is");
    }

    #[test]
    fn a_scan_within_one_synchronizer_is_mapped_and_gives_its_keys_back() {
        let prefix = Key::new(keys::SYNCHRONIZER_STREAM).i64(0).str("global::1220ab");
        let start = prefix.clone().i64(3).into_bytes();
        let end = prefix.clone().i64(9).into_bytes();
        let range = map_range(&start, Some(&end), true).unwrap_or(StoredRange::AsIs);
        let key = stream("global::1220ab", 7, "a");
        let stored = stored_key(&key).into_owned();
        let within = |range: &StoredRange, stored: &Vec<u8>| matches!(range, StoredRange::Within { start, end, .. } if start <= stored && stored < end);
        assert!(within(&range, &stored), "the key stays within the mapped range: {range:?}");
        assert_eq!(range.key_back(stored), key);
    }

    #[test]
    fn ranges_are_kept_refused_or_mapped_by_what_they_reach() {
        let as_is = |start: &[u8], end: Option<&[u8]>, scanned| map_range(start, end, scanned) == Ok(StoredRange::AsIs);
        // The reset deletes everything; ranges beside the shortened tables.
        assert!(as_is(b"", None, false));
        assert!(as_is(b"K", Some(b"L"), true));
        assert!(as_is(b"D", Some(b"H"), true));
        assert!(as_is(&[0xff, b's'], Some(&[0xff, b't']), true));
        // A whole table is deleted but never read.
        assert!(as_is(b"C", Some(b"D"), false));
        assert!(map_range(b"", None, true).is_err());
        assert!(map_range(b"C", Some(b"D"), true).is_err());
        // Part of a hashed table; a stream range over two synchronizers or none whole.
        assert!(map_range(b"C", Some(b"C\x01"), false).is_err());
        assert!(map_range(b"Ha", None, true).is_err());
        let one = stream("s1", 0, "a");
        let other = stream("s2", 0, "a");
        assert!(map_range(&one, Some(&other), true).is_err());
        let migration = Key::new(keys::SYNCHRONIZER_STREAM).i64(0).into_bytes();
        assert!(map_range(&migration, prefix_end(&migration).as_deref(), true).is_err());
        assert!(map_range(&one, None, true).is_err());
    }

    #[test]
    fn a_tombstone_is_stored_empty_and_read_back_whole() {
        let contract = stored_key(&Key::new(keys::CONTRACT).str("00ab").into_bytes()).into_owned();
        assert_eq!(stored_value(&contract, TOMBSTONE), b"");
        assert_eq!(value_back(&contract, Vec::new()), TOMBSTONE);
        let record = br#"{"template_id":"p:M:T","payload":{},"created_at":"2024-01-01T00:00:00.000000Z","synchronizer_id":"s","import":false,"package_name":"p"}"#;
        assert_eq!(stored_value(&contract, record), record, "other records as they are");
        assert_eq!(value_back(&contract, record.to_vec()), record);
        let stream = stored_key(&stream("s", 0, "u")).into_owned();
        assert_eq!(stored_value(&stream, TOMBSTONE), TOMBSTONE, "other tables as they are");
        assert_eq!(value_back(&stream, Vec::new()), b"");
    }
}
