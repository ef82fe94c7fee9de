//! The SNIA PTS IOPS test in simulation: the result table (its matrix of block sizes x
//! read/write mixes and their names are `config::pts`, re-exported here).
//!
//! Round semantics follow the real-drive harness (`python/opsim/measure/runner.py`): after
//! the purge and the workload-independent preconditioning (the span written twice in
//! 128 KiB sequential writes), each round runs every combination in turn (mixes in the
//! order given, every block size within a mix), each for `timing.round_s` simulated seconds
//! (PTS: 60) at the configured queue depth, waiting for the commands in flight before the
//! next; steady state is tracked on the 4 KiB 100% write combination's IOPS by the SNIA
//! rule, at most `run.max_rounds` (PTS: 25) rounds.

pub use crate::config::pts::{bs_name, check, matrix, parse_mix, Matrix, Mix, BLOCK_SIZES, MIXES};
use serde::Serialize;

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
