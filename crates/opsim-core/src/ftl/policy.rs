//! Garbage-collection victim policies.
//!
//! Each policy keeps its own index of the *closed* blocks (full, not a write frontier) and
//! is told when a block closes and when one of its pages is invalidated.
//!
//! | policy           | selection                                   | cost per selection |
//! |------------------|---------------------------------------------|--------------------|
//! | greedy           | fewest valid pages (buckets by valid count) | O(1) amortised     |
//! | fifo (LRW)       | oldest closed block                         | O(1)               |
//! | random           | uniform over closed blocks                  | O(1)               |
//! | d-choices        | fewest valid among d sampled (with repl.)   | O(d)               |
//! | windowed-greedy  | fewest valid among the w oldest (Hu 2009)   | O(w)               |
//! | cost-benefit     | max (1-u)/(2u) x age (Kawaguchi 1995)       | O(closed blocks)   |

use crate::error::Result as CoreResult;
use crate::memory::{try_deque, try_vec, try_with_capacity};
use crate::rng::Rng;

pub const NONE: u32 = u32::MAX;

pub trait Policy {
    const NAME: &'static str;
    /// Whether `on_invalidate` does anything (lets the hot path skip the call).
    const TRACKS_INVALIDATE: bool;
    /// The empty index of `blocks` blocks (a capacity error when it cannot be allocated).
    fn new(blocks: u32, ppb: u32, param: u32) -> CoreResult<Self>
    where
        Self: Sized;
    fn on_close(&mut self, blk: u32, valid: &[u32], now: u64);
    /// A page of the closed block `blk` was invalidated; it had `old_valid` valid pages.
    fn on_invalidate(&mut self, blk: u32, old_valid: u32, now: u64);
    /// Choose a victim and remove it from the index.
    fn select(&mut self, valid: &[u32], rng: &mut Rng, now: u64) -> Option<u32>;
    fn clear(&mut self);
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The closed blocks the policy indexes (for the invariant checker).
    fn members(&self) -> Vec<u32>;
    /// Internal consistency against block metadata (for the invariant checker).
    fn check(&self, valid: &[u32]) -> Result<(), String>;
    /// Hint that block `blk` will soon be touched by `on_invalidate` (no effect on results).
    #[inline(always)]
    fn prefetch(&self, _blk: usize) {}
}

// ------------------------------------------------------------------------------------------
/// Greedy: intrusive doubly-linked lists of blocks bucketed by valid-page count, with a
/// lower bound on the smallest non-empty bucket.  Invalidation moves a block one bucket
/// down in O(1); selection takes the head of the lowest bucket.
pub struct Greedy {
    head: Vec<u32>,
    link: Vec<[u32; 2]>, // [next, prev]
    min: u32,
    len: usize,
    ppb: u32,
}

impl Greedy {
    #[inline(always)]
    fn push(&mut self, bucket: u32, blk: u32) {
        let h = self.head[bucket as usize];
        self.link[blk as usize] = [h, NONE];
        if h != NONE {
            self.link[h as usize][1] = blk;
        }
        self.head[bucket as usize] = blk;
    }
    #[inline(always)]
    fn unlink(&mut self, bucket: u32, blk: u32) {
        let [n, p] = self.link[blk as usize];
        if p != NONE {
            self.link[p as usize][0] = n;
        } else {
            self.head[bucket as usize] = n;
        }
        if n != NONE {
            self.link[n as usize][1] = p;
        }
    }
}

impl Policy for Greedy {
    const NAME: &'static str = "greedy";
    const TRACKS_INVALIDATE: bool = true;
    fn new(blocks: u32, ppb: u32, _param: u32) -> CoreResult<Self> {
        Ok(Greedy {
            head: try_vec(ppb as usize + 1, NONE, "GC index")?,
            link: try_vec(blocks as usize, [NONE, NONE], "GC index")?,
            min: ppb + 1,
            len: 0,
            ppb,
        })
    }
    #[inline]
    fn on_close(&mut self, blk: u32, valid: &[u32], _now: u64) {
        let v = valid[blk as usize];
        self.push(v, blk);
        if v < self.min {
            self.min = v;
        }
        self.len += 1;
    }
    #[inline(always)]
    fn prefetch(&self, blk: usize) {
        super::prefetch_write(&self.link, blk);
    }

    #[inline(always)]
    fn on_invalidate(&mut self, blk: u32, old_valid: u32, _now: u64) {
        self.unlink(old_valid, blk);
        let nv = old_valid - 1;
        self.push(nv, blk);
        if nv < self.min {
            self.min = nv;
        }
    }
    #[inline]
    fn select(&mut self, _valid: &[u32], _rng: &mut Rng, _now: u64) -> Option<u32> {
        while self.min <= self.ppb && self.head[self.min as usize] == NONE {
            self.min += 1;
        }
        if self.min > self.ppb {
            return None;
        }
        let blk = self.head[self.min as usize];
        self.unlink(self.min, blk);
        self.len -= 1;
        Some(blk)
    }
    fn clear(&mut self) {
        self.head.iter_mut().for_each(|h| *h = NONE);
        self.link.iter_mut().for_each(|l| *l = [NONE, NONE]);
        self.min = self.ppb + 1;
        self.len = 0;
    }
    fn len(&self) -> usize {
        self.len
    }
    fn members(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len);
        for &h in &self.head {
            let mut b = h;
            while b != NONE {
                out.push(b);
                b = self.link[b as usize][0];
            }
        }
        out
    }
    fn check(&self, valid: &[u32]) -> Result<(), String> {
        let mut n = 0;
        for (v, &h) in self.head.iter().enumerate() {
            let mut b = h;
            let mut prev = NONE;
            while b != NONE {
                if valid[b as usize] as usize != v {
                    return Err(format!("greedy: block {b} in bucket {v} has {} valid pages", valid[b as usize]));
                }
                if self.link[b as usize][1] != prev {
                    return Err(format!("greedy: broken back link at block {b}"));
                }
                if (v as u32) < self.min {
                    return Err(format!("greedy: bucket {v} is below the min bound {}", self.min));
                }
                prev = b;
                b = self.link[b as usize][0];
                n += 1;
                if n > self.link.len() {
                    return Err("greedy: cycle in bucket list".into());
                }
            }
        }
        if n != self.len {
            return Err(format!("greedy: {n} blocks in buckets, len says {}", self.len));
        }
        Ok(())
    }
}

/// The index methods of a policy whose closed blocks wait in `self.queue: VecDeque<u32>`
/// in the order they were closed (their valid counts are read at selection).
macro_rules! queue_index {
    () => {
        fn on_close(&mut self, blk: u32, _valid: &[u32], _now: u64) {
            self.queue.push_back(blk);
        }
        fn on_invalidate(&mut self, _blk: u32, _old: u32, _now: u64) {}
        fn clear(&mut self) {
            self.queue.clear();
        }
        fn len(&self) -> usize {
            self.queue.len()
        }
        fn members(&self) -> Vec<u32> {
            self.queue.iter().copied().collect()
        }
        fn check(&self, _valid: &[u32]) -> Result<(), String> {
            Ok(())
        }
    };
}

// ------------------------------------------------------------------------------------------
/// FIFO / least-recently-written: the oldest closed block.
pub struct Fifo {
    queue: std::collections::VecDeque<u32>,
}

impl Policy for Fifo {
    const NAME: &'static str = "fifo";
    const TRACKS_INVALIDATE: bool = false;
    fn new(blocks: u32, _ppb: u32, _param: u32) -> CoreResult<Self> {
        Ok(Fifo { queue: try_deque(blocks as usize, "GC queue")? })
    }
    queue_index!();
    fn select(&mut self, _valid: &[u32], _rng: &mut Rng, _now: u64) -> Option<u32> {
        self.queue.pop_front()
    }
}

// ------------------------------------------------------------------------------------------
/// A set of closed blocks with O(1) insert, remove and uniform sampling.
struct BlockSet {
    items: Vec<u32>,
    pos: Vec<u32>,
}

impl BlockSet {
    fn new(blocks: u32) -> CoreResult<Self> {
        Ok(BlockSet {
            items: try_with_capacity(blocks as usize, "GC index")?,
            pos: try_vec(blocks as usize, NONE, "GC index")?,
        })
    }
    fn insert(&mut self, blk: u32) {
        self.pos[blk as usize] = self.items.len() as u32;
        self.items.push(blk);
    }
    fn remove(&mut self, blk: u32) {
        let i = self.pos[blk as usize] as usize;
        let last = *self.items.last().unwrap();
        self.items.swap_remove(i);
        if last != blk {
            self.pos[last as usize] = i as u32;
        }
        self.pos[blk as usize] = NONE;
    }
    fn clear(&mut self) {
        for &b in &self.items {
            self.pos[b as usize] = NONE;
        }
        self.items.clear();
    }
    fn check(&self) -> Result<(), String> {
        for (i, &b) in self.items.iter().enumerate() {
            if self.pos[b as usize] as usize != i {
                return Err(format!("block set: position of block {b} is stale"));
            }
        }
        Ok(())
    }
}

/// The index methods of a policy whose closed blocks live in `self.set: BlockSet`.
macro_rules! blockset_index {
    () => {
        fn clear(&mut self) {
            self.set.clear();
        }
        fn len(&self) -> usize {
            self.set.items.len()
        }
        fn members(&self) -> Vec<u32> {
            self.set.items.clone()
        }
        fn check(&self, _valid: &[u32]) -> Result<(), String> {
            self.set.check()
        }
    };
}

/// d-choices (Van Houdt 2013): sample d closed blocks uniformly with replacement and take
/// the one with fewest valid pages.  d = 1 is the random policy.
pub struct DChoices {
    set: BlockSet,
    d: u32,
}

impl Policy for DChoices {
    const NAME: &'static str = "d-choices";
    const TRACKS_INVALIDATE: bool = false;
    fn new(blocks: u32, _ppb: u32, d: u32) -> CoreResult<Self> {
        Ok(DChoices { set: BlockSet::new(blocks)?, d: d.max(1) })
    }
    fn on_close(&mut self, blk: u32, _valid: &[u32], _now: u64) {
        self.set.insert(blk);
    }
    fn on_invalidate(&mut self, _blk: u32, _old: u32, _now: u64) {}
    fn select(&mut self, valid: &[u32], rng: &mut Rng, _now: u64) -> Option<u32> {
        let n = self.set.items.len() as u64;
        if n == 0 {
            return None;
        }
        let mut best = self.set.items[rng.below(n) as usize];
        for _ in 1..self.d {
            let b = self.set.items[rng.below(n) as usize];
            if valid[b as usize] < valid[best as usize] {
                best = b;
            }
        }
        self.set.remove(best);
        Some(best)
    }
    blockset_index!();
}

// ------------------------------------------------------------------------------------------
/// Windowed greedy (Hu et al. 2009): greedy restricted to the `w` oldest closed blocks.
/// w = 1 is FIFO; w = all blocks is greedy.
pub struct WindowedGreedy {
    queue: std::collections::VecDeque<u32>,
    w: usize,
}

impl Policy for WindowedGreedy {
    const NAME: &'static str = "windowed-greedy";
    const TRACKS_INVALIDATE: bool = false;
    fn new(blocks: u32, _ppb: u32, w: u32) -> CoreResult<Self> {
        Ok(WindowedGreedy { queue: try_deque(blocks as usize, "GC queue")?, w: w.max(1) as usize })
    }
    queue_index!();
    fn select(&mut self, valid: &[u32], _rng: &mut Rng, _now: u64) -> Option<u32> {
        let n = self.queue.len().min(self.w);
        if n == 0 {
            return None;
        }
        let mut best_i = 0;
        let mut best_v = u32::MAX;
        for (i, &b) in self.queue.iter().take(n).enumerate() {
            let v = valid[b as usize];
            if v < best_v {
                best_v = v;
                best_i = i;
            }
        }
        self.queue.remove(best_i)
    }
}

// ------------------------------------------------------------------------------------------
/// Cost-benefit (Kawaguchi et al. 1995, after Rosenblum and Ousterhout's LFS cleaner):
/// the victim maximises  benefit/cost = (1 - u) / (2u) x age,  where u is the block's valid
/// fraction and age the host writes since the block was last modified (closed or a page
/// invalidated).  Cost is a scan of all closed blocks per selection.
pub struct CostBenefit {
    set: BlockSet,
    stamp: Vec<u64>,
    ppb: u32,
}

impl Policy for CostBenefit {
    const NAME: &'static str = "cost-benefit";
    const TRACKS_INVALIDATE: bool = true;
    fn new(blocks: u32, ppb: u32, _param: u32) -> CoreResult<Self> {
        Ok(CostBenefit { set: BlockSet::new(blocks)?, stamp: try_vec(blocks as usize, 0, "GC index")?, ppb })
    }
    fn on_close(&mut self, blk: u32, _valid: &[u32], now: u64) {
        self.set.insert(blk);
        self.stamp[blk as usize] = now;
    }
    fn on_invalidate(&mut self, blk: u32, _old: u32, now: u64) {
        self.stamp[blk as usize] = now;
    }
    fn select(&mut self, valid: &[u32], _rng: &mut Rng, now: u64) -> Option<u32> {
        let mut best = NONE;
        let mut best_score = f64::NEG_INFINITY;
        for &b in &self.set.items {
            let v = valid[b as usize];
            let score = if v == 0 {
                f64::INFINITY
            } else {
                let age = (now - self.stamp[b as usize] + 1) as f64;
                (self.ppb - v) as f64 * age / (2.0 * v as f64)
            };
            if score > best_score {
                best_score = score;
                best = b;
                if v == 0 {
                    break;
                }
            }
        }
        if best == NONE {
            return None;
        }
        self.set.remove(best);
        Some(best)
    }
    blockset_index!();
}
