//! The drive's fewest free blocks (a round's `free_blocks_min`), merged from the pools.
//!
//! One FTL of several GC groups keeps the fewest free blocks of the whole drive since the last
//! look: the minimum over time of the sum of its groups' free pools.  That is not the sum of
//! each pool's minimum: the pools dip at different times.  The workers note, per host write
//! that moved its pool's count, the pool's fewest free blocks during the write and its count
//! after ([`Event`]); the other pools stand still meanwhile (a write touches one pool), so the
//! drive's fewest during that write is the others' counts plus the pool's fewest.  Merged in
//! the order of the writes (chunk by chunk, by [`Event::off`] within a chunk), the events give
//! the one FTL's minimum exactly.

use super::apply::Event;

/// The pools' free blocks as merged so far, and the drive's fewest since the last take.
#[derive(Clone, Debug, Default)]
pub(crate) struct FreeTrack {
    /// Per pool: its free blocks.
    now: Vec<u32>,
    /// Their sum.
    sum: u64,
    /// The fewest the sum has been since the last [`FreeTrack::take`].
    min: u64,
}

impl FreeTrack {
    /// Pools holding `free` blocks each; the minimum starts at their sum (one FTL's start:
    /// every block free).
    pub(crate) fn new(free: &[u32]) -> FreeTrack {
        let sum = free.iter().map(|&f| f as u64).sum();
        FreeTrack { now: free.to_vec(), sum, min: sum }
    }

    /// Merge one chunk's events (in any order: sorted here by their place in the chunk).
    pub(crate) fn merge(&mut self, events: &mut [Event]) {
        events.sort_unstable_by_key(|e| e.off);
        for e in events.iter() {
            let others = self.sum - self.now[e.pool as usize] as u64;
            self.min = self.min.min(others + e.min as u64);
            self.sum = others + e.after as u64;
            self.now[e.pool as usize] = e.after;
        }
    }

    /// Pool `pool` now holds `free` blocks without a write (a purge); the minimum is kept,
    /// as one FTL keeps it through a purge.
    pub(crate) fn set(&mut self, pool: usize, free: u32) {
        self.sum = self.sum - self.now[pool] as u64 + free as u64;
        self.now[pool] = free;
    }

    /// The fewest free blocks since the last take; the next minimum starts from now.
    pub(crate) fn take(&mut self) -> u32 {
        std::mem::replace(&mut self.min, self.sum) as u32
    }

    /// The drive's free blocks now.
    pub(crate) fn free(&self) -> u32 {
        self.sum as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(off: u32, pool: u32, min: u32, after: u32) -> Event {
        Event { off, pool, min, after }
    }

    #[test]
    fn the_minimum_is_the_sums_not_the_sum_of_minima() {
        let mut t = FreeTrack::new(&[10, 10]);
        // pool 0 dips to 2 and comes back to 9 at write 3; pool 1 dips to 3 at write 5, then 8
        let mut evs = vec![ev(5, 1, 3, 8), ev(3, 0, 2, 9)];
        t.merge(&mut evs);
        // at write 3: 2 + 10; at write 5: 9 + 3
        assert_eq!(t.take(), 12);
        assert_eq!(t.free(), 17);
        assert_eq!(t.take(), 17, "the next minimum starts from now");
        t.set(1, 10);
        assert_eq!(t.free(), 19);
        t.merge(&mut [ev(0, 0, 0, 1)]);
        assert_eq!(t.take(), 10);
    }
}
