//! The cost model's drive: resource timelines of the controller, the host link, each flash
//! channel and each die, the write buffer, and the per-page-type costs; it charges NAND
//! reads, programs, erases, garbage collection and folds and says when each is done.

use super::channel::Channels;
use super::{costs, PageTiming, Resolved};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Resource timelines of the drive.
pub(super) struct Device {
    pub(super) r: Resolved,
    pub(super) die_free: Vec<u64>,
    /// The flash channels' timelines (`timing.channel_order`).
    pub(super) ch: Channels,
    pub(super) ctrl_free: u64,
    /// The host link's timeline, one channel in the same order as the flash channels: in
    /// ready order a command's data goes out when it is ready, not behind an earlier-issued
    /// command still waiting for its die (NVMe completes out of order).
    pub(super) link: Channels,
    /// Release times of the units in the write buffer.
    pub(super) buffer: BinaryHeap<Reverse<u64>>,
    pub(super) rr: usize,
    pub(super) write_cache: bool,
    /// Per-unit program time with aggregation (tPROG / units per program).
    pub(super) prog_unit_ns: u64,
    /// The same in SLC mode, SLC-mode read time, and SLC (units per program, tPROG).
    pub(super) slc_prog_unit_ns: u64,
    pub(super) slc_read_ns: u64,
    pub(super) slc_program: (u64, u64),
    /// Mapping units per FTL block (superblock).
    pub(super) ftl_block_units: u64,
    /// A superblock's stripe and scale (its erase charge); None for FTL blocks.
    pub(super) superblock: Option<costs::SuperblockErase>,
    /// Per-page-type costs, with `t_read_page_us` or `t_prog_page_us`.
    pub(super) pages: Option<PageCosts>,
    /// Independent read plane groups per die (`read_planes`; 1: reads occupy the die).
    /// With more than one, `die_free` stays the end of everything on the die (programs
    /// and erases wait for the reads in flight), `pe_free` the end of its program/erase
    /// work (reads wait for it) and `group_free` each group's reads.
    pub(super) groups: usize,
    pub(super) pe_free: Vec<u64>,
    pub(super) group_free: Vec<u64>,
    /// With `read_whole_pages`: the NAND pages the current read command has sensed, as
    /// `(die + dies x page, sensed at)`.
    pub(super) sensed: Vec<(u64, u64)>,
}

/// Costs by page type, precomputed: the page type of every position `ppn % period` (the
/// period is `dies x units_per_program`: a program unit on every die) and, per type, tR,
/// the program time of one unit aggregated (the page's time / its units) and padded (the
/// whole page).  The times not given stay uniform (tR; tPROG / units and tPROG).
pub(super) struct PageCosts {
    pub(super) period: u32,
    pub(super) kind: Box<[u8]>,
    pub(super) read_ns: [u64; 4],
    pub(super) prog_unit_ns: [u64; 4],
    pub(super) prog_pad_ns: [u64; 4],
    /// Padded program of a unit whose page is not known: the mean page's time.
    pub(super) pad_mean_ns: u64,
}

impl PageCosts {
    pub(super) fn new(r: &Resolved, p: &PageTiming) -> Self {
        let dies = r.dies;
        let period = dies * r.units_per_program;
        let kind = (0..period).map(|i| ((i / dies) / p.units_per_page) as u8).collect();
        let k = costs::KindCosts::new(r, p);
        PageCosts {
            period,
            kind,
            read_ns: k.read_ns,
            prog_unit_ns: k.prog_unit_ns,
            prog_pad_ns: k.prog_pad_ns,
            pad_mean_ns: k.pad_mean_ns,
        }
    }

    #[inline(always)]
    pub(super) fn kind(&self, ppn: u32) -> usize {
        self.kind[(ppn % self.period) as usize] as usize
    }
}

impl Device {
    pub(super) fn new(
        r: Resolved,
        write_cache: bool,
        ftl_block_units: u64,
        superblock: Option<costs::SuperblockErase>,
    ) -> Self {
        let costs::UnitCosts { prog_unit_ns, slc_prog_unit_ns, slc_read_ns, slc_program } = costs::UnitCosts::new(&r);
        let groups = r.reads.as_ref().map_or(1, |x| x.read_planes as usize);
        let (pe_free, group_free) =
            if groups > 1 { (vec![0; r.dies as usize], vec![0; r.dies as usize * groups]) } else { (vec![], vec![]) };
        Device {
            groups,
            pe_free,
            group_free,
            sensed: Vec::new(),
            pages: r.pages.as_ref().map(|p| PageCosts::new(&r, p)),
            slc_prog_unit_ns,
            slc_read_ns,
            slc_program,
            die_free: vec![0; r.dies as usize],
            ch: Channels::new(r.channels as usize, r.channel_order),
            ctrl_free: 0,
            link: Channels::new(1, r.channel_order),
            buffer: BinaryHeap::new(),
            rr: 0,
            write_cache,
            prog_unit_ns,
            ftl_block_units,
            superblock,
            r,
        }
    }

    #[inline]
    pub(super) fn channel_of(&self, die: usize) -> usize {
        die % self.r.channels as usize
    }

    /// NAND read time of the mapping unit at `ppn` (an SLC-mode page if `slc`).
    #[inline(always)]
    pub(super) fn read_ns(&self, ppn: u32, slc: bool) -> u64 {
        if slc {
            return self.slc_read_ns;
        }
        match &self.pages {
            None => self.r.t_read_ns,
            Some(pc) => pc.read_ns[pc.kind(ppn)],
        }
    }

    /// Die time to program the mapping unit at `ppn` (in SLC mode if `slc`): its share of
    /// the program unit (aggregated), or a whole program unit for it alone (`padded`; page
    /// by page, a whole page).
    #[inline(always)]
    pub(super) fn prog_ns(&self, ppn: u32, padded: bool, slc: bool) -> u64 {
        if slc {
            return if padded { self.slc_program.1 } else { self.slc_prog_unit_ns };
        }
        match &self.pages {
            None => {
                if padded {
                    self.r.t_prog_ns
                } else {
                    self.prog_unit_ns
                }
            }
            Some(pc) => {
                let k = pc.kind(ppn);
                if padded {
                    pc.prog_pad_ns[k]
                } else {
                    pc.prog_unit_ns[k]
                }
            }
        }
    }

    /// The same for a unit whose place is not known (the mean).
    #[inline]
    pub(super) fn prog_ns_any(&self, padded: bool, slc: bool) -> u64 {
        match (slc, padded, &self.pages) {
            (true, true, _) => self.slc_program.1,
            (true, false, _) => self.slc_prog_unit_ns,
            (false, true, Some(pc)) => pc.pad_mean_ns,
            (false, true, None) => self.r.t_prog_ns,
            (false, false, _) => self.prog_unit_ns,
        }
    }

    /// Program one mapping unit on `die` for `busy` ns of die time, data ready at `ready`;
    /// returns the end.
    #[inline]
    pub(super) fn program(&mut self, die: usize, ready: u64, busy: u64) -> u64 {
        let c = self.channel_of(die);
        let xfer_end = self.ch.channel(c, ready.max(self.die_free[die]), self.r.xfer_ns);
        let end = xfer_end + busy;
        self.die_free[die] = end;
        if self.groups > 1 {
            self.pe_free[die] = end;
        }
        end
    }

    /// Sense a page on `die`'s read group `g` from `ready` in `t_r` ns; returns when it is
    /// sensed.  The die is free to sense again then: the page's data-out on the channel
    /// overlaps the next sense (as a cache read does).
    #[inline(always)]
    fn sense(&mut self, die: usize, g: usize, ready: u64, t_r: u64) -> u64 {
        if self.groups == 1 {
            let sensed = ready.max(self.die_free[die]) + t_r;
            self.die_free[die] = sensed;
            return sensed;
        }
        let i = die * self.groups + g;
        let sensed = ready.max(self.pe_free[die]).max(self.group_free[i]) + t_r;
        self.group_free[i] = sensed;
        self.die_free[die] = self.die_free[die].max(sensed);
        sensed
    }

    /// Move one mapping unit sensed at `sensed` on `die` out over its channel; returns when
    /// it is out.
    #[inline(always)]
    fn data_out(&mut self, die: usize, sensed: u64) -> u64 {
        let c = self.channel_of(die);
        self.ch.channel(c, sensed, self.r.xfer_ns)
    }

    /// Read one mapping unit from `die` (its first read group), sensed in `t_r` ns;
    /// returns when its data is out on the channel.
    #[inline]
    pub(super) fn read(&mut self, die: usize, ready: u64, t_r: u64) -> u64 {
        let sensed = self.sense(die, 0, ready, t_r);
        self.data_out(die, sensed)
    }

    /// A host read of one mapping unit from read group `g` of `die`, sensed in `t_r` ns:
    /// with program/erase suspend, when the die has program/erase work queued past `ready`
    /// the read suspends it (after `suspend_ns`) and goes first, on the die and on the
    /// channel; the suspended work resumes after it (its timeline moves back by the read's
    /// time).  Returns `(sensed, out)`: when the page is sensed and when the data is out.
    #[inline]
    pub(super) fn host_read_at(&mut self, die: usize, g: usize, ready: u64, t_r: u64) -> (u64, u64) {
        let pe_free = if self.groups == 1 { self.die_free[die] } else { self.pe_free[die] };
        let Some(sus) = self.r.suspend_ns.filter(|&sus| pe_free > ready + sus) else {
            let sensed = self.sense(die, g, ready, t_r);
            return (sensed, self.data_out(die, sensed));
        };
        let c = self.channel_of(die);
        let sensed = ready + sus + t_r;
        self.die_free[die] += sus + t_r;
        if self.groups > 1 {
            self.pe_free[die] += sus + t_r;
            let i = die * self.groups + g;
            self.group_free[i] = self.group_free[i].max(sensed);
        }
        (sensed, self.ch.channel_first(c, sensed, self.r.xfer_ns))
    }

    /// A host read of the mapping unit at physical page `ppn`, sensed in `t_r` ns, on its
    /// die's read group; with `read_whole_pages`, a NAND page the command has sensed
    /// already is only moved out (`begin_read` starts a command).  Returns when it is out.
    #[inline]
    pub(super) fn host_read(&mut self, ppn: u32, ready: u64, t_r: u64) -> u64 {
        let dies = self.r.dies;
        let die = (ppn % dies) as usize;
        let Some(rt) = &self.r.reads else { return self.host_read_at(die, 0, ready, t_r).1 };
        let (g, page) = rt.place(ppn, dies, self.r.units_per_program);
        if !rt.read_whole_pages {
            return self.host_read_at(die, g, ready, t_r).1;
        }
        let key = die as u64 + dies as u64 * page;
        if let Some(&(_, sensed)) = self.sensed.iter().find(|&&(k, _)| k == key) {
            return self.data_out(die, sensed);
        }
        let (sensed, out) = self.host_read_at(die, g, ready, t_r);
        self.sensed.push((key, sensed));
        out
    }

    /// Start a host read command (forget the pages the last one sensed).
    #[inline]
    pub(super) fn begin_read(&mut self) {
        self.sensed.clear();
    }

    /// Charge garbage-collection work (copies, erases of superblocks) from `ready`; returns
    /// when it is done.  The controller's firmware handles every copied page, so copies
    /// also occupy the controller (delaying later host commands).  `senses`: the NAND
    /// senses the copies take (the FTL's count with `read_whole_pages`,
    /// [`Device::gc_senses`]; one per copy otherwise).
    pub(super) fn gc(&mut self, copies: u64, senses: u64, erases: u64, ready: u64) -> u64 {
        let dies = self.r.dies as usize;
        let mut done = ready;
        if self.r.gc_fw_ns > 0 && copies > 0 {
            self.ctrl_free = self.ctrl_free.max(ready) + copies * self.r.gc_fw_ns;
            done = self.ctrl_free;
        }
        // Each copy stays on its die (copyback-style: the superblock's pages on a die move
        // to the GC frontier's page on the same die); dies work in parallel, a sense and
        // the copies it reads on one die.
        let senses = senses.clamp(copies.min(1), copies);
        if senses == copies {
            for _ in 0..copies {
                let die = self.next_die();
                done = done.max(self.copy(die, ready, 1));
            }
        } else {
            // `copies` over `senses` senses as evenly as whole copies go: the first `r` read
            // one more
            let (q, r) = (copies / senses, copies % senses);
            for j in 0..senses {
                let die = self.next_die();
                done = done.max(self.copy(die, ready, q + u64::from(j < r)));
            }
        }
        if erases > 0 && self.r.gc_reclaim_ns > 0 {
            // the controller's work per unit reclaimed, before its erase is issued
            self.ctrl_free = self.ctrl_free.max(ready) + erases * self.r.gc_reclaim_ns;
            done = done.max(self.ctrl_free);
        }
        if erases > 0 {
            // an FTL block of `ftl_block_units` spans that many units / dies on each die:
            // charge the share of a physical block erase it frees (a superblock: one
            // multi-plane erase per die of its stripe, over the scale)
            let per_die = costs::erase_share(self.ftl_block_units, self.r.dies, self.r.block_units, self.superblock);
            let t = (self.r.t_erase_ns as f64 * per_die * erases as f64).round() as u64;
            for d in 0..dies {
                let s = ready.max(self.die_free[d]);
                self.die_free[d] = s + t;
                if self.groups > 1 {
                    self.pe_free[d] = s + t;
                }
                done = done.max(self.die_free[d]);
            }
        }
        done
    }

    /// Metadata pages (`ftl.meta_writes`): each a transfer and an aggregated unit program
    /// after `ready`, one on the die of `last` (the page the FTL put the last one on), more
    /// round-robin over the dies as GC copies are.  Returns when the last ends.
    pub(super) fn meta(&mut self, pages: u64, last: u32, ready: u64) -> u64 {
        let dies = self.r.dies as usize;
        let mut done = ready;
        for k in 0..pages {
            let die = if k + 1 == pages && last != crate::ftl::NONE { last as usize % dies } else { self.next_die() };
            done = done.max(self.program(die, ready, self.prog_unit_ns));
        }
        done
    }

    /// Charge folds of `pages` SLC pages into native mode from `ready`: each read in SLC
    /// mode and programmed in native mode on its die (on-die, as GC copies), with the
    /// controller's firmware per page as for GC copies; returns when they are done.
    pub(super) fn fold(&mut self, pages: u64, ready: u64) -> u64 {
        let mut done = ready;
        if self.r.gc_fw_ns > 0 && pages > 0 {
            self.ctrl_free = self.ctrl_free.max(ready) + pages * self.r.gc_fw_ns;
            done = self.ctrl_free;
        }
        for _ in 0..pages {
            let die = self.next_die();
            let r = self.read(die, ready, self.slc_read_ns);
            done = done.max(self.program(die, r, self.prog_unit_ns));
        }
        done
    }

    pub(super) fn nand_idle_at(&self) -> u64 {
        *self.die_free.iter().max().unwrap_or(&0)
    }

    /// When the first die runs out of work.
    pub(super) fn first_die_idle_at(&self) -> u64 {
        *self.die_free.iter().min().unwrap_or(&0)
    }

    /// Charge owed garbage-collection work, `(copies, senses, erases)` (as [`Device::gc`]),
    /// sense by sense to dies that are free before `bound` (each sense and the copies it
    /// reads on the die that is free first); the erases once every copy is charged.  The
    /// controller's share of each copy is taken from its time at `now`.  What does not fit
    /// stays owed.
    pub(super) fn fill_gc(&mut self, owed: &mut (u64, u64, u64), bound: u64, now: u64) {
        owed.1 = owed.1.clamp(owed.0.min(1), owed.0);
        while owed.0 > 0 {
            let (die, &free) = self.die_free.iter().enumerate().min_by_key(|&(_, t)| *t).expect("at least one die");
            if free >= bound {
                return;
            }
            let k = owed.0.div_ceil(owed.1);
            if self.r.gc_fw_ns > 0 {
                self.ctrl_free = self.ctrl_free.max(now) + k * self.r.gc_fw_ns;
            }
            self.copy(die, free, k);
            owed.0 -= k;
            owed.1 -= 1;
        }
        if owed.2 > 0 && self.first_die_idle_at() < bound {
            self.gc(0, 0, owed.2, 0);
            owed.2 = 0;
        }
    }

    /// One GC sense on `die` from `ready` and the `k` (>= 1) copies it reads: each moved out over
    /// the channel and programmed (its share of a program unit) on the same die.  Returns
    /// when the last program ends.
    #[inline(always)]
    fn copy(&mut self, die: usize, ready: u64, k: u64) -> u64 {
        let sensed = self.sense(die, 0, ready, self.r.t_read_ns);
        let out = self.data_out(die, sensed);
        let mut done = self.program(die, out, self.prog_unit_ns);
        for _ in 1..k {
            let out = self.data_out(die, sensed);
            done = self.program(die, out, self.prog_unit_ns);
        }
        done
    }

    /// The senses GC copies take, from the FTL's counts: the distinct NAND pages they read
    /// with `read_whole_pages` (`Counters::gc_read_senses`), else one per copy.
    #[inline(always)]
    pub(super) fn gc_senses(&self, copies: u64, counted: u64) -> u64 {
        if self.r.reads.as_ref().is_some_and(|x| x.read_whole_pages) {
            counted
        } else {
            copies
        }
    }

    /// The die of the next on-die background page (GC copy, fold, metadata page): round-robin.
    #[inline(always)]
    fn next_die(&mut self) -> usize {
        let die = self.rr;
        self.rr = (self.rr + 1) % self.r.dies as usize;
        die
    }

    /// Host link transfer of `bytes` starting no earlier than `ready`.
    #[inline]
    pub(super) fn link(&mut self, ready: u64, bytes: u64) -> u64 {
        self.link.channel(0, ready, costs::link_ns(bytes, self.r.link_ps_per_byte))
    }

    #[inline]
    pub(super) fn firmware(&mut self, ready: u64) -> u64 {
        self.ctrl_free = ready.max(self.ctrl_free) + self.r.fw_ns;
        self.ctrl_free
    }

    /// Wait for room for `units` in the write buffer; returns the admission time.
    pub(super) fn admit(&mut self, ready: u64, units: u64) -> u64 {
        let mut t = ready;
        while self.buffer.len() as u64 + units > self.r.buffer_units {
            match self.buffer.pop() {
                Some(Reverse(rel)) => t = t.max(rel),
                None => break,
            }
        }
        // drop entries already released
        while let Some(&Reverse(rel)) = self.buffer.peek() {
            if rel <= t {
                self.buffer.pop();
            } else {
                break;
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::timing::TimingConfig;

    fn timing(extra: &str) -> TimingConfig {
        toml::from_str(&format!(
            "channels = 2\ndies_per_channel = 2\nplanes = 2\ncell = \"tlc\"\nnand_page_size = \"48KiB\"\nnand_block_size = \"12MiB\"\nt_read_us = 60\nt_prog_us = 1800\n{extra}"
        ))
        .unwrap()
    }

    fn device(extra: &str) -> Device {
        let r = timing(extra).resolve(4096).unwrap();
        Device::new(r, true, 256, None)
    }

    /// The event model's erase of a superblock over the 4 dies x 2 planes (6,144 units): one
    /// tBERS on every die; its scale models by `k` erase `k` times as many units, each
    /// charging 1/k of it, so every die is as busy per page written.
    #[test]
    fn scaled_superblocks_erase_as_the_full_one_per_page() {
        let r = timing("").resolve(4096).unwrap();
        let full = 3072 * 2 * 4;
        for k in [1u32, 2, 8, 64] {
            let mut d =
                Device::new(r.clone(), true, full / k as u64, Some(costs::SuperblockErase { dies: 4, scale: k }));
            let done = d.gc(0, 0, k as u64, 0);
            assert_eq!(done, r.t_erase_ns, "scale {k}");
            assert!(d.die_free.iter().all(|&t| t == r.t_erase_ns), "scale {k}");
        }
        // FTL blocks: unchanged, one tBERS per NAND block a 256-unit block spans on a die
        let mut d = Device::new(r.clone(), true, 256, None);
        d.gc(0, 0, 1, 0);
        assert_eq!(d.die_free[0], (r.t_erase_ns as f64 * 256.0 / 4.0 / 3072.0).round() as u64);
    }

    /// Dies 0 and 2 share channel 0.  Die 0 programs a whole word line (1800 us), then a
    /// read on die 0 waits for it; a read on die 2, issued after, is sensed at 60 us.  In issue order it waits on the channel behind die 0's late
    /// transfer; in ready order it goes out when it is sensed.
    #[test]
    fn a_read_of_an_idle_die_passes_one_waiting_for_a_busy_die_in_ready_order() {
        for (order, waits) in [("issue", true), ("ready", false)] {
            let mut d = device(&format!("channel_order = \"{order}\""));
            let busy = d.program(0, 0, d.r.t_prog_ns);
            let late = d.read(0, 0, d.r.t_read_ns);
            assert_eq!(late, busy + d.r.t_read_ns + d.r.xfer_ns, "{order}");
            let early = d.read(2, 0, d.r.t_read_ns);
            let now = d.r.xfer_ns + d.r.t_read_ns + d.r.xfer_ns;
            if waits {
                assert_eq!(early, late + d.r.xfer_ns, "{order}");
            } else {
                assert!(early <= now, "{order}: {early} vs {now}");
            }
        }
    }

    /// The host link keeps the flash channels' order: a command whose data is ready early goes
    /// out at once in ready order, while in issue order it waits behind an earlier-issued
    /// command whose read is still on its die (in-order completion).
    #[test]
    fn the_host_link_moves_ready_data_first_in_ready_order() {
        for (order, waits) in [("issue", true), ("ready", false)] {
            let mut d = device(&format!("channel_order = \"{order}\""));
            let t = costs::link_ns(4096, d.r.link_ps_per_byte);
            assert!(t > 0);
            let late = d.link(500_000, 4096);
            assert_eq!(late, 500_000 + t, "{order}");
            let early = d.link(1_000, 4096);
            assert_eq!(early, if waits { late + t } else { 1_000 + t }, "{order}");
            // ready order still never overlaps two transfers: one ready inside the first waits
            let inside = d.link(500_000 + t / 2, 4096);
            assert!(inside >= late + t, "{order}: {inside}");
        }
    }

    /// 4 dies, a program unit of 12 x 2 = 24 units per die, 8 per page type: physical page
    /// `ppn` is on die ppn % 4, the (ppn / 4 % 24 / 8)th page of its word line.
    #[test]
    fn page_type_of_every_position() {
        let d = device("t_read_page_us = [50, 100, 150]\nt_prog_page_us = [400, 1200, 2000]");
        for ppn in 0u32..1000 {
            let kind = ((ppn / 4) % 24 / 8) as usize;
            assert_eq!(d.read_ns(ppn, false), [50_000, 100_000, 150_000][kind], "ppn {ppn}");
            assert_eq!(
                d.prog_ns(ppn, false, false),
                [50_000, 150_000, 250_000][kind],
                "ppn {ppn}: the page's time / its 8 units"
            );
            assert_eq!(d.prog_ns(ppn, true, false), [400_000, 1_200_000, 2_000_000][kind], "ppn {ppn}: a whole page");
        }
        // a word line on a die: 8 units of each page, the sum of the pages' times
        let wl: u64 = (0..24u32).map(|k| d.prog_ns(k * 4 + 1, false, false)).sum();
        assert_eq!(wl, 3_600_000);
        assert_eq!(d.r.t_prog_ns, 3_600_000);
        assert_eq!(d.r.t_read_ns, 100_000);
        // GC copies and folds (places not known): the mean page
        assert_eq!(d.prog_ns_any(false, false), 3_600_000 / 24);
        assert_eq!(d.prog_ns_any(true, false), 1_200_000);
    }

    #[test]
    fn without_page_times_every_unit_costs_the_same() {
        let d = device("");
        assert!(d.pages.is_none() && d.r.pages.is_none());
        for ppn in 0u32..100 {
            assert_eq!(d.read_ns(ppn, false), 60_000);
            assert_eq!(d.prog_ns(ppn, false, false), 1_800_000 / 24);
            assert_eq!(d.prog_ns(ppn, true, false), 1_800_000);
        }
        // only reads given: programs stay one-shot
        let d = device("t_read_page_us = [50, 100, 150]");
        assert_eq!(d.prog_ns(40, true, false), 1_800_000);
        assert_eq!(d.prog_ns(40, false, false), 75_000);
        assert_eq!(d.prog_ns_any(true, false), 1_800_000);
        assert_eq!(d.read_ns(40, false), 100_000);
    }

    /// 4 dies, 2 planes, a 48 KiB TLC word line: a sense reads 16 KiB (4 units) of one
    /// plane; die 0's units at positions 0..4 are its plane 0's LSB page, 4..8 plane 1's.
    #[test]
    fn a_read_on_plane_1_overlaps_one_on_plane_0() {
        let (p0, p1) = (0u32, 4 * 4);
        for (extra, second) in [("", 120_000), ("read_planes = 1", 120_000), ("read_planes = 2", 60_000)] {
            let mut d = device(&format!("channel_mbps = 1000000\n{extra}"));
            assert_eq!(d.r.reads.as_ref().map(|x| x.page_units), if extra.ends_with('2') { Some(4) } else { None });
            let a = d.host_read(p0, 0, 60_000);
            let b = d.host_read(p1, 0, 60_000);
            // both on channel 0: overlapped, the second waits for the first's data out
            let x = d.r.xfer_ns;
            assert_eq!((a, b), (60_000 + x, second + if second == 60_000 { 2 * x } else { x }), "{extra}");
            // two reads on one plane still queue
            let c = d.host_read(p0 + 4, 0, 60_000);
            assert_eq!(c - d.r.xfer_ns, if second == 60_000 { 120_000 } else { 180_000 }, "{extra}");
        }
    }

    /// Programs occupy the whole die: they wait for every read group, and reads wait for them.
    #[test]
    fn programs_wait_for_reads_in_flight_and_reads_for_programs() {
        let mut d = device("read_planes = 2\nchannel_mbps = 1000000");
        d.host_read(0, 0, 60_000);
        d.host_read(16, 10_000, 60_000);
        let end = d.program(0, 0, 1_000_000);
        assert_eq!(end, 70_000 + 2 * d.r.xfer_ns + 1_000_000, "after both groups' reads (and their data out)");
        let r = d.host_read(16 + 4, 0, 60_000);
        assert_eq!(r, end + 60_000 + d.r.xfer_ns, "a read on either group waits for the program");
        // an erase too
        d.gc(0, 0, 1, 0);
        assert!(d.host_read(0, 0, 60_000) > end + 60_000 + d.r.t_erase_ns / 100);
    }

    /// With `read_whole_pages`, a command's two units of one NAND page cost one tR; a next
    /// command senses again; units of another page of the die sense again.
    #[test]
    fn two_units_of_one_nand_page_in_one_command_cost_one_t_r() {
        for (whole, want) in [(false, 120_000), (true, 60_000)] {
            let mut d = device(&format!("read_whole_pages = {whole}\nchannel_mbps = 1000000"));
            let x = d.r.xfer_ns;
            d.begin_read();
            let a = d.host_read(0, 0, 60_000);
            let b = d.host_read(4, 0, 60_000);
            assert_eq!((a, b), (60_000 + x, want + if whole { 2 * x } else { x }), "whole {whole}");
            assert_eq!(d.die_free[0], want);
            d.host_read(16, 0, 60_000); // plane 1's page: sensed
            assert_eq!(d.die_free[0], want + 60_000);
            d.begin_read();
            d.host_read(8, 0, 60_000); // the first page again, a new command
            assert_eq!(d.die_free[0], want + 120_000);
        }
    }

    /// Cache reads: a die senses its next page while the last page's data is still moving
    /// out over the channel (a slow one here: 4 KiB at 40 MB/s, ~102 us per unit).
    #[test]
    fn the_next_sense_overlaps_the_last_pages_data_out() {
        let mut d = device("channel_mbps = 40");
        let x = d.r.xfer_ns;
        assert!(x > 60_000);
        let a = d.read(0, 0, 60_000);
        assert_eq!(a, 60_000 + x);
        let b = d.read(0, 0, 60_000);
        assert_eq!(d.die_free[0], 120_000, "the second sense starts when the first ends");
        assert_eq!(b, a + x, "its data out waits only for the channel");
    }
}
