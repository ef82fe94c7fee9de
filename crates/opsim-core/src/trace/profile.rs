//! The write profile of a trace, in one streaming pass: per 4 KiB block written, its write
//! count and the index of its last write ([`super::blocks`]), from which come the
//! write-frequency curve, the footprints, the overwrite ratio and the update distances; per
//! request, the read/write/trim split, the size mix and the sequential share.  Memory is the
//! per-block state (8 bytes per block of the chunks the trace writes) under a cap; Ctrl-C
//! (the trace config's interrupt) ends the pass with what was counted, marked `partial`.
//!
//! Units: a *write* here is a 4 KiB block written (a 64 KiB request is 16 writes), so shares
//! of writes are shares of the bytes written at 4 KiB granularity.

use super::blocks::{Budget, Touched, WriteState, WriteTally, CHUNK_BLOCKS, MAX_BLOCK_WRITES};
use super::{empty_error, trace_err, KindStats, Reader, Record, TraceConfig, TraceSource};
use crate::error::{ErrorKind, Result};
use crate::op::OpKind;
use serde::Serialize;
use std::time::Instant;

/// The default cap of the per-block state: 2 GiB covers 1 TiB of offsets written densely
/// (8 bytes per 4 KiB block of each 1 GiB chunk of offsets a write falls in).
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;
/// Points of the sampled write-frequency curve (besides its exact points at [`CURVE_AT`]).
pub const CURVE_POINTS: usize = 1000;
/// The shares of the written blocks (hottest first) at which the curve is given exactly.
pub const CURVE_AT: [f64; 5] = [0.01, 0.05, 0.10, 0.20, 0.50];
/// Requests parsed ahead of their processing (their block state prefetched).
const BATCH: usize = 32;
/// Streams told apart for the sequential share (handles above share the last one).
const STREAMS: usize = 65;

/// Options of a profile pass.
#[derive(Clone, Debug)]
pub struct ProfileOptions {
    /// Cap of the per-block state, bytes.
    pub max_memory: u64,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions { max_memory: DEFAULT_MAX_MEMORY }
    }
}

/// Progress of a pass, reported about once a second.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub records: u64,
    pub lines: u64,
    pub elapsed_s: f64,
}

/// One point of the write-frequency curve: the hottest `blocks` share of the written blocks
/// take `writes` share of the writes.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct CurvePoint {
    pub blocks: f64,
    pub writes: f64,
}

/// Overwrites whose update distance (block writes between two writes of the same block) is
/// in `lo..=hi`; `*_footprints` are the bounds in units of the write footprint (in blocks).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DistanceBucket {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
    pub lo_footprints: f64,
    pub hi_footprints: f64,
}

/// Requests of size in `(previous bucket's upto, upto]` bytes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SizeBucket {
    pub upto: u64,
    pub read: u64,
    pub write: u64,
    pub trim: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceProfile {
    #[serde(flatten)]
    pub source: TraceSource,
    /// Ctrl-C ended the pass: the figures cover the first `records` requests.
    pub partial: bool,
    pub read: KindStats,
    pub write: KindStats,
    pub trim: KindStats,
    /// 4 KiB blocks written, counting every write (a request covers the blocks it touches).
    pub block_writes: u64,
    /// Of those, writes to a block written before.
    pub overwrites: u64,
    /// overwrites / block_writes.
    pub overwrite_ratio: f64,
    /// Distinct 4 KiB blocks touched (any kind) and written, in bytes.
    pub footprint_bytes: u64,
    pub write_footprint_bytes: u64,
    /// Distinct 4 KiB blocks written.
    pub written_blocks: u64,
    /// Lowest byte offset and highest end offset of any request.
    pub min_offset: u64,
    pub max_end: u64,
    /// 4 KiB blocks from offset 0 to max_end (what `remap = "scale"` maps onto the drive).
    pub span_blocks: u64,
    pub duration_s: f64,
    /// Write requests starting where the previous write request of the same stream ended.
    pub sequential_writes: u64,
    /// sequential_writes / write requests.
    pub sequential_share: f64,
    /// Requests by size, power-of-two buckets from the smallest to the largest used.
    pub size_mix: Vec<SizeBucket>,
    /// Overwrites by log2 bucket of the update distance (empty buckets left out).
    pub update_distance: Vec<DistanceBucket>,
    /// The median update distance in write footprints (log-interpolated in its bucket).
    pub update_distance_median_footprints: Option<f64>,
    /// The write-frequency curve, at most [`CURVE_POINTS`] points from (0, 0) to (1, 1).
    pub curve: Vec<CurvePoint>,
    /// The curve at [`CURVE_AT`], exactly.
    pub curve_at: Vec<CurvePoint>,
    /// (writes, blocks): how many written blocks were written that many times, by count.
    pub write_counts: Vec<(u64, u64)>,
    /// Bytes of per-block state at the end of the pass.
    pub memory_bytes: u64,
    pub skipped_bad_lines: u64,
    pub first_bad_line: Option<(u64, String)>,
}

/// Profile the whole trace at `cfg` (streaming).
pub fn profile(cfg: &TraceConfig, opts: &ProfileOptions) -> Result<TraceProfile> {
    profile_with(Reader::open(cfg)?, opts, &mut |_| {})
}

/// Profile the requests of `r`, calling `progress` about once a second.
pub fn profile_with(mut r: Reader, opts: &ProfileOptions, progress: &mut dyn FnMut(Progress)) -> Result<TraceProfile> {
    let mut pass = Pass::new(opts);
    // Requests are taken BATCH at a time, each write's block state prefetched as it is
    // parsed, so the random accesses of a large footprint overlap the parsing.
    let mut batch: Vec<(Record, u64)> = Vec::with_capacity(BATCH);
    let path = r.path().to_owned();
    let start = Instant::now();
    let (mut reported, mut next_report) = (0u64, 1.0);
    while !(pass.ended || pass.partial) {
        pass.fill_batch(&mut r, &mut batch)?;
        for (x, line) in &batch {
            pass.count(x, *line, &path)?;
        }
        if r.records & !(BATCH as u64 * 1024 - 1) != reported {
            reported = r.records & !(BATCH as u64 * 1024 - 1);
            let elapsed_s = start.elapsed().as_secs_f64();
            if elapsed_s >= next_report {
                next_report = elapsed_s + 1.0;
                progress(Progress { records: r.records, lines: r.line, elapsed_s });
            }
        }
    }
    pass.profile(&r)
}

/// What one pass counts: the per-block state and the per-request figures.
struct Pass {
    budget: Budget,
    state: WriteState,
    touched: Touched,
    tally: WriteTally,
    /// Requests and bytes by kind (read, write, trim).
    kinds: [KindStats; 3],
    /// Requests by kind in power-of-two size buckets.
    sizes: [[u64; 3]; 65],
    /// Where each stream's last write ended.
    stream_end: [u64; STREAMS],
    /// Lowest offset, highest end, latest time.
    lo: u64,
    hi: u64,
    last_t: u64,
    /// Block writes so far.
    index: u64,
    /// Sequential write requests.
    seq: u64,
    /// Ctrl-C ended the pass; the trace ended.
    partial: bool,
    ended: bool,
}

impl Pass {
    fn new(opts: &ProfileOptions) -> Pass {
        let kind = || KindStats { ios: 0, bytes: 0 };
        Pass {
            budget: Budget { cap: opts.max_memory, used: 0, peak: 0 },
            state: WriteState::default(),
            touched: Touched::default(),
            tally: WriteTally::default(),
            kinds: [kind(), kind(), kind()],
            sizes: [[0u64; 3]; 65],
            stream_end: [u64::MAX; STREAMS],
            lo: u64::MAX,
            hi: 0,
            last_t: 0,
            index: 0,
            seq: 0,
            partial: false,
            ended: false,
        }
    }

    /// The next requests of `r` (up to [`BATCH`], with their lines) into `batch`, the block
    /// state of each prefetched; the end of the trace or Ctrl-C ends the pass.
    fn fill_batch(&mut self, r: &mut Reader, batch: &mut Vec<(Record, u64)>) -> Result<()> {
        batch.clear();
        while batch.len() < BATCH {
            match r.next_record() {
                Ok(Some(x)) => {
                    if x.kind == OpKind::Write {
                        self.state.prefetch(x.offset / 4096);
                    } else {
                        self.touched.prefetch(x.offset / 4096);
                    }
                    batch.push((x, r.line));
                }
                Ok(None) => {
                    self.ended = true;
                    break;
                }
                Err(e) if e.kind == ErrorKind::Interrupted => {
                    self.partial = true;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Count request `x` (at `line` of `path`, for errors).
    fn count(&mut self, x: &Record, line: u64, path: &str) -> Result<()> {
        let k = match x.kind {
            OpKind::Read => 0,
            OpKind::Write => 1,
            OpKind::Trim => 2,
        };
        self.kinds[k].ios += 1;
        self.kinds[k].bytes = self.kinds[k].bytes.saturating_add(x.len);
        // ceil(log2(len)): bucket b holds (2^(b-1), 2^b]
        self.sizes[64 - (x.len - 1).leading_zeros() as usize][k] += 1;
        let end = x.offset + x.len;
        self.lo = self.lo.min(x.offset);
        self.hi = self.hi.max(end);
        self.last_t = self.last_t.max(x.t_ns);
        let (a, b) = (x.offset / 4096, (end - 1) / 4096);
        let at = || format!("{path}:{line}");
        if x.kind == OpKind::Write {
            let s = &mut self.stream_end[(x.stream as usize).min(STREAMS - 1)];
            self.seq += (*s == x.offset) as u64;
            *s = end;
            if self.index + (b - a + 1) > MAX_BLOCK_WRITES {
                return Err(trace_err(path, line, "writes more than 2^40 blocks of 4 KiB: profile part of it"));
            }
            self.state.write(a, b, &mut self.index, &mut self.tally, &mut self.budget, &at)
        } else {
            self.touched.set_range(a, b, &mut self.budget, &at)
        }
    }

    /// The profile from what the pass counted over the requests of `r`.
    fn profile(self, r: &Reader) -> Result<TraceProfile> {
        if r.records == 0 {
            return Err(if self.partial { crate::error::Error::interrupted() } else { empty_error(r) });
        }
        let [rd, wr, tr] = self.kinds;
        if wr.ios == 0 {
            if self.partial {
                return Err(crate::error::Error::interrupted());
            }
            return Err(trace_err(
                r.path(),
                0,
                format!(
                    "holds no writes in its {} lines ({} reads, {} trims): a write profile needs writes",
                    r.line, rd.ios, tr.ios
                ),
            ));
        }
        let (hist, footprint) = histogram(&self.state, &self.touched);
        let written: u64 = hist.iter().map(|h| h.1).sum();
        let (curve, curve_at) = curve(&hist);
        let (index, seq, hi) = (self.index, self.seq, self.hi);
        Ok(TraceProfile {
            source: r.source(),
            partial: self.partial,
            block_writes: index,
            overwrites: self.tally.overwrites,
            overwrite_ratio: self.tally.overwrites as f64 / index as f64,
            footprint_bytes: footprint * 4096,
            write_footprint_bytes: written * 4096,
            written_blocks: written,
            min_offset: self.lo,
            max_end: hi,
            span_blocks: hi.div_ceil(4096),
            duration_s: self.last_t as f64 / 1e9,
            sequential_writes: seq,
            sequential_share: seq as f64 / wr.ios as f64,
            read: rd,
            write: wr,
            trim: tr,
            size_mix: size_mix(&self.sizes),
            update_distance: update_distance(&self.tally.distance, written),
            update_distance_median_footprints: median_bucket(&self.tally.distance).map(|d| d / written as f64),
            curve,
            curve_at,
            write_counts: hist,
            memory_bytes: self.budget.peak,
            skipped_bad_lines: r.skipped_bad,
            first_bad_line: r.first_bad.clone(),
        })
    }
}

/// Overwrites by log2 bucket of the update distance (`distance[i]`: distances in
/// `2^i..2^(i+1)`), empty buckets left out, with the bounds in `written` blocks.
fn update_distance(distance: &[u64; 64], written: u64) -> Vec<DistanceBucket> {
    (0..64)
        .filter(|&i| distance[i] > 0)
        .map(|i| {
            let (lo, hi) = (1u64 << i, if i == 63 { u64::MAX } else { (1u64 << (i + 1)) - 1 });
            DistanceBucket {
                lo,
                hi,
                count: distance[i],
                lo_footprints: lo as f64 / written as f64,
                hi_footprints: hi as f64 / written as f64,
            }
        })
        .collect()
}

/// Requests by size bucket (`sizes[b]`: read, write, trim of size in (2^(b-1), 2^b]), from the
/// smallest bucket used to the largest.
fn size_mix(sizes: &[[u64; 3]; 65]) -> Vec<SizeBucket> {
    let used: Vec<usize> = (0..65).filter(|&b| sizes[b] != [0; 3]).collect();
    match (used.first(), used.last()) {
        (Some(&f), Some(&l)) => (f..=l)
            .map(|b| SizeBucket {
                upto: if b == 64 { u64::MAX } else { 1u64 << b },
                read: sizes[b][0],
                write: sizes[b][1],
                trim: sizes[b][2],
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// (writes, blocks) of the written blocks by write count, ascending, and the blocks touched by
/// anything (written, read or trimmed).
fn histogram(state: &WriteState, touched: &Touched) -> (Vec<(u64, u64)>, u64) {
    let mut small = vec![0u64; 4096];
    let mut large = std::collections::BTreeMap::<u64, u64>::new();
    let mut footprint = 0u64;
    for ch in state.chunks.iter() {
        let bits = touched.bits_of_write_chunk(ch.base);
        for (i, n) in state.counts(ch).enumerate() {
            match n as usize {
                0 => footprint += bits.is_some_and(|w| w[i / 64] >> (i % 64) & 1 == 1) as u64,
                n if n < small.len() => small[n] += 1,
                n => *large.entry(n as u64).or_insert(0) += 1,
            }
        }
    }
    // touched-only blocks outside the write chunks
    let per = (CHUNK_BLOCKS / 64) as usize;
    for (base, words) in touched.chunks.iter() {
        for (k, part) in words.chunks(per).enumerate() {
            if !state.has_chunk(base + (k * per * 64) as u64) {
                footprint += part.iter().map(|w| w.count_ones() as u64).sum::<u64>();
            }
        }
    }
    let hist: Vec<(u64, u64)> =
        small.iter().enumerate().filter(|(_, &b)| b > 0).map(|(n, &b)| (n as u64, b)).chain(large).collect();
    footprint += hist.iter().map(|h| h.1).sum::<u64>();
    (hist, footprint)
}

/// The write-frequency curve of a count histogram: [`CURVE_POINTS`] points (log-spaced below
/// 10% of the blocks, linear above), and the exact points at [`CURVE_AT`].
pub fn curve(hist: &[(u64, u64)]) -> (Vec<CurvePoint>, Vec<CurvePoint>) {
    let blocks: u64 = hist.iter().map(|h| h.1).sum();
    let writes: f64 = hist.iter().map(|h| h.0 as f64 * h.1 as f64).sum();
    // the share of the writes taken by the hottest `x` share of the blocks (linear within a
    // group of blocks of the same count)
    let at = |x: f64| -> f64 {
        let want = x * blocks as f64;
        let (mut b, mut w) = (0.0, 0.0);
        for &(n, m) in hist.iter().rev() {
            let m = m as f64;
            if b + m >= want {
                return ((w + (want - b) * n as f64) / writes).min(1.0);
            }
            b += m;
            w += m * n as f64;
        }
        1.0
    };
    let half = CURVE_POINTS / 2;
    let mut xs: Vec<f64> = (0..half).map(|i| 10f64.powf(-6.0 + 5.0 * i as f64 / half as f64)).collect();
    xs.extend((0..CURVE_POINTS - half).map(|i| 0.1 + 0.9 * (i + 1) as f64 / (CURVE_POINTS - half) as f64));
    let mut pts = vec![CurvePoint { blocks: 0.0, writes: 0.0 }];
    pts.extend(xs.into_iter().map(|x| CurvePoint { blocks: x, writes: at(x) }));
    let exact = CURVE_AT.iter().map(|&x| CurvePoint { blocks: x, writes: at(x) }).collect();
    (pts, exact)
}

/// The median update distance (blocks) from the log2 buckets, geometric within its bucket.
fn median_bucket(buckets: &[u64; 64]) -> Option<f64> {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return None;
    }
    let half = total as f64 / 2.0;
    let mut seen = 0.0;
    for (i, &n) in buckets.iter().enumerate() {
        if n > 0 && seen + n as f64 >= half {
            let frac = (half - seen) / n as f64;
            return Some(2f64.powi(i as i32) * 2f64.powf(frac));
        }
        seen += n as f64;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::TraceConfig;
    use super::*;

    fn prof(body: &str) -> Result<TraceProfile> {
        let cfg = TraceConfig { format: super::super::TraceFormat::FioIolog, ..TraceConfig::new("mem.iolog") };
        profile_with(Reader::from_bytes(&cfg, body.as_bytes().to_vec())?, &ProfileOptions::default(), &mut |_| {})
    }

    fn iolog(reqs: &[(&str, u64, u64)]) -> String {
        let mut s = String::from("fio version 2 iolog\n/dev/x add\n/dev/x open\n");
        for (k, o, l) in reqs {
            s += &format!("/dev/x {k} {o} {l}\n");
        }
        s
    }

    #[test]
    fn counts_overwrites_distances_and_sequential_writes() {
        let k = 4096;
        // write blocks 0,1 ; 2 (sequential) ; 0 again (distance 3) ; read 10 ; trim 20..21
        let p = prof(&iolog(&[
            ("write", 0, 2 * k),
            ("write", 2 * k, k),
            ("write", 0, k),
            ("read", 10 * k, k),
            ("trim", 20 * k, 2 * k),
        ]))
        .unwrap();
        assert_eq!((p.block_writes, p.overwrites, p.written_blocks), (4, 1, 3));
        assert_eq!(p.footprint_bytes, 6 * k);
        assert_eq!(p.sequential_writes, 1);
        assert_eq!(p.update_distance.len(), 1);
        assert_eq!((p.update_distance[0].lo, p.update_distance[0].count), (2, 1));
        assert_eq!(p.write_counts, vec![(1, 2), (2, 1)]);
        assert_eq!((p.write.ios, p.read.ios, p.trim.ios), (3, 1, 1));
        assert_eq!(p.span_blocks, 22);
        // hottest third of the blocks (block 0) takes half the writes
        let q = curve(&p.write_counts).0.into_iter().find(|q| q.blocks > 0.3).unwrap();
        assert!((q.writes - q.blocks * 1.5).abs() < 1e-9, "{q:?}");
        let size4k = p.size_mix.iter().find(|b| b.upto == 4096).unwrap();
        assert_eq!((size4k.write, size4k.read), (2, 1));
        assert_eq!(p.size_mix.iter().find(|b| b.upto == 8192).unwrap().write, 1);
    }

    #[test]
    fn curve_is_exact_for_a_two_class_histogram() {
        // 10 blocks written 9 times, 90 written once: 10% of blocks take 90/180 = 50%
        let (pts, at) = curve(&[(1, 90), (9, 10)]);
        let p10 = at.iter().find(|p| p.blocks == 0.10).unwrap();
        assert!((p10.writes - 0.5).abs() < 1e-12, "{p10:?}");
        let p50 = at.iter().find(|p| p.blocks == 0.50).unwrap();
        assert!((p50.writes - (90.0 + 40.0) / 180.0).abs() < 1e-12, "{p50:?}");
        assert_eq!(pts.len(), CURVE_POINTS + 1);
        assert!(pts.windows(2).all(|w| w[1].blocks > w[0].blocks && w[1].writes >= w[0].writes));
        assert!((pts.last().unwrap().writes - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_writes_and_empty_are_errors_naming_the_file() {
        let e = prof(&iolog(&[("read", 0, 4096)])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Trace);
        assert!(e.message.contains("no writes"), "{e}");
        let e = prof("fio version 2 iolog\n").unwrap_err();
        assert!(e.message.contains("no requests"), "{e}");
    }

    #[test]
    fn the_memory_cap_refuses_with_advice() {
        let cfg = TraceConfig { format: super::super::TraceFormat::FioIolog, ..TraceConfig::new("mem.iolog") };
        let body = iolog(&[("write", 0, 4096), ("write", 1 << 40, 4096)]);
        let r = Reader::from_bytes(&cfg, body.into_bytes()).unwrap();
        let e = profile_with(r, &ProfileOptions { max_memory: 3 << 20 }, &mut |_| {}).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("max_memory"));
        assert!(e.message.contains("mem.iolog:5"), "{e}");
    }
}
