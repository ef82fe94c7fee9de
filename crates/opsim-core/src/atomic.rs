//! Atomic file output: the file appears whole under its name, or not at all, and a process
//! killed mid-way (even by SIGKILL) leaves nothing behind.
//!
//! On Linux the data goes to an unnamed file (`O_TMPFILE`) in the target's directory; once
//! written and synced it is linked in under a unique hidden name, renamed over the target
//! and the directory synced, so the only name it ever has for more than an instant is the
//! target's.  Where `O_TMPFILE` is not supported (other systems, some file systems) a named
//! hidden temporary file is used instead, removed on any error.

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

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("opsim-atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn io_err(e: io::Error) -> crate::Error {
        crate::Error::config("output", e.to_string())
    }

    #[test]
    fn replaces_the_target_and_leaves_nothing_else() {
        use std::io::Write;
        let d = dir("ok");
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        write_file(&p, io_err, |f| f.write_all(b"new").map_err(io_err)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
    }

    #[test]
    fn an_error_keeps_the_old_file_and_leaves_nothing_else() {
        use std::io::Write;
        let d = dir("err");
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        let r: crate::Result<()> = write_file(&p, io_err, |f| {
            f.write_all(b"partial").map_err(io_err)?;
            Err(crate::Error::config("x", "failed"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn the_fallback_leaves_nothing_on_error() {
        let d = dir("fallback");
        let (f, tmp) = create_temp(&d, "x").unwrap();
        drop(f);
        assert!(tmp.file_name().unwrap().to_string_lossy().starts_with(".x.tmp-"));
        let (_, tmp2) = create_temp(&d, "x").unwrap();
        assert_ne!(tmp, tmp2);
    }
}
