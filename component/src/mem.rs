//! Byte comparison for the component: `memcmp` and `bcmp`, eight bytes at a time.
//!
//! Every slice comparison in Rust (`Ord` and `Eq` of `[u8]` and `str`) lowers to
//! `memcmp` or `bcmp`, and on `wasm32-wasip2` those come from the C library, whose
//! versions compare one byte per loop iteration. Ingest compares keys that share long
//! prefixes (the staged batch is an ordered map of store keys, and ids share their
//! leading bytes), which made `memcmp` the component's single hottest function. These
//! definitions take precedence over the C library's when the component is linked.
//!
//! They compare eight bytes per iteration with unaligned loads, and on the first
//! differing word find the first differing byte (the lowest set byte of the XOR, as
//! WebAssembly is little-endian).

#[cfg(any(target_arch = "wasm32", test))]
use core::ptr;

/// The index (0..8) of the first byte, in memory order, where `x` and `y` differ.
/// `x != y`.
#[cfg(any(target_arch = "wasm32", test))]
fn first_difference(x: u64, y: u64) -> usize {
    ((x ^ y).trailing_zeros() / 8) as usize
}

/// Reads eight bytes at `p`, which need not be aligned.
///
/// # Safety
/// `p..p + 8` must be readable.
#[cfg(any(target_arch = "wasm32", test))]
unsafe fn word(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees the eight bytes are readable.
    u64::from_le(unsafe { ptr::read_unaligned(p.cast::<u64>()) })
}

/// Compares `n` bytes at `a` and `b`: negative, zero or positive as the first differing
/// byte (unsigned) of `a` is less than, equal to or greater than that of `b`.
///
/// # Safety
/// `a..a + n` and `b..b + n` must be readable (the C library's contract).
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is compare's.
    unsafe { compare(a, b, n) }
}

/// Whether `n` bytes at `a` and `b` differ: zero if they are equal, non-zero otherwise.
///
/// # Safety
/// As [`memcmp`].
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is compare's.
    unsafe { compare(a, b, n) }
}

/// `memcmp`, for any target (the tests run it natively, where the exported symbols are
/// not defined so as not to replace the host's C library).
///
/// # Safety
/// `a..a + n` and `b..b + n` must be readable.
#[cfg(any(target_arch = "wasm32", test))]
unsafe fn compare(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`, within both ranges.
        let (x, y) = unsafe { (word(a.add(i)), word(b.add(i))) };
        if x != y {
            let k = i + first_difference(x, y);
            // SAFETY: `k < i + 8 <= n`.
            return unsafe { i32::from(*a.add(k)) - i32::from(*b.add(k)) };
        }
        i += 8;
    }
    while i < n {
        // SAFETY: `i < n`.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

#[cfg(test)]
mod tests {

    fn compare(a: &[u8], b: &[u8]) -> i32 {
        assert_eq!(a.len(), b.len());
        // SAFETY: both slices hold `a.len()` bytes.
        unsafe { super::compare(a.as_ptr(), b.as_ptr(), a.len()) }.signum()
    }

    #[test]
    fn orders_as_slices_order() {
        let cases: [(&[u8], &[u8]); 7] = [
            (b"", b""),
            (b"a", b"b"),
            (b"abcdefgh", b"abcdefgh"),
            (b"abcdefghi", b"abcdefghj"),
            (b"abcdefgz", b"abcdefha"),
            (b"\xff\x00\x00\x00\x00\x00\x00\x00\x00", b"\x00\xff\xff\xff\xff\xff\xff\xff\xff"),
            (b"0123456789abcdef0123456789abcdeX", b"0123456789abcdef0123456789abcdeY"),
        ];
        for (a, b) in cases {
            assert_eq!(compare(a, b), a.cmp(b) as i32, "{a:?} {b:?}");
            assert_eq!(compare(b, a), b.cmp(a) as i32, "{b:?} {a:?}");
        }
    }

    #[test]
    fn every_position_of_the_first_difference_is_found() {
        let base: Vec<u8> = (0..40).collect();
        for i in 0..base.len() {
            // 200 at i, and a later byte that orders the other way.
            let higher: Vec<u8> = base
                .iter()
                .enumerate()
                .map(|(j, &b)| match j {
                    _ if j == i => 200,
                    _ if j == i + 1 => 0,
                    _ => b,
                })
                .collect();
            assert_eq!(compare(&base, &higher), -1, "at {i}");
            assert_eq!(compare(&higher, &base), 1, "at {i}");
        }
    }
}
