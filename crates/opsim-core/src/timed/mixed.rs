//! Commands at a queue depth sharing the drive with work that is no command's: a mixed
//! queueing network.  The host's commands are the closed class (a fixed number in flight,
//! each replaced as it completes); the writes' NAND work (programs, GC copies, erases, their
//! channel transfers and the controller's time per copy) is the open class: a write completes
//! once its data is in the write buffer, and the NAND work it causes runs after it, holding
//! the dies and channels the reads wait for.  A random read in a mix therefore waits behind
//! programs and copies on its die, which a bound of the reads alone does not see.
//!
//! Mean-value analysis of a mixed network (Lazowska, Zahorjan, Graham and Sevcik,
//! "Quantitative System Performance", 1984, sec. 7.4, "Mixed models"): the open class's
//! utilisation `U_o` of a server inflates the closed class's residence time there by
//! `1 / (1 - U_o)`; the closed class is solved by the exact recursion over the commands in
//! flight (with the residual-life correction of [`super::costs`]'s closed network).  Here the
//! open class's rate is the closed class's own (each write causes its NAND work), so its
//! utilisation is `X o` at the commands' throughput `X` (`o`: its time per command on one
//! server) and `X` is the fixed point `X = MVA(n; U_o = X o)`, found by bisection between 0
//! and the rate that saturates the busiest server with open work.

/// One station of the network: every command's closed demand there (ns, spread over
/// `servers` identical servers at random) and the open class's time per command on one server.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Station {
    pub demand: f64,
    pub servers: f64,
    pub open: f64,
}

/// The closed class's throughput (commands per ns) with `n` in flight when each server of a
/// station is also busy `u[k]` of the time with open work.
fn closed(n: u32, st: &[Station], u_open: &[f64], c2: f64) -> f64 {
    let mut q = vec![0.0f64; st.len()];
    let mut u = vec![0.0f64; st.len()];
    let mut r = vec![0.0f64; st.len()];
    let mut x = 0.0;
    for i in 1..=n {
        for (k, s) in st.iter().enumerate() {
            r[k] = s.demand * (1.0 + q[k] + (c2 - 1.0) / 2.0 * u[k]) / (1.0 - u_open[k]);
        }
        x = i as f64 / r.iter().sum::<f64>();
        for (k, s) in st.iter().enumerate() {
            q[k] = x * r[k] / s.servers;
            u[k] = x * s.demand / s.servers;
        }
    }
    x
}

/// Bisection steps: the bracket shrinks to 2^-60 of its width, below an f64's resolution of
/// the throughput.
const STEPS: u32 = 60;

/// Commands per second with `n` in flight on `stations` (closed demand per command and open
/// work per command on each server), the service times' squared coefficient of variation
/// `c2` as in the closed network.  Without open work, the closed network's throughput.
pub(crate) fn mixed_iops(n: u32, stations: &[Station], c2: f64) -> f64 {
    let most_open = stations.iter().map(|s| s.open).fold(0.0f64, f64::max);
    if most_open <= 0.0 {
        return closed(n, stations, &vec![0.0; stations.len()], c2) * 1e9;
    }
    // at `x` the open work alone would hold the busiest server all the time
    let (mut lo, mut hi) = (0.0f64, 1.0 / most_open);
    for _ in 0..STEPS {
        let x = 0.5 * (lo + hi);
        let u: Vec<f64> = stations.iter().map(|s| x * s.open).collect();
        if closed(n, stations, &u, c2) > x {
            lo = x;
        } else {
            hi = x;
        }
    }
    0.5 * (lo + hi) * 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without open work it is the closed network; with open work the commands are slower,
    /// more so the more there is, and never past the rate at which open work fills a server.
    #[test]
    fn open_work_slows_the_closed_class() {
        let plain = [
            Station { demand: 2_000.0, servers: 1.0, open: 0.0 },
            Station { demand: 50_000.0, servers: 64.0, open: 0.0 },
        ];
        let base = mixed_iops(32, &plain, 0.0);
        assert!((base - closed(32, &plain, &[0.0, 0.0], 0.0) * 1e9).abs() < 1e-9 * base);
        let mut last = base;
        for open in [1e3, 1e4, 5e4, 1e5] {
            let st = [plain[0], Station { open, ..plain[1] }];
            let x = mixed_iops(32, &st, 0.0);
            assert!(x < last && x < 1e9 / open, "open {open}: {x} vs {last}");
            last = x;
        }
    }

    /// One station, one server, `n` = 1: a command's residence is its demand stretched by
    /// the open work's share, d / (1 - X o); the fixed point solves X = (1 - X o) / d.
    #[test]
    fn the_fixed_point_of_one_server() {
        let (d, o) = (10_000.0, 5_000.0);
        let x = mixed_iops(1, &[Station { demand: d, servers: 1.0, open: o }], 0.0) / 1e9;
        assert!((x - 1.0 / (d + o)).abs() < 1e-12 * x, "{x}");
    }
}
