//! A write's bodies, compressed into one buffer that is kept from write to write.
//!
//! A large value goes to `bodies` compressed: its length (4 bytes, little-endian), then
//! an LZ4 block. A write compresses all of its bodies before it inserts the first, so
//! that they can be appended in the order that fills pages ([`super::pack`]).
//! Compressed one at a time into vectors of their own, every body cost LZ4 a new hash
//! table, an output vector sized for the worst case and then shrunk (a copy), and a
//! batch's vectors went back to the allocator at its end, their pages to be faulted in
//! again by the next batch. [`Compressor`] keeps one output buffer and one hash table.

use std::fmt;
use std::ops::Range;

use lz4_flex::block::{CompressTable, compress_into_with_table, get_maximum_output_size};

/// The compressed bodies of one write, and the space to compress the next write's in.
#[derive(Default)]
pub struct Compressor {
    /// The compressed bodies, one after another. Its length only grows (to the largest
    /// write's bodies, plus one worst case), so that a write rarely zeroes new space,
    /// up to [`KEPT_BYTES`]: a larger buffer is let go when the next write starts.
    buffer: Vec<u8>,
    /// Each body's bytes in `buffer`, in the order they were added.
    spans: Vec<Range<usize>>,
    /// LZ4's hash table for inputs under 64 KiB, cleared by each use.
    small: CompressTable,
    /// The table for larger inputs, made when the first one comes.
    large: Option<CompressTable>,
}

impl fmt::Debug for Compressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compressor")
            .field("buffer_bytes", &self.buffer.len())
            .field("bodies", &self.spans.len())
            .finish_non_exhaustive()
    }
}

/// Bytes of the length that precedes a body's LZ4 block.
const LENGTH_BYTES: usize = 4;

/// The most buffer space kept from one write to the next. The bodies of a write of
/// `ledger-node ingest` (a group of two 24 MiB batches of lines at most, as a rule)
/// compress to under this; a larger write (the HTTP ingest endpoint takes up to 64 MiB)
/// does not leave a server holding its buffer for good.
pub const KEPT_BYTES: usize = 48 * 1024 * 1024;

impl Compressor {
    /// Forgets the bodies of the last write, keeping the space they took unless it is
    /// over [`KEPT_BYTES`].
    pub fn clear(&mut self) {
        self.spans.clear();
        if self.buffer.len() > KEPT_BYTES {
            self.buffer = Vec::new();
        }
    }

    /// Compresses `value` after the bodies added since [`Compressor::clear`].
    pub fn add(&mut self, value: &[u8]) -> Result<(), String> {
        let length = u32::try_from(value.len()).map_err(|_| format!("a body of {} bytes is too large", value.len()))?;
        let start = self.spans.last().map_or(0, |span| span.end);
        let block = start + LENGTH_BYTES;
        let end = block + get_maximum_output_size(value.len());
        if self.buffer.len() < end {
            self.buffer.resize(end, 0);
        }
        let table = if value.len() < usize::from(u16::MAX) {
            &mut self.small
        } else {
            self.large.get_or_insert_with(CompressTable::large)
        };
        let written = compress_into_with_table(value, &mut self.buffer[block..end], table)
            .map_err(|e| format!("compressing a body: {e}"))?;
        self.buffer[start..block].copy_from_slice(&length.to_le_bytes());
        self.spans.push(start..block + written);
        Ok(())
    }

    /// The compressed bodies added since [`Compressor::clear`], in order.
    pub fn bodies(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.spans.iter().map(|span| &self.buffer[span.clone()])
    }

    /// The `n`th body added since [`Compressor::clear`].
    pub fn body(&self, n: usize) -> &[u8] {
        &self.buffer[self.spans[n].clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_back_as_the_values_they_compress() {
        let mut compressor = Compressor::default();
        let values: Vec<Vec<u8>> = vec![
            b"{\"record\":{\"fields\":[]}}".repeat(40),
            vec![],
            (0..70_000u32).map(|n| (n % 251) as u8).collect(), // over 64 KiB: the large table
            b"short".to_vec(),
        ];
        for round in 0..2 {
            compressor.clear();
            for value in values.iter().skip(round) {
                compressor.add(value).expect("compressed");
            }
            let bodies: Vec<&[u8]> = compressor.bodies().collect();
            assert_eq!(bodies.len(), values.len() - round);
            for (n, (body, value)) in bodies.iter().zip(values.iter().skip(round)).enumerate() {
                assert_eq!(compressor.body(n), *body);
                assert_eq!(lz4_flex::block::decompress_size_prepended(body).expect("decompressed"), *value);
            }
        }
    }

    #[test]
    fn the_buffer_is_kept_from_write_to_write() {
        let mut compressor = Compressor::default();
        compressor.add(&[7; 10_000]).expect("compressed");
        let kept = compressor.buffer.len();
        compressor.clear();
        compressor.add(&[8; 100]).expect("compressed");
        assert_eq!(compressor.buffer.len(), kept);
        assert_eq!(compressor.bodies().count(), 1);
    }

    #[test]
    fn a_buffer_over_the_bound_is_let_go() {
        let mut compressor = Compressor::default();
        let large: Vec<u8> = (0..KEPT_BYTES + 1).map(|n| (n % 251) as u8).collect();
        compressor.add(&large).expect("compressed");
        assert!(compressor.buffer.len() > KEPT_BYTES);
        compressor.clear();
        assert_eq!(compressor.buffer.capacity(), 0);
        compressor.add(b"small").expect("compressed");
        assert_eq!(compressor.bodies().count(), 1);
    }
}
