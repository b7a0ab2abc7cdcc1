//! The keyspace: how the node lays its state out in the ordered key-value store.
//!
//! A key is a one-byte table tag followed by its components, each encoded so that
//! byte order equals component order: strings are escaped (`0x00` becomes `0x00 0xff`)
//! and end with `0x00 0x01`, so no string's key is a prefix of another's; signed
//! integers are 8 bytes big-endian with the sign bit flipped.
//!
//! Each table declares how the core reads it and whether its values change, in
//! [`TABLES`] (the table below says the same, and a test keeps the two in step). The
//! declaration is a promise backends may build on: the worker stores the keys of some
//! tables shorter and keeps immutable bodies outside its database because of it, and
//! [`crate::storage::store::MemoryStore`], which every core test runs on, refuses what breaks it
//! ([`crate::storage::store::access`]). The `read` column is the [`Access`]:
//!
//! - `point`: read one key at a time, never scanned ([`Access::Point`]);
//! - `within` and the leading components: scanned only within the keys that share the
//!   tag and those components, `J migration synchronizer` for example
//!   ([`Access::ScanWithin`]);
//! - `scan`: scanned over any range ([`Access::Scan`]).
//!
//! `immutable` values never change once written: a put writes the value the key holds
//! or a new key, and keys go only with the whole table (the reset's delete of
//! everything).
//!
//! | tag | key | value | written by | read | values |
//! |---|---|---|---|---|---|
//! | `G` | `G` generation | empty; the last key is the ingest generation | every guarded commit: ingest batches, the tick's pages ([`crate::storage::commit`]) | scan | mutable |
//! | `H` | `H` update_id | hash (BLAKE3, tagged) of the created events' blobs, the part of the ingest form the `protobuf_json` body leaves out ([`crate::state::ledger::updates`]) | ingest | point | immutable |
//! | `U` | `U` update_id encoding | `[body][kind]`: the pre-rendered `GET /v2/updates` body in one encoding | ingest | point | immutable |
//! | `C` | `C` contract_id | [`crate::state::ledger::ContractRecord`] (JSON, its own reader and writer) | ingest: created and consuming exercised events | point | mutable |
//! | `R` | `R` contract_id | the highest reassignment counter held, whether its assignment is held, and that assignment's target synchronizer ([`crate::state::ledger::contracts::Reassigned`]) | ingest: reassignment events, folded | point | mutable |
//! | `P` | `P` synchronizer party | hosting participant ids (JSON array), or for a hosting a follower learned `{"participant_ids", "learned_at"}` ([`crate::state::network::StoredHosting`]) | topology records | scan | mutable |
//! | `S` | `S` synchronizer | empty | updates and topology records naming a synchronizer | point | immutable |
//! | `B` | `B` migration | backfill completeness (JSON) | backfill records | scan | mutable |
//! | `L` | `L` | the planned roll-forward upgrade (JSON) | roll_forward_lsu records | point | mutable |
//! | `W` | `W` user_id | party id | wallet_user records | point | mutable |
//! | `E` | `E` round kind | empty | ingest: a non-import creation of the round's open (0) or closed (1) round ([`crate::state::rounds`]) | point | immutable |
//! | `Q` | `Q` round | empty | ingest: rounds with both creations held | scan | immutable |
//! | `D` | `D` round contract_id | the contract as listed | ingest: active closed rounds | scan | mutable |
//! | `V` | `V` sv created_at contract_id | the contract as listed | ingest: active price votes ([`crate::state::votes`]) | scan | mutable |
//! | `A` | `A` kind created_at contract_id | the synchronizer it was created on, the contract as listed | ingest: active contracts of the templates a validator and a wallet read ([`crate::state::scan`]) | within kind | mutable |
//! | `F` | `F` index key created_at contract_id | as under `A` | ingest: the same contracts by a party or name of their payload ([`crate::state::scan`]) | within index | mutable |
//! | `0x74` | `0x74` sender nonce created_at contract_id | the contract as listed and its status (JSON) | ingest: transfer commands, created or archived ([`crate::state::scan::transfer_commands`]) | within sender nonce | mutable |
//! | `0x72` | `0x72` kind | the ids of the contracts the token registry chooses from (JSON): kind 0 the active coin rules, external party coin rules, external party config states and open rounds, kind 1 the active featured app rights by provider | ingest: those contracts, created or archived ([`crate::state::registry`]) | point | mutable |
//! | `0x73` | `0x73` | the sums of the coin's balance changes by round and the latest closed round (JSON) | ingest: balance changes and closed rounds ([`crate::state::registry::supply`]) | point | mutable |
//! | `0x62` | `0x62` contract_id | the contract whose choice contexts disclose it (a locked coin's) and when its blob was last sought (JSON) | ingest: active contracts a read renders with a blob, held without one, and `blob` records ([`crate::state::blobs`]) | scan | mutable |
//! | `M` | `M` migration synchronizer | record time range, synchronizer id | ingest: non-import updates ([`crate::state::migrations`]) | within migration | mutable |
//! | `N` | `N` migration | record time range | ingest: non-import updates | scan | mutable |
//! | `I` | `I` migration update_id | update id | ingest: import updates | scan | immutable |
//! | `K` | `K` migration record_time update_id | empty | ingest: non-import updates, in stream order ([`crate::api::history`]) | scan | immutable |
//! | `J` | `J` migration synchronizer record_time update_id | empty | ingest: non-import updates, per synchronizer ([`crate::api::history`]) | within migration synchronizer | immutable |
//! | `O` | `O` period_hours migration | first snapshot time | ingest: non-import updates ([`crate::state::snapshots`]) | within period_hours | mutable |
//! | `X` | `X` user_id tracking_id | buy-traffic request (JSON) | wallet submissions (the tracking-id claim), ingest outcomes, the tick ([`crate::state::wallet::record`]) | scan | mutable |
//! | `Y` | `Y` contract_id | the request's `X` key | wallet submissions | point | immutable |
//! | `Z` | `Z` status (expires_at) user_id tracking_id | the request's `X` key | wallet submissions, ingest outcomes, the tick | within status | mutable |
//! | `0x00` | `0x00 layout` | the keyspace's layout version ([`crate::storage::layout`]) | the first check of a store holding no data, the reset | point | mutable |
//! | `0xff` | scratch | the storage contract's keys and values | the storage check ([`crate::api::admin::SCRATCH_PREFIX`]) | scan | mutable |

use alloc::string::String;
use alloc::vec::Vec;

/// The ingest generation.
pub const GENERATION: u8 = b'G';
/// Update content hashes by id.
pub const UPDATE_HASH: u8 = b'H';
/// Updates by id, in their binary form.
pub const UPDATE: u8 = b'U';
/// Contracts by id.
pub const CONTRACT: u8 = b'C';
/// Reassignment events by contract.
pub const REASSIGNMENT: u8 = b'R';

/// Participants hosting a party on a synchronizer.
pub const HOSTING: u8 = b'P';
/// Synchronizers the node knows.
pub const SYNCHRONIZER: u8 = b'S';
/// Backfill completeness per migration.
pub const BACKFILL: u8 = b'B';
/// The planned roll-forward upgrade.
pub const ROLL_FORWARD: u8 = b'L';
/// Onboarded wallet users.
pub const WALLET_USER: u8 = b'W';

/// Round creations seen, by round and kind.
pub const ROUND_SEEN: u8 = b'E';
/// Rounds whose open and closed creations are both held.
pub const ROUND_COMPLETE: u8 = b'Q';
/// Active closed rounds by round number.
pub const CLOSED_ROUND: u8 = b'D';
/// Active price votes by SV and creation time.
pub const PRICE_VOTE: u8 = b'V';
/// Active contracts a validator and a wallet read, by kind and creation time.
pub const SCAN_CONTRACT: u8 = b'A';
/// Those contracts by a party or name of their payload.
pub const SCAN_LOOKUP: u8 = b'F';
/// Transfer commands and their statuses, by sender and nonce (`t`: every capital is taken).
pub const TRANSFER_COMMAND: u8 = b't';
/// The contracts the token registry chooses from, by role (`r`).
pub const REGISTRY: u8 = b'r';
/// The coin's total supply (`s`).
pub const SUPPLY: u8 = b's';
/// Contracts held without the blob a read shows them with (`b`).
pub const BLOB_SOUGHT: u8 = b'b';
/// Record time range per migration and synchronizer.
pub const SYNCHRONIZER_RANGE: u8 = b'M';
/// Record time range per migration.
pub const MIGRATION_RANGE: u8 = b'N';
/// Import updates per migration.
pub const IMPORT_UPDATE: u8 = b'I';
/// Non-import updates in stream order: by migration, record time and id.
pub const STREAM: u8 = b'K';
/// Non-import updates per migration and synchronizer, by record time and id.
pub const SYNCHRONIZER_STREAM: u8 = b'J';
/// First snapshot per snapshot period and migration.
pub const FIRST_SNAPSHOT: u8 = b'O';

/// Buy-traffic requests by user and tracking id.
pub const WALLET_REQUEST: u8 = b'X';
/// Buy-traffic requests by contract id.
pub const WALLET_CONTRACT: u8 = b'Y';
/// Buy-traffic requests by status (created ones by expiry).
pub const WALLET_INDEX: u8 = b'Z';

/// The layout version and the names a store was ingested under ([`crate::storage::layout`]).
pub const LAYOUT: u8 = 0x00;
/// The storage check's scratch space (`crate::api::admin::SCRATCH_PREFIX`).
pub const SCRATCH: u8 = 0xff;

/// How the core reads a table's keys (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read one key at a time ([`crate::storage::store::Store::get`] and `get_many`), never scanned.
    Point,
    /// Scanned only within the keys that share the tag and the leading components
    /// `prefix` (their encodings, in key order), and otherwise read one key at a time.
    ScanWithin {
        /// The encodings of the leading components a scan stays within.
        prefix: &'static [Component],
    },
    /// Scanned over any range.
    Scan,
}

/// How a key component is encoded ([`Key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// A string ([`Key::str`]).
    Str,
    /// A signed integer ([`Key::i64`]).
    I64,
    /// A single byte ([`Key::byte`]).
    Byte,
}

impl Component {
    /// How many bytes the component takes at the start of `bytes`; `None` when they do
    /// not start with a whole one.
    pub fn len_in(self, bytes: &[u8]) -> Option<usize> {
        match self {
            Component::I64 => (bytes.len() >= 8).then_some(8),
            Component::Byte => (!bytes.is_empty()).then_some(1),
            Component::Str => {
                let mut at = 0;
                loop {
                    at += bytes.get(at..)?.iter().position(|b| *b == 0)?;
                    match bytes.get(at + 1)? {
                        0x01 => return Some(at + 2),
                        0xff => at += 2,
                        _ => return None,
                    }
                }
            }
        }
    }
}

/// One table of the keyspace: its tag, what it holds, and how the core uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// The first byte of every key of the table.
    pub tag: u8,
    /// What the table holds, for messages.
    pub name: &'static str,
    /// How the core reads it.
    pub access: Access,
    /// Whether a value never changes once written (see the [module docs](self)).
    pub immutable: bool,
}

impl Table {
    /// The prefix of `key` (of this table) that a scan starting at `key` must stay
    /// within: the tag and the leading components of [`Access::ScanWithin`]; `None`
    /// when the table is not so read or `key` does not hold those components whole.
    pub fn scan_prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        let Access::ScanWithin { prefix } = self.access else { return None };
        if key.first() != Some(&self.tag) {
            return None;
        }
        let mut at = 1;
        for component in prefix {
            at += component.len_in(key.get(at..)?)?;
        }
        key.get(..at)
    }
}

/// Every table of the keyspace, in the order of the table in the [module docs](self).
pub const TABLES: &[Table] = {
    use Access::{Point, Scan, ScanWithin};
    use Component::{Byte, I64, Str};
    const fn table(tag: u8, name: &'static str, access: Access, immutable: bool) -> Table {
        Table { tag, name, access, immutable }
    }
    &[
        table(GENERATION, "ingest generations", Scan, false),
        table(UPDATE_HASH, "update hashes", Point, true),
        table(UPDATE, "update forms", Point, true),
        table(CONTRACT, "contracts", Point, false),
        table(REASSIGNMENT, "reassignments", Point, false),
        table(HOSTING, "hosting participants", Scan, false),
        table(SYNCHRONIZER, "synchronizers", Point, true),
        table(BACKFILL, "backfill completeness", Scan, false),
        table(ROLL_FORWARD, "the planned roll-forward upgrade", Point, false),
        table(WALLET_USER, "wallet users", Point, false),
        table(ROUND_SEEN, "round creations seen", Point, true),
        table(ROUND_COMPLETE, "rounds with both creations", Scan, true),
        table(CLOSED_ROUND, "active closed rounds", Scan, false),
        table(PRICE_VOTE, "active price votes", Scan, false),
        table(SCAN_CONTRACT, "contracts a validator and a wallet read", ScanWithin { prefix: &[Byte] }, false),
        table(SCAN_LOOKUP, "those contracts by party or name", ScanWithin { prefix: &[Byte] }, false),
        table(TRANSFER_COMMAND, "transfer commands by sender and nonce", ScanWithin { prefix: &[Str, I64] }, false),
        table(REGISTRY, "the registry's contracts by role", Point, false),
        table(SUPPLY, "the coin's total supply", Point, false),
        table(BLOB_SOUGHT, "contracts waiting for a blob", Scan, false),
        table(SYNCHRONIZER_RANGE, "record time ranges per synchronizer", ScanWithin { prefix: &[I64] }, false),
        table(MIGRATION_RANGE, "record time ranges per migration", Scan, false),
        table(IMPORT_UPDATE, "import updates", Scan, true),
        table(STREAM, "the update stream", Scan, true),
        table(SYNCHRONIZER_STREAM, "the update stream per synchronizer", ScanWithin { prefix: &[I64, Str] }, true),
        table(FIRST_SNAPSHOT, "first snapshots", ScanWithin { prefix: &[Byte] }, false),
        table(WALLET_REQUEST, "buy-traffic requests", Scan, false),
        table(WALLET_CONTRACT, "buy-traffic requests by contract", Point, true),
        table(WALLET_INDEX, "buy-traffic requests by status", ScanWithin { prefix: &[Byte] }, false),
        table(LAYOUT, "the layout version", Point, false),
        table(SCRATCH, "the scratch space", Scan, false),
    ]
};

/// The table of `tag`, if the keyspace has one. A `const fn`, so that a backend can
/// check at compile time what it builds on.
pub const fn table(tag: u8) -> Option<&'static Table> {
    let mut rest = TABLES;
    while let [table, tail @ ..] = rest {
        if table.tag == tag {
            return Some(table);
        }
        rest = tail;
    }
    None
}

/// Builds an order-preserving key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key(Vec<u8>);

impl Key {
    /// A key of table `tag`.
    pub fn new(tag: u8) -> Self {
        let mut bytes = Vec::with_capacity(48);
        bytes.push(tag);
        Key(bytes)
    }

    /// Appends a string component.
    pub fn str(mut self, s: &str) -> Self {
        // Ids rarely hold a 0x00: copy the runs between them whole, and a string
        // without one at once.
        self.0.reserve(s.len() + 2);
        if !s.as_bytes().contains(&0) {
            self.0.extend_from_slice(s.as_bytes());
            self.0.extend_from_slice(&[0x00, 0x01]);
            return self;
        }
        let mut runs = s.as_bytes().split(|b| *b == 0);
        if let Some(first) = runs.next() {
            self.0.extend_from_slice(first);
        }
        for run in runs {
            self.0.extend_from_slice(&[0x00, 0xff]);
            self.0.extend_from_slice(run);
        }
        self.0.extend_from_slice(&[0x00, 0x01]);
        self
    }

    /// Appends a signed integer component.
    pub fn i64(mut self, n: i64) -> Self {
        self.0.extend_from_slice(&((n as u64) ^ (1 << 63)).to_be_bytes());
        self
    }

    /// Appends a single byte.
    pub fn byte(mut self, b: u8) -> Self {
        self.0.push(b);
        self
    }

    /// The key's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The key's bytes, borrowed.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The string component [`Key::str`] encoded at the start of `bytes`, and the bytes
/// after it; `None` when they do not start with one.
pub fn decode_str(bytes: &[u8]) -> Option<(String, &[u8])> {
    let mut out = Vec::with_capacity(bytes.len().min(64));
    let mut rest = bytes;
    loop {
        let zero = rest.iter().position(|b| *b == 0)?;
        let (run, tail) = rest.split_at(zero);
        out.extend_from_slice(run);
        match tail.get(1)? {
            0x01 => return Some((String::from_utf8(out).ok()?, tail.get(2..)?)),
            0xff => out.push(0),
            _ => return None,
        }
        rest = tail.get(2..)?;
    }
}

/// The signed integer encoded by [`Key::i64`] at `bytes[at..at + 8]`.
pub fn decode_i64(bytes: &[u8], at: usize) -> Option<i64> {
    let raw: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some((u64::from_be_bytes(raw) ^ (1 << 63)) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_components_keep_order_and_never_prefix_each_other() {
        let words = ["", "a", "a\0", "a\0b", "ab", "b"];
        let keys: Vec<Vec<u8>> = words.iter().map(|w| Key::new(b'X').str(w).str("tail").into_bytes()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        let a = Key::new(b'X').str("a").into_bytes();
        let ab = Key::new(b'X').str("ab").into_bytes();
        assert!(!ab.starts_with(&a));
    }

    #[test]
    fn zero_bytes_in_strings_are_escaped() {
        assert_eq!(Key::new(b'X').str("\0a\0\0b\0").into_bytes(), b"X\0\xffa\0\xff\0\xffb\0\xff\0\x01");
        assert_eq!(Key::new(b'X').str("").into_bytes(), b"X\0\x01");
    }

    #[test]
    fn string_components_decode_back() {
        let key = Key::new(b'X').str("a\0b").str("").str("tail").into_bytes();
        let (first, rest) = decode_str(&key[1..]).unwrap();
        assert_eq!(first, "a\0b");
        let (second, rest) = decode_str(rest).unwrap();
        assert_eq!(second, "");
        assert_eq!(decode_str(rest), Some((String::from("tail"), &[][..])));
        assert_eq!(decode_str(b"no terminator"), None);
        assert_eq!(decode_str(b"bad\0\x02"), None);
    }

    /// The cells of each row of the table in the module docs.
    fn doc_rows() -> Vec<Vec<&'static str>> {
        include_str!("keys.rs")
            .lines()
            .filter(|line| line.starts_with("//! | `"))
            .map(|line| line.trim_start_matches("//! | ").trim_end_matches(" |").split(" | ").collect())
            .collect()
    }

    #[test]
    fn the_documented_table_says_what_the_declaration_declares() {
        let rows = doc_rows();
        assert_eq!(rows.len(), TABLES.len(), "one row a table");
        for (row, table) in rows.iter().zip(TABLES) {
            let [tag, key, _value, _written_by, read, values] = row.as_slice() else {
                panic!("a row of six cells: {row:?}")
            };
            let tag = tag.trim_matches('`');
            let declared = if table.tag.is_ascii_uppercase() {
                String::from(char::from(table.tag))
            } else {
                alloc::format!("0x{:02x}", table.tag)
            };
            assert_eq!(tag, declared, "tables in the same order");
            let words: Vec<&str> = key.split(' ').skip(1).collect();
            let documented = match table.access {
                Access::Point => String::from("point"),
                Access::Scan => String::from("scan"),
                Access::ScanWithin { prefix } => {
                    let components = words.get(..prefix.len()).expect("the key names the prefix's components");
                    alloc::format!("within {}", components.join(" "))
                }
            };
            assert_eq!(*read, documented, "table {tag}");
            assert_eq!(*values, if table.immutable { "immutable" } else { "mutable" }, "table {tag}");
        }
        let mut tags: Vec<u8> = TABLES.iter().map(|table| table.tag).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), TABLES.len(), "one declaration a tag");
        assert_eq!(crate::storage::layout::KEY.first(), Some(&LAYOUT));
        assert_eq!(crate::storage::layout::NAMES_KEY.first(), Some(&LAYOUT));
    }

    #[test]
    fn a_scan_prefix_is_the_tag_and_the_leading_components_whole() {
        let stream = table(SYNCHRONIZER_STREAM).unwrap();
        let key = Key::new(SYNCHRONIZER_STREAM).i64(3).str("s\0y").i64(7).str("u").into_bytes();
        let prefix = Key::new(SYNCHRONIZER_STREAM).i64(3).str("s\0y").into_bytes();
        assert_eq!(stream.scan_prefix(&key), Some(prefix.as_slice()));
        assert_eq!(stream.scan_prefix(&prefix), Some(prefix.as_slice()));
        assert_eq!(stream.scan_prefix(&prefix[..prefix.len() - 1]), None, "an unfinished string");
        assert_eq!(stream.scan_prefix(&Key::new(SYNCHRONIZER_STREAM).i64(3).into_bytes()), None);
        assert_eq!(stream.scan_prefix(&Key::new(STREAM).i64(3).str("s").into_bytes()), None, "another table");
        assert_eq!(table(CONTRACT).unwrap().scan_prefix(&Key::new(CONTRACT).str("c").into_bytes()), None);
    }

    #[test]
    fn integers_sort_numerically() {
        let numbers = [i64::MIN, -2, -1, 0, 1, 255, 256, i64::MAX];
        let keys: Vec<Vec<u8>> = numbers.iter().map(|n| Key::new(b'X').i64(*n).into_bytes()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        for (n, key) in numbers.iter().zip(&keys) {
            assert_eq!(decode_i64(key, 1), Some(*n));
        }
    }
}
