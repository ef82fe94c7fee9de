//! The timed SSD model: host interface, controller, DRAM write buffer and NAND array on top
//! of the functional FTL (the same `Ftl` code, not a copy).
//!
//! Every host command runs through the functional FTL, which decides what NAND work it
//! causes (the host page programs, and any garbage-collection reads, programs and erases,
//! read off its counters).  This module charges that work to resource timelines: the
//! controller's firmware, the host link, each flash channel and each die.  A command's
//! completion time follows when it is issued; the event queue (`engine`) orders completions
//! and, under a closed-loop queue depth, issues the next command at each completion.
//!
//! Model (documented in docs/timed.md):
//! * FTL blocks are superblocks striped across every die and plane: consecutive pages of a
//!   frontier go to consecutive dies; erasing a superblock occupies every die for tBERS.
//! * A program operation writes `nand_page_size / page_size x planes` mapping units at once
//!   (multi-plane); with the write cache on, units are aggregated, so each unit costs
//!   tPROG / units on its die; with the cache off, every command programs (and pads) whole
//!   program units: the Micron note's warning in numbers.
//! * Page types (optional `t_read_page_us`, `t_prog_page_us`): a program unit is a word line
//!   on every plane, its units LSB first; a unit's place on its die gives its page type,
//!   whose tR a read costs; programmed page by page, a word line costs the sum of its
//!   pages' tPROG (the cache off pads one page).  Precomputed per position (`PageCosts`).
//! * Garbage-collection copies are spread over the dies round-robin, each read and
//!   programmed on its own die (copyback style), so dies collect in parallel;
//!   foreground GC delays the host pages that needed its free block.  Background GC runs
//!   only on dies that would otherwise idle.
//! * The write buffer holds units until their program ends; a write completes to the host
//!   when it has room in the buffer (cache on) or when its program ends (cache off).
//! * The controller's firmware runs host commands (`fw_overhead_us` each) and garbage
//!   collection (`gc_fw_us` per copied page) on one timeline: a client controller is
//!   often the bottleneck in steady state, not the NAND.
//! * Urgent state (SK hynix, `urgent`): while the pool of free blocks is below
//!   `urgent_free_pct` of a reference block count, garbage collection takes over the NAND
//!   time and host writes are admitted at `urgent_perf_pct` of the sustained write rate.
//! * Mapping-table cache (`map_cache`, DFTL-style, off unless given): a command's translation
//!   pages are looked up in an LRU; a miss reads its page from NAND before the data access, a
//!   dirty eviction programs one (`mapcache`).

pub mod costs;
pub mod engine;
pub mod hist;
pub mod mapcache;
pub mod pts;
mod stop;
pub mod urgent;

pub use stop::Stop;

use crate::config::timing::{Cell, Interface, TimingConfig};
use crate::error::{Error, Result};
use crate::ftl::{Ftl, Policy};
use crate::rng::Rng;
use crate::workload::{Op, OpKind, Workload};
use engine::EventQueue;
use hist::{Histogram, LatencySummary};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Largest table of page types (`dies x units_per_program` entries, a byte each).
const MAX_PAGE_PERIOD: u64 = 1 << 24;

/// Timing parameters resolved to nanoseconds and counts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Resolved {
    pub dies: u32,
    pub channels: u32,
    pub units_per_program: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub t_erase_ns: u64,
    /// Physical block, in mapping units.
    pub block_units: u64,
    /// Channel time to move one mapping unit.
    pub xfer_ns: u64,
    /// Host link time per byte, in picoseconds.
    pub link_ps_per_byte: u64,
    pub fw_ns: u64,
    pub gc_fw_ns: u64,
    /// Program/erase suspend latency, when host reads may suspend die work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend_ns: Option<u64>,
    pub buffer_units: u64,
    pub outstanding: u32,
    /// NAND program bandwidth limit, mapping units per second, with no GC.
    pub program_units_per_s: f64,
    pub link_mbps: f64,
    /// SLC-mode timing, with an SLC cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc: Option<SlcTiming>,
    /// Per-page-type times (`t_read_page_us`, `t_prog_page_us`), when given.  `t_read_ns`
    /// is then their mean (GC copies' reads) and `t_prog_ns` their sum (a word line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<PageTiming>,
    /// The mapping-table cache, when on (not read back: the cost model does not use it).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub map_cache: Option<mapcache::MapCacheParams>,
}

/// Page types of a word line: a program unit (`units_per_program` mapping units on a die)
/// is one word line on every plane, `bits` pages each; its first `units_per_page` units
/// are in the lowest page (LSB), the next in the second, and so on.  A mapping unit's page
/// type follows from its position among its die's units.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageTiming {
    pub bits: u32,
    /// Mapping units per page type in a program unit (one page on every plane).
    pub units_per_page: u32,
    /// Read time of each page type, lowest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_read_ns: Option<Vec<u64>>,
    /// Program time of each page type (page by page), lowest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_prog_ns: Option<Vec<u64>>,
}

/// SLC-mode NAND timing: a program writes `units_per_program` mapping units (a native
/// program unit divided by the bits per cell) in `t_prog_ns`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlcTiming {
    pub units_per_program: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    /// SLC program bandwidth limit, mapping units per second.
    pub program_units_per_s: f64,
}

impl TimingConfig {
    pub fn resolve(&self, page_size: u64) -> Result<Resolved> {
        let pos = |k: &str, v: f64| -> Result<f64> {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(Error::config(k, format!("{v} must be a positive number")))
            }
        };
        if self.queue_depth == 0 || self.queue_depth > 65536 {
            return Err(Error::config("timing.queue_depth", format!("{} is out of range 1..=65536", self.queue_depth)));
        }
        if self.interface == Interface::Sata && self.queue_depth > 32 {
            return Err(Error::config(
                "timing.queue_depth",
                format!("{}: SATA NCQ allows at most 32", self.queue_depth),
            ));
        }
        if self.interface == Interface::Sata && self.nvme_queues != 1 {
            return Err(Error::config("timing.nvme_queues", "is only used with interface = \"nvme\""));
        }
        if self.nvme_queues == 0 || self.nvme_queues > 1024 {
            return Err(Error::config("timing.nvme_queues", "is out of range 1..=1024"));
        }
        for (k, v) in [
            ("timing.channels", self.channels),
            ("timing.dies_per_channel", self.dies_per_channel),
            ("timing.planes", self.planes),
        ] {
            if v == 0 || v > 1024 {
                return Err(Error::config(k, format!("{v} is out of range 1..=1024")));
            }
        }
        let nand_page = self.nand_page_size.0;
        if nand_page < page_size || nand_page % page_size != 0 {
            return Err(Error::config(
                "timing.nand_page_size",
                format!("{nand_page} bytes is not a multiple of the mapping unit drive.page_size ({page_size})"),
            ));
        }
        if self.nand_block_size.0 < nand_page || self.nand_block_size.0 % nand_page != 0 {
            return Err(Error::config("timing.nand_block_size", "must be a whole number of NAND pages"));
        }
        let (tr, tp, te) = self.cell.typical_us();
        let tr = pos("timing.t_read_us", self.t_read_us.unwrap_or(tr))?;
        let tp = pos("timing.t_prog_us", self.t_prog_us.unwrap_or(tp))?;
        let te = pos("timing.t_erase_us", self.t_erase_us.unwrap_or(te))?;
        let ch = pos("timing.channel_mbps", self.channel_mbps)?;
        let fw = self.fw_overhead_us;
        for (k, v) in [("timing.fw_overhead_us", fw), ("timing.gc_fw_us", self.gc_fw_us)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(k, format!("{v} must be >= 0")));
            }
        }
        let link = match (self.link_mbps, self.interface) {
            (Some(l), _) => pos("timing.link_mbps", l)?,
            (None, Interface::Sata) => 600.0,
            (None, Interface::Nvme) => {
                let per_lane = match self.pcie_gen {
                    1 => 250.0,
                    2 => 500.0,
                    3 => 985.0,
                    4 => 1969.0,
                    5 => 3938.0,
                    g => return Err(Error::config("timing.pcie_gen", format!("{g} is not a PCIe generation 1..=5"))),
                };
                if !matches!(self.pcie_lanes, 1 | 2 | 4 | 8 | 16) {
                    return Err(Error::config(
                        "timing.pcie_lanes",
                        format!("{} is not 1, 2, 4, 8 or 16", self.pcie_lanes),
                    ));
                }
                per_lane * self.pcie_lanes as f64
            }
        };
        pos("timing.series_interval_s", self.series_interval_s)?;
        if let Some(r) = self.round_s {
            pos("timing.round_s", r)?;
        }
        if let Some(r) = self.arrival_iops {
            pos("timing.arrival_iops", r)?;
        }
        if let Some(u) = self.urgent_free_pct {
            if !(u > 0.0 && u < 100.0) {
                return Err(Error::config("timing.urgent_free_pct", format!("{u} is out of range (0, 100)")));
            }
        }
        if !(self.urgent_perf_pct > 0.0 && self.urgent_perf_pct <= 100.0) {
            return Err(Error::config(
                "timing.urgent_perf_pct",
                format!("{} is out of range (0, 100]", self.urgent_perf_pct),
            ));
        }
        let urgent_keys = [
            ("timing.urgent_reference_blocks", self.urgent_reference_blocks.is_some()),
            ("timing.urgent_exit_pct", self.urgent_exit_pct.is_some()),
            ("timing.urgent_sustain_mbps", self.urgent_sustain_mbps.is_some()),
            ("timing.urgent_sustain_window_s", self.urgent_sustain_window_s.is_some()),
            ("timing.urgent_gc", self.urgent_gc.is_some()),
        ];
        if self.urgent_free_pct.is_none() {
            if let Some((k, _)) = urgent_keys.iter().find(|(_, set)| *set) {
                return Err(Error::config(k, "is only used with timing.urgent_free_pct (the urgent state is off)"));
            }
        }
        if self.urgent_reference_blocks == Some(0) {
            return Err(Error::config("timing.urgent_reference_blocks", "must be at least 1"));
        }
        if let (Some(x), Some(n)) = (self.urgent_exit_pct, self.urgent_free_pct) {
            if !(x >= n && x < 100.0) {
                return Err(Error::config(
                    "timing.urgent_exit_pct",
                    format!("{x} is out of range [urgent_free_pct = {n}, 100)"),
                ));
            }
        }
        if let Some(m) = self.urgent_sustain_mbps {
            pos("timing.urgent_sustain_mbps", m)?;
        }
        if let Some(w) = self.urgent_sustain_window_s {
            pos("timing.urgent_sustain_window_s", w)?;
        }
        let dies = self.channels * self.dies_per_channel;
        let upp = (nand_page / page_size) as u32 * self.planes;
        let pages = self.page_timing(nand_page / page_size, upp, dies)?;
        let buffer_units = self.write_buffer.0 / page_size;
        if self.write_cache && buffer_units == 0 {
            return Err(Error::config("timing.write_buffer", "must hold at least one page with the write cache on"));
        }
        let mut t_read_ns = (tr * 1000.0).round() as u64;
        let mut t_prog_ns = (tp * 1000.0).round() as u64;
        if let Some(v) = pages.as_ref().and_then(|p| p.t_read_ns.as_ref()) {
            t_read_ns = (v.iter().sum::<u64>() as f64 / v.len() as f64).round() as u64;
        }
        let mut tp_s = tp * 1e-6;
        if let Some(v) = pages.as_ref().and_then(|p| p.t_prog_ns.as_ref()) {
            t_prog_ns = v.iter().sum();
            tp_s = t_prog_ns as f64 * 1e-9;
        }
        Ok(Resolved {
            dies,
            channels: self.channels,
            units_per_program: upp,
            t_read_ns,
            t_prog_ns,
            t_erase_ns: (te * 1000.0).round() as u64,
            block_units: (self.nand_block_size.0 / page_size).max(1),
            xfer_ns: (page_size as f64 / ch * 1000.0).round().max(1.0) as u64,
            link_ps_per_byte: (1e6 / link).round().max(1.0) as u64,
            fw_ns: (fw * 1000.0).round() as u64,
            gc_fw_ns: (self.gc_fw_us * 1000.0).round() as u64,
            suspend_ns: match self.suspend_us {
                Some(v) if v.is_finite() && v >= 0.0 => Some((v * 1000.0).round() as u64),
                Some(v) => return Err(Error::config("timing.suspend_us", format!("{v} must be >= 0"))),
                None => None,
            },
            buffer_units,
            outstanding: if self.interface == Interface::Nvme {
                self.queue_depth * self.nvme_queues
            } else {
                self.queue_depth
            },
            program_units_per_s: dies as f64 * upp as f64 / tp_s,
            link_mbps: link,
            slc: None,
            pages,
            map_cache: None,
        })
    }

    /// The per-page-type times, checked: one value per bit of the cell, each positive, and
    /// a NAND page (`nand_page_size`: a word line) of `units_per_plane` mapping units that
    /// splits into whole mapping units per page type.
    fn page_timing(&self, units_per_plane: u64, upp: u32, dies: u32) -> Result<Option<PageTiming>> {
        let bits = self.cell.bits();
        let check = |k: &str, v: &Option<Vec<f64>>| -> Result<Option<Vec<u64>>> {
            let Some(v) = v else { return Ok(None) };
            if v.len() != bits as usize {
                return Err(Error::config(
                    k,
                    format!(
                        "{} needs {bits} value{} ({}), got {}",
                        self.cell.name(),
                        if bits == 1 { "" } else { "s" },
                        self.cell.page_names(),
                        v.len()
                    ),
                ));
            }
            v.iter()
                .enumerate()
                .map(|(i, &x)| {
                    if x.is_finite() && x > 0.0 {
                        Ok((x * 1000.0).round().max(1.0) as u64)
                    } else {
                        Err(Error::config(k, format!("value {} ({x}) must be a positive number", i + 1)))
                    }
                })
                .collect::<Result<Vec<u64>>>()
                .map(Some)
        };
        let read = check("timing.t_read_page_us", &self.t_read_page_us)?;
        let prog = check("timing.t_prog_page_us", &self.t_prog_page_us)?;
        let key = if read.is_some() { "timing.t_read_page_us" } else { "timing.t_prog_page_us" };
        if read.is_none() && prog.is_none() {
            return Ok(None);
        }
        if units_per_plane % bits as u64 != 0 {
            return Err(Error::config(
                key,
                format!(
                    "needs timing.nand_page_size (one word line: {units_per_plane} mapping units) to split into {bits} pages ({}) of whole mapping units",
                    self.cell.page_names()
                ),
            ));
        }
        if dies as u64 * upp as u64 > MAX_PAGE_PERIOD {
            return Err(Error::config(
                key,
                format!("dies x units per program ({dies} x {upp}) is above {MAX_PAGE_PERIOD}"),
            ));
        }
        Ok(Some(PageTiming { bits, units_per_page: upp / bits, t_read_ns: read, t_prog_ns: prog }))
    }

    /// Add the SLC-mode timing (for a cache whose native mode stores `bits` per cell).
    pub fn resolve_slc(&self, r: &mut Resolved, bits: u32) -> Result<()> {
        let pos = |k: &str, v: f64| -> Result<f64> {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(Error::config(k, format!("{v} must be a positive number")))
            }
        };
        let (tr, tp, _) = Cell::Slc.typical_us();
        let tr = pos("timing.t_read_slc_us", self.t_read_slc_us.unwrap_or(tr))?;
        let tp = pos("timing.t_prog_slc_us", self.t_prog_slc_us.unwrap_or(tp))?;
        let upp = (r.units_per_program / bits.max(1)).max(1);
        r.slc = Some(SlcTiming {
            units_per_program: upp,
            t_read_ns: (tr * 1000.0).round() as u64,
            t_prog_ns: (tp * 1000.0).round() as u64,
            program_units_per_s: r.dies as f64 * upp as f64 / (tp * 1e-6),
        });
        Ok(())
    }
}

// ----------------------------------------------------------------------------- device

/// Resource timelines of the drive.
struct Device {
    r: Resolved,
    die_free: Vec<u64>,
    ch_free: Vec<u64>,
    ctrl_free: u64,
    link_free: u64,
    /// Release times of the units in the write buffer.
    buffer: BinaryHeap<Reverse<u64>>,
    rr: usize,
    write_cache: bool,
    /// Per-unit program time with aggregation (tPROG / units per program).
    prog_unit_ns: u64,
    /// The same in SLC mode, SLC-mode read time, and SLC (units per program, tPROG).
    slc_prog_unit_ns: u64,
    slc_read_ns: u64,
    slc_program: (u64, u64),
    /// Mapping units per FTL block (superblock).
    ftl_block_units: u64,
    /// Per-page-type costs, with `t_read_page_us` or `t_prog_page_us`.
    pages: Option<PageCosts>,
}

/// Costs by page type, precomputed: the page type of every position `ppn % period` (the
/// period is `dies x units_per_program`: a program unit on every die) and, per type, tR,
/// the program time of one unit aggregated (the page's time / its units) and padded (the
/// whole page).  The times not given stay uniform (tR; tPROG / units and tPROG).
struct PageCosts {
    period: u32,
    kind: Box<[u8]>,
    read_ns: [u64; 4],
    prog_unit_ns: [u64; 4],
    prog_pad_ns: [u64; 4],
    /// Padded program of a unit whose page is not known: the mean page's time.
    pad_mean_ns: u64,
}

impl PageCosts {
    fn new(r: &Resolved, p: &PageTiming) -> Self {
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
    fn kind(&self, ppn: u32) -> usize {
        self.kind[(ppn % self.period) as usize] as usize
    }
}

impl Device {
    fn new(r: Resolved, write_cache: bool, ftl_block_units: u64) -> Self {
        let costs::UnitCosts { prog_unit_ns, slc_prog_unit_ns, slc_read_ns, slc_program } = costs::UnitCosts::new(&r);
        Device {
            pages: r.pages.as_ref().map(|p| PageCosts::new(&r, p)),
            slc_prog_unit_ns,
            slc_read_ns,
            slc_program,
            die_free: vec![0; r.dies as usize],
            ch_free: vec![0; r.channels as usize],
            ctrl_free: 0,
            link_free: 0,
            buffer: BinaryHeap::new(),
            rr: 0,
            write_cache,
            prog_unit_ns,
            ftl_block_units,
            r,
        }
    }

    #[inline]
    fn channel_of(&self, die: usize) -> usize {
        die % self.r.channels as usize
    }

    /// NAND read time of the mapping unit at `ppn` (an SLC-mode page if `slc`).
    #[inline(always)]
    fn read_ns(&self, ppn: u32, slc: bool) -> u64 {
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
    fn prog_ns(&self, ppn: u32, padded: bool, slc: bool) -> u64 {
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
    fn prog_ns_any(&self, padded: bool, slc: bool) -> u64 {
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
    fn program(&mut self, die: usize, ready: u64, busy: u64) -> u64 {
        let c = self.channel_of(die);
        let start = ready.max(self.ch_free[c]).max(self.die_free[die]);
        let xfer_end = start + self.r.xfer_ns;
        self.ch_free[c] = xfer_end;
        let end = xfer_end + busy;
        self.die_free[die] = end;
        end
    }

    /// Read one mapping unit from `die`, sensed in `t_r` ns; returns when its data is out
    /// on the channel.
    #[inline]
    fn read(&mut self, die: usize, ready: u64, t_r: u64) -> u64 {
        let c = self.channel_of(die);
        let sensed = ready.max(self.die_free[die]) + t_r;
        self.die_free[die] = sensed;
        let out = sensed.max(self.ch_free[c]) + self.r.xfer_ns;
        self.ch_free[c] = out;
        out
    }

    /// A host read of one mapping unit from `die`, sensed in `t_r` ns: with program/erase
    /// suspend, when the die has work queued past `ready` the read suspends it (after
    /// `suspend_ns`) and goes first, on the die and on the channel; the suspended work
    /// resumes after it (its timeline moves back by the read's time).  Returns when the
    /// data is out.
    #[inline]
    fn host_read(&mut self, die: usize, ready: u64, t_r: u64) -> u64 {
        let Some(sus) = self.r.suspend_ns else { return self.read(die, ready, t_r) };
        if self.die_free[die] <= ready + sus {
            return self.read(die, ready, t_r);
        }
        let c = self.channel_of(die);
        let sensed = ready + sus + t_r;
        self.die_free[die] += sus + t_r;
        let out = sensed + self.r.xfer_ns;
        if self.ch_free[c] > sensed {
            self.ch_free[c] += self.r.xfer_ns;
        } else {
            self.ch_free[c] = out;
        }
        out
    }

    /// Charge garbage-collection work (copies, erases of superblocks) from `ready`; returns
    /// when it is done.  The controller's firmware handles every copied page, so copies
    /// also occupy the controller (delaying later host commands).
    fn gc(&mut self, copies: u64, erases: u64, ready: u64) -> u64 {
        let dies = self.r.dies as usize;
        let mut done = ready;
        if self.r.gc_fw_ns > 0 && copies > 0 {
            self.ctrl_free = self.ctrl_free.max(ready) + copies * self.r.gc_fw_ns;
            done = self.ctrl_free;
        }
        // Each copy stays on its die (copyback-style: the superblock's pages on a die move
        // to the GC frontier's page on the same die); dies work in parallel.
        for _ in 0..copies {
            let die = self.rr;
            self.rr = (self.rr + 1) % dies;
            let r = self.read(die, ready, self.r.t_read_ns);
            done = done.max(self.program(die, r, self.prog_unit_ns));
        }
        if erases > 0 {
            // an FTL block of `ftl_block_units` spans that many units / dies on each die:
            // charge the share of a physical block erase it frees
            let per_die = costs::erase_share(self.ftl_block_units, self.r.dies, self.r.block_units);
            let t = (self.r.t_erase_ns as f64 * per_die * erases as f64).round() as u64;
            for d in 0..dies {
                let s = ready.max(self.die_free[d]);
                self.die_free[d] = s + t;
                done = done.max(self.die_free[d]);
            }
        }
        done
    }

    /// Charge folds of `pages` SLC pages into native mode from `ready`: each read in SLC
    /// mode and programmed in native mode on its die (on-die, as GC copies), with the
    /// controller's firmware per page as for GC copies; returns when they are done.
    fn fold(&mut self, pages: u64, ready: u64) -> u64 {
        let dies = self.r.dies as usize;
        let mut done = ready;
        if self.r.gc_fw_ns > 0 && pages > 0 {
            self.ctrl_free = self.ctrl_free.max(ready) + pages * self.r.gc_fw_ns;
            done = self.ctrl_free;
        }
        for _ in 0..pages {
            let die = self.rr;
            self.rr = (self.rr + 1) % dies;
            let r = self.read(die, ready, self.slc_read_ns);
            done = done.max(self.program(die, r, self.prog_unit_ns));
        }
        done
    }

    fn nand_idle_at(&self) -> u64 {
        *self.die_free.iter().max().unwrap_or(&0)
    }

    /// When the first die runs out of work.
    fn first_die_idle_at(&self) -> u64 {
        *self.die_free.iter().min().unwrap_or(&0)
    }

    /// Charge owed garbage-collection work, `(copies, erases)`, page by page to dies that
    /// are free before `bound` (each copy read and programmed on the die that is free
    /// first); the erases once every copy is charged.  The controller's share of each copy
    /// is taken from its time at `now`.  What does not fit stays owed.
    fn fill_gc(&mut self, owed: &mut (u64, u64), bound: u64, now: u64) {
        while owed.0 > 0 {
            let (die, &free) = self.die_free.iter().enumerate().min_by_key(|&(_, t)| *t).expect("at least one die");
            if free >= bound {
                return;
            }
            if self.r.gc_fw_ns > 0 {
                self.ctrl_free = self.ctrl_free.max(now) + self.r.gc_fw_ns;
            }
            let r = self.read(die, free, self.r.t_read_ns);
            self.program(die, r, self.prog_unit_ns);
            owed.0 -= 1;
        }
        if owed.1 > 0 && self.first_die_idle_at() < bound {
            self.gc(0, owed.1, 0);
            owed.1 = 0;
        }
    }

    /// Host link transfer of `bytes` starting no earlier than `ready`.
    #[inline]
    fn link(&mut self, ready: u64, bytes: u64) -> u64 {
        let s = ready.max(self.link_free);
        self.link_free = s + costs::link_ns(bytes, self.r.link_ps_per_byte);
        self.link_free
    }

    #[inline]
    fn firmware(&mut self, ready: u64) -> u64 {
        self.ctrl_free = ready.max(self.ctrl_free) + self.r.fw_ns;
        self.ctrl_free
    }

    /// Wait for room for `units` in the write buffer; returns the admission time.
    fn admit(&mut self, ready: u64, units: u64) -> u64 {
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

// ----------------------------------------------------------------------------- results

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeriesPoint {
    pub t_s: f64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mbps: f64,
    pub waf: Option<f64>,
    pub urgent: bool,
    /// PTS IOPS test: the block size (as fio names it: "512", "4k", "1m") and R/W mix
    /// ("65/35") of the combination running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rwmix: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TimedRound {
    pub index: usize,
    pub phase: String,
    pub t_start_s: f64,
    pub t_end_s: f64,
    pub iops: f64,
    pub write_iops: f64,
    pub read_iops: f64,
    pub mbps: f64,
    pub host_write_bytes: u64,
    pub nand_write_pages: u64,
    pub gc_copy_pages: u64,
    pub erases: u64,
    pub waf: f64,
    pub latency_us: LatencySummary,
    /// PTS IOPS test: the combination (`label` "4k R/W 0/100", `bs`, `rwmix`) ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rwmix: Option<String>,
    /// ... and, on a round (the tracked combination's figures), every combination of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combinations: Option<Vec<TimedRound>>,
    /// Host write bytes of the commands completed in the round (`host_write_bytes`: issued;
    /// `mbps`, `write_iops`, `read_iops` count completions, as `iops` does).
    pub completed_write_bytes: u64,
    /// Urgent state (when configured): simulated seconds in it during the round, and the
    /// host write bytes issued in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgent_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgent_write_bytes: Option<u64>,
    /// Mapping-table cache (when on): the round's lookups, hits, translation-page reads and
    /// programs, and the WAF counting those programs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<mapcache::MapRound>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Phases {
    /// End of the fresh-out-of-box burst: first point below half the first point's IOPS
    /// (None for a run preconditioned analytically: it has no such burst).
    pub fob_end_s: Option<f64>,
    /// Start of the steady-state window (SNIA rule on per-round IOPS).
    pub steady_start_s: Option<f64>,
}

/// A stretch of the series whose points are aligned to its own start (a PTS combination).
struct Segment {
    first: usize,
    t0: u64,
    end: Option<u64>,
    tag: Option<(String, String)>,
}

/// Host commands completed in a round: a round's rates are those of the commands that
/// completed in its time (the FTL's counters count commands issued).
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundDone {
    pub writes: u64,
    pub reads: u64,
    pub write_bytes: u64,
    pub read_bytes: u64,
}

/// Accumulates the timed run's statistics.
pub struct Recorder {
    interval_ns: u64,
    pub series: Vec<SeriesAcc>,
    /// The current segment's first point and start time (0, 0 unless segments are used).
    seg_first: usize,
    seg_t0: u64,
    segments: Vec<Segment>,
    pub round_hist: Histogram,
    /// Per-round read and write histograms, when asked for (PTS IOPS test).
    pub round_split: Option<(Histogram, Histogram)>,
    /// Commands completed in the current round (taken at its end).
    pub round_done: RoundDone,
    pub hist_all: Histogram,
    pub hist_read: Histogram,
    pub hist_write: Histogram,
}

#[derive(Clone, Default)]
pub struct SeriesAcc {
    reads: u64,
    writes: u64,
    bytes: u64,
    write_bytes: u64,
    host_pages: u64,
    nand_pages: u64,
    urgent: bool,
}

impl Recorder {
    fn new(interval_ns: u64) -> Self {
        Recorder {
            interval_ns,
            series: Vec::new(),
            seg_first: 0,
            seg_t0: 0,
            segments: Vec::new(),
            round_hist: Histogram::default(),
            round_split: None,
            round_done: RoundDone::default(),
            hist_all: Histogram::default(),
            hist_read: Histogram::default(),
            hist_write: Histogram::default(),
        }
    }
    #[allow(clippy::too_many_arguments)]
    fn complete(&mut self, t: u64, lat: u64, write: bool, bytes: u64, host_pages: u64, nand_pages: u64, urgent: bool) {
        let i = self.seg_first + ((t - self.seg_t0) / self.interval_ns) as usize;
        if self.series.len() <= i {
            self.series.resize(i + 1, SeriesAcc::default());
        }
        let s = &mut self.series[i];
        if write {
            s.writes += 1;
            s.write_bytes += bytes;
            self.round_done.writes += 1;
            self.round_done.write_bytes += bytes;
            self.hist_write.record(lat);
        } else {
            s.reads += 1;
            self.round_done.reads += 1;
            self.round_done.read_bytes += bytes;
            self.hist_read.record(lat);
        }
        s.bytes += bytes;
        s.host_pages += host_pages;
        s.nand_pages += nand_pages;
        s.urgent |= urgent;
        self.hist_all.record(lat);
        self.round_hist.record(lat);
        if let Some((r, w)) = self.round_split.as_mut() {
            if write {
                w.record(lat);
            } else {
                r.record(lat);
            }
        }
    }

    /// Start a new segment of the series at `t0` (every completion from now on is at or
    /// after it): its points are aligned to `t0` and carry `tag` (block size, R/W mix).
    pub fn begin_segment(&mut self, t0: u64, tag: Option<(String, String)>) {
        if let Some(last) = self.segments.last_mut() {
            last.end.get_or_insert(t0);
        }
        self.seg_first = self.series.len();
        self.seg_t0 = t0;
        self.segments.push(Segment { first: self.seg_first, t0, end: None, tag });
    }

    /// End the current segment at `t` (its last, partial interval is left out of the points).
    pub fn end_segment(&mut self, t: u64) {
        if let Some(last) = self.segments.last_mut() {
            last.end = Some(t);
        }
    }

    pub fn points(&self) -> Vec<SeriesPoint> {
        let dt = self.interval_ns as f64 / 1e9;
        let point = |s: &SeriesAcc, t_s: f64, tag: Option<&(String, String)>| SeriesPoint {
            t_s,
            iops: (s.reads + s.writes) as f64 / dt,
            read_iops: s.reads as f64 / dt,
            write_iops: s.writes as f64 / dt,
            mbps: s.bytes as f64 / dt / 1e6,
            waf: if s.host_pages > 0 { Some(s.nand_pages as f64 / s.host_pages as f64) } else { None },
            urgent: s.urgent,
            bs: tag.map(|t| t.0.clone()),
            rwmix: tag.map(|t| t.1.clone()),
        };
        if self.segments.is_empty() {
            return self.series.iter().enumerate().map(|(i, s)| point(s, (i + 1) as f64 * dt, None)).collect();
        }
        let mut out = Vec::with_capacity(self.series.len());
        for (k, seg) in self.segments.iter().enumerate() {
            let last = self.segments.get(k + 1).map(|n| n.first).unwrap_or(self.series.len());
            for i in seg.first..last.max(seg.first) {
                let t_end = seg.t0 + (i - seg.first + 1) as u64 * self.interval_ns;
                if seg.end.is_some_and(|e| t_end > e) {
                    break; // a partial last interval
                }
                out.push(point(&self.series[i], t_end as f64 / 1e9, seg.tag.as_ref()));
            }
        }
        out
    }
}

/// The FTL counters the timed layer charges a write with (a snapshot cheaper than the whole
/// `Counters`).
#[derive(Clone, Copy)]
struct Work {
    host_write_pages: u64,
    nand_write_pages: u64,
    gc_copy_pages: u64,
    erases: u64,
    fold_pages: u64,
}

impl Work {
    #[inline(always)]
    fn of(c: &crate::ftl::Counters) -> Work {
        Work {
            host_write_pages: c.host_write_pages,
            nand_write_pages: c.nand_write_pages,
            gc_copy_pages: c.gc_copy_pages,
            erases: c.erases,
            fold_pages: c.fold_pages,
        }
    }
    #[inline(always)]
    fn minus(&self, o: &Work) -> Work {
        Work {
            host_write_pages: self.host_write_pages - o.host_write_pages,
            nand_write_pages: self.nand_write_pages - o.nand_write_pages,
            gc_copy_pages: self.gc_copy_pages - o.gc_copy_pages,
            erases: self.erases - o.erases,
            fold_pages: self.fold_pages - o.fold_pages,
        }
    }
}

/// Command in flight.
#[derive(Clone, Copy)]
struct InFlight {
    issued: u64,
    write: bool,
    bytes: u64,
    host_pages: u64,
    nand_pages: u64,
    urgent: bool,
}

/// State of a timed run that survives across rounds.
pub struct TimedState {
    dev: Device,
    q: EventQueue<InFlight>,
    pub rec: Recorder,
    started: bool,
    arrivals: Rng,
    next_arrival: u64,
    bg_target: u32,
    /// The urgent state, when configured.
    urgent: Option<urgent::Urgent>,
    sectors_per_page: u64,
    open_loop: Option<f64>,
    /// Trace-time replay: speed-up, simulated time the replay started, and the next request.
    trace_speed: Option<f64>,
    trace_base: u64,
    pending: Option<Op>,
    /// PTS IOPS test: P(read) decided here for every command of an all-write workload.
    mix: Option<f64>,
    mix_rng: Rng,
    /// SLC cache: fold in idle time once the host has had nothing outstanding this long.
    idle_fold_ns: Option<u64>,
    /// Completion time of the last command.
    last_done: u64,
    /// The mapping-table cache, when on.
    map: Option<mapcache::MapCache>,
    /// Polled once per event (Ctrl-C through the caller).
    interrupt: crate::interrupt::Interrupt,
}

impl TimedState {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        t: &TimingConfig,
        r: Resolved,
        physical_pages: u64,
        blocks: u32,
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
            dev: Device::new(r, t.write_cache, ftl_block_units),
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
    pub fn drain(&mut self) {
        while self.complete_next().is_some() {}
    }

    /// Fold SLC blocks while the host is idle (nothing outstanding since `last_done` +
    /// the idle delay) and the NAND and controller would otherwise idle before `now`.
    fn fold_idle<P: Policy>(&mut self, f: &mut Ftl<P>, now: u64) -> Result<()> {
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
            self.dev.gc(0, d.erases, t);
        }
    }

    fn exp_gap(&mut self, rate: f64) -> u64 {
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
    fn issue<P: Policy>(&mut self, f: &mut Ftl<P>, wl: &mut Workload, rng: &mut Rng, now: u64) -> Result<()> {
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
    fn issue_op<P: Policy>(&mut self, f: &mut Ftl<P>, op: Op, pages: bool, now: u64) -> Result<bool> {
        if self.idle_fold_ns.is_some() && self.q.is_empty() {
            self.fold_idle(f, now)?;
        }
        // Background GC on NAND that would otherwise idle.
        while self.bg_target > 0 && f.free_blocks() < self.bg_target && self.dev.nand_idle_at() < now {
            let before = f.c.clone();
            match f.background_collect(self.bg_target)? {
                Some(copied) if copied < f.pages_per_block() => {
                    let d = f.c.minus(&before);
                    let start = self.dev.nand_idle_at();
                    self.dev.gc(d.gc_copy_pages, d.erases, start);
                }
                _ => break,
            }
        }
        if self.urgent.is_some() {
            self.urgent_step(f, now)?;
        }
        let urgent_now = self.urgent_now();
        let before = Work::of(&f.c);
        let t1 = self.dev.firmware(now);
        let spp = self.sectors_per_page;
        let (write, bytes, done);
        match op.kind {
            OpKind::Trim => {
                if pages {
                    f.trim_pages(op.start as u32, op.len);
                    self.map_lookup(op.start, op.len as u64, true, false, t1);
                } else {
                    f.trim_sectors(op.start, op.len as u64)?;
                    // the pages the range touches (a partly trimmed page's entry is read too)
                    let (a, b) = (op.start / spp, (op.start + op.len as u64 - 1) / spp);
                    self.map_lookup(a, b - a + 1, true, false, t1);
                }
                return Ok(false);
            }
            OpKind::Write => {
                write = true;
                let units =
                    if pages { op.len as u64 } else { (op.start + op.len as u64 - 1) / spp - op.start / spp + 1 };
                bytes = if pages { units * f.page_size() } else { op.len as u64 * f.sector_size() };
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
                    f.c.host_write_cmds += 1;
                    f.c.host_write_bytes += bytes;
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
                let d = Work::of(&f.c).minus(&before);
                if urgent_now && (d.gc_copy_pages > 0 || d.erases > 0) {
                    self.urgent_flush(t3); // the urgent GC's owed work comes first
                }
                let mut gc_done =
                    if d.gc_copy_pages > 0 || d.erases > 0 { self.dev.gc(d.gc_copy_pages, d.erases, t3) } else { t3 };
                if d.fold_pages > 0 {
                    gc_done = gc_done.max(self.dev.fold(d.fold_pages, t3));
                }
                let host_pages = d.host_write_pages;
                let dies = self.dev.r.dies as usize;
                let gc_done = gc_done.max(map_ready);
                let mut end = gc_done;
                let slc_cache = f.slc_enabled();
                if n as u64 == host_pages {
                    // one program per die touched, units grouped by die (superblock striping)
                    for &p in &ppns[..n] {
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
                done = if self.dev.write_cache { t3 } else { end };
                let inflight = InFlight {
                    issued: now,
                    write,
                    bytes,
                    host_pages,
                    nand_pages: d.nand_write_pages,
                    urgent: urgent_now,
                };
                self.q.push(done.max(now), inflight);
            }
            OpKind::Read => {
                let (first, count) = if pages {
                    (op.start, op.len as u64)
                } else {
                    (op.start / spp, (op.start + op.len as u64 - 1) / spp - op.start / spp + 1)
                };
                bytes = if pages { count * f.page_size() } else { op.len as u64 * f.sector_size() };
                if pages {
                    f.read_pages(op.start as u32, op.len);
                } else {
                    f.read_sectors(op.start, op.len as u64)?;
                }
                // the translation pages first (mapping-table cache), then the data
                let map_ready = self.map_lookup(first, count, false, true, t1);
                let mut ready = map_ready;
                let dies = self.dev.r.dies as usize;
                for lpn in first..first + count {
                    if let Some(p) = f.lookup(lpn as u32) {
                        let t_r = self.dev.read_ns(p, f.in_slc(p));
                        ready = ready.max(self.dev.host_read(p as usize % dies, map_ready, t_r));
                    }
                }
                let t_out = self.dev.link(ready, bytes);
                let inflight =
                    InFlight { issued: now, write: false, bytes, host_pages: 0, nand_pages: 0, urgent: urgent_now };
                self.q.push(t_out.max(now), inflight);
            }
        }
        Ok(true)
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
            let Some(t) = self.complete_next() else { return Ok(()) };
            if self.open_loop.is_none() {
                self.issue(f, wl, rng, t)?;
            }
        }
    }

    /// Open-loop replay at the trace's own times (divided by `speed`).
    fn drive_trace_time<P: Policy>(
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
            if self.complete_next().is_none() {
                return Ok(());
            }
        }
    }

    /// Complete the earliest command in flight and record it; returns its time.
    fn complete_next(&mut self) -> Option<u64> {
        let (t, c) = self.q.pop()?;
        self.last_done = t;
        let before_len = self.rec.series.len();
        self.rec.complete(t, t - c.issued, c.write, c.bytes, c.host_pages, c.nand_pages, c.urgent);
        if let Some(u) = self.urgent.as_mut() {
            let len = self.rec.series.len();
            if len > before_len && before_len > 0 {
                // series points closed: the urgent state's measure of the sustained rate
                for s in &self.rec.series[before_len - 1..len - 1] {
                    u.interval_closed(s.write_bytes, s.urgent);
                }
            }
        }
        Some(t)
    }
}

/// Phase boundaries of a write-saturation curve from its series and rounds.  `fob`: the
/// run starts fresh out of box or from a fill; false for a drive placed in its steady state
/// (analytic preconditioning), which has no fresh-out-of-box phase to end.
pub fn phases(series: &[SeriesPoint], steady_start_s: Option<f64>, fob: bool) -> Phases {
    let first = series.iter().find(|p| p.iops > 0.0).map(|p| p.iops);
    let fob_end_s =
        if fob { first.and_then(|f0| series.iter().find(|p| p.iops < 0.5 * f0).map(|p| p.t_s)) } else { None };
    Phases { fob_end_s, steady_start_s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(extra: &str) -> TimingConfig {
        toml::from_str(&format!(
            "channels = 2\ndies_per_channel = 2\nplanes = 2\ncell = \"tlc\"\nnand_page_size = \"48KiB\"\nnand_block_size = \"12MiB\"\nt_read_us = 60\nt_prog_us = 1800\n{extra}"
        ))
        .unwrap()
    }

    fn device(extra: &str) -> Device {
        let r = timing(extra).resolve(4096).unwrap();
        Device::new(r, true, 256)
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
}
