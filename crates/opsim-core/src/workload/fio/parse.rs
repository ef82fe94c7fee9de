//! fio job files: the ini-like text (sections, `key=value` and bare flags, comments) and the
//! numbers in it (sizes with fio's suffixes and `kb_base`, percentages).
//!
//! The syntax follows fio's own reader (fio's `init.c`, `parse_jobs_ini`: a `[section]`
//! header per job, `[global]` holding defaults for the jobs after it, whole-line comments
//! starting with `;` or `#`) and its number parser (fio's `parse.c`, `get_mult_bytes` and
//! `str_to_decimal`).  What fio's reader does beyond that (`include`, `${VAR}` expansion,
//! arithmetic in values) is refused by name, never guessed.

use crate::error::{Error, ErrorKind, Result};

/// Largest job file read (fio job files are a few lines; a larger file is not one).
pub const MAX_JOB_FILE: u64 = 1 << 20;
/// Most sections in a job file.
pub const MAX_SECTIONS: usize = 4096;

/// One `key=value` (or bare `key`) line.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: Option<String>,
    pub line: u64,
}

/// One `[name]` section and its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub line: u64,
    pub entries: Vec<Entry>,
}

/// A parsed job file: its sections in order (`[global]` included).
#[derive(Clone, Debug, PartialEq)]
pub struct JobFile {
    pub path: String,
    pub sections: Vec<Section>,
}

/// An error about `path:line`.
pub fn err_at(path: &str, line: u64, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Workload, Some(&format!("{path}:{line}")), msg)
}

impl JobFile {
    /// Read and parse a job file: a regular file of at most [`MAX_JOB_FILE`] bytes, read
    /// through [`crate::userfile::read_regular`] like every file the core reads whole (a
    /// FIFO, a device or a directory is refused before it is read, and the open never
    /// blocks; an error names `workload.job`).
    pub fn read(path: &str) -> Result<JobFile> {
        use crate::userfile::{read_regular, Refused};
        let bad = |what: String| Error::workload("workload.job", format!("{path}: {what}"));
        let bytes = read_regular(std::path::Path::new(path), MAX_JOB_FILE).map_err(|r| match r {
            Refused::Io(e) if e.kind() == std::io::ErrorKind::NotFound => bad("does not exist".into()),
            Refused::Io(e) => bad(format!("cannot be read: {e}")),
            Refused::NotRegular(what) => bad(format!("{what}, not a regular file (a fio job file is one)")),
            Refused::TooLarge(n) => bad(format!("{n} bytes; a fio job file is at most {MAX_JOB_FILE} bytes")),
        })?;
        Self::parse(path, &bytes)
    }

    /// Parse job-file text (`path` names it in errors).
    pub fn parse(path: &str, bytes: &[u8]) -> Result<JobFile> {
        if bytes.len() as u64 > MAX_JOB_FILE {
            return Err(err_at(path, 1, format!("more than {MAX_JOB_FILE} bytes; not a fio job file")));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let line = bytes[..e.valid_up_to()].iter().filter(|&&c| c == b'\n').count() as u64 + 1;
            err_at(path, line, "is not UTF-8 text; not a fio job file")
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a byte-order mark
        let mut sections: Vec<Section> = Vec::new();
        for (i, raw) in text.split('\n').enumerate() {
            let line = i as u64 + 1;
            let l = raw.trim_matches(|c: char| c.is_ascii_whitespace());
            if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
                continue;
            }
            if l.contains('\0') {
                return Err(err_at(path, line, "holds a NUL byte; not a fio job file"));
            }
            if let Some(rest) = l.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| err_at(path, line, format!("`{}`: a section header is `[name]`", show(l))))?
                    .trim();
                if name.is_empty() || name.contains(['[', ']']) {
                    return Err(err_at(path, line, format!("`{}`: a section header is `[name]`", show(l))));
                }
                if sections.len() >= MAX_SECTIONS {
                    return Err(err_at(path, line, format!("more than {MAX_SECTIONS} sections")));
                }
                sections.push(Section { name: name.to_owned(), line, entries: Vec::new() });
                continue;
            }
            let (key, value) = match l.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_owned())),
                None => (l, None),
            };
            if key.is_empty() || key.contains(|c: char| c.is_ascii_whitespace()) {
                if key.starts_with("include") {
                    return Err(err_at(path, line, "`include`: job files that include others are not supported"));
                }
                return Err(err_at(path, line, format!("`{}` is not an option line (`key=value` or `key`)", show(l))));
            }
            if value.as_deref().is_some_and(|v| v.contains("${")) {
                return Err(err_at(
                    path,
                    line,
                    format!("option `{key}`: environment variables (${{...}}) are not expanded; write the value"),
                ));
            }
            let sec = sections.last_mut().ok_or_else(|| {
                err_at(path, line, format!("option `{key}` comes before any [section]; fio options belong to a job"))
            })?;
            sec.entries.push(Entry { key: key.to_ascii_lowercase(), value, line });
        }
        Ok(JobFile { path: path.to_owned(), sections })
    }

    /// The names of the job sections (not `[global]`).
    pub fn jobs(&self) -> Vec<&str> {
        self.sections.iter().filter(|s| s.name != "global").map(|s| s.name.as_str()).collect()
    }

    /// The entries of job `name` (or the only job when `name` is None): the `[global]`
    /// sections before it, then its own (later lines win, as in fio).
    pub fn resolve(&self, name: Option<&str>) -> Result<(Section, Vec<Entry>)> {
        let jobs = self.jobs();
        let idx = match name {
            Some(n) => self.sections.iter().position(|s| s.name == n && s.name != "global").ok_or_else(|| {
                Error::workload(
                    "workload.section",
                    format!("`{n}` is not a job in {}; its jobs are: {}", self.path, list(&jobs)),
                )
            })?,
            None => match jobs.len() {
                0 => return Err(err_at(&self.path, 1, "holds no job section (only [global] or nothing)")),
                1 => self.sections.iter().position(|s| s.name != "global").unwrap_or(0),
                _ => {
                    return Err(Error::workload(
                        "workload.section",
                        format!(
                            "{} holds {} jobs ({}); name one with section = NAME (opsim advise: --section NAME)",
                            self.path,
                            jobs.len(),
                            list(&jobs)
                        ),
                    ))
                }
            },
        };
        let mut entries = Vec::new();
        for s in &self.sections[..idx] {
            if s.name == "global" {
                entries.extend(s.entries.iter().cloned());
            }
        }
        let job = self.sections[idx].clone();
        entries.extend(job.entries.iter().cloned());
        Ok((job, entries))
    }
}

fn list(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter().map(|s| format!("[{s}]")).collect::<Vec<_>>().join(", ")
    }
}

/// A line shortened for a message.
pub fn show(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_owned()
    }
}

/// A size or offset: bytes, or a percentage of the target's size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeValue {
    Bytes(u64),
    Percent(u32),
}

/// An unsigned integer, decimal or `0x` hexadecimal (fio's `str_to_decimal`).
pub fn integer(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        return u64::from_str_radix(h, 16).ok();
    }
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Bytes from a number with fio's suffixes (fio's `parse.c`, `get_mult_bytes`): `k`, `kb`,
/// `m`, ... multiply by `kb_base` (1024 by default), `kib`, `mib`, ... by the other base
/// (1000 with the default `kb_base=1024`, fio's compatibility mode; 1024 with
/// `kb_base=1000`); `b` or nothing: bytes.  Case does not matter.  `%` is a percentage
/// when `percent_ok`.
pub fn size(s: &str, kb_base: u64, percent_ok: bool) -> std::result::Result<SizeValue, String> {
    let t = s.trim();
    let digits_end = {
        // the number: 0x.. hex, else decimal digits
        if t.starts_with("0x") || t.starts_with("0X") {
            2 + t[2..].find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(t.len() - 2)
        } else {
            t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len())
        }
    };
    let (num, suffix) = t.split_at(digits_end);
    let n = integer(num).ok_or_else(|| {
        format!("`{}` is not a size (a whole number with an optional suffix such as 4k, 1m, 2g)", show(t))
    })?;
    let suffix = suffix.trim().to_ascii_lowercase();
    if suffix == "%" {
        if !percent_ok {
            return Err(format!("`{}`: a percentage is not allowed here", show(t)));
        }
        if n == 0 || n > 100 {
            return Err(format!("`{}`: a percentage is 1 to 100", show(t)));
        }
        return Ok(SizeValue::Percent(n as u32));
    }
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, mult) = match suffix.as_str() {
        "" | "b" => (0, 1),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => return Err(format!("`{}`: unknown size suffix `{suffix}` (k, m, g, t, p, kib, mib, ...)", show(t))),
    };
    let mut v = n as u128;
    for _ in 0..pow {
        v *= mult as u128;
    }
    if v > u64::MAX as u128 / 2 {
        return Err(format!("`{}` is too large", show(t)));
    }
    Ok(SizeValue::Bytes(v as u64))
}

/// A boolean option: a bare flag, `=1`/`=0` (fio's bool options), or true/false, yes/no,
/// on/off.
pub fn boolean(v: Option<&str>) -> std::result::Result<bool, String> {
    match v.map(|s| s.trim().to_ascii_lowercase()) {
        None => Ok(true),
        Some(s) => match s.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("`{}` is not 0 or 1", show(&s))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_globals_and_comments() {
        let text = b"; a comment\n# another\n[global]\nbs=4k\nioengine = psync\n\n[a]\nrw=randwrite\nnorandommap\n[global]\nbs=8k\n[b]\nrw=write\n";
        let f = JobFile::parse("j.fio", text).unwrap();
        assert_eq!(f.jobs(), vec!["a", "b"]);
        let crlf = JobFile::parse("j.fio", b"\xef\xbb\xbf[a]\r\nrw=write\r\n").unwrap();
        assert_eq!(crlf.sections[0].entries[0].value.as_deref(), Some("write"));
        let (_, e) = f.resolve(Some("a")).unwrap();
        let keys: Vec<(&str, Option<&str>)> = e.iter().map(|e| (e.key.as_str(), e.value.as_deref())).collect();
        assert_eq!(
            keys,
            vec![("bs", Some("4k")), ("ioengine", Some("psync")), ("rw", Some("randwrite")), ("norandommap", None)]
        );
        let (_, e) = f.resolve(Some("b")).unwrap();
        assert_eq!(
            e.iter().filter(|e| e.key == "bs").map(|e| e.value.as_deref().unwrap()).collect::<Vec<_>>(),
            vec!["4k", "8k"]
        );
        let err = f.resolve(None).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("workload.section"));
        assert!(err.message.contains("[a], [b]"), "{err}");
        assert_eq!(e.last().unwrap().line, 13);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = JobFile::parse("j.fio", b"bs=4k\n[a]\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("j.fio:1"));
        assert!(e.message.contains("bs"), "{e}");
        let e = JobFile::parse("j.fio", b"[a]\nrw=write\n[oops\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("j.fio:3"));
        let e = JobFile::parse("j.fio", b"[a]\nsize=${SIZE}\n").unwrap_err();
        assert!(e.message.contains("size"), "{e}");
        let e = JobFile::parse("j.fio", b"[a]\ninclude other.fio\n").unwrap_err();
        assert!(e.message.contains("include"), "{e}");
    }

    /// A job file that is not a regular file is refused before it is read (a FIFO blocked
    /// in open(2) for good, /dev/zero was read without end), naming `workload.job`.
    #[cfg(target_os = "linux")]
    #[test]
    fn read_refuses_what_is_not_a_regular_file_unread() {
        let dir = std::env::temp_dir().join(format!("opsim-fio-read-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("j.fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let big = dir.join("big.fio");
        std::fs::File::create(&big).unwrap().set_len(MAX_JOB_FILE + 1).unwrap();
        let d = dir.to_str().unwrap().to_owned();
        for (path, says) in [
            (fifo.to_str().unwrap().to_owned(), "a FIFO, not a regular file".to_owned()),
            ("/dev/zero".to_owned(), "a character device, not a regular file".to_owned()),
            (d.clone(), "a directory, not a regular file".to_owned()),
            (big.to_str().unwrap().to_owned(), format!("{} bytes; a fio job file is at most", MAX_JOB_FILE + 1)),
            (format!("{d}/none.fio"), "does not exist".to_owned()),
        ] {
            let e = JobFile::read(&path).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("workload.job"), "{e}");
            assert!(e.message.starts_with(&format!("{path}: {says}")), "{path}: {e}");
        }
        std::fs::write(dir.join("ok.fio"), b"[a]\nrw=write\n").unwrap();
        assert_eq!(JobFile::read(dir.join("ok.fio").to_str().unwrap()).unwrap().jobs(), vec!["a"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sizes_as_fio_reads_them() {
        let b = |s: &str| size(s, 1024, true).unwrap();
        assert_eq!(b("4096"), SizeValue::Bytes(4096));
        assert_eq!(b("4k"), SizeValue::Bytes(4096));
        assert_eq!(b("4K"), SizeValue::Bytes(4096));
        assert_eq!(b("4kb"), SizeValue::Bytes(4096));
        // fio's compatibility mode: the IEC prefix is the power of ten
        assert_eq!(b("4kib"), SizeValue::Bytes(4000));
        assert_eq!(b("1g"), SizeValue::Bytes(1 << 30));
        assert_eq!(b("0x1000"), SizeValue::Bytes(4096));
        assert_eq!(b("50%"), SizeValue::Percent(50));
        assert_eq!(size("4k", 1000, true).unwrap(), SizeValue::Bytes(4000));
        assert_eq!(size("4KiB", 1000, true).unwrap(), SizeValue::Bytes(4096));
        assert!(size("4q", 1024, true).is_err());
        assert!(size("-4k", 1024, true).is_err());
        assert!(size("101%", 1024, true).is_err());
        assert!(size("50%", 1024, false).is_err());
        assert!(size("99999999999p", 1024, true).is_err());
        assert!(size("", 1024, true).is_err());
    }
}
