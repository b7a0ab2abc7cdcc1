//! The order a write batch appends its bodies in, so that they fill `bodies`' pages.
//!
//! `bodies` is a rowid table that only grows at its end, and SQLite puts an appended
//! row on the last leaf page if it fits and on a new page if not. In input order, a
//! 2.5 KB body after a page already holding 2 KB opened a new page and left the 2 KB
//! unused: a quarter of `bodies` was empty space, written to the log, checkpointed and
//! kept. Appending a batch's bodies page by page, as best-fit decreasing bin packing
//! groups them, fills the pages. Row ids follow the new order; nothing reads bodies in
//! row id order, and the `kv` rows name each body by its id.

use std::cmp::Reverse;
use std::collections::BTreeSet;

/// The bytes of a leaf page of `page_bytes` that cells and their pointers can use (a
/// page less its 8-byte header).
pub fn page_cell_bytes(page_bytes: usize) -> usize {
    page_bytes.saturating_sub(8)
}

/// The bytes a body of `len` bytes takes in a leaf page: the record (`len` and a 4-byte
/// header), the cell's payload size and row id varints (at most 3 and 4 bytes for the
/// sizes and row ids of a store up to a few hundred million rows) and the 2-byte cell
/// pointer.
pub fn cell_bytes(len: usize) -> usize {
    len + 4 + 3 + 4 + 2
}

/// The order to append bodies of sizes `sizes` (in bytes, as [`cell_bytes`] counts
/// them) in: indices into `sizes`, page by page, each page's bodies fitting in
/// `page_cell_bytes` ([`page_cell_bytes`]) as far as their sizes allow.
pub fn append_order(sizes: &[usize], page_cell_bytes: usize) -> Vec<usize> {
    // Stable: bodies of one size keep their input order.
    let mut largest_first: Vec<usize> = (0..sizes.len()).collect();
    largest_first.sort_by_key(|&at| Reverse(sizes[at]));
    // Pages by the space they have left, then their number; each page's bodies.
    let mut open: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut pages: Vec<Vec<usize>> = Vec::new();
    for at in largest_first {
        let size = sizes[at];
        let best = open.range((size, 0)..).next().copied();
        let (left, page) = match best {
            Some(key) => {
                open.remove(&key);
                key
            }
            None => {
                pages.push(Vec::new());
                (page_cell_bytes, pages.len() - 1)
            }
        };
        pages[page].push(at);
        if let Some(left) = left.checked_sub(size) {
            open.insert((left, page));
        }
    }
    pages.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cell bytes of a 4 KiB page, which the demo's bodies fill a few to a page.
    const PAGE_CELL_BYTES: usize = 4096 - 8;

    /// Pages used when appending `sizes` in `order`, as SQLite fills the last page.
    fn pages_used(sizes: &[usize], order: impl Iterator<Item = usize>) -> usize {
        let (mut pages, mut left) = (0, 0);
        for at in order {
            if sizes[at] > left {
                pages += 1;
                left = PAGE_CELL_BYTES;
            }
            left = left.saturating_sub(sizes[at]);
        }
        pages
    }

    #[test]
    fn every_body_is_appended_once_and_pages_fill() {
        // Sizes like the demo's compressed bodies: many of 0.5 to 1.5 KB, many of 2 to 3 KB.
        let mut seed = 7u64;
        let sizes: Vec<usize> = (0..5_000)
            .map(|n| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let spread = (seed >> 33) as usize % 1000;
                cell_bytes(if n % 3 == 0 { 2000 + spread } else { 500 + spread })
            })
            .collect();
        let order = append_order(&sizes, PAGE_CELL_BYTES);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..sizes.len()).collect::<Vec<_>>(), "each body exactly once");

        let total: usize = sizes.iter().sum();
        let least = total.div_ceil(PAGE_CELL_BYTES);
        let packed = pages_used(&sizes, order.into_iter());
        let in_input_order = pages_used(&sizes, 0..sizes.len());
        assert!(packed * 100 <= least * 103, "{packed} pages, at least {least}");
        assert!(packed * 100 < in_input_order * 90, "{packed} pages against {in_input_order} in input order");
    }

    #[test]
    fn a_body_larger_than_a_page_has_one_to_itself() {
        let sizes = [PAGE_CELL_BYTES * 2, 100, PAGE_CELL_BYTES, 100];
        assert_eq!(append_order(&sizes, PAGE_CELL_BYTES), [0, 2, 1, 3]);
    }
}
