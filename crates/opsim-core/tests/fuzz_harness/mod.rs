//! A deterministic, seeded mutation fuzzer for the core's parsers of outside input:
//! configs (TOML and JSON), block traces (every format; plain, gzip, zstd) and fio job files
//! (parsed, resolved, laid on a drive and run for a few hundred commands).  Shared by
//! the short pass in `cargo test` (`tests/fuzz_parsers.rs`) and the long one
//! (`examples/fuzz.rs`, `make fuzz`).
//!
//! Input `i` of a run with seed `S` is made by its own generator seeded from (S, i), so
//! `--seed S --index i` makes it again.  Seeds are the fixtures (`tests/fixtures/traces`,
//! `examples/*.toml`, the presets); mutations flip, set, insert and delete bytes, duplicate
//! lines, put in huge numbers and format tokens, truncate, splice and repeat chunks (lines
//! past the 64 KiB cap).  Every parse runs under `catch_unwind` and reads at most
//! [`MAX_RECORDS`] records; traces are read twice, through a large and a tiny buffer, and
//! must give the same records and the same error (lines split across buffer ends).  A panic
//! or a difference is a failure: the input goes to a file under `target/fuzz-failures/`.

// `x % n == 0` kept as in the crate (see the crate root).
#![allow(dead_code, clippy::manual_is_multiple_of)]

use opsim_core::trace::{self, Reader, Record, TraceConfig, TraceFormat};
use opsim_core::Config;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Records read from one trace input at most.
pub const MAX_RECORDS: u64 = 20_000;
/// Largest input made by mutation.
pub const MAX_INPUT: usize = 320 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Config,
    Trace,
    FioJob,
}

impl Target {
    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "config" => Some(Target::Config),
            "trace" => Some(Target::Trace),
            "fio-job" => Some(Target::FioJob),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Target::Config => "config",
            Target::Trace => "trace",
            Target::FioJob => "fio-job",
        }
    }
}

/// splitmix64: small, fast, and the same everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "1e308",
    "1e309",
    "-0",
    "0.000000000000000000001",
    "1.5e-300",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "Infinity",
    "1.",
    ".5",
    "0x10",
    "1_000",
    "16EiB",
    "-8MiB",
    "1e3%",
    "nan%",
];

const TRACE_TOKENS: &[&str] = &[
    ",",
    "\n",
    "\r\n",
    " ",
    "\t",
    "\0",
    "\"",
    "#",
    "Read",
    "Write",
    "r",
    "w",
    "t",
    "D",
    "WS",
    "R",
    "+",
    "[",
    "fio version 2 iolog\n",
    "fio version 3 iolog\n",
    "wait",
    "add",
    "open",
    "trim",
    "8,0",
    "1.5e3",
    "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
    "ASU",
];

const CONFIG_TOKENS: &[&str] = &[
    "[drive]\n",
    "[ftl]\n",
    "[workload]\n",
    "[workload.trace]\n",
    "[workload.pts]\n",
    "[run]\n",
    "[[phase]]\n",
    "[timing]\n",
    "[ftl.slc_cache]\n",
    "preset = \"intel-320-160gb\"\n",
    "preset = \"micron-1100-1tb-dwa\"\n",
    "gc = \"d-choices\"\n",
    "d = 4294967295\n",
    "window = 4294967295\n",
    "type = \"trace\"\n",
    "path = \"/dev/zero\"\n",
    "columns = \"time=0,op=18446744073709551615,offset=2,size=3\"\n",
    "op = \"7%\"\n",
    "user_capacity = \"-8MiB\"\n",
    "block_sizes = [\"4KiB\", 512]\n",
    "mixes = [\"0/100\", \"x\"]\n",
    "\"",
    "'",
    "=",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "\\u0000",
    "\0",
    "\u{1b}",
    "é",
    "\n",
    "#",
    "\"\"\"",
    "true",
    "1979-05-27T07:32:00Z",
];

const FIO_TOKENS: &[&str] = &[
    "[global]\n",
    "[job]\n",
    "\n",
    "=",
    ",",
    ":",
    "/",
    "%",
    ";",
    "#",
    "rw=randrw\n",
    "rw=write\n",
    "norandommap\n",
    "random_distribution=zipf:1.2\n",
    "random_distribution=pareto:0.9\n",
    "random_distribution=normal:0\n",
    "random_distribution=zoned:100/1\n",
    "random_distribution=zoned_abs:50/4k:50/8k\n",
    "bssplit=512/1:1m/99\n",
    "bs=4k,,\n",
    "size=1%\n",
    "offset=99%\n",
    "filesize=7%\n",
    "kb_base=1000\n",
    "rwmixread=99\n",
    "randseed=18446744073709551615\n",
    "0x",
    "kib",
    "p",
];

/// Job files that reach the options the fixtures do not.
const FIO_JOBS: &[&str] = &[
    "; zipf\n[global]\nioengine=psync\ndirect=1\nbs=4k\n[z]\nrw=randwrite\nsize=50%\nrandom_distribution=zipf:0.8\n",
    "[p]\nrw=randrw\nrwmixread=30\nbssplit=4k/50:16k/30:64k/\nrandom_distribution=pareto:0.2\nnorandommap\niodepth=8\n",
    "[n]\nreadwrite=randrw\nrwmixwrite=80\nbs=8k\nrandom_distribution=normal:5\nrandseed=42\nrandrepeat=0\n",
    "[zz]\nrw=randwrite\nnorandommap\nrandom_distribution=zoned:60/10:30/20:10/70\noffset=4k\nsize=8m\n",
    "[za]\nrw=randwrite\nnorandommap\nrandom_distribution=zoned_abs:70/1m:30/2m\nfilesize=16m\n",
    "[global]\nkb_base=1000\n[s]\nrw=rw\nbs=128KiB\noffset=10%\n[r]\nrw=randwrite\nbs=4k\n",
    "[m]\nrw=randwrite\nsize=4m\n",
];

/// Job-file seeds: the fixtures above and `examples/*.fio`.
pub fn fio_jobs() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = FIO_JOBS.iter().map(|s| s.as_bytes().to_vec()).collect();
    if let Ok(rd) = std::fs::read_dir(repo().join("examples")) {
        let mut names: Vec<_> =
            rd.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "fio")).collect();
        names.sort();
        v.extend(names.iter().map(|p| std::fs::read(p).unwrap()));
    }
    v
}

/// One fio job input: the text, the job asked for, the drive's size.
pub fn fio_input(rng: &mut Rng, jobs: &[Vec<u8>]) -> (Vec<u8>, Option<String>, u64) {
    let others: Vec<&[u8]> = jobs.iter().map(|s| s.as_slice()).collect();
    let mut data = rng.pick(jobs).clone();
    if rng.chance(50) {
        data = (0..rng.below(1024)).map(|_| rng.next() as u8).collect();
    } else if rng.chance(3) {
        for _ in 0..1 + rng.below(3) {
            odd_number(rng, &mut data);
        }
    } else if rng.chance(2) {
        // whole option lines added at the end: the job stays readable, its values odd
        for _ in 0..1 + rng.below(3) {
            let t = rng.pick(FIO_TOKENS).as_bytes();
            if t.ends_with(b"\n") {
                data.extend_from_slice(t);
            }
        }
        if rng.chance(2) {
            odd_number(rng, &mut data);
        }
    } else {
        mutate(rng, &mut data, FIO_TOKENS, &others);
    }
    let section = match rng.below(4) {
        0 => Some(rng.pick(&["z", "p", "s", "global", "", "nope"]).to_string()),
        _ => None,
    };
    let drive = *rng.pick(&[1u64 << 20, 16 << 20, 64 << 20, 4096, 1 << 30, 3 << 20 | 512]);
    (data, section, drive)
}

/// Parse one job input, lay it on the drive and run it; Err describes a failure.
pub fn check_fio_job(data: &[u8], section: Option<&str>, drive: u64) -> Result<bool, String> {
    use opsim_core::workload::fio::{generator, job, parse::JobFile};
    let Ok(f) = JobFile::parse("fuzz.fio", data) else { return Ok(false) };
    let Ok((sec, entries)) = f.resolve(section) else { return Ok(false) };
    let Ok(j) = job::job("fuzz.fio", &sec.name, sec.line, &entries) else { return Ok(false) };
    let Ok(mut g) = generator(j, drive, 512, 4096) else { return Ok(false) };
    let mut rng = opsim_core::rng::Rng::new(1);
    for _ in 0..300 {
        let op = g.next_op(&mut rng);
        let unit = if g.pages(4096) { 4096 } else { 512 };
        if op.len == 0 || (op.start + op.len as u64) * unit > drive {
            return Err(format!("command {op:?} ({unit}-byte units) outside the {drive}-byte drive"));
        }
    }
    Ok(true)
}

/// The seed inputs of a target, from the repository.
pub struct Corpus {
    /// (bytes, the format it is in or Auto).
    pub traces: Vec<(Vec<u8>, TraceFormat, Option<&'static str>)>,
    pub zstd: Vec<Vec<u8>>,
    pub tomls: Vec<String>,
    pub jsons: Vec<String>,
    pub fio: Vec<Vec<u8>>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn corpus() -> Corpus {
    let fx = repo().join("tests/fixtures/traces");
    let read = |n: &str| std::fs::read(fx.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));
    let columns = Some("time=0:ms,device=1,op=2,offset=3:sectors,size=4");
    let traces = vec![
        (read("msr_hm_0.csv"), TraceFormat::Msr, None),
        (read("blkparse.txt"), TraceFormat::Blkparse, None),
        (read("fio_v2.iolog"), TraceFormat::FioIolog, None),
        (read("fio_v3.iolog"), TraceFormat::FioIolog, None),
        (read("disksim.trace"), TraceFormat::Disksim, None),
        (read("mqsim.trace"), TraceFormat::Mqsim, None),
        (read("spc_financial.csv"), TraceFormat::Spc, None),
        (read("columns.tsv"), TraceFormat::Columns, columns),
    ];
    let zstd = vec![read("msr_hm_0.csv.zst")];
    let mut tomls = Vec::new();
    for dir in [repo().join("examples"), repo().join("crates/opsim-core/presets")] {
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        names.sort();
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap();
            match text.parse::<toml::Table>() {
                // a preset file: a config that selects it and sets its other tables again
                Ok(mut t) if t.get("preset").is_some_and(|p| p.is_table()) => {
                    t.remove("preset");
                    let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                    tomls.push(format!("preset = \"{name}\"\n{}", toml::to_string(&t).unwrap()));
                }
                _ => tomls.push(text),
            }
        }
    }
    tomls.extend(EXTRA_TOML.iter().map(|s| s.to_string()));
    let jsons = tomls
        .iter()
        .filter_map(|t| t.parse::<toml::Table>().ok())
        .map(|t| serde_json::to_string(&t).unwrap())
        .collect();
    Corpus { traces, zstd, tomls, jsons, fio: fio_jobs() }
}

/// Configs that reach the sections the examples do not.
const EXTRA_TOML: &[&str] = &[
    "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n[ftl]\ngc = \"d-choices\"\nd = 8\n\
     [workload]\ntype = \"trace\"\n[workload.trace]\npath = \"t.csv\"\nformat = \"columns\"\n\
     columns = \"time=0:ms,op=3,offset=4:bytes,size=5:bytes,device=2\"\ndelimiter = \",\"\nskip_lines = 1\nremap = \"wrap\"\n",
    "[drive]\nphysical_capacity = \"1GiB\"\nop = \"7%\"\nop_basis = \"physical\"\n[ftl]\ngc = \"windowed-greedy\"\nwindow = 16\n\
     streams = 4\n[ftl.slc_cache]\nmax_fraction = 0.1\nmin_fraction = \"1%\"\nwhen_full = \"direct\"\n\
     [[phase]]\nname = \"fill\"\nios = 1000\n[phase.workload]\ntype = \"sequential\"\nrequest_size = \"128KiB\"\n\
     [[phase]]\ndrive_writes = 1.5\nmeasure = true\n[phase.workload]\ntype = \"hot-cold\"\nhot_fraction = 0.2\nhot_write_fraction = 0.8\n",
    "[drive]\nnative_capacity = \"256GB\"\nnative_op = 0.07\nop = 0.28\nop_basis = \"native\"\n[workload]\ntype = \"snia-pts\"\n\
     [workload.pts]\ntest = \"iops\"\nblock_sizes = [\"4KiB\", \"128KiB\"]\nmixes = [\"0/100\", \"65/35\"]\n[timing]\nqueue_depth = 32\n\
     [run]\nseed = 7\nmax_rounds = 10\nmemory_limit = \"1GiB\"\n",
    "[drive]\nuser_capacity = 1073741824\nop = 0.5\n[workload]\ntype = \"zipf\"\nzipf_exponent = 0.99\nread_fraction = 0.3\n\
     trim_fraction = 0.1\nspan = \"50%\"\nalign = \"4KiB\"\n[run]\nprecondition = \"analytic\"\n",
];

/// Apply 1 to 8 random mutations to `data`.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, tokens: &[&str], others: &[&[u8]]) {
    let most = if rng.chance(2) { 2 } else { 8 };
    for _ in 0..1 + rng.below(most) {
        let pos = rng.below(data.len() + 1);
        match rng.below(12) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = *rng.pick(&[
                    0u8, 0xff, 0x80, b'\n', b',', b' ', b'"', b'\\', b'=', b'.', b'-', b'e', b'9', b'\r', 0x1b,
                ]);
            }
            2 => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                data.splice(pos..pos, bytes);
            }
            3 if !data.is_empty() => {
                let end = (pos + 1 + rng.below(32)).min(data.len());
                data.drain(pos.min(end)..end);
            }
            4 => {
                // duplicate a line (or several copies of it)
                let lines: Vec<usize> = std::iter::once(0)
                    .chain(data.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(i, _)| i + 1))
                    .collect();
                let k = rng.below(lines.len());
                let (a, b) = (lines[k], lines.get(k + 1).copied().unwrap_or(data.len()));
                let line = data[a..b].to_vec();
                let copies = if rng.chance(8) { 1 + rng.below(200) } else { 1 };
                let copies = copies.min(MAX_INPUT.saturating_sub(data.len()) / line.len().max(1));
                data.splice(b..b, line.repeat(copies));
            }
            5 | 6 if !tokens.is_empty() => {
                let t = rng.pick(tokens).as_bytes();
                data.splice(pos..pos, t.iter().copied());
            }
            7 => odd_number(rng, data),
            8 => data.truncate(pos),
            9 if !others.is_empty() => {
                let o = rng.pick(others);
                let from = rng.below(o.len() + 1);
                data.truncate(pos);
                data.extend_from_slice(&o[from..]);
            }
            10 if !data.is_empty() => {
                // a chunk repeated: long lines, long fields
                let a = rng.below(data.len());
                let b = (a + 1 + rng.below(16)).min(data.len());
                let chunk = data[a..b].to_vec();
                let most = if rng.chance(4) { 80_000 } else { 64 };
                let times = 1 + rng.below(most);
                let mut rep = Vec::with_capacity(chunk.len() * times);
                for _ in 0..times {
                    rep.extend_from_slice(&chunk);
                    if rep.len() > MAX_INPUT {
                        break;
                    }
                }
                data.splice(b..b, rep);
            }
            _ => {
                // the same spot, another byte
                if let Some(c) = data.get_mut(pos) {
                    *c = c.wrapping_add(1);
                }
            }
        }
        if data.len() > MAX_INPUT {
            data.truncate(MAX_INPUT);
        }
    }
}

/// A number of `data` replaced by a huge or odd one.
pub fn odd_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let digits: Vec<usize> = data.iter().enumerate().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
    if digits.is_empty() {
        return;
    }
    let mut a = *rng.pick(&digits);
    while a > 0 && data[a - 1].is_ascii_digit() {
        a -= 1;
    }
    let mut b = a;
    while b < data.len() && (data[b].is_ascii_digit() || data[b] == b'.') {
        b += 1;
    }
    let n = rng.pick(NUMBERS).as_bytes();
    data.splice(a..b, n.iter().copied());
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// One trace input: the bytes and the reader options.
pub fn trace_input(rng: &mut Rng, c: &Corpus) -> (Vec<u8>, TraceConfig) {
    let (seed, fmt, cols) = rng.pick(&c.traces);
    let others: Vec<&[u8]> = c.traces.iter().map(|t| t.0.as_slice()).collect();
    let mut data = seed.clone();
    if rng.chance(50) {
        data = (0..rng.below(4096)).map(|_| rng.next() as u8).collect();
    } else if !rng.chance(10) {
        mutate(rng, &mut data, TRACE_TOKENS, &others);
    }
    match rng.below(10) {
        0 | 1 => {
            data = gzip(&data);
            if rng.chance(3) {
                mutate(rng, &mut data, &[], &[]);
            }
        }
        2 => {
            data = rng.pick(&c.zstd).clone();
            mutate(rng, &mut data, &[], &[]);
        }
        3 if rng.chance(4) => {
            // two gzip members
            let mut more = gzip(&data);
            data = gzip(seed);
            data.append(&mut more);
        }
        _ => {}
    }
    let mut cfg = TraceConfig::new("fuzz.trace");
    const FORMATS: [TraceFormat; 8] = [
        TraceFormat::Auto,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::FioIolog,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
        TraceFormat::Spc,
        TraceFormat::Columns,
    ];
    cfg.format = match rng.below(5) {
        0 | 1 => *fmt,
        2 => TraceFormat::Auto,
        _ => *rng.pick(&FORMATS),
    };
    if cfg.format == TraceFormat::Columns {
        const SPECS: [&str; 6] = [
            "time=0:ms,device=1,op=2,offset=3:sectors,size=4",
            "time=0:ms,op=3,offset=4:bytes,size=5:bytes,device=2",
            "op=0,offset=1,size=2",
            "time=4:filetime,op=0:flag,offset=1:4k,size=2:kib,device=63",
            "time=0:s,op=1,offset=2:sectors,size=3:sectors",
            "time=0:ns,op=1:flag,offset=2:512,size=3:pages",
        ];
        let mut spec = rng.pick(&SPECS).as_bytes().to_vec();
        if rng.chance(4) {
            mutate(rng, &mut spec, &["=", ",", ":", "18446744073709551615", "64", "time", "op", "bytes"], &[]);
        }
        cfg.columns = Some(match cols {
            Some(c) if rng.chance(2) => c.to_string(),
            _ => String::from_utf8_lossy(&spec).into_owned(),
        });
        if rng.chance(3) {
            cfg.delimiter = Some(rng.pick(&[",", " ", "\t", "\\t", "whitespace", ";", "ab", "", "\0"]).to_string());
        }
    }
    if rng.chance(4) {
        cfg.skip_bad = true;
    }
    if rng.chance(5) {
        cfg.skip_lines = *rng.pick(&[1, 2, 5, u64::MAX]);
    }
    if rng.chance(5) {
        cfg.device = Some(rng.pick(&["0", "hm_0", "8,0", "1", "/dev/sdb", "", "\0"]).to_string());
    }
    if cfg.format == TraceFormat::Blkparse && rng.chance(3) {
        cfg.action = Some(rng.pick(&["Q", "C", "D", "X", "QQ", ""]).to_string());
    }
    if rng.chance(20) {
        cfg.speed = *rng.pick(&[0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300, 1e300]);
    }
    (data, cfg)
}

/// Records (at most [`MAX_RECORDS`]) or the error's text, reading through `buffer`-byte buffers.
fn read_trace(data: &[u8], cfg: &TraceConfig, buffer: usize) -> Result<(Vec<Record>, u64, u64), String> {
    let mut r = Reader::from_bytes_buffered(cfg, data.to_vec(), buffer).map_err(|e| e.to_string())?;
    let mut v = Vec::new();
    while (v.len() as u64) < MAX_RECORDS {
        match r.next_record() {
            Ok(Some(x)) => v.push(x),
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok((v, r.skipped_bad, r.line()))
}

/// Parse one trace input every way; Err describes a failure (not a parse error).
pub fn check_trace(data: &[u8], cfg: &TraceConfig, small: usize) -> Result<bool, String> {
    let big = read_trace(data, cfg, 1 << 18);
    let tiny = read_trace(data, cfg, small);
    // a corrupt compressed stream is found when the decoder reaches the damage, which
    // depends on how much it is asked for: both must fail, not necessarily at one line
    let compressed = data.starts_with(&[0x1f, 0x8b]) || data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let both_fail = big.is_err() && tiny.is_err();
    if big != tiny && !(compressed && both_fail) {
        let show = |r: &Result<(Vec<Record>, u64, u64), String>| match r {
            Ok((v, s, l)) => format!("{} records, {s} skipped, line {l}", v.len()),
            Err(e) => format!("error {e}"),
        };
        return Err(format!("buffers of {} and {small} bytes differ: {} vs {}", 1 << 18, show(&big), show(&tiny)));
    }
    if let Ok(r) = Reader::from_bytes(cfg, data.to_vec()) {
        let _ = trace::summarise(r, MAX_RECORDS);
    }
    check_profile(data, cfg)?;
    Ok(big.is_ok())
}

/// The write profile of the input (memory capped at 64 MiB): an error or figures that agree
/// with each other and with the trace summary.
fn check_profile(data: &[u8], cfg: &TraceConfig) -> Result<(), String> {
    let Ok(r) = Reader::from_bytes(cfg, data.to_vec()) else { return Ok(()) };
    let opts = trace::ProfileOptions { max_memory: 64 << 20 };
    let Ok(p) = trace::profile_with(r, &opts, &mut |_| {}) else { return Ok(()) };
    let blocks: u64 = p.write_counts.iter().map(|h| h.1).sum();
    let writes: u64 = p.write_counts.iter().map(|h| h.0 * h.1).sum();
    let dist: u64 = p.update_distance.iter().map(|b| b.count).sum();
    let ok = blocks == p.written_blocks
        && writes == p.block_writes
        && p.overwrites == p.block_writes - p.written_blocks
        && dist == p.overwrites
        && p.footprint_bytes >= p.write_footprint_bytes
        && p.curve.windows(2).all(|w| w[1].blocks >= w[0].blocks && w[1].writes >= w[0].writes - 1e-12)
        && (p.curve.last().map_or(0.0, |c| c.writes) - 1.0).abs() < 1e-9;
    if !ok {
        return Err(format!(
            "profile disagrees with itself: {} blocks / {} writes in the histogram, {} written, {} block writes, {} overwrites, {} distances",
            blocks, writes, p.written_blocks, p.block_writes, p.overwrites, dist
        ));
    }
    if let Ok(i) = Reader::from_bytes(cfg, data.to_vec()).and_then(|r| trace::summarise(r, u64::MAX)) {
        let same = i.source.records == p.source.records
            && i.write.ios == p.write.ios
            && i.write_footprint_bytes.is_none_or(|b| b == p.write_footprint_bytes)
            && i.footprint_bytes.is_none_or(|b| b == p.footprint_bytes);
        if !same {
            return Err(format!(
                "profile and summary differ: {} / {} records, {} / {} writes, footprints {:?} / {}, {:?} / {}",
                p.source.records,
                i.source.records,
                p.write.ios,
                i.write.ios,
                i.footprint_bytes,
                p.footprint_bytes,
                i.write_footprint_bytes,
                p.write_footprint_bytes
            ));
        }
    }
    Ok(())
}

/// One config input: the text and whether it is JSON.
pub fn config_input(rng: &mut Rng, c: &Corpus) -> (Vec<u8>, bool) {
    let json = rng.chance(3);
    let pool: &[String] = if json { &c.jsons } else { &c.tomls };
    let others: Vec<&[u8]> = pool.iter().map(|s| s.as_bytes()).collect();
    let mut data = rng.pick(pool).as_bytes().to_vec();
    if rng.chance(50) {
        data = (0..rng.below(2048)).map(|_| rng.next() as u8).collect();
    } else if rng.chance(3) {
        // the document kept whole, its values odd: what the validation sees
        for _ in 0..1 + rng.below(3) {
            odd_number(rng, &mut data);
        }
    } else {
        let tokens: Vec<&str> = if json {
            vec![
                "{",
                "}",
                "[",
                "]",
                ":",
                ",",
                "\"",
                "null",
                "true",
                "NaN",
                "-Infinity",
                "\"d\": 4294967295",
                "\\u0000",
                "\"preset\": \"intel-320-160gb\", ",
            ]
        } else {
            CONFIG_TOKENS.to_vec()
        };
        mutate(rng, &mut data, &tokens, &others);
    }
    (data, json)
}

/// Parse one config input; Err describes a failure.
pub fn check_config(data: &[u8], json: bool) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    let r = if json { Config::from_json_str(&text) } else { Config::from_toml_str(&text) };
    let Ok(cfg) = r else { return Ok(false) };
    // what parses also parses again from its own JSON (what the binding hands around),
    // unless it holds NaN or an infinity, which JSON cannot (they are refused later, when
    // the run is set up)
    if toml::Value::try_from(&cfg).is_ok_and(|v| has_non_finite(&v)) {
        return Ok(true);
    }
    let again = serde_json::to_string(&cfg).map_err(|e| format!("cannot serialise a parsed config: {e}"))?;
    if let Err(e) = Config::from_json_str(&again) {
        return Err(format!("a parsed config does not parse again from its JSON: {e}\n{again}"));
    }
    Ok(true)
}

fn has_non_finite(v: &toml::Value) -> bool {
    match v {
        toml::Value::Float(f) => !f.is_finite(),
        toml::Value::Array(a) => a.iter().any(has_non_finite),
        toml::Value::Table(t) => t.values().any(has_non_finite),
        _ => false,
    }
}

pub struct Report {
    pub target: Target,
    pub seed: u64,
    pub count: u64,
    pub ok: u64,
    pub errors: u64,
    pub failures: Vec<String>,
    pub slowest: (Duration, u64),
    pub elapsed: Duration,
}

thread_local! {
    static PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Record panics of fuzzed inputs instead of printing them (other threads print as usual).
fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) {
                let loc = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                PANIC.with(|p| *p.borrow_mut() = Some(format!("panic: {msg}{loc}")));
            } else {
                prev(info);
            }
        }));
    });
}

/// Where failing inputs go: `target/fuzz-failures/`.
pub fn failure_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    target.join("fuzz-failures")
}

/// Run inputs `first..first + count` of `seed` against `target`.
pub fn run(target: Target, seed: u64, first: u64, count: u64, progress: bool) -> Report {
    install_hook();
    let c = corpus();
    let start = Instant::now();
    let mut rep = Report {
        target,
        seed,
        count,
        ok: 0,
        errors: 0,
        failures: Vec::new(),
        slowest: (Duration::ZERO, 0),
        elapsed: Duration::ZERO,
    };
    for i in first..first + count {
        let mut rng = Rng::new(seed, i);
        let t0 = Instant::now();
        let (data, what, result) = match target {
            Target::Trace => {
                let (data, cfg) = trace_input(&mut rng, &c);
                let small = 1 + rng.below(64);
                QUIET.with(|q| q.set(true));
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| check_trace(&data, &cfg, small)));
                QUIET.with(|q| q.set(false));
                let what = format!("{}\n# buffer {small}", serde_json::to_string(&cfg).unwrap_or_default());
                (data, what, r)
            }
            Target::FioJob => {
                let (data, section, drive) = fio_input(&mut rng, &c.fio);
                QUIET.with(|q| q.set(true));
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| check_fio_job(&data, section.as_deref(), drive)));
                QUIET.with(|q| q.set(false));
                (data, format!("section {section:?}, drive {drive} bytes"), r)
            }
            Target::Config => {
                let (data, json) = config_input(&mut rng, &c);
                QUIET.with(|q| q.set(true));
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| check_config(&data, json)));
                QUIET.with(|q| q.set(false));
                (data, if json { "json" } else { "toml" }.to_string(), r)
            }
        };
        let dt = t0.elapsed();
        if dt > rep.slowest.0 {
            rep.slowest = (dt, i);
        }
        let failure = match result {
            Ok(Ok(true)) => {
                rep.ok += 1;
                None
            }
            Ok(Ok(false)) => {
                rep.errors += 1;
                None
            }
            Ok(Err(why)) => Some(why),
            Err(_) => Some(PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panic".into())),
        };
        if let Some(why) = failure {
            let dir = failure_dir();
            let _ = std::fs::create_dir_all(&dir);
            let base = dir.join(format!("{}-seed{seed}-{i}", target.name()));
            let _ = std::fs::write(base.with_extension("bin"), &data);
            let _ = std::fs::write(base.with_extension("txt"), format!("{why}\n# options: {what}\n"));
            rep.failures.push(format!("input {i}: {why} (saved as {})", base.with_extension("bin").display()));
        }
        if progress && (i - first + 1) % 100_000 == 0 {
            eprintln!(
                "{} {} inputs, {} failures, {:.0?}",
                target.name(),
                i - first + 1,
                rep.failures.len(),
                start.elapsed()
            );
        }
    }
    rep.elapsed = start.elapsed();
    rep
}
