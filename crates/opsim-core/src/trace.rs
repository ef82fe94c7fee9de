//! Block-trace readers: one record at a time from a file that may be gzip- or
//! zstd-compressed (detected from the magic bytes), never the whole trace in memory.
//!
//! Layouts (docs/workloads.md names the source of each):
//! - `msr`: MSR Cambridge / SNIA IOTTA CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//!   ResponseTime`; Windows filetime (100 ns ticks), offsets and sizes in bytes.
//! - `blkparse`: blkparse's default text output `maj,min cpu seq time pid action rwbs sector +
//!   blocks [process]`; time in seconds, sectors of 512 bytes; one action is replayed (`D` by default).
//! - `fio-iolog`: fio iolog version 2 (`file action [offset length]`, `wait` = ms since start)
//!   and version 3 (`time_us file action [offset length]`).
//! - `disksim` / `mqsim`: ASCII `time device block size flags`, blocks of 512 bytes, flags
//!   bit 0 = read; time in milliseconds (DiskSim) or nanoseconds (MQSim).
//! - `spc`: SPC / UMass CSV `ASU,LBA,Size,Opcode,Timestamp[,...]`, LBA in 512-byte blocks,
//!   size in bytes, opcode r/w, time in seconds.
//! - `columns`: any delimited text, described by a column map (`time=0:ms,op=3,offset=4:bytes,...`).

use crate::error::{Error, ErrorKind, Result};
use crate::op::OpKind;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// Detect fio iolog, blkparse, MSR and SPC from the first lines.
    #[default]
    Auto,
    Msr,
    Blkparse,
    FioIolog,
    Disksim,
    Mqsim,
    Spc,
    Columns,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Spc => "spc",
            TraceFormat::Columns => "columns",
        }
    }
}

/// What to do with a request past the end of the simulated drive.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Remap {
    /// Stop with an error naming the line.
    #[default]
    Error,
    /// Offsets modulo the drive's size.
    Wrap,
    /// Offsets scaled by drive size / trace span (a pre-pass finds the span).
    Scale,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// As fast as possible (closed loop at the configured queue depth).
    #[default]
    Afap,
    /// At the trace's timestamps (divided by `speed`), open loop.
    Trace,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub path: String,
    /// Polled once per line by the reader (Ctrl-C through the binding); not a setting.
    #[serde(skip)]
    pub interrupt: crate::interrupt::Interrupt,
    #[serde(default)]
    pub format: TraceFormat,
    /// Keep only this device / volume (MSR disk number or host_disk, blkparse maj,min, fio
    /// file name, DiskSim/MQSim device number, SPC ASU, the `device` column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default)]
    pub remap: Remap,
    /// Start again from the beginning when the trace ends (else the run ends there).
    #[serde(default)]
    pub repeat: bool,
    #[serde(default)]
    pub timing: Timing,
    /// Trace-time replay speed-up (2 = twice as fast).
    #[serde(default = "one")]
    pub speed: f64,
    /// Skip and count malformed lines instead of stopping at the first.
    #[serde(default)]
    pub skip_bad: bool,
    /// `columns` format: `time=0:ms,op=3,offset=4:bytes,size=5:bytes,device=2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<String>,
    /// `columns` format: field delimiter (default: comma if the line has one, else whitespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// Lines to skip at the top (headers).
    #[serde(default)]
    pub skip_lines: u64,
    /// `blkparse`: the action replayed (Q, G, I, D or C; default D, issued to the device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

impl TraceConfig {
    pub fn new(path: &str) -> Self {
        TraceConfig {
            path: path.to_owned(),
            interrupt: Default::default(),
            format: TraceFormat::Auto,
            device: None,
            remap: Remap::Error,
            repeat: false,
            timing: Timing::Afap,
            speed: 1.0,
            skip_bad: false,
            columns: None,
            delimiter: None,
            skip_lines: 0,
            action: None,
        }
    }
}

/// One request: time from the first record, kind, byte offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub t_ns: u64,
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
}

fn trace_err(path: &str, line: u64, msg: impl Into<String>) -> Error {
    let key = if line > 0 { format!("{path}:{line}") } else { path.to_owned() };
    Error::new(ErrorKind::Trace, Some(&key), msg)
}

// ------------------------------------------------------------------ byte-level parsing

/// Fields split on `delim`, or on runs of blanks when `None`.
struct Fields<'a> {
    s: &'a [u8],
    pos: usize,
    delim: Option<u8>,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        match self.delim {
            Some(d) => {
                if self.pos > s.len() {
                    return None;
                }
                let start = self.pos;
                let end = s[start..].iter().position(|&c| c == d).map(|i| start + i).unwrap_or(s.len());
                self.pos = end + 1;
                Some(trim(&s[start..end]))
            }
            None => {
                let mut i = self.pos;
                while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
                    i += 1;
                }
                if i >= s.len() {
                    self.pos = i;
                    return None;
                }
                let start = i;
                while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
                    i += 1;
                }
                self.pos = i;
                Some(&s[start..i])
            }
        }
    }
}

/// The value of eight ASCII digits (little-endian in `chunk`), or None if any is not a digit.
#[inline(always)]
fn eight_digits(chunk: u64) -> Option<u64> {
    const HI: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZERO: u64 = 0x3030_3030_3030_3030;
    if chunk & HI != ZERO || (chunk.wrapping_add(0x0606_0606_0606_0606) & HI) != ZERO {
        return None;
    }
    let v = chunk - ZERO;
    let v = (v.wrapping_mul(10)).wrapping_add(v >> 8); // pairs: d0d1, d2d3, ...
    let v = ((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32))
        + ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some(v)
}

/// A left-to-right scanner over one line: fields and numbers in a single pass.
struct Cur<'a> {
    s: &'a [u8],
    i: usize,
}

#[inline(always)]
fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

impl<'a> Cur<'a> {
    fn new(s: &'a [u8]) -> Self {
        Cur { s, i: 0 }
    }

    #[inline(always)]
    fn skip_blanks(&mut self) {
        while self.i < self.s.len() && blank(self.s[self.i]) {
            self.i += 1;
        }
    }

    /// The next field: up to `delim` (consumed; blanks around it trimmed), or the next run
    /// of non-blanks (`None`).  Fields are short: a plain byte loop beats a vector search.
    #[inline]
    fn field(&mut self, delim: Option<u8>) -> Option<&'a [u8]> {
        let s = self.s;
        match delim {
            Some(d) => {
                if self.i > s.len() {
                    return None;
                }
                let st = self.i;
                let mut end = st;
                while end < s.len() && s[end] != d {
                    end += 1;
                }
                self.i = end + 1;
                let f = &s[st..end];
                Some(
                    if f.first().is_some_and(|&c| blank(c) || c == b'"')
                        || f.last().is_some_and(|&c| blank(c) || c == b'"')
                    {
                        trim(f)
                    } else {
                        f
                    },
                )
            }
            None => {
                self.skip_blanks();
                if self.i >= s.len() {
                    return None;
                }
                let st = self.i;
                while self.i < s.len() && !blank(s[self.i]) {
                    self.i += 1;
                }
                Some(&s[st..self.i])
            }
        }
    }

    fn need(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<&'a [u8], String> {
        self.field(delim).ok_or_else(|| format!("missing field: {what}"))
    }

    /// An unsigned integer field; on failure the error quotes the whole field.
    #[inline(always)]
    fn uint(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<u64, String> {
        match self.uint_fast(delim) {
            Some(v) => Ok(v),
            None => self.uint_slow(delim, what),
        }
    }

    /// Digits right up to the delimiter (or a blank / the end), at most 19 of them: the
    /// common case, eight digits at a time (SWAR).
    #[inline(always)]
    fn uint_fast(&mut self, delim: Option<u8>) -> Option<u64> {
        let s = self.s;
        let st = self.i;
        let mut i = st;
        let mut v: u64 = 0;
        while i + 8 <= s.len() {
            let chunk = u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
            let Some(x) = eight_digits(chunk) else { break };
            v = v.wrapping_mul(100_000_000).wrapping_add(x);
            i += 8;
        }
        while i < s.len() {
            let d = s[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        if i == st || i - st > 19 {
            return None;
        }
        if i < s.len() {
            match delim {
                Some(d) if s[i] == d => i += 1,
                None if blank(s[i]) => {}
                _ => return None,
            }
        }
        self.i = i;
        Some(v)
    }

    /// The whole field, blanks trimmed, checked (20-digit values, stray characters).
    #[cold]
    #[inline(never)]
    fn uint_slow(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<u64, String> {
        let f = trim(self.field(delim).unwrap_or(b""));
        match uint(f) {
            Some(v) => Ok(v),
            None if f.is_empty() => Err(format!("missing field: {what}")),
            None => Err(format!("{what} \"{}\" is not a non-negative integer", text(f))),
        }
    }

    /// A decimal time field in `unit_ns` units, as whole nanoseconds.
    fn time(&mut self, delim: Option<u8>, unit_ns: u64, what: &str) -> std::result::Result<u64, String> {
        let f = self.need(delim, what)?;
        decimal_ns(f, unit_ns).ok_or_else(|| format!("{what} \"{}\" is not a valid time", text(f)))
    }
}

fn fields(s: &[u8], delim: Option<u8>) -> Fields<'_> {
    Fields { s, pos: 0, delim }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'"', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'"'] = s {
        s = rest;
    }
    s
}

#[inline]
fn uint(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// A non-negative decimal (`12`, `0.000123`, `1.5e3`) times `unit_ns`, in whole nanoseconds.
fn decimal_ns(s: &[u8], unit_ns: u64) -> Option<u64> {
    if s.iter().any(|&c| c == b'e' || c == b'E') {
        let v: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
        if !(v >= 0.0 && v.is_finite()) {
            return None;
        }
        let ns = v * unit_ns as f64;
        return (ns < 1.8e19).then_some(ns.round() as u64);
    }
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[..0]),
    };
    let i = if int.is_empty() { 0 } else { uint(int)? };
    let mut ns = (i as u128) * unit_ns as u128;
    if !frac.is_empty() {
        let digits = &frac[..frac.len().min(18)];
        let f = uint(digits)? as u128;
        if frac[digits.len()..].iter().any(|c| !c.is_ascii_digit()) {
            return None;
        }
        ns += (f * unit_ns as u128 + 10u128.pow(digits.len() as u32) / 2) / 10u128.pow(digits.len() as u32);
    }
    u64::try_from(ns).ok()
}

fn text(s: &[u8]) -> String {
    crate::quote::echo_bytes(s)
}

// ------------------------------------------------------------------ column maps

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpCode {
    /// r/R..., w/W..., t/T/d/D... (trim, discard)
    Letter,
    /// bit 0: 1 = read, 0 = write (DiskSim flags, MQSim type)
    Flag,
}

#[derive(Clone, Debug)]
struct Columns {
    time: Option<(usize, u64)>,
    op: (usize, OpCode),
    offset: (usize, u64),
    size: (usize, u64),
    device: Option<usize>,
    delim: Option<Option<u8>>,
    /// Time values are Windows filetime (absolute); relative otherwise.
    min_fields: usize,
}

fn unit_bytes(u: &str) -> Option<u64> {
    Some(match u {
        "bytes" | "b" => 1,
        "sectors" | "512" => 512,
        "kib" | "k" => 1024,
        "4k" | "pages" => 4096,
        _ => return None,
    })
}

fn unit_time(u: &str) -> Option<u64> {
    Some(match u {
        "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" => 1_000,
        "ns" => 1,
        "filetime" => 100,
        _ => return None,
    })
}

/// The most columns a column map may name (0-based indices below this).
pub const MAX_COLUMNS: usize = 64;

fn parse_columns(spec: &str, delimiter: Option<&str>) -> Result<Columns> {
    let key = "workload.trace.columns";
    let echo = crate::quote::echo;
    let mut time = None;
    let mut op = None;
    let mut offset = None;
    let mut size = None;
    let mut device = None;
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, rest) = item
            .split_once('=')
            .ok_or_else(|| Error::config(key, format!("\"{}\" is not name=column[:unit]", echo(item))))?;
        let (col, unit) = match rest.split_once(':') {
            Some((c, u)) => (c, Some(u.trim().to_ascii_lowercase())),
            None => (rest, None),
        };
        let name_key = format!("{key}.{}", echo(name.trim()));
        let col: usize = match col.trim().parse::<u64>() {
            Ok(c) if c < MAX_COLUMNS as u64 => c as usize,
            Ok(c) => {
                return Err(Error::config(
                    &name_key,
                    format!("column {c} is out of range; expected a 0-based index below {MAX_COLUMNS}"),
                ))
            }
            Err(_) => {
                return Err(Error::config(&name_key, format!("\"{}\": column must be a 0-based index", echo(item))))
            }
        };
        let bad_unit =
            |what: &str| Error::config(&name_key, format!("\"{}\": unknown unit; expected one of {what}", echo(item)));
        match name.trim() {
            "time" => {
                let u = unit.as_deref().unwrap_or("s");
                time = Some((col, unit_time(u).ok_or_else(|| bad_unit("s, ms, us, ns, filetime"))?));
            }
            "op" => {
                let u = match unit.as_deref() {
                    None | Some("letter") => OpCode::Letter,
                    Some("flag") => OpCode::Flag,
                    _ => return Err(bad_unit("letter (r/w/t), flag (bit 0 = read)")),
                };
                op = Some((col, u));
            }
            "offset" | "size" => {
                let u = unit.as_deref().unwrap_or("bytes");
                let b = unit_bytes(u).ok_or_else(|| bad_unit("bytes, sectors, kib, 4k"))?;
                if name.trim() == "offset" {
                    offset = Some((col, b));
                } else {
                    size = Some((col, b));
                }
            }
            "device" => device = Some(col),
            other => {
                return Err(Error::config(
                    key,
                    format!("unknown column name \"{}\"; expected time, op, offset, size, device", echo(other)),
                ))
            }
        }
    }
    let op = op.ok_or_else(|| Error::config(key, "needs an op column (op=N)"))?;
    let offset = offset.ok_or_else(|| Error::config(key, "needs an offset column (offset=N[:unit])"))?;
    let size = size.ok_or_else(|| Error::config(key, "needs a size column (size=N[:unit])"))?;
    let delim = match delimiter {
        None => None,
        Some(d) if d == " " || d.eq_ignore_ascii_case("whitespace") => Some(None),
        Some("\\t") | Some("\t") => Some(Some(b'\t')),
        Some(d) if d.len() == 1 => Some(Some(d.as_bytes()[0])),
        Some(d) => {
            return Err(Error::config(
                "workload.trace.delimiter",
                format!("\"{}\" must be one character (or \"whitespace\")", echo(d)),
            ))
        }
    };
    let min_fields =
        [Some(op.0), Some(offset.0), Some(size.0), time.map(|t| t.0), device].iter().flatten().max().unwrap() + 1;
    Ok(Columns { time, op, offset, size, device, delim, min_fields })
}

// ------------------------------------------------------------------ parsers

#[derive(Clone, Debug)]
enum Parser {
    Msr,
    Blkparse { action: u8 },
    Fio { version: u8, clock_ns: u64 },
    Ascii { unit_ns: u64 },
    Spc,
    Columns(Columns),
}

/// Ok(None): not a request line (header, other action, file action, other device).
type Parsed = std::result::Result<Option<(u64, Record)>, String>;

fn letter_op(s: &[u8]) -> Option<OpKind> {
    match s.first()? {
        b'r' | b'R' => Some(OpKind::Read),
        b'w' | b'W' => Some(OpKind::Write),
        b't' | b'T' | b'd' | b'D' => Some(OpKind::Trim),
        _ => None,
    }
}

fn num(s: &[u8], what: &str) -> std::result::Result<u64, String> {
    uint(s).ok_or_else(|| format!("{what} \"{}\" is not a non-negative integer", text(s)))
}

fn time_of(s: &[u8], unit_ns: u64, what: &str) -> std::result::Result<u64, String> {
    decimal_ns(s, unit_ns).ok_or_else(|| format!("{what} \"{}\" is not a valid time", text(s)))
}

fn scaled(v: u64, unit: u64, what: &str) -> std::result::Result<u64, String> {
    v.checked_mul(unit).ok_or_else(|| format!("{what} {v} is too large"))
}

impl Parser {
    /// Parse one line into (absolute time in ns, record with t_ns unset).
    fn parse(&mut self, line: &[u8], dev: Option<&[u8]>) -> Parsed {
        let rec = |t: u64, kind: OpKind, offset: u64, len: u64| Ok(Some((t, Record { t_ns: 0, kind, offset, len })));
        match self {
            Parser::Msr => {
                const C: Option<u8> = Some(b',');
                let mut f = Cur::new(line);
                let t = match f.uint(C, "Timestamp") {
                    Ok(v) => scaled(v, 100, "Timestamp")?,
                    Err(_) if line.starts_with(b"Timestamp") => return Ok(None), // header
                    Err(e) => return Err(e),
                };
                let host = f.need(C, "Hostname")?;
                let disk = f.need(C, "DiskNumber")?;
                if let Some(d) = dev {
                    let joined = d.len() == host.len() + 1 + disk.len()
                        && d.starts_with(host)
                        && d.ends_with(disk)
                        && d[host.len()] == b'_';
                    if d != disk && !joined {
                        return Ok(None);
                    }
                }
                let ty = f.need(C, "Type")?;
                let kind = match ty {
                    b"Write" | b"write" => OpKind::Write,
                    b"Read" | b"read" => OpKind::Read,
                    _ => return Err(format!("Type \"{}\" is not Read or Write", text(ty))),
                };
                let off = f.uint(C, "Offset")?;
                let len = f.uint(C, "Size")?;
                rec(t, kind, off, len)
            }
            Parser::Blkparse { action } => {
                let mut f = Cur::new(line);
                let Some(devf) = f.field(None) else { return Ok(None) };
                // event lines start with "maj,min"; summaries and headers do not
                let Some(comma) = devf.iter().position(|&c| c == b',') else { return Ok(None) };
                if uint(&devf[..comma]).is_none() || uint(&devf[comma + 1..]).is_none() {
                    return Ok(None);
                }
                f.need(None, "cpu")?;
                f.need(None, "sequence")?;
                let t = f.time(None, 1_000_000_000, "time")?;
                f.need(None, "pid")?;
                let act = f.need(None, "action")?;
                if act.len() != 1 || act[0] != *action {
                    return Ok(None);
                }
                if dev.is_some_and(|d| d != devf) {
                    return Ok(None);
                }
                let rwbs = f.need(None, "RWBS")?;
                let kind = if rwbs.contains(&b'D') {
                    OpKind::Trim
                } else if rwbs.contains(&b'W') {
                    OpKind::Write
                } else if rwbs.contains(&b'R') {
                    OpKind::Read
                } else {
                    return Ok(None); // flush or no data
                };
                f.skip_blanks();
                if f.i >= line.len() || line[f.i] == b'[' {
                    return Ok(None); // no range (a flush)
                }
                let sector = f.uint(None, "sector")?;
                if f.need(None, "+")? != b"+" {
                    return Err("expected \"sector + blocks\"".into());
                }
                let n = f.uint(None, "blocks")?;
                if n == 0 {
                    return Ok(None);
                }
                rec(t, kind, scaled(sector, 512, "sector")?, scaled(n, 512, "blocks")?)
            }
            Parser::Fio { version, clock_ns } => {
                let mut f = Cur::new(line);
                let t = if *version == 3 { f.time(None, 1_000, "timestamp")? } else { *clock_ns };
                let file = f.need(None, "file name")?;
                let act = f.need(None, "action")?;
                let kind = match act {
                    b"read" => OpKind::Read,
                    b"write" => OpKind::Write,
                    b"trim" => OpKind::Trim,
                    b"wait" if *version == 2 => {
                        let ms = f.uint(None, "wait time")?;
                        *clock_ns = (*clock_ns).max(scaled(ms, 1_000_000, "wait time")?);
                        return Ok(None);
                    }
                    b"add" | b"open" | b"close" | b"sync" | b"datasync" | b"sync_file_range" | b"wait" => {
                        return Ok(None)
                    }
                    _ => return Err(format!("unknown action \"{}\"", text(act))),
                };
                if dev.is_some_and(|d| d != file) {
                    return Ok(None);
                }
                let off = f.uint(None, "offset")?;
                let len = f.uint(None, "length")?;
                rec(t, kind, off, len)
            }
            Parser::Ascii { unit_ns } => {
                let mut f = Cur::new(line);
                let t = f.time(None, *unit_ns, "time")?;
                let d = f.need(None, "device")?;
                if dev.is_some_and(|x| x != d) {
                    return Ok(None);
                }
                let blk = f.uint(None, "block")?;
                let n = f.uint(None, "size")?;
                let flags = f.uint(None, "flags")?;
                let kind = if flags & 1 == 1 { OpKind::Read } else { OpKind::Write };
                rec(t, kind, scaled(blk, 512, "block")?, scaled(n, 512, "size")?)
            }
            Parser::Spc => {
                const C: Option<u8> = Some(b',');
                let mut f = Cur::new(line);
                let asu = f.need(C, "ASU")?;
                if uint(asu).is_none() {
                    if asu.eq_ignore_ascii_case(b"ASU") {
                        return Ok(None); // header
                    }
                    return Err(format!("ASU \"{}\" is not a non-negative integer", text(asu)));
                }
                if dev.is_some_and(|d| d != asu) {
                    return Ok(None);
                }
                let lba = f.uint(C, "LBA")?;
                let size = f.uint(C, "Size")?;
                let opc = f.need(C, "Opcode")?;
                let kind = match opc {
                    b"r" | b"R" => OpKind::Read,
                    b"w" | b"W" => OpKind::Write,
                    _ => return Err(format!("Opcode \"{}\" is not r or w", text(opc))),
                };
                let t = f.time(C, 1_000_000_000, "Timestamp")?;
                rec(t, kind, scaled(lba, 512, "LBA")?, size)
            }
            Parser::Columns(c) => {
                let delim = c.delim.unwrap_or_else(|| if line.contains(&b',') { Some(b',') } else { None });
                let mut v: [&[u8]; MAX_COLUMNS] = [&[]; MAX_COLUMNS];
                let mut n = 0;
                for x in fields(line, delim) {
                    if n == v.len() {
                        break;
                    }
                    v[n] = x;
                    n += 1;
                    if n >= c.min_fields {
                        break;
                    }
                }
                if n < c.min_fields {
                    return Err(format!("{n} fields; the column map needs {}", c.min_fields));
                }
                if let (Some(d), Some(i)) = (dev, c.device) {
                    if d != v[i] {
                        return Ok(None);
                    }
                }
                let kind = match c.op.1 {
                    OpCode::Letter => {
                        letter_op(v[c.op.0]).ok_or_else(|| format!("op \"{}\" is not r, w or t", text(v[c.op.0])))?
                    }
                    OpCode::Flag => {
                        if num(v[c.op.0], "op")? & 1 == 1 {
                            OpKind::Read
                        } else {
                            OpKind::Write
                        }
                    }
                };
                let t = match c.time {
                    Some((i, unit)) => time_of(v[i], unit, "time")?,
                    None => 0,
                };
                let off = scaled(num(v[c.offset.0], "offset")?, c.offset.1, "offset")?;
                let len = scaled(num(v[c.size.0], "size")?, c.size.1, "size")?;
                rec(t, kind, off, len)
            }
        }
    }
}

// ------------------------------------------------------------------ sources

const GZ: [u8; 2] = [0x1f, 0x8b];
const ZST: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The longest line a trace may hold (after decompression): longer means the file is not a
/// text trace, and the reader never holds more than this of one line in memory.
pub const MAX_LINE: usize = 64 << 10;

/// The largest zstd window accepted (the history the decoder keeps in memory): levels up to
/// 19 use at most 8 MiB, `--long` and `--ultra` more.
const MAX_ZSTD_WINDOW: u64 = 32 << 20;

/// How much of the (decompressed) start of the trace format detection looks at.
const HEAD_BYTES: usize = 64 << 10;

/// Where the trace's bytes come from.
#[derive(Clone)]
enum Origin {
    /// The file at `cfg.path` (a regular file, a pipe, a FIFO, a device...).
    Path,
    /// Bytes in memory (tests, the fuzz harness), read through buffers of the given size;
    /// `cfg.path` only names them in messages.
    Bytes(std::sync::Arc<[u8]>, usize),
}

/// `Arc<[u8]>` as a byte slice, for a `Cursor` that owns its bytes.
struct Shared(std::sync::Arc<[u8]>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

type Source = Box<dyn BufRead + Send>;

fn not_rereadable(path: &str, what: &str) -> Error {
    Error::config(
        what,
        format!("needs to read the trace twice, and {path} is a pipe or device that reads once; save it to a file"),
    )
}

fn line_too_long(path: &str, line: u64) -> Error {
    trace_err(path, line, format!("line longer than {} KiB: not a text trace (or a corrupt one)", MAX_LINE >> 10))
}

/// Open the trace once, as a stream: the raw bytes, whether they can be read again (a
/// regular file or memory; not a pipe), and the decompressor the first bytes call for.
/// Nothing here seeks or asks for the size, so a pipe or FIFO reads like a file.
fn open_source(path: &str, origin: &Origin) -> Result<(Source, &'static str, bool)> {
    let (raw, again): (Box<dyn Read + Send>, bool) = match origin {
        Origin::Bytes(b, _) => (Box::new(std::io::Cursor::new(Shared(b.clone()))), true),
        Origin::Path => {
            let file = std::fs::File::open(path).map_err(|e| trace_err(path, 0, format!("cannot open: {e}")))?;
            let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
            (Box::new(file), regular)
        }
    };
    let (raw_cap, dec_cap) = match origin {
        Origin::Bytes(_, cap) => (*cap, *cap),
        Origin::Path => (1 << 18, 1 << 16),
    };
    let mut raw = BufReader::with_capacity(raw_cap, raw);
    // the magic bytes, however few a pipe hands over at a time; then put them back in front
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < magic.len() {
        match raw.read(&mut magic[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(trace_err(path, 0, format!("cannot read: {e}"))),
        }
    }
    let head = &magic[..n];
    let stream = std::io::Cursor::new(head.to_vec()).chain(raw);
    let (src, compression): (Source, &'static str) = if head.starts_with(&GZ) {
        let dec = flate2::bufread::MultiGzDecoder::new(stream);
        (Box::new(BufReader::with_capacity(dec_cap, dec)), "gzip")
    } else if head.starts_with(&ZST) {
        let dec = ruzstd::decoding::StreamingDecoder::new_with_max_window_size(stream, MAX_ZSTD_WINDOW).map_err(|e| {
            let e = e.to_string();
            if e.contains("window_size is too big") {
                trace_err(path, 0, format!(
                    "the zstd stream needs a window of more than {} MiB (made with --long or --ultra?); recompress it without them",
                    MAX_ZSTD_WINDOW >> 20
                ))
            } else {
                trace_err(path, 0, format!("not a valid zstd stream: {}", crate::quote::echo(&e)))
            }
        })?;
        (Box::new(BufReader::with_capacity(dec_cap, dec)), "zstd")
    } else {
        (Box::new(stream), "none")
    };
    Ok((src, compression, again))
}

/// The first [`HEAD_BYTES`] of the (decompressed) stream, and the stream with them put back.
fn read_head(path: &str, src: Source) -> Result<(Vec<u8>, Source)> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let mut take = src.take(HEAD_BYTES as u64);
    take.read_to_end(&mut head).map_err(|e| trace_err(path, 1, format!("cannot read: {e}")))?;
    Ok((head, take.into_inner()))
}

/// Guess the format from the first request-looking lines of `head`.
fn detect(path: &str, head: &[u8], rereadable: bool) -> Result<TraceFormat> {
    if head.len() >= HEAD_BYTES && memchr::memchr(b'\n', head).is_none() {
        return Err(line_too_long(path, 1));
    }
    let mut seen = false;
    for raw in head.split(|&c| c == b'\n').take(20) {
        let line = trim(strip_eol(raw));
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        seen = true;
        if line.starts_with(b"fio version 2 iolog") || line.starts_with(b"fio version 3 iolog") {
            return Ok(TraceFormat::FioIolog);
        }
        let csv: Vec<&[u8]> = fields(line, Some(b',')).take(8).collect();
        if csv.len() >= 7 && (csv[3].eq_ignore_ascii_case(b"Read") || csv[3].eq_ignore_ascii_case(b"Write")) {
            return Ok(TraceFormat::Msr);
        }
        if csv.len() >= 5 && matches!(csv[3], b"r" | b"w" | b"R" | b"W") && uint(csv[0]).is_some() {
            return Ok(TraceFormat::Spc);
        }
        let ws: Vec<&[u8]> = fields(line, None).take(8).collect();
        if ws.len() >= 7 {
            if let Some(c) = ws[0].iter().position(|&b| b == b',') {
                if uint(&ws[0][..c]).is_some() && uint(&ws[0][c + 1..]).is_some() {
                    return Ok(TraceFormat::Blkparse);
                }
            }
        }
    }
    if head.is_empty() && !rereadable {
        return Err(trace_err(path, 0, "holds no requests (nothing came through; a pipe can be read only once)"));
    }
    if head.is_empty() {
        return Err(trace_err(path, 0, "holds no requests (the file is empty)"));
    }
    if !seen {
        return Err(trace_err(
            path,
            0,
            "cannot tell the trace format: the first lines are blank or comments; set workload.trace.format",
        ));
    }
    Err(trace_err(
        path,
        0,
        "cannot tell the trace format from its first lines; set workload.trace.format (msr, blkparse, fio-iolog, \
         disksim, mqsim, spc, columns); DiskSim and MQSim share one layout and must be named",
    ))
}

fn strip_eol(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = s {
        s = rest;
    }
    s
}

/// A streaming reader of one trace file.
pub struct Reader {
    cfg: TraceConfig,
    pub format: TraceFormat,
    pub compression: &'static str,
    src: Source,
    origin: Origin,
    /// The source can be read again (a regular file or memory): `repeat`, `remap = "scale"`.
    rereadable: bool,
    parser: Parser,
    initial: Parser,
    line: u64,
    buf: Vec<u8>,
    first_ts: Option<u64>,
    /// Malformed lines skipped (with `skip_bad`).
    pub skipped_bad: u64,
    /// First malformed line skipped, and why.
    pub first_bad: Option<(u64, String)>,
    pub records: u64,
    /// blkparse events of other actions (to explain an empty result).
    pub other_lines: u64,
    device: Option<Vec<u8>>,
}

impl Reader {
    /// A reader of the file at `cfg.path` (a regular file, a pipe, a FIFO...).
    pub fn open(cfg: &TraceConfig) -> Result<Reader> {
        Self::open_origin(cfg, Origin::Path)
    }

    /// A reader of a trace held in memory (`cfg.path` only names it in messages).
    pub fn from_bytes(cfg: &TraceConfig, bytes: impl Into<std::sync::Arc<[u8]>>) -> Result<Reader> {
        Self::open_origin(cfg, Origin::Bytes(bytes.into(), 1 << 18))
    }

    /// [`Reader::from_bytes`] reading through buffers of `buffer` bytes (at least 1): a
    /// small one puts lines across buffer ends, for tests of the line splitting.
    #[doc(hidden)]
    pub fn from_bytes_buffered(
        cfg: &TraceConfig,
        bytes: impl Into<std::sync::Arc<[u8]>>,
        buffer: usize,
    ) -> Result<Reader> {
        Self::open_origin(cfg, Origin::Bytes(bytes.into(), buffer.max(1)))
    }

    fn open_origin(cfg: &TraceConfig, origin: Origin) -> Result<Reader> {
        let path = cfg.path.as_str();
        if !(cfg.speed > 0.0 && cfg.speed.is_finite()) {
            return Err(Error::config("workload.trace.speed", format!("{} must be a positive number", cfg.speed)));
        }
        let (mut src, compression, rereadable) = open_source(path, &origin)?;
        let format = match cfg.format {
            TraceFormat::Auto => {
                let (head, rest) = read_head(path, src)?;
                let format = detect(path, &head, rereadable)?;
                src = Box::new(std::io::Cursor::new(head).chain(rest));
                format
            }
            f => f,
        };
        if cfg.columns.is_some() && format != TraceFormat::Columns {
            return Err(Error::config(
                "workload.trace.columns",
                format!("is only used with format = \"columns\", not \"{}\"", format.name()),
            ));
        }
        if cfg.action.is_some() && format != TraceFormat::Blkparse {
            return Err(Error::config("workload.trace.action", "is only used with format = \"blkparse\""));
        }
        let parser = match format {
            TraceFormat::Msr => Parser::Msr,
            TraceFormat::Blkparse => {
                let a = cfg.action.as_deref().unwrap_or("D");
                if a.len() != 1 || !"QGIDCMFXAB".contains(a) {
                    return Err(Error::config(
                        "workload.trace.action",
                        format!("\"{}\" is not a blkparse action letter (Q, G, I, D, C...)", crate::quote::echo(a)),
                    ));
                }
                Parser::Blkparse { action: a.as_bytes()[0] }
            }
            TraceFormat::FioIolog => Parser::Fio { version: 0, clock_ns: 0 },
            TraceFormat::Disksim => Parser::Ascii { unit_ns: 1_000_000 },
            TraceFormat::Mqsim => Parser::Ascii { unit_ns: 1 },
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Columns => {
                let spec = cfg
                    .columns
                    .as_deref()
                    .ok_or_else(|| Error::config("workload.trace.columns", "is required with format = \"columns\""))?;
                Parser::Columns(parse_columns(spec, cfg.delimiter.as_deref())?)
            }
            TraceFormat::Auto => unreachable!(),
        };
        Ok(Reader {
            cfg: cfg.clone(),
            format,
            compression,
            src,
            origin,
            rereadable,
            initial: parser.clone(),
            parser,
            line: 0,
            buf: Vec::with_capacity(256),
            first_ts: None,
            skipped_bad: 0,
            first_bad: None,
            records: 0,
            other_lines: 0,
            device: cfg.device.as_ref().map(|d| d.as_bytes().to_vec()),
        })
    }

    pub fn path(&self) -> &str {
        &self.cfg.path
    }
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Back to the first record (for `repeat`); times restart from zero.
    pub fn rewind(&mut self) -> Result<()> {
        self.check_rereadable("workload.trace.repeat")?;
        let (src, _, _) = open_source(&self.cfg.path, &self.origin)?;
        self.src = src;
        self.parser = self.initial.clone();
        self.line = 0;
        self.first_ts = None;
        Ok(())
    }

    /// An error unless the trace can be read a second time (not a pipe): `what` needs that.
    pub fn check_rereadable(&self, what: &str) -> Result<()> {
        if self.rereadable {
            return Ok(());
        }
        Err(not_rereadable(&self.cfg.path, what))
    }

    fn bad(&mut self, msg: String) -> Result<()> {
        if self.cfg.skip_bad {
            self.skipped_bad += 1;
            if self.first_bad.is_none() {
                self.first_bad = Some((self.line, msg));
            }
            Ok(())
        } else {
            Err(trace_err(
                &self.cfg.path,
                self.line,
                format!("{msg} (set workload.trace.skip_bad to skip and count bad lines)"),
            ))
        }
    }

    /// The next request, or None at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            self.cfg.interrupt.poll()?;
            // One line, parsed in place in the read buffer when it holds the whole line.
            let (outcome, used) = {
                let avail = match self.src.fill_buf() {
                    Ok(b) => b,
                    Err(e) => return Err(self.read_error(e)),
                };
                if avail.is_empty() {
                    if self.buf.is_empty() {
                        return Ok(None);
                    }
                    // a last line without a newline
                    let line = std::mem::take(&mut self.buf);
                    self.line += 1;
                    let o = classify(&line, &mut self.parser, self.device.as_deref(), self.line <= self.cfg.skip_lines);
                    (o, 0)
                } else {
                    match memchr::memchr(b'\n', avail) {
                        Some(k) if self.buf.len() + k > MAX_LINE => {
                            return Err(line_too_long(&self.cfg.path, self.line + 1))
                        }
                        Some(k) if self.buf.is_empty() => {
                            self.line += 1;
                            (
                                classify(
                                    &avail[..k],
                                    &mut self.parser,
                                    self.device.as_deref(),
                                    self.line <= self.cfg.skip_lines,
                                ),
                                k + 1,
                            )
                        }
                        Some(k) => {
                            self.buf.extend_from_slice(&avail[..k]);
                            self.line += 1;
                            let line = std::mem::take(&mut self.buf);
                            let o = classify(
                                &line,
                                &mut self.parser,
                                self.device.as_deref(),
                                self.line <= self.cfg.skip_lines,
                            );
                            self.buf = line;
                            self.buf.clear();
                            (o, k + 1)
                        }
                        None => {
                            let n = avail.len();
                            if self.buf.len() + n > MAX_LINE {
                                return Err(line_too_long(&self.cfg.path, self.line + 1));
                            }
                            self.buf.extend_from_slice(avail);
                            self.src.consume(n);
                            continue;
                        }
                    }
                }
            };
            self.src.consume(used);
            match outcome {
                Outcome::Record(ts, mut r) => {
                    if r.len == 0 {
                        self.bad("request of size 0".into())?;
                        continue;
                    }
                    if r.offset.checked_add(r.len).is_none() {
                        self.bad("offset + size overflows".into())?;
                        continue;
                    }
                    let t0 = *self.first_ts.get_or_insert(ts);
                    r.t_ns = ts.saturating_sub(t0);
                    self.records += 1;
                    return Ok(Some(r));
                }
                Outcome::Skip => {}
                Outcome::Other => self.other_lines += 1,
                Outcome::Bad(msg) => self.bad(msg)?,
                Outcome::Fatal(msg) => return Err(trace_err(&self.cfg.path, self.line, msg)),
            }
        }
    }

    fn read_error(&self, e: std::io::Error) -> Error {
        let what = if self.compression == "none" { "I/O error" } else { "truncated or corrupt compressed data" };
        trace_err(&self.cfg.path, self.line + 1, format!("cannot read ({what}): {e}"))
    }
}

enum Outcome {
    Record(u64, Record),
    /// A blank line, a comment, a header line skipped by `skip_lines`, the iolog header.
    Skip,
    /// A line that is not a request of interest (another action, device, file action).
    Other,
    Bad(String),
    Fatal(String),
}

/// What one line holds.
#[inline]
fn classify(raw: &[u8], parser: &mut Parser, dev: Option<&[u8]>, header: bool) -> Outcome {
    if header {
        return Outcome::Skip;
    }
    let line = strip_eol(raw);
    let Some(first) = line.iter().position(|&c| !blank(c)) else { return Outcome::Skip };
    if line[first] == b'#' {
        return Outcome::Skip;
    }
    if let Parser::Fio { version, .. } = parser {
        if *version == 0 {
            return if line.starts_with(b"fio version 2 iolog") {
                *version = 2;
                Outcome::Skip
            } else if line.starts_with(b"fio version 3 iolog") {
                *version = 3;
                Outcome::Skip
            } else {
                Outcome::Fatal(
                    "not a fio iolog: the first line must be \"fio version 2 iolog\" or \"fio version 3 iolog\"".into(),
                )
            };
        }
    }
    match parser.parse(line, dev) {
        Ok(Some((ts, r))) => Outcome::Record(ts, r),
        Ok(None) => Outcome::Other,
        Err(m) => Outcome::Bad(m),
    }
}

// ------------------------------------------------------------------ summary

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KindStats {
    pub ios: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceInfo {
    pub path: String,
    pub format: &'static str,
    pub compression: &'static str,
    pub device: Option<String>,
    pub lines: u64,
    pub records: u64,
    pub read: KindStats,
    pub write: KindStats,
    pub trim: KindStats,
    pub write_fraction: f64,
    /// Lowest byte offset and highest end offset.
    pub min_offset: u64,
    pub max_end: u64,
    /// Distinct 4 KiB blocks touched (any kind) and written, in bytes; None if the span is too
    /// large to count exactly.
    pub footprint_bytes: Option<u64>,
    pub write_footprint_bytes: Option<u64>,
    pub duration_s: f64,
    /// Requests not 4 KiB aligned in offset or size.
    pub unaligned_4k: u64,
    /// (size in bytes, count), the most frequent sizes, at most 16, largest count first.
    pub top_sizes: Vec<(u64, u64)>,
    pub skipped_bad_lines: u64,
    pub first_bad_line: Option<(u64, String)>,
}

/// The 4 KiB blocks touched, as bitmaps of [`CHUNK_WORDS`] words made only where a block is
/// set, so memory follows what the trace touches, not the offsets it names.
struct BitSet {
    /// Chunk index -> (bits set in it, the bits).
    chunks: std::collections::HashMap<u64, (u64, Box<[u64; CHUNK_WORDS]>)>,
    count: u64,
    limit_chunks: usize,
    overflow: bool,
}

/// Words per chunk: 8 KiB of bits, 256 MiB of offsets.
const CHUNK_WORDS: usize = 1024;
const CHUNK_BITS: u64 = CHUNK_WORDS as u64 * 64;

impl BitSet {
    fn new(limit_bytes: usize) -> Self {
        BitSet { chunks: Default::default(), count: 0, limit_chunks: limit_bytes / (CHUNK_WORDS * 8), overflow: false }
    }
    fn set_range(&mut self, first: u64, last: u64) {
        if self.overflow {
            return;
        }
        if (last - first) / CHUNK_BITS + 1 > self.limit_chunks as u64 {
            self.overflow = true;
        }
        let mut b = first;
        while !self.overflow && b <= last {
            let (c, i) = (b / CHUNK_BITS, (b % CHUNK_BITS) as usize);
            if !self.chunks.contains_key(&c) && self.chunks.len() >= self.limit_chunks {
                self.overflow = true;
                break;
            }
            let (set, words) = self.chunks.entry(c).or_insert_with(|| (0, Box::new([0; CHUNK_WORDS])));
            let end = (last - b).min(CHUNK_BITS - 1 - i as u64) as usize + i; // last bit in this chunk
            let mut j = if *set == CHUNK_BITS { end + 1 } else { i }; // a full chunk: nothing to do
            while j <= end {
                let w = j / 64;
                let hi = if end / 64 == w { end % 64 } else { 63 };
                let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << (j % 64));
                let new = (mask & !words[w]).count_ones() as u64;
                *set += new;
                self.count += new;
                words[w] |= mask;
                j = w * 64 + hi + 1;
            }
            match b.checked_add((end - i) as u64 + 1) {
                Some(n) => b = n,
                None => break,
            }
        }
        if self.overflow {
            self.chunks = Default::default();
        }
    }
    fn bytes(&self) -> Option<u64> {
        (!self.overflow).then_some(self.count * 4096)
    }
}

/// Read the whole trace (streaming) and summarise it.
pub fn info(cfg: &TraceConfig) -> Result<TraceInfo> {
    summarise(Reader::open(cfg)?, u64::MAX)
}

/// Summarise the first `max_records` requests of `r` (all of them: `u64::MAX`).  Memory
/// stays bounded: the size histogram keeps 4096 sizes, the footprints 32 MiB of bits each.
pub fn summarise(mut r: Reader, max_records: u64) -> Result<TraceInfo> {
    let (mut rd, mut wr, mut tr) =
        (KindStats { ios: 0, bytes: 0 }, KindStats { ios: 0, bytes: 0 }, KindStats { ios: 0, bytes: 0 });
    let (mut lo, mut hi, mut last_t) = (u64::MAX, 0u64, 0u64);
    let mut unaligned = 0;
    let mut sizes: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    // 32 MiB of bits covers 1 TiB touched exactly
    let mut touched = BitSet::new(32 << 20);
    let mut written = BitSet::new(32 << 20);
    while r.records < max_records {
        let Some(x) = r.next_record()? else { break };
        let s = match x.kind {
            OpKind::Read => &mut rd,
            OpKind::Write => &mut wr,
            OpKind::Trim => &mut tr,
        };
        s.ios += 1;
        s.bytes = s.bytes.saturating_add(x.len);
        lo = lo.min(x.offset);
        hi = hi.max(x.offset + x.len);
        last_t = last_t.max(x.t_ns);
        if x.offset % 4096 != 0 || x.len % 4096 != 0 {
            unaligned += 1;
        }
        if sizes.len() < 4096 || sizes.contains_key(&x.len) {
            *sizes.entry(x.len).or_insert(0) += 1;
        }
        let (a, b) = (x.offset / 4096, (x.offset + x.len - 1) / 4096);
        touched.set_range(a, b);
        if x.kind == OpKind::Write {
            written.set_range(a, b);
        }
    }
    if r.records == 0 {
        return Err(empty_error(&r));
    }
    let mut top: Vec<(u64, u64)> = sizes.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(16);
    let total = rd.ios + wr.ios + tr.ios;
    Ok(TraceInfo {
        path: r.cfg.path.clone(),
        format: r.format.name(),
        compression: r.compression,
        device: r.cfg.device.clone(),
        lines: r.line,
        records: r.records,
        write_fraction: wr.ios as f64 / total as f64,
        read: rd,
        write: wr,
        trim: tr,
        min_offset: lo,
        max_end: hi,
        footprint_bytes: touched.bytes(),
        write_footprint_bytes: written.bytes(),
        duration_s: last_t as f64 / 1e9,
        unaligned_4k: unaligned,
        top_sizes: top,
        skipped_bad_lines: r.skipped_bad,
        first_bad_line: r.first_bad.clone(),
    })
}

pub fn empty_error(r: &Reader) -> Error {
    let why = if r.other_lines > 0 {
        let filt = match (&r.cfg.device, r.format) {
            (Some(d), _) => format!(" for device \"{}\"", crate::quote::echo(d)),
            (None, TraceFormat::Blkparse) => {
                format!(" of action {}", r.cfg.action.as_deref().unwrap_or("D"))
            }
            _ => String::new(),
        };
        format!("holds no requests{filt} ({} other lines; check workload.trace.device / action)", r.other_lines)
    } else {
        "holds no requests (the file is empty)".to_string()
    };
    trace_err(&r.cfg.path, 0, why)
}

/// The highest end offset (bytes) of the trace's requests: the pre-pass of `remap = "scale"`.
pub fn max_end(cfg: &TraceConfig) -> Result<u64> {
    if std::fs::metadata(&cfg.path).is_ok_and(|m| !m.is_file()) {
        return Err(not_rereadable(&cfg.path, "workload.trace.remap"));
    }
    let mut r = Reader::open(cfg)?;
    r.check_rereadable("workload.trace.remap")?;
    let mut hi = 0;
    while let Some(x) = r.next_record()? {
        hi = hi.max(x.offset + x.len);
    }
    if r.records == 0 {
        return Err(empty_error(&r));
    }
    Ok(hi)
}

/// Write the trace as a fio iolog (version 2 or 3) replaying on `target`.  Returns the
/// number of requests written.  Version 3 keeps times in microseconds; version 2 keeps
/// them as `wait` lines in milliseconds.
pub fn write_fio_iolog(cfg: &TraceConfig, out: &mut dyn Write, version: u8, target: &str) -> Result<u64> {
    if version != 2 && version != 3 {
        return Err(Error::config("version", format!("{version} is not a fio iolog version (2 or 3)")));
    }
    if target.is_empty() || target.contains(char::is_whitespace) {
        return Err(Error::config(
            "target",
            format!("\"{}\" must be a file name without blanks", crate::quote::echo(target)),
        ));
    }
    let io = |e: std::io::Error| Error::new(ErrorKind::Trace, Some("output"), format!("cannot write: {e}"));
    let mut r = Reader::open(cfg)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 18, out);
    writeln!(w, "fio version {version} iolog").map_err(io)?;
    let mut n = 0u64;
    let mut last_ms = 0u64;
    let mut last_us = 0u64;
    let pre = |w: &mut dyn Write, t: u64, what: &str| -> std::io::Result<()> {
        if version == 3 {
            writeln!(w, "{t} {target} {what}")
        } else {
            writeln!(w, "{target} {what}")
        }
    };
    pre(&mut w, 0, "add").map_err(io)?;
    pre(&mut w, 0, "open").map_err(io)?;
    while let Some(x) = r.next_record()? {
        let act = match x.kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
        };
        if version == 3 {
            last_us = last_us.max(x.t_ns / 1000);
            writeln!(w, "{last_us} {target} {act} {} {}", x.offset, x.len).map_err(io)?;
        } else {
            let ms = x.t_ns / 1_000_000;
            if ms > last_ms {
                writeln!(w, "{target} wait {ms} 0").map_err(io)?; // fio reads 4 fields
                last_ms = ms;
            }
            writeln!(w, "{target} {act} {} {}", x.offset, x.len).map_err(io)?;
        }
        n += 1;
    }
    if n == 0 {
        return Err(empty_error(&r));
    }
    pre(&mut w, last_us, "close").map_err(io)?;
    w.flush().map_err(io)?;
    Ok(n)
}

/// The first `n` requests as (time ns, kind, byte offset, bytes).
pub fn head(cfg: &TraceConfig, n: usize) -> Result<Vec<(u64, &'static str, u64, u64)>> {
    let mut r = Reader::open(cfg)?;
    let mut v = Vec::new();
    while v.len() < n {
        let Some(x) = r.next_record()? else { break };
        let k = match x.kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
        };
        v.push((x.t_ns, k, x.offset, x.len));
    }
    if r.records == 0 {
        return Err(empty_error(&r));
    }
    Ok(v)
}

/// [`write_fio_iolog`] into `out_path`, atomically ([`crate::atomic::write_file`]): the
/// file appears whole, and a failed or killed conversion leaves nothing behind.
pub fn convert_to_file(cfg: &TraceConfig, out_path: &str, version: u8, target: &str) -> Result<u64> {
    let io = |e: std::io::Error| Error::config("output", format!("cannot write {out_path}: {e}"));
    crate::atomic::write_file(std::path::Path::new(out_path), io, |f| write_fio_iolog(cfg, f, version, target))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_tmp(name: &str, body: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("opsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn all(cfg: &TraceConfig) -> Result<Vec<Record>> {
        let mut r = Reader::open(cfg)?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }

    #[test]
    fn swar_digits() {
        for s in ["00000000", "12345678", "99999999", "00000042"] {
            let c = u64::from_le_bytes(s.as_bytes().try_into().unwrap());
            assert_eq!(eight_digits(c), Some(s.parse().unwrap()), "{s}");
        }
        for s in ["1234567a", "/2345678", ":2345678", "1234 678"] {
            assert_eq!(eight_digits(u64::from_le_bytes(s.as_bytes().try_into().unwrap())), None, "{s}");
        }
        let mut c = Cur::new(b"18446744073709551615,12345678901234567,7");
        assert_eq!(c.uint(Some(b','), "a"), Ok(u64::MAX));
        assert_eq!(c.uint(Some(b','), "b"), Ok(12345678901234567));
        assert_eq!(c.uint(Some(b','), "c"), Ok(7));
        assert!(Cur::new(b"18446744073709551616").uint(None, "x").is_err());
        assert!(Cur::new(b"12x4").uint(None, "x").unwrap_err().contains("\"12x4\""));
    }

    #[test]
    fn decimal_times_are_exact() {
        assert_eq!(decimal_ns(b"0.000000001", 1_000_000_000), Some(1));
        assert_eq!(decimal_ns(b"12.5", 1_000_000), Some(12_500_000));
        assert_eq!(decimal_ns(b"3", 1_000), Some(3_000));
        assert_eq!(decimal_ns(b"1.5e3", 1_000_000), Some(1_500_000_000));
        assert_eq!(decimal_ns(b"1.2.3", 1), None);
        assert_eq!(decimal_ns(b"-1", 1), None);
    }

    #[test]
    fn msr_device_filter_and_relative_time() {
        let p = write_tmp(
            "msr.csv",
            b"128166372003061629,hm,0,Read,3129794560,65536,115518\n128166372016382155,hm,1,Write,2150825984,4096,56928\n128166372026382245,hm,0,Write,8192,512,1\n",
        );
        let mut c = TraceConfig::new(&p);
        c.device = Some("hm_0".into());
        let v = all(&c).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0], Record { t_ns: 0, kind: OpKind::Read, offset: 3129794560, len: 65536 });
        assert_eq!(v[1].t_ns, (128166372026382245u64 - 128166372003061629) * 100);
    }

    #[test]
    fn bad_line_names_file_and_line() {
        let p = write_tmp(
            "bad.csv",
            b"128166372003061629,hm,0,Read,3129794560,65536,1\n128166372003061630,hm,0,Read,12x,4096,1\n",
        );
        let e = all(&TraceConfig::new(&p)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Trace);
        assert!(e.key.as_deref().unwrap().ends_with("bad.csv:2"), "{e}");
        assert!(e.message.contains("Offset"), "{e}");
        let mut c = TraceConfig::new(&p);
        c.skip_bad = true;
        let mut r = Reader::open(&c).unwrap();
        while r.next_record().unwrap().is_some() {}
        assert_eq!((r.records, r.skipped_bad), (1, 1));
    }
}
