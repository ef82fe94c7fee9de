//! One line of each trace format into a request.
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

use super::columns::{Columns, OpCode, MAX_COLUMNS};
use super::lex::{blank, decimal_ns, fields, strip_eol, text, uint, Cur};
use super::Record;
use crate::op::OpKind;

#[derive(Clone, Debug)]
pub(super) enum Parser {
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
    pub(super) fn parse(&mut self, line: &[u8], dev: Option<&[u8]>) -> Parsed {
        match self {
            Parser::Msr => parse_msr(line, dev),
            Parser::Blkparse { action } => parse_blkparse(line, dev, *action),
            Parser::Fio { version, clock_ns } => parse_fio(line, dev, *version, clock_ns),
            Parser::Ascii { unit_ns } => parse_ascii(line, dev, *unit_ns),
            Parser::Spc => parse_spc(line, dev),
            Parser::Columns(c) => parse_by_columns(line, dev, c),
        }
    }
}

/// A request at `t` (ns) of `kind` over `len` bytes at `offset`, on stream 0.
#[inline(always)]
fn rec(t: u64, kind: OpKind, offset: u64, len: u64) -> Parsed {
    Ok(Some((t, Record { t_ns: 0, kind, offset, len, stream: 0 })))
}

/// An MSR Cambridge CSV line.
#[inline(always)]
fn parse_msr(line: &[u8], dev: Option<&[u8]>) -> Parsed {
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
        let joined =
            d.len() == host.len() + 1 + disk.len() && d.starts_with(host) && d.ends_with(disk) && d[host.len()] == b'_';
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

/// A blkparse event line (action `action` only).
#[inline(always)]
fn parse_blkparse(line: &[u8], dev: Option<&[u8]>, action: u8) -> Parsed {
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
    if act.len() != 1 || act[0] != action {
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

/// A fio iolog line (version 2: `wait` lines advance `clock_ns`).
#[inline(always)]
fn parse_fio(line: &[u8], dev: Option<&[u8]>, version: u8, clock_ns: &mut u64) -> Parsed {
    let mut f = Cur::new(line);
    let t = if version == 3 { f.time(None, 1_000, "timestamp")? } else { *clock_ns };
    let file = f.need(None, "file name")?;
    let act = f.need(None, "action")?;
    let kind = match act {
        b"read" => OpKind::Read,
        b"write" => OpKind::Write,
        b"trim" => OpKind::Trim,
        b"wait" if version == 2 => {
            let ms = f.uint(None, "wait time")?;
            *clock_ns = (*clock_ns).max(scaled(ms, 1_000_000, "wait time")?);
            return Ok(None);
        }
        b"add" | b"open" | b"close" | b"sync" | b"datasync" | b"sync_file_range" | b"wait" => return Ok(None),
        _ => return Err(format!("unknown action \"{}\"", text(act))),
    };
    if dev.is_some_and(|d| d != file) {
        return Ok(None);
    }
    let off = f.uint(None, "offset")?;
    let len = f.uint(None, "length")?;
    rec(t, kind, off, len)
}

/// A DiskSim / MQSim ASCII line (time in `unit_ns`).
#[inline(always)]
fn parse_ascii(line: &[u8], dev: Option<&[u8]>, unit_ns: u64) -> Parsed {
    let mut f = Cur::new(line);
    let t = f.time(None, unit_ns, "time")?;
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

/// An SPC / UMass CSV line.
#[inline(always)]
fn parse_spc(line: &[u8], dev: Option<&[u8]>) -> Parsed {
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

/// A delimited line read by the column map `c`.
#[inline(always)]
fn parse_by_columns(line: &[u8], dev: Option<&[u8]>, c: &Columns) -> Parsed {
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
        OpCode::Letter => letter_op(v[c.op.0]).ok_or_else(|| format!("op \"{}\" is not r, w or t", text(v[c.op.0])))?,
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
    let stream = match c.handle {
        Some(i) => match num(v[i], "handle")? {
            h if h <= crate::op::MAX_HANDLES as u64 => h as u32,
            h => return Err(format!("handle {h} is out of range 0..{}", crate::op::MAX_HANDLES)),
        },
        None => 0,
    };
    Ok(Some((t, Record { t_ns: 0, kind, offset: off, len, stream })))
}

pub(super) enum Outcome {
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
pub(super) fn classify(raw: &[u8], parser: &mut Parser, dev: Option<&[u8]>, header: bool) -> Outcome {
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
        // a line garbled by binary bytes is a bad line, not a line of another kind to pass over
        Ok(None) => match binary_byte(line) {
            Some(c) => Outcome::Bad(format!("binary byte 0x{c:02x} in the line: not text (a corrupt line)")),
            None => Outcome::Other,
        },
        Err(m) => Outcome::Bad(m),
    }
}

/// The first byte of `line` no text trace holds: a control character other than a tab, DEL,
/// or a byte of invalid UTF-8.  (Only checked on lines the parser passes over, so it costs
/// nothing on requests.)
fn binary_byte(line: &[u8]) -> Option<u8> {
    // one branch-free pass (vectorised) over the common case, plain ASCII text
    let odd = line.iter().fold(false, |acc, &c| acc | ((c < 0x20) & (c != b'\t') & (c != b'\r')) | (c >= 0x7f));
    if !odd {
        return None;
    }
    if let Some(&c) = line.iter().find(|&&c| (c < 0x20 && c != b'\t' && c != b'\r') || c == 0x7f) {
        return Some(c);
    }
    std::str::from_utf8(line).err().map(|e| line[e.valid_up_to()])
}

#[cfg(test)]
mod tests {
    use super::super::testing::{all, write_tmp};
    use super::super::{Record, TraceConfig};
    use crate::op::OpKind;
    #[test]
    fn msr_device_filter_and_relative_time() {
        let (_dir, p) = write_tmp(
            "msr.csv",
            b"128166372003061629,hm,0,Read,3129794560,65536,115518\n128166372016382155,hm,1,Write,2150825984,4096,56928\n128166372026382245,hm,0,Write,8192,512,1\n",
        );
        let mut c = TraceConfig::new(&p);
        c.device = Some("hm_0".into());
        let v = all(&c).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0], Record { t_ns: 0, kind: OpKind::Read, offset: 3129794560, len: 65536, stream: 0 });
        assert_eq!(v[1].t_ns, (128166372026382245u64 - 128166372003061629) * 100);
    }
}
