//! What a run returns: the result document (`SimResult`) with its rounds, wear, GC victims,
//! drive report, measurement window and wall-clock figures, trace-replay figures and the timed
//! model's report (`TimedReport`).

use crate::config::gc::GcUnitKind;
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
    /// victims collected in the measurement window, by their valid-page count: entry `i`
    /// counts the victims with `i x w` to `i x w + w - 1` valid pages, `w` =
    /// `valid_histogram_bin_pages` (1, exact: entries 0..=b, for FTL blocks and superblocks
    /// of up to [`VICTIM_HISTOGRAM_BINS`] pages).
    pub valid_histogram: Vec<u64>,
    /// The valid pages one entry of `valid_histogram` spans, when more than one (superblocks
    /// of more than [`VICTIM_HISTOGRAM_BINS`] pages); absent when exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_histogram_bin_pages: Option<u32>,
    pub count: u64,
    /// From the exact counts, whatever the bins.
    pub mean_valid_fraction: Option<f64>,
}

/// The most bins (+1, for a unit wholly valid) the victim histogram of a superblock
/// reports: larger superblocks are reported in bins of several valid-page counts.
pub const VICTIM_HISTOGRAM_BINS: u32 = 1024;

impl Victims {
    /// The victims of a measurement window from `hist`, the FTL's exact count of victims by
    /// valid pages (0..=`pages_per_block`).  A superblock (`kind`) of more than
    /// [`VICTIM_HISTOGRAM_BINS`] pages is binned to at most that many + 1 entries of
    /// `ceil(pages_per_block / VICTIM_HISTOGRAM_BINS)` valid pages each; FTL blocks stay
    /// exact at any size (every result of a block drive as before).
    pub fn new(hist: &[u64], pages_per_block: u32, kind: GcUnitKind) -> Victims {
        let count: u64 = hist.iter().sum();
        let b = pages_per_block as f64;
        let mean_valid_fraction = (count > 0)
            .then(|| hist.iter().enumerate().map(|(j, &n)| j as f64 * n as f64).sum::<f64>() / count as f64 / b);
        let width = match kind {
            GcUnitKind::Block => 1,
            GcUnitKind::Superblock => pages_per_block.div_ceil(VICTIM_HISTOGRAM_BINS).max(1),
        };
        let valid_histogram = if width == 1 {
            hist.to_vec()
        } else {
            let mut bins = vec![0; (pages_per_block / width) as usize + 1];
            for (j, &n) in hist.iter().enumerate() {
                bins[j / width as usize] += n;
            }
            bins
        };
        Victims { valid_histogram, valid_histogram_bin_pages: (width > 1).then_some(width), count, mean_valid_fraction }
    }
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
    /// The threads the run used and why (docs/parallel.md); results do not depend on them.
    pub parallel: crate::par::Parallelism,
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
    /// With `ftl.meta_writes`: the share of the measurement window's NAND page writes that
    /// are metadata pages (`measure_counters.meta_pages / nand_write_pages`).  Absent when off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta_share: Option<f64>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victim_histogram_of_a_superblock_is_exact_up_to_1024_pages() {
        let hist: Vec<u64> = (0..=1024).map(|j| j % 7).collect();
        let v = Victims::new(&hist, 1024, GcUnitKind::Superblock);
        assert_eq!((v.valid_histogram.clone(), v.valid_histogram_bin_pages), (hist.clone(), None));
        assert_eq!(v.count, hist.iter().sum::<u64>());
        // the JSON of an exact histogram is as before: no bin width
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(
            json.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["count", "mean_valid_fraction", "valid_histogram"]
        );
    }

    #[test]
    fn victim_histogram_of_a_superblock_is_binned() {
        // 98,304 pages: bins of 96 valid pages, 1,025 of them (the last: a wholly valid unit)
        let b = 98_304u32;
        let mut hist = vec![0u64; b as usize + 1];
        (hist[0], hist[95], hist[96], hist[50_000], hist[98_303], hist[98_304]) = (1, 2, 3, 4, 5, 6);
        let v = Victims::new(&hist, b, GcUnitKind::Superblock);
        assert_eq!(v.valid_histogram_bin_pages, Some(96));
        assert_eq!(v.valid_histogram.len(), 1025);
        assert_eq!(&v.valid_histogram[..2], &[3, 3]);
        assert_eq!(v.valid_histogram[50_000 / 96], 4);
        assert_eq!(&v.valid_histogram[1023..], &[5, 6]);
        assert_eq!(v.valid_histogram.iter().sum::<u64>(), v.count);
        // the mean from the exact counts
        let exact = (95.0 * 2.0 + 96.0 * 3.0 + 50_000.0 * 4.0 + 98_303.0 * 5.0 + 98_304.0 * 6.0) / 21.0 / b as f64;
        assert!((v.mean_valid_fraction.unwrap() - exact).abs() < 1e-15);
        // a width that does not divide the unit: 1,536 pages in bins of 2, 769 entries
        let v = Victims::new(&vec![1; 1537], 1536, GcUnitKind::Superblock);
        assert_eq!((v.valid_histogram.len(), v.valid_histogram_bin_pages), (769, Some(2)));
        assert_eq!((v.valid_histogram[0], v.valid_histogram[768]), (2, 1));
        // 1,025 pages: bins of 2
        assert_eq!(Victims::new(&vec![1; 1026], 1025, GcUnitKind::Superblock).valid_histogram.len(), 513);
        assert_eq!(Victims::new(&[], 4, GcUnitKind::Superblock).mean_valid_fraction, None);
        // FTL blocks: exact at any size (the AnandTech presets' 32,768-page blocks as before)
        let v = Victims::new(&vec![1; 32_769], 32_768, GcUnitKind::Block);
        assert_eq!((v.valid_histogram.len(), v.valid_histogram_bin_pages), (32_769, None));
    }
}
