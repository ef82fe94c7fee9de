//! The timed run's recorder: the IOPS / MB/s / WAF series (in segments for the PTS
//! combinations), per-round counts and latency histograms, the round and phase results.

use super::hist::{Histogram, LatencySummary};
use super::mapcache;
use crate::config::timing::bounds::MAX_SERIES_POINTS;
use crate::error::{Error, Result};
use serde::Serialize;

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
pub(super) struct Segment {
    pub(super) first: usize,
    pub(super) t0: u64,
    pub(super) end: Option<u64>,
    pub(super) tag: Option<(String, String)>,
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
    pub(super) interval_ns: u64,
    /// The most points the series may hold ([`MAX_SERIES_POINTS`], or fewer when the memory
    /// limit leaves less room: [`Recorder::set_max_points`]).
    max_points: u64,
    /// What sets `max_points`, for the error.
    max_points_why: String,
    pub series: Vec<SeriesAcc>,
    /// The current segment's first point and start time (0, 0 unless segments are used).
    pub(super) seg_first: usize,
    pub(super) seg_t0: u64,
    pub(super) segments: Vec<Segment>,
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
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) bytes: u64,
    pub(super) write_bytes: u64,
    pub(super) host_pages: u64,
    pub(super) nand_pages: u64,
    pub(super) urgent: bool,
}

impl Recorder {
    pub(super) fn new(interval_ns: u64) -> Self {
        Recorder {
            interval_ns,
            max_points: MAX_SERIES_POINTS,
            max_points_why: String::new(),
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

    /// Keep at most `n` series points (at least 1024), `why` saying what sets that (the
    /// memory limit), for the error when a run passes it.
    pub fn set_max_points(&mut self, n: u64, why: String) {
        self.max_points = n.clamp(1024, MAX_SERIES_POINTS);
        self.max_points_why = why;
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn complete(
        &mut self,
        t: u64,
        lat: u64,
        write: bool,
        bytes: u64,
        host_pages: u64,
        nand_pages: u64,
        urgent: bool,
    ) -> Result<()> {
        let i = self.seg_first + ((t - self.seg_t0) / self.interval_ns) as usize;
        if self.series.len() <= i {
            self.grow(i)?;
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
        Ok(())
    }

    /// Extend the series to hold point `i`: at most [`MAX_SERIES_POINTS`] points (the
    /// simulated time over `series_interval_s`), allocated fallibly, so that a run whose
    /// simulated time runs away is an error naming the key, never an abort.
    #[cold]
    fn grow(&mut self, i: usize) -> Result<()> {
        let interval_s = self.interval_ns as f64 / 1e9;
        if i as u64 >= self.max_points {
            return Err(Error::capacity(
                "timing.series_interval_s",
                format!(
                    "the run reached {:.3} s of simulated time: more than {} series points of {interval_s} s{}; \
                     raise timing.series_interval_s or set timing.max_time_s",
                    (i as f64 + 1.0) * interval_s,
                    self.max_points,
                    self.max_points_why
                ),
            ));
        }
        let more = i + 1 - self.series.len();
        self.series.try_reserve(more).map_err(|_| series_oom(i + 1))?;
        self.series.resize(i + 1, SeriesAcc::default());
        Ok(())
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

    pub fn points(&self) -> Result<Vec<SeriesPoint>> {
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
        let mut out = Vec::new();
        out.try_reserve_exact(self.series.len()).map_err(|_| series_oom(self.series.len()))?;
        if self.segments.is_empty() {
            out.extend(self.series.iter().enumerate().map(|(i, s)| point(s, (i + 1) as f64 * dt, None)));
            return Ok(out);
        }
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
        Ok(out)
    }
}

/// Out of memory for an IOPS series of `n` points: an error naming the key that sets them.
fn series_oom(n: usize) -> Error {
    Error::capacity(
        "timing.series_interval_s",
        format!("out of memory: cannot allocate the IOPS series of {n} points; raise timing.series_interval_s"),
    )
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
