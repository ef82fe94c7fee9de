//! The state of a timed run and its event loop: commands issued (closed loop, open-loop
//! arrivals or trace time), charged to the device through the functional FTL, completed in
//! time order and recorded.

use super::engine::EventQueue;
use super::record::Recorder;
use super::{mapcache, urgent, Device, Resolved, Stop};
use crate::config::timing::TimingConfig;
use crate::error::{Error, Result};
use crate::ftl::{Ftl, Policy};
use crate::rng::Rng;
use crate::workload::{Op, OpKind, Workload};
use std::cmp::Reverse;

/// The FTL counters the timed layer charges a write with (a snapshot cheaper than the whole
/// `Counters`).
#[derive(Clone, Copy)]
pub(super) struct Work {
    pub(super) host_write_pages: u64,
    pub(super) nand_write_pages: u64,
    pub(super) gc_copy_pages: u64,
    pub(super) gc_read_senses: u64,
    pub(super) erases: u64,
    pub(super) fold_pages: u64,
    pub(super) meta_pages: u64,
}

impl Work {
    #[inline(always)]
    pub(super) fn of(c: &crate::ftl::Counters) -> Work {
        Work {
            host_write_pages: c.host_write_pages,
            nand_write_pages: c.nand_write_pages,
            gc_copy_pages: c.gc_copy_pages,
            gc_read_senses: c.gc_read_senses,
            erases: c.erases,
            fold_pages: c.fold_pages,
            meta_pages: c.meta_pages,
        }
    }
    crate::ftl::fieldwise_minus!(pub(super), Work {
        host_write_pages,
        nand_write_pages,
        gc_copy_pages,
        gc_read_senses,
        erases,
        fold_pages,
        meta_pages
    });
}

/// Command in flight.
#[derive(Clone, Copy)]
pub(super) struct InFlight {
    pub(super) issued: u64,
    pub(super) write: bool,
    pub(super) bytes: u64,
    pub(super) host_pages: u64,
    pub(super) nand_pages: u64,
    pub(super) urgent: bool,
}

/// State of a timed run that survives across rounds.
pub struct TimedState {
    pub(super) dev: Device,
    pub(super) q: EventQueue<InFlight>,
    pub rec: Recorder,
    pub(super) started: bool,
    pub(super) arrivals: Rng,
    pub(super) next_arrival: u64,
    pub(super) bg_target: u32,
    /// The urgent state, when configured.
    pub(super) urgent: Option<urgent::Urgent>,
    pub(super) sectors_per_page: u64,
    pub(super) open_loop: Option<f64>,
    /// Trace-time replay: speed-up, simulated time the replay started, and the next request.
    pub(super) trace_speed: Option<f64>,
    pub(super) trace_base: u64,
    pub(super) pending: Option<Op>,
    /// PTS IOPS test: P(read) decided here for every command of an all-write workload.
    pub(super) mix: Option<f64>,
    pub(super) mix_rng: Rng,
    /// SLC cache: fold in idle time once the host has had nothing outstanding this long.
    pub(super) idle_fold_ns: Option<u64>,
    /// Completion time of the last command.
    pub(super) last_done: u64,
    /// The mapping-table cache, when on.
    pub(super) map: Option<mapcache::MapCache>,
    /// Polled once per event (Ctrl-C through the caller).
    pub(super) interrupt: crate::interrupt::Interrupt,
}

impl TimedState {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        t: &TimingConfig,
        r: Resolved,
        physical_pages: u64,
        blocks: u32,
        superblock: Option<super::costs::SuperblockErase>,
        gc_low: u32,
        page_size: u64,
        sector: u64,
        seed: u64,
    ) -> Self {
        let ftl_block_units = physical_pages / blocks.max(1) as u64;
        let bg_target = t.background_free_blocks.unwrap_or(gc_low + (blocks / 100).max(1));
        let interval_ns = (t.series_interval_s * 1e9).round().max(1.0) as u64;
        TimedState {
            q: EventQueue::new(),
            rec: Recorder::new(interval_ns),
            started: false,
            arrivals: Rng::stream(seed, 0x6172),
            next_arrival: 0,
            bg_target: if t.background_gc { bg_target } else { 0 },
            urgent: urgent::Urgent::new(t, &r, blocks, page_size, interval_ns),
            sectors_per_page: page_size / sector,
            open_loop: t.arrival_iops,
            trace_speed: None,
            trace_base: 0,
            pending: None,
            mix: None,
            mix_rng: Rng::stream(seed, 0x6d78),
            idle_fold_ns: None,
            last_done: 0,
            map: r.map_cache.as_ref().map(mapcache::MapCache::new),
            dev: Device::new(r, t.write_cache, ftl_block_units, superblock),
            interrupt: Default::default(),
        }
    }

    /// Let `interrupt` stop [`TimedState::drive`] (an `Interrupted` error, between events).
    pub fn set_interrupt(&mut self, interrupt: crate::interrupt::Interrupt) {
        self.interrupt = interrupt;
    }

    pub fn now(&self) -> u64 {
        self.q.now()
    }

    /// Nothing in flight and no trace request waiting.
    pub fn idle(&self) -> bool {
        self.q.is_empty() && self.pending.is_none()
    }

    /// Replay the next workload at trace time (`Some(speed)`) or not (`None`); trace time
    /// zero is now.
    pub fn set_trace_timing(&mut self, speed: Option<f64>) {
        self.trace_speed = speed;
        self.trace_base = self.q.now();
        self.pending = None;
    }

    pub fn resolved(&self) -> &Resolved {
        &self.dev.r
    }

    /// Fold the SLC cache in idle time after `idle_ms` with no command outstanding.
    pub fn set_idle_fold(&mut self, idle_ms: Option<f64>) {
        self.idle_fold_ns = idle_ms.map(|ms| (ms * 1e6).round() as u64);
    }

    /// Decide each command's direction here, reading with probability `read` (PTS IOPS
    /// test: the workload is built all-write), or leave it to the workload (`None`).
    pub fn set_mix(&mut self, read: Option<f64>) {
        self.mix = read;
    }

    /// Complete every command in flight without issuing more (the end of a PTS
    /// combination: fio waits for its I/Os before the next run).
    pub fn drain(&mut self) -> Result<()> {
        while self.complete_next()?.is_some() {}
        Ok(())
    }

    /// Fold SLC blocks while the host is idle (nothing outstanding since `last_done` +
    /// the idle delay) and the NAND and controller would otherwise idle before `now`.
    pub(super) fn fold_idle<P: Policy>(&mut self, f: &mut Ftl<P>, now: u64) -> Result<()> {
        let Some(delay) = self.idle_fold_ns else { return Ok(()) };
        let from = self.last_done.saturating_add(delay);
        loop {
            let start = from.max(self.dev.nand_idle_at()).max(self.dev.ctrl_free);
            if start >= now {
                return Ok(());
            }
            let before = f.c.clone();
            if f.background_fold()?.is_none() {
                return Ok(());
            }
            let d = f.c.minus(&before);
            let t = self.dev.fold(d.fold_pages, start);
            self.dev.gc(0, 0, d.erases, t);
        }
    }

    pub(super) fn exp_gap(&mut self, rate: f64) -> u64 {
        let u = 1.0 - self.arrivals.f64();
        (-libm::log(u) / rate * 1e9) as u64
    }

    /// Whether the drive is in the urgent state now.
    #[inline]
    pub fn urgent_now(&self) -> bool {
        self.urgent.as_ref().is_some_and(|u| u.active)
    }

    /// (time in the urgent state, host write bytes issued in it) so far, when configured.
    pub fn urgent_totals(&self) -> Option<(u64, u64)> {
        self.urgent.as_ref().map(|u| u.totals(self.q.now()))
    }

    /// The urgent state's figures, when configured.
    pub fn urgent_report(&self, t: &TimingConfig) -> Option<urgent::UrgentReport> {
        let w = t.urgent_sustain_window_s.unwrap_or(urgent::DEFAULT_SUSTAIN_WINDOW_S);
        self.urgent.as_ref().map(|u| u.report(self.q.now(), t.urgent_free_pct.unwrap_or(0.0), w))
    }

    /// Issue the workload's next command at `now` and queue its completion (TRIMs are
    /// applied on the way; nothing is issued at the end of a finite workload).
    pub(super) fn issue<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        wl: &mut Workload,
        rng: &mut Rng,
        now: u64,
    ) -> Result<()> {
        loop {
            let op = if wl.pages {
                // the same two-stage prefetch pipeline as the functional hot loop
                let (op, ahead) = wl.next_ahead(rng);
                f.prefetch_lpn(ahead.start as u32);
                if let Some(near) = wl.peek(crate::workload::AHEAD / 2) {
                    f.prefetch_old_page(near.start as u32);
                }
                op
            } else {
                wl.next(rng)
            };
            let mut op = op;
            if let Some(p) = self.mix {
                if op.kind != OpKind::Trim {
                    op.kind = if self.mix_rng.f64() < p { OpKind::Read } else { OpKind::Write };
                }
            }
            if op.len == 0 || self.issue_op(f, op, wl.pages, now)? {
                return Ok(());
            }
            self.interrupt.poll()?; // a TRIM: a run of them stays in this loop
        }
    }

    /// Issue `op` at `now`; returns whether a completion was queued (TRIMs complete in the
    /// controller's firmware time and queue nothing).
    pub(super) fn issue_op<P: Policy>(&mut self, f: &mut Ftl<P>, op: Op, pages: bool, now: u64) -> Result<bool> {
        if self.idle_fold_ns.is_some() && self.q.is_empty() {
            self.fold_idle(f, now)?;
        }
        self.background_gc(f, now)?;
        if self.urgent.is_some() {
            self.urgent_step(f, now)?;
        }
        let urgent_now = self.urgent_now();
        let before = Work::of(&f.c);
        let t1 = self.dev.firmware(now);
        match op.kind {
            OpKind::Trim => {
                self.issue_trim(f, op, pages, t1)?;
                return Ok(false);
            }
            OpKind::Write => self.issue_write(f, op, pages, now, t1, urgent_now, &before)?,
            OpKind::Read => self.issue_read(f, op, pages, now, t1, urgent_now)?,
        }
        Ok(true)
    }

    /// Background GC on NAND that would otherwise idle.
    #[inline(always)]
    fn background_gc<P: Policy>(&mut self, f: &mut Ftl<P>, now: u64) -> Result<()> {
        while self.bg_target > 0 && f.free_blocks() < self.bg_target && self.dev.nand_idle_at() < now {
            let before = f.c.clone();
            match f.background_collect(self.bg_target)? {
                Some(copied) if copied < f.pages_per_block() => {
                    let d = f.c.minus(&before);
                    let start = self.dev.nand_idle_at();
                    let senses = self.dev.gc_senses(d.gc_copy_pages, d.gc_read_senses);
                    self.dev.gc(d.gc_copy_pages, senses, d.erases, start);
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// A TRIM: the FTL unmaps, the mapping-table cache reads the entries.
    #[inline(always)]
    fn issue_trim<P: Policy>(&mut self, f: &mut Ftl<P>, op: Op, pages: bool, t1: u64) -> Result<()> {
        let spp = self.sectors_per_page;
        if pages {
            f.trim_pages(op.start as u32, op.len);
            self.map_lookup(op.start, op.len as u64, true, false, t1);
        } else {
            f.trim_sectors(op.start, op.len as u64)?;
            // the pages the range touches (a partly trimmed page's entry is read too)
            let (a, b) = (op.start / spp, (op.start + op.len as u64 - 1) / spp);
            self.map_lookup(a, b - a + 1, true, false, t1);
        }
        Ok(())
    }

    /// A write: through the link, the urgent throttle and the write buffer; the FTL decides
    /// the NAND work (GC, folds, programs), queued as a completion.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn issue_write<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        op: Op,
        pages: bool,
        now: u64,
        t1: u64,
        urgent_now: bool,
        before: &Work,
    ) -> Result<()> {
        let spp = self.sectors_per_page;
        let units = if pages { op.len as u64 } else { (op.start + op.len as u64 - 1) / spp - op.start / spp + 1 };
        let bytes = if pages { units * f.page_size() } else { op.len as u64 * f.sector_size() };
        let mut t2 = self.dev.link(t1, bytes);
        if let Some(u) = self.urgent.as_mut() {
            t2 = u.admit(t2, bytes, urgent_now);
        }
        let t3 = if self.dev.write_cache { self.dev.admit(t2, units) } else { t2 };
        // the translation pages of the written pages (mapping-table cache): the
        // programs start once they are in DRAM
        let map_ready = self.map_lookup(if pages { op.start } else { op.start / spp }, units, true, false, t1);
        // the functional FTL decides the NAND work
        let mut ppns = [0u32; 64];
        let mut n = 0usize;
        // sector writes: the old data of a partly written page that holds data is
        // read before its program (read-modify-write)
        let mut rmw = [crate::ftl::NONE; 2];
        if !pages {
            let (first, end) = (op.start / spp, op.start + op.len as u64);
            let last = (end - 1) / spp;
            if op.start % spp != 0 || end < (first + 1) * spp {
                rmw[0] = f.lookup(first as u32).unwrap_or(crate::ftl::NONE);
            }
            if last != first && end % spp != 0 {
                rmw[1] = f.lookup(last as u32).unwrap_or(crate::ftl::NONE);
            }
        }
        if pages {
            f.note_host_write(op.start as u32, bytes);
            for i in 0..op.len {
                let p = f.write_page(op.start as u32 + i, op.stream)?;
                if n < ppns.len() {
                    ppns[n] = p;
                    n += 1;
                }
            }
        } else {
            f.write_sectors(op.start, op.len as u64, op.stream)?;
        }
        let d = Work::of(&f.c).minus(before);
        if urgent_now && (d.gc_copy_pages > 0 || d.erases > 0) {
            self.urgent_flush(t3); // the urgent GC's owed work comes first
        }
        let mut gc_done = if d.gc_copy_pages > 0 || d.erases > 0 {
            let senses = self.dev.gc_senses(d.gc_copy_pages, d.gc_read_senses);
            self.dev.gc(d.gc_copy_pages, senses, d.erases, t3)
        } else {
            t3
        };
        if d.fold_pages > 0 {
            gc_done = gc_done.max(self.dev.fold(d.fold_pages, t3));
        }
        let host_pages = d.host_write_pages;
        let gc_done = gc_done.max(map_ready);
        let mut end = self.program_host_pages(f, op, pages, &ppns[..n], host_pages, &rmw, gc_done, t3, map_ready)?;
        if d.meta_pages > 0 {
            // the write's metadata pages (`ftl.meta_writes`): programs of their own
            end = end.max(self.dev.meta(d.meta_pages, f.last_meta_page(), gc_done));
        }
        let done = if self.dev.write_cache { t3 } else { end };
        let inflight = InFlight {
            issued: now,
            write: true,
            bytes,
            host_pages,
            nand_pages: d.nand_write_pages,
            urgent: urgent_now,
        };
        self.q.push(done.max(now), inflight);
        Ok(())
    }

    /// The programs of a write's `host_pages` pages (`ppns`: where the FTL put them, when
    /// it told), after `gc_done`; sector writes first read the old data of partly written
    /// pages (`rmw`).  Returns when the last program ends.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn program_host_pages<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        op: Op,
        pages: bool,
        ppns: &[u32],
        host_pages: u64,
        rmw: &[u32; 2],
        gc_done: u64,
        t3: u64,
        map_ready: u64,
    ) -> Result<u64> {
        let spp = self.sectors_per_page;
        let dies = self.dev.r.dies as usize;
        let slc_cache = f.slc_enabled();
        let mut end = gc_done;
        if ppns.len() as u64 == host_pages {
            // one program per die touched, units grouped by die (superblock striping)
            for &p in ppns {
                let die = p as usize % dies;
                let busy = self.dev.prog_ns(p, !self.dev.write_cache, slc_cache && f.in_slc(p));
                end = end.max(self.dev.program(die, gc_done, busy));
                if self.dev.write_cache {
                    self.dev.buffer.push(Reverse(self.dev.die_free[die]));
                }
            }
        } else if !pages {
            // each page on the die the FTL placed it on, after any old data it merges
            let mut ready = gc_done;
            for &p in rmw.iter().filter(|&&p| p != crate::ftl::NONE) {
                let t_r = self.dev.read_ns(p, slc_cache && f.in_slc(p));
                ready = ready.max(self.dev.read(p as usize % dies, t3.max(map_ready), t_r));
            }
            for lpn in op.start / spp..=(op.start + op.len as u64 - 1) / spp {
                let p = f.lookup(lpn as u32).ok_or_else(|| Error::internal("a written page is not mapped"))?;
                let die = p as usize % dies;
                let busy = self.dev.prog_ns(p, !self.dev.write_cache, slc_cache && f.in_slc(p));
                end = end.max(self.dev.program(die, ready, busy));
                if self.dev.write_cache {
                    self.dev.buffer.push(Reverse(self.dev.die_free[die]));
                }
            }
        } else {
            // more pages than `ppns` holds: round-robin over the dies; the mode of
            // the command's last page stands for all of them
            let slc = slc_cache && f.lookup((op.start + op.len as u64 - 1) as u32).is_some_and(|p| f.in_slc(p));
            let busy = self.dev.prog_ns_any(!self.dev.write_cache, slc);
            for k in 0..host_pages {
                let die = (self.dev.rr + k as usize) % dies;
                end = end.max(self.dev.program(die, gc_done, busy));
                if self.dev.write_cache {
                    self.dev.buffer.push(Reverse(self.dev.die_free[die]));
                }
            }
        }
        Ok(end)
    }

    /// A read: the translation pages first (mapping-table cache), then the data, then the link.
    #[inline(always)]
    fn issue_read<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        op: Op,
        pages: bool,
        now: u64,
        t1: u64,
        urgent_now: bool,
    ) -> Result<()> {
        let spp = self.sectors_per_page;
        let (first, count) = if pages {
            (op.start, op.len as u64)
        } else {
            (op.start / spp, (op.start + op.len as u64 - 1) / spp - op.start / spp + 1)
        };
        let bytes = if pages { count * f.page_size() } else { op.len as u64 * f.sector_size() };
        if pages {
            f.read_pages(op.start as u32, op.len);
        } else {
            f.read_sectors(op.start, op.len as u64)?;
        }
        // the translation pages first (mapping-table cache), then the data
        let map_ready = self.map_lookup(first, count, false, true, t1);
        let mut ready = map_ready;
        self.dev.begin_read();
        for lpn in first..first + count {
            if let Some(p) = f.lookup(lpn as u32) {
                let t_r = self.dev.read_ns(p, f.in_slc(p));
                ready = ready.max(self.dev.host_read(p, map_ready, t_r));
            }
        }
        let t_out = self.dev.link(ready, bytes);
        let inflight = InFlight { issued: now, write: false, bytes, host_pages: 0, nand_pages: 0, urgent: urgent_now };
        self.q.push(t_out.max(now), inflight);
        Ok(())
    }

    /// Run until `stop` (host write bytes or commands, absolute), simulated time
    /// `until_ns`, or the end of a finite workload, whichever comes first.
    pub fn drive<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        wl: &mut Workload,
        rng: &mut Rng,
        stop: Stop,
        until_ns: u64,
    ) -> Result<()> {
        if let Some(speed) = self.trace_speed {
            return self.drive_trace_time(f, wl, rng, stop, until_ns, speed);
        }
        match self.open_loop {
            None => {
                // closed loop: keep `outstanding` commands in flight (also after a finite
                // workload of an earlier phase drained the queue)
                while self.q.len() < self.dev.r.outstanding as usize && !wl.exhausted {
                    let now = self.q.now();
                    self.issue(f, wl, rng, now)?;
                }
            }
            Some(rate) => {
                if !self.started {
                    self.next_arrival = self.q.now() + self.exp_gap(rate);
                }
            }
        }
        self.started = true;
        let mut left = 1; // events until the interrupt is asked (at once, then every EVERY)
        loop {
            if f.c.host_write_bytes >= stop.write_bytes || f.c.commands() >= stop.cmds || self.q.now() >= until_ns {
                return Ok(());
            }
            self.interrupt.tick(&mut left)?;
            if let Some(rate) = self.open_loop {
                // next event: an arrival or a completion, whichever is first
                if !wl.exhausted && self.next_arrival <= self.q.peek_time().unwrap_or(u64::MAX) {
                    let t = self.next_arrival;
                    self.q.advance_to(t);
                    self.issue(f, wl, rng, t)?;
                    self.next_arrival = t + self.exp_gap(rate);
                    continue;
                }
            }
            let Some(t) = self.complete_next()? else { return Ok(()) };
            if self.open_loop.is_none() {
                self.issue(f, wl, rng, t)?;
            }
        }
    }

    /// Open-loop replay at the trace's own times (divided by `speed`).
    pub(super) fn drive_trace_time<P: Policy>(
        &mut self,
        f: &mut Ftl<P>,
        wl: &mut Workload,
        rng: &mut Rng,
        stop: Stop,
        until_ns: u64,
        speed: f64,
    ) -> Result<()> {
        let mut left = 1;
        loop {
            if f.c.host_write_bytes >= stop.write_bytes || f.c.commands() >= stop.cmds || self.q.now() >= until_ns {
                return Ok(());
            }
            self.interrupt.tick(&mut left)?;
            if self.pending.is_none() && !wl.exhausted {
                let op = wl.next(rng);
                if op.len != 0 {
                    self.pending = Some(op);
                }
            }
            if let Some(op) = self.pending {
                let at = self.trace_base + (op.t_ns as f64 / speed) as u64;
                if at <= self.q.peek_time().unwrap_or(u64::MAX) {
                    let t = at.max(self.q.now());
                    self.q.advance_to(t);
                    self.pending = None;
                    self.issue_op(f, op, wl.pages, t)?;
                    continue;
                }
            }
            if self.complete_next()?.is_none() {
                return Ok(());
            }
        }
    }

    /// Complete the earliest command in flight and record it; returns its time.
    pub(super) fn complete_next(&mut self) -> Result<Option<u64>> {
        let Some((t, c)) = self.q.pop() else { return Ok(None) };
        self.last_done = t;
        let before_len = self.rec.series.len();
        self.rec.complete(t, t - c.issued, c.write, c.bytes, c.host_pages, c.nand_pages, c.urgent)?;
        if let Some(u) = self.urgent.as_mut() {
            let len = self.rec.series.len();
            if len > before_len && before_len > 0 {
                // series points closed: the urgent state's measure of the sustained rate
                for s in &self.rec.series[before_len - 1..len - 1] {
                    u.interval_closed(s.write_bytes, s.urgent);
                }
            }
        }
        Ok(Some(t))
    }
}
