//! A worker's part of a parallel run: one shard's items of one chunk applied to its pools.
//!
//! Each pool is an [`Ftl`] of its own (one GC group, its blocks numbered from 0, its logical
//! pages `l / pools`).  An item does to its pool what one page of the FTL's command entry
//! points does to the whole drive's FTL: the read-modify-write read, the page written (GC when
//! its pool runs low), the metadata page owed; a read counted; a page trimmed.  Before a write
//! or trim the pool's host page counter is set to the drive's (the item's clock), so that a
//! policy that ages blocks (cost-benefit) reads the time it reads in one FTL; the pools' own
//! host counters are not used (the split keeps the drive's).

use super::item::{Item, KIND, META, READ, RMW, WRITE};
use crate::error::{Error, Result};
use crate::ftl::{Ftl, Policy};

/// One GC pool and what its worker keeps about it.
pub(crate) struct Pool<P: Policy> {
    pub ftl: Ftl<P>,
    /// Its free blocks after its last [`Event`] (or at the start).
    pub last_free: u32,
    /// It met an error (or its shard a panic): its items are skipped, the run ends in error.
    pub failed: bool,
}

/// A change of a pool's free blocks during one host write: what the drive's free-block
/// minimum is merged from ([`super::free::FreeTrack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The write's [`Item::off`] in its chunk.
    pub off: u32,
    /// The pool (its number in the drive).
    pub pool: u32,
    /// The pool's fewest free blocks during the write.
    pub min: u32,
    /// ... and after it.
    pub after: u32,
}

/// Items looked ahead of the one applied: the mapping entry of the far one and the old page
/// of the nearer one are prefetched (the serial loop's two-stage prefetch, on items).
const FAR: usize = 32;
const NEAR: usize = 16;

/// Apply `items` (shard `shard` of `shards`, the chunk's clock starting at `base`) to `pools`,
/// noting free-block changes in `events`.  The first error (the item's clock, the error);
/// a pool that fails is skipped from then on.
pub(crate) fn apply<P: Policy>(
    pools: &mut [Pool<P>],
    shard: u32,
    shards: u32,
    items: &[Item],
    base: u64,
    events: &mut Vec<Event>,
) -> Option<(u64, Error)> {
    let mut first = None;
    for i in 0..items.len() {
        if let Some(a) = items.get(i + FAR) {
            pools[a.slot as usize].ftl.prefetch_lpn(a.lpn);
        }
        if let Some(b) = items.get(i + NEAR) {
            pools[b.slot as usize].ftl.prefetch_old_page(b.lpn);
        }
        let it = items[i];
        let p = &mut pools[it.slot as usize];
        if p.failed {
            continue;
        }
        if let Err(e) = one(&mut p.ftl, it, base) {
            p.failed = true;
            first.get_or_insert((base + it.off as u64, e));
            continue;
        }
        if it.flags & KIND == WRITE {
            let after = p.ftl.free_blocks();
            let min = p.ftl.take_free_min();
            if min != p.last_free || after != p.last_free {
                events.push(Event { off: it.off, pool: it.slot as u32 * shards + shard, min, after });
                p.last_free = after;
            }
        }
    }
    first
}

/// One item on its pool.
#[inline(always)]
fn one<P: Policy>(f: &mut Ftl<P>, it: Item, base: u64) -> Result<()> {
    match it.flags & KIND {
        WRITE => {
            f.c.host_write_pages = base + it.off as u64;
            if it.flags & RMW != 0 && f.is_mapped(it.lpn) {
                f.c.rmw_pages += 1;
                f.c.nand_read_pages += 1;
            }
            f.write_page(it.lpn, it.stream as u32)?;
            if it.flags & META != 0 {
                f.write_meta_page(it.lpn, it.stream as u32)?;
            }
        }
        READ => {
            if f.is_mapped(it.lpn) {
                f.c.nand_read_pages += 1;
            } else {
                f.c.unmapped_read_pages += 1;
            }
        }
        _ => {
            f.c.host_write_pages = base + it.off as u64;
            f.trim_page(it.lpn);
        }
    }
    Ok(())
}
