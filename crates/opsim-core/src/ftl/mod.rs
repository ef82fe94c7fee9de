//! The page-mapped flash translation layer.
//!
//! State per physical page: 4 bytes of reverse map (P2L) and 1 bit of validity; per logical
//! page: 4 bytes of forward map (L2P).  About 8.2 bytes per page in all, plus small per-block
//! metadata.  Host writes go to one write frontier per stream, GC copies to their own
//! frontier.  Erased blocks wait in a FIFO free pool; garbage collection runs when fewer than
//! `gc_low_watermark` blocks are free and stops when `gc_high_watermark` are.
//!
//! Every structure can be verified by [`Ftl::check`]; `ftl.check_invariants = true` runs it
//! after every garbage collection and every fold.
//!
//! GC scope (`ftl.gc_scope`, MQSim's per-plane GC): the blocks may be split into `groups`
//! equal ranges (dies or planes), logical page `l` living in group `l % groups` (static
//! striping).  Each group then has its own free pool, reserve, host and GC frontiers and
//! victim index: a victim always comes from the group of the write that needs space.  One
//! group (the default) is the whole drive.
//!
//! Shared frontier (`ftl.gc_frontier = "shared"`, the textbook compact-in-place greedy): GC
//! copies go into the host frontier of the write that triggered collection, so the rest of
//! the block they start is filled with host data.
//!
//! Dynamic SLC cache (`[ftl.slc_cache]`, Micron's Dynamic Write Acceleration): host blocks
//! may be opened in SLC mode, where a block holds `1 / bits_per_cell` of its pages.  Closed
//! SLC blocks wait in a FIFO and are *folded* (their valid pages copied to a native-mode
//! fold frontier, the block erased) when the cache is full or in idle time.  The number of
//! SLC blocks is limited to max(static part, min(ceiling, free user capacity in blocks)), so
//! the cache shrinks as the drive fills.  Folds count as NAND writes (WAF).

mod check;
mod counters;
mod params;
pub mod placement;
pub mod policy;
mod tables;
mod temperature;

pub(crate) use counters::fieldwise_minus;
pub use counters::Counters;
pub use params::{meta_rate, FtlParams, SlcParams, META_ONE};
pub use placement::{PlacementCounters, PlacementParams};
pub use policy::{CostBenefit, DChoices, Fifo, Greedy, Policy, WindowedGreedy, NONE};
pub use tables::prefetch_write;
pub(crate) use tables::FastDiv;
use tables::{for_each_bit, gather, map_run, set_bit_range, table};

use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use crate::memory::{try_deque, try_vec};
use crate::rng::Rng;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    Free = 0,
    Open = 1,
    /// Full, indexed by the GC policy.
    Closed = 2,
    /// Full SLC-mode block waiting to be folded (not in the GC policy's index).
    Cached = 3,
}

/// Per-block metadata shared with the policies.
pub struct BlockMeta {
    pub valid: Vec<u32>,
    pub erase: Vec<u32>,
    pub state: Vec<BlockState>,
}

#[derive(Clone, Copy, Debug)]
struct Frontier {
    block: u32,
    next: u32,
    /// Pages the block holds in its mode (`pages_per_block`, or fewer in SLC mode).
    end: u32,
}

const EMPTY_FRONTIER: Frontier = Frontier { block: NONE, next: 0, end: 0 };

/// The victim index of group `g` (a place expression, so that other fields stay borrowable).
macro_rules! policy_of {
    ($f:expr, $g:expr) => {
        if $g == 0 {
            &mut $f.policy
        } else {
            &mut $f.policies[$g - 1]
        }
    };
}

/// Where a collected block's valid pages go.
#[derive(Clone, Copy, Debug)]
enum Dest {
    /// The GC frontier of a group.
    Gc(usize),
    /// The SLC cache's fold frontier.
    Fold,
    /// A host frontier (by index): the shared frontier.
    Host(usize),
}

/// What a block opened by [`Ftl::fill_frontier`] is, for placement.
#[derive(Clone, Copy, Debug)]
enum Tag {
    /// A GC or fold destination of a handle, or [`placement::SHARED`].
    Gc(u8),
    /// A host frontier of a stream (the shared frontier).
    Host(usize),
}

/// State of the SLC cache.
struct Slc {
    p: SlcParams,
    /// Pages an SLC-mode block holds.
    ppb: u32,
    /// Closed SLC blocks, oldest first (the fold order).
    queue: VecDeque<u32>,
    /// Per block: written in SLC mode (an open host frontier or in `queue`).
    flag: Vec<bool>,
    /// SLC-mode blocks now (closed and open).
    count: u32,
}

pub struct Ftl<P: Policy> {
    ppb: u32,
    blocks: u32,
    lpns: u32,
    wpb: u32,
    div: FastDiv,
    page_size: u64,
    sectors_per_page: u64,
    sector_size: u64,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    bits: Vec<u64>,
    pub meta: BlockMeta,
    /// Erased blocks, one FIFO per group.
    free: Vec<VecDeque<u32>>,
    /// Erased blocks in all groups.
    nfree: u32,
    /// Host frontiers, index `stream * groups + group` (with host classes, `stream` is the
    /// virtual stream `stream * 2 + cold`).
    host: Vec<Frontier>,
    /// GC frontiers, index `group * classes + class` (one per group without separation).
    gc: Vec<Frontier>,
    /// Temperature separation (`ftl.separation`): the classes and each block's.
    sep: temperature::Temperature,
    /// Native-mode destination of folds (SLC cache).
    fold: Frontier,
    slc: Option<Slc>,
    /// Victim index of group 0 (the whole drive with one group), over the group's blocks
    /// numbered from 0 ...
    policy: P,
    /// ... and of groups 1.. (kept apart so that one group costs no indirection).
    policies: Vec<P>,
    groups: u32,
    /// Blocks per group.
    bpg: u32,
    shared: bool,
    rng: Rng,
    pub c: Counters,
    victim_hist: Vec<u64>,
    free_min: u32,
    low: u32,
    high: u32,
    check_each_gc: bool,
    /// Per-page data token (the host command sequence number that wrote it), when tracked.
    data: Option<Vec<u64>>,
    /// Logical pages currently mapped (valid data), kept incrementally.
    mapped: u64,
    /// Logical pages the host can address (below the max address).
    accessible: u64,
    /// Scratch buffers of garbage collection (kept to avoid reallocating per victim).
    gc_lpns: Vec<u32>,
    gc_tokens: Vec<u64>,
    /// `(dies, units per NAND page)` when GC senses are counted ([`Ftl::set_sense_layout`]).
    sense_layout: Option<(u32, u32)>,
    /// Scratch: the dies whose NAND page in the current stripe a victim's scan has met.
    sense_seen: Vec<u64>,
    /// Namespaces and placement handles (None: off).
    pl: Option<Box<placement::Placement>>,
    /// Metadata pages per host page (fixed point, [`META_ONE`] = one) and the part of a page
    /// owed so far.
    meta_rate: u64,
    meta_owed: u64,
    /// The physical page of the last metadata page written.
    last_meta: u32,
}

impl<P: Policy> Ftl<P> {
    /// The FTL of a fresh drive.  Panics when its tables cannot be allocated: see
    /// [`Ftl::try_new`].
    pub fn new(p: &FtlParams) -> Self {
        Self::try_new(p).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The FTL of a fresh drive, or a capacity error when its tables cannot be allocated.
    pub fn try_new(p: &FtlParams) -> Result<Self> {
        Self::try_new_polled(p, &mut Interrupt::none())
    }

    /// [`Ftl::try_new`], asking `interrupt` while the large tables are filled (tens of
    /// seconds for a drive of terabytes): an `Interrupted` error when it says stop.
    pub fn try_new_polled(p: &FtlParams, interrupt: &mut Interrupt) -> Result<Self> {
        let wpb = p.pages_per_block.div_ceil(64);
        let phys = p.blocks as usize * p.pages_per_block as usize;
        let groups = p.groups.max(1);
        if p.blocks % groups != 0 {
            return Err(Error::internal(format!("{} blocks do not split into {groups} groups", p.blocks)));
        }
        let bpg = p.blocks / groups;
        // the large tables first: a drive too large to allocate is refused for them
        let l2p = table(p.lpns as usize, NONE, "logical-to-physical map", interrupt)?;
        let p2l = table(phys, NONE, "physical-to-logical map", interrupt)?;
        let bits = table(p.blocks as usize * wpb as usize, 0u64, "valid-page bitmap", interrupt)?;
        let mut free = Vec::with_capacity(groups as usize);
        let mut policies = Vec::with_capacity(groups as usize - 1);
        for g in 0..groups {
            let mut q = try_deque(bpg as usize, "free-block queue")?;
            q.extend(g * bpg..(g + 1) * bpg);
            free.push(q);
            if g > 0 {
                policies.push(P::new(bpg, p.pages_per_block, p.policy_param)?);
            }
        }
        Ok(Ftl {
            ppb: p.pages_per_block,
            blocks: p.blocks,
            lpns: p.lpns,
            wpb,
            div: FastDiv::new(p.pages_per_block),
            page_size: p.page_size,
            sectors_per_page: p.page_size / p.sector_size as u64,
            sector_size: p.sector_size as u64,
            l2p,
            p2l,
            bits,
            meta: BlockMeta {
                valid: try_vec(p.blocks as usize, 0, "block metadata")?,
                erase: try_vec(p.blocks as usize, 0, "block metadata")?,
                state: try_vec(p.blocks as usize, BlockState::Free, "block metadata")?,
            },
            free,
            nfree: p.blocks,
            host: vec![EMPTY_FRONTIER; (p.streams * p.host_classes.max(1) * groups) as usize],
            gc: vec![EMPTY_FRONTIER; (groups * p.gc_classes.max(1)) as usize],
            sep: temperature::Temperature::new(p.blocks, p.gc_classes, p.host_classes)?,
            fold: EMPTY_FRONTIER,
            slc: match p.slc {
                Some(sp) => Some(Slc {
                    p: sp,
                    ppb: (p.pages_per_block / sp.bits.max(1)).max(1),
                    queue: VecDeque::new(),
                    flag: try_vec(p.blocks as usize, false, "SLC cache flags")?,
                    count: 0,
                }),
                None => None,
            },
            policy: P::new(bpg, p.pages_per_block, p.policy_param)?,
            policies,
            groups,
            bpg,
            shared: p.shared_frontier,
            rng: Rng::stream(p.seed, 0x6763),
            c: Counters::default(),
            victim_hist: vec![0; p.pages_per_block as usize + 1],
            free_min: p.blocks,
            low: p.gc_low,
            high: p.gc_high.max(p.gc_low),
            check_each_gc: p.check,
            data: if p.track_data { Some(table(phys, 0u64, "data tokens", interrupt)?) } else { None },
            mapped: 0,
            accessible: p.lpns as u64,
            gc_lpns: try_vec(p.pages_per_block as usize, 0, "garbage collection buffer")?,
            gc_tokens: Vec::new(),
            sense_layout: None,
            sense_seen: Vec::new(),
            pl: match &p.placement {
                Some(pp) => Some(Box::new(placement::Placement::new(pp, p.lpns, p.blocks, interrupt)?)),
                None => None,
            },
            meta_rate: p.meta_rate,
            meta_owed: 0,
            last_meta: NONE,
        })
    }

    /// Count the NAND senses of GC copies (`Counters::gc_read_senses`) as a timed model that
    /// reads whole pages lays pages out: physical page `ppn` on die `ppn % dies`, sensed with
    /// the `page_units` units around it (`(ppn / dies) / page_units`: a multi-plane page,
    /// `config::ReadTiming::gc_sense_units`).  Counting changes no FTL decision.
    pub fn set_sense_layout(&mut self, dies: u32, page_units: u32) {
        let dies = dies.max(1);
        self.sense_layout = Some((dies, page_units.max(1)));
        self.sense_seen = vec![0; dies.div_ceil(64) as usize];
    }

    /// The distinct NAND pages (die, page) holding block `v`'s valid pages: the senses its
    /// copies take when a sense reads a whole page.  A stripe of `dies x page_units`
    /// consecutive physical pages holds one NAND page of each die; the valid pages are met in
    /// order, stripe by stripe.
    #[inline(never)]
    fn victim_senses(&mut self, v: u32, dies: u32, page_units: u32) -> u64 {
        let stripe = dies as u64 * page_units as u64;
        let base_w = v as usize * self.wpb as usize;
        let (mut cur, mut n) = (u64::MAX, 0u64);
        for wi in 0..self.wpb as usize {
            let mut word = self.bits[base_w + wi];
            while word != 0 {
                let t = word.trailing_zeros();
                word &= word - 1;
                let ppn = (v * self.ppb + (wi as u32) * 64 + t) as u64;
                if ppn / stripe != cur {
                    cur = ppn / stripe;
                    self.sense_seen.iter_mut().for_each(|w| *w = 0);
                }
                let die = (ppn % dies as u64) as usize;
                let bit = 1u64 << (die % 64);
                if self.sense_seen[die / 64] & bit == 0 {
                    self.sense_seen[die / 64] |= bit;
                    n += 1;
                }
            }
        }
        n
    }

    pub fn pages_per_block(&self) -> u32 {
        self.ppb
    }
    pub fn sectors_per_page(&self) -> u64 {
        self.sectors_per_page
    }
    pub fn page_size(&self) -> u64 {
        self.page_size
    }
    pub fn sector_size(&self) -> u64 {
        self.sector_size
    }
    pub fn blocks(&self) -> u32 {
        self.blocks
    }
    pub fn lpns(&self) -> u32 {
        self.lpns
    }
    /// The physical page the last metadata page (`ftl.meta_writes`) went to ([`NONE`]: none yet).
    pub fn last_meta_page(&self) -> u32 {
        self.last_meta
    }
    pub fn free_blocks(&self) -> u32 {
        self.nfree
    }
    /// The group of block `blk` and its number within the group.
    #[inline(always)]
    fn local(&self, blk: u32) -> (usize, u32) {
        if self.groups == 1 {
            (0, blk)
        } else {
            let g = blk / self.bpg;
            (g as usize, blk - g * self.bpg)
        }
    }
    /// The victim index of each group, in order.
    fn group_policies(&self) -> impl Iterator<Item = &P> {
        std::iter::once(&self.policy).chain(&self.policies)
    }
    /// The blocks of group `g`'s valid counts (what its victim index sees).
    #[inline(always)]
    fn group_valid(&self, g: usize) -> &[u32] {
        let base = g * self.bpg as usize;
        &self.meta.valid[base..base + self.bpg as usize]
    }
    pub fn policy_name(&self) -> &'static str {
        P::NAME
    }
    pub fn mapped_pages(&self) -> u64 {
        self.mapped
    }
    /// Physical page holding `lpn`, if mapped.
    #[inline(always)]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        let p = self.l2p[lpn as usize];
        (p != NONE).then_some(p)
    }
    pub fn is_mapped(&self, lpn: u32) -> bool {
        self.l2p[lpn as usize] != NONE
    }

    /// Whether the SLC cache is configured.
    pub fn slc_enabled(&self) -> bool {
        self.slc.is_some()
    }
    /// Whether physical page `ppn` lies in an SLC-mode block.
    #[inline(always)]
    pub fn in_slc(&self, ppn: u32) -> bool {
        match &self.slc {
            Some(s) => s.flag[self.div.div(ppn) as usize],
            None => false,
        }
    }
    /// SLC-mode blocks now (open and closed), and closed ones waiting to be folded.
    pub fn slc_blocks(&self) -> (u32, u32) {
        self.slc.as_ref().map(|s| (s.count, s.queue.len() as u32)).unwrap_or((0, 0))
    }
    /// Pages an SLC-mode block holds (0 without an SLC cache).
    pub fn slc_pages_per_block(&self) -> u32 {
        self.slc.as_ref().map(|s| s.ppb).unwrap_or(0)
    }
    /// Set the logical pages the host can address (SET MAX ADDRESS): LBAs above it are not
    /// free user capacity for the SLC cache.
    pub fn set_accessible_pages(&mut self, pages: u64) {
        self.accessible = pages.min(self.lpns as u64);
    }

    /// The SLC cache's current limit in blocks: max(static part, min(ceiling, free user
    /// capacity in whole blocks)); free user capacity is the addressable capacity not
    /// holding data (data hidden above a lowered max address counts as held).
    pub fn slc_limit(&self) -> u32 {
        let Some(s) = &self.slc else { return 0 };
        let free_user = self.accessible.saturating_sub(self.mapped) / self.ppb as u64;
        ((s.p.max_blocks as u64).min(free_user) as u32).max(s.p.min_blocks)
    }

    /// Histogram of victims' valid-page counts since the last call; resets it.
    pub fn take_victim_hist(&mut self) -> Vec<u64> {
        std::mem::replace(&mut self.victim_hist, vec![0; self.ppb as usize + 1])
    }
    /// Namespace and placement counters (None: off).
    pub fn placement_counters(&self) -> Option<&PlacementCounters> {
        self.pl.as_ref().map(|p| &p.c)
    }
    /// Blocks holding data per placement handle, and those of shared GC destinations.
    pub fn placement_blocks(&self) -> Option<(Vec<u64>, u64)> {
        self.pl.as_ref().map(|p| p.blocks_per_handle(&self.meta.state))
    }

    /// Count one host write command of `bytes` starting at logical page `lpn`.
    #[inline(always)]
    pub fn note_host_write(&mut self, lpn: u32, bytes: u64) {
        self.c.host_write_cmds += 1;
        self.c.host_write_bytes += bytes;
        if let Some(pl) = self.pl.as_deref_mut() {
            pl.host_command(lpn, bytes);
        }
    }

    /// Smallest free-pool size since the last call; resets it.
    pub fn take_free_min(&mut self) -> u32 {
        std::mem::replace(&mut self.free_min, self.nfree)
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.meta.erase
    }

    #[inline(always)]
    fn bit(&self, ppn: u32) -> (usize, u64) {
        let blk = self.div.div(ppn);
        let page = ppn - blk * self.ppb;
        (blk as usize * self.wpb as usize + (page >> 6) as usize, 1u64 << (page & 63))
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        let blk = self.div.div(ppn);
        let page = ppn - blk * self.ppb;
        let w = blk as usize * self.wpb as usize + (page >> 6) as usize;
        self.bits[w] &= !(1u64 << (page & 63));
        let old = self.meta.valid[blk as usize];
        self.meta.valid[blk as usize] = old - 1;
        if P::TRACKS_INVALIDATE && self.meta.state[blk as usize] == BlockState::Closed {
            let (g, lb) = self.local(blk);
            policy_of!(self, g).on_invalidate(lb, old, self.c.host_write_pages);
        }
    }

    #[inline(always)]
    fn place(&mut self, lpn: u32, ppn: u32) {
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn;
        let (w, m) = self.bit(ppn);
        self.bits[w] |= m;
        let blk = self.div.div(ppn);
        self.meta.valid[blk as usize] += 1;
        self.c.nand_write_pages += 1;
    }

    fn close(&mut self, blk: u32) {
        self.meta.state[blk as usize] = BlockState::Closed;
        let (g, lb) = self.local(blk);
        let base = g * self.bpg as usize;
        let valid = &self.meta.valid[base..base + self.bpg as usize];
        policy_of!(self, g).on_close(lb, valid, self.c.host_write_pages);
    }

    /// Take the oldest erased block of group `g`.
    #[inline(always)]
    fn pop_free(&mut self, g: usize) -> Result<u32> {
        let b = self.free[g].pop_front().ok_or_else(|| Error::internal("free-block pool is empty"))?;
        self.meta.state[b as usize] = BlockState::Open;
        self.nfree -= 1;
        if self.nfree < self.free_min {
            self.free_min = self.nfree;
        }
        Ok(b)
    }

    /// Next page of host frontier `stream` for logical page `lpn` (its group's frontier),
    /// opening a new block (after GC if the group's pool is low) when the frontier is full.
    #[inline(always)]
    fn alloc_host(&mut self, stream: u32, lpn: u32) -> Result<u32> {
        let i = if self.groups == 1 { stream as usize } else { (stream * self.groups + lpn % self.groups) as usize };
        let f = self.host[i];
        // an empty frontier has end = 0
        if f.next < f.end {
            self.host[i].next += 1;
            return Ok(f.block * self.ppb + f.next);
        }
        self.open_host(i)
    }

    /// Close a full host block: SLC-mode blocks join the fold queue, others the policy.
    fn close_host(&mut self, blk: u32) {
        if let Some(s) = self.slc.as_mut() {
            if s.flag[blk as usize] {
                self.meta.state[blk as usize] = BlockState::Cached;
                s.queue.push_back(blk);
                return;
            }
        }
        self.close(blk);
    }

    /// Whether the next host block may be opened in SLC mode; folds first what the cache's
    /// policy asks: always the excess over the limit (the drive filled), and with
    /// `fold_when_full` one more block to make room.
    fn slc_admit(&mut self) -> Result<bool> {
        let limit = self.slc_limit();
        loop {
            let s = self.slc.as_ref().expect("SLC cache");
            let keep = if s.p.fold_when_full { limit.saturating_sub(1) } else { limit };
            if s.count <= keep || s.queue.is_empty() {
                return Ok(s.count < limit);
            }
            self.fold_one()?;
        }
    }

    #[inline(never)]
    fn open_host(&mut self, i: usize) -> Result<u32> {
        let f = self.host[i];
        if f.block != NONE {
            self.close_host(f.block);
            self.host[i] = EMPTY_FRONTIER;
        }
        let g = i % self.groups as usize;
        if (self.free[g].len() as u32) < self.low {
            // A victim with every page valid frees nothing (FIFO meets one right after a
            // sequential fill); give up only when GC has gone through every block in vain.
            let mut stalls = 0u32;
            let (ppb, blocks) = (self.ppb, self.blocks);
            let mut stalled = |copied: u32| {
                stalls = if copied == ppb { stalls + 1 } else { 0 };
                if stalls > blocks {
                    return Err(Error::capacity(
                        "drive.op",
                        format!(
                            "garbage collection cannot free space: the {} policy went through every block \
                             and found all pages valid; the workload's data does not fit with this OP",
                            P::NAME
                        ),
                    ));
                }
                Ok(())
            };
            if self.shared {
                // compact in place: one victim's valid pages start the host's next block and
                // the host fills the rest (the pool stays where it is: one block taken, one
                // erased); another victim only when the copies filled the block
                loop {
                    let copied = self.collect(g, Dest::Host(i))?;
                    let f = self.host[i];
                    if f.block == NONE || f.next < f.end {
                        break;
                    }
                    stalled(copied)?;
                }
            } else {
                while (self.free[g].len() as u32) < self.high {
                    if policy_of!(self, g).is_empty() && self.slc.as_ref().is_some_and(|s| !s.queue.is_empty()) {
                        // everything closed is in the SLC cache: folding frees blocks
                        self.fold_one()?;
                        continue;
                    }
                    let copied = self.collect(g, Dest::Gc(g))?;
                    stalled(copied)?;
                }
            }
        }
        let f = self.host[i];
        if f.next < f.end {
            // shared frontier: the host fills the rest of the block GC copies started
            self.host[i].next += 1;
            return Ok(f.block * self.ppb + f.next);
        }
        if f.block != NONE {
            self.close(f.block);
        }
        let slc = self.slc.is_some() && self.slc_admit()?;
        let b = self.pop_free(g)?;
        let mut end = self.ppb;
        if slc {
            let s = self.slc.as_mut().expect("SLC cache");
            s.flag[b as usize] = true;
            s.count += 1;
            end = s.ppb;
        }
        self.host[i] = Frontier { block: b, next: 1, end };
        if self.sep.host_classes > 1 {
            self.sep.open_host(b, i as u32 / self.groups, self.c.host_write_pages);
        }
        if let Some(pl) = self.pl.as_deref_mut() {
            pl.opened(b, i / self.groups as usize);
        }
        Ok(b * self.ppb)
    }

    #[inline(always)]
    fn prefetch_block(&self, blk: u32) {
        let base = blk as usize * self.ppb as usize;
        for k in (0..self.ppb as usize).step_by(16) {
            prefetch_write(&self.p2l, base + k);
        }
        prefetch_write(&self.bits, blk as usize * self.wpb as usize);
    }

    /// Collect one victim of group `g`: copy its valid pages to `dest`, erase it.  Returns
    /// the number of pages copied.
    fn collect(&mut self, g: usize, dest: Dest) -> Result<u32> {
        let now = self.c.host_write_pages;
        let base = g * self.bpg as usize;
        let valid = &self.meta.valid[base..base + self.bpg as usize];
        let v = base as u32
            + policy_of!(self, g)
                .select(valid, &mut self.rng, now)
                .ok_or_else(|| Error::internal("garbage collection found no closed block to collect"))?;
        let valid = self.meta.valid[v as usize];
        self.victim_hist[valid as usize] += 1;
        self.c.gc_victims += 1;
        if let Some((dies, p)) = self.sense_layout {
            self.c.gc_read_senses += self.victim_senses(v, dies, p);
        }
        self.relocate(v, dest)?;
        self.c.gc_copy_pages += valid as u64;
        self.erase(v);
        if self.check_each_gc {
            self.check().map_err(|e| Error::internal(format!("after GC of block {v}: {e}")))?;
        }
        Ok(valid)
    }

    /// Fold the oldest closed SLC-mode block: copy its valid pages to the native-mode fold
    /// frontier, erase it.  Returns the number of pages folded.
    fn fold_one(&mut self) -> Result<u32> {
        let s = self.slc.as_mut().ok_or_else(|| Error::internal("fold without an SLC cache"))?;
        let v = s.queue.pop_front().ok_or_else(|| Error::internal("fold: no closed SLC block"))?;
        s.flag[v as usize] = false;
        s.count -= 1;
        let valid = self.meta.valid[v as usize];
        self.c.folds += 1;
        self.relocate(v, Dest::Fold)?;
        self.c.fold_pages += valid as u64;
        self.erase(v);
        if self.check_each_gc {
            self.check().map_err(|e| Error::internal(format!("after folding SLC block {v}: {e}")))?;
        }
        Ok(valid)
    }

    /// Move block `v`'s valid pages to `dest`, counting one NAND read and one program per
    /// page; leaves `v` with no valid page.
    #[inline(always)]
    fn relocate(&mut self, v: u32, dest: Dest) -> Result<()> {
        let valid = self.meta.valid[v as usize];
        // The victim's reverse map is about to be read: fetch all its lines at once (a
        // no-op when the previous collection already prefetched this victim).
        self.prefetch_block(v);
        // Gather the victim's valid pages (sequential scan of its bitmap and P2L) ...
        let mut buf = std::mem::take(&mut self.gc_lpns);
        let mut tokens = std::mem::take(&mut self.gc_tokens);
        tokens.clear();
        let (w0, p0) = (v as usize * self.wpb as usize, v as usize * self.ppb as usize);
        let words = &mut self.bits[w0..w0 + self.wpb as usize];
        if let Some(d) = self.data.as_ref() {
            let d = &d[p0..p0 + self.ppb as usize];
            for_each_bit(words, |p| tokens.push(d[p]));
        }
        let n = gather(words, &self.p2l[p0..p0 + self.ppb as usize], &self.l2p, &mut buf);
        let lpns = &buf[..n];
        // ... and write them to the destination frontier in runs of consecutive pages.
        if let Some(pl) = self.pl.as_deref_mut() {
            lpns.iter().for_each(|&l| pl.moved(l));
        }
        if self.pl.as_ref().is_some_and(|p| !p.gc.is_empty()) {
            // persistently isolated: each handle's pages (GC copies and folds alike) to its
            // own GC frontier, so that no block ever holds two handles' data
            let mut i = 0;
            while i < lpns.len() {
                let pl = self.pl.as_deref().expect("placement");
                let h = pl.handle(lpns[i]);
                let j = i + lpns[i..].iter().position(|&l| pl.handle(l) != h).unwrap_or(lpns.len() - i);
                let mut fr = pl.gc[h];
                let tok = if tokens.is_empty() { &tokens[..] } else { &tokens[i..j] };
                self.fill_frontier(&mut fr, &lpns[i..j], tok, 0, Tag::Gc(h as u8))?;
                self.pl.as_deref_mut().expect("placement").gc[h] = fr;
                i = j;
            }
        } else {
            match dest {
                Dest::Gc(g) => {
                    let classes = self.sep.classes as usize;
                    let i = if classes == 1 {
                        g
                    } else {
                        g * classes + self.sep.gc_class(v, self.c.host_write_pages) as usize
                    };
                    let mut fr = self.gc[i];
                    self.fill_frontier(&mut fr, lpns, &tokens, g, Tag::Gc(placement::SHARED))?;
                    self.gc[i] = fr;
                    if classes > 1 && fr.block != NONE {
                        // the class's open block (the only one a victim's pages can open:
                        // they fit in a block) holds data of the class's GC age
                        self.sep.class[fr.block as usize] = (i % classes) as u8 + 1;
                    }
                }
                Dest::Fold => {
                    let mut fr = self.fold;
                    self.fill_frontier(&mut fr, lpns, &tokens, 0, Tag::Gc(placement::SHARED))?;
                    self.fold = fr;
                }
                Dest::Host(i) => {
                    let mut fr = self.host[i];
                    let g = i % self.groups as usize;
                    self.fill_frontier(&mut fr, lpns, &tokens, g, Tag::Host(i / self.groups as usize))?;
                    self.host[i] = fr;
                }
            }
        }
        self.c.nand_write_pages += valid as u64;
        self.gc_lpns = buf;
        self.gc_tokens = tokens;
        self.c.nand_read_pages += valid as u64;
        self.meta.valid[v as usize] = 0;
        Ok(())
    }

    /// Write `lpns` (with their data tokens, when tracked) to frontier `fr`, opening blocks
    /// of group `g` as it fills (tagged `tag` for placement).
    #[inline(always)]
    fn fill_frontier(&mut self, fr: &mut Frontier, lpns: &[u32], tokens: &[u64], g: usize, tag: Tag) -> Result<()> {
        let mut i = 0usize;
        while i < lpns.len() {
            if fr.block == NONE || fr.next == self.ppb {
                if fr.block != NONE {
                    self.close(fr.block);
                }
                let b = self.pop_free(g)?;
                if let Some(pl) = self.pl.as_deref_mut() {
                    match tag {
                        Tag::Gc(t) => pl.opened_gc(b, t),
                        Tag::Host(stream) => pl.opened(b, stream),
                    }
                }
                *fr = Frontier { block: b, next: 0, end: self.ppb };
            }
            let blk = fr.block;
            let first = fr.next;
            let n = ((self.ppb - first) as usize).min(lpns.len() - i);
            let start = blk * self.ppb + first;
            map_run(&mut self.l2p, &mut self.p2l[start as usize..start as usize + n], &lpns[i..i + n], start);
            if let Some(d) = self.data.as_mut() {
                d[start as usize..start as usize + n].copy_from_slice(&tokens[i..i + n]);
            }
            set_bit_range(&mut self.bits[blk as usize * self.wpb as usize..], first, first + n as u32);
            self.meta.valid[blk as usize] += n as u32;
            fr.next += n as u32;
            i += n;
        }
        Ok(())
    }

    /// One fold in idle time: fold the oldest closed SLC block, if any (and a free block is
    /// left for the fold frontier).  Returns the pages folded, or `None` when nothing was done.
    pub fn background_fold(&mut self) -> Result<Option<u32>> {
        match &self.slc {
            Some(s) if !s.queue.is_empty() && self.nfree > 0 => Ok(Some(self.fold_one()?)),
            _ => Ok(None),
        }
    }

    /// One background garbage collection (idle time): collect a victim in the group with
    /// the fewest free blocks if its pool is below `target` blocks (per group) and it has a
    /// victim.  Returns the pages copied, or `None` when nothing was done.
    pub fn background_collect(&mut self, target: u32) -> Result<Option<u32>> {
        let g = (0..self.groups as usize).min_by_key(|&g| self.free[g].len()).unwrap_or(0);
        let n = self.free[g].len() as u32;
        if n >= target || n == 0 || policy_of!(self, g).is_empty() {
            return Ok(None);
        }
        let dest = if self.shared { Dest::Host(g) } else { Dest::Gc(g) };
        Ok(Some(self.collect(g, dest)?))
    }

    fn erase(&mut self, blk: u32) {
        self.sep.erase(blk);
        self.meta.erase[blk as usize] += 1;
        self.meta.state[blk as usize] = BlockState::Free;
        self.c.erases += 1;
        let (g, _) = self.local(blk);
        self.free[g].push_back(blk);
        self.nfree += 1;
    }

    /// Hint that logical page `lpn` will be accessed soon.
    #[inline(always)]
    pub fn prefetch_lpn(&self, lpn: u32) {
        prefetch_write(&self.l2p, lpn as usize);
    }

    /// Hint that the page now mapped at `lpn` will soon be invalidated: prefetch its
    /// validity word and its block's metadata.
    #[inline(always)]
    pub fn prefetch_old_page(&self, lpn: u32) {
        if let Some(&old) = self.l2p.get(lpn as usize) {
            if old != NONE {
                let (w, _) = self.bit(old);
                prefetch_write(&self.bits, w);
                let blk = self.div.div(old) as usize;
                prefetch_write(&self.meta.valid, blk);
                let (g, lb) = self.local(blk as u32);
                let pol = if g == 0 { &self.policy } else { &self.policies[g - 1] };
                pol.prefetch(lb as usize);
            }
        }
    }

    /// Write one whole logical page (the fast path of the simulator); returns the physical
    /// page it went to.
    #[inline(always)]
    pub fn write_page(&mut self, lpn: u32, stream: u32) -> Result<u32> {
        let old = self.l2p[lpn as usize];
        let stream = if self.sep.host_classes > 1 {
            let blk = (old != NONE).then(|| self.div.div(old));
            self.sep.host_stream(blk, stream, self.c.host_write_pages)
        } else {
            stream
        };
        if old != NONE {
            // Unmap before allocating: allocation may run GC, which must see a consistent map.
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
            self.mapped -= 1;
        }
        let ppn = self.alloc_host(stream, lpn)?;
        self.place(lpn, ppn);
        self.mapped += 1;
        self.c.host_write_pages += 1;
        if let Some(pl) = self.pl.as_deref_mut() {
            pl.host_page(lpn, stream);
        }
        if let Some(d) = self.data.as_mut() {
            d[ppn as usize] = self.c.host_write_cmds;
        }
        if self.meta_rate > 0 {
            self.owe_meta(lpn, stream)?;
        }
        Ok(ppn)
    }

    /// The metadata pages (`ftl.meta_writes`) a host page write owes, written now: out of
    /// line, so that the host write's loop keeps its registers when they are off (issue 37).
    #[inline(never)]
    fn owe_meta(&mut self, lpn: u32, stream: u32) -> Result<()> {
        self.meta_owed += self.meta_rate;
        while self.meta_owed >= META_ONE {
            self.meta_owed -= META_ONE;
            self.write_meta(lpn, stream)?;
        }
        Ok(())
    }

    /// One metadata page (`ftl.meta_writes`) owed by the host write of `lpn` on `stream`:
    /// programmed at the next page of that write's host frontier and invalid at once (a
    /// journal or mapping page superseded soon after), so it takes NAND space and erase
    /// cycles and GC never copies it.
    fn write_meta(&mut self, lpn: u32, stream: u32) -> Result<()> {
        self.last_meta = self.alloc_host(stream, lpn)?;
        self.c.nand_write_pages += 1;
        self.c.meta_pages += 1;
        if let Some(pl) = self.pl.as_deref_mut() {
            pl.meta_page(lpn, stream);
        }
        Ok(())
    }

    /// One metadata page owed by the host write of `lpn` on `stream`, for a driver that counts
    /// what the host writes owe itself (the parallel pools, `crate::par`, with `meta_rate` 0).
    pub fn write_meta_page(&mut self, lpn: u32, stream: u32) -> Result<()> {
        self.write_meta(lpn, stream)
    }

    /// Host write of `n` whole pages (one command).
    #[inline(always)]
    pub fn write_pages(&mut self, lpn: u32, n: u32, stream: u32) -> Result<()> {
        self.note_host_write(lpn, n as u64 * self.page_size);
        for i in 0..n {
            self.write_page(lpn + i, stream)?;
        }
        Ok(())
    }

    /// Host write of `count` sectors from `lba`.  Pages only partly covered are read,
    /// merged and rewritten whole (read-modify-write) when they hold data.
    pub fn write_sectors(&mut self, lba: u64, count: u64, stream: u32) -> Result<()> {
        self.check_range(lba, count)?;
        self.note_host_write((lba / self.sectors_per_page) as u32, count * self.sector_size);
        let spp = self.sectors_per_page;
        let first = lba / spp;
        let last = (lba + count - 1) / spp;
        for lpn in first..=last {
            let start = lpn * spp;
            let covered = lba <= start && lba + count >= start + spp;
            if !covered && self.l2p[lpn as usize] != NONE {
                self.c.rmw_pages += 1;
                self.c.nand_read_pages += 1;
            }
            self.write_page(lpn as u32, stream)?;
        }
        Ok(())
    }

    pub fn read_sectors(&mut self, lba: u64, count: u64) -> Result<()> {
        self.check_range(lba, count)?;
        self.c.host_read_cmds += 1;
        self.c.host_read_bytes += count * self.sector_size;
        let spp = self.sectors_per_page;
        for lpn in lba / spp..=(lba + count - 1) / spp {
            self.read_page_count(lpn as u32);
        }
        Ok(())
    }

    #[inline(always)]
    pub fn read_pages(&mut self, lpn: u32, n: u32) {
        self.c.host_read_cmds += 1;
        self.c.host_read_bytes += n as u64 * self.page_size;
        for i in 0..n {
            self.read_page_count(lpn + i);
        }
    }

    #[inline(always)]
    fn read_page_count(&mut self, lpn: u32) {
        if self.l2p[lpn as usize] != NONE {
            self.c.nand_read_pages += 1;
        } else {
            self.c.unmapped_read_pages += 1;
        }
    }

    /// The data token of a logical page: the host command number that last wrote it.
    pub fn read_token(&self, lpn: u32) -> Option<u64> {
        let p = self.l2p[lpn as usize];
        if p == NONE {
            return None;
        }
        self.data.as_ref().map(|d| d[p as usize])
    }

    /// TRIM / deallocate.  Only whole pages are deallocated; the partial head and tail of
    /// an unaligned range are left mapped, as drives do.
    pub fn trim_sectors(&mut self, lba: u64, count: u64) -> Result<()> {
        self.check_range(lba, count)?;
        self.c.trim_cmds += 1;
        let spp = self.sectors_per_page;
        let first = lba.div_ceil(spp);
        let end = (lba + count) / spp;
        for lpn in first..end {
            self.trim_page(lpn as u32);
        }
        Ok(())
    }

    /// TRIM of `n` whole pages (one command).
    pub fn trim_pages(&mut self, lpn: u32, n: u32) {
        self.c.trim_cmds += 1;
        for i in 0..n {
            self.trim_page(lpn + i);
        }
    }

    #[inline(always)]
    pub fn trim_page(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
            self.c.trimmed_pages += 1;
            self.mapped -= 1;
        }
    }

    fn check_range(&self, lba: u64, count: u64) -> Result<()> {
        let total = self.lpns as u64 * self.sectors_per_page;
        if count == 0 {
            return Err(Error::device("a command must transfer at least one sector"));
        }
        if lba.checked_add(count).is_none_or(|e| e > total) {
            return Err(Error::device(format!("LBA range {lba}+{count} runs past the last LBA {}", total - 1)));
        }
        Ok(())
    }

    /// SECURITY ERASE / SANITIZE BLOCK ERASE: every block holding data is erased, every
    /// mapping dropped: the drive returns to fresh-out-of-box.  Wear (erase counts) stays.
    pub fn purge(&mut self) {
        for b in 0..self.blocks {
            let st = self.meta.state[b as usize];
            let written = match st {
                BlockState::Free => false,
                BlockState::Closed | BlockState::Cached => true,
                BlockState::Open => self.frontiers().any(|f| f.block == b && f.next > 0),
            };
            if written {
                self.meta.erase[b as usize] += 1;
                self.c.erases += 1;
            }
            self.meta.state[b as usize] = BlockState::Free;
            self.meta.valid[b as usize] = 0;
        }
        self.l2p.iter_mut().for_each(|p| *p = NONE);
        self.p2l.iter_mut().for_each(|p| *p = NONE);
        self.mapped = 0;
        self.bits.iter_mut().for_each(|w| *w = 0);
        let bpg = self.bpg;
        for (g, q) in self.free.iter_mut().enumerate() {
            q.clear();
            q.extend(g as u32 * bpg..(g as u32 + 1) * bpg);
        }
        self.nfree = self.blocks;
        self.host.iter_mut().for_each(|f| *f = EMPTY_FRONTIER);
        self.gc.iter_mut().for_each(|f| *f = EMPTY_FRONTIER);
        self.sep.clear();
        self.fold = EMPTY_FRONTIER;
        if let Some(pl) = self.pl.as_deref_mut() {
            pl.gc.iter_mut().for_each(|f| *f = EMPTY_FRONTIER);
        }
        if let Some(s) = self.slc.as_mut() {
            s.queue.clear();
            s.flag.iter_mut().for_each(|f| *f = false);
            s.count = 0;
        }
        self.policy.clear();
        self.policies.iter_mut().for_each(|p| p.clear());
    }

    /// Every write frontier: the host streams', GC's and the fold's.
    fn frontiers(&self) -> impl Iterator<Item = &Frontier> {
        self.host.iter().chain(&self.gc).chain([&self.fold]).chain(self.pl.iter().flat_map(|p| p.gc.iter()))
    }

    /// Analytic preconditioning: lay out the given logical pages so that closed block `i`
    /// (in the order given, oldest first) holds `counts[i]` valid pages.  The drive must be
    /// fresh (just purged).  Blocks not listed stay free.
    pub fn place_layout(&mut self, lpns: &[u32], counts: &[u32]) -> Result<()> {
        if self.nfree != self.blocks || self.mapped_pages() != 0 || self.groups != 1 {
            return Err(Error::internal("place_layout needs a fresh drive of one GC group"));
        }
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total != lpns.len() as u64 || counts.len() as u64 + self.low as u64 > self.blocks as u64 {
            return Err(Error::internal("place_layout: counts do not match the pages or the blocks"));
        }
        let mut it = lpns.iter();
        for &cnt in counts {
            let b = self.pop_free(0)?;
            for page in 0..cnt {
                let lpn = *it.next().unwrap();
                self.place(lpn, b * self.ppb + page);
                self.c.nand_write_pages -= 1; // layout, not a counted program
                self.mapped += 1;
            }
            // The rest of the block holds stale data: programmed, invalid.
            self.close(b);
        }
        self.free_min = self.nfree;
        Ok(())
    }

    /// Run the invariant checker.
    pub fn check(&self) -> std::result::Result<(), String> {
        check::check(self)
    }
}
