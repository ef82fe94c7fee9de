//! The functional simulator: a drive (geometry + FTL) driven by a workload through
//! preconditioning, warm-up and measured rounds, or by individual host commands.
//!
//! A `Simulator` is a plain owned value (no globals); the same config and seed give
//! bit-identical results (only `SimResult::perf` depends on the machine).

use crate::config::timing::TimingConfig;
use crate::config::{Config, GcPolicy, Precondition, PtsTest, WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};
use crate::ftl::{CostBenefit, Counters, DChoices, Fifo, Ftl, FtlParams, Greedy, Policy, WindowedGreedy};
use crate::geometry::{available_memory, Geometry, OpReport};
use crate::interrupt::Interrupt;
use crate::meanfield;
use crate::memory::Limit;
use crate::rng::Rng;
use crate::steady::{self, SteadyRule, SteadyState};
use crate::timed::mapcache::{MapCacheReport, MapRound, MapStats};
use crate::timed::{self, hist::LatencySummary, Phases, Resolved, SeriesPoint, Stop, TimedRound, TimedState};
use crate::units::{format_size, parse_size};
use crate::workload::{self, OpKind, Workload};
use serde::Serialize;
use std::time::Instant;

pub enum AnyFtl {
    Greedy(Ftl<Greedy>),
    Fifo(Ftl<Fifo>),
    DChoices(Ftl<DChoices>),
    Windowed(Ftl<WindowedGreedy>),
    CostBenefit(Ftl<CostBenefit>),
}

/// Run `$body` with `$f` bound to the concrete `Ftl<P>` inside an `AnyFtl`.
macro_rules! with_ftl {
    ($any:expr, $f:ident => $body:expr) => {
        match $any {
            AnyFtl::Greedy($f) => $body,
            AnyFtl::Fifo($f) => $body,
            AnyFtl::DChoices($f) => $body,
            AnyFtl::Windowed($f) => $body,
            AnyFtl::CostBenefit($f) => $body,
        }
    };
}

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

/// How much of a phase to run.
#[derive(Clone, Copy, Debug)]
enum Amount {
    DriveWrites(f64),
    Ios(u64),
}

/// One phase of the run, resolved from `[[phase]]` or from warm-up + measurement.
struct PhasePlan {
    name: String,
    /// The workload to build (and the phase index for error keys), or None to continue
    /// the previous phase's workload (warm-up then measurement of one stream).
    workload: Option<(WorkloadConfig, Option<usize>)>,
    amount: Amount,
    measure: bool,
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

/// Memory limit for the model: config, then `OPSIM_MEMORY_LIMIT`, then 90% of available;
/// and in any case what the process's own limits leave (`ulimit -v`, the cgroup's
/// memory.max), when that is less.
fn memory_limit(cfg: &Config) -> Result<Limit> {
    let set = |bytes, source: &str| Limit { bytes, source: source.into(), raise: "raise run.memory_limit" };
    let soft = if let Some(m) = cfg.run.memory_limit {
        set(m.0, "run.memory_limit")
    } else if let Ok(v) = std::env::var("OPSIM_MEMORY_LIMIT") {
        set(parse_size(&v).map_err(|e| Error::config("OPSIM_MEMORY_LIMIT", e))?, "OPSIM_MEMORY_LIMIT")
    } else {
        match available_memory() {
            Some(a) => Limit {
                bytes: a / 10 * 9,
                source: format!("90% of the available memory, MemAvailable {}", format_size(a)),
                raise: "free some memory or set run.memory_limit",
            },
            None => set(u64::MAX, "no limit known"),
        }
    };
    Ok(match crate::memory::process_limit() {
        Some(hard) if hard.bytes < soft.bytes => hard,
        _ => soft,
    })
}

/// A config checked and resolved against its drive, nothing allocated: the geometry, the
/// mapping-table cache, the model's memory, the SLC cache's limits and the GC policy's
/// parameter.  `Simulator::new` builds the FTL from it; `describe` reports it.
pub(crate) struct Prepared {
    pub geo: Geometry,
    pub map_cache: Option<timed::mapcache::MapCacheParams>,
    pub memory: u64,
    pub slc: Option<crate::ftl::SlcParams>,
    pub policy_param: u32,
}

/// The advice of a refusal for memory: what makes the model smaller.
const SMALLER_MODEL: &str = "use a smaller user_capacity, a larger page_size (the mapping unit), or a scale model \
                             (a smaller drive with the same OP and workload: WAF depends on them, not on the size)";

pub struct Simulator {
    cfg: Config,
    geo: Geometry,
    ftl: AnyFtl,
    rng: Rng,
    native_sectors: u64,
    max_sectors: u64,
    max_set_this_cycle: bool,
    /// Max address to restore at the next power cycle (after a volatile SET MAX).
    volatile_restore: Option<u64>,
    rounds: Vec<Round>,
    last: Counters,
    /// Counters when the current `run` started (for the speed figure).
    run_start: Counters,
    /// Counters at the start of each round (parallel to `rounds`).
    round_start: Vec<Counters>,
    memory: u64,
    trace: Option<TraceReplay>,
    /// The SLC cache's limits, when configured.
    slc: Option<crate::ftl::SlcParams>,
    /// The mapping-table cache (timed model), when on.
    map_cache: Option<timed::mapcache::MapCacheParams>,
    /// Polled by the run loops; the caller's way to stop a run (Ctrl-C).
    interrupt: Interrupt,
    /// The current `run` was interrupted.
    interrupted: bool,
}

impl Simulator {
    pub fn from_toml(text: &str) -> Result<Simulator> {
        Simulator::new(Config::from_toml_str(text)?)
    }

    /// Check `cfg` and resolve it against its drive without allocating the model.
    /// `model_limits`: also refuse what the simulator cannot model (the memory limit and the
    /// 32-bit mapping tables), as `new` does; false describes any drive.
    pub(crate) fn prepare(cfg: &Config, model_limits: bool) -> Result<Prepared> {
        let f = &cfg.ftl;
        if f.gc_low_watermark < 2 {
            return Err(Error::config(
                "ftl.gc_low_watermark",
                format!(
                    "{} is too small: GC needs one free block for its own frontier and one for the host",
                    f.gc_low_watermark
                ),
            ));
        }
        if let Some(h) = f.gc_high_watermark {
            if h < f.gc_low_watermark {
                return Err(Error::config(
                    "ftl.gc_high_watermark",
                    format!("{h} is below gc_low_watermark {}", f.gc_low_watermark),
                ));
            }
        }
        if f.streams == 0 || f.streams > 16 {
            return Err(Error::config("ftl.streams", format!("{} is out of range; expected 1..=16", f.streams)));
        }
        let param = match f.gc {
            GcPolicy::DChoices => {
                let d = f.d.ok_or_else(|| Error::config("ftl.d", "is required with gc = \"d-choices\""))?;
                if d == 0 {
                    return Err(Error::config("ftl.d", "must be at least 1"));
                }
                d
            }
            GcPolicy::WindowedGreedy => {
                let w = f.window.unwrap_or(64);
                if w == 0 {
                    return Err(Error::config("ftl.window", "must be at least 1"));
                }
                w
            }
            GcPolicy::Random => 1,
            _ => 0,
        };
        if f.d.is_some() && f.gc != GcPolicy::DChoices {
            return Err(Error::config(
                "ftl.d",
                format!("is only used with gc = \"d-choices\", not \"{}\"", f.gc.name()),
            ));
        }
        if f.window.is_some() && f.gc != GcPolicy::WindowedGreedy {
            return Err(Error::config(
                "ftl.window",
                format!("is only used with gc = \"windowed-greedy\", not \"{}\"", f.gc.name()),
            ));
        }
        let r = &cfg.run;
        for (k, v, allow0) in [
            ("run.warmup_drive_writes", r.warmup_drive_writes, true),
            ("run.measure_drive_writes", r.measure_drive_writes, false),
            ("run.round_drive_writes", r.round_drive_writes, false),
        ] {
            if !v.is_finite() || v < 0.0 || (!allow0 && v == 0.0) || v > 1e6 {
                return Err(Error::config(
                    k,
                    format!("{v} is out of range; expected a positive number of drive writes"),
                ));
            }
        }
        if r.max_rounds < 5 || r.max_rounds > 100_000 {
            return Err(Error::config(
                "run.max_rounds",
                format!("{} is out of range; expected 5..=100000", r.max_rounds),
            ));
        }
        // A drive that cannot be cut into blocks (too many pages for 32-bit page numbers)
        // and would not fit in memory anyway is refused for its memory, with the numbers.
        let caps = Geometry::capacities(&cfg.drive)?;
        let limit = if model_limits {
            memory_limit(cfg)?
        } else {
            Limit { bytes: u64::MAX, source: "no limit: a description only".into(), raise: "" }
        };
        let estimate = caps.memory_estimate(r.track_data);
        let geo = Geometry::from_capacities(caps, &cfg.ftl, model_limits);
        if geo.is_err() && estimate > limit.bytes as f64 {
            return Err(Error::capacity(
                "drive.user_capacity",
                format!(
                    "the model of this drive needs about {} of memory, more than the limit of {} ({}); {SMALLER_MODEL}; or {}",
                    crate::memory::describe(estimate),
                    format_size(limit.bytes),
                    limit.source,
                    limit.raise
                ),
            ));
        }
        let geo = geo?;
        let map_cache = match cfg.timing.as_ref().and_then(|t| t.map_cache.as_ref().map(|m| (t, m))) {
            Some((t, m)) => m.resolve(geo.page_size, geo.user_pages, t.nand_page_size.0)?,
            None => None,
        };
        let ftl_memory = geo.memory_estimate(r.track_data);
        let memory = ftl_memory + map_cache.as_ref().map_or(0, |m| m.model_memory_bytes);
        if memory > limit.bytes {
            let (key, part, advice) = match &map_cache {
                Some(m) if ftl_memory <= limit.bytes => (
                    "timing.map_cache",
                    format!(" ({})", timed::mapcache::describe_memory(m)),
                    "use a larger timing.map_cache.translation_page, a smaller size or fraction",
                ),
                Some(m) => {
                    ("drive.user_capacity", format!(" ({})", timed::mapcache::describe_memory(m)), SMALLER_MODEL)
                }
                None => ("drive.user_capacity", String::new(), SMALLER_MODEL),
            };
            return Err(Error::capacity(
                key,
                format!(
                    "the model of this drive needs about {}{part} of memory, more than the limit of {} ({}); {advice}; or {}",
                    format_size(memory),
                    format_size(limit.bytes),
                    limit.source,
                    limit.raise
                ),
            ));
        }
        // (the SLC-mode times of [timing] are ignored without a cache: a preset sets them
        // and `enabled = false` turns its cache off)
        let slc = match &f.slc_cache {
            Some(c) if c.enabled => Some(slc_params(c, cfg, &geo)?),
            _ => None,
        };
        check_pts(cfg)?;
        Ok(Prepared { geo, map_cache, memory, slc, policy_param: param })
    }

    pub fn new(cfg: Config) -> Result<Simulator> {
        let Prepared { geo, map_cache, memory, slc, policy_param: param } = Simulator::prepare(&cfg, true)?;
        let (f, r) = (&cfg.ftl, &cfg.run);
        let params = FtlParams {
            blocks: geo.blocks,
            pages_per_block: geo.pages_per_block,
            lpns: geo.user_pages as u32,
            page_size: geo.page_size,
            sector_size: geo.sector_size,
            streams: f.streams,
            gc_low: f.gc_low_watermark,
            gc_high: f.gc_high_watermark.unwrap_or(f.gc_low_watermark),
            policy_param: param,
            check: f.check_invariants,
            track_data: r.track_data,
            seed: r.seed,
            slc,
        };
        let ftl = match f.gc {
            GcPolicy::Greedy => AnyFtl::Greedy(Ftl::try_new(&params)?),
            GcPolicy::Fifo => AnyFtl::Fifo(Ftl::try_new(&params)?),
            GcPolicy::Random | GcPolicy::DChoices => AnyFtl::DChoices(Ftl::try_new(&params)?),
            GcPolicy::WindowedGreedy => AnyFtl::Windowed(Ftl::try_new(&params)?),
            GcPolicy::CostBenefit => AnyFtl::CostBenefit(Ftl::try_new(&params)?),
        };
        let native_sectors = geo.user_sectors();
        Ok(Simulator {
            rng: Rng::stream(r.seed, 0x776b),
            cfg,
            native_sectors,
            max_sectors: native_sectors,
            max_set_this_cycle: false,
            volatile_restore: None,
            geo,
            ftl,
            rounds: Vec::new(),
            last: Counters::default(),
            run_start: Counters::default(),
            round_start: Vec::new(),
            memory,
            trace: None,
            slc,
            map_cache,
            interrupt: Interrupt::none(),
            interrupted: false,
        })
    }

    /// Let `interrupt` stop the long loops (runs, preconditioning, trace passes): whole runs
    /// then return what was done, marked `interrupted`; other calls return an
    /// [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted) error.  The drive is left in
    /// a consistent state (stopped between two commands) and stays usable.
    pub fn set_interrupt(&mut self, interrupt: Interrupt) {
        let traces = std::iter::once(&mut self.cfg.workload).chain(self.cfg.phases.iter_mut().map(|p| &mut p.workload));
        for t in traces.filter_map(|w| w.trace.as_mut()) {
            t.interrupt = interrupt.clone();
        }
        self.interrupt = interrupt;
    }

    /// `r` of a step of a whole run: Ok(true) when the interrupt stopped it (noted for the
    /// result), Ok(false) when it finished, the error otherwise.
    fn stopped(&mut self, r: Result<()>) -> Result<bool> {
        match r {
            Err(e) if e.kind == crate::ErrorKind::Interrupted => {
                self.interrupted = true;
                Ok(true)
            }
            Err(e) => Err(e),
            Ok(()) => Ok(false),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn op_report(&self) -> OpReport {
        self.geo.op_report(self.cfg.ftl.gc_low_watermark)
    }
    pub fn counters(&self) -> Counters {
        with_ftl!(&self.ftl, f => f.c.clone())
    }
    pub fn max_address_sectors(&self) -> u64 {
        self.max_sectors
    }
    pub fn free_blocks(&self) -> u32 {
        with_ftl!(&self.ftl, f => f.free_blocks())
    }
    pub fn mapped_pages(&self) -> u64 {
        with_ftl!(&self.ftl, f => f.mapped_pages())
    }

    /// SLC cache: blocks in SLC mode now (open and closed), closed ones waiting to be
    /// folded, and the cache's current limit in blocks (all 0 without a cache).
    pub fn slc_cache(&self) -> (u32, u32, u32) {
        with_ftl!(&self.ftl, f => { let (n, q) = f.slc_blocks(); (n, q, f.slc_limit()) })
    }

    /// Run the FTL invariant checker.
    pub fn check(&self) -> Result<()> {
        with_ftl!(&self.ftl, f => f.check()).map_err(|e| Error::internal(format!("FTL invariant violated: {e}")))
    }

    // ---------------------------------------------------------------- host commands
    fn check_lba(&self, lba: u64, sectors: u64) -> Result<()> {
        if sectors == 0 {
            return Err(Error::device("a command must transfer at least one sector"));
        }
        match lba.checked_add(sectors) {
            Some(end) if end <= self.max_sectors => Ok(()),
            _ => Err(Error::device(format!(
                "IDNF: LBA range {lba}+{sectors} runs past the max address (the drive has {} accessible sectors)",
                self.max_sectors
            ))),
        }
    }

    pub fn write(&mut self, lba: u64, sectors: u64, stream: u32) -> Result<()> {
        self.check_lba(lba, sectors)?;
        if stream >= self.cfg.ftl.streams {
            return Err(Error::device(format!(
                "stream {stream} does not exist (ftl.streams = {})",
                self.cfg.ftl.streams
            )));
        }
        with_ftl!(&mut self.ftl, f => f.write_sectors(lba, sectors, stream))
    }
    pub fn read(&mut self, lba: u64, sectors: u64) -> Result<()> {
        self.check_lba(lba, sectors)?;
        with_ftl!(&mut self.ftl, f => f.read_sectors(lba, sectors))
    }
    pub fn trim(&mut self, lba: u64, sectors: u64) -> Result<()> {
        self.check_lba(lba, sectors)?;
        with_ftl!(&mut self.ftl, f => f.trim_sectors(lba, sectors))
    }
    /// The data token (host write command number) held by the page containing `lba`.
    pub fn read_token(&self, lba: u64) -> Result<Option<u64>> {
        self.check_lba(lba, 1)?;
        if !self.cfg.run.track_data {
            return Err(Error::config("run.track_data", "must be true to read data tokens"));
        }
        let lpn = (lba / self.geo.sectors_per_page()) as u32;
        Ok(with_ftl!(&self.ftl, f => f.read_token(lpn)))
    }
    /// SECURITY ERASE UNIT / SANITIZE BLOCK ERASE: back to fresh-out-of-box.
    pub fn security_erase(&mut self) {
        with_ftl!(&mut self.ftl, f => f.purge());
    }
    /// SET MAX ADDRESS / SET ACCESSIBLE MAX ADDRESS (in sectors).  The drive accepts one
    /// change per power cycle and aborts any further one.  Lowering the max address does
    /// not erase the hidden LBAs: their data stays valid and keeps occupying NAND, so the
    /// drive gains no spare area unless it was purged first (the seeds' procedure).
    pub fn set_max_address(&mut self, sectors: u64, volatile: bool) -> Result<()> {
        if self.max_set_this_cycle {
            return Err(Error::device(
                "ABORT: the max address was already set in this power cycle; power-cycle the drive first",
            ));
        }
        if sectors == 0 || sectors > self.native_sectors {
            return Err(Error::device(format!(
                "ABORT: max address of {sectors} sectors is outside 1..={} (the native capacity)",
                self.native_sectors
            )));
        }
        if volatile {
            self.volatile_restore.get_or_insert(self.max_sectors);
        } else {
            self.volatile_restore = None;
        }
        self.max_sectors = sectors;
        self.max_set_this_cycle = true;
        self.note_accessible();
        Ok(())
    }

    /// Tell the FTL how many logical pages the host can address (the SLC cache counts free
    /// user capacity within them).
    fn note_accessible(&mut self) {
        let pages = self.max_sectors / self.geo.sectors_per_page();
        with_ftl!(&mut self.ftl, f => f.set_accessible_pages(pages));
    }
    pub fn power_cycle(&mut self) {
        if let Some(m) = self.volatile_restore.take() {
            self.max_sectors = m;
            self.note_accessible();
        }
        self.max_set_this_cycle = false;
    }

    // ---------------------------------------------------------------- workload runs
    fn build_workload(&self, kind: WorkloadType, request: Option<u64>) -> Result<Workload> {
        self.build_workload_from(&self.cfg.workload, kind, request)
    }

    fn build_workload_from(&self, w: &WorkloadConfig, kind: WorkloadType, request: Option<u64>) -> Result<Workload> {
        workload::build(
            w,
            kind,
            self.max_sectors,
            self.geo.sector_size as u64,
            self.geo.page_size,
            self.cfg.ftl.streams,
            request,
        )
    }

    /// The workload of a plan step; errors of a `[[phase]]` workload name `phase[i].workload.*`.
    fn build_step(&self, w: &WorkloadConfig, phase: Option<usize>) -> Result<Workload> {
        self.build_workload_from(w, w.kind, None).map_err(|mut e| {
            if let (Some(i), Some(k)) = (phase, e.key.as_mut()) {
                if k.starts_with("workload") {
                    *k = format!("phase[{i}].{k}");
                }
            }
            e
        })
    }

    /// The phases to run after preconditioning: `[[phase]]`, or warm-up and measurement of
    /// `[workload]`.
    fn plan(&self) -> Result<Vec<PhasePlan>> {
        let r = &self.cfg.run;
        if self.cfg.phases.is_empty() {
            let mut v = Vec::new();
            if r.warmup_drive_writes > 0.0 {
                v.push(PhasePlan {
                    name: "warmup".into(),
                    workload: Some((self.cfg.workload.clone(), None)),
                    amount: Amount::DriveWrites(r.warmup_drive_writes),
                    measure: false,
                });
            }
            let continue_ = !v.is_empty();
            v.push(PhasePlan {
                name: "measure".into(),
                workload: if continue_ { None } else { Some((self.cfg.workload.clone(), None)) },
                amount: Amount::DriveWrites(r.measure_drive_writes),
                measure: true,
            });
            return Ok(v);
        }
        if self.cfg.workload.kind == WorkloadType::SniaPts {
            return Err(Error::config(
                "phase",
                "snia-pts runs its own stages; use [workload] type = \"snia-pts\" without [[phase]]",
            ));
        }
        let any_measured = self.cfg.phases.iter().any(|p| p.measure);
        let n = self.cfg.phases.len();
        let mut v = Vec::with_capacity(n);
        let mut seen_measured = false;
        for (i, p) in self.cfg.phases.iter().enumerate() {
            let key = |k: &str| format!("phase[{i}].{k}");
            if p.workload.kind == WorkloadType::SniaPts {
                return Err(Error::config(
                    &key("workload.type"),
                    "snia-pts cannot be a phase (it runs its own stages)",
                ));
            }
            let amount = match (p.drive_writes, p.ios) {
                (Some(d), None) => {
                    if !(d.is_finite() && d > 0.0 && d <= 1e6) {
                        return Err(Error::config(
                            &key("drive_writes"),
                            format!("{d} is out of range; expected a positive number of drive writes"),
                        ));
                    }
                    Amount::DriveWrites(d)
                }
                (None, Some(n)) if n > 0 => Amount::Ios(n),
                (None, Some(_)) => return Err(Error::config(&key("ios"), "must be at least 1")),
                _ => return Err(Error::config(&key("drive_writes"), "give exactly one of drive_writes or ios")),
            };
            let measure = if any_measured { p.measure } else { i + 1 == n };
            if seen_measured && !measure {
                return Err(Error::config(
                    &key("measure"),
                    "the measured phases must be the last ones (one measurement window)",
                ));
            }
            seen_measured |= measure;
            v.push(PhasePlan {
                name: p.name.clone().unwrap_or_else(|| format!("phase-{}", i + 1)),
                workload: Some((p.workload.clone(), Some(i))),
                amount,
                measure,
            });
        }
        Ok(v)
    }

    /// Drive `wl` until `stop` (or the end of a finite workload).
    fn drive(&mut self, wl: &mut Workload, stop: Stop) -> Result<()> {
        let (rng, intr) = (&mut self.rng, &mut self.interrupt);
        with_ftl!(&mut self.ftl, f => run_until(f, wl, rng, stop, intr))?;
        wl.finish()
    }

    fn close_round(&mut self, phase: &str) {
        let now = self.counters();
        let d = now.minus(&self.last);
        let free_min = with_ftl!(&mut self.ftl, f => f.take_free_min());
        self.rounds.push(Round {
            index: self.rounds.len(),
            phase: phase.to_owned(),
            host_write_bytes: d.host_write_bytes,
            host_read_bytes: d.host_read_bytes,
            nand_write_pages: d.nand_write_pages,
            gc_copy_pages: d.gc_copy_pages,
            erases: d.erases,
            waf: d.waf(self.geo.page_size),
            free_blocks_min: free_min,
        });
        self.round_start.push(std::mem::replace(&mut self.last, now));
    }

    fn round_bytes(&self) -> u64 {
        ((self.cfg.run.round_drive_writes * self.geo.user_bytes as f64).round() as u64).max(1)
    }

    /// (write-byte budget, absolute command limit) of a phase starting now.
    fn budget(&self, amount: Amount) -> (u64, u64) {
        let now = self.counters().commands();
        match amount {
            Amount::DriveWrites(d) => ((d * self.geo.user_bytes as f64).round() as u64, u64::MAX),
            Amount::Ios(n) => (u64::MAX, now.saturating_add(n)),
        }
    }

    /// Run `wl` in rounds of `round_drive_writes` until the phase's amount is done or the
    /// workload ends.
    fn run_rounds(&mut self, wl: &mut Workload, amount: Amount, phase: &str) -> Result<()> {
        let round = self.round_bytes();
        let (total, cmd_end) = self.budget(amount);
        let mut done = 0;
        while done < total && !wl.exhausted {
            let before = self.counters();
            if before.commands() >= cmd_end {
                break;
            }
            let r = self.drive(
                wl,
                Stop { write_bytes: before.host_write_bytes.saturating_add(round.min(total - done)), cmds: cmd_end },
            );
            if let Err(e) = r {
                if e.kind == crate::ErrorKind::Interrupted && self.counters().commands() != before.commands() {
                    self.close_round(phase); // keep the work done, as a round cut short
                }
                return Err(e);
            }
            let after = self.counters();
            done += after.host_write_bytes - before.host_write_bytes;
            if after.commands() == before.commands() {
                break;
            }
            self.close_round(phase);
        }
        Ok(())
    }

    fn fill(&mut self, passes: u64, request: u64, phase: &str) -> Result<()> {
        let mut wl = self.build_workload(WorkloadType::Sequential, Some(request))?;
        let span_bytes = match &wl.pattern {
            workload::Pattern::Sequential(s) => {
                s.span * if wl.pages { self.geo.page_size } else { self.geo.sector_size as u64 }
            }
            _ => unreachable!(),
        };
        for _ in 0..passes {
            self.run_rounds(&mut wl, Amount::DriveWrites(span_bytes as f64 / self.geo.user_bytes as f64), phase)?;
        }
        Ok(())
    }

    /// Record trace replay figures from a finished workload.
    fn note_trace(&mut self, wl: &Workload) {
        if let workload::Pattern::Trace(t) = &wl.pattern {
            let c = self.trace.get_or_insert_with(TraceReplay::default);
            c.records += t.records();
            c.passes += t.passes;
            c.skipped_bad_lines += t.skipped_bad();
            c.ended |= wl.exhausted && !self.interrupted;
        }
    }

    /// Analytic preconditioning for uniform random single-page writes.
    fn precondition_analytic(&mut self) -> Result<()> {
        let key = "run.precondition";
        if self.cfg.workload.kind != WorkloadType::Uniform {
            return Err(Error::config(key, "\"analytic\" supports workload type \"uniform\" only"));
        }
        let wl = self.build_workload(WorkloadType::Uniform, None)?;
        if !wl.pages || wl.len != 1 {
            return Err(Error::config(key, "\"analytic\" needs single-page requests (request_size = page_size)"));
        }
        let span_pages = match &wl.pattern {
            workload::Pattern::Uniform(u) => u.slots,
            _ => unreachable!(),
        };
        let b = self.geo.pages_per_block as usize;
        // the SLC cache's static part is held out of the native-mode pool GC works in
        let slc_static = self.slc.map(|s| s.min_blocks).unwrap_or(0);
        let pool = crate::geometry::gc_pool_blocks(&self.geo, self.cfg.ftl.gc_low_watermark, slc_static);
        let rho = span_pages as f64 / (pool as f64 * b as f64);
        let counts: Vec<u32> = match self.cfg.ftl.gc {
            GcPolicy::Greedy | GcPolicy::DChoices | GcPolicy::Random => {
                let occ = match self.cfg.ftl.gc {
                    GcPolicy::Greedy => meanfield::greedy(rho, b),
                    GcPolicy::Random => meanfield::dchoices(rho, b, 1),
                    _ => meanfield::dchoices(rho, b, self.cfg.ftl.d.unwrap_or(2)),
                }
                .ok_or_else(|| Error::config(key, "the mean-field model has no steady state for this load"))?;
                let per_level = meanfield::round_counts(&occ.x, pool);
                let mut c = Vec::with_capacity(pool as usize);
                for (j, &n) in per_level.iter().enumerate() {
                    c.extend(std::iter::repeat_n(j as u32, n as usize));
                }
                // Interleave levels so that blocks of one level are not all adjacent.
                let mut r = Rng::stream(self.cfg.run.seed, 0x7072);
                for i in (1..c.len()).rev() {
                    c.swap(i, r.below(i as u64 + 1) as usize);
                }
                c
            }
            GcPolicy::Fifo => {
                let x = meanfield::fifo_victim_fraction(rho);
                // Oldest block first: block of age a (in closes) keeps exp(-a (1-x) / (rho N)).
                (0..pool)
                    .map(|i| {
                        let age = (pool - i) as f64;
                        (b as f64 * libm::exp(-age * (1.0 - x) / (rho * pool as f64))).round() as u32
                    })
                    .collect()
            }
            other => {
                return Err(Error::config(key, format!("\"analytic\" does not support gc = \"{}\"", other.name())));
            }
        };
        let mut counts = counts;
        if !meanfield::fix_total(&mut counts, span_pages, b as u32) {
            return Err(Error::config(key, "cannot lay out the span in the available blocks"));
        }
        let lpns: Vec<u32> = (0..span_pages as u32).collect();
        with_ftl!(&mut self.ftl, f => f.place_layout(&lpns, &counts))?;
        self.last = self.counters();
        Ok(())
    }

    /// Apply the configured preconditioning (none, sequential fill, or analytic) without
    /// running the workload; used by benchmarks and by callers that drive rounds themselves.
    pub fn precondition(&mut self) -> Result<()> {
        let page = self.geo.page_size;
        match self.cfg.run.precondition {
            Precondition::None => Ok(()),
            Precondition::Fill => {
                let req = (128 * 1024u64).max(page);
                self.fill(1, req - req % page, "precondition")
            }
            Precondition::Analytic => self.precondition_analytic(),
        }
    }

    /// Drive the configured workload for `host_bytes` more host bytes (no rounds recorded).
    pub fn run_for(&mut self, host_bytes: u64) -> Result<()> {
        let kind = match self.cfg.workload.kind {
            WorkloadType::SniaPts => WorkloadType::Uniform,
            k => k,
        };
        let mut wl = self.build_workload(kind, None)?;
        let c = self.counters();
        self.drive(&mut wl, Stop { write_bytes: c.host_write_bytes + host_bytes, cmds: u64::MAX })
    }

    /// Run the configured job and return its result.  Stopped by the interrupt (see
    /// [`Simulator::set_interrupt`]), it returns the rounds done so far, the last one cut
    /// short, with `interrupted` set (the measurement window may then be empty: WAF NaN);
    /// an `Interrupted` error when not even one command was run.
    pub fn run(&mut self) -> Result<SimResult> {
        self.interrupted = false;
        let start_rounds = self.rounds.len();
        let res = if self.cfg.timing.is_some() { self.run_timed() } else { self.run_functional() };
        if self.interrupted && self.rounds.len() == start_rounds {
            return Err(Error::interrupted()); // nothing done to report
        }
        res.map(|mut r| {
            r.interrupted = self.interrupted;
            r
        })
    }

    /// The result of a run interrupted before its timed rounds: the (preconditioning)
    /// rounds done, an empty measurement window.
    fn interrupted_result(&mut self, t0: Instant) -> Result<SimResult> {
        self.result_from_rounds(t0, self.rounds.len())
    }

    fn run_functional(&mut self) -> Result<SimResult> {
        let t0 = Instant::now();
        self.run_start = self.counters();
        let page = self.geo.page_size;
        let measure_first;
        let steady;
        if self.cfg.workload.kind == WorkloadType::SniaPts && self.pts_test() == PtsTest::Iops {
            return Err(Error::config(
                "workload.pts.test",
                "the PTS IOPS test measures IOPS: it needs the timed model ([timing] or a preset)",
            ));
        }
        if self.cfg.workload.kind == WorkloadType::SniaPts {
            // SNIA PTS: purge, 2x user capacity of 128 KiB sequential writes, then 4 KiB
            // random writes in rounds until the steady-state rule holds (or max_rounds).
            let mut wl = self.build_workload(WorkloadType::SniaPts, Some(4096u64.max(page)))?;
            self.security_erase();
            self.last = self.counters();
            let req = (128 * 1024u64).max(page);
            let fill = self.fill(2, req - req % page, "precondition");
            let stopped = self.stopped(fill)?;
            let first = self.rounds.len();
            let mut st = steady::detect(&[], None, SteadyRule::default());
            for _ in 0..if stopped { 0 } else { self.cfg.run.max_rounds } {
                let r = self.run_rounds(&mut wl, Amount::DriveWrites(self.cfg.run.round_drive_writes), "steady-state");
                let stop = self.stopped(r)?;
                let (vals, el) = self.round_series(first);
                st = steady::detect(&vals, Some(&el), SteadyRule::default());
                if st.reached || stop {
                    break;
                }
            }
            let n = self.rounds.len() - first;
            steady = shift(st.clone(), first);
            if n == 0 {
                measure_first = self.rounds.len(); // interrupted in the preconditioning
            } else {
                let (ws, we) = match st.window {
                    Some((a, b)) if st.reached => (first + a, first + b),
                    _ => (first + n.saturating_sub(5), first + n - 1),
                };
                measure_first = ws;
                self.rounds.truncate(we + 1);
                self.round_start.truncate(we + 1);
            }
        } else {
            let plan = self.plan()?;
            let pre = self.precondition();
            let stopped = self.stopped(pre)?;
            let first = self.rounds.len();
            let mut mf = None;
            let mut wl: Option<Workload> = None;
            for p in if stopped { &plan[..0] } else { &plan[..] } {
                if let Some((w, i)) = &p.workload {
                    if let Some(old) = wl.take() {
                        self.note_trace(&old);
                    }
                    wl = Some(self.build_step(w, *i)?);
                }
                let cur = wl.as_mut().expect("the first phase builds its workload");
                if p.measure && mf.is_none() {
                    mf = Some(self.rounds.len());
                    with_ftl!(&mut self.ftl, f => { f.take_victim_hist(); });
                }
                let r = self.run_rounds(cur, p.amount, &p.name);
                if self.stopped(r)? {
                    break;
                }
            }
            if let Some(wl) = &wl {
                self.note_trace(wl);
            }
            measure_first = mf.unwrap_or(self.rounds.len());
            if !self.interrupted {
                self.check_window(measure_first, wl.as_ref().expect("at least one phase"))?;
            }
            let (vals, el) = self.round_series(first);
            steady = shift(steady::detect(&vals, Some(&el), SteadyRule::default()), first);
        }
        let mut res = self.result_from_rounds(t0, measure_first)?;
        res.steady_state = steady;
        Ok(res)
    }

    /// A measurement window with no round: say why (a trace that ended early, typically).
    fn check_window(&self, measure_first: usize, wl: &Workload) -> Result<()> {
        if measure_first < self.rounds.len() {
            return Ok(());
        }
        if wl.exhausted {
            let dw = self.counters().host_write_bytes as f64 / self.geo.user_bytes as f64;
            return Err(Error::config(
                "run.warmup_drive_writes",
                format!(
                    "the trace ended before the measurement window (after {dw:.3} drive writes in all); lower \
                     run.warmup_drive_writes, measure an earlier phase, or set workload.trace.repeat = true"
                ),
            ));
        }
        Err(Error::config("run.measure_drive_writes", "the measurement window holds no round"))
    }

    /// The result document from the rounds recorded so far; the measurement window starts
    /// at round `measure_first`.
    fn result_from_rounds(&mut self, t0: Instant, measure_first: usize) -> Result<SimResult> {
        let page = self.geo.page_size;
        let empty_window_kept = self.interrupted && !self.rounds.is_empty();
        if measure_first >= self.rounds.len() && !empty_window_kept {
            return Err(Error::config("run.measure_drive_writes", "the measurement window holds no round"));
        }
        // (interrupted before the measurement window: an empty window, WAF NaN)
        let measured = &self.rounds[measure_first.min(self.rounds.len())..];
        let host: u64 = measured.iter().map(|r| r.host_write_bytes).sum();
        let nand: u64 = measured.iter().map(|r| r.nand_write_pages).sum::<u64>() * page;
        let window = Window {
            first_round: measure_first,
            last_round: self.rounds.len() - 1,
            host_write_bytes: host,
            nand_write_bytes: nand,
        };
        let now = self.counters();
        let measure_counters = now.minus(self.round_start.get(measure_first).unwrap_or(&now));
        let hist = with_ftl!(&mut self.ftl, f => f.take_victim_hist());
        let vcount: u64 = hist.iter().sum();
        let b = self.geo.pages_per_block as f64;
        let mean_valid = if vcount > 0 {
            Some(hist.iter().enumerate().map(|(j, &n)| j as f64 * n as f64).sum::<f64>() / vcount as f64 / b)
        } else {
            None
        };
        let wall = t0.elapsed().as_secs_f64();
        let host_pages = (now.host_write_pages - self.run_start.host_write_pages) as f64;
        Ok(SimResult {
            opsim_version: env!("CARGO_PKG_VERSION"),
            config: self.cfg.clone(),
            drive: self.drive_report(),
            op: self.op_report(),
            gc: self.cfg.ftl.gc.name(),
            waf: nand as f64 / host as f64,
            measure_window: window,
            counters: now,
            measure_counters,
            rounds: self.rounds.clone(),
            steady_state: steady::detect(&[], None, SteadyRule::default()),
            wear: self.wear(),
            victims: Victims { valid_histogram: hist, count: vcount, mean_valid_fraction: mean_valid },
            free_blocks_min: self.rounds.iter().map(|r| r.free_blocks_min).min().unwrap_or(0),
            trace: self.trace.clone(),
            timed: None,
            perf: Perf {
                wall_seconds: wall,
                host_pages_per_second: if wall > 0.0 { host_pages / wall } else { 0.0 },
                timed_ios_per_second: None,
            },
            interrupted: self.interrupted,
        })
    }

    /// The timed run: preconditioning (functional, untimed), then warm-up and measured
    /// rounds through the timed device.  SNIA PTS (`snia-pts`): purge and 2x sequential
    /// preconditioning, then 4 KiB random-write rounds until the steady-state rule holds on
    /// per-round IOPS (at most `max_rounds`); the measurement window is the steady window.
    fn run_timed(&mut self) -> Result<SimResult> {
        let t0 = Instant::now();
        self.run_start = self.counters();
        let tc = self.cfg.timing.clone().expect("timing configured");
        let r = self.resolve_timing(&tc)?;
        let page = self.geo.page_size;
        let pts = self.cfg.workload.kind == WorkloadType::SniaPts;
        if pts && self.pts_test() == PtsTest::Iops {
            return self.run_pts_iops(t0, tc, r);
        }
        let plan = if pts { Vec::new() } else { self.plan()? };
        let pre = if pts {
            self.security_erase();
            self.last = self.counters();
            let req = (128 * 1024u64).max(page);
            self.fill(2, req - req % page, "precondition")
        } else {
            self.precondition()
        };
        if self.stopped(pre)? {
            return self.interrupted_result(t0);
        }
        let mut state = TimedState::new(
            &tc,
            r,
            self.geo.physical_pages(),
            self.geo.blocks,
            self.cfg.ftl.gc_low_watermark,
            page,
            self.geo.sector_size as u64,
            self.cfg.run.seed,
        );
        state.set_idle_fold(self.idle_fold_ms());
        state.set_interrupt(self.interrupt.clone());
        let plan = if pts {
            let per = if tc.round_s.is_some() { u64::MAX } else { self.round_bytes() };
            vec![PhasePlan {
                name: "steady-state".into(),
                workload: None,
                amount: Amount::DriveWrites(
                    per.saturating_mul(self.cfg.run.max_rounds as u64) as f64 / self.geo.user_bytes as f64,
                ),
                measure: true,
            }]
        } else {
            plan
        };
        let mut wl: Option<Workload> =
            if pts { Some(self.build_workload(WorkloadType::SniaPts, Some(4096u64.max(page)))?) } else { None };
        let round_bytes = self.round_bytes();
        let round_ns = tc.round_s.map(|s| (s * 1e9).round() as u64);
        let cap_ns = tc.max_time_s.map(|s| (s * 1e9).round() as u64).unwrap_or(u64::MAX);
        let first_timed = self.rounds.len();
        let loop_start = (Instant::now(), self.counters());
        let mut timed_rounds: Vec<TimedRound> = Vec::new();
        let mut measure_hist = timed::hist::Histogram::default();
        let mut measure_hist_r = timed::hist::Histogram::default();
        let mut measure_hist_w = timed::hist::Histogram::default();
        let mut measure_first = None;
        let mut steady_iops_state = steady::detect(&[], None, SteadyRule::default());
        'phases: for p in &plan {
            if let Some((w, i)) = &p.workload {
                if let Some(old) = wl.take() {
                    self.note_trace(&old);
                }
                let next = self.build_step(w, *i)?;
                let speed = w.trace.as_ref().filter(|t| t.timing == crate::trace::Timing::Trace).map(|t| t.speed);
                state.set_trace_timing(speed);
                wl = Some(next);
            }
            let cur = wl.as_mut().expect("the first phase builds its workload");
            if p.measure && measure_first.is_none() {
                measure_first = Some(self.rounds.len());
                with_ftl!(&mut self.ftl, f => { f.take_victim_hist(); });
            }
            let (total, cmd_end) = self.budget(p.amount);
            let mut done = 0u64;
            while done < total && !(cur.exhausted && state.idle()) {
                let start_ns = state.now();
                let before = self.counters();
                let urgent_before = state.urgent_totals();
                let map_before = state.map_stats();
                if start_ns >= cap_ns {
                    break 'phases;
                }
                if before.commands() >= cmd_end {
                    break;
                }
                let until = round_ns.map(|d| start_ns.saturating_add(d)).unwrap_or(u64::MAX).min(cap_ns);
                let bytes = if round_ns.is_some() { total - done } else { round_bytes.min(total - done) };
                let stop = Stop { write_bytes: before.host_write_bytes.saturating_add(bytes), cmds: cmd_end };
                let rng = &mut self.rng;
                let r =
                    with_ftl!(&mut self.ftl, f => state.drive(f, cur, rng, stop, until)).and_then(|()| cur.finish());
                let stop_now = self.stopped(r)?; // interrupted: this round is the last, cut short
                let after = self.counters();
                done += after.host_write_bytes - before.host_write_bytes;
                let end_ns = state.now().max(start_ns + 1);
                let h = std::mem::take(&mut state.rec.round_hist);
                let cd = std::mem::take(&mut state.rec.round_done);
                let urgent = state.urgent_totals().zip(urgent_before).map(|(a, b)| (a.0 - b.0, a.1 - b.1));
                if after.commands() == before.commands() && h.count() == 0 {
                    if stop_now {
                        break 'phases;
                    }
                    break; // nothing happened: the workload ended and the queue drained
                }
                self.close_round(&p.name);
                let secs = (end_ns - start_ns) as f64 / 1e9;
                let d = after.minus(&before);
                let ios = h.count() as f64;
                timed_rounds.push(TimedRound {
                    index: self.rounds.len() - 1,
                    phase: p.name.clone(),
                    t_start_s: start_ns as f64 / 1e9,
                    t_end_s: end_ns as f64 / 1e9,
                    iops: ios / secs,
                    write_iops: cd.writes as f64 / secs,
                    read_iops: cd.reads as f64 / secs,
                    mbps: (cd.write_bytes + cd.read_bytes) as f64 / secs / 1e6,
                    host_write_bytes: d.host_write_bytes,
                    nand_write_pages: d.nand_write_pages,
                    gc_copy_pages: d.gc_copy_pages,
                    erases: d.erases,
                    waf: d.waf(page),
                    latency_us: h.summary_us(),
                    label: None,
                    bs: None,
                    rwmix: None,
                    combinations: None,
                    completed_write_bytes: cd.write_bytes,
                    urgent_s: urgent.map(|u| u.0 as f64 / 1e9),
                    urgent_write_bytes: urgent.map(|u| u.1),
                    map_cache: self.map_round(&state, map_before, &d),
                });
                if p.measure {
                    measure_hist.merge(&h);
                }
                if pts {
                    let (vals, el) = timed_round_series(&timed_rounds);
                    steady_iops_state = steady::detect(&vals, Some(&el), SteadyRule::default());
                    if steady_iops_state.reached {
                        break 'phases;
                    }
                }
                if stop_now {
                    break 'phases;
                }
                if d.host_write_bytes == 0 && round_ns.is_none() && cmd_end == u64::MAX {
                    break; // nothing more can be written (read-only load): avoid spinning
                }
            }
        }
        let wl = wl.expect("at least one phase");
        self.note_trace(&wl);
        let mut measure_first = measure_first.unwrap_or(self.rounds.len());
        if !pts && !self.interrupted {
            self.check_window(measure_first, &wl)?;
        }
        if timed_rounds.is_empty() {
            if self.interrupted {
                return self.interrupted_result(t0);
            }
            return Err(Error::config("timing.max_time_s", "no round completed; raise max_time_s"));
        }
        // read/write split over the measurement window comes from the whole-run histograms
        measure_hist_r.merge(&state.rec.hist_read);
        measure_hist_w.merge(&state.rec.hist_write);
        if pts {
            let n = timed_rounds.len();
            let (ws, _) = match steady_iops_state.window {
                Some(w) if steady_iops_state.reached => w,
                _ => (n.saturating_sub(5), n - 1),
            };
            measure_first = first_timed + ws;
        }
        let ss = if pts {
            steady_iops_state
        } else {
            let (vals, el) = timed_round_series(&timed_rounds);
            steady::detect(&vals, Some(&el), SteadyRule::default())
        };
        let shift_rounds = |s: SteadyState| shift(s, first_timed);
        let steady_iops = if ss.reached { ss.mean } else { None };
        let measured: Vec<&TimedRound> = timed_rounds.iter().filter(|t| t.index >= measure_first).collect();
        let m_secs: f64 = measured.iter().map(|t| t.t_end_s - t.t_start_s).sum();
        let m_ios: f64 = measured.iter().map(|t| t.iops * (t.t_end_s - t.t_start_s)).sum();
        // only whole intervals: a last, partial one would show a spurious drop
        let end_s = state.now() as f64 / 1e9;
        let mut series = state.rec.points();
        series.retain(|p| p.t_s <= end_s + 1e-9);
        let steady_start_s = if ss.reached { ss.window.map(|(a, _)| timed_rounds[a].t_start_s) } else { None };
        let report = TimedReport {
            timing: state.resolved().clone(),
            simulated_seconds: state.now() as f64 / 1e9,
            phases: timed::phases(&series, steady_start_s, pts || self.cfg.run.precondition != Precondition::Analytic),
            iops_series: series,
            latency_us: TimedLatency {
                all: measure_hist.summary_us(),
                read: measure_hist_r.summary_us(),
                write: measure_hist_w.summary_us(),
            },
            steady_state: shift_rounds(ss),
            steady_iops,
            measured_iops: if m_secs > 0.0 { m_ios / m_secs } else { 0.0 },
            map_cache: None,
            rounds: timed_rounds,
            pts_iops: None,
            urgent: state.urgent_report(&tc),
        };
        let loop_wall = loop_start.0.elapsed().as_secs_f64();
        let c = self.counters().minus(&loop_start.1);
        let loop_ios = (c.host_write_cmds + c.host_read_cmds) as f64;
        let (vals, el) = self.round_series(first_timed);
        let mut res = self.result_from_rounds(t0, measure_first)?;
        res.perf.timed_ios_per_second = Some(if loop_wall > 0.0 { loop_ios / loop_wall } else { 0.0 });
        res.steady_state = shift(steady::detect(&vals, Some(&el), SteadyRule::default()), first_timed);
        let mut report = report;
        let window: Vec<&TimedRound> = report.rounds.iter().filter(|t| t.index >= measure_first).collect();
        report.map_cache = self.map_report(&state, &window, &res, first_timed);
        res.timed = Some(report);
        Ok(res)
    }

    /// The mapping-table cache's figures for a round (or PTS combination) that started with
    /// the cache's counts at `before` and did the FTL work `d`.
    fn map_round(&self, state: &TimedState, before: Option<MapStats>, d: &Counters) -> Option<MapRound> {
        let (p, now, before) = (self.map_cache.as_ref()?, state.map_stats()?, before?);
        Some(MapRound::new(
            &now.minus(&before),
            d.nand_write_pages * self.geo.page_size,
            d.host_write_bytes,
            p.translation_page_bytes,
        ))
    }

    /// `timed.map_cache`: the measurement window's figures (its rounds, or for the PTS IOPS
    /// test every combination of them) and the whole timed run's (from round `first_timed`).
    fn map_report(
        &self,
        state: &TimedState,
        window: &[&TimedRound],
        res: &SimResult,
        first_timed: usize,
    ) -> Option<MapCacheReport> {
        let (p, total) = (self.map_cache.as_ref()?, state.map_stats()?);
        let mut w = MapStats::default();
        for r in window {
            match &r.combinations {
                Some(cs) => cs.iter().filter_map(|c| c.map_cache.as_ref()).for_each(|m| w.add(&m.stats())),
                None => w.add(&r.map_cache.as_ref()?.stats()),
            }
        }
        let mw = &res.measure_window;
        let timed = &self.rounds[first_timed..];
        let (nand, host) = (
            timed.iter().map(|r| r.nand_write_pages).sum::<u64>() * self.geo.page_size,
            timed.iter().map(|r| r.host_write_bytes).sum(),
        );
        let tp = p.translation_page_bytes;
        Some(MapCacheReport::new(
            p,
            MapRound::new(&w, mw.nand_write_bytes, mw.host_write_bytes, tp),
            res.waf,
            MapRound::new(&total, nand, host, tp),
        ))
    }

    /// The SNIA PTS IOPS test (docs/timed.md): purge, workload-independent preconditioning
    /// (untimed), then rounds of every block size x R/W mix for `timing.round_s` simulated
    /// seconds each, until the steady-state rule holds on the 4 KiB 100% write IOPS (at most
    /// `run.max_rounds`).  The result has the real-drive harness's round semantics and schema.
    fn run_pts_iops(&mut self, t0: Instant, tc: TimingConfig, r: Resolved) -> Result<SimResult> {
        use crate::timed::pts;
        let page = self.geo.page_size;
        let m = pts::matrix(self.cfg.workload.pts.as_ref())?;
        if tc.arrival_iops.is_some() {
            return Err(Error::config(
                "timing.arrival_iops",
                "the PTS IOPS test runs at a queue depth (closed loop); remove arrival_iops",
            ));
        }
        let combo_ns = (tc.round_s.unwrap_or(60.0) * 1e9).round() as u64;
        let cap_ns = tc.max_time_s.map(|s| (s * 1e9).round() as u64).unwrap_or(u64::MAX);
        // one workload per block size: uniform random over the span, aligned to the block
        // size (fio's default); all writes, the state draws each command's direction
        let mut wls = Vec::with_capacity(m.sizes.len());
        for &bs in &m.sizes {
            let w = WorkloadConfig {
                kind: WorkloadType::Uniform,
                span: self.cfg.workload.span,
                request_size: Some(crate::units::ByteSize(bs)),
                align: Some(crate::units::ByteSize(bs)),
                ..Default::default()
            };
            wls.push(self.build_workload_from(&w, WorkloadType::Uniform, None).map_err(|mut e| {
                if e.key.as_deref().is_some_and(|k| k.starts_with("workload.")) {
                    e.key = Some("workload.pts.block_sizes".into());
                    e.message = format!("{}: {}", pts::bs_name(bs), e.message);
                }
                e
            })?);
        }
        // purge, then the span written twice in 128 KiB sequential writes (untimed)
        self.security_erase();
        self.last = self.counters();
        let req = (128 * 1024u64).max(page);
        let fill = self.fill(2, req - req % page, "precondition");
        if self.stopped(fill)? {
            return self.interrupted_result(t0);
        }
        let mut state = TimedState::new(
            &tc,
            r,
            self.geo.physical_pages(),
            self.geo.blocks,
            self.cfg.ftl.gc_low_watermark,
            page,
            self.geo.sector_size as u64,
            self.cfg.run.seed,
        );
        state.set_idle_fold(self.idle_fold_ms());
        state.set_interrupt(self.interrupt.clone());
        state.rec.round_split = Some(Default::default());
        let first_timed = self.rounds.len();
        let loop_start = (Instant::now(), self.counters());
        let mut rounds: Vec<TimedRound> = Vec::new();
        // per round: the tracked combination's latency (all, read, write)
        let mut lat: Vec<[timed::hist::Histogram; 3]> = Vec::new();
        let mut ss = steady::detect(&[], None, SteadyRule::default());
        let mut stop = false;
        for _ in 0..self.cfg.run.max_rounds {
            let mut combos: Vec<TimedRound> = Vec::with_capacity(m.combos.len());
            let mut tracked_lat = None;
            for (ci, &(si, mi)) in m.combos.iter().enumerate() {
                let start_ns = state.now();
                if start_ns >= cap_ns {
                    stop = true;
                    break;
                }
                let (bs, mix) = (pts::bs_name(m.sizes[si]), &m.mixes[mi]);
                state.rec.begin_segment(start_ns, Some((bs.clone(), mix.name.clone())));
                state.set_mix(Some(mix.read));
                let before = self.counters();
                let urgent_before = state.urgent_totals();
                let map_before = state.map_stats();
                let until = start_ns.saturating_add(combo_ns).min(cap_ns);
                let rng = &mut self.rng;
                let wl = &mut wls[si];
                let r = with_ftl!(&mut self.ftl, f => state.drive(f, wl, rng, Stop { write_bytes: u64::MAX, cmds: u64::MAX }, until));
                if self.stopped(r)? {
                    stop = true; // interrupted: this round is not counted
                    break;
                }
                state.drain();
                let end_ns = state.now().max(start_ns + 1);
                state.rec.end_segment(end_ns);
                let h = std::mem::take(&mut state.rec.round_hist);
                let (hr, hw) = state.rec.round_split.replace(Default::default()).unwrap_or_default();
                let cd = std::mem::take(&mut state.rec.round_done);
                let urgent = state.urgent_totals().zip(urgent_before).map(|(a, b)| (a.0 - b.0, a.1 - b.1));
                let after = self.counters();
                let secs = (end_ns - start_ns) as f64 / 1e9;
                let d = after.minus(&before);
                combos.push(TimedRound {
                    index: 0, // set when the round closes
                    phase: "steady-state".into(),
                    t_start_s: start_ns as f64 / 1e9,
                    t_end_s: end_ns as f64 / 1e9,
                    iops: h.count() as f64 / secs,
                    write_iops: cd.writes as f64 / secs,
                    read_iops: cd.reads as f64 / secs,
                    mbps: (cd.write_bytes + cd.read_bytes) as f64 / secs / 1e6,
                    host_write_bytes: d.host_write_bytes,
                    nand_write_pages: d.nand_write_pages,
                    gc_copy_pages: d.gc_copy_pages,
                    erases: d.erases,
                    waf: d.waf(page),
                    latency_us: h.summary_us(),
                    completed_write_bytes: cd.write_bytes,
                    urgent_s: urgent.map(|u| u.0 as f64 / 1e9),
                    urgent_write_bytes: urgent.map(|u| u.1),
                    map_cache: self.map_round(&state, map_before, &d),
                    label: Some(format!("{bs} R/W {}", mix.name)),
                    bs: Some(bs),
                    rwmix: Some(mix.name.clone()),
                    combinations: None,
                });
                if ci == m.tracked {
                    tracked_lat = Some([h, hr, hw]);
                }
            }
            if combos.len() < m.combos.len() {
                break; // max_time_s ended the round: it is not counted
            }
            self.close_round("steady-state");
            let index = self.rounds.len() - 1;
            combos.iter_mut().for_each(|c| c.index = index);
            let mut main = combos[m.tracked].clone();
            main.combinations = Some(combos);
            rounds.push(main);
            lat.push(tracked_lat.expect("the tracked combination ran"));
            let (vals, el) = timed_round_series(&rounds);
            ss = steady::detect(&vals, Some(&el), SteadyRule::default());
            if ss.reached || stop {
                break;
            }
        }
        if rounds.is_empty() {
            if self.interrupted {
                return self.interrupted_result(t0);
            }
            return Err(Error::config("timing.max_time_s", "no PTS IOPS round completed; raise max_time_s"));
        }
        let n = rounds.len();
        let (ws, we) = match ss.window {
            Some(w) if ss.reached => w,
            _ => (n.saturating_sub(5), n - 1),
        };
        let measure_first = first_timed + ws;
        let window = &rounds[ws..=we];
        // the IOPS table: every combination over the window
        let mut iops = vec![vec![0.0; m.mixes.len()]; m.sizes.len()];
        let mut mbps = vec![vec![0.0; m.mixes.len()]; m.sizes.len()];
        for (ci, &(si, mi)) in m.combos.iter().enumerate() {
            // the mean of the rounds' figures, as the steady-state IOPS
            for r in window {
                let c = &r.combinations.as_ref().expect("combinations")[ci];
                iops[si][mi] += c.iops / window.len() as f64;
                mbps[si][mi] += c.mbps / window.len() as f64;
            }
        }
        let mut hists: [timed::hist::Histogram; 3] = Default::default();
        for l in &lat[ws..=we] {
            for (a, b) in hists.iter_mut().zip(l) {
                a.merge(b);
            }
        }
        let m_secs: f64 = window.iter().map(|t| t.t_end_s - t.t_start_s).sum();
        let m_ios: f64 = window.iter().map(|t| t.iops * (t.t_end_s - t.t_start_s)).sum();
        let end_s = state.now() as f64 / 1e9;
        let mut series = state.rec.points();
        series.retain(|p| p.t_s <= end_s + 1e-9);
        let tracked = &rounds[0];
        let tracked_points: Vec<SeriesPoint> =
            series.iter().filter(|p| p.bs == tracked.bs && p.rwmix == tracked.rwmix).cloned().collect();
        let steady_start_s = if ss.reached { Some(rounds[ws].t_start_s) } else { None };
        let table = pts::IopsTable {
            block_sizes: m.sizes.iter().map(|&b| pts::bs_name(b)).collect(),
            block_size_bytes: m.sizes.clone(),
            mixes: m.mixes.iter().map(|x| x.name.clone()).collect(),
            iops,
            mbps,
            window: (rounds[ws].index, rounds[we].index),
            steady: ss.reached,
            tracked: tracked.label.clone().unwrap_or_default(),
        };
        let steady_iops = if ss.reached { ss.mean } else { None };
        let [ha, hr, hw] = hists;
        let report = TimedReport {
            timing: state.resolved().clone(),
            simulated_seconds: end_s,
            phases: timed::phases(&tracked_points, steady_start_s, true),
            iops_series: series,
            latency_us: TimedLatency { all: ha.summary_us(), read: hr.summary_us(), write: hw.summary_us() },
            steady_state: shift(ss, first_timed),
            steady_iops,
            measured_iops: if m_secs > 0.0 { m_ios / m_secs } else { 0.0 },
            map_cache: None,
            rounds,
            pts_iops: Some(table),
            urgent: state.urgent_report(&tc),
        };
        let loop_wall = loop_start.0.elapsed().as_secs_f64();
        let c = self.counters().minus(&loop_start.1);
        let loop_ios = (c.host_write_cmds + c.host_read_cmds) as f64;
        let (vals, el) = self.round_series(first_timed);
        let mut res = self.result_from_rounds(t0, measure_first)?;
        res.perf.timed_ios_per_second = Some(if loop_wall > 0.0 { loop_ios / loop_wall } else { 0.0 });
        res.steady_state = shift(steady::detect(&vals, Some(&el), SteadyRule::default()), first_timed);
        let mut report = report;
        let window: Vec<&TimedRound> = report.rounds[ws..=we].iter().collect();
        report.map_cache = self.map_report(&state, &window, &res, first_timed);
        res.timed = Some(report);
        Ok(res)
    }

    /// The timing parameters resolved, with the SLC-mode timing when the cache is on.
    fn resolve_timing(&self, tc: &TimingConfig) -> Result<Resolved> {
        resolve_timing(tc, &self.geo, self.slc.as_ref(), self.map_cache.as_ref())
    }

    /// The idle delay before the SLC cache folds in idle time, if it does.
    fn idle_fold_ms(&self) -> Option<f64> {
        self.cfg.ftl.slc_cache.as_ref().filter(|c| c.enabled && c.idle_fold).map(|c| c.idle_ms)
    }

    fn pts_test(&self) -> PtsTest {
        self.cfg.workload.pts.as_ref().map(|p| p.test).unwrap_or_default()
    }

    /// Per-round WAF from round `first` on, and whether each round had left FOB (erased
    /// at least one block: before that, WAF is trivially 1).
    fn round_series(&self, first: usize) -> (Vec<f64>, Vec<bool>) {
        let r = &self.rounds[first..];
        (r.iter().map(|r| r.waf).collect(), r.iter().map(|r| r.erases > 0).collect())
    }

    pub fn drive_report(&self) -> DriveReport {
        drive_report(&self.geo, self.memory)
    }

    pub fn wear(&self) -> Wear {
        with_ftl!(&self.ftl, f => {
            let e = f.erase_counts();
            let min = *e.iter().min().unwrap_or(&0);
            let max = *e.iter().max().unwrap_or(&0);
            let mean = e.iter().map(|&v| v as f64).sum::<f64>() / e.len().max(1) as f64;
            let mut h = std::collections::BTreeMap::new();
            for &v in e { *h.entry(v).or_insert(0u64) += 1; }
            Wear { min, mean, max, histogram: h.into_iter().collect() }
        })
    }

    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }
}

/// The timing parameters resolved against the drive, with the SLC-mode timing when the
/// cache is on and the mapping-table cache when it is.
pub(crate) fn resolve_timing(
    tc: &TimingConfig,
    geo: &Geometry,
    slc: Option<&crate::ftl::SlcParams>,
    map_cache: Option<&timed::mapcache::MapCacheParams>,
) -> Result<Resolved> {
    let mut r = tc.resolve(geo.page_size)?;
    if let Some(s) = slc {
        tc.resolve_slc(&mut r, s.bits)?;
    }
    r.map_cache = map_cache.cloned();
    Ok(r)
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
    }
}

/// `[workload.pts]` of the workload and of every phase.
fn check_pts(cfg: &Config) -> Result<()> {
    timed::pts::check(&cfg.workload, "workload")?;
    for (i, p) in cfg.phases.iter().enumerate() {
        timed::pts::check(&p.workload, &format!("phase[{i}].workload"))?;
    }
    Ok(())
}

/// The SLC cache's limits in blocks, checked against the drive.
fn slc_params(c: &crate::config::SlcCacheConfig, cfg: &Config, geo: &Geometry) -> Result<crate::ftl::SlcParams> {
    use crate::config::timing::Cell;
    use crate::config::{check_fraction, WhenFull};
    let key = "ftl.slc_cache";
    let max = check_fraction(&format!("{key}.max_fraction"), c.max_fraction.0, 0.0, 1.0, false, true)?;
    let min = check_fraction(&format!("{key}.min_fraction"), c.min_fraction.0, 0.0, 1.0, true, true)?;
    if min > max {
        return Err(Error::config(&format!("{key}.min_fraction"), format!("{min} is above max_fraction {max}")));
    }
    let cell_bits = cfg.timing.as_ref().map(|t| t.cell.bits());
    let bits = match (c.bits_per_cell, cell_bits) {
        (Some(b), _) if !(2..=4).contains(&b) => {
            return Err(Error::config(
                &format!("{key}.bits_per_cell"),
                format!("{b} is out of range 2..=4 (MLC, TLC, QLC)"),
            ));
        }
        (Some(b), Some(cb)) if b != cb => {
            return Err(Error::config(
                &format!("{key}.bits_per_cell"),
                format!("{b} disagrees with timing.cell ({cb} bits per cell)"),
            ));
        }
        (Some(b), _) => b,
        (None, Some(1)) => {
            return Err(Error::config(key, "an SLC cache needs multi-level cells (timing.cell is \"slc\")"));
        }
        (None, Some(cb)) => cb,
        (None, None) => Cell::Tlc.bits(),
    };
    if geo.pages_per_block < bits {
        return Err(Error::config(
            "drive.pages_per_block",
            format!("{} is fewer than the {bits} pages an SLC-mode block needs", geo.pages_per_block),
        ));
    }
    if !(c.idle_ms.is_finite() && c.idle_ms >= 0.0) {
        return Err(Error::config(&format!("{key}.idle_ms"), format!("{} must be >= 0", c.idle_ms)));
    }
    let blocks = geo.blocks as f64;
    let max_blocks = (max * blocks).floor() as u32;
    let min_blocks = (min * blocks).floor() as u32;
    // the static part comes out of the spare area: leave GC at least half of it
    let spare = geo.blocks as i64
        - geo.user_pages.div_ceil(geo.pages_per_block as u64) as i64
        - cfg.ftl.gc_low_watermark as i64;
    if min_blocks as i64 > spare / 2 {
        return Err(Error::config(
            &format!("{key}.min_fraction"),
            format!(
                "{min}: a static SLC part of {min_blocks} blocks takes more than half of the {} blocks of spare area",
                spare.max(0)
            ),
        ));
    }
    Ok(crate::ftl::SlcParams {
        max_blocks: max_blocks.max(min_blocks),
        min_blocks,
        bits,
        fold_when_full: c.when_full == WhenFull::Fold,
    })
}

/// Per-round IOPS of a timed run, and whether each round may count toward the steady state:
/// it erased at least one block (the drive has left fresh-out-of-box, as for the WAF rule)
/// or wrote nothing (a read-only round has no fresh-out-of-box phase).
fn timed_round_series(rounds: &[TimedRound]) -> (Vec<f64>, Vec<bool>) {
    (rounds.iter().map(|r| r.iops).collect(), rounds.iter().map(|r| r.erases > 0 || r.host_write_bytes == 0).collect())
}

fn shift(mut s: SteadyState, by: usize) -> SteadyState {
    s.round = s.round.map(|r| r + by);
    s.window = s.window.map(|(a, b)| (a + by, b + by));
    s
}

/// The hot loop: generate commands and apply them until `stop` (or the end of the stream).
#[inline(never)]
fn run_until<P: Policy>(
    f: &mut Ftl<P>,
    wl: &mut Workload,
    rng: &mut Rng,
    stop: Stop,
    intr: &mut Interrupt,
) -> Result<()> {
    let limited = stop.cmds != u64::MAX;
    let mut left = 1; // commands until the interrupt is asked (at once, then every Interrupt::EVERY)
    if wl.pages {
        while f.c.host_write_bytes < stop.write_bytes && !(limited && f.c.commands() >= stop.cmds) {
            intr.tick(&mut left)?;
            // Two-stage prefetch: the mapping entry of a command far ahead, then the block
            // metadata of the page a nearer command will overwrite.
            let (op, ahead) = wl.next_ahead(rng);
            f.prefetch_lpn(ahead.start as u32);
            if let Some(near) = wl.peek(workload::AHEAD / 2) {
                f.prefetch_old_page(near.start as u32);
            }
            match op.kind {
                OpKind::Write => f.write_pages(op.start as u32, op.len, op.stream)?,
                OpKind::Read => f.read_pages(op.start as u32, op.len),
                OpKind::Trim => f.trim_pages(op.start as u32, op.len),
            }
        }
    } else {
        let spp = f.sectors_per_page();
        while f.c.host_write_bytes < stop.write_bytes && !(limited && f.c.commands() >= stop.cmds) {
            intr.tick(&mut left)?;
            let (op, ahead) = wl.next_ahead(rng);
            if op.len == 0 {
                break; // the end of a trace
            }
            f.prefetch_lpn((ahead.start / spp) as u32);
            match op.kind {
                // whole pages (most trace records): no read-modify-write bookkeeping
                OpKind::Write if op.start % spp == 0 && op.len as u64 % spp == 0 => {
                    f.write_pages((op.start / spp) as u32, (op.len as u64 / spp) as u32, op.stream)?
                }
                OpKind::Write => f.write_sectors(op.start, op.len as u64, op.stream)?,
                OpKind::Read => f.read_sectors(op.start, op.len as u64)?,
                OpKind::Trim => f.trim_sectors(op.start, op.len as u64)?,
            }
        }
    }
    Ok(())
}
