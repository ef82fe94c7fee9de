//! `[workload.pts]` checked and resolved: the SNIA PTS IOPS test's matrix of block sizes x
//! read/write mixes and the names `opsim measure iops` gives them (fio's).  The test's run
//! is in the timed model (`timed::pts`).

use super::{PtsConfig, WorkloadConfig};
use crate::error::{Error, Result};

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
    if w.kind != super::WorkloadType::SniaPts {
        return Err(Error::config(
            &format!("{prefix}.pts"),
            format!("is only used by workload type \"snia-pts\", not \"{}\"", w.kind.name()),
        ));
    }
    if p.test != super::PtsTest::Iops {
        for (k, present) in [("block_sizes", p.block_sizes.is_some()), ("mixes", p.mixes.is_some())] {
            if present {
                return Err(Error::config(
                    &format!("{prefix}.pts.{k}"),
                    "is only used by the IOPS test (test = \"iops\")",
                ));
            }
        }
    }
    if p.test == super::PtsTest::Iops {
        matrix(Some(p))?;
    }
    Ok(())
}
