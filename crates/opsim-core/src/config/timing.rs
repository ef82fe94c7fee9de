//! The `[timing]` table's schema: the host interface, the NAND cell type, the timing keys
//! and their defaults, and the `[timing.map_cache]` table.  Plain data read from the config;
//! `timed` resolves it to the units its cost model charges (`TimingConfig::resolve`).

use crate::units::{ByteSize, Fraction};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    #[default]
    Sata,
    Nvme,
}

/// The order in which a flash channel moves transfers (`timing.channel_order`): in the
/// order the model issues them, each after the last ("issue", the default: head-of-line
/// blocking behind a transfer whose data is ready late), or in the earliest free time at or
/// after each one's data is ready ("ready": a controller that moves whichever page is ready).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ChannelOrder {
    #[default]
    Issue,
    Ready,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Cell {
    Slc,
    Mlc,
    #[default]
    Tlc,
    Qlc,
}

impl Cell {
    /// Bits stored per cell.
    pub fn bits(self) -> u32 {
        match self {
            Cell::Slc => 1,
            Cell::Mlc => 2,
            Cell::Tlc => 3,
            Cell::Qlc => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Cell::Slc => "SLC",
            Cell::Mlc => "MLC",
            Cell::Tlc => "TLC",
            Cell::Qlc => "QLC",
        }
    }

    /// The pages of a word line, lowest first (the order of `t_read_page_us` and
    /// `t_prog_page_us`).
    pub fn page_names(self) -> &'static str {
        match self {
            Cell::Slc => "one page",
            Cell::Mlc => "LSB, MSB",
            Cell::Tlc => "LSB, CSB, MSB",
            Cell::Qlc => "LP, UP, XP, TP",
        }
    }

    /// Typical (tR, tPROG, tBERS) in microseconds: estimates from public datasheets of the
    /// NAND generations the seeds' drives used; override per drive.
    pub fn typical_us(self) -> (f64, f64, f64) {
        match self {
            Cell::Slc => (25.0, 200.0, 1500.0),
            Cell::Mlc => (50.0, 1300.0, 3000.0),
            Cell::Tlc => (75.0, 2000.0, 5000.0),
            Cell::Qlc => (140.0, 4000.0, 10000.0),
        }
    }
}

/// The `[timing]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    #[serde(default)]
    pub interface: Interface,
    /// Outstanding commands per queue (closed loop).  SATA NCQ allows at most 32.
    #[serde(default = "default_queue_depth")]
    pub queue_depth: u32,
    /// NVMe submission queues (outstanding commands = queues x queue_depth).
    #[serde(default = "default_nvme_queues")]
    pub nvme_queues: u32,
    #[serde(default = "default_pcie_gen")]
    pub pcie_gen: u32,
    #[serde(default = "default_pcie_lanes")]
    pub pcie_lanes: u32,
    /// Host link payload rate in MB/s (default: 600 for SATA 6 Gb/s; PCIe from gen x lanes).
    pub link_mbps: Option<f64>,
    /// Open-loop load: Poisson arrivals at this rate instead of a closed-loop queue depth.
    pub arrival_iops: Option<f64>,
    /// Controller firmware time per host command.
    #[serde(default = "default_fw_overhead_us")]
    pub fw_overhead_us: f64,
    /// Controller firmware time per page garbage collection copies (read, ECC, remap,
    /// program); it shares the controller with host commands.
    #[serde(default)]
    pub gc_fw_us: f64,
    /// Controller firmware time per GC unit reclaimed (a block or superblock collected or
    /// folded and erased: victim choice, the unit's summary read, its bookkeeping and the
    /// erase commands); it shares the controller with host commands.  0 (the default): none.
    #[serde(default, skip_serializing_if = "super::is_default")]
    pub gc_reclaim_us: f64,
    #[serde(default = "super::default_true")]
    pub write_cache: bool,
    /// DRAM write buffer.
    #[serde(default = "default_write_buffer")]
    pub write_buffer: ByteSize,
    #[serde(default = "default_channels")]
    pub channels: u32,
    #[serde(default = "default_dies_per_channel")]
    pub dies_per_channel: u32,
    #[serde(default = "default_planes")]
    pub planes: u32,
    /// Independent read plane groups per die (1..=`planes`; default 1: the planes read
    /// together): a host read occupies only its group for tR; programs and erases still
    /// occupy the whole die.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_planes: Option<u32>,
    /// A read command's units in one NAND page (same die, plane and page) are sensed once
    /// and transferred unit by unit (default false: every unit sensed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_whole_pages: Option<bool>,
    #[serde(default)]
    pub cell: Cell,
    pub t_read_us: Option<f64>,
    pub t_prog_us: Option<f64>,
    pub t_erase_us: Option<f64>,
    /// Read time per page type of a word line, one value per bit of the cell (MLC: LSB, MSB;
    /// TLC: LSB, CSB, MSB; QLC: LP, UP, XP, TP); replaces `t_read_us` for reads of known
    /// pages (GC copies: the mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_read_page_us: Option<Vec<f64>>,
    /// Program time per page type, the pages programmed one at a time: a word line takes
    /// their sum (replaces `t_prog_us`, a one-shot program of the whole word line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_prog_page_us: Option<Vec<f64>>,
    /// SLC-mode read and program times (with `[ftl.slc_cache]`; default: typical SLC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_read_slc_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_prog_slc_us: Option<f64>,
    /// Physical NAND page (a program writes one per plane).
    #[serde(default = "default_nand_page_size")]
    pub nand_page_size: ByteSize,
    /// Physical NAND block: an erase of tBERS frees this much on one die (erase time is
    /// charged per physical block the collected FTL block spans).
    #[serde(default = "default_nand_block_size")]
    pub nand_block_size: ByteSize,
    /// Flash channel transfer rate, MB/s.
    #[serde(default = "default_channel_mbps")]
    pub channel_mbps: f64,
    /// The order a flash channel moves transfers in (default "issue"; "ready": each in the
    /// earliest free time at or after its data is ready).  The timed model only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_order: Option<ChannelOrder>,
    /// Background GC in idle time, up to this many free blocks (default: low watermark + 1%).
    #[serde(default = "super::default_true")]
    pub background_gc: bool,
    pub background_free_blocks: Option<u32>,
    /// Urgent state (SK hynix): off unless `urgent_free_pct` is given.  The drive enters it
    /// when its pool of free (erased) blocks falls below this share of
    /// `urgent_reference_blocks`; garbage collection then takes over the NAND time the host
    /// throttle leaves, and host writes are admitted at `urgent_perf_pct` of the sustained
    /// write rate (bytes per second).
    pub urgent_free_pct: Option<f64>,
    #[serde(default = "default_urgent_perf_pct")]
    pub urgent_perf_pct: f64,
    /// The block count N% refers to (default: the FTL's blocks; a drive whose system blocks
    /// are not simulated gives its whole count, e.g. 1024 main blocks for SK hynix's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_reference_blocks: Option<u32>,
    /// Leave the urgent state when the free pool is back at this share of the reference
    /// blocks (default: `urgent_free_pct`, i.e. as soon as it is no longer below N%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_exit_pct: Option<f64>,
    /// The sustained host write rate K% refers to, MB/s (default: measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_sustain_mbps: Option<f64>,
    /// Measured sustained rate: host write bytes completed over the last this-many simulated
    /// seconds (whole series intervals in which the host wrote, outside the urgent state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_sustain_window_s: Option<f64>,
    /// Garbage collection takes over in the urgent state (default true); false: the
    /// throttle only delays host writes (for comparison).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_gc: Option<bool>,
    /// Length of one point of the IOPS / MB/s / WAF series, simulated seconds.
    #[serde(default = "default_series_interval_s")]
    pub series_interval_s: f64,
    /// Round length in simulated seconds (SNIA PTS: 60); default: rounds by drive writes.
    pub round_s: Option<f64>,
    /// Stop after this much simulated time (besides the configured drive writes).
    pub max_time_s: Option<f64>,
    /// Program/erase suspend: a host read on a die busy with programs, erases or GC work
    /// suspends it after this long and goes first (off unless given; NAND datasheets'
    /// tSUS is some 10-30 us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_us: Option<f64>,
    /// Mapping-table caching (`[timing.map_cache]`, DFTL-style): off unless given, the
    /// whole L2P table then in DRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<MapCacheConfig>,
}

fn default_queue_depth() -> u32 {
    32
}
fn default_nvme_queues() -> u32 {
    1
}
fn default_pcie_gen() -> u32 {
    3
}
fn default_pcie_lanes() -> u32 {
    4
}
fn default_fw_overhead_us() -> f64 {
    2.0
}
fn default_write_buffer() -> ByteSize {
    ByteSize(4 << 20)
}
fn default_channels() -> u32 {
    8
}
fn default_dies_per_channel() -> u32 {
    2
}
fn default_planes() -> u32 {
    2
}
fn default_nand_page_size() -> ByteSize {
    ByteSize(16 << 10)
}
fn default_nand_block_size() -> ByteSize {
    ByteSize(8 << 20)
}
fn default_channel_mbps() -> f64 {
    400.0
}
fn default_urgent_perf_pct() -> f64 {
    30.0
}
fn default_series_interval_s() -> f64 {
    1.0
}

/// The `[timing.map_cache]` table.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MapCacheConfig {
    /// `false` turns the cache off (the whole table in DRAM, as without the table).
    #[serde(default = "super::default_true")]
    pub enabled: bool,
    /// DRAM for cached translation pages, bytes (give this or `fraction`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<ByteSize>,
    /// DRAM for cached translation pages as a fraction of the full table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Fraction>,
    /// Bytes of one translation page (default: one mapping unit, `drive.page_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation_page: Option<ByteSize>,
}

/// Upper (and for rates and intervals, lower) bounds of the `[timing]` values: physically
/// generous (real NAND reads take tens of microseconds, erases a few milliseconds), and
/// tight enough that no value can make a run's simulated time, work or memory explode
/// (docs/timed.md, "Bounds").  Checked before anything is built.
pub mod bounds {
    /// A NAND read, program or erase (any mode, any page type), microseconds: 10 s.  Real NAND
    /// takes well under 10 ms; the headroom keeps every value `opsim calibrate` may try on its
    /// way to a fit (up to 1000x the core's default, tests/test_calibrate_within_core_bounds.py)
    /// inside the bound.
    pub const MAX_OP_US: f64 = 1e7;
    /// Controller time per command or GC page copy, and the suspend latency, microseconds.
    pub const MAX_FW_US: f64 = 1e6;
    /// Transfer rates (`channel_mbps`, `link_mbps`, `urgent_sustain_mbps`), MB/s.
    /// 0.1 MB/s: far below any real interface, and below what `opsim calibrate` may try
    /// (a thousandth of the core's default channel rate).
    pub const MIN_MBPS: f64 = 0.1;
    pub const MAX_MBPS: f64 = 1e7;
    /// Open-loop arrival rate, commands per second.
    pub const MIN_ARRIVAL_IOPS: f64 = 0.01;
    pub const MAX_ARRIVAL_IOPS: f64 = 1e9;
    /// `urgent_perf_pct`: the least share of the sustained rate admitted in the urgent state.
    pub const MIN_URGENT_PERF_PCT: f64 = 0.1;
    /// `series_interval_s`, seconds.
    pub const MIN_SERIES_INTERVAL_S: f64 = 1e-6;
    pub const MAX_SERIES_INTERVAL_S: f64 = 1e6;
    /// `round_s`, seconds.
    pub const MIN_ROUND_S: f64 = 1e-3;
    /// `round_s`, `max_time_s`, `urgent_sustain_window_s`: simulated seconds (about 3 years).
    pub const MAX_SIM_S: f64 = 1e8;
    /// Points of the IOPS series (simulated time / `series_interval_s`).
    pub const MAX_SERIES_POINTS: u64 = 1 << 20;
    /// Commands in flight (`queue_depth`, times `nvme_queues` with NVMe).
    pub const MAX_OUTSTANDING: u64 = 1 << 16;
    /// Dies (`channels` x `dies_per_channel`).
    pub const MAX_DIES: u64 = 1 << 16;
    /// `read_planes`: at least 1, at most `planes` (a group holds at least one plane).
    pub const MIN_READ_PLANES: u32 = 1;
    /// `nand_page_size` (a word line on one plane) and `nand_block_size`, bytes.
    pub const MAX_NAND_PAGE: u64 = 64 << 20;
    pub const MAX_NAND_BLOCK: u64 = 64 << 30;
    /// `write_buffer`, bytes.
    pub const MAX_WRITE_BUFFER: u64 = 64 << 30;
}

/// `v` within `[lo, hi]`; a value at or below zero, or NaN, is left to the finer checks of
/// `resolve` (which name what the value must be).
fn within(key: &str, v: f64, lo: f64, hi: f64, unit: &str) -> crate::error::Result<()> {
    if v > 0.0 && !(lo..=hi).contains(&v) {
        let expected = if lo > 0.0 { format!("{lo} to {hi} {unit}") } else { format!("at most {hi} {unit}") };
        return Err(crate::error::Error::config(key, format!("{v} is out of range; expected {expected}")));
    }
    Ok(())
}

/// A size no larger than `max` bytes.
fn at_most(key: &str, v: ByteSize, max: u64) -> crate::error::Result<()> {
    if v.0 > max {
        return Err(crate::error::Error::config(
            key,
            format!("{} is above the bound of {}", crate::units::format_size(v.0), crate::units::format_size(max)),
        ));
    }
    Ok(())
}

impl TimingConfig {
    /// Every value against its bound ([`bounds`]): a clear error naming the key and the
    /// bound, before the model is built.  Lower bounds of zero and positivity are checked
    /// with the rest by `resolve`.
    pub fn check_bounds(&self) -> crate::error::Result<()> {
        use bounds::*;
        let us = [
            ("timing.t_read_us", self.t_read_us, MAX_OP_US),
            ("timing.t_prog_us", self.t_prog_us, MAX_OP_US),
            ("timing.t_erase_us", self.t_erase_us, MAX_OP_US),
            ("timing.t_read_slc_us", self.t_read_slc_us, MAX_OP_US),
            ("timing.t_prog_slc_us", self.t_prog_slc_us, MAX_OP_US),
            ("timing.fw_overhead_us", Some(self.fw_overhead_us), MAX_FW_US),
            ("timing.gc_fw_us", Some(self.gc_fw_us), MAX_FW_US),
            ("timing.gc_reclaim_us", Some(self.gc_reclaim_us), MAX_FW_US),
            ("timing.suspend_us", self.suspend_us, MAX_FW_US),
        ];
        for (k, v, max) in us {
            if let Some(v) = v {
                within(k, v, 0.0, max, "us")?;
            }
        }
        for (k, list) in
            [("timing.t_read_page_us", &self.t_read_page_us), ("timing.t_prog_page_us", &self.t_prog_page_us)]
        {
            for &v in list.iter().flatten() {
                within(k, v, 0.0, MAX_OP_US, "us per page")?;
            }
        }
        let rates = [
            ("timing.channel_mbps", Some(self.channel_mbps), MIN_MBPS, MAX_MBPS, "MB/s"),
            ("timing.link_mbps", self.link_mbps, MIN_MBPS, MAX_MBPS, "MB/s"),
            ("timing.urgent_sustain_mbps", self.urgent_sustain_mbps, MIN_MBPS, MAX_MBPS, "MB/s"),
            ("timing.arrival_iops", self.arrival_iops, MIN_ARRIVAL_IOPS, MAX_ARRIVAL_IOPS, "commands/s"),
            ("timing.urgent_perf_pct", Some(self.urgent_perf_pct), MIN_URGENT_PERF_PCT, 100.0, "%"),
            (
                "timing.series_interval_s",
                Some(self.series_interval_s),
                MIN_SERIES_INTERVAL_S,
                MAX_SERIES_INTERVAL_S,
                "s",
            ),
            ("timing.round_s", self.round_s, MIN_ROUND_S, MAX_SIM_S, "s"),
            ("timing.max_time_s", self.max_time_s, 0.0, MAX_SIM_S, "s"),
            ("timing.urgent_sustain_window_s", self.urgent_sustain_window_s, 0.0, MAX_SIM_S, "s"),
        ];
        for (k, v, lo, hi, unit) in rates {
            if let Some(v) = v {
                within(k, v, lo, hi, unit)?;
            }
        }
        self.check_counts()
    }

    /// The counts and sizes that size the timed model's state, and the series points a
    /// time limit implies.
    fn check_counts(&self) -> crate::error::Result<()> {
        use crate::error::Error;
        use bounds::*;
        let outstanding = self.queue_depth as u64 * self.nvme_queues as u64;
        if outstanding > MAX_OUTSTANDING {
            return Err(Error::config(
                "timing.queue_depth",
                format!(
                    "{} x {} nvme_queues = {outstanding} commands in flight; at most {MAX_OUTSTANDING}",
                    self.queue_depth, self.nvme_queues
                ),
            ));
        }
        let dies = self.channels as u64 * self.dies_per_channel as u64;
        if dies > MAX_DIES {
            return Err(Error::config(
                "timing.dies_per_channel",
                format!("{} channels x {} = {dies} dies; at most {MAX_DIES}", self.channels, self.dies_per_channel),
            ));
        }
        if let Some(n) = self.read_planes.filter(|&n| n < MIN_READ_PLANES || n > self.planes) {
            return Err(Error::config(
                "timing.read_planes",
                format!("{n} is out of range {MIN_READ_PLANES}..=timing.planes ({})", self.planes),
            ));
        }
        if let Some(t) = self.max_time_s.filter(|t| t.is_nan() || *t <= 0.0) {
            return Err(Error::config("timing.max_time_s", format!("{t} must be a positive number")));
        }
        at_most("timing.nand_page_size", self.nand_page_size, MAX_NAND_PAGE)?;
        at_most("timing.nand_block_size", self.nand_block_size, MAX_NAND_BLOCK)?;
        at_most("timing.write_buffer", self.write_buffer, MAX_WRITE_BUFFER)?;
        if let Some(t) = self.max_time_s.filter(|t| t.is_finite() && self.series_interval_s > 0.0) {
            let points = t / self.series_interval_s;
            if points > MAX_SERIES_POINTS as f64 {
                return Err(Error::config(
                    "timing.series_interval_s",
                    format!(
                        "{} s over timing.max_time_s = {t} s makes {points:.0} series points; at most {MAX_SERIES_POINTS} \
                         (raise series_interval_s)",
                        self.series_interval_s
                    ),
                ));
            }
        }
        Ok(())
    }
}
