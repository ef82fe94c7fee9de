//! Block-trace replay: the settings of `[workload.trace]`, the request a trace line holds,
//! and the public entry points.  A trace is read one record at a time from a file or pipe
//! that may be gzip- or zstd-compressed, never the whole trace in memory.
//!
//! The rooms: `lex` (lines and fields, integers and times), `columns` (the column map of the
//! `columns` format), `parse` (one line of each format), `detect` (the format from the first
//! lines), `source` (where the bytes come from: files, pipes, memory, decompression), `reader`
//! (the streaming [`Reader`]), `info` (the summary and footprint), `fio` (writing fio iologs).

mod columns;
mod detect;
mod fio;
mod info;
mod lex;
mod parse;
mod reader;
mod source;

pub use columns::MAX_COLUMNS;
pub use fio::{convert_to_file, write_fio_iolog};
pub use info::{info, summarise, KindStats, TraceInfo};
pub use lex::MAX_LINE;
pub use reader::{empty_error, max_end, Reader};

use crate::error::{Error, ErrorKind, Result};
use crate::op::OpKind;
use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod testing {
    use super::*;

    pub(super) fn write_tmp(name: &str, body: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("opsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p.to_string_lossy().into_owned()
    }

    pub(super) fn all(cfg: &TraceConfig) -> Result<Vec<Record>> {
        let mut r = Reader::open(cfg)?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }
}
