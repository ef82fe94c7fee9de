//! The functional simulator: a drive (geometry + FTL) driven by a workload through
//! preconditioning, warm-up and measured rounds, or by individual host commands.
//!
//! A `Simulator` is a plain owned value (no globals); the same config and seed give
//! bit-identical results (only `SimResult::perf` depends on the machine).
//!
//! This room: the `Simulator` (its construction from a `config::ModelSpec`, host commands,
//! `run`).
//! Rooms: `report` (result types), `functional` (the functional run, rounds, measurement
//! window), `precondition`, `timed` (the timed drivers).

use crate::config::gc::GcLayout;
use crate::config::{Config, GcPolicy};
use crate::error::{Error, Result};
use crate::ftl::{CostBenefit, Counters, DChoices, Fifo, Ftl, FtlParams, Greedy, WindowedGreedy};
use crate::geometry::{Geometry, OpReport};
use crate::interrupt::Interrupt;
use crate::par::{Parallelism, Pools};
use crate::resolve::{memory_limit, ModelSpec};
use crate::rng::Rng;

/// The drive's FTL: one [`Ftl`] (serial), or the GC pools of a drive split over threads
/// ([`Pools`], `crate::par`; the policies that do not draw random numbers).
pub enum AnyFtl {
    Greedy(Ftl<Greedy>),
    Fifo(Ftl<Fifo>),
    DChoices(Ftl<DChoices>),
    Windowed(Ftl<WindowedGreedy>),
    CostBenefit(Ftl<CostBenefit>),
    PoolsGreedy(Box<Pools<Greedy>>),
    PoolsFifo(Box<Pools<Fifo>>),
    PoolsWindowed(Box<Pools<WindowedGreedy>>),
    PoolsCostBenefit(Box<Pools<CostBenefit>>),
}

/// Run `$body` with `$f` bound to the concrete `Ftl<P>` inside an `AnyFtl` that is one FTL:
/// the timed model, analytic preconditioning and placement, which never run on GC pools
/// (`crate::par::plan` keeps them serial).
macro_rules! with_ftl {
    ($any:expr, $f:ident => $body:expr) => {
        match $any {
            $crate::sim::AnyFtl::Greedy($f) => $body,
            $crate::sim::AnyFtl::Fifo($f) => $body,
            $crate::sim::AnyFtl::DChoices($f) => $body,
            $crate::sim::AnyFtl::Windowed($f) => $body,
            $crate::sim::AnyFtl::CostBenefit($f) => $body,
            _ => unreachable!("the timed model, analytic preconditioning and placement run on one FTL (par::plan)"),
        }
    };
}

/// Run `$body` with `$f` bound to the concrete `Ftl<P>` or `Pools<P>` inside an `AnyFtl`: the
/// methods both have (counters, free blocks, wear, host commands...).
macro_rules! with_drive {
    ($any:expr, $f:ident => $body:expr) => {
        match $any {
            $crate::sim::AnyFtl::Greedy($f) => $body,
            $crate::sim::AnyFtl::Fifo($f) => $body,
            $crate::sim::AnyFtl::DChoices($f) => $body,
            $crate::sim::AnyFtl::Windowed($f) => $body,
            $crate::sim::AnyFtl::CostBenefit($f) => $body,
            $crate::sim::AnyFtl::PoolsGreedy($f) => $body,
            $crate::sim::AnyFtl::PoolsFifo($f) => $body,
            $crate::sim::AnyFtl::PoolsWindowed($f) => $body,
            $crate::sim::AnyFtl::PoolsCostBenefit($f) => $body,
        }
    };
}

mod functional;
#[cfg(test)]
mod parallel_tests;
mod placement;
mod precondition;
mod report;
mod timed;

pub use placement::{FdpStats, HandleReport, NamespaceReport, PlacementReport};
pub(crate) use report::drive_report;
pub use report::{
    DriveReport, GcLayoutReport, Perf, Round, SimResult, TimedLatency, TimedReport, TraceReplay, Victims, Wear, Window,
};
pub(crate) use timed::resolve_timing;

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
    map_cache: Option<crate::timed::mapcache::MapCacheParams>,
    /// Polled by the run loops; the caller's way to stop a run (Ctrl-C).
    interrupt: Interrupt,
    /// The current `run` was interrupted.
    interrupted: bool,
    /// Namespaces and placement (None: off).
    placement: Option<crate::config::placement::Resolved>,
    /// Garbage collection's frontier, scope and reserve.
    gc: GcLayout,
    /// Placement counters at the start of each round (parallel to `round_start`; empty when off).
    pl_start: Vec<crate::ftl::PlacementCounters>,
    /// Placement counters when the current round started (the `last` of placement).
    pl_last: crate::ftl::PlacementCounters,
    /// The threads the model runs on, and why.
    par: Parallelism,
}

impl Simulator {
    pub fn from_toml(text: &str) -> Result<Simulator> {
        Simulator::new(Config::from_toml_str(text)?)
    }

    pub fn new(cfg: Config) -> Result<Simulator> {
        Simulator::new_interruptible(cfg, Interrupt::none())
    }

    /// [`Simulator::new`] whose build asks `interrupt` while it fills the model's tables (tens
    /// of seconds for a drive of terabytes: an `Interrupted` error when it says stop), then
    /// [`Simulator::set_interrupt`] with it.
    pub fn new_interruptible(cfg: Config, mut interrupt: Interrupt) -> Result<Simulator> {
        let spec = ModelSpec::resolve(&cfg, true)?;
        interrupt.check()?;
        let mut sim = Simulator::with_spec(cfg, spec, &mut interrupt)?;
        sim.set_interrupt(interrupt);
        Ok(sim)
    }

    /// Build the model of `cfg` as `spec` (resolved from it with the model's limits)
    /// describes it, asking `interrupt` while its tables are filled.
    pub(crate) fn with_spec(cfg: Config, spec: ModelSpec, interrupt: &mut Interrupt) -> Result<Simulator> {
        let cfg = cfg.echoed();
        let par = crate::par::plan(&cfg, &spec, crate::par::cores(), memory_limit(&cfg)?.bytes);
        let ModelSpec { geo, map_cache, memory, slc, policy_param: param, placement, gc } = spec;
        let (f, r) = (&cfg.ftl, &cfg.run);
        let params = FtlParams {
            blocks: geo.blocks,
            pages_per_block: geo.pages_per_block,
            lpns: geo.user_pages as u32,
            page_size: geo.page_size,
            sector_size: geo.sector_size,
            streams: placement.as_ref().map_or(f.streams, |p| if p.placed() { p.handles } else { f.streams }),
            gc_low: gc.low,
            gc_high: gc.high,
            groups: gc.groups,
            shared_frontier: gc.shared,
            meta_rate: crate::ftl::meta_rate(f.meta_writes),
            gc_classes: gc.classes,
            host_classes: gc.host_classes,
            policy_param: param,
            check: f.check_invariants,
            track_data: r.track_data,
            seed: r.seed,
            slc,
            placement: placement.as_ref().map(|p| crate::ftl::PlacementParams {
                ns_bounds: std::iter::once(0)
                    .chain(p.namespaces.iter().map(|n| ((n.first_sector + n.sectors) / geo.sectors_per_page()) as u32))
                    .collect(),
                handles: p.handles,
                persistent: p.persistent(),
            }),
        };
        let ftl = match f.gc {
            _ if par.threads > 1 => build_pools(f.gc, &params, &par, interrupt)?,
            GcPolicy::Greedy => AnyFtl::Greedy(Ftl::try_new_polled(&params, interrupt)?),
            GcPolicy::Fifo => AnyFtl::Fifo(Ftl::try_new_polled(&params, interrupt)?),
            GcPolicy::Random | GcPolicy::DChoices => AnyFtl::DChoices(Ftl::try_new_polled(&params, interrupt)?),
            GcPolicy::WindowedGreedy => AnyFtl::Windowed(Ftl::try_new_polled(&params, interrupt)?),
            GcPolicy::CostBenefit => AnyFtl::CostBenefit(Ftl::try_new_polled(&params, interrupt)?),
        };
        let native_sectors = geo.user_sectors();
        let pl_last = ftl_placement_counters(&ftl);
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
            pl_last,
            placement,
            pl_start: Vec::new(),
            gc,
            par,
        })
    }

    /// The threads the model runs on, and why.
    pub fn parallelism(&self) -> &Parallelism {
        &self.par
    }

    /// Let `interrupt` stop the long loops (runs, preconditioning, trace passes): whole runs
    /// then return what was done, marked `interrupted`; other calls return an
    /// [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted) error.  The drive is left in
    /// a consistent state (stopped between two commands) and stays usable.
    pub fn set_interrupt(&mut self, interrupt: Interrupt) {
        let traces = std::iter::once(&mut self.cfg.workload)
            .chain(self.cfg.phases.iter_mut().map(|p| &mut p.workload))
            .chain(self.cfg.namespaces.iter_mut().map(|n| &mut n.workload))
            .chain(self.placement.iter_mut().flat_map(|p| p.namespaces.iter_mut().map(|n| &mut n.workload)));
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

    /// The next round starts now (after a purge or a layout that is not a round).
    pub(super) fn mark_round_start(&mut self) {
        self.last = self.counters();
        if let Some(pc) = self.placement_counters() {
            self.pl_last = pc;
        }
    }

    /// Host write frontiers: `ftl.streams`, or the placement handles.
    pub fn streams(&self) -> u32 {
        match &self.placement {
            Some(p) if p.placed() => p.handles,
            _ => self.cfg.ftl.streams,
        }
    }

    /// Garbage collection's layout, when a config sets its frontier, scope or reserve.
    pub fn gc_layout_report(&self) -> Option<report::GcLayoutReport> {
        let f = &self.cfg.ftl;
        let set = f.gc_frontier != Default::default() || f.gc_scope != Default::default() || f.gc_reserve.is_some();
        set.then(|| report::GcLayoutReport {
            frontier: if self.gc.shared { "shared" } else { "separate" },
            scope: f.gc_scope.name(),
            groups: self.gc.groups,
            low: self.gc.low,
            high: self.gc.high,
            reserve_blocks: self.gc.reserve_blocks(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn op_report(&self) -> OpReport {
        self.geo.op_report(self.gc.reserve_blocks())
    }
    pub fn counters(&self) -> Counters {
        with_drive!(&self.ftl, f => f.c.clone())
    }
    pub fn max_address_sectors(&self) -> u64 {
        self.max_sectors
    }
    pub fn free_blocks(&self) -> u32 {
        with_drive!(&self.ftl, f => f.free_blocks())
    }
    pub fn mapped_pages(&self) -> u64 {
        with_drive!(&self.ftl, f => f.mapped_pages())
    }

    /// SLC cache: blocks in SLC mode now (open and closed), closed ones waiting to be
    /// folded, and the cache's current limit in blocks (all 0 without a cache).
    pub fn slc_cache(&self) -> (u32, u32, u32) {
        with_drive!(&self.ftl, f => { let (n, q) = f.slc_blocks(); (n, q, f.slc_limit()) })
    }

    /// Run the FTL invariant checker.
    pub fn check(&self) -> Result<()> {
        with_drive!(&self.ftl, f => f.check()).map_err(|e| Error::internal(format!("FTL invariant violated: {e}")))
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

    /// Host write; `stream` is the write's stream or placement handle.
    pub fn write(&mut self, lba: u64, sectors: u64, stream: u32) -> Result<()> {
        self.check_lba(lba, sectors)?;
        let streams = self.streams();
        if stream >= streams {
            return Err(Error::device(format!("stream {stream} does not exist (the drive has {streams})")));
        }
        with_drive!(&mut self.ftl, f => f.write_sectors(lba, sectors, stream))
    }
    pub fn read(&mut self, lba: u64, sectors: u64) -> Result<()> {
        self.check_lba(lba, sectors)?;
        with_drive!(&mut self.ftl, f => f.read_sectors(lba, sectors))
    }
    pub fn trim(&mut self, lba: u64, sectors: u64) -> Result<()> {
        self.check_lba(lba, sectors)?;
        with_drive!(&mut self.ftl, f => f.trim_sectors(lba, sectors))
    }
    /// The data token (host write command number) held by the page containing `lba`.
    pub fn read_token(&self, lba: u64) -> Result<Option<u64>> {
        self.check_lba(lba, 1)?;
        if !self.cfg.run.track_data {
            return Err(Error::config("run.track_data", "must be true to read data tokens"));
        }
        let lpn = (lba / self.geo.sectors_per_page()) as u32;
        Ok(with_drive!(&self.ftl, f => f.read_token(lpn)))
    }
    /// SECURITY ERASE UNIT / SANITIZE BLOCK ERASE: back to fresh-out-of-box.
    pub fn security_erase(&mut self) {
        with_drive!(&mut self.ftl, f => f.purge());
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
        with_drive!(&mut self.ftl, f => f.set_accessible_pages(pages));
    }
    pub fn power_cycle(&mut self) {
        if let Some(m) = self.volatile_restore.take() {
            self.max_sectors = m;
            self.note_accessible();
        }
        self.max_set_this_cycle = false;
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

    pub fn drive_report(&self) -> DriveReport {
        drive_report(&self.geo, self.memory)
    }

    pub fn wear(&self) -> Wear {
        with_drive!(&self.ftl, f => wear_of(f.erase_counts()))
    }

    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }
}

/// Wear from the erase counts of every block.
fn wear_of(e: impl AsRef<[u32]>) -> Wear {
    let e = e.as_ref();
    let min = *e.iter().min().unwrap_or(&0);
    let max = *e.iter().max().unwrap_or(&0);
    let mean = e.iter().map(|&v| v as f64).sum::<f64>() / e.len().max(1) as f64;
    let mut h = std::collections::BTreeMap::new();
    for &v in e {
        *h.entry(v).or_insert(0u64) += 1;
    }
    Wear { min, mean, max, histogram: h.into_iter().collect() }
}

fn ftl_placement_counters(ftl: &AnyFtl) -> crate::ftl::PlacementCounters {
    with_drive!(ftl, f => f.placement_counters().cloned()).unwrap_or_default()
}

/// The GC pools of `params` on `par.threads` threads, for a policy that draws no random numbers.
fn build_pools(gc: GcPolicy, params: &FtlParams, par: &Parallelism, interrupt: &mut Interrupt) -> Result<AnyFtl> {
    let (shards, threads) = (crate::par::shards(par.pools, par.threads), par.threads as usize);
    Ok(match gc {
        GcPolicy::Greedy => AnyFtl::PoolsGreedy(Box::new(Pools::try_new(params, shards, threads, interrupt)?)),
        GcPolicy::Fifo => AnyFtl::PoolsFifo(Box::new(Pools::try_new(params, shards, threads, interrupt)?)),
        GcPolicy::WindowedGreedy => {
            AnyFtl::PoolsWindowed(Box::new(Pools::try_new(params, shards, threads, interrupt)?))
        }
        GcPolicy::CostBenefit => {
            AnyFtl::PoolsCostBenefit(Box::new(Pools::try_new(params, shards, threads, interrupt)?))
        }
        GcPolicy::Random | GcPolicy::DChoices => {
            return Err(Error::internal("d-choices and random run serial (par::plan)"))
        }
    })
}
