//! The column map of the `columns` format (`time=0:ms,op=3,offset=4:bytes,size=5:bytes,
//! device=2`): which field holds what, in which unit, and the delimiter.

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OpCode {
    /// r/R..., w/W..., t/T/d/D... (trim, discard)
    Letter,
    /// bit 0: 1 = read, 0 = write (DiskSim flags, MQSim type)
    Flag,
}

#[derive(Clone, Debug)]
pub(super) struct Columns {
    pub(super) time: Option<(usize, u64)>,
    pub(super) op: (usize, OpCode),
    pub(super) offset: (usize, u64),
    pub(super) size: (usize, u64),
    pub(super) device: Option<usize>,
    /// The write's placement handle (stream).
    pub(super) handle: Option<usize>,
    pub(super) delim: Option<Option<u8>>,
    /// Time values are Windows filetime (absolute); relative otherwise.
    pub(super) min_fields: usize,
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

pub(super) fn parse_columns(spec: &str, delimiter: Option<&str>) -> Result<Columns> {
    let key = "workload.trace.columns";
    let echo = crate::quote::echo;
    let mut time = None;
    let mut op = None;
    let mut offset = None;
    let mut size = None;
    let mut device = None;
    let mut handle = None;
    let mut seen: Vec<&str> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, rest) = item
            .split_once('=')
            .ok_or_else(|| Error::config(key, format!("\"{}\" is not name=column[:unit]", echo(item))))?;
        if seen.contains(&name.trim()) {
            return Err(Error::config(
                &format!("{key}.{}", echo(name.trim())),
                format!("\"{}\" is given twice in the column map; name each column once", echo(name.trim())),
            ));
        }
        seen.push(name.trim());
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
            "handle" => handle = Some(col),
            other => {
                return Err(Error::config(
                    key,
                    format!("unknown column name \"{}\"; expected time, op, offset, size, device, handle", echo(other)),
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
        [Some(op.0), Some(offset.0), Some(size.0), time.map(|t| t.0), device, handle].iter().flatten().max().unwrap()
            + 1;
    Ok(Columns { time, op, offset, size, device, handle, delim, min_fields })
}
