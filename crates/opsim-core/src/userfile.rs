//! Opening the files a user names, so that nothing blocks for good and nothing is read
//! without bound.
//!
//! [`open_stream`] opens a file that may be a pipe or FIFO (a trace): with `O_NONBLOCK`, so
//! a FIFO with no writer opens at once, then waits for a writer in steps of
//! [`WAIT_STEP_MS`], asking the interrupt hook between steps (Ctrl-C stops the wait). Reads of
//! a pipe or device wait the same way. [`read_regular`] reads a whole file that must be a
//! regular file of bounded size (a drive file): anything else is refused before it is read.

use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How long one wait for a writer or for data lasts before the interrupt hook is asked.
pub const WAIT_STEP_MS: i32 = 50;

/// What a path that is not a regular file is, for messages: "a FIFO", "a directory"...
pub fn kind(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_file() {
        return "a regular file";
    }
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// A file open for reading. A pipe, FIFO or device is read without blocking: a read that
/// would block waits for data in steps of [`WAIT_STEP_MS`], asking the interrupt hook.
pub struct Stream {
    file: File,
    /// The hook asked while waiting (None: a regular file, read as usual).
    waiting: Option<Interrupt>,
    stopped: Arc<AtomicBool>,
}

impl Stream {
    /// Whether the file is a regular file (it can be read again; a pipe cannot).
    pub fn is_regular(&self) -> bool {
        self.waiting.is_none()
    }

    /// Set once the interrupt hook said stop during a wait: the read that saw it failed with
    /// an error of kind `Other`, which the caller turns into [`Error::interrupted`].
    pub fn stopped(&self) -> Arc<AtomicBool> {
        self.stopped.clone()
    }

    /// Ask the hook: `Err` once it says stop (and the flag is set).
    fn ask(&mut self, timed_out: bool) -> io::Result<()> {
        let Some(intr) = self.waiting.as_mut() else { return Ok(()) };
        let r = if timed_out { intr.check() } else { intr.poll() };
        if r.is_err() {
            self.stopped.store(true, Ordering::Relaxed);
            // not ErrorKind::Interrupted: `read_to_end` and `read_exact` retry on that
            return Err(io::Error::other("interrupted"));
        }
        Ok(())
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.waiting.is_none() {
            return self.file.read(buf);
        }
        loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let ready = sys::wait_readable(&self.file, WAIT_STEP_MS)?;
                    self.ask(!ready)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.ask(true)?,
                r => return r,
            }
        }
    }
}

/// Open `path` for reading without blocking on a FIFO that has no writer: the open waits
/// for a writer in steps, asking `interrupt` between them (Ctrl-C: an
/// [`Error::interrupted`]). `on_err` words an error of the open.
pub fn open_stream(path: &Path, interrupt: &Interrupt, on_err: impl Fn(io::Error) -> Error) -> Result<Stream> {
    let file = sys::open_nonblocking(path).map_err(&on_err)?;
    let meta = file.metadata().map_err(&on_err)?;
    if meta.is_file() {
        sys::set_blocking(&file).map_err(&on_err)?;
        return Ok(Stream { file, waiting: None, stopped: Arc::default() });
    }
    let mut s = Stream { file, waiting: Some(interrupt.clone()), stopped: Arc::default() };
    if sys::is_fifo(&meta) {
        // a FIFO opened O_NONBLOCK reads as empty until a writer comes: wait for it
        while !sys::wait_readable(&s.file, WAIT_STEP_MS).map_err(&on_err)? {
            if s.ask(true).is_err() {
                return Err(Error::interrupted());
            }
        }
    }
    Ok(s)
}

/// Why [`read_regular`] refused a file; the caller words it with the file's role.
#[derive(Debug)]
pub enum Refused {
    /// It cannot be opened or read (does not exist, no permission...).
    Io(io::Error),
    /// It is not a regular file: what it is ("a FIFO", "a directory"...).
    NotRegular(&'static str),
    /// It holds more than the cap: its size (or at least cap + 1 bytes).
    TooLarge(u64),
}

/// The bytes of the regular file at `path`, at most `cap` of them. A FIFO, a device or a
/// directory is refused before it is opened (and again after, should one have been swapped
/// in: the open never blocks); a file over the cap is refused unread.
pub fn read_regular(path: &Path, cap: u64) -> std::result::Result<Vec<u8>, Refused> {
    let check = |meta: &std::fs::Metadata| {
        if !meta.is_file() {
            return Err(Refused::NotRegular(kind(meta)));
        }
        if meta.len() > cap {
            return Err(Refused::TooLarge(meta.len()));
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(Refused::Io)?)?;
    let file = sys::open_nonblocking(path).map_err(Refused::Io)?;
    check(&file.metadata().map_err(Refused::Io)?)?;
    sys::set_blocking(&file).map_err(Refused::Io)?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    if bytes.len() as u64 > cap {
        return Err(Refused::TooLarge(bytes.len() as u64)); // it grew since
    }
    Ok(bytes)
}

#[cfg(target_os = "linux")]
mod sys {
    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    pub fn open_nonblocking(path: &Path) -> io::Result<File> {
        OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
    }

    pub fn is_fifo(meta: &Metadata) -> bool {
        meta.file_type().is_fifo()
    }

    pub fn set_blocking(file: &File) -> io::Result<()> {
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this File owns
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait up to `ms` for `file` to be readable; true when a read will not block (data, end
    /// of file or an error to report). A FIFO whose reader opened before any writer is not
    /// reported hung up until a writer has come and gone (Linux), so this waits for a writer.
    pub fn wait_readable(file: &File, ms: i32) -> io::Result<bool> {
        let mut p = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd, valid for the call
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
        }
        Ok(r > 0)
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use std::fs::{File, Metadata};
    use std::io;
    use std::path::Path;

    pub fn open_nonblocking(path: &Path) -> io::Result<File> {
        File::open(path)
    }
    pub fn is_fifo(_: &Metadata) -> bool {
        false
    }
    pub fn set_blocking(_: &File) -> io::Result<()> {
        Ok(())
    }
    pub fn wait_readable(_: &File, _: i32) -> io::Result<bool> {
        Ok(true)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("opsim-userfile-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        d
    }

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_without_writer_opens_and_the_wait_stops_on_the_hook() {
        let p = tmp("nowriter.fifo");
        mkfifo(&p);
        let t0 = Instant::now();
        let intr = Interrupt::new(move || t0.elapsed() > Duration::from_millis(200));
        let e = open_stream(&p, &intr, |e| Error::internal(e.to_string())).err().expect("interrupted");
        assert_eq!(e.kind, crate::ErrorKind::Interrupted);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn a_fifo_reads_once_a_writer_comes() {
        let p = tmp("writer.fifo");
        mkfifo(&p);
        let q = p.clone();
        let w = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            let mut f = std::fs::OpenOptions::new().write(true).open(&q).unwrap();
            std::io::Write::write_all(&mut f, b"hello").unwrap();
            std::thread::sleep(Duration::from_millis(150)); // a silent writer: reads wait
            std::io::Write::write_all(&mut f, b" world").unwrap();
        });
        let mut s = open_stream(&p, &Interrupt::none(), |e| Error::internal(e.to_string())).unwrap();
        assert!(!s.is_regular());
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        w.join().unwrap();
        assert_eq!(got, "hello world");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn read_regular_refuses_what_is_not_a_regular_file_or_too_large() {
        let p = tmp("r.fifo");
        mkfifo(&p);
        assert!(matches!(read_regular(&p, 10), Err(Refused::NotRegular("a FIFO"))));
        let _ = std::fs::remove_file(&p);
        assert!(matches!(read_regular(&std::env::temp_dir(), 10), Err(Refused::NotRegular("a directory"))));
        let f = tmp("big.toml");
        std::fs::write(&f, b"0123456789x").unwrap();
        assert!(matches!(read_regular(&f, 10), Err(Refused::TooLarge(11))));
        assert_eq!(read_regular(&f, 11).unwrap(), b"0123456789x");
        let _ = std::fs::remove_file(&f);
    }
}
