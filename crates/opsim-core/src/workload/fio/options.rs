//! A job's options as fio reads them: the last line of each option wins (`[global]` lines
//! first, then the job's own; aliases such as `readwrite` for `rw` count as one option), and
//! typed values (booleans, whole numbers, sizes in the job's `kb_base`) with errors naming the
//! option and its line.

use super::parse::{self, err_at, Entry, SizeValue};
use crate::error::{Error, Result};

/// The option `key` is spelt as in fio's option table (its aliases mapped to one name).
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blockalign" => "ba",
        "io_limit" => "io_size",
        k => k,
    }
}

/// The options of one job, each at its last line.
pub struct Options<'a> {
    path: &'a str,
    /// (canonical name, entry), in the order of their last lines.
    pub last: Vec<(&'a str, &'a Entry)>,
    /// `kb_base` (1024 or 1000), once read: the base of the sizes.
    pub kb_base: u64,
}

impl<'a> Options<'a> {
    /// The options of `entries` (of the job file `path`), later lines winning.
    pub fn new(path: &'a str, entries: &'a [Entry]) -> Options<'a> {
        let mut last: Vec<(&str, &Entry)> = Vec::new();
        for e in entries {
            let k = canonical(&e.key);
            last.retain(|(x, _)| *x != k);
            last.push((k, e));
        }
        Options { path, last, kb_base: 1024 }
    }

    /// The job file's path (for errors).
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// Option `k`'s last line, if given.
    pub fn get(&self, k: &str) -> Option<&'a Entry> {
        self.last.iter().find(|(x, _)| *x == k).map(|(_, e)| *e)
    }

    /// An error about option `e` at its line.
    pub fn bad(&self, e: &Entry, msg: String) -> Error {
        err_at(self.path, e.line, format!("option `{}`: {msg}", e.key))
    }

    /// The value of `e`, which must have one.
    pub fn need_value(&self, e: &Entry) -> Result<String> {
        e.value.clone().filter(|v| !v.is_empty()).ok_or_else(|| self.bad(e, "needs a value (key=value)".into()))
    }

    /// Read `kb_base` (1024 unless the job sets 1000): sizes read after this use it.
    pub fn read_kb_base(&mut self) -> Result<()> {
        self.kb_base = match self.get("kb_base") {
            None => 1024,
            Some(e) => match self.need_value(e)?.as_str() {
                "1024" => 1024,
                "1000" => 1000,
                v => return Err(self.bad(e, format!("`{}` is not 1000 or 1024", parse::show(v)))),
            },
        };
        Ok(())
    }

    /// A boolean option (`default` when not given).
    pub fn boolean(&self, k: &str, default: bool) -> Result<bool> {
        match self.get(k) {
            None => Ok(default),
            Some(e) => parse::boolean(e.value.as_deref()).map_err(|m| self.bad(e, m)),
        }
    }

    /// A whole-number option.
    pub fn integer(&self, k: &str) -> Result<Option<u64>> {
        match self.get(k) {
            None => Ok(None),
            Some(e) => {
                let v = self.need_value(e)?;
                parse::integer(&v)
                    .map(Some)
                    .ok_or_else(|| self.bad(e, format!("`{}` is not a whole number", parse::show(&v))))
            }
        }
    }

    /// A size option (bytes, or a percentage when `pct`).
    pub fn size(&self, k: &str, pct: bool) -> Result<Option<SizeValue>> {
        match self.get(k) {
            None => Ok(None),
            Some(e) => parse::size(&self.need_value(e)?, self.kb_base, pct).map(Some).map_err(|m| self.bad(e, m)),
        }
    }

    /// The line of each option, for errors found when the job meets the drive.
    pub fn lines(&self) -> Vec<(String, u64)> {
        self.last.iter().map(|(k, e)| (k.to_string(), e.line)).collect()
    }
}
