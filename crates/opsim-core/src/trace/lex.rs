//! Lines and fields: the longest line a trace may hold, field splitting, and the integer and
//! decimal-time parsing every format shares (eight digits at a time on the common path).

use super::trace_err;
use crate::error::Error;

/// The longest line a trace may hold (after decompression): longer means the file is not a
/// text trace, and the reader never holds more than this of one line in memory.
pub const MAX_LINE: usize = 64 << 10;

pub(super) fn line_too_long(path: &str, line: u64) -> Error {
    trace_err(path, line, format!("line longer than {} KiB: not a text trace (or a corrupt one)", MAX_LINE >> 10))
}

/// Fields split on `delim`, or on runs of blanks when `None`.
pub(super) struct Fields<'a> {
    s: &'a [u8],
    pos: usize,
    delim: Option<u8>,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        match self.delim {
            Some(d) => {
                if self.pos > s.len() {
                    return None;
                }
                let start = self.pos;
                let end = s[start..].iter().position(|&c| c == d).map(|i| start + i).unwrap_or(s.len());
                self.pos = end + 1;
                Some(trim(&s[start..end]))
            }
            None => {
                let mut i = self.pos;
                while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
                    i += 1;
                }
                if i >= s.len() {
                    self.pos = i;
                    return None;
                }
                let start = i;
                while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
                    i += 1;
                }
                self.pos = i;
                Some(&s[start..i])
            }
        }
    }
}

/// The value of eight ASCII digits (little-endian in `chunk`), or None if any is not a digit.
#[inline(always)]
fn eight_digits(chunk: u64) -> Option<u64> {
    const HI: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZERO: u64 = 0x3030_3030_3030_3030;
    if chunk & HI != ZERO || (chunk.wrapping_add(0x0606_0606_0606_0606) & HI) != ZERO {
        return None;
    }
    let v = chunk - ZERO;
    let v = (v.wrapping_mul(10)).wrapping_add(v >> 8); // pairs: d0d1, d2d3, ...
    let v = ((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32))
        + ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some(v)
}

/// A left-to-right scanner over one line: fields and numbers in a single pass.
pub(super) struct Cur<'a> {
    s: &'a [u8],
    pub(super) i: usize,
}

#[inline(always)]
pub(super) fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

impl<'a> Cur<'a> {
    pub(super) fn new(s: &'a [u8]) -> Self {
        Cur { s, i: 0 }
    }

    #[inline(always)]
    pub(super) fn skip_blanks(&mut self) {
        while self.i < self.s.len() && blank(self.s[self.i]) {
            self.i += 1;
        }
    }

    /// The next field: up to `delim` (consumed; blanks around it trimmed), or the next run
    /// of non-blanks (`None`).  Fields are short: a plain byte loop beats a vector search.
    #[inline]
    pub(super) fn field(&mut self, delim: Option<u8>) -> Option<&'a [u8]> {
        let s = self.s;
        match delim {
            Some(d) => {
                if self.i > s.len() {
                    return None;
                }
                let st = self.i;
                let mut end = st;
                while end < s.len() && s[end] != d {
                    end += 1;
                }
                self.i = end + 1;
                let f = &s[st..end];
                Some(
                    if f.first().is_some_and(|&c| blank(c) || c == b'"')
                        || f.last().is_some_and(|&c| blank(c) || c == b'"')
                    {
                        trim(f)
                    } else {
                        f
                    },
                )
            }
            None => {
                self.skip_blanks();
                if self.i >= s.len() {
                    return None;
                }
                let st = self.i;
                while self.i < s.len() && !blank(s[self.i]) {
                    self.i += 1;
                }
                Some(&s[st..self.i])
            }
        }
    }

    pub(super) fn need(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<&'a [u8], String> {
        self.field(delim).ok_or_else(|| format!("missing field: {what}"))
    }

    /// An unsigned integer field; on failure the error quotes the whole field.
    #[inline(always)]
    pub(super) fn uint(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<u64, String> {
        match self.uint_fast(delim) {
            Some(v) => Ok(v),
            None => self.uint_slow(delim, what),
        }
    }

    /// Digits right up to the delimiter (or a blank / the end), at most 19 of them: the
    /// common case, eight digits at a time (SWAR).
    #[inline(always)]
    fn uint_fast(&mut self, delim: Option<u8>) -> Option<u64> {
        let s = self.s;
        let st = self.i;
        let mut i = st;
        let mut v: u64 = 0;
        while i + 8 <= s.len() {
            let chunk = u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
            let Some(x) = eight_digits(chunk) else { break };
            v = v.wrapping_mul(100_000_000).wrapping_add(x);
            i += 8;
        }
        while i < s.len() {
            let d = s[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        if i == st || i - st > 19 {
            return None;
        }
        if i < s.len() {
            match delim {
                Some(d) if s[i] == d => i += 1,
                None if blank(s[i]) => {}
                _ => return None,
            }
        }
        self.i = i;
        Some(v)
    }

    /// The whole field, blanks trimmed, checked (20-digit values, stray characters).
    #[cold]
    #[inline(never)]
    fn uint_slow(&mut self, delim: Option<u8>, what: &str) -> std::result::Result<u64, String> {
        let f = trim(self.field(delim).unwrap_or(b""));
        match uint(f) {
            Some(v) => Ok(v),
            None if f.is_empty() => Err(format!("missing field: {what}")),
            None => Err(format!("{what} \"{}\" is not a non-negative integer", text(f))),
        }
    }

    /// A decimal time field in `unit_ns` units, as whole nanoseconds.
    pub(super) fn time(&mut self, delim: Option<u8>, unit_ns: u64, what: &str) -> std::result::Result<u64, String> {
        let f = self.need(delim, what)?;
        decimal_ns(f, unit_ns).ok_or_else(|| format!("{what} \"{}\" is not a valid time", text(f)))
    }
}

pub(super) fn fields(s: &[u8], delim: Option<u8>) -> Fields<'_> {
    Fields { s, pos: 0, delim }
}

pub(super) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'"', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'"'] = s {
        s = rest;
    }
    s
}

#[inline]
pub(super) fn uint(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// A non-negative decimal (`12`, `0.000123`, `1.5e3`) times `unit_ns`, in whole nanoseconds.
pub(super) fn decimal_ns(s: &[u8], unit_ns: u64) -> Option<u64> {
    if s.iter().any(|&c| c == b'e' || c == b'E') {
        let v: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
        if !(v >= 0.0 && v.is_finite()) {
            return None;
        }
        let ns = v * unit_ns as f64;
        return (ns < 1.8e19).then_some(ns.round() as u64);
    }
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[..0]),
    };
    let i = if int.is_empty() { 0 } else { uint(int)? };
    let mut ns = (i as u128) * unit_ns as u128;
    if !frac.is_empty() {
        let digits = &frac[..frac.len().min(18)];
        let f = uint(digits)? as u128;
        if frac[digits.len()..].iter().any(|c| !c.is_ascii_digit()) {
            return None;
        }
        ns += (f * unit_ns as u128 + 10u128.pow(digits.len() as u32) / 2) / 10u128.pow(digits.len() as u32);
    }
    u64::try_from(ns).ok()
}

pub(super) fn text(s: &[u8]) -> String {
    crate::quote::echo_bytes(s)
}

pub(super) fn strip_eol(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn swar_digits() {
        for s in ["00000000", "12345678", "99999999", "00000042"] {
            let c = u64::from_le_bytes(s.as_bytes().try_into().unwrap());
            assert_eq!(eight_digits(c), Some(s.parse().unwrap()), "{s}");
        }
        for s in ["1234567a", "/2345678", ":2345678", "1234 678"] {
            assert_eq!(eight_digits(u64::from_le_bytes(s.as_bytes().try_into().unwrap())), None, "{s}");
        }
        let mut c = Cur::new(b"18446744073709551615,12345678901234567,7");
        assert_eq!(c.uint(Some(b','), "a"), Ok(u64::MAX));
        assert_eq!(c.uint(Some(b','), "b"), Ok(12345678901234567));
        assert_eq!(c.uint(Some(b','), "c"), Ok(7));
        assert!(Cur::new(b"18446744073709551616").uint(None, "x").is_err());
        assert!(Cur::new(b"12x4").uint(None, "x").unwrap_err().contains("\"12x4\""));
    }

    #[test]
    fn decimal_times_are_exact() {
        assert_eq!(decimal_ns(b"0.000000001", 1_000_000_000), Some(1));
        assert_eq!(decimal_ns(b"12.5", 1_000_000), Some(12_500_000));
        assert_eq!(decimal_ns(b"3", 1_000), Some(3_000));
        assert_eq!(decimal_ns(b"1.5e3", 1_000_000), Some(1_500_000_000));
        assert_eq!(decimal_ns(b"1.2.3", 1), None);
        assert_eq!(decimal_ns(b"-1", 1), None);
    }
}
