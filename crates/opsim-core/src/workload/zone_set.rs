//! The zoned writer's set of active zones: a bitmap (bit z set: zone z is active), the count
//! of inactive zones in each of its 64-bit words, and a Fenwick tree of those counts per
//! block of [`BLOCK`] words, so that the k-th inactive zone is found in O(log(zones / 4096))
//! steps (a tree that fits in cache, then one block's counts: one cache line) instead of a
//! scan of every word.
//!
//! The k-th inactive zone is the one the scan it replaces found (the same zone for the same
//! k): the first word whose running count of inactive zones passes k, and in it the zero bit
//! of the rank left over.  Opening 16 million zones of 64 GiB of 4 KiB zones took the scan
//! hours (each pick read a quarter of a million words); this takes seconds.

/// Words per block of the tree.
const BLOCK: usize = 64;

/// Active zones: the bitmap, the inactive zones per word, and the tree over blocks.
#[derive(Clone, Debug)]
pub struct ZoneSet {
    bits: Vec<u64>,
    /// Inactive zones in each word of `bits` (0 to 64).
    free: Vec<u8>,
    /// Fenwick tree (1-based: `tree[i]` sums the blocks `i - lowbit(i) .. i`) of the inactive
    /// zones in each block of [`BLOCK`] words.
    tree: Vec<u64>,
}

impl ZoneSet {
    /// `zones` zones, none active.
    pub fn new(zones: u64) -> ZoneSet {
        let words = zones.div_ceil(64) as usize;
        let free: Vec<u8> = (0..words).map(|w| (zones - w as u64 * 64).min(64) as u8).collect();
        let blocks = words.div_ceil(BLOCK);
        let mut tree = vec![0u64; blocks + 1];
        for b in 0..blocks {
            let end = ((b + 1) * BLOCK).min(words);
            tree[b + 1] += free[b * BLOCK..end].iter().map(|&c| c as u64).sum::<u64>();
            let up = (b + 1) + lowbit(b + 1);
            if up <= blocks {
                tree[up] += tree[b + 1];
            }
        }
        ZoneSet { bits: vec![0; words], free, tree }
    }

    /// Whether zone `z` is active.
    #[inline]
    pub fn contains(&self, z: u64) -> bool {
        self.bits[(z / 64) as usize] >> (z % 64) & 1 == 1
    }

    /// Mark zone `z` active (it was not).
    #[inline]
    pub fn insert(&mut self, z: u64) {
        debug_assert!(!self.contains(z));
        let w = (z / 64) as usize;
        self.bits[w] |= 1 << (z % 64);
        self.free[w] -= 1;
        let mut i = w / BLOCK + 1;
        while i < self.tree.len() {
            self.tree[i] -= 1;
            i += lowbit(i);
        }
    }

    /// Mark zone `z` inactive (it was active).
    #[inline]
    pub fn remove(&mut self, z: u64) {
        debug_assert!(self.contains(z));
        let w = (z / 64) as usize;
        self.bits[w] &= !(1 << (z % 64));
        self.free[w] += 1;
        let mut i = w / BLOCK + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += lowbit(i);
        }
    }

    /// The `k`-th inactive zone (k from 0), in zone order; `k` must be below the number of
    /// inactive zones.
    pub fn nth_inactive(&self, mut k: u64) -> u64 {
        let blocks = self.tree.len() - 1;
        // the longest prefix of blocks with at most k inactive zones
        let (mut b, mut step) = (0usize, if blocks == 0 { 0 } else { 1usize << blocks.ilog2() });
        while step > 0 {
            if b + step <= blocks && self.tree[b + step] <= k {
                b += step;
                k -= self.tree[b];
            }
            step >>= 1;
        }
        // then the words of block b
        let mut w = b * BLOCK;
        while k >= self.free[w] as u64 {
            k -= self.free[w] as u64;
            w += 1;
        }
        w as u64 * 64 + nth_zero(self.bits[w], k as u32)
    }

    /// The active zones (for checks).
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.bits.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The bitmap's words (for checks).
    #[cfg(test)]
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
}

/// The lowest set bit of `i` (> 0).
#[inline]
fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

/// The position of the k-th zero bit of `word` (k from 0).
fn nth_zero(word: u64, k: u32) -> u64 {
    let mut free = !word;
    for _ in 0..k {
        free &= free - 1;
    }
    free.trailing_zeros() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The k-th inactive zone as the zoned writer found it before the tree: a scan of the
    /// words, counting each one's inactive zones (its code, unchanged).
    fn scan(bits: &[u64], zones: u64, mut k: u64) -> u64 {
        for (i, &word) in bits.iter().enumerate() {
            let n = if (i as u64 + 1) * 64 > zones { (zones - i as u64 * 64) as u32 } else { 64 };
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            let free = (n - (word & mask).count_ones()) as u64;
            if k < free {
                return i as u64 * 64 + nth_zero(word, k as u32);
            }
            k -= free;
        }
        unreachable!("fewer inactive zones than counted")
    }

    /// A set of `zones` zones with about `target` active, built by random inserts and
    /// removes (so the counts have been both lowered and raised).
    fn random_set(rng: &mut Rng, zones: u64, target: u64) -> (ZoneSet, u64) {
        let mut set = ZoneSet::new(zones);
        let mut active = 0;
        for _ in 0..3 * zones {
            let z = rng.below(zones);
            if set.contains(z) {
                if rng.below(3) == 0 {
                    set.remove(z);
                    active -= 1;
                }
            } else if active < target {
                set.insert(z);
                active += 1;
            }
        }
        assert_eq!(set.count(), active);
        (set, active)
    }

    #[test]
    fn nth_zero_finds_the_kth_free_bit() {
        assert_eq!(nth_zero(0, 0), 0);
        assert_eq!(nth_zero(0b1011, 0), 2);
        assert_eq!(nth_zero(0b1011, 1), 4);
        assert_eq!(nth_zero(u64::MAX >> 1, 0), 63);
    }

    /// Property: for random zone counts and random active sets (sparse to nearly full), the
    /// tree's k-th inactive zone is the scan's: every k of small sets, random k of large ones
    /// (trees of up to 160 blocks).
    #[test]
    fn the_kth_inactive_zone_is_the_scans_for_random_bitmaps() {
        let mut rng = Rng::new(36);
        for case in 0..400 {
            let zones = 1 + rng.below(if case % 4 == 0 { 20_000 } else { 300 });
            let target = rng.below(zones);
            let (set, active) = random_set(&mut rng, zones, target);
            for k in 0..zones - active {
                let z = set.nth_inactive(k);
                assert_eq!(z, scan(set.words(), zones, k), "case {case}: {zones} zones, {active} active, k {k}");
                assert!(z < zones && !set.contains(z));
            }
        }
        for case in 0..20 {
            let zones = 1 + rng.below(640_000);
            let target = if case % 2 == 0 { zones - 1 - rng.below(zones / 100 + 1) } else { rng.below(zones) };
            let (set, active) = random_set(&mut rng, zones, target);
            let inactive = zones - active;
            for k in [0, inactive - 1].into_iter().chain((0..200).map(|_| rng.below(inactive))) {
                assert_eq!(set.nth_inactive(k), scan(set.words(), zones, k), "large case {case}: {zones} zones, k {k}");
            }
        }
    }

    #[test]
    fn edges_one_word_whole_words_and_a_partial_last_word() {
        for zones in [1u64, 63, 64, 65, 128, 129, 1000] {
            let mut set = ZoneSet::new(zones);
            assert_eq!((0..zones).map(|k| set.nth_inactive(k)).collect::<Vec<_>>(), (0..zones).collect::<Vec<_>>());
            // all active but the last zone, then all but the first
            (0..zones - 1).for_each(|z| set.insert(z));
            assert_eq!(set.nth_inactive(0), zones - 1);
            if zones > 1 {
                set.remove(0);
                set.insert(zones - 1);
                assert_eq!(set.nth_inactive(0), 0);
            }
        }
    }
}
