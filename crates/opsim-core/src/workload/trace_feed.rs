//! A block trace replayed as a workload: records to commands in sectors, remapped onto the
//! simulated drive, repeated when asked.

use super::{Op, OpKind};
use crate::error::{Error, ErrorKind, Result};
use crate::trace::{self, Remap, TraceConfig};

/// A trace replayed as a workload, in sectors.
pub struct TraceFeed {
    reader: trace::Reader,
    repeat: bool,
    remap: Remap,
    sector: u64,
    capacity: u64,
    /// remap = scale: trace end offset in sectors.
    trace_end: u64,
    /// Added to record times after a rewind, so time keeps increasing.
    t_offset: u64,
    last_t: u64,
    pass_writes: u64,
    pub passes: u64,
    ended: bool,
    /// Write frontiers (streams or handles): a record's handle past them writes through
    /// handle 0.
    streams: u32,
}

impl std::fmt::Debug for TraceFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceFeed({})", self.reader.path())
    }
}

impl TraceFeed {
    pub(super) fn open(cfg: &TraceConfig, capacity_sectors: u64, sector: u64, streams: u32) -> Result<TraceFeed> {
        let scaled = matches!(cfg.remap, Remap::Scale | Remap::ScaleAligned);
        let trace_end = if scaled { trace::max_end(cfg)?.div_ceil(sector) } else { 0 };
        let reader = trace::Reader::open(cfg)?;
        Ok(TraceFeed {
            reader,
            repeat: cfg.repeat,
            remap: cfg.remap,
            sector,
            capacity: capacity_sectors,
            trace_end,
            t_offset: 0,
            last_t: 0,
            pass_writes: 0,
            passes: 0,
            ended: false,
            streams,
        })
    }

    fn err(&self, msg: String) -> Error {
        Error::new(ErrorKind::Trace, Some(&format!("{}:{}", self.reader.path(), self.reader.line())), msg)
    }

    /// The next request in sectors, or None at the end of a trace that does not repeat.
    pub fn next_op(&mut self) -> Result<Option<Op>> {
        if self.ended {
            return Ok(None);
        }
        let r = self.next_op_inner();
        if !matches!(r, Ok(Some(_))) {
            self.ended = true;
        }
        r
    }

    fn next_op_inner(&mut self) -> Result<Option<Op>> {
        let rec = match self.reader.next_record()? {
            Some(r) => r,
            None => {
                if self.reader.records == 0 {
                    return Err(trace::empty_error(&self.reader));
                }
                self.passes += 1;
                // a pass without writes would spin forever on a write target: replay once
                if !self.repeat || self.pass_writes == 0 {
                    return Ok(None);
                }
                self.pass_writes = 0;
                self.reader.rewind()?;
                self.t_offset = self.last_t.saturating_add(1_000);
                match self.reader.next_record()? {
                    Some(r) => r,
                    None => return Ok(None),
                }
            }
        };
        let s = self.sector;
        let mut start = rec.offset / s;
        let end = (rec.offset + rec.len).div_ceil(s);
        let len = end - start;
        let cap = self.capacity;
        if len > cap || len > u32::MAX as u64 {
            return Err(self.err(format!("a request of {} bytes is larger than the simulated drive", rec.len)));
        }
        if end > cap {
            match self.remap {
                Remap::Error => {
                    return Err(self.err(format!(
                        "request at byte {} + {} ends past the simulated drive's {} bytes; set workload.trace.remap = \"wrap\" \
                         or \"scale\", or simulate a larger drive",
                        rec.offset,
                        rec.len,
                        cap * s
                    )))
                }
                Remap::Wrap => start %= cap,
                Remap::Scale | Remap::ScaleAligned => {}
            }
        }
        if matches!(self.remap, Remap::Scale | Remap::ScaleAligned) && self.trace_end > cap {
            let aligned = rec.offset % 4096 == 0;
            start = ((start as u128 * cap as u128) / self.trace_end as u128) as u64;
            if self.remap == Remap::ScaleAligned && aligned {
                let a = (4096 / s).max(1);
                start -= start % a;
            }
        }
        start = start.min(cap - len);
        if rec.kind == OpKind::Write {
            self.pass_writes += 1;
        }
        self.last_t = rec.t_ns.saturating_add(self.t_offset);
        let stream = if rec.stream < self.streams { rec.stream } else { 0 };
        Ok(Some(Op { kind: rec.kind, start, len: len as u32, stream, t_ns: self.last_t }))
    }

    pub fn skipped_bad(&self) -> u64 {
        self.reader.skipped_bad
    }
    pub fn records(&self) -> u64 {
        self.reader.records
    }
}
