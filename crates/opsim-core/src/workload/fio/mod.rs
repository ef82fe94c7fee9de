//! `[workload] type = "fio"`: a fio job file's job run as the workload.
//!
//! The job's region (`offset`, `size`, `filesize`, percentages of the drive) is laid on the
//! simulated drive's user area from LBA 0 (the drive is fio's target device); its block
//! sizes (`bs`, `bssplit`), read/write mix (`rwmixread`) and offsets (sequential, or random
//! by `random_distribution`, with or without fio's random map) are generated the way fio
//! generates them (`random.rs`).  The job runs until the run's drive writes are done, as a
//! time-based fio job (fio's `fio_file_reset` starts a new pass of the random map; a
//! sequential job wraps to the start of its region).  See docs/workloads.md.

pub mod job;
mod options;
pub mod parse;
pub mod random;

use super::{Op, OpKind, Pattern, Workload};
use crate::config::WorkloadConfig;
use crate::error::{Error, Result};
use crate::rng::Rng;
use job::{Distribution, FioJob, Sizes, READ, WRITE};
use parse::{JobFile, SizeValue};
use random::{FioGauss, FioPareto, FioZipf, RandomMap, ZoneTable};

/// Largest random map built (fio's axmap; `norandommap` needs none).
pub const MAX_RANDOM_MAP_BYTES: u64 = 512 << 20;

/// Where random blocks come from.
#[derive(Clone, Debug)]
enum Offsets {
    Sequential { cursor: [u64; 2] },
    Uniform { map: Option<RandomMap> },
    Zipf(FioZipf),
    Pareto(FioPareto),
    Normal(FioGauss),
    Zoned([ZoneTable; 2]),
}

/// Block sizes of a direction in bytes: cumulative percent thresholds (1..=100).
#[derive(Clone, Debug)]
struct SizeDraw {
    sizes: Vec<u64>,
    cum: Vec<u32>,
}

impl SizeDraw {
    fn of(s: &Sizes) -> SizeDraw {
        match s {
            Sizes::Fixed(b) => SizeDraw { sizes: vec![*b], cum: vec![100] },
            Sizes::Split(v) => {
                let mut acc = 0;
                let cum = v
                    .iter()
                    .map(|x| {
                        acc += x.1;
                        acc
                    })
                    .collect();
                SizeDraw { sizes: v.iter().map(|x| x.0).collect(), cum }
            }
        }
    }
    #[inline]
    fn draw(&self, rng: &mut Rng) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let r = rng.below(100) as u32;
        let i = self.cum.iter().position(|&c| r < c).unwrap_or(self.sizes.len() - 1);
        self.sizes[i]
    }
}

/// A fio job's stream of commands.
#[derive(Clone, Debug)]
pub struct FioGen {
    /// Region start and length in bytes (inside the drive's user area).
    base: u64,
    size: u64,
    /// Bytes per command unit (the page, or the sector).
    unit: u64,
    read_pct: u32,
    sizes: [SizeDraw; 2],
    /// Block alignment per direction (fio's `ba`: the smallest block size).
    ba: [u64; 2],
    /// Blocks a direction's uniform draw spans (fio's `last_block`).
    lastb: [u64; 2],
    offsets: Offsets,
    /// `randseed`: the job's own stream, whatever the run's seed.
    own: Option<Rng>,
    pub job: FioJob,
}

impl FioGen {
    #[inline]
    pub fn next_op(&mut self, shared: &mut Rng) -> Op {
        let rng = match self.own.as_mut() {
            Some(r) => r,
            None => shared,
        };
        let d = if self.read_pct > 0 && (rng.below(100) as u32) < self.read_pct { READ } else { WRITE };
        let mut len = self.sizes[d].draw(rng);
        let ba = self.ba[d];
        let off = match &mut self.offsets {
            Offsets::Sequential { cursor } => {
                let mut c = cursor[d];
                if c + len > self.size {
                    c = 0;
                }
                cursor[d] = c + len;
                c
            }
            o => {
                let b = match o {
                    Offsets::Uniform { map } => {
                        let b = rng.below(self.lastb[d]);
                        match map {
                            Some(m) => m.take(b),
                            None => b,
                        }
                    }
                    Offsets::Zipf(z) => z.next(rng),
                    Offsets::Pareto(p) => p.next(rng),
                    Offsets::Normal(g) => g.next(rng),
                    Offsets::Zoned(t) => t[d].next(rng),
                    Offsets::Sequential { .. } => unreachable!(),
                };
                let mut off = b * ba;
                // fio's get_next_buflen draws again until the block fits the region
                let mut tries = 0;
                while off + len > self.size && self.sizes[d].sizes.len() > 1 && tries < 64 {
                    len = self.sizes[d].draw(rng);
                    tries += 1;
                }
                if off + len > self.size {
                    off = (self.size - len) / ba * ba;
                }
                if let Offsets::Uniform { map: Some(m) } = o {
                    m.mark(off / ba, len.div_ceil(ba));
                }
                off
            }
        };
        let kind = if d == READ { OpKind::Read } else { OpKind::Write };
        Op { kind, start: (self.base + off) / self.unit, len: (len / self.unit) as u32, stream: 0, t_ns: 0 }
    }

    /// Mean write length in units.
    pub fn mean_units(&self) -> f64 {
        self.job.sizes[WRITE].mean() / self.unit as f64
    }
}

/// Job file and section of a `type = "fio"` workload, read and checked.
pub fn load(w: &WorkloadConfig) -> Result<FioJob> {
    let path = w
        .job
        .as_deref()
        .ok_or_else(|| Error::workload("workload.job", "is required for type \"fio\" (the fio job file)"))?;
    let file = JobFile::read(path)?;
    let (sec, entries) = file.resolve(w.section.as_deref())?;
    job::job(path, &sec.name, sec.line, &entries)
}

/// The generator of `job` over the first `drive_bytes` of the drive.
pub fn generator(job: FioJob, drive_bytes: u64, sector: u64, page: u64) -> Result<FioGen> {
    let active: Vec<usize> = if job.read_pct > 0 { vec![READ, WRITE] } else { vec![WRITE] };
    let min_bs = [job.sizes[READ].min(), job.sizes[WRITE].min()];
    let (offset, size) = region(&job, &active, drive_bytes, min_bs[WRITE])?;
    let unit = unit_of(&job, &active, offset, sector, page)?;
    let ba = [min_bs[READ], min_bs[WRITE]];
    let lastb = [size / ba[READ], size / ba[WRITE]];
    let offsets = offsets(&job, &active, size, ba, lastb)?;
    let own = job.randseed.map(|s| Rng::stream(s, 0xF11));
    Ok(FioGen {
        base: 0,
        size,
        unit,
        read_pct: job.read_pct,
        sizes: [SizeDraw::of(&job.sizes[READ]), SizeDraw::of(&job.sizes[WRITE])],
        ba,
        lastb,
        offsets,
        own,
        job,
    }
    .with_base(offset))
}

/// The job's region on the drive, (offset, size) in bytes: `filesize` (the target: the
/// user area, or a share or first bytes of it), then `offset` and `size` inside it.  A region
/// past the target, or smaller than the largest block of the `active` directions, is an
/// error naming the option.
fn region(job: &FioJob, active: &[usize], drive_bytes: u64, min_write_bs: u64) -> Result<(u64, u64)> {
    let real = match job.filesize {
        None => drive_bytes,
        Some(SizeValue::Percent(p)) => drive_bytes / 100 * p as u64,
        Some(SizeValue::Bytes(b)) if b > drive_bytes => {
            return Err(job.err(
                "filesize",
                format!("{b} bytes is larger than the simulated drive's {drive_bytes}-byte user area"),
            ))
        }
        Some(SizeValue::Bytes(b)) => b,
    };
    let offset = match job.offset {
        None => 0,
        // fio aligns a percentage offset to offset_align (the smallest block size)
        Some(SizeValue::Percent(p)) => real / 100 * p as u64 / min_write_bs * min_write_bs,
        Some(SizeValue::Bytes(b)) => b,
    };
    let size = match job.size {
        None => real.saturating_sub(offset),
        Some(SizeValue::Percent(p)) => real / 100 * p as u64,
        Some(SizeValue::Bytes(b)) => b,
    };
    if offset.saturating_add(size) > real {
        let key = if job.size.is_some() { "size" } else { "offset" };
        return Err(job.err(
            key,
            format!(
                "the job's region (offset {offset} + size {size} bytes) ends past the {real}-byte target (the \
                 simulated drive's user area{}); simulate a larger drive or give a smaller size",
                if job.filesize.is_some() { ", or filesize" } else { "" }
            ),
        ));
    }
    let max_bs = active.iter().map(|&d| job.sizes[d].max()).max().unwrap_or(0);
    if size < max_bs {
        return Err(job.err("size", format!("{size} bytes is smaller than the largest block ({max_bs} bytes)")));
    }
    Ok((offset, size))
}

/// The generator's unit: pages when every block size of the `active` directions and the
/// region's start are page multiples, else sectors (each must be a sector multiple).
fn unit_of(job: &FioJob, active: &[usize], offset: u64, sector: u64, page: u64) -> Result<u64> {
    let mut all: Vec<u64> = active
        .iter()
        .flat_map(|&d| match &job.sizes[d] {
            Sizes::Fixed(b) => vec![*b],
            Sizes::Split(v) => v.iter().map(|x| x.0).collect(),
        })
        .collect();
    for &b in &all {
        if b % sector != 0 {
            let key = if matches!(job.sizes[WRITE], Sizes::Split(_)) { "bssplit" } else { "bs" };
            return Err(job.err(key, format!("{b} bytes is not a multiple of the {sector}-byte sector")));
        }
        if b / sector > u32::MAX as u64 {
            return Err(job.err("bs", format!("{b} bytes is too large")));
        }
    }
    if offset % sector != 0 {
        return Err(job.err("offset", format!("{offset} bytes is not a multiple of the {sector}-byte sector")));
    }
    all.push(offset);
    Ok(if all.iter().all(|b| b % page == 0) { page } else { sector })
}

/// Where the job's offsets come from: sequential, or its random distribution over the
/// region's `size` bytes, numbered in blocks of `ba` (per direction; `lastb` of them).
fn offsets(job: &FioJob, active: &[usize], size: u64, ba: [u64; 2], lastb: [u64; 2]) -> Result<Offsets> {
    if !job.random {
        return Ok(Offsets::Sequential { cursor: [0, 0] });
    }
    // fio's __init_rand_distribution: ranges of the smaller of the read and write block sizes
    let range = ba[READ].min(ba[WRITE]);
    let nranges = size.div_ceil(range);
    let mut seed_rng = Rng::stream(job.randseed.unwrap_or(0x5EED), 0xF10);
    let same_ba = active.iter().all(|&d| ba[d] == range);
    let one_ba = |what: &str| {
        if same_ba {
            return Ok(());
        }
        Err(job.err(
            "bs",
            format!(
                "{what} needs one smallest block size for reads and writes (fio numbers the blocks in the smaller one)"
            ),
        ))
    };
    let offsets = match &job.distribution {
        Distribution::Random if job.norandommap => Offsets::Uniform { map: None },
        Distribution::Random => {
            one_ba("fio's random map")?;
            Offsets::Uniform { map: Some(random_map(job, size / range)?) }
        }
        Distribution::Zipf(t) => {
            one_ba("zipf")?;
            Offsets::Zipf(FioZipf::new(nranges, *t, &mut seed_rng))
        }
        Distribution::Pareto(h) => {
            one_ba("pareto")?;
            Offsets::Pareto(FioPareto::new(nranges, *h, &mut seed_rng))
        }
        Distribution::Normal(dev) => {
            one_ba("normal")?;
            Offsets::Normal(FioGauss::new(nranges, *dev))
        }
        Distribution::Zoned(z) => {
            Offsets::Zoned([ZoneTable::percent(&z[READ], lastb[READ]), ZoneTable::percent(&z[WRITE], lastb[WRITE])])
        }
        Distribution::ZonedAbs(z) => {
            for &d in active {
                let total: u64 = z[d].iter().map(|x| x.1).fold(0u64, |a, b| a.saturating_add(b));
                if total / ba[d] > lastb[d] {
                    return Err(job.err(
                        "random_distribution",
                        format!("the zones add up to {total} bytes, more than the job's {size}-byte region"),
                    ));
                }
            }
            Offsets::Zoned([ZoneTable::absolute(&z[READ], ba[READ]), ZoneTable::absolute(&z[WRITE], ba[WRITE])])
        }
    };
    if let Offsets::Zoned(t) = &offsets {
        if active.iter().any(|&d| t[d].by_v.iter().any(|z| z.1 == 0)) {
            return Err(job.err("random_distribution", "a zone holds no whole block"));
        }
    }
    Ok(offsets)
}

/// fio's random map of `n` blocks (every block once a pass), refused past
/// [`MAX_RANDOM_MAP_BYTES`] with the advice to add `norandommap`.
fn random_map(job: &FioJob, n: u64) -> Result<RandomMap> {
    let bytes = RandomMap::bytes(n);
    if bytes > MAX_RANDOM_MAP_BYTES {
        return Err(job.err(
            "rw",
            format!(
                "fio's random map of {n} blocks would take {} MiB (at most {} MiB); add norandommap",
                bytes >> 20,
                MAX_RANDOM_MAP_BYTES >> 20
            ),
        ));
    }
    Ok(RandomMap::new(n))
}

impl FioGen {
    fn with_base(mut self, base: u64) -> Self {
        self.base = base;
        self
    }
    pub fn pages(&self, page: u64) -> bool {
        self.unit == page
    }
}

/// A job as JSON, for the CLI (`opsim advise --fio`): its name, rw, read share, block sizes
/// (bytes, percent) per direction, region options (bytes or a percentage), random map,
/// distribution and its parameter or zones, iodepth, and the file's jobs.
pub fn summary(path: &str, section: Option<&str>) -> Result<serde_json::Value> {
    use serde_json::json;
    let file = JobFile::read(path)?;
    let (sec, entries) = file.resolve(section)?;
    let j = job::job(path, &sec.name, sec.line, &entries)?;
    let sizes = |s: &Sizes| -> Vec<(u64, f64)> {
        match s {
            Sizes::Fixed(b) => vec![(*b, 1.0)],
            Sizes::Split(v) => v.iter().map(|&(b, p)| (b, p as f64 / 100.0)).collect(),
        }
    };
    let region = |v: Option<SizeValue>, key: &str| match v {
        None => json!(null),
        Some(SizeValue::Bytes(b)) => json!({"bytes": b, "line": j.line_of(key, sec.line)}),
        Some(SizeValue::Percent(p)) => json!({"percent": p, "line": j.line_of(key, sec.line)}),
    };
    let (param, zones) = match &j.distribution {
        Distribution::Random => (json!(null), json!(null)),
        Distribution::Zipf(x) | Distribution::Pareto(x) | Distribution::Normal(x) => (json!(x), json!(null)),
        Distribution::Zoned(z) => (
            json!(null),
            json!(z[WRITE].iter().map(|&(a, s)| json!({"access_percent": a, "size_percent": s})).collect::<Vec<_>>()),
        ),
        Distribution::ZonedAbs(z) => (
            json!(null),
            json!(z[WRITE].iter().map(|&(a, b)| json!({"access_percent": a, "bytes": b})).collect::<Vec<_>>()),
        ),
    };
    Ok(json!({
        "path": path,
        "job": j.name,
        "jobs": file.jobs(),
        "random": j.random,
        "read_fraction": j.read_pct as f64 / 100.0,
        "write_sizes": sizes(&j.sizes[WRITE]),
        "read_sizes": sizes(&j.sizes[READ]),
        "size": region(j.size, "size"),
        "offset": region(j.offset, "offset"),
        "filesize": region(j.filesize, "filesize"),
        "norandommap": j.norandommap,
        "randseed": j.randseed,
        "distribution": j.distribution.name(),
        "parameter": param,
        "zones": zones,
        "iodepth": j.iodepth,
        "section_line": sec.line,
    }))
}

/// Most blocks [`write_counts`] counts over.
pub const MAX_COUNT_BLOCKS: u64 = 1 << 26;

/// Writes per block (of the job's smallest write size) of `writes` write commands of the
/// job on a drive of `drive_bytes` (512-byte sectors, 4 KiB pages), generated with `seed`:
/// the access histogram, to set beside fio's own `--write_iolog` of the job.
pub fn write_counts(path: &str, section: Option<&str>, drive_bytes: u64, writes: u64, seed: u64) -> Result<Vec<u64>> {
    let file = JobFile::read(path)?;
    let (sec, entries) = file.resolve(section)?;
    let j = job::job(path, &sec.name, sec.line, &entries)?;
    let bs = j.sizes[WRITE].min();
    let mut g = generator(j, drive_bytes, 512, 4096)?;
    let blocks = drive_bytes.div_ceil(bs);
    if blocks > MAX_COUNT_BLOCKS {
        return Err(Error::workload("drive_bytes", format!("{blocks} blocks; at most {MAX_COUNT_BLOCKS}")));
    }
    if writes > 1 << 32 {
        return Err(Error::workload("writes", "at most 2^32"));
    }
    let mut counts = vec![0u64; blocks as usize];
    let mut rng = Rng::new(seed);
    let mut done = 0;
    while done < writes {
        let op = g.next_op(&mut rng);
        if op.kind == OpKind::Write {
            counts[(op.start * g.unit / bs) as usize] += 1;
            done += 1;
        }
    }
    Ok(counts)
}

/// `type = "fio"`: the workload of the job file's job.
pub fn build(w: &WorkloadConfig, accessible_sectors: u64, sector: u64, page: u64) -> Result<Workload> {
    let job = load(w)?;
    let g = generator(job, accessible_sectors * sector, sector, page)?;
    let pages = g.pages(page);
    Ok(Workload::of_pattern(Pattern::Fio(Box::new(g)), pages))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(text: &str, drive: u64) -> Result<FioGen> {
        let f = JobFile::parse("t.fio", text.as_bytes())?;
        let (sec, e) = f.resolve(None)?;
        generator(job::job("t.fio", &sec.name, sec.line, &e)?, drive, 512, 4096)
    }

    #[test]
    fn region_and_units() {
        let mut g = gen("[a]\nrw=randwrite\nsize=1m\noffset=1m\nnorandommap\n", 8 << 20).unwrap();
        assert_eq!(g.unit, 4096);
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let op = g.next_op(&mut rng);
            assert!(op.start >= 256 && op.start < 512 && op.len == 1, "{op:?}");
        }
        let e = gen("[a]\nrw=randwrite\nsize=8m\noffset=1m\n", 8 << 20).unwrap_err();
        assert!(e.message.contains("`size`"), "{e}");
        let g = gen("[a]\nrw=write\nbs=512\n", 1 << 20).unwrap();
        assert_eq!(g.unit, 512);
    }

    #[test]
    fn sequential_wraps_and_random_map_covers_every_block_a_pass() {
        let mut g = gen("[a]\nrw=write\nbs=8k\nsize=64k\n", 1 << 20).unwrap();
        let mut rng = Rng::new(1);
        let starts: Vec<u64> = (0..10).map(|_| g.next_op(&mut rng).start).collect();
        assert_eq!(starts, vec![0, 2, 4, 6, 8, 10, 12, 14, 0, 2]);
        let mut g = gen("[a]\nrw=randwrite\nsize=4m\n", 8 << 20).unwrap();
        for _ in 0..3 {
            let mut seen = vec![false; 1024];
            for _ in 0..1024 {
                let s = g.next_op(&mut rng).start as usize;
                assert!(!seen[s]);
                seen[s] = true;
            }
        }
    }

    #[test]
    fn zoned_and_mix() {
        let mut g = gen(
            "[a]\nrw=randrw\nrwmixread=25\nnorandommap\nsize=100m\nrandom_distribution=zoned:80/20:20/80\n",
            128 << 20,
        )
        .unwrap();
        let mut rng = Rng::new(2);
        let (mut w, mut hot, mut r) = (0u64, 0u64, 0u64);
        let n = 200_000;
        for _ in 0..n {
            let op = g.next_op(&mut rng);
            if op.kind == OpKind::Read {
                r += 1;
                continue;
            }
            w += 1;
            if op.start < (20u64 << 20) / 4096 {
                hot += 1;
            }
        }
        let rs = r as f64 / n as f64;
        let hs = hot as f64 / w as f64;
        assert!((rs - 0.25).abs() < 0.01 && (hs - 0.80).abs() < 0.01, "reads {rs} hot {hs}");
    }

    #[test]
    fn the_random_map_is_bounded_before_it_is_allocated() {
        // 32 TiB of 4 KiB blocks: a 1 GiB map, refused with the advice
        let e = gen("[a]\nrw=randwrite\n", 32 << 40).unwrap_err();
        assert!(e.message.contains("norandommap") && e.message.contains("MiB"), "{e}");
        assert!(gen("[a]\nrw=randwrite\nnorandommap\n", 32 << 40).is_ok());
    }

    #[test]
    fn bssplit_shares() {
        let mut g = gen("[a]\nrw=randwrite\nnorandommap\nbssplit=4k/75:16k/25\n", 64 << 20).unwrap();
        let mut rng = Rng::new(4);
        let big = (0..100_000).filter(|_| g.next_op(&mut rng).len == 4).count();
        assert!((big as f64 / 100_000.0 - 0.25).abs() < 0.01, "{big}");
    }
}
