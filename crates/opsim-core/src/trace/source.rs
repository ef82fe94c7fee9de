//! Where a trace's bytes come from: a file, a pipe or FIFO, or memory, opened once as a
//! stream; gzip and zstd are recognised by their magic bytes and decompressed on the way.

use super::trace_err;
use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const GZ: [u8; 2] = [0x1f, 0x8b];
const ZST: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The largest zstd window accepted (the history the decoder keeps in memory): levels up to
/// 19 use at most 8 MiB, `--long` and `--ultra` more.
const MAX_ZSTD_WINDOW: u64 = 32 << 20;

/// Where the trace's bytes come from.
#[derive(Clone)]
pub(super) enum Origin {
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

pub(super) type Source = Box<dyn BufRead + Send>;

/// A trace opened as a stream.
pub(super) struct Opened {
    pub src: Source,
    /// "none", "gzip" or "zstd".
    pub compression: &'static str,
    /// The source can be read again (a regular file or memory; not a pipe).
    pub rereadable: bool,
    /// Set when `interrupt` stopped a wait for a pipe's data: a read error is then
    /// [`Error::interrupted`], not an I/O error.
    pub stopped: Arc<AtomicBool>,
}

/// [`Error::interrupted`] when the wait for data was stopped, else `e` as a trace error.
pub(super) fn read_failed(stopped: &AtomicBool, e: Error) -> Error {
    if stopped.load(Ordering::Relaxed) {
        Error::interrupted()
    } else {
        e
    }
}

/// Open the trace once, as a stream: the raw bytes, whether they can be read again (a
/// regular file or memory; not a pipe), and the decompressor the first bytes call for.
/// Nothing here seeks or asks for the size, so a pipe or FIFO reads like a file. A FIFO
/// with no writer yet is waited for, and a pipe's data too, asking `interrupt` every
/// 50 ms (`crate::userfile`): Ctrl-C stops the wait.
pub(super) fn open_source(path: &str, origin: &Origin, interrupt: &Interrupt) -> Result<Opened> {
    let (raw, again, stopped): (Box<dyn Read + Send>, bool, Arc<AtomicBool>) = match origin {
        Origin::Bytes(b, _) => (Box::new(std::io::Cursor::new(Shared(b.clone()))), true, Arc::default()),
        Origin::Path => {
            let on_err = |e| trace_err(path, 0, format!("cannot open: {e}"));
            let file = crate::userfile::open_stream(std::path::Path::new(path), interrupt, on_err)?;
            let (regular, stopped) = (file.is_regular(), file.stopped());
            (Box::new(file), regular, stopped)
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
            Err(e) => return Err(read_failed(&stopped, trace_err(path, 0, format!("cannot read: {e}")))),
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
    Ok(Opened { src, compression, rereadable: again, stopped })
}
