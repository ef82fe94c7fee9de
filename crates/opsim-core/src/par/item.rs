//! The serial part of a parallel run: host commands cut into page items for the pools.
//!
//! [`Split`] does for the pools what [`crate::ftl::Ftl`]'s command entry points
//! (`write_pages`, `write_sectors`, `read_*`, `trim_*`) do for one FTL: the range check, the
//! per-command counters (commands, bytes), the host page count (the drive's clock), the
//! metadata pages owed (`ftl.meta_writes`), and one [`Item`] per page for the pool that holds
//! it (logical page `l` in pool `l mod pools`, as page `l / pools` of that pool).  The per-page
//! work (mapping, GC, the page counters) is the pool's, on whichever thread runs it.

use crate::error::{Error, Result};
use crate::ftl::{Counters, FastDiv, META_ONE};
use crate::op::{Op, OpKind};

/// One page of a host command, for one pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Item {
    /// The logical page within its pool (`l / pools`).
    pub lpn: u32,
    /// Host pages written in the chunk before this item: with the chunk's base, the drive's
    /// host page count when it runs (the clock cost-benefit's ages read).
    pub off: u32,
    /// The pool's place in its shard.
    pub slot: u16,
    pub stream: u8,
    /// [`WRITE`], [`READ`] or [`TRIM`], with [`RMW`] and [`META`].
    pub flags: u8,
}

pub(crate) const WRITE: u8 = 0;
pub(crate) const READ: u8 = 1;
pub(crate) const TRIM: u8 = 2;
/// The kind bits of [`Item::flags`].
pub(crate) const KIND: u8 = 3;
/// A write that covers only part of the page: read-modify-write when the page holds data.
pub(crate) const RMW: u8 = 4;
/// The write owes one metadata page (`ftl.meta_writes`), written after it.
pub(crate) const META: u8 = 8;

/// Where the split puts its items.
pub(crate) trait Sink {
    /// Take `item` for shard `shard`; `seq` is the drive's host page count before it.  An
    /// error stops the split (the run ends).
    fn put(&mut self, shard: usize, item: Item, seq: u64) -> Result<()>;
}

/// Commands into items, with the counters only the whole drive knows.
pub(crate) struct Split {
    pools: u32,
    div: FastDiv,
    /// Per pool: its shard and its place there.
    route: Vec<(u16, u16)>,
    lpns: u32,
    spp: u64,
    page_size: u64,
    sector_size: u64,
    meta_rate: u64,
    meta_owed: u64,
    /// The host side of the counters: commands, bytes and host pages written (the rest, the
    /// pools' work, stays 0 here).
    pub c: Counters,
}

impl Split {
    /// The split of a drive of `lpns` logical pages over `pools` pools (at least 2), pool `g`
    /// in shard `g % shards` at place `g / shards`.
    pub(crate) fn new(pools: u32, shards: u32, lpns: u32, page_size: u64, sector_size: u64, meta_rate: u64) -> Split {
        Split {
            pools,
            div: FastDiv::new(pools),
            route: (0..pools).map(|g| ((g % shards) as u16, (g / shards) as u16)).collect(),
            lpns,
            spp: page_size / sector_size,
            page_size,
            sector_size,
            meta_rate,
            meta_owed: 0,
            c: Counters::default(),
        }
    }

    /// One page of a command.
    #[inline(always)]
    fn page<S: Sink>(&mut self, sink: &mut S, lpn: u32, mut flags: u8, stream: u32) -> Result<()> {
        let q = self.div.div(lpn);
        let (shard, slot) = self.route[(lpn - q * self.pools) as usize];
        let seq = self.c.host_write_pages;
        if flags & KIND == WRITE {
            self.c.host_write_pages += 1;
            if self.meta_rate > 0 {
                // Ftl::owe_meta: at most one page a host page (meta_writes <= 1)
                self.meta_owed += self.meta_rate;
                if self.meta_owed >= META_ONE {
                    self.meta_owed -= META_ONE;
                    flags |= META;
                }
            }
        }
        sink.put(shard as usize, Item { lpn: q, off: 0, slot, stream: stream as u8, flags }, seq)
    }

    /// A command of the functional loop (`sim::functional::run_until`'s two paths: whole
    /// pages of a page workload; sectors, whole-page writes on the page path).
    #[inline(always)]
    pub(crate) fn command<S: Sink>(&mut self, op: &Op, pages: bool, sink: &mut S) -> Result<()> {
        let spp = self.spp;
        match op.kind {
            OpKind::Write if pages => self.write_pages(op.start as u32, op.len, op.stream, sink),
            OpKind::Read if pages => self.read_pages(op.start as u32, op.len, sink),
            OpKind::Trim if pages => self.trim_pages(op.start as u32, op.len, sink),
            OpKind::Write if op.start % spp == 0 && op.len as u64 % spp == 0 => {
                self.write_pages((op.start / spp) as u32, (op.len as u64 / spp) as u32, op.stream, sink)
            }
            OpKind::Write => self.write_sectors(op.start, op.len as u64, op.stream, sink),
            OpKind::Read => self.read_sectors(op.start, op.len as u64, sink),
            OpKind::Trim => self.trim_sectors(op.start, op.len as u64, sink),
        }
    }

    /// `Ftl::write_pages`.
    pub(crate) fn write_pages<S: Sink>(&mut self, lpn: u32, n: u32, stream: u32, sink: &mut S) -> Result<()> {
        self.c.host_write_cmds += 1;
        self.c.host_write_bytes += n as u64 * self.page_size;
        for i in 0..n {
            self.page(sink, lpn + i, WRITE, stream)?;
        }
        Ok(())
    }

    /// `Ftl::read_pages`.
    pub(crate) fn read_pages<S: Sink>(&mut self, lpn: u32, n: u32, sink: &mut S) -> Result<()> {
        self.c.host_read_cmds += 1;
        self.c.host_read_bytes += n as u64 * self.page_size;
        for i in 0..n {
            self.page(sink, lpn + i, READ, 0)?;
        }
        Ok(())
    }

    /// `Ftl::trim_pages`.
    pub(crate) fn trim_pages<S: Sink>(&mut self, lpn: u32, n: u32, sink: &mut S) -> Result<()> {
        self.c.trim_cmds += 1;
        for i in 0..n {
            self.page(sink, lpn + i, TRIM, 0)?;
        }
        Ok(())
    }

    /// `Ftl::write_sectors`: pages only partly covered are written with [`RMW`].
    pub(crate) fn write_sectors<S: Sink>(&mut self, lba: u64, count: u64, stream: u32, sink: &mut S) -> Result<()> {
        self.check_range(lba, count)?;
        self.c.host_write_cmds += 1;
        self.c.host_write_bytes += count * self.sector_size;
        let spp = self.spp;
        for lpn in lba / spp..=(lba + count - 1) / spp {
            let start = lpn * spp;
            let covered = lba <= start && lba + count >= start + spp;
            self.page(sink, lpn as u32, if covered { WRITE } else { WRITE | RMW }, stream)?;
        }
        Ok(())
    }

    /// `Ftl::read_sectors`.
    pub(crate) fn read_sectors<S: Sink>(&mut self, lba: u64, count: u64, sink: &mut S) -> Result<()> {
        self.check_range(lba, count)?;
        self.c.host_read_cmds += 1;
        self.c.host_read_bytes += count * self.sector_size;
        for lpn in lba / self.spp..=(lba + count - 1) / self.spp {
            self.page(sink, lpn as u32, READ, 0)?;
        }
        Ok(())
    }

    /// `Ftl::trim_sectors`: whole pages only.
    pub(crate) fn trim_sectors<S: Sink>(&mut self, lba: u64, count: u64, sink: &mut S) -> Result<()> {
        self.check_range(lba, count)?;
        self.c.trim_cmds += 1;
        for lpn in lba.div_ceil(self.spp)..(lba + count) / self.spp {
            self.page(sink, lpn as u32, TRIM, 0)?;
        }
        Ok(())
    }

    /// `Ftl::check_range`, with its message.
    fn check_range(&self, lba: u64, count: u64) -> Result<()> {
        let total = self.lpns as u64 * self.spp;
        if count == 0 {
            return Err(Error::device("a command must transfer at least one sector"));
        }
        if lba.checked_add(count).is_none_or(|e| e > total) {
            return Err(Error::device(format!("LBA range {lba}+{count} runs past the last LBA {}", total - 1)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what the split makes.
    #[derive(Default)]
    struct Got(Vec<(usize, Item, u64)>);
    impl Sink for Got {
        fn put(&mut self, shard: usize, item: Item, seq: u64) -> Result<()> {
            self.0.push((shard, item, seq));
            Ok(())
        }
    }

    #[test]
    fn pages_go_to_pool_l_mod_pools_with_the_clock_and_the_host_counters() {
        // 3 pools in 2 shards: pool 0 -> (0, 0), 1 -> (1, 0), 2 -> (0, 1)
        let mut s = Split::new(3, 2, 100, 4096, 512, 0);
        let mut got = Got::default();
        s.write_pages(4, 3, 1, &mut got).unwrap();
        s.read_pages(0, 1, &mut got).unwrap();
        // page 4: pool 1 (shard 1, slot 0), page 5: pool 2 (shard 0, slot 1), page 6: pool 0
        assert_eq!(got.0[0], (1, Item { lpn: 1, off: 0, slot: 0, stream: 1, flags: WRITE }, 0));
        assert_eq!(got.0[1], (0, Item { lpn: 1, off: 0, slot: 1, stream: 1, flags: WRITE }, 1));
        assert_eq!(got.0[2], (0, Item { lpn: 2, off: 0, slot: 0, stream: 1, flags: WRITE }, 2));
        assert_eq!(got.0[3], (0, Item { lpn: 0, off: 0, slot: 0, stream: 0, flags: READ }, 3));
        assert_eq!((s.c.host_write_cmds, s.c.host_write_bytes, s.c.host_write_pages), (1, 3 * 4096, 3));
        assert_eq!((s.c.host_read_cmds, s.c.host_read_bytes), (1, 4096));
    }

    #[test]
    fn partial_pages_are_read_modify_write_and_trims_whole_pages_only() {
        let mut s = Split::new(2, 2, 10, 4096, 512, 0);
        let mut got = Got::default();
        s.write_sectors(4, 12, 0, &mut got).unwrap(); // sectors 4..16: page 0 partly, page 1 whole
        let flags: Vec<u8> = got.0.iter().map(|g| g.1.flags).collect();
        assert_eq!(flags, [WRITE | RMW, WRITE]);
        got.0.clear();
        s.trim_sectors(4, 16, &mut got).unwrap(); // sectors 4..20: page 1 only is whole
        assert_eq!(got.0.len(), 1);
        assert_eq!((got.0[0].1.lpn, got.0[0].0), (0, 1));
        let e = s.read_sectors(75, 6, &mut got).unwrap_err();
        assert_eq!(e.to_string(), Error::device("LBA range 75+6 runs past the last LBA 79").to_string());
    }

    #[test]
    fn metadata_pages_are_owed_as_the_ftl_owes_them() {
        // page i (from 1) owes one when floor(i r) passes a whole page: r = 0.4 in 2^-32
        let rate = crate::ftl::meta_rate(0.4);
        let mut s = Split::new(2, 1, 100, 4096, 512, rate);
        let mut got = Got::default();
        s.write_pages(0, 10, 0, &mut got).unwrap();
        s.read_pages(0, 3, &mut got).unwrap(); // reads owe nothing
        let owed: Vec<u64> = (0..13).filter(|&i| got.0[i as usize].1.flags & META != 0).collect();
        let want: Vec<u64> = (0..10u64).filter(|i| (i + 1) * rate / META_ONE > i * rate / META_ONE).collect();
        assert_eq!(owed, want);
        assert_eq!(owed.len(), 3, "4 pages less the rounding of 0.4 down in 2^-32");
    }
}
