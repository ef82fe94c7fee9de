//! Synthetic workload generators.
//!
//! A generator yields commands in *units*: whole pages when every request and offset is
//! page-aligned (the fast path), else 512-byte sectors.  Offsets are relative to LBA 0 and
//! stay inside the workload's span.

use crate::error::{Error, Result};
pub use crate::op::{Op, OpKind};
use crate::rng::Rng;

mod build;
pub mod fio;
pub mod synth;
pub mod tenants;
mod trace_feed;
mod zone_set;
pub mod zoned;

pub(crate) use build::cumulative_weights;
pub use build::{build, JESD219_SIZES, JESD219_ZONES};
pub use trace_feed::TraceFeed;

/// Uniform random over `slots` aligned positions.
#[derive(Clone, Debug)]
pub struct Uniform {
    pub base: u64,
    pub slots: u64,
    pub align: u64,
}

/// Sequential with wrap-around inside the span; `k` streams each walk their own slice
/// of the span, round-robin, advancing by `stride` units per request.
#[derive(Clone, Debug)]
pub struct Sequential {
    pub base: u64,
    pub span: u64,
    stride: u64,
    region: u64,
    cursors: Vec<u64>,
    next: usize,
}

/// One LBA zone of a zoned workload (hot/cold, JESD219).
#[derive(Clone, Debug)]
pub struct Zone {
    pub base: u64,
    pub units: u64,
    /// Aligned start positions for the fixed request length.
    slots: u64,
    pub stream: u32,
}

/// Accesses split between zones with fixed probabilities (`cum`: cumulative, scaled to 2^64).
#[derive(Clone, Debug)]
pub struct Zoned {
    pub zones: Vec<Zone>,
    cum: Vec<u64>,
    align: u64,
}

/// Request sizes drawn from a table (JESD219): (cumulative probability, length, alignment).
#[derive(Clone, Debug)]
pub struct SizeMix {
    cum: Vec<u64>,
    len: Vec<u32>,
    align: Vec<u32>,
}

impl SizeMix {
    #[inline]
    fn sample(&self, rng: &mut Rng) -> (u32, u32) {
        let r = rng.next_u64();
        let i = self.cum.iter().position(|&c| r < c).unwrap_or(self.cum.len() - 1);
        (self.len[i], self.align[i])
    }
}

/// SK hynix's mobile aging pattern: repeat (sequential `seq_chunk`, random `rand_chunk`);
/// the sequential writes advance through the user area (wrapping at its end), the random
/// writes land in the part written so far.
#[derive(Clone, Debug)]
pub struct SkHynix {
    span: u64,
    seq_len: u32,
    rand_len: u32,
    seq_chunk: u64,
    rand_chunk: u64,
    cursor: u64,
    filled: u64,
    left: u64,
    in_seq: bool,
}

/// Zipf over the slots (rank 1 = slot 0 is the hottest), by rejection-inversion
/// (Hörmann and Derflinger 1996), O(1) per sample, no table.
#[derive(Clone, Debug)]
pub struct Zipf {
    pub base: u64,
    pub align: u64,
    n: f64,
    nmax: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    sq: f64,
}

/// `ln(1 + x) / x`, exact near 0 (a Taylor series there): Zipf's inverse integral.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::log1p(x) / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}
/// `(e^x - 1) / x`, exact near 0 (a Taylor series there): Zipf's integral.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::expm1(x) / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub fn new(base: u64, slots: u64, align: u64, s: f64) -> Self {
        let mut z = Zipf { base, align, n: slots as f64, nmax: slots, s, h_x1: 0.0, h_n: 0.0, sq: 0.0 };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(slots as f64 + 0.5);
        z.sq = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.s * libm::log(x))
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = libm::log(x);
        expm1_over_x((1.0 - self.s) * lx) * lx
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        libm::exp(log1p_over_x(t) * x)
    }
    /// A rank in 1..=n.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let mut k = (x + 0.5) as u64;
            if k < 1 {
                k = 1;
            } else if k > self.nmax {
                k = self.nmax;
            }
            if (k as f64) - x <= self.sq || u >= self.h_integral(k as f64 + 0.5) - self.h(k as f64) {
                return k;
            }
        }
    }
    pub fn slots(&self) -> f64 {
        self.n
    }
}

/// The address pattern.  The generator matches on it for every command, so its tag must
/// stay a plain word: a variant larger than the hot ones (Uniform .. SkHynix, at most 64
/// bytes) is boxed, or the compiler hides the tag in a niche of that variant's fields (a
/// `Vec`'s capacity) and every command pays a few instructions to decode it (issue 37:
/// `ZoneWriter` inline cost the functional loop ~4 instructions a command).
#[derive(Debug)]
pub enum Pattern {
    Uniform(Uniform),
    Sequential(Sequential),
    Zoned(Zoned),
    Zipf(Zipf),
    SkHynix(SkHynix),
    Trace(Box<TraceFeed>),
    /// Namespaces' workloads interleaved (`[[namespace]]`).
    Tenants(Box<tenants::Tenants>),
    /// `type = "zoned"`: open zones written sequentially, reset before each rewrite.
    ZoneWriter(Box<zoned::ZoneWriter>),
    /// `type = "fio"`: a fio job file's job.
    Fio(Box<fio::FioGen>),
}

/// A configured workload: an address pattern, request lengths and a read/trim mix.
#[derive(Debug)]
pub struct Workload {
    pub pattern: Pattern,
    pub len: u32,
    /// P(read) scaled to 2^64 (0 = no reads).
    read_threshold: u64,
    /// P(read) + P(trim) scaled to 2^64.
    trim_threshold: u64,
    /// JESD219 transfer sizes (sector units); None: every request is `len` units.
    sizes: Option<SizeMix>,
    /// True when units are pages, false when sectors.
    pub pages: bool,
    /// Commands generated ahead of time, so the simulator can prefetch their mapping
    /// entries.  The command stream is the same with or without it.
    ring: [Op; AHEAD],
    ring_len: usize,
    ring_pos: usize,
    /// A finite stream (trace) has ended.
    pub exhausted: bool,
    /// An error met while generating (trace read errors); the run stops at the end marker
    /// that follows it and reports it.
    pub error: Option<Error>,
}

pub const AHEAD: usize = 32;
const NO_OP: Op = Op { kind: OpKind::Write, start: 0, len: 0, stream: 0, t_ns: 0 };

impl Workload {
    /// The pages a uniform random workload rewrites, each equally likely, when every request
    /// writes within one page: requests of one whole page, or an aligned part of a page (a
    /// 4 KiB write to a 16 KiB mapping unit, which the FTL rewrites whole) over whole pages.
    /// Either way a request invalidates one uniformly chosen page and programs one: the
    /// mean-field model's load (analytic preconditioning, [`crate::meanfield`]).  None for any
    /// other workload (nor for whole pages aligned to more than a page: they skip pages).
    /// `sectors_per_page` converts a workload in sectors.
    pub fn uniform_page_span(&self, sectors_per_page: u64) -> Option<u64> {
        let Pattern::Uniform(u) = &self.pattern else { return None };
        if self.sizes.is_some() || u.base != 0 {
            return None;
        }
        let per_page = if self.pages { 1 } else { sectors_per_page };
        let (len, align) = (self.len as u64, u.align);
        let inside = len <= align && per_page % align == 0;
        (inside && (u.slots * align) % per_page == 0).then(|| u.slots * align / per_page)
    }

    /// The next command, and the command `AHEAD` places later (to prefetch for).
    #[inline(always)]
    pub fn next_ahead(&mut self, rng: &mut Rng) -> (Op, Op) {
        if self.ring_len < AHEAD {
            while self.ring_len < AHEAD {
                let op = self.generate(rng);
                self.ring[(self.ring_pos + self.ring_len) % AHEAD] = op;
                self.ring_len += 1;
            }
        }
        let op = self.ring[self.ring_pos];
        let fresh = self.generate(rng);
        self.ring[self.ring_pos] = fresh;
        self.ring_pos = (self.ring_pos + 1) % AHEAD;
        if op.len == 0 {
            self.exhausted = true;
        }
        (op, fresh)
    }

    /// The command `k` places ahead of the next one (k < AHEAD), once the ring is full.
    #[inline(always)]
    pub fn peek(&self, k: usize) -> Option<&Op> {
        if self.ring_len == AHEAD && k < AHEAD {
            Some(&self.ring[(self.ring_pos + k) % AHEAD])
        } else {
            None
        }
    }

    /// The next command (consumes any commands generated ahead first).
    #[inline(always)]
    pub fn next(&mut self, rng: &mut Rng) -> Op {
        let op = if self.ring_len > 0 {
            let op = self.ring[self.ring_pos];
            self.ring_pos = (self.ring_pos + 1) % AHEAD;
            self.ring_len -= 1;
            op
        } else {
            self.generate(rng)
        };
        if op.len == 0 {
            self.exhausted = true;
        }
        op
    }

    /// True when the stream can end (so loops must check for the end marker).
    pub fn finite(&self) -> bool {
        match &self.pattern {
            Pattern::Trace(_) => true,
            Pattern::Tenants(t) => t.finite(),
            _ => false,
        }
    }

    /// A workload of a pattern that makes its own commands (kinds and lengths).
    pub(crate) fn of_pattern(pattern: Pattern, pages: bool) -> Workload {
        Workload {
            pattern,
            len: 1,
            read_threshold: 0,
            trim_threshold: 0,
            sizes: None,
            pages,
            ring: [NO_OP; AHEAD],
            ring_len: 0,
            ring_pos: 0,
            exhausted: false,
            error: None,
        }
    }

    /// Mean request length in units, when the pattern has a fixed one or a size table
    /// (None: traces, sk-hynix, tenants).
    pub fn mean_request_units(&self) -> Option<f64> {
        match (&self.pattern, &self.sizes) {
            (Pattern::Trace(_) | Pattern::SkHynix(_) | Pattern::Tenants(_), _) => None,
            (Pattern::Fio(f), _) => Some(f.mean_units()),
            (_, Some(m)) => {
                let mut prev = 0u64;
                let mut mean = 0.0;
                for (&c, &l) in m.cum.iter().zip(&m.len) {
                    mean += (c - prev) as f64 / 18446744073709551616.0 * l as f64;
                    prev = c;
                }
                Some(mean)
            }
            (_, None) => Some(self.len as f64),
        }
    }

    /// Let `interrupt` stop what a generator does at length before a command: the zoned
    /// writer opening millions of zones (the stream then ends, with an `Interrupted` error
    /// kept for [`Workload::finish`]).  A trace's reader has its own (its config's).
    pub fn with_interrupt(mut self, interrupt: &crate::interrupt::Interrupt) -> Self {
        if let Pattern::ZoneWriter(z) = &mut self.pattern {
            z.set_interrupt(interrupt.clone());
        }
        self
    }

    /// The same addresses, every command a write (a preconditioning fill: the configured
    /// read and trim mix is the measured workload's, not the fill's).
    pub fn writes_only(mut self) -> Self {
        self.read_threshold = 0;
        self.trim_threshold = 0;
        self
    }

    /// The end of the stream, or the error that ended it.
    pub fn finish(&mut self) -> Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    #[inline(always)]
    fn generate(&mut self, rng: &mut Rng) -> Op {
        let mut kind = if self.trim_threshold != 0 {
            let r = rng.next_u64();
            if r < self.read_threshold {
                OpKind::Read
            } else if r < self.trim_threshold {
                OpKind::Trim
            } else {
                OpKind::Write
            }
        } else {
            OpKind::Write
        };
        let mut len = self.len;
        let mut t_ns = 0;
        let (start, stream) = match &mut self.pattern {
            Pattern::Uniform(u) => (u.base + rng.below(u.slots) * u.align, 0),
            Pattern::Sequential(s) => {
                let i = s.next;
                let c = &mut s.cursors[i];
                let st = s.base + i as u64 * s.region + *c;
                *c += s.stride;
                if *c + len as u64 > s.region {
                    *c = 0;
                }
                s.next = if i + 1 == s.cursors.len() { 0 } else { i + 1 };
                (st, 0)
            }
            Pattern::Zoned(z) => {
                let r = rng.next_u64();
                let i = z.cum.iter().position(|&c| r < c).unwrap_or(z.cum.len() - 1);
                let zone = &z.zones[i];
                match &self.sizes {
                    None => (zone.base + rng.below(zone.slots) * z.align, zone.stream),
                    Some(m) => {
                        let (l, a) = m.sample(rng);
                        len = l;
                        let slots = (zone.units - l as u64) / a as u64 + 1;
                        (zone.base + rng.below(slots) * a as u64, zone.stream)
                    }
                }
            }
            Pattern::Zipf(z) => (z.base + (z.sample(rng) - 1) * z.align, 0),
            Pattern::SkHynix(h) => {
                if h.in_seq {
                    let st = h.cursor;
                    len = (h.seq_len as u64).min(h.span - h.cursor) as u32;
                    h.cursor += len as u64;
                    h.filled = h.filled.max(h.cursor);
                    if h.cursor >= h.span {
                        h.cursor = 0;
                    }
                    h.left = h.left.saturating_sub(len as u64);
                    if h.left == 0 {
                        h.in_seq = false;
                        h.left = h.rand_chunk;
                    }
                    (st, 0)
                } else {
                    len = h.rand_len;
                    let region = h.filled.max(len as u64);
                    let slots = (region - len as u64) / len as u64 + 1;
                    h.left = h.left.saturating_sub(len as u64);
                    if h.left == 0 {
                        h.in_seq = true;
                        h.left = h.seq_chunk;
                    }
                    (rng.below(slots) * len as u64, 0)
                }
            }
            // Patterns that make their own commands, out of line; their command comes back
            // field by field, so that every arm's command is built in registers (a
            // `return` of the callee's `Op` put every command through a stack copy).
            Pattern::ZoneWriter(z) => match zone_op(z, rng) {
                Ok(op) => {
                    (kind, len, t_ns) = (op.kind, op.len, op.t_ns);
                    (op.start, op.stream)
                }
                Err(e) => {
                    // interrupted while opening the first zones: the end marker follows
                    self.error.get_or_insert(e);
                    return NO_OP;
                }
            },
            Pattern::Fio(f) => {
                let op = fio_op(f, rng);
                (kind, len, t_ns) = (op.kind, op.len, op.t_ns);
                (op.start, op.stream)
            }
            Pattern::Tenants(t) => {
                return match t.next_op(rng) {
                    Ok(Some(op)) => op,
                    Ok(None) => NO_OP,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        NO_OP
                    }
                };
            }
            Pattern::Trace(t) => {
                // the end marker (len 0) sets `exhausted` when it is consumed
                return match t.next_op() {
                    Ok(Some(op)) => op,
                    Ok(None) => NO_OP,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        NO_OP
                    }
                };
            }
        };
        Op { kind, start, len, stream, t_ns }
    }
}

/// The zoned writer's next command, kept out of the generator's loop (issue 37).
#[inline(never)]
fn zone_op(z: &mut zoned::ZoneWriter, rng: &mut Rng) -> Result<Op> {
    z.next_op(rng)
}

/// A fio job's next command, kept out of the generator's loop (issue 37).
#[inline(never)]
fn fio_op(f: &mut fio::FioGen, rng: &mut Rng) -> Op {
    f.next_op(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{WorkloadConfig, WorkloadType};

    /// The generator's match reads a plain tag word: no variant is larger than the hot ones
    /// (issue 37), so the enum is the largest of them plus its tag.
    #[test]
    fn pattern_keeps_a_plain_tag() {
        use std::mem::size_of;
        let hot = [
            size_of::<Uniform>(),
            size_of::<Sequential>(),
            size_of::<Zoned>(),
            size_of::<Zipf>(),
            size_of::<SkHynix>(),
        ];
        assert_eq!(size_of::<Pattern>(), hot.iter().max().unwrap() + 8);
    }

    #[test]
    fn zipf_matches_pmf() {
        let n = 100u64;
        let s = 1.1;
        let z = Zipf::new(0, n, 1, s);
        let mut rng = Rng::new(5);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[(k - 1) as usize] += 1;
        }
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
        for k in [1usize, 2, 5, 10, 50] {
            let p = (k as f64).powf(-s) / norm;
            let got = counts[k - 1] as f64 / draws as f64;
            let sd = (p * (1.0 - p) / draws as f64).sqrt();
            assert!((got - p).abs() < 5.0 * sd, "rank {k}: {got} vs {p}");
        }
    }

    /// Counts within `k` binomial standard deviations of `p * n`.
    fn within(count: u64, n: u64, p: f64, k: f64) -> bool {
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        (count as f64 - n as f64 * p).abs() <= k * sd.max(1.0)
    }

    #[test]
    fn jesd219_sizes_and_zones_match_the_definition() {
        let w = WorkloadConfig { kind: WorkloadType::Jesd219, ..Default::default() };
        let sectors = 1u64 << 24; // 8 GiB
        let mut wl = build(&w, WorkloadType::Jesd219, sectors, 512, 4096, 1, None).unwrap();
        assert!(!wl.pages);
        let mut rng = Rng::new(11);
        let n = 1_000_000u64;
        let mut sizes = std::collections::BTreeMap::new();
        let mut zones = [0u64; 3];
        let bounds = [(sectors as f64 * 0.05) as u64, (sectors as f64 * 0.20) as u64, sectors];
        for _ in 0..n {
            let op = wl.next(&mut rng);
            *sizes.entry(op.len as u64 * 512).or_insert(0u64) += 1;
            assert!(op.start + op.len as u64 <= sectors);
            if op.len >= 8 {
                assert_eq!(op.start % 8, 0, "transfers of 4 KiB and up are 4 KiB-aligned");
            }
            zones[bounds.iter().position(|&b| op.start < b).unwrap()] += 1;
        }
        let total: f64 = JESD219_SIZES.iter().map(|s| s.1).sum();
        assert!((total - 100.0).abs() < 1e-9);
        for (bytes, pct) in JESD219_SIZES {
            let c = sizes.get(&bytes).copied().unwrap_or(0);
            assert!(within(c, n, pct / 100.0, 5.0), "{bytes} B: {c} of {n}, expected {pct}%");
        }
        assert_eq!(sizes.len(), JESD219_SIZES.len());
        for (i, (_, p)) in JESD219_ZONES.iter().enumerate() {
            assert!(within(zones[i], n, *p, 5.0), "zone {i}: {} of {n}, expected {p}", zones[i]);
        }
    }

    #[test]
    fn jesd219_with_a_request_size_keeps_only_the_zones() {
        let w = WorkloadConfig {
            kind: WorkloadType::Jesd219,
            request_size: Some(crate::units::ByteSize(4096)),
            ..Default::default()
        };
        let wl = build(&w, WorkloadType::Jesd219, 1 << 20, 512, 4096, 1, None).unwrap();
        assert!(wl.pages && wl.len == 1);
    }

    #[test]
    fn sk_hynix_alternates_sequential_and_random_over_the_filled_area() {
        let mb = |m: u64| Some(crate::units::ByteSize(m << 20));
        let w = WorkloadConfig {
            kind: WorkloadType::SkHynix,
            sequential_chunk: mb(8),
            random_chunk: mb(2),
            sequential_request_size: Some(crate::units::ByteSize(128 << 10)),
            ..Default::default()
        };
        let pages = 64u64 << 20 >> 12; // 64 MiB drive
        let mut wl = build(&w, WorkloadType::SkHynix, pages * 8, 512, 4096, 1, None).unwrap();
        let mut rng = Rng::new(3);
        let mut cursor = 0;
        for cycle in 0..10u64 {
            // 8 MiB sequential in 128 KiB requests, continuing where the last cycle stopped
            for _ in 0..64 {
                let op = wl.next(&mut rng);
                assert_eq!((op.start, op.len), (cursor, 32), "cycle {cycle}");
                cursor = (cursor + 32) % pages;
            }
            let filled = ((cycle + 1) * 2048).min(pages);
            // 2 MiB random 4 KiB writes inside the part written so far
            for _ in 0..512 {
                let op = wl.next(&mut rng);
                assert_eq!(op.len, 1);
                assert!(op.start < filled, "cycle {cycle}: {} >= {filled}", op.start);
            }
        }
    }

    #[test]
    fn sequential_streams_and_stride() {
        let w = WorkloadConfig {
            kind: WorkloadType::Sequential,
            sequential_streams: Some(2),
            stride: Some(crate::units::ByteSize(8192)),
            ..Default::default()
        };
        let mut wl = build(&w, WorkloadType::Sequential, 1024 * 8, 512, 4096, 1, None).unwrap();
        let mut rng = Rng::new(1);
        let starts: Vec<u64> = (0..6).map(|_| wl.next(&mut rng).start).collect();
        assert_eq!(starts, vec![0, 512, 2, 514, 4, 516]);
    }

    #[test]
    fn trim_and_read_mix() {
        let w = WorkloadConfig {
            read_fraction: crate::units::Fraction(0.3),
            trim_fraction: crate::units::Fraction(0.1),
            ..Default::default()
        };
        let mut wl = build(&w, WorkloadType::Uniform, 1 << 20, 512, 4096, 1, None).unwrap();
        let mut rng = Rng::new(9);
        let n = 200_000;
        let (mut r, mut t) = (0, 0);
        for _ in 0..n {
            match wl.next(&mut rng).kind {
                OpKind::Read => r += 1,
                OpKind::Trim => t += 1,
                OpKind::Write => {}
            }
        }
        assert!(within(r, n, 0.3, 5.0) && within(t, n, 0.1, 5.0), "{r} {t}");
        let bad = WorkloadConfig {
            read_fraction: crate::units::Fraction(0.6),
            trim_fraction: crate::units::Fraction(0.4),
            ..Default::default()
        };
        let e = build(&bad, WorkloadType::Uniform, 1 << 20, 512, 4096, 1, None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.trim_fraction"));
    }

    #[test]
    fn uniform_stays_in_span() {
        let w = WorkloadConfig { span: crate::units::Fraction(0.5), ..Default::default() };
        let mut wl = build(&w, WorkloadType::Uniform, 1 << 20, 512, 4096, 1, None).unwrap();
        let mut rng = Rng::new(1);
        let span_pages = (1u64 << 20) * 512 / 4096 / 2;
        for _ in 0..100_000 {
            let op = wl.next(&mut rng);
            assert!(op.start < span_pages);
        }
    }
}
