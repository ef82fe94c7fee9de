//! The timed drivers: the timed run (preconditioning, then warm-up and measured rounds through
//! the timed device; SNIA PTS write saturation) and the SNIA PTS IOPS test, the timing resolved
//! against the drive, and the mapping-table cache's round figures.

use super::functional::{Amount, PhasePlan};
use super::report::{shift, SimResult, TimedLatency, TimedReport};
use super::Simulator;
use crate::config::timing::TimingConfig;
use crate::config::{Precondition, PtsTest, WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};
use crate::ftl::Counters;
use crate::geometry::Geometry;
use crate::steady::{self, SteadyRule, SteadyState};
use crate::timed::mapcache::{MapCacheReport, MapRound, MapStats};
use crate::timed::{self, Resolved, RoundDone, SeriesPoint, Stop, TimedRound, TimedState};
use crate::workload::Workload;
use std::time::Instant;

impl Simulator {
    /// The timed run: preconditioning (functional, untimed), then warm-up and measured
    /// rounds through the timed device.  SNIA PTS (`snia-pts`): purge and 2x sequential
    /// preconditioning, then 4 KiB random-write rounds until the steady-state rule holds on
    /// per-round IOPS (at most `max_rounds`); the measurement window is the steady window.
    pub(super) fn run_timed(&mut self) -> Result<SimResult> {
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
        let Some(mut state) = self.precondition_timed(&tc, r, pts)? else {
            return self.interrupted_result(t0);
        };
        let plan = if pts { self.pts_write_plan(&tc) } else { plan };
        let mut wl: Option<Workload> =
            if pts { Some(self.build_workload(WorkloadType::SniaPts, Some(4096u64.max(page)))?) } else { None };
        let limits = RoundLimits {
            round_bytes: self.round_bytes(),
            round_ns: tc.round_s.map(|s| (s * 1e9).round() as u64),
            cap_ns: tc.max_time_s.map(|s| (s * 1e9).round() as u64).unwrap_or(u64::MAX),
            pts,
        };
        let first_timed = self.rounds.len();
        let loop_start = (Instant::now(), self.counters());
        let mut acc = TimedRounds {
            rounds: Vec::new(),
            hist: timed::hist::Histogram::default(),
            steady: steady::detect(&[], None, SteadyRule::default()),
            measure_first: None,
        };
        for p in &plan {
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
            if p.measure && acc.measure_first.is_none() {
                acc.measure_first = Some(self.rounds.len());
                with_ftl!(&mut self.ftl, f => { f.take_victim_hist(); });
            }
            if self.timed_phase(&mut state, cur, p, &limits, &mut acc)? {
                break;
            }
        }
        let wl = wl.expect("at least one phase");
        self.note_trace(&wl);
        let mut measure_first = acc.measure_first.unwrap_or(self.rounds.len());
        if !pts && !self.interrupted {
            self.check_window(measure_first, &wl)?;
        }
        if acc.rounds.is_empty() {
            if self.interrupted {
                return self.interrupted_result(t0);
            }
            return Err(Error::config("timing.max_time_s", "no round completed; raise max_time_s"));
        }
        if pts {
            let n = acc.rounds.len();
            let (ws, _) = match acc.steady.window {
                Some(w) if acc.steady.reached => w,
                _ => (n.saturating_sub(5), n - 1),
            };
            measure_first = first_timed + ws;
        }
        let report = self.timed_report(&state, &tc, acc, measure_first, first_timed)?;
        self.finish_timed(&state, report, loop_start, t0, measure_first, first_timed, |_, t| t.index >= measure_first)
    }

    /// SNIA PTS write saturation's one phase: 4 KiB random-write rounds, at most `max_rounds`.
    fn pts_write_plan(&self, tc: &TimingConfig) -> Vec<PhasePlan> {
        let per = if tc.round_s.is_some() { u64::MAX } else { self.round_bytes() };
        vec![PhasePlan {
            name: "steady-state".into(),
            workload: None,
            amount: Amount::DriveWrites(
                per.saturating_mul(self.cfg.run.max_rounds as u64) as f64 / self.geo.user_bytes as f64,
            ),
            measure: true,
        }]
    }

    /// The rounds of one phase of the timed run, added to `acc`; true when the whole run
    /// ends here (time cap, interruption, PTS steady state).
    fn timed_phase(
        &mut self,
        state: &mut TimedState,
        cur: &mut Workload,
        p: &PhasePlan,
        lim: &RoundLimits,
        acc: &mut TimedRounds,
    ) -> Result<bool> {
        let (total, cmd_end) = self.budget(p.amount);
        let mut done = 0u64;
        while done < total && !(cur.exhausted && state.idle()) {
            let start = self.round_start(state);
            let (start_ns, before) = (start.t_ns, &start.counters);
            if start_ns >= lim.cap_ns {
                return Ok(true);
            }
            if before.commands() >= cmd_end {
                break;
            }
            let until = lim.round_ns.map(|d| start_ns.saturating_add(d)).unwrap_or(u64::MAX).min(lim.cap_ns);
            let bytes = if lim.round_ns.is_some() { total - done } else { lim.round_bytes.min(total - done) };
            let stop = Stop { write_bytes: before.host_write_bytes.saturating_add(bytes), cmds: cmd_end };
            let rng = &mut self.rng;
            let r = with_ftl!(&mut self.ftl, f => state.drive(f, cur, rng, stop, until)).and_then(|()| cur.finish());
            let stop_now = self.stopped(r)?; // interrupted: this round is the last, cut short
            let after = self.counters();
            done += after.host_write_bytes - before.host_write_bytes;
            let end_ns = state.now().max(start_ns + 1);
            let h = std::mem::take(&mut state.rec.round_hist);
            let cd = std::mem::take(&mut state.rec.round_done);
            if after.commands() == before.commands() && h.count() == 0 {
                // nothing happened: the workload ended and the queue drained
                return Ok(stop_now);
            }
            self.close_round(&p.name);
            let d = after.minus(before);
            let mut round = self.timed_round(state, p.name.clone(), &start, end_ns, &after, &h, &cd);
            round.index = self.rounds.len() - 1;
            acc.rounds.push(round);
            if p.measure {
                acc.hist.merge(&h);
            }
            if lim.pts {
                let (vals, el) = timed_round_series(&acc.rounds);
                acc.steady = steady::detect(&vals, Some(&el), SteadyRule::default());
                if acc.steady.reached {
                    return Ok(true);
                }
            }
            if stop_now {
                return Ok(true);
            }
            if d.host_write_bytes == 0 && lim.round_ns.is_none() && cmd_end == u64::MAX {
                break; // nothing more can be written (read-only load): avoid spinning
            }
        }
        Ok(false)
    }

    /// The timed run's report from its rounds (before the functional result joins it).
    fn timed_report(
        &self,
        state: &TimedState,
        tc: &TimingConfig,
        acc: TimedRounds,
        measure_first: usize,
        first_timed: usize,
    ) -> Result<TimedReport> {
        let TimedRounds { rounds: timed_rounds, hist: measure_hist, steady: steady_iops_state, .. } = acc;
        let pts = self.cfg.workload.kind == WorkloadType::SniaPts;
        // read/write split over the measurement window comes from the whole-run histograms
        let mut measure_hist_r = timed::hist::Histogram::default();
        let mut measure_hist_w = timed::hist::Histogram::default();
        measure_hist_r.merge(&state.rec.hist_read);
        measure_hist_w.merge(&state.rec.hist_write);
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
        let mut series = state.rec.points()?;
        series.retain(|p| p.t_s <= end_s + 1e-9);
        let steady_start_s = if ss.reached { ss.window.map(|(a, _)| timed_rounds[a].t_start_s) } else { None };
        Ok(TimedReport {
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
            urgent: state.urgent_report(tc),
        })
    }

    /// A timed run's result: the functional result of its rounds (steady state by the SNIA
    /// rule on WAF, the timed loop's speed) carrying `report`, whose mapping-table cache figures
    /// are those of the report's rounds that `in_window(position, round)` keeps.
    #[allow(clippy::too_many_arguments)]
    fn finish_timed(
        &mut self,
        state: &TimedState,
        mut report: TimedReport,
        loop_start: (Instant, Counters),
        t0: Instant,
        measure_first: usize,
        first_timed: usize,
        in_window: impl Fn(usize, &TimedRound) -> bool,
    ) -> Result<SimResult> {
        let loop_wall = loop_start.0.elapsed().as_secs_f64();
        let c = self.counters().minus(&loop_start.1);
        let loop_ios = (c.host_write_cmds + c.host_read_cmds) as f64;
        let (vals, el) = self.round_series(first_timed);
        let mut res = self.result_from_rounds(t0, measure_first)?;
        res.perf.timed_ios_per_second = Some(if loop_wall > 0.0 { loop_ios / loop_wall } else { 0.0 });
        res.steady_state = shift(steady::detect(&vals, Some(&el), SteadyRule::default()), first_timed);
        let window: Vec<&TimedRound> =
            report.rounds.iter().enumerate().filter(|&(i, t)| in_window(i, t)).map(|(_, t)| t).collect();
        report.map_cache = self.map_report(state, &window, &res, first_timed);
        res.timed = Some(report);
        Ok(res)
    }

    /// The clocks a round (or PTS combination) starts from.
    fn round_start(&self, state: &TimedState) -> RoundStart {
        RoundStart {
            t_ns: state.now(),
            counters: self.counters(),
            urgent: state.urgent_totals(),
            map: state.map_stats(),
        }
    }

    /// The figures of a round (or PTS combination) from `start` to `end_ns`, the drive's
    /// counters then at `after`: `h` its latencies, `cd` its completed commands.  Index 0 and
    /// no PTS label: the caller sets them.
    #[allow(clippy::too_many_arguments)]
    fn timed_round(
        &self,
        state: &TimedState,
        phase: String,
        start: &RoundStart,
        end_ns: u64,
        after: &Counters,
        h: &timed::hist::Histogram,
        cd: &RoundDone,
    ) -> TimedRound {
        let secs = (end_ns - start.t_ns) as f64 / 1e9;
        let d = after.minus(&start.counters);
        let urgent = state.urgent_totals().zip(start.urgent).map(|(a, b)| (a.0 - b.0, a.1 - b.1));
        TimedRound {
            index: 0,
            phase,
            t_start_s: start.t_ns as f64 / 1e9,
            t_end_s: end_ns as f64 / 1e9,
            iops: h.count() as f64 / secs,
            write_iops: cd.writes as f64 / secs,
            read_iops: cd.reads as f64 / secs,
            mbps: (cd.write_bytes + cd.read_bytes) as f64 / secs / 1e6,
            host_write_bytes: d.host_write_bytes,
            nand_write_pages: d.nand_write_pages,
            gc_copy_pages: d.gc_copy_pages,
            erases: d.erases,
            waf: d.waf(self.geo.page_size),
            latency_us: h.summary_us(),
            label: None,
            bs: None,
            rwmix: None,
            combinations: None,
            completed_write_bytes: cd.write_bytes,
            urgent_s: urgent.map(|u| u.0 as f64 / 1e9),
            urgent_write_bytes: urgent.map(|u| u.1),
            map_cache: self.map_round(state, start.map, &d),
        }
    }

    /// The mapping-table cache's figures for a round (or PTS combination) that started with
    /// the cache's counts at `before` and did the FTL work `d`.
    pub(super) fn map_round(&self, state: &TimedState, before: Option<MapStats>, d: &Counters) -> Option<MapRound> {
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
    pub(super) fn map_report(
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
    pub(super) fn run_pts_iops(&mut self, t0: Instant, tc: TimingConfig, r: Resolved) -> Result<SimResult> {
        use crate::timed::pts;
        let m = pts::matrix(self.cfg.workload.pts.as_ref())?;
        if tc.arrival_iops.is_some() {
            return Err(Error::config(
                "timing.arrival_iops",
                "the PTS IOPS test runs at a queue depth (closed loop); remove arrival_iops",
            ));
        }
        let combo_ns = (tc.round_s.unwrap_or(60.0) * 1e9).round() as u64;
        let cap_ns = tc.max_time_s.map(|s| (s * 1e9).round() as u64).unwrap_or(u64::MAX);
        let mut wls = self.pts_workloads(&m.sizes)?;
        let Some(mut state) = self.precondition_timed(&tc, r, true)? else {
            return self.interrupted_result(t0);
        };
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
                let (bs, mix) = (pts::bs_name(m.sizes[si]), &m.mixes[mi]);
                let Some((combo, hists)) = self.pts_combination(&mut state, &mut wls[si], bs, mix, combo_ns, cap_ns)?
                else {
                    stop = true; // the time cap or an interruption: this round is not counted
                    break;
                };
                combos.push(combo);
                if ci == m.tracked {
                    tracked_lat = Some(hists);
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
        let report = self.pts_iops_report(&state, &tc, &m, rounds, &lat, ss, (ws, we), first_timed)?;
        self.finish_timed(&state, report, loop_start, t0, measure_first, first_timed, |i, _| (ws..=we).contains(&i))
    }

    /// One combination of a PTS IOPS round: block size `bs` at `mix` on its workload `wl`
    /// for `combo_ns` (up to the time cap `cap_ns`), then drained: its figures and latencies
    /// (all, read, write).  None: the time cap or an interruption came first.
    #[allow(clippy::too_many_arguments)]
    fn pts_combination(
        &mut self,
        state: &mut TimedState,
        wl: &mut Workload,
        bs: String,
        mix: &crate::timed::pts::Mix,
        combo_ns: u64,
        cap_ns: u64,
    ) -> Result<Option<(TimedRound, [timed::hist::Histogram; 3])>> {
        let start_ns = state.now();
        if start_ns >= cap_ns {
            return Ok(None);
        }
        state.rec.begin_segment(start_ns, Some((bs.clone(), mix.name.clone())));
        state.set_mix(Some(mix.read));
        let start = self.round_start(state);
        let until = start_ns.saturating_add(combo_ns).min(cap_ns);
        let rng = &mut self.rng;
        let r = with_ftl!(&mut self.ftl, f => state.drive(f, wl, rng, Stop { write_bytes: u64::MAX, cmds: u64::MAX }, until));
        if self.stopped(r)? {
            return Ok(None);
        }
        state.drain()?;
        let end_ns = state.now().max(start_ns + 1);
        state.rec.end_segment(end_ns);
        let h = std::mem::take(&mut state.rec.round_hist);
        let (hr, hw) = state.rec.round_split.replace(Default::default()).unwrap_or_default();
        let cd = std::mem::take(&mut state.rec.round_done);
        let after = self.counters();
        // index: set when the round closes
        let mut combo = self.timed_round(state, "steady-state".into(), &start, end_ns, &after, &h, &cd);
        combo.label = Some(format!("{bs} R/W {}", mix.name));
        combo.bs = Some(bs);
        combo.rwmix = Some(mix.name.clone());
        Ok(Some((combo, [h, hr, hw])))
    }

    /// The PTS IOPS test's workloads, one per block size: uniform random over the span,
    /// aligned to the block size (fio's default); all writes, the state draws each command's
    /// direction.
    fn pts_workloads(&mut self, sizes: &[u64]) -> Result<Vec<Workload>> {
        use crate::timed::pts;
        let mut wls = Vec::with_capacity(sizes.len());
        for &bs in sizes {
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
        Ok(wls)
    }

    /// The PTS IOPS test's report: the IOPS table over the steady window `(ws, we)` (round
    /// positions), the tracked combination's latencies `lat` there and its series' phases.
    #[allow(clippy::too_many_arguments)]
    fn pts_iops_report(
        &self,
        state: &TimedState,
        tc: &TimingConfig,
        m: &crate::timed::pts::Matrix,
        rounds: Vec<TimedRound>,
        lat: &[[timed::hist::Histogram; 3]],
        ss: SteadyState,
        (ws, we): (usize, usize),
        first_timed: usize,
    ) -> Result<TimedReport> {
        use crate::timed::pts;
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
        let mut series = state.rec.points()?;
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
        Ok(TimedReport {
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
            urgent: state.urgent_report(tc),
        })
    }

    /// Precondition (functional, untimed) and set up the timed state on the drive it leaves.
    /// `purge_fill`: the SNIA PTS's purge, then the span written twice in 128 KiB sequential
    /// writes; otherwise the configured preconditioning.  `None` when the interrupt stopped
    /// the preconditioning.
    fn precondition_timed(&mut self, tc: &TimingConfig, r: Resolved, purge_fill: bool) -> Result<Option<TimedState>> {
        let page = self.geo.page_size;
        let pre = if purge_fill {
            self.security_erase();
            self.mark_round_start();
            let req = (128 * 1024u64).max(page);
            self.fill(2, req - req % page, 1.0, "precondition")
        } else {
            self.precondition()
        };
        if self.stopped(pre)? {
            return Ok(None);
        }
        // GC copies read whole NAND pages when host reads do: the FTL counts their senses
        if let Some(rt) = r.reads.as_ref().filter(|x| x.read_whole_pages) {
            let (dies, units) = (r.dies, rt.gc_sense_units());
            with_ftl!(&mut self.ftl, f => f.set_sense_layout(dies, units));
        }
        let mut state = TimedState::new(
            tc,
            r,
            self.geo.physical_pages(),
            self.geo.blocks,
            crate::timed::costs::SuperblockErase::of(&self.geo.unit),
            self.gc.low,
            page,
            self.geo.sector_size as u64,
            self.cfg.run.seed,
        );
        state.set_idle_fold(self.idle_fold_ms());
        state.set_interrupt(self.interrupt.clone());
        let (points, why) = self.series_budget();
        state.rec.set_max_points(points, why);
        Ok(Some(state))
    }

    /// The IOPS-series points the memory limit leaves room for beside the model, at
    /// [`SERIES_POINT_BYTES`] each, and what sets that (for the error when a run passes it).
    fn series_budget(&self) -> (u64, String) {
        let Ok(limit) = super::memory_limit(&self.cfg) else { return (u64::MAX, String::new()) };
        // the process's own limit (ulimit -v, the cgroup's) is its headroom now, the model
        // allocated; a configured or MemAvailable limit has the model still to take out
        let left = match crate::memory::process_limit() {
            Some(p) if p.bytes <= limit.bytes => p.bytes,
            _ => limit.bytes.saturating_sub(self.memory),
        };
        let points = left / SERIES_POINT_BYTES;
        let why = format!(
            " (4 KiB each in the {} left beside the model under the memory limit: {})",
            crate::units::format_size(left),
            limit.source
        );
        (points, why)
    }

    /// The timing parameters resolved, with the SLC-mode timing when the cache is on.
    pub(super) fn resolve_timing(&self, tc: &TimingConfig) -> Result<Resolved> {
        resolve_timing(tc, &self.geo, self.slc.as_ref(), self.map_cache.as_ref())
    }

    /// The idle delay before the SLC cache folds in idle time, if it does.
    pub(super) fn idle_fold_ms(&self) -> Option<f64> {
        self.cfg.ftl.slc_cache.as_ref().filter(|c| c.enabled && c.idle_fold).map(|c| c.idle_ms)
    }

    pub(super) fn pts_test(&self) -> PtsTest {
        self.cfg.workload.pts.as_ref().map(|p| p.test).unwrap_or_default()
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

/// Memory one IOPS-series point takes from the core's accumulator to the result the caller
/// holds (measured: some 2.1 KB per point in a Python dict and the JSON written, with
/// headroom).
pub const SERIES_POINT_BYTES: u64 = 4096;

/// Per-round IOPS of a timed run, and whether each round may count toward the steady state:
/// it erased at least one block (the drive has left fresh-out-of-box, as for the WAF rule)
/// or wrote nothing (a read-only round has no fresh-out-of-box phase).
pub(super) fn timed_round_series(rounds: &[TimedRound]) -> (Vec<f64>, Vec<bool>) {
    (rounds.iter().map(|r| r.iops).collect(), rounds.iter().map(|r| r.erases > 0 || r.host_write_bytes == 0).collect())
}

/// The clocks at the start of a timed round: simulated time, the drive's counters, the
/// urgent state's totals and the mapping-table cache's counts.
struct RoundStart {
    t_ns: u64,
    counters: Counters,
    urgent: Option<(u64, u64)>,
    map: Option<MapStats>,
}

/// What bounds a round of the timed run: its bytes (rounds by drive writes) or simulated
/// length, the run's time cap; SNIA PTS write saturation stops at steady state.
struct RoundLimits {
    round_bytes: u64,
    round_ns: Option<u64>,
    cap_ns: u64,
    pts: bool,
}

/// The timed run's rounds so far: their figures, the measured rounds' latencies, the steady
/// state on per-round IOPS (SNIA PTS) and the first measured round.
struct TimedRounds {
    rounds: Vec<TimedRound>,
    hist: timed::hist::Histogram,
    steady: SteadyState,
    measure_first: Option<usize>,
}
