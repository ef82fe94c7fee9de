//! The fio options opsim honours, the ones that cannot change the stream of LBAs a job
//! writes (accepted, no effect), and every other option refused by name and line.
//!
//! Option names and value forms follow fio's `options.c` and HOWTO.

use super::options::Options;
use super::parse::{self, err_at, Entry, SizeValue};
use crate::error::Result;

/// The direction of an I/O (fio's ddir index: read 0, write 1, trim 2).
pub const READ: usize = 0;
pub const WRITE: usize = 1;

/// Options accepted that cannot change the LBAs written or their order in opsim's models:
/// where the I/O goes on the host (the target is the simulated drive), how it is issued,
/// how long the run is (opsim runs by drive writes), what is logged or reported, the data
/// pattern (opsim's FTL does not compress or deduplicate... those options are refused).
pub const HARMLESS: &[&str] = &[
    "name",
    "description",
    "filename",
    "directory",
    "ioengine",
    "direct",
    "buffered",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "io_size",
    "io_limit",
    "group_reporting",
    "thread",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "invalidate",
    "end_fsync",
    "fsync_on_close",
    "write_iolog",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "per_job_logs",
    "log_offset",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "allrandrepeat",
    "unit_base",
    "exitall",
    "exitall_on_error",
    "fallocate",
    "create_on_open",
    "allow_file_create",
    "unlink",
    "overwrite",
    "sync",
    "cpus_allowed",
    "cpumask",
    "nice",
    "prio",
    "prioclass",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "lockmem",
    "significant_figures",
    "serialize_overlap",
    "kb_base",
];

/// Why some common options are refused (others: "not an option opsim knows").
fn refusal(key: &str) -> Option<&'static str> {
    Some(match key {
        "numjobs" => "several jobs at once interleave their streams; give each its own section, or numjobs=1",
        "nrfiles" | "file_service_type" | "openfiles" => "opsim maps one job onto one drive (one file)",
        "verify" | "do_verify" | "verify_backlog" | "verify_pattern" => "verification reads are not modelled",
        "rate" | "rate_iops" | "rate_min" | "rate_iops_min" | "rate_process" | "thinktime" | "thinktime_blocks"
        | "thinktime_spin" | "rate_cycle" => "rate limits and think times are not modelled (opsim runs closed-loop)",
        "zonemode" | "zonesize" | "zonerange" | "zoneskip" | "zonecapacity" => "fio's zone modes are not modelled",
        "percentage_random" | "percent_random" | "percentage_sequential" | "percent_sequential" => {
            "mixed sequential/random streams are not modelled"
        }
        "random_center" => "random_center is not modelled (fio's default center only)",
        "softrandommap" => "softrandommap is not modelled",
        "random_generator" => {
            "only fio's tausworthe generators (the default) are modelled; lfsr visits blocks in another order"
        }
        "offset_increment" | "offset_align" => "offsets per job clone are not modelled",
        "bsrange" | "blocksize_range" | "bs_unaligned" | "blocksize_unaligned" | "bs_is_seq_rand" => {
            "random block size ranges are not modelled; use bs or bssplit"
        }
        "buffer_compress_percentage" | "buffer_compress_chunk" | "dedupe_percentage" => {
            "opsim's FTL does not compress or deduplicate"
        }
        "trim_percentage" | "trim_backlog" | "trim_verify_zero" => "trims of written blocks are not modelled",
        "fdp" | "fdp_pli" | "fdp_pli_select" | "dataplacement" | "plids" | "write_hint" => {
            "placement hints: use [ftl.placement] in the config"
        }
        "ddir_seq_nr" | "ddir_seq_add" | "rw_sequencer" => "rw modifiers are not modelled",
        "fill_device" | "fill_fs" => "fill_device: use run.precondition",
        "read_iolog" | "replay_redirect" | "replay_no_stall" => "replaying an iolog: use [workload] type = \"trace\"",
        "flow" | "flow_id" | "flow_watermark" | "flow_sleep" => "flow control between jobs is not modelled",
        _ => return None,
    })
}

/// An access pattern of a job.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Random,
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
    /// Per direction (read, write, trim): (access %, size %).
    Zoned([Vec<(u32, u32)>; 3]),
    /// Per direction: (access %, bytes).
    ZonedAbs([Vec<(u32, u64)>; 3]),
}

impl Distribution {
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Random => "random",
            Distribution::Zipf(_) => "zipf",
            Distribution::Pareto(_) => "pareto",
            Distribution::Normal(_) => "normal",
            Distribution::Zoned(_) => "zoned",
            Distribution::ZonedAbs(_) => "zoned_abs",
        }
    }
}

/// Block sizes of one direction: one size, or fio's bssplit (bytes, percent).
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    Fixed(u64),
    Split(Vec<(u64, u32)>),
}

impl Sizes {
    pub fn min(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(0),
        }
    }
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(b) => *b as f64,
            Sizes::Split(v) => v.iter().map(|&(b, p)| b as f64 * p as f64 / 100.0).sum(),
        }
    }
}

/// A job as opsim runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct FioJob {
    pub path: String,
    pub name: String,
    /// Random (true) or sequential offsets.
    pub random: bool,
    /// Percentage of I/Os that are reads (0 for write-only jobs).
    pub read_pct: u32,
    /// Read, write and trim block sizes.
    pub sizes: [Sizes; 3],
    pub size: Option<SizeValue>,
    pub offset: Option<SizeValue>,
    pub filesize: Option<SizeValue>,
    pub norandommap: bool,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub distribution: Distribution,
    pub iodepth: Option<u32>,
    /// Line of each honoured option, for errors found when the job meets the drive.
    pub lines: Vec<(String, u64)>,
}

impl FioJob {
    /// The line of option `key` (the section's line when not given).
    pub fn line_of(&self, key: &str, section_line: u64) -> u64 {
        self.lines.iter().rev().find(|(k, _)| k == key).map(|x| x.1).unwrap_or(section_line)
    }
    /// An error naming option `key` at its line.
    pub fn err(&self, key: &str, msg: impl Into<String>) -> crate::Error {
        let line = self.line_of(key, 0);
        err_at(&self.path, line, format!("option `{key}`: {}", msg.into()))
    }
}

/// The options opsim honours (every other is harmless or refused).
const HONOURED: &[&str] = &[
    "rw",
    "bs",
    "bssplit",
    "ba",
    "size",
    "offset",
    "filesize",
    "rwmixread",
    "rwmixwrite",
    "norandommap",
    "randrepeat",
    "randseed",
    "random_distribution",
    "numjobs",
];

/// The job from its entries (`[global]` ones first, then the job's own; later win).
pub fn job(path: &str, name: &str, section_line: u64, entries: &[Entry]) -> Result<FioJob> {
    let mut o = Options::new(path, entries);
    check_known(&o)?;
    o.read_kb_base()?;
    let (random, mixed) = rw_mode(&o, name, section_line)?;
    let read_pct = read_share(&o, mixed)?;
    let sizes = block_sizes(&o)?;
    let norandommap = o.boolean("norandommap", false)?;
    let randrepeat = o.boolean("randrepeat", true)?;
    let randseed = o.integer("randseed")?;
    let iodepth = iodepth(&o)?;
    check_numjobs(&o)?;
    let distribution = access_distribution(&o, random, norandommap)?;
    let lines = o.lines();
    Ok(FioJob {
        path: path.to_owned(),
        name: name.to_owned(),
        random,
        read_pct,
        sizes,
        size: o.size("size", true)?,
        offset: o.size("offset", true)?,
        filesize: o.size("filesize", true)?,
        norandommap,
        randrepeat,
        randseed,
        distribution,
        iodepth,
        lines,
    })
}

/// Every option is honoured, harmless or refused: the first refused one is the error (with
/// the reason when it is a known fio option).
fn check_known(o: &Options) -> Result<()> {
    for (k, e) in &o.last {
        if HONOURED.contains(k) || HARMLESS.contains(k) {
            continue;
        }
        return Err(match refusal(k) {
            Some(why) => o.bad(e, format!("cannot be honoured: {why}")),
            None => {
                o.bad(e, "is not an option opsim honours; remove it or see docs/workloads.md (fio job files)".into())
            }
        });
    }
    Ok(())
}

/// `rw`: (random offsets, reads mixed in).  Jobs that write nothing are refused.
fn rw_mode(o: &Options, name: &str, section_line: u64) -> Result<(bool, bool)> {
    let Some(e) = o.get("rw") else {
        return Err(err_at(
            o.path(),
            section_line,
            format!("job [{name}] has no rw= (fio's default is read, which writes nothing)"),
        ));
    };
    let v = o.need_value(e)?.to_ascii_lowercase();
    if v.contains(':') {
        return Err(o.bad(e, format!("`{v}`: rw modifiers (`:N`) are not modelled")));
    }
    Ok(match v.as_str() {
        "write" => (false, false),
        "randwrite" => (true, false),
        "rw" | "readwrite" => (false, true),
        "randrw" => (true, true),
        "read" | "randread" | "trim" | "randtrim" => {
            return Err(o.bad(e, format!("`{v}` writes nothing; opsim simulates what writes do to the drive")))
        }
        "trimwrite" | "randtrimwrite" => return Err(o.bad(e, format!("`{v}` is not modelled"))),
        _ => return Err(o.bad(e, format!("`{}` is not an rw mode (write, randwrite, rw, randrw)", parse::show(&v)))),
    })
}

/// `rwmixread` / `rwmixwrite`: the percentage of I/Os that are reads (0 unless `mixed`).
fn read_share(o: &Options, mixed: bool) -> Result<u32> {
    let mut read_pct = 50u32;
    for (k, is_read) in [("rwmixread", true), ("rwmixwrite", false)] {
        if let Some(e) = o.get(k) {
            let v = o.need_value(e)?;
            let p = parse::integer(&v)
                .filter(|&p| p <= 100)
                .ok_or_else(|| o.bad(e, format!("`{}` is not a percentage 0 to 100", parse::show(&v))))?
                as u32;
            read_pct = if is_read { p } else { 100 - p };
        }
    }
    // the later of the two wins: fio sets both from either
    if let (Some(a), Some(b)) = (o.get("rwmixread"), o.get("rwmixwrite")) {
        let (r, w) =
            (parse::integer(a.value.as_deref().unwrap_or("")), parse::integer(b.value.as_deref().unwrap_or("")));
        if let (Some(r), Some(w)) = (r, w) {
            if r + w != 100 {
                return Err(o.bad(
                    if a.line > b.line { a } else { b },
                    format!("rwmixread={r} and rwmixwrite={w} do not add up to 100"),
                ));
            }
        }
    }
    if !mixed {
        for k in ["rwmixread", "rwmixwrite"] {
            if let Some(e) = o.get(k) {
                return Err(o.bad(e, "applies to rw=rw or randrw only".into()));
            }
        }
        return Ok(0);
    }
    if read_pct == 100 {
        let e = o.get("rwmixread").or(o.get("rwmixwrite")).unwrap();
        return Err(o.bad(e, "100% reads writes nothing; opsim simulates what writes do to the drive".into()));
    }
    Ok(read_pct)
}

/// Block sizes per direction (read, write, trim): `bs`, then `bssplit` over it, with `ba`
/// checked against them.
fn block_sizes(o: &Options) -> Result<[Sizes; 3]> {
    let mut sizes = [Sizes::Fixed(4096), Sizes::Fixed(4096), Sizes::Fixed(4096)];
    if let Some(e) = o.get("bs") {
        let got = per_direction(o, e, "sizes", |p| block_size(o, e, p))?;
        for (s, g) in sizes.iter_mut().zip(got) {
            if let Some(b) = g {
                *s = Sizes::Fixed(b);
            }
        }
    }
    if let Some(e) = o.get("bssplit") {
        let got = per_direction(o, e, "splits", |p| bssplit(p, o.kb_base).map_err(|m| o.bad(e, m)))?;
        for (s, g) in sizes.iter_mut().zip(got) {
            if let Some(v) = g {
                *s = Sizes::Split(v);
            }
        }
    }
    if let Some(e) = o.get("ba") {
        check_alignment(o, e, &sizes)?;
    }
    Ok(sizes)
}

/// One block size of `bs` (option `e`): bytes, not 0.
fn block_size(o: &Options, e: &Entry, part: &str) -> Result<u64> {
    match parse::size(part, o.kb_base, false).map_err(|m| o.bad(e, m))? {
        SizeValue::Bytes(0) => Err(o.bad(e, "a block size of 0".into())),
        SizeValue::Bytes(b) if b % MIN_SECTOR != 0 => Err(o.bad(e, not_sectors(b))),
        SizeValue::Bytes(b) => Ok(b),
        SizeValue::Percent(_) => unreachable!(),
    }
}

/// A value of up to three comma-separated parts (read,write,trim), each read by `read` (an
/// empty part: that direction keeps its default).  As fio: one part sets every direction;
/// `a,b` sets read and write, and trim from write.
fn per_direction<T: Clone>(
    o: &Options,
    e: &Entry,
    what: &str,
    read: impl Fn(&str) -> Result<T>,
) -> Result<[Option<T>; 3]> {
    let v = o.need_value(e)?;
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(o.bad(e, format!("at most three {what} (read,write,trim)")));
    }
    let mut got: [Option<T>; 3] = [None, None, None];
    for (i, p) in parts.iter().enumerate() {
        if !p.trim().is_empty() {
            got[i] = Some(read(p)?);
        }
    }
    if parts.len() == 1 {
        got = [got[0].clone(), got[0].clone(), got[0].clone()];
    } else if parts.len() == 2 && got[2].is_none() {
        got[2] = got[1].clone();
    }
    Ok(got)
}

/// `ba`: fio's default (the smallest block size of each direction) is the only alignment
/// modelled.
fn check_alignment(o: &Options, e: &Entry, sizes: &[Sizes; 3]) -> Result<()> {
    let v = o.need_value(e)?;
    for (i, p) in v.split(',').enumerate().take(3) {
        if p.trim().is_empty() {
            continue;
        }
        match parse::size(p, o.kb_base, false).map_err(|m| o.bad(e, m))? {
            SizeValue::Bytes(b) if b == sizes[i].min() => {}
            SizeValue::Bytes(b) => {
                return Err(o.bad(
                    e,
                    format!(
                        "{b} bytes: only the default alignment (the smallest block size, {} bytes) is modelled",
                        sizes[i].min()
                    ),
                ))
            }
            SizeValue::Percent(_) => unreachable!(),
        }
    }
    Ok(())
}

/// `iodepth` (1 to 65,536), for the timed model's queue depth.
fn iodepth(o: &Options) -> Result<Option<u32>> {
    match o.integer("iodepth")? {
        Some(d) if d == 0 || d > 65_536 => {
            Err(o.bad(o.get("iodepth").unwrap(), format!("{d} is out of range 1..=65536")))
        }
        d => Ok(d.map(|d| d as u32)),
    }
}

/// `numjobs`: 1 only (several jobs interleave their streams).
fn check_numjobs(o: &Options) -> Result<()> {
    match o.integer("numjobs")? {
        Some(n) if n != 1 => {
            Err(o.bad(o.get("numjobs").unwrap(), format!("numjobs={n}: {}", refusal("numjobs").unwrap())))
        }
        _ => Ok(()),
    }
}

/// `random_distribution`, for random jobs; a zoned one needs `norandommap`.
fn access_distribution(o: &Options, random: bool, norandommap: bool) -> Result<Distribution> {
    let Some(e) = o.get("random_distribution") else { return Ok(Distribution::Random) };
    let d = distribution(&o.need_value(e)?, o.kb_base).map_err(|m| o.bad(e, m))?;
    if !random && d != Distribution::Random {
        return Err(o.bad(e, "applies to random I/O (rw=randwrite or randrw) only".into()));
    }
    if matches!(d, Distribution::Zoned(_) | Distribution::ZonedAbs(_)) && !norandommap && random {
        return Err(o.bad(
            e,
            "zoned distributions need norandommap: fio's random map checks a zone-relative block number against \
             the whole file's map (io_u.c), a pattern opsim does not reproduce"
                .into(),
        ));
    }
    Ok(d)
}

/// Every drive's sector is a multiple of this many bytes: a block size that is not is refused
/// when the job is read, whatever drive runs it (the generator checks the drive's own sector).
const MIN_SECTOR: u64 = 512;

fn not_sectors(b: u64) -> String {
    format!("{b} bytes is not a whole number of {MIN_SECTOR}-byte sectors (the smallest sector a drive has)")
}

/// One direction's bssplit: `4k/10:64k/50:32k/40`; an empty percentage shares what the
/// others leave (fio's options.c, `bssplit_ddir`); the percentages add up to 100.
fn bssplit(s: &str, kb_base: u64) -> std::result::Result<Vec<(u64, u32)>, String> {
    let mut v: Vec<(u64, Option<u32>)> = Vec::new();
    for item in s.split(':') {
        if v.len() >= 64 {
            return Err("at most 64 sizes".into());
        }
        let (b, p) = match item.split_once('/') {
            Some((b, p)) => (b, Some(p)),
            None => (item, None),
        };
        let bytes = match parse::size(b, kb_base, false)? {
            SizeValue::Bytes(0) => return Err("a block size of 0".into()),
            SizeValue::Bytes(x) if x % MIN_SECTOR != 0 => return Err(not_sectors(x)),
            SizeValue::Bytes(x) => x,
            SizeValue::Percent(_) => unreachable!(),
        };
        let perc = match p.map(str::trim) {
            None | Some("") => None,
            Some(p) => Some(
                parse::integer(p)
                    .filter(|&x| x <= 100)
                    .ok_or_else(|| format!("`{}` is not a percentage", parse::show(p)))? as u32,
            ),
        };
        v.push((bytes, perc));
    }
    let given: u32 = v.iter().filter_map(|x| x.1).sum();
    let empty = v.iter().filter(|x| x.1.is_none()).count() as u32;
    if given > 100 || (empty == 0 && given != 100) {
        return Err(format!("the percentages add up to {given}, not 100"));
    }
    let share = (100 - given).checked_div(empty).unwrap_or(0);
    let extra = (100 - given).checked_rem(empty).unwrap_or(0);
    let mut k = 0;
    let out: Vec<(u64, u32)> = v
        .into_iter()
        .map(|(b, p)| {
            (
                b,
                p.unwrap_or_else(|| {
                    k += 1;
                    share + if k <= extra { 1 } else { 0 }
                }),
            )
        })
        .filter(|x| x.1 > 0)
        .collect();
    if out.is_empty() {
        return Err("no size has a share of the I/O".into());
    }
    Ok(out)
}

/// `random`, `zipf:θ`, `pareto:h`, `normal:dev` (or `gauss:dev`), `zoned:a/s:...`,
/// `zoned_abs:a/bytes:...` (options.c, `str_random_distribution_cb`, `parse_zoned_distribution`).
/// A zone that takes accesses but holds no block (fio would divide by its size).
fn empty_zone(z: &str, x: impl std::fmt::Display, size: &str) -> String {
    format!("zone `{}`: {x}% of the accesses to a zone of {size}, which holds no block", parse::show(z))
}

pub fn distribution(s: &str, kb_base: u64) -> std::result::Result<Distribution, String> {
    let s = s.trim();
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k.to_ascii_lowercase(), Some(a)),
        None => (s.to_ascii_lowercase(), None),
    };
    let number = |a: Option<&str>, what: &str| -> std::result::Result<f64, String> {
        let a = a.ok_or_else(|| format!("{kind} needs its {what} ({kind}:VALUE)"))?;
        if a.contains(':') {
            return Err(format!("`{}`: a center (third field) is not modelled", parse::show(s)));
        }
        a.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("`{}` is not a number", parse::show(a)))
    };
    Ok(match kind.as_str() {
        "random" if arg.is_none() => Distribution::Random,
        "zipf" => {
            let t = number(arg, "theta")?;
            if !(t > 0.0 && t <= 10.0) || t == 1.0 {
                return Err(format!("zipf theta {t} is out of range: fio takes (0, 10] other than 1"));
            }
            Distribution::Zipf(t)
        }
        "pareto" => {
            let h = number(arg, "h")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} is out of range (0, 1)"));
            }
            Distribution::Pareto(h)
        }
        "normal" | "gauss" => {
            let d = number(arg, "deviation (%)")?;
            if !(0.0..=100.0).contains(&d) {
                return Err(format!("normal deviation {d}% is out of range 0 to 100"));
            }
            Distribution::Normal(d)
        }
        "zoned" | "zoned_abs" => {
            let a = arg.ok_or_else(|| format!("{kind} needs its zones ({kind}:ACCESS/SIZE:...)"))?;
            let parts: Vec<&str> = a.split(',').collect();
            if parts.len() > 3 {
                return Err("at most three zone lists (read,write,trim)".into());
            }
            let abs = kind == "zoned_abs";
            let mut pct: [Vec<(u32, u32)>; 3] = Default::default();
            let mut bytes: [Vec<(u32, u64)>; 3] = Default::default();
            for (i, p) in parts.iter().enumerate() {
                let mut acc = 0u32;
                let mut size = 0u64;
                for z in p.split(':') {
                    let (x, y) =
                        z.split_once('/').ok_or_else(|| format!("zone `{}` is not ACCESS/SIZE", parse::show(z)))?;
                    let x = parse::integer(x)
                        .filter(|&x| x <= 100)
                        .ok_or_else(|| format!("zone `{}`: access is a percentage", parse::show(z)))?
                        as u32;
                    if pct[i].len() + bytes[i].len() >= 256 {
                        return Err("at most 256 zones".into());
                    }
                    acc += x;
                    if abs {
                        let b = match parse::size(y, kb_base, false)? {
                            SizeValue::Bytes(b) => b,
                            SizeValue::Percent(_) => unreachable!(),
                        };
                        if x > 0 && b == 0 {
                            return Err(empty_zone(z, x, "0 bytes"));
                        }
                        size = size.saturating_add(b);
                        bytes[i].push((x, b));
                    } else {
                        let y = y.trim().trim_end_matches('%');
                        let y = parse::integer(y)
                            .filter(|&y| y <= 100)
                            .ok_or_else(|| format!("zone `{}`: size is a percentage", parse::show(z)))?;
                        if x > 0 && y == 0 {
                            return Err(empty_zone(z, x, "0% of the region"));
                        }
                        size += y;
                        pct[i].push((x, y as u32));
                    }
                }
                if acc != 100 {
                    return Err(format!("the access percentages of the zones add up to {acc}, not 100"));
                }
                if !abs && size != 100 {
                    return Err(format!("the size percentages of the zones add up to {size}, not 100"));
                }
            }
            // one list: every direction; two: read and write (trim from write)
            if parts.len() == 1 {
                pct = [pct[0].clone(), pct[0].clone(), pct[0].clone()];
                bytes = [bytes[0].clone(), bytes[0].clone(), bytes[0].clone()];
            } else if parts.len() == 2 {
                pct[2] = pct[1].clone();
                bytes[2] = bytes[1].clone();
            }
            if abs {
                Distribution::ZonedAbs(bytes)
            } else {
                Distribution::Zoned(pct)
            }
        }
        _ => {
            return Err(format!(
                "`{}` is not a distribution (random, zipf:T, pareto:H, normal:DEV, zoned:..., zoned_abs:...)",
                parse::show(s)
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fio::parse::JobFile;

    fn j(text: &str) -> Result<FioJob> {
        let f = JobFile::parse("t.fio", text.as_bytes())?;
        let (sec, e) = f.resolve(None)?;
        job("t.fio", &sec.name, sec.line, &e)
    }

    #[test]
    fn honoured_options() {
        let x = j("[global]\nioengine=libaio\ndirect=1\n[a]\nrw=randrw\nrwmixread=70\nbssplit=4k/50:64k/\nsize=50%\n\
                   random_distribution=zipf:0.8\nnorandommap\niodepth=32\nrandseed=7\n")
        .unwrap();
        assert!(x.random && x.norandommap && x.randrepeat);
        assert_eq!(x.read_pct, 70);
        assert_eq!(x.sizes[WRITE], Sizes::Split(vec![(4096, 50), (65536, 50)]));
        assert_eq!(x.size, Some(SizeValue::Percent(50)));
        assert_eq!(x.distribution, Distribution::Zipf(0.8));
        assert_eq!((x.iodepth, x.randseed), (Some(32), Some(7)));
        let y = j("[a]\nrw=write\nbs=4k,16k\nrwmixwrite=30\n").unwrap_err();
        assert!(y.message.contains("rwmixwrite"), "{y}");
        let z = j("[a]\nreadwrite=rw\nbs=4k,16k\nrwmixwrite=30\n").unwrap();
        assert_eq!((z.read_pct, z.sizes[READ].min(), z.sizes[WRITE].min()), (70, 4096, 16384));
    }

    #[test]
    fn refused_options_name_the_option_and_line() {
        for (text, key, line) in [
            ("[a]\nrw=randwrite\nverify=md5\n", "verify", 3),
            ("[a]\nrw=randwrite\nnumjobs=4\n", "numjobs", 3),
            ("[a]\nrw=randwrite\nfrobnicate=1\n", "frobnicate", 3),
            ("[a]\nrw=read\n", "rw", 2),
            ("[a]\nrw=randwrite\nrandom_distribution=zipf:1\n", "random_distribution", 3),
            ("[a]\nrw=randwrite\nrandom_distribution=zoned:50/10:50/90\n", "random_distribution", 3),
            ("[a]\nrw=randwrite\nbs=4q\n", "bs", 3),
            ("[a]\nrw=randwrite\nbssplit=4k/50:8k/20\n", "bssplit", 3),
            ("[a]\nrw=randwrite\nrate=10m\n", "rate", 3),
            ("[a]\nrw=randwrite:8\n", "rw", 2),
            ("[global]\nthinktime=10\n[a]\nrw=randwrite\n", "thinktime", 2),
        ] {
            let e = j(text).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(format!("t.fio:{line}").as_str()), "{text}: {e}");
            assert!(e.message.contains(&format!("`{key}`")), "{text}: {e}");
        }
    }

    #[test]
    fn distributions() {
        assert_eq!(distribution("pareto:0.2", 1024).unwrap(), Distribution::Pareto(0.2));
        assert_eq!(distribution("normal:10", 1024).unwrap(), Distribution::Normal(10.0));
        match distribution("zoned:60/10:30/20:10/70", 1024).unwrap() {
            Distribution::Zoned(z) => assert_eq!(z[WRITE], vec![(60, 10), (30, 20), (10, 70)]),
            d => panic!("{d:?}"),
        }
        match distribution("zoned_abs:70/1m:30/2m", 1024).unwrap() {
            Distribution::ZonedAbs(z) => assert_eq!(z[WRITE], vec![(70, 1 << 20), (30, 2 << 20)]),
            d => panic!("{d:?}"),
        }
        assert!(distribution("zoned:60/10:30/20", 1024).is_err());
        assert!(distribution("zipf:0.8:0.5", 1024).is_err());
        assert!(distribution("lognormal:3", 1024).is_err());
    }

    #[test]
    fn a_zone_with_accesses_and_no_size_is_refused_when_read() {
        // issue 36: `opsim advise --fio` screened such a job and divided by its zero bytes
        for text in ["zoned_abs:100/0", "zoned_abs:60/0:40/1m", "zoned:50/0:50/100"] {
            let e = distribution(text, 1024).unwrap_err();
            assert!(e.contains("holds no block"), "{text}: {e}");
        }
        assert!(distribution("zoned_abs:100/1m:0/0", 1024).is_ok(), "a zone nobody accesses may be empty");
    }

    #[test]
    fn a_block_size_of_part_of_a_sector_is_refused_when_read() {
        // issue 36: `opsim advise --fio` screened bs=1 and the simulator refused it seconds later
        for (text, key) in
            [("[a]\nrw=randwrite\nbs=1\n", "bs"), ("[a]\nrw=randwrite\nbssplit=4k/50:700/50\n", "bssplit")]
        {
            let e = j(text).unwrap_err();
            assert!(e.message.contains(&format!("`{key}`")) && e.message.contains("512-byte sectors"), "{text}: {e}");
        }
        assert!(j("[a]\nrw=randwrite\nbs=1536\n").is_ok());
    }
}
