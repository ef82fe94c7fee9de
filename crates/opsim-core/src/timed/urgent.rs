//! The urgent state of SK hynix's mobile-storage study (seed 004; issue 3): "below N% free
//! blocks GC takes over and host throughput falls to K% of the sustained rate".
//!
//! * Trigger: the FTL's pool of free (erased) blocks falls below `urgent_free_pct` of
//!   `urgent_reference_blocks` (default: the FTL's blocks).  The state ends when the pool
//!   is back at `urgent_exit_pct` of them (default: N%, i.e. as soon as it is no longer
//!   below).  Checked whenever a host command is issued.
//! * Host: each write command is admitted no earlier than the throttle's next slot, which
//!   then moves on by `bytes / (K% x sustained rate)`: a pace in bytes, not in commands.
//!   Writes are admitted in order: after the state ends, none before the slots granted.
//!   The sustained rate is `urgent_sustain_mbps` if given, else measured on entry: host
//!   write bytes completed over the last `urgent_sustain_window_s` (whole series intervals
//!   outside the urgent state in which the host wrote), else (nothing measured yet) the
//!   NAND's program bandwidth capped by the host link.  Reads are not throttled.
//! * GC takes over: at each command's issue, while the pool is below the exit level, the
//!   FTL collects victims (its own policy) and their copies are charged page by page to
//!   dies that would otherwise idle before the throttle's next slot (or before now, when
//!   the host is not held back), the victim's erase after its last copy.  What a victim
//!   still owes when the slot comes waits for the next idle time (one victim at most: the
//!   next is collected when it is paid), or is charged at once before a foreground
//!   collection and when the state ends.  So the host keeps its K% and GC gets the rest,
//!   at page granularity whatever the block size.

use super::{Resolved, TimedState};
use crate::config::timing::TimingConfig;
use crate::error::Result;
use crate::ftl::{Ftl, Policy};
use serde::Serialize;
use std::collections::VecDeque;

/// Default measuring window of the sustained rate, simulated seconds.
pub const DEFAULT_SUSTAIN_WINDOW_S: f64 = 10.0;

pub(super) struct Urgent {
    /// Urgent while fewer than this many blocks are free ...
    enter_below: f64,
    /// ... until this many are.
    exit_at: f64,
    /// Whole blocks the urgent GC collects up to.
    gc_target: u32,
    reference_blocks: u32,
    perf: f64,
    gc: bool,
    given_bps: Option<f64>,
    fallback_bps: f64,
    /// Measuring window, in series intervals, and the write bytes of the last closed
    /// intervals outside the urgent state in which the host wrote.
    window: usize,
    interval_s: f64,
    ring: VecDeque<u64>,
    ring_sum: u64,
    /// Throttle: nanoseconds per host byte, and the next admission slot.
    ns_per_byte: f64,
    pub(super) next_admit: u64,
    pub(super) active: bool,
    /// Start of the current episode, and the end of the last one: an episode lasts until
    /// the later of its exit and the last admission slot it granted.
    since: u64,
    last_end: u64,
    time_ns: u64,
    /// Host write bytes issued in the urgent state.
    pub(super) write_bytes: u64,
    entries: u64,
    first_entry_ns: Option<u64>,
    first_sustained: Option<(f64, &'static str)>,
    gc_victims: u64,
    gc_copies: u64,
    /// NAND work of the victim collected last that is not yet charged to the dies:
    /// (copies, senses, erases).  The FTL collects a whole victim at once; its copies are charged
    /// page by page into idle die time, the erase after them.
    pub(super) backlog: (u64, u64, u64),
}

/// The urgent state's figures over a run (`timed.urgent` in the result).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UrgentReport {
    pub free_pct: f64,
    pub perf_pct: f64,
    pub reference_blocks: u32,
    /// Urgent while fewer than `enter_below_blocks` blocks are free, until
    /// `exit_at_blocks` are.
    pub enter_below_blocks: f64,
    pub exit_at_blocks: f64,
    /// At the first entry: "given" (`urgent_sustain_mbps`), "measured", or "nand"
    /// (nothing measured yet: the NAND's program bandwidth, capped by the link).
    pub sustained_from: Option<&'static str>,
    /// Sustained host write rate at the first entry, and K% of it (the throttle).
    pub sustained_mbps: Option<f64>,
    pub throttle_mbps: Option<f64>,
    pub sustain_window_s: f64,
    pub gc_takes_over: bool,
    pub entries: u64,
    pub first_entry_s: Option<f64>,
    /// Simulated time in the urgent state (by command issue), and host write bytes issued
    /// in it.
    pub time_s: f64,
    pub write_bytes: u64,
    /// Victims the urgent-state GC collected in the NAND time the throttle left, and the
    /// pages it copied (foreground GC is not counted here).
    pub gc_victims: u64,
    pub gc_copy_pages: u64,
}

impl Urgent {
    pub(super) fn new(t: &TimingConfig, r: &Resolved, blocks: u32, page_size: u64, interval_ns: u64) -> Option<Self> {
        let n = t.urgent_free_pct?;
        let reference = t.urgent_reference_blocks.unwrap_or(blocks);
        let enter_below = reference as f64 * n / 100.0;
        let exit_at = reference as f64 * t.urgent_exit_pct.unwrap_or(n) / 100.0;
        let interval_s = interval_ns as f64 / 1e9;
        let window_s = t.urgent_sustain_window_s.unwrap_or(DEFAULT_SUSTAIN_WINDOW_S);
        let nand_bps = r.program_units_per_s * page_size as f64;
        Some(Urgent {
            enter_below,
            exit_at,
            gc_target: exit_at.ceil() as u32,
            reference_blocks: reference,
            perf: t.urgent_perf_pct / 100.0,
            gc: t.urgent_gc.unwrap_or(true),
            given_bps: t.urgent_sustain_mbps.map(|m| m * 1e6),
            fallback_bps: nand_bps.min(r.link_mbps * 1e6),
            window: ((window_s / interval_s).round() as usize).max(1),
            interval_s,
            ring: VecDeque::new(),
            ring_sum: 0,
            ns_per_byte: 0.0,
            next_admit: 0,
            active: false,
            since: 0,
            last_end: 0,
            time_ns: 0,
            write_bytes: 0,
            entries: 0,
            first_entry_ns: None,
            first_sustained: None,
            gc_victims: 0,
            gc_copies: 0,
            backlog: (0, 0, 0),
        })
    }

    /// A series interval closed with `write_bytes` completed (`urgent`: a command issued
    /// in the urgent state completed in it).
    pub(super) fn interval_closed(&mut self, write_bytes: u64, urgent: bool) {
        if urgent || write_bytes == 0 {
            return;
        }
        self.ring.push_back(write_bytes);
        self.ring_sum += write_bytes;
        if self.ring.len() > self.window {
            self.ring_sum -= self.ring.pop_front().unwrap_or(0);
        }
    }

    fn sustained_bps(&self) -> (f64, &'static str) {
        if let Some(g) = self.given_bps {
            (g, "given")
        } else if !self.ring.is_empty() {
            (self.ring_sum as f64 / (self.ring.len() as f64 * self.interval_s), "measured")
        } else {
            (self.fallback_bps, "nand")
        }
    }

    /// Enter or leave the state with `free` blocks in the pool at `now`.
    pub(super) fn update(&mut self, free: u32, now: u64) {
        let free = free as f64;
        if !self.active && free < self.enter_below {
            let (bps, from) = self.sustained_bps();
            self.ns_per_byte = 1e9 / (bps * self.perf);
            self.first_sustained.get_or_insert((bps, from));
            self.first_entry_ns.get_or_insert(now);
            self.entries += 1;
            self.active = true;
            self.since = now.max(self.last_end);
            self.next_admit = self.next_admit.max(now);
        } else if self.active && free >= self.exit_at {
            self.active = false;
            let end = now.max(self.next_admit);
            self.time_ns += end.saturating_sub(self.since);
            self.last_end = end;
        }
    }

    /// The admission time of a write of `bytes` ready at `t`: in the urgent state the
    /// throttle's next slot (which then moves on by the write's share of the paced rate);
    /// out of it, no earlier than the slots already granted (writes are admitted in order).
    #[inline]
    pub(super) fn admit(&mut self, t: u64, bytes: u64, urgent: bool) -> u64 {
        let t = t.max(self.next_admit);
        if urgent {
            self.next_admit = t + (bytes as f64 * self.ns_per_byte).round() as u64;
            self.write_bytes += bytes;
        }
        t
    }

    /// (time in the state, host write bytes issued in it) up to `now` (an episode counts
    /// until the last admission slot it granted).
    pub(super) fn totals(&self, now: u64) -> (u64, u64) {
        let open = if self.active { now.saturating_sub(self.since) } else { 0 };
        (self.time_ns + open, self.write_bytes)
    }

    pub(super) fn report(&self, now: u64, free_pct: f64, window_s: f64) -> UrgentReport {
        let (t, b) = self.totals(now);
        UrgentReport {
            free_pct,
            perf_pct: self.perf * 100.0,
            reference_blocks: self.reference_blocks,
            enter_below_blocks: self.enter_below,
            exit_at_blocks: self.exit_at,
            sustained_from: self.first_sustained.map(|s| s.1),
            sustained_mbps: self.first_sustained.map(|s| s.0 / 1e6),
            throttle_mbps: self.first_sustained.map(|s| s.0 * self.perf / 1e6),
            sustain_window_s: window_s,
            gc_takes_over: self.gc,
            entries: self.entries,
            first_entry_s: self.first_entry_ns.map(|t| t as f64 / 1e9),
            time_s: t as f64 / 1e9,
            write_bytes: b,
            gc_victims: self.gc_victims,
            gc_copy_pages: self.gc_copies,
        }
    }
}

impl TimedState {
    /// Update the urgent state at `now` and, in it, let garbage collection take over the
    /// NAND time the throttle leaves idle.
    pub(super) fn urgent_step<P: Policy>(&mut self, f: &mut Ftl<P>, now: u64) -> Result<()> {
        let Some(u) = self.urgent.as_mut() else { return Ok(()) };
        u.update(f.free_blocks(), now);
        if !(u.active && u.gc) {
            self.urgent_flush(now);
            return Ok(());
        }
        let bound = now.max(u.next_admit);
        let target = u.gc_target;
        let ppb = f.pages_per_block();
        loop {
            let u = self.urgent.as_mut().expect("urgent state configured");
            self.dev.fill_gc(&mut u.backlog, bound, now);
            if u.backlog != (0, 0, 0) || f.free_blocks() >= target || self.dev.first_die_idle_at() >= bound {
                break;
            }
            let before = f.c.clone();
            let Some(copied) = f.background_collect(target)? else { break };
            let d = f.c.minus(&before);
            u.backlog = (d.gc_copy_pages, self.dev.gc_senses(d.gc_copy_pages, d.gc_read_senses), d.erases);
            u.gc_victims += 1;
            u.gc_copies += copied as u64;
            if copied >= ppb {
                // the victim had no invalid page: collecting more frees nothing now
                self.dev.fill_gc(&mut u.backlog, bound, now);
                break;
            }
        }
        let u = self.urgent.as_mut().expect("urgent state configured");
        u.update(f.free_blocks(), now);
        if !u.active {
            self.urgent_flush(now);
        }
        Ok(())
    }

    /// Charge what the urgent-state GC still owes the NAND (copies and the erase of the
    /// victim it collected last) from `ready`: before a foreground collection, and when
    /// the urgent state ends.
    pub(super) fn urgent_flush(&mut self, ready: u64) {
        if let Some(u) = self.urgent.as_mut() {
            if u.backlog != (0, 0, 0) {
                let (copies, senses, erases) = std::mem::take(&mut u.backlog);
                self.dev.gc(copies, senses, erases, ready);
            }
        }
    }
}
