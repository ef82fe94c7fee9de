//! What a run returns: the result document (`SimResult`) with its rounds, wear, GC victims,
//! drive report, measurement window and wall-clock figures, trace-replay figures and the timed
//! model's report (`TimedReport`).

use crate::config::Config;
use crate::ftl::Counters;
use crate::geometry::{Geometry, OpReport};
use crate::steady::SteadyState;
use crate::timed::hist::LatencySummary;
use crate::timed::{self, Phases, Resolved, SeriesPoint, TimedRound};
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Round {
    pub index: usize,
    pub phase: String,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub nand_write_pages: u64,
    pub gc_copy_pages: u64,
    pub erases: u64,
    pub waf: f64,
    pub free_blocks_min: u32,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Wear {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
    /// (erase count, blocks with that count), ascending.
    pub histogram: Vec<(u32, u64)>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Victims {
    /// victims collected in the measurement window, by their valid-page count (0..=b).
    pub valid_histogram: Vec<u64>,
    pub count: u64,
    pub mean_valid_fraction: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DriveReport {
    pub page_size: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub sector_size: u32,
    pub user_bytes: u64,
    pub user_pages: u64,
    pub physical_bytes: u64,
    pub physical_pages: u64,
    pub max_lba: u64,
    pub native_bytes: Option<u64>,
    pub model_memory_bytes: u64,
    /// The unit garbage collection collects and erases (a block is one of them).
    pub gc_unit: crate::geometry::GcUnit,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Window {
    pub first_round: usize,
    pub last_round: usize,
    pub host_write_bytes: u64,
    pub nand_write_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Perf {
    pub wall_seconds: f64,
    pub host_pages_per_second: f64,
    /// Timed runs: host commands simulated per wall second in the timed rounds (after
    /// preconditioning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_ios_per_second: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub opsim_version: &'static str,
    pub config: Config,
    pub drive: DriveReport,
    pub op: OpReport,
    pub gc: &'static str,
    /// WAF over the measurement window (NAND bytes programmed / host bytes written).
    pub waf: f64,
    pub measure_window: Window,
    pub counters: Counters,
    pub measure_counters: Counters,
    pub rounds: Vec<Round>,
    pub steady_state: SteadyState,
    pub wear: Wear,
    pub victims: Victims,
    pub free_blocks_min: u32,
    /// Trace replay figures, when a phase replayed a trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceReplay>,
    /// The timed model's results, when `[timing]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed: Option<TimedReport>,
    /// Wall-clock figures: the only part of a result that depends on the machine.
    pub perf: Perf,
    /// The run was stopped by the caller's interrupt (Ctrl-C): the result holds the rounds
    /// done until then (the last one cut short).  Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Placement mode and handles, when `[ftl.placement]` or `[[namespace]]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<super::PlacementReport>,
    /// Per-namespace figures over the measurement window (`[[namespace]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<super::NamespaceReport>,
    /// Per-handle (per-stream) figures over the measurement window (modes streams, fdp).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<super::HandleReport>,
    /// The FDP statistics log's counters over the drive's life (mode fdp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp_stats: Option<super::FdpStats>,
    /// Garbage collection's frontier, scope and reserve, when `ftl.gc_frontier`,
    /// `ftl.gc_scope` or `ftl.gc_reserve` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_layout: Option<GcLayoutReport>,
}

/// How garbage collection was laid out (docs/peers.md).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GcLayoutReport {
    /// "separate" or "shared".
    pub frontier: &'static str,
    /// "drive", "die" or "plane".
    pub scope: &'static str,
    /// Pools GC works within (dies or planes; 1: the drive).
    pub groups: u32,
    /// Per pool: GC starts below `low` free blocks, runs until `high` are free.
    pub low: u32,
    pub high: u32,
    /// Free blocks held in all.
    pub reserve_blocks: u32,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TraceReplay {
    /// Requests replayed.
    pub records: u64,
    /// Complete passes over the trace.
    pub passes: u64,
    /// Malformed lines skipped (`skip_bad`).
    pub skipped_bad_lines: u64,
    /// True when the run stopped because the trace ended.
    pub ended: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct TimedLatency {
    pub all: LatencySummary,
    pub read: LatencySummary,
    pub write: LatencySummary,
}

#[derive(Clone, Debug, Serialize)]
pub struct TimedReport {
    pub timing: Resolved,
    pub simulated_seconds: f64,
    /// IOPS, MB/s and WAF per `series_interval_s` of simulated time.
    pub iops_series: Vec<SeriesPoint>,
    /// Latency percentiles (microseconds) over the measurement window.
    pub latency_us: TimedLatency,
    pub rounds: Vec<TimedRound>,
    /// SNIA rule on per-round IOPS (the PTS steady state).
    pub steady_state: SteadyState,
    /// Mean IOPS of the steady-state window, if reached.
    pub steady_iops: Option<f64>,
    /// Mean IOPS over the measurement window.
    pub measured_iops: f64,
    pub phases: Phases,
    /// SNIA PTS IOPS test: IOPS per block size x R/W mix over the measurement window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pts_iops: Option<timed::pts::IopsTable>,
    /// The urgent state's figures, when `timing.urgent_free_pct` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgent: Option<timed::urgent::UrgentReport>,
    /// The mapping-table cache's figures, when `[timing.map_cache]` is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<timed::mapcache::MapCacheReport>,
}

/// The drive's geometry as reported (`memory`: the model's estimated memory).
pub(crate) fn drive_report(g: &Geometry, memory: u64) -> DriveReport {
    DriveReport {
        page_size: g.page_size,
        pages_per_block: g.pages_per_block,
        blocks: g.blocks,
        sector_size: g.sector_size,
        user_bytes: g.user_bytes,
        user_pages: g.user_pages,
        physical_bytes: g.physical_bytes(),
        physical_pages: g.physical_pages(),
        max_lba: g.user_sectors() - 1,
        native_bytes: g.native_bytes,
        model_memory_bytes: memory,
        gc_unit: g.unit,
    }
}

pub(super) fn shift(mut s: SteadyState, by: usize) -> SteadyState {
    s.round = s.round.map(|r| r + by);
    s.window = s.window.map(|(a, b)| (a + by, b + by));
    s
}
