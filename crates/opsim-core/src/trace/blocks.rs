//! Per-4 KiB-block state of a trace pass, in chunks made only where the trace goes: the write
//! count and last write index of each written block ([`WriteState`]) and a bit per block
//! touched by a read or trim ([`Touched`]).  A chunk covers [`CHUNK_BLOCKS`] blocks (1 GiB
//! of offsets); chunk numbers below [`NEAR_CHUNKS`] (offsets below 4 PiB) are found through a
//! flat table (no hashing per request), higher ones through a map.  Every allocation is
//! charged to a [`Budget`] first, which refuses past its cap.
//!
//! A chunk of write state is 2 MiB, aligned and (on Linux) advised as a transparent huge page
//! ([`HugeWords`]): the writes of a large footprint land at random, and with 4 KiB pages
//! nearly every one missed the TLB (a page walk, nested under virtualisation), which cost
//! more than parsing the line.

use crate::error::{Error, Result};
use std::collections::HashMap;

/// log2 of the blocks per chunk: a chunk's write state is 2 MiB, one huge page.
pub(super) const CHUNK_SHIFT: u32 = 18;
pub(super) const CHUNK_BLOCKS: u64 = 1 << CHUNK_SHIFT;
const MASK: u64 = CHUNK_BLOCKS - 1;
/// Chunk numbers with a slot in the flat table (4 M entries, 16 MiB at most).
const NEAR_CHUNKS: u64 = 1 << 22;
/// Bytes of state per block of a chunk written: a 24-bit count and a 40-bit index.
pub const WRITE_STATE_BYTES: u64 = 8;

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

/// Bits of a state word holding the write count (the rest: the last write's index).
const COUNT_BITS: u32 = 24;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
/// Block writes a pass can index (2^40: 4 PiB written).
pub const MAX_BLOCK_WRITES: u64 = 1 << (64 - COUNT_BITS);

/// One chunk of written blocks: a word per block, `last index << 24 | count` (0: never
/// written), one cache line for both.
pub(super) struct WriteChunk {
    pub base: u64,
    pub words: HugeWords,
}

/// Bytes of a huge page (x86-64 and aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// A zeroed array of u64; on Linux an anonymous mapping aligned to [`HUGE_PAGE`] and advised
/// as huge pages (the kernel's zero pages: nothing is written before the first use).
pub(super) struct HugeWords {
    ptr: std::ptr::NonNull<u64>,
    len: usize,
    /// The mapping (Linux) or allocation to release: its start and bytes.
    base: *mut u8,
    bytes: usize,
}

impl HugeWords {
    /// `len` zeroed words (`len` > 0); None when the system refuses.
    #[cfg(target_os = "linux")]
    fn zeroed(len: usize) -> Option<HugeWords> {
        assert!(len > 0);
        let bytes = len * 8 + HUGE_PAGE;
        // SAFETY: a fresh private anonymous mapping; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let aligned = (p as usize).next_multiple_of(HUGE_PAGE);
        // SAFETY: the advised range lies inside the mapping; advice never changes contents.
        unsafe { libc::madvise(aligned as *mut libc::c_void, len * 8, libc::MADV_HUGEPAGE) };
        Some(HugeWords { ptr: std::ptr::NonNull::new(aligned as *mut u64)?, len, base: p as *mut u8, bytes })
    }

    #[cfg(not(target_os = "linux"))]
    fn zeroed(len: usize) -> Option<HugeWords> {
        assert!(len > 0);
        let layout = std::alloc::Layout::array::<u64>(len).ok()?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        Some(HugeWords { ptr: std::ptr::NonNull::new(p as *mut u64)?, len, base: p, bytes: len * 8 })
    }
}

impl std::ops::Deref for HugeWords {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `ptr` holds `len` initialised u64 owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for HugeWords {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in deref, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HugeWords {
    fn drop(&mut self) {
        // SAFETY: `base` and `bytes` are the mapping made in `zeroed`.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.bytes);
        }
        // SAFETY: `base` was allocated in `zeroed` with this layout.
        #[cfg(not(target_os = "linux"))]
        unsafe {
            std::alloc::dealloc(self.base, std::alloc::Layout::from_size_align_unchecked(self.bytes, 8))
        }
    }
}

// SAFETY: HugeWords owns its memory like a Box<[u64]>.
unsafe impl Send for HugeWords {}
unsafe impl Sync for HugeWords {}

/// The write state of every written block.
#[derive(Default)]
pub(super) struct WriteState {
    dir: Dir,
    pub chunks: Vec<WriteChunk>,
    /// The last chunk used (most requests fall in the chunk of the one before).
    cached: Option<(u64, usize)>,
    /// Writes past a block's 24-bit count, by block (rare: a block written 16 M times).
    pub extra: HashMap<u64, u64>,
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

    /// Ask the CPU for block `b`'s state ahead of its write (nothing if its chunk is new).
    #[inline(always)]
    pub fn prefetch(&self, b: u64) {
        if let Some(s) = self.dir.get(b >> CHUNK_SHIFT) {
            crate::ftl::prefetch_write(&self.chunks[s].words, (b & MASK) as usize);
        }
    }

    #[cold]
    fn new_chunk(&mut self, c: u64, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<usize> {
        budget.charge(CHUNK_BLOCKS * WRITE_STATE_BYTES, at)?;
        let s = self.chunks.len();
        self.dir.insert(c, s, budget, at)?;
        let words = HugeWords::zeroed(CHUNK_BLOCKS as usize)
            .ok_or_else(|| Error::config("max_memory", format!("cannot allocate the per-block state at {}", at())))?;
        self.chunks.push(WriteChunk { base: c << CHUNK_SHIFT, words });
        Ok(s)
    }

    /// Write blocks `first..=last`, the first with write index `*index` (advanced by one per
    /// block; below [`MAX_BLOCK_WRITES`], which the caller checks).
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
            let end = last.min(b | MASK);
            let (i0, i1) = ((b & MASK) as usize, (end & MASK) as usize);
            let mut idx = *index;
            for (k, w) in self.chunks[s].words[i0..=i1].iter_mut().enumerate() {
                let n = *w & COUNT_MAX;
                if n > 0 {
                    let d = idx - (*w >> COUNT_BITS);
                    tally.overwrites += 1;
                    tally.distance[63 - d.leading_zeros() as usize] += 1;
                }
                if n == COUNT_MAX {
                    *self.extra.entry(b + k as u64).or_insert(0) += 1;
                    *w = idx << COUNT_BITS | n;
                } else {
                    *w = idx << COUNT_BITS | (n + 1);
                }
                idx += 1;
            }
            *index = idx;
            if end == last {
                return Ok(());
            }
            b = end + 1;
        }
    }

    /// The write count of every block of a chunk (0: never written).
    pub fn counts<'a>(&'a self, ch: &'a WriteChunk) -> impl Iterator<Item = u64> + 'a {
        ch.words.iter().enumerate().map(move |(i, &w)| {
            let n = w & COUNT_MAX;
            if n == COUNT_MAX {
                n + self.extra.get(&(ch.base + i as u64)).copied().unwrap_or(0)
            } else {
                n
            }
        })
    }
}

/// log2 of the blocks per chunk of touched bits: 2 MiB of bits (a huge page), 64 GiB of
/// offsets.
pub(super) const TOUCH_SHIFT: u32 = 24;
const TOUCH_MASK: u64 = (1 << TOUCH_SHIFT) - 1;

/// One bit per block touched (by a read or trim), in chunks.
#[derive(Default)]
pub(super) struct Touched {
    dir: Dir,
    pub chunks: Vec<(u64, HugeWords)>,
    cached: Option<(u64, usize)>,
}

impl Touched {
    /// Ask the CPU for block `b`'s bit ahead of its use.
    #[inline(always)]
    pub fn prefetch(&self, b: u64) {
        if let Some(s) = self.dir.get(b >> TOUCH_SHIFT) {
            crate::ftl::prefetch_write(&self.chunks[s].1, ((b & TOUCH_MASK) / 64) as usize);
        }
    }

    pub fn set_range(&mut self, first: u64, last: u64, budget: &mut Budget, at: &dyn Fn() -> String) -> Result<()> {
        let mut b = first;
        loop {
            let c = b >> TOUCH_SHIFT;
            let s = match self.cached {
                Some((cc, s)) if cc == c => s,
                _ => {
                    let s = match self.dir.get(c) {
                        Some(s) => s,
                        None => {
                            budget.charge((1 << TOUCH_SHIFT) / 8, at)?;
                            let s = self.chunks.len();
                            self.dir.insert(c, s, budget, at)?;
                            let words = HugeWords::zeroed(1 << (TOUCH_SHIFT - 6)).ok_or_else(|| {
                                Error::config("max_memory", format!("cannot allocate the per-block state at {}", at()))
                            })?;
                            self.chunks.push((c << TOUCH_SHIFT, words));
                            s
                        }
                    };
                    self.cached = Some((c, s));
                    s
                }
            };
            let words = &mut self.chunks[s].1;
            let end = last.min(b | TOUCH_MASK);
            let (mut j, e) = ((b & TOUCH_MASK) as usize, (end & TOUCH_MASK) as usize);
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
        match self.dir.get(b >> TOUCH_SHIFT) {
            Some(s) => {
                let i = (b & TOUCH_MASK) as usize;
                self.chunks[s].1[i / 64] >> (i % 64) & 1 == 1
            }
            None => false,
        }
    }

    /// The bits of the write chunk starting at block `base` ([`CHUNK_BLOCKS`] of them), if
    /// any of its touched chunk exists.
    pub fn bits_of_write_chunk(&self, base: u64) -> Option<&[u64]> {
        self.dir.get(base >> TOUCH_SHIFT).map(|s| {
            let w0 = ((base & TOUCH_MASK) / 64) as usize;
            &self.chunks[s].1[w0..w0 + (CHUNK_BLOCKS / 64) as usize]
        })
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
    fn counts_past_24_bits_are_exact() {
        let mut w = WriteState::default();
        let mut b = budget(1 << 30);
        let (mut idx, mut t) = (0u64, WriteTally::default());
        let at = String::new;
        let n = COUNT_MAX + 5;
        for _ in 0..n {
            w.write(7, 7, &mut idx, &mut t, &mut b, &at).unwrap();
        }
        w.write(8, 8, &mut idx, &mut t, &mut b, &at).unwrap();
        let counts: Vec<u64> = w.counts(&w.chunks[0]).take(9).collect();
        assert_eq!(&counts[6..], &[0, n, 1]);
        assert_eq!((t.overwrites, t.distance[0]), (n - 1, n - 1), "every rewrite at distance 1");
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
