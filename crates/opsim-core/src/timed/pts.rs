//! The SNIA PTS IOPS test in simulation: its matrix of block sizes x read/write mixes, the
//! names `opsim measure iops` gives them (fio's), and the result table.
//!
//! Round semantics follow the real-drive harness (`python/opsim/measure/runner.py`): after
//! the purge and the workload-independent preconditioning (the span written twice in
//! 128 KiB sequential writes), each round runs every combination in turn (mixes in the
//! order given, every block size within a mix), each for `timing.round_s` simulated seconds
//! (PTS: 60) at the configured queue depth, waiting for the commands in flight before the
//! next; steady state is tracked on the 4 KiB 100% write combination's IOPS by the SNIA
//! rule, at most `run.max_rounds` (PTS: 25) rounds.

use crate::config::{PtsConfig, WorkloadConfig};
use crate::error::{Error, Result};
use serde::Serialize;

/// The PTS block sizes, in the order `opsim measure iops` runs them.
pub const BLOCK_SIZES: [u64; 8] = [512, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 1 << 20];
/// The PTS read/write mixes ("R/W" percent), in the order `opsim measure iops` runs them.
pub const MIXES: [&str; 7] = ["0/100", "5/95", "35/65", "50/50", "65/35", "95/5", "100/0"];

/// One mix: its label and its read fraction.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    pub name: String,
    pub read: f64,
}

/// The test's matrix, checked.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub sizes: Vec<u64>,
    pub mixes: Vec<Mix>,
    /// Index into `combos` of the combination steady state is tracked on (4 KiB, 0/100;
    /// else the first, as the harness does).
    pub tracked: usize,
    /// (size index, mix index) in run order: every size within each mix.
    pub combos: Vec<(usize, usize)>,
}

/// fio's name of a block size: "512", "4k", "1m".
pub fn bs_name(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{}m", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{}k", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

/// Parse a "R/W" mix of percentages adding up to 100.
pub fn parse_mix(key: &str, text: &str) -> Result<Mix> {
    let bad = || {
        Error::config(key, format!("{text:?} is not a read/write mix such as \"65/35\" (percentages adding up to 100)"))
    };
    let (r, w) = text.split_once('/').ok_or_else(bad)?;
    let r: f64 = r.trim().parse().map_err(|_| bad())?;
    let w: f64 = w.trim().parse().map_err(|_| bad())?;
    if !(r.is_finite() && w.is_finite() && r >= 0.0 && w >= 0.0 && (r + w - 100.0).abs() < 1e-9) {
        return Err(bad());
    }
    Ok(Mix { name: format!("{}/{}", fmt_pct(r), fmt_pct(w)), read: r / 100.0 })
}

fn fmt_pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

/// The matrix of `[workload.pts]` (defaults: the PTS's).
pub fn matrix(p: Option<&PtsConfig>) -> Result<Matrix> {
    let sizes: Vec<u64> = match p.and_then(|p| p.block_sizes.as_ref()) {
        Some(v) => v.iter().map(|b| b.0).collect(),
        None => BLOCK_SIZES.to_vec(),
    };
    let mixes: Vec<Mix> = match p.and_then(|p| p.mixes.as_ref()) {
        Some(v) => v.iter().map(|m| parse_mix("workload.pts.mixes", m)).collect::<Result<_>>()?,
        None => MIXES.iter().map(|m| parse_mix("workload.pts.mixes", m)).collect::<Result<_>>()?,
    };
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(Error::config("workload.pts.block_sizes", "must list at least one block size, none of them 0"));
    }
    if mixes.is_empty() {
        return Err(Error::config("workload.pts.mixes", "must list at least one mix"));
    }
    for (i, a) in sizes.iter().enumerate() {
        if sizes[..i].contains(a) {
            return Err(Error::config("workload.pts.block_sizes", format!("{} is listed twice", bs_name(*a))));
        }
    }
    for (i, a) in mixes.iter().enumerate() {
        if mixes[..i].iter().any(|m| m.name == a.name) {
            return Err(Error::config("workload.pts.mixes", format!("{} is listed twice", a.name)));
        }
    }
    let combos: Vec<(usize, usize)> = (0..mixes.len()).flat_map(|m| (0..sizes.len()).map(move |s| (s, m))).collect();
    let tracked = combos.iter().position(|&(s, m)| sizes[s] == 4096 && mixes[m].read == 0.0).unwrap_or(0);
    Ok(Matrix { sizes, mixes, tracked, combos })
}

/// `[workload.pts]` only with `type = "snia-pts"`, and the IOPS test's keys only with it.
pub fn check(w: &WorkloadConfig, prefix: &str) -> Result<()> {
    let Some(p) = &w.pts else { return Ok(()) };
    if w.kind != crate::config::WorkloadType::SniaPts {
        return Err(Error::config(
            &format!("{prefix}.pts"),
            format!("is only used by workload type \"snia-pts\", not \"{}\"", w.kind.name()),
        ));
    }
    if p.test != crate::config::PtsTest::Iops {
        for (k, present) in [("block_sizes", p.block_sizes.is_some()), ("mixes", p.mixes.is_some())] {
            if present {
                return Err(Error::config(
                    &format!("{prefix}.pts.{k}"),
                    "is only used by the IOPS test (test = \"iops\")",
                ));
            }
        }
    }
    if p.test == crate::config::PtsTest::Iops {
        matrix(Some(p))?;
    }
    Ok(())
}

/// The PTS IOPS table: IOPS per block size (rows) and R/W mix (columns), the mean of the
/// measurement window's rounds (the steady-state window, else the last 5 rounds).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IopsTable {
    /// fio's names ("512", "4k", ...), and the bytes.
    pub block_sizes: Vec<String>,
    pub block_size_bytes: Vec<u64>,
    /// "R/W" percentages.
    pub mixes: Vec<String>,
    /// `iops[size][mix]`.
    pub iops: Vec<Vec<f64>>,
    /// `mbps[size][mix]` (host bytes read and written per second, 10^6).
    pub mbps: Vec<Vec<f64>>,
    /// First and last round of the window (round indexes, as `rounds[].index`).
    pub window: (usize, usize),
    /// Whether the window is the steady-state window.
    pub steady: bool,
    /// The combination steady state is tracked on.
    pub tracked: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_mixes_and_order() {
        assert_eq!(BLOCK_SIZES.map(bs_name), ["512", "4k", "8k", "16k", "32k", "64k", "128k", "1m"]);
        assert_eq!(parse_mix("k", " 65 / 35").unwrap(), Mix { name: "65/35".into(), read: 0.65 });
        assert!(parse_mix("k", "60/35").is_err());
        assert!(parse_mix("k", "65").is_err());
        let m = matrix(None).unwrap();
        assert_eq!(m.combos.len(), 56);
        // every size within a mix, mixes in order; the tracked one is 4 KiB at 0/100
        assert_eq!(m.combos[..2], [(0, 0), (1, 0)]);
        assert_eq!(m.combos[m.tracked], (1, 0));
        assert_eq!(m.mixes[6].read, 1.0);
    }
}
