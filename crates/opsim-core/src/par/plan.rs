//! How many threads a run takes, and why: the result's `perf.parallel`.
//!
//! A functional run of a drive of independent GC pools splits (`super`); anything else runs
//! on one thread, and the reason says what keeps it there.  The thread count never changes a
//! result, so it is reported in `perf` (the machine's part of a result), not in the config
//! echo.

use super::drive::{CHUNK, MAX_SLOTS, STACK};
use super::item::Item;
use crate::config::{Config, GcPolicy, Precondition};
use crate::resolve::ModelSpec;
use serde::Serialize;

pub use crate::config::MAX_THREADS;

// Threads when `run.threads` is not set: the cores this process may run on (`cores`), at
// most one a pool.  What runs simulations side by side (a sweep's points, the demo's runs)
// asks for one thread each, so that the machine is not oversubscribed (docs/parallel.md,
// "Default").

/// The threads of a run and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Parallelism {
    /// Threads the run uses (1: serial).
    pub threads: u32,
    /// What `run.threads` (or `--threads`) asked for; absent: the default (the machine's cores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<u32>,
    /// The cores this process may run on.
    pub cores: u32,
    /// GC pools of the drive (1: one pool over the whole drive).
    pub pools: u32,
    /// Why this many threads.
    pub reason: String,
    /// Memory the threads take beyond the model's tables (their buffers and stacks, and each
    /// pool's own FTL scratch), counted against the memory limit.
    pub memory_bytes: u64,
}

/// The cores this process may run on (its affinity and cgroup quota).
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Shards the pools are dealt into: the units a thread takes, several per thread so that the
/// load balances itself.
pub(crate) fn shards(pools: u32, threads: u32) -> u32 {
    pools.min(threads.saturating_mul(4)).min(256)
}

/// Memory of a parallel run beyond the model: each pool but one keeps its own victim
/// histogram, GC buffer and FTL state; the chunks in flight (items and free-block events);
/// the workers' stacks.
pub(crate) fn thread_memory(pools: u32, threads: u32, pages_per_block: u32) -> u64 {
    let ppb = pages_per_block as u64;
    let per_pool = (ppb + 1) * 8 + ppb * 4 + 1024;
    let chunk = shards(pools, threads) as u64 * (CHUNK * std::mem::size_of::<Item>()) as u64 + CHUNK as u64 * 16;
    (pools as u64 - 1) * per_pool + (2 * MAX_SLOTS as u64 + 1) * chunk + (threads as u64 - 1) * STACK as u64
}

/// The threads `cfg` (resolved as `spec`) runs on, with the cores of this machine and the
/// memory limit of the model.
pub fn plan(cfg: &Config, spec: &ModelSpec, cores: u32, limit: u64) -> Parallelism {
    let requested = cfg.run.threads;
    let pools = spec.gc.groups;
    let serial = |reason: String| Parallelism { threads: 1, requested, cores, pools, reason, memory_bytes: 0 };
    if let Some(why) = serial_reason(cfg, spec) {
        return serial(format!("one thread: {why}"));
    }
    let want = requested.unwrap_or(cores);
    if want <= 1 {
        return serial(match requested {
            Some(_) => "one thread: run.threads = 1".into(),
            None => format!(
                "one thread: this process may run on one core (run.threads, or --threads, runs this drive's {pools} \
                 independent GC pools on more)"
            ),
        });
    }
    let threads = want.min(pools);
    let memory_bytes = thread_memory(pools, threads, spec.geo.pages_per_block);
    if spec.memory.saturating_add(memory_bytes) > limit {
        return serial(format!(
            "one thread: the threads' buffers ({}) would take the model past its memory limit",
            crate::units::format_size(memory_bytes)
        ));
    }
    let scope = cfg.ftl.gc_scope.name();
    let reason = format!(
        "{threads} threads over {pools} independent GC pools (ftl.gc_scope = \"{scope}\"): logical page l in pool l \
         mod {pools}, each pool's FTL applying its pages in the drive's order; the result does not depend on the \
         thread count{}",
        if threads < want { format!(" (at most one thread a pool: {want} asked)") } else { String::new() }
    );
    Parallelism { threads, requested, cores, pools, reason, memory_bytes }
}

/// Why `cfg` cannot be split exactly (None: it can).
fn serial_reason(cfg: &Config, spec: &ModelSpec) -> Option<String> {
    let pools = spec.gc.groups;
    if cfg.timing.is_some() {
        return Some(
            "the timed model is serial: its events (host commands, every die's and channel's NAND operations, \
             garbage collection) form one queue whose order decides the result"
                .into(),
        );
    }
    if pools == 1 {
        return Some(
            "garbage collection is global (one pool over the whole drive, ftl.gc_scope = \"drive\"): any block may be \
             the next victim, so every write depends on every write before it; a drive of independent GC pools \
             (ftl.gc_scope = \"die\" or \"plane\") splits"
                .into(),
        );
    }
    if matches!(cfg.ftl.gc, GcPolicy::Random | GcPolicy::DChoices) {
        return Some(format!(
            "the {} policy draws its victims from one random stream shared by the {pools} GC pools; drawn apart, the \
             victims would change",
            cfg.ftl.gc.name()
        ));
    }
    if spec.placement.is_some() {
        return Some("namespaces and data placement count per namespace and handle across the GC pools".into());
    }
    if cfg.run.precondition == Precondition::Analytic {
        return Some("run.precondition = \"analytic\" lays its steady state out on one FTL".into());
    }
    if cfg.run.track_data {
        return Some("run.track_data numbers the data by host command across the GC pools".into());
    }
    if cfg.ftl.separation != crate::config::separation::Separation::None {
        return Some(format!(
            "ftl.separation = \"{}\" is not split yet: its classes and lifetimes are kept for the whole drive",
            cfg.ftl.separation.name()
        ));
    }
    if spec.slc.is_some() || spec.geo.user_pages < pools as u64 || cfg.ftl.streams > u8::MAX as u32 {
        return Some("this layout is not split (an SLC cache, more pools than logical pages, or 256 streams)".into());
    }
    None
}
