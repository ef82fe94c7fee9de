//! Block-trace replay: the request a trace line holds and the public entry points (the
//! settings of `[workload.trace]` are `config::trace`, re-exported here).  A trace is read one record at a time from a file or pipe
//! that may be gzip- or zstd-compressed, never the whole trace in memory.
//!
//! The rooms: `lex` (lines and fields, integers and times), `columns` (the column map of the
//! `columns` format), `parse` (one line of each format), `detect` (the format from the first
//! lines), `source` (where the bytes come from: files, pipes, memory, decompression), `reader`
//! (the streaming [`Reader`]), `info` (the summary and footprint), `fio` (writing fio iologs), `profile` (the write
//! profile: frequency curve, update distances...) over `blocks` (sparse per-block state); synthetic traces of the core's own
//! generators are written by `workload::synth` with `fio`'s writer.

mod blocks;
mod columns;
mod detect;
mod fio;
mod info;
mod lex;
mod parse;
mod profile;
mod reader;
mod source;

pub use crate::config::trace::{Remap, Timing, TraceConfig, TraceFormat};
pub use columns::MAX_COLUMNS;
pub(crate) use fio::{check_iolog_args, write_records};
pub use fio::{convert_to_file, write_fio_iolog};
pub use info::{info, summarise, KindStats, TraceInfo};
pub use lex::MAX_LINE;
pub use profile::{
    curve, profile, profile_with, CurvePoint, DistanceBucket, ProfileOptions, Progress, SizeBucket, TraceProfile,
    CURVE_AT, CURVE_POINTS, DEFAULT_MAX_MEMORY,
};
pub use reader::{empty_error, max_end, Reader, TraceSource};

use crate::error::{Error, ErrorKind, Result};
use crate::op::OpKind;

/// One request: time from the first record, kind, byte offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub t_ns: u64,
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
    /// The write's stream or placement handle (the `columns` format's `handle` column; 0
    /// without one).
    pub stream: u32,
}

fn trace_err(path: &str, line: u64, msg: impl Into<String>) -> Error {
    let key = if line > 0 { format!("{path}:{line}") } else { path.to_owned() };
    Error::new(ErrorKind::Trace, Some(&key), msg)
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

/// Test helpers of the trace readers (also used by `workload::synth`'s tests).
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A file of `body` in a fresh directory: (the directory's guard, which removes it when
    /// dropped, and the file's path).
    pub(crate) fn write_tmp(name: &str, body: &[u8]) -> (tempfile::TempDir, String) {
        let dir = tempfile::Builder::new().prefix("opsim-trace-").tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        (dir, p.to_string_lossy().into_owned())
    }

    pub(crate) fn all(cfg: &TraceConfig) -> Result<Vec<Record>> {
        let mut r = Reader::open(cfg)?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }
}
