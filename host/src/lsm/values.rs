//! How a value is kept in the tree: values of [`COMPRESS_FROM`] bytes or more
//! LZ4-compressed by the writer, before it takes the store's write lock, and every
//! other value as it is.
//!
//! Left to fjall, values are compressed when an in-memory table is written out to blob
//! files, on its one background thread, which also merges, and writers are held back
//! while sealed tables wait for it. Compressed by the thread that commits the batch (in
//! a bulk load, a component instance's), they reach the journal and the in-memory table
//! at about a third of their raw size: a third as much journal to write, a third as
//! many in-memory tables to write out, and nothing to compress on fjall's thread.
//!
//! A stored value is empty (the empty value) or one tag byte and a body:
//!
//! | tag | body |
//! |---|---|
//! | `0` | the value |
//! | `1` | its length (4 bytes, little-endian), then its LZ4 block |
//!
//! A value that LZ4 does not shorten is kept as it is.

use std::borrow::Cow;

use fjall::Slice;
use ledger_node_core::model::error::StoreError;

use crate::backend::OpRef;

/// Values this long or longer are compressed: shorter ones, index entries and
/// hashes above all, gain too little to pay for it.
pub(super) const COMPRESS_FROM: usize = 512;

/// The tag of a value kept as it is.
const RAW: u8 = 0;

/// The tag of an LZ4-compressed value.
const LZ4: u8 = 1;

/// The length prefix of a compressed value's body.
const LENGTH_BYTES: usize = 4;

/// The values of a batch's operations as they are stored, one fjall [`Slice`] each,
/// made from the compressor's buffer in one copy: the batch's write hands them to
/// fjall as they are, so a value is copied once between LZ4 and the journal, and no
/// buffer of the whole batch is allocated (tens of megabytes a bulk-load batch, whose
/// pages the system would map afresh for every batch).
pub(super) struct Encoded {
    values: Vec<Option<Slice>>,
}

impl Encoded {
    /// Encodes the values of `ops`.
    pub(super) fn new(ops: &[OpRef<'_>]) -> Self {
        let mut compressor = Compressor::default();
        Encoded { values: ops.iter().map(|op| op.value().map(|value| compressor.encode(value))).collect() }
    }

    /// The stored value of operation `index`; empty for an operation without one.
    pub(super) fn value(&self, index: usize) -> Slice {
        self.values.get(index).cloned().flatten().unwrap_or_else(Slice::empty)
    }

    /// The bytes of the stored values.
    pub(super) fn bytes(&self) -> usize {
        self.values.iter().flatten().map(|value| value.len()).sum()
    }
}

/// Encodes the values of one batch, reusing from one value to the next LZ4's hash
/// table and the block it compresses into. LZ4 writes into an initialized buffer: the
/// block is zeroed once, at the largest size the batch needs, rather than at each
/// value's bound, and the hash table is cleared rather than allocated again.
#[derive(Default)]
struct Compressor {
    table: lz4_flex::block::CompressTable,
    block: Vec<u8>,
}

impl Compressor {
    /// `value` as stored.
    fn encode(&mut self, value: &[u8]) -> Slice {
        if value.is_empty() {
            return Slice::empty();
        }
        if value.len() >= COMPRESS_FROM
            && let Ok(length) = u32::try_from(value.len())
        {
            let bound = lz4_flex::block::get_maximum_output_size(value.len());
            if self.block.len() < bound {
                self.block.resize(bound, 0);
            }
            if let Ok(written) = lz4_flex::block::compress_into_with_table(value, &mut self.block, &mut self.table)
                && LENGTH_BYTES + written < value.len()
            {
                let [a, b, c, d] = length.to_le_bytes();
                return stored(&[LZ4, a, b, c, d], &self.block[..written]);
            }
        }
        stored(&[RAW], value)
    }
}

/// The stored value `header` then `body`, in one allocation.
fn stored(header: &[u8], body: &[u8]) -> Slice {
    let mut parts = std::io::Read::chain(header, body);
    Slice::from_reader(&mut parts, header.len() + body.len()).expect("reading from memory cannot fail")
}

/// The value `stored` holds.
pub(super) fn decode(stored: &[u8]) -> Result<Cow<'_, [u8]>, StoreError> {
    let Some((&tag, body)) = stored.split_first() else {
        return Ok(Cow::Borrowed(stored));
    };
    match tag {
        RAW => Ok(Cow::Borrowed(body)),
        LZ4 => {
            let corrupt = || StoreError::new("store: a compressed value is corrupt");
            let (length, block) = body.split_first_chunk::<LENGTH_BYTES>().ok_or_else(corrupt)?;
            let length = usize::try_from(u32::from_le_bytes(*length)).map_err(|_| corrupt())?;
            let mut value = vec![0; length];
            match lz4_flex::block::decompress_into(block, &mut value) {
                Ok(written) if written == length => Ok(Cow::Owned(value)),
                _ => Err(corrupt()),
            }
        }
        tag => Err(StoreError::new(format!("store: a value of an unknown encoding (tag {tag})"))),
    }
}

/// `len` bytes that LZ4 cannot shorten, from `seed` (xorshift).
#[cfg(test)]
pub(super) fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: &[u8]) -> Vec<u8> {
        let stored = Encoded::new(&[OpRef::Put { key: b"k", value }]).value(0);
        assert_eq!(decode(&stored).expect("a value"), value);
        stored.to_vec()
    }

    #[test]
    fn values_read_back_as_written_compressed_when_it_pays() {
        assert_eq!(round_trip(b""), b"");
        assert_eq!(round_trip(b"short"), b"\0short");
        let long = br#"{"contract_id":"00ab","payload":{"round":"1"}}"#.repeat(40);
        let stored = round_trip(&long);
        assert_eq!(stored[0], LZ4);
        assert!(stored.len() < long.len() / 4, "{} bytes for {}", stored.len(), long.len());
        // Noise LZ4 cannot shorten is kept as it is.
        assert_eq!(round_trip(&noise(2_000, 1))[0], RAW);
    }

    #[test]
    fn each_value_of_a_batch_is_encoded_alone() {
        // The compressor's block and table carry over from one value to the next: a
        // long value after a short one, a short after a long, noise between them.
        let text = |n: usize| format!("{{\"round\":{n},\"payload\":\"abc\"}}").repeat(n).into_bytes();
        let values = [text(20), text(200), noise(3_000, 2), text(30), b"short".to_vec(), text(25)];
        let ops: Vec<OpRef<'_>> = values.iter().map(|value| OpRef::Put { key: b"k", value }).collect();
        let encoded = Encoded::new(&ops);
        let stored: Vec<Slice> = (0..ops.len()).map(|i| encoded.value(i)).collect();
        for (value, stored) in values.iter().zip(&stored) {
            assert_eq!(decode(stored).expect("a value"), value.as_slice());
        }
        let tags: Vec<u8> = stored.iter().map(|s| s[0]).collect();
        assert_eq!(tags, [LZ4, LZ4, RAW, LZ4, RAW, LZ4]);
        // Each value compresses as it would alone.
        assert_eq!(&*stored[3], round_trip(&values[3]).as_slice());
    }

    #[test]
    fn deletes_keep_their_place_among_the_values() {
        let ops = [
            OpRef::Put { key: b"a", value: b"1" },
            OpRef::Delete { key: b"b" },
            OpRef::PutIfAbsent { key: b"c", value: b"" },
            OpRef::DeleteRange { start: b"d", end: None },
            OpRef::Put { key: b"e", value: b"5" },
        ];
        let encoded = Encoded::new(&ops);
        let stored: Vec<Option<&[u8]>> = encoded.values.iter().map(|v| v.as_deref()).collect();
        assert_eq!(stored, [Some(&b"\x001"[..]), None, Some(b""), None, Some(b"\x005")]);
        assert_eq!(encoded.bytes(), 4);
    }

    #[test]
    fn a_corrupt_or_unknown_value_is_an_error() {
        assert!(decode(&[LZ4, 9, 0]).is_err());
        assert!(decode(&[LZ4, 200, 0, 0, 0, 0x10, b'x']).is_err());
        let error = decode(&[7, 1]).expect_err("an unknown tag").to_string();
        assert!(error.contains("unknown encoding (tag 7)"), "{error}");
    }
}
