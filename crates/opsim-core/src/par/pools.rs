//! The drive as independent GC pools: what the simulator asks of one FTL (counters, free
//! blocks, wear, the victim histogram, host commands, purge, the invariant checker), answered
//! from the pools in a fixed order, so that the answers are one FTL's.

use super::apply::Pool;
use super::free::FreeTrack;
use super::item::Split;
use crate::error::Result;
use crate::ftl::{Counters, Ftl, FtlParams, PlacementCounters, Policy};
use crate::interrupt::Interrupt;

/// The FTL of a drive of independent GC pools (`ftl.gc_scope = "die"` / `"plane"`), each
/// pool an [`Ftl`] of its own, run on `threads` threads.
pub struct Pools<P: Policy> {
    /// Pool `g` is `shards[g % shards.len()][g / shards.len()]`.
    pub(super) shards: Vec<Vec<Pool<P>>>,
    pub(super) split: Split,
    pub(super) free: FreeTrack,
    pub(super) threads: usize,
    pools: u32,
    /// The counters of the whole drive as of the last command (one FTL's `c`).
    pub c: Counters,
}

impl<P: Policy + Send> Pools<P> {
    /// The pools of the FTL `p` describes (`p.groups` pools, at least 2), in `shards` shards,
    /// run on `threads` threads; asks `interrupt` while the tables are filled.
    pub fn try_new(p: &FtlParams, shards: u32, threads: usize, interrupt: &mut Interrupt) -> Result<Pools<P>> {
        let pools = p.groups;
        let bpg = p.blocks / pools;
        let mut out: Vec<Vec<Pool<P>>> = (0..shards).map(|_| Vec::new()).collect();
        for g in 0..pools {
            let params = FtlParams {
                blocks: bpg,
                pages_per_block: p.pages_per_block,
                // the logical pages l < lpns with l mod pools = g
                lpns: (p.lpns + pools - 1 - g) / pools,
                page_size: p.page_size,
                sector_size: p.sector_size,
                streams: p.streams,
                gc_low: p.gc_low,
                gc_high: p.gc_high,
                policy_param: p.policy_param,
                check: p.check,
                track_data: false,
                seed: p.seed,
                slc: None,
                placement: None,
                groups: 1,
                shared_frontier: p.shared_frontier,
                meta_rate: 0, // owed by the split, which sees every host page
                // ftl.separation keeps a run serial (par::plan)
                gc_classes: 1,
                host_classes: 1,
            };
            let ftl = Ftl::try_new_polled(&params, interrupt)?;
            out[(g % shards) as usize].push(Pool { last_free: ftl.free_blocks(), ftl, failed: false });
        }
        let mut me = Pools {
            split: Split::new(pools, shards, p.lpns, p.page_size, p.sector_size as u64, p.meta_rate),
            free: FreeTrack::new(&vec![bpg; pools as usize]),
            shards: out,
            threads,
            pools,
            c: Counters::default(),
        };
        me.refresh();
        Ok(me)
    }

    /// The pools in the drive's order.
    fn each(&self) -> impl Iterator<Item = &Pool<P>> {
        let s = self.shards.len() as u32;
        (0..self.pools).map(move |g| &self.shards[(g % s) as usize][(g / s) as usize])
    }

    fn each_mut(&mut self) -> impl Iterator<Item = &mut Pool<P>> {
        self.shards.iter_mut().flatten()
    }

    /// `c` from the split's host counters and the pools' own.
    pub(super) fn refresh(&mut self) {
        let mut c = self.split.c.clone();
        for p in self.each() {
            add_pool_counters(&mut c, &p.ftl.c);
        }
        self.c = c;
    }

    pub fn threads(&self) -> usize {
        self.threads
    }
    pub fn free_blocks(&self) -> u32 {
        self.free.free()
    }
    pub fn mapped_pages(&self) -> u64 {
        self.each().map(|p| p.ftl.mapped_pages()).sum()
    }
    /// No SLC cache with GC pools: `(0, 0)`.
    pub fn slc_blocks(&self) -> (u32, u32) {
        (0, 0)
    }
    pub fn slc_limit(&self) -> u32 {
        0
    }
    /// The SLC cache's addressable pages: no cache with GC pools, nothing to do.
    pub fn set_accessible_pages(&mut self, _pages: u64) {}
    /// No placement with GC pools run in parallel.
    pub fn placement_counters(&self) -> Option<&PlacementCounters> {
        None
    }
    /// No data tokens with GC pools run in parallel (`run.track_data` runs serial).
    pub fn read_token(&self, _lpn: u32) -> Option<u64> {
        None
    }

    /// Every pool's invariants.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (g, p) in self.each().enumerate() {
            p.ftl.check().map_err(|e| format!("GC pool {g}: {e}"))?;
        }
        Ok(())
    }

    /// The erase counts of every block, in the drive's order (pool by pool).
    pub fn erase_counts(&self) -> Vec<u32> {
        self.each().flat_map(|p| p.ftl.erase_counts().iter().copied()).collect()
    }

    /// The victims' valid-page histogram since the last call, summed over the pools.
    pub fn take_victim_hist(&mut self) -> Vec<u64> {
        let mut h: Vec<u64> = Vec::new();
        for p in self.each_mut() {
            let v = p.ftl.take_victim_hist();
            h.resize(h.len().max(v.len()), 0);
            h.iter_mut().zip(&v).for_each(|(a, b)| *a += b);
        }
        h
    }

    /// The drive's fewest free blocks since the last call.
    pub fn take_free_min(&mut self) -> u32 {
        self.free.take()
    }

    /// SECURITY ERASE: every pool purged.
    pub fn purge(&mut self) {
        let s = self.shards.len();
        for (i, shard) in self.shards.iter_mut().enumerate() {
            for (j, p) in shard.iter_mut().enumerate() {
                p.ftl.purge();
                p.ftl.take_free_min(); // the pool's own minimum restarts; the drive's is kept
                p.last_free = p.ftl.free_blocks();
                self.free.set(j * s + i, p.last_free);
            }
        }
        self.refresh();
    }

    /// A host write of `count` sectors (run here, on the calling thread).
    pub fn write_sectors(&mut self, lba: u64, count: u64, stream: u32) -> Result<()> {
        self.run(1, |split, sink| split.write_sectors(lba, count, stream, sink))
    }
    pub fn read_sectors(&mut self, lba: u64, count: u64) -> Result<()> {
        self.run(1, |split, sink| split.read_sectors(lba, count, sink))
    }
    pub fn trim_sectors(&mut self, lba: u64, count: u64) -> Result<()> {
        self.run(1, |split, sink| split.trim_sectors(lba, count, sink))
    }
}

/// Add a pool's counters to the drive's: every one but the host side, which the split counts
/// (a pool's `host_write_pages` is the drive's clock, set per item).  Every field is named, so
/// a new counter does not compile until it is placed here.
fn add_pool_counters(c: &mut Counters, p: &Counters) {
    let Counters {
        host_write_cmds: _,
        host_write_bytes: _,
        host_write_pages: _,
        host_read_cmds: _,
        host_read_bytes: _,
        trim_cmds: _,
        trimmed_pages,
        nand_write_pages,
        nand_read_pages,
        gc_copy_pages,
        gc_read_senses,
        gc_victims,
        erases,
        rmw_pages,
        unmapped_read_pages,
        fold_pages,
        folds,
        meta_pages,
    } = p;
    c.trimmed_pages += trimmed_pages;
    c.nand_write_pages += nand_write_pages;
    c.nand_read_pages += nand_read_pages;
    c.gc_copy_pages += gc_copy_pages;
    c.gc_read_senses += gc_read_senses;
    c.gc_victims += gc_victims;
    c.erases += erases;
    c.rmw_pages += rmw_pages;
    c.unmapped_read_pages += unmapped_read_pages;
    c.fold_pages += fold_pages;
    c.folds += folds;
    c.meta_pages += meta_pages;
}
