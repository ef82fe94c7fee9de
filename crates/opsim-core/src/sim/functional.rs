//! The functional run: the phase plan (`[[phase]]` or warm-up and measurement), workloads
//! built from the config, rounds by drive writes, the hot loop, and the result from the
//! rounds of the measurement window.

use super::report::{shift, Perf, Round, SimResult, TraceReplay, Victims, Window};
use super::{AnyFtl, Simulator};
use crate::config::{PtsTest, WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};
use crate::ftl::{Ftl, Policy};
use crate::interrupt::Interrupt;
use crate::rng::Rng;
use crate::steady::{self, SteadyRule};
use crate::timed::Stop;
use crate::workload::{self, OpKind, Workload};
use std::time::Instant;

/// How much of a phase to run.
#[derive(Clone, Copy, Debug)]
pub(super) enum Amount {
    DriveWrites(f64),
    Ios(u64),
}

/// One phase of the run, resolved from `[[phase]]` or from warm-up + measurement.
pub(super) struct PhasePlan {
    pub(super) name: String,
    /// The workload to build (and the phase index for error keys), or None to continue
    /// the previous phase's workload (warm-up then measurement of one stream).
    pub(super) workload: Option<(WorkloadConfig, Option<usize>)>,
    pub(super) amount: Amount,
    pub(super) measure: bool,
}

impl Simulator {
    // ---------------------------------------------------------------- workload runs
    pub(super) fn build_workload(&self, kind: WorkloadType, request: Option<u64>) -> Result<Workload> {
        self.build_workload_from(&self.cfg.workload, kind, request)
    }

    pub(super) fn build_workload_from(
        &self,
        w: &WorkloadConfig,
        kind: WorkloadType,
        request: Option<u64>,
    ) -> Result<Workload> {
        Ok(workload::build(
            w,
            kind,
            self.max_sectors,
            self.geo.sector_size as u64,
            self.geo.page_size,
            self.streams(),
            request,
        )?
        .with_interrupt(&self.interrupt))
    }

    /// The workload of a plan step; errors of a `[[phase]]` workload name `phase[i].workload.*`.
    pub(super) fn build_step(&self, w: &WorkloadConfig, phase: Option<usize>) -> Result<Workload> {
        if phase.is_none() {
            if let Some(t) = self.build_tenants()? {
                return Ok(t);
            }
        }
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
    pub(super) fn plan(&self) -> Result<Vec<PhasePlan>> {
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
    pub(super) fn drive(&mut self, wl: &mut Workload, stop: Stop) -> Result<()> {
        let (rng, intr) = (&mut self.rng, &mut self.interrupt);
        match &mut self.ftl {
            AnyFtl::PoolsGreedy(p) => p.drive(wl, rng, stop, intr),
            AnyFtl::PoolsFifo(p) => p.drive(wl, rng, stop, intr),
            AnyFtl::PoolsWindowed(p) => p.drive(wl, rng, stop, intr),
            AnyFtl::PoolsCostBenefit(p) => p.drive(wl, rng, stop, intr),
            one => with_ftl!(one, f => run_until(f, wl, rng, stop, intr)),
        }?;
        wl.finish()
    }

    pub(super) fn close_round(&mut self, phase: &str) {
        let now = self.counters();
        let d = now.minus(&self.last);
        let free_min = with_drive!(&mut self.ftl, f => f.take_free_min());
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
        if let Some(pc) = self.placement_counters() {
            self.pl_start.push(std::mem::replace(&mut self.pl_last, pc));
        }
    }

    pub(super) fn round_bytes(&self) -> u64 {
        ((self.cfg.run.round_drive_writes * self.geo.user_bytes as f64).round() as u64).max(1)
    }

    /// (write-byte budget, absolute command limit) of a phase starting now.
    pub(super) fn budget(&self, amount: Amount) -> (u64, u64) {
        let now = self.counters().commands();
        match amount {
            Amount::DriveWrites(d) => ((d * self.geo.user_bytes as f64).round() as u64, u64::MAX),
            Amount::Ios(n) => (u64::MAX, now.saturating_add(n)),
        }
    }

    /// Run `wl` in rounds of `round_drive_writes` until the phase's amount is done or the
    /// workload ends.
    pub(super) fn run_rounds(&mut self, wl: &mut Workload, amount: Amount, phase: &str) -> Result<()> {
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

    /// Record trace replay figures from a finished workload.
    pub(super) fn note_trace(&mut self, wl: &Workload) {
        let figures = match &wl.pattern {
            workload::Pattern::Trace(t) => Some((t.records(), t.passes, t.skipped_bad())),
            workload::Pattern::Tenants(t) => t.trace_figures(),
            _ => None,
        };
        if let Some((records, passes, skipped)) = figures {
            let c = self.trace.get_or_insert_with(TraceReplay::default);
            c.records += records;
            c.passes += passes;
            c.skipped_bad_lines += skipped;
            c.ended |= wl.exhausted && !self.interrupted;
        }
    }

    /// Drive the configured workload for `host_bytes` more host bytes (no rounds recorded).
    pub fn run_for(&mut self, host_bytes: u64) -> Result<()> {
        let kind = match self.cfg.workload.kind {
            WorkloadType::SniaPts => WorkloadType::Uniform,
            k => k,
        };
        let mut wl = match self.build_tenants()? {
            Some(t) => t,
            None => self.build_workload(kind, None)?,
        };
        let c = self.counters();
        self.drive(&mut wl, Stop { write_bytes: c.host_write_bytes + host_bytes, cmds: u64::MAX })
    }

    /// The result of a run interrupted before its timed rounds: the (preconditioning)
    /// rounds done, an empty measurement window.
    pub(super) fn interrupted_result(&mut self, t0: Instant) -> Result<SimResult> {
        self.result_from_rounds(t0, self.rounds.len())
    }

    pub(super) fn run_functional(&mut self) -> Result<SimResult> {
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
            self.mark_round_start();
            let req = (128 * 1024u64).max(page);
            let fill = self.fill(2, req - req % page, 1.0, "precondition");
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
                    with_drive!(&mut self.ftl, f => { f.take_victim_hist(); });
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
    pub(super) fn check_window(&self, measure_first: usize, wl: &Workload) -> Result<()> {
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
    pub(super) fn result_from_rounds(&mut self, t0: Instant, measure_first: usize) -> Result<SimResult> {
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
        let hist = with_drive!(&mut self.ftl, f => f.take_victim_hist());
        let (namespaces, handles, placement, fdp_stats) =
            self.placement_report(self.pl_start.get(measure_first).or(Some(&self.pl_last)));
        let wall = t0.elapsed().as_secs_f64();
        let host_pages = (now.host_write_pages - self.run_start.host_write_pages) as f64;
        Ok(SimResult {
            opsim_version: env!("CARGO_PKG_VERSION"),
            config: self.cfg.clone(),
            drive: self.drive_report(),
            op: self.op_report(),
            gc: self.cfg.ftl.gc.name(),
            waf: nand as f64 / host as f64,
            meta_share: (self.cfg.ftl.meta_writes > 0.0)
                .then(|| measure_counters.meta_pages as f64 / measure_counters.nand_write_pages.max(1) as f64),
            measure_window: window,
            counters: now,
            measure_counters,
            rounds: self.rounds.clone(),
            steady_state: steady::detect(&[], None, SteadyRule::default()),
            wear: self.wear(),
            victims: Victims::new(&hist, self.geo.pages_per_block, self.geo.unit.kind),
            free_blocks_min: self.rounds.iter().map(|r| r.free_blocks_min).min().unwrap_or(0),
            trace: self.trace.clone(),
            timed: None,
            perf: Perf {
                wall_seconds: wall,
                host_pages_per_second: if wall > 0.0 { host_pages / wall } else { 0.0 },
                timed_ios_per_second: None,
                parallel: self.par.clone(),
            },
            interrupted: self.interrupted,
            placement,
            namespaces,
            handles,
            fdp_stats,
            gc_layout: self.gc_layout_report(),
        })
    }

    /// Per-round WAF from round `first` on, and whether each round had left FOB (erased
    /// at least one block: before that, WAF is trivially 1).
    pub(super) fn round_series(&self, first: usize) -> (Vec<f64>, Vec<bool>) {
        let r = &self.rounds[first..];
        (r.iter().map(|r| r.waf).collect(), r.iter().map(|r| r.erases > 0).collect())
    }
}

/// The hot loop: generate commands and apply them until `stop` (or the end of the stream).
#[inline(never)]
pub(super) fn run_until<P: Policy>(
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
            if op.len == 0 {
                break; // a generator stopped (the zoned writer's opening, interrupted)
            }
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
