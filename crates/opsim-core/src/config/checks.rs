//! The range and combination checks of a config that need no drive: the FTL's knobs (streams,
//! the GC policy's parameter), the run's lengths, `[workload.pts]`, and the peer-parity knobs
//! against what they cannot be combined with.

use super::gc::GcLayout;
use super::{check_fraction, Config, FtlConfig, GcPolicy, Precondition, RunConfig};
use crate::error::{Error, Result};

/// `ftl.streams` and the GC policy's knobs; the policy's parameter (d of d-choices, the
/// window of windowed greedy, 1 for random, else 0).
pub(crate) fn ftl_knobs(f: &FtlConfig) -> Result<u32> {
    if f.streams == 0 || f.streams > 16 {
        return Err(Error::config("ftl.streams", format!("{} is out of range; expected 1..=16", f.streams)));
    }
    super::check_meta_writes(f.meta_writes)?;
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
        return Err(Error::config("ftl.d", format!("is only used with gc = \"d-choices\", not \"{}\"", f.gc.name())));
    }
    if f.window.is_some() && f.gc != GcPolicy::WindowedGreedy {
        return Err(Error::config(
            "ftl.window",
            format!("is only used with gc = \"windowed-greedy\", not \"{}\"", f.gc.name()),
        ));
    }
    Ok(param)
}

/// The run's lengths: drive writes of warm-up, measurement and rounds, and the rounds' cap.
pub(crate) fn run_lengths(r: &RunConfig) -> Result<()> {
    for (k, v, allow0) in [
        ("run.warmup_drive_writes", r.warmup_drive_writes, true),
        ("run.measure_drive_writes", r.measure_drive_writes, false),
        ("run.round_drive_writes", r.round_drive_writes, false),
    ] {
        if !v.is_finite() || v < 0.0 || (!allow0 && v == 0.0) || v > 1e6 {
            return Err(Error::config(k, format!("{v} is out of range; expected a positive number of drive writes")));
        }
    }
    if r.max_rounds < 5 || r.max_rounds > 100_000 {
        return Err(Error::config("run.max_rounds", format!("{} is out of range; expected 5..=100000", r.max_rounds)));
    }
    let max = super::MAX_THREADS;
    if let Some(t) = r.threads.filter(|&t| t == 0 || t > max) {
        return Err(Error::config("run.threads", format!("{t} is out of range; expected 1..={max}")));
    }
    Ok(())
}

/// `[workload.pts]` of the workload and of every phase.
pub(crate) fn pts(cfg: &Config) -> Result<()> {
    super::pts::check(&cfg.workload, "workload")?;
    for (i, p) in cfg.phases.iter().enumerate() {
        super::pts::check(&p.workload, &format!("phase[{i}].workload"))?;
    }
    Ok(())
}

/// The peer-parity knobs against what they cannot be combined with: GC groups and the
/// shared frontier with persistently isolated placement (a GC frontier per handle), and the
/// preconditioning fill fraction.
pub(crate) fn peer_knobs(cfg: &Config, gc: &GcLayout, placement: Option<&super::placement::Resolved>) -> Result<()> {
    if placement.is_some_and(|p| p.persistent()) {
        if gc.groups > 1 {
            return Err(Error::config(
                "ftl.gc_scope",
                format!("\"{}\" cannot be combined with persistently isolated placement", cfg.ftl.gc_scope.name()),
            ));
        }
        if gc.shared {
            return Err(Error::config(
                "ftl.gc_frontier",
                "\"shared\" cannot be combined with persistently isolated placement (GC copies stay with their handle)",
            ));
        }
    }
    super::separation::check_placement(cfg, gc, placement)?;
    if let Some(fill) = cfg.run.precondition_fill {
        let key = "run.precondition_fill";
        check_fraction(key, fill.0, 0.0, 1.0, false, true)?;
        if cfg.run.precondition != Precondition::Fill {
            return Err(Error::config(key, "is only used with run.precondition = \"fill\""));
        }
        if placement.is_some_and(|p| !p.namespaces.is_empty()) {
            return Err(Error::config(key, "cannot be combined with [[namespace]] (each namespace is filled whole)"));
        }
    }
    Ok(())
}
