//! The keyspace: how the node lays its state out in the ordered key-value store.
//!
//! A key is a one-byte table tag followed by its components, each encoded so that
//! byte order equals component order: strings are escaped (`0x00` becomes `0x00 0xff`)
//! and end with `0x00 0x01`, so no string's key is a prefix of another's; signed
//! integers are 8 bytes big-endian with the sign bit flipped.
//!
//! | tag | key | value | written by |
//! |---|---|---|---|
//! | `G` | `G` generation | empty; the last key is the ingest generation | every guarded commit: ingest batches, the tick's pages ([`crate::storage::commit`]) |
//! | `H` | `H` update_id | hash (BLAKE3, tagged) of the created events' blobs, the part of the ingest form the `protobuf_json` body leaves out ([`crate::state::ledger::updates`]) | ingest |
//! | `U` | `U` update_id encoding | `[body][kind]`: the pre-rendered `GET /v2/updates` body in one encoding | ingest |
//! | `C` | `C` contract_id | [`crate::state::ledger::ContractRecord`] (JSON) | ingest: created and consuming exercised events |
//! | `T` | `T` qualified_template contract_id | empty | ingest: active contracts by template (`Module.Path:Entity`) |
//! | `R` | `R` contract_id counter kind | synchronizer id | ingest: reassignment events (kind 0 unassign, 1 assign) |
//! | `P` | `P` synchronizer party | hosting participant ids (JSON array) | topology records |
//! | `S` | `S` synchronizer | empty | updates and topology records naming a synchronizer |
//! | `B` | `B` migration | backfill completeness (JSON) | backfill records |
//! | `L` | `L` | the planned roll-forward upgrade (JSON) | roll_forward_lsu records |
//! | `W` | `W` user_id | party id | wallet_user records |
//! | `E` | `E` round kind | empty | ingest: a non-import creation of the round's open (0) or closed (1) round ([`crate::state::rounds`]) |
//! | `Q` | `Q` round | empty | ingest: rounds with both creations held |
//! | `D` | `D` round contract_id | the contract as listed | ingest: active closed rounds |
//! | `V` | `V` sv created_at contract_id | the contract as listed | ingest: active price votes ([`crate::state::votes`]) |
//! | `M` | `M` migration synchronizer | record time range, synchronizer id | ingest: non-import updates ([`crate::state::migrations`]) |
//! | `N` | `N` migration | record time range | ingest: non-import updates |
//! | `I` | `I` migration update_id | update id | ingest: import updates |
//! | `K` | `K` migration record_time update_id | empty | ingest: non-import updates, in stream order ([`crate::api::history`]) |
//! | `J` | `J` migration synchronizer record_time update_id | empty | ingest: non-import updates, per synchronizer ([`crate::api::history`]) |
//! | `O` | `O` period_hours migration | first snapshot time | ingest: non-import updates ([`crate::state::snapshots`]) |
//! | `X` | `X` user_id tracking_id | buy-traffic request (JSON) | wallet submissions (the tracking-id claim), ingest outcomes, the tick ([`crate::state::wallet::record`]) |
//! | `Y` | `Y` contract_id | the request's `X` key | wallet submissions |
//! | `Z` | `Z` status (expires_at) user_id tracking_id | the request's `X` key | wallet submissions, ingest outcomes, the tick |
//! | `0x00` | `0x00 layout` | the keyspace's layout version ([`crate::storage::layout`]) | the first check of a store holding no data, the reset |
//! | `0xff` | scratch | | the storage check ([`crate::api::admin::SCRATCH_PREFIX`]) |

use alloc::string::String;
use alloc::vec::Vec;

/// The ingest generation.
pub const GENERATION: u8 = b'G';
/// Update content hashes by id.
pub const UPDATE_HASH: u8 = b'H';
/// Update bodies by id and encoding.
pub const UPDATE: u8 = b'U';
/// Contracts by id.
pub const CONTRACT: u8 = b'C';
/// Active contracts by qualified template name.
pub const TEMPLATE: u8 = b'T';
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
