//! The demo's randomness and fresh ids: a seeded splitmix64 generator drives every
//! choice, so one seed names one history.

/// splitmix64: tiny, fast, and good enough for a demo.
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(mix(seed ^ 0x6c65_6467_6572_2d6e))
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..hi` (`lo < hi`).
    pub(super) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below(hi.abs_diff(lo)) as i64
    }

    pub(super) fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    pub(super) fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// Appends `words` random 64-bit words in hex (16 digits each).
    pub(super) fn push_hex(&mut self, out: &mut String, words: usize) {
        for _ in 0..words {
            let word = self.next_u64();
            push_hex(out, word);
        }
    }
}

/// The splitmix64 finalizer: a bijection of `u64`, so distinct sequence numbers give
/// distinct ids.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn push_hex(out: &mut String, word: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..16).rev() {
        out.push(char::from(HEX[((word >> (shift * 4)) & 0xf) as usize]));
    }
}

/// Fresh ids: a sequence number through [`mix`] (unique) followed by random hex.
#[derive(Debug)]
pub(super) struct Ids {
    key: u64,
    updates: u64,
    contracts: u64,
    unassignments: u64,
}

impl Ids {
    pub(super) fn new(seed: u64) -> Self {
        Ids { key: mix(seed ^ 0x1d5), updates: 0, contracts: 0, unassignments: 0 }
    }

    /// `1220` and 64 hex digits, like a Canton update id.
    pub(super) fn update_id(&mut self, rng: &mut Rng) -> String {
        self.updates += 1;
        let mut id = String::with_capacity(68);
        id.push_str("1220");
        push_hex(&mut id, mix(self.updates ^ self.key));
        rng.push_hex(&mut id, 3);
        id
    }

    /// `00`, 64 hex digits, `ca0212` and 32 hex digits, like a Canton contract id.
    pub(super) fn contract_id(&mut self, rng: &mut Rng) -> String {
        self.contracts += 1;
        let mut id = String::with_capacity(104);
        id.push_str("00");
        push_hex(&mut id, mix(self.contracts ^ self.key ^ 0xc0));
        rng.push_hex(&mut id, 3);
        id.push_str("ca0212");
        rng.push_hex(&mut id, 2);
        id
    }

    /// `1220` and 64 hex digits: the id that pairs an unassignment with its assignment.
    pub(super) fn unassign_id(&mut self, rng: &mut Rng) -> String {
        self.unassignments += 1;
        let mut id = String::with_capacity(68);
        id.push_str("1220");
        push_hex(&mut id, mix(self.unassignments ^ self.key ^ 0x0a));
        rng.push_hex(&mut id, 3);
        id
    }
}
