//! Per-4 KiB-block state of a trace pass, in chunks made only where the trace goes: the write
//! count and last write index of each written block ([`WriteState`]) and a bit per block
//! touched by a read or trim ([`Touched`]).  A chunk covers [`CHUNK_BLOCKS`] blocks (64 MiB of
//! offsets); chunk numbers below [`NEAR_CHUNKS`] (offsets below 256 TiB) are found through a
//! flat table (no hashing per request), higher ones through a map.  Every allocation is
//! charged to a [`Budget`] first, which refuses past its cap.

use crate::error::{Error, Result};
use std::collections::HashMap;

/// log2 of the blocks per chunk.
pub(super) const CHUNK_SHIFT: u32 = 14;
pub(super) const CHUNK_BLOCKS: u64 = 1 << CHUNK_SHIFT;
const MASK: u64 = CHUNK_BLOCKS - 1;
/// Chunk numbers with a slot in the flat table (4 M entries, 16 MiB at most).
const NEAR_CHUNKS: u64 = 1 << 22;
/// Bytes of state per block written: a u32 count and a u64 index.
pub const WRITE_STATE_BYTES: u64 = 12;

/// The memory cap of the per-block state, and what is spent.
pub(super) struct Budget {
    pub cap: u64,
    pub used: u64,
    pub peak: u64,
}

impl Budget {
    fn charge(&mut self, bytes: u64, at: &dyn Fn() -> String) -> Result<()> {
        if self.used.saturating_add(bytes) > self.cap {
            return Err(Error::config(
                "max_memory",
                format!(
                    "the per-block state of this trace would pass {} MiB at {} ({} bytes per 4 KiB block written, \
                     in chunks of {} MiB of offsets); raise it (opsim trace profile --max-memory 8GiB) or profile \
                     less of the trace (--device)",
                    self.cap >> 20,
                    at(),
                    WRITE_STATE_BYTES,
                    (CHUNK_BLOCKS * 4096) >> 20
                ),
            ));
        }
        self.used += bytes;
        self.peak = self.peak.max(self.used);
        Ok(())
    }
}

/// Chunk number -> slot.
#[derive(Default)]
struct Dir {
    near: Vec<u32>,
    far: HashMap<u64, u32>,
}

impl Dir {
    #[inline(always)]
    fn get(&self, c: u64) -> Option<usize> {
        if c < NEAR_CHUNKS {
            match self.near.get(c as usize) {
                Some(&s) if s > 0 => Some(s as usize - 1),
                _ => None,
            }
        } else {
            self.far.get(&c).map(|&s| s as usize - 1)
        }
    }
    /// Record `slot` for `c`, charging the table's growth.
    fn insert(&mut self, c: u64, slot: usize, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<()> {
        let s = u32::try_from(slot + 1).map_err(|_| Error::internal("too many chunks"))?;
        if c < NEAR_CHUNKS {
            if c as usize >= self.near.len() {
                let new_len = ((c as usize + 1).next_power_of_two()).min(NEAR_CHUNKS as usize);
                budget.charge(((new_len - self.near.len()) * 4) as u64, at)?;
                self.near.resize(new_len, 0);
            }
            self.near[c as usize] = s;
        } else {
            budget.charge(32, at)?;
            self.far.insert(c, s);
        }
        Ok(())
    }
}

/// One chunk of written blocks: write counts (0: never written) and the index of each block's
/// last write.
pub(super) struct WriteChunk {
    pub base: u64,
    pub count: Box<[u32]>,
    pub last: Box<[u64]>,
}

/// The write state of every written block.
#[derive(Default)]
pub(super) struct WriteState {
    dir: Dir,
    pub chunks: Vec<WriteChunk>,
    /// The last chunk used (most requests fall in the chunk of the one before).
    cached: Option<(u64, usize)>,
}

/// What a write of some blocks found.
pub(super) struct WriteTally {
    /// Blocks written before (overwrites).
    pub overwrites: u64,
    /// Overwrites by floor(log2(update distance)).
    pub distance: [u64; 64],
}

impl Default for WriteTally {
    fn default() -> Self {
        WriteTally { overwrites: 0, distance: [0; 64] }
    }
}

impl WriteState {
    #[inline(always)]
    fn slot(&mut self, c: u64, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<usize> {
        if let Some((cc, s)) = self.cached {
            if cc == c {
                return Ok(s);
            }
        }
        let s = match self.dir.get(c) {
            Some(s) => s,
            None => self.new_chunk(c, budget, at)?,
        };
        self.cached = Some((c, s));
        Ok(s)
    }

    /// Whether the chunk starting at block `base` holds state.
    pub fn has_chunk(&self, base: u64) -> bool {
        self.dir.get(base >> CHUNK_SHIFT).is_some()
    }

    #[cold]
    fn new_chunk(&mut self, c: u64, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<usize> {
        budget.charge(CHUNK_BLOCKS * WRITE_STATE_BYTES, at)?;
        let s = self.chunks.len();
        self.dir.insert(c, s, budget, at)?;
        self.chunks.push(WriteChunk {
            base: c << CHUNK_SHIFT,
            count: vec![0u32; CHUNK_BLOCKS as usize].into_boxed_slice(),
            last: vec![0u64; CHUNK_BLOCKS as usize].into_boxed_slice(),
        });
        Ok(s)
    }

    /// Write blocks `first..=last`, the first with write index `*index` (advanced by one per
    /// block).
    #[inline]
    pub fn write(
        &mut self,
        first: u64,
        last: u64,
        index: &mut u64,
        tally: &mut WriteTally,
        budget: &mut Budget,
        at: &dyn Fn() -> String,
    ) -> Result<()> {
        let mut b = first;
        loop {
            let c = b >> CHUNK_SHIFT;
            let s = self.slot(c, budget, at)?;
            let ch = &mut self.chunks[s];
            let end = last.min(b | MASK);
            let (i0, i1) = ((b & MASK) as usize, (end & MASK) as usize);
            let mut idx = *index;
            for (n, l) in ch.count[i0..=i1].iter_mut().zip(ch.last[i0..=i1].iter_mut()) {
                if *n > 0 {
                    let d = idx - *l;
                    tally.overwrites += 1;
                    tally.distance[63 - d.leading_zeros() as usize] += 1;
                }
                *n = n.saturating_add(1);
                *l = idx;
                idx += 1;
            }
            *index = idx;
            if end == last {
                return Ok(());
            }
            b = end + 1;
        }
    }
}

/// One bit per block touched (by a read or trim), in chunks.
#[derive(Default)]
pub(super) struct Touched {
    dir: Dir,
    pub chunks: Vec<(u64, Box<[u64]>)>,
    cached: Option<(u64, usize)>,
}

const WORDS: usize = (CHUNK_BLOCKS / 64) as usize;

impl Touched {
    pub fn set_range(&mut self, first: u64, last: u64, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<()> {
        let mut b = first;
        loop {
            let c = b >> CHUNK_SHIFT;
            let s = match self.cached {
                Some((cc, s)) if cc == c => s,
                _ => {
                    let s = match self.dir.get(c) {
                        Some(s) => s,
                        None => {
                            budget.charge(CHUNK_BLOCKS / 8, at)?;
                            let s = self.chunks.len();
                            self.dir.insert(c, s, budget, at)?;
                            self.chunks.push((c << CHUNK_SHIFT, vec![0u64; WORDS].into_boxed_slice()));
                            s
                        }
                    };
                    self.cached = Some((c, s));
                    s
                }
            };
            let words = &mut self.chunks[s].1;
            let end = last.min(b | MASK);
            let (mut j, e) = ((b & MASK) as usize, (end & MASK) as usize);
            while j <= e {
                let w = j / 64;
                let hi = if e / 64 == w { e % 64 } else { 63 };
                words[w] |= (u64::MAX >> (63 - hi)) & (u64::MAX << (j % 64));
                j = w * 64 + hi + 1;
            }
            if end == last {
                return Ok(());
            }
            b = end + 1;
        }
    }

    /// Whether block `b` is set.
    #[cfg(test)]
    pub fn get(&self, b: u64) -> bool {
        match self.dir.get(b >> CHUNK_SHIFT) {
            Some(s) => {
                let i = (b & MASK) as usize;
                self.chunks[s].1[i / 64] >> (i % 64) & 1 == 1
            }
            None => false,
        }
    }

    /// Whether any block of the chunk starting at block `base` is set, and the chunk's words.
    pub fn chunk(&self, base: u64) -> Option<&[u64]> {
        self.dir.get(base >> CHUNK_SHIFT).map(|s| &self.chunks[s].1[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(cap: u64) -> Budget {
        Budget { cap, used: 0, peak: 0 }
    }

    #[test]
    fn writes_count_and_distances_across_chunks() {
        let mut w = WriteState::default();
        let mut b = budget(1 << 30);
        let (mut idx, mut t) = (0u64, WriteTally::default());
        let at = || "here".to_string();
        // blocks spanning a chunk boundary, then the same again: every block overwritten
        let (a, z) = (CHUNK_BLOCKS - 3, CHUNK_BLOCKS + 4);
        w.write(a, z, &mut idx, &mut t, &mut b, &at).unwrap();
        assert_eq!((idx, t.overwrites), (8, 0));
        w.write(a, z, &mut idx, &mut t, &mut b, &at).unwrap();
        assert_eq!((idx, t.overwrites), (16, 8));
        assert_eq!(t.distance[3], 8, "distance 8 = 2^3 for every block");
        assert_eq!(w.chunks.len(), 2);
        // far chunk numbers use the map
        w.write(u64::MAX >> 12, u64::MAX >> 12, &mut idx, &mut t, &mut b, &at).unwrap();
        assert_eq!(w.chunks.len(), 3);
    }

    #[test]
    fn the_budget_refuses_before_allocating() {
        let mut w = WriteState::default();
        let mut b = budget(CHUNK_BLOCKS * WRITE_STATE_BYTES + 64);
        let (mut idx, mut t) = (0u64, WriteTally::default());
        let at = || "line 7".to_string();
        w.write(0, 10, &mut idx, &mut t, &mut b, &at).unwrap();
        let e = w.write(CHUNK_BLOCKS * 5, CHUNK_BLOCKS * 5, &mut idx, &mut t, &mut b, &at).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("max_memory"));
        assert!(e.message.contains("line 7") && e.message.contains("--max-memory"), "{e}");
        assert_eq!(w.chunks.len(), 1);
    }

    #[test]
    fn touched_bits() {
        let mut t = Touched::default();
        let mut b = budget(1 << 30);
        let at = String::new;
        t.set_range(60, CHUNK_BLOCKS + 70, &mut b, &at).unwrap();
        assert!(!t.get(59) && t.get(60) && t.get(CHUNK_BLOCKS) && t.get(CHUNK_BLOCKS + 70));
        assert!(!t.get(CHUNK_BLOCKS + 71));
        let n: u32 = t.chunks.iter().flat_map(|c| c.1.iter()).map(|w| w.count_ones()).sum();
        assert_eq!(n as u64, CHUNK_BLOCKS + 11);
    }
}
