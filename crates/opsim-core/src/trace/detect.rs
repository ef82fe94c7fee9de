//! Format detection: the first 64 KiB of the (decompressed) stream, and the format its first
//! request-looking lines name (fio iolog, MSR, SPC, blkparse).

use super::lex::{fields, line_too_long, strip_eol, trim, uint};
use super::source::Source;
use super::{trace_err, TraceFormat};
use crate::error::Result;
use std::io::Read;

/// How much of the (decompressed) start of the trace format detection looks at.
const HEAD_BYTES: usize = 64 << 10;

/// The first [`HEAD_BYTES`] of the (decompressed) stream, and the stream with them put back.
pub(super) fn read_head(path: &str, src: Source) -> Result<(Vec<u8>, Source)> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let mut take = src.take(HEAD_BYTES as u64);
    take.read_to_end(&mut head).map_err(|e| trace_err(path, 1, format!("cannot read: {e}")))?;
    Ok((head, take.into_inner()))
}

/// Guess the format from the first request-looking lines of `head`.
pub(super) fn detect(path: &str, head: &[u8], rereadable: bool) -> Result<TraceFormat> {
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
