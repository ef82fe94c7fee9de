//! Synthetic workload generators.
//!
//! A generator yields commands in *units*: whole pages when every request and offset is
//! page-aligned (the fast path), else 512-byte sectors.  Offsets are relative to LBA 0 and
//! stay inside the workload's span.

use crate::config::{WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Write,
    Read,
}

#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub kind: OpKind,
    /// First unit (page or sector).
    pub start: u64,
    /// Units transferred.
    pub len: u32,
    pub stream: u32,
}

/// Uniform random over `slots` aligned positions.
#[derive(Clone, Debug)]
pub struct Uniform {
    pub base: u64,
    pub slots: u64,
    pub align: u64,
}

/// Sequential with wrap-around inside the span.
#[derive(Clone, Debug)]
pub struct Sequential {
    pub base: u64,
    pub span: u64,
    pub cursor: u64,
}

/// r% of accesses to the first f% of the span (hot), the rest to the remainder (cold).
#[derive(Clone, Debug)]
pub struct HotCold {
    pub hot: Uniform,
    pub cold: Uniform,
    /// P(hot) scaled to 2^64.
    pub threshold: u64,
    pub hot_stream: u32,
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

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::log1p(x) / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}
fn helper2(x: f64) -> f64 {
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
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        libm::exp(helper1(t) * x)
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

#[derive(Clone, Debug)]
pub enum Pattern {
    Uniform(Uniform),
    Sequential(Sequential),
    HotCold(HotCold),
    Zipf(Zipf),
}

/// A configured workload: an address pattern, a request length and a read mix.
#[derive(Clone, Debug)]
pub struct Workload {
    pub pattern: Pattern,
    pub len: u32,
    /// P(read) scaled to 2^64 (0 = no reads).
    pub read_threshold: u64,
    /// True when units are pages, false when sectors.
    pub pages: bool,
    /// Commands generated ahead of time, so the simulator can prefetch their mapping
    /// entries.  The command stream is the same with or without it.
    ring: [Op; AHEAD],
    ring_len: usize,
    ring_pos: usize,
}

pub const AHEAD: usize = 32;
const NO_OP: Op = Op { kind: OpKind::Write, start: 0, len: 0, stream: 0 };

impl Workload {
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
        if self.ring_len > 0 {
            let op = self.ring[self.ring_pos];
            self.ring_pos = (self.ring_pos + 1) % AHEAD;
            self.ring_len -= 1;
            return op;
        }
        self.generate(rng)
    }

    #[inline(always)]
    fn generate(&mut self, rng: &mut Rng) -> Op {
        let kind = if self.read_threshold != 0 && rng.next_u64() < self.read_threshold { OpKind::Read } else { OpKind::Write };
        let (start, stream) = match &mut self.pattern {
            Pattern::Uniform(u) => (u.base + rng.below(u.slots) * u.align, 0),
            Pattern::Sequential(s) => {
                let st = s.base + s.cursor;
                s.cursor += self.len as u64;
                if s.cursor + self.len as u64 > s.span {
                    s.cursor = 0;
                }
                (st, 0)
            }
            Pattern::HotCold(h) => {
                if rng.next_u64() < h.threshold {
                    (h.hot.base + rng.below(h.hot.slots) * h.hot.align, h.hot_stream)
                } else {
                    (h.cold.base + rng.below(h.cold.slots) * h.cold.align, 0)
                }
            }
            Pattern::Zipf(z) => (z.base + (z.sample(rng) - 1) * z.align, 0),
        };
        Op { kind, start, len: self.len, stream }
    }
}

fn frac(key: &str, v: Option<crate::units::Fraction>, lo_excl: f64, hi_excl: f64) -> Result<f64> {
    let v = v.ok_or_else(|| Error::workload(key, "is required for this workload type"))?.0;
    if !(v > lo_excl && v < hi_excl) {
        return Err(Error::workload(key, format!("{v} is out of range; expected a value in ({lo_excl}, {hi_excl})")));
    }
    Ok(v)
}

fn to_threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else {
        (p * 18446744073709551616.0) as u64
    }
}

/// Build the workload over the first `accessible_sectors` sectors of the drive.
/// `kind_override` replaces the configured type (the PTS stages use it).
pub fn build(
    w: &WorkloadConfig,
    kind: WorkloadType,
    accessible_sectors: u64,
    sector_size: u64,
    page_size: u64,
    streams: u32,
    request_override: Option<u64>,
) -> Result<Workload> {
    let span = w.span.0;
    if !(span > 0.0 && span <= 1.0) {
        return Err(Error::workload("workload.span", format!("{span} is out of range; expected (0, 1]")));
    }
    let rf = w.read_fraction.0;
    if !(0.0..1.0).contains(&rf) {
        return Err(Error::workload("workload.read_fraction", format!("{rf} is out of range; expected [0, 1)")));
    }
    let req = request_override.unwrap_or_else(|| w.request_size.map(|r| r.0).unwrap_or(page_size));
    if req == 0 || req % sector_size != 0 {
        return Err(Error::workload(
            "workload.request_size",
            format!("{req} bytes is not a positive multiple of the {sector_size}-byte sector"),
        ));
    }
    let align = if request_override.is_some() { req.min(page_size) } else { w.align.map(|a| a.0).unwrap_or(req.min(page_size)) };
    if align == 0 || align % sector_size != 0 {
        return Err(Error::workload("workload.align", format!("{align} bytes is not a positive multiple of the sector size")));
    }
    let pages = req % page_size == 0 && align % page_size == 0;
    let unit = if pages { page_size } else { sector_size };
    let span_units = ((accessible_sectors * sector_size) as f64 * span / unit as f64).floor() as u64;
    let len = req / unit;
    let align_u = align / unit;
    if len > span_units {
        return Err(Error::workload("workload.request_size", format!("{req} bytes is larger than the workload span")));
    }
    if len > u32::MAX as u64 {
        return Err(Error::workload("workload.request_size", "is too large"));
    }
    let slots = (span_units - len) / align_u + 1;
    let uniform = |base: u64, units: u64| -> Result<Uniform> {
        if units < len {
            return Err(Error::workload("workload.hot_fraction", "leaves a region smaller than one request"));
        }
        Ok(Uniform { base, slots: (units - len) / align_u + 1, align: align_u })
    };
    // Internal stages (sequential fill, PTS) override the type; only the configured type
    // is checked for keys it does not use.
    let strict = kind == w.kind;
    let unused = |key: &str, present: bool| -> Result<()> {
        if present && strict {
            Err(Error::workload(key, format!("is not used by workload type \"{}\"", kind.name())))
        } else {
            Ok(())
        }
    };
    let pattern = match kind {
        WorkloadType::Uniform | WorkloadType::SniaPts => {
            unused("workload.hot_fraction", w.hot_fraction.is_some())?;
            unused("workload.hot_write_fraction", w.hot_write_fraction.is_some())?;
            unused("workload.zipf_exponent", w.zipf_exponent.is_some())?;
            Pattern::Uniform(Uniform { base: 0, slots, align: align_u })
        }
        WorkloadType::Sequential => {
            unused("workload.zipf_exponent", w.zipf_exponent.is_some())?;
            unused("workload.hot_fraction", w.hot_fraction.is_some())?;
            Pattern::Sequential(Sequential { base: 0, span: span_units, cursor: 0 })
        }
        WorkloadType::HotCold => {
            unused("workload.zipf_exponent", w.zipf_exponent.is_some())?;
            let f = frac("workload.hot_fraction", w.hot_fraction, 0.0, 1.0)?;
            let r = frac("workload.hot_write_fraction", w.hot_write_fraction, 0.0, 1.0)?;
            let hot_units = ((span_units as f64 * f).round() as u64 / align_u) * align_u;
            let hot = uniform(0, hot_units)?;
            let cold = uniform(hot_units, span_units - hot_units)?;
            Pattern::HotCold(HotCold { hot, cold, threshold: to_threshold(r), hot_stream: if streams >= 2 { 1 } else { 0 } })
        }
        WorkloadType::Zipf => {
            unused("workload.hot_fraction", w.hot_fraction.is_some())?;
            let s = w.zipf_exponent.ok_or_else(|| Error::workload("workload.zipf_exponent", "is required for type \"zipf\""))?.0;
            if !(s > 0.0 && s <= 10.0) {
                return Err(Error::workload("workload.zipf_exponent", format!("{s} is out of range; expected (0, 10]")));
            }
            Pattern::Zipf(Zipf::new(0, slots, align_u, s))
        }
    };
    Ok(Workload {
        pattern,
        len: len as u32,
        read_threshold: if rf > 0.0 { to_threshold(rf) } else { 0 },
        pages,
        ring: [NO_OP; AHEAD],
        ring_len: 0,
        ring_pos: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
