//! Atomic file output: the file appears whole under its name, or not at all, and a process
//! killed mid-way (even by SIGKILL) leaves nothing behind.
//!
//! On Linux the data goes to an unnamed file (`O_TMPFILE`) in the target's directory; once
//! written and synced it is linked in under a unique hidden name, renamed over the target
//! and the directory synced, so the only name it ever has for more than an instant is the
//! target's.  Where `O_TMPFILE` is not supported (other systems, some file systems) a named
//! hidden temporary file is used instead, removed on any error.
//!
//! The same rule as the Python writer (`opsim._output`, docs/reliability.md "Writing
//! files"): a target that exists and is a character device or a FIFO (`/dev/null`,
//! `/dev/stdout`) is written directly, opened without `O_CREAT` and never renamed over; any
//! other existing non-regular file (a directory, a block device, a socket) is refused; a
//! symbolic link is followed (the file it names is replaced, the link stays).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Write `path` atomically with `write` (which gets the open, empty file).  `write`'s error
/// or an I/O error (`io_err` makes it an [`crate::Error`]) leaves `path` as it was.
pub fn write_file<T>(
    path: &Path,
    io_err: impl Fn(io::Error) -> crate::Error,
    write: impl FnOnce(&mut File) -> crate::Result<T>,
) -> crate::Result<T> {
    let path = match target(path).map_err(&io_err)? {
        Target::Stream => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(&io_err)?;
            return write(&mut f);
        }
        Target::File(p) => p,
    };
    let path = path.as_path();
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io_err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path")))?
        .to_string_lossy()
        .into_owned();
    #[cfg(target_os = "linux")]
    {
        match linux::open_unnamed(dir) {
            Ok(mut f) => {
                let v = write(&mut f)?;
                f.sync_all().map_err(&io_err)?;
                linux::link_into_place(&f, dir, &name, path).map_err(&io_err)?;
                sync_dir(dir).map_err(&io_err)?;
                return Ok(v);
            }
            Err(e) if linux::unsupported(&e) => {} // fall back to a named temporary file
            Err(e) => return Err(io_err(e)),
        }
    }
    let (mut f, tmp) = create_temp(dir, &name).map_err(&io_err)?;
    let res = write(&mut f).and_then(|v| {
        f.sync_all().map_err(&io_err)?;
        std::fs::rename(&tmp, path).map_err(&io_err)?;
        sync_dir(dir).map_err(&io_err)?;
        Ok(v)
    });
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Where [`write_file`] writes.
enum Target {
    /// A character device or a FIFO: written in place.
    Stream,
    /// A regular file (or nothing yet) at this path, symbolic links followed.
    File(PathBuf),
}

fn target(path: &Path) -> io::Result<Target> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Target::File(follow_links(path)?)),
        Ok(m) if is_stream(&m) => Ok(Target::Stream),
        Ok(m) => {
            let what = if m.is_dir() { "a directory" } else { refused_kind(&m) };
            Err(io::Error::new(io::ErrorKind::InvalidInput, format!("it is {what}")))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::File(follow_links(path)?)),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn is_stream(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_char_device() || m.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_stream(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(unix)]
fn refused_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if m.file_type().is_block_device() {
        "a block device"
    } else if m.file_type().is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn refused_kind(_: &std::fs::Metadata) -> &'static str {
    "not a regular file"
}

/// `path` with the symbolic links of its last component followed (a dangling link gives the
/// path it names), so the rename replaces the file a link names and keeps the link, as
/// the Python writer, `cp` and shell redirection do.
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(d) if to.is_relative() => d.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, "too many levels of symbolic links"))
}

/// True where `a` and `b` name one existing file (the same device and inode: through
/// symbolic and hard links too).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// Refuse an output that would replace `input` (a character device or FIFO is written in
/// place, not replaced: not refused).
pub fn check_not_input(out: &Path, input: &Path) -> io::Result<()> {
    let stream = std::fs::metadata(out).map(|m| is_stream(&m)).unwrap_or(false);
    if !stream && same_file(out, input) {
        let msg = format!("it is the input file {}: it would be overwritten", input.display());
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    Ok(())
}

/// A new file `.NAME.tmp-PID-N` in `dir` (mode 0666 less the umask), never an existing one.
fn create_temp(dir: &Path, name: &str) -> io::Result<(File, PathBuf)> {
    for n in 0u32.. {
        let tmp = dir.join(temp_name(name, n));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!()
}

fn temp_name(name: &str, n: u32) -> String {
    format!(".{name}.tmp-{}-{n}", std::process::id())
}

/// Make a rename in `dir` durable (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    /// An unnamed regular file in `dir`; it vanishes if the process dies before the link.
    pub fn open_unnamed(dir: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_TMPFILE).open(dir)
    }

    /// The errors of a kernel or file system without `O_TMPFILE`.
    pub fn unsupported(e: &io::Error) -> bool {
        matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL))
    }

    fn cstr(p: &Path) -> io::Result<CString> {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
    }

    /// Give the unnamed file `f` a unique hidden name in `dir`, through /proc/self/fd (or
    /// `AT_EMPTY_PATH`, which needs privileges), then rename it over `target`.
    pub fn link_into_place(f: &File, dir: &Path, name: &str, target: &Path) -> io::Result<()> {
        let fd = f.as_raw_fd();
        let proc_path = cstr(Path::new(&format!("/proc/self/fd/{fd}")))?;
        let empty = CString::default();
        for n in 0u32..1000 {
            let tmp = dir.join(temp_name(name, n));
            let tmp_c = cstr(&tmp)?;
            // SAFETY: both paths are NUL-terminated strings that outlive the calls.
            let mut rc = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    proc_path.as_ptr(),
                    libc::AT_FDCWD,
                    tmp_c.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            if rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
                // SAFETY: as above; `fd` is open for the duration of the call.
                rc = unsafe { libc::linkat(fd, empty.as_ptr(), libc::AT_FDCWD, tmp_c.as_ptr(), libc::AT_EMPTY_PATH) };
            }
            if rc != 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(e);
            }
            let renamed = std::fs::rename(&tmp, target);
            if renamed.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            return renamed;
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory, removed with everything in it when the guard is dropped.
    fn dir(tag: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("opsim-atomic-{tag}-")).tempdir().unwrap()
    }

    fn io_err(e: io::Error) -> crate::Error {
        crate::Error::config("output", e.to_string())
    }

    #[test]
    fn replaces_the_target_and_leaves_nothing_else() {
        use std::io::Write;
        let guard = dir("ok");
        let d = guard.path();
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        write_file(&p, io_err, |f| f.write_all(b"new").map_err(io_err)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
    }

    #[test]
    fn an_error_keeps_the_old_file_and_leaves_nothing_else() {
        use std::io::Write;
        let guard = dir("err");
        let d = guard.path();
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        let r: crate::Result<()> = write_file(&p, io_err, |f| {
            f.write_all(b"partial").map_err(io_err)?;
            Err(crate::Error::config("x", "failed"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
    }

    fn write(p: &Path, data: &[u8]) -> crate::Result<()> {
        use std::io::Write;
        write_file(p, io_err, |f| f.write_all(data).map_err(io_err))
    }

    /// A device node made with mknod (we run as root; skipped, with a note, where not allowed).
    #[cfg(target_os = "linux")]
    fn mknod(p: &Path, kind: libc::mode_t, major: u32, minor: u32) -> bool {
        let c = linux_cstr(p);
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        let rc = unsafe { libc::mknod(c.as_ptr(), kind | 0o666, libc::makedev(major, minor)) };
        if rc != 0 {
            eprintln!("mknod {}: {} (skipped)", p.display(), io::Error::last_os_error());
        }
        rc == 0
    }

    #[cfg(target_os = "linux")]
    fn linux_cstr(p: &Path) -> std::ffi::CString {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_character_device_is_written_in_place_never_renamed_over() {
        use std::os::unix::fs::FileTypeExt;
        let guard = dir("chr");
        let d = guard.path();
        let p = d.join("null");
        if !mknod(&p, libc::S_IFCHR, 1, 3) {
            return;
        }
        write(&p, b"discarded").unwrap();
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_char_device());
        let names: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("null")]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_receives_the_output() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let guard = dir("fifo");
        let d = guard.path();
        let p = d.join("pipe");
        let c = linux_cstr(&p);
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let p = p.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                File::open(p).unwrap().read_to_string(&mut s).unwrap();
                s
            })
        };
        write(&p, b"through the pipe").unwrap();
        // first: a FIFO renamed over leaves the reader waiting for a writer for ever
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), "through the pipe");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_block_device_a_directory_and_a_socket_are_refused() {
        use std::os::unix::fs::FileTypeExt;
        let guard = dir("refused");
        let d = guard.path();
        let blk = d.join("blk");
        if mknod(&blk, libc::S_IFBLK, 7, 250) {
            let e = write(&blk, b"x").unwrap_err().to_string();
            assert!(e.contains("block device"), "{e}");
            assert!(std::fs::symlink_metadata(&blk).unwrap().file_type().is_block_device());
        }
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(write(&sub, b"x").unwrap_err().to_string().contains("directory"));
        assert!(sub.is_dir());
        let sock = d.join("sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(write(&sock, b"x").unwrap_err().to_string().contains("socket"));
        assert!(std::fs::symlink_metadata(&sock).unwrap().file_type().is_socket());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_kept() {
        let guard = dir("link");
        let d = guard.path();
        let real = d.join("real.txt");
        std::fs::write(&real, b"old").unwrap();
        let link = d.join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // a dangling link: the file it names is created, the link stays (as `>` does)
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink("made.txt", &dangling).unwrap();
        write(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(d.join("made.txt")).unwrap(), b"made");
    }

    #[cfg(unix)]
    #[test]
    fn an_output_that_is_the_input_is_refused_through_links_too() {
        let guard = dir("input");
        let d = guard.path();
        let input = d.join("in.csv");
        std::fs::write(&input, b"data").unwrap();
        let sym = d.join("sym");
        std::os::unix::fs::symlink(&input, &sym).unwrap();
        let hard = d.join("hard");
        std::fs::hard_link(&input, &hard).unwrap();
        for out in [&input, &sym, &hard] {
            let e = check_not_input(out, &input).unwrap_err().to_string();
            assert!(e.contains("input file"), "{e}");
        }
        assert!(check_not_input(&d.join("other"), &input).is_ok());
        assert_eq!(std::fs::read(&input).unwrap(), b"data");
    }

    #[test]
    fn the_fallback_leaves_nothing_on_error() {
        let guard = dir("fallback");
        let d = guard.path();
        let (f, tmp) = create_temp(d, "x").unwrap();
        drop(f);
        assert!(tmp.file_name().unwrap().to_string_lossy().starts_with(".x.tmp-"));
        let (_, tmp2) = create_temp(d, "x").unwrap();
        assert_ne!(tmp, tmp2);
    }
}
