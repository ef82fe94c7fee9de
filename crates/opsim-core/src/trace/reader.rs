//! The streaming [`Reader`] of one trace: opening (format, parser, filters), line reading
//! under the length cap, bad-line skipping, `repeat` (rewind) and the `remap = "scale"`
//! pre-pass, and the error a trace without requests gets.

use super::columns::parse_columns;
use super::detect::{detect, read_head};
use super::lex::{line_too_long, MAX_LINE};
use super::parse::{classify, Outcome, Parser};
use super::source::{open_source, read_failed, Origin, Source};
use super::{trace_err, Record, TraceConfig, TraceFormat};
use crate::error::{Error, Result};
use std::io::{BufRead, Read};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn not_rereadable(path: &str, what: &str) -> Error {
    Error::config(
        what,
        format!("needs to read the trace twice, and {path} is a pipe or device that reads once; save it to a file"),
    )
}

/// What a trace summary says of the file it read: its name, format and compression, the
/// device its records were filtered to, and how many lines and requests it held (the first
/// fields of [`super::TraceInfo`] and [`super::TraceProfile`], flattened into their JSON).
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct TraceSource {
    pub path: String,
    pub format: &'static str,
    pub compression: &'static str,
    pub device: Option<String>,
    pub lines: u64,
    pub records: u64,
}

/// A streaming reader of one trace file.
pub struct Reader {
    pub(super) cfg: TraceConfig,
    pub format: TraceFormat,
    pub compression: &'static str,
    src: Source,
    /// Set when Ctrl-C stopped a wait for a pipe's data (`crate::userfile`).
    stopped: Arc<AtomicBool>,
    origin: Origin,
    /// The source can be read again (a regular file or memory): `repeat`, `remap = "scale"`.
    rereadable: bool,
    parser: Parser,
    initial: Parser,
    pub(super) line: u64,
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
        let opened = open_source(path, &origin, &cfg.interrupt)?;
        let (mut src, compression, rereadable) = (opened.src, opened.compression, opened.rereadable);
        let format = match cfg.format {
            TraceFormat::Auto => {
                let (head, rest) = read_head(path, src).map_err(|e| read_failed(&opened.stopped, e))?;
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
            stopped: opened.stopped,
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
    /// The file read so far, as a summary reports it.
    pub fn source(&self) -> TraceSource {
        TraceSource {
            path: self.cfg.path.clone(),
            format: self.format.name(),
            compression: self.compression,
            device: self.cfg.device.clone(),
            lines: self.line,
            records: self.records,
        }
    }
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Back to the first record (for `repeat`); times restart from zero.
    pub fn rewind(&mut self) -> Result<()> {
        self.check_rereadable("workload.trace.repeat")?;
        let opened = open_source(&self.cfg.path, &self.origin, &self.cfg.interrupt)?;
        self.src = opened.src;
        self.stopped = opened.stopped;
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
        read_failed(&self.stopped, trace_err(&self.cfg.path, self.line + 1, format!("cannot read ({what}): {e}")))
    }
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

#[cfg(test)]
mod tests {
    use super::super::testing::{all, write_tmp};
    use super::super::TraceConfig;
    use super::Reader;
    use crate::error::ErrorKind;
    #[test]
    fn bad_line_names_file_and_line() {
        let (_dir, p) = write_tmp(
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
