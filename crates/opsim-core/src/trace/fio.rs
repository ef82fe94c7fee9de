//! Writing a trace as a fio iolog (version 2 or 3), to a stream or atomically to a file.

use super::{empty_error, Reader, Record, TraceConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::op::OpKind;
use std::io::Write;

/// Write the trace as a fio iolog (version 2 or 3) replaying on `target`.  Returns the
/// number of requests written.  Version 3 keeps times in microseconds; version 2 keeps
/// them as `wait` lines in milliseconds.
pub fn write_fio_iolog(cfg: &TraceConfig, out: &mut dyn Write, version: u8, target: &str) -> Result<u64> {
    check_iolog_args(version, target)?;
    let mut r = Reader::open(cfg)?;
    let n = write_records(out, version, target, || r.next_record())?;
    if n == 0 {
        return Err(empty_error(&r));
    }
    Ok(n)
}

/// The checks of [`write_records`]'s `version` and `target`, before any work.
pub(crate) fn check_iolog_args(version: u8, target: &str) -> Result<()> {
    if version != 2 && version != 3 {
        return Err(Error::config("version", format!("{version} is not a fio iolog version (2 or 3)")));
    }
    if target.is_empty() || target.contains(char::is_whitespace) {
        return Err(Error::config(
            "target",
            format!("\"{}\" must be a file name without blanks", crate::quote::echo(target)),
        ));
    }
    Ok(())
}

/// Write the records `next` yields (until None) as a fio iolog (version 2 or 3) replaying on
/// `target`: the writer of [`write_fio_iolog`] and of the synthetic traces
/// ([`super::synth`]).  Returns the number of requests written.
pub(crate) fn write_records(
    out: &mut dyn Write,
    version: u8,
    target: &str,
    mut next: impl FnMut() -> Result<Option<Record>>,
) -> Result<u64> {
    check_iolog_args(version, target)?;
    let io = |e: std::io::Error| Error::new(ErrorKind::Trace, Some("output"), format!("cannot write: {e}"));
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
    while let Some(x) = next()? {
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
    pre(&mut w, last_us, "close").map_err(io)?;
    w.flush().map_err(io)?;
    Ok(n)
}

/// [`write_fio_iolog`] into `out_path`, atomically ([`crate::atomic::write_file`]): the
/// file appears whole, and a failed or killed conversion leaves nothing behind.
pub fn convert_to_file(cfg: &TraceConfig, out_path: &str, version: u8, target: &str) -> Result<u64> {
    let io = |e: std::io::Error| Error::config("output", format!("cannot write {out_path}: {e}"));
    let out = std::path::Path::new(out_path);
    crate::atomic::check_not_input(out, std::path::Path::new(&cfg.path)).map_err(io)?;
    crate::atomic::write_file(out, io, |f| write_fio_iolog(cfg, f, version, target))
}
